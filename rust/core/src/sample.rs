//! The input contract for fitting data (contract §5): NaN omitted or refused,
//! ±inf refused with a count and the first index, nothing left → error.
//!
//! [`Sample`] is checked fitting data read in place: one pass takes the
//! census (and the sum, extremes) and every estimator then reads the
//! caller's buffer again, skipping NaN, without copying it.

use crate::error::{named_enum, Error};
use crate::numeric::float::Float;
use crate::numeric::reduce::{summarize, Census, Summary};

/// What to do with NaN in fitting data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NanPolicy {
    /// Ignore NaN (the scikit-learn scaler convention).
    #[default]
    Omit,
    /// Refuse data holding NaN.
    Raise,
}

named_enum!(
    NanPolicy,
    "nan_policy",
    "expected 'omit' or 'raise'",
    "omit" => Omit,
    "raise" => Raise,
);

/// The §5 contract for a batch added to streaming state: ±inf refused,
/// NaN refused under [`NanPolicy::Raise`]; a batch of NaN only adds
/// nothing. Returns the batch's summary.
pub fn check_batch<T: Float>(x: &[T], nan_policy: NanPolicy) -> Result<Summary, Error> {
    let s = summarize(x);
    if s.inf.count > 0 {
        return Err(Error::Infinite {
            count: s.inf.count,
            first_index: Some(s.inf.first),
        });
    }
    if s.nan.count > 0 && nan_policy == NanPolicy::Raise {
        return Err(Error::Nan {
            count: s.nan.count,
            first_index: Some(s.nan.first),
        });
    }
    Ok(s)
}

/// The §5 contract on the census of `len` scores: ±inf refused, then NaN
/// refused under [`NanPolicy::Raise`], then nothing left refused. Returns
/// how many scores are kept.
pub(crate) fn check_census(
    len: usize,
    nan: Census,
    inf: Census,
    nan_policy: NanPolicy,
) -> Result<usize, Error> {
    if inf.count > 0 {
        return Err(Error::Infinite {
            count: inf.count,
            first_index: Some(inf.first),
        });
    }
    if nan.count > 0 && nan_policy == NanPolicy::Raise {
        return Err(Error::Nan {
            count: nan.count,
            first_index: Some(nan.first),
        });
    }
    match len - nan.count {
        0 => Err(Error::Empty { len }),
        count => Ok(count),
    }
}

/// Checked fitting data: the caller's buffer (NaN are skipped by every
/// estimator), whether the scores are negated (`higher_is_outlier=False`),
/// and the summary of the first read.
#[derive(Debug, Clone, Copy)]
pub struct Sample<'a, T> {
    /// The raw scores.
    pub x: &'a [T],
    /// Estimate on `−x`.
    pub negate: bool,
    /// Census, sum and extremes of `x` (not negated).
    pub summary: Summary,
}

impl<'a, T: Float> Sample<'a, T> {
    /// Reads `x` once and applies the §5 contract.
    pub fn new(x: &'a [T], nan_policy: NanPolicy, negate: bool) -> Result<Self, Error> {
        let summary = summarize(x);
        check_census(x.len(), summary.nan, summary.inf, nan_policy)?;
        Ok(Sample { x, negate, summary })
    }

    /// Number of (non-NaN) scores.
    pub fn len(&self) -> usize {
        self.summary.count
    }

    /// Never true for a constructed sample.
    pub fn is_empty(&self) -> bool {
        self.summary.count == 0
    }

    /// `±v` as this sample orients scores.
    #[inline]
    pub fn orient(&self, v: f64) -> f64 {
        if self.negate {
            -v
        } else {
            v
        }
    }

    /// The oriented scores without NaN, as a new buffer (for the estimators
    /// that need one they may reorder).
    pub fn to_vec(&self) -> Vec<T> {
        let keep = self.x.iter().copied().filter(|v| !v.is_nan());
        if self.negate {
            keep.map(Float::neg).collect()
        } else {
            keep.collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contract() {
        let x = [1.0, f64::NAN, 2.0, f64::NAN];
        let s = Sample::new(&x, NanPolicy::Omit, true).unwrap();
        assert_eq!((s.len(), s.to_vec()), (2, vec![-1.0, -2.0]));
        assert_eq!(
            Sample::new(&x, NanPolicy::Raise, false).unwrap_err(),
            Error::Nan {
                count: 2,
                first_index: Some(1)
            }
        );
        let y: Vec<f64> = (0..1000)
            .map(|i| match i {
                300 => f64::NEG_INFINITY,
                700 => f64::INFINITY,
                _ => 0.5,
            })
            .collect();
        assert_eq!(
            Sample::new(&y, NanPolicy::Omit, false).unwrap_err(),
            Error::Infinite {
                count: 2,
                first_index: Some(300)
            }
        );
        assert_eq!(
            Sample::<f32>::new(&[], NanPolicy::Omit, false).unwrap_err(),
            Error::Empty { len: 0 }
        );
        assert_eq!(
            Sample::new(&[f32::NAN], NanPolicy::Omit, false).unwrap_err(),
            Error::Empty { len: 1 }
        );
    }
}
