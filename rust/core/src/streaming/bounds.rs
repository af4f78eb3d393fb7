//! Estimators read from a quantile sketch, each with the value interval
//! that the sketch's rank error guarantees (contract §9).
//!
//! A sketch stands for a weighted sample: item `y_j` counted `w_j` times,
//! `n` in all. Every point estimate here is the contract's estimator
//! applied to that sample. Its guarantee: with probability about 99%
//! (DataSketches' ε is the 99th percentile of the *largest* rank error
//! over all queries of a sketch) every count of the sample, `#{ŷ <= y}` or
//! `#{ŷ < y}`, is within `εn` of the true count, for all `y` at once. Call
//! that event E and `e = ceil(εn)` the slack. Under E, for the i-th
//! smallest true score `s_(i)` (1-based):
//!
//! * `s_(i) >= L_i`, the largest item whose sample count below it is
//!   `<= i − 1 − e` (or the exact minimum), and
//! * `s_(i) <= U_i`, the smallest item whose sample count up to it is
//!   `>= i + e` (or the exact maximum).
//!
//! Every interval below is built from these, so all of them hold together
//! on E: median and quantiles bracket the order statistics they
//! interpolate; the upper-trimmed mean sums `L_i`/`U_i` over the kept ranks
//! (and, with the exact total sum, over the dropped ones — the tighter of
//! the two is kept); the nMAD and the trimmed SD bound the counts of
//! `|x − c| < t` for every center `c` in the center's interval
//! (`#{x ∈ (c_hi − t, c_lo + t)}` ≥ … ≥ `#{x ∈ [c_lo ... ]}`), which is the
//! median's uncertainty carried into the deviations. Intervals are widened
//! outwards by a few ulps for the rounding of their own arithmetic.
//!
//! With a rank error of 0 (a sketch that never compacted holds every
//! score) each estimate is the in-memory estimator itself and its interval
//! the point, widened only by the rounding of sums the in-memory estimator
//! adds in another order (contract §9: degenerate when exact).

use crate::error::Error;
use crate::estimators::mest::{
    iterate, ldexp, start_from, unit_exponent, unscaled, without_iteration, MEstimate, MParams,
    StartScale, Sums,
};
use crate::estimators::scale::{NIQR_DIVISOR, NMAD_DIVISOR};
use crate::numeric::reduce::binary_exponent;
use crate::numeric::select::{midpoint, Position};
use crate::numeric::sum::{exact_product, ExactSum, Neumaier};
use crate::streaming::kll::SortedView;

/// Rank blocks of the trimmed SD's interval.
const GRID: u64 = 512;

/// A closed interval of values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Lower end.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
}

impl Interval {
    /// `[v, v]`: an exact value.
    pub fn exact(v: f64) -> Self {
        Interval { lo: v, hi: v }
    }
    /// Widened outwards by `ulps` units of roundoff of `scale`.
    pub(crate) fn widen(self, scale: f64, ulps: f64) -> Self {
        let d = ulps * f64::EPSILON * scale.abs();
        Interval {
            lo: (self.lo - d).next_down(),
            hi: (self.hi + d).next_up(),
        }
    }
    /// Whether `v` lies inside.
    pub fn contains(&self, v: f64) -> bool {
        self.lo <= v && v <= self.hi
    }
}

/// A value estimated from a sketch and the interval that holds the true
/// value on E.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The estimator applied to the sketch's weighted sample.
    pub value: f64,
    /// Where the exact value lies (with the sketch's confidence).
    pub interval: Interval,
}

/// Order-statistic brackets of a sketch's sorted view at rank error ε.
#[derive(Debug, Clone, Copy)]
pub struct Brackets<'a> {
    view: &'a SortedView,
    slack: u64,
    /// Whether the caller reads the values alone: the intervals that cost
    /// more than their value (the nMAD's) are then not computed.
    values_only: bool,
}

impl<'a> Brackets<'a> {
    /// Brackets with slack `ceil(eps·n)`.
    pub fn new(view: &'a SortedView, eps: f64) -> Self {
        let slack = (eps.max(0.0) * view.n() as f64).ceil() as u64;
        Brackets {
            view,
            slack,
            values_only: false,
        }
    }

