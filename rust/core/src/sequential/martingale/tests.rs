use super::*;
use proptest::prelude::*;

fn spec(kind: Kind) -> Spec {
    Spec {
        kind,
        jump: 0.01,
        epsilon: 0.5,
        n_grid: 100,
        min_epsilon: 0.01,
        threshold: Some(100.0),
        statistic: Statistic::Martingale,
        on_alarm: OnAlarm::Continue,
    }
}

fn run(m: &mut Martingale, p: &[f64]) -> Vec<Step> {
    let (lm, lc, lr, al) = m.update_owned(p).unwrap();
    assert!([lm.len(), lc.len(), lr.len(), al.len()] == [p.len(); 4]);
    (0..p.len())
        .map(|i| Step {
            log_martingale: lm[i],
            log_cusum: lc[i],
            log_shiryaev_roberts: lr[i],
            alarm: al[i],
        })
        .collect()
}

fn lse(v: &[f64]) -> f64 {
    let m = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    m + v.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
}

/// The definitions in log space, step by step, as nonconform 2.0 writes
/// them: (ln M, ln C, ln R) after each p-value.
fn definition(s: &Spec, p: &[f64]) -> Vec<(f64, f64, f64)> {
    let grid = s.grid();
    let mut caps = vec![0.0; grid.len()];
    let mut jumper = [(1.0f64 / 3.0).ln(); 3];
    let (mut lm, mut lc, mut lr) = (0.0, f64::NEG_INFINITY, f64::NEG_INFINITY);
    let mut out = Vec::new();
    for &x in p {
        let inc = match s.kind {
            Kind::Power | Kind::Mixture => {
                for (c, e) in caps.iter_mut().zip(&grid) {
                    *c += if *e == 1.0 {
                        0.0
                    } else {
                        e.ln() + (e - 1.0) * x.ln()
                    };
                }
                let new = lse(&caps) - (grid.len() as f64).ln();
                let inc = new - lm;
                lm = new;
                inc
            }
            Kind::Jumper => {
                let before = lse(&jumper);
                for (i, c) in jumper.iter_mut().enumerate() {
                    let e = i as f64 - 1.0;
                    let moved = ((1.0 - s.jump).ln() + *c).max((s.jump / 3.0).ln() + before);
                    let other = ((1.0 - s.jump).ln() + *c).min((s.jump / 3.0).ln() + before);
                    *c = moved + (other - moved).exp().ln_1p() + (1.0 + e * (x - 0.5)).ln();
                }
                let inc = lse(&jumper) - before;
                lm += inc;
                inc
            }
        };
        lc = inc + lc.max(0.0);
        lr = inc + log_add_exp(0.0, lr);
        out.push((lm, lc, lr));
    }
    out
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    a == b || (a - b).abs() <= tol * (1.0 + b.abs())
}

fn uniforms(n: usize, seed: u64) -> Vec<f64> {
    (0..n as u64)
        .map(|j| crate::conformal::uniform(seed, j))
        .collect()
}

#[test]
fn every_kind_equals_its_definition() {
    let mut p = uniforms(3000, 5);
    p.extend(uniforms(500, 6).iter().map(|u| u * 0.05)); // a change: small p-values
    for kind in [Kind::Jumper, Kind::Power, Kind::Mixture] {
        let s = spec(kind);
        let got = run(&mut Martingale::new(s.clone()).unwrap(), &p);
        for (g, (m, c, r)) in got.iter().zip(definition(&s, &p)) {
            assert!(
                close(g.log_martingale, m, 1e-12),
                "{kind:?} {} {m}",
                g.log_martingale
            );
            assert!(close(g.log_cusum, c, 1e-12), "{kind:?} {} {c}", g.log_cusum);
            assert!(close(g.log_shiryaev_roberts, r, 1e-12), "{kind:?}");
        }
        assert!(got.last().unwrap().alarm, "{kind:?} misses the change");
    }
}

