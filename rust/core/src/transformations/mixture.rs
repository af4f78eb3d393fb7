//! Mixture-model scaling (Gao & Tan, ICDM 2006; ELKI
//! `MixtureModelOutlierScaling`), contract §10: inliers exponential
//! `λe^{−λu}`, outliers Gaussian `N(μ, σ²)`, outlier weight α, fitted by EM
//! on `u = s / scale` (scale: the mean of the non-negative fitted scores; the
//! model is scale-equivariant, so this is the same model at every score
//! magnitude), and `p` = the posterior of the outlier component.
//!
//! Numerically, every EM quantity is formed so that its rounding stays far
//! below the convergence tolerance, or the stopping rule would be decided
//! by rounding: the inlier posteriors `1 − t` come from the log ratio
//! rather than as one minus `t` (α → 1), σ is a second pass about the new
//! μ rather than a shifted one-pass sum (σ ≪ |Δμ|), and μ's change is
//! measured against `max(σ, |μ|)` (at the σ floor, `tol·σ` is below an ulp
//! of μ). The cost is a buffer of two posteriors per score and a second
//! pass of multiply-adds per iteration, beside the exp/ln of the E-step.

use crate::error::Error;
use crate::numeric::float::Float;
use crate::numeric::par::{map_chunks, zip_chunks_of, CHUNK};
use crate::numeric::reduce::mean_of;
use crate::numeric::sum::Neumaier;
use crate::sample::{NanPolicy, Sample};
use crate::transformations::scaling::Scaling;
use crate::transformations::sigmoid::logistic;

/// Smallest σ, in units of the mean score: a Gaussian that collapses onto a
/// tie group has unbounded likelihood, and σ below the scores' relative
/// precision means nothing (ELKI floors at the smallest normal float).
pub const SIGMA_MIN: f64 = 1e-8;

/// ½·ln(2π).
const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

/// Fitted mixture model, in units of `scale`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mixture {
    /// The unit: mean of the fitted scores (0 for all-zero scores).
    pub scale: f64,
    /// Weight of the outlier (Gaussian) component, in [0, 1].
    pub alpha: f64,
    /// Gaussian mean (units of `scale`).
    pub mu: f64,
    /// Gaussian standard deviation (units of `scale`).
    pub sigma: f64,
    /// Exponential rate (per unit of `scale`).
    pub lambda: f64,
}

impl Mixture {
    /// The part of `log(inlier density) − log(outlier density)` that does
    /// not depend on the score: `ln(1 − α) + ln λ − ln α + ln σ + ½ln 2π`.
    #[inline]
    fn log_constant(&self) -> f64 {
        (1.0 - self.alpha).ln() + self.lambda.ln() - self.alpha.ln() + self.sigma.ln() + HALF_LN_2PI
    }

    /// The posterior of the outlier component at the unit-free score `u`,
    /// given [`Self::log_constant`].
    #[inline]
    fn posterior_with(&self, u: f64, constant: f64) -> f64 {
        if u.is_nan() {
            return u;
        }
        if self.alpha <= 0.0 {
            return 0.0;
        }
        if self.alpha >= 1.0 {
            return 1.0;
        }
        if u.is_infinite() {
            return 0.0; // both tails: the exponential's is the heavier one
        }
        let w = (u - self.mu) / self.sigma;
        logistic(-(constant - self.lambda * u + 0.5 * w * w))
    }

    /// The outlier and inlier posteriors `(t, 1 − t)` at a finite unit-free
    /// score `u` of the fit (0 < α < 1), each from the log ratio, so that
    /// either keeps its relative accuracy where the other is close to 1.
    #[inline]
    fn posteriors(&self, u: f64, constant: f64) -> (f64, f64) {
        let w = (u - self.mu) / self.sigma;
        let log_ratio = constant - self.lambda * u + 0.5 * w * w;
        (logistic(-log_ratio), logistic(log_ratio))
    }

    /// The posterior of the outlier component at the unit-free score `u`.
    #[inline]
    fn posterior(&self, u: f64) -> f64 {
        self.posterior_with(u, self.log_constant())
    }
}