    /// These brackets for a caller that reads the values alone: every
    /// value is as before; the nMAD's interval is the point.
    #[must_use]
    pub fn values_only(self) -> Self {
        Brackets {
            values_only: true,
            ..self
        }
    }

    /// The slack e in items.
    pub fn slack(&self) -> u64 {
        self.slack
    }

    /// Whether the sample is every score (rank error 0): then estimates
    /// are exact and their intervals points.
    fn is_exact(&self) -> bool {
        self.slack == 0
    }

    /// `interval`, or the point `value` when the sample is exact.
    fn bracket(&self, value: f64, interval: Interval) -> Interval {
        if self.is_exact() {
            Interval::exact(value)
        } else {
            interval
        }
    }

    /// The exponent e >= 0 with every |value|·2^-e below 2^971, so that
    /// sums of up to 2^53 values times 2^-e stay inside the double range:
    /// 0 (no scaling) unless the scores reach about 1e292.
    fn sum_exponent(&self) -> i32 {
        let largest = self.view.min().abs().max(self.view.max().abs());
        if largest > 0.0 {
            (binary_exponent(largest) - 970).max(0)
        } else {
            0
        }
    }

    fn n(&self) -> u64 {
        self.view.n()
    }

    /// `L_i`: a lower bound of the i-th smallest true score (1-based).
    pub fn lower(&self, i: u64) -> f64 {
        if i <= self.slack {
            return self.view.min();
        }
        let t = i - 1 - self.slack;
        let c = self.view.cumulative();
        let j = c.partition_point(|&w| w <= t).min(c.len() - 1);
        self.view.values()[j].max(self.view.min())
    }

    /// `U_i`: an upper bound of the i-th smallest true score (1-based).
    pub fn upper(&self, i: u64) -> f64 {
        let want = i + self.slack;
        if want > self.n() {
            return self.view.max();
        }
        let c = self.view.cumulative();
        let j = c.partition_point(|&w| w < want);
        self.view.values()[j].min(self.view.max())
    }

    /// The i-th smallest of the sample and its bracket.
    pub fn order_statistic(&self, i: u64) -> Estimate {
        Estimate {
            value: self.view.order_statistic(i),
            interval: Interval {
                lo: self.lower(i),
                hi: self.upper(i),
            },
        }
    }

    /// Type-7 quantile (contract §1).
    pub fn quantile(&self, q: f64) -> Estimate {
        let p = Position::new(self.n() as usize, q);
        let ranks: Vec<usize> = p.ranks().collect();
        let value = p.interpolate(|r| self.view.order_statistic(r as u64 + 1));
        let first = ranks[0] as u64 + 1;
        let last = *ranks.last().unwrap_or(&ranks[0]) as u64 + 1;
        let interval = Interval {
            lo: self.lower(first),
            hi: self.upper(last),
        };
        Estimate {
            value,
            interval: self.bracket(value, interval),
        }
    }

    /// `numpy.median` of the sample.
    pub fn median(&self) -> Estimate {
        let n = self.n();
        let (a, b) = median_ranks(n);
        let value = if a == b {
            self.view.order_statistic(a)
        } else {
            midpoint(self.view.order_statistic(a), self.view.order_statistic(b))
        };
        let interval = Interval {
            lo: self.lower(a),
            hi: self.upper(b),
        };
        Estimate {
            value,
            interval: self.bracket(value, interval),
        }
    }