#[test]
fn zero_and_one_are_handled() {
    for kind in [Kind::Power, Kind::Mixture] {
        let mut m = Martingale::new(spec(kind)).unwrap();
        let out = run(&mut m, &[0.5, 0.0, 0.3, 1.0]);
        assert_eq!(out[1].log_martingale, f64::INFINITY);
        assert!(out[1].alarm && out[3].alarm);
        assert_eq!(out[3].log_cusum, f64::INFINITY);
        let back = Martingale::from_parts(spec(kind), &m.parts()).unwrap();
        assert_eq!(back, m);
    }
    let mut one = Martingale::new(Spec {
        epsilon: 1.0,
        ..spec(Kind::Power)
    })
    .unwrap();
    let out = run(&mut one, &[0.0, 1.0, 0.2]);
    assert!(out.iter().all(|s| s.log_martingale == 0.0));
    let mut j = Martingale::new(spec(Kind::Jumper)).unwrap();
    let out = run(&mut j, &[0.0, 1.0, 0.0]);
    assert!(out.iter().all(|s| s.log_martingale.is_finite()));
}

#[test]
fn no_drift_over_ten_million_steps() {
    // p alternates between two values: ln M has a closed form.
    let (a, b) = (0.3f64, 0.9f64);
    let n = 10_000_000usize;
    let p: Vec<f64> = (0..n).map(|i| if i % 2 == 0 { a } else { b }).collect();
    let mut m = Martingale::new(Spec {
        threshold: None,
        ..spec(Kind::Power)
    })
    .unwrap();
    let last = *run(&mut m, &p).last().unwrap();
    let e = 0.5f64;
    let want = n as f64 * e.ln() + (e - 1.0) * (n / 2) as f64 * (a.ln() + b.ln());
    assert!(
        (last.log_martingale - want).abs() <= 1e-12 * want.abs(),
        "{}",
        last.log_martingale
    );
    let mut j = Martingale::new(Spec {
        threshold: None,
        ..spec(Kind::Jumper)
    })
    .unwrap();
    let out = run(&mut j, &p);
    let parts = j.parts();
    assert!((parts.components.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    assert!(out.iter().all(|s| s.log_martingale.is_finite()));
}

#[test]
fn alarms_continue_or_restart() {
    let p = vec![0.001; 40];
    let mut cont = Martingale::new(spec(Kind::Power)).unwrap();
    let a = run(&mut cont, &p);
    let first = a.iter().position(|s| s.alarm).unwrap();
    assert!(a[first..].iter().all(|s| s.alarm));
    assert_eq!(cont.parts().first_alarm, Some(first as u64));
    let restart = Spec {
        on_alarm: OnAlarm::Restart,
        ..spec(Kind::Power)
    };
    let mut r = Martingale::new(restart).unwrap();
    let b = run(&mut r, &p);
    assert_eq!(b.iter().position(|s| s.alarm), Some(first));
    // After each alarm the martingale starts again from 1.
    assert!(!b[first + 1].alarm && b[first + 1].log_martingale == a[0].log_martingale);
    assert_eq!(
        b.iter().filter(|s| s.alarm).count() as u64,
        r.parts().alarms
    );
    assert!(r.parts().alarms >= 2);
    r.reset();
    assert_eq!(r, Martingale::new(r.spec().clone()).unwrap());
    for (stat, name) in [
        (Statistic::Cusum, "cusum"),
        (Statistic::ShiryaevRoberts, "sr"),
    ] {
        let mut m = Martingale::new(Spec {
            statistic: stat,
            ..spec(Kind::Jumper)
        })
        .unwrap();
        let out = run(&mut m, &p);
        let want = out.iter().position(|s| match stat {
            Statistic::Cusum => s.log_cusum >= 100f64.ln(),
            _ => s.log_shiryaev_roberts >= 100f64.ln(),
        });
        assert_eq!(out.iter().position(|s| s.alarm), want, "{name}");
    }
}

#[test]
fn parameters_and_inputs_are_checked() {
    let bad = |s: Spec| Martingale::new(s).unwrap_err().to_string();
    assert!(bad(Spec {
        jump: 0.0,
        ..spec(Kind::Jumper)
    })
    .starts_with("jump:"));
    assert!(bad(Spec {
        epsilon: 1.5,
        ..spec(Kind::Power)
    })
    .starts_with("epsilon:"));
    assert!(bad(Spec {
        epsilon: f64::NAN,
        ..spec(Kind::Power)
    })
    .starts_with("epsilon:"));
    assert!(bad(Spec {
        n_grid: 1,
        ..spec(Kind::Mixture)
    })
    .starts_with("n_grid:"));
    assert!(bad(Spec {
        min_epsilon: 0.0,
        ..spec(Kind::Mixture)
    })
    .starts_with("min_epsilon:"));
    for c in [-1.0, 0.0, f64::NAN, f64::INFINITY] {
        assert!(bad(Spec {
            threshold: Some(c),
            ..spec(Kind::Jumper)
        })
        .starts_with("threshold:"));
    }
    assert!("cusum"
        .parse::<Kind>()
        .unwrap_err()
        .to_string()
        .starts_with("kind:"));
    let mut m = Martingale::new(spec(Kind::Mixture)).unwrap();
    run(&mut m, &[0.2, 0.7]);
    let before = m.clone();
    run(&mut m.clone(), &[0.5]);
    let e = m.step(f64::NAN).unwrap_err().to_string();
    assert!(e.starts_with("pvalues: pvalues[0] = NaN"), "{e}");
    let (mut a, mut b, mut c, mut d) = (vec![0.0; 2], vec![0.0; 2], vec![0.0; 2], vec![false; 2]);
    let path = Path {
        log_martingale: &mut a,
        log_cusum: &mut b,
        log_shiryaev_roberts: &mut c,
        alarm: &mut d,
    };
    let e = m.update(&[0.5, 1.5], path).unwrap_err().to_string();
    assert!(e.starts_with("pvalues: pvalues[1] = 1.5"), "{e}");
    assert_eq!(m, before);
}

/// The edits that only one kind refuses.
fn tampered_by_kind(kind: Kind, good: &Parts, fresh: &Parts) -> Vec<(&'static str, Parts)> {
    match kind {
        Kind::Jumper => vec![
            (
                "components",
                Parts {
                    components: [0.5, 0.6, -0.1],
                    ..good.clone()
                },
            ),
            (
                // Fractions other than thirds before the first p-value.
                "components",
                Parts {
                    components: [0.5, 0.25, 0.25],
                    ..fresh.clone()
                },
            ),
            (
                // The error term is part of ln M, which must stay ≤ ln C.
                "log_cusum",
                Parts {
                    log_martingale_error: good.log_cusum - good.log_martingale + 1.0,
                    ..good.clone()
                },
            ),
        ],
        _ => vec![
            (
                "log_martingale",
                Parts {
                    log_martingale: good.log_martingale + 1e-9,
                    ..good.clone()
                },
            ),
            (
                // Not the jumper's: the fractions it starts with, kept.
                "components",
                Parts {
                    components: [1.0 / 3.0, 1.0 / 3.0, 1e-318],
                    ..good.clone()
                },
            ),
        ],
    }
}

/// Edits of a genuine state (`good`, after 50 p-values) and of a fresh
/// one, each with the field its refusal must name.
fn tampered(kind: Kind, good: &Parts, fresh: &Parts) -> Vec<(&'static str, Parts)> {
    let mut cases = vec![
        (
            "steps",
            Parts {
                steps: 51,
                ..good.clone()
            },
        ),
        (
            "log_sum",
            Parts {
                log_sum: 3.0,
                ..good.clone()
            },
        ),
        (
            "log_cusum",
            Parts {
                log_cusum: good.log_shiryaev_roberts + 1.0,
                ..good.clone()
            },
        ),
        (
            "log_cusum",
            Parts {
                log_cusum: f64::NEG_INFINITY,
                ..good.clone()
            },
        ),
        (
            "alarms",
            Parts {
                alarms: 3,
                ..good.clone()
            },
        ),
        (
            "log_shiryaev_roberts",
            Parts {
                log_shiryaev_roberts: f64::NAN,
                ..good.clone()
            },
        ),
        (
            // An error term beyond what 50 roundings of S can leave (the
            // jumper keeps no S: none).
            "log_sum",
            Parts {
                log_sum_error: 75.0 * f64::EPSILON * good.log_sum.abs() + 1e-300,
                ..good.clone()
            },
        ),
        (
            // A fresh state whose S carries an error term.
            "log_sum",
            Parts {
                log_sum_error: -22.75,
                ..fresh.clone()
            },
        ),
        (
            "log_martingale",
            Parts {
                log_martingale: 2.0,
                ..fresh.clone()
            },
        ),
    ];
    cases.extend(tampered_by_kind(kind, good, fresh));
    cases
}

#[test]
fn tampered_parts_are_refused() {
    for kind in [Kind::Jumper, Kind::Power, Kind::Mixture] {
        let mut m = Martingale::new(spec(kind)).unwrap();
        run(&mut m, &uniforms(50, 1));
        let good = m.parts();
        assert_eq!(Martingale::from_parts(spec(kind), &good).unwrap(), m);
        let fresh = Parts {
            n: 50,
            first_alarm: None,
            alarms: 0,
            ..Martingale::new(spec(kind)).unwrap().parts()
        };
        assert!(Martingale::from_parts(spec(kind), &fresh).is_ok());
        for (field, parts) in tampered(kind, &good, &fresh) {
            let e = Martingale::from_parts(spec(kind), &parts)
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(&format!("{field}:")), "{kind:?} {field}: {e}");
        }
    }
}

#[test]
fn n_is_a_count_of_at_most_two_to_the_53() {
    // §5: a stored n beyond 2⁵³ is refused; a batch that would pass it
    // is refused whole and changes nothing.
    let max = crate::limits::COUNT.max;
    for kind in [Kind::Jumper, Kind::Power, Kind::Mixture] {
        let fresh = Martingale::new(spec(kind)).unwrap().parts();
        let over = Parts {
            n: max + 1,
            ..fresh.clone()
        };
        let e = Martingale::from_parts(spec(kind), &over)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("n:"), "{e}");
        let full = Parts {
            n: max - 1,
            ..fresh
        };
        let mut m = Martingale::from_parts(spec(kind), &full).unwrap();
        let before = m.clone();
        m.step(0.5).unwrap();
        let e = m.step(0.5).unwrap_err().to_string();
        assert!(e.starts_with("pvalues:"), "{e}");
        assert_eq!(m.parts().n, max);
        let mut again = before.clone();
        let mut out = [0.0; 2];
        let (mut c, mut r, mut a) = ([0.0; 2], [0.0; 2], [false; 2]);
        let path = Path {
            log_martingale: &mut out,
            log_cusum: &mut c,
            log_shiryaev_roberts: &mut r,
            alarm: &mut a,
        };
        assert!(again.update(&[0.5, 0.5], path).is_err());
        assert_eq!(again, before);
    }
}

