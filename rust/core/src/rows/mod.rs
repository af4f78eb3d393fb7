//! Rows that carry an identifier with their score, and the columns
//! `outprob stream` writes back (contract §12, "outprob stream").
//!
//! Two layouts besides one score per line ([`crate::io::lines`]):
//!
//! * **Tab**: `id<TAB>score` — the score is the last tab-separated field,
//!   everything before its tab is the row's identifier (itself free to
//!   hold tabs) and is written back before the output columns.
//! * **CSV**: a header naming the columns, then one row per line; the
//!   delimiter (`,`, `;` or tab) is the one the header holds most of, the
//!   score is the field of the chosen column (a field may be quoted with
//!   `"`, `""` standing for a quote; a quoted field does not span lines),
//!   and the whole row is written back before the output columns.
//!
//! Lines follow [`crate::io::lines`]: a line ends at `\n` (the last may lack
//! it), a `\r` before it and spaces around the score are ignored, a UTF-8
//! byte order mark opening the input is not part of line 1, the score is
//! read with the same grammar, and a bad row — no score field, a score
//! that is not a finite number or `nan`, a line longer than [`MAX_ROW`]
//! bytes — is reported with its line number and its score is NaN; the
//! reader never drops or merges a row.
//!
//! Output: each row's kept text, then each column separated by the
//! layout's delimiter — probabilities as the shortest decimal that reads
//! back to the same double, p-values rounded to a number of significant
//! digits (or shortest), flags as `0`/`1`.

use crate::error::Error;
use crate::io::lines::{parse_score, Fault, TextReader};
use crate::io::split::{LineSink, Splitter};
use core::fmt;

/// Longest row read, in bytes without its `\n`: rows carry other columns
/// than the score; the bound keeps a line without end bounded.
pub const MAX_ROW: usize = 1 << 16;
/// Characters of a bad row quoted in its message.
const QUOTED: usize = 40;
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// How a row holds its score.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `id<TAB>score`.
    Tab,
    /// Delimited fields; the score in field `column` (0-based).
    Csv {
        /// The score's field.
        column: usize,
        /// The field delimiter.
        delimiter: u8,
    },
}

impl Layout {
    /// The delimiter written between output columns.
    pub fn delimiter(self) -> u8 {
        match self {
            Layout::Tab => b'\t',
            Layout::Csv { delimiter, .. } => delimiter,
        }
    }

