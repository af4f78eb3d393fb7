//! Fitting a Gaussian or linear scaling to scores (contract §1–§5): the
//! estimators a named center/scale pair needs, with the zero-scale fallback
//! chain of contract §5 (chosen scale → niqr → std).
//!
//! Source: Röchner et al. (SISAP 2024) — Gaussian scaling with a robust
//! center and scale, the paper's named variants (`mean_nmad`, `huber`, …,
//! contract §4) — and Kriegel et al. (SDM 2011) for the non-robust
//! `mean_std` and linear scaling; the M-estimates are Huber's proposal 2
//! (contract §3, [`crate::estimators::mest`]).
//!
//! Trade-offs: one [`GaussianSpec`] describes every Gaussian fit (in
//! memory, streaming, windowed), checked once. The scores are read in
//! place: the median, which is a center, the nMAD's center and the
//! M-estimates' start, is computed once per fit, and only M-estimation
//! copies the scores. A zero scale falls back along the chain instead of
//! failing (constant or heavily tied scores still get a map, the σ → 0
//! limit when every scale is zero); a scale beyond the double range is
//! refused, since it would map every finite score to 0.

use crate::error::Error;
use crate::estimators::location::{check_trim, mean, median, upper_trimmed_mean};
use crate::estimators::mest::{m_estimate_from_median, MEstimate, MParams, Norm};
use crate::estimators::scale::{fall_back, niqr, nmad_about_median, std, trimmed_std};
use crate::numeric::float::Float;
use crate::sample::{NanPolicy, Sample};
use crate::transformations::scaling::{Gaussian, Linear};

/// Location estimator of a Gaussian scaling (contract §1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Center {
    /// Sample mean.
    Mean,
    /// Median.
    Median,
    /// Upper-trimmed mean (fraction `trim`).
    TrimmedMean,
    /// Location of Huber's proposal 2 with this norm.
    M(Norm),
    /// A fixed number.
    Value(f64),
}

/// Scale estimator of a Gaussian scaling (contract §2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// Standard deviation (with `ddof`).
    Std,
    /// Normalised MAD about the median.
    Nmad,
    /// Normalised IQR.
    Niqr,
    /// Trimmed SD about the fitted center (fraction `trim`).
    TrimmedStd,
    /// Scale of Huber's proposal 2 with this norm.
    M(Norm),
    /// A fixed positive number.
    Value(f64),
}

impl core::str::FromStr for Center {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Ok(match s {
            "mean" => Center::Mean,
            "median" => Center::Median,
            "trimmed_mean" => Center::TrimmedMean,
            "huber" => Center::M(Norm::Huber),
            "tukey" => Center::M(Norm::Tukey),
            other => {
                return Err(Error::invalid(
                    "center",
                    format!(
                        "expected 'mean', 'median', 'trimmed_mean', 'huber', 'tukey' \
                         or a number, got {other:?}"
                    ),
                ))
            }
        })
    }
}

impl core::str::FromStr for Scale {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Ok(match s {
            "std" => Scale::Std,
            "nmad" => Scale::Nmad,
            "niqr" => Scale::Niqr,
            "trimmed_std" => Scale::TrimmedStd,
            "huber" => Scale::M(Norm::Huber),
            "tukey" => Scale::M(Norm::Tukey),
            other => {
                return Err(Error::invalid(
                    "scale",
                    format!(
                        "expected 'std', 'nmad', 'niqr', 'trimmed_std', 'huber', 'tukey' \
                         or a positive number, got {other:?}"
                    ),
                ))
            }
        })
    }
}

impl Center {
    /// The estimator's name as in contract §1 (`"value"` for a fixed number).
    pub fn name(self) -> &'static str {
        match self {
            Center::Mean => "mean",
            Center::Median => "median",
            Center::TrimmedMean => "trimmed_mean",
            Center::M(norm) => norm.name(),
            Center::Value(_) => "value",
        }
    }
}

