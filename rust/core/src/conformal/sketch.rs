//! Calibration scores of a stream (contract §11): a KLL sketch of the
//! oriented scores (DataSketches' `kll_doubles_sketch` bytes), and the
//! rank-error slack that keeps p-values counted from it conservative.

use crate::error::Error;
use crate::numeric::float::Float;
use crate::sample::{NanPolicy, Sample};
use crate::streaming::kll::serde::{deserialize, serialize};
use crate::streaming::kll::{KllSketch, SortedView};

/// A sketch of oriented calibration scores.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrationSketch {
    sketch: KllSketch<f64>,
}

/// The weighted sample of a sketch as p-values count it: its sorted view
/// and the slack ⌈εn⌉ (0 while the sketch is exact).
#[derive(Debug, Clone, PartialEq)]
pub struct SketchSample {
    /// Retained items, ascending, with inclusive cumulative weights.
    pub view: SortedView,
    /// Added to every count of calibration scores ≥ s.
    pub slack: u64,
}

impl CalibrationSketch {
    /// An empty sketch of parameter `k` and coin `seed`.
    pub fn new(k: u16, seed: u64) -> Result<Self, Error> {
        Ok(CalibrationSketch {
            sketch: KllSketch::new(k, seed)?,
        })
    }

    /// Adds a batch under the §5 rules: ±inf (or NaN under
    /// [`NanPolicy::Raise`]) refuses the whole batch, other NaN are skipped,
    /// a batch of only NaN adds nothing; `negate` orients the scores.
    /// Returns how many scores were added.
    pub fn update<T: Float>(
        &mut self,
        x: &[T],
        nan_policy: NanPolicy,
        negate: bool,
    ) -> Result<usize, Error> {
        if x.is_empty() {
            return Ok(0);
        }
        let oriented: Vec<f64> = match Sample::new(x, nan_policy, negate) {
            Ok(s) => s.to_vec().into_iter().map(Float::to_f64).collect(),
            Err(Error::Empty { .. }) => Vec::new(),
            Err(e) => return Err(e),
        };
        self.sketch.update(&oriented);
        Ok(oriented.len())
    }

    /// Adds everything `other` has seen.
    pub fn merge(&mut self, other: &CalibrationSketch) {
        self.sketch.merge(&other.sketch);
    }

    /// Scores seen.
    pub fn n(&self) -> u64 {
        self.sketch.n()
    }

    /// The parameter k.
    pub fn k(&self) -> u16 {
        self.sketch.k()
    }

    /// ε of the sketch (DataSketches' single-sided normalized rank error of
    /// the smallest k merged in), 0 while it is exact.
    pub fn rank_error(&self) -> f64 {
        if self.sketch.is_estimation_mode() {
            self.sketch.normalized_rank_error(false)
        } else {
            0.0
        }
    }

    /// The weighted sample with its slack ⌈εn⌉.
    pub fn sample(&self) -> Result<SketchSample, Error> {
        Ok(SketchSample {
            view: self.sketch.sorted_view()?,
            slack: (self.rank_error() * self.n() as f64).ceil() as u64,
        })
    }

    /// DataSketches' compact bytes.
    pub fn serialize(&self) -> Vec<u8> {
        serialize(&self.sketch)
    }

    /// Reads DataSketches' bytes (checked), with the coin seed to continue
    /// with.
    pub fn deserialize(bytes: &[u8], seed: u64) -> Result<Self, Error> {
        let mut sketch: KllSketch<f64> = deserialize(bytes)?;
        sketch.set_seed(seed);
        Ok(CalibrationSketch { sketch })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_follow_contract_5_and_the_slack_follows_epsilon() {
        let mut s = CalibrationSketch::new(8, 0).unwrap();
        assert_eq!(
            s.update(&[1.0, f64::NAN, 2.0], NanPolicy::Omit, true)
                .unwrap(),
            2
        );
        assert!(s
            .update(&[1.0, f64::INFINITY], NanPolicy::Omit, false)
            .is_err());
        assert!(s.update(&[1.0, f64::NAN], NanPolicy::Raise, false).is_err());
        assert_eq!(s.update(&[f64::NAN], NanPolicy::Omit, false).unwrap(), 0);
        assert_eq!(
            (s.n(), s.rank_error(), s.sample().unwrap().slack),
            (2, 0.0, 0)
        );
        assert_eq!(s.sample().unwrap().view.values(), &[-2.0, -1.0]);
        let xs: Vec<f64> = (0..1000).map(f64::from).collect();
        s.update(&xs, NanPolicy::Omit, false).unwrap();
        let e = s.rank_error();
        assert!(e > 0.0);
        assert_eq!(s.sample().unwrap().slack, (e * 1002.0).ceil() as u64);
        let t = CalibrationSketch::deserialize(&s.serialize(), 0).unwrap();
        assert_eq!(t.sample().unwrap(), s.sample().unwrap());
    }
}
