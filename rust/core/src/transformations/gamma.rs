//! Gamma scaling (Kriegel et al., SDM 2011; contract §10): the scores,
//! shifted by an offset, are taken as Γ(k, θ) distributed and mapped to
//!
//! `p = max(0, (P(k, t/θ) − P(k, m/θ)) / (1 − P(k, m/θ))) = max(0, 1 − Q(k, t/θ)/Q(k, k))`
//!
//! with `t = s + offset`, `m = kθ` the gamma's mean and `Q = 1 − P`. The
//! `Q` form keeps relative accuracy where `P` is close to 1 (the outliers).
//!
//! Two fits: the method of moments (ELKI's `OutlierGammaScaling`: mean
//! `m` and sample variance `v`, `k = m²/v`, `θ = v/m`) and a robust one
//! matching the gamma's quartiles: `(q₇₅ − q₂₅)/q₅₀` depends on `k` alone
//! and decreases in it, so `k` solves `r(k) = (q̂₇₅ − q̂₂₅)/q̂₅₀` and
//! `θ = q̂₅₀ / q₅₀(k, 1)`. The upper quarter of the scores, where the
//! outliers are, does not enter it.

use crate::error::Error;
use crate::estimators::location::quantiles;
use crate::estimators::scale::std;
use crate::numeric::float::Float;
use crate::numeric::gamma::{gamma_pq, prefactor, Order};
use crate::numeric::reduce::sum_plus;
use crate::sample::{NanPolicy, Sample};
use crate::transformations::scaling::Scaling;

/// A fitted gamma scaling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gamma {
    /// Added to the (oriented) scores before the gamma is applied.
    pub offset: f64,
    /// The gamma's mean `m = kθ` (of the shifted scores): the cut below
    /// which every score maps to 0.
    pub mean: f64,
    /// θ; zero for constant scores (then the map is 0 at or below `mean`,
    /// 1 above, the θ → 0 limit).
    pub scale: f64,
    order: Order,
    q_mean: f64,
}

impl Gamma {
    /// The scaling of `Γ(k = mean/scale, θ = scale)` shifted by `offset`.
    pub fn new(offset: f64, mean: f64, scale: f64) -> Self {
        let (order, q_mean) = if scale > 0.0 && mean > 0.0 {
            let order = Order::new(mean / scale);
            (order, order.q(order.a()))
        } else {
            (Order::new(f64::INFINITY), 0.0)
        };
        Gamma {
            offset,
            mean,
            scale,
            order,
            q_mean,
        }
    }

    /// `k = mean/scale` (infinite for constant scores).
    pub fn shape(&self) -> f64 {
        self.order.a()
    }
}

impl Scaling for Gamma {
    /// Finite offset and mean, finite `scale >= 0`, and `mean > 0` when
    /// `scale > 0` (a gamma has a positive mean).
    fn check(&self) -> Result<(), Error> {
        if !(self.offset.is_finite() && self.mean.is_finite()) {
            return Err(Error::invalid(
                "offset/mean",
                format!(
                    "must be finite, got offset={} mean={}",
                    self.offset, self.mean
                ),
            ));
        }
        if !(self.scale.is_finite() && self.scale >= 0.0) {
            return Err(Error::invalid(
                "scale",
                format!("must be finite and non-negative, got {}", self.scale),
            ));
        }
        if self.scale > 0.0 && !(self.mean > 0.0 && self.q_mean > 0.0) {
            return Err(Error::invalid(
                "mean",
                format!(
                    "a gamma needs a positive mean and shape, got mean={} scale={}",
                    self.mean, self.scale
                ),
            ));
        }
        Ok(())
    }

    /// NaN stays NaN, +inf → 1, −inf → 0; scores at or below the mean → 0.
    #[inline]
    fn probability(&self, s: f64) -> f64 {
        if s.is_nan() {
            return s;
        }
        let t = s + self.offset;
        if t <= self.mean {
            return 0.0;
        }
        if self.scale == 0.0 || t == f64::INFINITY {
            return 1.0;
        }
        let q = self.order.q(t / self.scale);
        (1.0 - q / self.q_mean).max(0.0)
    }
}