    /// Σ over ranks `a..=b` of `L_i·2^-e` and of `U_i·2^-e`, each with
    /// Σ|terms|.
    fn bound_sums(&self, a: u64, b: u64, e: i32) -> ((f64, f64), (f64, f64)) {
        let (vals, cum) = (self.view.values(), self.view.cumulative());
        let (min, max) = (ldexp(self.view.min(), -e), ldexp(self.view.max(), -e));
        let slack = self.slack;
        let (mut lo, mut hi) = (Neumaier::default(), Neumaier::default());
        let (mut lo_abs, mut hi_abs) = (0.0, 0.0);
        let add = |acc: &mut Neumaier, abs: &mut f64, from: u64, to: u64, v: f64| {
            let (from, to) = (from.max(a), to.min(b));
            if from <= to {
                let t = (to - from + 1) as f64 * v;
                acc.add(t);
                *abs += t.abs();
            }
        };
        // L_i = min for i <= e; = y_j for i in [W_{j−1}+1+e, W_j+e].
        add(&mut lo, &mut lo_abs, 1, slack, min);
        let mut prev = 0u64;
        for (j, &w) in cum.iter().enumerate() {
            let to = if j + 1 == cum.len() {
                u64::MAX
            } else {
                w + slack
            };
            let v = ldexp(vals[j], -e).max(min);
            add(&mut lo, &mut lo_abs, prev + 1 + slack, to, v);
            prev = w;
        }
        // U_i = y_j for i in (W_{j−1} − e, W_j − e]; = max for i > n − e.
        let mut prev = 0u64;
        for (j, &w) in cum.iter().enumerate() {
            if w > slack {
                let from = (prev + 1).saturating_sub(slack).max(1);
                let v = ldexp(vals[j], -e).min(max);
                add(&mut hi, &mut hi_abs, from, w - slack, v);
            }
            prev = w;
        }
        let from = (self.n() + 1).saturating_sub(slack).max(1);
        add(&mut hi, &mut hi_abs, from, u64::MAX, max);
        ((lo.value(), lo_abs), (hi.value(), hi_abs))
    }

    /// Upper-trimmed mean (contract §1): the mean of all but the
    /// `floor(alpha·n)` largest. With the exact total sum the dropped tail
    /// is bounded too and the tighter interval kept. Sums are taken of the
    /// values times 2^-e (exact), so that scores near ±1.8e308 do not
    /// overflow them.
    pub fn upper_trimmed_mean(&self, alpha: f64, total: Option<&ExactSum>) -> Estimate {
        let n = self.n();
        let keep = n - crate::estimators::location::trimmed_count(alpha, n as usize) as u64;
        if self.is_exact() {
            // The in-memory estimator: the exact sum of the kept scores.
            let mut sum = ExactSum::zero();
            let mut taken = 0u64;
            for (j, &v) in self.view.values().iter().enumerate() {
                let take = self.view.weight(j).min(keep - taken);
                sum.merge(&exact_product(v, take as usize));
                taken += take;
                if taken == keep {
                    break;
                }
            }
            let value = sum.mean(keep as usize);
            return Estimate {
                value,
                interval: Interval::exact(value),
            };
        }
        let e = self.sum_exponent();
        let values: Vec<f64> = self.view.values().iter().map(|&v| ldexp(v, -e)).collect();
        // The sample's K smallest: whole entries, then part of one.
        let mut acc = Neumaier::default();
        let mut taken = 0u64;
        for (j, &v) in values.iter().enumerate() {
            let take = self.view.weight(j).min(keep - taken);
            acc.add(take as f64 * v);
            taken += take;
            if taken == keep {
                break;
            }
        }
        let k = keep as f64;
        let mut value = acc.value() / k;
        let ((l, la), (u, ua)) = self.bound_sums(1, keep, e);
        let mut iv = Interval {
            lo: l / k,
            hi: u / k,
        }
        .widen((la + ua) / k, 8.0);
        if let (Some(total), true) = (total, keep < n) {
            // The exact total minus the dropped tail: the tighter of the two
            // (with its own estimate, so that the estimate lies inside).
            let s = total.scaled_value(-e);
            let mut top = Neumaier::default();
            let mut taken = 0u64;
            for j in (0..values.len()).rev() {
                let take = self.view.weight(j).min(n - keep - taken);
                top.add(take as f64 * values[j]);
                taken += take;
                if taken == n - keep {
                    break;
                }
            }
            let ((tl, tla), (tu, tua)) = self.bound_sums(keep + 1, n, e);
            let tail = Interval {
                lo: (s - tu) / k,
                hi: (s - tl) / k,
            }
            .widen((s.abs() + tla + tua) / k, 8.0);
            if tail.hi - tail.lo < iv.hi - iv.lo {
                iv = tail;
                value = ((s - top.value()) / k).clamp(tail.lo, tail.hi);
            }
        }
        // Back in the scores' units; the trimmed mean lies in [min, max].
        let (min, max) = (self.view.min(), self.view.max());
        Estimate {
            value: ldexp(value, e).clamp(min, max),
            interval: Interval {
                lo: ldexp(iv.lo, e).max(min),
                hi: ldexp(iv.hi, e).min(max),
            },
        }
    }

