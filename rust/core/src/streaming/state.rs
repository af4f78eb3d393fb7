//! The running state of a streaming fit of one or more score columns, as
//! `outprob.streaming.StreamingFit` keeps it (contract §9): the streaming
//! Gaussian fit or the extremes of a linear fit ([`StreamingState`]), or
//! the exact windows ([`WindowState`]).
//!
//! Each operation is one step on every column: a row-major (n, k) batch
//! is checked whole before any column changes ([`update_columns`]), and a
//! change whose fit is refused is taken back in every column
//! ([`atomically`]: a stream never keeps scores whose fit it would not
//! publish). Stored state crosses as one record per column
//! ([`crate::io::record`]), checked by the constructors here.

use crate::error::Error;
use crate::io::record::{Field, Kind, Record, Schema};
use crate::numeric::float::Float;
use crate::sample::NanPolicy;
use crate::streaming::columns::{atomically, merge_columns, update_columns, Restore};
use crate::streaming::extremes::{Extremes, EXTREMES};
use crate::streaming::fit::{StreamingGaussian, StreamingResult};
use crate::streaming::kll::serde::serialize;
use crate::streaming::kll::{check_k, KllSketch};
use crate::streaming::stored::{MomentsParts, MOMENTS};
use crate::streaming::window::Window;
use crate::transformations::fit::{GaussianFit, GaussianSpec};
use crate::transformations::scaling::Linear;

/// A stored column of a Gaussian streaming fit: its moments, its sketch's
/// bytes (DataSketches' format; none without a sketch) and coin seed.
pub const GAUSSIAN_COLUMN: &Schema = &[
    ("moments", Kind::Record(MOMENTS)),
    ("sketch", Kind::Bytes),
    ("seed", Kind::Count),
];

/// A stored column of a linear streaming fit (no sketch, seed 0).
pub const LINEAR_COLUMN: &Schema = &[
    ("moments", Kind::Record(EXTREMES)),
    ("sketch", Kind::Bytes),
    ("seed", Kind::Count),
];

/// A stored window: its refit counter, the scores seen and the scores it
/// holds, oldest first.
pub const WINDOW: &Schema = &[
    ("since_refit", Kind::Count),
    ("seen", Kind::Count),
    ("values", Kind::Values),
];

impl Restore for Extremes {
    type Mark = Extremes;

    fn mark(&self) -> Extremes {
        *self
    }

    fn restore(&mut self, mark: Extremes) {
        *self = mark;
    }
}

/// What a column of a [`StreamingState`] does.
trait Column: Restore + Clone {
    fn update<T: Float>(&mut self, x: &[T]) -> Result<usize, Error>;
    fn merge(&mut self, other: &Self) -> Result<(), Error>;
    fn same_fit(&self, other: &Self) -> bool;
    fn result(&self) -> Result<StreamingResult, Error>;
    fn n(&self) -> u64;
    fn to_record(&self) -> Record;
}

impl Column for StreamingGaussian {
    fn update<T: Float>(&mut self, x: &[T]) -> Result<usize, Error> {
        StreamingGaussian::update(self, x)
    }
    fn merge(&mut self, other: &Self) -> Result<(), Error> {
        StreamingGaussian::merge(self, other)
    }
    fn same_fit(&self, other: &Self) -> bool {
        self.spec() == other.spec()
    }
    fn result(&self) -> Result<StreamingResult, Error> {
        StreamingGaussian::result(self)
    }
    fn n(&self) -> u64 {
        StreamingGaussian::n(self)
    }
    fn to_record(&self) -> Record {
        let sketch = self.sketch();
        Record::new(
            GAUSSIAN_COLUMN,
            vec![
                Field::Record(self.moments().to_parts().to_record()),
                Field::Bytes(sketch.map(serialize)),
                Field::Count(sketch.map_or(0, KllSketch::seed)),
            ],
        )
    }
}

