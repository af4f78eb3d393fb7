use super::*;
use crate::io::split::{count_lines, pieces};
use proptest::prelude::*;

fn read(layout: Layout, chunks: &[&[u8]], batch: usize) -> Vec<Rows> {
    let mut r = RowReader::new(
        layout,
        if matches!(layout, Layout::Csv { .. }) {
            2
        } else {
            1
        },
    );
    for c in chunks {
        r.feed(c);
    }
    r.finish();
    let mut out = vec![];
    loop {
        let b = r.take(batch);
        if b.scores.is_empty() {
            return out;
        }
        out.push(b);
    }
}

fn texts(rows: &[Rows]) -> Vec<String> {
    rows.iter()
        .flat_map(|r| (0..r.scores.len()).map(|i| String::from_utf8_lossy(r.text(i)).into_owned()))
        .collect()
}

#[test]
fn ready_when_enough_rows_or_the_end() {
    let mut r = RowReader::new(Layout::Tab, 1);
    r.feed(b"a\t1\nb\t2\nc\t3");
    assert!(r.ready(2) && !r.ready(3));
    r.finish();
    assert!(r.ready(3) && r.ready(10));
}

#[test]
fn tab_rows_keep_their_identifier() {
    let rows = read(
        Layout::Tab,
        &[b"\xEF\xBB\xBFa\t1.5\r\nb\tc\t2\nno tab\nd\tx\ne\t nan \nf\t-inf"],
        2,
    );
    let s: Vec<f64> = rows.iter().flat_map(|r| r.scores.clone()).collect();
    assert_eq!(&s[..2], &[1.5, 2.0]);
    assert!(s[2..].iter().all(|v| v.is_nan()));
    assert_eq!(texts(&rows), ["a", "b\tc", "no tab", "d", "e", "f"]);
    let bad: Vec<_> = rows.iter().flat_map(|r| r.bad.clone()).collect();
    let faults: Vec<_> = bad.iter().map(|b| (b.line, b.fault)).collect();
    assert_eq!(
        faults,
        [
            (3, RowFault::NoField),
            (4, RowFault::Score(Fault::NotANumber)),
            (6, RowFault::Score(Fault::Infinite))
        ]
    );
    assert_eq!(
        bad[0].to_string(),
        "line 3: 'no tab' has no score field (expected id<TAB>score)"
    );
    assert_eq!(
        rows.iter().map(|r| r.first_line).collect::<Vec<_>>(),
        [1, 3, 5]
    );
}

#[test]
fn csv_headers_choose_the_delimiter_and_the_column() {
    assert_eq!(
        Layout::csv(b"\xEF\xBB\xBFid,score\r", "score").unwrap(),
        Layout::Csv {
            column: 1,
            delimiter: b','
        }
    );
    assert_eq!(
        Layout::csv(b"\"a;b\",x;score;\"c,d\"", "score").unwrap(),
        Layout::Csv {
            column: 1,
            delimiter: b';'
        }
    );
    assert_eq!(
        Layout::csv(b"id\t score ", "score").unwrap(),
        Layout::Csv {
            column: 1,
            delimiter: b'\t'
        }
    );
    let e = Layout::csv(b"id,value", "score").unwrap_err().to_string();
    assert!(
        e.starts_with("column: no column \"score\" in the header (it names \"id\", \"value\")"),
        "{e}"
    );
    let e = Layout::csv(b"score,score", "score")
        .unwrap_err()
        .to_string();
    assert!(e.contains("2 times"), "{e}");
    assert!(Layout::csv(b"\"id,score", "score").is_err());
}

#[test]
fn csv_rows_are_kept_whole() {
    let layout = Layout::csv(b"id,score,note", "score").unwrap();
    let rows = read(
        layout,
        &[b"1,0.5,x\r\n\"2,a\",\"1e3\",\"q\"\"\"\n3\n4,,\n5,\"7\n"],
        10,
    );
    let r = &rows[0];
    assert_eq!(r.scores[..2], [0.5, 1000.0]);
    assert!(r.scores[2..].iter().all(|v| v.is_nan()));
    assert_eq!(texts(&rows)[..2], ["1,0.5,x", "\"2,a\",\"1e3\",\"q\"\"\""]);
    let faults: Vec<_> = r.bad.iter().map(|b| (b.line, b.fault)).collect();
    assert_eq!(
        faults,
        [
            (4, RowFault::NoField),
            (5, RowFault::Score(Fault::Empty)),
            (6, RowFault::NoField)
        ]
    );
}

