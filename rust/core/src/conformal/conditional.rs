//! Calibration-conditional conformal p-values (Bates et al. 2023, §3;
//! contract §11).
//!
//! Given the calibration set, the marginal p-value of an inlier is not
//! uniform: `P(p ≤ i/(n+1) | calibration) = U₍ᵢ₎`, the i-th smallest of n
//! independent uniforms. A sequence `b₁ ≤ … ≤ bₙ` with
//! `P(U₍ᵢ₎ ≤ bᵢ for all i) ≥ 1 − δ` makes `h(i/(n+1)) = bᵢ`, `h(1) = 1` a
//! p-value that is valid conditionally on the calibration set with
//! probability 1 − δ. The sequences:
//!
//! * generalised Simes (Sarkar 2008), with `k` (default ⌊n/2⌋):
//!   `b_{n+1−j} = 1 − δ^{1/k} (∏_{l=j−k+1}^{j} l / ∏_{l=n−k+1}^{n} l)^{1/k}`
//!   for `j ≥ k`, else 1;
//! * DKWM: `h(p) = min(1, p + √(ln(2/δ)/(2n)))` (Dvoretzky–Kiefer–Wolfowitz
//!   with Massart's constant);
//! * Monte Carlo: the smaller of the Simes sequence (`k = ⌊n/2⌋`) and the
//!   iterated-logarithm boundary `i/n + c·√(i(n−i))/n^{3/2}` (linear beyond
//!   `i = ⌊n/2⌋`), whose constant `c = c_n(δ − γ)` has its correction `γ`
//!   set by simulating uniform order statistics so that the boundary is
//!   crossed with probability δ (needs n ≥ 17; below, DKWM).

use super::uniform;
use crate::error::{named_enum, Error};
use crate::limits::{ADJUSTED_N, MC_SIMULATIONS, SIMES_K};
use crate::numeric::sum::TwoSum;
use crate::streaming::kll::splitmix64;
use rayon::prelude::*;

/// The smallest calibration set for the Monte Carlo adjustment (its
/// boundary needs `ln ln ln n > 0`); smaller sets use DKWM.
pub const MONTE_CARLO_MIN_N: u64 = 17;

/// A calibration-conditional adjustment as the user names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conditional {
    /// `"simes"`.
    Simes,
    /// `"dkwm"`.
    Dkwm,
    /// `"mc"`.
    MonteCarlo,
}

named_enum!(
    Conditional,
    "conditional",
    "expected None, 'simes', 'dkwm' or 'mc'",
    "simes" => Simes,
    "dkwm" => Dkwm,
    "mc" => MonteCarlo,
);

impl Conditional {
    /// The adjustment for n calibration scores: Simes with `simes_k`
    /// (default ⌊n/2⌋), DKWM, or the Monte Carlo boundary with its
    /// correction (DKWM below [`MONTE_CARLO_MIN_N`]; a correction is
    /// needed from there on).
    pub fn adjustment(
        self,
        n: u64,
        delta: f64,
        simes_k: Option<u64>,
        mc_correction: Option<f64>,
    ) -> Result<Adjustment, Error> {
        match self {
            Conditional::Simes => Adjustment::simes(n, delta, simes_k.unwrap_or((n / 2).max(1))),
            Conditional::Dkwm => Adjustment::dkwm(n, delta),
            Conditional::MonteCarlo => match mc_correction {
                Some(c) => Adjustment::monte_carlo(n, delta, c),
                None if n < MONTE_CARLO_MIN_N => Adjustment::dkwm(n, delta),
                None => Err(Error::invalid(
                    "mc_correction",
                    "conditional='mc' needs its correction (monte_carlo_correction)",
                )),
            },
        }
    }
}

/// A calibration-conditional adjustment of marginal p-values.
#[derive(Debug, Clone, PartialEq)]
pub enum Adjustment {
    /// `min(1, p + epsilon)`.
    Dkwm {
        /// √(ln(2/δ)/(2n)).
        epsilon: f64,
    },
    /// `b_i` for rank `i = max(1, ⌈(n+1)p⌉)` (`b[i−1]`), 1 for `i > n`.
    Table {
        /// b₁…bₙ.
        b: Vec<f64>,
    },
}

fn check_delta(delta: f64) -> Result<(), Error> {
    if delta > 0.0 && delta < 1.0 {
        Ok(())
    } else {
        Err(Error::invalid(
            "delta",
            format!("must be in (0, 1), got {delta}"),
        ))
    }
}

fn check_n(n: u64) -> Result<(), Error> {
    if n == 0 {
        Err(Error::invalid(
            "calibration",
            "needs at least one calibration score",
        ))
    } else {
        Ok(())
    }
}

