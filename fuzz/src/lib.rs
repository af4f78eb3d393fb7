//! Fuzz targets of `outprob-core` (issue #10, contract §5): arbitrary bytes
//! become scores and parameters, and every call must keep the contract — no
//! panic, probabilities in [0, 1], NaN exactly where the input had NaN,
//! errors only for the reasons the contract names, and results equal to a
//! straightforward recomputation (or to themselves under exact symmetries:
//! scaling by a power of two, negation) where that is cheap.
//!
//! The bodies live here, not in `fuzz_targets/`, so that the committed corpus
//! is replayed by `cargo test -p outprob-fuzz` on the stable toolchain
//! (tests/corpus.rs) as well as run by `cargo fuzz`.

mod binning;
mod fit;
mod input;
mod limits;
mod lines;
mod metrics;
mod sequential;
mod state;
mod transform;

pub use binning::binning;
pub use fit::fit;
pub use limits::limits;
pub use lines::lines;
pub use metrics::metrics;
pub use sequential::sequential;
pub use state::state;
pub use transform::transform;

/// A fuzz target: checks one input, panics on a breach of the contract.
pub type Target = fn(&[u8]);

/// The fuzz targets by name, as `cargo fuzz` and the corpus folders call them.
pub const TARGETS: [(&str, Target); 8] = [
    ("fit", fit),
    ("transform", transform),
    ("binning", binning),
    ("metrics", metrics),
    ("state", state),
    ("lines", lines),
    ("limits", limits),
    ("sequential", sequential),
];
