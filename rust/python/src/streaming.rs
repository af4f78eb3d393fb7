//! Streaming state (contract §9): the KLL sketch, the streaming fit and
//! the exact windows over the core's `streaming::state` types.

use crate::convert::{dicts, records};
use crate::fit::PyGaussianSpec;
use crate::prelude::*;
use outprob_core::streaming::sketch::{AnySketch, QueriedSketch};
use outprob_core::streaming::state::{StreamingState, WindowState, WINDOW};

locked!(PyKllSketch(QueriedSketch) as "KllSketch");

impl PyKllSketch {
    fn read<R>(&self, py: Python<'_>, f: impl FnOnce(&AnySketch) -> R) -> R {
        f(self.lock(py).sketch())
    }
}

#[pymethods]
impl PyKllSketch {
    #[new]
    #[pyo3(signature = (*, k, double, seed))]
    fn new(k: u32, double: bool, seed: u64) -> Result<Self> {
        let sketch = AnySketch::new(k, double, seed)?;
        Ok(Self::wrap(QueriedSketch::new(sketch)))
    }

    fn update(&self, py: Python<'_>, x: Floats<'_>) -> Result<()> {
        Ok(with_slice!(x, |v| self.detached(py, |s| s.sketch_mut().update(v)))?)
    }

    fn merge(&self, py: Python<'_>, other: &PyKllSketch) -> Result<()> {
        let theirs = other.read(py, Clone::clone);
        Ok(self.lock(py).sketch_mut().merge(&theirs)?)
    }

    fn serialize<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.read(py, AnySketch::serialize))
    }

    #[staticmethod]
    #[pyo3(signature = (data, *, double, seed))]
    fn deserialize(data: &[u8], double: bool, seed: u64) -> Result<Self> {
        let sketch = AnySketch::deserialize(data, double, seed)?;
        Ok(Self::wrap(QueriedSketch::new(sketch)))
    }

    #[pyo3(signature = (ranks, *, inclusive))]
    fn quantiles(&self, py: Python<'_>, ranks: Vec<f64>, inclusive: bool) -> Result<Vec<f64>> {
        Ok(self.lock(py).quantiles(&ranks, inclusive)?)
    }

    #[pyo3(signature = (items, *, inclusive))]
    fn ranks(&self, py: Python<'_>, items: Vec<f64>, inclusive: bool) -> Result<Vec<f64>> {
        Ok(self.lock(py).ranks(&items, inclusive)?)
    }

    fn weighted_items<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyAny>> {
        let (values, weights) = self.lock(py).weighted_items()?;
        let pair = (values.into_pyarray(py), weights.into_pyarray(py));
        Ok(pair.into_pyobject(py)?.into_any())
    }

    #[pyo3(signature = (*, pmf))]
    fn normalized_rank_error(&self, py: Python<'_>, pmf: bool) -> f64 {
        self.read(py, |s| s.normalized_rank_error(pmf))
    }

    fn info(&self, py: Python<'_>) -> SketchInfo {
        self.read(py, |s| s.into())
    }

    fn copy(&self, py: Python<'_>) -> PyKllSketch {
        Self::wrap(QueriedSketch::new(self.read(py, Clone::clone)))
    }
}

#[pyfunction]
#[pyo3(signature = (k, *, pmf))]
pub(crate) fn kll_normalized_rank_error(k: u32, pmf: bool) -> Result<f64> {
    Ok(outprob_core::streaming::kll::normalized_rank_error(k, pmf)?)
}

locked!(PyStreamingState(StreamingState) as "StreamingState");

#[pymethods]
impl PyStreamingState {
    #[new]
    #[pyo3(signature = (*, spec, k, seed, columns, linear = false))]
    fn new(spec: &PyGaussianSpec, k: u32, seed: u64, columns: usize, linear: bool) -> Result<Self> {
        let state = StreamingState::new(spec.core, k, seed, columns, linear)?;
        Ok(Self::wrap(state))
    }

    fn update(&self, py: Python<'_>, x: Floats<'_>) -> Result<()> {
        let shape = x.shape();
        Ok(with_slice!(x, |v| self.detached(py, |s| s.update(v, &shape)))?)
    }

    fn update_and_fit(&self, py: Python<'_>, x: Floats<'_>) -> Result<Vec<StreamingResult>> {
        let shape = x.shape();
        let fits = with_slice!(x, |v| self.detached(py, |s| s.update_and_fit(v, &shape)))?;
        Ok(all(&fits))
    }

