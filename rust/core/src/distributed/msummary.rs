//! A mergeable summary of a score column for the distributed M-estimation
//! (contract §3, §9): one pass over the partitions builds it, and the
//! iteration's steps read it instead of the scores.
//!
//! The model is the in-memory bucketed representation
//! (`estimators/mest/blocks.rs`, `docs/design/m-estimation.md` §2.3): every
//! sum a step needs is a sum over a window `|s − m| <= w·σ` and its
//! complement; inside, the terms are polynomials in `s` (power sums of a
//! bucket, shifted by the binomial theorem); outside, counts and, for
//! Huber's weights, `Σ σ/|s − m|`, a series in the bucket's moments when
//! the bucket is narrow against its distance to `m`. Only a bucket a
//! window's edge cuts needs its scores, which a narrow pass collects.
//!
//! Geometry, in the fit's units (the scores times 2^-e, σ₀·2^-e in
//! [1, 2)): the deviations `d = y − c` from the starting center `c` with
//! `|d| < REACH` fall in buckets of width 2^-`BITS`, a pure function of
//! `(y, c)`, so every partition uses the same grid and summaries add. Per
//! bucket: the count, the extremes (which decide, with the step's own
//! predicate, whether a window holds a bucket whole — so counts are those
//! of a direct read) and the moments `P_k = Σ ((y − b)/h)^k`, k < `K`,
//! about the bucket's center b in units of its half width h. The scores
//! beyond `REACH` are the two far tails: counts, extremes and, for Huber,
//! inverse-power sums about `c` (the far-field series of
//! `mest/blocks/far.rs`).
//!
//! Trade-offs: the summary is at most `BUCKETS` buckets of 80 bytes per
//! partition, whatever the partition's length; a step costs a walk over
//! the non-empty buckets (no tree: the walk is client arithmetic, small
//! against a pass). A step the summary cannot answer within a rounding
//! error — a far tail reached by a window or too near it, a non-finite
//! sum — is left to a pass of the direct sums (`partition::m_sums`).

use std::collections::BTreeMap;

use crate::estimators::mest::{ldexp, MParams, Norm};
use crate::numeric::float::Float;
use crate::numeric::sum::Neumaier;

use super::partition::m_sums;

/// Buckets per unit: 2^BITS. Narrow buckets hold few scores where an edge
/// cuts them (the values a collect pass returns scale with the width).
pub const BITS: i32 = 12;
/// Deviations bucketed: `|y − c| < REACH` units (8 to 16 starting scales),
/// wider than Tukey's windows (4.685σ) with room for σ to grow.
pub const REACH: f64 = 16.0;
/// Index of the bucket of `d = 0`.
const HALF: i64 = (REACH as i64) << BITS;
/// Number of buckets of the grid.
pub const BUCKETS: usize = 2 * HALF as usize;
/// Moments per bucket: Tukey's location terms are of degree 5; Huber's
/// series needs eight terms at `RHO` for a truncation below 1e-16.
pub const K: usize = 8;
/// A bucket's series is used when its half width is at most this
/// fraction of its center's distance to the pole m: 0.01^8 = 1e-16.
const RHO: f64 = 0.01;
/// Terms of a far tail's series and its ratio bound (`mest/blocks/far.rs`):
/// 0.15^20 ≈ 3e-17 relative truncation.
const FAR_TERMS: usize = 20;
const FAR_RATIO: f64 = 0.15;
/// A summary built from this many scores on accumulates in the full grid;
/// shorter pieces (a batch) sort their scores by bucket instead.
const DENSE_FROM: usize = BUCKETS / 4;

/// The half width of a bucket, its moments' unit.
const H: f64 = 1.0 / (2i64 << BITS) as f64;

/// Where a scaled score falls.
enum Place {
    Bucket(u32),
    Left,
    Right,
}

#[inline]
fn locate(y: f64, c: f64) -> Place {
    let d = y - c;
    if d > -REACH && d < REACH {
        // d·2^BITS is exact; its floor is in [−HALF, HALF).
        Place::Bucket(((d * (1i64 << BITS) as f64).floor() as i64 + HALF) as u32)
    } else if d <= -REACH {
        Place::Left
    } else {
        Place::Right
    }
}