/// n of a tabulated adjustment (Simes, Monte Carlo): within [`ADJUSTED_N`],
/// checked before the table is allocated.
fn check_table_n(n: u64) -> Result<(), Error> {
    if n > ADJUSTED_N.max {
        return Err(Error::invalid(
            "conditional",
            format!(
                "the Simes and Monte Carlo adjustments tabulate one bound per calibration \
                 score, at most {} of them; got {n} (a sketch counts every score seen): \
                 use conditional='dkwm', whose cost does not grow with n",
                ADJUSTED_N.max
            ),
        ));
    }
    check_n(n)
}

/// The generalised Simes sequence b₁…bₙ.
fn simes_sequence(n: u64, delta: f64, k: u64) -> Vec<f64> {
    let k = k.clamp(1, n);
    let nk = n as usize;
    // w[j] = Σ_{l=j−k+1}^{j} ln l for j = k..n, as a sliding double-double
    // sum (each window to a few ulp, whatever n).
    let mut window = TwoSum::default();
    for l in 1..=k {
        window.add((l as f64).ln());
    }
    let mut w = vec![0.0f64; nk + 1];
    w[k as usize] = window.value();
    for j in k + 1..=n {
        window.add((j as f64).ln());
        window.add(-((j - k) as f64).ln());
        w[j as usize] = window.value();
    }
    let top = w[nk];
    let kf = k as f64;
    let base = delta.ln() / kf;
    (1..=n)
        .map(|i| {
            let j = n + 1 - i;
            if j < k {
                1.0
            } else {
                // 1 − exp(x) as −expm1(x): no cancellation near x = 0.
                -(base + (w[j as usize] - top) / kf).exp_m1()
            }
        })
        .collect()
}

/// The constants of the iterated-logarithm boundary: `c_n(x) =
/// (−ln(−ln(1 − x)) + a)/b`.
fn iterated_log(n: u64) -> (f64, f64) {
    let ll = (n as f64).ln().ln();
    let a = 2.0 * ll + 0.5 * ll.ln() - 0.5 * core::f64::consts::PI.ln();
    (a, (2.0 * ll).sqrt())
}

/// `v_i` of the boundary `i/n + c·v_i` for i = 1..n: `√(i(n−i))/n^{3/2}`
/// up to `i = ⌊n/2⌋`, then continued linearly with the last step's slope.
fn boundary_weights(n: u64) -> Vec<f64> {
    let nf = n as f64;
    let scale = nf * nf.sqrt();
    let kl = (n / 2).max(2) as usize;
    let mut v: Vec<f64> = (1..=n)
        .map(|i| {
            let i = i as f64;
            (i * (nf - i)).sqrt() / scale
        })
        .collect();
    let slope = v[kl - 1] - v[kl - 2];
    let last = v[kl - 1];
    for (idx, e) in v.iter_mut().enumerate().skip(kl) {
        *e = last + slope * (idx + 1 - kl) as f64;
    }
    v
}

/// The Monte Carlo boundary `min(Simes_i, i/n + c_n(δ − γ)·v_i)`, i = 1..n,
/// computed in the order of the reference implementation (the boundary's
/// values first, then its linear continuation).
fn hybrid_sequence(n: u64, delta: f64, correction: f64) -> Vec<f64> {
    let nf = n as f64;
    let (a, b) = iterated_log(n);
    let x = delta - correction;
    let c = (-(-(1.0 - x).ln()).ln() + a) / b;
    let scale = nf * nf.sqrt();
    let mut bound: Vec<f64> = (1..=n)
        .map(|i| {
            let i = i as f64;
            i / nf + c * (i * (nf - i)).sqrt() / scale
        })
        .collect();
    let kl = (n / 2).max(2) as usize;
    let slope = bound[kl - 1] - bound[kl - 2];
    let last = bound[kl - 1];
    for (idx, e) in bound.iter_mut().enumerate().skip(kl) {
        *e = last + slope * ((idx + 1) as f64 - kl as f64);
    }
    let simes = simes_sequence(n, delta, (n / 2).max(1));
    bound
        .iter()
        .zip(&simes)
        .map(|(&h, &s)| h.min(s).min(1.0))
        .collect()
}

impl Adjustment {
    /// Generalised Simes with parameter `k` (1 ≤ k ≤ n; larger k are capped
    /// at n).
    pub fn simes(n: u64, delta: f64, k: u64) -> Result<Self, Error> {
        check_table_n(n)?;
        check_delta(delta)?;
        SIMES_K.check(k)?;
        Ok(Adjustment::Table {
            b: simes_sequence(n, delta, k),
        })
    }

