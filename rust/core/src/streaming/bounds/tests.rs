use super::*;
use crate::estimators::location::{median, upper_trimmed_mean};
use crate::estimators::mest::Norm;
use crate::estimators::scale::{niqr, nmad, trimmed_std};
use crate::sample::{NanPolicy, Sample};
use crate::streaming::kll::{splitmix64, KllSketch};

fn stream(kind: u64, n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed;
    let mut u = move || {
        s = splitmix64(s);
        ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    (0..n)
        .map(|i| match kind {
            0 => u(),
            1 => (1.0 / u()).powf(1.5),                   // Pareto tail
            2 => (u() * 7.0).floor(),                     // heavy ties
            3 => u() + if i > n / 2 { 5.0 } else { 0.0 }, // shifted halfway
            _ => -(u().ln()) * 1e-200,                    // tiny, exponential
        })
        .collect()
}

#[test]
fn intervals_cover_the_exact_values() {
    let (mut total, mut covered) = (0usize, 0usize);
    for kind in 0..5 {
        for rep in 0..6u64 {
            let x = stream(kind, 30_000, 100 * kind + rep);
            let mut sk = KllSketch::<f64>::new(100, rep).unwrap();
            for c in x.chunks(997) {
                sk.update(c);
            }
            let view = sk.sorted_view().unwrap();
            let b = Brackets::new(&view, sk.normalized_rank_error(false));
            let s = Sample::new(&x, NanPolicy::Omit, false).unwrap();
            let med = b.median();
            let exact_med = median(&s);
            let mut sum = ExactSum::zero();
            sum.merge(&crate::numeric::sum::exact_sum(&x));
            let tm = b.upper_trimmed_mean(0.1, Some(&sum));
            let checks = [
                (med, exact_med),
                (b.nmad(&med), nmad(&s)),
                (b.niqr(), niqr(&s)),
                (
                    b.quantile(0.9),
                    crate::estimators::location::quantiles(&s, &[0.9])[0],
                ),
                (tm, upper_trimmed_mean(&s, 0.1).unwrap()),
                (
                    b.trimmed_std(&med, 0.1),
                    // The trimmed SD about the exact median, which the
                    // median's interval holds.
                    trimmed_std(&s, exact_med, 0.1).unwrap(),
                ),
            ];
            for (j, (est, exact)) in checks.iter().enumerate() {
                total += 1;
                assert!(
                    est.interval.contains(est.value),
                    "{kind} {rep} {j}: {est:?}"
                );
                if est.interval.contains(*exact) {
                    covered += 1;
                } else {
                    eprintln!("miss: kind {kind} rep {rep} estimator {j}: {est:?} vs {exact}");
                }
            }
        }
    }
    // Each sketch's intervals hold together with probability ~99%; allow a
    // few misses (none are expected: the block compaction errs less).
    assert!(covered * 100 >= total * 97, "{covered}/{total}");
}

#[test]
fn exact_mode_intervals_are_tight() {
    let x: Vec<f64> = (0..101).map(f64::from).collect();
    let mut sk = KllSketch::<f64>::new(200, 0).unwrap();
    sk.update(&x);
    let view = sk.sorted_view().unwrap();
    // No compaction happened: a zero rank error gives point intervals.
    let b = Brackets::new(&view, 0.0);
    assert_eq!(b.median().interval, Interval::exact(50.0));
    let q = b.quantile(0.25);
    assert_eq!((q.value, q.interval), (25.0, Interval::exact(25.0)));
}

#[test]
fn m_estimate_from_sketch_is_close() {
    let x = stream(1, 50_000, 9);
    let mut sk = KllSketch::<f64>::new(800, 0).unwrap();
    sk.update(&x);
    let view = sk.sorted_view().unwrap();
    let b = Brackets::new(&view, sk.normalized_rank_error(false));
    let s = Sample::new(&x, NanPolicy::Omit, false).unwrap();
    let p = MParams::new(Norm::Huber);
    let exact = crate::estimators::mest::m_estimate(&s, &p).unwrap();
    let est = b.m_estimate(&p).unwrap();
    assert!(
        (est.location - exact.location).abs() < 0.05 * exact.scale,
        "{est:?} {exact:?}"
    );
    assert!(
        (est.scale - exact.scale).abs() < 0.05 * exact.scale,
        "{est:?} {exact:?}"
    );
}

#[test]
fn probability_band_matches_a_dense_scan() {
    for (c, s) in [
        (
            Interval { lo: -0.1, hi: 0.2 },
            Interval { lo: 0.9, hi: 1.2 },
        ),
        (Interval { lo: 0.0, hi: 0.0 }, Interval { lo: 1.0, hi: 2.0 }),
        (Interval { lo: 5.0, hi: 6.0 }, Interval { lo: 3.0, hi: 3.0 }),
    ] {
        let got = probability_band(c, s);
        let mut scan: f64 = 0.0;
        for i in 0..200_000 {
            let x = c.lo - 1.0 + f64::from(i) * 1e-4 * (1.0 + 10.0 * s.hi);
            let hi = if x > c.lo {
                libm::erf((x - c.lo) / (s.lo * core::f64::consts::SQRT_2))
            } else {
                0.0
            };
            let lo = if x > c.hi {
                libm::erf((x - c.hi) / (s.hi * core::f64::consts::SQRT_2))
            } else {
                0.0
            };
            scan = scan.max(hi - lo);
        }
        // The lower curve starts at the upper center: a kink the scan's
        // grid may step over.
        scan = scan.max(libm::erf(
            (c.hi - c.lo) / (s.lo * core::f64::consts::SQRT_2),
        ));
        assert!(got >= scan && got <= scan + 1e-6, "{got} vs {scan}");
    }
    assert_eq!(
        probability_band(Interval::exact(0.0), Interval { lo: 0.0, hi: 1.0 }),
        1.0
    );
    // Only (s − μ)/σ matters: the band is the same at every magnitude.
    let (c, s) = (
        Interval { lo: -0.1, hi: 0.2 },
        Interval { lo: 0.9, hi: 1.2 },
    );
    let unit = probability_band(c, s);
    for e in [-1000, -664, 664, 1000] {
        let f = |i: Interval| Interval {
            lo: libm::scalbn(i.lo, e),
            hi: libm::scalbn(i.hi, e),
        };
        assert_eq!(probability_band(f(c), f(s)), unit, "2^{e}");
    }
}

#[test]
fn deviations_by_merge_equal_a_sort() {
    for kind in 0..5 {
        let x = stream(kind, 20_000, 7 + kind);
        let mut sk = KllSketch::<f64>::new(64, 3).unwrap();
        sk.update(&x);
        let view = sk.sorted_view().unwrap();
        let b = Brackets::new(&view, 0.01);
        let vals = view.values();
        for c in [
            vals[0],
            vals[vals.len() / 3],
            0.5,
            vals[vals.len() - 1],
            -1.0,
            1e9,
        ] {
            let merged = b.deviations(c);
            let mut pairs: Vec<(f64, u64)> = vals
                .iter()
                .enumerate()
                .map(|(j, &y)| ((y - c).abs(), view.weight(j)))
                .collect();
            pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
            let sorted = SortedView::from_weighted(&pairs);
            assert_eq!(merged.values(), sorted.values(), "kind {kind}, c = {c}");
            for i in 1..=sorted.n() {
                assert_eq!(merged.order_statistic(i), sorted.order_statistic(i));
            }
        }
    }
}
