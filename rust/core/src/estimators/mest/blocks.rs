//! Sums over scores without re-reading them, for M-estimation.
//!
//! One read of the oriented, NaN-free scores puts each into a value bucket
//! — the leading bits of its order-preserving integer key, no sort, no copy
//! — and accumulates the bucket's count, extremes and moments about the
//! bucket's nominal center in units of a power of two at least its radius,
//! `P_k = Σ ((y − c)/u)^k`. The buckets are the leaves of a binary tree
//! whose nodes hold the moments of their leaves shifted to their own
//! center (binomial theorem). A sum over the scores inside (or outside) a
//! window `|(y − m)/σ| <= t` then descends the tree: nodes wholly inside
//! give power sums of standardised residuals by the binomial theorem, nodes
//! wholly outside their counts and — for Huber's weights — reciprocal sums
//! by a far-field (multipole) series once they are small against their
//! distance to the pole, and only the leaves the window's edges cut through
//! are read value by value, with the same predicate as a direct pass.
//!
//! With a fit's expectation ([`Expect`]), the buckets wholly inside the
//! bulk about μ₀ (`mest::bulk`) that every window will hold become
//! one leaf keeping only the power sums the windows need, read in a pass
//! that vectorises; the read's per-bucket updates (a few times its cost per
//! score) are left to the other scores.
//!
//! Those leaves' values are fetched when a step first needs them, by one
//! filtering read of the scores for a band of neighbouring leaves (the
//! window edges move little between steps), so a fit holds no copy of the
//! scores: one step costs O(depth + cut leaves) instead of a pass over the
//! data. Residuals are standardised before any power is formed and moments
//! are scaled by powers of two, so nothing overflows or underflows.

mod far;
mod fetched;
mod grouped;
mod layout;
mod read;
mod tree;

use crate::numeric::float::{from_order_key, order_key, Float};
use crate::numeric::par::PARALLEL_MIN;
use crate::numeric::reduce::pow2;
use crate::sample::Sample;
use core::cell::RefCell;
use fetched::Fetched;
use grouped::{Grouped, NONE};
pub use layout::Expect;
use layout::Layout;
use rayon::prelude::*;
pub use tree::WindowSums;
use tree::{Acc, Node, Window, K};

/// At most this many buckets (2^12: the per-bucket accumulators of the
/// one read stay in the second-level cache).
const MAX_BUCKETS: usize = 1 << 12;
/// Scores per chunk of the parallel read of `n` scores: large, so that the
/// per-chunk accumulators (a few hundred kB) cost little against the
/// chunk's scores, but about four chunks from 2^20 scores down to 2^18, so
/// that more threads share the read (one chunk of 2^20 leaves a fit of 1e6
/// scores to one thread). A function of `n` alone: the sums are the same
/// whatever the number of threads.
fn chunk_of(n: usize) -> usize {
    if ablated!("read_chunks") {
        return 1 << 20;
    }
    (n / 4).next_power_of_two().clamp(1 << 18, 1 << 20)
}
/// Up to this many scores, the first fetch takes every leaf (their trees
/// are still built only where read): one read of a few thousand scores
/// costs less than the several a fit's far tails would otherwise cause.
const FETCH_ALL: usize = 1 << 14;
/// Half-width, in σ, of the band about each window edge fetched at once.
const FETCH_BAND: f64 = 0.2;
/// Doubles per bucket accumulator: `P_0..P_{K−1}`, min, max, center, 1/u.
const STRIDE: usize = 16;

/// Smallest power of two `>= r`; for `r == 0` (one distinct value) the
/// smallest normal one, so that the unit is never above its parent's: a
/// join scales a child's moments by (its unit/the parent's)^k, and a unit
/// of 1 under a parent of a tiny one overflowed to ∞·0 = NaN.
fn unit_of(r: f64) -> f64 {
    if r <= 0.0 {
        return f64::MIN_POSITIVE;
    }
    let mut u = pow2(crate::numeric::reduce::binary_exponent(r));
    while u < r {
        u *= 2.0;
    }
    u
}

