//! Where a streaming mean/SD update spends its time, per score, against
//! the in-memory fit's reads of the same scores (one thread). Run with
//! `RAYON_NUM_THREADS=1 cargo run --release -p outprob-core --example moments_profile [N] [batches] [normal]`
//! (`normal`: standard normal scores, as `benches/streaming.py` draws;
//! otherwise the suite's long-tailed ones). Times are this thread's CPU
//! time, the best of 41 runs.

#[path = "common/cpu_time.rs"]
mod cpu_time;
#[path = "common/pool.rs"]
mod pool;
#[path = "common/scores.rs"]
mod scores;
use outprob_core::estimators::location::mean;
use outprob_core::estimators::scale::std;
use outprob_core::numeric::extract::{exact_sum_within, scan_within_exponent};
use outprob_core::numeric::reduce::{spread_exponent, squares, summarize};
use outprob_core::numeric::sum::exact_sum;
use outprob_core::sample::{NanPolicy, Sample};
use outprob_core::streaming::moments::Moments;
use std::hint::black_box;

fn main() {
    pool::in_pool(None, profile);
}

fn profile() {
    let mut args = std::env::args().skip(1);
    let n = args
        .next()
        .map_or(10_000_000, |a| a.parse::<f64>().expect("N") as usize);
    let batches = args.next().map_or(10, |a| a.parse().expect("batches"));
    let x = if args.next().as_deref() == Some("normal") {
        let mut u = scores::uniforms(0x9E37_79B9_7F4A_7C15);
        (0..n)
            .map(|_| (-2.0 * u().ln()).sqrt() * (std::f64::consts::TAU * u()).cos())
            .collect()
    } else {
        scores::long_tailed(n)
    };
    let mut best = [f64::INFINITY; 7];
    let mut time = |slot: usize, f: &dyn Fn()| {
        let t = cpu_time::thread_seconds();
        f();
        best[slot] = best[slot].min(cpu_time::thread_seconds() - t);
    };
    let size = n.div_ceil(batches);
    // The range a running state has seen: 2^e above every score.
    let e = (x.iter().fold(0.0f64, |m, v| m.max(v.abs())).log2().floor() as i32) + 1;
    for _ in 0..41 {
        time(0, &|| {
            black_box(summarize(&x));
        });
        time(1, &|| {
            black_box(exact_sum(&x));
        });
        time(5, &|| {
            black_box(exact_sum_within(&x, 2000.0));
        });
        time(6, &|| {
            black_box(scan_within_exponent(&x, e));
        });
        time(2, &|| {
            let s = summarize(&x);
            let k = spread_exponent(s.min, s.max, 1.0);
            black_box(squares(&x, false, 1.0, k, f64::INFINITY));
        });
        time(3, &|| {
            let s = Sample::new(&x, NanPolicy::Omit, false).unwrap();
            black_box((mean(&s), std(&s, 0).unwrap()));
        });
        time(4, &|| {
            let mut m = Moments::new();
            for c in x.chunks(size) {
                m.update(c, NanPolicy::Omit).unwrap();
            }
            black_box((m.mean().unwrap(), m.std(0).unwrap()));
        });
    }
    let ns = |t: f64| t * 1e9 / n as f64;
    println!(
        "n={n} in {batches} batches, ns/score: summarize {:.3}  exact_sum {:.3}  extraction {:.3}  \
         census+extraction in one read {:.3}  squares {:.3}  in-memory mean+std {:.3}  \
         Moments::update {:.3}  (update/in-memory {:.2}x)",
        ns(best[0]), ns(best[1]), ns(best[5]), ns(best[6]), ns(best[2]), ns(best[3]), ns(best[4]),
        best[4] / best[3]
    );
}