    /// The CSV layout of a header line: its delimiter (the most frequent
    /// of `,`, `;`, tab outside quotes; `,` when none) and the field named
    /// `column` (exactly one). A byte order mark opening it is ignored.
    pub fn csv(header: &[u8], column: &str) -> Result<Self, Error> {
        let header = strip_line(header.strip_prefix(BOM).unwrap_or(header));
        let delimiter = [b',', b';', b'\t']
            .into_iter()
            .max_by_key(|&d| (count_outside_quotes(header, d), d == b','))
            .unwrap_or(b',');
        let names = split_fields(header, delimiter)
            .ok_or_else(|| Error::invalid("header", "the header line has an unbalanced quote"))?;
        let found: Vec<usize> = names
            .iter()
            .enumerate()
            .filter(|(_, n)| n.trim_ascii() == column.as_bytes())
            .map(|(i, _)| i)
            .collect();
        match found.as_slice() {
            [i] => Ok(Layout::Csv {
                column: *i,
                delimiter,
            }),
            [] => Err(Error::invalid(
                "column",
                format!(
                    "no column {column:?} in the header (it names {})",
                    names
                        .iter()
                        .map(|n| format!("{:?}", String::from_utf8_lossy(n.trim_ascii())))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
            _ => Err(Error::invalid(
                "column",
                format!("the header names {column:?} {} times", found.len()),
            )),
        }
    }
}

fn count_outside_quotes(line: &[u8], d: u8) -> usize {
    let mut quoted = false;
    let mut n = 0;
    for &b in line {
        if b == b'"' {
            quoted = !quoted;
        } else if b == d && !quoted {
            n += 1;
        }
    }
    n
}

/// A line without its `\r`.
fn strip_line(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The fields of a delimited line, quotes removed (`None`: a quote left
/// open). Quoted fields keep their text between the quotes, `""` as one
/// quote.
fn split_fields(line: &[u8], d: u8) -> Option<Vec<Vec<u8>>> {
    let mut fields = Vec::new();
    let mut field = Vec::new();
    let mut i = 0;
    let mut quoted = false;
    let mut opened = false;
    while i < line.len() {
        let b = line[i];
        if quoted {
            if b == b'"' {
                if line.get(i + 1) == Some(&b'"') {
                    field.push(b'"');
                    i += 1;
                } else {
                    quoted = false;
                }
            } else {
                field.push(b);
            }
        } else if b == d {
            fields.push(std::mem::take(&mut field));
            opened = false;
        } else if b == b'"' && !opened && field.iter().all(u8::is_ascii_whitespace) {
            field.clear();
            quoted = true;
            opened = true;
        } else {
            field.push(b);
        }
        i += 1;
    }
    if quoted {
        return None;
    }
    fields.push(field);
    Some(fields)
}

/// The text of field `column` of a delimited line (`None`: fewer fields or
/// a quote left open); only that field is unquoted.
fn field(line: &[u8], column: usize, d: u8) -> Option<Vec<u8>> {
    // Fast path: no quote in the line, so fields are the delimiter's
    // pieces.
    if memchr::memchr(b'"', line).is_none() {
        return line.split(|&b| b == d).nth(column).map(<[u8]>::to_vec);
    }
    split_fields(line, d)?.into_iter().nth(column)
}

/// The score of a field (one longer than a line of scores is no number).
fn score(field: &[u8]) -> Result<f64, RowFault> {
    parse_score(field).map_err(|f| {
        RowFault::Score(if f == Fault::TooLong {
            Fault::NotANumber
        } else {
            f
        })
    })
}

/// Why a row holds no score.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowFault {
    /// The score's field is missing (no tab; fewer fields; a quote left
    /// open).
    NoField,
    /// The field is not a score (see [`Fault`]).
    Score(Fault),
}

/// A row that holds no score: its line number (from 1) and start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadRow {
    /// Line number over the whole input (the header of a CSV is line 1).
    pub line: u64,
    /// Why.
    pub fault: RowFault,
    /// The first 40 characters of the row, without surrounding spaces.
    pub text: String,
    layout: Layout,
}

impl fmt::Display for BadRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quoted = format!("'{}'", self.text.escape_debug());
        let expected = match self.layout {
            Layout::Tab => "expected id<TAB>score".to_string(),
            Layout::Csv { column, .. } => format!("expected a score in field {}", column + 1),
        };
        match self.fault {
            RowFault::NoField => write!(
                f,
                "line {}: {quoted} has no score field ({expected})",
                self.line
            ),
            RowFault::Score(Fault::Empty) => {
                write!(
                    f,
                    "line {}: {quoted} has an empty score field ({expected})",
                    self.line
                )
            }
            RowFault::Score(Fault::NotANumber) => {
                write!(
                    f,
                    "line {}: the score of {quoted} is not a number ({expected})",
                    self.line
                )
            }
            RowFault::Score(Fault::Infinite) => write!(
                f,
                "line {}: the score of {quoted} is infinite; fitting needs finite scores (write \
                 nan for a missing score)",
                self.line
            ),
            RowFault::Score(Fault::TooLong) => write!(
                f,
                "line {}: a row of more than {MAX_ROW} bytes is not read (it starts {quoted})",
                self.line
            ),
        }
    }
}

/// A batch of rows taken from a [`RowReader`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rows {
    /// Line number of the first row.
    pub first_line: u64,
    /// One score per row (NaN for `nan` and for bad rows).
    pub scores: Vec<f64>,
    /// The bad rows, in order.
    pub bad: Vec<BadRow>,
    /// The rows' kept texts, one after the other.
    pub text: Vec<u8>,
    /// Where each row's text ends in `text`.
    pub ends: Vec<usize>,
}

