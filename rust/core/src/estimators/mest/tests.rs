//! Unit tests of Huber's proposal 2 (`mest.rs`).
use super::*;
use crate::sample::NanPolicy;
use direct::Direct;
use sorted::Sorted;

fn m_estimate<T: Float>(x: &mut [T], p: &MParams) -> Result<MEstimate, Error> {
    super::m_estimate(&Sample::new(x, NanPolicy::Omit, false)?, p)
}

/// The data of statsmodels' `Huber` docstring example.
const CHEM: [f64; 24] = [
    2.20, 2.20, 2.4, 2.4, 2.5, 2.7, 2.8, 2.9, 3.03, 3.03, 3.10, 3.37, 3.4, 3.4, 3.4, 3.5, 3.6, 3.7,
    3.7, 3.7, 3.7, 3.77, 5.28, 28.95,
];

#[test]
fn estimates_are_equivariant_under_powers_of_two() {
    let base = [1.0, 2.0, 6.0, 40.0, 3.0, 2.5, 2.25, -7.0];
    for norm in [Norm::Huber, Norm::Tukey] {
        let p = MParams::new(norm);
        let want = m_estimate(&mut base.clone(), &p).unwrap();
        for k in [-1070, -1000, -500, 500, 1000, 1015] {
            let mut x: Vec<f64> = base.iter().map(|&v| ldexp(v, k)).collect();
            let got = m_estimate(&mut x, &p).unwrap();
            assert_eq!(
                (got.location, got.scale, got.n_iter, got.converged),
                (
                    ldexp(want.location, k),
                    ldexp(want.scale, k),
                    want.n_iter,
                    want.converged
                ),
                "{norm:?} 2^{k}"
            );
        }
    }
}

#[test]
fn a_scale_beyond_the_double_range_is_refused() {
    // The start (nMAD) is finite, the iteration's scale is not (contract
    // §5: refused, as fit_gaussian refuses it).
    let x = [
        7.872_883_272_189_519e307,
        1.476_165_613_535_534_9e308,
        -1.761_557_632_152_405e308,
    ];
    for norm in [Norm::Huber, Norm::Tukey] {
        let e = m_estimate(&mut x.clone(), &MParams::new(norm)).unwrap_err();
        assert!(e.to_string().contains("exceeds the double range"), "{e}");
    }
}

#[test]
fn gamma_matches_statsmodels() {
    // statsmodels.robust.scale.Huber().gamma
    let g = MParams::new(Norm::Huber).gamma();
    assert!((g - 0.778_465_216_174_470_1).abs() < 1e-15, "{g}");
}

#[test]
fn chem_data_converges() {
    for norm in [Norm::Huber, Norm::Tukey] {
        let mut x = CHEM;
        let est = m_estimate(&mut x, &MParams::new(norm)).unwrap();
        assert!(est.converged, "{norm:?}: {est:?}");
        assert_eq!(est.start, StartScale::Nmad);
        // statsmodels 0.15: Huber(norm=HuberT() / TukeyBiweight())(chem)
        let (loc, scale) = match norm {
            Norm::Huber => (3.204_999_999_999_999, 0.673_541_420_730_253_6),
            Norm::Tukey => (3.159_902_476_244_217, 0.665_936_493_223_614_4),
        };
        assert!((est.location - loc).abs() < 1e-9 * scale, "{est:?}");
        assert!((est.scale - scale).abs() < 1e-9 * scale, "{est:?}");
    }
}

#[test]
fn constant_and_tied_data() {
    let mut c = [2.0; 5];
    let est = m_estimate(&mut c, &MParams::new(Norm::Huber)).unwrap();
    assert_eq!(
        (est.location, est.scale, est.start),
        (2.0, 0.0, StartScale::Constant)
    );
    // More than half tie: nMAD = 0, the nIQR starts the iteration.
    let mut t = [1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 3.0, 4.0];
    let est = m_estimate(&mut t, &MParams::new(Norm::Huber)).unwrap();
    assert_eq!(est.start, StartScale::Niqr);
    assert!(est.scale > 0.0 && est.scale.is_finite());
}

