//! The distributed fit (contract §9): the core's plan of a column's fit,
//! the passes it asks for and their partials, as Python objects. The
//! planner loops — next pass, run it on every partition, feed the
//! combined partial — and the core decides everything else. Passes and
//! partials pickle (as the core's bytes): workers receive the one and
//! return the other.

use crate::results::{ColumnFit, StreamingResult};
use crate::spec::PyGaussianSpec;
use crate::{lock, with_slice, Floats, Result};
use outprob_core::distributed::pass::{Counts, Partial, Pass};
use outprob_core::distributed::plan::{ColumnPlan, Fitted, Method, PlanSpec};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};
use pyo3::IntoPyObjectExt;
use std::sync::Mutex;

/// A pass over the scores of a column.
#[pyclass(frozen, module = "outprob._core", name = "Pass")]
pub(crate) struct PyPass(Pass);

#[pymethods]
impl PyPass {
    /// A pass from its bytes (pickling).
    #[new]
    fn new(data: &[u8]) -> Result<Self> {
        Ok(PyPass(Pass::from_bytes(data)?))
    }

    /// The pass's partial of one piece of the column.
    fn map(&self, py: Python<'_>, x: Floats<'_>) -> Result<PyPartial> {
        Ok(PyPartial(with_slice!(py, x, |s| self.0.map(s))?))
    }

    /// What the pass computes, in a word ("census", "bracket", …).
    #[getter]
    fn kind(&self) -> &'static str {
        self.0.name()
    }

    /// `(negate, sketch_k)` of a census an engine may run natively (no
    /// moments, no pretransform); None for any other pass.
    #[getter]
    fn native_census(&self) -> Option<(bool, u16)> {
        self.0.native_census()
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> (Bound<'py, PyType>, (Bound<'py, PyBytes>,)) {
        let bytes = PyBytes::new(slf.py(), &slf.get().0.to_bytes());
        (slf.get_type(), (bytes,))
    }
}

/// A pass's partial result of a piece of the column.
#[pyclass(frozen, module = "outprob._core", name = "Partial")]
pub(crate) struct PyPartial(Partial);

#[pymethods]
impl PyPartial {
    /// A partial from its bytes (pickling, [`to_bytes`](Self::to_bytes)).
    #[new]
    fn new(data: &[u8]) -> Result<Self> {
        Ok(PyPartial(Partial::from_bytes(data)?))
    }

    /// The partial of this piece followed by `other`'s.
    fn combine(&self, other: &PyPartial) -> Result<PyPartial> {
        Ok(PyPartial(self.0.clone().combine(other.0.clone())?))
    }

    /// The partial as bytes, for the trip from a worker.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.0.to_bytes())
    }

    /// The partial of a census an engine ran natively: counts without
    /// first indexes, and the doubles sketch's bytes.
    #[staticmethod]
    #[pyo3(signature = (*, len, count, nan_count, inf_count, min, max, sketch))]
    #[allow(clippy::too_many_arguments)]
    fn census(
        len: u64,
        count: u64,
        nan_count: u64,
        inf_count: u64,
        min: f64,
        max: f64,
        sketch: Option<&[u8]>,
    ) -> Result<PyPartial> {
        let counts = Counts {
            len,
            count,
            nan: nan_count,
            nan_first: None,
            inf: inf_count,
            inf_first: None,
            min,
            max,
        };
        Ok(PyPartial(Partial::native_census(counts, sketch)?))
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> (Bound<'py, PyType>, (Bound<'py, PyBytes>,)) {
        let bytes = PyBytes::new(slf.py(), &slf.get().0.to_bytes());
        (slf.get_type(), (bytes,))
    }
}

/// The plan of one column's fit.
#[pyclass(frozen, module = "outprob._core", name = "ColumnPlan")]
pub(crate) struct PyColumnPlan(Mutex<ColumnPlan>);

#[pymethods]
impl PyColumnPlan {
    #[new]
    #[pyo3(signature = (spec, *, linear, method, collect_max, n_hint, k, native_census))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        spec: &PyGaussianSpec,
        linear: bool,
        method: &str,
        collect_max: u64,
        n_hint: Option<u64>,
        k: u16,
        native_census: bool,
    ) -> Result<Self> {
        let method = Method::named(method, collect_max, n_hint, k, native_census)?;
        let plan = ColumnPlan::new(PlanSpec {
            spec: spec.core,
            pretransform: spec.pretransform,
            fixed_center: spec.fixed_center,
            linear,
            method,
        })?;
        Ok(PyColumnPlan(Mutex::new(plan)))
    }

    /// The next pass to run, or None once the column is fitted.
    fn next_pass(&self, py: Python<'_>) -> Result<Option<PyPass>> {
        let mut g = lock(py, &self.0);
        let plan = &mut *g;
        Ok(py.detach(|| plan.next_pass())?.map(PyPass))
    }

    /// Feeds the combined partial of the pass `next_pass` returned.
    fn feed(&self, py: Python<'_>, partial: &PyPartial) {
        lock(py, &self.0).feed(partial.0.clone());
    }

    /// The fit, once `next_pass` returned None: a `ColumnFit` (exact) or a
    /// `StreamingResult` (sketch).
    fn result<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyAny>> {
        Ok(match lock(py, &self.0).fitted()? {
            Fitted::Column(c) => ColumnFit::from(c).into_bound_py_any(py)?,
            Fitted::Stream(r) => StreamingResult::from(r).into_bound_py_any(py)?,
        })
    }
}