impl Scaling for Mixture {
    fn check(&self) -> Result<(), Error> {
        let finite = [self.scale, self.alpha, self.mu, self.sigma, self.lambda]
            .iter()
            .all(|v| v.is_finite());
        let ok = finite
            && self.scale >= 0.0
            && (0.0..=1.0).contains(&self.alpha)
            && self.lambda >= 0.0
            && self.sigma >= 0.0
            && (self.alpha == 0.0 || (self.scale > 0.0 && self.sigma > 0.0 && self.lambda > 0.0));
        if ok {
            Ok(())
        } else {
            Err(Error::invalid(
                "scale/alpha/mu/sigma/lambda",
                format!("need finite values, 0 <= alpha <= 1, positive scale, sigma, lambda when alpha > 0; got {self:?}"),
            ))
        }
    }

    /// The score-independent logarithms once per column.
    fn transform_column<T: Float>(&self, src: &[T], dst: &mut [T], negate: bool) {
        let sign = if negate { -1.0 } else { 1.0 };
        let constant = self.log_constant();
        for (d, &s) in dst.iter_mut().zip(src) {
            let s = sign * s.to_f64();
            let u = if s.is_nan() || self.alpha <= 0.0 {
                s
            } else {
                s / self.scale
            };
            *d = T::from_f64(self.posterior_with(u, constant));
        }
    }

    /// NaN stays NaN; ±inf → 0 (the limit of the posterior) unless α = 1.
    #[inline]
    fn probability(&self, s: f64) -> f64 {
        if s.is_nan() || self.alpha <= 0.0 {
            return self.posterior(s);
        }
        self.posterior(s / self.scale)
    }
}

/// The fit and its EM diagnostics.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MixtureFit {
    /// The fitted model.
    pub params: Mixture,
    /// EM iterations run.
    pub n_iter: usize,
    /// The relative changes fell below `tol` within `maxiter`.
    pub converged: bool,
    /// EM stopped at a degenerate state (a component lost all its weight);
    /// the last regular parameters are kept.
    pub degenerate: bool,
}

/// Compensated total, in chunk order, of per-chunk plain sums (non-negative
/// terms within a chunk of 2¹⁶: relative error ≤ 2¹⁶·u; thread-count
/// independent).
fn total<const K: usize>(parts: Vec<[f64; K]>) -> [f64; K] {
    let mut total = [Neumaier::default(); K];
    for part in parts {
        for (t, p) in total.iter_mut().zip(part) {
            t.add(p);
        }
    }
    total.map(Neumaier::value)
}

/// The E-step: stores the outlier and inlier posteriors `(t, t̄)` of each
/// score in `post` and returns Σ t, Σ t·u, Σ t̄, Σ t̄·u. t̄ = 1 − t is
/// computed from the log ratio as such: where α → 1, t rounds to 1, and
/// `n − Σt` or `Σ(1 − t)` would keep only the rounding of t (a relative
/// error u/(1 − α) in λ, which then decided the convergence test).
fn e_step(u: &[f64], m: &Mixture, post: &mut [[f64; 2]]) -> [f64; 4] {
    let constant = m.log_constant();
    zip_chunks_of(u, post, CHUNK, |uc, pc| {
        for (p, &ui) in pc.iter_mut().zip(uc) {
            let (t, t_in) = m.posteriors(ui, constant);
            *p = [t, t_in];
        }
    });
    let post = &*post;
    total(map_chunks(u, |offset, c| {
        let mut acc = [0.0f64; 4];
        for (&ui, &[t, t_in]) in c.iter().zip(&post[offset..offset + c.len()]) {
            acc[0] += t;
            acc[1] += t * ui;
            acc[2] += t_in;
            acc[3] += t_in * ui;
        }
        acc
    }))
}

/// Σ t·(u − μ)² about the new μ: a second pass, because the one-pass form
/// Σ t·(u − μ_old)² − Σt·(μ − μ_old)² cancels when the Gaussian is narrow
/// (σ ≪ |μ − μ_old|: σ² of 1e-16 next to a shift² of 0.5 is rounding noise).
fn spread(u: &[f64], post: &[[f64; 2]], mu: f64) -> f64 {
    let [s] = total(map_chunks(u, |offset, c| {
        let mut acc = 0.0f64;
        for (&ui, &[t, _]) in c.iter().zip(&post[offset..offset + c.len()]) {
            acc += t * (ui - mu) * (ui - mu);
        }
        [acc]
    }));
    s
}

