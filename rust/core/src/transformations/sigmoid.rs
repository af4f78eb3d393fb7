//! Sigmoid scaling (Gao & Tan, ICDM 2006; ELKI `SigmoidOutlierScaling`),
//! contract §10: `p = 1/(1 + exp(−(a·z + b)))` with `z = (s − center)/scale`
//! the standardised score.
//!
//! Fitting is EM on hard labels: the E-step labels outliers `a·z + b > 0`,
//! the M-step fits (a, b) to Platt's regularised targets
//! (`(N₊ + 1)/(N₊ + 2)` for outliers, `1/(N₋ + 2)` for inliers) by Newton's
//! method with backtracking (Lin, Lin & Weng 2007), until no label changes.
//! The sigmoid family is invariant under affine maps of the scores, so
//! fitting on standardised scores is the same model with a Newton iteration
//! that is equally well conditioned at every score magnitude (ELKI starts
//! from `A = 1` in score units).

use crate::error::Error;
use crate::limits::EM_MAXITER;
use crate::numeric::exp::{exp_neg, ln_1p_unit};
use crate::numeric::float::Float;
use crate::numeric::par::map_chunks;
use crate::numeric::reduce::mean_of;
use crate::numeric::sum::Neumaier;
use crate::sample::{NanPolicy, Sample};
use crate::transformations::scaling::Scaling;

/// Newton iterations per M-step (Lin, Lin & Weng's limit).
pub const NEWTON_MAXITER: usize = 100;
/// Smallest backtracking step (Lin, Lin & Weng: 1e-10).
const MIN_STEP: f64 = 1e-10;
/// Hessian regularisation (Lin, Lin & Weng).
const RIDGE: f64 = 1e-12;
/// Newton stops when both gradient components are at most this times n
/// (Lin, Lin & Weng's absolute 1e-5, relative to the sample size).
pub const GRAD_TOL: f64 = 1e-9;

/// Fitted sigmoid scaling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sigmoid {
    /// Standardisation: mean of the fitted scores.
    pub center: f64,
    /// Standardisation: standard deviation (ddof 0) of the fitted scores; 0
    /// for constant scores.
    pub scale: f64,
    /// Slope on the standardised score.
    pub a: f64,
    /// Intercept on the standardised score.
    pub b: f64,
}

/// `1/(1 + exp(−t))` without overflow.
#[inline]
pub fn logistic(t: f64) -> f64 {
    if t >= 0.0 {
        1.0 / (1.0 + (-t).exp())
    } else {
        let e = t.exp();
        e / (1.0 + e)
    }
}

impl Scaling for Sigmoid {
    fn check(&self) -> Result<(), Error> {
        let ok = self.center.is_finite()
            && self.scale.is_finite()
            && self.scale >= 0.0
            && self.a.is_finite()
            && self.b.is_finite()
            && (self.scale > 0.0 || self.a == 0.0);
        if ok {
            Ok(())
        } else {
            Err(Error::invalid(
                "center/scale/a/b",
                format!("need finite values, scale >= 0, a = 0 when scale = 0; got {self:?}"),
            ))
        }
    }

    /// NaN stays NaN; with `a > 0`, +inf → 1 and −inf → 0.
    #[inline]
    fn probability(&self, s: f64) -> f64 {
        if s.is_nan() {
            return s;
        }
        if self.a == 0.0 {
            return logistic(self.b);
        }
        // Halved difference: s − center cannot overflow.
        let z = (0.5 * s - 0.5 * self.center) / (0.5 * self.scale);
        logistic(self.a * z + self.b)
    }
}

/// The fit and its EM diagnostics.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SigmoidFit {
    /// The fitted map.
    pub params: Sigmoid,
    /// EM iterations (M-steps) run.
    pub n_iter: usize,
    /// The labels stopped changing within `maxiter`.
    pub converged: bool,
}

