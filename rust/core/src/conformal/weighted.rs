//! Weighted conformal p-values for covariate shift (contract §13;
//! Tibshirani, Barber, Candès, Ramdas, NeurIPS 2019; Jin & Candès, JMLR
//! 2023).
//!
//! Calibration scores s₁…sₙ carry weights w₁…wₙ ≥ 0 and a test score s
//! its weight w — with `w(x) = dP_test/dP_cal(x)` the likelihood ratio of
//! the features. With `W` the total calibration weight and `W≥(s)`,
//! `W>(s)`, `W=(s)` the weight at or above, above and tied with s:
//!
//! ```text
//! classical:  p = (W≥(s) + w) / (W + w)
//! randomised: p = (W>(s) + U·(W=(s) + w)) / (W + w),   U uniform on [0, 1)
//! ```
//!
//! With all weights 1 both are the unweighted p-values of [`super::pvalues`]
//! (the randomised one with the same SplitMix64 stream, so the same draws).
//! The weights above each calibration position are summed once, from the
//! top, so that a p-value costs one binary search; the sums are in f64, so
//! weighted p-values agree with a direct sum to rounding (not bit for bit).

use super::pvalues::TieBreak;
use super::uniform;
use crate::error::Error;
use crate::numeric::par::{CHUNK, PARALLEL_MIN};
use crate::numeric::search_index::{SearchIndex, GROUP};
use crate::sample::NanPolicy;
use rayon::prelude::*;

/// Weighted calibration scores, oriented (higher = more outlying) and
/// sorted, with the weight at or above each position.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightedCalibration {
    values: Vec<f64>,
    /// `above[j]` = total weight of `values[j..]`; `above[n] = 0`.
    above: Vec<f64>,
    /// The line index of `values` (one line read per score).
    index: SearchIndex,
    negate: bool,
}

impl WeightedCalibration {
    /// From calibration scores and their weights (same length). NaN scores
    /// are dropped with their weights (`Omit`) or refused (`Raise`); the
    /// remaining scores must be finite, the weights finite and ≥ 0 with a
    /// positive total. `negate` orients scores (`higher_is_outlier=False`).
    pub fn new(
        scores: &[f64],
        weights: &[f64],
        nan_policy: NanPolicy,
        negate: bool,
    ) -> Result<Self, Error> {
        if scores.len() != weights.len() {
            return Err(Error::ShapeMismatch(format!(
                "calibration scores ({}) and weights ({}) differ in length",
                scores.len(),
                weights.len()
            )));
        }
        check_weights(weights, "weights")?;
        let mut pairs: Vec<(f64, f64)> = Vec::with_capacity(scores.len());
        for (&s, &w) in scores.iter().zip(weights) {
            if s.is_nan() {
                if nan_policy == NanPolicy::Raise {
                    return Err(Error::invalid(
                        "X",
                        "calibration scores hold NaN (nan_policy='raise')",
                    ));
                }
                continue;
            }
            if !s.is_finite() {
                return Err(Error::invalid("X", "calibration scores must be finite"));
            }
            pairs.push((if negate { -s } else { s }, w));
        }
        if pairs.is_empty() {
            return Err(Error::invalid(
                "X",
                "needs at least one (non-NaN) calibration score",
            ));
        }
        pairs.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        let mut above = vec![0.0; pairs.len() + 1];
        for j in (0..pairs.len()).rev() {
            above[j] = above[j + 1] + pairs[j].1;
        }
        if !(above[0] > 0.0 && above[0].is_finite()) {
            return Err(Error::invalid(
                "weights",
                "calibration weights must have a positive, finite total",
            ));
        }
        let values: Vec<f64> = pairs.iter().map(|p| p.0).collect();
        Ok(WeightedCalibration {
            index: SearchIndex::new(&values),
            values,
            above,
            negate,
        })
    }

    /// The number of calibration scores.
    pub fn n(&self) -> usize {
        self.values.len()
    }

    /// The total calibration weight W.
    pub fn total(&self) -> f64 {
        self.above[0]
    }

    /// The p-value (or `1 − p`) of the oriented score `q` with weight `w`,
    /// `lo` calibration values below it; `j` its position in the input
    /// (for the tie-breaking stream).
    #[inline]
    fn value(
        &self,
        q: f64,
        lo: usize,
        w: f64,
        j: u64,
        tie_break: TieBreak,
        complement: bool,
    ) -> f64 {
        if q.is_nan() {
            return f64::NAN;
        }
        let v = &self.values;
        let num = match tie_break {
            TieBreak::Classical => self.above[lo] + w,
            TieBreak::Randomized { seed } => {
                let hi = lo + v[lo..].partition_point(|&c| c <= q);
                let tied = self.above[lo] - self.above[hi];
                self.above[hi] + uniform(seed, j) * (tied + w)
            }
        };
        let p = (num / (self.total() + w)).min(1.0);
        if complement {
            1.0 - p
        } else {
            p
        }
    }

