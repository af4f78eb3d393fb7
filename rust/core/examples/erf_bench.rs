//! Timing of the Gaussian-scaling kernels of `outprob_core::numeric::erf`, one thread.
//!
//!     cargo run -p outprob-core --release --example erf_bench [N] [REPS]
//!
//! Scores are lognormal (`exp(normal)`), fitted with μ = mean, σ = sd, so
//! about 69% of z are ≤ 0, 31% need erf and 0.15% exceed 5.92. Every case
//! runs once per round, interleaved with a plain copy of the same array, and
//! the best of REPS rounds (default 25) is printed in ns/element, so that a
//! busy machine disturbs all cases alike.

#[path = "common/scores.rs"]
mod scores;
use std::hint::black_box;
use std::time::Instant;

use outprob_core::numeric::erf::{
    erf_slice_with, gaussian_probabilities_f32_with, gaussian_probabilities_f64_with, Kernel, CUT,
};
use outprob_core::transformations::scaling::{transform, Gaussian};

/// A named case: writes its result for `src` into `dst`.
type Case<'a, T> = (String, Box<dyn Fn(&[T], &mut [T]) + 'a>);

/// `n` lognormal scores (xorshift + Box–Muller, fixed seed).
fn lognormal(n: usize) -> Vec<f64> {
    let mut uniform = scores::uniforms(0x2545_f491_4f6c_dd1d);
    (0..n)
        .map(|_| {
            let (u, v) = (uniform(), uniform());
            ((-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()).exp()
        })
        .collect()
}

/// Best time in seconds of each case over `reps` interleaved rounds.
fn best_of<T: Copy + Default>(cases: &[Case<'_, T>], src: &[T], reps: usize) -> Vec<f64> {
    let mut dst = vec![T::default(); src.len()];
    let mut best = vec![f64::INFINITY; cases.len()];
    for _ in 0..reps {
        for ((_, f), b) in cases.iter().zip(&mut best) {
            let t = Instant::now();
            f(black_box(src), black_box(&mut dst));
            *b = b.min(t.elapsed().as_secs_f64());
        }
    }
    best
}

fn report<T>(cases: &[Case<'_, T>], best: &[f64], n: usize) {
    for ((name, _), &t) in cases.iter().zip(best) {
        let ratio = t / best[0];
        let ns = t * 1e9 / n as f64;
        println!("{name:<34}{ns:8.3} ns/element  ({ratio:.2}x copy)");
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000_000);
    let reps: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(25);
    let src = lognormal(n);
    let mean = src.iter().sum::<f64>() / n as f64;
    let sd = (src.iter().map(|&s| (s - mean) * (s - mean)).sum::<f64>() / n as f64).sqrt();
    let k = 1.0 / (sd * std::f64::consts::SQRT_2);
    let active = src
        .iter()
        .filter(|&&s| s > mean && (s - mean) * k < CUT)
        .count();
    println!(
        "N = {n}, mu = {mean:.4}, sigma = {sd:.4}, lanes needing erf: {:.1}%, best of {reps}",
        100.0 * active as f64 / n as f64
    );
    println!("dispatch: Kernel::best() = {}", Kernel::best().name());
    let kernels: Vec<Kernel> = [Kernel::Avx512, Kernel::Avx2Fma, Kernel::Portable]
        .into_iter()
        .filter(|k| k.is_available())
        .collect();

    let zs: Vec<f64> = src.iter().map(|&s| (s - mean) * k).collect();
    let zs = &zs;
    let mut cases64: Vec<Case<f64>> = vec![(
        "copy f64".into(),
        Box::new(|s: &[f64], d: &mut [f64]| d.copy_from_slice(s)),
    )];
    for &kern in &kernels {
        cases64.push((
            format!("gaussian f64 [{}]", kern.name()),
            Box::new(move |s: &[f64], d: &mut [f64]| {
                gaussian_probabilities_f64_with(kern, s, d, mean, sd, false);
            }),
        ));
    }
    for &kern in &kernels {
        cases64.push((
            format!("erf_slice, all lanes [{}]", kern.name()),
            Box::new(move |_: &[f64], d: &mut [f64]| erf_slice_with(kern, zs, d)),
        ));
    }
    let src32: Vec<f32> = src.iter().map(|&v| v as f32).collect();
    let mut cases32: Vec<Case<f32>> = vec![(
        "copy f32".into(),
        Box::new(|s: &[f32], d: &mut [f32]| d.copy_from_slice(s)),
    )];
    for &kern in &kernels {
        cases32.push((
            format!("gaussian f32 [{}]", kern.name()),
            Box::new(move |s: &[f32], d: &mut [f32]| {
                gaussian_probabilities_f32_with(kern, s, d, mean, sd, false);
            }),
        ));
    }
    let best64 = best_of(&cases64, &src, reps);
    let best32 = best_of(&cases32, &src32, reps);
    report(&cases64, &best64, n);
    report(&cases32, &best32, n);

    let g = [Gaussian {
        center: mean,
        scale: sd,
    }];
    let mut dst = vec![0.0; n];
    let mut t = f64::INFINITY;
    for _ in 0..3 {
        let t0 = Instant::now();
        transform(black_box(&src), &mut dst, &g, false).unwrap();
        t = t.min(t0.elapsed().as_secs_f64());
    }
    let ns = t * 1e9 / n as f64;
    println!(
        "{:<34}{ns:8.3} ns/element",
        "scaling::transform (libm, scalar)"
    );
}
