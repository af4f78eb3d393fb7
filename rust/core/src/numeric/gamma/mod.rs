//! The regularized incomplete gamma functions
//! `P(a, x) = γ(a, x)/Γ(a)` and `Q(a, x) = Γ(a, x)/Γ(a) = 1 − P(a, x)`
//! (contract §10, gamma scaling), to about 1e-14 relative accuracy for
//! `a > 0`, `x >= 0` in f64.
//!
//! Four evaluations, each where it converges fast and loses no digits:
//!
//! * the power series of `P` for `x < a + 1` (positive terms, no
//!   cancellation);
//! * the Legendre continued fraction of `Q` for `x >= a + 1`, and for
//!   `x >= 1.1` when `a < 1` (its depth found by modified Lentz, its value
//!   evaluated backward, which does not accumulate a rounding per step);
//! * for `a < 0.5`, `x < 1.1`, `Q` directly as `−expm1(a ln x − lnΓ(1+a))`
//!   minus an alternating series, so that `Q` keeps its digits where `P` is
//!   close to 1;
//! * Temme's uniform asymptotic expansion (DLMF 8.12) for `a >= 50` with
//!   `|η| <= 1`: the series and the continued fraction need O(√a) terms
//!   near `x = a`, the expansion a fixed 8.
//!
//! The prefactor `xᵃ e⁻ˣ / Γ(a)` is formed as
//! `exp(a·(ln(1+μ) − μ)) · √(a/2π) / Γ*(a)` with `μ = (x − a)/a` for
//! `a >= 10`: the naive `exp(a ln x − x − lnΓ(a))` subtracts numbers of
//! size `a ln a` and would lose `log10(a ln a)` digits.

mod lanes;
mod temme;

pub use lanes::LANES;

use core::f64::consts::PI;

const EPS: f64 = f64::EPSILON;
/// Iteration cap of the series and the continued fraction; with the
/// regions above they converge in a few hundred steps at most.
const MAX_ITER: usize = 2_000;
/// Temme's expansion is used from this `a` on (truncation error of its 8
/// terms < 1e-17 relative there).
const TEMME_MIN_A: f64 = 50.0;
const EULER_GAMMA: f64 = 0.577_215_664_901_532_9;

/// `ln(1 + μ) − μ` without cancellation for small `|μ|` (`μ > −1`).
///
/// With `r = μ/(2 + μ)`, `ln(1 + μ) = 2 atanh r` and `μ − 2r = rμ`, so
/// `ln(1 + μ) − μ = −rμ + 2r³(1/3 + r²/5 + …)`.
pub fn log1pmx(mu: f64) -> f64 {
    if mu.abs() >= 0.5 {
        return mu.ln_1p() - mu;
    }
    let r = mu / (2.0 + mu);
    let r2 = r * r;
    let mut term = 1.0;
    let mut sum = 0.0;
    let mut j = 3.0;
    // |r| <= 1/3: r^2j < 1e-17 after 18 terms.
    for _ in 0..20 {
        sum += term / j;
        term *= r2;
        j += 2.0;
    }
    -r * mu + 2.0 * r * r2 * sum
}

/// `ln(x/a) − (x − a)/a`: `log1pmx(μ)` with `μ = (x − a)/a` near `x = a`;
/// far from it `ln x − ln a`, since `1 + μ` would lose `x` when `x ≪ a`.
fn log_ratio_minus(x: f64, a: f64) -> f64 {
    let mu = (x - a) / a;
    if mu.abs() < 0.5 {
        log1pmx(mu)
    } else {
        (x.ln() - a.ln()) - mu
    }
}

/// `ln Γ*(a)` for `a >= 10`, where `Γ(a) = √(2π/a) (a/e)^a Γ*(a)`: the
/// Stirling series, 7 terms (truncation < 1e-17 at `a = 10`).
fn ln_gamma_star(a: f64) -> f64 {
    const C: [f64; 7] = [
        1.0 / 12.0,
        -1.0 / 360.0,
        1.0 / 1260.0,
        -1.0 / 1680.0,
        1.0 / 1188.0,
        -691.0 / 360_360.0,
        1.0 / 156.0,
    ];
    let z = 1.0 / (a * a);
    let mut s = 0.0;
    for c in C.iter().rev() {
        s = s * z + c;
    }
    s / a
}

