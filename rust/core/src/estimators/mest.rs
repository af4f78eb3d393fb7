//! Joint M-estimation of location and scale: Huber's proposal 2 (contract §3),
//! with the semantics of `statsmodels.robust.scale.Huber(norm=...)` except
//! that non-convergence is reported, not raised.
//!
//! One iteration (`iterate`) runs on three representations of the scores —
//! direct (every score read at every step: the reference the others are
//! tested against), sorted (small N) and bucketed (large N) — each
//! answering a step's sums through [`Sums`]. Why three, when each applies,
//! every tuning constant and what each layer earns: the design page
//! `docs/design/m-estimation.md`.

use crate::error::{named_enum, Error};
use crate::estimators::location::median;
use crate::estimators::scale::fall_back;
use crate::numeric::float::Float;
use crate::numeric::reduce::binary_exponent;
use crate::sample::Sample;
use blocks::{Blocks, Expect};

/// Whether the ablation benchmark switched the layer `$name` off in this
/// build (`--cfg outprob_ablate="$name"`; `benches/ablation.py`).
macro_rules! ablated {
    ($name:literal) => {
        $crate::estimators::mest::switched_off(cfg!(outprob_ablate = $name))
    };
}

/// `off`, through a call so that clippy does not simplify the conditions
/// it takes part in as if the switch were the constant of this build.
#[inline(always)]
const fn switched_off(off: bool) -> bool {
    off
}

mod blocks;
mod bulk;
mod direct;
mod inverse_powers;
mod sorted;
mod tails;
use sorted::Sorted;

/// The weighting function of the location step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Norm {
    /// Huber's T: `w = min(1, t/|r|)`.
    Huber,
    /// Tukey's biweight: `w = (1 − (r/c)²)²` for `|r| <= c`, else 0.
    Tukey,
}

impl Norm {
    /// The tuning constant statsmodels uses by default (1.345 / 4.685).
    pub fn default_tuning(self) -> f64 {
        match self {
            Norm::Huber => 1.345,
            Norm::Tukey => 4.685,
        }
    }

    /// The location step's weight of a standardised residual `r`.
    #[inline(always)]
    pub fn weight(self, r: f64, tuning: f64) -> f64 {
        match self {
            Norm::Huber => {
                let a = r.abs();
                if a <= tuning {
                    1.0
                } else {
                    tuning / a
                }
            }
            Norm::Tukey => {
                if r.abs() <= tuning {
                    let u = r / tuning;
                    let v = 1.0 - u * u;
                    v * v
                } else {
                    0.0
                }
            }
        }
    }
}

/// `w·d`, the location step's term of a deviation `d` with weight `w` and
/// standardised residual `r = d/σ`, with its limit where `r` overflows:
/// Huber's weight `t/|r|` goes to 0 there but `w·d` to `t·σ·sign(d)` (the
/// clipped ψ); Tukey's term is 0. Taken as `w·d` elsewhere, bit for bit.
#[inline(always)]
pub fn weighted_deviation(huber: bool, w: f64, d: f64, r: f64, tuning: f64, sigma: f64) -> f64 {
    if huber && r.is_infinite() {
        tuning * sigma.copysign(d)
    } else {
        w * d
    }
}

named_enum!(
    Norm,
    "norm",
    "expected 'huber' or 'tukey'",
    "huber" => Huber,
    "tukey" => Tukey,
);

/// Parameters of Huber's proposal 2.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MParams {
    /// Location weighting function.
    pub norm: Norm,
    /// Clipping constant of the scale step (`c`, default 1.5).
    pub c: f64,
    /// Tuning constant of the norm (Huber's `t`, Tukey's `c`).
    pub tuning: f64,
    /// Most outer (and, per outer step, inner) iterations.
    pub maxiter: usize,
    /// Relative convergence tolerance.
    pub tol: f64,
}

/// Largest `maxiter` accepted (contract §5: no call runs unbounded). The
/// iteration converges linearly, in tens of steps from the nMAD start; a
/// step budget beyond a thousand only lengthens a run that does not
/// converge, and the inner loop can take up to `maxiter` steps per outer
/// step, so the work is bounded by `MAX_ITER²` passes.
pub const MAX_ITER: usize = crate::limits::MAXITER.max as usize;

