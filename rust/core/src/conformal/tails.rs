//! Conformal p-values with a fitted tail (contract §11, "Tails beyond the
//! calibration set").
//!
//! A conformal p-value never falls below `1/(n + 1)`, so Benjamini–Hochberg
//! on a small calibration set can select nothing however extreme a score
//! is. Above a high calibration quantile `u` the p-value here comes from a
//! fitted tail instead:
//!
//! `p(s) = p_u · G(s)` for `s > u`, with `p_u = (1 + m)/(n + 1)`,
//! `m = #{sᵢ > u}` and `G` the fitted survival of the scores beyond `u`
//! given that they exceed it; below and at `u` the conformal p-value is
//! unchanged. `p` is continuous at `u` (the conformal p-value just above
//! `u` is `p_u`) and non-increasing.
//!
//! Tails:
//! * `Gpd` — a generalised Pareto distribution fitted by maximum likelihood
//!   to the exceedances `sᵢ − u` (peaks over threshold, Pickands 1975;
//!   the profile likelihood in `θ = ξ/σ` of Grimshaw, Technometrics 1993,
//!   maximised on a grid and refined by golden section) with `ξ ≥ 0`: a
//!   fitted `ξ < 0` has a finite endpoint and would give every score
//!   beyond it the p-value 0, so the exponential tail (ξ = 0) is the
//!   lightest one used;
//! * `Gaussian` — the median/nMAD Gaussian of all calibration scores
//!   (contract §2), `G(s) = S(s)/S(u)`;
//! * `Gamma` — the robust (quartile) gamma fit of contract §10 on all
//!   calibration scores, `G(s) = S(s)/S(u)`.
//!
//! The check: the fitted conditional distribution is compared with the
//! empirical one of the `m` exceedances; the fit is rejected, and the
//! conformal p-value kept everywhere, when their Kolmogorov distance
//! exceeds the DKWM bound `√(ln(2/δ)/(2m))` (Massart 1990), or when there
//! are too few exceedances to fit. Trade-offs: for every `α ≥ p_u` the
//! event `p ≤ α` is the conformal one (a tail score has `p ≤ p_u`), so
//! validity at those levels is exact; below `p_u` validity rests on the
//! tail model — the check rejects gross misfits only (with parameters
//! estimated from the same exceedances the DKWM bound is conservative).

use super::pvalues::PValues;
use crate::error::{named_enum, Error};
use crate::estimators::location::median;
use crate::estimators::scale::nmad_about_median;
use crate::numeric::array_map::ArrayMap;
use crate::numeric::erf::normal_sf;
use crate::numeric::float::Float;
use crate::numeric::gamma::{Order, LANES};
use crate::numeric::par::{zip_chunks_of, CHUNK};
use crate::numeric::search_index::GROUP;
use crate::sample::{NanPolicy, Sample};
use crate::transformations::gamma::{fit_gamma, GammaMethod, GammaSpec};

/// Fewest exceedances a generalised Pareto fit is made from.
pub const MIN_GPD_EXCEEDANCES: usize = 10;

/// Which tail is fitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TailKind {
    /// Generalised Pareto on the exceedances.
    Gpd,
    /// Median/nMAD Gaussian of the calibration scores.
    Gaussian,
    /// Robust (quartile) gamma of the calibration scores.
    Gamma,
}

named_enum!(
    TailKind,
    "tail",
    "expected 'gpd', 'gaussian' or 'gamma'",
    "gpd" => Gpd,
    "gaussian" => Gaussian,
    "gamma" => Gamma,
);

/// The fitted model: `survival(q)` of an oriented score `q`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Model {
    /// Exceedances `q − u` ~ GPD(ξ, σ).
    Gpd { shape: f64, scale: f64 },
    /// N(center, scale²): `S = erfc(z/√2)/2` ([`normal_sf`]).
    Gaussian { center: f64, scale: f64 },
    /// Γ(k, θ) of `q + offset` (`order` holds k and its constants).
    Gamma {
        offset: f64,
        order: Order,
        scale: f64,
    },
}

