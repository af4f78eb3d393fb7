//! Streaming state of k score columns fed by row-major (n, k) batches. A
//! batch is checked whole under contract §5 before any column changes, so
//! a refused batch changes no column; merges check every column first.

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

/// Adds `theirs` to `ours` column by column: refused whole, nothing
/// changed, unless both have the same number of columns and spec.
pub fn merge_columns(
    ours: &mut [StreamingGaussian],
    theirs: &[StreamingGaussian],
) -> Result<(), Error> {
    let same =
        ours.len() == theirs.len() && ours.iter().zip(theirs).all(|(a, b)| a.spec() == b.spec());
    if !same {
        return Err(Error::invalid(
            "other",
            "only states of the same center, scale, parameters and columns merge",
        ));
    }
    for (a, b) in ours.iter_mut().zip(theirs) {
        a.merge(b)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::streaming::window::Window;
    use crate::transformations::fit::{Center, GaussianSpec, Scale};

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
        assert!(merge_columns(&mut states, &other).is_err());
        assert_eq!(states, before);
    }
}