proptest! {
    #[test]
    fn resuming_anywhere_gives_the_same_path(
        kind in prop::sample::select(vec![Kind::Jumper, Kind::Power, Kind::Mixture]),
        on_alarm in prop::sample::select(vec![OnAlarm::Continue, OnAlarm::Restart]),
        p in prop::collection::vec(prop_oneof![0.0..=1.0f64, 0.0..0.01f64], 1..400),
        cut in 0usize..400,
        eps in 0.05..=1.0f64,
    ) {
        let s = Spec { on_alarm, epsilon: eps, min_epsilon: eps.min(0.5), threshold: Some(20.0), ..spec(kind) };
        let cut = cut.min(p.len());
        let whole = run(&mut Martingale::new(s.clone()).unwrap(), &p);
        let mut first = Martingale::new(s.clone()).unwrap();
        let mut split = run(&mut first, &p[..cut]);
        let mut resumed = Martingale::from_parts(s, &first.parts()).unwrap();
        split.extend(run(&mut resumed, &p[cut..]));
        prop_assert_eq!(whole, split);
    }

    #[test]
    fn statistics_are_ordered(
        kind in prop::sample::select(vec![Kind::Jumper, Kind::Power, Kind::Mixture]),
        p in prop::collection::vec(0.0001..=1.0f64, 1..300),
    ) {
        let out = run(&mut Martingale::new(spec(kind)).unwrap(), &p);
        for s in out {
            prop_assert!(s.log_martingale <= s.log_cusum + 1e-9 * (1.0 + s.log_cusum.abs()));
            prop_assert!(s.log_cusum <= s.log_shiryaev_roberts);
        }
    }
}
