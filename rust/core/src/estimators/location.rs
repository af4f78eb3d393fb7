//! Location (center) estimators of contract §1 — the mean, the median,
//! type-7 quantiles and the upper-trimmed mean — on checked samples read in
//! place.
//!
//! Source: the centers of Röchner et al. (SISAP 2024), whose robust
//! scalings pair them with the scales of [`crate::estimators::scale`]; the
//! reference definitions are NumPy's (`numpy.median`, `numpy.quantile`
//! with method "linear", Hyndman and Fan's type 7, *Amer. Statist.* 1996)
//! and `math.fsum` for the mean.
//!
//! Trade-offs: the mean is correctly rounded (the exact accumulator of
//! [`crate::numeric::sum`]), so it is the same whatever the order or split
//! of the scores — at the cost of an exact sum where a compensated one
//! would do for most inputs. Order statistics come from
//! [`crate::numeric::rank`], which finds every rank a call needs in one
//! read-only pass instead of a copy and a selection. The trimmed mean ranks
//! its largest kept value and sums exactly what lies below it, adding the
//! kept copies of that value by count: ties at the cut need no positions.

use crate::error::Error;
use crate::numeric::float::Float;
use crate::numeric::rank::{ranked, ranked_checking, Key};
use crate::numeric::reduce::{mean_of, sum_below};
use crate::numeric::select::{midpoint, Position};
use crate::sample::{check_census, NanPolicy, Sample};

/// `(1/N) Σ s_i` with the sum correctly rounded: equal to
/// `math.fsum(s) / N` whatever the order of `s`.
pub fn mean<T: Float>(s: &Sample<'_, T>) -> f64 {
    // Σ(−x) = −Σx exactly, and rounding is symmetric.
    s.orient(mean_of(s.x, &s.summary))
}

/// `numpy.median`: the middle order statistic, or `(a + b)/2` of the two.
pub fn median<T: Float>(s: &Sample<'_, T>) -> f64 {
    median_of_key(s, Key::Value { negate: s.negate })
}

/// [`median`] of scores not yet checked: contract §5 is applied in the
/// selection's own read, so they are read once (a [`Sample`] would read
/// them once more for sums the median does not use). Equal to
/// `median(&Sample::new(x, nan_policy, negate)?)`, errors included.
pub fn checked_median<T: Float>(
    x: &[T],
    nan_policy: NanPolicy,
    negate: bool,
) -> Result<f64, Error> {
    let v = ranked_checking(x, Key::Value { negate }, median_ranks, |c| {
        check_census(x.len(), c.nan, c.inf, nan_policy)
    })?;
    Ok(middle(&v))
}

/// The ranks the median of `n` values needs: the middle one, or the two.
fn median_ranks(n: usize) -> Vec<usize> {
    if n % 2 == 1 {
        vec![n / 2]
    } else {
        vec![n / 2 - 1, n / 2]
    }
}

/// The median from the order statistics of [`median_ranks`].
fn middle(v: &[f64]) -> f64 {
    match v {
        [a, b] => midpoint(*a, *b),
        _ => v[0],
    }
}

/// The median of a key of the scores (the values, or deviations).
pub(crate) fn median_of_key<T: Float>(s: &Sample<'_, T>, key: Key) -> f64 {
    let n = s.len();
    middle(&ranked(s.x, n, key, &median_ranks(n)))
}

/// Checks that every quantile level is in [0, 1].
pub fn check_quantiles(qs: &[f64]) -> Result<(), Error> {
    match qs.iter().find(|q| !(0.0..=1.0).contains(*q)) {
        Some(bad) => Err(Error::invalid(
            "q",
            format!("quantiles must be in [0, 1], got {bad}"),
        )),
        None => Ok(()),
    }
}