impl Model {
    /// Survival of `q` under the model (for `Gpd`, of the exceedance `q − u`).
    fn survival(&self, q: f64, u: f64) -> f64 {
        match *self {
            Model::Gpd { shape, scale } => gpd_sf((q - u).max(0.0), shape, scale),
            Model::Gaussian { center, scale } => normal_sf((q - center) / scale),
            Model::Gamma {
                offset,
                order,
                scale,
            } => {
                let t = q + offset;
                if t <= 0.0 {
                    1.0
                } else {
                    order.q(t / scale)
                }
            }
        }
    }

    /// [`Model::survival`] of each of `qs` into `out`: the gamma's
    /// incomplete gammas in lanes ([`Order::q_lanes`], equal to one at a
    /// time).
    fn survivals(&self, qs: &[f64], u: f64, out: &mut [f64]) {
        let Model::Gamma {
            offset,
            order,
            scale,
        } = *self
        else {
            for (&q, o) in qs.iter().zip(out.iter_mut()) {
                *o = self.survival(q, u);
            }
            return;
        };
        let mut x = [0.0f64; LANES];
        for (qs, out) in qs.chunks(LANES).zip(out.chunks_mut(LANES)) {
            // As survival: t ≤ 0 has survival 1, which Q(k, 0) is too.
            for (xi, &q) in x.iter_mut().zip(qs) {
                let t = q + offset;
                *xi = if t <= 0.0 { 0.0 } else { t / scale };
            }
            order.q_lanes(&x[..qs.len()], out);
            for (o, &q) in out.iter_mut().zip(qs) {
                if q + offset <= 0.0 {
                    *o = 1.0;
                }
            }
        }
    }

    fn params(&self) -> [f64; 3] {
        match *self {
            Model::Gpd { shape, scale } => [shape, scale, 0.0],
            Model::Gaussian { center, scale, .. } => [center, scale, 0.0],
            Model::Gamma {
                offset,
                order,
                scale,
            } => [order.a(), scale, offset],
        }
    }
}

/// `P(Y > y)` of GPD(ξ, σ), `y ≥ 0`: `(1 + ξy/σ)^(−1/ξ)`, `exp(−y/σ)` at ξ = 0,
/// 0 beyond the endpoint `σ/|ξ|` when ξ < 0.
pub fn gpd_sf(y: f64, shape: f64, scale: f64) -> f64 {
    let t = shape * y / scale;
    if shape.abs() < 1e-12 {
        return (-y / scale).exp();
    }
    if t <= -1.0 {
        return 0.0;
    }
    (-t.ln_1p() / shape).exp()
}

/// The profile log-likelihood of the GPD at `θ = ξ/σ` and the `(ξ, σ)`
/// that attain it; `None` outside `θ > −1/max y` or below ξ = −1.
fn profile(y: &[f64], mean: f64, theta: f64, y_max: f64) -> Option<(f64, f64, f64)> {
    let m = y.len() as f64;
    if (theta * y_max).abs() < 1e-10 {
        // The exponential limit θ → 0: ξ = 0, σ = mean.
        return Some((-m * (mean.ln() + 1.0), 0.0, mean));
    }
    if theta * y_max <= -1.0 {
        return None;
    }
    let k = y.iter().map(|&v| (theta * v).ln_1p()).sum::<f64>() / m;
    let scale = k / theta;
    if !(k >= -1.0 && scale > 0.0 && scale.is_finite()) {
        return None;
    }
    Some((-m * scale.ln() - m * (k + 1.0), k, scale))
}