impl MParams {
    /// statsmodels' defaults for `norm`: c = 1.5, tol = 1e-8, maxiter = 30.
    pub fn new(norm: Norm) -> Self {
        MParams {
            norm,
            c: 1.5,
            tuning: norm.default_tuning(),
            maxiter: 30,
            tol: 1e-8,
        }
    }

    /// Checks every parameter's domain.
    pub fn check(&self) -> Result<(), Error> {
        let positive = |name: &'static str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(Error::invalid(
                    name,
                    format!("must be a positive finite number, got {v}"),
                ))
            }
        };
        positive("c", self.c)?;
        positive("tuning", self.tuning)?;
        positive("tol", self.tol)?;
        crate::limits::MAXITER.check_usize(self.maxiter).map(|_| ())
    }

    /// Consistency constant
    /// `γ = (2Φ(c) − 1) + c²·(1 − (2Φ(c) − 1)) − 2c·φ(c)`.
    pub fn gamma(&self) -> f64 {
        let c = self.c;
        let mass = 2.0 * normal_cdf(c) - 1.0;
        mass + c * c * (1.0 - mass) - 2.0 * c * normal_pdf(c)
    }
}

fn normal_cdf(x: f64) -> f64 {
    0.5 * libm::erfc(-x / core::f64::consts::SQRT_2)
}

fn normal_pdf(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (2.0 * core::f64::consts::PI).sqrt()
}

/// Which scale started the iteration (contract §3 falls back like §5 when the
/// nMAD is zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartScale {
    /// The nMAD, as statsmodels.
    Nmad,
    /// The nIQR, because the nMAD was zero.
    Niqr,
    /// The SD, because nMAD and nIQR were zero.
    Std,
    /// Every scale was zero: the scores are constant; no iteration.
    Constant,
}

impl StartScale {
    /// The name as results report it.
    pub fn name(self) -> &'static str {
        match self {
            StartScale::Nmad => "nmad",
            StartScale::Niqr => "niqr",
            StartScale::Std => "std",
            StartScale::Constant => "constant",
        }
    }
}

/// Result of [`m_estimate`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MEstimate {
    /// Location μ.
    pub location: f64,
    /// Scale σ.
    pub scale: f64,
    /// Outer iterations performed.
    pub n_iter: usize,
    /// Whether the outer iteration and every inner location iteration met
    /// the tolerance within `maxiter` steps.
    pub converged: bool,
    /// The scale the iteration started from.
    pub start: StartScale,
}

/// Huber's proposal 2 from μ₀ = median, σ₀ = nMAD (or the §5 fallback when
/// the nMAD is zero).
pub fn m_estimate<T: Float>(s: &Sample<'_, T>, params: &MParams) -> Result<MEstimate, Error> {
    m_estimate_from_median(s, params, median(s))
}

/// [`m_estimate`] given `median(s)` (of the oriented scores): the caller
/// that already holds it saves a read of the scores.
pub fn m_estimate_from_median<T: Float>(
    s: &Sample<'_, T>,
    params: &MParams,
    median: f64,
) -> Result<MEstimate, Error> {
    fit(s, params, median, false)
}

/// [`m_estimate`] by the direct path: every score read at every step, the
/// definition the sorted and bucketed paths are tested against
/// (`docs/design/m-estimation.md`). For tests and benchmarks; it costs a
/// read of the scores per step.
pub fn m_estimate_direct<T: Float>(
    s: &Sample<'_, T>,
    params: &MParams,
) -> Result<MEstimate, Error> {
    fit(s, params, median(s), true)
}

