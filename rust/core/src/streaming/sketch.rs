//! A KLL sketch of either item type (DataSketches' `kll_doubles_sketch` or
//! `kll_floats_sketch`), fed scores of either float type, with its sorted
//! view kept until the next change: what `outprob.streaming.KLLSketch`
//! holds.

use crate::error::Error;
use crate::numeric::float::Float;
use crate::streaming::kll::serde::{deserialize, serialize};
use crate::streaming::kll::{KllSketch, SortedView};

/// A sketch of doubles or of floats.
#[derive(Debug, Clone, PartialEq)]
pub enum AnySketch {
    /// DataSketches' doubles sketch.
    Double(KllSketch<f64>),
    /// DataSketches' floats sketch.
    Float(KllSketch<f32>),
}

/// Runs `$body` on the sketch inside an [`AnySketch`], whatever its type.
macro_rules! each {
    ($s:expr, |$k:ident| $body:expr) => {
        match $s {
            AnySketch::Double($k) => $body,
            AnySketch::Float($k) => $body,
        }
    };
}

/// Scores of a float type as a sketch of either item type takes them: as
/// they are, or converted whole (widened exactly, or rounded to nearest)
/// so that the sketch sees one batch, as it would of its own type.
pub trait SketchInput: Float {
    /// Adds `x` to a doubles sketch.
    fn feed_double(x: &[Self], s: &mut KllSketch<f64>);
    /// Adds `x` to a floats sketch, or nothing when a finite score would
    /// round to ±inf in float32 (an item no query could place).
    fn feed_float(x: &[Self], s: &mut KllSketch<f32>) -> Result<(), Error>;
}

impl SketchInput for f64 {
    fn feed_double(x: &[f64], s: &mut KllSketch<f64>) {
        s.update(x);
    }
    fn feed_float(x: &[f64], s: &mut KllSketch<f32>) -> Result<(), Error> {
        let narrow: Vec<f32> = x.iter().map(|&v| f32::from_f64(v)).collect();
        if let Some((&v, _)) = x
            .iter()
            .zip(&narrow)
            .find(|(v, w)| v.is_finite() && !w.is_finite())
        {
            return Err(Error::invalid(
                "x",
                format!(
                    "{v:e} is beyond the range of a float32 sketch (±3.4e38); \
                     use a float64 sketch (dtype=\"float64\")"
                ),
            ));
        }
        s.update(&narrow);
        Ok(())
    }
}

impl SketchInput for f32 {
    fn feed_double(x: &[f32], s: &mut KllSketch<f64>) {
        s.update(&x.iter().map(|&v| f64::from(v)).collect::<Vec<f64>>());
    }
    fn feed_float(x: &[f32], s: &mut KllSketch<f32>) -> Result<(), Error> {
        s.update(x);
        Ok(())
    }
}

impl AnySketch {
    /// The count after `added` more scores: a stored sketch may count up
    /// to 2^64 − 1 (DataSketches' n), and a count that would wrap is
    /// refused before anything changes.
    fn count_after(&self, added: u64) -> Result<u64, Error> {
        let n = each!(self, |s| s.n());
        n.checked_add(added).ok_or_else(|| {
            Error::invalid(
                "scores",
                format!("a sketch counts at most 2^64 − 1 scores; {n} seen and {added} more would exceed it"),
            )
        })
    }

    /// An empty sketch of parameter `k` and coin `seed`.
    pub fn new(k: u32, double: bool, seed: u64) -> Result<Self, Error> {
        let k = crate::streaming::kll::check_k(k)?;
        Ok(if double {
            AnySketch::Double(KllSketch::new(k, seed)?)
        } else {
            AnySketch::Float(KllSketch::new(k, seed)?)
        })
    }

    /// Reads DataSketches' bytes (checked) and sets the coin seed.
    pub fn deserialize(bytes: &[u8], double: bool, seed: u64) -> Result<Self, Error> {
        let mut s = if double {
            AnySketch::Double(deserialize(bytes)?)
        } else {
            AnySketch::Float(deserialize(bytes)?)
        };
        each!(&mut s, |k| k.set_seed(seed));
        Ok(s)
    }

    /// DataSketches' compact bytes.
    pub fn serialize(&self) -> Vec<u8> {
        each!(self, |s| serialize(s))
    }

