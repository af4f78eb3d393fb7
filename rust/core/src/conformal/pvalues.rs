//! Marginal conformal p-values (contract §11).
//!
//! With calibration scores s₁…sₙ (oriented: higher = more outlying) the
//! p-value of a score s is
//!
//! ```text
//! p(s) = (1 + #{i : sᵢ ≥ s}) / (n + 1)
//! ```
//!
//! and, with randomised tie breaking, `(#{sᵢ > s} + U·(1 + #{sᵢ = s}))/(n + 1)`
//! with `U` uniform on [0, 1). A sketch's weighted sample counts each item
//! with its weight and adds a slack `e` to the count of scores ≥ s (its rank
//! error bound), which keeps the p-value conservative.
//!
//! One score costs one count of calibration scores below it: with a
//! [`SearchIndex`] one cache line read and a few compares, else a binary
//! search (a second search only for randomised ties).

use super::conditional::Adjustment;
use super::uniform;
use crate::error::Error;
use crate::numeric::array_map::ArrayMap;
use crate::numeric::float::Float;
use crate::numeric::par::{CHUNK, PARALLEL_MIN};
use crate::numeric::search_index::{SearchIndex, GROUP};
use rayon::prelude::*;

/// The calibration scores a p-value counts against.
#[derive(Debug, Clone, Copy)]
pub struct Reference<'a> {
    /// Ascending, finite, non-empty.
    pub values: &'a [f64],
    /// Inclusive cumulative weights of `values` (a sketch's weighted
    /// sample); `None`: every value counts once.
    pub cumulative: Option<&'a [u64]>,
    /// Added to the count of calibration scores ≥ s: a sketch's bound on
    /// its rank error (0 when the counts are exact).
    pub slack: u64,
    /// The line index of `values` (else binary searches).
    pub index: Option<&'a SearchIndex>,
}

impl Reference<'_> {
    /// Exact calibration scores.
    pub fn exact(values: &[f64]) -> Reference<'_> {
        Reference {
            values,
            cumulative: None,
            slack: 0,
            index: None,
        }
    }

    /// The number of calibration scores n.
    pub fn n(&self) -> u64 {
        match self.cumulative {
            Some(c) => c.last().copied().unwrap_or(0),
            None => self.values.len() as u64,
        }
    }

    /// Weight of the first `j` values.
    #[inline]
    fn weight_below(&self, j: usize) -> u64 {
        match self.cumulative {
            None => j as u64,
            Some(c) => {
                if j == 0 {
                    0
                } else {
                    c[j - 1]
                }
            }
        }
    }

    /// Non-empty, ascending and finite; weights increasing.
    pub fn check(&self) -> Result<(), Error> {
        let v = self.values;
        if v.is_empty() {
            return Err(Error::invalid(
                "calibration",
                "needs at least one calibration score",
            ));
        }
        if v.iter().any(|x| !x.is_finite()) || v.windows(2).any(|w| w[0] > w[1]) {
            return Err(Error::invalid(
                "calibration",
                "calibration scores must be finite and sorted ascending",
            ));
        }
        if let Some(c) = self.cumulative {
            if c.len() != v.len() || c[0] == 0 || c.windows(2).any(|w| w[0] >= w[1]) {
                return Err(Error::invalid(
                    "calibration",
                    "cumulative weights must be positive, increasing, one per value",
                ));
            }
        }
        Ok(())
    }
}

/// How ties between a score and calibration scores are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TieBreak {
    /// Every tie counts (`≥`): the classical p-value.
    Classical,
    /// Ties count with a uniform weight `U`: `U` of score `j` (0-based
    /// position in the call's flat input) is output `j` of the SplitMix64
    /// stream seeded with `seed` ([`super::uniform`]).
    Randomized {
        /// The stream's seed.
        seed: u64,
    },
}

/// Tie breaking as the user names it (`"classical"`, `"randomized"`); the
/// seed comes with it to make a [`TieBreak`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ties {
    /// [`TieBreak::Classical`].
    Classical,
    /// [`TieBreak::Randomized`].
    Randomized,
}

impl core::str::FromStr for Ties {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "classical" => Ok(Ties::Classical),
            "randomized" => Ok(Ties::Randomized),
            other => Err(Error::invalid(
                "tie_break",
                format!("expected 'classical' or 'randomized', got {other:?}"),
            )),
        }
    }
}

