//! A fitted p-value map (contract §11): the calibration scores it counts
//! against — sorted scores, or a sketch's weighted sample with its slack —
//! their search index, and the adjustment its options ask for, checked and
//! built once so that mapping scores converts nothing else.

use super::conditional::{Adjustment, Conditional};
use super::pvalues::{PValues, Reference, TieBreak};
use super::sketch::CalibrationSketch;
use crate::error::Error;
use crate::limits::SIMES_K;
use crate::numeric::scratch::zeroed;
use crate::numeric::search_index::SearchIndex;

/// The options of a p-value map.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConformalSpec {
    /// Tie breaking (with its seed).
    pub tie_break: TieBreak,
    /// The calibration-conditional adjustment, if any.
    pub conditional: Option<Conditional>,
    /// Its δ (the probability over calibration sets that the adjusted
    /// p-value is not valid); read only with `conditional`.
    pub delta: f64,
    /// The generalised Simes parameter k (default ⌊n/2⌋).
    pub simes_k: Option<u64>,
    /// The Monte Carlo adjustment's correction γ.
    pub mc_correction: Option<f64>,
}

impl ConformalSpec {
    /// The options, each checked whether or not the adjustment reads it
    /// (a stored or mistyped option is refused when given, not when first
    /// used): δ in (0, 1), `simes_k` within [`SIMES_K`], a finite
    /// correction.
    pub fn new(
        tie_break: TieBreak,
        conditional: Option<Conditional>,
        delta: f64,
        simes_k: Option<u64>,
        mc_correction: Option<f64>,
    ) -> Result<Self, Error> {
        if !(delta > 0.0 && delta < 1.0) {
            return Err(Error::invalid(
                "delta",
                format!("must be in (0, 1), got {delta}"),
            ));
        }
        if let Some(k) = simes_k {
            SIMES_K.check(k)?;
        }
        if let Some(c) = mc_correction {
            if !c.is_finite() {
                return Err(Error::invalid(
                    "mc_correction",
                    format!("must be finite, got {c}"),
                ));
            }
        }
        Ok(ConformalSpec {
            tie_break,
            conditional,
            delta,
            simes_k,
            mc_correction,
        })
    }

    /// The adjustment for n calibration scores (None: marginal p-values).
    pub fn adjustment(&self, n: u64) -> Result<Option<Adjustment>, Error> {
        self.conditional
            .map(|c| c.adjustment(n, self.delta, self.simes_k, self.mc_correction))
            .transpose()
    }
}

/// Calibration scores (oriented: higher = more outlying) with their index
/// and adjustment: everything a [`PValues`] map reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    values: Vec<f64>,
    cumulative: Option<Vec<u64>>,
    slack: u64,
    index: SearchIndex,
    adjustment: Option<Adjustment>,
    tie_break: TieBreak,
    negate: bool,
}

/// A copy of `v` on huge pages where the kernel allows: p-values read it
/// at random.
fn on_huge_pages<T: Copy + Default>(v: &[T]) -> Vec<T> {
    let mut out = zeroed::<T>(v.len());
    out.copy_from_slice(v);
    out
}

impl Calibration {
    /// From sorted (ascending, finite, non-empty) oriented calibration
    /// scores; `negate` orients the scores to be mapped.
    pub fn from_sorted(sorted: &[f64], spec: &ConformalSpec, negate: bool) -> Result<Self, Error> {
        Self::build(on_huge_pages(sorted), None, 0, spec, negate)
    }

    /// From a sketch of oriented calibration scores: its weighted sample,
    /// with the slack ⌈εn⌉ added to every count of scores ≥ s (0 while
    /// the sketch is exact).
    pub fn from_sketch(
        sketch: &CalibrationSketch,
        spec: &ConformalSpec,
        negate: bool,
    ) -> Result<Self, Error> {
        let sample = sketch.sample()?;
        let values = on_huge_pages(sample.view.values());
        let cumulative = sample.view.cumulative().to_vec();
        Self::build(values, Some(cumulative), sample.slack, spec, negate)
    }

    fn build(
        values: Vec<f64>,
        cumulative: Option<Vec<u64>>,
        slack: u64,
        spec: &ConformalSpec,
        negate: bool,
    ) -> Result<Self, Error> {
        let reference = Reference {
            values: &values,
            cumulative: cumulative.as_deref(),
            slack,
            index: None,
        };
        reference.check()?;
        let adjustment = spec.adjustment(reference.n())?;
        Ok(Calibration {
            index: SearchIndex::new(&values),
            values,
            cumulative,
            slack,
            adjustment,
            tie_break: spec.tie_break,
            negate,
        })
    }

