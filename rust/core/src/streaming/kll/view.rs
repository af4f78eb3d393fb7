//! The sorted view of a sketch: its retained items in ascending order with
//! cumulative weights. It is the weighted sample the sketch stands for —
//! item `y_j` counted `w_j` times, `n` in all — and answers DataSketches'
//! quantile and rank queries with their exact semantics.

use super::{Item, KllSketch};
use crate::error::Error;

/// Ascending items (widened to `f64`) and inclusive cumulative weights.
#[derive(Debug, Clone, PartialEq)]
pub struct SortedView {
    values: Vec<f64>,
    cumulative: Vec<u64>,
    min: f64,
    max: f64,
}

impl SortedView {
    /// The view of a non-empty sketch.
    pub fn new<T: Item>(sketch: &KllSketch<T>) -> Result<Self, Error> {
        let (Some(min), Some(max)) = (sketch.min(), sketch.max()) else {
            return Err(Error::Empty { len: 0 });
        };
        let mut pairs: Vec<(u64, f64, u64)> = sketch
            .weighted_items()
            .map(|(v, w)| (v.order_key(), v.to_f64(), w))
            .collect();
        // Levels above 0 are sorted runs: sorting level 0 and then the
        // whole with the stable sort, which finds the runs and merges
        // them, costs about a merge of the levels rather than a sort.
        let level0 = sketch.levels()[1] as usize - sketch.levels()[0] as usize;
        pairs[..level0].sort_unstable_by_key(|p| p.0);
        pairs.sort_by_key(|p| p.0);
        let mut total = 0u64;
        let mut values = Vec::with_capacity(pairs.len());
        let mut cumulative = Vec::with_capacity(pairs.len());
        for (_, v, w) in pairs {
            total += w;
            values.push(v);
            cumulative.push(total);
        }
        Ok(SortedView {
            values,
            cumulative,
            min: min.to_f64(),
            max: max.to_f64(),
        })
    }

    /// A view of `(value, weight)` pairs already in ascending order.
    pub fn from_weighted(pairs: &[(f64, u64)]) -> Self {
        let mut total = 0u64;
        let cumulative = pairs
            .iter()
            .map(|p| {
                total += p.1;
                total
            })
            .collect();
        SortedView {
            values: pairs.iter().map(|p| p.0).collect(),
            cumulative,
            min: pairs.first().map_or(f64::NAN, |p| p.0),
            max: pairs.last().map_or(f64::NAN, |p| p.0),
        }
    }

    /// Total weight `n`.
    pub fn n(&self) -> u64 {
        *self.cumulative.last().unwrap_or(&0)
    }
    /// Exact smallest item of the stream.
    pub fn min(&self) -> f64 {
        self.min
    }
    /// Exact largest item of the stream.
    pub fn max(&self) -> f64 {
        self.max
    }
    /// Ascending retained items.
    pub fn values(&self) -> &[f64] {
        &self.values
    }
    /// Inclusive cumulative weights.
    pub fn cumulative(&self) -> &[u64] {
        &self.cumulative
    }
    /// Weight of entry `j`.
    pub fn weight(&self, j: usize) -> u64 {
        self.cumulative[j] - if j == 0 { 0 } else { self.cumulative[j - 1] }
    }

    /// DataSketches' `get_quantile(rank, inclusive)`: the first item whose
    /// cumulative weight is `>= ceil(rank·n)` (inclusive) or `>
    /// floor(rank·n)` (exclusive); the largest item if there is none.
    pub fn quantile(&self, rank: f64, inclusive: bool) -> Result<f64, Error> {
        if !(0.0..=1.0).contains(&rank) {
            return Err(Error::InvalidParameter {
                name: "rank",
                reason: format!("a normalized rank must be in [0, 1], got {rank}"),
            });
        }
        let nr = rank * self.n() as f64;
        // The same float arithmetic and truncation as DataSketches' C++.
        let w = if inclusive {
            nr.ceil() as u64
        } else {
            nr as u64
        };
        let j = if inclusive {
            self.cumulative.partition_point(|&c| c < w)
        } else {
            self.cumulative.partition_point(|&c| c <= w)
        };
        Ok(self.values[j.min(self.values.len() - 1)])
    }

    /// DataSketches' `get_rank(item, inclusive)`: the weight of the items
    /// `<= item` (inclusive) or `< item`, divided by n.
    pub fn rank(&self, item: f64, inclusive: bool) -> f64 {
        self.count(item, inclusive) as f64 / self.n() as f64
    }

    /// Weight of the items `<= y` (inclusive) or `< y`.
    pub fn count(&self, y: f64, inclusive: bool) -> u64 {
        let j = if inclusive {
            self.values.partition_point(|&v| v <= y)
        } else {
            self.values.partition_point(|&v| v < y)
        };
        if j == 0 {
            0
        } else {
            self.cumulative[j - 1]
        }
    }

    /// The `i`-th smallest (1-based) of the weighted sample.
    pub fn order_statistic(&self, i: u64) -> f64 {
        let j = self.cumulative.partition_point(|&c| c < i);
        self.values[j.min(self.values.len() - 1)]
    }
}