/// How `k` and θ are fitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GammaMethod {
    /// Mean and sample variance (ELKI, Kriegel et al.).
    Moments,
    /// The quartiles (robust to the upper quarter of the scores).
    Quantiles,
}

impl core::str::FromStr for GammaMethod {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "moments" => Ok(GammaMethod::Moments),
            "quantiles" => Ok(GammaMethod::Quantiles),
            other => Err(Error::invalid(
                "method",
                format!("expected 'moments' or 'quantiles', got {other:?}"),
            )),
        }
    }
}

impl GammaMethod {
    /// The name as in contract §10.
    pub fn name(self) -> &'static str {
        match self {
            GammaMethod::Moments => "moments",
            GammaMethod::Quantiles => "quantiles",
        }
    }
}

/// What to fit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GammaSpec {
    /// How `k` and θ are fitted.
    pub method: GammaMethod,
    /// A fixed offset, or `None`: `max(0, −min)` (shift the smallest score
    /// to 0 if it is negative; keep a natural zero otherwise).
    pub offset: Option<f64>,
    /// NaN handling.
    pub nan_policy: NanPolicy,
    /// Negate the scores first (`higher_is_outlier=False`).
    pub negate: bool,
}

/// A fitted gamma scaling and how it was obtained.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GammaFit {
    /// The fitted map.
    pub params: Gamma,
    /// The method that produced it: the quartile fit falls back to the
    /// moments when the quartiles determine no gamma (a zero IQR or
    /// median, or `k` outside `[1e-2, 1e10]`).
    pub method_used: GammaMethod,
}

/// Fits a gamma scaling to 1-D scores (contract §5 input rules).
pub fn fit_gamma<T: Float>(x: &[T], spec: &GammaSpec) -> Result<GammaFit, Error> {
    let sample = Sample::new(x, spec.nan_policy, spec.negate)?;
    let min = if spec.negate {
        -sample.summary.max
    } else {
        sample.summary.min
    };
    let offset = match spec.offset {
        Some(o) if o.is_finite() => o,
        Some(o) => return Err(Error::invalid("offset", format!("must be finite, got {o}"))),
        None => (-min).max(0.0),
    };
    if spec.method == GammaMethod::Quantiles {
        let q: Vec<f64> = quantiles(&sample, &[0.25, 0.5, 0.75])
            .iter()
            .map(|v| v + offset)
            .collect();
        if let Some((mean, scale)) = quartile_fit(q[0], q[1], q[2]) {
            return Ok(GammaFit {
                params: Gamma::new(offset, mean, scale),
                method_used: GammaMethod::Quantiles,
            });
        }
    }
    let m = shifted_mean(&sample, offset);
    // N = 1: no spread can be measured; the constant case.
    let v = std(&sample, 1).map_or(0.0, |sd| sd * sd);
    if v > 0.0 && m <= 0.0 {
        return Err(Error::invalid(
            "offset",
            format!(
                "the shifted scores have mean {m} <= 0 but a gamma has a positive mean; \
                 use a larger offset (or the automatic one)"
            ),
        ));
    }
    let scale = if v > 0.0 { v / m } else { 0.0 };
    Ok(GammaFit {
        params: Gamma::new(offset, m, scale),
        method_used: GammaMethod::Moments,
    })
}

/// The mean of the shifted scores `t = s + offset`: their exact sum plus
/// `N·offset`, exactly, then divided by N (`math.fsum` of the scores and N
/// copies of the offset, over N). Not the shifted mean `mean(s) + offset`:
/// rounded at the scores' magnitude, that loses a mean of t below an ulp of
/// the scores — [−204.9999999999999, −205 ×4] shifted by 205 has mean
/// 2.3e-14, the shifted mean 0, and the fit was refused as non-positive.
fn shifted_mean<T: Float>(sample: &Sample<'_, T>, offset: f64) -> f64 {
    // Σ(±s) + N·offset = ±(Σs ± N·offset): the sum of the raw scores.
    let n = sample.len();
    let total = sum_plus(sample.x, &sample.summary, sample.orient(offset), n);
    sample.orient(total.mean(n))
}