/// `a` shifted to `z = a + n >= 10` for the recurrence
/// `Γ(a) = Γ(a + n) / (a (a+1) … (a+n−1))`: `(z, dz, prod)` with `z` the
/// rounded `a + n`, `dz = a + n − z` exactly, and the product. `z` carries
/// a rounding of up to half an ulp of 10 (~9e-16) that `Γ(z)` would
/// amplify by `z ψ(z)` (~25 ulp): the callers correct for `dz` with
/// `lnΓ(z + dz) = lnΓ(z) + ψ(z) dz`.
fn shift_up(a: f64) -> (f64, f64, f64) {
    let mut z = a;
    let mut n = 0.0;
    let mut prod = 1.0;
    while z < 10.0 {
        prod *= z;
        z += 1.0;
        n += 1.0;
    }
    // Exact: z − n is a multiple of ulp(z) = 2⁻⁴⁹ below 11 (53 bits), and
    // a − (z − n), the roundings of the additions, is a multiple of the
    // smaller of the two ulps below 2⁻⁴⁸.
    (z, a - (z - n), prod)
}

/// ψ(z) for `z >= 10` to ~1e-6 relative (it only multiplies a rounding).
fn digamma_large(z: f64) -> f64 {
    z.ln() - 0.5 / z - 1.0 / (12.0 * z * z)
}

/// `ln Γ(a)` for `a > 0`: the Stirling series after shifting `a` to
/// `>= 10` with the recurrence `Γ(a) = Γ(a + n) / (a (a+1) … (a+n−1))`.
pub fn ln_gamma(a: f64) -> f64 {
    let (z, dz, prod) = shift_up(a);
    0.5 * (2.0 * PI / z).ln() + z * (z.ln() - 1.0) + ln_gamma_star(z) - prod.ln()
        + digamma_large(z) * dz
}

/// `ln Γ(1 + a)` for `0 <= a < 0.5` by its Taylor series
/// `−γa + Σ_{k>=2} (−1)^k (ζ(k) − 1) aᵏ/k − (ln(1 + a) − a)`: the ζ(k) − 1
/// decay like 2⁻ᵏ, so the series converges like 4⁻ᵏ and keeps relative
/// accuracy as `a → 0`, where `lnΓ(1 + a) ≈ −γa`.
fn ln_gamma_1p_small(a: f64) -> f64 {
    let mut s = 0.0;
    let mut p = a * a;
    let mut sign = 1.0;
    for (k, zm1) in ZETA_MINUS_ONE.iter().enumerate() {
        s += sign * zm1 * p / (k + 2) as f64;
        p *= a;
        sign = -sign;
    }
    -EULER_GAMMA * a + s - log1pmx(a)
}

/// ζ(k) − 1 for k = 2, 3, …, 29.
#[allow(clippy::unreadable_literal, clippy::excessive_precision)]
const ZETA_MINUS_ONE: [f64; 28] = [
    0.6449340668482264,
    0.2020569031595943,
    0.08232323371113819,
    0.03692775514336993,
    0.01734306198444914,
    0.008349277381922827,
    0.00407735619794434,
    0.0020083928260822143,
    0.0009945751278180853,
    0.0004941886041194645,
    0.0002460865533080483,
    0.00012271334757848915,
    6.124813505870483e-05,
    3.058823630702049e-05,
    1.528225940865187e-05,
    7.637197637899763e-06,
    3.81729326499984e-06,
    1.908212716553939e-06,
    9.539620338727962e-07,
    4.769329867878064e-07,
    2.38450502727733e-07,
    1.1921992596531106e-07,
    5.960818905125948e-08,
    2.980350351465228e-08,
    1.4901554828365043e-08,
    7.45071178983543e-09,
    3.725334024788457e-09,
    1.862659723513049e-09,
];

/// `1/Γ(a)` for `0 < a < 10`: `a/Γ(1+a)` from the series of `lnΓ(1+a)`
/// below 0.5 (accurate as `a → 0`), else the recurrence up to `z >= 10` and
/// `Γ(z) = z^(z−½) e⁻ᶻ √(2π) Γ*(z)` with correctly rounded powers (a few
/// ulp, where `exp(lnΓ(a))` would lose `log10|lnΓ(a)|` digits).
fn inv_gamma_small(a: f64) -> f64 {
    if a < 0.5 {
        return a * (-ln_gamma_1p_small(a)).exp();
    }
    let (z, dz, prod) = shift_up(a);
    prod / (z.powf(z - 0.5) * (-z).exp() * (2.0 * PI).sqrt() * ln_gamma_star(z).exp())
        * (1.0 - digamma_large(z) * dz)
}