#[test]
fn non_convergence_is_reported() {
    let mut x = CHEM;
    let p = MParams {
        maxiter: 2,
        ..MParams::new(Norm::Huber)
    };
    let est = m_estimate(&mut x, &p).unwrap();
    assert!(!est.converged);
    assert_eq!(est.n_iter, 2);
    assert!(est.location.is_finite() && est.scale > 0.0);
}

#[test]
fn single_value_does_not_divide_by_zero() {
    let est = m_estimate(&mut [4.0], &MParams::new(Norm::Tukey)).unwrap();
    assert_eq!((est.location, est.scale), (4.0, 0.0));
    // Two values: N − 1 = 1 is fine.
    let est = m_estimate(&mut [1.0, 2.0], &MParams::new(Norm::Huber)).unwrap();
    assert!(est.scale > 0.0 && est.scale.is_finite());
}

pub(super) fn synthetic(n: usize, kind: u8, seed: u64) -> Vec<f64> {
    let mut next = crate::numeric::testing::uniforms(seed | 1);
    (0..n)
        .map(|i| {
            let u = next();
            match kind {
                // lognormal-ish bulk with 3% far outliers
                0 => {
                    if i % 33 == 0 {
                        50.0 + 400.0 * u
                    } else {
                        (2.0 * next() - 1.0 + u).exp()
                    }
                }
                // symmetric, heavy tails
                1 => (u - 0.5) / (next() + 1e-3),
                // heavy ties
                2 => (u * 6.0).floor(),
                // tiny magnitudes
                3 => 1e-150 * (1.0 + u),
                // huge magnitudes, offset
                _ => 1e150 * (3.0 + u * u),
            }
        })
        .collect()
}

/// `got` ends where the direct iteration `want` does: location and scale
/// within `rel` (the location in units of |μ| + σ), the same convergence,
/// steps within one.
fn assert_follows(got: &MEstimate, want: &MEstimate, rel: f64, what: &str) {
    let tol = rel * (want.location.abs() + want.scale);
    assert!(
        (want.location - got.location).abs() <= tol,
        "{what}: {want:?} {got:?}"
    );
    assert!(
        (want.scale - got.scale).abs() <= rel * want.scale,
        "{what}: {want:?} {got:?}"
    );
    assert_eq!(want.converged, got.converged, "{what}");
    assert!(
        want.n_iter.abs_diff(got.n_iter) <= 1,
        "{what}: {want:?} {got:?}"
    );
}

/// `(μ₀, σ₀, start)` of `m_estimate`, or None for constant scores (no
/// iteration).
fn iteration_start(sample: &Sample<'_, f64>) -> Option<(f64, f64, StartScale)> {
    let mu0 = median(sample);
    let (sigma0, start) = start_scale(sample, mu0).unwrap();
    (start != StartScale::Constant).then_some((mu0, sigma0, start))
}

/// The bucket-moment sums reproduce the direct iteration.
#[test]
fn bucketed_sums_follow_the_direct_iteration() {
    for kind in 0..5u8 {
        for (n, seed) in [(20_000, 1u64), (70_001, 2)] {
            let x = synthetic(n, kind, seed);
            let sample = Sample::new(&x, NanPolicy::Omit, kind == 1).unwrap();
            let Some((mu0, sigma0, start)) = iteration_start(&sample) else {
                continue;
            };
            let values = sample.to_vec();
            let blocks = Blocks::new(&sample);
            for norm in [Norm::Huber, Norm::Tukey] {
                let p = MParams {
                    maxiter: 200,
                    ..MParams::new(norm)
                };
                let d = iterate(&Direct(&values), &p, mu0, sigma0, start);
                let b = iterate(&blocks, &p, mu0, sigma0, start);
                assert_follows(&b, &d, 1e-11, &format!("{kind} {n} {norm:?}"));
                // As `m_estimate` builds them: the band about the starting
                // windows gathered, the bulk the fit's, none, or wider than
                // the windows (its leaf is then cut and read), the far tails
                // the fit's, none, or within the windows' reach (read too).
                for (bulk, far) in [(0.0, 0.0), (0.8, 2.0), (3.0, 2.0), (0.8, 0.0), (0.8, 0.6)] {
                    let expect = Expect {
                        location: mu0,
                        scale: sigma0,
                        widths: [p.tuning, p.c],
                        bulk: bulk * p.tuning.min(p.c),
                        far: far * p.tuning.max(p.c),
                    };
                    let blocks = Blocks::scaled(&sample, 0, norm == Norm::Huber, Some(expect));
                    let b = iterate(&blocks, &p, mu0, sigma0, start);
                    let what = format!("{kind} {n} {norm:?} bulk {bulk} far {far}");
                    assert_follows(&b, &d, 1e-11, &what);
                }
            }
        }
    }
}

