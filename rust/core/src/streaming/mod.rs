//! Streaming fitting (contract §9): state that is updated batch by batch,
//! merged across workers and serialized, from which the fitted parameters
//! of contract §1–§4 are read at any time. The exact distributed fit,
//! which needs no state of its own, is [`crate::distributed`].
//!
//! * [`moments`]: exact running mean, SD and extremes.
//! * [`kll`]: the KLL quantile sketch in Apache DataSketches' byte format.
//! * [`bounds`]: estimators read from a sketch, each with the value
//!   interval its rank error guarantees, and the implied bound on |Δp|.
//! * [`window`]: the most recent W scores, refitted exactly on demand.
//! * [`fit`]: the streaming counterpart of a Gaussian or linear fit.
//! * [`extremes`]: count, min and max: the state of a linear fit.
//! * [`columns`]: state of several score columns fed by 2-D batches.
//! * [`state`]: the running state of a fit's columns as a stream keeps it
//!   (Gaussian, linear or windowed), and its stored records.
//! * [`text`]: `outprob stream`'s plain path, lines in and probabilities
//!   out.
//! * [`sketch`]: a KLL sketch of either item type with its sorted view.
//! * [`stored`]: the stored form of the moments, the checks of stored
//!   (untrusted) state, and the bound on the counts a stream keeps.

pub mod bounds;
pub mod columns;
pub mod extremes;
pub mod fit;
pub mod kll;
pub mod moments;
pub mod sketch;
pub mod state;
pub mod stored;
pub mod text;
pub mod window;
