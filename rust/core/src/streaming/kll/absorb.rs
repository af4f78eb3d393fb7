//! The compaction a batch update's block sets off, computed without sorting
//! the block.
//!
//! A block of `B` items joins level 0 of a full sketch, and the compaction
//! pass ([`super::compress::compress`]) sorts level 0, keeps every other
//! item, merges the kept half into level 1, compacts level 1 the same way,
//! and so on up the levels until the sketch fits its capacity again. Of
//! the block, only about `B / 2^J` items survive `J` such halvings (about
//! 32 of 8192 at k = 800 on a long stream); the rest were sorted only to
//! be dropped.
//!
//! This module runs the same pass on *positions*: the block's items are
//! named by their rank `p` in the sorted level 0, a halving keeps the
//! positions of one parity, and a merge with the older items of a level
//! places each older item `e` after the positions below `rank(e)`, the
//! number of block items `< e`. Only a few values are ever needed — each
//! older item's rank, the middle item each coin reads, and the survivors —
//! and they come from a bucket partition of the block's order keys (one
//! counting pass and one scatter, no comparisons), whose buckets are
//! sorted only where a position or a rank falls. The sketch it leaves,
//! every item, level and coin, is the sorting pass's bit for bit (the
//! tests compare them), so the batch update keeps DataSketches' layout and
//! rank-error guarantee as before; it only no longer pays `B log B`
//! comparisons for items it drops.

use super::compress::{level_capacity, sort_keys, total_capacity};
use super::{coin, Item, KllSketch};

/// Most bucket-index bits (2^16 counters, 256 KiB).
const MAX_BUCKET_BITS: u32 = 16;
/// A bucket up to this long is counted item by item for a rank; a longer
/// one is sorted first and searched.
const SCAN_MAX: usize = 32;
/// Keys sampled to place the buckets' range.
const SAMPLE: usize = 128;

/// Order keys partitioned into buckets of ascending, equal-width key
/// intervals: every key of a bucket is below every key of the next.
struct Buckets {
    /// The keys, bucket after bucket.
    keys: Vec<u64>,
    /// `starts[b]..starts[b + 1]` is bucket `b`.
    starts: Vec<u32>,
    /// Whether bucket `b` is sorted.
    sorted: Vec<bool>,
    lo: u64,
    shift: u32,
    mask: usize,
}

impl Buckets {
    /// Empty buckets over the key range of `items` (NaN skipped), for
    /// about `n` keys: about `n / 2` buckets between the second smallest
    /// and second largest key of an evenly spaced sample, so that one far
    /// outlier (an infinity, say) does not crowd the other keys into one
    /// bucket; keys beyond go to the first and the last bucket.
    fn over<T: Item>(items: &[T], n: usize) -> Self {
        let step = (items.len() / SAMPLE).max(1);
        let mut sample: Vec<u64> = items
            .iter()
            .step_by(step)
            .filter(|x| !x.is_nan())
            .map(|x| x.order_key())
            .collect();
        sample.sort_unstable();
        let (mut lo, mut hi) = match sample.len() {
            0..4 => (0, 0),
            s => (sample[1], sample[s - 2]),
        };
        if lo == hi {
            // Mostly one value, or mostly NaN: spread over the whole range.
            (lo, hi) = items
                .iter()
                .filter(|x| !x.is_nan())
                .fold((u64::MAX, 0), |(a, b), x| {
                    (a.min(x.order_key()), b.max(x.order_key()))
                });
            hi = hi.max(lo);
        }
        let bits = (n / 2).max(2).ilog2().clamp(1, MAX_BUCKET_BITS);
        let shift = (64 - (hi - lo).leading_zeros()).saturating_sub(bits);
        let mask = (1usize << bits) - 1;
        Buckets {
            keys: Vec::new(),
            starts: vec![0u32; mask + 2],
            sorted: vec![false; mask + 1],
            lo,
            shift,
            mask,
        }
    }

