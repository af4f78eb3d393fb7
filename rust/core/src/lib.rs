//! Numeric core of `outprob`: robust statistical scaling of outlier scores
//! (Röchner et al., SISAP 2024). Pure Rust, no Python: the binding crate
//! calls into it.
//!
//! Modules follow the concepts of `SPEC.md`:
//! [`sum`] (exact and compensated summation), [`select`] (order statistics,
//! median, quantiles), [`location`] and [`scale`] (§1, §2), [`mest`] (§3),
//! [`scaling`] (§4 transforms), [`fit`] (fitting a scaling, the §5 fallback
//! chain), [`sample`] (the §5 input contract), [`binning`] and [`metrics`]
//! (§6 evaluation measures).
//!
//! Every estimator is generic over `f32`/`f64` input and computes in `f64`.

pub mod binning;
pub mod blocks;
pub mod erf;
pub mod error;
pub mod fit;
pub mod float;
pub mod location;
pub mod mest;
pub mod metrics;
pub mod par;
pub mod rank;
pub mod reduce;
pub mod sample;
pub mod scale;
pub mod scaling;
pub mod scratch;
pub mod select;
mod simd;
pub mod sum;

pub use error::Error;
pub use float::Float;
