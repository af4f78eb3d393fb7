use super::*;
use crate::transformations::fit::fit_gaussian;

#[test]
fn small_streams_are_exact() {
    // Below k scores the sketch holds everything: every estimate equals
    // the in-memory fit and every interval is a point.
    let x: Vec<f64> = (0..150).map(|i| f64::from(i * 37 % 101) * 0.5).collect();
    for (c, s) in [
        ("median", "nmad"),
        ("trimmed_mean", "niqr"),
        ("mean", "std"),
        ("median", "trimmed_std"),
    ] {
        for negate in [false, true] {
            let mut spec = GaussianSpec::new(c.parse().unwrap(), s.parse().unwrap());
            spec.negate = negate;
            let mut st = StreamingGaussian::new(spec, 200, 0).unwrap();
            for part in x.chunks(7) {
                st.update(part).unwrap();
            }
            let r = st.result().unwrap();
            let want = fit_gaussian(&x, &spec).unwrap();
            assert_eq!(r.center, want.params.center, "{c} {s} {negate}");
            assert!(
                (r.scale - want.params.scale).abs() <= 1e-15 * want.params.scale,
                "{c} {s}"
            );
            assert_eq!(r.rank_error, 0.0);
            assert!(r.center_interval.unwrap().contains(want.params.center));
            assert!(
                r.scale_interval.unwrap().contains(want.params.scale),
                "{c} {s} {r:?} {want:?}"
            );
        }
    }
}

#[test]
fn fallback_and_merge() {
    let mut spec = GaussianSpec::new(Center::Median, Scale::Nmad);
    spec.negate = true;
    let mut a = StreamingGaussian::new(spec, 100, 1).unwrap();
    let mut b = StreamingGaussian::new(spec, 100, 2).unwrap();
    a.update(&[1.0f32; 300]).unwrap();
    b.update(&[1.0, 1.0, 5.0, 9.0]).unwrap();
    a.merge(&b).unwrap();
    let r = a.result().unwrap();
    assert_eq!(r.n, 304);
    assert_eq!(r.center, -1.0);
    assert_eq!(r.scale_used, Scale::Std);
    assert!(r.scale > 0.0);
    assert_eq!(a.extremes().unwrap(), (-9.0, -1.0));
    let other =
        StreamingGaussian::new(GaussianSpec::new(Center::Mean, Scale::Std), 100, 0).unwrap();
    assert!(a.merge(&other).is_err());
    assert!(StreamingGaussian::new(spec, 100, 0)
        .unwrap()
        .result()
        .is_err());
    assert!(!needs_sketch(&GaussianSpec::new(Center::Mean, Scale::Std)));
}

fn spec(center: &str, scale: &str) -> GaussianSpec {
    GaussianSpec::new(center.parse().unwrap(), scale.parse().unwrap())
}

fn streamed(x: &[f64], spec: GaussianSpec, k: u16) -> StreamingGaussian {
    let mut st = StreamingGaussian::new(spec, u32::from(k), 0).unwrap();
    for part in x.chunks(1000) {
        st.update(part).unwrap();
    }
    st
}

#[test]
fn a_fit_beyond_the_double_range_is_refused_as_in_memory() {
    // contract §5's example: the nMAD of these is beyond the double range.
    let x = [-1.7e308, -1.7e308, 1.7e308, 1.7e308];
    for (c, s) in [
        ("median", "nmad"),
        ("huber", "huber"),
        ("tukey", "tukey"),
        ("median", "huber"),
    ] {
        let want = fit_gaussian(&x, &spec(c, s)).unwrap_err();
        let got = streamed(&x, spec(c, s), 200).result().unwrap_err();
        assert_eq!(got, want, "{c} {s}");
    }
    // Where the in-memory fit is finite, so is the streamed one, and equal
    // (exact mode): the trimmed mean's sums are taken in scaled units.
    for x in [
        vec![-1.7e308, -1.7e308, 1.7e308, 1.7e308],
        vec![1.7e308; 20],
        vec![1.0, 1.5e308, 1.6e308, 1.7e308, 1.79e308],
    ] {
        let s = spec("trimmed_mean", "trimmed_std");
        let want = fit_gaussian(&x, &s).unwrap();
        let got = streamed(&x, s, 200).result().unwrap();
        assert_eq!(got.center, want.params.center, "{x:?}");
        let (sc, ws) = (got.scale, want.params.scale);
        assert!((sc - ws).abs() <= 1e-15 * ws, "{x:?}: {sc} vs {ws}");
        assert!(got.center_interval.unwrap().contains(want.params.center));
        assert!(got.scale_interval.unwrap().contains(ws), "{got:?}");
    }
}

