use super::serde::{deserialize, serialize};
use super::*;
use proptest::prelude::*;

fn lcg(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed;
    move || {
        s = splitmix64(s);
        (s >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn exact_rank(sorted: &[f64], y: f64) -> f64 {
    sorted.partition_point(|&v| v <= y) as f64 / sorted.len() as f64
}

fn check_invariants<T: Item>(s: &KllSketch<T>) {
    let l = s.levels();
    assert_eq!(l.len(), s.num_levels() + 1);
    assert_eq!(l[s.num_levels()] as usize, s.items().len());
    assert_eq!(
        s.items().len() as u32,
        compress::total_capacity(s.k(), s.num_levels())
    );
    assert!(l.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(compress::total_weight(l), Some(s.n()));
    for h in 1..s.num_levels() {
        let run = &s.items()[l[h] as usize..l[h + 1] as usize];
        assert!(run.windows(2).all(|w| w[0] <= w[1]), "level {h} unsorted");
    }
}

#[test]
fn exact_mode_and_layout() {
    let mut s = KllSketch::<f64>::new(200, 0).unwrap();
    s.update(&(0..10).map(f64::from).collect::<Vec<_>>());
    assert_eq!(
        (s.n(), s.num_retained(), s.is_estimation_mode()),
        (10, 10, false)
    );
    // DataSketches' bytes of the same sketch (kll_doubles_sketch(200),
    // update 0..9): items are stored level 0 first, newest first.
    let b = serialize(&s);
    assert_eq!(&b[..8], &[5, 1, 15, 0, 200, 0, 8, 0]);
    assert_eq!(b.len(), 20 + 4 + 12 * 8);
    assert_eq!(&b[20..24], &190u32.to_le_bytes());
    let v = s.sorted_view().unwrap();
    assert_eq!(v.quantile(0.5, true).unwrap(), 4.0);
    assert_eq!(v.quantile(0.5, false).unwrap(), 5.0);
    assert_eq!(v.rank(4.0, true), 0.5);
    assert_eq!(v.rank(4.0, false), 0.4);
    assert_eq!(v.quantile(1.0, false).unwrap(), 9.0);
    assert_eq!(v.quantile(0.0, true).unwrap(), 0.0);
    assert!(v.quantile(1.5, true).is_err());
}

#[test]
fn single_and_empty_bytes() {
    let s = KllSketch::<f32>::new(200, 0).unwrap();
    assert_eq!(serialize(&s), vec![2, 1, 15, 1, 200, 0, 8, 0]);
    let mut s = s;
    s.update(&[1.5f32]);
    // kll_floats_sketch(200).update(1.5).serialize()
    assert_eq!(
        serialize(&s),
        vec![2, 2, 15, 4, 200, 0, 8, 0, 0, 0, 0xc0, 0x3f]
    );
    let back: KllSketch<f32> = deserialize(&serialize(&s)).unwrap();
    assert_eq!(
        (back.n(), back.min(), back.max()),
        (1, Some(1.5), Some(1.5))
    );
}

#[test]
fn rank_error_within_epsilon_in_estimation_mode() {
    let mut next = lcg(7);
    let x: Vec<f64> = (0..300_000).map(|_| next().powi(3) * 1e3).collect();
    for split in [1usize, 37, 5000, 300_000] {
        let mut s = KllSketch::<f64>::new(200, split as u64).unwrap();
        for c in x.chunks(split) {
            s.update(c);
        }
        check_invariants(&s);
        assert!(
            s.num_retained() < 1000,
            "bounded memory: {}",
            s.num_retained()
        );
        let mut sorted = x.clone();
        sorted.sort_by(f64::total_cmp);
        let v = s.sorted_view().unwrap();
        let eps = s.normalized_rank_error(false);
        let worst = (1..100)
            .map(|i| {
                let y = sorted[i * sorted.len() / 100];
                (v.rank(y, true) - exact_rank(&sorted, y)).abs()
            })
            .fold(0.0, f64::max);
        assert!(worst <= eps, "split {split}: {worst} > {eps}");
        assert_eq!(v.min(), sorted[0]);
        assert_eq!(v.max(), *sorted.last().unwrap());
    }
}

#[test]
fn merge_equals_stream_statistically_and_keeps_invariants() {
    let mut next = lcg(3);
    let mut parts: Vec<KllSketch<f64>> = Vec::new();
    let mut all = Vec::new();
    for p in 0..8u64 {
        let mut s = KllSketch::new(if p == 3 { 100 } else { 200 }, p).unwrap();
        let x: Vec<f64> = (0..(20_000 + 1000 * p))
            .map(|_| next() + p as f64 * 0.1)
            .collect();
        s.update(&x);
        all.extend(x);
        parts.push(s);
    }
    let mut total = KllSketch::new(200, 0).unwrap();
    for s in &parts {
        total.merge(s);
        check_invariants(&total);
    }
    assert_eq!(total.n(), all.len() as u64);
    assert_eq!(total.min_k(), 100);
    all.sort_by(f64::total_cmp);
    let v = total.sorted_view().unwrap();
    let eps = total.normalized_rank_error(false);
    for q in [0.01, 0.25, 0.5, 0.75, 0.99] {
        let y = v.quantile(q, true).unwrap();
        assert!((exact_rank(&all, y) - q).abs() <= eps + 1.0 / all.len() as f64);
    }
    let back: KllSketch<f64> = deserialize(&serialize(&total)).unwrap();
    assert_eq!(serialize(&back), serialize(&total));
}

#[test]
fn deterministic_coins() {
    let mut next = lcg(11);
    let x: Vec<f64> = (0..50_000).map(|_| next()).collect();
    let build = |seed| {
        let mut s = KllSketch::<f64>::new(200, seed).unwrap();
        s.update(&x);
        serialize(&s)
    };
    assert_eq!(build(1), build(1));
    assert_ne!(build(1), build(2));
    // A sketch read back continues exactly as the original.
    let mut a = KllSketch::<f64>::new(200, 0).unwrap();
    a.update(&x[..20_000]);
    let mut b: KllSketch<f64> = deserialize(&serialize(&a)).unwrap();
    a.update(&x[20_000..]);
    b.update(&x[20_000..]);
    assert_eq!(serialize(&a), serialize(&b));
}

/// The batch update as it was before level 0 was sorted in `absorb`: the
/// block goes to the compaction unsorted and is sorted there.
fn update_sorting_in_the_compaction<T: Item>(s: &mut KllSketch<T>, xs: &[T]) {
    let mut rest = xs;
    while !rest.is_empty() {
        let free = s.levels[0] as usize;
        if rest.len() <= free {
            s.fill(rest);
            return;
        }
        if free == 0 {
            if rest.len() >= ABSORB_MIN {
                let take = rest.len().min(BLOCK);
                let kept: Vec<T> = rest[..take]
                    .iter()
                    .copied()
                    .filter(|x| !x.is_nan())
                    .collect();
                rest = &rest[take..];
                if let (Some(lo), Some(hi)) = (
                    kept.iter().copied().reduce(smaller),
                    kept.iter().copied().reduce(larger),
                ) {
                    s.note_extremes(lo, hi);
                    s.n += kept.len() as u64;
                    s.compact_with(kept);
                }
            } else {
                s.compact(&[]);
            }
        } else {
            let (head, tail) = rest.split_at(free);
            s.fill(head);
            rest = tail;
        }
    }
}

#[test]
fn sorting_level_zero_on_arrival_changes_no_byte() {
    let mut next = lcg(17);
    // Ties, signed zeros, infinities and NaN among long-tailed scores.
    let x: Vec<f64> = (0..120_000)
        .map(|i| match i % 97 {
            0 => f64::NAN,
            1 => -0.0,
            2 => 0.0,
            3 => f64::INFINITY,
            4 => (next() * 8.0).floor(),
            _ => (next() * 6.0).exp() - 50.0,
        })
        .collect();
    for k in [8u16, 33, 200, 800, 6000, 20_000, 65_535] {
        for split in [ABSORB_MIN - 1, 8192, 5000, BLOCK + 1, 40_000] {
            let mut a = KllSketch::<f64>::new(k, 9).unwrap();
            let mut b = a.clone();
            let mut c = KllSketch::<f32>::new(k, 9).unwrap();
            let mut d = c.clone();
            for part in x.chunks(split) {
                a.update(part);
                update_sorting_in_the_compaction(&mut b, part);
                let narrow: Vec<f32> = part.iter().map(|&v| v as f32).collect();
                c.update(&narrow);
                update_sorting_in_the_compaction(&mut d, &narrow);
            }
            assert!(a.is_estimation_mode());
            assert_eq!(serialize(&a), serialize(&b), "k {k}, batches of {split}");
            assert_eq!(
                serialize(&c),
                serialize(&d),
                "k {k}, batches of {split} (f32)"
            );
        }
    }
}

#[test]
fn nan_is_skipped_and_inf_kept() {
    let mut s = KllSketch::<f64>::new(8, 0).unwrap();
    s.update(&[f64::NAN, 1.0, f64::INFINITY, f64::NAN]);
    assert_eq!(s.n(), 2);
    assert_eq!(s.max(), Some(f64::INFINITY));
    assert!(KllSketch::<f64>::new(7, 0).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    /// Garbage bytes never panic; valid bytes with one byte flipped either
    /// read as a consistent sketch or are refused.
    #[test]
    fn untrusted_bytes_never_panic(
        garbage in proptest::collection::vec(any::<u8>(), 0..200),
        flip_at in 0usize..2000,
        flip in 1u8..=255,
        n in 0usize..3000,
    ) {
        let _ = deserialize::<f64>(&garbage);
        let _ = deserialize::<f32>(&garbage);
        let mut s = KllSketch::<f64>::new(16, 0).unwrap();
        s.update(&(0..n).map(|i| (i * 7919 % 1009) as f64).collect::<Vec<_>>());
        let mut b = serialize(&s);
        let back: KllSketch<f64> = deserialize(&b).unwrap();
        prop_assert_eq!(back.n(), s.n());
        if !b.is_empty() {
            let i = flip_at % b.len();
            b[i] ^= flip;
            if let Ok(t) = deserialize::<f64>(&b) {
                check_invariants(&t);
                let mut t = t;
                t.update(&[1.0, 2.0]);
                t.merge(&s);
                check_invariants(&t);
                if !t.is_empty() {
                    let v = t.sorted_view().unwrap();
                    let _ = v.quantile(0.5, true);
                }
            }
            let mut cut = serialize(&s);
            cut.truncate(flip_at % (cut.len() + 1));
            let _ = deserialize::<f64>(&cut);
        }
    }

    #[test]
    fn any_batching_keeps_the_invariants(
        sizes in proptest::collection::vec(0usize..20_000, 1..6),
        k in 8u16..300,
    ) {
        let mut s = KllSketch::<f32>::new(k, 5).unwrap();
        let mut total = 0u64;
        for (j, &m) in sizes.iter().enumerate() {
            let x: Vec<f32> = (0..m).map(|i| ((i * 31 + j * 7) % 977) as f32).collect();
            s.update(&x);
            total += m as u64;
            check_invariants(&s);
        }
        prop_assert_eq!(s.n(), total);
    }

    /// The batch update by positions leaves the sorting pass's sketch, bit
    /// for bit, whatever the values: heavy ties, any bit pattern (NaN,
    /// infinities, subnormals), a dense bulk with far outliers, mostly NaN.
    #[test]
    fn positions_leave_the_sorting_pass_sketch(
        shape in 0u8..5,
        seed in any::<u64>(),
        k in 8u16..1000,
        sizes in proptest::collection::vec(1usize..20_000, 1..6),
    ) {
        prop_assume!(sizes.iter().sum::<usize>() > 4 * BLOCK / 2);
        let mut h = seed;
        let mut draw = move || {
            h = splitmix64(h);
            h
        };
        let mut a = KllSketch::<f64>::new(k, seed).unwrap();
        let mut b = a.clone();
        for &m in &sizes {
            let x: Vec<f64> = (0..m)
                .map(|i| {
                    let r = draw();
                    match shape {
                        0 => (r % 5) as f64,
                        1 => f64::from_bits(r),
                        2 if i % 1000 == 7 => f64::INFINITY,
                        2 => 1.0 + (r >> 40) as f64 * 1e-9,
                        3 if r % 10 != 0 => f64::NAN,
                        _ => ((r >> 11) as f64 / (1u64 << 53) as f64 * 40.0 - 20.0).exp(),
                    }
                })
                .collect();
            a.update(&x);
            update_sorting_in_the_compaction(&mut b, &x);
        }
        check_invariants(&a);
        prop_assert_eq!(serialize(&a), serialize(&b));
    }
}
