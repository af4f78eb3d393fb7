//! Online false-discovery-rate control (contract §12): a stream of
//! p-values P₁, P₂, … is tested one at a time, P_t rejected when
//! P_t ≤ α_t, where the level α_t depends only on the decisions (and, for
//! the adaptive rules, on which earlier p-values fell below λ or τ) — never
//! on P_t or later p-values — and FDR(T) = E[V(T)/max(R(T), 1)] ≤ α at
//! every T for independent p-values.
//!
//! With γ a non-negative, non-increasing sequence summing to at most 1
//! ([`gamma`]), w₀ ≤ α the initial wealth and τ₁ < τ₂ < … the times of the
//! rejections so far:
//!
//! * **LOND** (Javanmard & Montanari, *Online rules for control of false
//!   discovery rate and false discovery exceedance*, Ann. Statist. 46(2)
//!   2018, §2.1): α_t = α·γ_t·(D(t−1) + 1), D the number of rejections.
//! * **LORD++** (Ramdas, Yang, Wainwright & Jordan, *Online control of the
//!   false discovery rate with decaying memory*, NeurIPS 2017, which
//!   improves JM 2018's LORD): α_t = w₀γ_t + (α − w₀)γ_{t−τ₁} +
//!   α Σ_{j≥2} γ_{t−τⱼ}.
//! * **SAFFRON** (Ramdas, Zrnic, Wainwright & Jordan, ICML 2018, Alg. 1):
//!   candidates C_i = 1{P_i ≤ λ}; α_t = min{λ, (1 − λ)[w₀γ_{t−C₀₊} +
//!   (α − w₀)γ_{t−τ₁−C₁₊} + α Σ_{j≥2} γ_{t−τⱼ−Cⱼ₊}]}, Cⱼ₊ the candidates
//!   after τⱼ (before t).
//! * **ADDIS** (Tian & Ramdas, NeurIPS 2019, ADDIS*): selected S_i =
//!   1{P_i ≤ τ}, candidates C_i = 1{P_i ≤ λ}, λ < τ; α_t = min{λ, (τ − λ)
//!   [w₀γ_{Sᵗ−C₀₊} + (α − w₀)γ_{Sᵗ−κ₁*−C₁₊} + α Σ_{j≥2} γ_{Sᵗ−κⱼ*−Cⱼ₊}]},
//!   Sᵗ the selected before t, κⱼ* those up to the j-th rejection; the
//!   paper counts γ from 0, so each subscript is one more here (as in
//!   online-fdr 1.0 and R's onlineFDR). λ is on the p-value scale (the
//!   paper's rescaled λ′ is λ/τ).
//!
//! **One clock.** In LORD++, SAFFRON and ADDIS every subscript is the
//! number of *ticks* since an event, plus one: a tick is every p-value for
//! LORD++, a non-candidate (P > λ) for SAFFRON, a selected non-candidate
//! (λ < P ≤ τ) for ADDIS (a rejected p-value is a candidate, so it never
//! ticks there). With k the ticks so far and sⱼ the tick count just after
//! the j-th rejection (its *stamp*), α̃ = w₀γ_{k+1} + (α − w₀)γ_{k−s₁+1} +
//! α Σ_{j≥2} γ_{k−sⱼ+1}. The state is k, the first stamp and the later
//! stamps run-length coded (equal stamps: rejections with no tick between).
//!
//! **Work.** γ is non-increasing, so between rejections the level never
//! grows: after an exact evaluation, its value bounds every later level
//! until the next rejection, which adds at most (α or α − w₀)·γ₁·(1 − λ or
//! τ − λ) to the bound. A p-value above the bound is accepted in O(1); only
//! one at or below it is compared with the level evaluated exactly, in
//! O(m) for the m stamps that still carry weight (from 32 stamps on, γ
//! comes from a table of the same doubles). Under the null that is a
//! fraction ≈ α_t of the p-values. A finite γ of length L gives no weight
//! to stamps more than L ticks old: they are dropped, so m ≤ L. The
//! decisions are those of the exact levels whichever way they are reached.
//!
//! **Wealth.** In the GAI++ view each rule spends α_t (SAFFRON: α_t/(1−λ)
//! per non-candidate; ADDIS: α_t/(τ−λ) per selected non-candidate) and
//! earns α − w₀ at the first rejection, α at each later one. Each of those
//! deposits is spent at most Σγ ≤ 1 times over, so the wealth never goes
//! negative and the levels need no cap by it; it is not kept.
//!
//! Where online-fdr 1.0 departs from the papers: its LORD++ caps α_t at a
//! running wealth that earns α at the first rejection too (the paper: α −
//! w₀); with Σγ ≤ 1 the cap never binds, so the decisions agree. It
//! requires 0 < w₀ < α and τ < 1; the papers allow w₀ = α and τ = 1
//! (ADDIS with τ = 1 is SAFFRON), and so does this module.

