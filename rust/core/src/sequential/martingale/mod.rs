//! Exchangeability martingales on a stream of p-values, with CUSUM and
//! Shiryaev–Roberts statistics and alarms (contract §12).
//!
//! A conformal test martingale bets against exchangeability: with p-values
//! p₁, p₂, … and betting functions f_t ≥ 0 with ∫₀¹ f_t = 1 (chosen from
//! p₁…p_{t−1}), M_t = ∏_{i≤t} f_i(p_i), M₀ = 1. For independent uniform
//! p-values — what online conformal p-values of exchangeable scores are
//! (Vovk, Nouretdinov & Gammerman, *Testing exchangeability on-line*, ICML
//! 2003) — M is a non-negative martingale, and Ville's inequality gives
//! P(sup_t M_t ≥ c) ≤ 1/c: an alarm at M_t ≥ c is false with probability
//! at most 1/c over the whole endless stream.
//!
//! * **Power** (Vovk et al. 2003): f(p) = ε p^{ε−1}, ε ∈ (0, 1];
//!   log M_t = t ln ε + (ε − 1) Σ ln p_i.
//! * **Simple mixture** (Vovk et al. 2003; Fedorova, Gammerman, Nouretdinov
//!   & Vovk, *Plug-in martingales for testing exchangeability on-line*, ICML
//!   2012, for mixtures and plug-ins): the mean of power martingales over a
//!   grid of K values of ε (nonconform 2.0: K = `n_grid` points from
//!   `min_epsilon` to 1, NumPy's `linspace`), in place of the integral over
//!   ε ∈ [0, 1]. With S_t = Σ ln p_i, component i has log-capital
//!   L_i = t ln ε_i + (ε_i − 1) S_t, concave in ε: the largest sits next to
//!   ε* = t/(−S_t), and the terms of log M_t = max L + ln Σ e^{L_i − max L}
//!   − ln K are summed outward from it until they fall 60 below the
//!   largest (each then adds < e⁻⁶⁰ relative): O(1) exponentials per
//!   p-value once the mixture has concentrated, not K.
//! * **Simple jumper** (Vovk, Petej, Nouretdinov, Ahlberg, Carlsson &
//!   Gammerman, *Retrain or not retrain: conformal test martingales for
//!   change-point detection*, COPA 2021, Alg. 1; Vovk, Gammerman & Shafer,
//!   *Algorithmic Learning in a Random World*, 2nd ed. 2022, §8): capital
//!   split over ε ∈ {−1, 0, 1}; before each bet a fraction J (`jump`) of
//!   the total is redistributed equally, then component ε is multiplied by
//!   1 + ε(p − ½) ∈ [½, 3⁄2]. Kept as the fractions of the capital (they
//!   sum to 1), so nothing under- or overflows; log M gains ln of the
//!   total's ratio.
//!
//! Change detection from the ratios r_t = M_t/M_{t−1} (as nonconform 2.0):
//! CUSUM C_t = r_t·max(1, C_{t−1}) = max_{k≤t} M_t/M_{k−1}, Shiryaev–Roberts
//! R_t = r_t(1 + R_{t−1}) = Σ_{k≤t} M_t/M_{k−1}, C₀ = R₀ = 0; so M_t ≤ C_t ≤
//! R_t. R_t − t is a martingale under the null, so an alarm at R_t ≥ c
//! comes after c p-values on average (average run length ≥ c; CUSUM's is
//! at least that). All three are kept in logs.
//!
//! **After an alarm** (the chosen statistic ≥ `threshold`): with
//! [`OnAlarm::Continue`] the statistics go on and every step at or above
//! the threshold is flagged; Ville's bound is about the first crossing,
//! later flags are not new evidence. With [`OnAlarm::Restart`] the
//! statistics restart from M = 1, C = R = 0 after the alarming p-value: a
//! new test, with its own 1/c bound. Either way the first alarm's position
//! is kept until [`Martingale::reset`].
//!
//! **Numerics.** A p-value of 0 gives the power and mixture martingales
//! an infinite log (ε < 1), which stays (the evidence is conclusive);
//! ε = 1 bets nothing (0·ln 0 is taken as 0). S_t is a compensated sum and
//! log M_t is recomputed from (t, S_t), not summed, so it does not drift
//! over 10⁹ steps: its error is the rounding of t ln ε_i + (ε_i − 1)S_t,
//! ≲ 2⁻⁵² (t |ln ε_min| + |S_t|). The jumper's log M is a compensated sum
//! of its log-ratios.

