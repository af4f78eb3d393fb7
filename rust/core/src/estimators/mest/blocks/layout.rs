//! Where a bucketed fit starts: the windows it expects ([`Expect`]) and
//! the buckets before the one read ([`Layout`]) — their accumulators, the
//! bands about the starting windows' edges whose values are gathered, the
//! bulk and the far tails (docs/design/m-estimation.md §2.3, step 2, and
//! §3). Deciding this before the read lets the read split each score once;
//! the price is a guess from μ₀ and σ₀, which later steps may outgrow (a
//! window that does not hold the bulk reads its scores instead).

use super::far::Far;
use super::grouped::NONE;
use super::{centered, Geometry, STRIDE};
use crate::estimators::mest::bulk::Bulk;

/// Where a fit's iteration will start: its windows `|y − location| <=
/// w·scale` for `w` in `widths` (in the scaled domain of the scores).
#[derive(Debug, Clone, Copy)]
pub struct Expect {
    /// μ₀.
    pub location: f64,
    /// σ₀.
    pub scale: f64,
    /// The widths of the location and scale steps' windows, in σ.
    pub widths: [f64; 2],
    /// The distance, in σ₀, from μ₀ beyond which no window of the fit is
    /// expected to reach (0 for none): the scores in buckets wholly beyond
    /// it become two leaves, the far tails (`blocks/far.rs`).
    pub far: f64,
    /// The radius, in σ₀, of the bulk about μ₀ that every window of the fit
    /// is expected to hold (`mest::bulk`; 0 for none): its scores
    /// become one leaf with the power sums the windows need, read in one
    /// pass that vectorises instead of a bucket's moments each.
    pub bulk: f64,
}

impl Expect {
    /// The bands |y − μ₀| in [0.9w − 0.1, 1.35w + 0.1]·σ₀ about the
    /// starting windows' edges: on long-tailed scores the M-scale ends up
    /// to a third above the nMAD, and the edges move out with it.
    pub(super) fn bands(&self) -> Vec<(f64, f64)> {
        let mut v = Vec::new();
        for w in self.widths {
            let (near, far) = ((0.9 * w - 0.1) * self.scale, (1.35 * w + 0.1) * self.scale);
            v.push((self.location - far, self.location - near));
            v.push((self.location + near, self.location + far));
        }
        v
    }
}

/// The buckets before the read: their accumulators (centers and units
/// set), which are gathered with the bands about the starting windows'
/// edges, and the bulk.
pub(super) struct Layout {
    pub(super) init: Vec<f64>,
    /// 1 for the buckets whose scores are gathered: what `band_slot` says,
    /// in bytes, for the read's per-score loop (a quarter of the cache).
    pub(super) band: Vec<u8>,
    /// Each band bucket's slot among the band buckets (`grouped::NONE` for
    /// the other buckets) and, by slot, the band buckets.
    pub(super) band_slot: Vec<u32>,
    pub(super) band_buckets: Vec<usize>,
    pub(super) bulk: Bulk,
    /// The buckets the bulk is made of (none without a bulk).
    pub(super) bulk_buckets: Option<(usize, usize)>,
    pub(super) far: Far,
    /// The buckets of the far tails: `..=left` and `right..`.
    pub(super) far_buckets: (Option<usize>, Option<usize>),
    /// The bulk's power sums: 3 for Huber (its buckets keep all `K`
    /// moments), 6 for Tukey (six).
    pub(super) powers: usize,
}

impl Layout {
    pub(super) fn new(
        g: &Geometry,
        (lo, hi): (f64, f64),
        expect: Option<Expect>,
        reciprocal: bool,
    ) -> Self {
        let mut init = vec![0.0; g.buckets * STRIDE];
        let mut band = vec![0u8; g.buckets];
        let edges = expect.map_or(Vec::new(), |e| e.bands());
        let held = |v: f64| {
            expect.is_some_and(|e| e.bulk > 0.0 && (v - e.location).abs() <= e.bulk * e.scale)
        };
        let far_side = |v: f64| {
            expect.map_or(0.0, |e| {
                let d = (v - e.location) / e.scale;
                if e.far > 0.0 && d.abs() > e.far {
                    d.signum()
                } else {
                    0.0
                }
            })
        };
        let mut bulk_buckets: Option<(usize, usize)> = None;
        let mut far_buckets: (Option<usize>, Option<usize>) = (None, None);
        for (b, a) in init.chunks_exact_mut(STRIDE).enumerate() {
            let (blo, bhi) = g.range(b, lo, hi);
            band[b] = u8::from(edges.iter().any(|&(l, h)| l <= bhi && blo <= h));
            if held(blo) && held(bhi) {
                bulk_buckets = Some((bulk_buckets.map_or(b, |(f, _)| f), b));
            }
            if far_side(bhi) < 0.0 {
                far_buckets.0 = Some(b);
            }
            if far_side(blo) > 0.0 && far_buckets.1.is_none() {
                far_buckets.1 = Some(b);
            }
            let (center, _, unit) = centered(blo, bhi);
            a[12] = f64::INFINITY;
            a[13] = f64::NEG_INFINITY;
            a[14] = center;
            a[15] = 1.0 / unit;
        }
        let powers = if reciprocal { 3 } else { 6 };
        // The bulk is the buckets wholly inside it: a score is in it exactly
        // when its bucket is. Its scores are never gathered with a band.
        let bulk = match bulk_buckets {
            None => Bulk::none(),
            Some((first, last)) => {
                band[first..=last].fill(0);
                let (from, to) = (g.range(first, lo, hi).0, g.range(last, lo, hi).1);
                let (center, _, unit) = centered(from, to);
                Bulk::new(from, to, center, 1.0 / unit, powers)
            }
        };
        // The far tails are the buckets wholly beyond them and outside the
        // bulk (which takes its scores first), never gathered.
        if let Some((first, last)) = bulk_buckets {
            far_buckets.0 = far_buckets
                .0
                .and_then(|l| first.checked_sub(1).map(|f| l.min(f)));
            far_buckets.1 = far_buckets
                .1
                .map(|r| r.max(last + 1))
                .filter(|&r| r < g.buckets);
        }
        if let Some(l) = far_buckets.0 {
            band[..=l].fill(0);
        }
        if let Some(r) = far_buckets.1 {
            band[r..].fill(0);
        }
        let far = Far::new(
            far_buckets.0.map(|l| g.range(l, lo, hi).1),
            far_buckets.1.map(|r| g.range(r, lo, hi).0),
            expect.map_or(0.0, |e| e.location),
            reciprocal,
        );
        let band_buckets: Vec<usize> = (0..g.buckets).filter(|&b| band[b] == 1).collect();
        let mut band_slot = vec![NONE; g.buckets];
        for (slot, &b) in band_buckets.iter().enumerate() {
            band_slot[b] = slot as u32;
        }
        Layout {
            init,
            band,
            band_slot,
            band_buckets,
            bulk,
            bulk_buckets,
            far,
            far_buckets,
            powers,
        }
    }
}
