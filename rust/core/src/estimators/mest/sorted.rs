//! The iteration's sums from the sorted scores and their prefix power sums.
//!
//! The bulk about μ₀ (`mest::bulk`), which every window of a fit
//! holds, is summed once and set apart; only the other scores are sorted.
//! Sorted, those inside a window `|s − m|·(1/σ) <= t` are one run
//! `[lo, hi)` (the window holds the bulk, so the run spans the gap it
//! leaves), found by two searches with the same predicate as a direct
//! read. Every sum over a window that is a polynomial in the scores —
//! Tukey's weights `(1 − u²)²` and terms `w·(s − m)`, the counts and sums
//! inside Huber's window, the scale step's squares — is then a combination
//! of power sums `S_k = Σ y_i^k` of `y = s − c₀` over the run and the
//! bulk, `c₀` the bulk's center (else the middle score), read from prefix
//! sums: a step costs O(log N) instead of a read of every score. Huber's
//! weights outside its window, `t/|r|`, are not polynomial: they come from
//! the tails' expansion (`tails.rs`).
//!
//! The prefix sums start at `c₀` and run outward (`P(j)` sums the scores
//! between `c₀` and `j`), so a window's sum never subtracts sums of scores
//! outside it: no cancellation against far outliers, and their high powers
//! (which may overflow) are never read. They are compensated (TwoSum)
//! every 16 scores, so a window's power sum carries at most ~16 roundings
//! more than a compensated sum. Shifting them to a window's center `m`
//! (binomially, `Σ (y − δ)^k`, δ = m − c₀) loses up to a factor
//! `(1 + |δ|/w)^k` of their precision, w the window's half-width: at most
//! 2⁵ while the center is within w of c₀. Beyond that (an iteration does
//! not wander so far from the median it starts at), where a combination is
//! not finite, or where `1/σ` overflows, the step reads every score
//! instead; a window that does not hold the bulk is summed over all the
//! scores sorted, once. See docs/design/m-estimation.md, §2.2.

use super::direct::must_divide;
use super::tails::Tails;
use super::{MParams, Norm, Sums};
use crate::estimators::mest::bulk::{self, Bulk};
use crate::numeric::float::sort_by_order_key;
use crate::numeric::sum::TwoSum;
use core::cell::{Cell, OnceCell};

/// The sorted, scaled scores and their outward prefix power sums.
pub(super) struct Sorted {
    /// The scores outside the bulk, sorted (all of them without a bulk).
    s: Vec<f64>,
    /// Every score, when a bulk was split off (the direct fallback).
    all: Option<Vec<f64>>,
    /// The scores about `center` every window holds (none without one).
    bulk: Bulk,
    /// `c₀`: the bulk's center, else `s[N/2]`.
    center: f64,
    /// Powers summed: 3 (Huber: counts, sums and squares) or 6 (Tukey).
    powers: usize,
    /// `P_k(j)` for `j` in `0..=N`, `powers` entries each, as (sum, comp).
    prefix: Vec<TwoSum>,
    /// The last windows of the location and the scale steps: the next
    /// step's edges are searched from them (they move by a few scores).
    last: [Cell<(usize, usize)>; 2],
    /// Huber's weights outside its window.
    tails: Tails,
    /// Without the bulk, for the steps whose window does not hold it.
    whole: OnceCell<Box<Sorted>>,
}

impl Sorted {
    /// Sorts the (scaled, oriented, NaN-free) scores and takes the prefix
    /// sums `norm` needs; with `bulk = (c₀, a)`, only of the scores with
    /// `|s − c₀| >= a` (see `bulk.rs`).
    pub(super) fn new(scores: Vec<f64>, norm: Norm, bulk: Option<(f64, f64)>) -> Self {
        let powers = match norm {
            Norm::Huber => 3,
            Norm::Tukey => 6,
        };
        let (mut s, all, bulk) = match bulk {
            Some((c0, a)) => {
                let (b, rest) = bulk::split(&scores, c0, a, powers);
                (rest, Some(scores), b)
            }
            None => (scores, None, Bulk::none()),
        };
        sort_by_order_key(&mut s);
        let (mid, center) = if all.is_some() {
            (s.partition_point(|&v| v < bulk.center), bulk.center)
        } else {
            let mid = s.len() / 2;
            (mid, s.get(mid).copied().unwrap_or(0.0))
        };
        let prefix = match norm {
            Norm::Huber => prefix_sums::<3>(&s, mid, center),
            Norm::Tukey => prefix_sums::<6>(&s, mid, center),
        };
        Sorted {
            s,
            all,
            bulk,
            center,
            powers,
            prefix,
            last: [Cell::new((mid, mid)), Cell::new((mid, mid))],
            tails: Tails::default(),
            whole: OnceCell::new(),
        }
    }

