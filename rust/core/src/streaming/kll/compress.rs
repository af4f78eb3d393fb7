//! KLL's level capacities and its compaction pass, as Apache DataSketches
//! defines them (so that a sketch's shape, and hence its serialized bytes,
//! mean the same thing to DataSketches and to us).
//!
//! Level `h` of a sketch with `L` levels holds nominally
//! `max(m, round(k·(2/3)^(L−h−1)))` items (`m = 8`); the sum over levels is
//! the item buffer's length. Compaction sorts a level, keeps every other
//! item starting at a random offset (0 or 1) and moves the kept ones, now of
//! twice the weight, into the level above.

/// The minimum level width DataSketches uses (and requires in its bytes).
pub const M: u8 = 8;
/// Smallest and largest k DataSketches accepts (contract §5's bounds:
/// `crate::limits::SKETCH_K`).
pub const MIN_K: u16 = crate::limits::SKETCH_K.min as u16;
/// Largest k.
pub const MAX_K: u16 = crate::limits::SKETCH_K.max as u16;
// The smallest k is the minimum level width.
const _: () = assert!(MIN_K == M as u16);
/// The most levels a sketch can have: n < 2^64 items need at most
/// 1 + floor(log2 n) levels, and level depths beyond 60 are refused by
/// DataSketches' capacity formula.
pub const MAX_LEVELS: usize = 61;

const POWERS_OF_THREE: [u64; 31] = {
    let mut p = [1u64; 31];
    let mut i = 1;
    while i < 31 {
        p[i] = p[i - 1] * 3;
        i += 1;
    }
    p
};

/// `round(k·(2/3)^depth)` for depth <= 30, rounded half up as DataSketches
/// does: `((2k·2^depth) / 3^depth + 1) / 2` in integers.
fn cap_aux_aux(k: u16, depth: usize) -> u16 {
    let twok = u64::from(k) << 1;
    let tmp = (twok << depth) / POWERS_OF_THREE[depth];
    ((tmp + 1) >> 1) as u16
}

/// `round(k·(2/3)^depth)` for depth <= 60 (two steps beyond 30, as
/// DataSketches computes it).
fn cap_aux(k: u16, depth: usize) -> u16 {
    debug_assert!(depth <= 60);
    if depth <= 30 {
        return cap_aux_aux(k, depth);
    }
    let half = depth / 2;
    cap_aux_aux(cap_aux_aux(k, half), depth - half)
}

/// Nominal capacity of level `height` in a sketch of `num_levels` levels.
pub fn level_capacity(k: u16, num_levels: usize, height: usize) -> u32 {
    debug_assert!(height < num_levels && num_levels <= MAX_LEVELS);
    let depth = num_levels - height - 1;
    u32::from(cap_aux(k, depth).max(u16::from(M)))
}

/// Length of the item buffer of a sketch with `num_levels` levels.
pub fn total_capacity(k: u16, num_levels: usize) -> u32 {
    (0..num_levels)
        .map(|h| level_capacity(k, num_levels, h))
        .sum()
}

/// Upper bound on the number of levels a stream of `n` items needs.
pub fn max_levels_for(n: u64) -> usize {
    if n == 0 {
        1
    } else {
        1 + (63 - n.leading_zeros() as usize)
    }
}

/// Σ over levels of (items in the level) · 2^level.
pub fn total_weight(levels: &[u32]) -> Option<u64> {
    let mut total: u64 = 0;
    for (h, w) in levels.windows(2).enumerate() {
        let count = u64::from(w[1].checked_sub(w[0])?);
        let weight = 1u64.checked_shl(h as u32)?;
        total = total.checked_add(count.checked_mul(weight)?)?;
    }
    Some(total)
}

/// What a compaction pass left.
#[derive(Debug, Clone, Copy)]
pub struct Compressed {
    pub num_levels: usize,
    pub capacity: u32,
    pub num_items: u32,
}

/// Runs this short are sorted by insertion.
const INSERTION_MAX: usize = 24;
/// Most bucket-index bits of one bucket pass (2^16 counters, 256 KiB).
const MAX_BUCKET_BITS: u32 = 16;