#[cfg(test)]
mod tests;

use crate::error::{named_enum, Error};
use crate::numeric::sum::TwoSum;

/// The largest mixture grid.
pub const MAX_GRID: usize = crate::limits::N_GRID.max as usize;
/// Terms this far below the largest log-capital are left out of the
/// mixture's sum (each adds less than e⁻⁶⁰ of the largest).
const NEGLIGIBLE: f64 = 60.0;

/// The betting strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Simple jumper.
    Jumper,
    /// Power martingale with a fixed ε.
    Power,
    /// Mean of power martingales over a grid of ε.
    Mixture,
}

/// The statistic the alarm threshold applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statistic {
    /// M_t (Ville: false alarm probability ≤ 1/threshold).
    Martingale,
    /// CUSUM C_t.
    Cusum,
    /// Shiryaev–Roberts R_t.
    ShiryaevRoberts,
}

/// What follows an alarm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnAlarm {
    /// The statistics go on.
    Continue,
    /// The statistics restart after the alarming p-value.
    Restart,
}

named_enum!(Kind, "kind", "expected one of jumper, power, mixture",
    "jumper" => Jumper, "power" => Power, "mixture" => Mixture);
named_enum!(Statistic, "statistic", "expected one of martingale, cusum, shiryaev_roberts",
    "martingale" => Martingale, "cusum" => Cusum, "shiryaev_roberts" => ShiryaevRoberts);
named_enum!(OnAlarm, "on_alarm", "expected one of continue, restart",
    "continue" => Continue, "restart" => Restart);

/// A martingale's parameters, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// The betting strategy.
    pub kind: Kind,
    /// Jumper's J, in (0, 1].
    pub jump: f64,
    /// Power's ε, in (0, 1].
    pub epsilon: f64,
    /// Mixture grid size, in [2, 2^16].
    pub n_grid: usize,
    /// Mixture grid's smallest ε, in (0, 1].
    pub min_epsilon: f64,
    /// Alarm threshold c > 0 (None: no alarms).
    pub threshold: Option<f64>,
    /// The statistic compared with c.
    pub statistic: Statistic,
    /// What follows an alarm.
    pub on_alarm: OnAlarm,
}

impl Spec {
    /// Checks every parameter (those the kind does not use too).
    pub fn check(&self) -> Result<(), Error> {
        let unit = |name: &'static str, v: f64| {
            if v > 0.0 && v <= 1.0 {
                Ok(())
            } else {
                Err(Error::invalid(name, format!("must be in (0, 1], got {v}")))
            }
        };
        unit("jump", self.jump)?;
        unit("epsilon", self.epsilon)?;
        unit("min_epsilon", self.min_epsilon)?;
        crate::limits::N_GRID.check_usize(self.n_grid)?;
        if let Some(c) = self.threshold {
            if !(c.is_finite() && c > 0.0) {
                return Err(Error::invalid(
                    "threshold",
                    format!("must be a positive finite number (or None for no alarms), got {c}"),
                ));
            }
        }
        Ok(())
    }

    /// The ε grid: one point for the power martingale; NumPy's
    /// `linspace(min_epsilon, 1, n_grid)` for the mixture (start + i·step,
    /// the last point exactly 1).
    fn grid(&self) -> Vec<f64> {
        match self.kind {
            Kind::Power => vec![self.epsilon],
            Kind::Jumper => Vec::new(),
            Kind::Mixture => {
                let (start, k) = (self.min_epsilon, self.n_grid);
                let step = (1.0 - start) / (k - 1) as f64;
                let mut g: Vec<f64> = (0..k).map(|i| i as f64 * step + start).collect();
                g[k - 1] = 1.0;
                g
            }
        }
    }
}