/// `xᵃ e⁻ˣ / Γ(a) = x ∂P/∂x` (the common prefactor of the series and the
/// fraction; the derivative in `ln x` of `P`).
pub fn prefactor(a: f64, x: f64) -> f64 {
    Order::new(a).prefactor(x)
}

/// `Σ_{n>=0} xⁿ / ((a+1)…(a+n))`, so that `P = prefactor/a · series`.
fn p_series(a: f64, x: f64) -> f64 {
    let mut term = 1.0;
    let mut sum = 1.0;
    let mut d = a;
    for _ in 0..MAX_ITER {
        d += 1.0;
        term *= x / d;
        sum += term;
        if term <= sum * EPS {
            break;
        }
    }
    sum
}

/// The continued fraction of `Q / prefactor`
/// `1/(b₀ + a₁/(b₁ + a₂/(b₂ + …)))`, `a_i = −i(i − a)`, `b_i = x + 2i + 1 − a`.
///
/// The modified Lentz pass finds the depth `n` at which it converges; the
/// value is then evaluated backward from depth `n + TAIL`. Lentz's running
/// product accumulates a rounding per step (up to ~30 ulp over the 40–80
/// steps near `x ≈ 1`) and stops with a truncation error of a few ulp; the
/// backward evaluation damps the rounding of each step, and the extra
/// depth leaves the truncation far below an ulp.
fn q_fraction(a: f64, x: f64) -> f64 {
    /// Extra depth of the backward evaluation.
    const TAIL: usize = 10;
    let n = lentz_depth(a, x) + TAIL;
    let mut f = x + (2 * n + 1) as f64 - a;
    for i in (1..=n).rev() {
        let i_f = i as f64;
        f = (x + (2 * i - 1) as f64 - a) - i_f * (i_f - a) / f;
    }
    1.0 / f
}

/// The depth at which the modified Lentz evaluation of [`q_fraction`]'s
/// continued fraction converges.
fn lentz_depth(a: f64, x: f64) -> usize {
    const TINY: f64 = 1e-300;
    let mut b = x + 1.0 - a;
    let mut c = 1.0 / TINY;
    let mut d = 1.0 / b;
    for i in 1..MAX_ITER {
        let i_f = i as f64;
        let an = -i_f * (i_f - a);
        b += 2.0;
        d = an * d + b;
        if d.abs() < TINY {
            d = TINY;
        }
        c = b + an / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let delta = d * c;
        if (delta - 1.0).abs() <= EPS {
            return i;
        }
    }
    MAX_ITER
}

/// `Q(a, x)` for `a < 0.5`, `0 < x < 1.1`:
/// `Q = −expm1(a ln x − lnΓ(1+a)) − xᵃ/Γ(1+a) · a Σ_{n>=1} (−x)ⁿ/(n!(a+n))`.
fn q_small_a(a: f64, x: f64, lg: f64) -> f64 {
    let head = -(a * x.ln() - lg).exp_m1();
    let mut term = 1.0;
    let mut sum = 0.0;
    for n in 1..60u8 {
        let n = f64::from(n);
        term *= -x / n;
        let t = term / (a + n);
        sum += t;
        if t.abs() <= sum.abs() * EPS {
            break;
        }
    }
    head - (a * x.ln() - lg).exp() * a * sum
}

/// `(P, Q)` by Temme's expansion (`a >= 50`, `|η| <= 1`).
fn temme(a: f64, x: f64) -> (f64, f64) {
    let mu = (x - a) / a;
    let u = -a * log1pmx(mu); // = aη²/2 >= 0
    let eta = (2.0 * u / a).sqrt().copysign(mu);
    // Σ_k c_k(η) a⁻ᵏ, each c_k by Horner in η.
    let mut s = 0.0;
    for row in temme::TEMME.iter().rev() {
        let mut c = 0.0;
        for &d in row.iter().rev() {
            c = c * eta + d;
        }
        s = s / a + c;
    }
    let tail = (-u).exp() / (2.0 * PI * a).sqrt() * s;
    // ½ erfc(√u) = ½ Q(½, u).
    let half_erfc = 0.5 * Order::new(0.5).q(u);
    if mu >= 0.0 {
        let q = half_erfc + tail;
        (1.0 - q, q)
    } else {
        let p = half_erfc - tail;
        (p, 1.0 - p)
    }
}

