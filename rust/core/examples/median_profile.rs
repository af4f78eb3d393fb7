//! Where the median's time goes at large N (issue #11): one thread, against
//! a plain sum (one read) of the same scores. Run with
//! `RAYON_NUM_THREADS=1 cargo run --release -p outprob-core --example median_profile [N]`.

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

fn main() {
    let n = std::env::args()
        .nth(1)
        .map_or(10_000_000, |a| a.parse::<f64>().expect("N") as usize);
    let x = scores::long_tailed(n);
    let y: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let [mut best_sum, mut best_summ, mut best_ranked, mut best_median, mut best_checked] =
        [[f64::INFINITY; 2]; 5];
    let ns = |t: f64| t * 1e9 / n as f64;
    for _ in 0..9 {
        macro_rules! time {
            ($slot:expr, $e:expr) => {{
                let t = Instant::now();
                black_box($e);
                $slot = $slot.min(t.elapsed().as_secs_f64());
            }};
        }
        time!(best_sum[0], plain_sum(&x));
        time!(best_summ[0], summarize(&x));
        time!(
            best_ranked[0],
            ranked(&x, n, Key::VALUE, &[n / 2 - 1, n / 2])
        );
        time!(
            best_median[0],
            median(&Sample::new(&x, NanPolicy::Omit, false).unwrap())
        );
        time!(
            best_checked[0],
            checked_median(&x, NanPolicy::Omit, false).unwrap()
        );
        time!(best_sum[1], plain_sum(&y));
        time!(best_summ[1], summarize(&y));
        time!(
            best_ranked[1],
            ranked(&y, n, Key::VALUE, &[n / 2 - 1, n / 2])
        );
        time!(
            best_median[1],
            median(&Sample::new(&y, NanPolicy::Omit, false).unwrap())
        );
        time!(
            best_checked[1],
            checked_median(&y, NanPolicy::Omit, false).unwrap()
        );
    }
    for (i, name) in ["f64", "f32"].iter().enumerate() {
        println!(
            "{name} n={n}: sum {:.3} ns  summarize {:.3} ns  ranked {:.3} ns  Sample::new+median {:.3} ns  checked_median {:.3} ns/score  (median/sum {:.2}x)",
            ns(best_sum[i]), ns(best_summ[i]), ns(best_ranked[i]), ns(best_median[i]), ns(best_checked[i]), best_checked[i] / best_sum[i]
        );
    }
}