    /// Every score (the direct read's).
    fn scores(&self) -> &[f64] {
        self.all.as_deref().unwrap_or(&self.s)
    }

    /// The sums without the bulk: sorts every score, once, on the first
    /// window that does not hold the bulk.
    fn whole(&self, norm: Norm) -> &Sorted {
        self.whole
            .get_or_init(|| Box::new(Sorted::new(self.scores().to_vec(), norm, None)))
    }

    /// `[lo, hi)`: the scores outside the bulk with `|s − m|·inv <= w`,
    /// searched outward from the last window of the same step (`which`):
    /// by steps while the edges move little, by bisection beyond. `None`
    /// when the window does not hold the bulk.
    fn window(&self, which: usize, m: f64, inv: f64, w: f64) -> Option<(usize, usize)> {
        let below = |v: f64| (v - m) * inv < -w;
        let within = |v: f64| (v - m) * inv <= w;
        if !self.bulk.held_by(below, within) {
            return None;
        }
        let (lo, hi) = self.last[which].get();
        let lo = edge(&self.s, lo, below);
        let hi = edge(&self.s, hi.max(lo), within).max(lo);
        self.last[which].set((lo, hi));
        Some((lo, hi))
    }

    /// `S_k` over `[lo, hi)` and the bulk for `k < K`.
    fn power_sums<const K: usize>(&self, lo: usize, hi: usize) -> [f64; K] {
        debug_assert!(K <= self.powers, "powers summed for another norm");
        let (a, b) = (
            &self.prefix[lo * self.powers..],
            &self.prefix[hi * self.powers..],
        );
        let c = &self.bulk.sums;
        core::array::from_fn(|k| {
            (b[k].sum - a[k].sum + c[k].sum) + (b[k].comp - a[k].comp + c[k].comp)
        })
    }

    /// `Σ (y − δ)^k` for `k < K` from the power sums of `y` (binomial).
    fn shifted<const K: usize>(sums: &[f64; K], delta: f64) -> [f64; K] {
        let mut out = [0.0; K];
        // binom[j] = C(k, j), row k of Pascal's triangle.
        let mut binom = [0.0; K];
        for k in 0..K {
            for j in (1..=k).rev() {
                binom[j] += binom[j - 1];
            }
            binom[0] = 1.0;
            // Σ_j C(k, j) S_j (−δ)^(k−j), from j = k down.
            let mut term = 0.0;
            let mut pw = 1.0;
            for j in (0..=k).rev() {
                term += binom[j] * sums[j] * pw;
                pw *= -delta;
            }
            out[k] = term;
        }
        out
    }
}

impl Sums for Sorted {
    fn len(&self) -> usize {
        self.scores().len()
    }

    fn location(&self, p: &MParams, m: f64, sigma: f64) -> (f64, f64) {
        let (t, inv) = (p.tuning, 1.0 / sigma);
        let delta = m - self.center;
        if delta.abs() > t * sigma || must_divide(sigma) {
            return super::direct::Direct(self.scores()).location(p, m, sigma);
        }
        let Some((lo, hi)) = self.window(0, m, inv, t) else {
            return self.whole(p.norm).location(p, m, sigma);
        };
        let sums = match p.norm {
            Norm::Huber => {
                let [s0, s1] = Self::shifted(&self.power_sums::<2>(lo, hi), delta);
                let tails = if ablated!("tail_expansion") {
                    let mut sum = [0.0];
                    super::inverse_powers::sums(&self.s[..lo], m, -1.0, &mut sum);
                    super::inverse_powers::sums(&self.s[hi..], m, 1.0, &mut sum);
                    sum[0]
                } else {
                    self.tails.reciprocal_sum(&self.s, m, lo, hi)
                };
                let reciprocal = t * sigma * tails;
                let sides = (self.s.len() - hi) as f64 - lo as f64;
                (s0 + reciprocal, s1 + t * sigma * sides)
            }
            Norm::Tukey => {
                let z = Self::shifted(&self.power_sums::<6>(lo, hi), delta);
                let a2 = (inv / t) * (inv / t);
                let a4 = a2 * a2;
                (
                    z[0] - 2.0 * a2 * z[2] + a4 * z[4],
                    z[1] - 2.0 * a2 * z[3] + a4 * z[5],
                )
            }
        };
        if sums.0.is_finite() && sums.1.is_finite() {
            sums
        } else {
            super::direct::Direct(self.scores()).location(p, m, sigma)
        }
    }

