//! Streaming state of k score columns fed by row-major (n, k) batches. A
//! batch is checked whole under contract §5 before any column changes, so
//! a refused batch changes no column; merges check every column first.
//! [`atomically`] also takes a batch or merge back, in every column, when
//! the fit it leads to is refused (contract §9: a stream never keeps
//! scores whose fit it would not publish).

use crate::error::Error;
use crate::numeric::float::Float;
use crate::sample::{check_batch, NanPolicy};
use crate::streaming::fit::StreamingGaussian;

/// Feeds the row-major batch `x` of shape `shape` ((n,) for one column,
/// (n, k) for k) to one state per column with `update`. Refused whole, no
/// state changed, when the shape does not have `states.len()` columns or
/// `x` holds ±inf or (under `raise`) NaN.
pub fn update_columns<S, T: Float>(
    states: &mut [S],
    x: &[T],
    shape: &[usize],
    nan_policy: NanPolicy,
    mut update: impl FnMut(&mut S, &[T]) -> Result<usize, Error>,
) -> Result<(), Error> {
    let k = states.len();
    let columns = match shape {
        [n] if *n == x.len() => 1,
        [n, k] if n * k == x.len() => *k,
        _ => 0,
    };
    if columns != k || k == 0 {
        return Err(Error::ShapeMismatch(format!(
            "a batch of shape {shape:?} does not match the {k} column(s) fitted so far"
        )));
    }
    if k == 1 {
        // The state refuses a bad batch whole by itself.
        update(&mut states[0], x)?;
        return Ok(());
    }
    check_batch(x, nan_policy)?;
    for (j, state) in states.iter_mut().enumerate() {
        let column: Vec<T> = x.iter().skip(j).step_by(k).copied().collect();
        update(state, &column)?;
    }
    Ok(())
}

/// A column's state that can return to a point marked before a change.
pub trait Restore {
    /// What `restore` needs.
    type Mark;
    /// The state now.
    fn mark(&self) -> Self::Mark;
    /// Back to `mark`, taken before the one change since.
    fn restore(&mut self, mark: Self::Mark);
}

impl Restore for StreamingGaussian {
    // The sketch compacts in place: a copy (bounded by ≈ 3k items, no
    // larger than the sorted view the fit reads next).
    type Mark = StreamingGaussian;

    fn mark(&self) -> StreamingGaussian {
        self.clone()
    }

    fn restore(&mut self, mark: StreamingGaussian) {
        *self = mark;
    }
}

/// Applies `change` (one batch or merge) to the columns and then `fit`s
/// them, as one step: when either is refused, every column is as before.
pub fn atomically<S: Restore, R>(
    states: &mut [S],
    change: impl FnOnce(&mut [S]) -> Result<(), Error>,
    fit: impl FnOnce(&mut [S]) -> Result<R, Error>,
) -> Result<R, Error> {
    let marks: Vec<S::Mark> = states.iter().map(Restore::mark).collect();
    let out = change(states).and_then(|()| fit(states));
    if out.is_err() {
        for (state, mark) in states.iter_mut().zip(marks) {
            state.restore(mark);
        }
    }
    out
}