    /// DKWM: `min(1, p + √(ln(2/δ)/(2n)))`.
    pub fn dkwm(n: u64, delta: f64) -> Result<Self, Error> {
        check_n(n)?;
        check_delta(delta)?;
        Ok(Adjustment::Dkwm {
            epsilon: ((2.0 / delta).ln() / (2.0 * n as f64)).sqrt(),
        })
    }

    /// The Monte Carlo boundary with the correction `γ` of
    /// [`monte_carlo_correction`]; DKWM for n < [`MONTE_CARLO_MIN_N`].
    pub fn monte_carlo(n: u64, delta: f64, correction: f64) -> Result<Self, Error> {
        check_n(n)?;
        check_delta(delta)?;
        if n < MONTE_CARLO_MIN_N {
            return Self::dkwm(n, delta);
        }
        check_table_n(n)?;
        if !(correction < delta && correction > delta - 1.0) {
            return Err(Error::invalid(
                "mc_correction",
                format!("must be in (delta - 1, delta), got {correction}"),
            ));
        }
        Ok(Adjustment::Table {
            b: hybrid_sequence(n, delta, correction),
        })
    }

    /// The adjusted p-value of marginal `p` whose rank among n + 1 is
    /// `t = (n + 1)·p` (fractional for randomised ties).
    #[inline]
    pub fn apply(&self, p: f64, t: f64, n: u64) -> f64 {
        match self {
            Adjustment::Dkwm { epsilon } => (p + epsilon).min(1.0),
            Adjustment::Table { b } => {
                let i = t.ceil().max(1.0);
                if i > n as f64 {
                    1.0
                } else {
                    b[i as usize - 1]
                }
            }
        }
    }
}

/// The work of [`monte_carlo_correction`] in draws, `simulations · n`
/// (saturating): the size the caller's thread policy weighs.
pub fn monte_carlo_work(n: u64, simulations: usize) -> usize {
    usize::try_from(n)
        .unwrap_or(usize::MAX)
        .saturating_mul(simulations)
}