/// Type-7 quantiles (`numpy.quantile`, method "linear") for each `q` in
/// [0, 1]; every order statistic they need is found in one read.
pub fn quantiles<T: Float>(s: &Sample<'_, T>, qs: &[f64]) -> Vec<f64> {
    let n = s.len();
    let positions: Vec<Position> = qs.iter().map(|&q| Position::new(n, q)).collect();
    let mut ranks: Vec<usize> = positions.iter().flat_map(Position::ranks).collect();
    ranks.sort_unstable();
    ranks.dedup();
    let values = ranked(s.x, n, Key::Value { negate: s.negate }, &ranks);
    let value_of = |r: usize| values[ranks.binary_search(&r).unwrap_or(0)];
    positions.iter().map(|p| p.interpolate(value_of)).collect()
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
/// `floor(alpha·N)` largest values; the lower tail is untouched. The
/// largest kept value v is ranked, then the values below v are summed
/// exactly and the kept copies of v added.
pub fn upper_trimmed_mean<T: Float>(s: &Sample<'_, T>, alpha: f64) -> Result<f64, Error> {
    check_trim(alpha)?;
    let n = s.len();
    let k = trimmed_count(alpha, n);
    if k == 0 {
        return Ok(mean(s));
    }
    let keep = n - k;
    let v = ranked(s.x, n, Key::Value { negate: s.negate }, &[keep - 1])[0];
    // Everything below v is kept, and as many copies of v as fill `keep`.
    let (sum, _) = sum_below(s.x, s.negate, v, |below| keep - below);
    Ok(sum.mean(keep))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::sum::exact_sum;
    use crate::sample::NanPolicy;
    use proptest::prelude::*;

    proptest! {
        /// Equal to `math.fsum(sorted(x)[:N−k]) / (N − k)` bit for bit.
        #[test]
        fn trimmed_mean_is_exactly_rounded(
            x in proptest::collection::vec(prop_oneof![-1e3f64..1e4, Just(7.0)], 1..3000),
            alpha in 0.0f64..0.9,
            negate in any::<bool>(),
        ) {
            let s = Sample::new(&x, NanPolicy::Omit, negate).unwrap();
            let mut y: Vec<f64> = x.iter().map(|&v| if negate { -v } else { v }).collect();
            y.sort_by(f64::total_cmp);
            let keep = y.len() - trimmed_count(alpha, y.len());
            let want = exact_sum(&y[..keep]).value() / keep as f64;
            prop_assert_eq!(upper_trimmed_mean(&s, alpha).unwrap().to_bits(), want.to_bits());
        }
    }

    fn sample(x: &[f64]) -> Sample<'_, f64> {
        Sample::new(x, NanPolicy::Omit, false).unwrap()
    }

    #[test]
    fn trimmed_mean_drops_the_largest() {
        let x = [5.0, 1.0, 100.0, 2.0, 3.0, 4.0, 6.0, 7.0, 8.0, 9.0];
        // floor(0.1 * 10) = 1: drop 100.
        assert_eq!(upper_trimmed_mean(&sample(&x), 0.1).unwrap(), 5.0);
        assert_eq!(upper_trimmed_mean(&sample(&[1.0, 2.0]), 0.5).unwrap(), 1.0);
        assert_eq!(upper_trimmed_mean(&sample(&[3.0]), 0.9).unwrap(), 3.0);
        assert!(upper_trimmed_mean(&sample(&[1.0]), 1.0).is_err());
        assert!(upper_trimmed_mean(&sample(&[1.0]), f64::NAN).is_err());
        // Ties at the cut: [1, 2, 2, 2, 9], drop 1 → mean of [1, 2, 2, 2].
        assert_eq!(
            upper_trimmed_mean(&sample(&[2.0, 9.0, 2.0, 1.0, 2.0]), 0.2).unwrap(),
            1.75
        );
        let many = vec![0.5; 1000];
        assert_eq!(upper_trimmed_mean(&sample(&many), 0.1).unwrap(), 0.5);
    }

    #[test]
    fn trimmed_mean_at_the_top_of_the_double_range() {
        let x = vec![1e307; 20];
        assert_eq!(upper_trimmed_mean(&sample(&x), 0.1).unwrap(), 1e307);
        let x = vec![f64::MAX; 20];
        assert_eq!(upper_trimmed_mean(&sample(&x), 0.1).unwrap(), f64::MAX);
        let x = vec![-f64::MAX; 20];
        assert_eq!(upper_trimmed_mean(&sample(&x), 0.25).unwrap(), -f64::MAX);
        let x = [1.7e308, 1.7e308, -1.0, 1.7e308];
        assert_eq!(
            upper_trimmed_mean(&sample(&x), 0.25).unwrap(),
            (1.7e308 / 3.0) * 2.0 - 1.0 / 3.0
        );
    }

    /// `checked_median` equals the median of a checked sample, errors
    /// included, on both sides of the size where it reads once, with NaN
    /// changing the parity of the count, a NaN majority, ±inf and nothing
    /// left.
    #[test]
    fn checked_median_equals_the_sample_median() {
        let mut u = crate::numeric::testing::uniforms(0x2545_f491_4f6c_dd1d);
        let mut cases: Vec<Vec<f64>> = Vec::new();
        for n in [1, 2, 7, 8_192, 8_193, 100_000, 300_001] {
            let x: Vec<f64> = (0..n).map(|_| (u() * 6.0).exp()).collect();
            let mut one_nan = x.clone();
            one_nan[n / 3] = f64::NAN;
            let nan_majority: Vec<f64> = x
                .iter()
                .map(|&v| if u() < 0.9 { f64::NAN } else { v })
                .collect();
            let mut inf = x.clone();
            inf[n - 1] = f64::NEG_INFINITY;
            inf[n / 2] = f64::INFINITY;
            let ties: Vec<f64> = x.iter().map(|&v| v.floor().min(3.0)).collect();
            cases.extend([x, one_nan, nan_majority, inf, ties, vec![f64::NAN; n]]);
        }
        cases.push(Vec::new());
        for x in &cases {
            for policy in [NanPolicy::Omit, NanPolicy::Raise] {
                for negate in [false, true] {
                    let want = Sample::new(x, policy, negate).map(|s| median(&s));
                    let got = checked_median(x, policy, negate);
                    assert_eq!(
                        got.map(f64::to_bits),
                        want.map(f64::to_bits),
                        "n={} {policy:?} {negate}",
                        x.len()
                    );
                    let y: Vec<f32> = x.iter().map(|&v| v as f32).collect();
                    let want = Sample::new(&y, policy, negate).map(|s| median(&s));
                    assert_eq!(checked_median(&y, policy, negate), want);
                }
            }
        }
    }

    #[test]
    fn mean_and_median() {
        assert_eq!(mean(&sample(&[1e150, 1.0, -1e150])), 1.0 / 3.0);
        let neg = Sample::new(&[1.0, 2.0, 4.0][..], NanPolicy::Omit, true).unwrap();
        assert_eq!((mean(&neg), median(&neg)), (-7.0 / 3.0, -2.0));
        assert_eq!(median(&sample(&[4.0, 1.0, 3.0, 2.0])), 2.5);
        assert_eq!(
            quantiles(&sample(&[4.0, 2.0, 1.0, 3.0]), &[0.0, 0.25, 0.5, 0.75, 1.0]),
            vec![1.0, 1.75, 2.5, 3.25, 4.0]
        );
    }
}
