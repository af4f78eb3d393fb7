//! Times one KLL implementation of two on the scores of a file, the four
//! operations of `benches/kll.py`, and prints one JSON object:
//!
//! ```text
//! kll-crate-bench (ours|crate) SCORES.f64 K BATCHES RUNS [CPP_BYTES OUT_BYTES]
//! ```
//!
//! `update`: the scores into an empty sketch in BATCHES equal batches (the
//! crate takes one item at a time: it has no batch update); `merge`: the
//! sketches of the batches into an empty one; `quantile`: 99 quantiles
//! (the sorted view built once) of the whole sketch; `serialize` and
//! `deserialize`: its DataSketches bytes. Each is the smallest CPU time of
//! RUNS runs. With CPP_BYTES (a C++ sketch's bytes) the implementation
//! reads them and writes them back to OUT_BYTES, for the script to compare.

#[path = "../../../rust/core/examples/common/cpu_time.rs"]
mod cpu_time;
use std::hint::black_box;
use std::time::Instant;

/// Smallest CPU and wall seconds of `runs` calls of `f` (after `setup`).
fn best<S, R>(runs: usize, mut setup: impl FnMut() -> S, mut f: impl FnMut(S) -> R) -> (f64, f64) {
    let (mut cpu, mut wall) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..runs {
        let s = setup();
        let (c, w) = (cpu_time::thread_seconds(), Instant::now());
        black_box(f(s));
        cpu = cpu.min(cpu_time::thread_seconds() - c);
        wall = wall.min(w.elapsed().as_secs_f64());
    }
    (cpu, wall)
}

/// What one implementation does.
trait Sketch: Clone {
    fn new(k: u16) -> Self;
    fn update(&mut self, x: &[f64]);
    fn merge(&mut self, other: &Self);
    fn quantiles(&self, ranks: &[f64]) -> Vec<f64>;
    fn serialize(&self) -> Vec<u8>;
    fn deserialize(b: &[u8]) -> Self;
    fn n(&self) -> u64;
}

impl Sketch for outprob_core::streaming::kll::KllSketch<f64> {
    fn new(k: u16) -> Self {
        Self::new(k, 0).expect("k")
    }
    fn update(&mut self, x: &[f64]) {
        self.update(x);
    }
    fn merge(&mut self, other: &Self) {
        self.merge(other);
    }
    fn quantiles(&self, ranks: &[f64]) -> Vec<f64> {
        let v = self.sorted_view().expect("non-empty");
        ranks.iter().map(|&r| v.quantile(r, true).expect("rank")).collect()
    }
    fn serialize(&self) -> Vec<u8> {
        outprob_core::streaming::kll::serde::serialize(self)
    }
    fn deserialize(b: &[u8]) -> Self {
        outprob_core::streaming::kll::serde::deserialize(b).expect("bytes")
    }
    fn n(&self) -> u64 {
        self.n()
    }
}

type Crate = datasketches::kll::KllSketch<datasketches::kll::KllFloat<f64>>;

impl Sketch for Crate {
    fn new(k: u16) -> Self {
        Crate::new(k).expect("k")
    }
    fn update(&mut self, x: &[f64]) {
        for &v in x {
            if let Ok(v) = datasketches::kll::KllFloat::<f64>::new(v) {
                self.update(v);
            }
        }
    }
    fn merge(&mut self, other: &Self) {
        Crate::merge(self, other).expect("merge");
    }
    fn quantiles(&self, ranks: &[f64]) -> Vec<f64> {
        let q = Crate::quantiles(self, ranks, datasketches::common::SearchCriteria::Inclusive);
        q.expect("ranks").expect("non-empty").into_iter().map(|v| *v).collect()
    }
    fn serialize(&self) -> Vec<u8> {
        Crate::serialize(self)
    }
    fn deserialize(b: &[u8]) -> Self {
        Crate::deserialize(b).expect("bytes")
    }
    fn n(&self) -> u64 {
        Crate::n(self)
    }
}

fn run<S: Sketch>(name: &str, x: &[f64], k: u16, batches: usize, runs: usize, bytes: Option<(String, String)>) {
    let size = x.len().div_ceil(batches);
    let build = |part: &[f64]| {
        let mut s = S::new(k);
        for c in part.chunks(size) {
            s.update(c);
        }
        s
    };
    let update = best(runs, || (), |()| build(x));
    let parts: Vec<S> = x
        .chunks(size)
        .map(|c| {
            let mut s = S::new(k);
            s.update(c);
            s
        })
        .collect();
    let merge = best(runs, || (), |()| {
        let mut s = S::new(k);
        for p in &parts {
            s.merge(p);
        }
        s
    });
    let whole = build(x);
    let ranks: Vec<f64> = (1..100).map(|i| f64::from(i) / 100.0).collect();
    let quantile = best(runs * 20, || (), |()| whole.quantiles(&ranks));
    let serialize = best(runs * 20, || (), |()| whole.serialize());
    let b = whole.serialize();
    let deserialize = best(runs * 20, || (), |()| S::deserialize(&b));
    let median = whole.quantiles(&[0.5])[0];
    if let Some((cpp, out)) = bytes {
        let theirs = std::fs::read(cpp).expect("C++ bytes");
        let back = S::deserialize(&theirs).serialize();
        std::fs::write(out, back).expect("write bytes");
    }
    let pair = |(c, w): (f64, f64)| format!("[{c:e}, {w:e}]");
    println!(
        "{{\"impl\": \"{name}\", \"n\": {}, \"retained_bytes\": {}, \"median\": {median:e}, \
         \"update\": {}, \"merge\": {}, \"quantile\": {}, \"serialize\": {}, \"deserialize\": {}}}",
        whole.n(),
        b.len(),
        pair(update),
        pair(merge),
        pair(quantile),
        pair(serialize),
        pair(deserialize),
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let raw = std::fs::read(&args[1]).expect("scores file");
    let x: Vec<f64> = raw
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
        .collect();
    let k: u16 = args[2].parse().expect("k");
    let batches: usize = args[3].parse().expect("batches");
    let runs: usize = args[4].parse().expect("runs");
    let bytes = args.get(5).zip(args.get(6)).map(|(a, b)| (a.clone(), b.clone()));
    match args[0].as_str() {
        "ours" => run::<outprob_core::streaming::kll::KllSketch<f64>>("ours", &x, k, batches, runs, bytes),
        "crate" => run::<Crate>("crate", &x, k, batches, runs, bytes),
        other => panic!("unknown implementation {other}"),
    }
}