/// Sorts NaN-free values ascending by their order keys (−0 before +0).
/// Long runs (level 0 of a batch update) are bucket-sorted by key: one
/// pass takes the keys and their range, one counts the keys of each of
/// about `len/2` equal key intervals, one moves each key to its interval,
/// and one insertion pass over the whole run orders the keys within the
/// intervals — two keys each on average, a few dozen in the densest
/// stretch of scores (an interval of more is bucket-sorted again over its
/// own, narrower range). The keys are a bijection of the values, so the
/// result is the comparison sort's, bit for bit.
pub fn sort_values<T: super::Item>(v: &mut [T]) {
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    let mut keys: Vec<u64> = v
        .iter()
        .map(|x| {
            let key = x.order_key();
            lo = lo.min(key);
            hi = hi.max(key);
            key
        })
        .collect();
    sort_keys(&mut keys, lo, hi);
    for (out, &key) in v.iter_mut().zip(&keys) {
        *out = T::from_order_key(key);
    }
}

/// Sorts `keys`, all in `lo..=hi` (see [`sort_values`]).
pub fn sort_keys(keys: &mut [u64], lo: u64, hi: u64) {
    if keys.len() <= INSERTION_MAX {
        insertion_sort(keys);
    } else {
        let mut scratch = vec![0u64; keys.len()];
        bucket_sort(keys, &mut scratch, lo, hi);
    }
}

/// Insertion sort: linear in the length plus the number of inversions.
fn insertion_sort(keys: &mut [u64]) {
    for i in 1..keys.len() {
        let key = keys[i];
        let mut j = i;
        while j > 0 && keys[j - 1] > key {
            keys[j] = keys[j - 1];
            j -= 1;
        }
        keys[j] = key;
    }
}

/// Bucket sort of `keys` (all in `lo..=hi`), with `scratch` (as long) to
/// scatter into. A pass spreads the run's keys over `2^bits ≈ len/2`
/// buckets of equal key width; a bucket of over `INSERTION_MAX` keys is
/// passed over again, its key range at most `2^(1−bits)` of the run's, so
/// that a run of 8192 keys is passed over at most 64/11 ≈ 6 times whatever
/// the data (the LSD radix sort's count), and about once on scores.
fn bucket_sort(keys: &mut [u64], scratch: &mut [u64], lo: u64, hi: u64) {
    let n = keys.len();
    debug_assert_eq!(n, scratch.len());
    if lo == hi {
        return; // one value: already in order
    }
    let bits = (n / 2).ilog2().clamp(1, MAX_BUCKET_BITS);
    let shift = (64 - (hi - lo).leading_zeros()).saturating_sub(bits);
    let mask = (1usize << bits) - 1;
    let bucket = |key: u64| ((key - lo) >> shift) as usize & mask;
    // ends[b + 1] counts the keys of bucket b; prefix sums make ends[b]
    // bucket b's start, and the scatter moves it to bucket b's end.
    let mut ends = vec![0u32; mask + 2];
    for &key in keys.iter() {
        ends[bucket(key) + 1] += 1;
    }
    let mut long = false;
    for b in 1..ends.len() {
        long |= ends[b] as usize > INSERTION_MAX;
        ends[b] += ends[b - 1];
    }
    for &key in keys.iter() {
        let slot = &mut ends[bucket(key)];
        scratch[*slot as usize] = key;
        *slot += 1;
    }
    if long {
        let mut start = 0usize;
        for &end in &ends[..=mask] {
            let end = end as usize;
            if end - start > INSERTION_MAX {
                let run = &scratch[start..end];
                let (a, b) = run
                    .iter()
                    .fold((u64::MAX, 0), |(a, b), &k| (a.min(k), b.max(k)));
                bucket_sort(&mut scratch[start..end], &mut keys[start..end], a, b);
            }
            start = end;
        }
    }
    // Keys are now in bucket order: only keys of one bucket are out of
    // order, and the long buckets are sorted.
    insertion_sort(scratch);
    keys.copy_from_slice(scratch);
}

/// Merges two sorted runs `buf[a..a+la]` and `buf[b..b+lb]` into
/// `buf[c..c+la+lb]`, where `c + la == b` or the runs are otherwise laid
/// out so that the write position never passes an unread item (`c >= a +
/// la`, `c <= b`): the in-buffer merge of a compaction.
fn merge_in_place<T: super::Item>(
    buf: &mut [T],
    a: usize,
    la: usize,
    b: usize,
    lb: usize,
    c: usize,
) {
    let (mut i, mut j) = (a, b);
    let (ia, jb) = (a + la, b + lb);
    for out in c..c + la + lb {
        let take_a = j == jb || (i < ia && buf[i] < buf[j]);
        if take_a {
            buf[out] = buf[i];
            i += 1;
        } else {
            buf[out] = buf[j];
            j += 1;
        }
    }
    debug_assert!(i == ia && j == jb);
}