    /// The weighted p-values of `scores` with test weights `weights` into
    /// `out` (all one length): NaN scores give NaN; test weights must be
    /// finite and ≥ 0. Large inputs run in chunks on the thread pool; the
    /// result does not depend on the number of threads.
    pub fn pvalues(
        &self,
        scores: &[f64],
        weights: &[f64],
        tie_break: TieBreak,
        complement: bool,
        out: &mut [f64],
    ) -> Result<(), Error> {
        if scores.len() != weights.len() || scores.len() != out.len() {
            return Err(Error::ShapeMismatch(format!(
                "scores ({}), weights ({}) and output ({}) differ in length",
                scores.len(),
                weights.len(),
                out.len()
            )));
        }
        check_weights(weights, "weights")?;
        let chunk = |(i, ((s, w), d)): Part<'_>| {
            let (mut q, mut lo) = ([0.0f64; GROUP], [0usize; GROUP]);
            for (g, ((s, w), d)) in s
                .chunks(GROUP)
                .zip(w.chunks(GROUP))
                .zip(d.chunks_mut(GROUP))
                .enumerate()
            {
                let (q, lo) = (&mut q[..s.len()], &mut lo[..s.len()]);
                for (qi, &x) in q.iter_mut().zip(s) {
                    *qi = if self.negate { -x } else { x };
                }
                self.index.lower_bounds(&self.values, q, lo);
                let at = i * CHUNK + g * GROUP;
                for (k, o) in d.iter_mut().enumerate() {
                    *o = self.value(q[k], lo[k], w[k], (at + k) as u64, tie_break, complement);
                }
            }
        };
        if scores.len() < PARALLEL_MIN {
            chunk((0, ((scores, weights), out)));
        } else {
            scores
                .par_chunks(CHUNK)
                .zip(weights.par_chunks(CHUNK))
                .zip(out.par_chunks_mut(CHUNK))
                .enumerate()
                .for_each(chunk);
        }
        Ok(())
    }
}

/// A chunk's position, its scores and weights, and its output.
type Part<'a> = (usize, ((&'a [f64], &'a [f64]), &'a mut [f64]));

fn check_weights(weights: &[f64], name: &'static str) -> Result<(), Error> {
    if weights.iter().any(|w| !(w.is_finite() && *w >= 0.0)) {
        return Err(Error::invalid(name, "weights must be finite and ≥ 0"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformal::pvalues::{PValues, Reference};
    use proptest::prelude::*;

    /// The definition, summed directly.
    fn direct(cal: &[f64], cw: &[f64], s: f64, w: f64) -> f64 {
        let at_or_above: f64 = cal
            .iter()
            .zip(cw)
            .filter(|(c, _)| **c >= s)
            .map(|p| p.1)
            .sum();
        let total: f64 = cw.iter().sum();
        (at_or_above + w) / (total + w)
    }

    #[test]
    fn refuses_bad_weights_and_scores() {
        let s = [1.0, 2.0];
        for bad in [
            [1.0, -1.0],
            [1.0, f64::NAN],
            [0.0, 0.0],
            [1.0, f64::INFINITY],
        ] {
            assert!(WeightedCalibration::new(&s, &bad, NanPolicy::Omit, false).is_err());
        }
        assert!(WeightedCalibration::new(&[1.0], &[1.0, 2.0], NanPolicy::Omit, false).is_err());
        let nan = [f64::NAN, 1.0];
        assert!(WeightedCalibration::new(&nan, &[1.0, 1.0], NanPolicy::Raise, false).is_err());
        let c = WeightedCalibration::new(&nan, &[5.0, 1.0], NanPolicy::Omit, false).unwrap();
        assert_eq!((c.n(), c.total()), (1, 1.0));
        let mut out = [0.0];
        assert!(c
            .pvalues(&[1.0], &[-1.0], TieBreak::Classical, false, &mut out)
            .is_err());
    }

    #[test]
    fn unit_weights_are_the_unweighted_pvalues() {
        let cal: Vec<f64> = (0..60).map(|i| f64::from(i % 13)).collect();
        let x: Vec<f64> = (0..300).map(|i| f64::from(i % 17) - 2.0).collect();
        let mut sorted = cal.clone();
        sorted.sort_by(f64::total_cmp);
        let ones = vec![1.0; cal.len()];
        let c = WeightedCalibration::new(&cal, &ones, NanPolicy::Omit, false).unwrap();
        for tie_break in [TieBreak::Classical, TieBreak::Randomized { seed: 9 }] {
            let (mut a, mut b) = (vec![0.0; x.len()], vec![0.0; x.len()]);
            c.pvalues(&x, &vec![1.0; x.len()], tie_break, false, &mut a)
                .unwrap();
            let plain = PValues {
                reference: Reference::exact(&sorted),
                tie_break,
                adjustment: None,
                negate: false,
                complement: false,
            };
            plain.map(&x, &mut b).unwrap();
            for (p, q) in a.iter().zip(&b) {
                assert!((p - q).abs() < 1e-12, "{p} {q}");
            }
        }
    }

    proptest! {
        #[test]
        fn equals_the_definition(
            cal in prop::collection::vec((-5i32..5, 0u8..4), 1..60),
            x in prop::collection::vec((-7i32..7, 0u8..4), 0..60),
            negate: bool,
        ) {
            let (cs, cw): (Vec<f64>, Vec<f64>) =
                cal.iter().map(|&(s, w)| (f64::from(s), f64::from(w) * 0.5)).unzip();
            prop_assume!(cw.iter().sum::<f64>() > 0.0);
            let (xs, xw): (Vec<f64>, Vec<f64>) =
                x.iter().map(|&(s, w)| (f64::from(s) * 0.5, f64::from(w))).unzip();
            let c = WeightedCalibration::new(&cs, &cw, NanPolicy::Omit, negate).unwrap();
            let mut out = vec![0.0; xs.len()];
            c.pvalues(&xs, &xw, TieBreak::Classical, false, &mut out).unwrap();
            let oriented: Vec<f64> = cs.iter().map(|&s| if negate { -s } else { s }).collect();
            for ((&s, &w), &p) in xs.iter().zip(&xw).zip(&out) {
                let q = if negate { -s } else { s };
                prop_assert!((p - direct(&oriented, &cw, q, w).min(1.0)).abs() < 1e-12);
            }
        }
    }
}