    /// Counts the keys of the non-NaN `items` (before [`Buckets::start`]);
    /// returns how many there are.
    fn count<T: Item>(&mut self, items: &[T]) -> usize {
        let mut kept = 0usize;
        let (min, shift, mask) = (self.lo, self.shift, self.mask);
        // Sliced to the length the bucket index is clamped to, which lets
        // the compiler drop the bounds check.
        let counts = &mut self.starts[..mask + 2];
        for &x in items {
            if x.is_nan() {
                continue;
            }
            let key = x.order_key();
            kept += 1;
            let b = ((key.saturating_sub(min) >> shift) as usize).min(mask);
            counts[b + 1] += 1;
        }
        kept
    }

    /// The smallest and largest key placed (`(u64::MAX, 0)` when none):
    /// they are in the first and the last bucket that holds any.
    fn extremes(&self) -> (u64, u64) {
        let first = (0..=self.mask).find(|&b| !self.range(b).is_empty());
        let last = (0..=self.mask).rev().find(|&b| !self.range(b).is_empty());
        let lo = first.map_or(u64::MAX, |b| {
            self.keys[self.range(b)]
                .iter()
                .copied()
                .min()
                .unwrap_or(u64::MAX)
        });
        let hi = last.map_or(0, |b| {
            self.keys[self.range(b)].iter().copied().max().unwrap_or(0)
        });
        (lo, hi)
    }

    /// Takes back a count of `key`.
    fn uncount(&mut self, key: u64) {
        let b = self.bucket(key) + 1;
        self.starts[b] -= 1;
    }

    /// Turns the counts into bucket starts and returns the cursors that
    /// [`Buckets::place`] advances.
    fn start(&mut self) -> Vec<u32> {
        for i in 1..self.starts.len() {
            self.starts[i] += self.starts[i - 1];
        }
        self.keys = vec![0u64; *self.starts.last().unwrap_or(&0) as usize];
        self.starts.clone()
    }

    /// Puts the keys of the non-NaN `items` (counted) into their buckets.
    fn place<T: Item>(&mut self, next: &mut [u32], items: &[T]) {
        let (min, shift, mask) = (self.lo, self.shift, self.mask);
        let next = &mut next[..=mask];
        for &x in items {
            if x.is_nan() {
                continue;
            }
            let key = x.order_key();
            let slot = &mut next[((key.saturating_sub(min) >> shift) as usize).min(mask)];
            self.keys[*slot as usize] = key;
            *slot += 1;
        }
    }

    /// The bucket of `key`: monotone in the key.
    #[inline(always)]
    fn bucket(&self, key: u64) -> usize {
        ((key.saturating_sub(self.lo) >> self.shift) as usize).min(self.mask)
    }

    fn len(&self) -> usize {
        self.keys.len()
    }

    fn range(&self, b: usize) -> core::ops::Range<usize> {
        self.starts[b] as usize..self.starts[b + 1] as usize
    }

    fn sort_bucket(&mut self, b: usize) {
        if !self.sorted[b] {
            let r = self.range(b);
            let run = &mut self.keys[r];
            let (lo, hi) = run
                .iter()
                .fold((u64::MAX, 0), |(a, c), &k| (a.min(k), c.max(k)));
            sort_keys(run, lo, hi);
            self.sorted[b] = true;
        }
    }

    /// The key of rank `p` (0-based).
    fn at(&mut self, p: usize) -> u64 {
        let b = self.starts.partition_point(|&s| s as usize <= p) - 1;
        self.sort_bucket(b);
        self.keys[p]
    }

    /// The number of keys below `key`.
    fn below(&mut self, key: u64) -> usize {
        let b = self.bucket(key);
        let r = self.range(b);
        let base = r.start;
        if r.len() > SCAN_MAX {
            self.sort_bucket(b);
        }
        let run = &self.keys[r];
        base + if self.sorted[b] {
            run.partition_point(|&k| k < key)
        } else {
            run.iter().filter(|&&k| k < key).count()
        }
    }
}