    /// The calibration scores as p-values count them.
    pub fn reference(&self) -> Reference<'_> {
        Reference {
            values: &self.values,
            cumulative: self.cumulative.as_deref(),
            slack: self.slack,
            index: Some(&self.index),
        }
    }

    /// The number of calibration scores n.
    pub fn n(&self) -> u64 {
        self.reference().n()
    }

    /// The p-value map (of `1 − p` with `complement`).
    pub fn pvalues(&self, complement: bool) -> PValues<'_> {
        PValues {
            reference: self.reference(),
            tie_break: self.tie_break,
            adjustment: self.adjustment.as_ref(),
            negate: self.negate,
            complement,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformal::pvalues::tests::direct;
    use crate::sample::NanPolicy;

    fn spec(conditional: Option<Conditional>) -> ConformalSpec {
        ConformalSpec {
            tie_break: TieBreak::Classical,
            conditional,
            delta: 0.1,
            simes_k: None,
            mc_correction: None,
        }
    }

    #[test]
    fn sorted_scores_map_to_the_definition() {
        let cal: Vec<f64> = (0..300).map(|i| f64::from(i % 37) * 0.5).collect();
        let mut sorted = cal.clone();
        sorted.sort_by(f64::total_cmp);
        let c = Calibration::from_sorted(&sorted, &spec(None), true).unwrap();
        assert_eq!(c.n(), 300);
        let x: Vec<f64> = (0..100).map(|i| -f64::from(i) * 0.25).collect();
        let (mut p, mut q) = (vec![0.0; x.len()], vec![0.0; x.len()]);
        c.pvalues(false).map(&x, &mut p).unwrap();
        c.pvalues(true).map(&x, &mut q).unwrap();
        for ((&s, &pi), &qi) in x.iter().zip(&p).zip(&q) {
            assert_eq!(pi, direct(&cal, -s));
            assert_eq!(qi, 1.0 - pi);
        }
    }

    #[test]
    fn the_adjustment_is_the_specs_for_n() {
        let sorted: Vec<f64> = (0..50).map(f64::from).collect();
        for conditional in [Conditional::Simes, Conditional::Dkwm] {
            let s = spec(Some(conditional));
            let c = Calibration::from_sorted(&sorted, &s, false).unwrap();
            assert_eq!(
                c.adjustment,
                conditional.adjustment(50, 0.1, None, None).ok()
            );
        }
        // Monte Carlo needs its correction from n = 17 on.
        let mc = spec(Some(Conditional::MonteCarlo));
        assert!(Calibration::from_sorted(&sorted, &mc, false).is_err());
    }

    #[test]
    fn bad_calibration_is_refused() {
        let s = spec(None);
        for bad in [&[][..], &[2.0, 1.0], &[0.0, f64::NAN], &[f64::INFINITY]] {
            assert!(Calibration::from_sorted(bad, &s, false).is_err(), "{bad:?}");
        }
        let d = ConformalSpec {
            delta: 1.5,
            ..spec(Some(Conditional::Dkwm))
        };
        assert!(Calibration::from_sorted(&[1.0], &d, false).is_err());
    }

    #[test]
    fn a_spec_checks_every_option_it_is_given() {
        let ok = |delta, k, c| {
            ConformalSpec::new(TieBreak::Classical, None, delta, k, c).map_err(|e| e.to_string())
        };
        assert!(ok(0.1, Some(3), None).is_ok());
        assert!(ok(0.1, Some(1 << 53), Some(0.01)).is_ok());
        // Unused options too: no adjustment reads simes_k here.
        assert!(ok(0.1, Some(0), None).unwrap_err().starts_with("simes_k"));
        assert!(ok(0.1, Some(u64::MAX), None)
            .unwrap_err()
            .starts_with("simes_k"));
        for delta in [0.0, 1.0, f64::NAN, -0.5] {
            assert!(ok(delta, None, None).unwrap_err().starts_with("delta"));
        }
        let nan = ok(0.1, None, Some(f64::NAN)).unwrap_err();
        assert!(nan.starts_with("mc_correction"));
    }

    #[test]
    fn a_sketch_counts_its_weighted_sample() {
        let mut sk = CalibrationSketch::new(8, 0).unwrap();
        let xs: Vec<f64> = (0..1000).map(f64::from).collect();
        sk.update(&xs, NanPolicy::Omit, false).unwrap();
        let c = Calibration::from_sketch(&sk, &spec(None), false).unwrap();
        let sample = sk.sample().unwrap();
        assert_eq!(c.n(), 1000);
        assert_eq!(c.reference().values, sample.view.values());
        assert_eq!(c.reference().slack, sample.slack);
        let empty = CalibrationSketch::new(8, 0).unwrap();
        assert!(Calibration::from_sketch(&empty, &spec(None), false).is_err());
    }
}
