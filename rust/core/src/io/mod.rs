//! Input and output formats (contract §9).
//!
//! * [`lines`]: scores read from text lines and probabilities written
//!   back, the reader and the writer of `outprob stream` ("Command line").
//! * [`record`]: stored state as a record of named builtins, one schema
//!   per stored type ("Stored state").

pub mod lines;
pub mod record;