pub mod gamma;
#[cfg(test)]
mod tests;

use crate::error::{named_enum, Error};
use gamma::Gamma;
use std::collections::VecDeque;

/// The rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// LOND.
    Lond,
    /// LORD++.
    LordPlusPlus,
    /// SAFFRON.
    Saffron,
    /// ADDIS.
    Addis,
}

named_enum!(
    Method,
    "method",
    "expected 'lord++', 'saffron', 'addis' or 'lond'",
    "lond" => Lond,
    "lord++" => LordPlusPlus,
    "saffron" => Saffron,
    "addis" => Addis,
);

/// A rule and its parameters, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The rule.
    pub method: Method,
    /// Target FDR, in (0, 1).
    pub alpha: f64,
    /// Initial wealth, in (0, α] (0 for LOND, which has none).
    pub w0: f64,
    /// Candidate threshold (SAFFRON, ADDIS; 0 otherwise).
    pub lam: f64,
    /// Selection threshold (ADDIS; 1 otherwise).
    pub tau: f64,
    /// The γ sequence.
    pub gamma: Gamma,
}

fn check_open(name: &'static str, v: f64, lo: f64, hi: f64, closed_hi: bool) -> Result<(), Error> {
    let ok = v > lo && (v < hi || (closed_hi && v == hi));
    if ok {
        return Ok(());
    }
    let bracket = if closed_hi { ']' } else { ')' };
    Err(Error::invalid(
        name,
        format!("must be in ({lo}, {hi}{bracket}, got {v}"),
    ))
}

fn refuse(name: &'static str, method: Method, v: Option<f64>) -> Result<(), Error> {
    match v {
        None => Ok(()),
        Some(v) => Err(Error::invalid(
            name,
            format!("{} takes no {name} (got {v}); leave it None", method.name()),
        )),
    }
}

impl Settings {
    /// The rule's parameters, defaults filled in: w₀ = α/10 (LORD++, R's
    /// onlineFDR), α/2 (SAFFRON's paper, R's ADDIS); λ = 1/2 (SAFFRON), 1/4
    /// with τ = 1/2 (ADDIS: the paper's λ′ = λ/τ = 1/2); γ = LORD's
    /// sequence (LOND, LORD++) or SAFFRON's (SAFFRON, ADDIS). A parameter
    /// the rule does not take is refused.
    pub fn new(
        method: Method,
        alpha: f64,
        w0: Option<f64>,
        lam: Option<f64>,
        tau: Option<f64>,
        gamma: Option<Vec<f64>>,
    ) -> Result<Self, Error> {
        check_open("alpha", alpha, 0.0, 1.0, false)?;
        let (default_w0, default_lam, default_tau, default_gamma) = match method {
            Method::Lond => (None, None, None, Gamma::Lord),
            Method::LordPlusPlus => (Some(alpha / 10.0), None, None, Gamma::Lord),
            Method::Saffron => (Some(alpha / 2.0), Some(0.5), None, Gamma::Saffron),
            Method::Addis => (Some(alpha / 2.0), Some(0.25), Some(0.5), Gamma::Saffron),
        };
        if default_w0.is_none() {
            refuse("w0", method, w0)?;
        }
        if default_lam.is_none() {
            refuse("lam", method, lam)?;
        }
        if default_tau.is_none() {
            refuse("tau", method, tau)?;
        }
        let w0 = match (w0, default_w0) {
            (Some(w), Some(_)) => {
                check_open("w0", w, 0.0, alpha, true)?;
                w
            }
            (_, d) => d.unwrap_or(0.0),
        };
        // A default w₀ (α/10, α/2) underflows to 0 for a subnormal α: a
        // rule with no initial wealth, which a checkpoint could not store.
        if default_w0.is_some() && w0 <= 0.0 {
            return Err(Error::invalid(
                "alpha",
                format!(
                    "{alpha} is too small: its default w0 underflows to 0; pass a larger \
                     alpha or a positive w0"
                ),
            ));
        }
        let tau = tau.or(default_tau).unwrap_or(1.0);
        if method == Method::Addis {
            check_open("tau", tau, 0.0, 1.0, true)?;
        }
        let lam = lam.or(default_lam).unwrap_or(0.0);
        match method {
            Method::Saffron => check_open("lam", lam, 0.0, 1.0, false)?,
            Method::Addis => check_open("lam", lam, 0.0, tau, false)?,
            _ => {}
        }
        let gamma = match gamma {
            Some(g) => Gamma::given(g)?,
            None => default_gamma,
        };
        Ok(Settings {
            method,
            alpha,
            w0,
            lam,
            tau,
            gamma,
        })
    }