/// One order `a` of the incomplete gamma functions with its constants
/// (`1/Γ(a)` or `√(a/2π)/Γ*(a)`, `lnΓ(a)`, `lnΓ(1+a)`) computed once: the
/// scalings evaluate `Q(k, x)` for one `k` and many `x`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Order {
    a: f64,
    /// `a < 10`: `1/Γ(a)`; else `√(a/2π)/Γ*(a)`.
    norm: f64,
    ln_gamma: f64,
    /// `lnΓ(1 + a)` for `a < 0.5`.
    ln_gamma_1p: f64,
}

impl Order {
    /// The order `a` (any value: outside `0 < a < ∞` every result is NaN).
    pub fn new(a: f64) -> Self {
        let valid = a > 0.0 && a.is_finite();
        let norm = if !valid {
            f64::NAN
        } else if a >= 10.0 {
            (a / (2.0 * PI)).sqrt() / ln_gamma_star(a).exp()
        } else {
            inv_gamma_small(a)
        };
        Order {
            a,
            norm,
            ln_gamma: if valid && a < 10.0 {
                ln_gamma(a)
            } else {
                f64::NAN
            },
            ln_gamma_1p: if valid && a < 0.5 {
                ln_gamma_1p_small(a)
            } else {
                f64::NAN
            },
        }
    }

    /// `a`.
    pub fn a(&self) -> f64 {
        self.a
    }

    /// `xᵃ e⁻ˣ / Γ(a)`.
    pub fn prefactor(&self, x: f64) -> f64 {
        let a = self.a;
        if a >= 10.0 {
            (a * log_ratio_minus(x, a)).exp() * self.norm
        } else if x < 700.0 && a * x.ln() < 700.0 {
            // Correctly rounded xᵃ and e⁻ˣ: no exponent of size |a ln x| to round.
            x.powf(a) * (-x).exp() * self.norm
        } else {
            // xᵃ may overflow; the value's own condition number is ~x here.
            (a * x.ln() - x - self.ln_gamma).exp()
        }
    }

    /// `(P(a, x), Q(a, x))`, see [`gamma_pq`].
    pub fn pq(&self, x: f64) -> (f64, f64) {
        self.eval(x, true)
    }

    /// `Q(a, x)`, equal to `pq(x).1`, without computing `P` where `Q` does
    /// not need it.
    pub fn q(&self, x: f64) -> f64 {
        self.eval(x, false).1
    }

    fn eval(&self, x: f64, want_p: bool) -> (f64, f64) {
        let a = self.a;
        if !(a > 0.0 && a.is_finite() && x >= 0.0) {
            return (f64::NAN, f64::NAN);
        }
        if x == 0.0 {
            return (0.0, 1.0);
        }
        if x == f64::INFINITY {
            return (1.0, 0.0);
        }
        if a >= TEMME_MIN_A && log1pmx((x - a) / a) >= -0.5 {
            // |η| <= 1.
            return temme(a, x);
        }
        if x >= a + 1.0 || (a < 1.0 && x >= 1.1) {
            let q = (self.prefactor(x) * q_fraction(a, x)).min(1.0);
            return (1.0 - q, q);
        }
        if a < 0.5 && x < 1.1 {
            let q = q_small_a(a, x, self.ln_gamma_1p);
            let p = if want_p {
                (self.prefactor(x) / a * p_series(a, x)).min(1.0)
            } else {
                f64::NAN
            };
            return (p, q);
        }
        let p = (self.prefactor(x) / a * p_series(a, x)).min(1.0);
        (p, 1.0 - p)
    }
}

/// `(P(a, x), Q(a, x))`, the regularized lower and upper incomplete gamma
/// functions, each to about 1e-14 relative accuracy (`P + Q = 1` up to
/// rounding, the smaller one computed directly). In the far tails, where
/// the value is below ~1e-30, the relative error grows like ε times the
/// exponent's magnitude (`|a ln x − x|`), as the function's own condition
/// number does.
///
/// Domain: `a > 0` finite and `x >= 0`; `x = +inf` gives `(1, 0)`; NaN or
/// an argument outside the domain gives `(NaN, NaN)`.
pub fn gamma_pq(a: f64, x: f64) -> (f64, f64) {
    Order::new(a).pq(x)
}

/// `P(a, x) = γ(a, x)/Γ(a)`, see [`gamma_pq`].
pub fn gamma_p(a: f64, x: f64) -> f64 {
    gamma_pq(a, x).0
}

/// `Q(a, x) = Γ(a, x)/Γ(a)`, see [`gamma_pq`].
pub fn gamma_q(a: f64, x: f64) -> f64 {
    gamma_pq(a, x).1
}

#[cfg(test)]
mod tests;
