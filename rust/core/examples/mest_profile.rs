//! An M-estimate's time per N and norm, on the benchmark suite's
//! long-tailed scores: Huber's and Tukey's fits (`m_estimate`, or with
//! `--direct` the direct path, `m_estimate_direct`) and, for scale, a
//! median + nMAD fit of the same scores.
//!
//! ```text
//! cargo run --release -p outprob-core --example mest_profile -- [--threads T] [--direct] [--json] [N …]
//! ```
//!
//! Sizes default to 1e2 … 1e7. Each fit is timed a few times after one
//! untimed call (more at small N, two at 1e8); `--json` prints one line
//! per (N, fit) with every time, for `benches/ablation.py`, which runs this
//! example built with each layer of the M-estimation switched off.

#[path = "common/pool.rs"]
mod pool;
#[path = "common/scores.rs"]
mod scores;
use outprob_core::estimators::location::median;
use outprob_core::estimators::mest::{m_estimate, m_estimate_direct, MParams, Norm};
use outprob_core::estimators::scale::nmad_about_median;
use outprob_core::sample::{NanPolicy, Sample};
use std::time::Instant;

/// Seconds of timed calls per fit and size (at least `MIN_REPS` calls).
const BUDGET: f64 = 0.25;
const MIN_REPS: usize = 3;
const MAX_REPS: usize = 400;

struct Args {
    threads: usize,
    direct: bool,
    json: bool,
    sizes: Vec<usize>,
}

fn args() -> Args {
    let mut a = Args {
        threads: 1,
        direct: false,
        json: false,
        sizes: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--threads" => a.threads = it.next().and_then(|t| t.parse().ok()).expect("--threads T"),
            "--direct" => a.direct = true,
            "--json" => a.json = true,
            n => a
                .sizes
                .push(n.parse::<f64>().expect("a size such as 1e4") as usize),
        }
    }
    if a.sizes.is_empty() {
        a.sizes = vec![100, 1000, 10_000, 100_000, 1_000_000, 10_000_000];
    }
    a
}

/// The process's CPU time in seconds (all threads): on a shared machine
/// the time a call runs, where its wall time also counts the time others
/// ran. Wall time elsewhere.
fn cpu_seconds() -> f64 {
    #[cfg(target_os = "linux")]
    {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `t` is a valid timespec to write to.
        if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &raw mut t) } == 0 {
            return t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9;
        }
    }
    START.with(|s| s.elapsed().as_secs_f64())
}

thread_local! {
    static START: Instant = Instant::now();
}

/// Wall and CPU seconds of one call of `f`.
fn once(f: &mut impl FnMut()) -> (f64, f64) {
    let (t, c) = (Instant::now(), cpu_seconds());
    f();
    (t.elapsed().as_secs_f64(), cpu_seconds() - c)
}

/// The wall and CPU times of several calls of `f` after an untimed one (as
/// many as fit in [`BUDGET`], within the bounds; two where one call takes
/// a second or more).
fn times(mut f: impl FnMut()) -> Vec<(f64, f64)> {
    let (first, _) = once(&mut f);
    let reps = if first >= 1.0 {
        2
    } else {
        ((BUDGET / first) as usize).clamp(MIN_REPS, MAX_REPS)
    };
    (0..reps).map(|_| once(&mut f)).collect()
}

/// The median wall time.
fn median_of(v: &[(f64, f64)]) -> f64 {
    let mut s: Vec<f64> = v.iter().map(|t| t.0).collect();
    s.sort_by(f64::total_cmp);
    s[s.len() / 2]
}

fn main() {
    let a = args();
    pool::in_pool(Some(a.threads), || profile(&a));
}

fn profile(a: &Args) {
    for &n in &a.sizes {
        let x = scores::long_tailed(n);
        let s = Sample::new(&x, NanPolicy::Omit, false).expect("scores");
        let base = times(|| {
            let m = median(&s);
            std::hint::black_box(nmad_about_median(&s, m));
        });
        report(a, n, "median_nmad", &base, None);
        for norm in [Norm::Huber, Norm::Tukey] {
            let p = MParams {
                maxiter: 100,
                ..MParams::new(norm)
            };
            let fit = |s: &Sample<'_, f64>| {
                if a.direct {
                    m_estimate_direct(s, &p)
                } else {
                    m_estimate(s, &p)
                }
                .expect("an estimate")
            };
            let t = times(|| {
                std::hint::black_box(fit(&s));
            });
            let est = fit(&s);
            let what = format!("{}{}", norm.name(), if a.direct { " direct" } else { "" });
            let summary = format!(
                "n_iter {} converged {} location {:e} scale {:e}",
                est.n_iter, est.converged, est.location, est.scale
            );
            let ratio = median_of(&t) / median_of(&base);
            report(a, n, &what, &t, Some((ratio, summary)));
        }
    }
}

fn report(a: &Args, n: usize, what: &str, t: &[(f64, f64)], fit: Option<(f64, String)>) {
    if a.json {
        let list = |f: fn(&(f64, f64)) -> f64| {
            let v: Vec<String> = t.iter().map(|x| format!("{:e}", f(x))).collect();
            v.join(", ")
        };
        println!(
            "{{\"n\": {n}, \"fit\": \"{what}\", \"threads\": {}, \"wall\": [{}], \"cpu\": [{}]}}",
            a.threads,
            list(|x| x.0),
            list(|x| x.1)
        );
    } else if let Some((ratio, summary)) = fit {
        println!(
            "n={n:>10} {what:>12}: median {:10.1} us = {ratio:6.2}x median+nmad; {summary}",
            median_of(t) * 1e6
        );
    }
}
