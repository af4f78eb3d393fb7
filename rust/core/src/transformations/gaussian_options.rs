//! ELKI's options of Gaussian scaling (contract §10, `GaussianScaler`
//! options): a pretransform of the scores (`SqrtStandardDeviationScaling`,
//! `MinusLogStandardDeviationScaling`), a fixed center with σ measured about
//! it (`StandardDeviationScaling` with a fixed mean), and the factor λ in
//! `erf((y − μ)/(λσ√2))`.
//!
//! Order of operations, at fit and at transform alike: the pretransform
//! `y = f(s)` of the raw score, then the orientation (`higher_is_outlier`
//! refers to `y`), then the Gaussian scaling of `±y` with `(μ, λσ)`.

use crate::error::Error;
use crate::estimators::scale::{fall_back, niqr, nmad_about_median};
use crate::numeric::float::Float;
use crate::numeric::par::{zip_chunks_of, CHUNK};
use crate::numeric::reduce::{pow2, spread_exponent, squares};
use crate::sample::Sample;
use crate::transformations::fit::{fit_gaussian, Center, GaussianFit, GaussianSpec, Scale};
use crate::transformations::scaling::Gaussian;

/// A map applied to the raw scores before the Gaussian scaling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pretransform {
    /// `y = s`.
    Identity,
    /// `y = √max(0, s − min)` with `min` the smallest fitted score (ELKI).
    Sqrt {
        /// The smallest fitted score.
        min: f64,
    },
    /// `y = −ln s` (ELKI), for scores where small values are strange
    /// (e.g. a probability of being normal); `s = 0` → `y = +inf`.
    /// Fitting needs `s > 0`; at transform `s <= 0` maps to `y = +inf`.
    MinusLog,
}

impl Pretransform {
    /// `y = f(s)`; NaN stays NaN.
    #[inline]
    pub fn apply(self, s: f64) -> f64 {
        match self {
            Pretransform::Identity => s,
            Pretransform::Sqrt { min } => {
                if s.is_nan() {
                    s
                } else {
                    (s - min).max(0.0).sqrt()
                }
            }
            Pretransform::MinusLog => {
                if s.is_nan() {
                    s
                } else if s <= 0.0 {
                    f64::INFINITY
                } else {
                    -s.ln()
                }
            }
        }
    }

    /// `f(s)` of every score, as [`apply`](Self::apply): what a
    /// distributed fit's partitions read in place of the raw scores.
    pub fn apply_all<T: Float>(self, x: &[T]) -> Vec<f64> {
        x.iter().map(|v| self.apply(v.to_f64())).collect()
    }

    /// The pretransform of kind `kind` fitted to the raw scores `x` (NaN
    /// ignored; `x` already checked by §5).
    pub fn fit<T: Float>(kind: PretransformKind, x: &[T]) -> Result<Self, Error> {
        match kind {
            PretransformKind::Identity => Ok(Pretransform::Identity),
            PretransformKind::Sqrt => {
                let min = x
                    .iter()
                    .filter(|v| !v.is_nan())
                    .map(|v| v.to_f64())
                    .fold(f64::INFINITY, f64::min);
                Ok(Pretransform::Sqrt { min })
            }
            PretransformKind::MinusLog => {
                let bad = x
                    .iter()
                    .filter(|v| !v.is_nan() && v.to_f64() <= 0.0)
                    .count();
                if bad > 0 {
                    return Err(Error::invalid(
                        "pretransform",
                        format!(
                            "'minus_log' needs positive scores to fit, got {bad} score(s) <= 0"
                        ),
                    ));
                }
                Ok(Pretransform::MinusLog)
            }
        }
    }

    /// The smallest fitted score of a `Sqrt` pretransform.
    pub fn min(self) -> Option<f64> {
        match self {
            Pretransform::Sqrt { min } => Some(min),
            _ => None,
        }
    }
}