#[test]
fn a_row_without_end_keeps_its_memory_bounded() {
    let mut r = RowReader::new(Layout::Tab, 1);
    let chunk = vec![b'1'; 10_000];
    for _ in 0..20 {
        r.feed(&chunk);
    }
    assert!(r.split.buffered() <= MAX_ROW + 1);
    r.feed(b"\na\t2\n");
    let b = r.take(10);
    assert_eq!(b.scores[1], 2.0);
    assert_eq!(b.bad[0].fault, RowFault::Score(Fault::TooLong));
    assert_eq!(b.text(0), b"");
    // A complete long line fed at once too.
    let mut long = vec![b'x'; MAX_ROW + 5];
    long.extend_from_slice(b"\t1\n");
    let rows = read(Layout::Tab, &[&long], 10);
    assert_eq!(rows[0].bad[0].fault, RowFault::Score(Fault::TooLong));
}

#[test]
fn a_row_just_past_the_bound_is_too_long_however_it_is_fed() {
    // MAX_ROW bytes and a `\r`: one byte past the bound. Fed whole it was
    // too long, left unfinished and then ended it was read (the `\r` was
    // stripped before the unfinished line was measured).
    let mut row = vec![b'x'; MAX_ROW - 2];
    row.extend_from_slice(b"\t1\r");
    let mut ended = row.clone();
    ended.extend_from_slice(b"\na\t2\n");
    let (head, tail) = ended.split_at(100);
    for chunks in [
        vec![&ended[..]],
        vec![head, tail],
        vec![&row[..], b"\na\t2\n"],
    ] {
        let rows = read(Layout::Tab, &chunks, 10);
        assert_eq!(rows[0].bad[0].fault, RowFault::Score(Fault::TooLong));
        assert_eq!(rows[0].scores[1], 2.0);
    }
    // One byte less is read, with or without its `\r`.
    for end in [&b"\t1\r\n"[..], b"\t1\n"] {
        let mut fits = vec![b'x'; MAX_ROW + 1 - end.len()];
        fits.extend_from_slice(end);
        let (head, tail) = fits.split_at(100);
        let rows = read(Layout::Tab, &[head, tail], 10);
        assert_eq!(rows[0].scores, [1.0]);
    }
}