/// Cross-entropy of `σ(a·z + b)` against the labels' targets (`hi` for
/// outliers, `lo` for inliers), its gradient and Hessian:
/// `[f, g_a, g_b, h_aa, h_ab, h_bb]`. Plain sums in 8 lanes within a chunk
/// of 2¹⁶ (relative error ≤ 2¹⁶·u, far below the Newton tolerance),
/// compensated across chunks, combined in chunk order (thread-count
/// independent).
fn objective(z: &[f64], labels: &[bool], ab: (f64, f64), targets: (f64, f64)) -> [f64; 6] {
    let parts = map_chunks(z, |offset, c| {
        objective_chunk(
            c,
            &labels[offset..offset + c.len()],
            ab.0,
            ab.1,
            targets.0,
            targets.1,
        )
    });
    let mut total = [Neumaier::default(); 6];
    for part in parts {
        for (t, p) in total.iter_mut().zip(part) {
            t.add(p);
        }
    }
    total.map(Neumaier::value)
}

/// Scores per group of [`objective_chunk`], and its lanes.
const GROUP: usize = 256;
const LANES: usize = 8;

crate::numeric::simd::multiversion_wide! {
    /// [`objective`]'s six sums over one chunk, a group of scores at a time
    /// in stages that vectorise (the terms of every score, then their lane
    /// sums): `e^(−|u|)` and `ln(1 + e^(−|u|))` from `numeric::exp`
    /// instead of a libm call each per score.
    fn objective_chunk(z: &[f64], labels: &[bool], a: f64, b: f64, hi: f64, lo: f64) -> [f64; 6] {
        let mut acc = [[0.0f64; LANES]; 6];
        let mut terms = [[0.0f64; GROUP]; 6];
        for (zg, lg) in z.chunks(GROUP).zip(labels.chunks(GROUP)) {
            let n = zg.len();
            for (i, (&zi, &label)) in zg.iter().zip(lg).enumerate() {
                let t = if label { hi } else { lo };
                let u = a * zi + b;
                // The stable form of t·log(1 + e^−u) + (1 − t)·log(1 + e^u):
                // max(u, 0) − t·u + log1p(e^−|u|), and σ(u) from the same e^−|u|.
                let e = exp_neg(u.abs());
                let f = u.max(0.0) - t * u + ln_1p_unit(e);
                let p = if u >= 0.0 { 1.0 } else { e } / (1.0 + e);
                let d1 = p - t;
                let d2 = p * (1.0 - p);
                terms[0][i] = f;
                terms[1][i] = d1 * zi;
                terms[2][i] = d1;
                terms[3][i] = d2 * zi * zi;
                terms[4][i] = d2 * zi;
                terms[5][i] = d2;
            }
            let whole = n.div_ceil(LANES) * LANES;
            for (sums, term) in acc.iter_mut().zip(terms.iter_mut()) {
                term[n..whole].fill(0.0);
                for g in term[..whole].chunks_exact(LANES) {
                    for (s, &v) in sums.iter_mut().zip(g) {
                        *s += v;
                    }
                }
            }
        }
        acc.map(|lanes| lanes.iter().sum())
    }
}

/// The M-step: Newton's method with backtracking on the cross-entropy
/// (Lin, Lin & Weng 2007, Algorithm 1), from `(a, b)`. Each evaluation
/// computes the derivatives too: an accepted trial point needs no second pass.
#[allow(clippy::cast_precision_loss)]
fn m_step(z: &[f64], labels: &[bool], mut a: f64, mut b: f64) -> (f64, f64) {
    let n = z.len();
    let outliers = labels.iter().filter(|&&l| l).count();
    let targets = (
        (outliers as f64 + 1.0) / (outliers as f64 + 2.0),
        1.0 / ((n - outliers) as f64 + 2.0),
    );
    let tol = GRAD_TOL * n as f64;
    let meets_tol = |g: &[f64; 6]| g[1].abs() <= tol && g[2].abs() <= tol;
    let mut cur = objective(z, labels, (a, b), targets);
    for _ in 0..NEWTON_MAXITER {
        if meets_tol(&cur) {
            break;
        }
        let [f, ga, gb, haa, hab, hbb] = cur;
        let (haa, hbb) = (haa + RIDGE, hbb + RIDGE);
        let det = haa * hbb - hab * hab;
        let da = -(hbb * ga - hab * gb) / det;
        let db = -(-hab * ga + haa * gb) / det;
        let gd = ga * da + gb * db;
        let mut step = 1.0;
        let mut moved = false;
        while step >= MIN_STEP {
            let (na, nb) = (a + step * da, b + step * db);
            let trial = objective(z, labels, (na, nb), targets);
            // Near the optimum the decrease, about gd/2, falls below the
            // rounding of f (a sum of n terms): the decrease test would be
            // decided by rounding and could halve a good Newton step. A
            // trial point that meets the stopping test is taken as it is.
            if trial[0] < f + 1e-4 * step * gd || meets_tol(&trial) {
                (a, b, cur, moved) = (na, nb, trial, true);
                break;
            }
            step /= 2.0;
        }
        if !moved {
            break; // the line search failed: no further decrease possible
        }
    }
    (a, b)
}