fn fit<T: Float>(
    s: &Sample<'_, T>,
    params: &MParams,
    median: f64,
    direct: bool,
) -> Result<MEstimate, Error> {
    params.check()?;
    let mu0 = median;
    let (sigma0, start) = start_scale(s, mu0)?;
    if let Some(est) = without_iteration(mu0, sigma0, start)? {
        return Ok(est);
    }
    // The iteration runs on the scores times 2^-k, σ₀·2^-k in [1, 2): the
    // rescaling is exact, so the estimate is equivariant under scaling the
    // scores by a power of two, and its tolerances (tol·σ) mean the same
    // at every magnitude — no overflow near 1e308, no underflow of tol·σ
    // for subnormal scores. k is raised where needed so that the largest
    // scaled score stays finite in the element type.
    let k = scale_exponent::<T>(s, sigma0);
    let (mu, sigma) = (ldexp(mu0, -k), ldexp(sigma0, -k));
    let small = s.len() < bucketed_min(params.norm);
    let sorted = (small || ablated!("bucketed")) && !ablated!("sorted");
    let bulk = if ablated!("bulk") { 0.0 } else { BULK };
    let est = if direct || sorted {
        let scaled: Vec<f64> = (s.x.iter())
            .filter(|v| !v.is_nan())
            .map(|v| ldexp(s.orient(v.to_f64()), -k))
            .collect();
        if direct {
            iterate(&direct::Direct(&scaled), params, mu, sigma, start)
        } else {
            let radius = bulk * params.tuning.min(params.c) * sigma;
            let around = (radius > 0.0).then_some((mu, radius));
            let sorted = Sorted::new(scaled, params.norm, around);
            iterate(&sorted, params, mu, sigma, start)
        }
    } else {
        let expect = Expect {
            location: mu,
            scale: sigma,
            widths: [params.tuning, params.c],
            bulk: bulk * params.tuning.min(params.c),
            far: if s.len() < FAR_BELOW && !ablated!("far_tails") {
                FAR * params.tuning.max(params.c)
            } else {
                0.0
            },
        };
        let blocks = Blocks::scaled(s, -k, params.norm == Norm::Huber, Some(expect));
        iterate(&blocks, params, mu, sigma, start)
    };
    unscaled(est, k, params.norm)
}

/// An estimate of the scores times 2^-k in the scores' units; refused when
/// its scale is beyond the double range (the iteration may end above the
/// starting scale, when the scores span nearly all of the range).
pub(crate) fn unscaled(est: MEstimate, k: i32, norm: Norm) -> Result<MEstimate, Error> {
    let scale = ldexp(est.scale, k);
    if !scale.is_finite() {
        return Err(Error::beyond_range(
            "scale",
            format_args!("the {} M-estimate of scale", norm.name()),
        ));
    }
    Ok(MEstimate {
        location: ldexp(est.location, k),
        scale,
        ..est
    })
}

/// `k` with σ₀·2^-k in [1, 2), raised so that every score times 2^-k is
/// below 2^(emax−2) of the element type `T`.
fn scale_exponent<T: Float>(s: &Sample<'_, T>, sigma0: f64) -> i32 {
    let emax = if T::MANTISSA_DIGITS == 24 { 127 } else { 1023 };
    unit_exponent(sigma0, s.summary.max.abs().max(s.summary.min.abs()), emax)
}

/// `k` with σ₀·2^-k in [1, 2), raised so that `largest`·2^-k is below
/// 2^(emax−2): the units M-estimation runs in (also on a sketch's sample).
pub(crate) fn unit_exponent(sigma0: f64, largest: f64, emax: i32) -> i32 {
    let k = binary_exponent(sigma0);
    if largest > 0.0 && largest.is_finite() {
        k.max(binary_exponent(largest) - (emax - 2))
    } else {
        k
    }
}

/// `x·2^k` for |k| <= 2044, in two steps of normal powers of two (2^k
/// itself may not be a double): exact whenever the result is normal.
pub(crate) fn ldexp(x: f64, k: i32) -> f64 {
    let half = k / 2;
    x * crate::numeric::reduce::pow2(half) * crate::numeric::reduce::pow2(k - half)
}

/// The bulk (`mest::bulk`) of a fit: the scores within this
/// fraction of the narrower starting window about μ₀. On long-tailed
/// scores the windows widen as the iteration goes; 0.8 leaves a fifth of
/// the narrower one for the location to move and the scale to shrink.
const BULK: f64 = 0.8;

