//! The fitted map of a scaler of any family (contract §4, §10): one set of
//! parameters per score column, checked once when the map is made, applied
//! by one transform.
//!
//! A map is what a fit leaves behind and all a transform reads, so it can
//! live without the estimator that fitted it (a scoring service, a Spark
//! task). [`MapParts`] is its state as plain numbers; [`FittedMap::new`] is
//! the one place that checks a map, fresh from a fit or read back from
//! storage (untrusted).

use crate::error::Error;
use crate::numeric::array_map::ArrayMap;
use crate::numeric::float::Float;
use crate::numeric::search_index::SearchIndex;
use crate::transformations::gamma::Gamma;
use crate::transformations::gamma_table::{transform_tabled, GammaTable};
use crate::transformations::gaussian_options::{transform_with, Pretransform, PretransformKind};
use crate::transformations::mixture::Mixture;
use crate::transformations::rank::{IndexedRank, Rank, TopK};
use crate::transformations::scaling::{transform, Gaussian, Linear, Scaling};
use crate::transformations::sigmoid::Sigmoid;
use std::sync::OnceLock;

/// The family of a fitted map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapKind {
    /// `max(0, erf((y − μ)/(σ√2)))`, y the (pretransformed) score (§4).
    Gaussian,
    /// `clip((s − min)/(max − min), 0, 1)` (§4).
    Linear,
    /// Mid-rank among the fitted scores (§10).
    Rank,
    /// `log(1 + mid-rank)/ln 2` (§10).
    LogRank,
    /// The k highest fitted scores (§10).
    TopK,
    /// Sigmoid fitted by EM (§10).
    Sigmoid,
    /// Exponential inliers and Gaussian outliers, the posterior (§10).
    Mixture,
    /// Gamma scaling (§10).
    Gamma,
}

impl core::str::FromStr for MapKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Ok(match s {
            "gaussian" => MapKind::Gaussian,
            "linear" => MapKind::Linear,
            "rank" => MapKind::Rank,
            "log_rank" => MapKind::LogRank,
            "top_k" => MapKind::TopK,
            "sigmoid" => MapKind::Sigmoid,
            "mixture" => MapKind::Mixture,
            "gamma" => MapKind::Gamma,
            other => {
                return Err(Error::invalid(
                    "kind",
                    format!(
                        "expected 'gaussian', 'linear', 'rank', 'log_rank', 'top_k', \
                         'sigmoid', 'mixture' or 'gamma', got {other:?}"
                    ),
                ))
            }
        })
    }
}

impl MapKind {
    /// The name as [`MapKind::from_str`](core::str::FromStr) reads it.
    pub fn name(self) -> &'static str {
        match self {
            MapKind::Gaussian => "gaussian",
            MapKind::Linear => "linear",
            MapKind::Rank => "rank",
            MapKind::LogRank => "log_rank",
            MapKind::TopK => "top_k",
            MapKind::Sigmoid => "sigmoid",
            MapKind::Mixture => "mixture",
            MapKind::Gamma => "gamma",
        }
    }

    /// The named parameters a column of this family holds (rank families:
    /// none, their fitted scores are [`MapParts::sorted`]). A Gaussian map
    /// with a `"sqrt"` pretransform also holds `"pre_min"`; `"binary"` of
    /// top-k is 1 or 0.
    pub fn params(self, pretransform: PretransformKind) -> &'static [&'static str] {
        match (self, pretransform) {
            (MapKind::Gaussian, PretransformKind::Sqrt) => &["center", "scale", "pre_min"],
            (MapKind::Gaussian, _) => &["center", "scale"],
            (MapKind::Linear, _) => &["min", "max"],
            (MapKind::Rank | MapKind::LogRank, _) => &[],
            (MapKind::TopK, _) => &["cutoff", "max", "binary"],
            (MapKind::Sigmoid, _) => &["center", "scale", "a", "b"],
            (MapKind::Mixture, _) => &["scale", "alpha", "mu", "sigma", "lambda"],
            (MapKind::Gamma, _) => &["offset", "mean", "scale"],
        }
    }
}

/// A fitted map as plain numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct MapParts {
    /// The family.
    pub kind: MapKind,
    /// Scores are negated first (`higher_is_outlier=False` at fit time).
    pub negate: bool,
    /// Fitted on (n, k) score columns (else on one score vector, mapped
    /// element-wise whatever the shape).
    pub two_d: bool,
    /// Gaussian maps: the pretransform of the raw scores.
    pub pretransform: PretransformKind,
    /// The named parameters of [`MapKind::params`], one value per column
    /// each, in that order.
    pub params: Vec<Vec<f64>>,
    /// Rank families: each column's fitted scores, sorted.
    pub sorted: Vec<Vec<f64>>,
}

