//! A fitted scaling held by the extension, for the latency of small
//! transforms (contract §4): one call from Python converts nothing but the
//! scores, where `transform` re-extracts the fitted parameters each time.

use crate::{map_new, HOLD_GIL_MAX};
use numpy::{Element, PyArrayDyn, PyUntypedArrayMethods};
use outprob_core::transformations::scaling::{self, Gaussian, Linear, Scaling};
use outprob_core::Float;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

enum Columns {
    Gaussian(Vec<Gaussian>),
    Linear(Vec<Linear>),
}

/// The fitted parameters of one scaler, ready to apply.
#[pyclass(frozen, module = "outprob._core")]
pub(crate) struct Transformer {
    columns: Columns,
    negate: bool,
    /// Score columns of a 2-D fit; `None` for a 1-D fit (element-wise).
    n_features: Option<usize>,
}

impl Transformer {
    /// A 1-D fit's Gaussian scaling.
    pub(crate) fn gaussian(g: Gaussian, negate: bool) -> Self {
        Self {
            columns: Columns::Gaussian(vec![g]),
            negate,
            n_features: None,
        }
    }

    /// A 1-D fit's linear scaling.
    pub(crate) fn linear(l: Linear, negate: bool) -> Self {
        Self {
            columns: Columns::Linear(vec![l]),
            negate,
            n_features: None,
        }
    }

    /// The probabilities of `x` if it is a C-contiguous, aligned,
    /// native-order array of `T` of a shape this fit maps; else `None`.
    fn apply<T: Float + Element>(
        &self,
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        threads: usize,
    ) -> PyResult<Option<Py<PyAny>>> {
        let Ok(a) = x.cast::<PyArrayDyn<T>>() else {
            return Ok(None);
        };
        let shape = a.shape();
        let fits = match self.n_features {
            None => !shape.is_empty(),
            Some(k) => shape.len() == 2 && shape[1] == k,
        };
        if !fits || !a.is_c_contiguous() || !a.is_aligned() {
            return Ok(None);
        }
        let negate = self.negate;
        // A few thousand scores take microseconds: releasing and retaking
        // the GIL would cost a good part of that.
        let hold_gil = a.len() < HOLD_GIL_MAX;
        let Some((out, done)) =
            map_new(py, a, hold_gil, threads, |src, dst| match &self.columns {
                Columns::Gaussian(c) => scaling::transform(src, dst, c, negate),
                Columns::Linear(c) => scaling::transform(src, dst, c, negate),
            })?
        else {
            return Ok(None);
        };
        done.map_err(crate::to_py)?;
        Ok(Some(out.into_any().unbind()))
    }
}

fn columns<S: Scaling>(pairs: impl Iterator<Item = S>) -> Vec<S> {
    pairs.collect()
}

#[pymethods]
impl Transformer {
    /// `scaling`: "gaussian" (first, second = centers, scales) or "linear"
    /// (mins, maxs), one pair per column; `two_d`: fitted on (n, k) scores.
    #[new]
    fn new(
        scaling: &str,
        first: Vec<f64>,
        second: Vec<f64>,
        negate: bool,
        two_d: bool,
    ) -> PyResult<Self> {
        if first.len() != second.len() || first.is_empty() || (!two_d && first.len() != 1) {
            return Err(PyValueError::new_err(
                "a fitted scaling needs one parameter pair per score column",
            ));
        }
        let pairs = first.iter().copied().zip(second.iter().copied());
        let columns = match scaling {
            "gaussian" => Columns::Gaussian(columns(
                pairs.map(|(center, scale)| Gaussian { center, scale }),
            )),
            "linear" => Columns::Linear(columns(pairs.map(|(min, max)| Linear { min, max }))),
            other => return Err(PyValueError::new_err(format!("unknown scaling {other:?}"))),
        };
        Ok(Self {
            columns,
            negate,
            n_features: two_d.then_some(first.len()),
        })
    }

    /// The probabilities of `x` (a new array of its dtype and shape) when
    /// `x` is a C-contiguous float64/float32 ndarray of a shape this fit
    /// maps; `None` otherwise (the caller then takes the general path,
    /// which converts or explains).
    fn try_apply(
        &self,
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        threads: usize,
    ) -> PyResult<Option<Py<PyAny>>> {
        match self.apply::<f64>(py, x, threads)? {
            Some(out) => Ok(Some(out)),
            None => self.apply::<f32>(py, x, threads),
        }
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Transformer>()
}
