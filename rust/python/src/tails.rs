//! Conformal p-values with a fitted tail and combined over detectors
//! (contract §11): the core's `TailFit` held by the extension, and the
//! combination rules as functions of flat row-major arrays.

use crate::array::map_array;
use crate::conformal::PyConformalCalibration;
use crate::convert::{keywords, Wrap};
use crate::results::TailSummary;
use crate::Result;
use numpy::{PyArray1, PyReadonlyArray1};
use outprob_core::conformal::combination::{self, Ensemble, Rule};
use outprob_core::conformal::tails::{TailFit, TailSpec};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A fitted (or rejected) tail of sorted, oriented calibration scores.
#[pyclass(frozen, module = "outprob._core", name = "ConformalTail")]
pub(crate) struct Tail(TailFit);

#[pymethods]
impl Tail {
    #[new]
    #[pyo3(signature = (sorted, **params))]
    fn new(
        py: Python<'_>,
        sorted: PyReadonlyArray1<'_, f64>,
        params: Option<&Bound<'_, PyDict>>,
    ) -> Result<Self> {
        let (s, spec) = (sorted.as_slice()?, keywords::<TailSpec>(py, params)?);
        Ok(Tail(py.detach(|| TailFit::fit(s, &spec))?))
    }

    fn summary(&self) -> TailSummary {
        (&self.0).into()
    }

    #[pyo3(signature = (calibration, x, out = None, *, complement, threads = 0))]
    fn map<'py>(
        &self,
        py: Python<'py>,
        calibration: &PyConformalCalibration,
        x: &Bound<'py, PyAny>,
        out: Option<&Bound<'py, PyAny>>,
        complement: bool,
        threads: usize,
    ) -> Result<Option<Bound<'py, PyAny>>> {
        let tailed = self.0.pvalues(calibration.0.pvalues(false), complement);
        Ok(map_array(py, &tailed, x, out, threads)?.map(|(a, ())| a))
    }
}

#[pyfunction]
#[pyo3(signature = (p, k, *, rule, weights = None))]
pub(crate) fn combine_pvalues<'py>(
    py: Python<'py>,
    p: PyReadonlyArray1<'py, f64>,
    k: usize,
    rule: Wrap<Rule>,
    weights: Option<Vec<f64>>,
) -> Result<Bound<'py, PyArray1<f64>>> {
    let p = p.as_slice()?;
    let out = py.detach(|| combination::combined(p, k, rule.0, weights.as_deref()))?;
    Ok(PyArray1::from_vec(py, out))
}

/// A new float64 array.
type Scores<'py> = Bound<'py, PyArray1<f64>>;

#[pyfunction]
#[pyo3(signature = (calibration, test, k, *, negate, combine))]
pub(crate) fn ensemble_scores<'py>(
    py: Python<'py>,
    calibration: PyReadonlyArray1<'py, f64>,
    test: PyReadonlyArray1<'py, f64>,
    k: usize,
    negate: bool,
    combine: Wrap<Ensemble>,
) -> Result<(Scores<'py>, Scores<'py>)> {
    let (c, t) = (calibration.as_slice()?, test.as_slice()?);
    let (c, t) = py.detach(|| combination::ensembled(c, t, k, negate, combine.0))?;
    Ok((PyArray1::from_vec(py, c), PyArray1::from_vec(py, t)))
}
