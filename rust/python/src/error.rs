//! The one error conversion of the binding. The orphan rule forbids
//! `From<outprob_core::Error> for PyErr` here, so binding functions return
//! [`Result`], whose error holds either a core error (every core error is
//! a user input error: `ValueError`, its message as the core wrote it) or a
//! Python exception raised on the way.

use pyo3::exceptions::PyValueError;
use pyo3::PyErr;

/// A core error or a Python exception.
pub(crate) enum Error {
    Core(outprob_core::Error),
    Python(PyErr),
}

/// What binding functions return.
pub(crate) type Result<T> = std::result::Result<T, Error>;

impl From<outprob_core::Error> for Error {
    fn from(e: outprob_core::Error) -> Self {
        Error::Core(e)
    }
}

impl From<PyErr> for Error {
    fn from(e: PyErr) -> Self {
        Error::Python(e)
    }
}

/// An array the Python layer should have made contiguous: a user input
/// error like the core's.
impl From<numpy::AsSliceError> for Error {
    fn from(e: numpy::AsSliceError) -> Self {
        Error::Python(PyValueError::new_err(e.to_string()))
    }
}

impl From<Error> for PyErr {
    fn from(e: Error) -> Self {
        match e {
            Error::Core(e) => PyValueError::new_err(e.to_string()),
            Error::Python(e) => e,
        }
    }
}