/// Keeps every other item of the sorted run `buf[start..start+len]` (len
/// even) from `offset` on, packed into its upper half.
fn halve_up<T: super::Item>(buf: &mut [T], start: usize, len: usize, offset: usize) {
    let half = len / 2;
    let mut j = start + len - 1 - offset;
    for i in (start + half..start + len).rev() {
        buf[i] = buf[j];
        j = j.wrapping_sub(2);
    }
}

/// As [`halve_up`], packed into the lower half.
fn halve_down<T: super::Item>(buf: &mut [T], start: usize, len: usize, offset: usize) {
    let half = len / 2;
    let mut j = start + offset;
    for i in start..start + half {
        buf[i] = buf[j];
        j += 2;
    }
}

/// One compaction pass over `items` laid out in levels `in_levels`
/// (`num_levels_in + 1` boundaries, level 0 possibly unsorted, the others
/// sorted), writing the new boundaries to `out_levels`. Each level is
/// compacted at most once, from the bottom, while the sketch holds more
/// than its total capacity and the level is at or over its own; compacting
/// the top level adds a level. The result fits the total capacity of its
/// level count, whatever the input size (DataSketches' `general_compress`).
///
/// `coin(level, sorted_level)` decides each compaction's offset.
pub fn compress<T: super::Item>(
    k: u16,
    num_levels_in: usize,
    items: &mut [T],
    in_levels: &mut Vec<u32>,
    out_levels: &mut Vec<u32>,
    level_zero_sorted: bool,
    coin: &mut impl FnMut(usize, &[T]) -> bool,
) -> Compressed {
    debug_assert!(num_levels_in >= 1 && in_levels.len() > num_levels_in);
    let start_count = in_levels[num_levels_in] - in_levels[0];
    let mut num_levels = num_levels_in;
    let mut count = start_count;
    let mut target = total_capacity(k, num_levels);
    out_levels.clear();
    out_levels.push(0);
    let mut level = 0usize;
    loop {
        if in_levels.len() < level + 3 {
            in_levels.resize(level + 3, 0);
        }
        if level == num_levels - 1 {
            // An empty level above the top, for uniform handling.
            in_levels[level + 2] = in_levels[level + 1];
        }
        let raw_beg = in_levels[level] as usize;
        let raw_lim = in_levels[level + 1] as usize;
        let raw_pop = raw_lim - raw_beg;
        let out_beg = out_levels[level] as usize;
        if count < target || (raw_pop as u32) < level_capacity(k, num_levels, level) {
            // Move the level down as it is.
            debug_assert!(raw_beg >= out_beg);
            items.copy_within(raw_beg..raw_lim, out_beg);
            out_levels.push((out_beg + raw_pop) as u32);
        } else {
            let pop_above = in_levels[level + 2] as usize - raw_lim;
            let odd = raw_pop % 2 == 1;
            let adj_beg = raw_beg + usize::from(odd);
            let adj_pop = raw_pop - usize::from(odd);
            let half = adj_pop / 2;
            if odd {
                items[out_beg] = items[raw_beg];
                out_levels.push(out_beg as u32 + 1);
            } else {
                out_levels.push(out_beg as u32);
            }
            if level == 0 && !level_zero_sorted {
                sort_values(&mut items[adj_beg..adj_beg + adj_pop]);
            }
            let offset = usize::from(coin(level, &items[adj_beg..adj_beg + adj_pop]));
            if pop_above == 0 {
                halve_up(items, adj_beg, adj_pop, offset);
            } else {
                halve_down(items, adj_beg, adj_pop, offset);
                merge_in_place(items, adj_beg, half, raw_lim, pop_above, adj_beg + half);
            }
            count -= half as u32;
            in_levels[level + 1] -= half as u32;
            if level == num_levels - 1 {
                num_levels += 1;
                target += level_capacity(k, num_levels, 0);
            }
        }
        if level == num_levels - 1 {
            break;
        }
        level += 1;
    }
    debug_assert_eq!(out_levels[num_levels] - out_levels[0], count);
    Compressed {
        num_levels,
        capacity: target,
        num_items: count,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacities_match_datasketches() {
        // kll_helper::level_capacity values for k = 200.
        assert_eq!(level_capacity(200, 1, 0), 200);
        assert_eq!(level_capacity(200, 2, 0), 133);
        assert_eq!(level_capacity(200, 3, 0), 89);
        assert_eq!(total_capacity(200, 1), 200);
        assert_eq!(total_capacity(200, 2), 333);
        // Tiny levels are clamped to m = 8.
        assert_eq!(level_capacity(200, 20, 0), 8);
        assert_eq!(max_levels_for(1), 1);
        assert_eq!(max_levels_for(1 << 20), 21);
        assert_eq!(total_weight(&[0, 2, 3]), Some(4));
        assert_eq!(total_weight(&[3, 2]), None);
    }

    /// `sort_values` against the standard library's sort of the same
    /// order keys, bit for bit, for `f64` and `f32`.
    fn check_sorts(v: &[f64]) {
        use super::super::Item;
        let bits = |a: &[f64]| a.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let mut got = v.to_vec();
        let mut want = v.to_vec();
        want.sort_unstable_by_key(|x| x.order_key());
        sort_values(&mut got);
        assert_eq!(bits(&got), bits(&want), "n = {}", v.len());
        let mut got: Vec<f32> = v.iter().map(|&x| x as f32).collect();
        let mut want = got.clone();
        want.sort_unstable_by_key(|x| x.order_key());
        sort_values(&mut got);
        let bits32 = |a: &[f32]| a.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits32(&got), bits32(&want), "n = {} (f32)", v.len());
    }

    #[test]
    fn sort_values_is_the_comparison_sort() {
        let mut s: u64 = 7;
        let mut next = move || {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            s
        };
        for n in [
            0,
            1,
            2,
            INSERTION_MAX,
            INSERTION_MAX + 1,
            256,
            1000,
            9000,
            70_000,
        ] {
            // Any bits, signed zeros, small integers (ties) and infinities.
            let v: Vec<f64> = (0..n)
                .map(|i| match i % 5 {
                    0 => f64::from_bits(next() >> 1) * if next() % 2 == 0 { 1.0 } else { -1.0 },
                    1 => -0.0,
                    2 => 0.0,
                    3 => (next() % 7) as f64,
                    _ => f64::INFINITY * if next() % 2 == 0 { 1.0 } else { -1.0 },
                })
                .filter(|v| !v.is_nan())
                .collect();
            check_sorts(&v);
            // Scores: a dense bulk (long buckets, sorted again) and a far
            // outlier that stretches the key range.
            let mut v: Vec<f64> = (0..n)
                .map(|_| 1.0 + (next() >> 11) as f64 * 1e-12 / (1u64 << 53) as f64)
                .collect();
            if n > 0 {
                v[n / 2] = 1e300;
            }
            check_sorts(&v);
            // A geometric spread: every pass leaves one long bucket.
            let v: Vec<f64> = (0..n).map(|i| 2f64.powi(-(i as i32 % 1000))).collect();
            check_sorts(&v);
        }
        let mut same = vec![3.5f64; 1000];
        sort_values(&mut same);
        assert!(same.iter().all(|&x| x == 3.5));
        check_sorts(&(0..5000).map(|i| f64::from(i % 2)).collect::<Vec<_>>());
        check_sorts(&(0..5000).rev().map(f64::from).collect::<Vec<_>>());
    }

    proptest::proptest! {
        #[test]
        fn any_values_sort_as_the_comparison_sort(
            raw in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..3000),
            spread in 0u32..64,
        ) {
            // Bit patterns narrowed to `spread` low bits around 1.0, so that
            // some cases are dense (deep passes) and some spread out.
            let one = 1f64.to_bits();
            let v: Vec<f64> = raw
                .iter()
                .map(|&r| f64::from_bits(one ^ (r & (u64::MAX >> (63 - spread.min(62))))))
                .filter(|x| !x.is_nan())
                .collect();
            check_sorts(&v);
        }
    }

    #[test]
    fn halving_keeps_every_other() {
        let mut v = [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0];
        halve_up(&mut v, 0, 6, 1);
        assert_eq!(&v[3..], &[1.0, 3.0, 5.0]);
        let mut v = [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0];
        halve_down(&mut v, 0, 6, 0);
        assert_eq!(&v[..3], &[1.0, 3.0, 5.0]);
    }
}