/// Fits sigmoid scaling by EM, at most `maxiter` M-steps (ELKI: 100).
pub fn fit_sigmoid<T: Float>(
    x: &[T],
    nan_policy: NanPolicy,
    negate: bool,
    maxiter: usize,
) -> Result<SigmoidFit, Error> {
    EM_MAXITER.check_usize(maxiter)?;
    let s = Sample::new(x, nan_policy, negate)?;
    // The constant fit (d = 0): a = b = 0, every score maps to ½.
    let constant = |center: f64| SigmoidFit {
        params: Sigmoid {
            center,
            scale: 0.0,
            a: 0.0,
            b: 0.0,
        },
        n_iter: 0,
        converged: true,
    };
    // Constant scores are decided on the scores themselves: their rounded
    // mean can miss the common value by an ulp ([0.1; 3] averages to
    // 0.10000000000000002), which would leave a spread of one ulp and an
    // EM fitted to rounding noise. Their mean is the value itself.
    if s.summary.min == s.summary.max {
        return Ok(constant(s.orient(s.summary.min)));
    }
    let mean = s.orient(mean_of(x, &s.summary));
    let v: Vec<f64> = s.to_vec().into_iter().map(Float::to_f64).collect();
    // Halved deviations, rescaled by their largest magnitude: no overflow.
    let big = v
        .iter()
        .fold(0.0f64, |m, &u| m.max((0.5 * u - 0.5 * mean).abs()));
    if big == 0.0 {
        // Distinct subnormal scores whose halved deviations all round to 0.
        return Ok(constant(mean));
    }
    let mut sq = Neumaier::default();
    for &u in &v {
        let d = (0.5 * u - 0.5 * mean) / big;
        sq.add(d * d);
    }
    #[allow(clippy::cast_precision_loss)]
    let half = big * (sq.value() / v.len() as f64).sqrt();
    let scale = (2.0 * half).min(f64::MAX);
    let z: Vec<f64> = v
        .iter()
        .map(|&u| (0.5 * u - 0.5 * mean) / (0.5 * scale))
        .collect();
    let (mut a, mut b) = (1.0, 0.0);
    let mut labels: Vec<bool> = z.iter().map(|&zi| a * zi + b > 0.0).collect();
    let (mut n_iter, mut converged) = (0, false);
    while n_iter < maxiter {
        (a, b) = m_step(&z, &labels, a, b);
        n_iter += 1;
        let mut changed = false;
        for (l, &zi) in labels.iter_mut().zip(&z) {
            let new = a * zi + b > 0.0;
            changed |= new != *l;
            *l = new;
        }
        if !changed {
            converged = true;
            break;
        }
    }
    Ok(SigmoidFit {
        params: Sigmoid {
            center: mean,
            scale,
            a,
            b,
        },
        n_iter,
        converged,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn logistic_extremes() {
        assert_eq!(logistic(0.0), 0.5);
        assert_eq!(logistic(-1e308), 0.0);
        assert_eq!(logistic(1e308), 1.0);
        assert!((logistic(-745.0) - 5e-324).abs() <= 5e-324);
    }

    #[test]
    fn separates_and_is_affine_invariant() {
        let x: Vec<f64> = (0..200)
            .map(|i| f64::from(i % 20) + if i % 50 == 0 { 40.0 } else { 0.0 })
            .collect();
        let f = fit_sigmoid(&x, NanPolicy::Omit, false, 100).unwrap();
        assert!(f.converged && f.params.a > 0.0);
        let p = |fit: &SigmoidFit, s: f64| fit.params.probability(s);
        assert!(p(&f, 59.0) > 0.9 && p(&f, 0.0) < 0.1);
        let y: Vec<f64> = x.iter().map(|&v| 1e-200 * v - 3e-200).collect();
        let g = fit_sigmoid(&y, NanPolicy::Omit, false, 100).unwrap();
        for &v in &[0.0, 10.0, 59.0] {
            assert!((p(&f, v) - p(&g, 1e-200 * v - 3e-200)).abs() < 1e-9);
        }
        let flat = fit_sigmoid(&[3.0f32; 5], NanPolicy::Omit, false, 100).unwrap();
        assert_eq!((flat.params.a, flat.params.probability(1e30)), (0.0, 0.5));
        let huge =
            fit_sigmoid(&[-1.7e308, 1.7e308, 0.0, 1.0], NanPolicy::Omit, false, 100).unwrap();
        assert!(huge.params.check().is_ok());
        assert!((0.0..=1.0).contains(&huge.params.probability(1.7e308)));
    }

    #[test]
    fn constant_scores_whose_mean_rounds_away_are_constant() {
        // The rounded mean of [0.1; 3] is 0.10000000000000002: a spread of
        // one ulp that must not be fitted (contract §10: d = 0, a = b = 0).
        for (v, n) in [(0.1, 3), (5e-107, 11), (123.456, 5), (1e300, 7)] {
            for negate in [false, true] {
                let f = fit_sigmoid(&vec![v; n], NanPolicy::Omit, negate, 100).unwrap();
                let center = if negate { -v } else { v };
                assert_eq!((f.params.center, f.params.scale), (center, 0.0), "{v} {n}");
                assert_eq!((f.params.a, f.params.b, f.n_iter), (0.0, 0.0, 0), "{v} {n}");
            }
        }
        // Distinct subnormals whose halved deviations round to 0.
        let tiny = fit_sigmoid(&[5e-324, 1e-323], NanPolicy::Omit, false, 100).unwrap();
        assert!(tiny.params.check().is_ok());
    }

    /// The six sums by libm's `exp` and `ln_1p`, one score at a time, in
    /// compensated sums: the oracle of the vectorised kernel.
    fn objective_by_libm(z: &[f64], labels: &[bool], a: f64, b: f64, hi: f64, lo: f64) -> [f64; 6] {
        let mut acc = [Neumaier::default(); 6];
        for (&zi, &label) in z.iter().zip(labels) {
            let t = if label { hi } else { lo };
            let u = a * zi + b;
            let e = (-u.abs()).exp();
            let p = if u >= 0.0 { 1.0 } else { e } / (1.0 + e);
            let (d1, d2) = (p - t, p * (1.0 - p));
            let terms = [
                u.max(0.0) - t * u + e.ln_1p(),
                d1 * zi,
                d1,
                d2 * zi * zi,
                d2 * zi,
                d2,
            ];
            for (s, v) in acc.iter_mut().zip(terms) {
                s.add(v);
            }
        }
        acc.map(Neumaier::value)
    }

    proptest! {
        /// The kernel's sums equal libm's to rounding: each within 1e-12 of
        /// the sum of the terms' magnitudes.
        #[test]
        fn objective_matches_libm(
            zs in prop::collection::vec((-50.0f64..50.0, any::<bool>()), 1..1500),
            a in -1e3f64..1e3,
            b in -20.0f64..20.0,
        ) {
            let (z, labels): (Vec<f64>, Vec<bool>) = zs.into_iter().unzip();
            let (hi, lo) = (0.9, 0.05);
            let got = objective_chunk(&z, &labels, a, b, hi, lo);
            let want = objective_by_libm(&z, &labels, a, b, hi, lo);
            let scale: f64 = z.iter().map(|&zi| (1.0 + zi.abs()).powi(2) * (1.0 + (a * zi + b).abs())).sum();
            for (g, w) in got.iter().zip(&want) {
                prop_assert!((g - w).abs() <= 1e-12 * scale, "{} {}", g, w);
            }
        }

        #[test]
        fn monotone_unit_interval(xs in prop::collection::vec(-1e3f64..1e3, 2..60)) {
            let f = fit_sigmoid(&xs, NanPolicy::Omit, false, 100).unwrap();
            prop_assert!(f.params.check().is_ok());
            let mut q = xs.clone();
            q.sort_by(f64::total_cmp);
            let ps: Vec<f64> = q.iter().map(|&s| f.params.probability(s)).collect();
            prop_assert!(ps.iter().all(|p| (0.0..=1.0).contains(p)));
            if f.params.a >= 0.0 {
                prop_assert!(ps.windows(2).all(|w| w[0] <= w[1]));
            }
        }
    }
}
