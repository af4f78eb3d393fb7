//! Stored state as a record of named builtins (contract §9, "Stored
//! state"): each stored type declares its fields once, in a [`Schema`] —
//! name and kind — and converts itself to and from a [`Record`] in one
//! place, checked by one constructor. The binding converts any record to
//! a Python dict and back by its schema alone, so no type needs a codec of
//! its own outside the core.
//!
//! A record read back is untrusted: a field of the wrong kind is refused
//! by name ([`Record::get`]) before the type's own checks run.

use crate::error::Error;
use core::str::FromStr;

/// What a field holds, as a builtin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A bool.
    Bool,
    /// A signed integer.
    Int,
    /// A count (an unsigned integer).
    Count,
    /// A count, or nothing.
    OptCount,
    /// A double.
    Float,
    /// A double, or nothing.
    OptFloat,
    /// A short list of doubles.
    Floats,
    /// A short list of doubles, or nothing.
    OptFloats,
    /// A name (a string).
    Name,
    /// A name, or nothing.
    OptName,
    /// A list of counts.
    Counts,
    /// A long array of doubles (a NumPy array on the Python side).
    Values,
    /// Bytes, or nothing.
    Bytes,
    /// Long arrays of doubles (NumPy arrays or lists), or nothing.
    OptArrays,
    /// Named lists of doubles, the names the type's own (a dict).
    Table,
    /// A record of the given schema.
    Record(&'static Schema),
    /// A list of records of the given schema.
    Records(&'static Schema),
}

/// The fields of a stored type, in order.
pub type Schema = [(&'static str, Kind)];

/// One field's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Field {
    /// [`Kind::Bool`].
    Bool(bool),
    /// [`Kind::Int`].
    Int(i64),
    /// [`Kind::Count`].
    Count(u64),
    /// [`Kind::OptCount`].
    OptCount(Option<u64>),
    /// [`Kind::Float`].
    Float(f64),
    /// [`Kind::OptFloat`].
    OptFloat(Option<f64>),
    /// [`Kind::Floats`].
    Floats(Vec<f64>),
    /// [`Kind::OptFloats`].
    OptFloats(Option<Vec<f64>>),
    /// [`Kind::Name`].
    Name(String),
    /// [`Kind::OptName`].
    OptName(Option<String>),
    /// [`Kind::Counts`].
    Counts(Vec<u64>),
    /// [`Kind::Values`].
    Values(Vec<f64>),
    /// [`Kind::Bytes`].
    Bytes(Option<Vec<u8>>),
    /// [`Kind::OptArrays`].
    OptArrays(Option<Vec<Vec<f64>>>),
    /// [`Kind::Table`].
    Table(Vec<(String, Vec<f64>)>),
    /// [`Kind::Record`].
    Record(Record),
    /// [`Kind::Records`].
    Records(Vec<Record>),
}

/// Named fields of a schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The fields' names and kinds.
    pub schema: &'static Schema,
    /// One value per field of the schema, in its order.
    pub fields: Vec<Field>,
}

fn refused(name: &str, kind: Kind) -> Error {
    Error::invalid(
        "state",
        format!("not a valid stored state: {name:?} is missing or not a {kind:?}"),
    )
}

/// A Rust value a field holds.
pub trait FromField: Sized {
    /// The value, if the field is of its kind.
    fn from_field(f: &Field) -> Option<Self>;
}

macro_rules! from_field {
    ($($variant:ident => $t:ty),*) => {$(
        impl FromField for $t {
            fn from_field(f: &Field) -> Option<Self> {
                match f {
                    Field::$variant(v) => Some(v.clone()),
                    _ => None,
                }
            }
        }
    )*};
}

from_field!(Bool => bool, Int => i64, Count => u64, OptCount => Option<u64>, Float => f64,
    OptFloat => Option<f64>, OptFloats => Option<Vec<f64>>, Name => String, OptName => Option<String>,
    Counts => Vec<u64>, Bytes => Option<Vec<u8>>, Record => Record, Records => Vec<Record>,
    OptArrays => Option<Vec<Vec<f64>>>, Table => Vec<(String, Vec<f64>)>);

impl FromField for Vec<f64> {
    fn from_field(f: &Field) -> Option<Self> {
        match f {
            Field::Floats(v) | Field::Values(v) => Some(v.clone()),
            _ => None,
        }
    }
}

impl Record {
    /// A record of `schema` from its fields, in the schema's order.
    pub fn new(schema: &'static Schema, fields: Vec<Field>) -> Self {
        debug_assert_eq!(schema.len(), fields.len());
        Record { schema, fields }
    }

    /// The value of field `name`, refused by name when the record lacks it
    /// or holds another kind.
    pub fn get<T: FromField>(&self, name: &str) -> Result<T, Error> {
        let at = self.schema.iter().position(|(n, _)| *n == name);
        let kind = at.map_or(Kind::Bool, |i| self.schema[i].1);
        at.and_then(|i| self.fields.get(i))
            .and_then(T::from_field)
            .ok_or_else(|| refused(name, kind))
    }

    /// Field `name` moved out of the record, leaving `false` in its place:
    /// a long array taken without a copy; `None` when the record lacks it.
    pub fn take(&mut self, name: &str) -> Option<Field> {
        let at = self.schema.iter().position(|(n, _)| *n == name)?;
        self.fields
            .get_mut(at)
            .map(|f| core::mem::replace(f, Field::Bool(false)))
    }

    /// Count field `name` as a narrower integer, refused by name when it
    /// does not fit.
    pub fn count<T: TryFrom<u64>>(&self, name: &'static str) -> Result<T, Error> {
        let v: u64 = self.get(name)?;
        T::try_from(v).map_err(|_| Error::invalid(name, format!("out of range, got {v}")))
    }

    /// Name field `name` parsed by the core's `FromStr` (whose error names
    /// the parameter and the names it takes).
    pub fn parse<T: FromStr<Err = Error>>(&self, name: &str) -> Result<T, Error> {
        self.get::<String>(name)?.parse()
    }

    /// Optional name field `name`, parsed as [`Record::parse`] does.
    pub fn parse_opt<T: FromStr<Err = Error>>(&self, name: &str) -> Result<Option<T>, Error> {
        self.get::<Option<String>>(name)?
            .map(|s| s.parse())
            .transpose()
    }
}

/// A core value built from a record of named parameters: the keyword
/// arguments of a constructor, declared once in [`FromRecord::SCHEMA`] and
/// checked by [`FromRecord::from_record`] with errors that name the field.
pub trait FromRecord: Sized {
    /// The parameters' names and kinds.
    const SCHEMA: &'static Schema;

    /// The value, checked.
    fn from_record(r: &Record) -> Result<Self, Error>;
}

/// A state stored as a record of [`Stored::STATE`] and read back into a
/// state of the same parameters: the one stored-state protocol of the
/// binding's classes with state.
pub trait Stored {
    /// The state's fields.
    const STATE: &'static Schema;

    /// The state as a record of [`Stored::STATE`].
    fn to_record(&self) -> Record;

    /// The state replaced by a stored one, checked against itself and the
    /// parameters by the type's one checked constructor; unchanged on error.
    fn restore(&mut self, r: &Record) -> Result<(), Error>;
}

#[cfg(test)]
mod tests {
    use super::*;

    const POINT: &Schema = &[("n", Kind::Count), ("xs", Kind::Floats)];

    #[test]
    fn fields_by_name_and_kind() {
        let r = Record::new(POINT, vec![Field::Count(3), Field::Floats(vec![1.0])]);
        assert_eq!(r.get::<u64>("n").unwrap(), 3);
        assert_eq!(r.get::<Vec<f64>>("xs").unwrap(), vec![1.0]);
        assert!(r.get::<f64>("n").unwrap_err().to_string().contains("\"n\""));
        assert!(r.get::<u64>("missing").is_err());
        let short = Record {
            schema: POINT,
            fields: vec![Field::Count(3)],
        };
        assert!(short.get::<Vec<f64>>("xs").is_err());
    }

    const PARAMS: &Schema = &[
        ("k", Kind::Count),
        ("nan", Kind::Name),
        ("opt", Kind::OptName),
    ];

    #[test]
    fn narrowed_counts_and_parsed_names() {
        use crate::sample::NanPolicy;
        let r = |k: u64, nan: &str, opt: Option<&str>| {
            let opt = Field::OptName(opt.map(str::to_owned));
            Record::new(PARAMS, vec![Field::Count(k), Field::Name(nan.into()), opt])
        };
        assert_eq!(r(7, "omit", None).count::<u16>("k").unwrap(), 7);
        let e = r(70_000, "omit", None).count::<u16>("k").unwrap_err();
        assert!(e.to_string().contains('k'), "{e}");
        let ok = r(1, "raise", Some("omit"));
        assert_eq!(ok.parse::<NanPolicy>("nan").unwrap(), NanPolicy::Raise);
        assert_eq!(
            ok.parse_opt::<NanPolicy>("opt").unwrap(),
            Some(NanPolicy::Omit)
        );
        assert_eq!(
            r(1, "omit", None).parse_opt::<NanPolicy>("opt").unwrap(),
            None
        );
        let bad = r(1, "drop", None).parse::<NanPolicy>("nan").unwrap_err();
        assert!(bad.to_string().contains("nan_policy"), "{bad}");
    }
}