impl Ties {
    /// The tie breaking with its seed.
    pub fn with_seed(self, seed: u64) -> TieBreak {
        match self {
            Ties::Classical => TieBreak::Classical,
            Ties::Randomized => TieBreak::Randomized { seed },
        }
    }
}

/// A p-value map: the reference, tie breaking, an optional
/// calibration-conditional adjustment and the orientation of the scores.
#[derive(Debug, Clone, Copy)]
pub struct PValues<'a> {
    /// The calibration scores.
    pub reference: Reference<'a>,
    /// Tie breaking.
    pub tie_break: TieBreak,
    /// Calibration-conditional adjustment (§11), applied to the marginal
    /// p-value.
    pub adjustment: Option<&'a Adjustment>,
    /// Negate the scores first (`higher_is_outlier=False`).
    pub negate: bool,
    /// Write `1 − p` (the scaler's "probability") instead of `p`.
    pub complement: bool,
}

impl PValues<'_> {
    /// Checks the reference (O(n); the Python layer checks restored state
    /// once, so this catches misuse of the core).
    pub fn check(&self) -> Result<(), Error> {
        self.reference.check()
    }

    /// The p-value (or its complement) of the oriented score `q` whose
    /// count of calibration values below it is `lo`; `j` is its position
    /// in the input (for the tie-breaking stream).
    #[inline]
    fn value(&self, q: f64, lo: usize, j: u64) -> f64 {
        if q.is_nan() {
            return f64::NAN;
        }
        let r = &self.reference;
        let n = r.n();
        let below = r.weight_below(lo);
        // t = (n + 1)·p: the rank of the score among n + 1.
        let t = match self.tie_break {
            // Counts below 2⁶³ convert through i64: one instruction.
            TieBreak::Classical => (1 + n - below + r.slack) as i64 as f64,
            TieBreak::Randomized { seed } => {
                let v = r.values;
                let hi = if lo < v.len() && v[lo] == q {
                    lo + v[lo..].partition_point(|&x| x <= q)
                } else {
                    lo
                };
                let at_most = r.weight_below(hi);
                let ties = at_most - below;
                (n - at_most + r.slack) as f64 + uniform(seed, j) * (ties + 1) as f64
            }
        };
        let marginal = (t / (n + 1) as i64 as f64).min(1.0);
        let p = match self.adjustment {
            None => marginal,
            Some(a) => a.apply(marginal, t, n),
        };
        if self.complement {
            1.0 - p
        } else {
            p
        }
    }

    /// Maps `src` into `dst`; `offset` is the position of `src[0]` in the
    /// whole input.
    fn map_chunk<T: Float>(&self, src: &[T], dst: &mut [T], offset: usize) {
        let values = self.reference.values;
        let mut q = [0.0f64; GROUP];
        let mut lo = [0usize; GROUP];
        for (g, (s, d)) in src.chunks(GROUP).zip(dst.chunks_mut(GROUP)).enumerate() {
            let (q, lo) = (&mut q[..s.len()], &mut lo[..s.len()]);
            for (qi, v) in q.iter_mut().zip(s) {
                let v = v.to_f64();
                *qi = if self.negate { -v } else { v };
            }
            match self.reference.index {
                Some(ix) => ix.lower_bounds(values, q, lo),
                None => {
                    for (l, &qi) in lo.iter_mut().zip(q.iter()) {
                        *l = values.partition_point(|&x| x < qi);
                    }
                }
            }
            let at = offset + g * GROUP;
            for (i, out) in d.iter_mut().enumerate() {
                *out = T::from_f64(self.value(q[i], lo[i], (at + i) as u64));
            }
        }
    }

    /// Maps every score of `src` into `dst` (same length): NaN stays NaN.
    /// Large inputs run in chunks on the installed thread pool; the result
    /// does not depend on the number of threads.
    pub fn map<T: Float>(&self, src: &[T], dst: &mut [T]) -> Result<(), Error> {
        if src.len() != dst.len() {
            return Err(Error::ShapeMismatch(format!(
                "scores ({}) and output ({}) differ in length",
                src.len(),
                dst.len()
            )));
        }
        if self.reference.values.is_empty() {
            return Err(Error::invalid(
                "calibration",
                "needs at least one calibration score",
            ));
        }
        if src.len() < PARALLEL_MIN {
            self.map_chunk(src, dst, 0);
        } else {
            src.par_chunks(CHUNK)
                .zip(dst.par_chunks_mut(CHUNK))
                .enumerate()
                .for_each(|(i, (s, d))| self.map_chunk(s, d, i * CHUNK));
        }
        Ok(())
    }
}

