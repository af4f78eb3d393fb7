//! A least-significant-digit radix sort of items by an unsigned integer key
//! (the order keys of `numeric::float`, the rank scalings' sort): 11-bit
//! digits, one counting read for every digit's histogram, then one stable
//! scatter per digit between the items and a buffer of the same size — a
//! digit that every item shares (the exponent of scores of one magnitude)
//! is skipped. The result is the order of a stable sort by the key, so any
//! run of equal keys holds the same items as a comparison sort's.
//!
//! Trade-offs: a scatter per digit moves every item through memory (three
//! for 32-bit keys), against a comparison sort's ~log₂ n branchy
//! partitions; with 2048 buckets the scatter's open cache lines stay in
//! L2. It pays for 8-byte items (the float32 rank sort): on a shared
//! 2-vCPU Xeon a pass over 16-byte (u64 key, u32 position) items cost four
//! times a pass over 8-byte ones, and the six passes of a float64 key lost
//! to pdqsort. Below [`MIN_RADIX`] items
//! the histograms' fixed cost dominates and `sort_unstable` is used
//! instead (its order of equal keys differs, which callers that group
//! equal keys do not see).

use crate::numeric::scratch::zeroed;

/// Bits per digit.
const DIGIT: u32 = 11;
/// Buckets per digit.
const BUCKETS: usize = 1 << DIGIT;
/// Fewer items sort by comparison.
pub const MIN_RADIX: usize = 1 << 12;

/// An item with an unsigned key of at most 64 bits.
pub trait RadixItem: Copy + Default {
    /// The key's width in bits.
    const KEY_BITS: u32;
    /// The key.
    fn radix_key(&self) -> u64;
}

impl RadixItem for u64 {
    const KEY_BITS: u32 = 64;
    #[inline(always)]
    fn radix_key(&self) -> u64 {
        *self
    }
}

/// Sorts `items` by their key (ascending) and returns them; the buffer the
/// last pass wrote is the one returned (no copy back).
pub fn radix_sort<T: RadixItem>(mut items: Vec<T>) -> Vec<T> {
    let n = items.len();
    if n < MIN_RADIX || u32::try_from(n).is_err() {
        items.sort_unstable_by_key(RadixItem::radix_key);
        return items;
    }
    let passes = T::KEY_BITS.div_ceil(DIGIT) as usize;
    let mut counts = vec![[0u32; BUCKETS]; passes];
    histograms(&items, &mut counts);
    let mut buf = zeroed::<T>(n);
    for (p, count) in counts.iter().enumerate() {
        let shift = p as u32 * DIGIT;
        // A digit every item shares leaves the order as it is.
        let first = digit(items[0].radix_key(), shift);
        if count[first] as usize == n {
            continue;
        }
        let mut next = [0u32; BUCKETS];
        let mut sum = 0u32;
        for (o, &c) in next.iter_mut().zip(count) {
            *o = sum;
            sum += c;
        }
        scatter(&items, &mut buf, &mut next, shift);
        core::mem::swap(&mut items, &mut buf);
    }
    items
}

#[inline(always)]
fn digit(key: u64, shift: u32) -> usize {
    ((key >> shift) as usize) & (BUCKETS - 1)
}

/// Every digit's histogram in one read.
fn histograms<T: RadixItem>(items: &[T], counts: &mut [[u32; BUCKETS]]) {
    for e in items {
        let k = e.radix_key();
        for (p, c) in counts.iter_mut().enumerate() {
            c[digit(k, p as u32 * DIGIT)] += 1;
        }
    }
}

/// One stable counting scatter of `src` into `dst` by the digit at
/// `shift`; `next[d]` is bucket d's next slot.
fn scatter<T: RadixItem>(src: &[T], dst: &mut [T], next: &mut [u32; BUCKETS], shift: u32) {
    for e in src {
        let slot = &mut next[digit(e.radix_key(), shift)];
        dst[*slot as usize] = *e;
        *slot += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone, Copy, Default, PartialEq)]
    struct Item(u64, u32);
    impl RadixItem for Item {
        const KEY_BITS: u32 = 64;
        fn radix_key(&self) -> u64 {
            self.0
        }
    }
    #[derive(Debug, Clone, Copy, Default, PartialEq)]
    struct Item32(u32, u32);
    impl RadixItem for Item32 {
        const KEY_BITS: u32 = 32;
        fn radix_key(&self) -> u64 {
            u64::from(self.0)
        }
    }

    /// The oracle: a stable comparison sort by the key.
    fn check<T: RadixItem + PartialEq + core::fmt::Debug>(items: Vec<T>) {
        let high = |e: &T| e.radix_key();
        let mut want = items.clone();
        want.sort_by_key(high);
        let got = radix_sort(items);
        if got.len() >= MIN_RADIX {
            assert_eq!(got, want);
        } else {
            let keys = |v: &[T]| v.iter().map(high).collect::<Vec<_>>();
            assert_eq!(keys(&got), keys(&want));
        }
    }

    #[test]
    fn sorts_keys_of_every_width_and_spread() {
        let mut u = crate::numeric::testing::uniforms(0x9E37_79B9_7F4A_7C15);
        for n in [0, 1, 5, MIN_RADIX - 1, MIN_RADIX, 20_000] {
            // Random 64-bit keys, keys sharing their top digits, few distinct keys.
            let random: Vec<Item> = (0..n)
                .map(|i| Item((u() * 2f64.powi(64)) as u64 ^ (u() * 1e6) as u64, i as u32))
                .collect();
            check(random);
            let narrow: Vec<Item> = (0..n)
                .map(|i| Item(0xBFF0_0000_0000_0000 | (u() * 1e9) as u64, i as u32))
                .collect();
            check(narrow);
            let ties: Vec<Item> = (0..n).map(|i| Item((u() * 7.0) as u64, i as u32)).collect();
            check(ties);
            let same: Vec<Item> = (0..n).map(|i| Item(u64::MAX, i as u32)).collect();
            check(same);
            let k32: Vec<Item32> = (0..n)
                .map(|i| Item32((u() * 2f64.powi(32)) as u32, i as u32))
                .collect();
            check(k32);
        }
    }

    proptest! {
        #[test]
        fn equals_a_stable_sort(
            keys in prop::collection::vec(any::<u64>(), MIN_RADIX..MIN_RADIX + 300),
            mask: u64,
        ) {
            let items: Vec<Item> = keys.iter().enumerate().map(|(i, &k)| Item(k & mask, i as u32)).collect();
            check(items);
        }
    }
}
