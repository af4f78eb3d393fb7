//! Fitting every center/scale pair (and M-estimation) to arbitrary scores.

use crate::input::{ldexp, tame, Input};
use outprob_core::estimators::mest::Norm;
use outprob_core::sample::NanPolicy;
use outprob_core::transformations::fit::{fit_gaussian, Center, GaussianFit, GaussianSpec, Scale};
use outprob_core::transformations::scaling::{transform, Scaling};
use outprob_core::{Error, Float};

pub(crate) fn spec(r: &mut Input<'_>) -> GaussianSpec {
    let center = match r.byte() % 6 {
        0 => Center::Mean,
        1 => Center::Median,
        2 => Center::TrimmedMean,
        3 => Center::M(Norm::Huber),
        4 => Center::M(Norm::Tukey),
        _ => Center::Value(r.score()),
    };
    let scale = match r.byte() % 7 {
        0 => Scale::Std,
        1 => Scale::Nmad,
        2 => Scale::Niqr,
        3 => Scale::TrimmedStd,
        4 => Scale::M(Norm::Huber),
        5 => Scale::M(Norm::Tukey),
        _ => Scale::Value(r.score()),
    };
    let trim = match r.byte() % 4 {
        0 => 0.1,
        1 => 0.0,
        2 => f64::from(r.byte()) / 256.0,
        _ => r.score(),
    };
    let maxiter = match r.byte() % 8 {
        0 => 0,
        1 => 1001,
        2 => 1,
        _ => 1 + r.byte() as usize % 40,
    };
    let tol = match r.byte() % 4 {
        0 => 1e-8,
        1 => r.score(),
        2 => 1e-300,
        _ => 1e-3,
    };
    let flags = r.byte();
    GaussianSpec {
        center,
        scale,
        trim,
        ddof: (flags >> 4) as usize % 3,
        maxiter,
        tol,
        nan_policy: if flags & 1 == 1 {
            NanPolicy::Raise
        } else {
            NanPolicy::Omit
        },
        negate: flags & 2 == 2,
    }
}

/// Bytes → a spec and scores; fits them as f64 or f32 and checks the result.
pub fn fit(data: &[u8]) {
    let mut r = Input::new(data);
    let spec = spec(&mut r);
    let as_f32 = r.byte().is_multiple_of(4);
    let x = r.scores(2048);
    if as_f32 {
        let x: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        check(&x, &spec);
    } else {
        check(&x, &spec);
        symmetries(&x, &spec);
    }
}

/// The error, if any, must be one the contract names for this input.
fn check_error<T: Float>(x: &[T], spec: &GaussianSpec, e: &Error) {
    let kept = x.iter().filter(|v| !v.is_nan()).count();
    match e {
        Error::Empty { .. } => assert_eq!(kept, 0, "Empty on {kept} values"),
        Error::Infinite {
            count,
            first_index: Some(i),
        } => {
            assert!(*count > 0 && !x[*i].is_nan() && !x[*i].is_finite());
        }
        Error::Nan {
            first_index: Some(i),
            ..
        } => {
            assert_eq!(spec.nan_policy, NanPolicy::Raise);
            assert!(x[*i].is_nan());
        }
        Error::InvalidParameter { name, reason } => assert!(
            spec.check().is_err() || reason.contains("exceeds the double range"),
            "{name}: {reason} for a valid spec {spec:?}"
        ),
        other => panic!("unexpected error {other:?}"),
    }
}

fn check<T: Float>(x: &[T], spec: &GaussianSpec) -> Option<GaussianFit> {
    let fit = match fit_gaussian(x, spec) {
        Ok(f) => f,
        Err(e) => {
            check_error(x, spec, &e);
            return None;
        }
    };
    assert!(spec.check().is_ok(), "accepted an invalid spec {spec:?}");
    let g = fit.params;
    assert!(g.center.is_finite(), "center {g:?}");
    assert!(g.scale.is_finite() && g.scale >= 0.0, "scale {g:?}");
    let sign = if spec.negate { -1.0 } else { 1.0 };
    let s: Vec<f64> = x
        .iter()
        .map(|v| sign * v.to_f64())
        .filter(|v| !v.is_nan())
        .collect();
    let (lo, hi) = s
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    match spec.center {
        Center::Value(c) => assert_eq!(g.center, c),
        // Every location estimate is a (weighted) mean or an order statistic;
        // M-estimation runs on scores times 2^-k (k near log2 σ), where
        // scores below σ·2^-1074 flush to zero: that much slack.
        _ => assert!(
            lo - slack(g.scale, lo, hi) <= g.center && g.center <= hi + slack(g.scale, lo, hi),
            "center {} outside [{lo}, {hi}]: {spec:?} {fit:?}",
            g.center
        ),
    }
    if let Scale::Value(v) = fit.scale_used {
        assert_eq!(g.scale, v);
    } else if g.scale == 0.0 {
        // Every scale of the chain is zero only for constant scores (the SD
        // ends the chain), N <= ddof, or an SD below half the smallest
        // subnormal (it rounds to 0): SD >= (hi − lo)/(2√N).
        let tiny = 2.0 * f64::from_bits(1) * (s.len() as f64).sqrt();
        assert!(
            lo == hi || s.len() <= spec.ddof || hi - lo <= tiny,
            "σ = 0 on [{lo}, {hi}]"
        );
    }
    // The fitted map on the fitted scores.
    let mut p = vec![T::from_f64(0.0); x.len()];
    transform(x, &mut p, &[g], spec.negate).expect("a fitted map transforms");
    check_probabilities(x, &p, spec.negate, |v| g.probability(v));
    Some(fit)
}