/// The center of bucket `i` (the same rounding everywhere it is used).
#[inline]
pub fn center(i: u32, c: f64) -> f64 {
    c + ((i64::from(i) - HALF) as f64 + 0.5) / (1i64 << BITS) as f64
}

/// Count, extremes and power sums `Σ t^k`, k = 1..=M, of scaled scores
/// `y`, each with its own base `t`: a bucket's moments or a far tail's
/// inverse-power sums. Adds up across partitions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PowerSums<const M: usize> {
    /// Scores.
    pub n: u64,
    /// Smallest scaled score.
    pub min: f64,
    /// Largest scaled score.
    pub max: f64,
    /// `Σ t^k`, k = 1..=M (zero when built without them).
    pub sums: [f64; M],
}

impl<const M: usize> Default for PowerSums<M> {
    fn default() -> Self {
        PowerSums {
            n: 0,
            min: 0.0,
            max: 0.0,
            sums: [0.0; M],
        }
    }
}

impl<const M: usize> PowerSums<M> {
    /// Adds score `y`, and the powers of `t` when there is one.
    #[inline]
    fn add(&mut self, y: f64, t: Option<f64>) {
        if self.n == 0 || y < self.min {
            self.min = y;
        }
        if self.n == 0 || y > self.max {
            self.max = y;
        }
        self.n += 1;
        if let Some(t) = t {
            let mut q = t;
            for s in &mut self.sums {
                *s += q;
                q *= t;
            }
        }
    }

    fn merge(&mut self, o: &Self) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *o;
            return;
        }
        self.n += o.n;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        for (a, b) in self.sums.iter_mut().zip(&o.sums) {
            *a += b;
        }
    }
}

/// One bucket: count, extremes, moments `P_k = Σ ((y − b)/H)^k`,
/// k = 1..K−1 (P_0 = n), `b` the bucket's center.
pub type Bucket = PowerSums<{ K - 1 }>;

/// A far tail: count, extremes and `R_k = Σ 1/d^(k+1)`, `d = y − c`.
pub type Tail = PowerSums<FAR_TERMS>;

/// The buckets, as a sorted list of the non-empty ones or the full grid.
#[derive(Debug, Clone)]
enum Store {
    Sparse(Vec<(u32, Bucket)>),
    Dense(Vec<Bucket>),
}

/// The summary of (a piece of) a column.
#[derive(Debug, Clone)]
pub struct MSummary {
    store: Store,
    /// The scores at `d <= −REACH`.
    pub left: Tail,
    /// The scores at `d >= REACH`.
    pub right: Tail,
}

impl PartialEq for MSummary {
    fn eq(&self, o: &Self) -> bool {
        self.left == o.left && self.right == o.right && self.entries().eq(o.entries())
    }
}

/// What the summary answers for one step.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The step's sums, as [`m_sums`] lays them out.
    Sums([f64; 6]),
    /// The step cuts these buckets, whose scores are not held.
    Missing(Vec<u32>),
    /// The summary cannot answer within a rounding error: a direct pass.
    Direct,
}

