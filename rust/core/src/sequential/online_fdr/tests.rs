use super::*;
use proptest::prelude::*;

/// The papers' formulas, from the whole history at every step (O(t) per
/// p-value): subscripts counted directly, not through the clock.
fn paper(s: &Settings, p: &[f64]) -> (Vec<bool>, Vec<f64>) {
    let g = |j: usize| s.gamma.at(j as u64);
    let (mut rejected, mut levels) = (Vec::new(), Vec::new());
    let mut taus: Vec<usize> = Vec::new(); // 1-based times of the rejections
    for t in 1..=p.len() {
        let before = &p[..t - 1];
        let count = |from: usize, pred: &dyn Fn(f64) -> bool| {
            before.iter().skip(from).filter(|&&x| pred(x)).count()
        };
        let level = match s.method {
            Method::Lond => s.gamma.lond(s.alpha, t as u64) * (taus.len() + 1) as f64,
            Method::LordPlusPlus => {
                let mut a = s.w0 * g(t);
                if let Some(&t1) = taus.first() {
                    a += (s.alpha - s.w0) * g(t - t1);
                }
                a + s.alpha * taus.iter().skip(1).map(|&tj| g(t - tj)).sum::<f64>()
            }
            Method::Saffron => {
                let cand = |x: f64| x <= s.lam;
                // t − τⱼ − Cⱼ₊ with Cⱼ₊ the candidates in (τⱼ, t).
                let idx = |tj: usize| t - tj - count(tj, &cand);
                let mut a = s.w0 * g(t - count(0, &cand));
                if let Some(&t1) = taus.first() {
                    a += (s.alpha - s.w0) * g(idx(t1));
                }
                a += s.alpha * taus.iter().skip(1).map(|&tj| g(idx(tj))).sum::<f64>();
                (a * (1.0 - s.lam)).min(s.lam)
            }
            Method::Addis => {
                let sel = |x: f64| x <= s.tau;
                let cand = |x: f64| x <= s.lam;
                let big_s = count(0, &sel);
                // Sᵗ − κⱼ* − Cⱼ₊ (+1: the paper's γ starts at 0).
                let idx = |kj: usize| {
                    let kappa_star = p[..kj].iter().filter(|&&x| sel(x)).count();
                    big_s - kappa_star - count(kj, &cand) + 1
                };
                let mut a = s.w0 * g(big_s - count(0, &cand) + 1);
                if let Some(&k1) = taus.first() {
                    a += (s.alpha - s.w0) * g(idx(k1));
                }
                a += s.alpha * taus.iter().skip(1).map(|&kj| g(idx(kj))).sum::<f64>();
                (a * (s.tau - s.lam)).min(s.lam)
            }
        };
        let r = p[t - 1] <= level;
        if r {
            taus.push(t);
        }
        rejected.push(r);
        levels.push(level);
    }
    (rejected, levels)
}

fn run(s: &Settings, p: &[f64]) -> (Vec<bool>, Vec<f64>) {
    let mut rule = OnlineFdr::new(s.clone());
    let (mut out, mut lv) = (vec![false; p.len()], vec![0.0; p.len()]);
    rule.decide(p, &mut out, Some(&mut lv)).unwrap();
    let mut fast = OnlineFdr::new(s.clone());
    let mut quick = vec![false; p.len()];
    fast.decide(p, &mut quick, None).unwrap();
    assert_eq!(quick, out, "the bound changed a decision");
    assert_eq!(fast, rule);
    (out, lv)
}

fn settings(m: &str) -> Settings {
    Settings::new(m.parse().unwrap(), 0.05, None, None, None, None).unwrap()
}

// R onlineFDR's documented examples (random = FALSE): the p-values in
// order, alphai as printed (7 significant digits) and the rejections.
const P: [f64; 15] = [
    2.90e-08, 0.06743, 0.01514, 0.08174, 0.00171, 3.60e-05, 0.79149, 0.27201, 0.28295, 7.59e-08,
    0.69274, 0.30443, 0.00136, 0.72342, 0.54757,
];