    /// Adds scores of either float type (NaN skipped).
    pub fn update<T: SketchInput>(&mut self, x: &[T]) -> Result<(), Error> {
        // The NaN are counted (a pass over the batch) only when the batch's
        // length could make the count wrap.
        if self.count_after(x.len() as u64).is_err() {
            self.count_after(x.iter().filter(|v| !v.is_nan()).count() as u64)?;
        }
        match self {
            AnySketch::Double(s) => {
                T::feed_double(x, s);
                Ok(())
            }
            AnySketch::Float(s) => T::feed_float(x, s),
        }
    }

    /// Adds everything `other` has seen (both of one item type).
    pub fn merge(&mut self, other: &AnySketch) -> Result<(), Error> {
        self.count_after(each!(other, |s| s.n()))?;
        match (self, other) {
            (AnySketch::Double(a), AnySketch::Double(b)) => a.merge(b),
            (AnySketch::Float(a), AnySketch::Float(b)) => a.merge(b),
            _ => {
                return Err(Error::invalid(
                    "other",
                    "cannot merge a float sketch with a double sketch",
                ))
            }
        }
        Ok(())
    }

    /// The sorted view the queries read.
    pub fn sorted_view(&self) -> Result<SortedView, Error> {
        each!(self, |s| s.sorted_view()).map_err(|_| {
            Error::invalid("sketch", "the sketch is empty: update it with scores first")
        })
    }

    /// Whether the items are doubles.
    pub fn is_double(&self) -> bool {
        matches!(self, AnySketch::Double(_))
    }

    /// The size parameter k.
    pub fn k(&self) -> u16 {
        each!(self, |s| s.k())
    }

    /// The smallest k merged in.
    pub fn min_k(&self) -> u16 {
        each!(self, |s| s.min_k())
    }

    /// Items seen.
    pub fn n(&self) -> u64 {
        each!(self, |s| s.n())
    }

    /// Items kept.
    pub fn num_retained(&self) -> usize {
        each!(self, |s| s.num_retained())
    }

    /// Whether the sketch has compacted (its answers are estimates).
    pub fn is_estimation_mode(&self) -> bool {
        each!(self, |s| s.is_estimation_mode())
    }

    /// The coin seed.
    pub fn seed(&self) -> u64 {
        each!(self, |s| s.seed())
    }

    /// ε of the sketch (of the smallest k merged in).
    pub fn normalized_rank_error(&self, pmf: bool) -> f64 {
        each!(self, |s| s.normalized_rank_error(pmf))
    }

    /// The smallest and largest item seen, if any.
    pub fn extremes(&self) -> Option<(f64, f64)> {
        each!(self, |s| match (s.min(), s.max()) {
            (Some(a), Some(b)) => Some((a.to_f64(), b.to_f64())),
            _ => None,
        })
    }
}

/// An [`AnySketch`] with its sorted view, made on the first query after a
/// change.
#[derive(Debug, Clone)]
pub struct QueriedSketch {
    sketch: AnySketch,
    view: Option<SortedView>,
}

impl QueriedSketch {
    /// Wraps a sketch.
    pub fn new(sketch: AnySketch) -> Self {
        QueriedSketch { sketch, view: None }
    }

    /// The sketch.
    pub fn sketch(&self) -> &AnySketch {
        &self.sketch
    }

    /// The sketch, to change (drops the view).
    pub fn sketch_mut(&mut self) -> &mut AnySketch {
        self.view = None;
        &mut self.sketch
    }

    /// The sorted view (refused for an empty sketch).
    pub fn view(&mut self) -> Result<&SortedView, Error> {
        if self.view.is_none() {
            self.view = Some(self.sketch.sorted_view()?);
        }
        Ok(self.view.as_ref().expect("just set"))
    }

    /// Items of normalized ranks `ranks` (DataSketches' `get_quantiles`).
    pub fn quantiles(&mut self, ranks: &[f64], inclusive: bool) -> Result<Vec<f64>, Error> {
        let v = self.view()?;
        ranks.iter().map(|&r| v.quantile(r, inclusive)).collect()
    }

    /// Normalized ranks of `items` (DataSketches' `get_ranks`).
    pub fn ranks(&mut self, items: &[f64], inclusive: bool) -> Result<Vec<f64>, Error> {
        let v = self.view()?;
        Ok(items.iter().map(|&y| v.rank(y, inclusive)).collect())
    }

    /// Retained items (ascending) and their weights.
    pub fn weighted_items(&mut self) -> Result<(Vec<f64>, Vec<u64>), Error> {
        let v = self.view()?;
        let weights = (0..v.values().len()).map(|j| v.weight(j)).collect();
        Ok((v.values().to_vec(), weights))
    }
}
