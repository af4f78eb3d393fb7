//! Applying fitted scalings (contract §4, §10) to scores: into a
//! preallocated `out` of the scores' dtype and shape, one set of fitted
//! parameters per score column.

use crate::convert::Wrap;
use crate::{run, run_map, Result, HOLD_GIL_MAX};
use numpy::{
    Element, PyArray1, PyArrayDyn, PyArrayMethods, PyReadonlyArray1, PyUntypedArrayMethods,
};
use outprob_core::numeric::gamma::gamma_pq;
use outprob_core::transformations::gamma::Gamma;
use outprob_core::transformations::gamma_table::{transform_tabled, GammaTable};
use outprob_core::transformations::gaussian_options::{
    transform_with, Pretransform, PretransformKind,
};
use outprob_core::transformations::mixture::Mixture;
use outprob_core::transformations::rank::{Rank, TopK};
use outprob_core::transformations::scaling::{self, Gaussian, Linear, Scaling};
use outprob_core::transformations::sigmoid::Sigmoid;
use outprob_core::{Error, Float};
use pyo3::prelude::*;

/// `map(src, dst)` from C-contiguous `x` into the preallocated `out` of the
/// same dtype and shape.
fn map_into<T: Element + Sync + Send>(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    threads: usize,
    map: impl FnOnce(&[T], &mut [T]) -> std::result::Result<(), Error> + Send,
) -> Result<()> {
    let x: numpy::PyReadonlyArrayDyn<'_, T> = x.extract()?;
    let mut out: numpy::PyReadwriteArrayDyn<'_, T> = out.extract()?;
    let (src, dst) = (x.as_slice()?, out.as_slice_mut()?);
    Ok(run_map(py, threads, src.len(), || map(src, dst))??)
}

/// [`map_into`] for either float type, by `x`'s dtype.
macro_rules! map_floats {
    ($py:expr, $x:expr, $out:expr, $threads:expr, |$s:ident, $d:ident| $body:expr) => {
        if $x.cast::<PyArrayDyn<f32>>().is_ok() {
            map_into::<f32>($py, $x, $out, $threads, |$s, $d| $body)
        } else {
            map_into::<f64>($py, $x, $out, $threads, |$s, $d| $body)
        }
    };
}

fn transform_columns<S: Scaling>(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    columns: &[S],
    negate: bool,
    threads: usize,
) -> Result<()> {
    map_floats!(py, x, out, threads, |s, d| scaling::transform(
        s, d, columns, negate
    ))
}

/// The kinds of fitted parameters `transform` applies.
#[derive(Clone, Copy)]
enum Kind {
    Gaussian,
    Linear,
}

impl std::str::FromStr for Kind {
    type Err = Error;
    fn from_str(s: &str) -> std::result::Result<Self, Error> {
        match s {
            "gaussian" => Ok(Kind::Gaussian),
            "linear" => Ok(Kind::Linear),
            other => Err(Error::InvalidParameter {
                name: "scaling",
                reason: format!("expected 'gaussian' or 'linear', got {other:?}"),
            }),
        }
    }
}

enum Columns {
    Gaussian(Vec<Gaussian>),
    Linear(Vec<Linear>),
}

impl Columns {
    fn new(kind: Kind, first: &[f64], second: &[f64]) -> Self {
        let pairs = first.iter().copied().zip(second.iter().copied());
        match kind {
            Kind::Gaussian => Columns::Gaussian(
                pairs
                    .map(|(center, scale)| Gaussian { center, scale })
                    .collect(),
            ),
            Kind::Linear => Columns::Linear(pairs.map(|(min, max)| Linear { min, max }).collect()),
        }
    }

    fn map<T: Float>(
        &self,
        src: &[T],
        dst: &mut [T],
        negate: bool,
    ) -> std::result::Result<(), Error> {
        match self {
            Columns::Gaussian(c) => scaling::transform(src, dst, c, negate),
            Columns::Linear(c) => scaling::transform(src, dst, c, negate),
        }
    }
}

/// Maps scores to probabilities into `out`: `scaling` "gaussian" (`first`,
/// `second`: centers, scales) or "linear" (mins, maxs), one pair per column.
#[pyfunction]
#[pyo3(signature = (x, out, *, scaling, first, second, negate, threads = 0))]
#[allow(clippy::too_many_arguments)]
fn transform(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    scaling: Wrap<Kind>,
    first: Vec<f64>,
    second: Vec<f64>,
    negate: bool,
    threads: usize,
) -> Result<()> {
    let columns = Columns::new(scaling.0, &first, &second);
    map_floats!(py, x, out, threads, |s, d| columns.map(s, d, negate))
}