    fn scale(&self, c: f64, mu: f64, sigma: f64, nmu: f64) -> (f64, usize) {
        let inv = 1.0 / sigma;
        let far = (mu - self.center).abs().max((nmu - self.center).abs()) > c * sigma;
        if far || must_divide(sigma) {
            return super::direct::Direct(self.scores()).scale(c, mu, sigma, nmu);
        }
        let Some((lo, hi)) = self.window(1, mu, inv, c) else {
            // The power sums kept are Huber's three or Tukey's six: either
            // serves the scale step.
            let norm = if self.powers == 6 {
                Norm::Tukey
            } else {
                Norm::Huber
            };
            return self.whole(norm).scale(c, mu, sigma, nmu);
        };
        let [_, _, z2] = Self::shifted(&self.power_sums::<3>(lo, hi), nmu - self.center);
        let ss = z2 * inv * inv;
        if ss.is_finite() {
            (ss, self.s.len() - (hi - lo))
        } else {
            super::direct::Direct(self.scores()).scale(c, mu, sigma, nmu)
        }
    }
}

/// The first index of sorted `s` where `pred` (true on a prefix) is false,
/// searched from `guess`: a few steps, then bisection of the rest.
fn edge(s: &[f64], guess: usize, pred: impl Fn(f64) -> bool) -> usize {
    const STEPS: usize = 4;
    if ablated!("edge_guess") {
        return s.partition_point(|&v| pred(v));
    }
    let mut i = guess.min(s.len());
    if i < s.len() && pred(s[i]) {
        for _ in 0..STEPS {
            i += 1;
            if i == s.len() || !pred(s[i]) {
                return i;
            }
        }
        i + 1 + s[i + 1..].partition_point(|&v| pred(v))
    } else {
        for _ in 0..STEPS {
            if i == 0 || pred(s[i - 1]) {
                return i;
            }
            i -= 1;
        }
        s[..i].partition_point(|&v| pred(v))
    }
}

/// `P_k(j)`, `k < P`, for `j` in `0..=N`, flattened: running sums outward
/// from `mid` of `±(s − center)^k` (negative below `mid`), compensated
/// every [`PLAIN_RUN`] scores.
fn prefix_sums<const P: usize>(s: &[f64], mid: usize, center: f64) -> Vec<TwoSum> {
    let mut out = vec![TwoSum::default(); (s.len() + 1) * P];
    let up = s.iter().enumerate().skip(mid).map(|(j, &v)| (j + 1, v));
    outward::<P>(&mut out, up, center, 1.0);
    let down = s.iter().enumerate().take(mid).rev().map(|(j, &v)| (j, v));
    outward::<P>(&mut out, down, center, -1.0);
    out
}

/// The entries of [`prefix_sums`] at the slots `order` gives, each after
/// adding its score's powers times `sign`.
fn outward<const P: usize>(
    out: &mut [TwoSum],
    order: impl Iterator<Item = (usize, f64)>,
    center: f64,
    sign: f64,
) {
    let mut sums = RunningSums::<P>::default();
    for (slot, v) in order {
        sums.add(v - center, sign);
        out[slot * P..(slot + 1) * P].copy_from_slice(&sums.value());
    }
}

/// Scores added plainly before their partial sum is added, compensated, to
/// the running total: a total then carries at most 16 roundings beyond a
/// compensated sum's, at a third of its cost.
const PLAIN_RUN: usize = 16;

/// Power sums `Σ y^k`, `k < P`, compensated every [`PLAIN_RUN`] terms.
#[derive(Clone, Copy)]
struct RunningSums<const P: usize> {
    base: [TwoSum; P],
    run: [f64; P],
    terms: usize,
}

impl<const P: usize> Default for RunningSums<P> {
    fn default() -> Self {
        RunningSums {
            base: [TwoSum::default(); P],
            run: [0.0; P],
            terms: 0,
        }
    }
}

impl<const P: usize> RunningSums<P> {
    /// Adds `w·y^k` to each sum (`w` a sign, or 0 to skip the score
    /// without a branch).
    #[inline(always)]
    fn add(&mut self, y: f64, w: f64) {
        let mut pw = w;
        for r in &mut self.run {
            *r += pw;
            pw *= y;
        }
        self.terms += 1;
        if self.terms.is_multiple_of(PLAIN_RUN) {
            for (b, r) in self.base.iter_mut().zip(&mut self.run) {
                b.add(*r);
                *r = 0.0;
            }
        }
    }

    /// The sums so far: the compensated total of whole runs in `sum`, its
    /// error plus the current run's plain sum in `comp`.
    #[inline(always)]
    fn value(&self) -> [TwoSum; P] {
        core::array::from_fn(|k| TwoSum {
            sum: self.base[k].sum,
            comp: self.base[k].comp + self.run[k],
        })
    }
}
