//! Bin edges and bin totals for arbitrary probabilities and bin counts.

use crate::input::Input;
use outprob_core::evaluation::binning::{Scheme, Sorted, MAX_BINS};
use outprob_core::Error;

pub(crate) fn scheme(b: u8) -> Scheme {
    match b % 3 {
        0 => Scheme::Equiareal,
        1 => Scheme::EqualWidth,
        _ => Scheme::EqualFrequency,
    }
}

pub(crate) fn bin_count(r: &mut Input<'_>) -> usize {
    match r.byte() % 16 {
        0 => 0,
        1 => MAX_BINS + 1 + r.u16() as usize,
        2 => usize::MAX,
        3 => 1 << 62,
        4 => MAX_BINS,
        5 => 1000 + r.u16() as usize,
        _ => 1 + r.byte() as usize % 40,
    }
}

/// Bytes → a scheme, a bin count and probabilities; checks the edges and
/// recounts every bin directly.
pub fn binning(data: &[u8]) {
    let mut r = Input::new(data);
    let scheme = scheme(r.byte());
    let k = bin_count(&mut r);
    let mut p = Vec::new();
    while !r.is_empty() && p.len() < 4096 {
        p.push(r.probability());
    }
    let valid_p = !p.is_empty() && p.iter().all(|v| (0.0..=1.0).contains(v));
    let sorted = match Sorted::new(&p, None) {
        Ok(s) => s,
        Err(e) => {
            assert!(!valid_p, "refused valid probabilities: {e}");
            return;
        }
    };
    assert!(valid_p, "accepted invalid probabilities");
    let edges = match sorted.edges(scheme, k) {
        Ok(e) => e,
        Err(e) => {
            assert!(
                matches!(e, Error::InvalidParameter { name: "n_bins", .. })
                    && (k == 0 || k > MAX_BINS),
                "refused k = {k}: {e}"
            );
            return;
        }
    };
    assert!((1..=MAX_BINS).contains(&k), "accepted k = {k}");
    check_edges(scheme, k, &edges);
    let bins = sorted.bins(&edges);
    assert_eq!(bins.len(), edges.len() - 1);
    let mut sorted_p = p.clone();
    sorted_p.sort_by(f64::total_cmp);
    // Bins are [0, t₁], (t₁, t₂], …: a recount by the definition, walking
    // the sorted values once.
    let mut next = 0;
    for (b, w) in bins.iter().zip(edges.windows(2)) {
        let start = next;
        while next < sorted_p.len() && sorted_p[next] <= w[1] {
            next += 1;
        }
        let inside = &sorted_p[start..next];
        assert!(inside.iter().all(|&v| start == 0 || v > w[0]));
        assert_eq!(b.count, inside.len(), "bin {w:?}");
        assert_eq!(b.outliers, 0);
        let want: f64 = inside.iter().sum();
        let bound = (2.0 + inside.len() as f64) * f64::EPSILON * want;
        assert!(
            (b.sum - want).abs() <= bound,
            "bin {w:?}: sum {} vs {want}",
            b.sum
        );
    }
    assert_eq!(bins.iter().map(|b| b.count).sum::<usize>(), p.len());
}

pub(crate) fn check_edges(scheme: Scheme, k: usize, edges: &[f64]) {
    assert!(edges.len() >= 2, "{edges:?}");
    assert_eq!(edges[0], 0.0);
    assert_eq!(edges[edges.len() - 1], 1.0);
    assert!(edges.len() - 1 <= k, "{} bins for k = {k}", edges.len() - 1);
    for (i, w) in edges.windows(2).enumerate() {
        // Equal frequency keeps t₁ = 0 (a bin [0, 0] of the exact zeros).
        let tie_ok = scheme == Scheme::EqualFrequency && i == 0;
        assert!(
            w[0] < w[1] || (tie_ok && w[0] == w[1]),
            "{scheme:?} {edges:?}"
        );
    }
    if scheme == Scheme::EqualWidth {
        assert_eq!(edges.len(), k + 1);
    }
}
