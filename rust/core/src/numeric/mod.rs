//! Numeric kernels: summation, reductions, selection, `erf`, parallelism.

pub(crate) mod bracket;
pub mod erf;
pub mod float;
pub mod gamma;
pub mod inverse_powers;
pub mod par;
pub mod rank;
pub mod reduce;
pub mod scratch;
pub mod select;
pub(crate) mod simd;
pub mod sum;