/// Fits the mixture by EM: ELKI's start (μ = 2·mean, σ = sample standard
/// deviation, λ = 1/μ, α = 0.05), at most `maxiter` iterations, stopping when
/// `|Δμ| ≤ tol·max(σ, |μ|)`, `|Δσ| ≤ tol·σ`, `|Δλ| ≤ tol·λ` and
/// `|Δα| ≤ tol`. Scores must be
/// non-negative (the exponential's support).
#[allow(clippy::cast_precision_loss, clippy::similar_names)]
pub fn fit_mixture<T: Float>(
    x: &[T],
    nan_policy: NanPolicy,
    negate: bool,
    maxiter: usize,
    tol: f64,
) -> Result<MixtureFit, Error> {
    if maxiter == 0 {
        return Err(Error::invalid("maxiter", "must be at least 1"));
    }
    if !(tol.is_finite() && tol > 0.0) {
        return Err(Error::invalid(
            "tol",
            format!("must be positive, got {tol}"),
        ));
    }
    let s = Sample::new(x, nan_policy, negate)?;
    let lowest = if negate {
        -s.summary.max
    } else {
        s.summary.min
    };
    if lowest < 0.0 {
        return Err(Error::invalid(
            "scores",
            format!(
                "Negative values in data: the mixture model needs non-negative scores \
                 (exponential inliers), got {lowest}; shift them first, e.g. scores - scores.min()"
            ),
        ));
    }
    let mean = s.orient(mean_of(x, &s.summary));
    let (lo, hi) = if negate {
        (-s.summary.max, -s.summary.min)
    } else {
        (s.summary.min, s.summary.max)
    };
    let n = s.len();
    if lo == hi || n < 2 {
        let params = Mixture {
            scale: mean,
            alpha: 0.0,
            mu: 1.0,
            sigma: 0.0,
            lambda: 1.0,
        };
        return Ok(MixtureFit {
            params,
            n_iter: 0,
            converged: true,
            degenerate: true,
        });
    }
    let u: Vec<f64> = s.to_vec().into_iter().map(|v| v.to_f64() / mean).collect();
    let mut sq = Neumaier::default();
    for &ui in &u {
        sq.add((ui - 1.0) * (ui - 1.0));
    }
    let sd = (sq.value() / (n as f64 - 1.0)).sqrt();
    let m = Mixture {
        scale: mean,
        alpha: 0.05,
        mu: 2.0,
        sigma: sd.max(SIGMA_MIN),
        lambda: 0.5,
    };
    Ok(em(&u, m, maxiter, tol))
}

