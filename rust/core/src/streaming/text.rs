//! `outprob stream` (contract §9, "Command line"): text of one score per
//! line in, one probability per line out, fitting as it goes (or mapping
//! by a stored map) — the line reader, the fit and the map in one object,
//! so that a batch crosses no array boundary (the command then needs no
//! NumPy, whose import cost more than the fit of two million lines).
//!
//! A batch is what the command's loop did with the same parts: take up to
//! `batch` lines; apply `--on-error` to the bad ones (NaN, dropped, or the
//! batch cut before the first); add the rest to the fit; refit when the
//! core's rule says the last fit no longer stands
//! ([`StreamingState::stream_fit`]); map; write the probabilities as text.
//! The same bits as those parts one by one (the test below; the command's
//! tests in `tests/s09_streaming` hold it to `partial_fit`).
//!
//! With rows that carry an identifier ([`crate::rows`]) or the online
//! columns ([`OnlineColumns`]: p-value, online-FDR decision, monitor;
//! contract §12) the batch's lines are the rows' kept text, the
//! probability and those columns, written as `outprob stream --id
//! --pvalues …` wrote them: the columns of the kept scores, a skipped row
//! written not at all. The columns are computed here, a batch at a time,
//! so that the stream pays for no array crossing and no per-line loop
//! outside the core.
//!
//! What maps a batch ([`Fitter`]): the streaming fit (a sketch for the
//! order statistics), the exact fit of the newest W scores
//! ([`Window`], refitted every `refit_every` scores, `--window`), or a
//! stored map that nothing refits (`--map`) — each as the public
//! `StreamingFit.update(x).result()` or `FittedMap.transform` gives it.

use crate::error::Error;
use crate::io::lines::{write_lines, BadLine, LineReader, TextReader};
use crate::rows::{write_columns, BadRow, Column, Digits, Layout, RowReader, Rows};
use crate::sample::NanPolicy;
use crate::sequential::columns::OnlineColumns;
use crate::streaming::bounds::Interval;
use crate::streaming::extremes::linear_result;
use crate::streaming::fit::StreamingResult;
use crate::streaming::state::StreamingState;
use crate::streaming::window::Window;
use crate::transformations::fit::GaussianSpec;
use crate::transformations::fitted::{FittedMap, MapKind, MapParts};
use core::fmt;

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

/// A line or a row that holds no score.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bad {
    /// A line of one score.
    Line(BadLine),
    /// A row with an identifier.
    Row(BadRow),
}

impl Bad {
    /// Its line number (from 1).
    pub fn line(&self) -> u64 {
        match self {
            Bad::Line(b) => b.line,
            Bad::Row(b) => b.line,
        }
    }
}

impl fmt::Display for Bad {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bad::Line(b) => b.fmt(f),
            Bad::Row(b) => b.fmt(f),
        }
    }
}

/// One batch's outcome; its probabilities were appended to the output.
#[derive(Debug)]
pub struct Step {
    /// Lines taken (0: the input ended).
    pub lines: usize,
    /// The bad lines among them.
    pub bad: Vec<Bad>,
    /// With [`OnError::Stop`]: the first bad line (the lines before it
    /// were mapped).
    pub stop: Option<Bad>,
    /// The fit made for this batch, if one was (a batch mapped by the
    /// last fit has none).
    pub fit: Option<StreamingResult>,
}

/// A batch as the stream takes it: the first line's number, one score
/// per line, the bad lines, and the rows' texts (with rows).
type Batch = (u64, Vec<f64>, Vec<Bad>, Option<Rows>);

/// Where the text goes in: lines of one score, or rows.
trait Source: TextReader + fmt::Debug + Send {
    /// The next `n` lines or rows.
    fn batch(&mut self, n: usize) -> Batch;
    /// The output's delimiter.
    fn delimiter(&self) -> u8;
}

impl Source for LineReader {
    fn batch(&mut self, n: usize) -> Batch {
        let t = self.take(n);
        (
            t.first_line,
            t.scores,
            t.bad.into_iter().map(Bad::Line).collect(),
            None,
        )
    }
    fn delimiter(&self) -> u8 {
        b'\t'
    }
}

