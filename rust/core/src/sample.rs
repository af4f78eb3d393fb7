//! The input contract for fitting data (SPEC §5): NaN omitted or refused,
//! ±inf refused with a count and the first index, nothing left → error.

use crate::error::Error;
use crate::float::Float;

/// What to do with NaN in fitting data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NanPolicy {
    /// Ignore NaN (the scikit-learn scaler convention).
    #[default]
    Omit,
    /// Refuse data holding NaN.
    Raise,
}

impl core::str::FromStr for NanPolicy {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "omit" => Ok(NanPolicy::Omit),
            "raise" => Ok(NanPolicy::Raise),
            other => Err(Error::invalid(
                "nan_policy",
                format!("expected 'omit' or 'raise', got {other:?}"),
            )),
        }
    }
}

const BLOCK: usize = 256;

/// Checks fitting data and returns how many NaN it holds.
pub fn check<T: Float>(x: &[T], nan_policy: NanPolicy) -> Result<usize, Error> {
    let (mut nan, mut first_nan) = (0usize, 0usize);
    let (mut inf, mut first_inf) = (0usize, 0usize);
    // Non-finite values are rare: test a block at once and look closer only
    // at a block that has any.
    for (b, block) in x.chunks(BLOCK).enumerate() {
        if block.iter().all(|v| v.is_finite()) {
            continue;
        }
        for (i, v) in block.iter().enumerate() {
            if v.is_nan() {
                if nan == 0 {
                    first_nan = b * BLOCK + i;
                }
                nan += 1;
            } else if !v.is_finite() {
                if inf == 0 {
                    first_inf = b * BLOCK + i;
                }
                inf += 1;
            }
        }
    }
    if inf > 0 {
        return Err(Error::Infinite {
            count: inf,
            first_index: first_inf,
        });
    }
    if nan > 0 && nan_policy == NanPolicy::Raise {
        return Err(Error::Nan {
            count: nan,
            first_index: first_nan,
        });
    }
    if nan == x.len() {
        return Err(Error::Empty { len: x.len() });
    }
    Ok(nan)
}

/// A scratch copy of checked data without its NaN, negated if asked
/// (`higher_is_outlier=False`).
pub fn finite_copy<T: Float>(x: &[T], nan_count: usize, negate: bool) -> Vec<T> {
    let mut out = Vec::with_capacity(x.len() - nan_count);
    match (nan_count, negate) {
        (0, false) => out.extend_from_slice(x),
        (0, true) => out.extend(x.iter().map(|v| v.neg())),
        (_, false) => out.extend(x.iter().copied().filter(|v| !v.is_nan())),
        (_, true) => out.extend(x.iter().filter(|v| !v.is_nan()).map(|v| v.neg())),
    }
    out
}

/// Checks `x` and returns its finite values as a scratch buffer.
pub fn sample<T: Float>(x: &[T], nan_policy: NanPolicy, negate: bool) -> Result<Vec<T>, Error> {
    let nan = check(x, nan_policy)?;
    Ok(finite_copy(x, nan, negate))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contract() {
        let x = [1.0, f64::NAN, 2.0, f64::NAN];
        assert_eq!(sample(&x, NanPolicy::Omit, false).unwrap(), vec![1.0, 2.0]);
        assert_eq!(sample(&x, NanPolicy::Omit, true).unwrap(), vec![-1.0, -2.0]);
        assert_eq!(
            sample(&x, NanPolicy::Raise, false),
            Err(Error::Nan {
                count: 2,
                first_index: 1
            })
        );
        let y: Vec<f64> = (0..1000)
            .map(|i| match i {
                300 => f64::NEG_INFINITY,
                700 => f64::INFINITY,
                _ => 0.5,
            })
            .collect();
        assert_eq!(
            sample(&y, NanPolicy::Omit, false),
            Err(Error::Infinite {
                count: 2,
                first_index: 300
            })
        );
        assert_eq!(
            sample::<f32>(&[], NanPolicy::Omit, false),
            Err(Error::Empty { len: 0 })
        );
        assert_eq!(
            sample(&[f32::NAN], NanPolicy::Omit, false),
            Err(Error::Empty { len: 1 })
        );
    }
}
