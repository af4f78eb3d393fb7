//! Stored streaming state (contract §9): what `from_dict`, unpickling and
//! sketch bytes hand to the core — the moments' parts, a sketch's bytes and
//! seed, a window's values and counters — either arbitrary or a genuine
//! state with a few fields edited. Whatever the core accepts must behave
//! as a state some stream could have left: its fit finite with the
//! estimates inside their intervals, its parts read back to the same
//! state, and further batches and merges refused cleanly or kept sound.

use crate::fit::spec;
use crate::input::Input;
use outprob_core::sample::NanPolicy;
use outprob_core::streaming::fit::StreamingGaussian;
use outprob_core::streaming::kll::serde::serialize;
use outprob_core::streaming::kll::KllSketch;
use outprob_core::streaming::sketch::AnySketch;
use outprob_core::streaming::stored::MomentsParts;
use outprob_core::streaming::stored::MAX_COUNT;
use outprob_core::streaming::window::Window;

/// A count at the edges of what a stream keeps.
fn count(r: &mut Input<'_>) -> u64 {
    match r.byte() % 8 {
        0 => 0,
        1 => MAX_COUNT,
        2 => MAX_COUNT + 1,
        3 => u64::MAX,
        4 => 1_000_000_000_000_000,
        5 => u64::from_le_bytes(core::array::from_fn(|_| r.byte())),
        _ => u64::from(r.u16()),
    }
}

/// Arbitrary moments' parts.
fn arbitrary_parts(r: &mut Input<'_>) -> MomentsParts {
    let limbs = (0..r.byte() % 44)
        .map(|_| u64::from_le_bytes(core::array::from_fn(|_| r.byte())))
        .collect();
    MomentsParts {
        n: count(r),
        sum_negative: r.byte() & 1 == 1,
        sum_limbs: limbs,
        shift: r.score(),
        k: i32::from(r.u16() as i16),
        dsum: [r.score(), r.score()],
        dsq: [r.score(), r.score()],
        min: r.score(),
        max: r.score(),
    }
}

/// Edits one field of genuine parts (or the sketch's bytes).
fn edit(r: &mut Input<'_>, p: &mut MomentsParts, sketch: &mut Option<Vec<u8>>) {
    match r.byte() % 12 {
        0 => p.n = count(r),
        1 => p.n = p.n.wrapping_add(u64::from(r.byte())).wrapping_sub(128),
        2 => p.sum_negative = !p.sum_negative,
        3 => {
            if let Some(l) = p.sum_limbs.last_mut() {
                *l ^= 1 << (r.byte() % 64);
            }
        }
        4 => p.shift = r.score(),
        5 => p.k = p.k.wrapping_add(i32::from(r.byte() as i8)),
        6 => p.dsum[usize::from(r.byte() & 1)] = r.score(),
        7 => p.dsq[usize::from(r.byte() & 1)] = r.score(),
        8 => p.min = r.score(),
        9 => p.max = r.score(),
        10 => {
            if let Some(b) = sketch.as_mut().filter(|b| !b.is_empty()) {
                let i = usize::from(r.u16()) % b.len();
                b[i] ^= r.byte() | 1;
            }
        }
        _ => {
            if let Some(b) = sketch.as_mut() {
                b.truncate(usize::from(r.u16()) % (b.len() + 1));
            }
        }
    }
}

/// Checks an accepted state's fit and round trip, then a batch and a merge.
fn check_state(st: &StreamingGaussian, more: &[f64]) {
    let parts = st.moments().to_parts();
    let bytes = st.sketch().map(serialize);
    let seed = st.sketch().map_or(0, KllSketch::seed);
    let back = StreamingGaussian::from_parts(*st.spec(), &parts, bytes.as_deref(), seed)
        .expect("an accepted state's own parts are accepted");
    assert_eq!(
        back.moments().to_parts(),
        parts,
        "parts read back to the same state"
    );
    assert_eq!(back.sketch().map(serialize), bytes);
    assert_eq!(back.result(), st.result());
    check_result(st);
    let mut grown = st.clone();
    if grown.update(more).is_ok() {
        check_result(&grown);
    } else {
        assert_eq!(&grown, st, "a refused batch changes nothing");
    }
    let mut twice = st.clone();
    match twice.merge(st) {
        Ok(()) => {
            assert_eq!(twice.n(), 2 * st.n());
            check_result(&twice);
        }
        Err(_) => assert!(2 * u128::from(st.n()) > u128::from(MAX_COUNT)),
    }
}

