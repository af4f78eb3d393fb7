//! The median deviation read ahead (contract §9): the median's pass also
//! collects the values that hold the median deviation about any center
//! in the median's bracket, so that the nMAD needs no pass of its own.
//!
//! With the median `c` known to lie in `[a, b]` and the deviations' ranks
//! expected in `[da, db]` about a point of it, every `|v − c|` in
//! `[da, db]` has `v` in `L = [a − db′, b − da′]` or `R = [a + da′,
//! b + db′]`, the deviation bracket widened by `b − a` (`da′`, `db′`). The
//! pass returns the values in `L` and `R` and the counts below them; with
//! `c` known, the values between `L` and `R` (the gap) have deviations
//! at most `g`, those outside at least `o` (rounding is monotone), and
//! every collected deviation is computed as the deviation key computes
//! it. A rank whose position lies among the collected deviations in
//! `[g, o]` is settled exactly; any other (a bad guess of the sketch) is
//! left to the usual deviation passes.

use super::select;

/// `(da′, db′)`: the deviation bracket `(da, db)` about a point of the
/// median's bracket `(a, b)`, widened to hold the one about any point of
/// it (each deviation moves by at most `b − a`).
pub(super) fn widened((a, b): (f64, f64), (da, db): (f64, f64)) -> (f64, f64) {
    let delta = b - a;
    ((da - delta).max(0.0), db + delta)
}

/// The value brackets `L`, `R` (one when they meet) of the median's
/// bracket `(a, b)` and the deviation bracket `(da, db)`; None when they
/// are not finite and ordered.
pub(super) fn brackets((a, b): (f64, f64), (da, db): (f64, f64)) -> Option<Vec<(f64, f64)>> {
    let (da, db) = widened((a, b), (da, db));
    let (l1, l2, r1, r2) = (a - db, b - da, a + da, b + db);
    let ordered = l1 <= l2 && r1 <= r2 && a <= b && da <= db;
    if !ordered || ![l1, l2, r1, r2].iter().all(|v| v.is_finite()) {
        return None;
    }
    Some(if l2 < r1 {
        vec![(l1, l2), (r1, r2)]
    } else {
        vec![(l1, r2)]
    })
}

/// The deviations `|v − c|` at the 0-based ranks `ranks` (ascending,
/// unique) of every value of the column, from the value brackets
/// `brackets` (of [`brackets`]) and their partial `parts` (per bracket:
/// the count below it and its values); None when they do not settle
/// every rank.
pub(super) fn deviations(
    c: f64,
    brackets: &[(f64, f64)],
    parts: &[(u64, Vec<f64>)],
    ranks: &[u64],
) -> Option<Vec<f64>> {
    let (first, last) = (brackets.first()?, brackets.last()?);
    if parts.len() != brackets.len() || brackets.len() > 2 || !(first.0 <= c && c <= last.1) {
        return None;
    }
    // The gap's count and the bound on its deviations (none: no gap).
    let (gap, g) = if brackets.len() == 2 {
        let gap = parts[1]
            .0
            .checked_sub(parts[0].0 + parts[0].1.len() as u64)?;
        (gap, (c - first.1).abs().max((last.0 - c).abs()))
    } else {
        (0, 0.0)
    };
    let o = (c - first.0).min(last.1 - c);
    if g.is_nan() || o.is_nan() || g > o {
        return None;
    }
    let mut below = gap;
    let mut inside = Vec::new();
    for d in parts.iter().flat_map(|p| &p.1).map(|&v| (v - c).abs()) {
        if d < g {
            below += 1;
        } else if d <= o {
            inside.push(d);
        }
    }
    let at: Vec<usize> = ranks
        .iter()
        .map(|&r| {
            r.checked_sub(below)
                .filter(|&i| i < inside.len() as u64)
                .map(|i| i as usize)
        })
        .collect::<Option<_>>()?;
    select(inside, &at).ok()
}

#[cfg(test)]
mod tests {
    use super::super::key_bracket;
    use super::*;
    use crate::numeric::float::order_key;

    /// The partial a bracket pass returns for value brackets.
    fn pass(x: &[f64], brackets: &[(f64, f64)]) -> Vec<(u64, Vec<f64>)> {
        brackets
            .iter()
            .map(|&(lo, hi)| {
                let (klo, khi) = key_bracket(lo, hi);
                let below = x.iter().filter(|&&v| order_key(v) < klo).count() as u64;
                let vals = x
                    .iter()
                    .copied()
                    .filter(|&v| (klo..=khi).contains(&order_key(v)))
                    .collect();
                (below, vals)
            })
            .collect()
    }

    fn sorted_deviations(x: &[f64], c: f64) -> Vec<f64> {
        let mut d: Vec<f64> = x.iter().map(|v| (v - c).abs()).collect();
        d.sort_by(f64::total_cmp);
        d
    }

    #[test]
    fn settled_deviations_are_those_of_a_sort() {
        // Ties, a long right tail and values on the brackets' edges.
        let mut x: Vec<f64> = (0..2001)
            .map(|i| f64::from(i % 97) * 0.25 + f64::from(i % 7).powi(3) * 0.01)
            .collect();
        x.extend([0.0, -0.0, 1e6, -3.0, 12.25, 12.25]);
        let mut s = x.clone();
        s.sort_by(f64::total_cmp);
        let n = s.len() as u64;
        let ranks = vec![n / 2 - 1, n / 2];
        let c = 0.5 * s[ranks[0] as usize] + 0.5 * s[ranks[1] as usize];
        let want = sorted_deviations(&x, c);
        let truth = (want[ranks[0] as usize], want[ranks[1] as usize]);
        let mut hits = 0;
        for (a, b) in [(c, c), (c - 0.3, c + 0.1), (c - 2.0, c + 2.0)] {
            for (da, db) in [
                (truth.0, truth.1),
                (truth.0 - 0.5, truth.1 + 0.5),
                (0.0, truth.1 + 3.0),
                (truth.1 + 1.0, truth.1 + 2.0), // missed: left to the usual passes
                (0.0, truth.0 * 0.5),           // missed
            ] {
                let Some(br) = brackets((a, b), (da, db)) else {
                    continue;
                };
                let got = deviations(c, &br, &pass(&x, &br), &ranks);
                if let Some(got) = got {
                    assert_eq!(got, vec![truth.0, truth.1], "{a} {b} {da} {db}");
                    hits += 1;
                }
            }
        }
        assert!(hits >= 6, "{hits}");
    }

    #[test]
    fn a_center_outside_the_brackets_or_counts_that_disagree_settle_nothing() {
        let x: Vec<f64> = (0..101).map(f64::from).collect();
        let br = brackets((50.0, 50.0), (20.0, 30.0)).unwrap();
        let parts = pass(&x, &br);
        assert!(deviations(50.0, &br, &parts, &[50]).is_some());
        assert!(deviations(1e3, &br, &parts, &[50]).is_none());
        let mut bad = parts.clone();
        bad[1].0 = 0;
        assert!(deviations(50.0, &br, &bad, &[50]).is_none());
        assert!(brackets((0.0, f64::INFINITY), (1.0, 2.0)).is_none());
    }
}
