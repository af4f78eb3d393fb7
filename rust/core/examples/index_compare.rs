//! The search index against a binary search on its two query patterns,
//! one thread, its CPU seconds (best of 5): conformal (10⁶ normal calibration scores,
//! 10⁷ test scores × 1.2) and rank (10⁶ fitted long-tailed scores, 10⁷
//! new ones from the same law), plus a cache-resident 10⁴ of each.
//! `cargo run --release -p outprob-core --example index_compare [n] [m]`.
//! (At 89bff6d, before the two indexes became one, this example measured
//! the bucket-table index against the line index: the figures are in
//! `outprob_core::numeric::search_index`'s doc.)

#[path = "common/cpu_time.rs"]
mod cpu_time;
#[path = "common/scores.rs"]
mod scores;
use outprob_core::numeric::search_index::{SearchIndex, GROUP};
use std::hint::black_box;

fn compare(name: &str, mut s: Vec<f64>, x: &[f64]) {
    s.sort_unstable_by(f64::total_cmp);
    let mut counts = vec![0usize; x.len()];
    let (mut bt, mut qt, mut ql) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
    for _ in 0..5 {
        let c = cpu_time::thread_seconds();
        let index = black_box(SearchIndex::new(&s));
        bt = bt.min(cpu_time::thread_seconds() - c);
        let c = cpu_time::thread_seconds();
        for (q, o) in x.chunks(GROUP).zip(counts.chunks_mut(GROUP)) {
            index.lower_bounds(&s, q, o);
        }
        qt = qt.min(cpu_time::thread_seconds() - c);
        let sum: usize = counts.iter().sum();
        let c = cpu_time::thread_seconds();
        for (&q, o) in x.iter().zip(counts.iter_mut()) {
            *o = s.partition_point(|&v| v < q);
        }
        ql = ql.min(cpu_time::thread_seconds() - c);
        assert_eq!(sum, counts.iter().sum::<usize>());
    }
    let per = 1e9 / x.len() as f64;
    println!(
        "{name}: index build {bt:.4} s, {:.2} ns/query; binary search {:.2} ns/query ({:.2}× faster queries)",
        qt * per,
        ql * per,
        ql / qt
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(1_000_000, |s| s.parse().unwrap());
    let m: usize = args.next().map_or(10_000_000, |s| s.parse().unwrap());
    let x: Vec<f64> = scores::normals(m, 2).iter().map(|v| 1.2 * v).collect();
    compare("conformal 10^6 x 10^7", scores::normals(n, 1), &x);
    let tail = scores::long_tailed(n + m);
    compare("rank 10^6 x 10^7", tail[..n].to_vec(), &tail[n..]);
    compare("conformal 10^4 x 10^7", scores::normals(10_000, 1), &x);
    compare("rank 10^4 x 10^7", tail[..10_000].to_vec(), &tail[n..]);
}
