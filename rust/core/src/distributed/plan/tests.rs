use super::*;
use crate::estimators::mest::Norm;
use crate::sample::NanPolicy;
use crate::transformations::gaussian_options::fit_gaussian_with;

/// Runs `plan` as an engine would over `x` cut into pieces of `chunk`
/// scores: every pass and partial through its bytes, the partials of the
/// pieces combined in order; `edit` may change a combined partial.
fn drive(
    spec: PlanSpec,
    x: &[f64],
    chunk: usize,
    edit: impl Fn(&Pass, Partial) -> Partial,
) -> Result<(Fitted, usize), Error> {
    let mut plan = ColumnPlan::new(spec)?;
    let mut passes = 0;
    loop {
        match plan.next_pass()? {
            None => return Ok((plan.fitted()?.clone(), passes)),
            Some(pass) => {
                passes += 1;
                let pass = Pass::from_bytes(&pass.to_bytes())?;
                let mut total: Option<Partial> = None;
                for piece in x.chunks(chunk) {
                    let p = Partial::from_bytes(&pass.map(piece)?.to_bytes())?;
                    total = Some(match total {
                        None => p,
                        Some(t) => t.combine(p)?,
                    });
                }
                plan.feed(edit(&pass, total.expect("a piece")));
            }
        }
    }
}

fn exact(spec: GaussianSpec, collect_max: u64) -> PlanSpec {
    PlanSpec {
        spec,
        pretransform: PretransformKind::Identity,
        fixed_center: None,
        linear: false,
        method: Method::Exact {
            collect_max,
            n_hint: Some(3000),
        },
    }
}

fn scores() -> Vec<f64> {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    (0..3000)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let u = (state >> 11) as f64 / (1u64 << 53) as f64;
            // Long-tailed, with ties.
            if i % 7 == 0 {
                (u * 10.0).floor()
            } else {
                (-u.max(1e-12).ln()).powi(2)
            }
        })
        .collect()
}

fn column(fitted: Fitted) -> ColumnFit {
    match fitted {
        Fitted::Column(c) => c,
        Fitted::Stream(_) => panic!("an exact fit"),
    }
}

#[test]
fn exact_fits_equal_the_in_memory_ones() {
    let x = scores();
    let pairs = [
        (Center::Median, Scale::Nmad),
        (Center::Mean, Scale::Niqr),
        (Center::TrimmedMean, Scale::TrimmedStd),
        (Center::Median, Scale::Std),
        (Center::M(Norm::Huber), Scale::M(Norm::Huber)),
        (Center::M(Norm::Tukey), Scale::M(Norm::Tukey)),
    ];
    for (center, scale) in pairs {
        for negate in [false, true] {
            let spec = GaussianSpec {
                negate,
                ..GaussianSpec::new(center, scale)
            };
            let want = fit_gaussian_with(&x, &spec, PretransformKind::Identity, None)
                .unwrap()
                .0;
            // Gathered (M-estimation on the client) and reduced.
            for collect_max in [1 << 20, 50] {
                let (got, _) = drive(exact(spec, collect_max), &x, 700, |_, p| p).unwrap();
                let got = column(got);
                let (c, s) = (want.params.center, want.params.scale);
                if matches!(center, Center::M(_)) {
                    assert!((got.center - c).abs() <= 1e-12 * c.abs(), "{spec:?}");
                    assert!((got.scale - s).abs() <= 1e-12 * s, "{spec:?}");
                    let m = want.m_estimates.last().expect("an M-estimate").1;
                    assert_eq!(
                        (got.n_iter, got.converged),
                        (Some(m.n_iter), Some(m.converged))
                    );
                } else {
                    assert_eq!(got.center, c, "{spec:?} {collect_max}");
                    // The contract's tolerance of sums of squares (§9).
                    if matches!(scale, Scale::Std | Scale::TrimmedStd) {
                        assert!((got.scale - s).abs() <= 1e-15 * s, "{spec:?}");
                    } else {
                        assert_eq!(got.scale, s, "{spec:?} {collect_max}");
                    }
                }
                assert_eq!(got.scale_used, want.scale_used.name());
            }
        }
    }
}

