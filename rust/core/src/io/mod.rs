//! Text input and output (contract §9, "Command line").
//!
//! * [`lines`]: scores read from text lines and probabilities written
//!   back, the reader and the writer of `outprob stream`.

pub mod lines;
