//! Sorting of order keys carrying positions by most-significant-digit
//! radix sort (Knuth, *TAOCP* vol. 3, §5.2.5, exercise 5.2.5–10's
//! distribution into buckets, then the buckets sorted on their own): rank
//! scaling's `fit_transform` (contract §10) sorts each score's
//! [`order_key`] with its position, and the fits that keep sorted scores
//! (rank scaling, conformal calibration, §11) sort the keys alone.
//!
//! One read finds the smallest and largest key: the bits above their
//! highest differing bit are common to every key and carry no order. One
//! scatter distributes the items by the next up to 11 bits (at most 2048
//! buckets, about one per item for short ranges) into a second buffer;
//! each bucket is then sorted the same way, recursively — its own highest
//! differing bit, its own digit — until buckets are short enough
//! (≤ [`SMALL`] items) for a comparison sort of integers in the L1 cache.
//! After the first scatter every bucket of a million f64 scores is a few
//! hundred items: the rest of the work stays in the caches.
//!
//! Trade-offs: a second buffer as large as the items; one scatter of the
//! whole input into up to 2048 places (where a least-significant-digit
//! sort makes 6–8 such passes through memory, a comparison sort ~log₂ n
//! reads with branches that mispredict on random data). Skewed keys (far
//! outliers, heavy ties) only deepen the recursion of their own buckets:
//! each bucket takes its digit from its own range. Equal keys end in some
//! order (callers treat them as one value); the sort is serial, so the
//! result does not depend on the thread count.
//!
//! [`order_key`]: crate::numeric::float::order_key

use crate::numeric::scratch::zeroed;

/// Buckets this short are sorted by comparisons.
pub const SMALL: usize = 48;

/// At most this many bits per digit (2048 buckets, whose write positions
/// stay in the caches).
const DIGIT: u32 = 11;

/// An item sorted by an unsigned integer key.
pub trait RadixItem: Copy + Default {
    /// The key (u32 keys widened).
    fn key(&self) -> u64;
}

impl RadixItem for u64 {
    #[inline(always)]
    fn key(&self) -> u64 {
        *self
    }
}

/// A key and the position of the value it came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Keyed<K> {
    /// The sort key.
    pub key: K,
    /// Where the value was (positions beyond u32 are the caller's to avoid).
    pub pos: u32,
}

impl RadixItem for Keyed<u64> {
    #[inline(always)]
    fn key(&self) -> u64 {
        self.key
    }
}

impl RadixItem for Keyed<u32> {
    #[inline(always)]
    fn key(&self) -> u64 {
        u64::from(self.key)
    }
}

/// A zeroed buffer of `n` items, on huge pages where the kernel allows
/// (fresh pages would cost a fault each 4 KiB otherwise).
pub fn buffer<T: RadixItem>(n: usize) -> Vec<T> {
    zeroed(n)
}

/// Sorts `items` by key, ascending; equal keys in some order.
pub fn sort<T: RadixItem>(items: &mut [T]) {
    if items.len() <= SMALL {
        items.sort_unstable_by_key(RadixItem::key);
        return;
    }
    let mut scratch = buffer::<T>(items.len());
    sort_with(items, &mut scratch);
}

/// Sorts `items` (its result stays there) with `scratch` of the same
/// length as the second buffer.
fn sort_with<T: RadixItem>(items: &mut [T], scratch: &mut [T]) {
    let n = items.len();
    if n <= SMALL {
        items.sort_unstable_by_key(RadixItem::key);
        return;
    }
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for e in items.iter() {
        lo = lo.min(e.key());
        hi = hi.max(e.key());
    }
    if lo == hi {
        return;
    }
    // The digit: the highest differing bit and up to DIGIT − 1 below it,
    // fewer for short ranges (about one bucket per item).
    let top = 64 - (lo ^ hi).leading_zeros();
    let bits = DIGIT.min(n.ilog2()).min(top).max(1);
    let shift = top - bits;
    let mask = (1u64 << bits) - 1;
    let digit = |e: &T| ((e.key() >> shift) & mask) as usize;
    let mut starts = vec![0usize; (1 << bits) + 1];
    for e in items.iter() {
        starts[digit(e) + 1] += 1;
    }
    for b in 1..starts.len() {
        starts[b] += starts[b - 1];
    }
    let mut next = starts[..1 << bits].to_vec();
    for e in items.iter() {
        let b = digit(e);
        scratch[next[b]] = *e;
        next[b] += 1;
    }
    // Each bucket sorted in the scratch buffer (the items' range its own
    // scratch), then copied back.
    for w in starts.windows(2) {
        let (a, b) = (w[0], w[1]);
        if b - a > 1 {
            sort_with(&mut scratch[a..b], &mut items[a..b]);
        }
    }
    items.copy_from_slice(scratch);
}

/// Sorts `keys` ascending.
pub fn sort_keys(keys: &mut [u64]) {
    sort(keys);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::float::order_key;
    use proptest::prelude::*;

    fn check_u64(values: &[f64]) {
        let mut items: Vec<Keyed<u64>> = values
            .iter()
            .enumerate()
            .map(|(i, &v)| Keyed {
                key: order_key(v),
                pos: i as u32,
            })
            .collect();
        let mut want = items.clone();
        want.sort_unstable_by_key(|e| e.key);
        sort(&mut items);
        let keys: Vec<u64> = items.iter().map(|e| e.key).collect();
        assert_eq!(keys, want.iter().map(|e| e.key).collect::<Vec<_>>());
        // Every position once, with its own key.
        let mut seen = vec![false; values.len()];
        for e in &items {
            assert_eq!(e.key, order_key(values[e.pos as usize]));
            assert!(!seen[e.pos as usize]);
            seen[e.pos as usize] = true;
        }
        let mut plain: Vec<u64> = values.iter().map(|&v| order_key(v)).collect();
        sort_keys(&mut plain);
        assert_eq!(plain, keys);
    }

    #[test]
    fn constant_skewed_and_one_binade_keys() {
        check_u64(&[3.0; 1000]);
        let v: Vec<f64> = (0..5000).map(|i| 1.0 + f64::from(i) / 8192.0).collect();
        check_u64(&v.iter().rev().copied().collect::<Vec<_>>());
        // A far outlier: every other key in one bucket of the first digit.
        let mut w: Vec<f64> = (0..20_000).map(|i| f64::from(i % 997) * 1e-3).collect();
        w.push(1e300);
        w.push(-1e300);
        check_u64(&w);
    }

    proptest! {
        #[test]
        fn sorts_as_a_comparison_sort(
            values in prop::collection::vec(prop_oneof![
                prop::num::f64::NORMAL | prop::num::f64::SUBNORMAL | prop::num::f64::ZERO
                    | prop::num::f64::INFINITE,
                -3.0f64..3.0,
                (-4i32..4).prop_map(f64::from),
            ], 0..3000),
        ) {
            check_u64(&values);
        }

        #[test]
        fn sorts_u32_keys(keys in prop::collection::vec(prop_oneof![any::<u32>(), 0u32..4, (0u32..300).prop_map(|k| k << 20)], 0..3000)) {
            let mut items: Vec<Keyed<u32>> = keys.iter().enumerate().map(|(i, &k)| Keyed { key: k, pos: i as u32 }).collect();
            sort(&mut items);
            let mut want = keys.clone();
            want.sort_unstable();
            prop_assert_eq!(items.iter().map(|e| e.key).collect::<Vec<_>>(), want);
            prop_assert!(items.iter().all(|e| keys[e.pos as usize] == e.key));
        }
    }
}
