//! The one read of the scores behind [`super::Blocks`]
//! (docs/design/m-estimation.md §2.3, step 3): the bulk's power sums, and
//! each other score's bucket moments (and, for the bands about the
//! starting windows' edges, its value).
//!
//! The scores are read in chunks whose size depends on N alone, in
//! parallel, and joined in chunk order, so the sums do not depend on the
//! number of threads. Each chunk goes in stages of 4 096 scores: scaled,
//! split into the bulk (an AVX2 kernel where the CPU has it), the far
//! tails and the rest, whose moments `P_k = Σ ((y − c)/u)^k` about their
//! bucket's center accumulate with counts and extremes; the band buckets'
//! values are gathered and grouped by bucket (a counting sort per chunk).
//!
//! Trade-offs: the per-bucket accumulators (a stride of moments per
//! bucket, at most 4 096 buckets) stay in the second-level cache, and
//! staging keeps the split's branches out of the moment loops; the bulk's
//! scores, most of them, skip the per-bucket update (a few times the cost
//! of the read per score) because every window holds them. Gathering the
//! band buckets' values in this read copies them once and spares the
//! first steps a filtering read of all the scores (§7 of the design page
//! lists what each of these layers earns).

use super::far::Far;
use super::grouped::Grouped;
use super::layout::Layout;
use super::tree::{powers, Node, K};
use super::{chunk_of, Geometry, STRIDE};
use crate::estimators::mest::bulk::{self, Bulk};
use crate::numeric::float::Float;
use crate::numeric::par::PARALLEL_MIN;
use rayon::prelude::*;

/// What the read gives: the bucket accumulators, the band buckets'
/// gathered values (per chunk, grouped by band slot), the bulk.
pub(super) struct Read {
    pub(super) acc: Vec<f64>,
    pub(super) gathered: Vec<Grouped>,
    pub(super) bulk: Bulk,
    pub(super) far: Far,
}

/// Reads `x` once into `layout`'s accumulators and bulk, in chunks of a
/// fixed size combined in chunk order: the sums are the same whatever the
/// number of threads.
pub(super) fn read<T: Float>(x: &[T], g: &Geometry, layout: &Layout, gathering: bool) -> Read {
    let one = |c: &[T], mut acc: Vec<f64>| {
        let mut out = Vec::new();
        let mut bulk = layout.bulk;
        let mut far = layout.far;
        let mut m = Moments {
            acc: &mut acc,
            band: &layout.band,
            out: &mut out,
            gather: vec![0.0; if gathering { STAGE + 1 } else { 1 }],
            gathering,
            powers: layout.powers,
        };
        read_chunk(c, g, (&mut bulk, &mut far), &mut m);
        let slots = layout.band_buckets.len();
        let out = if ablated!("grouping") {
            Grouped::ungrouped(out)
        } else {
            Grouped::new(&out, slots, |y| layout.band_slot[g.bucket(y)])
        };
        (acc, out, bulk, far)
    };
    if x.len() < PARALLEL_MIN {
        let (acc, out, bulk, far) = one(x, layout.init.clone());
        return Read {
            acc,
            gathered: vec![out],
            bulk,
            far,
        };
    }
    let parts: Vec<(Vec<f64>, Grouped, Bulk, Far)> = x
        .par_chunks(chunk_of(x.len()))
        .map(|c| one(c, layout.init.clone()))
        .collect();
    let mut total = Read {
        acc: layout.init.clone(),
        gathered: Vec::with_capacity(parts.len()),
        bulk: layout.bulk,
        far: layout.far,
    };
    for (p, out, bulk, far) in parts {
        for (a, q) in total
            .acc
            .chunks_exact_mut(STRIDE)
            .zip(p.chunks_exact(STRIDE))
        {
            for i in 0..K {
                a[i] += q[i];
            }
            a[12] = a[12].min(q[12]);
            a[13] = a[13].max(q[13]);
        }
        total.bulk.merge(&bulk);
        total.far.merge(&far);
        total.gathered.push(out);
    }
    total
}

/// Counts, extremes and the first `M` moments of a chunk's scores per
/// bucket into `acc` (laid out by [`STRIDE`], centers and 1/u preset); the
/// scores of the buckets flagged in `band` are copied to `out` (one longer
/// than the most it can take: the slot past the end takes the rejected
/// writes of this branch-free compaction). Returns the number copied.
#[inline(always)]
fn accumulate_into<T: Float, const M: usize>(
    chunk: &[T],
    g: &Geometry,
    acc: &mut [f64],
    band: &[u8],
    out: &mut [f64],
) -> usize {
    let mut len = 0;
    for &v in chunk {
        if g.has_nan && v.is_nan() {
            continue;
        }
        let y = g.value(v);
        let b = g.bucket(y);
        let Some(a) = acc.get_mut(b * STRIDE..).and_then(|a| a.get_mut(..STRIDE)) else {
            continue;
        };
        if let Some(o) = out.get_mut(len) {
            *o = y;
        }
        len += usize::from(band.get(b).copied().unwrap_or(0));
        let d = (y - a[14]) * a[15];
        for (ak, dk) in a.iter_mut().zip(powers::<M>(d)) {
            *ak += dk;
        }
        if y < a[12] {
            a[12] = y;
        }
        if y > a[13] {
            a[13] = y;
        }
    }
    len
}