/// How far a location may lie outside [lo, hi]: a mean is fl(fl(Σx)/n)
/// (`math.fsum(x)/n`), whose two roundings can leave the mean of n equal
/// values one ulp away from them; and see above for M-estimation.
fn slack(scale: f64, lo: f64, hi: f64) -> f64 {
    let m = lo.abs().max(hi.abs());
    ldexp(scale.max(m), -1000) + ldexp(m, -51)
}

/// `p` in [0, 1]; NaN exactly where `x` is; non-decreasing in the oriented
/// score.
pub(crate) fn check_probabilities<T: Float>(
    x: &[T],
    p: &[T],
    negate: bool,
    one: impl Fn(f64) -> f64,
) {
    let sign = if negate { -1.0 } else { 1.0 };
    let mut pairs = Vec::with_capacity(x.len());
    for (&s, &q) in x.iter().zip(p) {
        let (s, q) = (sign * s.to_f64(), q.to_f64());
        assert_eq!(s.is_nan(), q.is_nan(), "score {s} → {q}");
        if !s.is_nan() {
            assert!((0.0..=1.0).contains(&q), "score {s} → {q}");
            assert!(!(q == 0.0 && q.is_sign_negative()), "score {s} → -0.0");
            // The vectorised kernel equals the one-score map (rounded to T).
            assert_eq!(T::from_f64(one(s)).to_f64(), q, "score {s}");
            pairs.push((s, q));
        }
    }
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    for w in pairs.windows(2) {
        assert!(w[0].1 <= w[1].1 || w[0].0 == w[1].0, "not monotone: {w:?}");
    }
}

/// Exact symmetries of every estimator: fitting −x equals fitting x with
/// `negate`, and fitting x·2^j gives (μ·2^j, σ·2^j) bit for bit when no
/// value leaves the normal range.
fn symmetries(x: &[f64], spec: &GaussianSpec) {
    let Ok(base) = fit_gaussian(x, spec) else {
        return;
    };
    let flipped: Vec<f64> = x.iter().map(|v| -v).collect();
    let other = fit_gaussian(
        &flipped,
        &GaussianSpec {
            negate: !spec.negate,
            ..*spec
        },
    )
    .expect("negation changes nothing");
    assert_eq!(summary(&base), summary(&other), "negation");
    if !tame(x, 900, 900) {
        return;
    }
    for j in [-64, 64] {
        let scaled: Vec<f64> = x.iter().map(|&v| ldexp(v, j)).collect();
        let s = GaussianSpec {
            center: match spec.center {
                Center::Value(c) => Center::Value(ldexp(c, j)),
                c => c,
            },
            scale: match spec.scale {
                Scale::Value(v) => Scale::Value(ldexp(v, j)),
                v => v,
            },
            ..*spec
        };
        if matches!(spec.center, Center::Value(c) if !tame(&[c], 900, 900))
            || matches!(spec.scale, Scale::Value(v) if !tame(&[v], 900, 900))
        {
            return;
        }
        let f = fit_gaussian(&scaled, &s).expect("scaling by 2^j changes nothing");
        let want = (
            ldexp(base.params.center, j),
            ldexp(base.params.scale, j),
            base.scale_used.name(),
            iterations(&base),
        );
        let got = (
            f.params.center,
            f.params.scale,
            f.scale_used.name(),
            iterations(&f),
        );
        assert_eq!(got, want, "scaling by 2^{j}: {spec:?}");
    }
}

/// Compared as values: a center may come out as −0.0 one way and +0.0 the
/// other.
type Summary = (f64, f64, &'static str, Vec<(usize, bool)>);

fn summary(f: &GaussianFit) -> Summary {
    (
        f.params.center,
        f.params.scale,
        f.scale_used.name(),
        iterations(f),
    )
}

fn iterations(f: &GaussianFit) -> Vec<(usize, bool)> {
    f.m_estimates
        .iter()
        .map(|(_, e)| (e.n_iter, e.converged))
        .collect()
}
