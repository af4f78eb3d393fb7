//! A counted B+ tree of u64 keys with multiplicities: inserting a key
//! returns how many stored keys are greater and how many equal, in one
//! descent — O(log n) with a fan-out of up to [`CAP`], whatever order the
//! keys arrive in (no rebalancing by rotation: nodes split when full, so
//! every leaf is at the same depth and each node is at least half full).
//!
//! Inner nodes keep, per child, its smallest key (the first child's is
//! never read) and its total count; the count of keys greater than the new
//! one is the sum of the totals right of the path plus the counts right of
//! its place in the leaf.

/// Keys per leaf, children per inner node.
pub const CAP: usize = 64;
/// Depth bound: each level below the root holds at least CAP/2 per node,
/// so 2^64 keys need fewer than 12 levels.
const MAX_DEPTH: usize = 20;
/// Entries per node when built from sorted keys (room for later inserts).
const FILL: usize = CAP * 3 / 4;

/// A leaf: up to CAP keys, ascending, with their counts (one slot spare
/// for the insert that splits it). Fixed arrays: a node is one block of
/// memory, read without a further indirection.
#[derive(Debug, Clone)]
#[repr(C)] // len and ones in the cache line of the first keys: prefetched with them
struct Leaf {
    len: usize,
    /// Every key seen once: `counts` (all ones) is neither read, fetched
    /// nor moved, so in a stream of distinct scores an insert touches only
    /// the keys' cache lines.
    ones: bool,
    keys: [u64; CAP + 1],
    counts: [u64; CAP + 1],
}

/// An inner node: up to CAP children (leaves if it is on the lowest inner
/// level, else inner nodes), each with its smallest key and total count.
#[derive(Debug, Clone)]
#[repr(C)]
struct Inner {
    len: usize,
    mins: [u64; CAP + 1],
    totals: [u64; CAP + 1],
    children: [u32; CAP + 1],
}

impl Leaf {
    fn empty() -> Self {
        Leaf {
            len: 0,
            ones: true,
            keys: [0; CAP + 1],
            counts: [0; CAP + 1],
        }
    }

    /// (#keys < `key`, total count of the keys > `key`). A scan of every
    /// key without branches rather than a binary search: the loads do not
    /// depend on each other, so a leaf out of cache costs about one memory
    /// latency instead of one per halving.
    #[inline(always)]
    fn place(&self, key: u64) -> (usize, u64) {
        let n = self.len;
        if self.ones {
            let mut below = 0usize;
            let mut above = 0usize;
            for &k in &self.keys[..n] {
                below += usize::from(k < key);
                above += usize::from(k > key);
            }
            return (below, above as u64);
        }
        let (mut below, mut above) = (0usize, 0u64);
        for (&k, &c) in self.keys[..n].iter().zip(&self.counts[..n]) {
            below += usize::from(k < key);
            above += if k > key { c } else { 0 };
        }
        (below, above)
    }

    /// The count of key `j`.
    #[inline(always)]
    fn count(&self, j: usize) -> u64 {
        if self.ones {
            1
        } else {
            self.counts[j]
        }
    }

    /// The counts of keys `range`, summed.
    fn total(&self, range: std::ops::Range<usize>) -> u64 {
        if self.ones {
            range.len() as u64
        } else {
            self.counts[range].iter().sum()
        }
    }
}

impl Inner {
    fn empty() -> Self {
        Inner {
            len: 0,
            mins: [0; CAP + 1],
            totals: [0; CAP + 1],
            children: [0; CAP + 1],
        }
    }

    /// (the child whose range holds `key`, total count of the children
    /// right of it), `total` being the node's own: the children j ≥ 1 with
    /// min ≤ `key` precede it (mins increase), the others follow. The
    /// mins are scanned without branches for the reason of
    /// [`Leaf::place`].
    #[inline(always)]
    fn place(&self, key: u64, total: u64) -> (usize, u64) {
        let n = self.len;
        let mut at = 0usize;
        for &m in &self.mins[1..n] {
            at += usize::from(m <= key);
        }
        // The totals of the shorter side: the node's `total` (its entry in
        // the parent) less those up to `at`, or those right of it. Half the
        // totals' cache lines on average.
        let above = if 2 * at + 1 >= n {
            self.totals[at + 1..n].iter().sum()
        } else {
            total - self.totals[..=at].iter().sum::<u64>()
        };
        (at, above)
    }

    /// Inserts child `c` (smallest key `min`, total `total`) at slot `at`.
    fn insert(&mut self, at: usize, min: u64, total: u64, c: u32) {
        let n = self.len;
        self.mins.copy_within(at..n, at + 1);
        self.totals.copy_within(at..n, at + 1);
        self.children.copy_within(at..n, at + 1);
        (self.mins[at], self.totals[at], self.children[at]) = (min, total, c);
        self.len += 1;
    }
}