/// The running state as plain data (`to_dict`), checked by
/// [`Martingale::from_parts`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Parts {
    /// p-values since construction or [`Martingale::reset`].
    pub n: u64,
    /// p-values since the statistics last (re)started.
    pub steps: u64,
    /// Σ ln p since the last start, compensated: `log_sum + log_sum_error`.
    pub log_sum: f64,
    /// The compensation of `log_sum`.
    pub log_sum_error: f64,
    /// The jumper's fractions of capital in ε = −1, 0, 1.
    pub components: [f64; 3],
    /// ln M (the jumper's: compensated, `log_martingale + log_martingale_error`).
    pub log_martingale: f64,
    /// The compensation of the jumper's ln M.
    pub log_martingale_error: f64,
    /// ln C (−∞ before the first p-value).
    pub log_cusum: f64,
    /// ln R (−∞ before the first p-value).
    pub log_shiryaev_roberts: f64,
    /// Steps flagged as alarms since construction or reset.
    pub alarms: u64,
    /// 0-based position of the first alarm.
    pub first_alarm: Option<u64>,
}

/// The statistics after one p-value.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Step {
    /// ln M_t.
    pub log_martingale: f64,
    /// ln C_t.
    pub log_cusum: f64,
    /// ln R_t.
    pub log_shiryaev_roberts: f64,
    /// The chosen statistic ≥ threshold.
    pub alarm: bool,
}

/// Where [`Martingale::update`] writes the statistics after each p-value:
/// one slice per statistic, each as long as the p-values.
#[derive(Debug)]
pub struct Path<'a> {
    /// ln M_t.
    pub log_martingale: &'a mut [f64],
    /// ln C_t.
    pub log_cusum: &'a mut [f64],
    /// ln R_t.
    pub log_shiryaev_roberts: &'a mut [f64],
    /// The chosen statistic ≥ threshold.
    pub alarm: &'a mut [bool],
}

/// An exchangeability martingale and its alarm statistics.
#[derive(Debug, Clone)]
pub struct Martingale {
    spec: Spec,
    grid: Vec<f64>,
    ln_grid: Vec<f64>,
    ln_threshold: f64,
    n: u64,
    steps: u64,
    log_sum: TwoSum,
    components: [f64; 3],
    log_m: TwoSum,
    log_cusum: f64,
    log_sr: f64,
    alarms: u64,
    first_alarm: Option<u64>,
}

impl PartialEq for Martingale {
    fn eq(&self, other: &Self) -> bool {
        self.spec == other.spec && self.parts() == other.parts()
    }
}

/// ln(eˣ + eʸ), as NumPy's `logaddexp`.
#[inline]
fn log_add_exp(x: f64, y: f64) -> f64 {
    if x == y {
        return x + core::f64::consts::LN_2;
    }
    let d = x - y;
    if d > 0.0 {
        x + (-d).exp().ln_1p()
    } else if d <= 0.0 {
        y + d.exp().ln_1p()
    } else {
        d
    }
}

impl Martingale {
    /// A martingale with no p-value seen.
    pub fn new(spec: Spec) -> Result<Self, Error> {
        spec.check()?;
        let grid = spec.grid();
        let ln_grid = grid.iter().map(|e| e.ln()).collect();
        let ln_threshold = spec.threshold.map_or(f64::INFINITY, f64::ln);
        let mut m = Martingale {
            spec,
            grid,
            ln_grid,
            ln_threshold,
            n: 0,
            steps: 0,
            log_sum: TwoSum::default(),
            components: [0.0; 3],
            log_m: TwoSum::default(),
            log_cusum: 0.0,
            log_sr: 0.0,
            alarms: 0,
            first_alarm: None,
        };
        m.restart();
        Ok(m)
    }

    /// The parameters.
    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// The statistics as at construction: M = 1, C = R = 0, no alarm.
    pub fn reset(&mut self) {
        self.restart();
        self.n = 0;
        self.alarms = 0;
        self.first_alarm = None;
    }