impl MapParts {
    /// The parts of a 1-D fit of `kind` without pretransform: one value of
    /// each named parameter.
    pub fn one_column(kind: MapKind, negate: bool, params: &[f64]) -> Self {
        MapParts {
            kind,
            negate,
            two_d: false,
            pretransform: PretransformKind::Identity,
            params: params.iter().map(|&v| vec![v]).collect(),
            sorted: Vec::new(),
        }
    }
}

/// Each column's map.
#[derive(Debug, Clone)]
enum Columns {
    Gaussian(Vec<Gaussian>),
    Pretransformed(Vec<(Pretransform, Gaussian)>),
    Linear(Vec<Linear>),
    /// The search index of each column's sorted scores (which the parts
    /// hold: kept once), built by the first transform (a fit that is
    /// published with its own scores' probabilities may never need it);
    /// log rank.
    Rank(OnceLock<Vec<SearchIndex>>, bool),
    TopK(Vec<TopK>),
    Sigmoid(Vec<Sigmoid>),
    Mixture(Vec<Mixture>),
    Gamma(Vec<Gamma>, Vec<GammaTable>),
}

/// A checked fitted map.
#[derive(Debug, Clone)]
pub struct FittedMap {
    parts: MapParts,
    columns: Columns,
    /// Score columns.
    k: usize,
}

/// One rank column's fitted scores: non-empty, sorted and finite.
fn check_sorted(sorted: &[f64], log: bool) -> Result<(), Error> {
    Rank { sorted, log }.check()?;
    if sorted.iter().all(|v| v.is_finite()) {
        Ok(())
    } else {
        Err(Error::invalid("sorted", "fitted scores must be finite"))
    }
}

/// The `j`-th row of the named parameters: one value of each.
fn row(params: &[Vec<f64>], j: usize) -> Vec<f64> {
    params.iter().map(|p| p[j]).collect()
}

/// Top-k's "binary" is a flag stored as a number: 1 or 0, nothing else
/// (NaN or 0.5 would read as true).
fn check_top_k_flag(parts: &MapParts) -> Result<(), Error> {
    if parts.kind == MapKind::TopK {
        if let Some(&b) = parts.params[2].iter().find(|&&b| b != 0.0 && b != 1.0) {
            return Err(Error::invalid("binary", format!("must be 1 or 0, got {b}")));
        }
    }
    Ok(())
}

impl FittedMap {
    /// Checks `parts` and makes the map (gamma maps tabulate each column).
    pub fn new(parts: MapParts) -> Result<Self, Error> {
        let names = parts.kind.params(parts.pretransform);
        let rank = matches!(parts.kind, MapKind::Rank | MapKind::LogRank);
        let k = if rank {
            parts.sorted.len()
        } else {
            parts.params.first().map_or(0, Vec::len)
        };
        let shaped = parts.params.len() == names.len()
            && parts.params.iter().all(|p| p.len() == k)
            && (rank || parts.sorted.is_empty())
            && k > 0
            && (parts.two_d || k == 1)
            && (parts.kind == MapKind::Gaussian
                || parts.pretransform == PretransformKind::Identity);
        if !shaped {
            return Err(Error::ShapeMismatch(format!(
                "a fitted {} map needs {names:?} with one value per score column (one column \
                 for 1-D scores), at least one column",
                parts.kind.name()
            )));
        }
        check_top_k_flag(&parts)?;
        let rows = (0..k).map(|j| row(&parts.params, j));
        let columns = match parts.kind {
            MapKind::Gaussian if parts.pretransform == PretransformKind::Identity => {
                Columns::Gaussian(
                    rows.map(|r| Gaussian {
                        center: r[0],
                        scale: r[1],
                    })
                    .collect(),
                )
            }
            MapKind::Gaussian => Columns::Pretransformed(
                rows.map(|r| {
                    let min = r.get(2).copied().unwrap_or(f64::NAN);
                    let g = Gaussian {
                        center: r[0],
                        scale: r[1],
                    };
                    (parts.pretransform.fitted(min), g)
                })
                .collect(),
            ),
            MapKind::Linear => Columns::Linear(
                rows.map(|r| Linear {
                    min: r[0],
                    max: r[1],
                })
                .collect(),
            ),
            // Indexed once checked (below).
            MapKind::Rank | MapKind::LogRank => {
                Columns::Rank(OnceLock::new(), parts.kind == MapKind::LogRank)
            }
            MapKind::TopK => Columns::TopK(
                rows.map(|r| TopK {
                    cutoff: r[0],
                    max: r[1],
                    binary: r[2] != 0.0,
                })
                .collect(),
            ),
            MapKind::Sigmoid => Columns::Sigmoid(
                rows.map(|r| Sigmoid {
                    center: r[0],
                    scale: r[1],
                    a: r[2],
                    b: r[3],
                })
                .collect(),
            ),
            MapKind::Mixture => Columns::Mixture(
                rows.map(|r| Mixture {
                    scale: r[0],
                    alpha: r[1],
                    mu: r[2],
                    sigma: r[3],
                    lambda: r[4],
                })
                .collect(),
            ),
            MapKind::Gamma => {
                let gammas: Vec<Gamma> = rows.map(|r| Gamma::new(r[0], r[1], r[2])).collect();
                let tables = gammas
                    .iter()
                    .map(|g| GammaTable::new(*g))
                    .collect::<Result<Vec<_>, _>>()?;
                Columns::Gamma(gammas, tables)
            }
        };
        columns.check()?;
        if let Columns::Rank(_, log) = &columns {
            for s in &parts.sorted {
                check_sorted(s, *log)?;
            }
        }
        Ok(FittedMap { parts, columns, k })
    }