impl<T: Item> KllSketch<T> {
    /// Adds `block` to a full sketch and compacts once, by positions.
    pub(super) fn absorb(&mut self, block: &[T]) {
        debug_assert_eq!(self.levels[0], 0, "absorb runs on a full buffer");
        let Some(first_at) = block.iter().position(|x| !x.is_nan()) else {
            return;
        };
        let first = block[first_at];
        let old0 = self.levels[0] as usize..self.levels[1] as usize;
        let mut buckets = Buckets::over(block, block.len() + old0.len());
        let kept = buckets.count(&block[first_at..]);
        self.n += kept as u64;
        let pop = kept + old0.len();
        if (pop as u32) < level_capacity(self.k, self.num_levels, 0) {
            // Level 0 is not compacted (k beyond the block): it stays
            // unsorted, in arrival order.
            let work: Vec<T> = block.iter().copied().filter(|x| !x.is_nan()).collect();
            let (lo, hi) = work.iter().fold((u64::MAX, 0), |(a, b), x| {
                (a.min(x.order_key()), b.max(x.order_key()))
            });
            self.note_key_extremes(lo, hi, block);
            return self.compact_with(work);
        }
        buckets.count(&self.items[old0.clone()]);
        // The item an odd level 0 leaves behind is its first, the block's
        // first non-NaN one (DataSketches' rule); the rest is partitioned.
        let leftover = (pop % 2 == 1).then_some(first);
        if leftover.is_some() {
            buckets.uncount(first.order_key());
        }
        let mut next = buckets.start();
        buckets.place(
            &mut next,
            &block[first_at + usize::from(leftover.is_some())..],
        );
        buckets.place(&mut next, &self.items[old0]);
        // The extremes of the block and level 0 together: level 0's items
        // were seen, so they are within the sketch's extremes already.
        let (lo, hi) = buckets.extremes();
        let key = first.order_key();
        self.note_key_extremes(lo.min(key), hi.max(key), block);
        self.compact_positions(buckets, leftover);
    }

    /// Notes the extremes of order keys `lo` and `hi`, items of `block` or
    /// of the sketch. The key order is the float order but for −0 < +0,
    /// where the float rule (the first seen of equal items) is restored.
    fn note_key_extremes(&mut self, lo: u64, hi: u64, block: &[T]) {
        let zero = T::from_f64(0.0);
        let first_zero = || *block.iter().find(|&&x| x == zero).unwrap_or(&zero);
        let (mut min, mut max) = (T::from_order_key(lo), T::from_order_key(hi));
        if min == zero {
            min = first_zero();
        }
        if max == zero {
            max = first_zero();
        }
        self.note_extremes(min, max);
    }