fn close_to_printed(got: &[f64], printed: &[&str]) {
    for (g, s) in got.iter().zip(printed) {
        let decimals = s.len() - s.find('.').unwrap() - 1;
        let want: f64 = s.parse().unwrap();
        assert!(
            (g - want).abs() <= 0.5 * 10f64.powi(-(decimals as i32)) + 1e-15,
            "{g} vs {s}"
        );
    }
}

#[test]
fn r_onlinefdr_examples() {
    let cases: [(&str, &[&str], [u8; 15]); 4] = [
        (
            "lord++",
            &[
                "0.0002675839",
                "0.0024664457",
                "0.0005732818",
                "0.0004872805",
                "0.0004059066",
                "0.0003447286",
                "0.0029745013",
                "0.0008450114",
                "0.0007305648",
                "0.0006243143",
                "0.0032185913",
                "0.0010617227",
                "0.0009256825",
                "0.0008019657",
                "0.0007059610",
            ],
            [1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0],
        ),
        (
            "saffron",
            &[
                "0.005468627",
                "0.010937254",
                "0.010937254",
                "0.010937254",
                "0.010937254",
                "0.021874508",
                "0.032811762",
                "0.010823845",
                "0.010823845",
                "0.010823845",
                "0.021761099",
                "0.009265591",
                "0.009265591",
                "0.020202846",
                "0.009064367",
            ],
            [1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0],
        ),
        (
            "addis",
            &[
                "0.002734314",
                "0.005468627",
                "0.005468627",
                "0.005468627",
                "0.005468627",
                "0.010937254",
                "0.016405881",
                "0.016405881",
                "0.005411923",
                "0.002828822",
                "0.008297449",
                "0.008297449",
                "0.003589243",
                "0.009057870",
                "0.009057870",
            ],
            [1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0],
        ),
        (
            "lond",
            &[
                "0.0026758385",
                "0.0011638206",
                "0.0009912499",
                "0.0008243606",
                "0.0006988870",
                "0.0006045900",
                "0.0007979166",
                "0.0007117838",
                "0.0006421423",
                "0.0005847378",
                "0.0007155186",
                "0.0006610273",
                "0.0006141682",
                "0.0005734509",
                "0.0005377472",
            ],
            [1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0],
        ),
    ];
    for (m, printed, rejected) in cases {
        let (r, l) = run(&settings(m), &P);
        close_to_printed(&l, printed);
        assert_eq!(r, rejected.map(|x| x == 1), "{m}");
    }
}

#[test]
fn addis_with_tau_one_is_saffron() {
    let mut x = 0x1234_u64;
    let p: Vec<f64> = (0..3000)
        .map(|i| {
            x = crate::streaming::kll::splitmix64(x);
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            if i % 7 == 0 {
                u * 1e-4
            } else {
                u
            }
        })
        .collect();
    let s = Settings::new(Method::Saffron, 0.1, None, Some(0.4), None, None).unwrap();
    let a = Settings::new(Method::Addis, 0.1, Some(0.05), Some(0.4), Some(1.0), None).unwrap();
    let (rs, ls) = run(&s, &p);
    let (ra, la) = run(&a, &p);
    assert_eq!(rs, ra);
    assert!(rs.iter().filter(|&&r| r).count() > 50);
    for (x, y) in ls.iter().zip(&la) {
        assert!((x - y).abs() <= 1e-15 * x.abs());
    }
}