/// The center of `[lo, hi]`, its reach (the larger distance from the
/// center to an end) and the unit of that reach: how every node, bucket
/// and the bulk place their moments.
fn centered(lo: f64, hi: f64) -> (f64, f64, f64) {
    let center = lo + (hi - lo) / 2.0;
    let reach = (hi - center).max(center - lo);
    (center, reach, unit_of(reach))
}

/// How a raw score becomes an oriented, scaled one and which bucket it is
/// in.
#[derive(Debug, Clone, Copy)]
struct Geometry {
    /// ±1 (orientation) times the first factor of 2^k.
    f1: f64,
    /// The second factor of 2^k (two normal powers of two: exact).
    f2: f64,
    kmin: u64,
    shift: u32,
    buckets: usize,
    has_nan: bool,
}

impl Geometry {
    /// The buckets of a sample's scores times 2^k (about √(per·N) of
    /// them), and the scaled range.
    fn new<T: Float>(s: &Sample<'_, T>, k: i32, per: f64) -> (Geometry, f64, f64) {
        let n = s.len();
        let half = k / 2;
        let sign = if s.negate { -1.0 } else { 1.0 };
        let (f1, f2) = (sign * pow2(half), pow2(k - half));
        let scale = |v: f64| v * f1 * f2;
        let (lo, hi) = if s.negate {
            (scale(s.summary.max), scale(s.summary.min))
        } else {
            (scale(s.summary.min), scale(s.summary.max))
        };
        // The extremes may be zeros of either sign whatever the signs of the
        // zeros among the scores: the key range takes both.
        let lo = if lo == 0.0 { -0.0 } else { lo };
        let hi = if hi == 0.0 { 0.0 } else { hi };
        let (kmin, kmax) = (order_key(lo), order_key(hi));
        // Each leaf costs a join of moments (O(K²)) to build, each score of
        // a leaf the window cuts a read per step: √(per·N) buckets balance
        // the two over the iteration's ~200 steps — per = 8 for Tukey, 16
        // for Huber, whose reciprocal sums need leaves narrow against their
        // distance to the window (docs/design/m-estimation.md, §5).
        let want = ((per * n as f64).sqrt() as usize).clamp(1, MAX_BUCKETS);
        let range = kmax - kmin;
        let shifted = |k: u64, shift: u32| k.checked_shr(shift).unwrap_or(0);
        let shift = (0..=64u32)
            .find(|&s| shifted(range, s) < want as u64)
            .unwrap_or(64);
        let g = Geometry {
            f1,
            f2,
            kmin,
            shift,
            buckets: shifted(range, shift) as usize + 1,
            has_nan: s.summary.nan.count > 0,
        };
        (g, lo, hi)
    }

    #[inline(always)]
    fn value<T: Float>(&self, v: T) -> f64 {
        v.to_f64() * self.f1 * self.f2
    }

    #[inline(always)]
    fn bucket(&self, y: f64) -> usize {
        (order_key(y) - self.kmin)
            .checked_shr(self.shift)
            .unwrap_or(0) as usize
    }

    /// Nominal value range of bucket `b`, within the data's `[lo, hi]`.
    fn range(&self, b: usize, lo: f64, hi: f64) -> (f64, f64) {
        let first = (b as u64).checked_shl(self.shift).unwrap_or(0);
        let last = ((b as u64 + 1).checked_shl(self.shift))
            .map_or(u64::MAX, |e| e.wrapping_sub(1))
            .min(order_key(hi) - self.kmin);
        (
            from_order_key(self.kmin + first).max(lo),
            from_order_key(self.kmin + last).min(hi),
        )
    }
}

/// Bucketed moments of the oriented, NaN-free scores (see the module
/// docs), reading the scores again only for the values of the leaves that
/// window edges cut.
#[derive(Debug)]
pub struct Blocks<'a, T> {
    x: &'a [T],
    geometry: Geometry,
    len: usize,
    /// Tree nodes, leaves first (in value order), the root last.
    nodes: Vec<Node>,
    /// Values of the leaves fetched so far, in the scores' order.
    values: RefCell<Vec<Option<Fetched>>>,
    /// Whether all `K` moments are kept (the reciprocal sums).
    all: bool,
    /// Number of leaves (the first nodes).
    n_leaves: usize,
    /// The window widths (in σ) of the fit's steps, besides the one of the
    /// step at hand: a fetch takes the leaves near all their edges at once.
    widths: core::cell::Cell<[f64; 2]>,
}