    /// The candidate deviations at which counts about a center interval
    /// change, for [`DeviationBrackets::bounds`].
    pub fn deviations_about(&self, center: Interval) -> DeviationBrackets<'_> {
        let (cl, cu) = (center.lo, center.hi);
        let vals = self.view.values();
        let mut cands: Vec<f64> = Vec::with_capacity(4 * vals.len() + 1);
        cands.push(0.0);
        for &y in vals {
            for t in [y - cu, cl - y, y - cl, cu - y] {
                if t > 0.0 {
                    cands.push(t);
                }
            }
        }
        cands.sort_unstable_by(f64::total_cmp);
        cands.dedup();
        DeviationBrackets {
            b: *self,
            center,
            cands,
        }
    }

    /// `nmad = median(|x − median|)/Φ⁻¹(3/4)` (contract §2), its interval
    /// carrying the median's.
    pub fn nmad(&self, median: &Estimate) -> Estimate {
        let (a, b) = median_ranks(self.n());
        let devs = self.deviations(median.value);
        let value = if a == b {
            devs.order_statistic(a)
        } else {
            midpoint(devs.order_statistic(a), devs.order_statistic(b))
        };
        let value = value / NMAD_DIVISOR;
        if self.is_exact() || self.values_only {
            return Estimate {
                value,
                interval: Interval::exact(value),
            };
        }
        let about = self.deviations_about(median.interval);
        let lo = about.bounds(a).lo;
        let hi = about.bounds(b).hi;
        Estimate {
            value,
            interval: Interval {
                lo: lo / NMAD_DIVISOR,
                hi: hi / NMAD_DIVISOR,
            }
            .widen(hi / NMAD_DIVISOR, 2.0)
            .clamp_low(0.0),
        }
    }

    /// `niqr = (Q(.75) − Q(.25))/1.349` (contract §2).
    pub fn niqr(&self) -> Estimate {
        let (q1, q3) = (self.quantile(0.25), self.quantile(0.75));
        let value = (q3.value - q1.value) / NIQR_DIVISOR;
        if self.is_exact() {
            return Estimate {
                value,
                interval: Interval::exact(value),
            };
        }
        Estimate {
            value,
            interval: Interval {
                lo: (q3.interval.lo - q1.interval.hi).max(0.0) / NIQR_DIVISOR,
                hi: (q3.interval.hi - q1.interval.lo) / NIQR_DIVISOR,
            }
            .widen(q3.interval.hi.abs() + q1.interval.lo.abs(), 4.0)
            .clamp_low(0.0),
        }
    }

    /// Trimmed SD about a center (contract §2): drop the `floor(alpha·n)`
    /// largest `(x − c)²`, `sqrt` of the mean of the rest. The interval
    /// bounds each kept deviation rank on a grid of ranks (monotone, so
    /// block sums bound the sum) for every c in the center's interval.
    pub fn trimmed_std(&self, center: &Estimate, alpha: f64) -> Estimate {
        let n = self.n();
        let keep = n - crate::estimators::location::trimmed_count(alpha, n as usize) as u64;
        let devs = self.deviations(center.value);
        let about = self.deviations_about(center.interval);
        // Squares are taken of deviations in units of a power of two near
        // the largest, so that they neither underflow nor overflow. The
        // bound of the largest kept deviation is infinite when the center's
        // interval reaches beyond the double range: so is the SD's then.
        let reach = about.bounds(keep).hi;
        let top = devs.values().last().copied().unwrap_or(0.0);
        let top = if reach.is_finite() {
            top.max(reach)
        } else {
            top
        };
        let e = if top > 0.0 && top.is_finite() {
            crate::numeric::reduce::binary_exponent(top)
        } else {
            0
        };
        let unit = |d: f64| libm::scalbn(d, -e);
        let mut acc = Neumaier::default();
        let mut taken = 0u64;
        for (j, &d) in devs.values().iter().enumerate() {
            let take = devs.weight(j).min(keep - taken);
            acc.add(take as f64 * unit(d) * unit(d));
            taken += take;
            if taken == keep {
                break;
            }
        }
        let k = keep as f64;
        let value = libm::scalbn((acc.value() / k).sqrt(), e);
        if self.is_exact() {
            // Every deviation is known: only the rounding of the sum of
            // squares (all positive) and of the root remains.
            return Estimate {
                value,
                interval: Interval::exact(value).widen(value, 8.0),
            };
        }
        let step = keep.div_ceil(GRID).max(1);
        let (mut lo, mut hi) = (Neumaier::default(), Neumaier::default());
        let mut start = 1u64;
        while start <= keep {
            let end = (start + step - 1).min(keep);
            let count = (end - start + 1) as f64;
            let l = unit(about.bounds(start).lo);
            let u = unit(about.bounds(end).hi);
            lo.add(count * l * l);
            hi.add(count * u * u);
            start = end + 1;
        }
        let (l, u) = (
            libm::scalbn((lo.value() / k).sqrt(), e),
            libm::scalbn((hi.value() / k).sqrt(), e),
        );
        let interval = if reach.is_finite() && u.is_finite() {
            Interval { lo: l, hi: u }.widen(u, 8.0).clamp_low(0.0)
        } else {
            let lo = if l.is_finite() { l } else { 0.0 };
            Interval {
                lo: (lo - 8.0 * f64::EPSILON * lo).next_down().max(0.0),
                hi: f64::INFINITY,
            }
        };
        Estimate { value, interval }
    }

    /// The sample of deviations `|y − c|` with the same weights.
    ///
    /// The values are sorted and rounding is monotone, so `|y − c|` falls
    /// over the values below `c` and rises over the rest: the sorted
    /// deviations are a merge of those two runs, not a sort (ties may come
    /// in another order than a sort's, which no order statistic sees).
    fn deviations(&self, c: f64) -> SortedView {
        let vals = self.view.values();
        let dev = |j: usize| ((vals[j] - c).abs(), self.view.weight(j));
        let mut pairs = Vec::with_capacity(vals.len());
        let (mut below, mut above) = (vals.partition_point(|&y| y < c), 0);
        above += below;
        while below > 0 && above < vals.len() {
            let (l, r) = (dev(below - 1), dev(above));
            if l.0 <= r.0 {
                pairs.push(l);
                below -= 1;
            } else {
                pairs.push(r);
                above += 1;
            }
        }
        pairs.extend((0..below).rev().map(dev));
        pairs.extend((above..vals.len()).map(dev));
        SortedView::from_weighted(&pairs)
    }

    /// Huber's proposal 2 (contract §3) on the sketch's weighted sample,
    /// started like the in-memory fit (median, nMAD → nIQR → SD) and run,
    /// as there, on the values times 2^-k with σ₀·2^-k in [1, 2). No
    /// interval: its error is measured, not guaranteed (contract §9). A
    /// scale beyond the double range is refused as the in-memory fit
    /// refuses it.
    pub fn m_estimate(&self, params: &MParams) -> Result<MEstimate, Error> {
        let med = self.median();
        let (sigma0, start) = start_from(|which| {
            Ok(match which {
                StartScale::Nmad => self.nmad(&med).value,
                StartScale::Niqr => self.niqr().value,
                _ => self.std(),
            })
        })?;
        if let Some(est) = without_iteration(med.value, sigma0, start)? {
            return Ok(est);
        }
        let largest = self.view.min().abs().max(self.view.max().abs());
        let k = unit_exponent(sigma0, largest, 1023);
        let weighted = Weighted {
            view: self.view,
            values: self.view.values().iter().map(|&y| ldexp(y, -k)).collect(),
        };
        let est = iterate(
            &weighted,
            params,
            ldexp(med.value, -k),
            ldexp(sigma0, -k),
            start,
        );
        unscaled(est, k, params.norm)
    }

    /// The SD of the sample (ddof 0), taken of the values times 2^-e,
    /// |values| below 2, so that no square overflows.
    fn std(&self) -> f64 {
        let largest = self.view.min().abs().max(self.view.max().abs());
        let e = if largest > 0.0 {
            binary_exponent(largest)
        } else {
            0
        };
        let values: Vec<f64> = self.view.values().iter().map(|&y| ldexp(y, -e)).collect();
        let n = self.n() as f64;
        let mut s = Neumaier::default();
        for (j, &y) in values.iter().enumerate() {
            s.add(self.view.weight(j) as f64 * y);
        }
        let m = s.value() / n;
        let mut q = Neumaier::default();
        for (j, &y) in values.iter().enumerate() {
            q.add(self.view.weight(j) as f64 * (y - m) * (y - m));
        }
        ldexp((q.value() / n).sqrt(), e)
    }
}

