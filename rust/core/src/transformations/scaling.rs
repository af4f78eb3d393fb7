//! Score → probability maps of contract §4, applied to row-major buffers with
//! one set of fitted parameters per column (1-D input is one column).
//!
//! * [`Scaling`]: a fitted map — its check and the probability of one
//!   score — which every family of §4 and §10 implements;
//! * [`Gaussian`]: `p = max(0, erf((s − μ)/(σ√2)))`, the paper's Gaussian
//!   scaling (Kriegel, Kröger, Schubert, Zimek, *Interpreting and unifying
//!   outlier scores*, SDM 2011; Röchner et al., SISAP 2024, with robust μ
//!   and σ), mapped by the vectorised kernels of [`crate::numeric::erf`];
//! * [`Linear`]: `p = clip((s − min)/(max − min), 0, 1)`;
//! * [`transform`]: the one loop that applies a map per column.
//!
//! Trade-offs: maps are element-wise, so a buffer is cut into fixed chunks
//! run in parallel and the result does not depend on the threads. A 1-D
//! column goes through the family's column kernel (the Gaussian's erf
//! kernel, bit-identical to its scalar [`Scaling::probability`]); k columns
//! go row by row through the scalar map, which keeps the row-major layout
//! without a transpose. Degenerate fits (σ = 0, `min == max`) map by the
//! limit — 0 at or below, 1 above — with no division by zero.

use crate::error::Error;
use crate::numeric::erf::{gaussian_probabilities_f32, gaussian_probabilities_f64};
use crate::numeric::float::{Buffers, Float};
use crate::numeric::par::{zip_chunks_of, CHUNK};

/// A fitted score → probability map.
pub trait Scaling: Copy + Send + Sync {
    /// Checks the fitted parameters.
    fn check(&self) -> Result<(), Error>;
    /// The probability of one score (already oriented: higher = stranger).
    fn probability(&self, s: f64) -> f64;
    /// `dst[i] = probability(±src[i])` over a contiguous column.
    fn transform_column<T: Float>(&self, src: &[T], dst: &mut [T], negate: bool) {
        let sign = if negate { -1.0 } else { 1.0 };
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = T::from_f64(self.probability(sign * s.to_f64()));
        }
    }
}

/// Fitted Gaussian scaling `p = max(0, erf((s − μ)/(σ√2)))`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gaussian {
    /// μ.
    pub center: f64,
    /// σ; zero for constant scores.
    pub scale: f64,
}

impl Scaling for Gaussian {
    /// The vectorised erf kernel (same values as [`Self::probability`] to
    /// within its ≤ 1 ulp erf).
    fn transform_column<T: Float>(&self, src: &[T], dst: &mut [T], negate: bool) {
        let (center, scale) = (self.center, self.scale);
        match T::buffers(src, dst) {
            Buffers::F64(s, d) => gaussian_probabilities_f64(s, d, center, scale, negate),
            Buffers::F32(s, d) => gaussian_probabilities_f32(s, d, center, scale, negate),
        }
    }

    /// Finite μ, finite σ >= 0.
    fn check(&self) -> Result<(), Error> {
        if !self.center.is_finite() {
            return Err(Error::invalid(
                "center",
                format!("must be finite, got {}", self.center),
            ));
        }
        if !(self.scale.is_finite() && self.scale >= 0.0) {
            return Err(Error::invalid(
                "scale",
                format!("must be finite and non-negative, got {}", self.scale),
            ));
        }
        Ok(())
    }

    /// The probability of one score. NaN stays NaN, +inf → 1, −inf → 0.
    /// With σ = 0 (constant fitted scores) the map is the σ → 0 limit: 0 at
    /// or below μ, 1 above — no division by zero. Bit-identical to the
    /// vectorised kernel.
    #[inline]
    fn probability(&self, s: f64) -> f64 {
        crate::numeric::erf::gaussian_probability(s, self.center, self.scale)
    }
}

/// Fitted linear scaling `p = clip((s − min)/(max − min), 0, 1)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Linear {
    /// Smallest fitted score.
    pub min: f64,
    /// Largest fitted score.
    pub max: f64,
}

impl Scaling for Linear {
    /// Finite, `min <= max`.
    fn check(&self) -> Result<(), Error> {
        if !(self.min.is_finite() && self.max.is_finite() && self.min <= self.max) {
            return Err(Error::invalid(
                "min/max",
                format!(
                    "need finite min <= max, got min={} max={}",
                    self.min, self.max
                ),
            ));
        }
        Ok(())
    }

    /// The probability of one score. NaN stays NaN; with `max == min` the
    /// map is 0 at or below `max`, 1 above. Never −0.0 (`+ 0.0`: a score
    /// −0.0 at min = 0 would otherwise give −0.0/range).
    #[inline]
    fn probability(&self, s: f64) -> f64 {
        if s.is_nan() {
            return s;
        }
        if self.max > self.min {
            let range = self.max - self.min;
            let p = if range.is_finite() {
                // s − min overflows only for s far outside [min, max]: ±inf
                // clamps to the right end.
                (s - self.min) / range
            } else {
                // max − min beyond the double range: halves are exact here
                // (|min|, |max| > 2^1022) and their differences finite.
                (s * 0.5 - self.min * 0.5) / (self.max * 0.5 - self.min * 0.5)
            };
            p.clamp(0.0, 1.0) + 0.0
        } else if s > self.max {
            1.0
        } else {
            0.0
        }
    }
}

