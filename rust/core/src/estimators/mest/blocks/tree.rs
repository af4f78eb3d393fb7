//! The tree of bucket moments and the window sums read from it: the
//! structure behind [`super::Blocks`] (docs/design/m-estimation.md §2.3,
//! steps 4–5).
//!
//! Each node is a set of scores contiguous in value (a bucket, or the
//! union of two nodes) holding its count, its reach and its first [`K`]
//! power sums `P_k = Σ ((y − c)/u)^k` about its center `c` in units `u`
//! (a power of two). A window sum of M-estimation walks the tree from the
//! root: a node inside the window contributes its power sums shifted to
//! the window's frame (binomial theorem), a node outside its count and —
//! for Huber's weights — `Σ σ/|y − m|` by the far-field (multipole)
//! expansion about its center (Greengard and Rokhlin, *J. Comput. Phys.*
//! 73, 1987), and only the leaves a window's edge cuts are read value by
//! value, with the predicate of the direct path.
//!
//! Trade-offs: twelve moments per node make the far-field series accurate
//! to about 1.7e-17 once a node's reach is at most [`RHO`] of its distance
//! to the pole, at the price of an O(K²) shift per join when the tree is
//! built; six (Tukey) or three (the bulk) are kept where the series is not
//! needed. The shifts sum independent terms instead of a Taylor shift by
//! synthetic division (the ablation keeps the latter), so that they
//! pipeline; cut leaves are read in four lanes added pairwise, equal bit
//! for bit to adding each value where it falls.

use super::centered;
use super::far::Tail;

/// Moments kept per node: enough for the far-field series below (whose
/// evaluation is written for twelve).
pub(super) const K: usize = 12;
const _: () = assert!(K == 12, "reciprocal_sum evaluates twelve terms");
/// A node is summed by its far-field series only when the largest distance
/// of its scores from its center is at most this fraction of the center's
/// distance to the pole; the series' truncation error is then below
/// `RHO^K ≈ 1.7e-17` relative.
const RHO: f64 = 0.04;
/// No node is deeper than this (the tree is balanced over ≤ 2^12 leaves).
const MAX_DEPTH: usize = 40;

/// Binomial coefficients C(j, l) for j < K (power sums about a new center).
const BINOMIAL: [[f64; K]; K] = {
    let mut c = [[0.0; K]; K];
    let mut j = 0;
    while j < K {
        c[j][0] = 1.0;
        let mut l = 1;
        while l <= j {
            c[j][l] = c[j - 1][l - 1] + if l < j { c[j - 1][l] } else { 0.0 };
            l += 1;
        }
        j += 1;
    }
    c
};

/// Adds `Σ_{l<=k} C(k, l) h^(k−l) r^l P_l` to `out[k]` for `k < M`: a
/// node's first `M` moments `P` in units `r` times smaller, shifted by `h`
/// units. The terms of different `k` are independent (a Taylor shift by
/// repeated synthetic division chains K²/2 dependent additions).
#[inline(always)]
fn shift_into<const M: usize>(moments: &[f64; K], ratio: f64, h: f64, out: &mut [f64; K]) {
    let (mut q, mut hp) = ([0.0; M], [1.0; M]);
    let mut rp = 1.0;
    for l in 0..M {
        q[l] = moments[l] * rp;
        rp *= ratio;
        if l > 0 {
            hp[l] = hp[l - 1] * h;
        }
    }
    for k in 0..M {
        let mut t = 0.0;
        for l in 0..=k {
            t += BINOMIAL[k][l] * hp[k - l] * q[l];
        }
        out[k] += t;
    }
}

/// [`shift_into`] as a Taylor shift by repeated synthetic division (the
/// ablation of the independent sums).
fn taylor_shift(moments: &[f64; K], kept: usize, ratio: f64, h: f64, out: &mut [f64; K]) {
    let mut q = [0.0; K];
    let mut rp = 1.0;
    for (qk, &pk) in q.iter_mut().zip(moments).take(kept) {
        *qk = pk * rp;
        rp *= ratio;
    }
    for j in 1..kept {
        for k in (j..kept).rev() {
            q[k] += h * q[k - 1];
        }
    }
    for (pk, qk) in out.iter_mut().zip(q) {
        *pk += qk;
    }
}

