//! The running state of a streaming linear fit (contract §4, §9): the
//! count, min and max of the scores seen, batch by batch. Linear scaling
//! reads nothing else, so the state keeps no sums and no sketch.
//!
//! A batch follows contract §5 (±inf, or NaN under `raise`, refuses it
//! whole; NaN are otherwise skipped); counts are bounded as every stream's
//! are ([`crate::streaming::stored::MAX_COUNT`]). The extremes are those of
//! the raw scores, oriented when the fit is read.

use crate::error::Error;
use crate::io::record::{Field, Kind, Record, Schema};
use crate::numeric::float::Float;
use crate::sample::{check_batch, NanPolicy};
use crate::streaming::bounds::Interval;
use crate::streaming::fit::StreamingResult;
use crate::streaming::stored::{add_counts, check_count};
use crate::transformations::fit::Scale;

/// The fields of a stored linear state, as [`Extremes::to_record`] writes
/// them (the raw scores' extremes; ±inf while empty).
pub const EXTREMES: &Schema = &[
    ("n", Kind::Count),
    ("min", Kind::Float),
    ("max", Kind::Float),
];

/// The linear fit of `n` scores whose oriented extremes are `lo`, `hi`:
/// `lo` in `center`, `hi` in `scale`, both exact (point intervals, no
/// probability error).
pub fn linear_result(lo: f64, hi: f64, n: u64) -> StreamingResult {
    StreamingResult {
        center: lo,
        scale: hi,
        scale_used: Scale::Value(hi),
        center_interval: Some(Interval { lo, hi: lo }),
        scale_interval: Some(Interval { lo: hi, hi }),
        probability_error: Some(0.0),
        rank_error: 0.0,
        m_estimates: Vec::new(),
        n,
    }
}

/// Count and extremes of the scores seen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Extremes {
    nan_policy: NanPolicy,
    negate: bool,
    n: u64,
    min: f64,
    max: f64,
}

impl Extremes {
    /// The empty state of a fit that orients scores by `negate`.
    pub fn new(nan_policy: NanPolicy, negate: bool) -> Self {
        Extremes {
            nan_policy,
            negate,
            n: 0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }

    /// How a batch's NaN are handled.
    pub fn nan_policy(&self) -> NanPolicy {
        self.nan_policy
    }

    /// Scores seen.
    pub fn n(&self) -> u64 {
        self.n
    }

    /// The count and extremes of `n` more scores between `min` and `max`
    /// (the first of equal extremes is kept: −0 and +0 stay as seen).
    fn add(&mut self, n: u64, min: f64, max: f64) -> Result<(), Error> {
        if n == 0 {
            return Ok(());
        }
        self.n = add_counts(self.n, n)?;
        if min < self.min {
            self.min = min;
        }
        if max > self.max {
            self.max = max;
        }
        Ok(())
    }

    /// Adds a batch under the §5 rules; returns how many scores it added.
    pub fn update<T: Float>(&mut self, x: &[T]) -> Result<usize, Error> {
        let s = check_batch(x, self.nan_policy)?;
        self.add(s.count as u64, s.min, s.max)?;
        Ok(s.count)
    }

    /// Adds everything `other` has seen.
    pub fn merge(&mut self, other: &Extremes) -> Result<(), Error> {
        self.add(other.n, other.min, other.max)
    }

    /// Whether `other` is a state of the same fit (it may be merged).
    pub fn same_fit(&self, other: &Extremes) -> bool {
        (self.nan_policy, self.negate) == (other.nan_policy, other.negate)
    }

    /// The linear fit: the oriented min in `center`, max in `scale`, both
    /// exact (point intervals, no probability error).
    pub fn result(&self) -> Result<StreamingResult, Error> {
        if self.n == 0 {
            return Err(Error::NothingSeen);
        }
        let (lo, hi) = if self.negate {
            (-self.max, -self.min)
        } else {
            (self.min, self.max)
        };
        Ok(linear_result(lo, hi, self.n))
    }

    /// The state as a record of [`EXTREMES`].
    pub fn to_record(&self) -> Record {
        Record::new(
            EXTREMES,
            vec![
                Field::Count(self.n),
                Field::Float(self.min),
                Field::Float(self.max),
            ],
        )
    }

    /// A state from a stored record (untrusted): a count within
    /// [`crate::streaming::stored::MAX_COUNT`] and, when it is not 0,
    /// finite extremes with `min <= max`.
    pub fn from_record(r: &Record, nan_policy: NanPolicy, negate: bool) -> Result<Self, Error> {
        let (n, min, max): (u64, f64, f64) = (r.get("n")?, r.get("min")?, r.get("max")?);
        check_count("n", n)?;
        let mut e = Extremes::new(nan_policy, negate);
        if n > 0 {
            if !(min.is_finite() && max.is_finite() && min <= max) {
                return Err(Error::invalid(
                    "state",
                    "not a valid linear-fit state: min and max must be finite with min <= max",
                ));
            }
            (e.n, e.min, e.max) = (n, min, max);
        }
        Ok(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::streaming::stored::MAX_COUNT;

    #[test]
    fn counts_and_extremes_by_the_section5_rules() {
        let mut e = Extremes::new(NanPolicy::Omit, true);
        assert_eq!(e.result().unwrap_err(), Error::NothingSeen);
        assert_eq!(e.update(&[3.0, f64::NAN, -1.0]).unwrap(), 2);
        let before = e;
        assert!(e.update(&[1.0, f64::INFINITY]).is_err());
        assert_eq!(e, before);
        e.merge(&Extremes::new(NanPolicy::Omit, true)).unwrap();
        let mut other = Extremes::new(NanPolicy::Omit, true);
        other.update(&[7.0f32]).unwrap();
        e.merge(&other).unwrap();
        let r = e.result().unwrap();
        assert_eq!((r.center, r.scale, r.n), (-7.0, 1.0, 3));
        assert_eq!(r.scale_used.name(), "value");
        let mut strict = Extremes::new(NanPolicy::Raise, false);
        assert!(strict.update(&[f64::NAN]).is_err());
        let back = Extremes::from_record(&e.to_record(), NanPolicy::Omit, true).unwrap();
        assert_eq!(back, e);
        let empty = Extremes::new(NanPolicy::Omit, false);
        let back = Extremes::from_record(&empty.to_record(), NanPolicy::Omit, false).unwrap();
        assert_eq!(back, empty);
    }

    #[test]
    fn stored_contradictions_are_refused() {
        let bad = |n: u64, min: f64, max: f64| {
            let r = Record::new(
                EXTREMES,
                vec![Field::Count(n), Field::Float(min), Field::Float(max)],
            );
            Extremes::from_record(&r, NanPolicy::Omit, false).is_err()
        };
        assert!(bad(MAX_COUNT + 1, 0.0, 1.0));
        assert!(bad(2, 1.0, 0.0));
        assert!(bad(2, f64::NAN, 1.0));
        assert!(bad(1, 0.0, f64::INFINITY));
        assert!(!bad(0, f64::INFINITY, f64::NEG_INFINITY));
        let mut full = Extremes::new(NanPolicy::Omit, false);
        full.n = MAX_COUNT;
        (full.min, full.max) = (0.0, 1.0);
        assert!(full.update(&[2.0]).is_err());
        assert_eq!(full.n(), MAX_COUNT);
    }
}
