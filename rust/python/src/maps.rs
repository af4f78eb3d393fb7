//! The fitted map of a scaler of any family as a Python object: what
//! every transform reads, usable without the scaler that fitted it, with
//! its state as builtins (for `to_dict` and pickling).

use crate::array::map_array;
use crate::convert::{record_from_dict, record_to_dict};
use crate::Result;
use numpy::ndarray::ArrayView1;
use numpy::{PyArray1, PyArrayMethods};
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
    #[new]
    fn new(state: &Bound<'_, PyDict>) -> Result<Self> {
        let record = record_from_dict(state, MAP)?;
        Ok(PyFittedMap(FittedMap::from_record(record)?))
    }

    #[staticmethod]
    fn one_column(kind: &str, negate: bool, params: Vec<f64>) -> Result<Self> {
        let parts = MapParts::one_column(kind.parse::<MapKind>()?, negate, &params);
        Ok(PyFittedMap(FittedMap::new(parts)?))
    }

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