impl Rows {
    /// Rows in the batch.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// No row.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Row `i`'s kept text.
    pub fn text(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }
}

/// Reads rows from text fed in pieces; hands them out in batches.
#[derive(Clone, Debug)]
pub struct RowReader {
    split: Splitter<Parsed>,
}

/// The rows parsed and not taken yet.
#[derive(Clone, Debug)]
struct Parsed {
    layout: Layout,
    /// The number of the next complete line.
    next_line: u64,
    pending: Rows,
}

impl RowReader {
    /// A reader of rows in `layout`; `first_line` is the number of the
    /// first line fed (2 after a CSV header).
    pub fn new(layout: Layout, first_line: u64) -> Self {
        let parsed = Parsed {
            layout,
            next_line: first_line,
            pending: Rows {
                first_line,
                ..Rows::default()
            },
        };
        RowReader {
            split: Splitter::new(MAX_ROW, parsed),
        }
    }

    /// The layout.
    pub fn layout(&self) -> Layout {
        self.split.sink.layout
    }

    /// The next `max` rows (fewer if fewer are pending).
    pub fn take(&mut self, max: usize) -> Rows {
        let n = max.min(self.pending());
        let p = &mut self.split.sink.pending;
        let next_first = p.first_line + n as u64;
        if n == p.scores.len() {
            return std::mem::replace(
                p,
                Rows {
                    first_line: next_first,
                    ..Rows::default()
                },
            );
        }
        let cut = p.ends[n - 1];
        let split = p.bad.partition_point(|b| b.line < next_first);
        let rest = Rows {
            first_line: next_first,
            scores: p.scores.split_off(n),
            bad: p.bad.split_off(split),
            text: p.text.split_off(cut),
            ends: p.ends.split_off(n).into_iter().map(|e| e - cut).collect(),
        };
        std::mem::replace(p, rest)
    }
}

impl TextReader for RowReader {
    fn feed(&mut self, data: &[u8]) {
        self.split.feed(data);
    }

    fn finish(&mut self) {
        self.split.finish();
    }

    fn is_finished(&self) -> bool {
        self.split.is_finished()
    }

    fn pending(&self) -> usize {
        self.split.sink.pending.scores.len()
    }
}

impl LineSink for Parsed {
    /// Parses one row: its line's first `MAX_ROW + 1` bytes at most, and
    /// whether the line holds more than `MAX_ROW` (its `\r` counted, as a
    /// line of scores counts it).
    fn line(&mut self, line: &[u8], too_long: bool) {
        let number = self.next_line;
        self.next_line += 1;
        let mut line = strip_line(line);
        if number == 1 {
            line = line.strip_prefix(BOM).unwrap_or(line);
        }
        let (kept, parsed): (&[u8], Result<f64, RowFault>) = if too_long {
            (b"", Err(RowFault::Score(Fault::TooLong)))
        } else {
            match self.layout {
                Layout::Tab => match memchr::memrchr(b'\t', line) {
                    Some(t) => (&line[..t], score(&line[t + 1..])),
                    None => (line, Err(RowFault::NoField)),
                },
                Layout::Csv { column, delimiter } => (
                    line,
                    match field(line, column, delimiter) {
                        Some(f) => score(&f),
                        None => Err(RowFault::NoField),
                    },
                ),
            }
        };
        let p = &mut self.pending;
        p.text.extend_from_slice(kept);
        p.ends.push(p.text.len());
        match parsed {
            Ok(v) => p.scores.push(v),
            Err(fault) => {
                let shown = String::from_utf8_lossy(line.trim_ascii());
                p.bad.push(BadRow {
                    line: number,
                    fault,
                    text: shown.chars().take(QUOTED).collect(),
                    layout: self.layout,
                });
                p.scores.push(f64::NAN);
            }
        }
    }
}