/// Checks that row-major scores of `src` values and an output of `dst`
/// values fit `k` fitted columns.
pub(crate) fn check_shape(src: usize, dst: usize, k: usize) -> Result<(), Error> {
    if k == 0 || src != dst || !src.is_multiple_of(k) {
        return Err(Error::ShapeMismatch(format!(
            "scores ({src} values), output ({dst} values) and fitted columns ({k}) do not fit \
             together"
        )));
    }
    Ok(())
}

/// Writes `dst[i, j] = columns[j].probability(±src[i, j])` for row-major
/// `src`, `dst` with `columns.len()` columns. `negate` flips the scores
/// first (`higher_is_outlier=False`). Results are rounded to `T`.
pub fn transform<T: Float, S: Scaling>(
    src: &[T],
    dst: &mut [T],
    columns: &[S],
    negate: bool,
) -> Result<(), Error> {
    let k = columns.len();
    check_shape(src.len(), dst.len(), k)?;
    for c in columns {
        c.check()?;
    }
    // Element-wise: results cannot depend on how the work is split.
    if k == 1 {
        let c = columns[0];
        zip_chunks_of(src, dst, CHUNK, |s, d| c.transform_column(s, d, negate));
        return Ok(());
    }
    let sign = if negate { -1.0 } else { 1.0 };
    // Chunks are whole rows.
    let rows = (CHUNK / k).max(1) * k;
    zip_chunks_of(src, dst, rows, |s_rows, d_rows| {
        for (drow, srow) in d_rows.chunks_exact_mut(k).zip(s_rows.chunks_exact(k)) {
            for ((d, &s), c) in drow.iter_mut().zip(srow).zip(columns) {
                *d = T::from_f64(c.probability(sign * s.to_f64()));
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaussian_edges() {
        let g = Gaussian {
            center: 1.0,
            scale: 2.0,
        };
        assert_eq!(g.probability(1.0), 0.0);
        assert_eq!(g.probability(-5.0), 0.0);
        assert_eq!(g.probability(f64::INFINITY), 1.0);
        assert_eq!(g.probability(f64::NEG_INFINITY), 0.0);
        assert!(g.probability(f64::NAN).is_nan());
        let p = g.probability(3.0); // erf(1/√2) = 0.6827
        assert!((p - 0.682_689_492_137_085_9).abs() < 1e-15);
        let flat = Gaussian {
            center: 1.0,
            scale: 0.0,
        };
        assert_eq!(
            [
                flat.probability(0.5),
                flat.probability(1.0),
                flat.probability(1.5)
            ],
            [0.0, 0.0, 1.0]
        );
        assert!(Gaussian {
            center: 0.0,
            scale: -1.0
        }
        .check()
        .is_err());
    }

    #[test]
    fn linear_edges() {
        let l = Linear { min: 1.0, max: 3.0 };
        assert_eq!(
            [l.probability(0.0), l.probability(2.0), l.probability(9.0)],
            [0.0, 0.5, 1.0]
        );
        let flat = Linear { min: 2.0, max: 2.0 };
        assert_eq!([flat.probability(2.0), flat.probability(2.5)], [0.0, 1.0]);
    }

    #[test]
    fn maps_do_not_overflow_at_the_ends_of_the_range() {
        let m = f64::MAX;
        let l = Linear {
            min: -1.7e308,
            max: 1.7e308,
        };
        assert_eq!(
            [
                l.probability(-1.7e308),
                l.probability(0.0),
                l.probability(1.7e308)
            ],
            [0.0, 0.5, 1.0]
        );
        assert_eq!([l.probability(-m), l.probability(m)], [0.0, 1.0]);
        // mean_std of [−1.7e308, −1.7e308, 1.7e308, 1.7e308]: μ = 0, σ = 1.7e308.
        let g = Gaussian {
            center: 0.0,
            scale: 1.7e308,
        };
        let p = g.probability(1.7e308); // erf(1/√2)
        assert!((p - 0.682_689_492_137_085_9).abs() < 1e-15, "{p}");
        let mut dst = [0.0; 4];
        transform(
            &[-1.7e308, -1.7e308, 1.7e308, 1.7e308],
            &mut dst,
            &[g],
            false,
        )
        .unwrap();
        assert_eq!(dst, [0.0, 0.0, p, p]);
        // s − μ beyond the range: z = (1e308 + 1.7e308)/(σ√2) with σ = 1.3e308.
        let g = Gaussian {
            center: -1.7e308,
            scale: 1.3e308,
        };
        let p = g.probability(1e308);
        let want = libm::erf(2.7 / (1.3 * core::f64::consts::SQRT_2));
        assert!((p - want).abs() < 1e-15, "{p} {want}");
        let g = Gaussian {
            center: m,
            scale: m,
        };
        assert_eq!(g.probability(-m), 0.0);
        assert!((g.probability(m) - 0.0).abs() == 0.0);
    }

    #[test]
    fn columns_and_negation() {
        let src = [1.0f32, 10.0, 2.0, 20.0];
        let mut dst = [0.0f32; 4];
        let cols = [
            Linear { min: 1.0, max: 2.0 },
            Linear {
                min: 10.0,
                max: 30.0,
            },
        ];
        transform(&src, &mut dst, &cols, false).unwrap();
        assert_eq!(dst, [0.0, 0.0, 1.0, 0.5]);
        let neg = [Linear {
            min: -2.0,
            max: -1.0,
        }];
        let mut out = [0.0f64; 2];
        transform(&[1.0, 2.0], &mut out, &neg, true).unwrap();
        assert_eq!(out, [1.0, 0.0]);
        assert!(transform(&[1.0, 2.0, 3.0], &mut [0.0; 3], &cols, false).is_err());
    }
}