    /// The map as plain numbers.
    pub fn parts(&self) -> &MapParts {
        &self.parts
    }

    /// Score columns of a 2-D fit; `None` for a 1-D fit.
    pub fn n_features(&self) -> Option<usize> {
        self.parts.two_d.then_some(self.k)
    }

    /// Whether scores of this shape are mapped: any shape with at least
    /// one dimension after a 1-D fit, (m, k) after a fit on k columns.
    pub fn maps(&self, shape: &[usize]) -> bool {
        match self.n_features() {
            None => !shape.is_empty(),
            Some(k) => shape.len() == 2 && shape[1] == k,
        }
    }

    /// `dst = p(src)` for row-major `src` (one column of parameters per
    /// column of scores; element-wise after a 1-D fit). NaN stays NaN.
    pub fn transform<T: Float>(&self, src: &[T], dst: &mut [T]) -> Result<(), Error> {
        let negate = self.parts.negate;
        match &self.columns {
            Columns::Gaussian(c) => transform(src, dst, c, negate),
            Columns::Pretransformed(c) => transform_with(src, dst, c, negate),
            Columns::Linear(c) => transform(src, dst, c, negate),
            Columns::Rank(indexes, log) => {
                let indexes = indexes.get_or_init(|| {
                    self.parts
                        .sorted
                        .iter()
                        .map(|s| SearchIndex::new(s))
                        .collect()
                });
                let c: Vec<IndexedRank<'_>> = self
                    .parts
                    .sorted
                    .iter()
                    .zip(indexes)
                    .map(|(s, index)| IndexedRank {
                        rank: Rank {
                            sorted: s,
                            log: *log,
                        },
                        index,
                    })
                    .collect();
                transform(src, dst, &c, negate)
            }
            Columns::TopK(c) => transform(src, dst, c, negate),
            Columns::Sigmoid(c) => transform(src, dst, c, negate),
            Columns::Mixture(c) => transform(src, dst, c, negate),
            Columns::Gamma(_, tables) => transform_tabled(src, dst, tables, negate),
        }
    }
}

impl Columns {
    /// Every column's parameters in their domain.
    fn check(&self) -> Result<(), Error> {
        fn all<S: Scaling>(c: &[S]) -> Result<(), Error> {
            c.iter().try_for_each(Scaling::check)
        }
        match self {
            Columns::Gaussian(c) => all(c),
            Columns::Pretransformed(c) => c.iter().try_for_each(|(pre, g)| {
                // √max(0, s − min) with min NaN (or ±inf) is 0 (or NaN) for
                // every score: the smallest fitted score is finite.
                if let Pretransform::Sqrt { min } = pre {
                    if !min.is_finite() {
                        return Err(Error::invalid(
                            "pre_min",
                            format!("the smallest fitted score must be finite, got {min}"),
                        ));
                    }
                }
                g.check()
            }),
            Columns::Linear(c) => all(c),
            // Checked with the parts' scores (FittedMap::new).
            Columns::Rank(..) => Ok(()),
            Columns::TopK(c) => all(c),
            Columns::Sigmoid(c) => all(c),
            Columns::Mixture(c) => all(c),
            Columns::Gamma(c, _) => all(c),
        }
    }
}