#[test]
fn parameters_are_checked_and_named() {
    let err = |m: Method, a, w, l, t, g| Settings::new(m, a, w, l, t, g).unwrap_err().to_string();
    assert!(err(Method::LordPlusPlus, 0.0, None, None, None, None).starts_with("alpha:"));
    assert!(err(Method::LordPlusPlus, f64::NAN, None, None, None, None).starts_with("alpha:"));
    assert!(err(Method::LordPlusPlus, 1.0, None, None, None, None).starts_with("alpha:"));
    assert!(err(Method::LordPlusPlus, 0.1, Some(0.2), None, None, None).starts_with("w0:"));
    assert!(err(Method::LordPlusPlus, 0.1, Some(0.0), None, None, None).starts_with("w0:"));
    assert!(err(Method::LordPlusPlus, 0.1, None, Some(0.5), None, None).starts_with("lam:"));
    assert!(err(Method::Lond, 0.1, Some(0.01), None, None, None).starts_with("w0:"));
    assert!(err(Method::Saffron, 0.1, None, Some(1.0), None, None).starts_with("lam:"));
    assert!(err(Method::Saffron, 0.1, None, None, Some(0.5), None).starts_with("tau:"));
    assert!(err(Method::Addis, 0.1, None, Some(0.6), Some(0.5), None).starts_with("lam:"));
    assert!(err(Method::Addis, 0.1, None, None, Some(1.5), None).starts_with("tau:"));
    assert!(err(Method::Addis, 0.1, None, None, None, Some(vec![0.7, 0.7])).starts_with("gamma:"));
    // A subnormal α whose default w₀ underflows; its own w₀ is still taken,
    // and the rule's record reads back.
    for m in [Method::LordPlusPlus, Method::Saffron, Method::Addis] {
        assert!(err(m, 5e-324, None, None, None, None).starts_with("alpha:"));
        let s = Settings::new(m, 5e-324, Some(5e-324), None, None, None).unwrap();
        assert_eq!(Settings::from_record(&s.to_record()).unwrap(), s);
    }
    assert!("lord"
        .parse::<Method>()
        .unwrap_err()
        .to_string()
        .starts_with("method:"));
    let s = settings("addis");
    assert_eq!((s.w0, s.lam, s.tau), (0.025, 0.25, 0.5));
    assert_eq!(settings("lord++").w0, 0.005);
}

#[test]
fn bad_pvalues_change_nothing() {
    let mut rule = OnlineFdr::new(settings("saffron"));
    let mut out = [false; 3];
    rule.decide(&[0.001, 0.5, 0.2], &mut out, None).unwrap();
    let before = rule.clone();
    for bad in [f64::NAN, -0.1, 1.5, f64::INFINITY] {
        let e = rule
            .decide(&[0.01, bad, 0.2], &mut out, None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("pvalues: pvalues[1] ="), "{e}");
        assert_eq!(rule, before);
    }
}

#[test]
fn parts_round_trip_and_refuse_contradictions() {
    let p: Vec<f64> = P.iter().chain(P.iter()).copied().collect();
    for m in ["lond", "lord++", "saffron", "addis"] {
        let mut rule = OnlineFdr::new(settings(m));
        let mut out = vec![false; p.len()];
        rule.decide(&p[..20], &mut out[..20], None).unwrap();
        let mut back = OnlineFdr::from_parts(settings(m), &rule.parts()).unwrap();
        assert_eq!(back, rule);
        let (mut a, mut b) = (vec![false; 10], vec![false; 10]);
        rule.decide(&p[20..], &mut a, None).unwrap();
        back.decide(&p[20..], &mut b, None).unwrap();
        assert_eq!(a, b);
    }
    let mut rule = OnlineFdr::new(settings("saffron"));
    let mut out = vec![false; 15];
    rule.decide(&P, &mut out, None).unwrap();
    let good = rule.parts();
    assert_eq!(good.rejections, 5);
    let tampered = [
        (
            "rejections",
            Parts {
                rejections: 9,
                ..good.clone()
            },
        ),
        (
            "rejections",
            Parts {
                rejections: 99,
                ..good.clone()
            },
        ),
        (
            "clock",
            Parts {
                clock: 15,
                ..good.clone()
            },
        ),
        (
            "first",
            Parts {
                first: None,
                ..good.clone()
            },
        ),
        (
            "first",
            Parts {
                first: Some(99),
                ..good.clone()
            },
        ),
        (
            "stamps",
            Parts {
                stamps: vec![5, 4, 3, 2],
                ..good.clone()
            },
        ),
        (
            "stamps",
            Parts {
                stamps: vec![1],
                counts: vec![1, 2],
                ..good.clone()
            },
        ),
        (
            "counts",
            Parts {
                counts: [vec![0], good.counts[1..].to_vec()].concat(),
                ..good.clone()
            },
        ),
    ];
    for (field, parts) in tampered {
        let e = OnlineFdr::from_parts(settings("saffron"), &parts)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(&format!("{field}:")), "{field}: {e}");
    }
    let lord = Parts {
        n: 5,
        clock: 4,
        ..Parts::default()
    };
    let e = OnlineFdr::from_parts(settings("lord++"), &lord)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("clock:"), "{e}");
}

