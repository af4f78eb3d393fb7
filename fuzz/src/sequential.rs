//! Online decisions and their checkpoints (contract §12): an online FDR
//! rule, an exchangeability martingale or online conformal p-values, built
//! from arbitrary parameters, fed arbitrary batches, then checkpointed,
//! edited and resumed as `from_dict` and unpickling hand them to the core.
//!
//! Checked against independent recomputations where they are cheap:
//! - online FDR: every decision is `p ≤ α_t` with α_t the exact level,
//!   and the decisions taken through the rule's cached bound equal those
//!   of the exact level at every step;
//! - online p-values: each p-value is `(G + θ(E + 1))/(n + 1)` with G and
//!   E counted directly among the earlier scores (bit for bit when θ is
//!   given, inside the interval otherwise), and the stored multiset is the
//!   scores seen;
//! - every state: a genuine one is accepted by `from_parts` and resumes
//!   bit for bit; an edited one is refused with the field named, or reads
//!   back to the same parts and goes on without NaN or panic; a batch
//!   refused changes nothing.

use crate::input::Input;
use outprob_core::error::Error;
use outprob_core::io::record::{Field, Record};
use outprob_core::numeric::float::order_key;
use outprob_core::sequential::martingale::{
    Kind as MartingaleKind, Martingale, OnAlarm, Parts as MartingaleParts, Spec, Statistic,
};
use outprob_core::sequential::online_fdr::{Method, OnlineFdr, Parts as FdrParts, Settings};
use outprob_core::sequential::online_pvalues::{OnlinePvalues, Parts as PvalueParts};

/// The longest batch: past the sorted-batch threshold of the online
/// p-values, short enough for the quadratic recount.
const MAX_BATCH: usize = 160;

pub fn sequential(data: &[u8]) {
    let mut r = Input::new(data);
    match r.byte() % 3 {
        0 => online_fdr(&mut r),
        1 => martingale(&mut r),
        _ => online_pvalues(&mut r),
    }
}

/// The error names one of `names`, and is the parameter kind.
fn names_one_of(e: &Error, names: &[&str]) {
    match e {
        Error::InvalidParameter { name, .. } if names.contains(name) => {}
        other => panic!("refused without naming one of {names:?}: {other:?}"),
    }
}

fn maybe(r: &mut Input<'_>) -> Option<f64> {
    (!r.byte().is_multiple_of(3)).then(|| r.probability())
}

fn batch(r: &mut Input<'_>, valid_only: bool) -> Vec<f64> {
    let n = usize::from(r.byte()) % MAX_BATCH;
    (0..n)
        .map(|_| r.probability())
        .filter(|p| !valid_only || (0.0..=1.0).contains(p))
        .collect()
}

/// A count near the edges of a stored state.
fn count(r: &mut Input<'_>, near: u64) -> u64 {
    match r.byte() % 8 {
        0 => 0,
        1 => near,
        2 => near.wrapping_add(1),
        3 => near.wrapping_sub(1),
        4 => 1 << 53,
        5 => (1 << 53) + 1,
        6 => u64::MAX,
        _ => u64::from(r.byte()),
    }
}

/// Edits up to three fields of a record: a value of the field's kind at
/// an edge, or sometimes a field of another kind.
fn edit(r: &mut Input<'_>, rec: &mut Record) {
    for _ in 0..=r.byte() % 3 {
        let i = usize::from(r.byte()) % rec.fields.len();
        let f = &mut rec.fields[i];
        if r.byte().is_multiple_of(16) {
            *f = Field::Name("x".into());
            continue;
        }
        match f {
            Field::Count(c) => *c = count(r, *c),
            Field::OptCount(c) => {
                *c = (!r.byte().is_multiple_of(3)).then(|| count(r, c.unwrap_or(0)));
            }
            Field::Float(x) => *x = r.score(),
            Field::Floats(v) | Field::Values(v) => match r.byte() % 4 {
                0 => {
                    v.pop();
                }
                1 => v.push(r.score()),
                _ => {
                    if !v.is_empty() {
                        let j = usize::from(r.byte()) % v.len();
                        v[j] = r.score();
                    }
                }
            },
            Field::Counts(v) => match r.byte() % 4 {
                0 => {
                    v.pop();
                }
                1 => v.push(count(r, 1)),
                _ => {
                    if !v.is_empty() {
                        let j = usize::from(r.byte()) % v.len();
                        v[j] = count(r, v[j]);
                    }
                }
            },
            _ => {}
        }
    }
}