impl MSummary {
    /// The summary of the scores `x` (oriented by `negate`, times 2^-e)
    /// about `c`, with the far tails' series when `huber`.
    pub fn of<T: Float>(x: &[T], negate: bool, e: i32, c: f64, huber: bool) -> MSummary {
        let sign = if negate { -1.0 } else { 1.0 };
        let (mut left, mut right) = (Tail::default(), Tail::default());
        let scaled = x
            .iter()
            .filter(|u| !u.is_nan())
            .map(|u| ldexp(sign * u.to_f64(), -e));
        let store = if x.len() >= DENSE_FROM {
            let mut grid = vec![Bucket::default(); BUCKETS];
            for y in scaled {
                match locate(y, c) {
                    Place::Bucket(i) => grid[i as usize].add(y, Some((y - center(i, c)) / H)),
                    Place::Left => left.add(y, huber.then(|| 1.0 / (y - c))),
                    Place::Right => right.add(y, huber.then(|| 1.0 / (y - c))),
                }
            }
            Store::Dense(grid)
        } else {
            let mut items: Vec<(u32, f64)> = Vec::with_capacity(x.len());
            for y in scaled {
                match locate(y, c) {
                    Place::Bucket(i) => items.push((i, y)),
                    Place::Left => left.add(y, huber.then(|| 1.0 / (y - c))),
                    Place::Right => right.add(y, huber.then(|| 1.0 / (y - c))),
                }
            }
            items.sort_unstable_by_key(|p| p.0);
            let mut list: Vec<(u32, Bucket)> = Vec::new();
            for (i, y) in items {
                if list.last().is_none_or(|l| l.0 != i) {
                    list.push((i, Bucket::default()));
                }
                if let Some(l) = list.last_mut() {
                    l.1.add(y, Some((y - center(i, c)) / H));
                }
            }
            Store::Sparse(list)
        };
        MSummary { store, left, right }
    }

    /// A summary from its parts (non-empty buckets, strictly increasing
    /// indexes below [`BUCKETS`]), checked.
    pub fn from_parts(
        buckets: Vec<(u32, Bucket)>,
        left: Tail,
        right: Tail,
    ) -> Result<MSummary, crate::error::Error> {
        let bad = |why: &str| crate::error::Error::invalid("partial", why.to_string());
        if buckets.windows(2).any(|w| w[0].0 >= w[1].0)
            || buckets.last().is_some_and(|b| b.0 as usize >= BUCKETS)
        {
            return Err(bad("bucket indexes must increase and lie in the grid"));
        }
        let ok = |n: u64, min: f64, max: f64| n > 0 && min <= max;
        if buckets.iter().any(|(_, b)| !ok(b.n, b.min, b.max))
            || [left, right]
                .iter()
                .any(|t| t.n > 0 && !ok(t.n, t.min, t.max))
        {
            return Err(bad("a bucket must hold scores between its extremes"));
        }
        Ok(MSummary {
            store: Store::Sparse(buckets),
            left,
            right,
        })
    }