crate::numeric::simd::multiversion! {
    /// [`accumulate_into`] of all `K` moments (the far-field series).
    fn accumulate_all<T: Float>(
        chunk: &[T], g: &Geometry, acc: &mut [f64], band: &[u8], out: &mut [f64]
    ) -> usize {
        accumulate_into::<T, K>(chunk, g, acc, band, out)
    }
}

crate::numeric::simd::multiversion! {
    /// [`accumulate_into`] of the six moments of Tukey's weights.
    fn accumulate_six<T: Float>(
        chunk: &[T], g: &Geometry, acc: &mut [f64], band: &[u8], out: &mut [f64]
    ) -> usize {
        accumulate_into::<T, 6>(chunk, g, acc, band, out)
    }
}

/// Scores of a chunk split at a time before the bucket moments of those
/// outside the bulk are taken (a multiple of `bulk::CHUNK`: the bulk's
/// sums are the same on any number of threads; a few tens of kB, in L2).
const STAGE: usize = 1 << 12;
const _: () = assert!(STAGE.is_multiple_of(bulk::CHUNK));

/// Where a chunk's bucket moments go: the accumulators, the band buckets
/// whose scores are gathered (if `gathering`) into `out`, and how many
/// powers the bulk sums (3 for Huber, whose buckets keep all `K` moments;
/// 6 for Tukey, whose keep six).
struct Moments<'a> {
    acc: &'a mut [f64],
    band: &'a [u8],
    out: &'a mut Vec<f64>,
    gather: Vec<f64>,
    gathering: bool,
    powers: usize,
}

impl Moments<'_> {
    /// Adds the moments of `scores` (at most [`STAGE`]).
    fn add<U: Float>(&mut self, scores: &[U], g: &Geometry) {
        let n = if self.powers == 3 {
            accumulate_all(scores, g, self.acc, self.band, &mut self.gather)
        } else {
            accumulate_six(scores, g, self.acc, self.band, &mut self.gather)
        };
        if self.gathering {
            self.out.extend_from_slice(&self.gather[..n]);
        }
    }
}

/// One chunk's read: the bulk's power sums, the far tails' sums and the
/// other scores' bucket moments.
fn read_chunk<T: Float>(
    chunk: &[T],
    g: &Geometry,
    (bulk, far): (&mut Bulk, &mut Far),
    m: &mut Moments<'_>,
) {
    if bulk.is_none() && far.is_none() {
        for sub in chunk.chunks(STAGE) {
            m.add(sub, g);
        }
        return;
    }
    // The staged scores are already oriented, scaled and NaN-free.
    let staged = Geometry {
        f1: 1.0,
        f2: 1.0,
        has_nan: false,
        ..*g
    };
    let (mut ys, mut rest) = (vec![0.0; STAGE], vec![0.0; STAGE]);
    let mut tails = vec![0.0; if far.is_none() { 0 } else { STAGE + 1 }];
    for sub in chunk.chunks(STAGE) {
        let ys = &mut ys[..sub.len()];
        scale_into(sub, g, ys);
        let mut len = bulk.split(ys, &mut rest);
        // Without far tails (fits of 2^18 scores or more set none apart),
        // no pass for them.
        if !far.is_none() {
            len = far.split(&mut rest[..len], &mut tails);
        }
        m.add(&rest[..len], &staged);
    }
}

crate::numeric::simd::multiversion! {
    /// The raw scores `sub`, oriented and scaled by `g` (NaN kept).
    fn scale_into<T: Float>(sub: &[T], g: &Geometry, ys: &mut [f64]) -> () {
        // The factors in locals: read through `g` at every score, they
        // kept the loop from vectorising.
        let (f1, f2) = (g.f1, g.f2);
        for (y, &v) in ys.iter_mut().zip(sub) {
            *y = v.to_f64() * f1 * f2;
        }
    }
}

/// The leaf of the bulk's scores, spanning `buckets` buckets from `first`:
/// its first `powers` moments, in a bucket accumulator's layout.
pub(super) fn bulk_leaf(bulk: &Bulk, first: usize, buckets: usize, powers: usize) -> Node {
    let mut a = [0.0; STRIDE];
    for (ak, s) in a.iter_mut().zip(&bulk.sums).take(powers) {
        *ak = s.value();
    }
    a[12] = bulk.lo;
    a[13] = bulk.hi;
    a[14] = bulk.center;
    a[15] = bulk.inv;
    let mut leaf = Node::leaf(&a, first, powers);
    leaf.buckets = buckets;
    leaf
}