#[test]
fn n_is_a_count_of_at_most_two_to_the_53() {
    // §5: n is a count of at most 2⁵³; a batch that would pass it is
    // refused whole.
    let max = crate::limits::COUNT.max;
    let e = OnlineFdr::from_parts(
        settings("lond"),
        &Parts {
            n: max + 1,
            clock: max + 1,
            ..Parts::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("n:"), "{e}");
    let mut full = OnlineFdr::from_parts(
        settings("lond"),
        &Parts {
            n: max - 1,
            clock: max - 1,
            ..Parts::default()
        },
    )
    .unwrap();
    let before = full.clone();
    let mut out = [false; 2];
    let e = full.decide(&[0.5, 0.5], &mut out, None).unwrap_err();
    assert!(e.to_string().starts_with("pvalues:"), "{e}");
    assert_eq!(full, before);
}

#[test]
fn a_finite_gamma_drops_old_stamps() {
    let g: Vec<f64> = (1..=50).map(|j| 0.5 / f64::from(j * j)).collect();
    let s = Settings::new(Method::LordPlusPlus, 0.2, None, None, None, Some(g)).unwrap();
    let p: Vec<f64> = (0..2000)
        .map(|i| if i % 9 == 0 { 1e-9 } else { 0.9 })
        .collect();
    let (r, l) = run(&s, &p);
    assert_eq!((r, l), paper(&s, &p));
    let mut rule = OnlineFdr::new(s);
    let mut out = vec![false; p.len()];
    rule.decide(&p, &mut out, None).unwrap();
    rule.next_level();
    assert!(rule.parts().stamps.len() <= 50);
}

fn pvalues() -> impl Strategy<Value = Vec<f64>> {
    // Mostly uniform, some tiny (signals), some at the thresholds.
    let one = prop_oneof![
        6 => 0.0..=1.0f64,
        3 => 0.0..1e-3f64,
        1 => prop::sample::select(vec![0.0, 0.25, 0.5, 1.0]),
    ];
    prop::collection::vec(one, 1..300)
}

fn any_settings() -> impl Strategy<Value = Settings> {
    (
        0usize..4,
        0.01..0.5f64,
        0.05..1.0f64,
        0.05..0.95f64,
        0.3..1.0f64,
        any::<bool>(),
    )
        .prop_map(|(m, alpha, wf, lf, tau, given)| {
            let method = [
                Method::Lond,
                Method::LordPlusPlus,
                Method::Saffron,
                Method::Addis,
            ][m];
            let gamma = given.then(|| (1..=40).map(|j| 0.2 / f64::from(j)).collect());
            let (w0, lam, tau) = match method {
                Method::Lond => (None, None, None),
                Method::LordPlusPlus => (Some(alpha * wf), None, None),
                Method::Saffron => (Some(alpha * wf), Some(lf), None),
                Method::Addis => (Some(alpha * wf), Some(lf * tau), Some(tau)),
            };
            Settings::new(method, alpha, w0, lam, tau, gamma).unwrap()
        })
}

proptest! {
    #[test]
    fn equals_the_papers_formulas(s in any_settings(), p in pvalues()) {
        let (r, l) = run(&s, &p);
        let (pr, pl) = paper(&s, &p);
        prop_assert_eq!(r, pr);
        for (a, b) in l.iter().zip(&pl) {
            prop_assert!((a - b).abs() <= 1e-13 * b.abs(), "{} vs {}", a, b);
        }
    }

    #[test]
    fn batches_of_any_size_decide_alike(s in any_settings(), p in pvalues(), cut in 0usize..300) {
        let cut = cut.min(p.len());
        let mut whole = OnlineFdr::new(s.clone());
        let mut a = vec![false; p.len()];
        whole.decide(&p, &mut a, None).unwrap();
        let mut parts = OnlineFdr::new(s.clone());
        let mut b = vec![false; p.len()];
        parts.decide(&p[..cut], &mut b[..cut], None).unwrap();
        let mut resumed = OnlineFdr::from_parts(s, &parts.parts()).unwrap();
        resumed.decide(&p[cut..], &mut b[cut..], None).unwrap();
        prop_assert_eq!(a, b);
        prop_assert_eq!(whole.parts(), resumed.parts());
    }
}