    /// The non-empty buckets in index (value) order.
    pub fn entries(&self) -> Box<dyn Iterator<Item = (u32, &Bucket)> + '_> {
        match &self.store {
            Store::Sparse(v) => Box::new(v.iter().map(|(i, b)| (*i, b))),
            Store::Dense(g) => Box::new(
                g.iter()
                    .enumerate()
                    .filter(|(_, b)| b.n > 0)
                    .map(|(i, b)| (i as u32, b)),
            ),
        }
    }

    /// The scores of bucket `i`.
    pub fn count(&self, i: u32) -> u64 {
        match &self.store {
            Store::Sparse(v) => v
                .binary_search_by_key(&i, |e| e.0)
                .map_or(0, |at| v[at].1.n),
            Store::Dense(g) => g.get(i as usize).map_or(0, |b| b.n),
        }
    }

    /// The summary of `self`'s scores and `o`'s.
    #[must_use]
    pub fn combine(mut self, o: MSummary) -> MSummary {
        self.left.merge(&o.left);
        self.right.merge(&o.right);
        self.store = match (self.store, o.store) {
            (Store::Sparse(a), Store::Sparse(b)) if a.len() + b.len() < BUCKETS / 16 => {
                let mut out = Vec::with_capacity(a.len() + b.len());
                let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
                loop {
                    let next = match (a.peek(), b.peek()) {
                        (Some(x), Some(y)) if x.0 == y.0 => {
                            let (i, mut u) = a.next().unwrap_or_default();
                            let (_, v) = b.next().unwrap_or_default();
                            u.merge(&v);
                            (i, u)
                        }
                        (Some(x), Some(y)) if x.0 < y.0 => a.next().unwrap_or_default(),
                        (Some(_) | None, Some(_)) => b.next().unwrap_or_default(),
                        (Some(_), None) => a.next().unwrap_or_default(),
                        (None, None) => break,
                    };
                    out.push(next);
                }
                Store::Sparse(out)
            }
            (a, b) => {
                let mut grid = match a {
                    Store::Dense(g) => g,
                    Store::Sparse(v) => {
                        let mut g = vec![Bucket::default(); BUCKETS];
                        for (i, u) in v {
                            g[i as usize] = u;
                        }
                        g
                    }
                };
                let o = MSummary {
                    store: b,
                    left: Tail::default(),
                    right: Tail::default(),
                };
                for (i, u) in o.entries() {
                    grid[i as usize].merge(u);
                }
                Store::Dense(grid)
            }
        };
        self
    }

    /// The sums of one step at `(m, σ)` (as [`m_sums`] on the scores):
    /// whole buckets from their moments, cut ones from the scores `held`
    /// (scaled, by bucket). With `approx`, a cut bucket not held is
    /// summed as if whole on the side of its center and its index noted
    /// there, and a far tail is always taken by its series: the step's
    /// sums to a small error, for predicting which buckets a fit cuts.
    pub fn sums(
        &self,
        p: &MParams,
        c: f64,
        (m, sigma): (f64, f64),
        held: &BTreeMap<u32, Vec<f64>>,
        mut approx: Option<&mut Vec<u32>>,
    ) -> Answer {
        let huber = p.norm == Norm::Huber;
        let (tw, tc) = (p.tuning, p.c);
        // The direct read's predicates (`Norm::weight`, `m_sums`).
        let in_w = |y: f64| ((y - m) / sigma).abs() <= tw;
        let in_c = |y: f64| ((y - m) / sigma).abs() <= tc;
        // Tukey's terms are polynomials in u = (y − m)/(tσ); Huber's in y − m.
        let a = if huber { 1.0 } else { tw * sigma };
        let mut acc = [Neumaier::default(); 6];
        let mut missing = Vec::new();
        for (i, b) in self.entries() {
            if b.min == b.max {
                // One value (ties): its terms as a direct read forms them.
                add_scaled(
                    &mut acc,
                    m_sums(&[b.min], false, p, (m, sigma), 0),
                    b.n as f64,
                );
                continue;
            }
            let one_side = b.min > m || b.max < m;
            let (w0, w1, c0, c1) = (in_w(b.min), in_w(b.max), in_c(b.min), in_c(b.max));
            let b_c = center(i, c);
            let dd = b_c - m;
            // A series of a bucket about the pole: its reach (H, with a
            // margin for the rounding of y − b) narrow against |b − m|.
            let series = !huber || w0 || H * 1.001 <= RHO * dd.abs();
            // Terms about the bucket's center lose ε·H/σ of a step against
            // terms about m: used while the bucket is narrower than σ.
            let fine = H <= sigma;
            let whole =
                fine && w0 == w1 && (w0 || one_side) && c0 == c1 && (c0 || one_side) && series;
            let (inside_w, inside_c, series) = if whole {
                (w0, c0, series)
            } else if let Some(values) = held.get(&i) {
                add_scaled(&mut acc, m_sums(values, false, p, (m, sigma), 0), 1.0);
                continue;
            } else if let Some(noted) = approx.as_deref_mut() {
                noted.push(i);
                (in_w(b_c), in_c(b_c), H * 1.001 <= RHO * dd.abs())
            } else {
                missing.push(i);
                continue;
            };
            let n = b.n as f64;
            let deg = if huber { 2 } else { 5 };
            let mut s = [0.0f64; 6];
            if inside_w || inside_c {
                // S_k = Σ ((y − m)/a)^k = Σ_j C(k, j) g^(k−j) q^j P_j.
                let (g, q) = (dd / a, H / a);
                let mut mom = [0.0f64; 6];
                mom[0] = n;
                let mut qj = 1.0;
                for j in 1..=deg {
                    qj *= q;
                    mom[j] = qj * b.sums[j - 1];
                }
                for k in 0..=deg {
                    let (mut binom, mut total, mut gp) = (1.0, 0.0, 1.0);
                    // Σ_j C(k, j) g^(k−j) mom_j, from j = k down.
                    for j in (0..=k).rev() {
                        total += binom * gp * mom[j];
                        gp *= g;
                        binom = binom * j as f64 / (k - j + 1) as f64;
                    }
                    s[k] = total;
                }
            }
            if inside_w {
                if huber {
                    acc[0].add(s[0]);
                    acc[1].add(s[1]);
                } else {
                    acc[0].add(s[0] - 2.0 * s[2] + s[4]);
                    acc[1].add(a * (s[1] - 2.0 * s[3] + s[5]));
                }
            } else if huber {
                // Σ 1/|y − m| = |1/D · Σ_k (−H/D)^k P_k|, D = b − m.
                let recip = if series {
                    let ratio = -H / dd;
                    let (mut total, mut r) = (n, 1.0);
                    for pk in &b.sums {
                        r *= ratio;
                        total += r * pk;
                    }
                    (total / dd).abs()
                } else {
                    n / dd.abs()
                };
                acc[0].add(tw * sigma * recip);
                acc[1].add(tw * sigma * n.copysign(dd));
            }
            if inside_c {
                acc[2].add(n);
                acc[3].add(a * s[1]);
                acc[4].add(a * a * s[2]);
            } else {
                acc[5].add(n);
            }
        }
        if !self.far_sums(p, c, (m, sigma), &mut acc) && approx.is_none() {
            return Answer::Direct;
        }
        if !missing.is_empty() {
            return Answer::Missing(missing);
        }
        Some(acc.map(Neumaier::value))
            .filter(|out| out.iter().all(|v| v.is_finite()))
            .map_or(Answer::Direct, Answer::Sums)
    }

    /// Adds the far tails' terms at `(m, σ)`; false when a window reaches
    /// a tail or Huber's series about `c` would not converge (the terms
    /// are then added as an estimate).
    fn far_sums(
        &self,
        p: &MParams,
        c: f64,
        (m, sigma): (f64, f64),
        acc: &mut [Neumaier; 6],
    ) -> bool {
        let huber = p.norm == Norm::Huber;
        let (tw, tc) = (p.tuning, p.c);
        let mut valid = true;
        for (tail, left) in [(&self.left, true), (&self.right, false)] {
            if tail.n == 0 {
                continue;
            }
            let inside = |y: f64, w: f64| ((y - m) / sigma).abs() <= w;
            let outside =
                |y: f64| !inside(y, tw) && !inside(y, tc) && if left { y < m } else { y > m };
            let delta = m - c;
            let nearest = if left { c - tail.max } else { tail.min - c };
            valid &= outside(tail.min)
                && outside(tail.max)
                && (!huber || delta.abs() <= FAR_RATIO * nearest);
            let n = tail.n as f64;
            if huber {
                // 1/(y − m) = Σ_k δ^k / d^(k+1), d = y − c, δ = m − c.
                let (mut total, mut dk) = (0.0, 1.0);
                for r in &tail.sums {
                    total += dk * r;
                    dk *= delta;
                }
                acc[0].add(tw * sigma * total.abs());
                acc[1].add(tw * sigma * if left { -n } else { n });
            }
            acc[5].add(n);
        }
        valid
    }
}

/// Adds `k·v` to the step's sums.
fn add_scaled(acc: &mut [Neumaier; 6], v: [f64; 6], k: f64) {
    for (a, v) in acc.iter_mut().zip(v) {
        a.add(v * k);
    }
}

/// The scaled scores (oriented by `negate`, times 2^-e) of the buckets
/// `wanted` (increasing indexes), per bucket.
pub fn collect_buckets<T: Float>(
    x: &[T],
    negate: bool,
    e: i32,
    c: f64,
    wanted: &[u32],
) -> Vec<Vec<f64>> {
    let sign = if negate { -1.0 } else { 1.0 };
    let mut out = vec![Vec::new(); wanted.len()];
    for u in x.iter().filter(|u| !u.is_nan()) {
        let y = ldexp(sign * u.to_f64(), -e);
        if let Place::Bucket(i) = locate(y, c) {
            if let Ok(at) = wanted.binary_search(&i) {
                out[at].push(y);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
