//! Streaming state (contract §9): the KLL sketch, the streaming Gaussian
//! fit and the exact window, as Python objects; and the per-partition
//! kernels of the exact Dask fit.

use crate::estimators::{m_tuple, MTuple};
use crate::scaling::{gaussian_spec, Spec};
use crate::{parse, to_py, Floats};
use numpy::{IntoPyArray, PyArray1};
use outprob_core::sample::NanPolicy;
use outprob_core::streaming::bounds::Interval;
use outprob_core::streaming::fit::StreamingGaussian;
use outprob_core::streaming::kll::serde::{deserialize, serialize};
use outprob_core::streaming::kll::{KllSketch, SortedView};
use outprob_core::streaming::moments::{Moments, MomentsParts};
use outprob_core::streaming::window::Window;
use outprob_core::Float;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// Runs `f` on the data of a [`Floats`] without the GIL (single thread:
/// streaming batches are appended in order).
macro_rules! on_floats {
    ($py:expr, $x:expr, |$s:ident| $body:expr) => {
        match $x {
            Floats::F64(a) => {
                let $s = a
                    .as_slice()
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                $py.detach(|| $body)
            }
            Floats::F32(a) => {
                let $s = a
                    .as_slice()
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                $py.detach(|| $body)
            }
        }
    };
}

/// A sketch of either item type.
#[derive(Clone)]
enum Sketch {
    Double(KllSketch<f64>),
    Float(KllSketch<f32>),
}

macro_rules! each {
    ($s:expr, |$k:ident| $body:expr) => {
        match $s {
            Sketch::Double($k) => $body,
            Sketch::Float($k) => $body,
        }
    };
}

/// DataSketches-compatible KLL sketch (`outprob.streaming.KLLSketch` wraps it).
#[pyclass(module = "outprob._core", name = "KllSketch")]
pub(crate) struct PyKll {
    sketch: Sketch,
    view: Option<SortedView>,
}

fn to_f32(x: &[f64]) -> Vec<f32> {
    x.iter().map(|&v| v as f32).collect()
}

impl PyKll {
    fn view(&mut self) -> PyResult<&SortedView> {
        if self.view.is_none() {
            let v = each!(&self.sketch, |s| s.sorted_view()).map_err(|_| {
                PyValueError::new_err("the sketch is empty: update it with scores first")
            })?;
            self.view = Some(v);
        }
        Ok(self.view.as_ref().expect("just set"))
    }
}

#[pymethods]
impl PyKll {
    #[new]
    fn new(k: u32, double: bool, seed: u64) -> PyResult<Self> {
        let k = outprob_core::streaming::kll::check_k(k).map_err(to_py)?;
        let sketch = if double {
            Sketch::Double(KllSketch::new(k, seed).map_err(to_py)?)
        } else {
            Sketch::Float(KllSketch::new(k, seed).map_err(to_py)?)
        };
        Ok(PyKll { sketch, view: None })
    }

    fn update(&mut self, py: Python<'_>, x: Floats<'_>) -> PyResult<()> {
        self.view = None;
        let sketch = &mut self.sketch;
        match (sketch, x) {
            (Sketch::Double(s), Floats::F64(a)) => {
                let v = a
                    .as_slice()
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                py.detach(|| s.update(v));
            }
            (Sketch::Float(s), Floats::F32(a)) => {
                let v = a
                    .as_slice()
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                py.detach(|| s.update(v));
            }
            (Sketch::Double(s), Floats::F32(a)) => {
                let v = a
                    .as_slice()
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                py.detach(|| {
                    let w: Vec<f64> = v.iter().map(|&f| f64::from(f)).collect();
                    s.update(&w);
                });
            }
            (Sketch::Float(s), Floats::F64(a)) => {
                let v = a
                    .as_slice()
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                py.detach(|| s.update(&to_f32(v)));
            }
        }
        Ok(())
    }

