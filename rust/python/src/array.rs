//! Score arrays as the core reads them: [`Floats`] borrows a C-contiguous
//! float64/float32 array, [`map_array`] runs one of the core's array maps
//! from such an array into a new one (or a given `out`).

use crate::{run, Result};
use numpy::PyUntypedArrayMethods;
use numpy::{Element, PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyReadwriteArrayDyn};
use outprob_core::numeric::array_map::ArrayMap;
use outprob_core::Float;
use pyo3::prelude::*;

/// An array of either float type (the Python layer makes it C-contiguous).
pub(crate) enum Floats<'py> {
    F64(PyReadonlyArrayDyn<'py, f64>),
    F32(PyReadonlyArrayDyn<'py, f32>),
}

impl<'a, 'py> FromPyObject<'a, 'py> for Floats<'py> {
    type Error = PyErr;

    // By hand rather than derived: the derived impl tries float64 first,
    // and the error it builds for every float32 array costs more than the
    // rest of a small call.
    fn extract(ob: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = ob.cast::<PyArrayDyn<f32>>() {
            return Ok(Floats::F32(a.try_readonly()?));
        }
        Ok(Floats::F64(ob.extract()?))
    }
}

impl Floats<'_> {
    /// The array's shape.
    pub(crate) fn shape(&self) -> Vec<usize> {
        match self {
            Floats::F64(a) => a.shape().to_vec(),
            Floats::F32(a) => a.shape().to_vec(),
        }
    }
}

/// Below this many scores a map that does not iterate keeps the GIL: so
/// short a map costs less than releasing and retaking the GIL. Maps read
/// arrays this small without a borrow because no map of this extension
/// writes into one without the GIL.
pub(crate) const HOLD_GIL_MAX: usize = 4096;

/// The core's map `m` from `x` into `out`, or into a new array of `x`'s
/// dtype and shape: the array written and `m`'s output, if `x` is a
/// C-contiguous, aligned float64/float32 ndarray of a shape `m` accepts
/// (and `out` of the same dtype and shape); `None` for any other `x` (the
/// caller converts, or explains).
pub(crate) fn map_array<'py, M: ArrayMap>(
    py: Python<'py>,
    m: &M,
    x: &Bound<'py, PyAny>,
    out: Option<&Bound<'py, PyAny>>,
    threads: usize,
) -> Result<Option<(Bound<'py, PyAny>, M::Output)>> {
    match map_typed::<f64, M>(py, m, x, out, threads)? {
        Some(done) => Ok(Some(done)),
        None => map_typed::<f32, M>(py, m, x, out, threads),
    }
}

fn map_typed<'py, T: Float + Element, M: ArrayMap>(
    py: Python<'py>,
    m: &M,
    x: &Bound<'py, PyAny>,
    out: Option<&Bound<'py, PyAny>>,
    threads: usize,
) -> Result<Option<(Bound<'py, PyAny>, M::Output)>> {
    let Ok(a) = x.cast::<PyArrayDyn<T>>() else {
        return Ok(None);
    };
    if !m.accepts(a.shape()) || !a.is_c_contiguous() || !a.is_aligned() {
        return Ok(None);
    }
    let mut given = out
        .map(PyAnyMethods::extract::<PyReadwriteArrayDyn<'py, T>>)
        .transpose()?;
    let fresh = out
        .is_none()
        .then(|| PyArrayDyn::<T>::zeros(py, a.dims(), false));
    let dst = match (given.as_mut(), &fresh) {
        (Some(o), _) => o.as_slice_mut()?,
        // SAFETY: `fresh` was created just now and has not been shared.
        (None, Some(f)) => unsafe { f.as_slice_mut() }?,
        (None, None) => unreachable!("an output is given or made"),
    };
    let output = if a.len() < HOLD_GIL_MAX && !m.iterates() {
        // SAFETY: the GIL is held until the map returns, and this extension
        // writes into arrays this small only while holding it, so no write
        // to `a` overlaps this read (`out` never overlaps `x`: the caller
        // copies `x` first).
        let Ok(src) = (unsafe { a.as_slice() }) else {
            return Ok(None);
        };
        m.map(src, dst)?
    } else {
        let Ok(view) = a.try_readonly() else {
            return Ok(None);
        };
        let src = view.as_slice()?;
        run(py, threads, src.len(), || m.map(src, dst))??
    };
    let written = match (out, fresh) {
        (Some(o), _) => o.clone(),
        (None, f) => f.expect("made when no output is given").into_any(),
    };
    Ok(Some((written, output)))
}