/// Brackets of the deviations `|x − c|` for every center c in an
/// interval.
#[derive(Debug, Clone)]
pub struct DeviationBrackets<'a> {
    b: Brackets<'a>,
    center: Interval,
    cands: Vec<f64>,
}

impl DeviationBrackets<'_> {
    /// Bounds of the i-th smallest deviation (1-based): under E, fewer
    /// than i deviations lie below `t` when `#{x ∈ (c_hi − t, c_lo + t)}`
    /// is, by the sample counts plus the slack, below i; at least i lie
    /// at or below `t` when `#{x ∈ [c_lo ... ]}` minus the slack reaches i.
    /// The counts only change at the candidates, so both ends are found by
    /// bisection over them.
    pub fn bounds(&self, i: u64) -> Interval {
        let (cl, cu) = (self.center.lo, self.center.hi);
        let e = self.b.slack;
        let view = self.b.view;
        let c_of = |t: f64| -> u64 {
            (view.count(cu + t, false) + 2 * e).saturating_sub(view.count(cl - t, true))
        };
        let ok = self.cands.partition_point(|&t| c_of(t) < i);
        let lo = if ok == 0 { 0.0 } else { self.cands[ok - 1] };
        let d_of = |t: f64| -> u64 {
            view.count(cl + t, true)
                .saturating_sub(view.count(cu - t, false) + 2 * e)
        };
        let first = self.cands.partition_point(|&t| d_of(t) < i);
        let max_dev = (view.max() - cl).max(cu - view.min()).max(0.0);
        let hi = if first < self.cands.len() {
            self.cands[first].min(max_dev)
        } else {
            max_dev
        };
        // Quartered (and four times the ulps), so that the sum cannot
        // overflow.
        Interval { lo: lo.min(hi), hi }
            .widen(cl.abs() / 4.0 + cu.abs() / 4.0 + hi / 4.0, 16.0)
            .clamp_low(0.0)
    }
}