impl<'a, T: Float> Blocks<'a, T> {
    /// Reads the scores of a sample once into bucket moments.
    #[cfg(test)]
    pub fn new(s: &Sample<'a, T>) -> Self {
        Self::scaled(s, 0, true, None)
    }

    /// [`Blocks::new`] of the scores times 2^k, under which every score
    /// stays finite (M-estimation's scaled domain). Without `reciprocal`,
    /// only the six moments of power sums up to the fifth are kept (half
    /// the work of the read): reciprocal sums are then read value by value.
    /// With `expect`, the read also keeps the values of the leaves near the
    /// edges of the windows the fit will start from, which would otherwise
    /// cost a read each to fetch.
    pub fn scaled(s: &Sample<'a, T>, k: i32, reciprocal: bool, expect: Option<Expect>) -> Self {
        let (g, lo, hi) = Geometry::new(s, k, if reciprocal { 16.0 } else { 8.0 });
        let layout = Layout::new(&g, (lo, hi), expect, reciprocal);
        let gathering = expect.is_some() && !ablated!("band_gather");
        let read = read::read(s.x, &g, &layout, gathering);
        let mut leaves = Vec::new();
        let mut leaf_of = vec![u32::MAX; g.buckets];
        for (b, a) in read.acc.chunks_exact(STRIDE).enumerate() {
            // The bulk's buckets accumulated nothing: the bulk's leaf
            // takes the place of its first.
            let bulk = layout.bulk_buckets.filter(|&(first, _)| first == b);
            let far = match layout.far_buckets {
                (Some(l), _) if b == 0 => Some((&read.far.left, 0, l)),
                (_, Some(r)) if b == r => Some((&read.far.right, r, g.buckets - 1)),
                _ => None,
            };
            if let Some((first, last)) = bulk.filter(|_| read.bulk.count > 0) {
                leaf_of[first..=last].fill(leaves.len() as u32);
                let span = last - first + 1;
                leaves.push(read::bulk_leaf(&read.bulk, b, span, layout.powers));
            } else if let Some((tail, first, last)) = far.filter(|f| f.0.count > 0) {
                leaf_of[first..=last].fill(leaves.len() as u32);
                leaves.push(Node::far_leaf(tail, first, last - first + 1));
            } else if a[0] > 0.0 {
                leaf_of[b] = leaves.len() as u32;
                leaves.push(Node::leaf(a, b, if reciprocal { K } else { 6 }));
            }
        }
        let n_leaves = leaves.len();
        let mut values: Vec<Option<Fetched>> = (0..n_leaves).map(|_| None).collect();
        if gathering {
            let slots = layout.band_buckets.len();
            let lists = if ablated!("grouping") {
                grouped::pushed(&read.gathered, slots, |y| layout.band_slot[g.bucket(y)])
            } else {
                grouped::joined(&read.gathered, slots)
            };
            for (list, &b) in lists.into_iter().zip(&layout.band_buckets) {
                // A band bucket is a leaf of its own (never the bulk's or a
                // far tail's), unless it holds no score.
                if let Some(&l) = leaf_of.get(b).filter(|&&l| l != u32::MAX) {
                    values[l as usize] = Some(Fetched::new(list, reciprocal));
                }
            }
        }
        Blocks {
            x: s.x,
            geometry: g,
            len: s.len(),
            nodes: tree::build(leaves),
            values: RefCell::new(values),
            n_leaves,
            all: reciprocal,
            widths: core::cell::Cell::new(expect.map_or([0.0; 2], |e| e.widths)),
        }
    }