impl Scale {
    /// The estimator's name as in contract §2 (`"value"` for a fixed number).
    pub fn name(self) -> &'static str {
        match self {
            Scale::Std => "std",
            Scale::Nmad => "nmad",
            Scale::Niqr => "niqr",
            Scale::TrimmedStd => "trimmed_std",
            Scale::M(norm) => norm.name(),
            Scale::Value(_) => "value",
        }
    }

    /// The §5 fallback chain that starts at this scale.
    pub fn chain(self) -> &'static [Scale] {
        match self {
            Scale::Std | Scale::Value(_) => &[],
            Scale::Niqr => &[Scale::Std],
            _ => &[Scale::Niqr, Scale::Std],
        }
    }
}

/// What to fit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GaussianSpec {
    /// Location estimator.
    pub center: Center,
    /// Scale estimator.
    pub scale: Scale,
    /// Trimmed fraction of `TrimmedMean` and `TrimmedStd`.
    pub trim: f64,
    /// Delta degrees of freedom of `Std`.
    pub ddof: usize,
    /// Iteration limit of M-estimation.
    pub maxiter: usize,
    /// Convergence tolerance of M-estimation.
    pub tol: f64,
    /// NaN handling.
    pub nan_policy: NanPolicy,
    /// Negate the scores first (`higher_is_outlier=False`).
    pub negate: bool,
}

impl GaussianSpec {
    /// contract §7 defaults for a center/scale pair.
    pub fn new(center: Center, scale: Scale) -> Self {
        GaussianSpec {
            center,
            scale,
            trim: 0.1,
            ddof: 0,
            maxiter: 30,
            tol: 1e-8,
            nan_policy: NanPolicy::Omit,
            negate: false,
        }
    }

    fn m_params(&self, norm: Norm) -> MParams {
        MParams {
            maxiter: self.maxiter,
            tol: self.tol,
            ..MParams::new(norm)
        }
    }

    /// Whether the fit runs an iteration (M-estimation).
    pub fn iterates(&self) -> bool {
        matches!(self.center, Center::M(_)) || matches!(self.scale, Scale::M(_))
    }

    /// This spec, once every parameter is checked: the constructor of a
    /// spec from user parameters.
    pub fn checked(self) -> Result<Self, Error> {
        self.check()?;
        Ok(self)
    }

    /// This spec with another trim fraction (checked).
    pub fn with_trim(self, trim: f64) -> Result<Self, Error> {
        GaussianSpec { trim, ..self }.checked()
    }

    /// Checks every parameter's domain.
    pub fn check(&self) -> Result<(), Error> {
        check_trim(self.trim)?;
        crate::limits::DDOF.check_usize(self.ddof)?;
        if let Center::Value(c) = self.center {
            if !c.is_finite() {
                return Err(Error::invalid("center", format!("must be finite, got {c}")));
            }
        }
        if let Scale::Value(s) = self.scale {
            if !(s.is_finite() && s > 0.0) {
                return Err(Error::invalid(
                    "scale",
                    format!("a fixed scale must be a positive finite number, got {s}"),
                ));
            }
        }
        self.m_params(Norm::Huber).check()
    }
}

/// A fitted Gaussian scaling and how it was obtained.
#[derive(Debug, Clone, PartialEq)]
pub struct GaussianFit {
    /// Fitted μ and σ (σ = 0 when every scale in the chain is zero).
    pub params: Gaussian,
    /// The estimator that produced σ: the chosen one or its fallback.
    pub scale_used: Scale,
    /// Every M-estimate the fit ran, one per norm.
    pub m_estimates: Vec<(Norm, MEstimate)>,
}

struct Fitter<'a, T> {
    sample: Sample<'a, T>,
    spec: GaussianSpec,
    m_estimates: Vec<(Norm, MEstimate)>,
    // The median is the center, the nMAD's center and the M-estimates'
    // start: one read of the scores serves all of them.
    median: Option<f64>,
}