impl Column for Extremes {
    fn update<T: Float>(&mut self, x: &[T]) -> Result<usize, Error> {
        Extremes::update(self, x)
    }
    fn merge(&mut self, other: &Self) -> Result<(), Error> {
        Extremes::merge(self, other)
    }
    fn same_fit(&self, other: &Self) -> bool {
        Extremes::same_fit(self, other)
    }
    fn result(&self) -> Result<StreamingResult, Error> {
        Extremes::result(self)
    }
    fn n(&self) -> u64 {
        Extremes::n(self)
    }
    fn to_record(&self) -> Record {
        Record::new(
            LINEAR_COLUMN,
            vec![
                Field::Record(Extremes::to_record(self)),
                Field::Bytes(None),
                Field::Count(0),
            ],
        )
    }
}

/// The running state of a streaming Gaussian or linear fit, one state per
/// score column.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamingState {
    /// Exact moments and, when the fit needs one, a sketch per column.
    Gaussian(Vec<StreamingGaussian>),
    /// The extremes per column (linear scaling).
    Linear(Vec<Extremes>),
}

/// `$body` with `$c` bound to the columns of either kind.
macro_rules! each {
    ($state:expr, |$c:ident| $body:expr) => {
        match $state {
            StreamingState::Gaussian($c) => $body,
            StreamingState::Linear($c) => $body,
        }
    };
}

fn fit_all<C: Column>(columns: &[C]) -> Result<Vec<StreamingResult>, Error> {
    columns.iter().map(Column::result).collect()
}

fn merge_all<C: Column>(ours: &mut [C], theirs: &[C]) -> Result<(), Error> {
    merge_columns(ours, theirs, C::same_fit, C::merge)
}

fn update_all<C: Column, T: Float>(
    columns: &mut [C],
    x: &[T],
    shape: &[usize],
    nan_policy: NanPolicy,
) -> Result<(), Error> {
    update_columns(columns, x, shape, nan_policy, Column::update)
}

impl StreamingState {
    /// The empty state of `columns` columns: a linear fit's extremes, or a
    /// Gaussian fit by `spec` with a sketch of parameter `k` (checked in
    /// both cases) and coin `seed` when the spec needs one.
    pub fn new(
        spec: GaussianSpec,
        k: u32,
        seed: u64,
        columns: usize,
        linear: bool,
    ) -> Result<Self, Error> {
        let spec = spec.checked()?;
        check_k(k)?;
        Ok(if linear {
            StreamingState::Linear(vec![Extremes::new(spec.nan_policy, spec.negate); columns])
        } else {
            StreamingState::Gaussian(vec![StreamingGaussian::new(spec, k, seed)?; columns])
        })
    }

    fn nan_policy(&self) -> NanPolicy {
        match self {
            StreamingState::Gaussian(c) => {
                c.first().map_or(NanPolicy::Omit, |s| s.spec().nan_policy)
            }
            StreamingState::Linear(c) => c.first().map_or(NanPolicy::Omit, Extremes::nan_policy),
        }
    }

    /// Adds a 1-D batch (one column) or a row-major (n, k) batch of
    /// `shape`, whole or not at all.
    pub fn update<T: Float>(&mut self, x: &[T], shape: &[usize]) -> Result<(), Error> {
        let nan = self.nan_policy();
        each!(self, |c| update_all(c, x, shape, nan))
    }

    /// [`Self::update`], then the fit of each column, as one step: a batch
    /// whose fit is refused changes no column.
    pub fn update_and_fit<T: Float>(
        &mut self,
        x: &[T],
        shape: &[usize],
    ) -> Result<Vec<StreamingResult>, Error> {
        let nan = self.nan_policy();
        each!(self, |c| atomically(
            c,
            |c| update_all(c, x, shape, nan),
            |c| { fit_all(c) }
        ))
    }

