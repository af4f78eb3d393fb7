//! Exact fitting over the most recent W scores: a buffer of at most 2W
//! scores that keeps the window contiguous (when it fills, the window moves
//! to the front: one extra copy per score, amortised), so a refit is the
//! in-memory fit of [`crate::transformations::fit`] on one slice.

use crate::error::Error;
use crate::limits::{REFIT_EVERY, WINDOW};
use crate::numeric::float::Float;
use crate::sample::{check_batch, NanPolicy};
use crate::streaming::columns::Restore;
use crate::streaming::stored::{add_counts, check_count};
use crate::transformations::fit::{fit_gaussian, fit_linear, GaussianFit, GaussianSpec};
use crate::transformations::scaling::Linear;

/// The largest window: 2^32 scores (the buffer holds up to twice that).
pub const MAX_WINDOW: usize = WINDOW.max as usize;

/// The most recent `size` scores (NaN omitted) and when to refit.
/// Equality is that of the state (the window, counters and sizes), not of
/// the buffer's layout.
#[derive(Debug, Clone)]
pub struct Window<T> {
    size: usize,
    refit_every: usize,
    since_refit: usize,
    seen: u64,
    buf: Vec<T>,
}

impl<T: Float> Window<T> {
    /// A window of `size` scores, due for a refit every `refit_every` new
    /// scores (0: only on demand).
    pub fn new(size: usize, refit_every: usize) -> Result<Self, Error> {
        WINDOW.check_usize(size)?;
        if refit_every > 0 {
            REFIT_EVERY.check_usize(refit_every)?;
        }
        Ok(Window {
            size,
            refit_every,
            since_refit: 0,
            seen: 0,
            buf: Vec::new(),
        })
    }

    /// The window length W.
    pub fn size(&self) -> usize {
        self.size
    }
    /// The refit period.
    pub fn refit_every(&self) -> usize {
        self.refit_every
    }
    /// Scores seen in all (NaN excluded).
    pub fn seen(&self) -> u64 {
        self.seen
    }

    /// Adds a batch under the §5 rules (a batch with ±inf, or NaN under
    /// `raise`, is refused whole); returns how many scores it added.
    pub fn update<U: Float>(&mut self, x: &[U], nan_policy: NanPolicy) -> Result<usize, Error> {
        let s = check_batch(x, nan_policy)?;
        let seen = add_counts(self.seen, s.count as u64)?;
        // Only the newest `size` of a long batch can stay.
        let mut kept = 0usize;
        let mut start = x.len();
        while start > 0 && kept < self.size {
            start -= 1;
            kept += usize::from(!x[start].is_nan());
        }
        if self.buf.len() + kept > 2 * self.size {
            // Only the scores before the window go: the window stays whole
            // in the buffer until the batch is kept, so that taking the
            // batch back (`Restore`) is a truncation.
            let before = self.buf.len() - self.values().len();
            self.buf.drain(..before);
        }
        // Scores of another float type are converted (exactly, when
        // widening float32 into a float64 window).
        self.buf.extend(
            x[start..]
                .iter()
                .filter(|v| !v.is_nan())
                .map(|v| T::from_f64(v.to_f64())),
        );
        self.since_refit += s.count;
        self.seen = seen;
        Ok(s.count)
    }

    /// The window: the newest `min(size, seen)` scores, oldest first.
    pub fn values(&self) -> &[T] {
        &self.buf[self.buf.len().saturating_sub(self.size)..]
    }

    /// Whether `refit_every` scores arrived since the last refit.
    pub fn due(&self) -> bool {
        self.refit_every > 0 && self.since_refit >= self.refit_every
    }

    /// Fits a Gaussian scaling to the window (resets the refit counter,
    /// unless the fit is refused).
    pub fn fit_gaussian(&mut self, spec: &GaussianSpec) -> Result<GaussianFit, Error> {
        let fit = fit_gaussian(self.values(), spec)?;
        self.since_refit = 0;
        Ok(fit)
    }

    /// Fits linear scaling to the window (resets the refit counter,
    /// unless the fit is refused).
    pub fn fit_linear(&mut self, negate: bool) -> Result<Linear, Error> {
        let fit = fit_linear(self.values(), NanPolicy::Omit, negate)?;
        self.since_refit = 0;
        Ok(fit)
    }