/// The EM iterations from `m` (see [`fit_mixture`]).
#[allow(clippy::cast_precision_loss)]
fn em(u: &[f64], mut m: Mixture, maxiter: usize, tol: f64) -> MixtureFit {
    let n = u.len();
    let mean = m.scale;
    let (mut n_iter, mut converged, mut degenerate) = (0, false, false);
    let mut post = vec![[0.0f64; 2]; n];
    while n_iter < maxiter {
        let [t, tu, t_in, iu] = e_step(u, &m, &mut post);
        n_iter += 1;
        if !(t > 0.0 && tu > 0.0) {
            degenerate = true;
            break;
        }
        // No inlier weight left (t̄ underflows everywhere): λ = 0/0.
        let lambda = (t_in / iu).min(f64::MAX);
        if lambda.is_nan() || lambda <= 0.0 {
            degenerate = true;
            break;
        }
        let mu = tu / t;
        let sigma = (spread(u, &post, mu) / t).sqrt().max(SIGMA_MIN);
        // Σt/n, from the smaller of the two posterior sums: above ½ as
        // 1 − Σt̄/n, so that 1 − α, which sets p near 1, keeps its relative
        // accuracy (Σt would carry the rounding of every t near 1).
        let alpha = if t <= t_in {
            t / n as f64
        } else {
            1.0 - t_in / n as f64
        }
        .min(1.0);
        // μ is resolved to a few ulps only: below SIGMA_MIN·|μ| a test
        // against tol·σ alone (1e-16 at the floor) would be decided by the
        // rounding of μ. Its change is measured against the larger of the
        // Gaussian's width and its own magnitude.
        let done = (mu - m.mu).abs() <= tol * sigma.max(mu.abs())
            && (sigma - m.sigma).abs() <= tol * sigma
            && (lambda - m.lambda).abs() <= tol * lambda
            && (alpha - m.alpha).abs() <= tol;
        m = Mixture {
            scale: mean,
            alpha,
            mu,
            sigma,
            lambda,
        };
        if done {
            converged = true;
            break;
        }
    }
    MixtureFit {
        params: m,
        n_iter,
        converged,
        degenerate,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data() -> Vec<f64> {
        // Exponential-like inliers, a Gaussian clump of outliers near 8.
        let mut x: Vec<f64> = (1..=400)
            .map(|i| -(1.0 - f64::from(i) / 401.0).ln())
            .collect();
        x.extend((0..40).map(|i| 8.0 + 0.025 * f64::from(i)));
        x
    }

    #[test]
    fn finds_the_outlier_clump_at_every_magnitude() {
        let x = data();
        let f = fit_mixture(&x, NanPolicy::Omit, false, 100, 1e-8).unwrap();
        assert!(f.params.check().is_ok());
        assert!(f.params.probability(8.5) > 0.9, "{f:?}");
        assert!(f.params.probability(0.5) < 0.01, "{f:?}");
        for c in [1e-300, 1e300] {
            let y: Vec<f64> = x.iter().map(|v| v * c).collect();
            let g = fit_mixture(&y, NanPolicy::Omit, false, 100, 1e-8).unwrap();
            for &v in &[0.5, 3.0, 8.5] {
                assert!((g.params.probability(v * c) - f.params.probability(v)).abs() < 1e-9);
            }
        }
        assert!(f.params.probability(f64::NAN).is_nan());
        assert_eq!(f.params.probability(f64::INFINITY), 0.0);
    }

    #[test]
    fn inlier_posteriors_keep_their_relative_accuracy_as_alpha_tends_to_one() {
        let m = Mixture {
            scale: 1.0,
            alpha: 1.0 - 1e-12,
            mu: 1.0,
            sigma: 0.25,
            lambda: 1.25,
        };
        let c = m.log_constant();
        for u in [0.5, 1.0, 1.6] {
            let (t, t_in) = m.posteriors(u, c);
            // t̄/t = (1 − α)λe^{−λu} / (αφ(u)), written out.
            let w = (u - m.mu) / m.sigma;
            let phi = (-0.5 * w * w).exp() / (m.sigma * (2.0 * core::f64::consts::PI).sqrt());
            let odds = (1.0 - m.alpha) * m.lambda * (-m.lambda * u).exp() / (m.alpha * phi);
            assert!((t_in / t / odds - 1.0).abs() < 1e-13, "{u}: {t_in} {odds}");
        }
    }

    #[test]
    fn the_em_stops_where_alpha_tends_to_one_or_sigma_at_its_floor() {
        // α → 1: 1 − α ≈ 1e-9 at the stop; every 1 − t once rounded to 0.
        for x in [
            &[4.0, 6.61, 3.37, 5.98, 5.16][..],
            &[
                4.587_493_26,
                5.953_757_85,
                4.199_761_15,
                4.618_055_1,
                2.482_446_55,
                5.174_225_59,
                3.944_610_14,
                3.445_201_42,
                5.627_029_15,
                6.266_566_32,
            ],
        ] {
            let f = fit_mixture(x, NanPolicy::Omit, false, 100, 1e-8).unwrap();
            assert!(
                f.converged && !f.degenerate && f.params.check().is_ok(),
                "{f:?}"
            );
            assert!(f.params.alpha > 1.0 - 1e-7 && f.params.alpha < 1.0, "{f:?}");
        }
        // σ collapses onto one score at the floor 1e-8 by the second
        // iteration; from then on μ changes by at most its rounding, and
        // the third iteration stops (tol·σ alone is below an ulp of μ).
        let x = [11.732, 9.412, 10.813, 11.054, 10.548, 10.152];
        let f = fit_mixture(&x, NanPolicy::Omit, false, 100, 1e-8).unwrap();
        assert_eq!(f.params.sigma, SIGMA_MIN);
        assert!(f.converged && f.n_iter == 3, "{f:?}");
    }

    #[test]
    fn degenerate_inputs() {
        let flat = fit_mixture(&[2.0f32; 4], NanPolicy::Omit, false, 100, 1e-8).unwrap();
        assert_eq!(flat.params.probability(2.0), 0.0);
        assert!(flat.params.check().is_ok());
        assert!(fit_mixture(&[-1.0, 2.0], NanPolicy::Omit, false, 100, 1e-8).is_err());
        let zeros = fit_mixture(&[0.0; 3], NanPolicy::Omit, false, 100, 1e-8).unwrap();
        assert_eq!(zeros.params.probability(5.0), 0.0);
    }
}