/// The fitted parameters of one Gaussian or linear scaler, ready to apply.
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
    ) -> Result<Option<Py<PyAny>>> {
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
        let out = PyArrayDyn::<T>::zeros(py, a.dims(), false);
        // SAFETY: `out` was created just now and has not been shared.
        let dst = unsafe { out.as_slice_mut() }?;
        if a.len() < HOLD_GIL_MAX {
            // SAFETY: the GIL is held until the map returns, and this
            // extension writes into arrays this small only while holding it
            // (`run_map`), so no write to `a` overlaps this read.
            let Ok(src) = (unsafe { a.as_slice() }) else {
                return Ok(None);
            };
            self.columns.map(src, dst, self.negate)?;
        } else {
            let Ok(view) = a.try_readonly() else {
                return Ok(None);
            };
            let src = view.as_slice()?;
            run(py, threads, src.len(), || {
                self.columns.map(src, dst, self.negate)
            })??;
        }
        Ok(Some(out.into_any().unbind()))
    }
}

#[pymethods]
impl Transformer {
    /// `scaling`: "gaussian" (`first`, `second` = centers, scales) or
    /// "linear" (mins, maxs), one pair per column; `two_d`: fitted on
    /// (n, k) scores.
    #[new]
    #[pyo3(signature = (*, scaling, first, second, negate, two_d))]
    fn new(
        scaling: Wrap<Kind>,
        first: Vec<f64>,
        second: Vec<f64>,
        negate: bool,
        two_d: bool,
    ) -> Result<Self> {
        if first.len() != second.len() || first.is_empty() || (!two_d && first.len() != 1) {
            return Err(Error::ShapeMismatch(
                "a fitted scaling needs one parameter pair per score column".into(),
            )
            .into());
        }
        Ok(Self {
            columns: Columns::new(scaling.0, &first, &second),
            negate,
            n_features: two_d.then_some(first.len()),
        })
    }

    /// The probabilities of `x` (a new array of its dtype and shape) when
    /// `x` is a C-contiguous float64/float32 ndarray of a shape this fit
    /// maps; `None` otherwise (the caller's general path converts or
    /// explains).
    #[pyo3(signature = (x, *, threads = 0))]
    fn try_apply(
        &self,
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        threads: usize,
    ) -> Result<Option<Py<PyAny>>> {
        match self.apply::<f64>(py, x, threads)? {
            Some(out) => Ok(Some(out)),
            None => self.apply::<f32>(py, x, threads),
        }
    }
}

/// Rank scaling into `out`: one sorted float64 array of fitted scores per
/// column; `log` for log-rank.
#[pyfunction]
#[pyo3(signature = (x, out, *, sorted, log, negate, threads = 0))]
fn transform_rank(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    sorted: Vec<PyReadonlyArray1<'_, f64>>,
    log: bool,
    negate: bool,
    threads: usize,
) -> Result<()> {
    let slices = sorted
        .iter()
        .map(|a| Ok(a.as_slice()?))
        .collect::<Result<Vec<&[f64]>>>()?;
    let columns: Vec<Rank<'_>> = slices.iter().map(|&s| Rank { sorted: s, log }).collect();
    transform_columns(py, x, out, &columns, negate, threads)
}

/// The kinds of fitted parameter rows `transform_params` applies.
#[derive(Clone, Copy)]
enum Rows {
    TopK,
    Sigmoid,
    Mixture,
}

impl std::str::FromStr for Rows {
    type Err = Error;
    fn from_str(s: &str) -> std::result::Result<Self, Error> {
        match s {
            "top_k" => Ok(Rows::TopK),
            "sigmoid" => Ok(Rows::Sigmoid),
            "mixture" => Ok(Rows::Mixture),
            other => Err(Error::InvalidParameter {
                name: "kind",
                reason: format!("expected 'top_k', 'sigmoid' or 'mixture', got {other:?}"),
            }),
        }
    }
}

/// Parametric scalings into `out`, one parameter row per column: "top_k"
/// (cutoff, max, binary), "sigmoid" (center, scale, a, b), "mixture"
/// (scale, alpha, mu, sigma, lambda).
#[pyfunction]
#[pyo3(signature = (x, out, *, kind, params, negate, threads = 0))]
fn transform_params(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    kind: Wrap<Rows>,
    params: Vec<Vec<f64>>,
    negate: bool,
    threads: usize,
) -> Result<()> {
    let width = match kind.0 {
        Rows::TopK => 3,
        Rows::Sigmoid => 4,
        Rows::Mixture => 5,
    };
    if params.iter().any(|p| p.len() != width) {
        return Err(Error::ShapeMismatch(format!("{width} parameters per column")).into());
    }
    match kind.0 {
        Rows::TopK => {
            let c: Vec<TopK> = params
                .iter()
                .map(|p| TopK {
                    cutoff: p[0],
                    max: p[1],
                    binary: p[2] != 0.0,
                })
                .collect();
            transform_columns(py, x, out, &c, negate, threads)
        }
        Rows::Sigmoid => {
            let c: Vec<Sigmoid> = params
                .iter()
                .map(|p| Sigmoid {
                    center: p[0],
                    scale: p[1],
                    a: p[2],
                    b: p[3],
                })
                .collect();
            transform_columns(py, x, out, &c, negate, threads)
        }
        Rows::Mixture => {
            let c: Vec<Mixture> = params
                .iter()
                .map(|p| Mixture {
                    scale: p[0],
                    alpha: p[1],
                    mu: p[2],
                    sigma: p[3],
                    lambda: p[4],
                })
                .collect();
            transform_columns(py, x, out, &c, negate, threads)
        }
    }
}