#[test]
fn exact_mode_intervals_are_points() {
    // 10 scores: the median and the nMAD interpolate between two order
    // statistics; the sketch holds every score, so both are exact.
    let x: Vec<f64> = (0..10).map(f64::from).collect();
    for (c, s) in [
        ("median", "nmad"),
        ("median", "niqr"),
        ("trimmed_mean", "trimmed_std"),
    ] {
        let r = streamed(&x, spec(c, s), 200).result().unwrap();
        let want = fit_gaussian(&x, &spec(c, s)).unwrap().params;
        let (ci, si) = (r.center_interval.unwrap(), r.scale_interval.unwrap());
        assert_eq!(r.rank_error, 0.0);
        assert!(ci.contains(want.center) && si.contains(want.scale), "{r:?}");
        assert!(
            ci.hi - ci.lo <= 16.0 * f64::EPSILON * want.center.abs(),
            "{r:?}"
        );
        assert!(si.hi - si.lo <= 24.0 * f64::EPSILON * want.scale, "{r:?}");
        assert!(r.probability_error.unwrap() < 1e-14, "{r:?}");
    }
    // 3000 scores (more than the trimmed SD's 512 rank blocks), still exact.
    let x: Vec<f64> = (0..3000).map(|i| f64::from(i * 7919 % 3001)).collect();
    let r = streamed(&x, spec("median", "trimmed_std"), 4000)
        .result()
        .unwrap();
    assert_eq!(r.rank_error, 0.0);
    let want = fit_gaussian(&x, &spec("median", "trimmed_std")).unwrap();
    let si = r.scale_interval.unwrap();
    assert!(si.contains(want.params.scale), "{r:?} {want:?}");
    assert!(
        si.hi - si.lo <= 32.0 * f64::EPSILON * want.params.scale,
        "{r:?}"
    );
}

#[test]
fn probability_error_at_every_magnitude() {
    // An exact center and a scale from a compacted sketch: the bound must
    // hold the real largest |Δp| against the in-memory fit at any
    // magnitude (σ² under- or overflowed for scores near 1e∓200).
    let mut state = 7u64;
    let x: Vec<f64> = (0..20_000)
        .map(|_| {
            state = crate::streaming::kll::splitmix64(state);
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        })
        .collect();
    let s = spec("mean", "nmad");
    for e in [-664, 0, 664] {
        let y: Vec<f64> = x.iter().map(|v| libm::scalbn(*v, e)).collect();
        let r = streamed(&y, s, 64).result().unwrap();
        let want = fit_gaussian(&y, &s).unwrap().params;
        assert!(r.rank_error > 0.0);
        assert_eq!(r.center, want.center);
        // p̂ − p at s = μ + tσ: erf(t·σ/σ̂/√2) − erf(t/√2), for t > 0.
        let ratio = want.scale / r.scale;
        let real = (1..4000)
            .map(|i| {
                let t = f64::from(i) * 1e-3;
                let r2 = core::f64::consts::SQRT_2;
                (libm::erf(t * ratio / r2) - libm::erf(t / r2)).abs()
            })
            .fold(0.0, f64::max);
        let bound = r.probability_error.unwrap();
        assert!(
            real > 1e-4 && bound >= real && bound < 1.0,
            "2^{e}: {bound} vs {real}"
        );
    }
}

#[test]
fn stored_parts_must_agree() {
    let s = spec("median", "nmad");
    let x: Vec<f64> = (0..500).map(|i| f64::from(i % 37)).collect();
    let st = streamed(&x, s, 200);
    let parts = st.moments().to_parts();
    let bytes = crate::streaming::kll::serde::serialize(st.sketch().unwrap());
    let back = StreamingGaussian::from_parts(s, &parts, Some(&bytes), 0).unwrap();
    assert_eq!(back.result(), st.result());
    // The sketch of another stream of as many scores: other extremes.
    let y: Vec<f64> = x.iter().map(|v| v + 0.5).collect();
    let other = crate::streaming::kll::serde::serialize(streamed(&y, s, 200).sketch().unwrap());
    assert!(StreamingGaussian::from_parts(s, &parts, Some(&other), 0).is_err());
    // Negated: the sketch holds the oriented scores.
    let mut neg = s;
    neg.negate = true;
    assert!(StreamingGaussian::from_parts(neg, &parts, Some(&bytes), 0).is_err());
    let flipped = streamed(&x, neg, 200);
    let bytes = crate::streaming::kll::serde::serialize(flipped.sketch().unwrap());
    assert!(StreamingGaussian::from_parts(neg, &parts, Some(&bytes), 0).is_ok());
}

#[test]
fn counts_stop_at_the_headroom() {
    use crate::streaming::stored::MAX_COUNT;
    let s = spec("mean", "std");
    let mut big = streamed(&[1.0, 2.0], s, 200).moments().to_parts();
    // A state of 2^53 − 1 scores (the moments of two, scaled up: the
    // stored-state checks accept any consistent count).
    big.n = MAX_COUNT - 1;
    big.sum_limbs = crate::numeric::sum::exact_product(1.5, (MAX_COUNT - 1) as usize)
        .to_limbs()
        .unwrap()
        .1;
    big.shift = 1.5;
    big.dsum = [0.0, 0.0];
    big.dsq = [0.0, 0.0];
    let mut st = StreamingGaussian::from_parts(s, &big, None, 0).unwrap();
    assert_eq!(st.update(&[1.5]).unwrap(), 1);
    let before = st.clone();
    assert!(st.update(&[1.5]).is_err());
    let other = streamed(&[1.0], s, 200);
    assert!(st.merge(&other).is_err());
    assert_eq!(st, before);
}