/// Adds `theirs` to `ours` column by column with `merge`: refused whole,
/// nothing changed, unless both have the same number of columns and each
/// pair is of the `same` fit.
pub fn merge_columns<S>(
    ours: &mut [S],
    theirs: &[S],
    same: impl Fn(&S, &S) -> bool,
    mut merge: impl FnMut(&mut S, &S) -> Result<(), Error>,
) -> Result<(), Error> {
    if ours.len() != theirs.len() || !ours.iter().zip(theirs).all(|(a, b)| same(a, b)) {
        return Err(Error::invalid(
            "other",
            "only states of the same center, scale, parameters and columns merge",
        ));
    }
    ours.iter_mut()
        .zip(theirs)
        .try_for_each(|(a, b)| merge(a, b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::streaming::window::Window;
    use crate::transformations::fit::{fit_gaussian, Center, GaussianSpec, Scale};

    #[test]
    fn a_refused_batch_changes_no_column() {
        let spec = GaussianSpec::new(Center::Median, Scale::Nmad);
        let mut states = vec![
            StreamingGaussian::new(spec, 200, 0).unwrap(),
            StreamingGaussian::new(spec, 200, 0).unwrap(),
        ];
        let update = |s: &mut StreamingGaussian, c: &[f64]| s.update(c);
        update_columns(
            &mut states,
            &[1.0, 2.0, 3.0, 4.0],
            &[2, 2],
            NanPolicy::Omit,
            update,
        )
        .unwrap();
        let before = states.clone();
        let bad = [5.0, 6.0, f64::INFINITY, 8.0];
        assert!(update_columns(&mut states, &bad, &[2, 2], NanPolicy::Omit, update).is_err());
        assert!(update_columns(&mut states, &[1.0; 6], &[2, 3], NanPolicy::Omit, update).is_err());
        assert!(update_columns(&mut states, &[1.0; 4], &[4], NanPolicy::Omit, update).is_err());
        assert_eq!(states, before);
        assert_eq!(states[1].n(), 2);
        let mut windows = vec![Window::<f64>::new(3, 1).unwrap()];
        update_columns(
            &mut windows,
            &[1.0f32, 2.0],
            &[2],
            NanPolicy::Omit,
            |w, c| w.update(c, NanPolicy::Omit),
        )
        .unwrap();
        assert_eq!(windows[0].values(), &[1.0, 2.0]);
        let other = vec![
            StreamingGaussian::new(GaussianSpec::new(Center::Mean, Scale::Std), 200, 0)
                .unwrap();
            2
        ];
        assert!(merge_columns(&mut states, &other, same, StreamingGaussian::merge).is_err());
        assert_eq!(states, before);
    }

    fn same(a: &StreamingGaussian, b: &StreamingGaussian) -> bool {
        a.spec() == b.spec()
    }

    fn fit_all(states: &mut [StreamingGaussian]) -> Result<Vec<f64>, Error> {
        states.iter().map(|s| Ok(s.result()?.scale)).collect()
    }

    /// contract §5's example of an nMAD beyond the double range.
    const HUGE: [f64; 4] = [-1.7e308, -1.7e308, 1.7e308, 1.7e308];

    #[test]
    fn a_batch_or_merge_whose_fit_is_refused_changes_no_column() {
        let spec = GaussianSpec::new(Center::Median, Scale::Nmad);
        let mut states = vec![StreamingGaussian::new(spec, 200, 0).unwrap(); 2];
        let update = |st: &mut [StreamingGaussian], x: &[f64]| {
            update_columns(
                st,
                x,
                &[x.len() / 2, 2],
                NanPolicy::Omit,
                StreamingGaussian::update,
            )
        };
        let first = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        atomically(&mut states, |st| update(st, &first), fit_all).unwrap();
        let before = states.clone();
        // Column 0 takes the batch, column 1's nMAD leaves the double range.
        let bad: Vec<f64> = HUGE.iter().flat_map(|&h| [7.0, h]).collect();
        let err = atomically(&mut states, |st| update(st, &bad), fit_all).unwrap_err();
        assert!(
            err.to_string().contains("exceeds the double range"),
            "{err}"
        );
        assert_eq!(states, before);
        // A merge whose union's fit is refused is taken back too.
        let mut other = vec![StreamingGaussian::new(spec, 200, 0).unwrap(); 2];
        update(&mut other, &bad).unwrap();
        let merge = |st: &mut [StreamingGaussian]| {
            merge_columns(st, &other, same, StreamingGaussian::merge)
        };
        assert!(atomically(&mut states, merge, fit_all).is_err());
        assert_eq!(states, before);
        // And the stream goes on.
        let scales = atomically(&mut states, |st| update(st, &first), fit_all).unwrap();
        assert_eq!(states[0].n(), 6);
        assert!(scales.iter().all(|s| s.is_finite()));
    }

    #[test]
    fn a_window_batch_whose_refit_is_refused_is_taken_back() {
        let spec = GaussianSpec::new(Center::Median, Scale::Nmad);
        let refit = |ws: &mut [Window<f64>]| {
            ws.iter_mut()
                .map(|w| w.fit_gaussian(&spec))
                .collect::<Result<Vec<_>, _>>()
        };
        // Without and with the buffer moving the window to its front.
        for first in [&[1.0, 2.0][..], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]] {
            let mut windows = vec![Window::<f64>::new(4, 1).unwrap()];
            let update = |ws: &mut [Window<f64>], x: &[f64]| {
                update_columns(ws, x, &[x.len()], NanPolicy::Omit, |w, c| {
                    w.update(c, NanPolicy::Omit)
                })
            };
            atomically(&mut windows, |ws| update(ws, first), refit).unwrap();
            update(&mut windows, &[f64::NAN, 7.0]).unwrap();
            let before = windows.clone();
            assert!(atomically(&mut windows, |ws| update(ws, &HUGE), refit).is_err());
            assert_eq!(windows, before);
            assert_eq!(windows[0].since_refit(), 1);
            let held = windows[0].values().to_vec();
            let fits = atomically(&mut windows, |ws| update(ws, &[8.0]), refit).unwrap();
            let mut want = held[held.len().saturating_sub(3)..].to_vec();
            want.push(8.0);
            assert_eq!(fits[0], fit_gaussian(&want, &spec).unwrap());
            assert_eq!(windows[0].since_refit(), 0);
        }
    }
}