impl Source for RowReader {
    fn batch(&mut self, n: usize) -> Batch {
        let mut t = self.take(n);
        let scores = std::mem::take(&mut t.scores);
        let bad = std::mem::take(&mut t.bad).into_iter().map(Bad::Row);
        (t.first_line, scores, bad.collect(), Some(t))
    }
    fn delimiter(&self) -> u8 {
        self.layout().delimiter()
    }
}

/// What maps a batch.
#[derive(Debug)]
enum Fitter {
    /// The streaming fit of every score so far, refitted when the core's
    /// rule says the last fit no longer stands
    /// ([`StreamingState::stream_fit`]).
    Stream(StreamingState),
    /// The exact fit of the newest scores, refitted when due (and at the
    /// first batch); a linear fit when `linear`.
    Window {
        window: Window<f64>,
        spec: GaussianSpec,
        linear: bool,
    },
    /// A stored map: nothing is fitted.
    Stored,
}

/// Lines in, probabilities out (a Gaussian fit, a linear one, or a
/// stored map).
#[derive(Debug)]
pub struct TextStream {
    reader: Box<dyn Source>,
    columns: Option<OnlineColumns>,
    fitter: Fitter,
    kind: MapKind,
    negate: bool,
    /// Scores at the last fit and its map (the stored map).
    last: Option<(u64, FittedMap)>,
    /// A batch's probabilities.
    mapped: Vec<f64>,
}

impl TextStream {
    /// An empty stream fitting by `spec` (sketch parameter `k`, coin
    /// `seed`), or a linear fit.
    pub fn new(spec: GaussianSpec, k: u32, seed: u64, linear: bool) -> Result<Self, Error> {
        let state = StreamingState::new(spec, k, seed, 1, linear)?;
        Ok(Self::fitting(Fitter::Stream(state), spec.negate, linear))
    }

    /// An empty stream fitting the newest `size` scores exactly by `spec`
    /// (or a linear fit), refitted every `refit_every` scores.
    pub fn windowed(
        spec: GaussianSpec,
        size: usize,
        refit_every: usize,
        linear: bool,
    ) -> Result<Self, Error> {
        let window = Window::new(size, refit_every)?;
        let fitter = Fitter::Window {
            window,
            spec,
            linear,
        };
        Ok(Self::fitting(fitter, spec.negate, linear))
    }

    /// A stream mapping by a stored map of one score column.
    pub fn stored(map: FittedMap) -> Result<Self, Error> {
        if let Some(k) = map.n_features() {
            return Err(Error::invalid(
                "map",
                format!("fitted on {k} score columns: a stream has one score per line"),
            ));
        }
        let mut s = Self::fitting(Fitter::Stored, false, false);
        s.last = Some((0, map));
        Ok(s)
    }

    fn fitting(fitter: Fitter, negate: bool, linear: bool) -> Self {
        TextStream {
            reader: Box::new(LineReader::new()),
            columns: None,
            fitter,
            kind: if linear {
                MapKind::Linear
            } else {
                MapKind::Gaussian
            },
            negate,
            last: None,
            mapped: Vec::new(),
        }
    }

    /// The stream reading rows in `layout` (`first_line`: the number of
    /// the first line fed, 2 after a CSV header) and writing each row's
    /// kept text before its columns.
    #[must_use]
    pub fn with_rows(mut self, layout: Layout, first_line: u64) -> Self {
        self.reader = Box::new(RowReader::new(layout, first_line));
        self
    }

    /// The stream writing `columns` after each probability.
    #[must_use]
    pub fn with_columns(mut self, columns: Option<OnlineColumns>) -> Self {
        self.columns = columns;
        self
    }

