//! A fit fused with its transform (contract §4): one call fits 1-D scores,
//! builds the fit's map and maps the same scores with it — what
//! `fit_transform` of the Gaussian and linear scalers does, with the fit,
//! the map and the probabilities from one place.

use crate::error::Error;
use crate::numeric::array_map::ArrayMap;
use crate::numeric::float::Float;
use crate::sample::NanPolicy;
use crate::transformations::fit::{fit_gaussian, fit_linear, GaussianFit, GaussianSpec, Scale};
use crate::transformations::fitted::{FittedMap, MapKind, MapParts};
use crate::transformations::rank::fit_transform_rank;
use crate::transformations::scaling::Linear;

/// What a fused call fits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FusedFit {
    /// A Gaussian fit by its spec (without ELKI's options).
    Gaussian(GaussianSpec),
    /// A linear fit.
    Linear {
        /// NaN handling.
        nan_policy: NanPolicy,
        /// Negate the scores first.
        negate: bool,
    },
}

/// The fit a fused call made.
#[derive(Debug, Clone, PartialEq)]
pub enum Fit {
    /// μ, σ and how σ was obtained.
    Gaussian(GaussianFit),
    /// The oriented extremes.
    Linear(Linear),
}

impl FusedFit {
    /// Whether the fit runs an iteration (M-estimation): a call that
    /// should not hold the interpreter's lock however few the scores.
    pub fn iterates(&self) -> bool {
        matches!(self, FusedFit::Gaussian(spec) if spec.iterates())
    }

    /// Whether `fit`, made by this, says nothing its map does not: a
    /// linear fit, or a Gaussian fit that ran no M-estimation and whose
    /// σ > 0 came from the chosen named estimator — no §5 fallback, nothing
    /// to warn of, and its μ and σ are the map's parameters.
    pub fn plain(&self, fit: &Fit) -> bool {
        match (self, fit) {
            (FusedFit::Gaussian(spec), Fit::Gaussian(g)) => {
                g.m_estimates.is_empty()
                    && g.params.scale != 0.0
                    && g.scale_used == spec.scale
                    && !matches!(spec.scale, Scale::Value(_))
            }
            _ => true,
        }
    }

    /// Fits `x`, maps it into `dst` (same length) and returns the fit and
    /// its map: the values of a fit, then the map's transform.
    pub fn fit_transform<T: Float>(
        &self,
        x: &[T],
        dst: &mut [T],
    ) -> Result<(Fit, FittedMap), Error> {
        let (fit, parts) = match *self {
            FusedFit::Gaussian(spec) => {
                let fit = fit_gaussian(x, &spec)?;
                let g = fit.params;
                let parts =
                    MapParts::one_column(MapKind::Gaussian, spec.negate, &[g.center, g.scale]);
                (Fit::Gaussian(fit), parts)
            }
            FusedFit::Linear { nan_policy, negate } => {
                let l = fit_linear(x, nan_policy, negate)?;
                let parts = MapParts::one_column(MapKind::Linear, negate, &[l.min, l.max]);
                (Fit::Linear(l), parts)
            }
        };
        let map = FittedMap::new(parts)?;
        map.transform(x, dst)?;
        Ok((fit, map))
    }
}

/// A fused fit maps 1-D scores only.
impl ArrayMap for FusedFit {
    type Output = (Fit, FittedMap);

    fn map<T: Float>(&self, src: &[T], dst: &mut [T]) -> Result<Self::Output, Error> {
        self.fit_transform(src, dst)
    }

    fn accepts(&self, shape: &[usize]) -> bool {
        shape.len() == 1
    }

    fn iterates(&self) -> bool {
        FusedFit::iterates(self)
    }
}

/// Rank (or log-rank) scaling fitted on 1-D scores and applied to them
/// ([`fit_transform_rank`]); the output is the sorted fitted scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FusedRank {
    /// Log-rank scaling instead of rank scaling.
    pub log: bool,
    /// NaN handling.
    pub nan_policy: NanPolicy,
    /// Negate the scores first.
    pub negate: bool,
}

impl ArrayMap for FusedRank {
    type Output = Vec<f64>;

    fn map<T: Float>(&self, src: &[T], dst: &mut [T]) -> Result<Vec<f64>, Error> {
        fit_transform_rank(src, dst, self.nan_policy, self.negate, self.log)
    }

    fn accepts(&self, shape: &[usize]) -> bool {
        shape.len() == 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimators::mest::Norm;
    use crate::transformations::fit::Center;

    #[test]
    fn a_plain_fit_is_its_map() {
        let x = [3.0, 1.0, 7.0, 2.0, 2.5];
        let plain = |center, scale, x: &[f64]| {
            let fused = FusedFit::Gaussian(GaussianSpec::new(center, scale));
            let (fit, _) = fused.fit_transform(x, &mut vec![0.0; x.len()]).unwrap();
            fused.plain(&fit)
        };
        assert!(plain(Center::Mean, Scale::Nmad, &x));
        assert!(plain(Center::Median, Scale::Std, &x));
        // The nMAD of tied scores is zero: the fit fell back to the nIQR.
        assert!(!plain(
            Center::Median,
            Scale::Nmad,
            &[1.0, 1.0, 1.0, 2.0, 9.0]
        ));
        // Constant scores: σ = 0 at the end of the chain.
        assert!(!plain(Center::Mean, Scale::Std, &[2.0; 4]));
        assert!(!plain(Center::M(Norm::Huber), Scale::M(Norm::Huber), &x));
        assert!(!plain(Center::Mean, Scale::Value(2.0), &x));
        let linear = FusedFit::Linear {
            nan_policy: NanPolicy::Omit,
            negate: false,
        };
        let (fit, _) = linear.fit_transform(&x, &mut [0.0; 5]).unwrap();
        assert!(linear.plain(&fit));
    }

    #[test]
    fn the_fit_then_its_transform() {
        let x = [3.0, 1.0, f64::NAN, 7.0, 2.0];
        let spec = GaussianSpec::new(Center::Median, Scale::Nmad);
        for fused in [
            FusedFit::Gaussian(spec),
            FusedFit::Linear {
                nan_policy: NanPolicy::Omit,
                negate: true,
            },
        ] {
            let mut got = [0.0; 5];
            let (fit, map) = fused.fit_transform(&x, &mut got).unwrap();
            let mut want = [0.0; 5];
            map.transform(&x, &mut want).unwrap();
            assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits));
            match fit {
                Fit::Gaussian(f) => assert_eq!(f, fit_gaussian(&x, &spec).unwrap()),
                Fit::Linear(l) => assert_eq!((l.min, l.max), (-7.0, -1.0)),
            }
        }
        assert!(
            FusedFit::Gaussian(GaussianSpec::new(Center::M(Norm::Huber), Scale::Std)).iterates()
        );
        let mut out = [0.0; 1];
        assert!(FusedFit::Gaussian(spec)
            .fit_transform(&[f64::INFINITY], &mut out)
            .is_err());
    }
}