/// How a column of doubles is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Digits {
    /// The shortest decimal that reads back to the same double (Ryū).
    Shortest,
    /// Rounded to this many significant digits (1 to 17), `%g`-style.
    Significant(u8),
}

impl TryFrom<u8> for Digits {
    type Error = Error;

    /// 0 for the shortest form, else that many significant digits (1 to
    /// 17: a double's 17 digits are exact).
    fn try_from(d: u8) -> Result<Self, Error> {
        match d {
            0 => Ok(Digits::Shortest),
            1..=17 => Ok(Digits::Significant(d)),
            _ => Err(Error::InvalidParameter {
                name: "digits",
                reason: format!("must be 0 (shortest) or 1 to 17, got {d}"),
            }),
        }
    }
}

/// Powers of ten from 10⁰ to 10²², exact as doubles.
const TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Appends `v` with `d` significant digits as C's `%.{d}g` would, for
/// finite `v`: fixed notation for exponents in [−4, d), scientific
/// otherwise, trailing zeros dropped. Up to 15 digits they are those of
/// `v·10^k` rounded to an integer (`k` making it d digits long; one or two
/// roundings), which may differ from the correctly rounded decimal by one
/// unit in the last digit when `v` lies within those roundings of a
/// halfway point; beyond, the correctly rounded ones.
pub fn write_significant(v: f64, d: u8, out: &mut Vec<u8>) {
    debug_assert!((1..=17).contains(&d) && v.is_finite());
    if v == 0.0 {
        out.extend_from_slice(if v.is_sign_negative() { b"-0" } else { b"0" });
        return;
    }
    if v < 0.0 {
        out.push(b'-');
    }
    let a = v.abs();
    let d = i32::from(d);
    // Beyond 15 digits the scaled value is no longer within half a unit of
    // exact (doubles carry 15.9 digits), and outside [1e-300, 1e300] the
    // powers of ten run out: these take the correctly rounded (slow) route.
    if d > 15 || !(1e-300..=1e300).contains(&a) {
        let text = format!("{:.*e}", (d - 1) as usize, a);
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        let e: i32 = exponent.parse().unwrap_or(0);
        let digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
        write_g(&digits, e, d, out);
        return;
    }
    let mut e = a.log10().floor() as i32;
    let scaled = |e: i32| -> f64 {
        let k = d - 1 - e;
        if k >= 0 {
            mul_pow10(a, k)
        } else {
            div_pow10(a, -k)
        }
    };
    let mut m = scaled(e).round();
    // log10 may be off by one near powers of ten.
    let top = TEN[d as usize];
    if m >= top {
        e += 1;
        m = scaled(e).round();
    } else if m < TEN[(d - 1) as usize] {
        e -= 1;
        m = scaled(e).round();
    }
    if m >= top {
        e += 1;
        m = (m / 10.0).round();
    }
    let mut digits = [0u8; 17];
    let mut x = m as u64;
    for i in (0..d as usize).rev() {
        digits[i] = b'0' + (x % 10) as u8;
        x /= 10;
    }
    write_g(&digits[..d as usize], e, d, out);
}