#[test]
fn options_and_the_fallback_chain() {
    let x = scores();
    // Pretransform and a fixed center, as the in-memory options path.
    let spec = GaussianSpec::new(Center::TrimmedMean, Scale::TrimmedStd);
    let plan = PlanSpec {
        pretransform: PretransformKind::Sqrt,
        ..exact(spec, 200)
    };
    let got = column(drive(plan, &x, 512, |_, p| p).unwrap().0);
    let (want, pre) = fit_gaussian_with(&x, &spec, PretransformKind::Sqrt, None).unwrap();
    assert_eq!(
        (got.center, got.scale),
        (want.params.center, want.params.scale)
    );
    assert_eq!(got.pre_min, pre.min());
    let fixed = GaussianSpec::new(Center::Value(0.7), Scale::Nmad);
    let plan = PlanSpec {
        fixed_center: Some(0.7),
        ..exact(fixed, 1 << 20)
    };
    let got = column(drive(plan, &x, 512, |_, p| p).unwrap().0);
    let want = fit_gaussian_with(&x, &fixed, PretransformKind::Identity, Some(0.7))
        .unwrap()
        .0;
    assert_eq!(
        (got.center, got.scale),
        (want.params.center, want.params.scale)
    );
    // Mostly ties: nMAD and nIQR are 0, the SD is not.
    let tied: Vec<f64> = (0..100)
        .map(|i| if i < 90 { 1.0 } else { f64::from(i) })
        .collect();
    let spec = GaussianSpec::new(Center::Median, Scale::Nmad);
    let got = column(drive(exact(spec, 1 << 20), &tied, 30, |_, p| p).unwrap().0);
    assert_eq!(got.fallbacks, vec![("nmad", "niqr"), ("niqr", "std")]);
    assert_eq!(got.scale_used, "std");
    let want = fit_gaussian_with(&tied, &spec, PretransformKind::Identity, None)
        .unwrap()
        .0;
    assert!((got.scale - want.params.scale).abs() <= 1e-15 * want.params.scale);
}

#[test]
fn brackets_that_miss_cost_passes_not_exactness() {
    let x = scores();
    let spec = GaussianSpec::new(Center::Median, Scale::Nmad);
    let (good, passes) = drive(exact(spec, 1 << 20), &x, 700, |_, p| p).unwrap();
    // The census's sketch of other scores: its brackets miss every rank.
    let shifted: Vec<f64> = x.iter().map(|v| v + 1e3).collect();
    let misled = |pass: &Pass, p: Partial| match (&pass.kind, p) {
        (
            PassKind::Census { .. },
            Partial::Census {
                raw, read, moments, ..
            },
        ) => {
            let mut s = KllSketch::new(2000, 0).unwrap();
            s.update(&shifted);
            Partial::Census {
                raw,
                read,
                sketch: Some(s),
                moments,
            }
        }
        (_, p) => p,
    };
    let (again, more) = drive(exact(spec, 1 << 20), &x, 700, misled).unwrap();
    assert_eq!(column(good), column(again));
    assert!(more > passes, "{more} vs {passes}");
}

#[test]
fn refusals_by_the_section5_rules_and_the_options() {
    let spec = GaussianSpec::new(Center::Median, Scale::Nmad);
    let err = drive(exact(spec, 100), &[1.0, f64::INFINITY], 1, |_, p| p).unwrap_err();
    assert!(err.to_string().contains("(first at index 1)"), "{err}");
    let raising = GaussianSpec {
        nan_policy: NanPolicy::Raise,
        ..spec
    };
    assert!(drive(exact(raising, 100), &[1.0, f64::NAN], 1, |_, p| p).is_err());
    assert_eq!(
        drive(exact(spec, 100), &[f64::NAN; 3], 2, |_, p| p).unwrap_err(),
        Error::Empty { len: 3 }
    );
    let minus_log = PlanSpec {
        pretransform: PretransformKind::MinusLog,
        ..exact(spec, 100)
    };
    let err = drive(minus_log, &[0.5, 0.0], 1, |_, p| p).unwrap_err();
    assert!(err.to_string().contains("minus_log"), "{err}");
    assert!(ColumnPlan::new(exact(spec, 0)).is_err());
}