fn settings(r: &mut Input<'_>) -> Result<Settings, Error> {
    let method = [
        Method::Lond,
        Method::LordPlusPlus,
        Method::Saffron,
        Method::Addis,
    ][usize::from(r.byte() % 4)];
    let alpha = match r.byte() % 4 {
        0 => r.probability(),
        _ => [0.05, 0.1, 0.2, 0.5][usize::from(r.byte() % 4)],
    };
    let (w0, lam, tau) = (maybe(r), maybe(r), maybe(r));
    let gamma = (r.byte().is_multiple_of(4)).then(|| {
        let n = usize::from(r.byte() % 12);
        let mut g: Vec<f64> = (0..n).map(|_| r.probability() / 4.0).collect();
        if r.byte().is_multiple_of(2) {
            g.sort_by(|a, b| b.total_cmp(a));
        }
        g
    });
    Settings::new(method, alpha, w0, lam, tau, gamma)
}

/// Decisions on `p` through the cached bound and through the exact level,
/// which must agree: each decision is p ≤ α_t, α_t finite in [0, 1].
fn decide_checked(rule: &mut OnlineFdr, p: &[f64]) -> Result<Vec<bool>, Error> {
    let mut exact = rule.clone();
    let before = rule.parts();
    let mut out = vec![false; p.len()];
    if let Err(e) = rule.decide(p, &mut out, None) {
        names_one_of(&e, &["pvalues"]);
        assert_eq!(rule.parts(), before, "a refused batch changed the state");
        return Err(e);
    }
    let (mut out2, mut levels) = (vec![false; p.len()], vec![0.0; p.len()]);
    exact.decide(p, &mut out2, Some(&mut levels)).unwrap();
    for (j, ((&x, &d), &l)) in p.iter().zip(&out2).zip(&levels).enumerate() {
        assert!(l.is_finite() && (0.0..=1.0).contains(&l), "level {j} = {l}");
        assert_eq!(d, x <= l, "decision {j}: p = {x}, level {l}");
    }
    assert_eq!(out, out2, "the cached bound decided differently");
    assert_eq!(rule.parts(), exact.parts());
    Ok(out)
}

fn online_fdr(r: &mut Input<'_>) {
    let s = match settings(r) {
        Ok(s) => s,
        Err(e) => return names_one_of(&e, &["alpha", "w0", "lam", "tau", "gamma"]),
    };
    let back = Settings::from_record(&s.to_record()).expect("its own record");
    assert_eq!(back, s);
    let mut rule = OnlineFdr::new(s.clone());
    let valid_only = !r.byte().is_multiple_of(8);
    let first = batch(r, valid_only);
    let _ = decide_checked(&mut rule, &first);
    let parts = rule.parts();
    let mut resumed = OnlineFdr::from_parts(s.clone(), &parts).expect("a genuine state");
    assert_eq!(resumed.parts(), parts);
    let second = batch(r, true);
    let a = decide_checked(&mut rule, &second).unwrap();
    let b = decide_checked(&mut resumed, &second).unwrap();
    assert_eq!(a, b, "the resumed rule decided differently");
    assert_eq!(rule.parts(), resumed.parts());

    let mut rec = rule.parts().to_record();
    edit(r, &mut rec);
    let Ok(p) = FdrParts::from_record(&rec) else {
        return;
    };
    match OnlineFdr::from_parts(s, &p) {
        Err(e) => names_one_of(
            &e,
            &["n", "clock", "rejections", "first", "stamps", "counts"],
        ),
        Ok(mut edited) => {
            let again = OnlineFdr::from_parts(edited.settings().clone(), &edited.parts())
                .expect("its own parts");
            assert_eq!(again.parts(), edited.parts());
            let more = batch(r, true);
            if let Err(e) = decide_checked(&mut edited, &more) {
                names_one_of(&e, &["pvalues"]);
            }
        }
    }
}

