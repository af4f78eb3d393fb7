//! Text fed in pieces of any size cut into lines of bounded memory
//! (contract §9 "Command line", §12 "outprob stream"): what the reader of
//! scores ([`crate::io::lines`]) and the reader of rows ([`crate::rows`])
//! share.
//!
//! A line is the text up to a `\n`, without it; the last line of the input
//! may lack it and ends at [`Splitter::finish`]. Of a line the splitter
//! keeps at most `max + 1` bytes — enough to know that it is longer than
//! `max` and to quote its start — so an input without a newline never
//! grows its memory. Every line is handed on once, whatever the pieces:
//! the same bytes and the same verdict (longer than `max` or not) whether
//! it came whole or a byte at a time.

/// What takes the lines: each line's first `max + 1` bytes at most, and
/// whether the line holds more than `max`.
pub(crate) trait LineSink {
    fn line(&mut self, start: &[u8], too_long: bool);
}

/// Cuts text fed in pieces into lines of at most `max` bytes (a longer
/// one handed on by its first `max + 1` bytes, marked too long) and hands
/// them to its sink.
#[derive(Clone, Debug)]
pub(crate) struct Splitter<S> {
    /// What takes the lines.
    pub(crate) sink: S,
    max: usize,
    /// The start of the unfinished last line (at most `max + 1` bytes).
    partial: Vec<u8>,
    /// Whether the unfinished line passed `max + 1` bytes.
    overflow: bool,
    finished: bool,
}

impl<S: LineSink> Splitter<S> {
    /// A splitter of lines of at most `max` bytes into `sink`.
    pub(crate) fn new(max: usize, sink: S) -> Self {
        Splitter {
            sink,
            max,
            partial: Vec::new(),
            overflow: false,
            finished: false,
        }
    }

    /// Adds text and hands each line it completes to the sink. Text fed
    /// after [`finish`](Self::finish) is ignored.
    pub(crate) fn feed(&mut self, mut data: &[u8]) {
        if self.finished {
            return;
        }
        if !self.partial.is_empty() || self.overflow {
            let Some(end) = memchr::memchr(b'\n', data) else {
                self.extend_partial(data);
                return;
            };
            self.extend_partial(&data[..end]);
            self.end_partial();
            data = &data[end + 1..];
        }
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', data) {
            let whole = &data[start..end];
            self.sink.line(
                &whole[..whole.len().min(self.max + 1)],
                whole.len() > self.max,
            );
            start = end + 1;
        }
        self.extend_partial(&data[start..]);
    }

    /// Ends the input: an unfinished last line is handed on as a line.
    pub(crate) fn finish(&mut self) {
        if !self.finished && (!self.partial.is_empty() || self.overflow) {
            self.end_partial();
        }
        self.finished = true;
    }

    /// Whether the input ended.
    pub(crate) fn is_finished(&self) -> bool {
        self.finished
    }

    /// Bytes kept of the unfinished line.
    #[cfg(test)]
    pub(crate) fn buffered(&self) -> usize {
        self.partial.len()
    }

    fn extend_partial(&mut self, data: &[u8]) {
        let room = (self.max + 1).saturating_sub(self.partial.len());
        if data.len() > room {
            self.overflow = true;
        }
        self.partial
            .extend_from_slice(&data[..data.len().min(room)]);
    }

    fn end_partial(&mut self) {
        let kept = std::mem::take(&mut self.partial);
        let overflow = std::mem::replace(&mut self.overflow, false);
        self.sink.line(&kept, overflow || kept.len() > self.max);
    }
}

/// `text` cut at `cuts` (each clamped to its length, in any order): the
/// pieces a property test feeds a reader.
#[cfg(test)]
pub(crate) fn pieces(text: &[u8], cuts: Vec<usize>) -> Vec<&[u8]> {
    let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(text.len())).collect();
    cuts.sort_unstable();
    let mut out = vec![];
    let mut at = 0;
    for c in cuts {
        out.push(&text[at..c]);
        at = c;
    }
    out.push(&text[at..]);
    out
}

/// Lines in `text`: its newlines, plus an unterminated last line.
#[cfg(test)]
pub(crate) fn count_lines(text: &[u8]) -> usize {
    text.split(|&b| b == b'\n').count() - usize::from(text.last().is_none_or(|&b| b == b'\n'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    impl LineSink for Vec<(Vec<u8>, bool)> {
        fn line(&mut self, start: &[u8], too_long: bool) {
            self.push((start.to_vec(), too_long));
        }
    }

    fn split_all(max: usize, chunks: &[&[u8]]) -> Vec<(Vec<u8>, bool)> {
        let mut s = Splitter::new(max, vec![]);
        for c in chunks {
            s.feed(c);
        }
        s.finish();
        s.sink
    }

    #[test]
    fn lines_end_at_newlines_and_at_the_end_of_the_input() {
        let got = split_all(4, &[b"ab\n\ncd", b"e\nfghij\n12345"]);
        let want: Vec<(Vec<u8>, bool)> = vec![
            (b"ab".to_vec(), false),
            (b"".to_vec(), false),
            (b"cde".to_vec(), false),
            (b"fghij".to_vec(), true),
            (b"12345".to_vec(), true),
        ];
        assert_eq!(got, want);
        assert!(split_all(4, &[b""]).is_empty());
        assert_eq!(split_all(4, &[b"1\n"]), vec![(b"1".to_vec(), false)]);
    }

    #[test]
    fn a_line_without_end_keeps_its_memory_bounded() {
        let mut s = Splitter::new(10, vec![]);
        for _ in 0..100 {
            s.feed(&[b'x'; 7]);
        }
        assert!(s.sink.is_empty());
        assert_eq!(s.buffered(), 11);
        s.feed(b"\n");
        assert_eq!(s.sink, vec![(vec![b'x'; 11], true)]);
        s.finish();
        assert!(s.is_finished());
        s.feed(b"more\n");
        assert_eq!(s.sink.len(), 1);
    }

    proptest! {
        #[test]
        fn any_split_gives_the_same_lines(
            text in proptest::collection::vec(
                prop_oneof![Just(b'\n'), Just(b'1'), Just(b'\r')], 0..60),
            cuts in proptest::collection::vec(0usize..60, 0..6),
            max in 0usize..8,
        ) {
            let whole = split_all(max, &[&text]);
            prop_assert_eq!(&whole, &split_all(max, &pieces(&text, cuts)));
            prop_assert_eq!(whole.len(), count_lines(&text));
            for ((l, long), full) in whole.iter().zip(text.split(|&b| b == b'\n')) {
                prop_assert_eq!(&l[..], &full[..full.len().min(max + 1)]);
                prop_assert_eq!(*long, full.len() > max);
            }
        }
    }
}
