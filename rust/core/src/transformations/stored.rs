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
    /// The record's arrays move into the map.
    pub fn from_record(mut r: Record) -> Result<Self, Error> {
        let kind: MapKind = r.parse("kind")?;
        let pretransform = r
            .parse_opt("pretransform")?
            .unwrap_or(PretransformKind::Identity);
        let (negate, two_d) = (r.get("negate")?, r.get("two_d")?);
        let Some(Field::Table(mut table)) = r.take("params") else {
            return Err(r.get::<Vec<(String, Vec<f64>)>>("params").unwrap_err());
        };
        let Some(Field::OptArrays(sorted)) = r.take("sorted") else {
            return Err(r.get::<Option<Vec<Vec<f64>>>>("sorted").unwrap_err());
        };
        let params = kind.params(pretransform).iter().map(|name| {
            let found = table.iter_mut().find(|(n, _)| n == name);
            found
                .map(|(_, v)| core::mem::take(v))
                .ok_or_else(|| Error::invalid("state", format!("missing {name:?}")))
        });
        FittedMap::new(MapParts {
            kind,
            negate,
            two_d,
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
        assert_eq!(
            FittedMap::from_record(r.clone()).unwrap().parts(),
            map.parts()
        );
        let mut lacking = r.clone();
        lacking.fields[4] = Field::Table(vec![("center".into(), vec![1.0])]);
        let e = FittedMap::from_record(lacking).unwrap_err().to_string();
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
