//! Scores as text, one per line, and probabilities written back the same
//! way (contract §9, "Command line"): the reader and the writer of
//! `outprob stream`.
//!
//! A line is the text up to a `\n` (the last line of the input may lack
//! it). Spaces, tabs and a `\r` around the number are ignored. What is left
//! is read with Rust's `f64` grammar (`[+-]`, digits with an optional `.`
//! and exponent, `inf`, `infinity`, `nan` in any case) by `fast-float2`,
//! correctly rounded. `nan` is a missing score; an empty line, anything
//! else that is not a number, a number that is infinite (or overflows to
//! infinity) and a line longer than [`MAX_LINE`] bytes are [`BadLine`]s:
//! their score is NaN and the caller decides what to do with them. The
//! reader never drops or merges a line: every line gives exactly one score.
//! A UTF-8 byte order mark at the start of the input is ignored.
//!
//! Probabilities are written as the shortest decimal that reads back to
//! the same double (Ryū), `nan` for NaN, one per line.

use crate::io::split::{LineSink, Splitter};
use core::fmt;

/// Longest line read as a score, in bytes without its `\n`: a score needs
/// a few dozen; the bound keeps the memory of a line without end bounded.
pub const MAX_LINE: usize = 4096;

/// Characters of a bad line quoted in its message.
const QUOTED: usize = 40;

/// The UTF-8 byte order mark, ignored at the start of the input (it counts
/// towards line 1's [`MAX_LINE`] bytes).
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Why a line holds no score.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Nothing but whitespace.
    Empty,
    /// Text that is not a number.
    NotANumber,
    /// `±inf`, or a number beyond the double range.
    Infinite,
    /// More than [`MAX_LINE`] bytes.
    TooLong,
}

/// A line that holds no score: its number (from 1) and what it held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadLine {
    /// Line number, counted from 1 over the whole input.
    pub line: u64,
    /// Why it holds no score.
    pub fault: Fault,
    /// The start of the line as quoted in the message: of its first
    /// `MAX_LINE + 1` bytes, without surrounding whitespace, the first 40
    /// characters (invalid UTF-8 shown as U+FFFD).
    pub text: String,
}

impl fmt::Display for BadLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quoted = format!("'{}'", self.text.escape_debug());
        match self.fault {
            Fault::Empty => write!(
                f,
                "line {}: an empty line is not a number (expected one score per line)",
                self.line
            ),
            Fault::NotANumber => write!(
                f,
                "line {}: {quoted} is not a number (expected one score per line)",
                self.line
            ),
            Fault::Infinite => write!(
                f,
                "line {}: {quoted} is infinite; fitting needs finite scores (write nan for a \
                 missing score)",
                self.line
            ),
            Fault::TooLong => write!(
                f,
                "line {}: a line of more than {MAX_LINE} bytes is not a score (it starts \
                 {quoted})",
                self.line
            ),
        }
    }
}

/// The score on one line (without its `\n`): a finite number, NaN for
/// `nan`, or why there is none.
pub fn parse_score(line: &[u8]) -> Result<f64, Fault> {
    if line.len() > MAX_LINE {
        return Err(Fault::TooLong);
    }
    let text = line.trim_ascii();
    if text.is_empty() {
        return Err(Fault::Empty);
    }
    match fast_float2::parse::<f64, _>(text) {
        Ok(v) if v.is_infinite() => Err(Fault::Infinite),
        Ok(v) => Ok(v),
        Err(_) => Err(Fault::NotANumber),
    }
}

/// The start of a line as its message shows it: its first `MAX_LINE + 1`
/// bytes (all a reader keeps of a longer line) without surrounding
/// whitespace, the first 40 characters of that.
fn quote(line: &[u8]) -> String {
    let kept = &line[..line.len().min(MAX_LINE + 1)];
    let text = String::from_utf8_lossy(kept.trim_ascii());
    text.chars().take(QUOTED).collect()
}

/// A batch of lines taken from a [`LineReader`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lines {
    /// Number of the batch's first line (from 1).
    pub first_line: u64,
    /// One score per line; NaN for `nan` and for every bad line.
    pub scores: Vec<f64>,
    /// The bad lines among them, in order.
    pub bad: Vec<BadLine>,
}

/// Text fed in pieces of any size, read into lines handed out in batches
/// ([`LineReader`]: one score per line; [`crate::rows::RowReader`]: rows
/// with an identifier). A line is complete at its `\n` or, for the last
/// one, when the input ends.
pub trait TextReader {
    /// Adds text; parses every line it completes. Text fed after
    /// [`finish`](Self::finish) is ignored.
    fn feed(&mut self, data: &[u8]);