/// The far tails (`blocks/far.rs`) of a bucketed fit: the scores beyond
/// this multiple of the wider starting window from μ₀. The windows' edges
/// are expected within 1.35·w + 0.1 (σ₀) of it (`Expect::bands`); this
/// leaves a margin of half a window more.
const FAR: f64 = 2.0;
/// Far tails are set apart below this many scores only: they make the
/// tree smaller, which pays while its build and walks dominate; above, the
/// split that sets them apart costs more per score than the bucket updates
/// it saves.
const FAR_BELOW: usize = 1 << 18;

/// From this many scores on, the iteration runs on bucketed scores with
/// bucket moments (one read, no sort); below it, on the sorted scores with
/// prefix power sums. Either way a step costs far less than a read of the
/// scores, and the bulk about μ₀ is summed in one vectorised read, not
/// sorted or bucketed; the sort's N·log N is what makes the buckets
/// cheaper for large N (the crossing was measured on the benchmark suite's
/// long-tailed scores, one thread).
pub fn bucketed_min(norm: Norm) -> usize {
    match norm {
        Norm::Huber => 12_288,
        Norm::Tukey => 1 << 14,
    }
}

/// The sums one step of the iteration needs, over the oriented, NaN-free
/// scores. Public so that other representations of the scores (a sketch's
/// weighted items, sums reduced over a cluster) run the same iteration.
pub trait Sums {
    /// Number of scores N.
    fn len(&self) -> usize;
    /// No scores.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// `(Σ w_i, Σ w_i (s_i − m))` for the location step's weights at (m, σ).
    fn location(&self, p: &MParams, m: f64, sigma: f64) -> (f64, f64);
    /// `(Σ_{i∈I} ((s_i − nmu)/σ)², #not in I)`, `I = {|s − mu|/σ <= c}`.
    fn scale(&self, c: f64, mu: f64, sigma: f64, nmu: f64) -> (f64, usize);
}

impl<T: Float> Sums for Blocks<'_, T> {
    fn len(&self) -> usize {
        Blocks::len(self)
    }

    fn location(&self, p: &MParams, m: f64, sigma: f64) -> (f64, f64) {
        let t = p.tuning;
        match p.norm {
            Norm::Huber => {
                // Inside: w = 1. Outside: w = t/|r|, so w·(s − m) = ±tσ.
                let w = self.window_sums::<2>(m, sigma, t, (m, sigma), true);
                let [n_in, s1] = w.power;
                (
                    n_in + t * w.reciprocal,
                    sigma * s1 + t * sigma * (w.right as f64 - w.left as f64),
                )
            }
            Norm::Tukey => {
                // w = (1 − u²)² = 1 − 2u² + u⁴ with u = (s − m)/(tσ), inside.
                let w = self.window_sums::<6>(m, sigma, t, (m, t * sigma), false);
                let [s0, s1, s2, s3, s4, s5] = w.power;
                (s0 - 2.0 * s2 + s4, t * sigma * (s1 - 2.0 * s3 + s5))
            }
        }
    }

    fn scale(&self, c: f64, mu: f64, sigma: f64, nmu: f64) -> (f64, usize) {
        // The window is centred at the old μ; the residuals at the new one.
        let w = self.window_sums::<3>(mu, sigma, c, (nmu, sigma), false);
        (w.power[2], w.left + w.right)
    }
}

fn start_scale<T: Float>(s: &Sample<'_, T>, median: f64) -> Result<(f64, StartScale), Error> {
    use crate::estimators::scale::{niqr, nmad_about_median, std};
    start_from(|which| match which {
        StartScale::Nmad => Ok(nmad_about_median(s, median)),
        StartScale::Niqr => Ok(niqr(s)),
        _ => std(s, 0),
    })
}

