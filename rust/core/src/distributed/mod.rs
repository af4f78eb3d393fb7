//! The exact distributed fit (contract §9): the partition algebra a
//! cluster (Dask, Spark) runs to fit on data it never gathers.
//!
//! * [`partition`]: per-partition kernels, each returning a small summary
//!   that adds up across partitions — censuses, histograms of order keys,
//!   exact sums, M-estimation sums — and the reduction of the M-estimation
//!   iteration over them.

pub mod partition;