    /// Ends the input: an unfinished last line becomes a line.
    fn finish(&mut self);

    /// Whether the input ended.
    fn is_finished(&self) -> bool;

    /// Lines parsed and not taken yet.
    fn pending(&self) -> usize;

    /// Whether `n` lines can be taken, or the input ended (what a batch
    /// waits for).
    fn ready(&self, n: usize) -> bool {
        self.is_finished() || self.pending() >= n
    }
}

/// Reads scores from text fed in pieces of any size, and hands them out in
/// batches of lines.
///
/// Every complete line fed is parsed at once; a line is complete at its
/// `\n` or, for the last one, when the input ends ([`finish`]).
///
/// [`finish`]: LineReader::finish
#[derive(Clone, Debug)]
pub struct LineReader {
    split: Splitter<Parsed>,
}

/// Parsed lines, of which the first `taken` were taken (dropped at the next
/// feed, so that a take copies out only its own lines), and the number of
/// the first line not taken.
#[derive(Clone, Debug)]
struct Parsed {
    scores: Vec<f64>,
    taken: usize,
    bad: Vec<BadLine>,
    first_line: u64,
}

impl Default for LineReader {
    fn default() -> Self {
        Self::new()
    }
}

impl LineReader {
    /// An empty reader; the first line is line 1.
    pub fn new() -> Self {
        let parsed = Parsed {
            scores: Vec::new(),
            taken: 0,
            bad: Vec::new(),
            first_line: 1,
        };
        LineReader {
            split: Splitter::new(MAX_LINE, parsed),
        }
    }

    /// The next `max` parsed lines (fewer if fewer are pending).
    pub fn take(&mut self, max: usize) -> Lines {
        let p = &mut self.split.sink;
        let n = max.min(p.pending());
        let first_line = p.first_line;
        let scores = if p.taken == 0 && n == p.scores.len() {
            std::mem::take(&mut p.scores)
        } else {
            let out = p.scores[p.taken..p.taken + n].to_vec();
            p.taken += n;
            if p.taken == p.scores.len() {
                p.scores.clear();
                p.taken = 0;
            }
            out
        };
        p.first_line += n as u64;
        let split = p.bad.partition_point(|b| b.line < p.first_line);
        let rest = p.bad.split_off(split);
        let bad = std::mem::replace(&mut p.bad, rest);
        Lines {
            first_line,
            scores,
            bad,
        }
    }
}

impl TextReader for LineReader {
    fn feed(&mut self, data: &[u8]) {
        if self.split.is_finished() {
            return;
        }
        let parsed = &mut self.split.sink;
        parsed.scores.drain(..parsed.taken);
        parsed.taken = 0;
        self.split.feed(data);
    }

    fn finish(&mut self) {
        self.split.finish();
    }

    fn is_finished(&self) -> bool {
        self.split.is_finished()
    }

    fn pending(&self) -> usize {
        self.split.sink.pending()
    }
}

impl Parsed {
    fn pending(&self) -> usize {
        self.scores.len() - self.taken
    }
}

impl LineSink for Parsed {
    /// Parses one line: its first `MAX_LINE + 1` bytes at most, and
    /// whether it holds more than `MAX_LINE`.
    fn line(&mut self, mut line: &[u8], too_long: bool) {
        let number = self.first_line + self.pending() as u64;
        if number == 1 {
            // A UTF-8 byte order mark opening the input (as editors on
            // Windows write it) is not part of line 1, as for tables.
            line = line.strip_prefix(BOM).unwrap_or(line);
        }
        let parsed = if too_long {
            Err(Fault::TooLong)
        } else {
            parse_score(line)
        };
        match parsed {
            Ok(v) => self.scores.push(v),
            Err(fault) => {
                self.bad.push(BadLine {
                    line: number,
                    fault,
                    text: quote(line),
                });
                self.scores.push(f64::NAN);
            }
        }
    }
}

