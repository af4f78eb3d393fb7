//! The plain path of `outprob stream` (contract §9, "Command line"): text
//! of one score per line in, one probability per line out, fitting as it
//! goes — the line reader, the streaming fit and the map in one object, so
//! that a batch crosses no array boundary (the command then needs no NumPy,
//! whose import cost more than the fit of two million lines).
//!
//! A batch is what the command's loop did with the same parts: take up to
//! `batch` lines; apply `--on-error` to the bad ones (NaN, dropped, or the
//! batch cut before the first); add the rest to the fit; refit when the
//! core's rule says the last fit no longer stands
//! ([`StreamingState::stream_fit`]); map; write the probabilities as text.
//! The same bits as those parts one by one (the test below; the command's
//! tests in `tests/s09_streaming` hold it to `partial_fit`).

use crate::error::Error;
use crate::io::lines::{write_lines, BadLine, LineReader};
use crate::streaming::fit::StreamingResult;
use crate::streaming::state::StreamingState;
use crate::transformations::fit::GaussianSpec;
use crate::transformations::fitted::{FittedMap, MapKind, MapParts};

/// What `--on-error` does with a bad line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnError {
    /// Its probability is NaN.
    Nan,
    /// It gets no output line.
    Skip,
    /// The batch ends before it (the caller stops).
    Stop,
}

impl core::str::FromStr for OnError {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "nan" => Ok(OnError::Nan),
            "skip" => Ok(OnError::Skip),
            "stop" => Ok(OnError::Stop),
            other => Err(Error::invalid(
                "on_error",
                format!("expected 'nan', 'skip' or 'stop', got {other:?}"),
            )),
        }
    }
}

/// One batch's outcome; its probabilities were appended to the output.
#[derive(Debug)]
pub struct Step {
    /// Lines taken (0: the input ended).
    pub lines: usize,
    /// The bad lines among them.
    pub bad: Vec<BadLine>,
    /// With [`OnError::Stop`]: the first bad line (the lines before it
    /// were mapped).
    pub stop: Option<BadLine>,
    /// The fit made for this batch, if one was (a batch mapped by the
    /// last fit has none).
    pub fit: Option<StreamingResult>,
}

/// Lines in, probabilities out (a Gaussian fit, or a linear one).
#[derive(Debug)]
pub struct TextStream {
    reader: LineReader,
    state: StreamingState,
    kind: MapKind,
    negate: bool,
    /// Scores at the last fit and its map.
    last: Option<(u64, FittedMap)>,
    /// A batch's probabilities.
    mapped: Vec<f64>,
}

impl TextStream {
    /// An empty stream fitting by `spec` (sketch parameter `k`, coin
    /// `seed`), or a linear fit.
    pub fn new(spec: GaussianSpec, k: u32, seed: u64, linear: bool) -> Result<Self, Error> {
        let negate = spec.negate;
        Ok(TextStream {
            reader: LineReader::new(),
            state: StreamingState::new(spec, k, seed, 1, linear)?,
            kind: if linear {
                MapKind::Linear
            } else {
                MapKind::Gaussian
            },
            negate,
            last: None,
            mapped: Vec::new(),
        })
    }

    /// The line reader (text goes in through it).
    pub fn reader(&mut self) -> &mut LineReader {
        &mut self.reader
    }

    /// Takes up to `batch` lines, fits and maps them, and appends their
    /// probabilities to `out`, one per line. A refused fit (contract §5)
    /// is an error.
    pub fn step(
        &mut self,
        batch: usize,
        on_error: OnError,
        out: &mut Vec<u8>,
    ) -> Result<Step, Error> {
        let taken = self.reader.take(batch);
        let lines = taken.scores.len();
        let mut x = taken.scores;
        let mut stop = None;
        if let Some(first_bad) = taken.bad.first() {
            match on_error {
                OnError::Nan => {}
                OnError::Stop => {
                    x.truncate((first_bad.line - taken.first_line) as usize);
                    stop = Some(first_bad.clone());
                }
                OnError::Skip => {
                    let mut bad = taken
                        .bad
                        .iter()
                        .map(|b| b.line - taken.first_line)
                        .peekable();
                    let mut i = 0u64;
                    x.retain(|_| {
                        let keep = bad.peek() != Some(&i);
                        if !keep {
                            bad.next();
                        }
                        i += 1;
                        keep
                    });
                }
            }
        }
        let mut fit = None;
        if !x.is_empty() {
            fit = self.map(&x)?;
            // Not mapped (nothing fitted yet, all missing): x is its own
            // probabilities.
            let p = if self.mapped.len() == x.len() {
                &self.mapped
            } else {
                &x
            };
            write_lines(p, out);
        }
        Ok(Step {
            lines,
            bad: taken.bad,
            stop,
            fit,
        })
    }

