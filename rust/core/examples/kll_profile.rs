//! Where a KLL sketch spends its time: the batch update (10 batches, as
//! the benchmark suite feeds it), merge, quantile and serialise, best of
//! several runs, in ns per score (update) or µs per call. Run with
//! `cargo run --release -p outprob-core --example kll_profile [N] [k] [f32]`;
//! under `valgrind --tool=callgrind` pass `once` to run a single update, and
//! under `perf record` set `KLL_UPDATE_ONLY=1` to run the update alone;
//! `KLL_BATCH=B` feeds batches of B scores instead of 10 batches.

#[path = "common/cpu_time.rs"]
mod cpu_time;
#[path = "common/scores.rs"]
mod scores;
use outprob_core::streaming::kll::serde::{deserialize, serialize};
use outprob_core::streaming::kll::{Item, KllSketch};
use std::hint::black_box;
use std::time::Instant;

/// The smallest wall and CPU time of `runs` calls.
fn best<R>(runs: usize, mut f: impl FnMut() -> R) -> f64 {
    let (mut wall, mut cpu) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..runs {
        let (s, c) = (Instant::now(), cpu_time::thread_seconds());
        black_box(f());
        cpu = cpu.min(cpu_time::thread_seconds() - c);
        wall = wall.min(s.elapsed().as_secs_f64());
    }
    let _ = wall;
    cpu
}

fn profile<T: Item>(x: &[T], k: u16, once: bool) {
    let n = x.len();
    // KLL_BATCH=8192 feeds the batches `outprob stream` makes.
    let size = std::env::var("KLL_BATCH")
        .ok()
        .map_or(n.div_ceil(10), |b| b.parse().expect("KLL_BATCH"));
    let build = |seed: u64, part: &[T]| {
        let mut s = KllSketch::<T>::new(k, seed).expect("k");
        for c in part.chunks(size.max(1)) {
            s.update(c);
        }
        s
    };
    if once {
        black_box(build(1, x));
        return;
    }
    if std::env::var_os("KLL_UPDATE_ONLY").is_some() {
        // For a sampling profiler: the update alone, many times.
        for seed in 0..30 {
            black_box(build(seed, x));
        }
        return;
    }
    let t = best(7, || build(1, x));
    println!("update      {:8.2} ns/score", t * 1e9 / n as f64);
    let half = n / 2;
    let (a, b) = (build(1, &x[..half]), build(2, &x[half..]));
    let t = best(200, || {
        let mut m = a.clone();
        m.merge(&b);
        m
    });
    println!("merge       {:8.2} µs", t * 1e6);
    let s = build(1, x);
    let ranks: Vec<f64> = (1..100).map(|i| f64::from(i) / 100.0).collect();
    let t = best(200, || {
        let v = s.sorted_view().expect("non-empty");
        ranks
            .iter()
            .map(|&r| v.quantile(r, true).expect("rank"))
            .sum::<f64>()
    });
    println!("quantile×99 {:8.2} µs", t * 1e6);
    let t = best(200, || serialize(&s));
    println!("serialise   {:8.2} µs", t * 1e6);
    let bytes = serialize(&s);
    let t = best(200, || deserialize::<T>(&bytes).expect("bytes"));
    println!("deserialise {:8.2} µs", t * 1e6);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n = args
        .first()
        .map_or(10_000_000, |a| a.parse::<f64>().expect("N") as usize);
    let k = args.get(1).map_or(800, |a| a.parse().expect("k"));
    let f32_items = args.iter().any(|a| a == "f32");
    let once = args.iter().any(|a| a == "once");
    let x = scores::long_tailed(n);
    if f32_items {
        let x: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        profile(&x, k, once);
    } else {
        profile(&x, k, once);
    }
}