/// Shape range of the quartile fit.
const K_MIN: f64 = 1e-2;
const K_MAX: f64 = 1e10;

/// `(mean, scale)` of the gamma with these quartiles, if one exists with
/// `k` in `[K_MIN, K_MAX]`.
fn quartile_fit(q25: f64, q50: f64, q75: f64) -> Option<(f64, f64)> {
    if !(q50 > 0.0 && q25 >= 0.0 && q75 > q25) {
        return None;
    }
    let target = (q75 - q25) / q50;
    let ratio = |k: f64| {
        let m = gamma_quantile(k, 0.5);
        (gamma_quantile(k, 0.75) - gamma_quantile(k, 0.25)) / m
    };
    // r(k) decreases: bisection on ln k.
    let (mut lo, mut hi) = (K_MIN.ln(), K_MAX.ln());
    if !(ratio(K_MIN) >= target && target >= ratio(K_MAX)) {
        return None;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if ratio(mid.exp()) > target {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 4.0 * f64::EPSILON * hi.abs().max(1.0) {
            break;
        }
    }
    let k = (0.5 * (lo + hi)).exp();
    let scale = q50 / gamma_quantile(k, 0.5);
    let mean = k * scale;
    (mean.is_finite() && scale.is_finite() && scale > 0.0).then_some((mean, scale))
}

/// The `p`-quantile of Γ(k, 1), `0 < p < 1`: Newton on `ln x` for
/// `P(k, x) = p` (the derivative `x·∂P/∂x = xᵏe⁻ˣ/Γ(k)`), kept inside a
/// shrinking bracket and bisecting when a step leaves it.
pub fn gamma_quantile(k: f64, p: f64) -> f64 {
    let (mut lo, mut hi) = (-745.0f64, (k + 50.0 * k.sqrt() + 50.0).ln());
    let mut t = k.ln().clamp(lo, hi);
    for _ in 0..300 {
        let x = t.exp();
        let (pk, _) = gamma_pq(k, x);
        let f = pk - p;
        if f == 0.0 {
            return x;
        }
        if f < 0.0 {
            lo = t;
        } else {
            hi = t;
        }
        let density = prefactor(k, x);
        let mut next = t - f / density;
        if !(next > lo && next < hi) {
            next = 0.5 * (lo + hi);
        }
        // A step in ln x is the relative change of x.
        if (next - t).abs() <= 4.0 * f64::EPSILON || hi - lo <= 4.0 * f64::EPSILON {
            return next.exp();
        }
        t = next;
    }
    t.exp()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transformations::scaling::transform;
    use proptest::prelude::*;

    fn spec(method: GammaMethod) -> GammaSpec {
        GammaSpec {
            method,
            offset: None,
            nan_policy: NanPolicy::Omit,
            negate: false,
        }
    }

    #[test]
    fn moments_match_elki() {
        // m = 2.5, v = 5/3: k = 3.75, θ = 2/3.
        let f = fit_gamma(&[1.0, 2.0, 3.0, 4.0], &spec(GammaMethod::Moments)).unwrap();
        assert_eq!(f.params.offset, 0.0);
        assert!((f.params.mean - 2.5).abs() < 1e-15);
        assert!((f.params.scale - 2.0 / 3.0).abs() < 1e-15);
        assert!((f.params.shape() - 3.75).abs() < 1e-14);
        assert_eq!(f.params.probability(2.5), 0.0);
        assert_eq!(f.params.probability(f64::INFINITY), 1.0);
        assert!(f.params.probability(f64::NAN).is_nan());
    }

    #[test]
    fn quantile_fit_recovers_exact_quartiles() {
        let (k, theta) = (2.5, 3.0);
        let q: Vec<f64> = [0.25, 0.5, 0.75]
            .iter()
            .map(|&p| theta * gamma_quantile(k, p))
            .collect();
        let (mean, scale) = quartile_fit(q[0], q[1], q[2]).unwrap();
        assert!((scale - theta).abs() < 1e-9 * theta, "{scale}");
        assert!((mean - k * theta).abs() < 1e-9 * k * theta, "{mean}");
        assert!(quartile_fit(1.0, 1.0, 1.0).is_none());
        assert!(quartile_fit(0.0, 0.0, 1.0).is_none());
    }

    #[test]
    fn quantiles_invert_p() {
        for &k in &[0.02, 0.5, 1.0, 3.0, 80.0, 1e4, 1e9] {
            for &p in &[0.25, 0.5, 0.75] {
                let x = gamma_quantile(k, p);
                // One ulp of x moves P by x ∂P/∂x · 2⁻⁵².
                let tol = 1e-13 * prefactor(k, x).max(1.0);
                assert!(
                    (crate::numeric::gamma::gamma_p(k, x) - p).abs() < tol,
                    "{k} {p}"
                );
            }
        }
    }

    #[test]
    fn degenerate_inputs() {
        // Constant: θ = 0, the step at the mean.
        let f = fit_gamma(&[2.0; 5], &spec(GammaMethod::Quantiles)).unwrap();
        assert_eq!(f.method_used, GammaMethod::Moments);
        assert_eq!((f.params.mean, f.params.scale), (2.0, 0.0));
        assert_eq!(
            [f.params.probability(2.0), f.params.probability(2.1)],
            [0.0, 1.0]
        );
        // Negative scores: shifted so that the minimum is 0.
        let f = fit_gamma(&[-3.0, -1.0, 0.0, 2.0], &spec(GammaMethod::Moments)).unwrap();
        assert_eq!(f.params.offset, 3.0);
        // The mean of the shifted scores, not the shifted mean: this one
        // rounds to 0 at the scores' magnitude (an ulp of 205 is 2.8e-14).
        let near = [-204.999_999_999_999_9, -205.0, -205.0, -205.0, -205.0];
        for negate in [false, true] {
            let x: Vec<f64> = near.iter().map(|v| if negate { -v } else { *v }).collect();
            let mut s = spec(GammaMethod::Moments);
            s.negate = negate;
            let f = fit_gamma(&x, &s).unwrap();
            assert_eq!(f.params.offset, 205.0);
            // Σt = 205 − 204.9999999999999 = 1.1368683772161603e-13 exactly.
            assert_eq!(f.params.mean, 1.136_868_377_216_160_3e-13 / 5.0);
        }
        // A fixed offset that leaves a non-positive mean is refused.
        let mut s = spec(GammaMethod::Moments);
        s.offset = Some(-10.0);
        assert!(fit_gamma(&[1.0, 2.0], &s).is_err());
        assert!(Gamma::new(0.0, -1.0, 1.0).check().is_err());
    }

    proptest! {
        #[test]
        fn probabilities_are_monotone_and_bounded(
            x in proptest::collection::vec(0.0f64..1e3, 2..80),
            robust in any::<bool>(),
        ) {
            let method = if robust { GammaMethod::Quantiles } else { GammaMethod::Moments };
            let fit = fit_gamma(&x, &spec(method)).unwrap();
            let mut sorted = x.clone();
            sorted.sort_by(f64::total_cmp);
            let mut p = vec![0.0; sorted.len()];
            transform(&sorted, &mut p, &[fit.params], false).unwrap();
            prop_assert!(p.iter().all(|v| (0.0..=1.0).contains(v)));
            prop_assert!(p.windows(2).all(|w| w[0] <= w[1]));
        }
    }
}
