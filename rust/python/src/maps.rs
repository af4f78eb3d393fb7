//! The fitted map of a scaler of any family as a Python object: what
//! every transform reads, usable without the scaler that fitted it, with
//! its state as builtins (for `to_dict` and pickling).

use crate::array::map_array;
use crate::convert::{record_from_dict, record_to_dict};
use crate::Result;
use numpy::ndarray::ArrayView1;
use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1};
use outprob_core::numeric::gamma::gamma_pq_pairs;
use outprob_core::transformations::fitted::{FittedMap, MapKind, MapParts};
use outprob_core::transformations::stored::MAP;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};

/// A checked fitted map.
#[pyclass(frozen, module = "outprob._core", name = "FittedMap")]
pub(crate) struct PyFittedMap(pub(crate) FittedMap);

#[pymethods]
impl PyFittedMap {
    /// A map from its `state()`, checked by the core.
    #[new]
    fn new(state: &Bound<'_, PyDict>) -> Result<Self> {
        let record = record_from_dict(state, MAP)?;
        Ok(PyFittedMap(FittedMap::from_record(record)?))
    }

    /// The map of a 1-D fit of `kind` without pretransform, from one value
    /// of each named parameter in the family's order (a Gaussian map's
    /// center and scale, a linear map's min and max), checked as the state
    /// is: what a streaming fit publishes after every batch, without a
    /// state dict.
    #[staticmethod]
    fn one_column(kind: &str, negate: bool, params: Vec<f64>) -> Result<Self> {
        let parts = MapParts::one_column(kind.parse::<MapKind>()?, negate, &params);
        Ok(PyFittedMap(FittedMap::new(parts)?))
    }

    /// The map's state as builtins: `kind`, `negate`, `two_d`,
    /// `pretransform` (Gaussian maps), `params` (each named parameter's
    /// values, one per column) and `sorted` (rank maps: each column's
    /// fitted scores).
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        record_to_dict(py, &self.0.to_record())
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyType>, (Bound<'py, PyDict>,))> {
        Ok((slf.get_type(), (slf.get().state(slf.py())?,)))
    }

    #[getter]
    fn kind(&self) -> &'static str {
        self.0.parts().kind.name()
    }

    #[getter]
    fn n_features(&self) -> Option<usize> {
        self.0.n_features()
    }

    /// A read-only view of column `j`'s sorted fitted scores (rank maps).
    fn sorted<'py>(slf: &Bound<'py, Self>, j: usize) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let column = slf
            .get()
            .0
            .parts()
            .sorted
            .get(j)
            .ok_or_else(|| PyValueError::new_err(format!("no sorted scores of column {j}")))?;
        // SAFETY: the map is frozen and never changes its vectors, so their
        // memory stays where it is while the map, the view's base, lives.
        let view = unsafe {
            PyArray1::borrow_from_array(&ArrayView1::from(&column[..]), slf.clone().into_any())
        };
        view.readwrite().make_nonwriteable();
        Ok(view)
    }

    /// The probabilities of `x` — a new array of its dtype and shape, or
    /// `out` (of the same dtype and shape, not overlapping `x`) — when `x`
    /// is a C-contiguous, aligned float64/float32 ndarray of a shape this
    /// map maps; `None` otherwise (the caller converts, or explains).
    #[pyo3(signature = (x, out = None, *, threads = 0))]
    fn transform<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        out: Option<&Bound<'py, PyAny>>,
        threads: usize,
    ) -> Result<Option<Bound<'py, PyAny>>> {
        let mapped = map_array(py, &self.0, x, out, threads)?;
        Ok(mapped.map(|(p, ())| p))
    }
}

/// The core's vectorised erf, element-wise (for testing it against SciPy).
#[pyfunction]
pub(crate) fn _erf<'py>(
    py: Python<'py>,
    x: PyReadonlyArray1<'py, f64>,
) -> Result<Bound<'py, PyArray1<f64>>> {
    let src = x.as_slice()?;
    let mut out = vec![0.0; src.len()];
    py.detach(|| outprob_core::numeric::erf::erf_slice(src, &mut out));
    Ok(PyArray1::from_vec(py, out))
}

/// `(P(a, x), Q(a, x))` element-wise (for testing the kernel against SciPy).
#[pyfunction]
#[allow(clippy::type_complexity)]
pub(crate) fn _gamma_pq<'py>(
    py: Python<'py>,
    a: PyReadonlyArray1<'py, f64>,
    x: PyReadonlyArray1<'py, f64>,
) -> Result<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>)> {
    let (a, x) = (a.as_slice()?, x.as_slice()?);
    let (p, q) = py.detach(|| gamma_pq_pairs(a, x))?;
    Ok((PyArray1::from_vec(py, p), PyArray1::from_vec(py, q)))
}
