//! The exact distributed fit (contract §9): the partition algebra a
//! cluster (Dask, Spark) runs to fit on data it never gathers.
//!
//! * [`partition`]: per-partition kernels, each returning a small summary
//!   that adds up across partitions — histograms of order keys, exact
//!   sums, M-estimation sums — and the M-estimation iteration on reduced
//!   sums.
//! * [`msummary`]: the mergeable bucket summary the M-estimation's steps
//!   read instead of the scores.
//! * [`pass`]: the passes an engine runs over every partition, their
//!   partial results, how partials combine, and both as bytes.
//! * [`plan`]: the plan of one column's fit — which passes, and the fit
//!   read from their partials (exact estimators, or the streaming fit of a
//!   census).

pub mod msummary;
pub mod partition;
pub mod pass;
pub mod plan;
