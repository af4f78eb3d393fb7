//! Per-score cost of the §10 kernels of issue #33's rows, one thread:
//! the gamma table's transform, the sigmoid EM fit and the rank
//! `fit_transform`. Run with
//! `RAYON_NUM_THREADS=1 cargo run --release -p outprob-core --example kernels_profile [N] [which]`.

#[path = "common/scores.rs"]
mod scores;
use outprob_core::sample::NanPolicy;
use outprob_core::transformations::gamma::{fit_gamma, GammaMethod, GammaSpec};
use outprob_core::transformations::gamma_table::{transform_tabled, GammaTable};
use outprob_core::transformations::rank::fit_transform_rank;
use outprob_core::transformations::sigmoid::fit_sigmoid;
use std::hint::black_box;

fn main() {
    rayon::ThreadPoolBuilder::new()
        .build()
        .expect("a thread pool")
        .install(profile);
}

/// This thread's CPU time in seconds (the machine is shared: wall time
/// would count the waits for a core).
fn cpu_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to write into.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &raw mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Best CPU nanoseconds per score over `runs` calls.
fn best(runs: usize, n: usize, f: &mut dyn FnMut()) -> f64 {
    let mut b = f64::INFINITY;
    for _ in 0..runs {
        let t = cpu_seconds();
        f();
        b = b.min(cpu_seconds() - t);
    }
    b * 1e9 / n as f64
}

fn profile() {
    let mut args = std::env::args().skip(1);
    let n = args
        .next()
        .map_or(1_000_000, |a| a.parse::<f64>().expect("N") as usize);
    let which = args.next().unwrap_or_else(|| "gamma,sigmoid,rank".into());
    let x = scores::long_tailed(n);
    let mut out = vec![0.0; n];
    if which.contains("gamma") {
        let fit = fit_gamma(
            &x,
            &GammaSpec {
                method: GammaMethod::Moments,
                offset: None,
                nan_policy: NanPolicy::Omit,
                negate: false,
            },
        )
        .expect("a gamma fit");
        let table = [GammaTable::new(fit.params).expect("a table")];
        let ns = best(21, n, &mut || {
            transform_tabled(&x, &mut out, &table, false).expect("same shapes");
            black_box(&out);
        });
        println!("gamma table transform: {ns:.2} ns/score");
    }
    if which.contains("sigmoid") {
        let ns = best(3, n, &mut || {
            black_box(fit_sigmoid(&x, NanPolicy::Omit, false, 100).expect("a fit"));
        });
        let f = fit_sigmoid(&x, NanPolicy::Omit, false, 100).expect("a fit");
        println!(
            "sigmoid fit: {ns:.1} ns/score ({} EM steps, {:?})",
            f.n_iter, f.params
        );
    }
    if which.contains("rank") {
        let ns = best(11, n, &mut || {
            black_box(fit_transform_rank(&x, &mut out, NanPolicy::Omit, false, false).expect("ok"));
        });
        println!("rank fit_transform: {ns:.2} ns/score");
    }
}