    /// The factor of α̃ and the cap of α_t: (1, ∞) for LORD++, (1 − λ, λ)
    /// for SAFFRON, (τ − λ, λ) for ADDIS.
    fn scale_and_cap(&self) -> (f64, f64) {
        match self.method {
            Method::Lond | Method::LordPlusPlus => (1.0, f64::INFINITY),
            Method::Saffron => (1.0 - self.lam, self.lam),
            Method::Addis => (self.tau - self.lam, self.lam),
        }
    }

    /// Whether p advances the clock.
    #[inline(always)]
    fn ticks(&self, p: f64) -> bool {
        match self.method {
            Method::Lond | Method::LordPlusPlus => true,
            Method::Saffron => p > self.lam,
            Method::Addis => p > self.lam && p <= self.tau,
        }
    }
}

/// The state of a rule as plain data (`to_dict`), checked by
/// [`OnlineFdr::from_parts`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Parts {
    /// p-values tested.
    pub n: u64,
    /// Ticks so far (LOND, LORD++: n).
    pub clock: u64,
    /// Rejections so far.
    pub rejections: u64,
    /// The first rejection's stamp (None before it, and for LOND).
    pub first: Option<u64>,
    /// Later rejections' stamps, increasing, of those still carrying
    /// weight.
    pub stamps: Vec<u64>,
    /// Rejections per stamp (≥ 1).
    pub counts: Vec<u64>,
}

/// Relative margin of the bound after a rejection: the exact level sums
/// its terms in another order, which can differ by a few ulp per term.
const BOUND_MARGIN: f64 = 1e-6;

/// An online FDR rule and its state.
#[derive(Debug, Clone)]
pub struct OnlineFdr {
    settings: Settings,
    scale: f64,
    cap: f64,
    n: u64,
    clock: u64,
    rejections: u64,
    first: Option<u64>,
    stamps: VecDeque<(u64, u64)>,
    /// At least the next level (∞: unknown). A cache: not part of the
    /// state.
    bound: f64,
    /// γ_1, γ_2, … as [`Gamma::at`] gives them, filled on demand once
    /// there are [`TABLE_FROM`] stamps (a cache: not part of the state).
    table: Vec<f64>,
}

/// Stamps from which a level reads γ from a table rather than its formula.
const TABLE_FROM: usize = 32;
/// The longest γ table: 2^20 terms (8 MiB); older stamps use the formula.
const TABLE_MAX: usize = 1 << 20;

impl PartialEq for OnlineFdr {
    fn eq(&self, other: &Self) -> bool {
        self.settings == other.settings && self.parts() == other.parts()
    }
}

/// Every p in [0, 1] (NaN is not), checked before any state changes.
pub(crate) fn check_pvalues(p: &[f64]) -> Result<(), Error> {
    match p.iter().position(|x| !(0.0..=1.0).contains(x)) {
        None => Ok(()),
        Some(i) => Err(Error::invalid(
            "pvalues",
            format!(
                "pvalues[{i}] = {} is not a p-value: every p-value must be in [0, 1]",
                p[i]
            ),
        )),
    }
}

impl OnlineFdr {
    /// A rule with no p-value seen.
    pub fn new(settings: Settings) -> Self {
        let (scale, cap) = settings.scale_and_cap();
        OnlineFdr {
            settings,
            scale,
            cap,
            n: 0,
            clock: 0,
            rejections: 0,
            first: None,
            stamps: VecDeque::new(),
            bound: f64::INFINITY,
            table: Vec::new(),
        }
    }

    /// The rule's parameters.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }
    /// p-values tested.
    pub fn n(&self) -> u64 {
        self.n
    }
    /// Rejections so far.
    pub fn rejections(&self) -> u64 {
        self.rejections
    }