/// The sums over sorted scores (prefix power sums, binomial shifts, the
/// windows' edges searched from the last ones) reproduce the direct
/// iteration, on the scaled scores `m_estimate` runs them on.
#[test]
fn sorted_sums_follow_the_direct_iteration() {
    for kind in 0..5u8 {
        for (n, seed) in [(2, 7u64), (37, 1), (300, 2), (5001, 3)] {
            let x = synthetic(n, kind, seed);
            let sample = Sample::new(&x, NanPolicy::Omit, kind == 1).unwrap();
            let Some((mu0, sigma0, start)) = iteration_start(&sample) else {
                continue;
            };
            let k = scale_exponent(&sample, sigma0);
            let values: Vec<f64> = sample.to_vec().iter().map(|&v| ldexp(v, -k)).collect();
            let (mu, sigma) = (ldexp(mu0, -k), ldexp(sigma0, -k));
            for norm in [Norm::Huber, Norm::Tukey] {
                let p = MParams {
                    maxiter: 200,
                    ..MParams::new(norm)
                };
                let d = iterate(&Direct(&values), &p, mu, sigma, start);
                // Without a bulk, with the fit's, and with one wider than
                // the windows (every step falls back to the whole sort).
                for bulk in [None, Some(0.8), Some(3.0)] {
                    let bulk = bulk.map(|f| (mu, f * p.tuning.min(p.c) * sigma));
                    let sorted = Sorted::new(values.clone(), norm, bulk);
                    let s = iterate(&sorted, &p, mu, sigma, start);
                    assert_follows(&s, &d, 1e-12, &format!("{kind} {n} {norm:?} {bulk:?}"));
                }
            }
        }
    }
}

/// A window's sums are the direct sums wherever the window is, also when
/// it holds none or all of the scores, or scores far from the middle.
#[test]
fn sorted_window_sums_equal_direct_sums() {
    let x = synthetic(1000, 0, 11);
    for (norm, bulk) in [Norm::Huber, Norm::Tukey]
        .into_iter()
        .flat_map(|n| [(n, None), (n, Some((1.0, 0.5)))])
    {
        let p = MParams::new(norm);
        let sorted = Sorted::new(x.clone(), norm, bulk);
        let windows = [
            (1.0, 1.0),
            (1.5, 0.3),
            (0.9, 2.0),
            (2.0, 1.0),
            (3.0, 0.5),
            (-50.0, 1.0),
            (300.0, 20.0),
            (1.2, 1e3),
        ];
        for &(m, sigma) in &windows {
            let (a, b) = (
                Direct(&x).location(&p, m, sigma),
                sorted.location(&p, m, sigma),
            );
            let scale = a.0.abs().max(1.0);
            assert!(
                (a.0 - b.0).abs() <= 1e-12 * scale,
                "{norm:?} {bulk:?} {m} {sigma}: {a:?} {b:?}"
            );
            assert!(
                (a.1 - b.1).abs() <= 1e-12 * (a.1.abs() + sigma * scale),
                "{a:?} {b:?}"
            );
            let (a, b) = (
                Direct(&x).scale(1.5, m, sigma, m + 0.1),
                sorted.scale(1.5, m, sigma, m + 0.1),
            );
            assert_eq!(a.1, b.1);
            assert!((a.0 - b.0).abs() <= 1e-12 * a.0.max(1.0), "{a:?} {b:?}");
        }
    }
}