    /// Adds everything `other` has seen (the same fit and columns).
    pub fn merge(&mut self, other: &StreamingState) -> Result<(), Error> {
        match (self, other) {
            (StreamingState::Gaussian(a), StreamingState::Gaussian(b)) => merge_all(a, b),
            (StreamingState::Linear(a), StreamingState::Linear(b)) => merge_all(a, b),
            _ => Err(Error::invalid(
                "other",
                "a Gaussian and a linear fit do not merge",
            )),
        }
    }

    /// [`Self::merge`], then the fit of each column, as one step: a merge
    /// whose fit is refused changes no column.
    pub fn merge_and_fit(&mut self, other: &StreamingState) -> Result<Vec<StreamingResult>, Error> {
        match (self, other) {
            (StreamingState::Gaussian(a), StreamingState::Gaussian(b)) => {
                atomically(a, |a| merge_all(a, b), |a| fit_all(a))
            }
            (StreamingState::Linear(a), StreamingState::Linear(b)) => {
                atomically(a, |a| merge_all(a, b), |a| fit_all(a))
            }
            _ => Err(Error::invalid(
                "other",
                "a Gaussian and a linear fit do not merge",
            )),
        }
    }

    /// Scores seen, per column.
    pub fn n(&self) -> Vec<u64> {
        each!(self, |c| c.iter().map(Column::n).collect())
    }

    /// The fit `outprob stream` maps its next batch with, per column
    /// ([`StreamingGaussian::stream_fit`]; `None` while the fit at `last`
    /// stands); a linear fit is refitted every batch.
    pub fn stream_fit(&self, last: Option<u64>) -> Result<Vec<Option<StreamingResult>>, Error> {
        match self {
            StreamingState::Gaussian(c) => c.iter().map(|s| s.stream_fit(last)).collect(),
            StreamingState::Linear(c) => c.iter().map(|s| s.result().map(Some)).collect(),
        }
    }

    /// The fit of each column.
    pub fn results(&self) -> Result<Vec<StreamingResult>, Error> {
        each!(self, |c| fit_all(c))
    }

    /// Each column's state as a record ([`GAUSSIAN_COLUMN`] or
    /// [`LINEAR_COLUMN`]).
    pub fn to_records(&self) -> Vec<Record> {
        each!(self, |c| c.iter().map(Column::to_record).collect())
    }

    /// The schema of a stored column of a linear or Gaussian fit.
    pub fn column_schema(linear: bool) -> &'static Schema {
        if linear {
            LINEAR_COLUMN
        } else {
            GAUSSIAN_COLUMN
        }
    }

    /// A state from its stored columns (untrusted; each checked whole by
    /// its constructor: [`StreamingGaussian::from_parts`],
    /// [`Extremes::from_record`]).
    pub fn from_records(
        spec: GaussianSpec,
        records: &[Record],
        linear: bool,
    ) -> Result<Self, Error> {
        let spec = spec.checked()?;
        Ok(if linear {
            StreamingState::Linear(
                records
                    .iter()
                    .map(|r| {
                        Extremes::from_record(&r.get("moments")?, spec.nan_policy, spec.negate)
                    })
                    .collect::<Result<_, _>>()?,
            )
        } else {
            StreamingState::Gaussian(
                records
                    .iter()
                    .map(|r| {
                        let moments = MomentsParts::from_record(&r.get("moments")?)?;
                        let sketch: Option<Vec<u8>> = r.get("sketch")?;
                        StreamingGaussian::from_parts(
                            spec,
                            &moments,
                            sketch.as_deref(),
                            r.get("seed")?,
                        )
                    })
                    .collect::<Result<_, _>>()?,
            )
        })
    }
}

/// The most recent W scores of one or more columns, refitted exactly.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowState(Vec<Window<f64>>);

/// The Gaussian fit of every window (each resets its refit counter).
fn refit_all(windows: &mut [Window<f64>], spec: &GaussianSpec) -> Result<Vec<GaussianFit>, Error> {
    windows.iter_mut().map(|w| w.fit_gaussian(spec)).collect()
}

