//! Input and output formats (contract §9).
//!
//! * [`lines`]: scores read from text lines and probabilities written
//!   back, the reader and the writer of `outprob stream` ("Command line").
//! * `split`: text fed in pieces cut into lines of bounded memory, what
//!   the reader of lines and the reader of rows ([`crate::rows`]) share.
//! * [`record`]: stored state as a record of named builtins, one schema
//!   per stored type ("Stored state").
//! * [`params`]: the keyword parameters of the constructors the binding
//!   exposes, as records, each family's declared and read once.

pub mod lines;
pub mod params;
pub mod record;
pub(crate) mod split;
