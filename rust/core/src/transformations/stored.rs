//! A fitted map as a record of builtins (contract §10, "Stored maps"; see
//! [`crate::io::record`]): what `FittedMap.to_dict` writes and pickles
//! carry — the family, orientation, shape, pretransform, each named
//! parameter's values (one per column) and a rank map's sorted scores.
//! Read back, the record is untrusted: [`FittedMap::new`] checks it.

use crate::error::Error;
use crate::io::record::{Field, Kind, Record, Schema};

use super::fitted::{FittedMap, MapKind, MapParts};
use super::gaussian_options::PretransformKind;

/// The fields of a stored map; `params` holds the names of
/// [`MapKind::params`], `sorted` is `None` but for rank maps.
pub const MAP: &Schema = &[
    ("kind", Kind::Name),
    ("negate", Kind::Bool),
    ("two_d", Kind::Bool),
    ("pretransform", Kind::OptName),
    ("params", Kind::Table),
    ("sorted", Kind::OptArrays),
];

impl FittedMap {
    /// The map as a record of [`MAP`].
    pub fn to_record(&self) -> Record {
        let p = self.parts();
        let names = p.kind.params(p.pretransform);
        let rank = matches!(p.kind, MapKind::Rank | MapKind::LogRank);
        let params = names.iter().map(|n| (*n).to_owned()).zip(p.params.clone());
        Record::new(
            MAP,
            vec![
                Field::Name(p.kind.name().to_owned()),
                Field::Bool(p.negate),
                Field::Bool(p.two_d),
                Field::OptName(p.pretransform.name().map(str::to_owned)),
                Field::Table(params.collect()),
                Field::OptArrays(rank.then(|| p.sorted.clone())),
            ],
        )
    }

    /// The map of a record of [`MAP`], checked by [`FittedMap::new`]; a
    /// parameter its family names and the record lacks is refused by name.
    pub fn from_record(r: &Record) -> Result<Self, Error> {
        let kind: MapKind = r.parse("kind")?;
        let pretransform = r
            .parse_opt("pretransform")?
            .unwrap_or(PretransformKind::Identity);
        let table: Vec<(String, Vec<f64>)> = r.get("params")?;
        let params = kind.params(pretransform).iter().map(|name| {
            let found = table.iter().find(|(n, _)| n == name);
            found
                .map(|(_, v)| v.clone())
                .ok_or_else(|| Error::invalid("state", format!("missing {name:?}")))
        });
        let sorted: Option<Vec<Vec<f64>>> = r.get("sorted")?;
        FittedMap::new(MapParts {
            kind,
            negate: r.get("negate")?,
            two_d: r.get("two_d")?,
            pretransform,
            params: params.collect::<Result<_, _>>()?,
            sorted: sorted.unwrap_or_default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_reads_back_as_written() {
        let parts = MapParts {
            pretransform: PretransformKind::Sqrt,
            ..MapParts::one_column(MapKind::Gaussian, true, &[1.0, 2.0, 0.5])
        };
        let map = FittedMap::new(parts).unwrap();
        let r = map.to_record();
        assert_eq!(FittedMap::from_record(&r).unwrap().parts(), map.parts());
        let mut lacking = r.clone();
        lacking.fields[4] = Field::Table(vec![("center".into(), vec![1.0])]);
        let e = FittedMap::from_record(&lacking).unwrap_err().to_string();
        assert!(e.contains("\"scale\""), "{e}");
        let rank = MapParts {
            sorted: vec![vec![1.0, 2.0]],
            ..MapParts::one_column(MapKind::Rank, false, &[])
        };
        let r = FittedMap::new(rank).unwrap().to_record();
        assert_eq!(
            r.get::<Option<Vec<Vec<f64>>>>("sorted").unwrap(),
            Some(vec![vec![1.0, 2.0]])
        );
    }
}