/// Gamma scalings of the columns, tabulated once (kept by the scaler for
/// its transforms).
#[pyclass(frozen, module = "outprob._core")]
pub(crate) struct GammaMaps {
    tables: Vec<GammaTable>,
}

#[pymethods]
impl GammaMaps {
    /// One (offset, mean, scale) per column.
    #[new]
    #[pyo3(signature = (*, offsets, means, scales))]
    fn new(py: Python<'_>, offsets: Vec<f64>, means: Vec<f64>, scales: Vec<f64>) -> Result<Self> {
        if offsets.len() != means.len() || means.len() != scales.len() {
            return Err(
                Error::ShapeMismatch("one offset, mean and scale per column".into()).into(),
            );
        }
        let tables = py.detach(|| {
            offsets
                .iter()
                .zip(&means)
                .zip(&scales)
                .map(|((&o, &m), &s)| GammaTable::new(Gamma::new(o, m, s)))
                .collect::<std::result::Result<Vec<_>, _>>()
        })?;
        Ok(GammaMaps { tables })
    }

    /// Maps C-contiguous `x` (rows × columns) into the preallocated `out`.
    #[pyo3(signature = (x, out, *, negate, threads = 0))]
    fn transform(
        &self,
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        out: &Bound<'_, PyAny>,
        negate: bool,
        threads: usize,
    ) -> Result<()> {
        let tables = &self.tables;
        map_floats!(py, x, out, threads, |s, d| transform_tabled(
            s, d, tables, negate
        ))
    }
}

/// Gaussian scaling after a pretransform (None, "sqrt", "minus_log"), one
/// (pre_min, center, λ·scale) per column, into `out`.
#[pyfunction]
#[pyo3(signature = (x, out, *, pretransform, pre_mins, centers, scales, negate, threads = 0))]
#[allow(clippy::too_many_arguments)]
fn gaussian_options_transform(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    pretransform: Option<Wrap<PretransformKind>>,
    pre_mins: Vec<f64>,
    centers: Vec<f64>,
    scales: Vec<f64>,
    negate: bool,
    threads: usize,
) -> Result<()> {
    let kind = pretransform.map_or(PretransformKind::Identity, |p| p.0);
    if pre_mins.len() != centers.len() || centers.len() != scales.len() {
        return Err(Error::ShapeMismatch("one pre_min, center and scale per column".into()).into());
    }
    let columns: Vec<(Pretransform, Gaussian)> = pre_mins
        .iter()
        .zip(&centers)
        .zip(&scales)
        .map(|((&min, &center), &scale)| (kind.fitted(min), Gaussian { center, scale }))
        .collect();
    map_floats!(py, x, out, threads, |s, d| transform_with(
        s, d, &columns, negate
    ))
}

/// The core's vectorised erf, element-wise (for testing it against SciPy).
#[pyfunction]
fn _erf<'py>(py: Python<'py>, x: PyReadonlyArray1<'py, f64>) -> Result<Bound<'py, PyArray1<f64>>> {
    let src = x.as_slice()?;
    let mut out = vec![0.0; src.len()];
    py.detach(|| outprob_core::numeric::erf::erf_slice(src, &mut out));
    Ok(PyArray1::from_vec(py, out))
}

/// `(P(a, x), Q(a, x))` element-wise (for testing the kernel against SciPy).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn _gamma_pq<'py>(
    py: Python<'py>,
    a: PyReadonlyArray1<'py, f64>,
    x: PyReadonlyArray1<'py, f64>,
) -> Result<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>)> {
    let (a, x) = (a.as_slice()?, x.as_slice()?);
    if a.len() != x.len() {
        return Err(Error::ShapeMismatch("a and x need the same length".into()).into());
    }
    let (p, q): (Vec<f64>, Vec<f64>) =
        py.detach(|| a.iter().zip(x).map(|(&a, &x)| gamma_pq(a, x)).unzip());
    Ok((PyArray1::from_vec(py, p), PyArray1::from_vec(py, q)))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(transform, m)?)?;
    m.add_class::<Transformer>()?;
    m.add_function(wrap_pyfunction!(transform_rank, m)?)?;
    m.add_function(wrap_pyfunction!(transform_params, m)?)?;
    m.add_class::<GammaMaps>()?;
    m.add_function(wrap_pyfunction!(gaussian_options_transform, m)?)?;
    m.add_function(wrap_pyfunction!(_erf, m)?)?;
    m.add_function(wrap_pyfunction!(_gamma_pq, m)?)?;
    Ok(())
}