/// A set of scores contiguous in value: a bucket (leaf) or the union of
/// two nodes.
#[derive(Debug, Clone)]
pub(super) struct Node {
    pub(super) count: usize,
    min: f64,
    max: f64,
    center: f64,
    /// The power of two the moments are in units of.
    unit: f64,
    /// Largest distance of a score from `center`.
    reach: f64,
    /// `P_k = Σ ((y − center)/unit)^k`.
    p: [f64; K],
    /// Children (`u32::MAX` for a leaf).
    kids: [u32; 2],
    /// The (first) bucket of a leaf.
    pub(super) bucket: usize,
    /// The number of buckets a leaf spans (the bulk's, several).
    pub(super) buckets: usize,
    /// The moments kept: all `K` (for the far-field series), six, or
    /// three (the bulk of a Huber fit, always inside its windows), or none
    /// (a far tail, always outside them).
    kept: usize,
    /// A far tail's series for its reciprocal sums.
    tail: Option<Box<Tail>>,
}

impl Node {
    /// A leaf from a bucket's accumulator (see `STRIDE`) with its first
    /// `kept` moments.
    pub(super) fn leaf(a: &[f64], bucket: usize, kept: usize) -> Node {
        let (min, max, center) = (a[12], a[13], a[14]);
        let mut p = [0.0; K];
        p[..kept].copy_from_slice(&a[..kept]);
        Node {
            count: a[0] as usize,
            min,
            max,
            center,
            unit: 1.0 / a[15],
            reach: (max - center).max(center - min),
            p,
            kids: [u32::MAX; 2],
            bucket,
            buckets: 1,
            kept,
            tail: None,
        }
    }

    /// The leaf of a far tail spanning `buckets` buckets from `first`.
    pub(super) fn far_leaf(tail: &Tail, first: usize, buckets: usize) -> Node {
        let (center, reach, unit) = centered(tail.lo, tail.hi);
        Node {
            count: tail.count,
            min: tail.lo,
            max: tail.hi,
            center,
            unit,
            reach,
            p: [0.0; K],
            kids: [u32::MAX; 2],
            bucket: first,
            buckets,
            kept: 0,
            tail: Some(Box::new(*tail)),
        }
    }

    /// A node over `count` values that is cut by every window (its
    /// values are read; it keeps no moments).
    pub(super) fn unbounded(count: usize) -> Node {
        Node {
            count,
            min: f64::NEG_INFINITY,
            max: f64::INFINITY,
            center: 0.0,
            unit: 1.0,
            reach: f64::INFINITY,
            p: [0.0; K],
            kids: [u32::MAX; 2],
            bucket: 0,
            buckets: 1,
            kept: 0,
            tail: None,
        }
    }

    /// A leaf over the values `run` (from `offset` on in their list) with
    /// their first `kept` moments.
    pub(super) fn run(run: &[f64], offset: usize, kept: usize) -> Node {
        let (min, max) = run
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        let (center, reach, unit) = centered(min, max);
        // A power of two: its inverse is exact.
        let inv = 1.0 / unit;
        let p = match kept {
            K => run_moments::<K>(run, center, inv),
            _ => run_moments::<6>(run, center, inv),
        };
        Node {
            count: run.len(),
            min,
            max,
            center,
            unit,
            reach,
            p,
            kids: [u32::MAX; 2],
            bucket: offset,
            buckets: 1,
            kept,
            tail: None,
        }
    }

    pub(super) fn min(&self) -> f64 {
        self.min
    }

    pub(super) fn max(&self) -> f64 {
        self.max
    }

    fn is_leaf(&self) -> bool {
        self.kids[0] == u32::MAX
    }

