//! Applying fitted maps with arbitrary parameters to arbitrary scores.

use crate::fit::check_probabilities;
use crate::input::Input;
use outprob_core::transformations::scaling::{transform as apply, Gaussian, Linear, Scaling};
use outprob_core::Float;

/// Bytes → one to three columns of Gaussian or linear maps and scores.
pub fn transform(data: &[u8]) {
    let mut r = Input::new(data);
    let flags = r.byte();
    let k = 1 + (flags as usize >> 4) % 3;
    let negate = flags & 1 == 1;
    let as_f32 = flags & 2 == 2;
    if flags & 4 == 4 {
        let cols: Vec<Linear> = (0..k)
            .map(|_| Linear {
                min: r.score(),
                max: r.score(),
            })
            .collect();
        run(&mut r, &cols, negate, as_f32, linear_oracle);
    } else {
        let cols: Vec<Gaussian> = (0..k)
            .map(|_| Gaussian {
                center: r.score(),
                scale: r.score(),
            })
            .collect();
        run(&mut r, &cols, negate, as_f32, gaussian_oracle);
    }
}

fn run<S: Scaling + std::fmt::Debug>(
    r: &mut Input<'_>,
    cols: &[S],
    negate: bool,
    as_f32: bool,
    oracle: fn(&S, f64) -> Option<f64>,
) {
    let mut x = r.scores(4096);
    x.truncate(x.len() / cols.len() * cols.len());
    if as_f32 {
        let x: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        check(&x, cols, negate, oracle);
    } else {
        check(&x, cols, negate, oracle);
    }
}

fn check<T: Float, S: Scaling + std::fmt::Debug>(
    x: &[T],
    cols: &[S],
    negate: bool,
    oracle: fn(&S, f64) -> Option<f64>,
) {
    let mut p = vec![T::from_f64(-7.0); x.len()];
    let valid = cols.iter().all(|c| c.check().is_ok());
    if let Err(e) = apply(x, &mut p, cols, negate) {
        assert!(!valid, "refused valid parameters {cols:?}: {e}");
        return;
    }
    assert!(valid, "accepted invalid parameters {cols:?}");
    let k = cols.len();
    for (j, c) in cols.iter().enumerate() {
        let xs: Vec<T> = x.iter().skip(j).step_by(k).copied().collect();
        let ps: Vec<T> = p.iter().skip(j).step_by(k).copied().collect();
        check_probabilities(&xs, &ps, negate, |v| c.probability(v));
        let sign = if negate { -1.0 } else { 1.0 };
        for (&s, &q) in xs.iter().zip(&ps) {
            let s = sign * s.to_f64();
            if let Some(want) = oracle(c, s) {
                let q = q.to_f64();
                // Two erfs of ≤ 1 ulp each, z by division or by the
                // reciprocal, then the rounding to T; f32 results below its
                // subnormal range round to 0.
                let (tol, tiny) = if T::MANTISSA_DIGITS == 24 {
                    (1e-6, 2.0 * f64::from(f32::from_bits(1)))
                } else {
                    (1e-13, 1e-300)
                };
                assert!(
                    (q - want).abs() <= tol * want + tiny,
                    "{c:?}: p({s}) = {q}, want {want}"
                );
            }
        }
    }
}

/// erf((s − μ)/(σ√2)) straight from libm where nothing overflows or
/// underflows; otherwise the same in a domain scaled by 2^-8 (exact there).
fn gaussian_oracle(g: &Gaussian, s: f64) -> Option<f64> {
    let (c, sigma) = (g.center, g.scale);
    if s.is_nan() || sigma == 0.0 || s.is_infinite() {
        return None;
    }
    let tame = |v: f64| v == 0.0 || (1e-290..=1e290).contains(&v.abs());
    let z = if tame(s) && tame(c) && (1e-290..=1e290).contains(&sigma) {
        (s - c) / (sigma * core::f64::consts::SQRT_2)
    } else if sigma > 1e290 && s.abs().max(c.abs()) > 1e-290 {
        let f = 1.0 / 256.0;
        (s * f - c * f) / (sigma * f * core::f64::consts::SQRT_2)
    } else {
        return None;
    };
    Some(libm::erf(z).max(0.0))
}

/// clip((s − min)/(max − min), 0, 1); in halves (exact there) when
/// max − min exceeds the double range.
fn linear_oracle(l: &Linear, s: f64) -> Option<f64> {
    if s.is_nan() || l.max <= l.min {
        return None;
    }
    let range = l.max - l.min;
    Some(if range.is_finite() {
        ((s - l.min) / range).clamp(0.0, 1.0)
    } else {
        ((s * 0.5 - l.min * 0.5) / (l.max * 0.5 - l.min * 0.5)).clamp(0.0, 1.0)
    })
}