impl WindowState {
    /// `columns` empty windows of `size` scores, due for a refit every
    /// `refit_every` new scores (0: only on demand).
    pub fn new(size: usize, refit_every: usize, columns: usize) -> Result<Self, Error> {
        Ok(WindowState(vec![Window::new(size, refit_every)?; columns]))
    }

    /// Adds a 1-D batch (one column) or a row-major (n, k) batch of
    /// `shape`, whole or not at all.
    pub fn update<T: Float>(
        &mut self,
        x: &[T],
        shape: &[usize],
        nan_policy: NanPolicy,
    ) -> Result<(), Error> {
        update_columns(&mut self.0, x, shape, nan_policy, |w, v| {
            w.update(v, nan_policy)
        })
    }

    /// [`Self::update`], then, when `refit` or when due, the Gaussian fit
    /// of each column's window (`None` when not refitted), as one step: a
    /// batch whose refit is refused changes no column.
    pub fn update_and_refit<T: Float>(
        &mut self,
        x: &[T],
        shape: &[usize],
        nan_policy: NanPolicy,
        spec: &GaussianSpec,
        refit: bool,
    ) -> Result<Option<Vec<GaussianFit>>, Error> {
        atomically(
            &mut self.0,
            |ws| update_columns(ws, x, shape, nan_policy, |w, v| w.update(v, nan_policy)),
            |ws| {
                if refit || ws.iter().any(Window::due) {
                    refit_all(ws, spec).map(Some)
                } else {
                    Ok(None)
                }
            },
        )
    }

    /// Whether `refit_every` scores arrived since the last refit (in any
    /// column).
    pub fn due(&self) -> bool {
        self.0.iter().any(Window::due)
    }

    /// Scores seen, per column.
    pub fn seen(&self) -> Vec<u64> {
        self.0.iter().map(Window::seen).collect()
    }

    /// The Gaussian fit of each column's window (every column's refit
    /// counter reset, or none when a fit is refused).
    pub fn fit_gaussian(&mut self, spec: &GaussianSpec) -> Result<Vec<GaussianFit>, Error> {
        atomically(&mut self.0, |_| Ok(()), |ws| refit_all(ws, spec))
    }

    /// The linear fit of each column's window.
    pub fn fit_linear(&mut self, negate: bool) -> Result<Vec<Linear>, Error> {
        self.0.iter_mut().map(|w| w.fit_linear(negate)).collect()
    }

    /// Each column's window as a record of [`WINDOW`].
    pub fn to_records(&self) -> Vec<Record> {
        self.0
            .iter()
            .map(|w| {
                Record::new(
                    WINDOW,
                    vec![
                        Field::Count(w.since_refit() as u64),
                        Field::Count(w.seen()),
                        Field::Values(w.values().to_vec()),
                    ],
                )
            })
            .collect()
    }

