//! `outprob._core`: the PyO3 binding of `outprob-core`.
//!
//! Each function extracts C-contiguous float32/float64 arrays (the Python
//! layer guarantees contiguity and native byte order), releases the GIL for
//! the computation, and maps core errors to `ValueError` in one place.

// PyO3 extracts arguments as owned values.
#![allow(clippy::needless_pass_by_value)]

mod estimators;
mod metrics;
mod scaling;

use numpy::PyReadonlyArray1;
use outprob_core::Error;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Every core error is a user input error.
pub(crate) fn to_py(e: Error) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Parses a name with the core's `FromStr`, mapping its error.
pub(crate) fn parse<T: core::str::FromStr<Err = Error>>(s: &str) -> PyResult<T> {
    s.parse().map_err(to_py)
}

/// A 1-D array of either float type.
#[derive(FromPyObject)]
pub(crate) enum Floats<'py> {
    F64(PyReadonlyArray1<'py, f64>),
    F32(PyReadonlyArray1<'py, f32>),
}

/// Runs `$body` on the contiguous data of a [`Floats`] (bound to `$s`)
/// without the GIL.
macro_rules! with_slice {
    ($py:expr, $x:expr, |$s:ident| $body:expr) => {
        match $x {
            $crate::Floats::F64(a) => {
                let $s = a
                    .as_slice()
                    .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
                $py.detach(|| $body)
            }
            $crate::Floats::F32(a) => {
                let $s = a
                    .as_slice()
                    .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
                $py.detach(|| $body)
            }
        }
    };
}
pub(crate) use with_slice;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    estimators::register(m)?;
    scaling::register(m)?;
    metrics::register(m)?;
    Ok(())
}