impl ArrayMap for PValues<'_> {
    type Output = ();

    fn map<T: Float>(&self, src: &[T], dst: &mut [T]) -> Result<(), Error> {
        PValues::map(self, src, dst)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use proptest::prelude::*;

    fn exact(values: &[f64], tie_break: TieBreak) -> PValues<'_> {
        PValues {
            reference: Reference::exact(values),
            tie_break,
            adjustment: None,
            negate: false,
            complement: false,
        }
    }

    /// The definition, counted directly.
    pub(in crate::conformal) fn direct(cal: &[f64], s: f64) -> f64 {
        (1 + cal.iter().filter(|&&c| c >= s).count()) as f64 / (cal.len() + 1) as f64
    }

    #[test]
    fn small_cases() {
        let cal = [1.0, 2.0, 2.0, 3.0];
        let m = exact(&cal, TieBreak::Classical);
        let x = [
            0.0,
            1.0,
            2.0,
            2.5,
            3.0,
            4.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        let mut out = [0.0; 9];
        m.map(&x, &mut out).unwrap();
        let want = [1.0, 1.0, 0.8, 0.4, 0.4, 0.2, f64::NAN, 0.2, 1.0];
        for (a, b) in out.iter().zip(want) {
            assert!(a == &b || (a.is_nan() && b.is_nan()), "{out:?}");
        }
    }

    #[test]
    fn randomized_stays_between_strict_and_classical() {
        let cal: Vec<f64> = (0..50).map(|i| f64::from(i / 5)).collect();
        let x: Vec<f64> = (0..200).map(|i| f64::from(i % 12) - 1.0).collect();
        let mut r = vec![0.0; x.len()];
        exact(&cal, TieBreak::Randomized { seed: 3 })
            .map(&x, &mut r)
            .unwrap();
        for (&s, &p) in x.iter().zip(&r) {
            let n = cal.len() as f64;
            let greater = cal.iter().filter(|&&c| c > s).count() as f64;
            assert!(p >= greater / (n + 1.0) && p <= direct(&cal, s), "{s} {p}");
        }
        let mut again = vec![0.0; x.len()];
        exact(&cal, TieBreak::Randomized { seed: 3 })
            .map(&x, &mut again)
            .unwrap();
        assert_eq!(r, again);
    }

    #[test]
    fn sketch_counts_with_weights_and_slack() {
        let values = [1.0, 2.0, 3.0];
        let cumulative = [2, 6, 7];
        let r = Reference {
            values: &values,
            cumulative: Some(&cumulative),
            slack: 1,
            index: None,
        };
        let m = PValues {
            reference: r,
            ..exact(&values, TieBreak::Classical)
        };
        let mut out = [0.0; 4];
        m.map(&[0.5, 2.0, 2.5, 9.0], &mut out).unwrap();
        // n = 7: (1 + count ≥ s + 1)/8, at most 1.
        assert_eq!(out, [1.0, 7.0 / 8.0, 3.0 / 8.0, 2.0 / 8.0]);
    }

    proptest! {
        #[test]
        fn equals_the_definition(
            cal in prop::collection::vec(-5i32..5, 1..80),
            x in prop::collection::vec(-7i32..7, 0..100),
            negate: bool,
        ) {
            let mut cal: Vec<f64> = cal.into_iter().map(f64::from).collect();
            cal.sort_by(f64::total_cmp);
            let x: Vec<f64> = x.into_iter().map(|v| f64::from(v) * 0.75).collect();
            let mut out = vec![0.0; x.len()];
            let index = SearchIndex::new(&cal);
            let mut m = PValues { negate, complement: true, ..exact(&cal, TieBreak::Classical) };
            m.reference.index = Some(&index);
            m.map(&x, &mut out).unwrap();
            for (&s, &p) in x.iter().zip(&out) {
                let q = if negate { -s } else { s };
                prop_assert_eq!(p, 1.0 - direct(&cal, q));
            }
            let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            let mut out32 = vec![0.0f32; x.len()];
            m.map(&x32, &mut out32).unwrap();
            for (a, b) in out.iter().zip(&out32) {
                prop_assert_eq!(*a as f32, *b);
            }
        }
    }
}