    /// The reader of the input: feed it, finish it, ask it whether a
    /// batch is [`ready`](TextReader::ready).
    pub fn reader(&mut self) -> &mut dyn TextReader {
        &mut *self.reader
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
        let (first_line, mut x, bad, rows) = self.reader.batch(batch);
        let lines = x.len();
        let mut stop = None;
        // Rows written not at all, ascending (only when a row layout or
        // the columns need them).
        let mut skip = Vec::new();
        if let Some(first_bad) = bad.first() {
            match on_error {
                OnError::Nan => {}
                OnError::Stop => {
                    let cut = (first_bad.line() - first_line) as usize;
                    x.truncate(cut);
                    skip.extend(cut..lines);
                    stop = Some(first_bad.clone());
                }
                OnError::Skip => {
                    skip.extend(bad.iter().map(|b| (b.line() - first_line) as usize));
                    let mut dropped = skip.iter().peekable();
                    let mut i = 0usize;
                    x.retain(|_| {
                        let keep = dropped.peek() != Some(&&i);
                        if !keep {
                            dropped.next();
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
            if rows.is_none() && self.columns.is_none() {
                write_lines(p, out);
            } else {
                if let Some(c) = &mut self.columns {
                    c.compute(&x)?;
                }
                let delimiter = self.reader.delimiter();
                write_kept(
                    p,
                    self.columns.as_ref(),
                    rows.as_ref(),
                    &skip,
                    delimiter,
                    out,
                )?;
            }
        }
        Ok(Step {
            lines,
            bad,
            stop,
            fit,
        })
    }

    /// Adds `x` to the fit and maps it into `self.mapped` (left empty when
    /// nothing is fitted yet and `x` is all missing: its probabilities are
    /// `x` itself). The fresh fit, if one was made.
    fn map(&mut self, x: &[f64]) -> Result<Option<StreamingResult>, Error> {
        self.mapped.clear();
        let missing = || x.iter().all(|v| v.is_nan());
        let since = self.last.as_ref().map(|l| l.0);
        let fresh = match &mut self.fitter {
            Fitter::Stored => None,
            Fitter::Stream(state) => {
                if state.n()[0] == 0 && missing() {
                    return Ok(None);
                }
                state.update(x, &[x.len()])?;
                state.stream_fit(since)?.pop().flatten()
            }
            Fitter::Window {
                window,
                spec,
                linear,
            } => {
                if window.seen() == 0 && missing() {
                    return Ok(None);
                }
                window.update(x, NanPolicy::Omit)?;
                if since.is_some() && !window.due() {
                    None
                } else {
                    Some(window_fit(window, spec, *linear)?)
                }
            }
        };
        if let Some(r) = &fresh {
            let params = [r.center, r.scale];
            let map = FittedMap::new(MapParts::one_column(self.kind, self.negate, &params))?;
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

/// The window's fit as a result: exact, so its intervals are points (as
/// `StreamingFit`'s windowed results).
fn window_fit(
    window: &mut Window<f64>,
    spec: &GaussianSpec,
    linear: bool,
) -> Result<StreamingResult, Error> {
    let n = window.values().len() as u64;
    if linear {
        let l = window.fit_linear(spec.negate)?;
        return Ok(linear_result(l.min, l.max, n));
    }
    let fit = window.fit_gaussian(spec)?;
    let (center, scale) = (fit.params.center, fit.params.scale);
    Ok(StreamingResult {
        center,
        scale,
        scale_used: fit.scale_used,
        center_interval: Some(Interval {
            lo: center,
            hi: center,
        }),
        scale_interval: Some(Interval {
            lo: scale,
            hi: scale,
        }),
        probability_error: Some(0.0),
        rank_error: 0.0,
        m_estimates: fit.m_estimates,
        n,
    })
}

/// Appends the lines of the kept rows: the row's text (with rows), the
/// probability `p` and the online columns, one value each per kept row
/// (the rows in `skip` are not written).
fn write_kept(
    p: &[f64],
    columns: Option<&OnlineColumns>,
    rows: Option<&Rows>,
    skip: &[usize],
    delimiter: u8,
    out: &mut Vec<u8>,
) -> Result<(), Error> {
    let mut written = vec![Column::Doubles(p, Digits::Shortest)];
    if let Some(c) = columns {
        let d = c.doubles().into_iter();
        written.extend(d.map(|v| Column::Doubles(v, Digits::Shortest)));
        written.extend(c.flags().into_iter().map(Column::Flags));
    }
    // Without rows, the kept values are the lines.
    let skip = if rows.is_some() { skip } else { &[] };
    write_columns(rows, &written, delimiter, skip, out)
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
        assert_eq!(steps.last().unwrap().stop.as_ref().unwrap().line(), 4);
        assert_eq!(out.len(), 2);
        assert!(same(&out[1], &mapped(&[1.0, 2.0], &[])));
        // Nothing fitted yet and all missing: the batch is its own output.
        let (out, steps) = run(b"nan\n1\n", 1, OnError::Nan);
        assert!(out[0][0].is_nan() && steps[0].fit.is_none() && steps[1].fit.is_some());
        assert!("skip".parse::<OnError>().is_ok() && "drop".parse::<OnError>().is_err());
    }

    /// Rows keep their identifier, a skipped row is not written, and the
    /// p-value column is that of the kept scores (contract §12).
    #[test]
    fn rows_and_columns() {
        use crate::sequential::columns::ColumnSpec;
        use crate::sequential::online_pvalues::OnlinePvalues;
        let spec = GaussianSpec::new(Center::Mean, Scale::Nmad);
        let columns = OnlineColumns::new(ColumnSpec {
            pvalues: true,
            alert: None,
            monitor: None,
            seed: 1,
            negate: false,
        })
        .unwrap();
        let mut s = TextStream::new(spec, 200, 0, false)
            .unwrap()
            .with_rows(Layout::Tab, 1)
            .with_columns(columns);
        s.reader().feed(b"a\t1\nb\tx\nc d\t2\n");
        s.reader().finish();
        let mut out = Vec::new();
        let step = s.step(10, OnError::Skip, &mut out).unwrap();
        assert_eq!((step.lines, step.bad.len(), step.bad[0].line()), (3, 1, 2));
        let text = String::from_utf8(out).unwrap();
        let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0][0], rows[1][0]), ("a", "c d"));
        assert!(rows
            .iter()
            .all(|r| r.len() == 3 && r[1].parse::<f64>().is_ok()));
        let mut p = [0.0; 2];
        let mut pv = OnlinePvalues::new(1, false, true);
        pv.pvalues(&[1.0, 2.0], None, &mut p).unwrap();
        let got: Vec<f64> = rows.iter().map(|r| r[2].parse().unwrap()).collect();
        assert_eq!(got, p);
    }

    /// The probabilities of `batch` under the Gaussian map `(center, scale)`.
    fn gaussian(params: [f64; 2], batch: &[f64]) -> Vec<f64> {
        let parts = MapParts::one_column(MapKind::Gaussian, false, &params);
        let mut p = vec![0.0; batch.len()];
        FittedMap::new(parts)
            .unwrap()
            .transform(batch, &mut p)
            .unwrap();
        p
    }

    fn lines(out: &[u8]) -> Vec<f64> {
        let text = std::str::from_utf8(out).unwrap();
        text.lines().map(|l| l.parse().unwrap()).collect()
    }

    /// A window fits its newest scores at the first batch and again when
    /// `refit_every` scores came since; a stored map maps every batch as it
    /// is, and one of two score columns is refused (contract §9).
    #[test]
    fn windows_and_stored_maps() {
        let spec = GaussianSpec::new(Center::Median, Scale::Nmad);
        let mut s = TextStream::windowed(spec, 4, 3, false).unwrap();
        s.reader().feed(b"1\n2\n3\n10\n20\n");
        s.reader().finish();
        let mut out = Vec::new();
        let steps: Vec<Step> = (0..3)
            .map(|_| s.step(2, OnError::Nan, &mut out).unwrap())
            .collect();
        let fits: Vec<_> = steps.iter().map(|t| t.fit.as_ref().map(|f| f.n)).collect();
        assert_eq!(fits, [Some(2), None, Some(4)]);
        let params = |x: &[f64]| {
            let f = crate::transformations::fit::fit_gaussian(x, &spec).unwrap();
            [f.params.center, f.params.scale]
        };
        let first = params(&[1.0, 2.0]);
        let mut want = gaussian(first, &[1.0, 2.0, 3.0, 10.0]);
        want.extend(gaussian(params(&[2.0, 3.0, 10.0, 20.0]), &[20.0]));
        assert!(same(&lines(&out), &want));

        let map = FittedMap::new(MapParts::one_column(MapKind::Gaussian, false, &first));
        let mut s = TextStream::stored(map.unwrap()).unwrap();
        s.reader().feed(b"nan\n3\n");
        s.reader().finish();
        let mut out = Vec::new();
        assert!(s.step(5, OnError::Nan, &mut out).unwrap().fit.is_none());
        assert!(same(&lines(&out), &gaussian(first, &[f64::NAN, 3.0])));
        let two = MapParts {
            two_d: true,
            params: vec![vec![0.0, 1.0], vec![1.0, 1.0]],
            ..MapParts::one_column(MapKind::Gaussian, false, &[0.0, 1.0])
        };
        let two = FittedMap::new(two).unwrap();
        assert!(TextStream::stored(two).is_err());
    }
}