    /// The union of `a` and `b`, whose moments are shifted to its center.
    fn join(a: &Node, b: &Node, ia: usize, ib: usize) -> Node {
        let (min, max) = (a.min.min(b.min), a.max.max(b.max));
        let (center, reach, unit) = centered(min, max);
        let mut p = [0.0; K];
        // A moment of the union needs those of its children up to its
        // order: it keeps what both keep.
        let kept = a.kept.min(b.kept);
        for c in [a, b] {
            // Σ ((y − C)/U)^k = Σ_l C(k, l) (u/U)^l P_l ((c − C)/U)^(k−l):
            // the moments in units of U (u/U a power of two, exact), then
            // shifted by h = (c − C)/U.
            let (ratio, h) = (c.unit / unit, (c.center - center) / unit);
            if ablated!("tree_kernels") {
                taylor_shift(&c.p, kept, ratio, h, &mut p);
                continue;
            }
            match kept {
                K => shift_into::<K>(&c.p, ratio, h, &mut p),
                6 => shift_into::<6>(&c.p, ratio, h, &mut p),
                _ => shift_into::<3>(&c.p, ratio, h, &mut p),
            }
        }
        Node {
            count: a.count + b.count,
            min,
            max,
            center,
            unit,
            reach,
            p,
            kids: [ia as u32, ib as u32],
            bucket: usize::MAX,
            buckets: 0,
            kept,
            tail: None,
        }
    }

    /// Adds `Σ ((y − r)/s)^j`, j < J, of the node's scores to `out`.
    fn power_sums<const J: usize>(&self, r: f64, s: f64, out: &mut [f64; J]) {
        debug_assert!(J <= self.kept, "a sum of powers the node does not keep");
        let (alpha, h) = (self.unit / s, (self.center - r) / s);
        let (mut ap, mut hp) = ([1.0; 6], [1.0; 6]);
        for i in 1..J {
            ap[i] = ap[i - 1] * alpha;
            hp[i] = hp[i - 1] * h;
        }
        for (j, sj) in out.iter_mut().enumerate() {
            let mut term = 0.0;
            for l in 0..=j {
                term += BINOMIAL[j][l] * ap[l] * self.p[l] * hp[j - l];
            }
            *sj += term;
        }
    }

    /// `Σ σ/|y − m|` by the far-field series, if it converges fast enough.
    fn reciprocal_sum(&self, m: f64, sigma: f64) -> Option<f64> {
        if let Some(t) = &self.tail {
            return t.reciprocal_sum(m, sigma);
        }
        let h = self.center - m;
        if self.kept < K || self.reach > RHO * h.abs() {
            return None;
        }
        // σ/(y − m) = (σ/(c − m)) Σ_k P_k (−u/(c − m))^k, by Estrin's
        // scheme: four dependent steps instead of Horner's twelve (|z| <=
        // 2·RHO, where either is as accurate).
        let z = -self.unit / h;
        if ablated!("tree_kernels") {
            let acc = self.p.iter().rev().fold(0.0, |acc, &pk| acc * z + pk);
            return Some((acc * (sigma / h)).abs());
        }
        let p = &self.p;
        let (z2, z4) = (z * z, z * z * (z * z));
        let a: [f64; K / 2] = core::array::from_fn(|i| p[2 * i] + p[2 * i + 1] * z);
        let b = [a[0] + a[1] * z2, a[2] + a[3] * z2, a[4] + a[5] * z2];
        let acc = (b[0] + b[1] * z4) + b[2] * (z4 * z4);
        Some((acc * (sigma / h)).abs())
    }
}

/// `d^k` for `k < M` (at most [`K`]), four at a time: `d^(4i + j) =
/// d^j·(d^4)^i` is a chain of three multiplications where taking one power
/// after another chains `M − 1`.
#[inline(always)]
pub(super) fn powers<const M: usize>(d: f64) -> [f64; M] {
    const { assert!(M <= K) };
    let d2 = d * d;
    let d4 = d2 * d2;
    let pw = [1.0, d, d2, d2 * d];
    core::array::from_fn(|k| match k / 4 {
        0 => pw[k],
        1 => pw[k - 4] * d4,
        _ => pw[k - 8] * (d4 * d4),
    })
}

crate::numeric::simd::multiversion! {
    /// `P_k = Σ ((v − center)·inv)^k`, k < M, of `run`, lane by lane (value
    /// `i` in lane `i % LANES`, the lanes added pairwise): with one chain of
    /// additions per moment, a cut leaf's runs took longer to build than
    /// to read.
    fn run_moments<const M: usize>(run: &[f64], center: f64, inv: f64) -> [f64; K] {
        let mut lanes = [[0.0f64; LANES]; M];
        let one = |v: f64, i: usize| {
            for (pk, dk) in lanes.iter_mut().zip(powers::<M>((v - center) * inv)) {
                pk[i] += dk;
            }
        };
        by_lanes(run, one);
        let mut p = [0.0; K];
        for (pk, l) in p.iter_mut().zip(lanes) {
            *pk = pairwise(l);
        }
        p
    }
}