    /// Compacts a full sketch whose level 0 is `leftover` (the odd item
    /// that stays, when level 0's length is odd) followed by the items of
    /// order keys in `buckets`, with the older levels above (see the module
    /// documentation). `n` already counts the block, and level 0 is known
    /// to be at or over its capacity, so that it is compacted.
    fn compact_positions(&mut self, mut buckets: Buckets, leftover: Option<T>) {
        let m = buckets.len() as u32;
        let k = self.k;
        let (seed, n) = (self.seed, self.n);
        let levels_in = self.num_levels;
        let base = self.levels[1];
        // Tokens: `t < m` is the block item of rank t; `t >= m` is the
        // older item `olds[t - m]`.
        let olds = &self.items[base as usize..];
        let old_level = |h: usize| -> core::ops::Range<u32> {
            if (1..levels_in).contains(&h) {
                m + self.levels[h] - base..m + self.levels[h + 1] - base
            } else {
                m..m
            }
        };
        let zero = T::from_f64(0.0);
        let value = |b: &mut Buckets, t: u32| -> T {
            if t < m {
                T::from_order_key(b.at(t as usize))
            } else {
                olds[(t - m) as usize]
            }
        };
        let mut count = u32::from(leftover.is_some()) + m + (self.items.len() as u32 - base);
        let mut num_levels = levels_in;
        let mut target = total_capacity(k, num_levels);
        // Level 0: compacted, as the caller made sure.
        let mut out: Vec<T> = Vec::with_capacity(self.items.len());
        let mut sizes: Vec<u32> = Vec::with_capacity(num_levels + 2);
        out.extend(leftover);
        sizes.push(out.len() as u32);
        let mid = value(&mut buckets, m / 2);
        let up = old_level(1).is_empty();
        let keep = usize::from(coin(seed, n, 0, mid.bits())) ^ usize::from(up);
        let mut incoming: Vec<u32> = (keep as u32..m).step_by(2).collect();
        count -= m / 2;
        if num_levels == 1 {
            num_levels += 1;
            target += level_capacity(k, num_levels, 0);
        }
        let mut run: Vec<u32> = Vec::with_capacity(incoming.len() + 1);
        let mut level = 1;
        loop {
            // This level's sorted run: the incoming tokens merged with the
            // level's older items, an older item after the tokens below it
            // (the compaction's merge takes the lower level on `<` only).
            run.clear();
            let mut i = 0;
            for e in old_level(level) {
                let ev = olds[(e - m) as usize];
                // The block items `< ev` in float order (below -0 when ev is
                // ±0), counted when a block token first meets ev.
                let mut rank = None;
                while i < incoming.len() {
                    let t = incoming[i];
                    let below = if t < m {
                        let r = *rank.get_or_insert_with(|| {
                            let key = if ev == zero { T::from_f64(-0.0) } else { ev };
                            buckets.below(key.order_key()) as u32
                        });
                        t < r
                    } else {
                        olds[(t - m) as usize] < ev
                    };
                    if !below {
                        break;
                    }
                    run.push(t);
                    i += 1;
                }
                run.push(e);
            }
            run.extend_from_slice(&incoming[i..]);
            incoming.clear();
            let pop = run.len() as u32;
            if count < target || pop < level_capacity(k, num_levels, level) {
                out.extend(run.iter().map(|&t| value(&mut buckets, t)));
            } else {
                let odd = run.len() % 2;
                if odd == 1 {
                    out.push(value(&mut buckets, run[0]));
                }
                let adj = &run[odd..];
                let mid = value(&mut buckets, adj[adj.len() / 2]);
                let up = old_level(level + 1).is_empty();
                let keep = usize::from(coin(seed, n, level, mid.bits())) ^ usize::from(up);
                incoming.extend(adj[keep..].iter().step_by(2));
                count -= (adj.len() / 2) as u32;
                if level == num_levels - 1 {
                    num_levels += 1;
                    target += level_capacity(k, num_levels, 0);
                }
            }
            sizes.push(out.len() as u32);
            if level == num_levels - 1 {
                break;
            }
            level += 1;
        }
        debug_assert_eq!(out.len() as u32, count);
        debug_assert_eq!(target, total_capacity(k, num_levels));
        debug_assert_eq!(sizes.len(), num_levels);
        self.install(&out, &sizes, target as usize);
    }

    /// Makes `out`, levels ending at `sizes`, the state, at the top of a
    /// buffer of capacity `cap`.
    fn install(&mut self, out: &[T], sizes: &[u32], cap: usize) {
        let free = cap - out.len();
        if self.items.len() != cap {
            self.items = vec![T::from_f64(0.0); cap];
        }
        self.items[free..].copy_from_slice(out);
        self.levels.clear();
        self.levels.push(free as u32);
        self.levels.extend(sizes.iter().map(|&s| s + free as u32));
        self.num_levels = sizes.len();
        self.level_zero_sorted = false;
    }
}