    /// The decision on each p-value of `p`, in order, into `out` (equal
    /// lengths); `levels`, when given, receives each α_t (which costs the
    /// exact level at every step). A batch with a p-value outside [0, 1]
    /// or NaN changes nothing.
    pub fn decide(
        &mut self,
        p: &[f64],
        out: &mut [bool],
        levels: Option<&mut [f64]>,
    ) -> Result<(), Error> {
        if out.len() != p.len() || levels.as_ref().is_some_and(|l| l.len() != p.len()) {
            return Err(Error::ShapeMismatch(format!(
                "{} p-values need outputs of the same length",
                p.len()
            )));
        }
        check_pvalues(p)?;
        crate::limits::check_room("pvalues", self.n, p.len())?;
        match levels {
            None => {
                for (&x, o) in p.iter().zip(out.iter_mut()) {
                    *o = self.step(x, false).0;
                }
            }
            Some(l) => {
                for ((&x, o), a) in p.iter().zip(out.iter_mut()).zip(l.iter_mut()) {
                    (*o, *a) = self.step(x, true);
                }
            }
        }
        Ok(())
    }

    /// The level α_t the next p-value will be compared with.
    pub fn next_level(&mut self) -> f64 {
        let l = self.level();
        self.bound = l;
        l
    }

    /// One p-value: its decision and, if `exact`, its level (else NaN
    /// when the bound decided).
    #[inline]
    fn step(&mut self, p: f64, exact: bool) -> (bool, f64) {
        let (reject, level) = if !exact && p > self.bound {
            (false, f64::NAN)
        } else {
            let l = self.level();
            self.bound = l;
            (p <= l, l)
        };
        self.n += 1;
        if self.settings.ticks(p) {
            self.clock += 1;
        }
        if reject {
            self.reject();
        }
        (reject, level)
    }

    /// Records a rejection at the current stamp and raises the bound by the
    /// most its new term can add.
    fn reject(&mut self) {
        let s = &self.settings;
        self.rejections += 1;
        let coef = match s.method {
            Method::Lond => {
                // α·γ_t·(D + 1) grows by the factor (D + 2)/(D + 1).
                self.bound = f64::INFINITY;
                return;
            }
            _ if self.first.is_none() => {
                self.first = Some(self.clock);
                s.alpha - s.w0
            }
            _ => {
                match self.stamps.back_mut() {
                    Some((stamp, count)) if *stamp == self.clock => *count += 1,
                    _ => self.stamps.push_back((self.clock, 1)),
                }
                s.alpha
            }
        };
        let raised = (self.bound + self.scale * coef * s.gamma.at(1)) * (1.0 + BOUND_MARGIN);
        self.bound = raised.min(self.cap);
    }

    /// The exact level of the next p-value; drops the stamps a finite γ
    /// no longer weighs.
    fn level(&mut self) -> f64 {
        let s = &self.settings;
        let k = self.clock;
        if s.method == Method::Lond {
            return s.gamma.lond(s.alpha, self.n + 1) * (self.rejections + 1) as f64;
        }
        if let Some(h) = s.gamma.horizon() {
            while self
                .stamps
                .front()
                .is_some_and(|&(stamp, _)| k - stamp >= h)
            {
                self.stamps.pop_front();
            }
        }
        let mut a = s.w0 * s.gamma.at(k + 1);
        if let Some(first) = self.first {
            a += (s.alpha - s.w0) * s.gamma.at(k - first + 1);
        }
        let mut tail = 0.0;
        if self.stamps.len() < TABLE_FROM {
            for &(stamp, count) in &self.stamps {
                tail += count as f64 * s.gamma.at(k - stamp + 1);
            }
        } else {
            // Many stamps: their γ from a table of the same doubles.
            let oldest = self.stamps.front().map_or(0, |&(stamp, _)| k - stamp + 1);
            let upto = oldest.min(TABLE_MAX as u64) as usize;
            if self.table.len() < upto {
                let from = self.table.len() as u64 + 1;
                self.table
                    .extend((from..=upto as u64).map(|j| s.gamma.at(j)));
            }
            for &(stamp, count) in &self.stamps {
                let j = k - stamp + 1;
                let g = match self.table.get((j - 1) as usize) {
                    Some(&g) => g,
                    None => s.gamma.at(j),
                };
                tail += count as f64 * g;
            }
        }
        a += s.alpha * tail;
        (a * self.scale).min(self.cap)
    }