    /// Rebuilds a window from its scores (oldest first) and counters,
    /// stored and so untrusted: a window that has seen `seen` scores holds
    /// the newest `min(size, seen)` of them, all finite, and fewer than
    /// `seen` arrived since its last refit.
    pub fn from_parts(
        size: usize,
        refit_every: usize,
        since_refit: usize,
        seen: u64,
        values: &[T],
    ) -> Result<Self, Error> {
        let mut w = Window::new(size, refit_every)?;
        check_count("seen", seen)?;
        let held = seen.min(size as u64);
        if values.len() as u64 != held || values.iter().any(|v| !v.is_finite()) {
            return Err(Error::invalid(
                "state",
                format!(
                    "not a valid window state: a window of {size} that has seen {seen} scores \
                     holds the newest {held} of them, all finite; got {} values",
                    values.len()
                ),
            ));
        }
        if since_refit as u64 > seen {
            return Err(Error::invalid(
                "state",
                format!(
                    "not a valid window state: {since_refit} scores since the last refit \
                     of {seen} seen"
                ),
            ));
        }
        w.buf.extend_from_slice(values);
        w.since_refit = since_refit;
        w.seen = seen;
        Ok(w)
    }

    /// The refit counter.
    pub fn since_refit(&self) -> usize {
        self.since_refit
    }
}

impl<T: Float> PartialEq for Window<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.size, self.refit_every, self.since_refit, self.seen)
            == (other.size, other.refit_every, other.since_refit, other.seen)
            && self.values() == other.values()
    }
}

/// A window's counters before a batch: the batch's scores are the last
/// `min(seen − mark.seen, size)` of the buffer, after the whole earlier
/// window (`update` drops only scores before it).
#[derive(Debug, Clone, Copy)]
pub struct WindowMark {
    seen: u64,
    since_refit: usize,
}

impl<T: Float> Restore for Window<T> {
    type Mark = WindowMark;

    fn mark(&self) -> WindowMark {
        WindowMark {
            seen: self.seen,
            since_refit: self.since_refit,
        }
    }

    fn restore(&mut self, mark: WindowMark) {
        let added = (self.seen - mark.seen).min(self.size as u64) as usize;
        self.buf.truncate(self.buf.len() - added);
        self.seen = mark.seen;
        self.since_refit = mark.since_refit;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transformations::fit::{Center, Scale};

    #[test]
    fn keeps_the_newest_and_refits_exactly() {
        let mut w = Window::<f64>::new(5, 3).unwrap();
        let all: Vec<f64> = (0..23).map(f64::from).collect();
        let mut fed = 0;
        for chunk in [&all[..2], &all[2..3], &all[3..15], &all[15..16], &all[16..]] {
            w.update(chunk, NanPolicy::Omit).unwrap();
            fed += chunk.len();
            let want: Vec<f64> = all[fed.saturating_sub(5)..fed].to_vec();
            assert_eq!(w.values(), &want[..]);
            assert!(w.buf.len() <= 10);
        }
        assert!(w.due());
        let spec = GaussianSpec::new(Center::Median, Scale::Nmad);
        let f = w.fit_gaussian(&spec).unwrap();
        assert_eq!(f, fit_gaussian(&all[18..], &spec).unwrap());
        assert!(!w.due());
        w.update(&[f64::NAN, 1.0], NanPolicy::Omit).unwrap();
        assert_eq!(w.values(), &[19.0, 20.0, 21.0, 22.0, 1.0]);
        assert!(w.update(&[f64::INFINITY], NanPolicy::Omit).is_err());
        assert!(w.update(&[f64::NAN], NanPolicy::Raise).is_err());
        assert!(Window::<f32>::new(0, 0).is_err());
        let back = Window::from_parts(5, 3, w.since_refit(), w.seen(), w.values()).unwrap();
        assert_eq!(
            back,
            Window {
                buf: w.values().to_vec(),
                ..w.clone()
            }
        );
        // Stored parts that contradict each other are refused.
        let (since, seen, values) = (w.since_refit(), w.seen(), w.values());
        assert!(Window::from_parts(5, 3, since, seen, &values[1..]).is_err());
        assert!(Window::from_parts(5, 3, since, 3, &values[..3]).is_ok());
        assert!(Window::from_parts(5, 3, since, 4, &values[..3]).is_err());
        assert!(Window::from_parts(5, 3, 4, 3, &values[..3]).is_err());
        assert!(Window::from_parts(5, 3, since, 1 << 60, values).is_err());
        assert!(Window::from_parts(5, 3, since, seen, &[1.0, 2.0, f64::NAN, 4.0, 5.0]).is_err());
    }
}
