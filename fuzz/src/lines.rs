//! The line reader and writer of `outprob stream` (contract §9, "Command
//! line"): arbitrary text fed in pieces, and arbitrary doubles written and
//! read back.

use crate::input::Input;
use outprob_core::io::lines::{write_lines, BadLine, Fault, LineReader, TextReader, MAX_LINE};

/// Bytes → text read in chunks and batches, or doubles written as lines.
///
/// The first byte chooses: bit 0 the check (reading text / writing
/// doubles), bits 1–3 the chunk size the text is fed in, bits 4–5 the
/// batch size lines are taken in, bit 6 whether the text is repeated (lines
/// beyond `MAX_LINE` bytes within the fuzzer's input length).
pub fn lines(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let chunk = [1, 2, 3, 7, 64, 4097, 1 << 16, usize::MAX][usize::from(mode >> 1) % 8];
    let batch = [1, 2, 5, 8192][usize::from(mode >> 4) % 4];
    if mode & 1 == 1 {
        write_and_read(rest, chunk, batch);
        return;
    }
    let text = if mode & 64 == 64 {
        rest.repeat(4)
    } else {
        rest.to_vec()
    };
    let (scores, bad) = read(&text, chunk, batch);
    let (want_scores, want_bad) = oracle(&text);
    assert_eq!(bits(&scores), bits(&want_scores), "scores of {text:?}");
    assert_eq!(bad, want_bad, "bad lines of {text:?}");
    for b in &bad {
        assert!(b.to_string().starts_with(&format!("line {}: ", b.line)));
    }
}

/// Everything the reader gives for `text` fed `chunk` bytes at a time and
/// taken `batch` lines at a time; checks the batches' line numbers.
fn read(text: &[u8], chunk: usize, batch: usize) -> (Vec<f64>, Vec<BadLine>) {
    let mut reader = LineReader::new();
    let (mut scores, mut bad) = (Vec::new(), Vec::new());
    let mut take = |reader: &mut LineReader, all: bool| {
        while reader.pending() >= batch || (all && reader.pending() > 0) {
            let b = reader.take(batch);
            assert_eq!(b.first_line, scores.len() as u64 + 1);
            assert!(!b.scores.is_empty() && b.scores.len() <= batch);
            let last = b.first_line + b.scores.len() as u64;
            assert!(b.bad.iter().all(|l| (b.first_line..last).contains(&l.line)));
            scores.extend(b.scores);
            bad.extend(b.bad);
        }
    };
    for piece in text.chunks(chunk.min(text.len()).max(1)) {
        reader.feed(piece);
        take(&mut reader, false);
    }
    reader.finish();
    take(&mut reader, true);
    assert!(reader.take(batch).scores.is_empty());
    (scores, bad)
}

/// The rules of contract §9 written out with the standard library: split
/// at `\n` (a last line without one counts, nothing after a final `\n`
/// does), a byte order mark opening the input dropped (it counts towards
/// line 1's length), trim ASCII whitespace, `str::parse::<f64>`.
fn oracle(text: &[u8]) -> (Vec<f64>, Vec<BadLine>) {
    let mut pieces: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    if pieces.last().is_some_and(|p| p.is_empty()) {
        pieces.pop();
    }
    let (mut scores, mut bad) = (Vec::new(), Vec::new());
    for (i, &whole) in pieces.iter().enumerate() {
        let too_long = whole.len() > MAX_LINE;
        let mut line = &whole[..whole.len().min(MAX_LINE + 1)];
        if i == 0 {
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        let trimmed = trim(line);
        let parsed = std::str::from_utf8(trimmed)
            .ok()
            .and_then(|t| t.parse::<f64>().ok());
        let fault = if too_long {
            Some(Fault::TooLong)
        } else if trimmed.is_empty() {
            Some(Fault::Empty)
        } else {
            match parsed {
                None => Some(Fault::NotANumber),
                Some(v) if v.is_infinite() => Some(Fault::Infinite),
                Some(v) => {
                    scores.push(v);
                    None
                }
            }
        };
        if let Some(fault) = fault {
            let kept = trimmed;
            bad.push(BadLine {
                line: i as u64 + 1,
                fault,
                text: String::from_utf8_lossy(kept).chars().take(40).collect(),
            });
            scores.push(f64::NAN);
        }
    }
    (scores, bad)
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if !first.is_ascii_whitespace() {
            break;
        }
        s = rest;
    }
    while let [rest @ .., last] = s {
        if !last.is_ascii_whitespace() {
            break;
        }
        s = rest;
    }
    s
}

/// Doubles written one per line read back as themselves, in the fewest
/// digits (as many as `{:e}`, the standard library's shortest round trip),
/// and through the reader, one score per line (±inf as bad lines).
fn write_and_read(data: &[u8], chunk: usize, batch: usize) {
    let mut r = Input::new(data);
    let p = r.scores(4096);
    let mut text = Vec::new();
    write_lines(&p, &mut text);
    let lines: Vec<&str> = std::str::from_utf8(&text)
        .expect("written lines are ASCII")
        .strip_suffix('\n')
        .map_or(vec![], |t| t.split('\n').collect());
    assert_eq!(lines.len(), p.len());
    for (&v, line) in p.iter().zip(&lines) {
        let back: f64 = line.parse().expect("a written line parses");
        assert!(
            back.to_bits() == v.to_bits() || (v.is_nan() && back.is_nan()),
            "{v:e} written as {line}"
        );
        if v.is_finite() {
            let mantissa = |s: &str| -> String {
                let m = s.split(['e', 'E']).next().unwrap_or("");
                let digits: String = m.chars().filter(char::is_ascii_digit).collect();
                digits.trim_matches('0').to_owned()
            };
            // As many digits as the standard library's shortest round trip;
            // the digits themselves may differ in the last place when the
            // double lies halfway (Ryū rounds that tie to even).
            assert_eq!(
                mantissa(line).len(),
                mantissa(&format!("{v:e}")).len(),
                "{v:e} written as {line}"
            );
        }
    }
    let (scores, bad) = read(&text, chunk, batch);
    assert_eq!(scores.len(), p.len());
    for (i, (&v, &s)) in p.iter().zip(&scores).enumerate() {
        if v.is_infinite() {
            assert!(bad
                .iter()
                .any(|b| b.line == i as u64 + 1 && b.fault == Fault::Infinite));
        } else {
            assert!(s.to_bits() == v.to_bits() || (v.is_nan() && s.is_nan()));
        }
    }
    assert_eq!(bad.len(), p.iter().filter(|v| v.is_infinite()).count());
}

fn bits(v: &[f64]) -> Vec<u64> {
    // Every NaN the reader gives is a missing score: one bit pattern.
    v.iter()
        .map(|x| if x.is_nan() { 1 } else { x.to_bits() })
        .collect()
}
