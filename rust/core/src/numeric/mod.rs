//! Numeric kernels: summation, double-double arithmetic, reductions,
//! selection, the search index, `erf`, parallelism, the array map every
//! transform is.

pub mod array_map;
pub(crate) mod bracket;
pub mod double_double;
pub mod erf;
pub mod exp;
pub mod extract;
pub mod float;
pub mod gamma;
pub mod par;
pub mod radix;
pub mod rank;
pub mod reduce;
pub mod scratch;
pub mod search_index;
pub mod select;
pub(crate) mod simd;
pub mod sum;

/// Helpers shared by the unit tests.
#[cfg(test)]
pub(crate) mod testing {
    /// A xorshift64 stream of uniforms `k/2^53` in [0, 1) from `state`
    /// (nonzero): dependency-free, the same numbers on every platform.
    pub(crate) fn uniforms(mut state: u64) -> impl FnMut() -> f64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        }
    }
}
