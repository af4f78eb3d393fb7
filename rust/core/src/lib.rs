//! Numeric core of `outprob`: robust statistical scaling of outlier scores
//! (Röchner et al., SISAP 2024). Pure Rust, no Python: the binding crate
//! calls into it.
//!
//! The folders follow the concepts of the contract (`docs/contract.md`):
//!
//! * [`numeric`]: kernels every estimator is built from — exact and
//!   compensated summation, double-double arithmetic, one-pass reductions,
//!   selection and order statistics on raw input, the search index that
//!   counts sorted values below a query, the vectorised `erf`,
//!   deterministic parallelism, scratch memory.
//! * [`estimators`]: location and scale estimators (§1, §2) and the joint
//!   M-estimation of §3.
//! * [`transformations`]: score → probability maps (§4, §10) and fitting
//!   them with the §5 fallback chain.
//! * [`evaluation`]: binning and the evaluation measures of §6.
//! * [`streaming`]: state fed batch by batch, merged and stored — exact
//!   moments, the KLL sketch and the bounds read from it, windows (§9).
//! * [`distributed`]: the partition algebra of the exact distributed fit
//!   (§9).
//! * [`conformal`]: conformal p-values, their calibration-conditional
//!   adjustments and FDR-controlling selection (§11).
//! * [`sequential`]: online decisions on a stream — online FDR control,
//!   exchangeability martingales and online conformal p-values (§12).
//! * [`io`]: scores read from text lines and probabilities written back
//!   (the `outprob stream` command, §9); [`rows`]: rows that carry an
//!   identifier with their score, and the columns written back (§12).
//! * [`sample`]: the §5 input contract for fitting data; [`limits`]: the bounds of
//!   every size and count parameter; [`error`]: the one error type.
//!
//! Every estimator is generic over `f32`/`f64` input and computes in `f64`.
//!
//! Dependencies run one way: `numeric` uses only [`error`]; `estimators`
//! builds on `numeric` and `sample`; `transformations` on `estimators`;
//! `streaming` and `distributed` on both; `conformal` on `streaming`'s
//! sketch. No module depends on one that depends on it
//! (`scripts/rust_module_circles.py`, run by `scripts/dev.py test`).

pub mod conformal;
pub mod distributed;
pub mod error;
pub mod estimators;
pub mod evaluation;
pub mod io;
pub mod limits;
pub mod numeric;
pub mod rows;
pub mod sample;
pub mod sequential;
pub mod streaming;
pub mod transformations;

pub use error::Error;
pub use numeric::float::Float;