    fn restart(&mut self) {
        self.steps = 0;
        self.log_sum = TwoSum::default();
        self.components = [1.0 / 3.0; 3];
        self.log_m = TwoSum::default();
        self.log_cusum = f64::NEG_INFINITY;
        self.log_sr = f64::NEG_INFINITY;
    }

    /// [`update`](Self::update) into new vectors: ln M, ln C, ln R and the
    /// alarm flag after each p-value.
    #[allow(clippy::type_complexity)]
    pub fn update_owned(
        &mut self,
        p: &[f64],
    ) -> Result<(Vec<f64>, Vec<f64>, Vec<f64>, Vec<bool>), Error> {
        let n = p.len();
        let (mut m, mut c, mut r, mut a) =
            (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![false; n]);
        let path = Path {
            log_martingale: &mut m,
            log_cusum: &mut c,
            log_shiryaev_roberts: &mut r,
            alarm: &mut a,
        };
        self.update(p, path)?;
        Ok((m, c, r, a))
    }

    /// The statistics after each p-value of `p` (in order), into `out`
    /// (slices as long as `p`). A batch with a p-value outside [0, 1] or
    /// NaN changes nothing.
    pub fn update(&mut self, p: &[f64], out: Path<'_>) -> Result<(), Error> {
        let n = p.len();
        if [
            out.log_martingale.len(),
            out.log_cusum.len(),
            out.log_shiryaev_roberts.len(),
        ]
        .iter()
        .chain(&[out.alarm.len()])
        .any(|&l| l != n)
        {
            return Err(Error::ShapeMismatch(format!(
                "{n} p-values need outputs of the same length"
            )));
        }
        crate::sequential::online_fdr::check_pvalues(p)?;
        crate::limits::check_room("pvalues", self.n, n)?;
        match self.spec.kind {
            Kind::Jumper => self.run(p, out, Self::jumper),
            Kind::Power => self.run(p, out, Self::power),
            Kind::Mixture => self.run(p, out, Self::mixture),
        }
        Ok(())
    }

    /// The statistics after one more p-value (checked).
    pub fn step(&mut self, p: f64) -> Result<Step, Error> {
        let mut s = Step::default();
        self.update(
            &[p],
            Path {
                log_martingale: core::slice::from_mut(&mut s.log_martingale),
                log_cusum: core::slice::from_mut(&mut s.log_cusum),
                log_shiryaev_roberts: core::slice::from_mut(&mut s.log_shiryaev_roberts),
                alarm: core::slice::from_mut(&mut s.alarm),
            },
        )?;
        Ok(s)
    }

    /// The loop, monomorphised per kind; `bet` advances the martingale by
    /// one p-value and returns ln r_t.
    #[inline(always)]
    fn run(&mut self, p: &[f64], out: Path<'_>, bet: impl Fn(&mut Self, f64) -> f64) {
        let Path {
            log_martingale,
            log_cusum,
            log_shiryaev_roberts,
            alarm,
        } = out;
        let outs = log_martingale
            .iter_mut()
            .zip(log_cusum.iter_mut())
            .zip(log_shiryaev_roberts.iter_mut())
            .zip(alarm.iter_mut());
        for (&x, (((om, oc), or), oa)) in p.iter().zip(outs) {
            self.steps += 1;
            let inc = bet(self, x);
            self.log_cusum = inc + self.log_cusum.max(0.0);
            self.log_sr = inc + log_add_exp(0.0, self.log_sr);
            let log_m = self.log_m.value();
            let stat = match self.spec.statistic {
                Statistic::Martingale => log_m,
                Statistic::Cusum => self.log_cusum,
                Statistic::ShiryaevRoberts => self.log_sr,
            };
            let alarm = stat >= self.ln_threshold;
            (*om, *oc, *or, *oa) = (log_m, self.log_cusum, self.log_sr, alarm);
            if alarm {
                self.alarms += 1;
                self.first_alarm.get_or_insert(self.n);
                if self.spec.on_alarm == OnAlarm::Restart {
                    self.restart();
                }
            }
            self.n += 1;
        }
    }