#[test]
fn a_sketch_alone_fits_what_reads_no_moments() {
    let x: Vec<f64> = (0..5000)
        .map(|i| f64::from(i * 7919 % 1013).sqrt())
        .collect();
    for (c, s, reads) in [
        ("median", "nmad", false),
        ("huber", "huber", false),
        ("median", "trimmed_std", false),
        ("tukey", "niqr", false),
        ("mean", "nmad", true),
        ("trimmed_mean", "niqr", true),
        ("median", "std", true),
    ] {
        for negate in [false, true] {
            let mut spec = GaussianSpec::new(c.parse().unwrap(), s.parse().unwrap());
            spec.negate = negate;
            let mut st = StreamingGaussian::new(spec, 64, 3).unwrap();
            st.update(&x).unwrap();
            let alone = result_from_sketch(&spec, st.sketch().unwrap()).unwrap();
            assert_eq!(reads_moments(&spec), reads, "{c} {s}");
            if reads {
                assert!(alone.is_none(), "{c} {s}");
            } else {
                assert_eq!(alone, Some(st.result().unwrap()), "{c} {s} {negate}");
            }
        }
    }
    // Constant scores: the chain falls back to the SD, which needs the moments.
    let spec = GaussianSpec::new(Center::Median, Scale::Nmad);
    let mut st = StreamingGaussian::new(spec, 64, 0).unwrap();
    st.update(&[2.0; 100]).unwrap();
    assert_eq!(
        result_from_sketch(&spec, st.sketch().unwrap()).unwrap(),
        None
    );
    assert!(st.result().is_ok());
}

#[test]
fn a_stream_fit_is_the_published_fit_without_intervals() {
    // contract §9, "Command line" (Refits): the values a stream maps with
    // are those `result` publishes, bit for bit, for every estimator.
    let x: Vec<f64> = (0..60_000)
        .map(|i| (f64::from(i * 7919 % 10_007) / 1000.0).exp())
        .collect();
    for (c, s) in [
        ("median", "nmad"),
        ("mean", "nmad"),
        ("trimmed_mean", "niqr"),
        ("median", "trimmed_std"),
        ("huber", "huber"),
    ] {
        let spec = GaussianSpec::new(c.parse().unwrap(), s.parse().unwrap());
        let mut st = StreamingGaussian::new(spec, 200, 3).unwrap();
        for part in x.chunks(8192) {
            st.update(part).unwrap();
            let want = st.result().unwrap();
            let got = st.stream_fit(None).unwrap().unwrap();
            assert_eq!(got.center.to_bits(), want.center.to_bits(), "{c} {s}");
            assert_eq!(got.scale.to_bits(), want.scale.to_bits(), "{c} {s}");
            assert_eq!(
                (got.scale_used, got.rank_error, got.n),
                (want.scale_used, want.rank_error, want.n)
            );
            assert_eq!(got.m_estimates, want.m_estimates);
            assert!(got.center_interval.is_none() && got.probability_error.is_none());
        }
    }
}

#[test]
fn a_stream_refits_once_eps_n_scores_came() {
    // contract §9, "Command line" (Refits): with a sketch-only fit the last
    // fit stands until more than floor(eps·n) scores came after it; a fit
    // reading the exact moments, or an exact sketch, refits every time.
    let sketch_only = GaussianSpec::new(Center::Median, Scale::Nmad);
    let mut st = StreamingGaussian::new(sketch_only, 100, 0).unwrap();
    st.update(&[1.0; 50]).unwrap();
    assert!(st.stream_fit(Some(50)).unwrap().is_some(), "exact sketch");
    let x: Vec<f64> = (0..100_000).map(|i| f64::from(i % 977)).collect();
    st.update(&x).unwrap();
    let n = st.n();
    let eps = st.sketch().unwrap().normalized_rank_error(false);
    let allowed = (eps * n as f64).floor() as u64;
    assert!(st.stream_fit(Some(n - allowed)).unwrap().is_none());
    assert!(st.stream_fit(Some(n - allowed - 1)).unwrap().is_some());
    assert!(st.stream_fit(None).unwrap().is_some());
    let moments = GaussianSpec::new(Center::Mean, Scale::Nmad);
    let mut st = StreamingGaussian::new(moments, 100, 0).unwrap();
    st.update(&x).unwrap();
    assert!(st.stream_fit(Some(st.n())).unwrap().is_some());
}