impl ArrayMap for FittedMap {
    type Output = ();

    fn map<T: Float>(&self, src: &[T], dst: &mut [T]) -> Result<(), Error> {
        self.transform(src, dst)
    }

    fn accepts(&self, shape: &[usize]) -> bool {
        self.maps(shape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(kind: MapKind, params: Vec<Vec<f64>>) -> MapParts {
        MapParts {
            kind,
            negate: false,
            two_d: params.first().is_some_and(|p| p.len() > 1),
            pretransform: PretransformKind::Identity,
            params,
            sorted: Vec::new(),
        }
    }

    #[test]
    fn maps_as_each_familys_own_transform() {
        let x = [0.5, 2.0, f64::NAN, 7.0];
        let g = FittedMap::new(parts(MapKind::Gaussian, vec![vec![1.0], vec![2.0]])).unwrap();
        let (mut a, mut b) = ([0.0; 4], [0.0; 4]);
        g.transform(&x, &mut a).unwrap();
        transform(
            &x,
            &mut b,
            &[Gaussian {
                center: 1.0,
                scale: 2.0,
            }],
            false,
        )
        .unwrap();
        assert_eq!(a.map(f64::to_bits), b.map(f64::to_bits));
        let mut rank = parts(MapKind::LogRank, Vec::new());
        rank.sorted = vec![vec![1.0, 2.0, 3.0]];
        let r = FittedMap::new(rank).unwrap();
        r.transform(&x, &mut a).unwrap();
        let want = Rank {
            sorted: &[1.0, 2.0, 3.0],
            log: true,
        };
        transform(&x, &mut b, &[want], false).unwrap();
        assert_eq!(a.map(f64::to_bits), b.map(f64::to_bits));
        assert!(r.maps(&[3]) && !r.maps(&[]));
        let two =
            FittedMap::new(parts(MapKind::Linear, vec![vec![0.0, 1.0], vec![1.0, 3.0]])).unwrap();
        assert_eq!(two.n_features(), Some(2));
        assert!(two.maps(&[5, 2]) && !two.maps(&[10]));
    }

    #[test]
    fn refuses_what_no_fit_makes() {
        let bad = [
            parts(MapKind::Gaussian, vec![vec![1.0], vec![-2.0]]),
            parts(MapKind::Gaussian, vec![vec![f64::NAN], vec![2.0]]),
            parts(MapKind::Gaussian, vec![vec![1.0]]),
            parts(MapKind::Linear, vec![vec![3.0], vec![1.0]]),
            parts(MapKind::Linear, vec![vec![0.0, 1.0], vec![1.0]]),
            parts(MapKind::Sigmoid, Vec::new()),
            parts(MapKind::Gamma, vec![vec![0.0], vec![-1.0], vec![1.0]]),
            parts(MapKind::Rank, Vec::new()),
        ];
        for p in bad {
            assert!(FittedMap::new(p.clone()).is_err(), "{p:?}");
        }
        let mut one_d = parts(MapKind::Linear, vec![vec![0.0, 1.0], vec![1.0, 2.0]]);
        one_d.two_d = false;
        assert!(FittedMap::new(one_d).is_err());
        for binary in [f64::NAN, 0.5, 2.0] {
            let top = parts(MapKind::TopK, vec![vec![1.0], vec![2.0], vec![binary]]);
            assert!(FittedMap::new(top)
                .unwrap_err()
                .to_string()
                .starts_with("binary"));
        }
        for min in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let mut sqrt = parts(MapKind::Gaussian, vec![vec![1.0], vec![2.0], vec![min]]);
            sqrt.pretransform = PretransformKind::Sqrt;
            let e = FittedMap::new(sqrt).unwrap_err().to_string();
            assert!(e.starts_with("pre_min"), "{e}");
        }
        let mut unsorted = parts(MapKind::Rank, Vec::new());
        unsorted.sorted = vec![vec![2.0, 1.0]];
        assert!(FittedMap::new(unsorted).is_err());
        assert!("probit".parse::<MapKind>().is_err());
    }
}
