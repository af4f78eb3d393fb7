//! An M-estimate's time per N and norm against a median + nMAD fit of the
//! same scores (the benchmark suite's long-tailed ones), one call at a
//! time. Run with
//! `RAYON_NUM_THREADS=1 cargo run --release -p outprob-core --example mest_profile [N …]`.

#[path = "common/scores.rs"]
mod scores;
use outprob_core::estimators::location::median;
use outprob_core::estimators::mest::{m_estimate, MParams, Norm};
use outprob_core::estimators::scale::nmad_about_median;
use outprob_core::sample::{NanPolicy, Sample};
use std::time::Instant;

fn best<F: FnMut()>(mut f: F, reps: usize) -> f64 {
    let mut b = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        f();
        b = b.min(t.elapsed().as_secs_f64());
    }
    b
}

fn main() {
    // In a pool, as the Python binding runs every call: called from outside
    // one, each parallel step hands its work to the global pool and waits
    // for it. RAYON_NUM_THREADS sets the pool's size.
    rayon::ThreadPoolBuilder::new()
        .build()
        .expect("a thread pool")
        .install(profile);
}

fn profile() {
    // Sizes from the command line (`1e4 1e6`), else 1e2 … 1e7.
    let mut sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse::<f64>().expect("N") as usize)
        .collect();
    if sizes.is_empty() {
        sizes = vec![100, 1000, 10_000, 100_000, 1_000_000, 10_000_000];
    }
    for &n in &sizes {
        let x = scores::long_tailed(n);
        let reps = (2_000_000 / n).clamp(3, 2000);
        let s = Sample::new(&x, NanPolicy::Omit, false).unwrap();
        let t_base = best(
            || {
                let m = median(&s);
                std::hint::black_box(nmad_about_median(&s, m));
            },
            reps,
        );
        for norm in [Norm::Huber, Norm::Tukey] {
            let p = MParams {
                maxiter: 100,
                ..MParams::new(norm)
            };
            let t_all = best(
                || {
                    std::hint::black_box(m_estimate(&s, &p).unwrap());
                },
                reps,
            );
            let est = m_estimate(&s, &p).unwrap();
            println!(
                "n={n:>9} {norm:?}: {:9.1} us = {:6.2}x median+nmad ({:8.1} us); n_iter {} converged {}",
                t_all * 1e6,
                t_all / t_base,
                t_base * 1e6,
                est.n_iter,
                est.converged
            );
        }
    }
}