    /// Power: ln r = ln ε + (ε − 1) ln p (0 for ε = 1, +∞ at p = 0).
    #[inline(always)]
    fn power(&mut self, p: f64) -> f64 {
        let (e, ln_e) = (self.grid[0], self.ln_grid[0]);
        let lp = p.ln();
        self.add_log(lp);
        if e == 1.0 {
            return 0.0;
        }
        self.log_m = TwoSum {
            sum: self.power_log(),
            comp: 0.0,
        };
        if lp == f64::NEG_INFINITY {
            f64::INFINITY
        } else {
            ln_e + (e - 1.0) * lp
        }
    }

    /// S += ln p, compensated; −∞ (a p-value of 0) stays, without the
    /// NaN a compensated sum would make of it.
    #[inline(always)]
    fn add_log(&mut self, lp: f64) {
        if lp == f64::NEG_INFINITY || self.log_sum.sum == f64::NEG_INFINITY {
            self.log_sum = TwoSum {
                sum: f64::NEG_INFINITY,
                comp: 0.0,
            };
        } else {
            self.log_sum.add(lp);
        }
    }

    /// The power martingale's ln M from (t, S).
    fn power_log(&self) -> f64 {
        let e = self.grid[0];
        if e == 1.0 || self.steps == 0 {
            return 0.0;
        }
        let t = self.steps as f64;
        if self.log_sum.sum == f64::NEG_INFINITY {
            return f64::INFINITY;
        }
        t * self.ln_grid[0] + (e - 1.0) * self.log_sum.value()
    }

    /// Mixture: ln M recomputed from (t, S); ln r its change (as nonconform:
    /// 0 from +∞ to +∞).
    #[inline(always)]
    fn mixture(&mut self, p: f64) -> f64 {
        let before = self.log_m.sum;
        self.add_log(p.ln());
        let after = self.mixture_log();
        self.log_m = TwoSum {
            sum: after,
            comp: 0.0,
        };
        if after == f64::INFINITY {
            if before == f64::INFINITY {
                0.0
            } else {
                f64::INFINITY
            }
        } else {
            after - before
        }
    }

    /// ln of the mean over the grid of e^{L_i}, L_i = t ln ε_i + (ε_i − 1)S,
    /// summed outward from the largest L_i.
    fn mixture_log(&self) -> f64 {
        let (g, lg) = (&self.grid, &self.ln_grid);
        let k = g.len();
        if self.steps == 0 {
            return 0.0;
        }
        let t = self.steps as f64;
        let s = self.log_sum.sum;
        if s == f64::NEG_INFINITY {
            // A p-value of 0: every ε < 1 has +∞, ε = 1 has 0.
            return if g[0] < 1.0 { f64::INFINITY } else { 0.0 };
        }
        let s = self.log_sum.value();
        let l = |i: usize| t * lg[i] + (g[i] - 1.0) * s;
        // L is concave in ε with its maximum at ε* = t/(−S); start at the
        // nearest grid point and climb to the grid's largest.
        let step = if k > 1 {
            (1.0 - g[0]) / (k - 1) as f64
        } else {
            1.0
        };
        let star = if s < 0.0 { t / -s } else { f64::INFINITY };
        let guess = if step > 0.0 {
            ((star - g[0]) / step).round().clamp(0.0, (k - 1) as f64) as usize
        } else {
            k - 1
        };
        let mut top = guess;
        let mut best = l(top);
        while top + 1 < k {
            let next = l(top + 1);
            if next <= best {
                break;
            }
            (top, best) = (top + 1, next);
        }
        while top > 0 {
            let next = l(top - 1);
            if next <= best {
                break;
            }
            (top, best) = (top - 1, next);
        }
        let mut sum = 1.0;
        for i in (top + 1)..k {
            let d = l(i) - best;
            if d < -NEGLIGIBLE {
                break;
            }
            sum += d.exp();
        }
        for i in (0..top).rev() {
            let d = l(i) - best;
            if d < -NEGLIGIBLE {
                break;
            }
            sum += d.exp();
        }
        best + sum.ln() - (k as f64).ln()
    }

