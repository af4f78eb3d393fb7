//! Location (center) estimators, SPEC §1. Inputs are checked, NaN-free,
//! non-empty buffers; the median lives with selection.

use crate::error::Error;
use crate::float::Float;
use crate::select::order_statistics;
use crate::sum::exact_sum;

/// `(1/N) Σ s_i` with the sum correctly rounded: equal to
/// `math.fsum(s) / N` whatever the order of `s`.
pub fn mean<T: Float>(x: &[T]) -> f64 {
    exact_sum(x).mean(x.len())
}

/// How many of the largest of `n` values a trimming fraction drops:
/// `floor(alpha·N)`, at most `N − 1` so that one value is always kept.
pub fn trimmed_count(alpha: f64, n: usize) -> usize {
    ((alpha * n as f64).floor() as usize).min(n - 1)
}

/// Checks a trimming fraction: `0 <= alpha < 1`.
pub fn check_trim(alpha: f64) -> Result<(), Error> {
    if (0.0..1.0).contains(&alpha) {
        Ok(())
    } else {
        Err(Error::invalid(
            "trim",
            format!("the trimmed fraction must be in [0, 1), got {alpha}"),
        ))
    }
}

/// Asymmetric, upper-trimmed mean: the mean of all but the
/// `floor(alpha·N)` largest values (reorders `buf`). Lower tail untouched.
pub fn upper_trimmed_mean<T: Float>(buf: &mut [T], alpha: f64) -> Result<f64, Error> {
    check_trim(alpha)?;
    let n = buf.len();
    let k = trimmed_count(alpha, n);
    if k > 0 {
        // The (N−k)-th smallest at index N−k: everything before it is kept.
        order_statistics(buf, &[n - k]);
    }
    Ok(mean(&buf[..n - k]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimmed_mean_drops_the_largest() {
        let mut x = [5.0, 1.0, 100.0, 2.0, 3.0, 4.0, 6.0, 7.0, 8.0, 9.0];
        // floor(0.1 * 10) = 1: drop 100.
        assert_eq!(upper_trimmed_mean(&mut x, 0.1).unwrap(), 5.0);
        let mut y = [1.0, 2.0];
        assert_eq!(upper_trimmed_mean(&mut y, 0.5).unwrap(), 1.0);
        assert_eq!(upper_trimmed_mean(&mut [3.0f32], 0.9).unwrap(), 3.0);
        assert!(upper_trimmed_mean(&mut [1.0], 1.0).is_err());
        assert!(upper_trimmed_mean(&mut [1.0], f64::NAN).is_err());
    }

    #[test]
    fn mean_is_exact() {
        assert_eq!(mean(&[1e150, 1.0, -1e150]), 1.0 / 3.0);
        assert_eq!(mean(&[0.1f32; 3]), (3.0 * f64::from(0.1f32)) / 3.0);
    }
}