#[test]
fn linear_and_sketch_fits() {
    let x = scores();
    let spec = GaussianSpec {
        negate: true,
        ..GaussianSpec::new(Center::Median, Scale::Nmad)
    };
    let linear = PlanSpec {
        linear: true,
        ..exact(spec, 100)
    };
    let got = column(drive(linear, &x, 333, |_, p| p).unwrap().0);
    let max = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = x.iter().copied().fold(f64::INFINITY, f64::min);
    assert_eq!((got.center, got.scale), (-max, -min));
    for native_census in [false, true] {
        let sketch = PlanSpec {
            method: Method::Sketch {
                k: 200,
                native_census,
            },
            ..exact(spec, 100)
        };
        let (got, passes) = drive(sketch, &x, 3000, |_, p| p).unwrap();
        let Fitted::Stream(r) = got else {
            panic!("a streaming result")
        };
        let mut st = StreamingGaussian::new(spec, 200, 0).unwrap();
        st.update(&x).unwrap();
        let want = st.result().unwrap();
        assert_eq!((r.center, r.scale, r.n), (want.center, want.scale, want.n));
        assert_eq!(passes, 1);
    }
}

/// The in-memory fit's μ, σ and scale used, or its message.
fn in_memory(x: &[f64], spec: &GaussianSpec) -> Result<(f64, f64, &'static str), String> {
    fit_gaussian_with(x, spec, PretransformKind::Identity, None)
        .map(|f| {
            let f = f.0;
            (f.params.center, f.params.scale, f.scale_used.name())
        })
        .map_err(|e| e.to_string())
}

/// The distributed fit equals the in-memory one within contract §9's
/// tolerances (or both refuse it with the same message).
fn assert_same_as_in_memory(x: &[f64], spec: GaussianSpec, collect_max: u64, chunk: usize) {
    let want = in_memory(x, &spec);
    let got = drive(exact(spec, collect_max), x, chunk, |_, p| p)
        .map(|(f, _)| {
            let c = column(f);
            (c.center, c.scale, c.scale_used)
        })
        .map_err(|e| e.to_string());
    let ((c, s, used), (gc, gs, gused)) = match (want, got) {
        (Ok(w), Ok(g)) => (w, g),
        (w, g) => {
            assert_eq!(g, w, "{spec:?} collect_max {collect_max} chunk {chunk}");
            return;
        }
    };
    let why =
        format!("{spec:?} collect_max {collect_max} chunk {chunk}: {gc:e} {gs:e} vs {c:e} {s:e}");
    assert_eq!(gused, used, "{why}");
    if matches!(spec.center, Center::M(_)) {
        assert!((gc - c).abs() <= 1e-12 * c.abs().max(s), "{why}");
        assert!((gs - s).abs() <= 1e-12 * s, "{why}");
    } else {
        assert_eq!(gc.to_bits(), c.to_bits(), "{why}");
        if matches!(used, "std" | "trimmed_std") {
            assert!((gs - s).abs() <= 1e-15 * s, "{why}");
        } else {
            assert_eq!(gs.to_bits(), s.to_bits(), "{why}");
        }
    }
}

/// The estimator pairs of outprob.VARIANTS whose partition sums reach the
/// ends of the double range.
const EXTREME_PAIRS: [(Center, Scale); 6] = [
    (Center::M(Norm::Huber), Scale::M(Norm::Huber)),
    (Center::M(Norm::Tukey), Scale::M(Norm::Tukey)),
    (Center::TrimmedMean, Scale::Std),
    (Center::TrimmedMean, Scale::Nmad),
    (Center::TrimmedMean, Scale::TrimmedStd),
    (Center::Mean, Scale::Std),
];

#[test]
fn m_estimates_and_trimmed_sums_at_the_ends_of_the_range() {
    // 400 scores near 1 times 2^k: the partition sums of squares of the
    // raw scores overflow (k = 664, 531) or underflow (k < −500); in the
    // fit's units they do neither.
    let x: Vec<f64> = scores().into_iter().take(400).collect();
    for k in [664, 531, -664, -531, -1030, 1010] {
        let scaled: Vec<f64> = x.iter().map(|v| libm::scalbn(*v, k)).collect();
        for (center, scale) in EXTREME_PAIRS {
            let spec = GaussianSpec::new(center, scale);
            for collect_max in [1 << 20, 50] {
                assert_same_as_in_memory(&scaled, spec, collect_max, 100);
            }
        }
    }
    // contract §5's example: a constant near the top of the range.
    for (center, scale) in EXTREME_PAIRS {
        assert_same_as_in_memory(&[1e307; 20], GaussianSpec::new(center, scale), 1 << 20, 7);
    }
    // Scales beyond the double range are refused with §5's message.
    let wide: Vec<f64> = (0..25)
        .map(|i| match i % 5 {
            0 | 1 => -1.7e308,
            2 => 0.0,
            _ => 1.7e308,
        })
        .collect();
    for (center, scale) in [
        (Center::M(Norm::Huber), Scale::M(Norm::Huber)),
        (Center::TrimmedMean, Scale::Nmad),
        (Center::TrimmedMean, Scale::TrimmedStd),
    ] {
        let spec = GaussianSpec::new(center, scale);
        let err = drive(exact(spec, 1 << 20), &wide, 4, |_, p| p).unwrap_err();
        assert!(
            err.to_string().contains("exceeds the double range"),
            "{err}"
        );
        assert_same_as_in_memory(&wide, spec, 1 << 20, 4);
    }
}