    /// Windows from their stored records (untrusted; each checked whole by
    /// [`Window::from_parts`]).
    pub fn from_records(
        size: usize,
        refit_every: usize,
        records: &[Record],
    ) -> Result<Self, Error> {
        records
            .iter()
            .map(|r| {
                let since_refit = usize::try_from(r.get::<u64>("since_refit")?)
                    .map_err(|_| Error::invalid("state", "the refit counter is out of range"))?;
                let values: Vec<f64> = r.get("values")?;
                Window::from_parts(size, refit_every, since_refit, r.get("seen")?, &values)
            })
            .collect::<Result<_, _>>()
            .map(WindowState)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transformations::fit::{Center, Scale};

    fn spec() -> GaussianSpec {
        GaussianSpec::new(Center::Median, Scale::Nmad)
    }

    #[test]
    fn records_round_trip_and_are_checked() {
        for linear in [false, true] {
            let mut st = StreamingState::new(spec(), 200, 3, 2, linear).unwrap();
            st.update(&[1.0, 2.0, 3.0, f64::NAN, 5.0, 9.0], &[3, 2])
                .unwrap();
            let back = StreamingState::from_records(spec(), &st.to_records(), linear).unwrap();
            // The records, not the states: a sketch's spare buffer holds
            // whatever it held.
            assert_eq!(back.to_records(), st.to_records());
            assert_eq!(back.n(), vec![3, 2]);
            if linear {
                // A linear column lacks the moments a Gaussian one holds.
                assert!(StreamingState::from_records(spec(), &st.to_records(), false).is_err());
            }
        }
        let mut w = WindowState::new(3, 2, 1).unwrap();
        w.update(&[1.0, 2.0, 3.0, 4.0], &[4], NanPolicy::Omit)
            .unwrap();
        let back = WindowState::from_records(3, 2, &w.to_records()).unwrap();
        assert_eq!(back, w);
        assert!(WindowState::from_records(2, 2, &w.to_records()).is_err());
    }

    #[test]
    fn linear_results_are_the_oriented_extremes() {
        let negated = GaussianSpec {
            negate: true,
            ..spec()
        };
        let mut st = StreamingState::new(negated, 8, 0, 1, true).unwrap();
        assert_eq!(st.results().unwrap_err(), Error::NothingSeen);
        let r = st.update_and_fit(&[2.0f32, -1.0, 4.0], &[3]).unwrap();
        assert_eq!((r[0].center, r[0].scale, r[0].n), (-4.0, 1.0, 3));
        let mut other = StreamingState::new(negated, 8, 0, 1, true).unwrap();
        other.update(&[-9.0], &[1]).unwrap();
        let r = st.merge_and_fit(&other).unwrap();
        assert_eq!((r[0].center, r[0].scale, r[0].n), (-4.0, 9.0, 4));
        let gaussian = StreamingState::new(spec(), 8, 0, 1, false).unwrap();
        assert!(st.merge(&gaussian).is_err());
    }

    #[test]
    fn a_linear_stream_fit_is_fresh_after_every_batch() {
        // §9 "Command line" (Refits): only a fit that reads the sketch may
        // keep an older map; a linear fit reads the exact extremes, so
        // whatever the last fit (none, a batch ago, this batch) the stream
        // gets the oriented extremes of every score seen, per column.
        let negated = GaussianSpec {
            negate: true,
            ..spec()
        };
        let mut st = StreamingState::new(negated, 8, 0, 2, true).unwrap();
        assert_eq!(st.stream_fit(None).unwrap_err(), Error::NothingSeen);
        let batches: [&[f64]; 3] = [
            &[2.0, 10.0, -1.0, 3.0],
            &[0.5, f64::NAN],
            &[-7.0, -20.0, 4.0, 1.0, 6.0, 0.0],
        ];
        // The oriented (negated) scores' min and max, and n, per column.
        let want = [
            [(-2.0, 1.0, 2), (-10.0, -3.0, 2)],
            [(-2.0, 1.0, 3), (-10.0, -3.0, 2)],
            [(-6.0, 7.0, 6), (-10.0, 20.0, 5)],
        ];
        let mut before = None;
        for (batch, want) in batches.iter().zip(want) {
            st.update(batch, &[batch.len() / 2, 2]).unwrap();
            let now = st.n()[0];
            for last in [None, before, Some(now)] {
                let fits = st.stream_fit(last).unwrap();
                let got: Vec<_> = fits
                    .iter()
                    .map(|r| r.as_ref().map(|r| (r.center, r.scale, r.n)))
                    .collect();
                assert_eq!(got, want.map(Some), "last fit at {last:?}");
            }
            before = Some(now);
        }
        // As the Gaussian fit does once it reads the exact moments.
        let mut mean =
            StreamingState::new(GaussianSpec::new(Center::Mean, Scale::Std), 8, 0, 1, false)
                .unwrap();
        mean.update(&[1.0, 2.0, 4.0], &[3, 1]).unwrap();
        assert!(mean.stream_fit(Some(3)).unwrap()[0].is_some());
    }
}