    fn merge(&mut self, other: &PyKll) -> PyResult<()> {
        self.view = None;
        match (&mut self.sketch, &other.sketch) {
            (Sketch::Double(a), Sketch::Double(b)) => a.merge(b),
            (Sketch::Float(a), Sketch::Float(b)) => a.merge(b),
            _ => {
                return Err(PyValueError::new_err(
                    "cannot merge a float sketch with a double sketch",
                ))
            }
        }
        Ok(())
    }

    fn serialize<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let b = each!(&self.sketch, |s| serialize(s));
        PyBytes::new(py, &b)
    }

    #[staticmethod]
    fn deserialize(data: &[u8], double: bool, seed: u64) -> PyResult<Self> {
        let sketch = if double {
            let mut s: KllSketch<f64> = deserialize(data).map_err(to_py)?;
            s.set_seed(seed);
            Sketch::Double(s)
        } else {
            let mut s: KllSketch<f32> = deserialize(data).map_err(to_py)?;
            s.set_seed(seed);
            Sketch::Float(s)
        };
        Ok(PyKll { sketch, view: None })
    }

    fn quantiles(&mut self, ranks: Vec<f64>, inclusive: bool) -> PyResult<Vec<f64>> {
        let v = self.view()?;
        ranks
            .iter()
            .map(|&r| v.quantile(r, inclusive).map_err(to_py))
            .collect()
    }

    fn ranks(&mut self, items: Vec<f64>, inclusive: bool) -> PyResult<Vec<f64>> {
        let v = self.view()?;
        Ok(items.iter().map(|&y| v.rank(y, inclusive)).collect())
    }

    #[allow(clippy::type_complexity)]
    fn weighted_items<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<u64>>)> {
        let v = self.view()?;
        let w: Vec<u64> = (0..v.values().len()).map(|j| v.weight(j)).collect();
        Ok((v.values().to_vec().into_pyarray(py), w.into_pyarray(py)))
    }

    fn normalized_rank_error(&self, pmf: bool) -> f64 {
        each!(&self.sketch, |s| s.normalized_rank_error(pmf))
    }

    /// (k, min_k, n, retained, estimation mode, double, seed)
    fn info(&self) -> (u16, u16, u64, usize, bool, bool, u64) {
        let double = matches!(self.sketch, Sketch::Double(_));
        each!(&self.sketch, |s| (
            s.k(),
            s.min_k(),
            s.n(),
            s.num_retained(),
            s.is_estimation_mode(),
            double,
            s.seed()
        ))
    }

    fn extremes(&self) -> Option<(f64, f64)> {
        each!(&self.sketch, |s| match (s.min(), s.max()) {
            (Some(a), Some(b)) => Some((a.to_f64(), b.to_f64())),
            _ => None,
        })
    }

    fn copy(&self) -> PyKll {
        PyKll {
            sketch: self.sketch.clone(),
            view: None,
        }
    }
}

/// DataSketches' ε(k).
#[pyfunction]
fn kll_normalized_rank_error(k: u32, pmf: bool) -> PyResult<f64> {
    let k = outprob_core::streaming::kll::check_k(k).map_err(to_py)?;
    Ok(outprob_core::streaming::kll::normalized_rank_error(k, pmf))
}

fn interval(i: Option<Interval>) -> Option<(f64, f64)> {
    i.map(|i| (i.lo, i.hi))
}

/// Running state of a streaming Gaussian/linear fit.
#[pyclass(module = "outprob._core", name = "StreamingState")]
pub(crate) struct PyStreaming {
    state: StreamingGaussian,
}

fn moments_dict<'py>(py: Python<'py>, m: &Moments) -> PyResult<Bound<'py, PyDict>> {
    let p = m.to_parts();
    let d = PyDict::new(py);
    d.set_item("n", p.n)?;
    d.set_item("sum_negative", p.sum_negative)?;
    d.set_item("sum_limbs", p.sum_limbs)?;
    d.set_item("shift", p.shift)?;
    d.set_item("k", p.k)?;
    d.set_item("dsum", p.dsum.to_vec())?;
    d.set_item("dsq", p.dsq.to_vec())?;
    d.set_item("min", p.min)?;
    d.set_item("max", p.max)?;
    Ok(d)
}