fn spec(r: &mut Input<'_>) -> Spec {
    let unit = |r: &mut Input<'_>| match r.byte() % 4 {
        0 => r.probability(),
        _ => f64::from(r.byte() % 100 + 1) / 100.0,
    };
    Spec {
        kind: [
            MartingaleKind::Jumper,
            MartingaleKind::Power,
            MartingaleKind::Mixture,
        ][usize::from(r.byte() % 3)],
        jump: unit(r),
        epsilon: unit(r),
        n_grid: match r.byte() % 4 {
            0 => usize::from(r.u16()),
            _ => usize::from(r.byte() % 20),
        },
        min_epsilon: unit(r),
        threshold: match r.byte() % 4 {
            0 => None,
            1 => Some(r.score()),
            _ => Some(f64::from(r.byte()) + 1.0),
        },
        statistic: [
            Statistic::Martingale,
            Statistic::Cusum,
            Statistic::ShiryaevRoberts,
        ][usize::from(r.byte() % 3)],
        on_alarm: [OnAlarm::Continue, OnAlarm::Restart][usize::from(r.byte() % 2)],
    }
}

/// The path after each p-value of `p`: no NaN, and the state after it one
/// that `from_parts` accepts; a refused batch changes nothing.
fn update_checked(m: &mut Martingale, p: &[f64]) -> Option<Vec<f64>> {
    let before = m.parts();
    match m.update_owned(p) {
        Err(e) => {
            names_one_of(&e, &["pvalues"]);
            assert_eq!(m.parts(), before, "a refused batch changed the state");
            None
        }
        Ok((lm, lc, lr, _)) => {
            for j in 0..p.len() {
                assert!(
                    !lm[j].is_nan() && !lc[j].is_nan() && !lr[j].is_nan(),
                    "NaN at {j}"
                );
            }
            if let Err(e) = Martingale::from_parts(m.spec().clone(), &m.parts()) {
                panic!("the state after a batch is refused: {e}");
            }
            Some(lm)
        }
    }
}

fn martingale(r: &mut Input<'_>) {
    let spec = spec(r);
    let mut m = match Martingale::new(spec.clone()) {
        Ok(m) => m,
        Err(e) => {
            return names_one_of(
                &e,
                &["jump", "epsilon", "min_epsilon", "n_grid", "threshold"],
            )
        }
    };
    let valid_only = !r.byte().is_multiple_of(8);
    let first = batch(r, valid_only);
    update_checked(&mut m, &first);
    let parts = m.parts();
    let mut resumed = Martingale::from_parts(spec.clone(), &parts).expect("a genuine state");
    assert_eq!(resumed.parts(), parts);
    let second = batch(r, true);
    let a = update_checked(&mut m, &second).unwrap();
    let b = update_checked(&mut resumed, &second).unwrap();
    assert_eq!(
        a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        b.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        "the resumed martingale went another way"
    );
    assert_eq!(m.parts(), resumed.parts());

    let mut rec = m.parts().to_record();
    edit(r, &mut rec);
    let p = match MartingaleParts::from_record(&rec) {
        Ok(p) => p,
        Err(e) => return names_one_of(&e, &["state", "components"]),
    };
    match Martingale::from_parts(spec.clone(), &p) {
        Err(e) => {
            let fields: Vec<&str> = rec.schema.iter().map(|(n, _)| *n).collect();
            names_one_of(&e, &fields);
        }
        Ok(mut edited) => {
            assert_eq!(edited.parts(), p, "an accepted state reads back otherwise");
            let more = batch(r, true);
            update_checked(&mut edited, &more);
        }
    }
}

/// Oriented order key, −0 as +0 — the rank's order, recomputed here.
fn oriented(s: f64, negate: bool) -> f64 {
    (if negate { -s } else { s }) + 0.0
}