/// Appends each probability as the shortest decimal that reads back to the
/// same double, and a `\n`: `nan` for NaN (`inf`, `-inf` for infinities).
pub fn write_lines(p: &[f64], out: &mut Vec<u8>) {
    // Ryū writes a number in place (at most 24 bytes), then the `\n`: no
    // copy of each number's text.
    const LINE: usize = 25;
    out.reserve(p.len() * LINE);
    let start = out.len();
    let spare = &mut out.spare_capacity_mut()[..p.len() * LINE];
    let mut end = 0;
    for &v in p {
        let line = &mut spare[end..end + LINE];
        let n = if v.is_finite() {
            // SAFETY: `line` holds LINE > 24 bytes, the most Ryū writes.
            unsafe { ryu::raw::format64(v, line.as_mut_ptr().cast::<u8>()) }
        } else {
            let text: &[u8] = if v.is_nan() {
                b"nan"
            } else if v > 0.0 {
                b"inf"
            } else {
                b"-inf"
            };
            for (d, &b) in line.iter_mut().zip(text) {
                d.write(b);
            }
            text.len()
        };
        line[n].write(b'\n');
        end += n + 1;
    }
    // SAFETY: the first `end` bytes after `start` were written above.
    unsafe { out.set_len(start + end) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::split::{count_lines, pieces};
    use proptest::prelude::*;

    fn read_all(chunks: &[&[u8]], batch: usize) -> (Vec<f64>, Vec<BadLine>, Vec<u64>) {
        let mut r = LineReader::new();
        for c in chunks {
            r.feed(c);
        }
        r.finish();
        let (mut scores, mut bad, mut firsts) = (vec![], vec![], vec![]);
        loop {
            let b = r.take(batch);
            if b.scores.is_empty() {
                return (scores, bad, firsts);
            }
            firsts.push(b.first_line);
            scores.extend(b.scores);
            bad.extend(b.bad);
        }
    }

    #[test]
    fn ready_when_enough_lines_or_the_end() {
        let mut r = LineReader::new();
        r.feed(b"1\n2\n3");
        assert!(r.ready(2) && !r.ready(3));
        r.finish();
        assert!(r.ready(3) && r.ready(10));
        r.take(3);
        assert!(r.ready(1), "the end is always ready");
    }

    #[test]
    fn every_line_gives_one_score() {
        let (s, bad, firsts) = read_all(&[b"1\n2.5\r\n nan \n\nabc\n-inf\n1e400\n7"], 3);
        assert_eq!(s.len(), 8);
        assert_eq!(&s[..2], &[1.0, 2.5]);
        assert_eq!(s[7], 7.0);
        assert!(s[2..7].iter().all(|v| v.is_nan()));
        let faults: Vec<_> = bad.iter().map(|b| (b.line, b.fault)).collect();
        assert_eq!(
            faults,
            vec![
                (4, Fault::Empty),
                (5, Fault::NotANumber),
                (6, Fault::Infinite),
                (7, Fault::Infinite)
            ]
        );
        assert_eq!(firsts, vec![1, 4, 7]);
        assert_eq!(
            bad[1].to_string(),
            "line 5: 'abc' is not a number (expected one score per line)"
        );
    }

    #[test]
    fn a_trailing_newline_ends_the_last_line_and_adds_none() {
        assert_eq!(read_all(&[b"1\n2\n"], 10).0, vec![1.0, 2.0]);
        assert_eq!(read_all(&[b"1\n2"], 10).0, vec![1.0, 2.0]);
        assert!(read_all(&[b""], 10).0.is_empty());
        assert_eq!(read_all(&[b"\n"], 10).1[0].fault, Fault::Empty);
    }

    #[test]
    fn lines_are_complete_only_at_their_newline() {
        let mut r = LineReader::new();
        r.feed(b"1.2");
        assert_eq!(r.pending(), 0);
        r.feed(b"5\n3");
        assert_eq!(r.take(5).scores, vec![1.25]);
        r.finish();
        assert_eq!(r.take(5).scores, vec![3.0]);
        r.feed(b"9\n");
        assert_eq!(r.pending(), 0);
    }

    #[test]
    fn an_endless_line_keeps_its_memory_bounded() {
        let mut r = LineReader::new();
        let chunk = vec![b'1'; 1000];
        for _ in 0..100 {
            r.feed(&chunk);
        }
        assert!(r.split.buffered() <= MAX_LINE + 1);
        r.feed(b"\n2\n");
        let b = r.take(10);
        assert_eq!(b.scores.len(), 2);
        assert_eq!(b.scores[1], 2.0);
        assert_eq!(b.bad[0].fault, Fault::TooLong);
        assert_eq!(b.bad[0].text.len(), QUOTED);
        // A line of exactly MAX_LINE bytes is read.
        let mut exact = vec![b'0'; MAX_LINE - 1];
        exact.push(b'5');
        assert_eq!(parse_score(&exact), Ok(5.0));
        exact.push(b'0');
        assert_eq!(parse_score(&exact), Err(Fault::TooLong));
    }

    #[test]
    fn a_byte_order_mark_opening_the_input_is_ignored() {
        // Fed whole or a byte at a time: the mark is part of line 1's bytes.
        let text = b"\xEF\xBB\xBF1.5\n2\n";
        let bytes: Vec<&[u8]> = text.chunks(1).collect();
        for chunks in [vec![&text[..]], bytes] {
            let (s, bad, _) = read_all(&chunks, 10);
            assert_eq!((s, bad), (vec![1.5, 2.0], vec![]));
        }
        // It counts towards line 1's MAX_LINE bytes, however the input is fed.
        let mut long = b"\xEF\xBB\xBF".to_vec();
        long.resize(MAX_LINE + 2, b'1');
        for chunk in [1, 7, MAX_LINE, usize::MAX] {
            let pieces: Vec<&[u8]> = long.chunks(chunk.min(long.len())).collect();
            let (_, bad, _) = read_all(&pieces, 10);
            assert_eq!((bad[0].fault, bad[0].text.len()), (Fault::TooLong, QUOTED));
        }
        // Only at the start of the input, and only once.
        let (s, bad, _) = read_all(&[b"1\n\xEF\xBB\xBF2\n"], 10);
        assert_eq!((s[0], bad[0].line), (1.0, 2));
        let (_, bad, _) = read_all(&[b"\xEF\xBB\xBF\xEF\xBB\xBF3\n"], 10);
        assert_eq!(bad[0].fault, Fault::NotANumber);
        let (_, bad, _) = read_all(&[b"\xEF\xBB\xBF\n"], 10);
        assert_eq!(bad[0].fault, Fault::Empty);
    }

    #[test]
    fn messages_quote_the_line() {
        let (_, bad, _) = read_all(&[b"  it's\xff \n"], 1);
        assert_eq!(bad[0].text, "it's\u{fffd}");
        assert!(bad[0].to_string().contains(r"'it\'s"));
    }

    #[test]
    fn written_lines_read_back_exactly() {
        let p = [
            0.0,
            1.0,
            0.5,
            1e-300,
            5e-324,
            0.1,
            f64::NAN,
            0.123_456_789_012_345_67,
        ];
        let mut out = Vec::new();
        write_lines(&p, &mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("0.0\n1.0\n0.5\n1e-300\n5e-324\n0.1\nnan\n"));
        let back: Vec<f64> = text.lines().map(|l| l.parse().unwrap()).collect();
        for (a, b) in p.iter().zip(&back) {
            assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
        }
    }

    proptest! {
        /// Each number as Ryū's `Buffer` writes it, one per line, after
        /// what `out` held (any bits: subnormals, ±inf, NaN, −0).
        #[test]
        fn lines_are_ryu_text_appended(
            bits in proptest::collection::vec(any::<u64>(), 0..300),
            before in proptest::collection::vec(any::<u8>(), 0..30),
        ) {
            let p: Vec<f64> = bits.iter().map(|&b| f64::from_bits(b)).collect();
            let mut want = before.clone();
            let mut buffer = ryu::Buffer::new();
            for &v in p.iter().chain(&[f64::INFINITY, f64::NEG_INFINITY, -0.0, f64::MAX]) {
                let text: &[u8] = if v.is_finite() {
                    buffer.format_finite(v).as_bytes()
                } else if v.is_nan() {
                    b"nan"
                } else if v > 0.0 {
                    b"inf"
                } else {
                    b"-inf"
                };
                want.extend_from_slice(text);
                want.push(b'\n');
            }
            let mut out = before;
            let mut all = p.clone();
            all.extend([f64::INFINITY, f64::NEG_INFINITY, -0.0, f64::MAX]);
            write_lines(&all, &mut out);
            prop_assert_eq!(out, want);
        }

        #[test]
        fn any_split_of_the_input_reads_the_same(
            text in proptest::collection::vec(
                prop_oneof![Just(b'\n'), Just(b'1'), Just(b'.'), Just(b' '), Just(b'e'),
                            Just(b'-'), Just(b'x'), Just(b'n'), Just(b'a')], 0..200),
            cuts in proptest::collection::vec(0usize..200, 0..6),
            batch in 1usize..50,
        ) {
            let whole = read_all(&[&text], 1 << 20);
            let split = read_all(&pieces(&text, cuts), batch);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            prop_assert_eq!(bits(&whole.0), bits(&split.0));
            prop_assert_eq!(&whole.1, &split.1);
            // One score per line: the newlines, plus an unterminated last line.
            prop_assert_eq!(whole.0.len(), count_lines(&text));
        }
    }
}