/// Maximum-likelihood GPD `(ξ, σ)` of positive exceedances `y` with
/// `ξ ≥ 0`: the profile likelihood on a grid of `r = θ·max y` (0 and
/// log-spaced up to 10⁷), refined by golden section around the best grid
/// point.
pub fn fit_gpd(y: &[f64]) -> Option<(f64, f64)> {
    if y.is_empty() || y.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let y_max = y.iter().copied().fold(0.0, f64::max);
    let mean = y.iter().sum::<f64>() / y.len() as f64;
    let mut grid = vec![0.0];
    grid.extend((0..=110).map(|i| 10f64.powf(-4.0 + f64::from(i) / 10.0)));
    let eval = |r: f64| profile(y, mean, r / y_max, y_max).map_or(f64::NEG_INFINITY, |p| p.0);
    let values: Vec<f64> = grid.iter().map(|&r| eval(r)).collect();
    let best = (0..grid.len()).max_by(|&a, &b| values[a].total_cmp(&values[b]))?;
    if !values[best].is_finite() {
        return None;
    }
    let (mut lo, mut hi) = (
        grid[best.saturating_sub(1)],
        grid[(best + 1).min(grid.len() - 1)],
    );
    let g = 0.5 * (5f64.sqrt() - 1.0);
    let (mut a, mut b) = (hi - g * (hi - lo), lo + g * (hi - lo));
    let (mut fa, mut fb) = (eval(a), eval(b));
    for _ in 0..100 {
        if fa >= fb {
            hi = b;
            b = a;
            fb = fa;
            a = hi - g * (hi - lo);
            fa = eval(a);
        } else {
            lo = a;
            a = b;
            fa = fb;
            b = lo + g * (hi - lo);
            fb = eval(b);
        }
        if (hi - lo).abs() <= 1e-12 * hi.abs().max(lo.abs()).max(1e-300) {
            break;
        }
    }
    let candidates = [grid[best], a, b];
    let r = candidates
        .into_iter()
        .max_by(|&p, &q| eval(p).total_cmp(&eval(q)))?;
    profile(y, mean, r / y_max, y_max).map(|(_, k, s)| (k, s))
}

/// What to fit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TailSpec {
    /// The tail's family.
    pub kind: TailKind,
    /// `q` in (0, 1): the threshold `u` is the ⌈q·n⌉-th smallest score.
    pub quantile: f64,
    /// δ of the DKWM check, in (0, 1).
    pub delta: f64,
}

impl TailSpec {
    /// `quantile` and `delta` in (0, 1).
    pub fn check(&self) -> Result<(), Error> {
        if !(self.quantile > 0.0 && self.quantile < 1.0) {
            return Err(Error::invalid(
                "tail_quantile",
                format!("must be in (0, 1), got {}", self.quantile),
            ));
        }
        if !(self.delta > 0.0 && self.delta < 1.0) {
            return Err(Error::invalid(
                "delta",
                format!("must be in (0, 1), got {}", self.delta),
            ));
        }
        Ok(())
    }
}

/// A fitted (or rejected) tail of sorted, oriented calibration scores.
#[derive(Debug, Clone, PartialEq)]
pub struct TailFit {
    /// The family asked for.
    pub kind: TailKind,
    /// The threshold `u` (oriented).
    pub threshold: f64,
    /// `p_u = (1 + m)/(n + 1)`: the p-value at which the tail takes over.
    pub threshold_pvalue: f64,
    /// `m`, the calibration scores above `u`.
    pub exceedances: u64,
    /// The Kolmogorov distance between the fitted and the empirical
    /// conditional distribution of the exceedances (NaN when not fitted).
    pub statistic: f64,
    /// The DKWM bound `√(ln(2/δ)/(2m))` it is compared with.
    pub bound: f64,
    /// Whether the tail is used; otherwise the p-values are conformal.
    pub accepted: bool,
    /// Why the tail was rejected ("" when accepted).
    pub reason: &'static str,
    model: Option<Model>,
    survival_at_threshold: f64,
}