fn moments_from(d: &Bound<'_, PyDict>) -> PyResult<Moments> {
    let get = |k: &str| -> PyResult<Bound<'_, PyAny>> {
        d.get_item(k)?
            .ok_or_else(|| PyValueError::new_err(format!("state: missing {k:?}")))
    };
    let pair = |k: &str| -> PyResult<[f64; 2]> {
        let v: Vec<f64> = get(k)?.extract()?;
        v.try_into()
            .map_err(|_| PyValueError::new_err(format!("state: {k:?} needs two numbers")))
    };
    let parts = MomentsParts {
        n: get("n")?.extract()?,
        sum_negative: get("sum_negative")?.extract()?,
        sum_limbs: get("sum_limbs")?.extract()?,
        shift: get("shift")?.extract()?,
        k: get("k")?.extract()?,
        dsum: pair("dsum")?,
        dsq: pair("dsq")?,
        min: get("min")?.extract()?,
        max: get("max")?.extract()?,
    };
    Moments::from_parts(&parts).map_err(to_py)
}

#[pymethods]
impl PyStreaming {
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(
        center: Spec,
        scale: Spec,
        trim: f64,
        ddof: usize,
        maxiter: usize,
        tol: f64,
        nan_policy: &str,
        negate: bool,
        k: u32,
        seed: u64,
    ) -> PyResult<Self> {
        let spec = gaussian_spec(center, scale, trim, ddof, maxiter, tol, nan_policy, negate)?;
        let k = outprob_core::streaming::kll::check_k(k).map_err(to_py)?;
        Ok(PyStreaming {
            state: StreamingGaussian::new(spec, k, seed).map_err(to_py)?,
        })
    }

    fn update(&mut self, py: Python<'_>, x: Floats<'_>) -> PyResult<usize> {
        let state = &mut self.state;
        on_floats!(py, x, |s| state.update(s)).map_err(to_py)
    }

    fn merge(&mut self, other: &PyStreaming) -> PyResult<()> {
        self.state.merge(&other.state).map_err(to_py)
    }

    fn n(&self) -> u64 {
        self.state.n()
    }

    fn extremes(&self) -> PyResult<(f64, f64)> {
        self.state.extremes().map_err(to_py)
    }

    /// (center, scale, scale_used, center_interval, scale_interval,
    /// probability_error, rank_error, [(norm, M-estimate)], n)
    #[allow(clippy::type_complexity)]
    fn result(
        &self,
        py: Python<'_>,
    ) -> PyResult<(
        f64,
        f64,
        &'static str,
        Option<(f64, f64)>,
        Option<(f64, f64)>,
        Option<f64>,
        f64,
        Vec<(&'static str, MTuple)>,
        u64,
    )> {
        let r = py.detach(|| self.state.result()).map_err(to_py)?;
        Ok((
            r.center,
            r.scale,
            r.scale_used.name(),
            interval(r.center_interval),
            interval(r.scale_interval),
            r.probability_error,
            r.rank_error,
            r.m_estimates
                .iter()
                .map(|(n, e)| (n.name(), m_tuple(e)))
                .collect(),
            r.n,
        ))
    }

    /// The state as plain data: moments and the sketch's bytes.
    fn parts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("moments", moments_dict(py, self.state.moments())?)?;
        match self.state.sketch() {
            Some(s) => d.set_item("sketch", PyBytes::new(py, &serialize(s)))?,
            None => d.set_item("sketch", py.None())?,
        }
        d.set_item("seed", self.state.sketch().map_or(0, KllSketch::seed))?;
        Ok(d)
    }

