//! Evaluation of outlier probabilities (contract §6): binning and measures.

pub mod binning;
pub mod metrics;