/// `%g` layout of the `d` significant `digits` of a number of decimal
/// exponent `e`: fixed for e in [−4, d), else scientific with a two-digit
/// exponent at least; trailing zeros dropped.
fn write_g(digits: &[u8], e: i32, d: i32, out: &mut Vec<u8>) {
    let mut len = digits.len();
    while len > 1 && digits[len - 1] == b'0' {
        len -= 1;
    }
    let digits = &digits[..len];
    if (-4..d).contains(&e) {
        if e < 0 {
            out.extend_from_slice(b"0.");
            out.extend(std::iter::repeat_n(b'0', (-e - 1) as usize));
            out.extend_from_slice(digits);
        } else {
            let int = (e + 1) as usize;
            if digits.len() <= int {
                out.extend_from_slice(digits);
                out.extend(std::iter::repeat_n(b'0', int - digits.len()));
            } else {
                out.extend_from_slice(&digits[..int]);
                out.push(b'.');
                out.extend_from_slice(&digits[int..]);
            }
        }
    } else {
        out.push(digits[0]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        out.push(if e < 0 { b'-' } else { b'+' });
        let ea = e.unsigned_abs();
        if ea < 10 {
            out.push(b'0');
        }
        out.extend_from_slice(ea.to_string().as_bytes());
    }
}

fn mul_pow10(a: f64, mut k: i32) -> f64 {
    let mut x = a;
    while k > 22 {
        x *= 1e22;
        k -= 22;
    }
    x * TEN[k as usize]
}

fn div_pow10(a: f64, mut k: i32) -> f64 {
    let mut x = a;
    while k > 22 {
        x /= 1e22;
        k -= 22;
    }
    x / TEN[k as usize]
}

fn write_double(v: f64, digits: Digits, buffer: &mut ryu::Buffer, out: &mut Vec<u8>) {
    if v.is_nan() {
        out.extend_from_slice(b"nan");
    } else if v.is_infinite() {
        out.extend_from_slice(if v > 0.0 { b"inf" } else { b"-inf" });
    } else {
        match digits {
            Digits::Shortest => out.extend_from_slice(buffer.format_finite(v).as_bytes()),
            Digits::Significant(d) => write_significant(v, d, out),
        }
    }
}

/// One output column.
#[derive(Clone, Copy, Debug)]
pub enum Column<'a> {
    /// Doubles, written as `Digits` says.
    Doubles(&'a [f64], Digits),
    /// Flags, written `0` or `1`.
    Flags(&'a [bool]),
}

impl Column<'_> {
    fn len(&self) -> usize {
        match self {
            Column::Doubles(v, _) => v.len(),
            Column::Flags(v) => v.len(),
        }
    }
}

/// Appends one line per written row: the row's kept text (when `rows` is
/// given) and the columns, separated by `delimiter`. The rows whose index
/// is in `skip` (ascending) are not written, and the columns hold one
/// value per written row.
pub fn write_columns(
    rows: Option<&Rows>,
    columns: &[Column<'_>],
    delimiter: u8,
    skip: &[usize],
    out: &mut Vec<u8>,
) -> Result<(), Error> {
    let written = columns.first().map_or(0, Column::len);
    let n = rows.map_or(written + skip.len(), Rows::len);
    if columns.iter().any(|c| c.len() + skip.len() != n) {
        return Err(Error::ShapeMismatch(format!(
            "{n} rows, {} of them skipped, need columns of a value per other row",
            skip.len()
        )));
    }
    if skip.windows(2).any(|w| w[0] >= w[1]) || skip.last().is_some_and(|&s| s >= n) {
        return Err(Error::invalid("skip", "must be increasing row indices"));
    }
    let mut buffer = ryu::Buffer::new();
    out.reserve(n * (8 + 12 * columns.len()));
    let mut skip = skip.iter().peekable();
    // `k`: the value of row `i` in the columns.
    let mut k = 0;
    for i in 0..n {
        if skip.peek() == Some(&&i) {
            skip.next();
            continue;
        }
        let mut first = true;
        if let Some(r) = rows {
            out.extend_from_slice(r.text(i));
            first = false;
        }
        for c in columns {
            if !first {
                out.push(delimiter);
            }
            first = false;
            match *c {
                Column::Doubles(v, d) => write_double(v[k], d, &mut buffer, out),
                Column::Flags(v) => out.push(if v[k] { b'1' } else { b'0' }),
            }
        }
        out.push(b'\n');
        k += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