/// The correction `γ` of the Monte Carlo boundary: the smallest γ in
/// `[δ − 1 + 10⁻⁶, δ − 10⁻⁶]` for which at most a fraction δ of
/// `simulations` sets of n uniform order statistics cross the boundary.
///
/// Each simulated set crosses exactly when `c_n(δ − γ)` is below its own
/// critical constant (or when it crosses the Simes part, for every γ), and
/// `c_n(δ − γ)` grows with γ; so γ follows from the order statistic of the
/// simulated constants, without a bisection. Simulation `s` draws n + 1
/// exponential spacings `−ln(1 − U)` from the SplitMix64 stream seeded with
/// `splitmix64(seed ⊕ s)`; U₍ᵢ₎ are their normalised partial sums. Cost:
/// `simulations · n` draws (in parallel on the installed thread pool; the
/// result does not depend on the number of threads).
pub fn monte_carlo_correction(
    n: u64,
    delta: f64,
    simulations: usize,
    seed: u64,
) -> Result<f64, Error> {
    // Bounded before anything is allocated: one constant per simulation,
    // n + 1 spacings per thread.
    MC_SIMULATIONS.check_usize(simulations)?;
    check_table_n(n)?;
    check_delta(delta)?;
    if n < MONTE_CARLO_MIN_N {
        return Err(Error::invalid(
            "calibration",
            format!("the Monte Carlo adjustment needs at least {MONTE_CARLO_MIN_N} calibration scores, got {n}"),
        ));
    }
    let nf = n as f64;
    let simes = simes_sequence(n, delta, (n / 2).max(1));
    let v = boundary_weights(n);
    let critical = |s: usize| -> f64 {
        let key = splitmix64(seed ^ s as u64);
        let spacings: Vec<f64> = (0..=n).map(|j| -(-uniform(key, j)).ln_1p()).collect();
        let mut total = TwoSum::default();
        for &e in &spacings {
            total.add(e);
        }
        let total = total.value();
        let mut partial = 0.0f64;
        let mut c = f64::NEG_INFINITY;
        for i in 1..=n {
            partial += spacings[(i - 1) as usize];
            let u = partial / total;
            let at = (i - 1) as usize;
            if u > simes[at] {
                return f64::INFINITY;
            }
            c = c.max((u - i as f64 / nf) / v[at]);
        }
        c
    };
    let mut constants: Vec<f64> = (0..simulations).into_par_iter().map(critical).collect();
    constants.sort_by(|a, b| b.total_cmp(a));
    // The largest number of crossings whose fraction is at most δ.
    let mut allowed = (delta * simulations as f64).floor() as usize;
    while allowed > 0 && allowed as f64 / simulations as f64 > delta {
        allowed -= 1;
    }
    while (allowed + 1) as f64 / simulations as f64 <= delta {
        allowed += 1;
    }
    let (lo, hi) = (delta - 1.0 + 1e-6, delta - 1e-6);
    if allowed >= simulations {
        return Ok(lo);
    }
    let c = constants[allowed];
    if c == f64::INFINITY {
        return Ok(hi);
    }
    let (a, b) = iterated_log(n);
    // c_n(x) = c  ⇔  x = 1 − exp(−exp(a − c·b)).
    let x = -(-(a - c * b).exp()).exp_m1();
    Ok((delta - x).clamp(lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monte_carlo_work_is_draws_saturating() {
        assert_eq!(monte_carlo_work(100, 1000), 100_000);
        assert_eq!(monte_carlo_work(u64::MAX, 2), usize::MAX);
    }

    /// P(U₍ᵢ₎ ≤ bᵢ for all i) by simulation: at least 1 − δ (with slack
    /// for the simulation's own error).
    fn coverage(b: &[f64], reps: usize) -> f64 {
        let n = b.len() as u64;
        let mut ok = 0usize;
        for r in 0..reps {
            let mut u: Vec<f64> = (0..n).map(|j| uniform(1000 + r as u64, j)).collect();
            u.sort_by(f64::total_cmp);
            if u.iter().zip(b).all(|(x, y)| x <= y) {
                ok += 1;
            }
        }
        ok as f64 / reps as f64
    }

    #[test]
    fn simes_matches_its_product_form() {
        let (n, delta, k) = (20u64, 0.1, 7u64);
        let Adjustment::Table { b } = Adjustment::simes(n, delta, k).unwrap() else {
            panic!()
        };
        for i in 1..=n {
            let j = n + 1 - i;
            let want = if j < k {
                1.0
            } else {
                let num: f64 = (j - k + 1..=j).map(|l| l as f64).product();
                let den: f64 = (n - k + 1..=n).map(|l| l as f64).product();
                1.0 - delta.powf(1.0 / k as f64) * (num / den).powf(1.0 / k as f64)
            };
            assert!((b[i as usize - 1] - want).abs() < 1e-14, "{i}");
        }
        assert!(b.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn sequences_hold_with_probability_one_minus_delta() {
        let (n, delta) = (60u64, 0.2);
        let Adjustment::Table { b } = Adjustment::simes(n, delta, n / 2).unwrap() else {
            panic!()
        };
        assert!(coverage(&b, 4000) >= 1.0 - delta - 0.02);
        let gamma = monte_carlo_correction(n, delta, 2000, 5).unwrap();
        let Adjustment::Table { b } = Adjustment::monte_carlo(n, delta, gamma).unwrap() else {
            panic!()
        };
        let c = coverage(&b, 4000);
        assert!(c >= 1.0 - delta - 0.03 && c <= 1.0 - delta + 0.03, "{c}");
    }

    #[test]
    fn dkwm_and_bounds() {
        let a = Adjustment::dkwm(100, 0.05).unwrap();
        let eps = ((2.0f64 / 0.05).ln() / 200.0).sqrt();
        assert_eq!(a.apply(0.1, 10.1, 100), 0.1 + eps);
        assert_eq!(a.apply(0.99, 100.0, 100), 1.0);
        assert!(Adjustment::dkwm(0, 0.1).is_err());
        assert!(Adjustment::simes(10, 1.0, 2).is_err());
        assert!(Adjustment::simes(10, 0.1, 0).is_err());
        assert!(monte_carlo_correction(10, 0.1, 1000, 0).is_err());
        // Bounded simulations, refused before any is allocated.
        for sims in [0, 99, 10_000_001, usize::MAX] {
            let e = monte_carlo_correction(20, 0.1, sims, 0).unwrap_err();
            assert!(e.to_string().starts_with("mc_simulations"), "{e}");
        }
        assert!(Adjustment::simes(10, 0.1, (1 << 53) + 1).is_err());
        // Tables of at most 2^24 bounds, refused before allocating.
        let big = ADJUSTED_N.max + 1;
        for e in [
            Adjustment::simes(big, 0.1, 2).unwrap_err(),
            Adjustment::monte_carlo(big, 0.1, 0.0).unwrap_err(),
            monte_carlo_correction(big, 0.1, 100, 0).unwrap_err(),
            monte_carlo_correction(u64::MAX, 0.1, 100, 0).unwrap_err(),
        ] {
            assert!(e.to_string().contains("conditional='dkwm'"), "{e}");
        }
        assert!(Adjustment::dkwm(big, 0.1).is_ok());
        // n < 17: DKWM.
        assert_eq!(
            Adjustment::monte_carlo(10, 0.1, 0.0).unwrap(),
            Adjustment::dkwm(10, 0.1).unwrap()
        );
    }
}
