//! Every evaluation measure and the reliability curve on arbitrary
//! probabilities, labels and bin counts.

use crate::binning::{bin_count, check_edges, scheme};
use crate::input::Input;
use outprob_core::evaluation::binning::{MAX_BINS, MAX_BIN_COUNTS};
use outprob_core::evaluation::metrics::{evaluate, reliability_curve, Strata};
use outprob_core::Float;

/// Bytes → a scheme, bin counts, probabilities with labels; checks every
/// measure's range and the simple ones against a direct recomputation.
pub fn metrics(data: &[u8]) {
    let mut r = Input::new(data);
    let scheme = scheme(r.byte());
    let n_ks = match r.byte() % 8 {
        0 => 0,
        1 => MAX_BIN_COUNTS + 1,
        _ => 1 + r.byte() as usize % 4,
    };
    let ks: Vec<usize> = (0..n_ks)
        .map(|_| match bin_count(&mut r) {
            // The largest counts are the binning target's; here they would
            // only slow the search down.
            k if n_ks > 4 => k.min(5),
            k @ 4097..=MAX_BINS => 4096 + k % 4096,
            k => k,
        })
        .collect();
    let as_f32 = r.byte().is_multiple_of(4);
    let (mut p, mut y) = (Vec::new(), Vec::new());
    while !r.is_empty() && p.len() < 4096 {
        y.push(r.byte() & 1 == 1);
        p.push(r.probability());
    }
    if y.len() > 1 && r.byte().is_multiple_of(64) {
        y.pop(); // a length mismatch
    }
    if as_f32 {
        let p: Vec<f32> = p.iter().map(|&v| v as f32).collect();
        check(&p, &y, scheme, &ks);
    } else {
        check(&p, &y, scheme, &ks);
    }
}

fn check<T: Float>(
    p: &[T],
    y: &[bool],
    scheme: outprob_core::evaluation::binning::Scheme,
    ks: &[usize],
) {
    let valid_p = !p.is_empty() && p.iter().all(|v| (0.0..=1.0).contains(&v.to_f64()));
    let valid_ks = !ks.is_empty()
        && ks.len() <= MAX_BIN_COUNTS
        && ks.iter().all(|k| (1..=MAX_BINS).contains(k));
    let valid = valid_p && valid_ks && p.len() == y.len();
    let e = match evaluate(p, y, scheme, ks) {
        Ok(e) => e,
        Err(err) => {
            assert!(!valid, "refused valid input: {err}");
            return;
        }
    };
    assert!(valid, "accepted invalid input");
    let n1 = y.iter().filter(|&&v| v).count();
    assert_eq!((e.n, e.n_outliers), (p.len(), n1));
    for (name, s) in [
        ("brier", e.brier),
        ("sharpness", e.sharpness),
        ("refinement", e.refinement),
        ("calibration", e.calibration),
    ] {
        check_strata(name, s, n1, p.len() - n1);
    }
    // The per-observation measures recomputed directly.
    let n = p.len() as f64;
    let brier: f64 = p
        .iter()
        .zip(y)
        .map(|(v, &t)| (v.to_f64() - f64::from(u8::from(t))).powi(2))
        .sum::<f64>()
        / n;
    assert!(
        (e.brier.all - brier).abs() <= 1e-12,
        "brier {} vs {brier}",
        e.brier.all
    );
    let entropy = |q: f64| {
        if q <= 0.0 || q >= 1.0 {
            0.0
        } else {
            -q * q.log2() - (1.0 - q) * (1.0 - q).log2()
        }
    };
    let sharp: f64 = p.iter().map(|v| entropy(v.to_f64())).sum::<f64>() / n;
    assert!(
        (e.sharpness.all - sharp).abs() <= 1e-12,
        "sharpness {} vs {sharp}",
        e.sharpness.all
    );
    // The reliability curve of the first bin count.
    let c = reliability_curve(p, y, scheme, ks[0]).expect("valid input");
    check_edges(scheme, ks[0], &c.edges);
    assert_eq!(c.count.iter().sum::<usize>(), p.len());
    for (i, &count) in c.count.iter().enumerate() {
        let (m, f) = (c.mean_probability[i], c.outlier_fraction[i]);
        assert_eq!(count == 0, m.is_nan());
        assert_eq!(count == 0, f.is_nan());
        if count > 0 {
            // A mean of values in the bin lies in it (to rounding).
            let (lo, hi) = (c.edges[i], c.edges[i + 1]);
            assert!(
                m >= lo * (1.0 - 4.0 * f64::EPSILON) && m <= hi * (1.0 + 4.0 * f64::EPSILON),
                "bin [{lo}, {hi}] mean {m}"
            );
            assert!((0.0..=1.0).contains(&f));
        }
    }
}

fn check_strata(name: &str, s: Strata, n_outliers: usize, n_inliers: usize) {
    let unit = |v: f64| (0.0..=1.0).contains(&v);
    assert!(unit(s.all), "{name}.all = {}", s.all);
    assert_eq!(
        n_outliers == 0,
        s.outlier.is_nan(),
        "{name}.outlier = {}",
        s.outlier
    );
    assert_eq!(
        n_inliers == 0,
        s.inlier.is_nan(),
        "{name}.inlier = {}",
        s.inlier
    );
    assert!(
        s.outlier.is_nan() || unit(s.outlier),
        "{name}.outlier = {}",
        s.outlier
    );
    assert!(
        s.inlier.is_nan() || unit(s.inlier),
        "{name}.inlier = {}",
        s.inlier
    );
}
