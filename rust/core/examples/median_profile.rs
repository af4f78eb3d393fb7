//! Where the median's time goes at large N: one thread, against
//! a plain sum (one read) of the same scores. Run with
//! `RAYON_NUM_THREADS=1 cargo run --release -p outprob-core --example median_profile [N]`.

#[path = "common/pool.rs"]
mod pool;
#[path = "common/scores.rs"]
mod scores;
use outprob_core::estimators::location::{checked_median, median};
use outprob_core::numeric::rank::{ranked, Key};
use outprob_core::numeric::reduce::summarize;
use outprob_core::sample::{NanPolicy, Sample};
use std::hint::black_box;
use std::time::Instant;

/// A read at memory speed: eight independent lanes.
fn plain_sum<T: Copy + Into<f64>>(x: &[T]) -> f64 {
    let mut acc = [0.0f64; 8];
    let mut it = x.chunks_exact(8);
    for g in &mut it {
        for i in 0..8 {
            acc[i] += g[i].into();
        }
    }
    acc.iter().sum::<f64>() + it.remainder().iter().map(|&v| v.into()).sum::<f64>()
}

/// One timing of each stage on `x`, each kept in `best` if faster: plain
/// sum, summary read, selection alone, `Sample::new` + median, and the
/// one-read `checked_median`.
fn time_stages<T: outprob_core::Float + Into<f64>>(x: &[T], best: &mut [f64; 5]) {
    let n = x.len();
    let mut time = |slot: usize, f: &dyn Fn()| {
        let t = Instant::now();
        f();
        best[slot] = best[slot].min(t.elapsed().as_secs_f64());
    };
    time(0, &|| {
        black_box(plain_sum(x));
    });
    time(1, &|| {
        black_box(summarize(x));
    });
    time(2, &|| {
        black_box(ranked(x, n, Key::VALUE, &[n / 2 - 1, n / 2]));
    });
    time(3, &|| {
        black_box(median(&Sample::new(x, NanPolicy::Omit, false).unwrap()));
    });
    time(4, &|| {
        black_box(checked_median(x, NanPolicy::Omit, false).unwrap());
    });
}

fn main() {
    pool::in_pool(None, profile);
}

fn profile() {
    let n = std::env::args()
        .nth(1)
        .map_or(10_000_000, |a| a.parse::<f64>().expect("N") as usize);
    let x = scores::long_tailed(n);
    let y: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let mut best = [[f64::INFINITY; 5]; 2];
    let ns = |t: f64| t * 1e9 / n as f64;
    for _ in 0..9 {
        time_stages(&x, &mut best[0]);
        time_stages(&y, &mut best[1]);
    }
    for (b, name) in best.iter().zip(["f64", "f32"]) {
        println!(
            "{name} n={n}: sum {:.3} ns  summarize {:.3} ns  ranked {:.3} ns  Sample::new+median {:.3} ns  checked_median {:.3} ns/score  (median/sum {:.2}x)",
            ns(b[0]), ns(b[1]), ns(b[2]), ns(b[3]), ns(b[4]), b[4] / b[0]
        );
    }
}
