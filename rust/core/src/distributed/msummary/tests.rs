use super::*;
use crate::distributed::partition::m_sums;
use proptest::prelude::*;

fn held_all(s: &MSummary, x: &[f64], c: f64) -> BTreeMap<u32, Vec<f64>> {
    let ids: Vec<u32> = s.entries().map(|e| e.0).collect();
    ids.iter()
        .copied()
        .zip(collect_buckets(x, false, 0, c, &ids))
        .collect()
}

fn close(a: [f64; 6], b: [f64; 6], scale: f64) -> bool {
    a.iter()
        .zip(&b)
        .all(|(u, v)| (u - v).abs() <= 1e-12 * (scale + v.abs()))
}

proptest! {
    /// A step's sums from the summary (whole buckets by their moments,
    /// cut ones from their scores) equal a direct read's (`m_sums`),
    /// counts exactly; and the summary of pieces is the summary of the
    /// whole.
    #[test]
    fn summary_sums_equal_direct_sums(
        x in prop::collection::vec(-30.0f64..30.0, 1..400),
        m in -3.0f64..3.0,
        sigma in 0.3f64..4.0,
        cut in 0usize..400,
        huber in any::<bool>(),
    ) {
        let c = 0.25;
        let norm = if huber { Norm::Huber } else { Norm::Tukey };
        let p = MParams::new(norm);
        let (a, b) = x.split_at(cut.min(x.len()));
        let s = MSummary::of(a, false, 0, c, huber).combine(MSummary::of(b, false, 0, c, huber));
        let whole = MSummary::of(&x, false, 0, c, huber);
        prop_assert_eq!(s.entries().map(|e| (e.0, e.1.n)).collect::<Vec<_>>(),
                        whole.entries().map(|e| (e.0, e.1.n)).collect::<Vec<_>>());
        let want = m_sums(&x, false, &p, (m, sigma), 0);
        let held = held_all(&s, &x, c);
        match s.sums(&p, c, (m, sigma), &held, None) {
            Answer::Sums(got) => {
                prop_assert!(close(got, want, x.len() as f64 * 30.0), "{:?} {:?}", got, want);
                prop_assert_eq!((got[2], got[5]), (want[2], want[5]));
            }
            Answer::Direct => {
                // Only when a far tail is reached or too near.
                prop_assert!(s.left.n + s.right.n > 0);
            }
            Answer::Missing(ids) => prop_assert!(false, "held every bucket, missing {:?}", ids),
        }
    }
}

#[test]
fn only_cut_buckets_are_missing_and_collects_return_them() {
    let x: Vec<f64> = (0..50_000).map(|i| f64::from(i) * 1e-4 - 2.5).collect();
    let p = MParams::new(Norm::Huber);
    let s = MSummary::of(&x, false, 0, 0.0, true);
    let none = BTreeMap::new();
    let Answer::Missing(ids) = s.sums(&p, 0.0, (0.1, 1.0), &none, None) else {
        panic!("the edges cut buckets");
    };
    // At most one bucket per edge (±1.345, ±1.5 about 0.1), each with
    // scores on both sides of one.
    assert!(!ids.is_empty() && ids.len() <= 4, "{ids:?}");
    let got = collect_buckets(&x, false, 0, 0.0, &ids);
    for (&i, values) in ids.iter().zip(&got) {
        assert_eq!(values.len() as u64, s.count(i));
        let cut = |w: f64| {
            let inside = values
                .iter()
                .filter(|&&y| ((y - 0.1) / 1.0f64).abs() <= w)
                .count();
            inside > 0 && inside < values.len()
        };
        assert!(cut(1.345) || cut(1.5), "{i}: {values:?}");
    }
    let held: BTreeMap<u32, Vec<f64>> = ids.iter().copied().zip(got).collect();
    let Answer::Sums(sums) = s.sums(&p, 0.0, (0.1, 1.0), &held, None) else {
        panic!("every cut bucket held");
    };
    let want = m_sums(&x, false, &p, (0.1, 1.0), 0);
    assert!(close(sums, want, 50_000.0), "{sums:?} {want:?}");
    assert_eq!((sums[2], sums[5]), (want[2], want[5]));
    // The prediction notes the same buckets.
    let mut noted = Vec::new();
    assert!(matches!(
        s.sums(&p, 0.0, (0.1, 1.0), &none, Some(&mut noted)),
        Answer::Sums(_)
    ));
    assert_eq!(noted, ids);
}

#[test]
fn far_tails_by_their_series_and_refused_when_reached() {
    let mut x: Vec<f64> = (0..2000).map(|i| f64::from(i) * 0.001 - 1.0).collect();
    x.extend([-40.0, 25.0, 1e300, 3e5]);
    let p = MParams::new(Norm::Huber);
    let s = MSummary::of(&x, false, 0, 0.0, true);
    assert_eq!((s.left.n, s.right.n), (1, 3));
    let held = held_all(&s, &x, 0.0);
    let Answer::Sums(got) = s.sums(&p, 0.0, (0.3, 0.5), &held, None) else {
        panic!("the far tails are far");
    };
    assert!(close(got, m_sums(&x, false, &p, (0.3, 0.5), 0), 2000.0));
    // A window reaching the right tail: a direct pass.
    assert_eq!(s.sums(&p, 0.0, (0.3, 20.0), &held, None), Answer::Direct);
}

#[test]
fn summaries_refuse_parts_out_of_order() {
    let b = Bucket {
        n: 1,
        min: 0.0,
        max: 0.0,
        sums: [0.0; K - 1],
    };
    let t = Tail::default();
    assert!(MSummary::from_parts(vec![(3, b), (2, b)], t, t).is_err());
    assert!(MSummary::from_parts(vec![(BUCKETS as u32, b)], t, t).is_err());
    let empty = Bucket { n: 0, ..b };
    assert!(MSummary::from_parts(vec![(1, empty)], t, t).is_err());
    assert!(MSummary::from_parts(vec![(1, b)], t, t).is_ok());
}
