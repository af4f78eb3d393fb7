//! The core's enums as they cross the boundary (the `Wrap<T>` pattern of
//! polars): a Python name is parsed once, here, by the core's `FromStr`,
//! whose error names the parameter and the names it takes; an enum goes
//! back to Python as its name.

use crate::Error;
use numpy::{PyArray1, PyReadonlyArray1};
use outprob_core::io::record::{Field, FromRecord, Kind, Record, Schema};
use outprob_core::transformations::fit::{Center, Scale};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyBytes, PyDict, PyString};
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

/// The value of `key` in a dict of `what` (stored state, parameters): a
/// `ValueError` naming the key when it is missing or of the wrong type.
fn item<'py, T>(d: &Bound<'py, PyDict>, key: &str, what: &str) -> PyResult<T>
where
    T: for<'a> FromPyObject<'a, 'py>,
{
    let v = d
        .get_item(key)?
        .ok_or_else(|| PyValueError::new_err(format!("{what}: missing {key:?}")))?;
    v.extract()
        .map_err(|_| PyValueError::new_err(format!("{what}: {key:?} is not valid")))
}

/// A core value from keyword parameters (`**params`): their names and
/// kinds are the core's ([`FromRecord::SCHEMA`]), which builds and checks
/// the value; a name it does not declare is a `TypeError`, as Python's.
pub(crate) fn keywords<T: FromRecord>(
    py: Python<'_>,
    kw: Option<&Bound<'_, PyDict>>,
) -> crate::Result<T> {
    let d = kw.cloned().unwrap_or_else(|| PyDict::new(py));
    for key in d.keys() {
        let key: String = key.extract()?;
        if !T::SCHEMA.iter().any(|(name, _)| *name == key) {
            let e = format!("unexpected keyword argument {key:?}");
            return Err(PyTypeError::new_err(e).into());
        }
    }
    Ok(T::from_record(&fields(&d, T::SCHEMA, "parameters")?)?)
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
            Field::OptName(v) => d.set_item(name, v),
            Field::Counts(v) => d.set_item(name, v),
            Field::Values(v) => d.set_item(name, PyArray1::from_slice(py, v)),
            Field::Bytes(v) => d.set_item(name, v.as_deref().map(|b| PyBytes::new(py, b))),
            Field::Record(r) => d.set_item(name, record_to_dict(py, r)?),
            Field::Records(v) => d.set_item(name, dicts(py, v)?),
            Field::OptArrays(v) => d.set_item(name, v),
            Field::Table(v) => d.set_item(name, v.iter().cloned().into_py_dict(py)?),
        }?;
    }
    Ok(d)
}

/// A record of `schema` from a dict of stored state (each field extracted
/// by its kind; a `ValueError` naming the key when it is missing or of
/// the wrong type). The core's constructor then checks the state.
pub(crate) fn record_from_dict(d: &Bound<'_, PyDict>, schema: &'static Schema) -> PyResult<Record> {
    fields(d, schema, "state")
}

/// Stored records as a list of dicts.
pub(crate) fn dicts<'py>(py: Python<'py>, rs: &[Record]) -> PyResult<Vec<Bound<'py, PyDict>>> {
    rs.iter().map(|r| record_to_dict(py, r)).collect()
}

/// A list of stored dicts read by their schema.
pub(crate) fn records(
    list: &[Bound<'_, PyDict>],
    schema: &'static Schema,
) -> PyResult<Vec<Record>> {
    list.iter().map(|d| record_from_dict(d, schema)).collect()
}

fn fields(d: &Bound<'_, PyDict>, schema: &'static Schema, what: &str) -> PyResult<Record> {
    let fields = schema
        .iter()
        .map(|&(name, kind)| {
            Ok(match kind {
                Kind::Bool => Field::Bool(item(d, name, what)?),
                Kind::Int => Field::Int(item(d, name, what)?),
                Kind::Count => Field::Count(item(d, name, what)?),
                Kind::OptCount => Field::OptCount(item(d, name, what)?),
                Kind::Float => Field::Float(item(d, name, what)?),
                Kind::OptFloat => Field::OptFloat(item(d, name, what)?),
                Kind::Floats => Field::Floats(item(d, name, what)?),
                Kind::OptFloats => Field::OptFloats(item(d, name, what)?),
                Kind::Name => Field::Name(item(d, name, what)?),
                Kind::OptName => Field::OptName(item(d, name, what)?),
                Kind::Counts => Field::Counts(item(d, name, what)?),
                Kind::Values => Field::Values(item(d, name, what)?),
                Kind::Bytes => Field::Bytes(item(d, name, what)?),
                Kind::Record(s) => Field::Record(fields(&item(d, name, what)?, s, what)?),
                Kind::Records(s) => Field::Records(records(&item::<Vec<_>>(d, name, what)?, s)?),
                Kind::OptArrays => Field::OptArrays(arrays(d, name, what)?),
                Kind::Table => Field::Table(table(&item(d, name, what)?, what)?),
            })
        })
        .collect::<PyResult<_>>()?;
    Ok(Record::new(schema, fields))
}

/// Arrays of doubles, or None: contiguous float64 arrays copied whole, any
/// other sequences element by element.
fn arrays(d: &Bound<'_, PyDict>, key: &str, what: &str) -> PyResult<Option<Vec<Vec<f64>>>> {
    match d.get_item(key)? {
        Some(v) if v.is_none() => return Ok(None),
        Some(v) => {
            if let Ok(a) = v.extract::<Vec<PyReadonlyArray1<'_, f64>>>() {
                let copied: Option<Vec<Vec<f64>>> = a
                    .iter()
                    .map(|a| a.as_slice().ok().map(<[f64]>::to_vec))
                    .collect();
                if copied.is_some() {
                    return Ok(copied);
                }
            }
        }
        None => {}
    }
    item(d, key, what)
}

/// A dict of named lists of doubles.
fn table(d: &Bound<'_, PyDict>, what: &str) -> PyResult<Vec<(String, Vec<f64>)>> {
    let named = |(k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>)| {
        let name: String = k.extract()?;
        let values = v
            .extract()
            .map_err(|_| PyValueError::new_err(format!("{what}: {name:?} is not valid")))?;
        Ok((name, values))
    };
    d.iter().map(named).collect()
}