/// A fit is refused (empty, or beyond the double range) or finite, with
/// every estimate inside its interval and a bound in [0, 1].
fn check_result(st: &StreamingGaussian) {
    let Ok(r) = st.result() else { return };
    assert!(
        r.center.is_finite() && r.scale.is_finite() && r.scale >= 0.0,
        "{r:?}"
    );
    assert!((0.0..1.0).contains(&r.rank_error), "{r:?}");
    assert_eq!(r.n, st.n());
    if let Some(iv) = r.center_interval {
        assert!(iv.contains(r.center), "center outside its interval: {r:?}");
    }
    if let Some(iv) = r.scale_interval {
        assert!(iv.contains(r.scale), "scale outside its interval: {r:?}");
    }
    if let Some(p) = r.probability_error {
        assert!((0.0..=1.0).contains(&p), "{r:?}");
    }
    if let Ok((lo, hi)) = st.extremes() {
        assert!(lo.is_finite() && hi.is_finite() && lo <= hi);
    }
}

/// A window's stored values and counters.
fn window(r: &mut Input<'_>) {
    let size = match r.byte() % 4 {
        0 => 0,
        1 => usize::MAX,
        _ => 1 + usize::from(r.byte() % 16),
    };
    let refit_every = usize::from(r.byte() % 8);
    let since = usize::from(r.u16() % 64);
    let seen = count(r) % 256;
    let len = usize::from(r.byte() % 20);
    let values = r.scores(len);
    let Ok(mut w) = Window::from_parts(size, refit_every, since, seen, &values) else {
        return;
    };
    assert_eq!(w.values().len() as u64, seen.min(size as u64));
    assert!(w.values().iter().all(|v| v.is_finite()));
    let batch = r.scores(8);
    if w.update(&batch, NanPolicy::Omit).is_ok() {
        let due = w.due();
        match w.fit_gaussian(&spec(r)) {
            Ok(f) => {
                assert!(f.params.center.is_finite() && f.params.scale.is_finite());
                assert!(!w.due());
            }
            // A refused refit leaves the refit counter as it was.
            Err(_) => assert_eq!(w.due(), due),
        }
    }
}

/// Sketch bytes of either item type through the reader.
fn sketch(r: &mut Input<'_>, bytes: &[u8]) {
    let double = r.byte() & 1 == 1;
    let Ok(s) = AnySketch::deserialize(bytes, double, 0) else {
        return;
    };
    let again = AnySketch::deserialize(&s.serialize(), double, 0)
        .expect("an accepted sketch's own bytes are accepted");
    assert_eq!(again.serialize(), s.serialize());
    if let Ok(view) = s.sorted_view() {
        assert_eq!(view.n(), s.n());
        let (lo, hi) = (view.min(), view.max());
        for rank in [0.0, 0.25, 0.5, 1.0] {
            let q = view.quantile(rank, true).expect("a rank in [0, 1]");
            assert!(lo <= q && q <= hi, "{q} outside [{lo}, {hi}]");
        }
    }
}

/// The fuzz target.
pub fn state(data: &[u8]) {
    let mut r = Input::new(data);
    match r.byte() % 4 {
        0 => {
            let spec = spec(&mut r);
            let parts = arbitrary_parts(&mut r);
            let n = usize::from(r.u16() % 512);
            let bytes: Vec<u8> = (0..n).map(|_| r.byte()).collect();
            let sketch = (r.byte() & 1 == 1).then_some(&bytes[..]);
            if let Ok(st) = StreamingGaussian::from_parts(spec, &parts, sketch, 0) {
                let more = r.scores(16);
                check_state(&st, &more);
            }
        }
        1 => {
            // A genuine state (small k: it compacts), then edits.
            let spec = spec(&mut r);
            let Ok(mut st) = StreamingGaussian::new(spec, 8 + u32::from(r.byte() % 32), 1) else {
                return;
            };
            for _ in 0..=r.byte() % 4 {
                let len = usize::from(r.byte());
                let batch = r.scores(len);
                let _ = st.update(&batch);
            }
            let mut parts = st.moments().to_parts();
            let mut bytes = st.sketch().map(serialize);
            let edits = r.byte() % 4;
            for _ in 0..edits {
                edit(&mut r, &mut parts, &mut bytes);
            }
            let back = StreamingGaussian::from_parts(spec, &parts, bytes.as_deref(), 1);
            if edits == 0 {
                let back = back.as_ref().expect("a genuine state is accepted");
                assert_eq!(back.result(), st.result());
            }
            if let Ok(back) = back {
                let more = r.scores(16);
                check_state(&back, &more);
            }
        }
        2 => window(&mut r),
        _ => {
            let bytes: Vec<u8> = (0..usize::from(r.u16() % 2048)).map(|_| r.byte()).collect();
            sketch(&mut r, &bytes);
        }
    }
}
