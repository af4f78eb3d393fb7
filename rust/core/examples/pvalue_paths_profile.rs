//! Wall time of the contract §11/§13 p-value paths against the plain
//! conformal p-value, on the data of `benches/conformal_labelled.py`
//! (normal calibration and × 1.2 test scores; (a, b) pairs of 2-D normal
//! points for the integrative path). Run with
//! `cargo run --release -p outprob-core --example pvalue_paths_profile [n_cal] [n_test] [which]`;
//! times are CPU seconds of the process (every thread).

#[path = "common/scores.rs"]
mod scores;
use outprob_core::conformal::calibration::{Calibration, ConformalSpec};
use outprob_core::conformal::integrative::IntegrativeCalibration;
use outprob_core::conformal::pvalues::TieBreak;
use outprob_core::conformal::tails::{TailFit, TailKind, TailSpec};
use outprob_core::sample::NanPolicy;
use std::hint::black_box;
use std::time::Instant;

/// (a, b) of 2-D normal points about (c, c): distance to the origin and
/// minus the distance to (2.5, 2.5).
fn pairs(n: usize, c: f64, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let x = scores::normals(2 * n, seed);
    x.chunks(2)
        .map(|p| {
            let (u, v) = (p[0] + c, p[1] + c);
            (
                (u * u + v * v).sqrt(),
                -((u - 2.5).powi(2) + (v - 2.5).powi(2)).sqrt(),
            )
        })
        .unzip()
}

/// This process's CPU time in seconds (every thread).
fn process_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &raw mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// The best process CPU seconds over `runs` calls (on a shared machine
/// wall time counts the waits for a core); the wall time is printed.
fn best(runs: usize, f: &mut dyn FnMut()) -> f64 {
    let (mut b, mut w) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..runs {
        let (t, c) = (Instant::now(), process_seconds());
        f();
        b = b.min(process_seconds() - c);
        w = w.min(t.elapsed().as_secs_f64());
    }
    eprintln!("  (wall {w:.4} s)");
    b
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(1_000_000, |s| s.parse().unwrap());
    let m: usize = args.next().map_or(10_000_000, |s| s.parse().unwrap());
    let which = args.next().unwrap_or_else(|| "all".into());
    let runs = 3;
    let cal = scores::normals(n, 1);
    let x: Vec<f64> = scores::normals(m, 2).iter().map(|v| 1.2 * v).collect();
    let mut out = vec![0.0; m];
    let spec = ConformalSpec::new(TieBreak::Classical, None, 0.05, None, None).unwrap();
    let mut plain = || {
        let mut s = cal.clone();
        s.sort_unstable_by(f64::total_cmp);
        let c = Calibration::from_sorted(&s, &spec, false).unwrap();
        c.pvalues(false).map(&x, &mut out).unwrap();
        black_box(&out);
    };
    let t_plain = best(runs, &mut plain);
    println!("plain fit+pvalues: {t_plain:.4} s");
    if which == "plain" {
        let mut s = cal.clone();
        s.sort_unstable_by(f64::total_cmp);
        let mut fitted = None;
        let t_index = best(runs, &mut || {
            fitted = Some(Calibration::from_sorted(&s, &spec, false).unwrap());
        });
        let c = fitted.unwrap();
        let t_map = best(runs, &mut || c.pvalues(false).map(&x, &mut out).unwrap());
        println!("plain: calibration (copy + index) {t_index:.4} s, map {t_map:.4} s");
    }
    if which == "all" || which == "integrative" {
        let (ia, ib) = pairs(n, 0.0, 3);
        let (_, ob) = pairs(n / 10, 2.5, 4);
        let (ta, tb) = pairs(m, 0.0, 5);
        let mut fit = None;
        let t_fit = best(runs, &mut || {
            fit = Some(IntegrativeCalibration::new(&ia, &ib, &ob, NanPolicy::Omit, false).unwrap());
        });
        let c = fit.unwrap();
        let t_p = best(runs, &mut || c.pvalues(&ta, &tb, false, &mut out).unwrap());
        println!(
            "integrative fit {t_fit:.4} s + pvalues {t_p:.4} s = {:.2}× plain",
            (t_fit + t_p) / t_plain
        );
    }
    for (name, kind) in [
        ("gpd", TailKind::Gpd),
        ("gaussian", TailKind::Gaussian),
        ("gamma", TailKind::Gamma),
    ] {
        if which != "all" && which != name {
            continue;
        }
        let t = best(runs, &mut || {
            let mut s = cal.clone();
            s.sort_unstable_by(f64::total_cmp);
            let c = Calibration::from_sorted(&s, &spec, false).unwrap();
            let tail = TailFit::fit(
                &s,
                &TailSpec {
                    kind,
                    quantile: 0.9,
                    delta: 0.05,
                },
            )
            .unwrap();
            tail.pvalues(c.pvalues(false), false)
                .map(&x, &mut out)
                .unwrap();
            black_box(&out);
        });
        println!("tail {name}: {t:.4} s = {:.2}× plain", t / t_plain);
    }
}