    /// The state as plain data: the stamps that still carry weight (those
    /// a finite γ no longer weighs are left out, dropped yet or not).
    pub fn parts(&self) -> Parts {
        let h = self.settings.gamma.horizon().unwrap_or(u64::MAX);
        let live = || self.stamps.iter().filter(|&&(s, _)| self.clock - s < h);
        Parts {
            n: self.n,
            clock: self.clock,
            rejections: self.rejections,
            first: self.first,
            stamps: live().map(|&(s, _)| s).collect(),
            counts: live().map(|&(_, c)| c).collect(),
        }
    }

    /// A rule from [`parts`](Self::parts), checked against itself and the
    /// rule: counts that disagree, stamps out of order or beyond the clock,
    /// a clock the rule could not have reached — each an error naming the
    /// field.
    pub fn from_parts(settings: Settings, p: &Parts) -> Result<Self, Error> {
        let bad = |name: &'static str, why: String| Err(Error::invalid(name, why));
        let method = settings.method;
        // n counts every p-value: §5's bound of a count.
        crate::limits::COUNT.named("n").check(p.n)?;
        if p.rejections > p.n {
            return bad(
                "rejections",
                format!("{} rejections among {} p-values", p.rejections, p.n),
            );
        }
        let ticks_every_step = matches!(method, Method::Lond | Method::LordPlusPlus);
        if ticks_every_step && p.clock != p.n {
            return bad(
                "clock",
                format!(
                    "{} ticks {}, not one per p-value ({})",
                    method.name(),
                    p.clock,
                    p.n
                ),
            );
        }
        // A rejected p-value is a candidate: it never ticks.
        if !ticks_every_step && p.clock > p.n - p.rejections {
            return bad(
                "clock",
                format!(
                    "{} ticks among {} p-values of which {} were rejected",
                    p.clock, p.n, p.rejections
                ),
            );
        }
        if p.stamps.len() != p.counts.len() {
            return bad(
                "stamps",
                format!("{} stamps but {} counts", p.stamps.len(), p.counts.len()),
            );
        }
        if method == Method::Lond {
            if p.first.is_some() || !p.stamps.is_empty() {
                return bad("stamps", "LOND keeps no rejection stamps".into());
            }
        } else if p.first.is_some() != (p.rejections > 0) {
            return bad(
                "first",
                format!(
                    "{} rejections but the first stamp is {:?}",
                    p.rejections, p.first
                ),
            );
        }
        check_stamps(method, settings.gamma.horizon().is_some(), p)?;
        let mut rule = OnlineFdr::new(settings);
        rule.n = p.n;
        rule.clock = p.clock;
        rule.rejections = p.rejections;
        rule.first = p.first;
        rule.stamps = p
            .stamps
            .iter()
            .copied()
            .zip(p.counts.iter().copied())
            .collect();
        Ok(rule)
    }
}

/// The stamps of a stored state: from the first to the clock, increasing,
/// each counting at least one rejection (exactly one for LORD++), together
/// the rejections after the first (fewer if a finite γ dropped some,
/// `dropped_ok`).
fn check_stamps(method: Method, dropped_ok: bool, p: &Parts) -> Result<(), Error> {
    let bad = |name: &'static str, why: String| Err(Error::invalid(name, why));
    let first = p.first.unwrap_or(0);
    if first > p.clock {
        return bad(
            "first",
            format!("stamp {first} is beyond the clock {}", p.clock),
        );
    }
    let mut previous = None;
    let mut later: u64 = 0;
    for (&s, &c) in p.stamps.iter().zip(&p.counts) {
        if s < first || s > p.clock || previous.is_some_and(|q| s <= q) {
            return bad(
                "stamps",
                format!(
                    "stamps must increase from the first ({first}) to the clock ({}), \
                     got {:?}",
                    p.clock, p.stamps
                ),
            );
        }
        if c == 0 || (method == Method::LordPlusPlus && (c != 1 || s == first)) {
            return bad(
                "counts",
                format!(
                    "stamp {s} holds {c} rejections; {} allows {}",
                    method.name(),
                    if method == Method::LordPlusPlus {
                        "one per stamp, after the first"
                    } else {
                        "at least one"
                    }
                ),
            );
        }
        later = later.saturating_add(c);
        previous = Some(s);
    }
    let expected = p.rejections.saturating_sub(1);
    if method != Method::Lond && (later > expected || (!dropped_ok && later != expected)) {
        return bad(
            "rejections",
            format!(
                "{} rejections disagree with the stamps, which hold the first and {later} \
                 more",
                p.rejections
            ),
        );
    }
    Ok(())
}