/// Which pretransform a scaler applies (its `pretransform` parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PretransformKind {
    /// None: `y = s`.
    Identity,
    /// `"sqrt"`.
    Sqrt,
    /// `"minus_log"`.
    MinusLog,
}

impl core::str::FromStr for PretransformKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "sqrt" => Ok(PretransformKind::Sqrt),
            "minus_log" => Ok(PretransformKind::MinusLog),
            other => Err(Error::invalid(
                "pretransform",
                format!("expected None, 'sqrt' or 'minus_log', got {other:?}"),
            )),
        }
    }
}

impl PretransformKind {
    /// The name as the `pretransform` parameter spells it (`None` for the
    /// identity).
    pub fn name(self) -> Option<&'static str> {
        match self {
            PretransformKind::Identity => None,
            PretransformKind::Sqrt => Some("sqrt"),
            PretransformKind::MinusLog => Some("minus_log"),
        }
    }

    /// The pretransform of this kind with the fitted minimum `min` (used
    /// by `Sqrt` only).
    pub fn fitted(self, min: f64) -> Pretransform {
        match self {
            PretransformKind::Identity => Pretransform::Identity,
            PretransformKind::Sqrt => Pretransform::Sqrt { min },
            PretransformKind::MinusLog => Pretransform::MinusLog,
        }
    }
}

/// Fits a Gaussian scaling with the options: `fixed_center` (σ of `"std"`
/// and `"nmad"` then measured about it; the other scales as usual with the
/// center fixed) after the pretransform `pre`. Returns the fit (σ without
/// λ) and the fitted pretransform. Without options it is
/// [`fit_gaussian`], which reads the scores once less.
pub fn fit_gaussian_with<T: Float>(
    x: &[T],
    spec: &GaussianSpec,
    pre: PretransformKind,
    fixed_center: Option<f64>,
) -> Result<(GaussianFit, Pretransform), Error> {
    if pre == PretransformKind::Identity && fixed_center.is_none() {
        return Ok((fit_gaussian(x, spec)?, Pretransform::Identity));
    }
    // §5 first, on the raw scores.
    Sample::new(x, spec.nan_policy, spec.negate)?;
    let pre = Pretransform::fit(pre, x)?;
    let fit = if pre == Pretransform::Identity {
        fit_about(x, spec, fixed_center)?
    } else {
        let y: Vec<f64> = x.iter().map(|v| pre.apply(v.to_f64())).collect();
        fit_about(&y, spec, fixed_center)?
    };
    Ok((fit, pre))
}

fn fit_about<T: Float>(
    y: &[T],
    spec: &GaussianSpec,
    fixed_center: Option<f64>,
) -> Result<GaussianFit, Error> {
    let Some(c) = fixed_center else {
        return fit_gaussian(y, spec);
    };
    if !c.is_finite() {
        return Err(Error::invalid(
            "fixed_center",
            format!("must be finite, got {c}"),
        ));
    }
    let spec = GaussianSpec {
        center: Center::Value(c),
        ..*spec
    };
    let sample = Sample::new(y, spec.nan_policy, spec.negate)?;
    let about = |which: Scale| -> Result<Option<f64>, Error> {
        Ok(match which {
            Scale::Std => Some(rms_about(&sample, c, spec.ddof)),
            Scale::Nmad => Some(nmad_about_median(&sample, c)),
            Scale::Niqr => Some(niqr(&sample)),
            _ => None,
        })
    };
    // Std, nMAD and nIQR are taken about the fixed center (the chain holds
    // only these); trimmed_std is about it already, and M-scales and fixed
    // values need nothing else: the in-memory fit.
    let (used, scale) = fall_back(spec.scale, spec.scale.chain(), about, |v| {
        v.is_none_or(|s| s > 0.0)
    })?;
    let Some(scale) = scale else {
        return fit_gaussian(y, &spec);
    };
    Ok(GaussianFit {
        params: Gaussian {
            center: c,
            scale: scale.max(0.0),
        },
        scale_used: used,
        m_estimates: Vec::new(),
    })
}