impl Interval {
    fn clamp_low(self, v: f64) -> Self {
        Interval {
            lo: self.lo.max(v),
            hi: self.hi.max(v),
        }
    }
}

/// The 1-based ranks whose midpoint is `numpy.median` of n values.
fn median_ranks(n: u64) -> (u64, u64) {
    if n % 2 == 1 {
        (n.div_ceil(2), n.div_ceil(2))
    } else {
        (n / 2, n / 2 + 1)
    }
}

/// A sketch's weighted items, in the units M-estimation runs in, as the
/// sums it needs.
struct Weighted<'a> {
    view: &'a SortedView,
    /// The items times 2^-k.
    values: Vec<f64>,
}

impl Sums for Weighted<'_> {
    fn len(&self) -> usize {
        self.view.n() as usize
    }

    fn location(&self, p: &MParams, m: f64, sigma: f64) -> (f64, f64) {
        let (mut sw, mut swd) = (Neumaier::default(), Neumaier::default());
        for (j, &y) in self.values.iter().enumerate() {
            let d = y - m;
            let w = self.view.weight(j) as f64 * p.norm.weight(d / sigma, p.tuning);
            sw.add(w);
            swd.add(w * d);
        }
        (sw.value(), swd.value())
    }

    fn scale(&self, c: f64, mu: f64, sigma: f64, nmu: f64) -> (f64, usize) {
        let mut ss = Neumaier::default();
        let mut outside = 0usize;
        for (j, &y) in self.values.iter().enumerate() {
            let w = self.view.weight(j);
            if ((y - mu) / sigma).abs() <= c {
                let r = (y - nmu) / sigma;
                ss.add(w as f64 * r * r);
            } else {
                outside += w as usize;
            }
        }
        (ss.value(), outside)
    }
}