/// The p-values of `scores` after `seen`, checked against a direct count.
fn pvalues_checked(
    o: &mut OnlinePvalues,
    seen: &mut Vec<f64>,
    scores: &[f64],
    uniforms: Option<&[f64]>,
    negate: bool,
    smoothed: bool,
) {
    let before = o.parts();
    let mut out = vec![f64::NAN; scores.len()];
    if let Err(e) = o.pvalues(scores, uniforms, &mut out) {
        names_one_of(&e, &["scores", "uniforms"]);
        assert_eq!(o.parts(), before, "a refused batch changed the state");
        return;
    }
    for (j, &s) in scores.iter().enumerate() {
        let x = order_key(oriented(s, negate));
        let greater = seen.iter().filter(|&&y| order_key(y) > x).count() as u64;
        let equal = seen.iter().filter(|&&y| order_key(y) == x).count() as u64;
        let n1 = (seen.len() + 1) as f64;
        let p = out[j];
        match uniforms {
            Some(u) => {
                let want = (greater as f64 + u[j] * (equal + 1) as f64) / n1;
                assert_eq!(p.to_bits(), want.to_bits(), "p-value {j}: {p} vs {want}");
            }
            None if !smoothed => {
                let want = (greater + equal + 1) as f64 / n1;
                assert_eq!(p.to_bits(), want.to_bits(), "p-value {j}: {p} vs {want}");
            }
            None => {
                let (lo, hi) = (greater as f64 / n1, (greater + equal + 1) as f64 / n1);
                assert!(
                    lo <= p && p <= hi && p > 0.0,
                    "p-value {j} = {p} not in [{lo}, {hi}]"
                );
            }
        }
        seen.push(oriented(s, negate));
    }
    // The stored multiset is the scores seen.
    let mut keys: Vec<u64> = seen.iter().map(|&y| order_key(y)).collect();
    keys.sort_unstable();
    keys.dedup();
    let parts = o.parts();
    assert_eq!(parts.n, seen.len() as u64);
    assert_eq!(parts.scores.len(), keys.len(), "distinct scores");
    let mut stored: Vec<u64> = parts
        .scores
        .iter()
        .map(|&s| order_key(oriented(s, negate)))
        .collect();
    stored.sort_unstable();
    assert_eq!(stored, keys, "the stored scores are not those seen");
}

fn online_pvalues(r: &mut Input<'_>) {
    let seed = u64::from_le_bytes(core::array::from_fn(|_| r.byte()));
    let (negate, smoothed) = (r.byte().is_multiple_of(2), r.byte().is_multiple_of(2));
    let mut o = OnlinePvalues::new(seed, negate, smoothed);
    let mut seen = Vec::new();
    for _ in 0..=r.byte() % 3 {
        let n = usize::from(r.byte()) % MAX_BATCH;
        let scores: Vec<f64> = (0..n).map(|_| r.score()).collect();
        let uniforms: Option<Vec<f64>> = match r.byte() % 3 {
            0 => Some((0..n).map(|_| r.probability()).collect()),
            _ => None,
        };
        pvalues_checked(
            &mut o,
            &mut seen,
            &scores,
            uniforms.as_deref(),
            negate,
            smoothed,
        );
    }
    let parts = o.parts();
    let mut resumed =
        OnlinePvalues::from_parts(seed, negate, smoothed, &parts).expect("a genuine state");
    assert_eq!(resumed.parts(), parts);
    let n = usize::from(r.byte()) % MAX_BATCH;
    let scores: Vec<f64> = (0..n).map(|_| r.score()).filter(|s| !s.is_nan()).collect();
    let (mut a, mut b) = (vec![0.0; scores.len()], vec![0.0; scores.len()]);
    o.pvalues(&scores, None, &mut a).unwrap();
    resumed.pvalues(&scores, None, &mut b).unwrap();
    assert_eq!(
        a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        b.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        "the resumed p-values differ"
    );
    seen.extend(scores.iter().map(|&s| oriented(s, negate)));

    let mut rec = o.parts().to_record();
    edit(r, &mut rec);
    let p = match PvalueParts::from_record(&rec) {
        Ok(p) => p,
        Err(e) => return names_one_of(&e, &["state"]),
    };
    match OnlinePvalues::from_parts(seed, negate, smoothed, &p) {
        Err(e) => names_one_of(&e, &["n", "scores", "counts"]),
        Ok(mut edited) => {
            let back = edited.parts();
            assert_eq!(back.n, p.n);
            assert_eq!(
                back.counts, p.counts,
                "an accepted state reads back otherwise"
            );
            assert!(back.scores.iter().zip(&p.scores).all(|(a, b)| a == b));
            let more: Vec<f64> = (0..usize::from(r.byte() % 70)).map(|_| r.score()).collect();
            if p.n <= 4096 {
                let mut seen: Vec<f64> = p
                    .scores
                    .iter()
                    .zip(&p.counts)
                    .flat_map(|(&s, &c)| core::iter::repeat_n(oriented(s, negate), c as usize))
                    .collect();
                pvalues_checked(&mut edited, &mut seen, &more, None, negate, smoothed);
            }
        }
    }
}