impl TailFit {
    /// Fits the tail of `sorted` (ascending, finite, oriented scores).
    pub fn fit(sorted: &[f64], spec: &TailSpec) -> Result<Self, Error> {
        spec.check()?;
        let n = sorted.len();
        if n == 0 {
            return Err(Error::invalid(
                "calibration",
                "needs at least one calibration score",
            ));
        }
        if sorted.iter().any(|v| !v.is_finite()) || sorted.windows(2).any(|w| w[1] < w[0]) {
            return Err(Error::invalid(
                "calibration",
                "the tail is fitted to finite, ascending scores",
            ));
        }
        let j = ((spec.quantile * n as f64).ceil() as usize).clamp(1, n) - 1;
        let u = sorted[j];
        let above = sorted.partition_point(|&v| v <= u);
        let m = n - above;
        let mut fit = TailFit {
            kind: spec.kind,
            threshold: u,
            threshold_pvalue: (1 + m) as f64 / (n + 1) as f64,
            exceedances: m as u64,
            statistic: f64::NAN,
            bound: if m > 0 {
                ((2.0 / spec.delta).ln() / (2.0 * m as f64)).sqrt()
            } else {
                f64::INFINITY
            },
            accepted: false,
            reason: "",
            model: None,
            survival_at_threshold: 1.0,
        };
        let need = if spec.kind == TailKind::Gpd {
            MIN_GPD_EXCEEDANCES
        } else {
            1
        };
        if m < need {
            fit.reason = "too few calibration scores above the threshold";
            return Ok(fit);
        }
        let y: Vec<f64> = sorted[above..].iter().map(|&v| v - u).collect();
        let model = match spec.kind {
            TailKind::Gpd => fit_gpd(&y).map(|(shape, scale)| Model::Gpd { shape, scale }),
            TailKind::Gaussian => gaussian(sorted),
            TailKind::Gamma => gamma(sorted),
        };
        let Some(model) = model else {
            fit.reason = "the scores determine no such distribution";
            return Ok(fit);
        };
        let s_u = model.survival(u, u);
        if !(s_u > 0.0 && s_u.is_finite()) {
            fit.reason = "the fitted distribution puts no mass above the threshold";
            return Ok(fit);
        }
        fit.model = Some(model);
        fit.survival_at_threshold = s_u;
        let mut survival = vec![0.0; y.len()];
        let at: Vec<f64> = y.iter().map(|&v| u + v).collect();
        model.survivals(&at, u, &mut survival);
        fit.statistic = kolmogorov(&y, |i| 1.0 - (survival[i] / s_u).min(1.0));
        fit.accepted = fit.statistic <= fit.bound;
        if !fit.accepted {
            fit.reason = "rejected by the DKWM check";
        }
        Ok(fit)
    }

    /// The fitted parameters: GPD (ξ, σ, 0), Gaussian (center, scale, 0),
    /// gamma (k, θ, offset); NaN when nothing was fitted.
    pub fn params(&self) -> [f64; 3] {
        self.model.map_or([f64::NAN; 3], |m| m.params())
    }

    /// `G(q)`: the fitted survival beyond `u`, given an exceedance, of an
    /// oriented score `q > u`.
    pub fn conditional_survival(&self, q: f64) -> f64 {
        match self.model {
            Some(m) => (m.survival(q, self.threshold) / self.survival_at_threshold).min(1.0),
            None => f64::NAN,
        }
    }

    /// The p-value of an oriented score `q` whose conformal p-value is
    /// `conformal`.
    #[inline]
    pub fn pvalue(&self, q: f64, conformal: f64) -> f64 {
        if self.accepted && q > self.threshold {
            self.threshold_pvalue * self.conditional_survival(q)
        } else {
            conformal
        }
    }

    /// [`TailFit::pvalue`] of each oriented score of `q` (at most
    /// [`GROUP`]) whose conformal p-value is in `p`, in place: the fitted
    /// survivals of the tail scores computed together.
    fn pvalues_in_place(&self, q: &[f64], p: &mut [f64]) {
        let Some(model) = self.model.filter(|_| self.accepted) else {
            return;
        };
        let (mut at, mut tail, mut k) = ([0usize; GROUP], [0.0f64; GROUP], 0);
        for (i, &qi) in q.iter().enumerate() {
            if qi > self.threshold {
                (at[k], tail[k]) = (i, qi);
                k += 1;
            }
        }
        let mut survival = [0.0f64; GROUP];
        model.survivals(&tail[..k], self.threshold, &mut survival[..k]);
        for (&i, &s) in at[..k].iter().zip(&survival) {
            // As conditional_survival and pvalue.
            p[i] = self.threshold_pvalue * (s / self.survival_at_threshold).min(1.0);
        }
    }