    #[allow(clippy::too_many_arguments)]
    #[staticmethod]
    fn from_parts(
        center: Spec,
        scale: Spec,
        trim: f64,
        ddof: usize,
        maxiter: usize,
        tol: f64,
        nan_policy: &str,
        negate: bool,
        moments: &Bound<'_, PyDict>,
        sketch: Option<&[u8]>,
        seed: u64,
    ) -> PyResult<Self> {
        let spec = gaussian_spec(center, scale, trim, ddof, maxiter, tol, nan_policy, negate)?;
        let sketch = match sketch {
            Some(b) => {
                let mut s: KllSketch<f64> = deserialize(b).map_err(to_py)?;
                s.set_seed(seed);
                Some(s)
            }
            None => None,
        };
        let state =
            StreamingGaussian::from_parts(spec, moments_from(moments)?, sketch).map_err(to_py)?;
        Ok(PyStreaming { state })
    }
}

/// The most recent W scores, refitted exactly.
#[pyclass(module = "outprob._core", name = "WindowState")]
pub(crate) struct PyWindow {
    window: Window<f64>,
}

#[pymethods]
impl PyWindow {
    #[new]
    fn new(size: usize, refit_every: usize) -> PyResult<Self> {
        Ok(PyWindow {
            window: Window::new(size, refit_every).map_err(to_py)?,
        })
    }

    fn update(&mut self, py: Python<'_>, x: Floats<'_>, nan_policy: &str) -> PyResult<usize> {
        let nan: NanPolicy = parse(nan_policy)?;
        let w = &mut self.window;
        match x {
            Floats::F64(a) => {
                let s = a
                    .as_slice()
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                py.detach(|| w.update(s, nan))
            }
            Floats::F32(a) => {
                // float32 widens exactly: the fit is the same as on float32.
                let s = a
                    .as_slice()
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                py.detach(|| {
                    let v: Vec<f64> = s.iter().map(|&f| f64::from(f)).collect();
                    w.update(&v, nan)
                })
            }
        }
        .map_err(to_py)
    }

    fn due(&self) -> bool {
        self.window.due()
    }

    fn seen(&self) -> u64 {
        self.window.seen()
    }

    /// (center, scale, scale_used, [(norm, M-estimate)])
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn fit_gaussian(
        &mut self,
        py: Python<'_>,
        center: Spec,
        scale: Spec,
        trim: f64,
        ddof: usize,
        maxiter: usize,
        tol: f64,
        negate: bool,
    ) -> PyResult<(f64, f64, &'static str, Vec<(&'static str, MTuple)>)> {
        let spec = gaussian_spec(center, scale, trim, ddof, maxiter, tol, "omit", negate)?;
        let w = &mut self.window;
        let f = py.detach(|| w.fit_gaussian(&spec)).map_err(to_py)?;
        Ok((
            f.params.center,
            f.params.scale,
            f.scale_used.name(),
            f.m_estimates
                .iter()
                .map(|(n, e)| (n.name(), m_tuple(e)))
                .collect(),
        ))
    }

    fn fit_linear(&mut self, negate: bool) -> PyResult<(f64, f64)> {
        let spec = gaussian_spec(
            Spec::Name("mean".into()),
            Spec::Name("std".into()),
            0.1,
            0,
            30,
            1e-8,
            "omit",
            negate,
        )?;
        let l = self.window.fit_linear(&spec).map_err(to_py)?;
        Ok((l.min, l.max))
    }

    /// (size, refit_every, since_refit, seen, values)
    #[allow(clippy::type_complexity)]
    fn parts<'py>(&self, py: Python<'py>) -> (usize, usize, usize, u64, Bound<'py, PyArray1<f64>>) {
        let w = &self.window;
        (
            w.size(),
            w.refit_every(),
            w.since_refit(),
            w.seen(),
            w.values().to_vec().into_pyarray(py),
        )
    }

    #[staticmethod]
    fn from_parts(
        size: usize,
        refit_every: usize,
        since_refit: usize,
        seen: u64,
        values: Vec<f64>,
    ) -> PyResult<Self> {
        Ok(PyWindow {
            window: Window::from_parts(size, refit_every, since_refit, seen, &values)
                .map_err(to_py)?,
        })
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyKll>()?;
    m.add_class::<PyStreaming>()?;
    m.add_class::<PyWindow>()?;
    m.add_function(wrap_pyfunction!(kll_normalized_rank_error, m)?)?;
    Ok(())
}