    /// Simple jumper: redistribute a fraction J, bet 1 + ε(p − ½), keep the
    /// fractions; ln r = ln of the total's ratio.
    #[inline(always)]
    fn jumper(&mut self, p: f64) -> f64 {
        let j = self.spec.jump;
        let [a, b, c] = self.components;
        let total = a + b + c;
        let share = j * total / 3.0;
        let stay = 1.0 - j;
        let (a, b, c) = (
            (stay * a + share) * (1.5 - p),
            stay * b + share,
            (stay * c + share) * (0.5 + p),
        );
        let after = a + b + c;
        self.components = [a / after, b / after, c / after];
        let inc = (after / total).ln();
        self.log_m.add(inc);
        inc
    }

    /// The state as plain data.
    pub fn parts(&self) -> Parts {
        Parts {
            n: self.n,
            steps: self.steps,
            log_sum: self.log_sum.sum,
            log_sum_error: self.log_sum.comp,
            components: self.components,
            log_martingale: self.log_m.sum,
            log_martingale_error: self.log_m.comp,
            log_cusum: self.log_cusum,
            log_shiryaev_roberts: self.log_sr,
            alarms: self.alarms,
            first_alarm: self.first_alarm,
        }
    }

    /// ln M_t now.
    pub fn log_martingale(&self) -> f64 {
        self.log_m.value()
    }

    /// A martingale from [`parts`](Self::parts), checked: no NaN; Σ ln p ≤
    /// 0; ln M recomputed from (t, S) for the power and mixture kinds;
    /// the jumper's fractions non-negative and summing to 1, the other
    /// kinds' those they start with; M ≤ C ≤ R; the counts consistent. Each failure names its field.
    pub fn from_parts(spec: Spec, p: &Parts) -> Result<Self, Error> {
        let bad = |name: &'static str, why: String| Err(Error::invalid(name, why));
        let mut m = Martingale::new(spec)?;
        let floats = [
            ("log_sum", p.log_sum),
            ("log_sum_error", p.log_sum_error),
            ("log_martingale", p.log_martingale),
            ("log_martingale_error", p.log_martingale_error),
            ("log_cusum", p.log_cusum),
            ("log_shiryaev_roberts", p.log_shiryaev_roberts),
        ];
        if let Some((name, v)) = floats.iter().find(|(_, v)| v.is_nan()) {
            return bad(name, format!("is {v}"));
        }
        check_counts(p)?;
        m.n = p.n;
        m.steps = p.steps;
        m.log_sum = TwoSum {
            sum: p.log_sum,
            comp: p.log_sum_error,
        };
        m.alarms = p.alarms;
        m.first_alarm = p.first_alarm;
        // Only the jumper splits its capital, and only after a step; every
        // other state stores the fractions a start gives (m's, from `new`).
        let at_start = m.spec.kind != Kind::Jumper || p.steps == 0;
        if at_start && p.components.map(f64::to_bits) != m.components.map(f64::to_bits) {
            return bad(
                "components",
                format!(
                    "{:?}: a {} martingale {} keeps the fractions {:?}",
                    p.components,
                    m.spec.kind.name(),
                    if p.steps == 0 {
                        "at its start"
                    } else {
                        "always"
                    },
                    m.components
                ),
            );
        }
        match m.spec.kind {
            Kind::Jumper => {
                let c = p.components;
                let total: f64 = c.iter().sum();
                if c.iter().any(|x| !(x.is_finite() && *x >= 0.0)) || (total - 1.0).abs() > 1e-9 {
                    return bad(
                        "components",
                        format!("{c:?} are not fractions of the capital summing to 1"),
                    );
                }
                if p.log_martingale.is_infinite() || !p.log_martingale_error.is_finite() {
                    return bad(
                        "log_martingale",
                        format!("{} is not a jumper's log-capital", p.log_martingale),
                    );
                }
                m.components = c;
                m.log_m = TwoSum {
                    sum: p.log_martingale,
                    comp: p.log_martingale_error,
                };
            }
            Kind::Power | Kind::Mixture => {
                let want = if m.spec.kind == Kind::Power {
                    m.power_log()
                } else {
                    m.mixture_log()
                };
                if p.log_martingale != want || p.log_martingale_error != 0.0 {
                    return bad(
                        "log_martingale",
                        format!(
                            "{} disagrees with the {} steps and Σ ln p, which give {want}",
                            p.log_martingale, p.steps
                        ),
                    );
                }
                m.log_m = TwoSum {
                    sum: p.log_martingale,
                    comp: 0.0,
                };
            }
        }
        check_order(p)?;
        m.log_cusum = p.log_cusum;
        m.log_sr = p.log_shiryaev_roberts;
        Ok(m)
    }
}