    /// The tailed p-values of `base`'s map (`base.complement` false; the
    /// complement is taken here).
    pub fn pvalues<'a>(&'a self, base: PValues<'a>, complement: bool) -> TailedPValues<'a> {
        TailedPValues {
            base: PValues {
                complement: false,
                ..base
            },
            tail: self,
            complement,
        }
    }
}

/// A conformal p-value map with a fitted tail.
pub struct TailedPValues<'a> {
    base: PValues<'a>,
    tail: &'a TailFit,
    complement: bool,
}

impl TailedPValues<'_> {
    /// Maps every score of `src` into `dst` (same length): NaN stays NaN.
    pub fn map<T: Float>(&self, src: &[T], dst: &mut [T]) -> Result<(), Error> {
        self.base.map(src, dst)?;
        let negate = self.base.negate;
        // A fitted survival (an incomplete gamma for the Gaussian and gamma
        // tails) costs far more than the conformal lookup: chunks on the
        // pool, each score on its own, so the result is the same.
        zip_chunks_of(src, dst, CHUNK, |src, dst| {
            let (mut q, mut p) = ([0.0f64; GROUP], [0.0f64; GROUP]);
            for (s, d) in src.chunks(GROUP).zip(dst.chunks_mut(GROUP)) {
                let (q, p) = (&mut q[..s.len()], &mut p[..s.len()]);
                for (((qi, pi), s), d) in q.iter_mut().zip(p.iter_mut()).zip(s).zip(d.iter()) {
                    let v = s.to_f64();
                    *qi = if negate { -v } else { v };
                    *pi = d.to_f64();
                }
                self.tail.pvalues_in_place(q, p);
                for (d, &p) in d.iter_mut().zip(p.iter()) {
                    *d = T::from_f64(if self.complement { 1.0 - p } else { p });
                }
            }
        });
        Ok(())
    }
}

fn gaussian(sorted: &[f64]) -> Option<Model> {
    let sample = Sample::new(sorted, NanPolicy::Raise, false).ok()?;
    let center = median(&sample);
    let scale = nmad_about_median(&sample, center);
    (sorted.len() >= 2 && scale > 0.0 && scale.is_finite())
        .then_some(Model::Gaussian { center, scale })
}

fn gamma(sorted: &[f64]) -> Option<Model> {
    let spec = GammaSpec {
        method: GammaMethod::Quantiles,
        offset: None,
        nan_policy: NanPolicy::Raise,
        negate: false,
    };
    let fit = fit_gamma(sorted, &spec).ok()?;
    let p = fit.params;
    let shape = p.shape();
    (p.scale > 0.0 && shape.is_finite() && shape > 0.0).then_some(Model::Gamma {
        offset: p.offset,
        order: Order::new(shape),
        scale: p.scale,
    })
}

/// `sup |F̂ − F|` of sorted values `y` against the continuous CDF, `cdf(i)`
/// its value at `y[i]`.
fn kolmogorov(y: &[f64], cdf: impl Fn(usize) -> f64) -> f64 {
    let m = y.len() as f64;
    let mut d = 0.0f64;
    let mut i = 0;
    while i < y.len() {
        let v = y[i];
        let mut k = i;
        while k < y.len() && y[k] == v {
            k += 1;
        }
        let f = cdf(i);
        d = d
            .max((k as f64 / m - f).abs())
            .max((f - i as f64 / m).abs());
        i = k;
    }
    d
}