    /// Number of scores.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Runs `f` on the values of leaf `leaf`, fetching them (with those of
    /// the leaves near the edges of windows `(m, σ)` that are still
    /// missing) if needed.
    fn with_values<R>(
        &self,
        leaf: usize,
        (m, sigma, t): (f64, f64, f64),
        f: impl FnOnce(&Fetched) -> R,
    ) -> R {
        if self.values.borrow()[leaf].is_none() && self.len <= FETCH_ALL && !ablated!("fetch_all") {
            self.fetch((0..self.n_leaves).collect());
        }
        if self.values.borrow()[leaf].is_none() {
            let mut wanted = vec![leaf];
            // The edges move little from step to step: a band of
            // FETCH_BAND·σ about each (a fifth of the data for Huber's
            // t = 1.345, c = 1.5) is usually all a fit ever reads.
            let [a, b] = if ablated!("fetch_edges") {
                [t; 2]
            } else {
                self.widths.get()
            };
            for w in [t, a, b] {
                for e in [m - w * sigma, m + w * sigma] {
                    self.leaves_within(e - FETCH_BAND * sigma, e + FETCH_BAND * sigma, &mut wanted);
                }
            }
            self.fetch(wanted);
        }
        if let Some(fetched) = self.values.borrow_mut()[leaf].as_mut() {
            fetched.prepare();
        }
        let values = self.values.borrow();
        f(values[leaf].as_ref().expect("fetched"))
    }

    /// Appends the leaves overlapping `[lo, hi]`.
    fn leaves_within(&self, lo: f64, hi: f64, out: &mut Vec<usize>) {
        let leaves = &self.nodes[..self.n_leaves];
        let first = leaves.partition_point(|l| l.max() < lo);
        out.extend((first..self.n_leaves).take_while(|&l| leaves[l].min() <= hi));
    }

    /// One filtering read of the scores for the leaves `wanted` that are
    /// still missing.
    fn fetch(&self, mut wanted: Vec<usize>) {
        let mut values = self.values.borrow_mut();
        wanted.sort_unstable();
        wanted.dedup();
        wanted.retain(|&l| values[l].is_none());
        let g = self.geometry;
        // Slot of each wanted bucket in the gathered lists.
        let mut slot = vec![NONE; g.buckets];
        let mut total = 0;
        for (i, &l) in wanted.iter().enumerate() {
            let node = &self.nodes[l];
            slot[node.bucket..node.bucket + node.buckets].fill(i as u32);
            total += node.count;
        }
        let gather = |chunk: &[T]| {
            // Branch-free compaction into a buffer one longer than the most
            // it can hold: the slot past the end takes the rejected writes.
            let room = chunk.len().min(total) + 1;
            let (mut keys, mut out) = (vec![NONE; room], vec![0.0f64; room]);
            let mut len = 0;
            for &v in chunk {
                if g.has_nan && v.is_nan() {
                    continue;
                }
                let y = g.value(v);
                let s = slot[g.bucket(y)];
                (keys[len], out[len]) = (s, y);
                len += usize::from(s != NONE);
            }
            if ablated!("grouping") {
                out.truncate(len);
                return Grouped::ungrouped(out);
            }
            Grouped::by_keys(&keys[..len], &out[..len], wanted.len())
        };
        let parts: Vec<Grouped> = if self.x.len() < PARALLEL_MIN {
            vec![gather(self.x)]
        } else {
            self.x
                .par_chunks(chunk_of(self.x.len()))
                .map(gather)
                .collect()
        };
        let lists = if ablated!("grouping") {
            grouped::pushed(&parts, wanted.len(), |y| slot[g.bucket(y)])
        } else {
            grouped::joined(&parts, wanted.len())
        };
        for (&l, list) in wanted.iter().zip(lists) {
            values[l] = Some(Fetched::new(list, self.all));
        }
    }

    /// One visit of the window `|(y − m)/σ| <= t`: the power sums `Σ u^j`
    /// (j < J) of `u = (y − r)/s` inside it, the numbers of scores left and
    /// right of it, and — if asked — `Σ σ/|y − m|` outside it.
    pub fn window_sums<const J: usize>(
        &self,
        m: f64,
        sigma: f64,
        t: f64,
        (r, s): (f64, f64),
        reciprocal: bool,
    ) -> WindowSums<J> {
        let w = Window {
            m,
            sigma,
            t,
            r,
            s,
            reciprocal,
        };
        let mut acc = Acc::new();
        tree::walk(&self.nodes, &w, &mut acc, &mut |leaf, acc| {
            self.with_values(leaf, (m, sigma, t), |f| f.walk(&w, acc));
        });
        acc.finish()
    }
}

#[cfg(test)]
mod tests;