    fn merge(&self, py: Python<'_>, other: &PyStreamingState) -> Result<()> {
        let theirs = other.copy(py);
        Ok(self.lock(py).merge(&theirs)?)
    }

    fn merge_and_fit(&self, py: Python<'_>, other: &Self) -> Result<Vec<StreamingResult>> {
        let theirs = other.copy(py);
        Ok(all(&self.detached(py, |s| s.merge_and_fit(&theirs))?))
    }

    fn n(&self, py: Python<'_>) -> Vec<u64> {
        self.lock(py).n()
    }

    fn results(&self, py: Python<'_>) -> Result<Vec<StreamingResult>> {
        Ok(all(&self.detached(py, |s| s.results())?))
    }

    #[pyo3(signature = (last))]
    fn stream_fit(
        &self,
        py: Python<'_>,
        last: Option<u64>,
    ) -> Result<Vec<Option<StreamingResult>>> {
        let fits = self.detached(py, |s| s.stream_fit(last))?;
        Ok(fits.iter().map(|r| r.as_ref().map(Into::into)).collect())
    }

    fn parts<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        dicts(py, &self.lock(py).to_records())
    }

    #[staticmethod]
    #[pyo3(signature = (*, spec, parts, linear = false))]
    fn from_parts(
        spec: &PyGaussianSpec,
        parts: Vec<Bound<'_, PyDict>>,
        linear: bool,
    ) -> Result<Self> {
        let columns = records(&parts, StreamingState::column_schema(linear))?;
        let state = StreamingState::from_records(spec.core, &columns, linear)?;
        Ok(Self::wrap(state))
    }
}

locked!(PyWindowState(WindowState) as "WindowState");

#[pymethods]
impl PyWindowState {
    #[new]
    #[pyo3(signature = (*, size, refit_every, columns))]
    fn new(size: usize, refit_every: usize, columns: usize) -> Result<Self> {
        Ok(Self::wrap(WindowState::new(size, refit_every, columns)?))
    }

    #[pyo3(signature = (x, *, nan_policy))]
    fn update(&self, py: Python<'_>, x: Floats<'_>, nan_policy: Wrap<NanPolicy>) -> Result<()> {
        let (shape, nan) = (x.shape(), nan_policy.0);
        Ok(with_slice!(x, |v| self.detached(py, |w| w.update(v, &shape, nan)))?)
    }

    #[pyo3(signature = (x, *, nan_policy, spec, refit))]
    fn update_and_fit_gaussian(
        &self,
        py: Python<'_>,
        x: Floats<'_>,
        nan_policy: Wrap<NanPolicy>,
        spec: &PyGaussianSpec,
        refit: bool,
    ) -> Result<Option<Vec<GaussianFit>>> {
        let (shape, nan, spec) = (x.shape(), nan_policy.0, &spec.core);
        let fits = with_slice!(x, |v| self
            .detached(py, |w| w.update_and_refit(v, &shape, nan, spec, refit)))?;
        Ok(fits.as_deref().map(all))
    }

    fn due(&self, py: Python<'_>) -> bool {
        self.lock(py).due()
    }

    fn n(&self, py: Python<'_>) -> Vec<u64> {
        self.lock(py).seen()
    }

    #[pyo3(signature = (*, spec))]
    fn fit_gaussian(&self, py: Python<'_>, spec: &PyGaussianSpec) -> Result<Vec<GaussianFit>> {
        Ok(all(&self.detached(py, |w| w.fit_gaussian(&spec.core))?))
    }

    #[pyo3(signature = (*, negate))]
    fn fit_linear(&self, py: Python<'_>, negate: bool) -> Result<Vec<LinearFit>> {
        Ok(all(&self.lock(py).fit_linear(negate)?))
    }

    fn parts<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        dicts(py, &self.lock(py).to_records())
    }

    #[staticmethod]
    #[pyo3(signature = (*, size, refit_every, parts))]
    fn from_parts(size: usize, refit_every: usize, parts: Vec<Bound<'_, PyDict>>) -> Result<Self> {
        let windows = records(&parts, WINDOW)?;
        Ok(Self::wrap(WindowState::from_records(
            size,
            refit_every,
            &windows,
        )?))
    }
}