/// `√(Σ(y − c)²/(N − ddof))` (ELKI's σ about a fixed mean uses ddof = 0);
/// 0 when `N <= ddof`. Rescaled by a power of two: no overflow.
fn rms_about<T: Float>(s: &Sample<'_, T>, c: f64, ddof: usize) -> f64 {
    let n = s.len();
    if n <= ddof {
        return 0.0;
    }
    let (a, b) = (s.orient(s.summary.min), s.orient(s.summary.max));
    let k = spread_exponent(a.min(b), a.max(b), c);
    let q = squares(s.x, s.negate, c, k, f64::INFINITY);
    (q.scaled_squares / (n - ddof) as f64).sqrt() * pow2(q.k)
}

/// Gaussian scaling of pretransformed scores, one `(pre, μ, λσ)` per column
/// of the row-major `src`: `dst = gaussian(±pre(src))`.
pub fn transform_with<T: Float>(
    src: &[T],
    dst: &mut [T],
    columns: &[(Pretransform, Gaussian)],
    negate: bool,
) -> Result<(), Error> {
    let k = columns.len();
    crate::transformations::scaling::check_shape(src.len(), dst.len(), k)?;
    for (_, g) in columns {
        crate::transformations::scaling::Scaling::check(g)?;
    }
    let sign = if negate { -1.0 } else { 1.0 };
    let rows = (CHUNK / k).max(1) * k;
    zip_chunks_of(src, dst, rows, |s_rows, d_rows| {
        for (drow, srow) in d_rows.chunks_exact_mut(k).zip(s_rows.chunks_exact(k)) {
            for ((d, &s), (pre, g)) in drow.iter_mut().zip(srow).zip(columns) {
                let y = sign * pre.apply(s.to_f64());
                *d = T::from_f64(crate::numeric::erf::gaussian_probability(
                    y, g.center, g.scale,
                ));
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_center_sd_is_about_the_center() {
        let about_one = |scale| {
            let spec = GaussianSpec::new(Center::Mean, scale);
            let x = [1.0, 2.0, 3.0, 4.0];
            fit_gaussian_with(&x, &spec, PretransformKind::Identity, Some(1.0))
                .unwrap()
                .0
        };
        // ELKI: σ = √mean((s − c)²) with c = 1: (0 + 1 + 4 + 9)/4 → √3.5.
        let fit = about_one(Scale::Std);
        assert_eq!(fit.params.center, 1.0);
        assert!((fit.params.scale - 3.5f64.sqrt()).abs() < 1e-15);
        // median |s − 1| of {0, 1, 2, 3} = 1.5.
        let fit = about_one(Scale::Nmad);
        let want = 1.5 / crate::estimators::scale::NMAD_DIVISOR;
        assert!((fit.params.scale - want).abs() < 1e-15);
    }

    #[test]
    fn pretransforms() {
        let spec = GaussianSpec::new(Center::Mean, Scale::Std);
        let (_, pre) =
            fit_gaussian_with(&[4.0, 5.0, 8.0], &spec, PretransformKind::Sqrt, None).unwrap();
        assert_eq!(pre, Pretransform::Sqrt { min: 4.0 });
        assert_eq!(pre.apply(8.0), 2.0);
        assert_eq!(pre.apply(3.0), 0.0);
        assert!(fit_gaussian_with(&[0.0, 1.0], &spec, PretransformKind::MinusLog, None).is_err());
        let (fit, pre) =
            fit_gaussian_with(&[1.0, 0.5, 0.25], &spec, PretransformKind::MinusLog, None).unwrap();
        assert!((fit.params.center - 2f64.ln()).abs() < 1e-15);
        assert_eq!(pre.apply(0.0), f64::INFINITY);
        let mut out = [0.0f32; 2];
        transform_with(&[1e-300f32, 0.0], &mut out, &[(pre, fit.params)], false).unwrap();
        assert_eq!(out, [1.0, 1.0]);
        assert!("log".parse::<PretransformKind>().is_err());
    }
}