impl ArrayMap for TailedPValues<'_> {
    type Output = ();

    fn map<T: Float>(&self, src: &[T], dst: &mut [T]) -> Result<(), Error> {
        TailedPValues::map(self, src, dst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformal::pvalues::{Reference, TieBreak};
    use crate::numeric::gamma::gamma_pq;
    use proptest::prelude::*;

    /// Quantile function of GPD(ξ, σ): inverse-CDF draws.
    fn gpd_draws(n: usize, shape: f64, scale: f64, seed: u64) -> Vec<f64> {
        (0..n)
            .map(|j| {
                let u = crate::conformal::uniform(seed, j as u64).max(1e-300);
                if shape == 0.0 {
                    -scale * u.ln()
                } else {
                    scale * (u.powf(-shape) - 1.0) / shape
                }
            })
            .collect()
    }

    #[test]
    fn gpd_fit_recovers_the_parameters() {
        for &(shape, scale) in &[(0.0, 1.0), (0.3, 2.0), (1.0, 0.5)] {
            let y = gpd_draws(20_000, shape, scale, 3);
            let (xi, sigma) = fit_gpd(&y).unwrap();
            assert!((xi - shape).abs() < 0.05, "ξ {xi} vs {shape}");
            assert!((sigma / scale - 1.0).abs() < 0.06, "σ {sigma} vs {scale}");
        }
        // A light tail (ξ < 0) is fitted by the exponential: ξ = 0, σ = mean.
        let y = gpd_draws(20_000, -0.3, 1.0, 3);
        let (xi, sigma) = fit_gpd(&y).unwrap();
        assert_eq!(xi, 0.0);
        assert!((sigma - y.iter().sum::<f64>() / y.len() as f64).abs() < 1e-12);
    }

    #[test]
    fn gpd_survival_limits() {
        assert_eq!(gpd_sf(0.0, 0.4, 2.0), 1.0);
        assert!((gpd_sf(1.0, 0.0, 2.0) - (-0.5f64).exp()).abs() < 1e-15);
        assert_eq!(gpd_sf(3.0, -0.5, 1.0), 0.0);
        assert!((gpd_sf(1.0, 0.5, 1.0) - 1.5f64.powf(-2.0)).abs() < 1e-15);
    }

    #[test]
    fn normal_tail_is_accurate_far_out() {
        // 1 − Φ(10) = 7.619853024160527e-24 (Abramowitz & Stegun 26.2).
        let tail = |z: f64| {
            Model::Gaussian {
                center: 1.0,
                scale: 2.0,
            }
            .survival(1.0 + 2.0 * z, 0.0)
        };
        assert!((tail(10.0) / 7.619_853_024_160_527e-24 - 1.0).abs() < 1e-15);
        assert_eq!(tail(0.0), 0.5);
        assert!((tail(-1.0) - 0.841_344_746_068_542_9).abs() < 1e-15);
        // The incomplete gamma of order ½ agrees (Q(½, z²/2) = erfc(z/√2)).
        for z in [1.5, 3.0, 7.0, 25.0] {
            let q = 0.5 * gamma_pq(0.5, 0.5 * z * z).1;
            assert!((tail(z) / q - 1.0).abs() < 1e-13, "{z}");
        }
    }

    fn sorted_normal(n: usize, seed: u64) -> Vec<f64> {
        let mut v: Vec<f64> = (0..n)
            .map(|j| {
                let u1 = crate::conformal::uniform(seed, 2 * j as u64).max(1e-300);
                let u2 = crate::conformal::uniform(seed, 2 * j as u64 + 1);
                (-2.0 * u1.ln()).sqrt() * (2.0 * core::f64::consts::PI * u2).cos()
            })
            .collect();
        v.sort_by(f64::total_cmp);
        v
    }

    #[test]
    fn threshold_and_bulk_follow_the_definition() {
        let normal = sorted_normal(999, 1);
        // Exponential scores for the gamma tail (Γ(1, 1)).
        let mut exponential: Vec<f64> = (0..999)
            .map(|j| -crate::conformal::uniform(5, j).max(1e-300).ln())
            .collect();
        exponential.sort_by(f64::total_cmp);
        for kind in [TailKind::Gpd, TailKind::Gaussian, TailKind::Gamma] {
            let cal = if kind == TailKind::Gamma {
                &exponential
            } else {
                &normal
            };
            let spec = TailSpec {
                kind,
                quantile: 0.9,
                delta: 0.05,
            };
            let fit = TailFit::fit(cal, &spec).unwrap();
            assert_eq!(fit.threshold, cal[899]);
            assert_eq!(fit.exceedances, 99);
            assert_eq!(fit.threshold_pvalue, 100.0 / 1000.0);
            assert!(fit.accepted, "{kind:?}: {}", fit.reason);
            let base = PValues {
                reference: Reference::exact(cal),
                tie_break: TieBreak::Classical,
                adjustment: None,
                negate: false,
                complement: false,
            };
            let x: Vec<f64> = (0..80).map(|i| -4.0 + 0.15 * f64::from(i)).collect();
            let (mut plain, mut tailed) = (vec![0.0; x.len()], vec![0.0; x.len()]);
            base.map(&x, &mut plain).unwrap();
            fit.pvalues(base, false).map(&x, &mut tailed).unwrap();
            for i in 0..x.len() {
                if x[i] <= fit.threshold {
                    assert_eq!(tailed[i], plain[i]);
                } else {
                    assert!(tailed[i] <= fit.threshold_pvalue);
                }
                if i > 0 {
                    assert!(tailed[i] <= tailed[i - 1]);
                }
            }
            // Beyond every calibration score the tail goes below 1/(n + 1).
            assert!(tailed[79] < 1.0 / 1000.0);
        }
    }

    #[test]
    fn a_wrong_tail_is_rejected_and_falls_back() {
        // Uniform scores: a Gaussian fit misses their cut-off tail badly.
        let cal: Vec<f64> = (0..20_000).map(|i| f64::from(i) / 20_000.0).collect();
        let spec = TailSpec {
            kind: TailKind::Gaussian,
            quantile: 0.9,
            delta: 0.05,
        };
        let fit = TailFit::fit(&cal, &spec).unwrap();
        assert!(!fit.accepted);
        assert!(fit.statistic > fit.bound);
        assert_eq!(fit.pvalue(2.0, 0.3), 0.3);
    }

    #[test]
    fn too_few_exceedances_fall_back() {
        let cal: Vec<f64> = (0..50).map(f64::from).collect();
        let spec = TailSpec {
            kind: TailKind::Gpd,
            quantile: 0.9,
            delta: 0.05,
        };
        let fit = TailFit::fit(&cal, &spec).unwrap();
        assert_eq!(fit.exceedances, 5);
        assert!(!fit.accepted);
        assert!(fit.params()[0].is_nan());
    }

    #[test]
    fn bad_input_is_refused() {
        let spec = |q| TailSpec {
            kind: TailKind::Gpd,
            quantile: q,
            delta: 0.05,
        };
        assert!(TailFit::fit(&[1.0, 2.0], &spec(1.0)).is_err());
        assert!(TailFit::fit(&[1.0, 2.0], &spec(f64::NAN)).is_err());
        assert!(TailFit::fit(&[], &spec(0.9)).is_err());
        assert!(TailFit::fit(&[2.0, 1.0], &spec(0.9)).is_err());
        assert!(TailFit::fit(&[1.0, f64::INFINITY], &spec(0.9)).is_err());
        assert!("pareto".parse::<TailKind>().is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn tailed_pvalues_are_in_range_and_monotone(
            mut cal in proptest::collection::vec(-1e3f64..1e3, 1..200),
            q in 0.5f64..0.99,
            kind in 0usize..3,
        ) {
            cal.sort_by(f64::total_cmp);
            let kind = [TailKind::Gpd, TailKind::Gaussian, TailKind::Gamma][kind];
            let fit = TailFit::fit(&cal, &TailSpec { kind, quantile: q, delta: 0.05 }).unwrap();
            let base = PValues {
                reference: Reference::exact(&cal),
                tie_break: TieBreak::Classical,
                adjustment: None,
                negate: false,
                complement: false,
            };
            let mut x: Vec<f64> = (0..64).map(|i| -1.1e3 + 40.0 * f64::from(i)).collect();
            x.push(f64::NAN);
            let mut p = vec![0.0; x.len()];
            fit.pvalues(base, false).map(&x, &mut p).unwrap();
            prop_assert!(p[64].is_nan());
            for i in 0..64 {
                prop_assert!((0.0..=1.0).contains(&p[i]));
                if i > 0 {
                    prop_assert!(p[i] <= p[i - 1]);
                }
            }
        }
    }
}