impl<T: Float> Fitter<'_, T> {
    fn median(&mut self) -> f64 {
        *self.median.get_or_insert_with(|| median(&self.sample))
    }

    fn m_estimate(&mut self, norm: Norm) -> Result<MEstimate, Error> {
        if let Some((_, est)) = self.m_estimates.iter().find(|(n, _)| *n == norm) {
            return Ok(*est);
        }
        let med = self.median();
        let est = m_estimate_from_median(&self.sample, &self.spec.m_params(norm), med)?;
        self.m_estimates.push((norm, est));
        Ok(est)
    }

    fn center(&mut self) -> Result<f64, Error> {
        Ok(match self.spec.center {
            Center::Mean => mean(&self.sample),
            Center::Median => self.median(),
            Center::TrimmedMean => upper_trimmed_mean(&self.sample, self.spec.trim)?,
            Center::M(norm) => self.m_estimate(norm)?.location,
            Center::Value(c) => c,
        })
    }

    fn scale(&mut self, which: Scale, center: f64) -> Result<f64, Error> {
        Ok(match which {
            // N <= ddof: no spread can be measured; treated as zero so the
            // scaling degrades to the constant case instead of failing.
            Scale::Std => std(&self.sample, self.spec.ddof).unwrap_or(0.0),
            Scale::Nmad => {
                let med = self.median();
                nmad_about_median(&self.sample, med)
            }
            Scale::Niqr => niqr(&self.sample),
            Scale::TrimmedStd => trimmed_std(&self.sample, center, self.spec.trim)?,
            Scale::M(norm) => self.m_estimate(norm)?.scale,
            Scale::Value(v) => v,
        })
    }
}

/// Fits μ and σ of a Gaussian scaling to 1-D scores (contract §1–§5), reading
/// the scores in place: no estimator but M-estimation copies them.
pub fn fit_gaussian<T: Float>(x: &[T], spec: &GaussianSpec) -> Result<GaussianFit, Error> {
    spec.check()?;
    let mut fitter = Fitter {
        sample: Sample::new(x, spec.nan_policy, spec.negate)?,
        spec: *spec,
        m_estimates: Vec::new(),
        median: None,
    };
    let center = fitter.center()?;
    let (scale_used, scale) = fall_back(
        spec.scale,
        spec.scale.chain(),
        |s| fitter.scale(s, center),
        |v| *v > 0.0,
    )?;
    if !scale.is_finite() {
        // contract §5: an unrepresentable σ would map every finite score to
        // 0 (or NaN); refuse it instead.
        return Err(Error::beyond_range(
            "scale",
            format_args!("the fitted {} scale", scale_used.name()),
        ));
    }
    Ok(GaussianFit {
        params: Gaussian {
            center,
            scale: scale.max(0.0),
        },
        scale_used,
        m_estimates: fitter.m_estimates,
    })
}