fn bad<T>(name: &'static str, why: String) -> Result<T, Error> {
    Err(Error::invalid(name, why))
}

/// The counts of a stored state, and Σ ln p.
fn check_counts(p: &Parts) -> Result<(), Error> {
    // n counts every p-value since construction: §5's bound of a count.
    crate::limits::COUNT.named("n").check(p.n)?;
    if p.steps > p.n {
        return bad(
            "steps",
            format!(
                "{} steps since the start but {} p-values in all",
                p.steps, p.n
            ),
        );
    }
    if p.alarms > p.n || (p.alarms > 0) != p.first_alarm.is_some() {
        return bad(
            "alarms",
            format!(
                "{} alarms disagree with the first alarm {:?} among {} p-values",
                p.alarms, p.first_alarm, p.n
            ),
        );
    }
    if p.first_alarm.is_some_and(|a| a >= p.n) {
        return bad(
            "first_alarm",
            format!("{:?} is beyond the {} p-values", p.first_alarm, p.n),
        );
    }
    // The terms ln p are ≤ 0, so the rounded partial sums only grow in
    // magnitude and each step's rounding error is at most 2⁻⁵³·|S|: the
    // accumulated error stays within steps·2⁻⁵²·|S| (0 at S = −∞, which
    // the sum keeps exactly, and before the first step).
    let error_bound = if p.log_sum.is_finite() {
        p.steps as f64 * f64::EPSILON * p.log_sum.abs()
    } else {
        0.0
    };
    if p.log_sum > 0.0
        || !p.log_sum_error.is_finite()
        || p.log_sum_error.abs() > error_bound
        || (p.steps == 0 && p.log_sum != 0.0)
    {
        return bad(
            "log_sum",
            format!(
                "Σ ln p = {} + {} is not a sum of {} logs of p-values",
                p.log_sum, p.log_sum_error, p.steps
            ),
        );
    }
    Ok(())
}

/// M ≤ C ≤ R after a p-value, C = R = 0 before one.
fn check_order(p: &Parts) -> Result<(), Error> {
    // ln C tracks ln M through the ratios, a rounding apart per step; ln M
    // is the compensated value (the jumper's error term is part of it).
    let log_m = p.log_martingale + p.log_martingale_error;
    let slack = 1e-6 * (1.0 + log_m.abs() + p.log_cusum.abs());
    let ordered = log_m <= p.log_cusum + slack && p.log_cusum <= p.log_shiryaev_roberts + slack;
    let fresh = p.steps == 0;
    if fresh && (p.log_martingale != 0.0 || p.log_martingale_error != 0.0) {
        return bad(
            "log_martingale",
            format!(
                "{} + {} before the first p-value since the start, where M = 1",
                p.log_martingale, p.log_martingale_error
            ),
        );
    }
    let initial = p.log_cusum == f64::NEG_INFINITY && p.log_shiryaev_roberts == f64::NEG_INFINITY;
    if (fresh && !initial) || (!fresh && (initial || !ordered)) {
        return bad(
            "log_cusum",
            format!(
                "ln M = {} ≤ ln C = {} ≤ ln R = {} must hold after a p-value (and C = R = 0 \
                 before one)",
                p.log_martingale, p.log_cusum, p.log_shiryaev_roberts
            ),
        );
    }
    Ok(())
}