/// Prefetches the cache lines of `xs` (a no-op off x86-64).
#[inline(always)]
fn prefetch_lines(xs: &[u64]) {
    #[cfg(target_arch = "x86_64")]
    for chunk in xs.chunks(8) {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is a hint; it neither reads nor faults
        // architecturally, and SSE is part of every x86-64.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(chunk.as_ptr().cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = xs;
}

/// A multiset of u64 keys, counted.
#[derive(Debug, Clone)]
pub struct CountTree {
    leaves: Vec<Leaf>,
    inners: Vec<Inner>,
    /// The root: a leaf when `height` is 0, else an inner node.
    root: u32,
    /// Inner levels above the leaves.
    height: usize,
    len: u64,
}

impl Default for CountTree {
    fn default() -> Self {
        CountTree {
            leaves: vec![Leaf::empty()],
            inners: Vec::new(),
            root: 0,
            height: 0,
            len: 0,
        }
    }
}

impl CountTree {
    /// Keys stored (with multiplicity).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// No key stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds `key`; returns (#stored keys > key, #stored keys == key) as
    /// they were before.
    pub fn insert(&mut self, key: u64) -> (u64, u64) {
        let mut path = [(0u32, 0usize); MAX_DEPTH];
        let mut node = self.root;
        let mut greater = 0u64;
        // The total of `node` before this insert.
        let mut total = self.len;
        self.len += 1;
        for slot in path.iter_mut().take(self.height) {
            let inner = &mut self.inners[node as usize];
            let (i, above) = inner.place(key, total);
            greater += above;
            total = inner.totals[i];
            inner.totals[i] += 1;
            *slot = (node, i);
            node = inner.children[i];
        }
        let leaf = &mut self.leaves[node as usize];
        let n = leaf.len;
        let (pos, above) = leaf.place(key);
        greater += above;
        if pos < n && leaf.keys[pos] == key {
            if leaf.ones {
                leaf.counts[..n].fill(1);
                leaf.ones = false;
            }
            let equal = leaf.counts[pos];
            leaf.counts[pos] += 1;
            return (greater, equal);
        }
        leaf.keys.copy_within(pos..n, pos + 1);
        leaf.keys[pos] = key;
        if !leaf.ones {
            leaf.counts.copy_within(pos..n, pos + 1);
            leaf.counts[pos] = 1;
        }
        leaf.len += 1;
        if leaf.len <= CAP {
            return (greater, 0);
        }
        // The leaf overflowed: split it, and every full node above.
        let (mut min, mut total, mut right) = self.split_leaf(node);
        let mut left = node;
        for depth in (0..self.height).rev() {
            let (parent, slot) = path[depth];
            let inner = &mut self.inners[parent as usize];
            inner.totals[slot] -= total;
            inner.insert(slot + 1, min, total, right);
            if inner.len <= CAP {
                return (greater, 0);
            }
            (min, total, right) = self.split_inner(parent);
            left = parent;
        }
        let mut root = Inner::empty();
        root.insert(0, 0, self.len - total, left);
        root.insert(1, min, total, right);
        self.inners.push(root);
        self.root = (self.inners.len() - 1) as u32;
        self.height += 1;
        (greater, 0)
    }

    /// Asks the memory for the lowest inner node on the path of `key`
    /// (through the levels above it, small enough to stay in cache):
    /// called further ahead than [`prefetch`](Self::prefetch), so that
    /// the node is there when that prefetch reads it to find the leaf. A
    /// no-op while the root is the only inner node.
    #[inline]
    pub fn prefetch_inner(&self, key: u64) {
        if self.height < 2 {
            return;
        }
        let mut node = self.root;
        for _ in 0..self.height - 1 {
            let inner = &self.inners[node as usize];
            node = inner.children[inner.mins[1..inner.len].partition_point(|&m| m <= key)];
        }
        let inner = &self.inners[node as usize];
        prefetch_lines(&inner.mins);
        prefetch_lines(&inner.totals);
        #[cfg(target_arch = "x86_64")]
        for chunk in inner.children.chunks(16) {
            use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            // SAFETY: as in prefetch_lines.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(chunk.as_ptr().cast()) };
        }
    }

    /// Asks the memory for the leaf where `key` would go, without waiting
    /// for it: called a few keys ahead of [`insert`](Self::insert), the
    /// leaf — out of cache in a large tree — arrives while the inserts
    /// before it run. Only a hint: a split in between leaves the inserts
    /// exact.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        let mut node = self.root;
        for _ in 0..self.height {
            let inner = &self.inners[node as usize];
            node = inner.children[inner.mins[1..inner.len].partition_point(|&m| m <= key)];
        }
        // The leaf's keys, its length unread: reading it would wait. Its
        // counts are read only once a key repeats, and then fetched on
        // demand.
        let leaf = &self.leaves[node as usize];
        prefetch_lines(&leaf.keys);
    }

    /// Moves the upper half of leaf `i` into a new leaf: its smallest key,
    /// total and index.
    fn split_leaf(&mut self, i: u32) -> (u64, u64, u32) {
        let leaf = &mut self.leaves[i as usize];
        let (n, h) = (leaf.len, leaf.len / 2);
        let mut new = Leaf::empty();
        new.len = n - h;
        new.ones = leaf.ones;
        new.keys[..n - h].copy_from_slice(&leaf.keys[h..n]);
        if !leaf.ones {
            new.counts[..n - h].copy_from_slice(&leaf.counts[h..n]);
        }
        leaf.len = h;
        let out = (new.keys[0], new.total(0..new.len));
        self.leaves.push(new);
        (out.0, out.1, (self.leaves.len() - 1) as u32)
    }

    /// Moves the upper half of inner node `i` into a new one.
    fn split_inner(&mut self, i: u32) -> (u64, u64, u32) {
        let inner = &mut self.inners[i as usize];
        let (n, h) = (inner.len, inner.len / 2);
        let mut new = Inner::empty();
        new.len = n - h;
        new.mins[..n - h].copy_from_slice(&inner.mins[h..n]);
        new.totals[..n - h].copy_from_slice(&inner.totals[h..n]);
        new.children[..n - h].copy_from_slice(&inner.children[h..n]);
        inner.len = h;
        let out = (new.mins[0], new.totals[..new.len].iter().sum());
        self.inners.push(new);
        (out.0, out.1, (self.inners.len() - 1) as u32)
    }

    /// Each distinct key and its count, ascending.
    pub fn for_each(&self, mut f: impl FnMut(u64, u64)) {
        let mut stack = vec![(self.root, self.height)];
        while let Some((i, h)) = stack.pop() {
            if h == 0 {
                let leaf = &self.leaves[i as usize];
                for j in 0..leaf.len {
                    f(leaf.keys[j], leaf.count(j));
                }
            } else {
                let inner = &self.inners[i as usize];
                stack.extend(
                    inner.children[..inner.len]
                        .iter()
                        .rev()
                        .map(|&c| (c, h - 1)),
                );
            }
        }
    }

    /// The tree of strictly increasing `keys` with `counts` (≥ 1, equal
    /// lengths; the caller checks), built bottom-up.
    pub fn from_sorted(keys: &[u64], counts: &[u64]) -> Self {
        if keys.is_empty() {
            return CountTree::default();
        }
        let mut t = CountTree {
            leaves: Vec::new(),
            inners: Vec::new(),
            root: 0,
            height: 0,
            len: counts.iter().sum(),
        };
        // (index, smallest key, total) of the level being built.
        let mut level: Vec<(u32, u64, u64)> = keys
            .chunks(FILL)
            .zip(counts.chunks(FILL))
            .map(|(k, c)| {
                let mut leaf = Leaf::empty();
                leaf.len = k.len();
                leaf.keys[..k.len()].copy_from_slice(k);
                leaf.counts[..c.len()].copy_from_slice(c);
                leaf.ones = c.iter().all(|&x| x == 1);
                t.leaves.push(leaf);
                ((t.leaves.len() - 1) as u32, k[0], c.iter().sum())
            })
            .collect();
        while level.len() > 1 {
            level = level
                .chunks(FILL)
                .map(|group| {
                    let mut inner = Inner::empty();
                    for (j, &(c, min, total)) in group.iter().enumerate() {
                        inner.insert(j, min, total, c);
                    }
                    t.inners.push(inner);
                    let total = group.iter().map(|g| g.2).sum();
                    ((t.inners.len() - 1) as u32, group[0].1, total)
                })
                .collect();
            t.height += 1;
        }
        t.root = level[0].0;
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn counts_equal_a_scan(keys in prop::collection::vec(0u64..200, 0..3000), bulk in 0usize..100) {
            let bulk = bulk.min(keys.len());
            let mut start: Vec<u64> = keys[..bulk].to_vec();
            start.sort_unstable();
            let mut distinct = start.clone();
            distinct.dedup();
            let counts: Vec<u64> = distinct
                .iter()
                .map(|d| start.iter().filter(|&&k| k == *d).count() as u64)
                .collect();
            let mut t = CountTree::from_sorted(&distinct, &counts);
            let mut seen = start;
            for &k in &keys[bulk..] {
                let want = (
                    seen.iter().filter(|&&s| s > k).count() as u64,
                    seen.iter().filter(|&&s| s == k).count() as u64,
                );
                prop_assert_eq!(t.insert(k), want);
                seen.push(k);
            }
            prop_assert_eq!(t.len(), seen.len() as u64);
            let mut listed = Vec::new();
            t.for_each(|k, c| listed.extend(std::iter::repeat_n(k, c as usize)));
            seen.sort_unstable();
            prop_assert_eq!(listed, seen);
        }
    }

    #[test]
    fn sorted_and_reversed_arrivals_stay_shallow() {
        for reverse in [false, true] {
            let mut t = CountTree::default();
            for i in 0..200_000u64 {
                let k = if reverse { u64::MAX - i } else { i };
                let (g, e) = t.insert(k);
                assert_eq!((g, e), (if reverse { i } else { 0 }, 0));
            }
            let depth = t.height + 1;
            assert!(depth <= 5, "{depth}");
        }
    }
}
