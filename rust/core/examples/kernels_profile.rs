//! Per-score cost of the §10 kernels measured in docs/performance.md, one thread:
//! the gamma fit, its table and the table's transform, the sigmoid EM fit and the rank
//! `fit_transform`. Run with
//! `RAYON_NUM_THREADS=1 cargo run --release -p outprob-core --example kernels_profile [N] [which]`.

#[path = "common/cpu_time.rs"]
mod cpu_time;
#[path = "common/pool.rs"]
mod pool;
#[path = "common/scores.rs"]
mod scores;
use outprob_core::conformal::calibration::{Calibration, ConformalSpec};
use outprob_core::conformal::pvalues::TieBreak;
use outprob_core::numeric::float::order_key;
use outprob_core::numeric::radix::{radix_sort, RadixItem};
use outprob_core::sample::NanPolicy;
use outprob_core::sample::Sample;
use outprob_core::transformations::gamma::{fit_gamma, GammaMethod, GammaSpec};
use outprob_core::transformations::gamma_table::{transform_tabled, GammaTable};
use outprob_core::transformations::rank::{fit_transform_rank, fit_transform_rank_by_pairs};
use outprob_core::transformations::sigmoid::fit_sigmoid;
use std::hint::black_box;

/// The rank sort's item: a score's order key and its position (the
/// payload the sort carries, never read here).
#[derive(Clone, Copy, Default)]
struct Keyed(u64, #[allow(dead_code)] u32);

impl RadixItem for Keyed {
    const KEY_BITS: u32 = 64;
    fn radix_key(&self) -> u64 {
        self.0
    }
}

/// A float32 score's order key and its position (the payload the sort
/// carries, never read here).
#[derive(Clone, Copy, Default)]
struct Keyed32(u32, #[allow(dead_code)] u32);

impl RadixItem for Keyed32 {
    const KEY_BITS: u32 = 32;
    fn radix_key(&self) -> u64 {
        u64::from(self.0)
    }
}

/// The sort alone: pdqsort (the keyed sort before the radix sort) against
/// the radix sort, on the float64 (u64 key, u32 position) items (the
/// radix sort is not used there) and the float32 path's (u32 key, u32
/// position) items.
fn sorts(x: &[f64]) {
    let items: Vec<Keyed> = x
        .iter()
        .enumerate()
        .map(|(i, &v)| Keyed(order_key(v), i as u32))
        .collect();
    let n = x.len();
    let ns = best(11, n, &mut || {
        let mut v = items.clone();
        v.sort_unstable_by_key(|e| e.0);
        black_box(v);
    });
    println!("  sort (u64 key, u32 position), pdqsort: {ns:.2} ns/score (copy included)");
    let ns = best(11, n, &mut || {
        black_box(radix_sort(items.clone()));
    });
    println!("  sort (u64 key, u32 position), radix: {ns:.2} ns/score (copy included)");
    let ns = best(11, n, &mut || {
        black_box(items.clone());
    });
    println!("  the copy alone: {ns:.2} ns/score");
    let k32: Vec<Keyed32> = x
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            Keyed32(
                outprob_core::numeric::float::order_key_f32(v as f32),
                i as u32,
            )
        })
        .collect();
    let ns = best(11, n, &mut || {
        let mut v = k32.clone();
        v.sort_unstable_by_key(|e| e.0);
        black_box(v);
    });
    println!("  sort (u32 key, u32 position), pdqsort: {ns:.2} ns/score");
    let ns = best(11, n, &mut || {
        black_box(radix_sort(k32.clone()));
    });
    println!("  sort (u32 key, u32 position), radix: {ns:.2} ns/score");
}

fn main() {
    pool::in_pool(None, profile);
}

/// Best CPU nanoseconds per score over `runs` calls.
fn best(runs: usize, n: usize, f: &mut dyn FnMut()) -> f64 {
    let mut b = f64::INFINITY;
    for _ in 0..runs {
        let t = cpu_time::thread_seconds();
        f();
        b = b.min(cpu_time::thread_seconds() - t);
    }
    b * 1e9 / n as f64
}

/// The gamma fit (moments), its table and the table's transform.
fn gamma(x: &[f64], out: &mut [f64]) {
    let n = x.len();
    let spec = GammaSpec {
        method: GammaMethod::Moments,
        offset: None,
        nan_policy: NanPolicy::Omit,
        negate: false,
    };
    let ns = best(21, n, &mut || {
        black_box(fit_gamma(x, &spec).expect("a gamma fit"));
    });
    println!("gamma fit (moments): {ns:.2} ns/score");
    let fit = fit_gamma(x, &spec).expect("a gamma fit");
    let ns = best(21, n, &mut || {
        black_box(GammaTable::new(fit.params).expect("a table"));
    });
    println!("gamma table build: {ns:.2} ns/score");
    let table = [GammaTable::new(fit.params).expect("a table")];
    // `gamma_long`: many more calls, for a profiler's samples.
    let runs = if std::env::args().any(|a| a.contains("gamma_long")) {
        501
    } else {
        21
    };
    let ns = best(runs, n, &mut || {
        transform_tabled(x, out, &table, false).expect("same shapes");
        black_box(&out);
    });
    println!("gamma table transform: {ns:.2} ns/score");
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
        gamma(&x, &mut out);
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
        let ns = best(11, n, &mut || {
            let s = Sample::new(&x, NanPolicy::Omit, false).expect("scores");
            black_box(fit_transform_rank_by_pairs(&s, &mut out, false));
        });
        println!("rank fit_transform by a pair sort (before): {ns:.2} ns/score");
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let mut out32 = vec![0.0f32; n];
        let ns = best(11, n, &mut || {
            black_box(
                fit_transform_rank(&x32, &mut out32, NanPolicy::Omit, false, false).expect("ok"),
            );
        });
        println!("rank fit_transform float32: {ns:.2} ns/score");
        sorts(&x);
    }
    if which.contains("conformal") {
        // benches/conformal.py's shapes: 10 queries per calibration score,
        // normal calibration scores, queries normal × 1.2.
        let mut u = scores::uniforms(0x2545_F491_4F6C_DD1D);
        let mut normal = || (-2.0 * u().ln()).sqrt() * (std::f64::consts::TAU * u()).cos();
        let mut cal: Vec<f64> = (0..n).map(|_| normal()).collect();
        let q: Vec<f64> = (0..10 * n).map(|_| 1.2 * normal()).collect();
        let mut p = vec![0.0; q.len()];
        cal.sort_by(f64::total_cmp);
        let spec = ConformalSpec::new(TieBreak::Classical, None, 0.1, None, None).expect("spec");
        let ns = best(5, n, &mut || {
            black_box(Calibration::from_sorted(&cal, &spec, false).expect("a calibration"));
        });
        println!("conformal calibration (copy + index): {ns:.2} ns/calibration score");
        let c = Calibration::from_sorted(&cal, &spec, false).expect("a calibration");
        let ns = best(5, q.len(), &mut || {
            c.pvalues(false).map(&q, &mut p).expect("same shapes");
            black_box(&p);
        });
        println!("conformal p-values: {ns:.2} ns/score");
    }
}