    /// Adds `x` to the fit and maps it into `self.mapped` (left empty when
    /// nothing is fitted yet and `x` is all missing: its probabilities are
    /// `x` itself). The fresh fit, if one was made.
    fn map(&mut self, x: &[f64]) -> Result<Option<StreamingResult>, Error> {
        self.mapped.clear();
        if self.state.n()[0] == 0 && x.iter().all(|v| v.is_nan()) {
            return Ok(None);
        }
        self.state.update(x, &[x.len()])?;
        let fresh = self
            .state
            .stream_fit(self.last.as_ref().map(|l| l.0))?
            .pop()
            .flatten();
        if let Some(r) = &fresh {
            let map = FittedMap::new(MapParts::one_column(
                self.kind,
                self.negate,
                &[r.center, r.scale],
            ))?;
            self.last = Some((r.n, map));
        }
        let Some((_, map)) = &self.last else {
            // stream_fit without a last fit always fits.
            return Err(Error::invalid("state", "no fit to map the scores with"));
        };
        self.mapped.resize(x.len(), 0.0);
        map.transform(x, &mut self.mapped)?;
        Ok(fresh)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transformations::fit::{Center, Scale};

    /// Each batch's text, read back.
    fn run(text: &[u8], batch: usize, on_error: OnError) -> (Vec<Vec<f64>>, Vec<Step>) {
        let spec = GaussianSpec::new(Center::Mean, Scale::Nmad);
        let mut s = TextStream::new(spec, 200, 0, false).unwrap();
        s.reader().feed(text);
        s.reader().finish();
        let (mut out, mut steps) = (vec![], vec![]);
        loop {
            let mut bytes = Vec::new();
            let step = s.step(batch, on_error, &mut bytes).unwrap();
            if step.lines == 0 {
                return (out, steps);
            }
            let lines = std::str::from_utf8(&bytes).unwrap().lines();
            out.push(lines.map(|l| l.parse().unwrap()).collect());
            let stop = step.stop.is_some();
            steps.push(step);
            if stop {
                return (out, steps);
            }
        }
    }

    /// The map of the fit of every score so far, as partial_fit's.
    fn mapped(seen: &[f64], batch: &[f64]) -> Vec<f64> {
        let mut st = StreamingState::new(
            GaussianSpec::new(Center::Mean, Scale::Nmad),
            200,
            0,
            1,
            false,
        )
        .unwrap();
        st.update(seen, &[seen.len()]).unwrap();
        let r = st.results().unwrap().remove(0);
        let map = FittedMap::new(MapParts::one_column(
            MapKind::Gaussian,
            false,
            &[r.center, r.scale],
        ))
        .unwrap();
        let mut p = vec![0.0; batch.len()];
        map.transform(batch, &mut p).unwrap();
        p
    }

    fn same(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
    }

    #[test]
    fn bad_lines_by_policy() {
        let text = b"nan\n1\n2\n\n4\nx\n6\n7\n-inf\n9\n";
        let nan = f64::NAN;
        let (out, steps) = run(text, 3, OnError::Nan);
        assert!(out[0][0].is_nan() && steps[0].fit.is_some());
        assert!(same(&out[0][1..], &mapped(&[1.0, 2.0], &[1.0, 2.0])));
        assert!(same(&out[1], &mapped(&[1.0, 2.0, 4.0], &[nan, 4.0, nan])));
        assert_eq!(steps.iter().map(|s| s.bad.len()).sum::<usize>(), 3);
        let (out, _) = run(text, 3, OnError::Skip);
        assert_eq!(out.iter().map(Vec::len).sum::<usize>(), 7);
        assert!(same(&out[1], &mapped(&[1.0, 2.0, 4.0], &[4.0])));
        let (out, steps) = run(text, 3, OnError::Stop);
        assert_eq!(steps.last().unwrap().stop.as_ref().unwrap().line, 4);
        assert_eq!(out.len(), 2);
        assert!(same(&out[1], &mapped(&[1.0, 2.0], &[])));
        // Nothing fitted yet and all missing: the batch is its own output.
        let (out, steps) = run(b"nan\n1\n", 1, OnError::Nan);
        assert!(out[0][0].is_nan() && steps[0].fit.is_none() && steps[1].fit.is_some());
        assert!("skip".parse::<OnError>().is_ok() && "drop".parse::<OnError>().is_err());
    }
}
