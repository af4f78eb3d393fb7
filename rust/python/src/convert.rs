//! The core's enums as they cross the boundary (the `Wrap<T>` pattern of
//! polars): a Python name is parsed once, here, by the core's `FromStr`,
//! whose error names the parameter and the names it takes; an enum goes
//! back to Python as its name.

use crate::Error;
use numpy::PyArray1;
use outprob_core::io::record::{Field, Kind, Record, Schema};
use outprob_core::transformations::fit::{Center, Scale};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use std::str::FromStr;

/// A core enum extracted from its Python name.
#[derive(Clone, Copy)]
pub(crate) struct Wrap<T>(pub(crate) T);

impl<'a, 'py, T: FromStr<Err = outprob_core::Error>> FromPyObject<'a, 'py> for Wrap<T> {
    type Error = PyErr;

    fn extract(ob: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let name = ob.cast::<PyString>()?;
        Ok(Wrap(name.to_str()?.parse().map_err(Error::from)?))
    }
}

/// An estimator of contract §1–§2: its name, or a fixed number.
#[derive(Clone, Copy)]
pub(crate) struct Estimator<T>(pub(crate) T);

/// The core's estimator enums, which hold a fixed number as `Value`.
pub(crate) trait FixedValue {
    fn value(v: f64) -> Self;
}

impl FixedValue for Center {
    fn value(v: f64) -> Self {
        Center::Value(v)
    }
}

impl FixedValue for Scale {
    fn value(v: f64) -> Self {
        Scale::Value(v)
    }
}

impl<'a, 'py, T> FromPyObject<'a, 'py> for Estimator<T>
where
    T: FromStr<Err = outprob_core::Error> + FixedValue,
{
    type Error = PyErr;

    // A name is tried first: the error a failed float extraction builds
    // would cost more than the rest of a small fit.
    fn extract(ob: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if ob.is_instance_of::<PyString>() {
            return Ok(Estimator(ob.extract::<Wrap<T>>()?.0));
        }
        Ok(Estimator(T::value(ob.extract()?)))
    }
}

/// The value of `key` in a dict of stored state (a `ValueError` naming the
/// key when it is missing or of the wrong type).
pub(crate) fn item<'py, T>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<T>
where
    T: for<'a> FromPyObject<'a, 'py>,
{
    let v = d
        .get_item(key)?
        .ok_or_else(|| PyValueError::new_err(format!("state: missing {key:?}")))?;
    v.extract()
        .map_err(|_| PyValueError::new_err(format!("state: {key:?} is not valid")))
}

/// A stored record of the core as a dict of builtins: its schema's names,
/// long arrays of doubles as NumPy arrays, bytes as `bytes`.
pub(crate) fn record_to_dict<'py>(py: Python<'py>, r: &Record) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for ((name, _), f) in r.schema.iter().zip(&r.fields) {
        match f {
            Field::Bool(v) => d.set_item(name, v),
            Field::Int(v) => d.set_item(name, v),
            Field::Count(v) => d.set_item(name, v),
            Field::OptCount(v) => d.set_item(name, v),
            Field::Float(v) => d.set_item(name, v),
            Field::OptFloat(v) => d.set_item(name, v),
            Field::Floats(v) => d.set_item(name, v),
            Field::OptFloats(v) => d.set_item(name, v),
            Field::Name(v) => d.set_item(name, v),
            Field::Counts(v) => d.set_item(name, v),
            Field::Values(v) => d.set_item(name, PyArray1::from_slice(py, v)),
            Field::Bytes(v) => d.set_item(name, v.as_deref().map(|b| PyBytes::new(py, b))),
            Field::Record(r) => d.set_item(name, record_to_dict(py, r)?),
        }?;
    }
    Ok(d)
}

/// A record of `schema` from a dict of stored state (each field extracted
/// by its kind; a `ValueError` naming the key when it is missing or of
/// the wrong type). The core's constructor then checks the state.
pub(crate) fn record_from_dict(d: &Bound<'_, PyDict>, schema: &'static Schema) -> PyResult<Record> {
    let fields = schema
        .iter()
        .map(|&(name, kind)| {
            Ok(match kind {
                Kind::Bool => Field::Bool(item(d, name)?),
                Kind::Int => Field::Int(item(d, name)?),
                Kind::Count => Field::Count(item(d, name)?),
                Kind::OptCount => Field::OptCount(item(d, name)?),
                Kind::Float => Field::Float(item(d, name)?),
                Kind::OptFloat => Field::OptFloat(item(d, name)?),
                Kind::Floats => Field::Floats(item(d, name)?),
                Kind::OptFloats => Field::OptFloats(item(d, name)?),
                Kind::Name => Field::Name(item(d, name)?),
                Kind::Counts => Field::Counts(item(d, name)?),
                Kind::Values => Field::Values(item(d, name)?),
                Kind::Bytes => Field::Bytes(item(d, name)?),
                Kind::Record(s) => Field::Record(record_from_dict(&item(d, name)?, s)?),
            })
        })
        .collect::<PyResult<_>>()?;
    Ok(Record::new(schema, fields))
}
