//! The distributed fit (contract §9): the core's plan of a column's fit,
//! the passes it asks for and their partials, as Python objects. The
//! planner loops — next pass, run it on every partition, feed the
//! combined partial — and the core decides everything else. Passes and
//! partials pickle (as the core's bytes): workers receive the one and
//! return the other.

use crate::fit::PyGaussianSpec;
use crate::prelude::*;
use outprob_core::distributed::pass::{Partial, Pass};
use outprob_core::distributed::plan::{ColumnPlan, Fitted, PlanSpec};
use outprob_core::io::params::PlanOptions;
use pyo3::types::PyType;
use pyo3::IntoPyObjectExt;

/// A frozen class over a core value that pickles as its bytes: `$py(data)`
/// reads them (checked by the core), `__reduce__` writes them.
macro_rules! pickled {
    ($py:ident($core:ty) as $name:literal { $($methods:tt)* }) => {
        #[pyclass(frozen, module = "outprob._core", name = $name)]
        pub(crate) struct $py($core);

        #[pymethods]
        impl $py {
            #[new]
            fn new(data: &[u8]) -> Result<Self> {
                Ok($py(<$core>::from_bytes(data)?))
            }

            fn __reduce__<'py>(
                slf: &Bound<'py, Self>,
            ) -> (Bound<'py, PyType>, (Bound<'py, PyBytes>,)) {
                let bytes = PyBytes::new(slf.py(), &slf.get().0.to_bytes());
                (slf.get_type(), (bytes,))
            }

            $($methods)*
        }
    };
}

pickled!(
    PyPass(Pass) as "Pass" {
        fn map(&self, py: Python<'_>, x: Floats<'_>) -> Result<PyPartial> {
            Ok(PyPartial(with_slice!(py, x, |s| self.0.map(s))?))
        }

        #[getter]
        fn kind(&self) -> &'static str {
            self.0.name()
        }

        #[getter]
        fn native_census(&self) -> Option<(bool, u16)> {
            self.0.native_census()
        }
    }
);

pickled!(
    PyPartial(Partial) as "Partial" {
        fn combine(&self, other: &PyPartial) -> Result<PyPartial> {
            Ok(PyPartial(self.0.clone().combine(other.0.clone())?))
        }

        fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
            PyBytes::new(py, &self.0.to_bytes())
        }

        #[staticmethod]
        #[pyo3(signature = (**params))]
        fn census(py: Python<'_>, params: Option<&Bound<'_, PyDict>>) -> Result<PyPartial> {
            Ok(PyPartial(keywords(py, params)?))
        }
    }
);

locked!(PyColumnPlan(ColumnPlan) as "ColumnPlan");

#[pymethods]
impl PyColumnPlan {
    #[new]
    #[pyo3(signature = (spec, **params))]
    fn new(
        py: Python<'_>,
        spec: &PyGaussianSpec,
        params: Option<&Bound<'_, PyDict>>,
    ) -> Result<Self> {
        let PlanOptions { linear, method } = keywords(py, params)?;
        let (pretransform, fixed_center) = (spec.pretransform, spec.fixed_center);
        let (spec, plan) = (spec.core, ColumnPlan::new);
        Ok(Self::wrap(plan(PlanSpec {
            spec,
            pretransform,
            fixed_center,
            linear,
            method,
        })?))
    }

    fn next_pass(&self, py: Python<'_>) -> Result<Option<PyPass>> {
        Ok(self.detached(py, ColumnPlan::next_pass)?.map(PyPass))
    }

    fn feed(&self, py: Python<'_>, partial: &PyPartial) {
        self.lock(py).feed(partial.0.clone());
    }

    fn result<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyAny>> {
        Ok(match self.lock(py).fitted()? {
            Fitted::Column(c) => ColumnFit::from(c).into_bound_py_any(py)?,
            Fitted::Stream(r) => StreamingResult::from(r).into_bound_py_any(py)?,
        })
    }
}