/// The tree over `leaves` (in value order): leaves first, then each level
/// of pairs, the root last.
pub(super) fn build(leaves: Vec<Node>) -> Vec<Node> {
    let mut nodes = leaves;
    let mut level: Vec<usize> = (0..nodes.len()).collect();
    while level.len() > 1 {
        let mut next = Vec::with_capacity(level.len().div_ceil(2));
        for pair in level.chunks(2) {
            if let [a, b] = *pair {
                let joined = Node::join(&nodes[a], &nodes[b], a, b);
                next.push(nodes.len());
                nodes.push(joined);
            } else {
                next.push(pair[0]);
            }
        }
        level = next;
    }
    nodes
}

/// What one visit of a window sums up.
#[derive(Debug, Clone, Copy)]
pub struct WindowSums<const J: usize> {
    /// `Σ u^j` inside the window.
    pub power: [f64; J],
    /// Scores left of the window.
    pub left: usize,
    /// Scores right of it.
    pub right: usize,
    /// `Σ σ/|y − m|` outside it (when asked for).
    pub reciprocal: f64,
}

/// A window `|(y − m)/σ| <= t` and the frame `(y − r)/s` of its power
/// sums.
#[derive(Debug, Clone, Copy)]
pub(super) struct Window {
    pub(super) m: f64,
    pub(super) sigma: f64,
    pub(super) t: f64,
    pub(super) r: f64,
    pub(super) s: f64,
    pub(super) reciprocal: bool,
}

/// Sums of one window visit: over whole nodes, and over values read one by
/// one (added last).
pub(super) struct Acc<const J: usize> {
    pub(super) out: WindowSums<J>,
    pub(super) direct: [f64; J],
}

impl<const J: usize> Acc<J> {
    pub(super) fn new() -> Self {
        Acc {
            out: WindowSums {
                power: [0.0; J],
                left: 0,
                right: 0,
                reciprocal: 0.0,
            },
            direct: [0.0; J],
        }
    }

    pub(super) fn finish(mut self) -> WindowSums<J> {
        for (p, c) in self.out.power.iter_mut().zip(self.direct) {
            *p += c;
        }
        self.out
    }
}

/// Adds the window's sums over `vals`, each read with the predicate of a
/// direct pass.
pub(super) fn read_values<const J: usize>(vals: &[f64], w: &Window, acc: &mut Acc<J>) {
    // Huber's location step frames its power sums by its window: the
    // standardised residual is then the window's, bit for bit, and one
    // division per value is saved.
    let same = w.r.to_bits() == w.m.to_bits() && w.s.to_bits() == w.sigma.to_bits();
    match (w.reciprocal, same) {
        (true, true) => read_lanes::<J, true, true>(vals, w, acc),
        (true, false) => read_lanes::<J, true, false>(vals, w, acc),
        (false, true) => read_lanes::<J, false, true>(vals, w, acc),
        (false, false) => read_lanes::<J, false, false>(vals, w, acc),
    }
}

/// Independent sums per value read (value `i` goes to lane `i % LANES`):
/// one chain of additions per sum was the bound of a cut leaf's read, and
/// lanes let it vectorise.
pub(super) const LANES: usize = if ablated!("lanes") { 1 } else { 4 };

/// `one(v, lane)` for each value of `vals`, value `i` in lane `i % LANES`,
/// in whole groups of `LANES` (which vectorise) and then the rest.
#[inline(always)]
pub(super) fn by_lanes(vals: &[f64], mut one: impl FnMut(f64, usize)) {
    let mut groups = vals.chunks_exact(LANES);
    for g in &mut groups {
        for (i, &v) in g.iter().enumerate() {
            one(v, i);
        }
    }
    for (i, &v) in groups.remainder().iter().enumerate() {
        one(v, i);
    }
}

/// The lanes' total, added pairwise (the order every lane sum is combined
/// in).
#[inline(always)]
pub(super) fn pairwise(l: [f64; LANES]) -> f64 {
    match l.as_slice() {
        [a] => *a,
        [a, b, c, d] => (a + b) + (c + d),
        _ => unreachable!("one or four lanes"),
    }
}