fn g(v: f64, d: u8) -> String {
    let mut out = vec![];
    write_significant(v, d, &mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn significant_digits_read_like_printf_g() {
    let cases: &[(f64, u8, &str)] = &[
        (0.05, 6, "0.05"),
        (1.0, 6, "1"),
        (1e-7, 6, "1e-07"),
        (0.000_123_456_789, 6, "0.000123457"),
        (123_456_789.0, 6, "1.23457e+08"),
        (0.1, 1, "0.1"),
        (0.999_999_7, 6, "1"),
        (9.999_996e-5, 6, "0.0001"),
        (0.1, 17, "0.10000000000000001"),
        (1e-310, 6, "1e-310"),
        (1.5e-300, 3, "1.5e-300"),
        (0.0, 6, "0"),
        (-2.5, 6, "-2.5"),
        (123_456.0, 6, "123456"),
        (1_234_567.0, 6, "1.23457e+06"),
        (100.0, 6, "100"),
        (1e-5, 6, "1e-05"),
        (1.234e-5, 6, "1.234e-05"),
        (0.000_1, 6, "0.0001"),
    ];
    for &(v, d, want) in cases {
        assert_eq!(g(v, d), want, "{v} to {d} digits");
    }
}

proptest! {
    #[test]
    fn significant_digits_are_within_one_unit_of_the_correct_rounding(
        m in 1.0f64..10.0, e in -300i32..300, d in 1u8..=17,
    ) {
        let v = m * 10f64.powi(e);
        prop_assume!((1e-300..=1e300).contains(&v));
        let got: f64 = g(v, d).parse().unwrap();
        let exact: f64 = format!("{:.*e}", usize::from(d) - 1, v).parse().unwrap();
        // One unit in the d-th digit of v (parsed: powi of a large negative
        // power underflows to 0 below 1e-308), plus the rounding of the two
        // decimal texts back to doubles (half an ulp of v each): at 15 or
        // more digits that rounding is 1 % of a unit and more.
        let power = v.log10().floor() as i32 + 1 - i32::from(d);
        let unit: f64 = format!("1e{power}").parse().unwrap();
        let reread = 2.0 * f64::EPSILON * v;
        prop_assert!((got - exact).abs() <= unit * 1.000_001 + reread, "{} vs {} ({} digits of {})", got, exact, d, v);
    }

    #[test]
    fn any_split_of_the_input_reads_the_same(
        text in proptest::collection::vec(
            prop_oneof![Just(b'\n'), Just(b'1'), Just(b'.'), Just(b'\t'), Just(b','),
                        Just(b'"'), Just(b'a'), Just(b'n'), Just(b'\r')], 0..200),
        cuts in proptest::collection::vec(0usize..200, 0..6),
        batch in 1usize..50,
        csv in any::<bool>(),
    ) {
        let layout = if csv { Layout::Csv { column: 1, delimiter: b',' } } else { Layout::Tab };
        let whole = read(layout, &[&text], 1 << 20);
        let split = read(layout, &pieces(&text, cuts), batch);
        let bits = |r: &[Rows]| r.iter().flat_map(|b| b.scores.iter().map(|x| x.to_bits()).collect::<Vec<_>>()).collect::<Vec<_>>();
        prop_assert_eq!(bits(&whole), bits(&split));
        prop_assert_eq!(texts(&whole), texts(&split));
        let bad = |r: &[Rows]| r.iter().flat_map(|b| b.bad.clone()).collect::<Vec<_>>();
        prop_assert_eq!(bad(&whole), bad(&split));
        prop_assert_eq!(bits(&whole).len(), count_lines(&text));
    }
}

#[test]
fn columns_follow_the_rows() {
    let rows = read(Layout::Tab, &[b"a\t1\nb\t2\nc\t3\n"], 10).remove(0);
    // The written rows' values: row 1 is skipped.
    let p = [0.25, 1.0 / 3.0];
    let flags = [true, false];
    let mut out = vec![];
    write_columns(
        Some(&rows),
        &[
            Column::Doubles(&p, Digits::Shortest),
            Column::Doubles(&p, Digits::Significant(3)),
            Column::Flags(&flags),
        ],
        b'\t',
        &[1],
        &mut out,
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "a\t0.25\t0.25\t1\nc\t0.3333333333333333\t0.333\t0\n"
    );
    let mut out = vec![];
    write_columns(
        None,
        &[Column::Doubles(&p[..1], Digits::Shortest)],
        b'\t',
        &[],
        &mut out,
    )
    .unwrap();
    assert_eq!(out, b"0.25\n");
    assert!(write_columns(
        Some(&rows),
        &[Column::Flags(&flags[..1])],
        b'\t',
        &[],
        &mut vec![]
    )
    .is_err());
    assert!(write_columns(Some(&rows), &[], b'\t', &[3], &mut vec![]).is_err());
    // Skipped rows have no value: a value for each row is one too many.
    let all = [0.25, 0.5, 1.0];
    let d = [Column::Doubles(&all, Digits::Shortest)];
    assert!(write_columns(Some(&rows), &d, b'\t', &[1], &mut vec![]).is_err());
}

#[test]
fn digits_are_the_shortest_form_or_1_to_17_significant() {
    assert_eq!(Digits::try_from(0).unwrap(), Digits::Shortest);
    assert_eq!(Digits::try_from(1).unwrap(), Digits::Significant(1));
    assert_eq!(Digits::try_from(17).unwrap(), Digits::Significant(17));
    let e = Digits::try_from(18).unwrap_err().to_string();
    assert!(e.contains("digits") && e.contains("got 18"), "{e}");
}