/// §3's starting scale by the §5 chain nMAD → nIQR → SD (each computed by
/// `scale_of` only when the one before is zero); `Constant`, with 0, when
/// every one is zero.
pub fn start_from(
    scale_of: impl FnMut(StartScale) -> Result<f64, Error>,
) -> Result<(f64, StartScale), Error> {
    use StartScale::{Constant, Niqr, Nmad, Std};
    let (start, sigma0) = fall_back(Nmad, &[Niqr, Std], scale_of, |v| *v > 0.0)?;
    Ok(if sigma0 > 0.0 {
        (sigma0, start)
    } else {
        (0.0, Constant)
    })
}

/// The estimate when there is nothing to iterate: the median with scale 0
/// for constant scores (`Ok(Some)`), or a starting scale beyond the double
/// range refused (`Err`); `Ok(None)` when the iteration runs.
pub fn without_iteration(
    median: f64,
    sigma0: f64,
    start: StartScale,
) -> Result<Option<MEstimate>, Error> {
    if start == StartScale::Constant {
        return Ok(Some(MEstimate {
            location: median,
            scale: 0.0,
            n_iter: 0,
            converged: true,
            start,
        }));
    }
    if !sigma0.is_finite() {
        return Err(Error::beyond_range(
            "scale",
            "the starting scale of M-estimation",
        ));
    }
    Ok(None)
}

/// The outer loop of contract §3 from (μ₀, σ₀ > 0).
pub fn iterate(
    x: &impl Sums,
    params: &MParams,
    mu0: f64,
    sigma0: f64,
    start: StartScale,
) -> MEstimate {
    let denom = (x.len() as f64 - 1.0) * params.gamma();
    let (mut mu, mut sigma) = (mu0, sigma0);
    let mut inner_ok = true;
    for t in 0..params.maxiter {
        let (nmu, ok) = location_step(x, params, mu, sigma);
        inner_ok &= ok;
        let nsigma = scale_step(x, params.c, mu, sigma, nmu, denom);
        if !(nsigma > 0.0 && nsigma.is_finite()) {
            // A degenerate step (N = 1, or every residual underflowed): keep
            // the last usable iterate rather than divide by zero.
            return MEstimate {
                location: mu,
                scale: sigma,
                n_iter: t,
                converged: false,
                start,
            };
        }
        let done = (sigma - nsigma).abs() <= params.tol * nsigma
            && (mu - nmu).abs() <= params.tol * nsigma;
        mu = nmu;
        sigma = nsigma;
        if done {
            return MEstimate {
                location: mu,
                scale: sigma,
                n_iter: t + 1,
                converged: inner_ok,
                start,
            };
        }
    }
    MEstimate {
        location: mu,
        scale: sigma,
        n_iter: params.maxiter,
        converged: false,
        start,
    }
}

/// Iteratively reweighted mean at fixed σ (statsmodels
/// `norms.estimate_location`), written as `m + Σw(s − m)/Σw` so that the
/// update is computed from residuals and keeps its precision when
/// |m| ≫ σ. Returns the location and whether it met `|Δm| < tol·σ`.
fn location_step(x: &impl Sums, params: &MParams, start: f64, sigma: f64) -> (f64, bool) {
    let mut m = start;
    for _ in 0..params.maxiter {
        let (sw, swd) = x.location(params, m, sigma);
        if sw <= 0.0 {
            // Every weight is zero (Tukey, all residuals beyond c_T): the
            // step cannot move; statsmodels keeps m as well.
            return (m, true);
        }
        let next = m + swd / sw;
        if (next - m).abs() < params.tol * sigma {
            return (next, true);
        }
        m = next;
    }
    (m, false)
}

/// `σ_{t+1}` of contract §3 step 2, in residuals standardised by σ_t so that no
/// square of a raw score is formed: σ_{t+1} = σ_t·sqrt((Σ_I r² + n_out·c²) /
/// ((N − 1)γ)) with r = (s − μ_{t+1})/σ_t and I = {|s − μ_t|/σ_t <= c}.
fn scale_step(x: &impl Sums, c: f64, mu: f64, sigma: f64, nmu: f64, denom: f64) -> f64 {
    let (ss, outside) = x.scale(c, mu, sigma, nmu);
    let num = ss + outside as f64 * c * c;
    sigma * (num / denom).sqrt()
}

#[cfg(test)]
mod tests;
