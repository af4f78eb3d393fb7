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

use crate::estimators::mest::{iterate, MEstimate, MParams, StartScale, Sums};
use crate::estimators::scale::{NIQR_DIVISOR, NMAD_DIVISOR};
use crate::numeric::select::{midpoint, Position};
use crate::numeric::sum::{ExactSum, Neumaier};
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
}

impl<'a> Brackets<'a> {
    /// Brackets with slack `ceil(eps·n)`.
    pub fn new(view: &'a SortedView, eps: f64) -> Self {
        let slack = (eps.max(0.0) * view.n() as f64).ceil() as u64;
        Brackets { view, slack }
    }

    /// The slack e in items.
    pub fn slack(&self) -> u64 {
        self.slack
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
        Estimate {
            value,
            interval: Interval {
                lo: self.lower(first),
                hi: self.upper(last),
            },
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
        Estimate {
            value,
            interval: Interval {
                lo: self.lower(a),
                hi: self.upper(b),
            },
        }
    }

    /// Σ over ranks `a..=b` of `L_i` and of `U_i`, each with Σ|terms|.
    fn bound_sums(&self, a: u64, b: u64) -> ((f64, f64), (f64, f64)) {
        let (vals, cum) = (self.view.values(), self.view.cumulative());
        let e = self.slack;
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
        add(&mut lo, &mut lo_abs, 1, e, self.view.min());
        let mut prev = 0u64;
        for (j, &w) in cum.iter().enumerate() {
            let to = if j + 1 == cum.len() { u64::MAX } else { w + e };
            add(
                &mut lo,
                &mut lo_abs,
                prev + 1 + e,
                to,
                vals[j].max(self.view.min()),
            );
            prev = w;
        }
        // U_i = y_j for i in (W_{j−1} − e, W_j − e]; = max for i > n − e.
        let mut prev = 0u64;
        for (j, &w) in cum.iter().enumerate() {
            if w > e {
                add(
                    &mut hi,
                    &mut hi_abs,
                    (prev + 1).saturating_sub(e).max(1),
                    w - e,
                    vals[j].min(self.view.max()),
                );
            }
            prev = w;
        }
        add(
            &mut hi,
            &mut hi_abs,
            (self.n() + 1).saturating_sub(e).max(1),
            u64::MAX,
            self.view.max(),
        );
        ((lo.value(), lo_abs), (hi.value(), hi_abs))
    }

    /// Upper-trimmed mean (contract §1): the mean of all but the
    /// `floor(alpha·n)` largest. With the exact total sum the dropped tail
    /// is bounded too and the tighter interval kept.
    pub fn upper_trimmed_mean(&self, alpha: f64, total: Option<&ExactSum>) -> Estimate {
        let n = self.n();
        let keep = n - crate::estimators::location::trimmed_count(alpha, n as usize) as u64;
        // The sample's K smallest: whole entries, then part of one.
        let mut acc = Neumaier::default();
        let mut taken = 0u64;
        for (j, &v) in self.view.values().iter().enumerate() {
            let take = self.view.weight(j).min(keep - taken);
            acc.add(take as f64 * v);
            taken += take;
            if taken == keep {
                break;
            }
        }
        let k = keep as f64;
        let mut value = acc.value() / k;
        let ((l, la), (u, ua)) = self.bound_sums(1, keep);
        let mut iv = Interval {
            lo: l / k,
            hi: u / k,
        }
        .widen((la + ua) / k, 8.0);
        if let (Some(total), true) = (total, keep < n) {
            // The exact total minus the dropped tail: the tighter of the two
            // (with its own estimate, so that the estimate lies inside).
            let s = total.value();
            let mut top = Neumaier::default();
            let mut taken = 0u64;
            for j in (0..self.view.values().len()).rev() {
                let take = self.view.weight(j).min(n - keep - taken);
                top.add(take as f64 * self.view.values()[j]);
                taken += take;
                if taken == n - keep {
                    break;
                }
            }
            let ((tl, tla), (tu, tua)) = self.bound_sums(keep + 1, n);
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
        Estimate {
            value,
            interval: iv,
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
        let about = self.deviations_about(median.interval);
        let lo = about.bounds(a).lo;
        let hi = about.bounds(b).hi;
        Estimate {
            value: value / NMAD_DIVISOR,
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
        Estimate {
            value: (q3.value - q1.value) / NIQR_DIVISOR,
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
        // the largest, so that they neither underflow nor overflow.
        let top = about
            .bounds(keep)
            .hi
            .max(devs.values().last().copied().unwrap_or(0.0));
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
        Estimate {
            value,
            interval: Interval { lo: l, hi: u }.widen(u, 8.0).clamp_low(0.0),
        }
    }

    /// The sample of deviations `|y − c|` with the same weights.
    fn deviations(&self, c: f64) -> SortedView {
        let mut pairs: Vec<(f64, u64)> = self
            .view
            .values()
            .iter()
            .enumerate()
            .map(|(j, &y)| ((y - c).abs(), self.view.weight(j)))
            .collect();
        pairs.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        SortedView::from_weighted(&pairs)
    }

    /// Huber's proposal 2 (contract §3) on the sketch's weighted sample,
    /// started like the in-memory fit (median, nMAD → nIQR → SD). No
    /// interval: its error is measured, not guaranteed (contract §9).
    pub fn m_estimate(&self, params: &MParams) -> MEstimate {
        let med = self.median();
        let weighted = Weighted { view: self.view };
        let (sigma0, start) = {
            let nmad = self.nmad(&med).value;
            if nmad > 0.0 {
                (nmad, StartScale::Nmad)
            } else {
                let niqr = self.niqr().value;
                if niqr > 0.0 {
                    (niqr, StartScale::Niqr)
                } else {
                    let sd = weighted.std();
                    if sd > 0.0 {
                        (sd, StartScale::Std)
                    } else {
                        (0.0, StartScale::Constant)
                    }
                }
            }
        };
        if start == StartScale::Constant {
            return MEstimate {
                location: med.value,
                scale: 0.0,
                n_iter: 0,
                converged: true,
                start,
            };
        }
        iterate(&weighted, params, med.value, sigma0, start)
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
        Interval { lo: lo.min(hi), hi }
            .widen(cl.abs() + cu.abs() + hi, 4.0)
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

/// A sketch's weighted items as the sums M-estimation needs.
struct Weighted<'a> {
    view: &'a SortedView,
}

impl Weighted<'_> {
    fn std(&self) -> f64 {
        let n = self.view.n() as f64;
        let mut s = Neumaier::default();
        for (j, &y) in self.view.values().iter().enumerate() {
            s.add(self.view.weight(j) as f64 * y);
        }
        let m = s.value() / n;
        let mut q = Neumaier::default();
        for (j, &y) in self.view.values().iter().enumerate() {
            q.add(self.view.weight(j) as f64 * (y - m) * (y - m));
        }
        (q.value() / n).sqrt()
    }
}

impl Sums for Weighted<'_> {
    fn len(&self) -> usize {
        self.view.n() as usize
    }

    fn location(&self, p: &MParams, m: f64, sigma: f64) -> (f64, f64) {
        let (mut sw, mut swd) = (Neumaier::default(), Neumaier::default());
        for (j, &y) in self.view.values().iter().enumerate() {
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
        for (j, &y) in self.view.values().iter().enumerate() {
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
pub fn probability_band(center: Interval, scale: Interval) -> f64 {
    let (ml, mu, sl, su) = (center.lo, center.hi, scale.lo, scale.hi);
    if !(sl > 0.0 && su.is_finite() && ml.is_finite() && mu.is_finite()) {
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