/// Fits linear scaling: the smallest and largest score.
pub fn fit_linear<T: Float>(x: &[T], nan_policy: NanPolicy, negate: bool) -> Result<Linear, Error> {
    let s = Sample::new(x, nan_policy, negate)?;
    let (lo, hi) = (s.summary.min, s.summary.max);
    Ok(if negate {
        Linear { min: -hi, max: -lo }
    } else {
        Linear { min: lo, max: hi }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transformations::scaling::{transform, Scaling};
    use proptest::prelude::*;

    fn fit(x: &[f64], center: &str, scale: &str) -> GaussianFit {
        let spec = GaussianSpec::new(center.parse().unwrap(), scale.parse().unwrap());
        fit_gaussian(x, &spec).unwrap()
    }

    #[test]
    fn named_pairs() {
        let x = [1.0, 2.0, 3.0, 4.0, 100.0];
        let f = fit(&x, "median", "nmad");
        assert_eq!(f.params.center, 3.0);
        assert_eq!(f.params.scale, 1.0 / crate::estimators::scale::NMAD_DIVISOR);
        assert_eq!(f.scale_used, Scale::Nmad);
        let f = fit(&x, "mean", "std");
        assert_eq!(f.params.center, 22.0);
        assert!(f.m_estimates.is_empty());
        let f = fit(&x, "huber", "huber");
        assert_eq!(f.m_estimates.len(), 1);
    }

    #[test]
    fn zero_scale_falls_back() {
        // 4 of 7 tie: nmad = 0, niqr > 0.
        let x = [1.0, 1.0, 1.0, 1.0, 2.0, 3.0, 9.0];
        let f = fit(&x, "median", "nmad");
        assert_eq!(f.scale_used, Scale::Niqr);
        assert!(f.params.scale > 0.0);
        // 6 of 7 tie: nmad = niqr = 0, std > 0.
        let y = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 9.0];
        let f = fit(&y, "mean", "nmad");
        assert_eq!(f.scale_used, Scale::Std);
        assert!(f.params.scale > 0.0);
        // Constant: σ = 0.
        let f = fit(&[5.0; 4], "huber", "huber");
        assert_eq!(
            f.params,
            Gaussian {
                center: 5.0,
                scale: 0.0
            }
        );
    }

    #[test]
    fn negation_and_nan() {
        let mut spec = GaussianSpec::new(Center::Mean, Scale::Std);
        spec.negate = true;
        let f = fit_gaussian(&[1.0, f64::NAN, 3.0], &spec).unwrap();
        assert_eq!(
            f.params,
            Gaussian {
                center: -2.0,
                scale: 1.0
            }
        );
        spec.nan_policy = NanPolicy::Raise;
        assert!(fit_gaussian(&[1.0, f64::NAN], &spec).is_err());
        let l = fit_linear(&[f64::NAN, 2.0, 5.0], NanPolicy::Omit, true).unwrap();
        assert_eq!(
            l,
            Linear {
                min: -5.0,
                max: -2.0
            }
        );
    }

    #[test]
    fn invalid_specs() {
        let mut spec = GaussianSpec::new(Center::Value(f64::NAN), Scale::Std);
        assert!(fit_gaussian(&[1.0], &spec).is_err());
        spec.center = Center::Mean;
        spec.scale = Scale::Value(0.0);
        assert!(fit_gaussian(&[1.0], &spec).is_err());
        assert!("average".parse::<Center>().is_err());
    }

    const CENTERS: [Center; 5] = [
        Center::Mean,
        Center::Median,
        Center::TrimmedMean,
        Center::M(Norm::Huber),
        Center::M(Norm::Tukey),
    ];
    const SCALES: [Scale; 6] = [
        Scale::Std,
        Scale::Nmad,
        Scale::Niqr,
        Scale::TrimmedStd,
        Scale::M(Norm::Huber),
        Scale::M(Norm::Tukey),
    ];

    proptest! {
        /// Every estimator is location-scale equivariant; multiplying by
        /// ±2^k is exact in floating point, so the fit must follow exactly
        /// and the probabilities must not change at all.
        #[test]
        fn fits_are_exactly_equivariant_under_powers_of_two(
            x in proptest::collection::vec(prop_oneof![-1e3f64..1e3, Just(1.0)], 1..120),
            k in -60i32..60,
            negate in any::<bool>(),
            c in 0usize..5,
            s in 0usize..6,
        ) {
            let f = 2f64.powi(k);
            let y: Vec<f64> = x.iter().map(|v| v * f).collect();
            let mut spec = GaussianSpec::new(CENTERS[c], SCALES[s]);
            spec.negate = negate;
            let a = fit_gaussian(&x, &spec).unwrap();
            let b = fit_gaussian(&y, &spec).unwrap();
            prop_assert_eq!(b.params.center, a.params.center * f);
            prop_assert_eq!(b.params.scale, a.params.scale * f);
            prop_assert_eq!(b.scale_used, a.scale_used);
            let (mut pa, mut pb) = (vec![0.0; x.len()], vec![0.0; y.len()]);
            transform(&x, &mut pa, &[a.params], negate).unwrap();
            transform(&y, &mut pb, &[b.params], negate).unwrap();
            prop_assert_eq!(pa, pb);
        }

        #[test]
        fn probabilities_are_monotone_and_bounded(
            x in proptest::collection::vec(-1e3f64..1e3, 1..120),
            c in 0usize..5,
            s in 0usize..6,
        ) {
            let fit = fit_gaussian(&x, &GaussianSpec::new(CENTERS[c], SCALES[s])).unwrap();
            let mut sorted = x.clone();
            sorted.sort_by(f64::total_cmp);
            let p: Vec<f64> = sorted.iter().map(|&v| fit.params.probability(v)).collect();
            prop_assert!(p.iter().all(|v| (0.0..=1.0).contains(v)));
            prop_assert!(p.windows(2).all(|w| w[0] <= w[1]));
        }
    }
}