#[test]
fn signed_zeros_are_one_value_to_the_brackets() {
    // The extremes compare −0 equal to +0 while their order keys differ:
    // a bracket opened at the key of the minimum +0 left −0 below it, and
    // the planner took the miss for a column that changed between passes.
    let columns: [&[f64]; 4] = [
        &[0.0, 1.0, -0.0],
        &[-0.0, -1.0, 0.0, -0.0],
        &[0.0, -0.0, 0.0, -0.0, 0.0, 2.0, -3.0],
        &[-0.0, 0.0],
    ];
    for x in columns {
        for (center, scale) in EXTREME_PAIRS {
            for negate in [false, true] {
                let spec = GaussianSpec {
                    negate,
                    ..GaussianSpec::new(center, scale)
                };
                for (collect_max, chunk) in [(1 << 20, 1), (1, 1), (1, 2)] {
                    assert_same_as_in_memory(x, spec, collect_max, chunk);
                }
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// Distributed extremes (contract §9): on scores scaled by any power
    /// of two of the double range, cut into any partitions, the exact
    /// distributed fit equals the in-memory fit of the same scores.
    #[test]
    fn partition_fits_equal_in_memory_fits_across_the_range(
        base in proptest::collection::vec(-8.0f64..8.0, 3..160),
        ties in 0usize..40,
        k in -1074i32..1020,
        pair in 0usize..EXTREME_PAIRS.len(),
        negate in proptest::bool::ANY,
        chunk in 1usize..90,
        gathered in proptest::bool::ANY,
    ) {
        let mut x: Vec<f64> = base.iter().map(|v| libm::scalbn(*v, k)).collect();
        let tie = x[0];
        x.extend(core::iter::repeat_n(tie, ties));
        let (center, scale) = EXTREME_PAIRS[pair];
        let spec = GaussianSpec { negate, ..GaussianSpec::new(center, scale) };
        assert_same_as_in_memory(&x, spec, if gathered { 1 << 20 } else { 20 }, chunk);
    }
}

/// Lognormal scores with 2% Pareto outliers (the Spark benchmark's
/// shape), from a fixed xorshift stream.
fn long_tailed(n: usize, seed: u64) -> Vec<f64> {
    let mut state = seed;
    let mut uniform = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| {
            let (u, v) = (uniform(), uniform());
            if u < 0.02 {
                50.0 + 1.0 / v
            } else {
                // Box–Muller.
                let z = (-2.0 * v.ln()).sqrt() * (core::f64::consts::TAU * uniform()).cos();
                z.exp()
            }
        })
        .collect()
}

/// Contract §9: a column too long to gather is M-estimated from one
/// summary pass and a collect pass of the cut buckets — a fixed number
/// of passes where each location step was one — with the in-memory
/// estimate within 1e-12.
#[test]
fn m_estimates_read_a_summary_not_one_pass_per_step() {
    let x = long_tailed(200_000, 0x9e37_79b9_7f4a_7c15);
    for norm in [Norm::Huber, Norm::Tukey] {
        for negate in [false, true] {
            let spec = GaussianSpec {
                negate,
                ..GaussianSpec::new(Center::M(norm), Scale::M(norm))
            };
            let want = fit_gaussian_with(&x, &spec, PretransformKind::Identity, None)
                .unwrap()
                .0;
            let m = want.m_estimates.last().expect("an M-estimate").1;
            let (got, passes) = drive(exact(spec, 1 << 14), &x, 30_000, |_, p| p).unwrap();
            let got = column(got);
            let (c, s) = (want.params.center, want.params.scale);
            assert!((got.center - c).abs() <= 1e-12 * c.abs().max(s), "{spec:?}");
            assert!((got.scale - s).abs() <= 1e-12 * s, "{spec:?}");
            assert_eq!(
                (got.n_iter, got.converged),
                (Some(m.n_iter), Some(m.converged))
            );
            // Census, median, nMAD (a histogram and a collect pass each at
            // this collect_max), the summary, the cut buckets: the
            // iteration's 5–30 outer steps cost no pass of their own.
            let kinds = passes_of(exact(spec, 1 << 14), &x);
            assert_eq!(passes, kinds.len());
            assert_eq!(
                kinds.iter().filter(|k| k.contains("m_sums")).count(),
                0,
                "{kinds:?}"
            );
            // One summary, read alone or in the median's fused pass.
            assert_eq!(
                kinds.iter().filter(|k| k.contains("m_summary")).count(),
                1,
                "{kinds:?}"
            );
            assert!(passes <= 8, "{norm:?} {negate}: {kinds:?}");
        }
    }
}

/// Contract §9: ties at the median (a deviation bracket reaching 0, a
/// zero nMAD and its fallback) read ahead nothing wrong: the fit is the
/// in-memory one.
#[test]
fn m_estimates_of_tied_columns_read_ahead_safely() {
    let tail = long_tailed(30_000, 7);
    for share in [2usize, 3] {
        let x: Vec<f64> = tail
            .iter()
            .enumerate()
            .map(|(i, &v)| if i % share != 0 { 1.0 } else { v })
            .collect();
        for norm in [Norm::Huber, Norm::Tukey] {
            let spec = GaussianSpec::new(Center::M(norm), Scale::M(norm));
            let want = fit_gaussian_with(&x, &spec, PretransformKind::Identity, None)
                .unwrap()
                .0;
            let (got, _) = drive(exact(spec, 1 << 12), &x, 7_000, |_, p| p).unwrap();
            let got = column(got);
            let (c, s) = (want.params.center, want.params.scale);
            assert!(
                (got.center - c).abs() <= 1e-12 * c.abs().max(s),
                "{norm:?} {share}"
            );
            assert!(
                (got.scale - s).abs() <= 1e-12 * s.max(1e-300),
                "{norm:?} {share}"
            );
        }
    }
}

/// The names of the passes a fit runs, in order (a fused pass as
/// `fused(a+b…)`).
fn passes_of(spec: PlanSpec, x: &[f64]) -> Vec<String> {
    let names = core::cell::RefCell::new(Vec::new());
    drive(spec, x, 30_000, |pass, p| {
        names.borrow_mut().push(pass_name(pass));
        p
    })
    .unwrap();
    names.into_inner()
}

fn pass_name(pass: &Pass) -> String {
    match &pass.kind {
        PassKind::Fused(kinds) => {
            let inner: Vec<&str> = kinds
                .iter()
                .map(|k| {
                    Pass {
                        pre: pass.pre,
                        kind: k.clone(),
                    }
                    .name()
                })
                .collect();
            format!("fused({})", inner.join("+"))
        }
        _ => pass.name().to_string(),
    }
}

/// The passes and the scores collected at a larger size (run by hand:
/// `cargo test --release -- --ignored --nocapture summary_passes_at_scale`).
#[test]
#[ignore = "a measurement, run by hand"]
fn summary_passes_at_scale() {
    let n: usize = std::env::var("OUTPROB_N").map_or(2_000_000, |v| v.parse().unwrap());
    let x = long_tailed(n, 0x9e37_79b9_7f4a_7c15);
    for norm in [Norm::Huber, Norm::Tukey] {
        let spec = GaussianSpec::new(Center::M(norm), Scale::M(norm));
        let collected = core::cell::Cell::new(0usize);
        let names = core::cell::RefCell::new(Vec::new());
        let t = std::time::Instant::now();
        let (got, _) = drive(exact(spec, 1 << 20), &x, 1 << 20, |pass, p| {
            names.borrow_mut().push(pass_name(pass));
            if let (PassKind::MCollect { .. }, Partial::Collected(v)) = (&pass.kind, &p) {
                collected.set(collected.get() + v.iter().map(Vec::len).sum::<usize>());
            }
            p
        })
        .unwrap();
        let got = column(got);
        eprintln!(
            "{norm:?} n={n}: {:?} passes {:?}, {} scores collected, {:.2?}, n_iter {:?}",
            names.borrow().len(),
            names.borrow(),
            collected.get(),
            t.elapsed(),
            got.n_iter
        );
    }
}