/// The largest `|p̂(s) − p(s)|` over all scores s when the fitted center
/// lies in `center` and the scale in `scale` (both the estimate and the
/// exact fit): for each s, Gaussian scaling `max(0, erf((s − μ)/(σ√2)))`
/// over the box lies between `erf((s − μ_hi)/(σ_hi√2))` and
/// `erf((s − μ_lo)/(σ_lo√2))` (clipped at 0), so the band's widest point
/// bounds the difference. The width `erf(a(s)) − erf(b(s))` of two linear
/// arguments is stationary where `a² − b² = ln(σ_hi/σ_lo)`, a quadratic in
/// s; the supremum is at one of its roots or where the lower curve starts
/// (s = μ_hi). Returns 1 when σ_lo is 0.
///
/// Only `(s − μ)/σ` matters, so the band is computed with μ_lo at 0 and in
/// units of a power of two near σ_hi: σ² of scores near 1e-200 would
/// underflow to 0 and of scores near 1e200 overflow, and the band with it.
pub fn probability_band(center: Interval, scale: Interval) -> f64 {
    let (sl, su) = (scale.lo, scale.hi);
    if !(sl > 0.0 && su.is_finite() && center.lo.is_finite() && center.hi.is_finite()) {
        return 1.0;
    }
    let e = binary_exponent(su);
    // μ_hi − μ_lo halved first, so that it cannot overflow.
    let width_of_center = ldexp(center.hi / 2.0 - center.lo / 2.0, 1 - e);
    let (ml, mu, sl, su) = (0.0, width_of_center, ldexp(sl, -e), ldexp(su, -e));
    if !(sl > 0.0 && mu.is_finite()) {
        // σ_lo below 2^-1074 of σ_hi, or μ's interval wider than 2^1000 σ.
        return 1.0;
    }
    let r2 = core::f64::consts::SQRT_2;
    let upper = |s: f64| {
        if s <= ml {
            0.0
        } else {
            libm::erf((s - ml) / (sl * r2))
        }
    };
    let lower = |s: f64| {
        if s <= mu {
            0.0
        } else {
            libm::erf((s - mu) / (su * r2))
        }
    };
    let width = |s: f64| (upper(s) - lower(s)).max(0.0);
    let mut best = width(mu);
    // a = (s − ml)/(sl√2), b = (s − mu)/(su√2); a² − b² = ln(su/sl).
    // In t = s − mu, with δ = mu − ml: a = (t + δ)/(sl√2), b = t/(su√2).
    let delta = mu - ml;
    let (ia, ib) = (1.0 / (2.0 * sl * sl), 1.0 / (2.0 * su * su));
    let qa = ia - ib;
    let qb = 2.0 * delta * ia;
    let qc = delta * delta * ia - (su / sl).ln();
    let mut roots = Vec::new();
    if qa.abs() <= f64::EPSILON * ia {
        if qb != 0.0 {
            roots.push(-qc / qb);
        }
    } else {
        let disc = qb * qb - 4.0 * qa * qc;
        if disc >= 0.0 {
            let r = disc.sqrt();
            roots.push((-qb + r) / (2.0 * qa));
            roots.push((-qb - r) / (2.0 * qa));
        }
    }
    for t in roots {
        if t > 0.0 && t.is_finite() {
            best = best.max(width(mu + t));
        }
    }
    // The roundoff of erf is far below the widths that matter.
    (best + 4.0 * f64::EPSILON).min(1.0)
}

#[cfg(test)]
mod tests;