crate::numeric::simd::multiversion! {
    /// [`read_values`] without a branch on where a value falls: a cut
    /// leaf's values lie on both sides of the window's edge in no order,
    /// and a branch on each was mispredicted about every other time. A
    /// value outside adds +0 to the power sums and one inside +0 to the
    /// reciprocal sum, which leave them as they were (neither is ever −0):
    /// the same sums, bit for bit, as adding only where the value falls,
    /// lane by lane, the lanes then added pairwise.
    fn read_lanes<const J: usize, const RECIPROCAL: bool, const SAME: bool>(
        vals: &[f64], w: &Window, acc: &mut Acc<J>
    ) -> () {
        let (m, sigma, t, r, s) = (w.m, w.sigma, w.t, w.r, w.s);
        let (mut left, mut right) = ([0usize; LANES], [0usize; LANES]);
        let mut direct = [[0.0f64; LANES]; J];
        let mut reciprocal = [0.0f64; LANES];
        if ablated!("branch_free") {
            let one = |v: f64, i: usize| {
                let z = (v - m) / sigma;
                if z < -t || z > t {
                    if z < -t {
                        left[i] += 1;
                    } else {
                        right[i] += 1;
                    }
                    if RECIPROCAL {
                        reciprocal[i] += 1.0 / z.abs();
                    }
                } else {
                    let u = if SAME { z } else { (v - r) / s };
                    let mut pow = 1.0;
                    for d in &mut direct {
                        d[i] += pow;
                        pow *= u;
                    }
                }
            };
            by_lanes(vals, one);
        } else {
        let one = |v: f64, i: usize| {
            let z = (v - m) / sigma;
            let (l, h) = (z < -t, z > t);
            left[i] += usize::from(l);
            right[i] += usize::from(h);
            let inside = !(l | h);
            let u = if SAME { z } else { (v - r) / s };
            let u = if inside { u } else { 0.0 };
            let mut pow = if inside { 1.0 } else { 0.0 };
            for d in &mut direct {
                d[i] += pow;
                pow *= u;
            }
            if RECIPROCAL {
                reciprocal[i] += if inside { 0.0 } else { 1.0 / z.abs() };
            }
        };
        by_lanes(vals, one);
        }
        for (a, d) in acc.direct.iter_mut().zip(direct) {
            *a += pairwise(d);
        }
        acc.out.reciprocal += pairwise(reciprocal);
        acc.out.left += left.iter().sum::<usize>();
        acc.out.right += right.iter().sum::<usize>();
    }
}

/// Adds the window's sums over the tree `nodes` (root last): whole nodes
/// where their moments suffice, `leaf(i, acc)` for each leaf `i` that must
/// be read value by value.
pub(super) fn walk<const J: usize>(
    nodes: &[Node],
    w: &Window,
    acc: &mut Acc<J>,
    leaf: &mut dyn FnMut(usize, &mut Acc<J>),
) {
    if nodes.is_empty() {
        return;
    }
    let mut stack = [0u32; 2 * MAX_DEPTH];
    stack[0] = (nodes.len() - 1) as u32;
    let mut top = 1;
    while top > 0 {
        top -= 1;
        let i = stack[top] as usize;
        let node = &nodes[i];
        let (rmin, rmax) = ((node.min - w.m) / w.sigma, (node.max - w.m) / w.sigma);
        let left = rmax < -w.t;
        let whole = if left || rmin > w.t {
            let far = !w.reciprocal || {
                match node.reciprocal_sum(w.m, w.sigma) {
                    Some(v) => {
                        acc.out.reciprocal += v;
                        true
                    }
                    None => false,
                }
            };
            if far {
                if left {
                    acc.out.left += node.count;
                } else {
                    acc.out.right += node.count;
                }
            }
            far
        } else if rmin >= -w.t && rmax <= w.t && node.kept >= J {
            node.power_sums(w.r, w.s, &mut acc.out.power);
            true
        } else {
            false
        };
        if whole {
            continue;
        }
        if node.is_leaf() {
            leaf(i, acc);
        } else {
            stack[top] = node.kids[0];
            stack[top + 1] = node.kids[1];
            top += 2;
        }
    }
}
