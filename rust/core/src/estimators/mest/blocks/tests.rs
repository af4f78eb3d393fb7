use super::*;
use crate::sample::NanPolicy;
use proptest::prelude::*;

/// Large enough for five chunks of the parallel read (`chunk_of`): the layout and
/// every sum (of the buckets and of the bulk) are the same with one thread
/// and with several.
#[test]
fn parallel_build_is_deterministic_and_exact() {
    let mut uniform = crate::numeric::testing::uniforms(7);
    let y: Vec<f64> = (0..(2 << 20) + 3)
        .map(|i| {
            let u = uniform();
            if i % 97 == 0 {
                f64::NAN
            } else {
                (4.0 * u).exp()
            }
        })
        .collect();
    let sample = Sample::new(&y, NanPolicy::Omit, true).unwrap();
    let pool = |n| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
    };
    let (m, sigma, t) = (-3.0, 2.0, 1.345);
    for bulk in [None, Some((-3.0, 1.5))] {
        let one = pool(1).install(|| blocks(&sample, true, bulk));
        let two = pool(2).install(|| blocks(&sample, true, bulk));
        let w1 = one.window_sums::<3>(m, sigma, t, (m, sigma), true);
        let w2 = two.window_sums::<3>(m, sigma, t, (m, sigma), true);
        assert_eq!(
            (w1.power, w1.left, w1.right, w1.reciprocal),
            (w2.power, w2.left, w2.right, w2.reciprocal)
        );
    }
    let one = Blocks::new(&sample);
    let w1 = one.window_sums::<3>(m, sigma, t, (m, sigma), true);
    let vals: Vec<f64> = y.iter().filter(|v| !v.is_nan()).map(|v| -v).collect();
    let inside: Vec<f64> = vals
        .iter()
        .copied()
        .filter(|&v| ((v - m) / sigma).abs() <= t)
        .collect();
    let want: f64 = inside.iter().map(|v| ((v - m) / sigma).powi(2)).sum();
    assert!((w1.power[2] - want).abs() <= 1e-10 * want);
    assert_eq!(w1.power[0] as usize, inside.len());
}

/// Bucket moments as `Blocks::new` builds them, or as a fit does, with a
/// bulk of radius `r` about `c` and far tails beyond `4r` of it (wherever
/// the windows are: a bulk or tail they cut is read value by value).
fn blocks<'a>(s: &Sample<'a, f64>, reciprocal: bool, bulk: Option<(f64, f64)>) -> Blocks<'a, f64> {
    match bulk {
        None => Blocks::new(s),
        Some((c, r)) => {
            let expect = Expect {
                location: c,
                scale: 1.0,
                widths: [1.345, 1.5],
                bulk: r,
                far: 4.0 * r,
            };
            Blocks::scaled(s, 0, reciprocal, Some(expect))
        }
    }
}

proptest! {
    #[test]
    fn power_sums_equal_direct_sums(
        y in proptest::collection::vec(prop_oneof![-50.0f64..50.0, Just(3.0), Just(f64::NAN)], 2..5000),
        m in -20.0f64..20.0,
        t in 0.1f64..4.0,
        negate in any::<bool>(),
        bulk in proptest::option::of((-20.0f64..20.0, 0.1f64..30.0)),
    ) {
        prop_assume!(y.iter().any(|v| !v.is_nan()));
        let sample = Sample::new(&y, NanPolicy::Omit, negate).unwrap();
        let b = blocks(&sample, false, bulk);
        let (sigma, s) = (3.0, 7.5);
        let w = b.window_sums::<6>(m, sigma, t, (m, s), false);
        let (got, left, right) = (w.power, w.left, w.right);
        let vals: Vec<f64> = y.iter().filter(|v| !v.is_nan()).map(|&v| if negate { -v } else { v }).collect();
        let inside: Vec<f64> = vals.iter().copied().filter(|&v| ((v - m) / sigma).abs() <= t).collect();
        prop_assert_eq!(left, vals.iter().filter(|&&v| (v - m) / sigma < -t).count());
        prop_assert_eq!(right, vals.iter().filter(|&&v| (v - m) / sigma > t).count());
        for j in 0..6 {
            let want: f64 = inside.iter().map(|v| ((v - m) / s).powi(j as i32)).sum();
            let scale: f64 = inside.iter().map(|v| ((v - m) / s).abs().powi(j as i32)).sum();
            prop_assert!((got[j] - want).abs() <= 1e-12 * scale.max(1.0), "{j}: {} vs {want}", got[j]);
        }
    }

    #[test]
    fn reciprocal_sums_equal_direct_sums(
        y in proptest::collection::vec(prop_oneof![-5.0f64..5.0, 20.0f64..500.0, -400.0f64..-30.0], 2..5000),
        m in -2.0f64..2.0,
        t in 0.1f64..3.0,
        bulk in proptest::option::of((-2.0f64..2.0, 0.1f64..4.0)),
    ) {
        let sample = Sample::new(&y, NanPolicy::Omit, false).unwrap();
        let b = blocks(&sample, true, bulk);
        let sigma = 0.7;
        let got = b.window_sums::<1>(m, sigma, t, (m, sigma), true).reciprocal;
        let want: f64 = y.iter().map(|v| (v - m) / sigma).filter(|r| r.abs() > t).map(|r| 1.0 / r.abs()).sum();
        prop_assert!((got - want).abs() <= 1e-13 * want.max(1e-300), "{got} vs {want}");
    }
}

/// Zeros of both signs fall in the key range whichever sign the extremes
/// carry: every score is counted.
#[test]
fn zeros_of_both_signs_are_counted() {
    let y: Vec<f64> = (0..300)
        .map(|i| match i % 3 {
            0 => -0.0,
            1 => 0.0,
            _ => f64::from(i),
        })
        .collect();
    for negate in [false, true] {
        let sample = Sample::new(&y, NanPolicy::Omit, negate).unwrap();
        for bulk in [None, Some((0.0, 0.5)), Some((1.0, 1.0))] {
            let b = blocks(&sample, true, bulk);
            let w = b.window_sums::<1>(0.0, 1.0, 1e300, (0.0, 1.0), false);
            assert_eq!(w.power[0] as usize + w.left + w.right, y.len());
            assert_eq!(w.power[0] as usize, y.len());
            let w = b.window_sums::<1>(0.0, 1.0, 0.5, (0.0, 1.0), false);
            assert_eq!(w.power[0] as usize, 200, "{bulk:?}");
        }
    }
}

/// A leaf read value by value is sorted into runs of 16 under a tree of
/// their own; a run of one distinct value (the last of 81 scores) got a
/// unit of 1, and its join with a run of tiny magnitudes overflowed to
/// ∞·0 = NaN in the moments the far-field series reads.
#[test]
fn runs_of_one_value_under_tiny_parents_stay_finite() {
    let near = (0..32).map(|i| 1e-150 * (1.0 + f64::from(i) * 1e-6));
    let far = (0..49).map(|i| 1e-150 * (2.0 + f64::from(i) * 1e-6));
    let y: Vec<f64> = near.chain(far).collect();
    let sample = Sample::new(&y, NanPolicy::Omit, false).unwrap();
    // One leaf (a bulk over every score) that the window cuts.
    let b = blocks(&sample, true, Some((1.5e-150, 1.0)));
    let (m, sigma, t) = (1e-150 * (1.0 + 16e-6), 1e-156, 1.345);
    let want: f64 = y
        .iter()
        .map(|v| (v - m) / sigma)
        .filter(|r| r.abs() > t)
        .map(|r| 1.0 / r.abs())
        .sum();
    let w = b.window_sums::<2>(m, sigma, t, (m, sigma), true);
    assert!(
        (w.reciprocal - want).abs() <= 1e-12 * want,
        "{} {want}",
        w.reciprocal
    );
}

/// The branch-free read of a cut leaf gives, bit for bit, the sums of
/// adding each value only where it falls (the definition it replaced),
/// lane by lane (value `i` in lane `i % LANES`), the lanes added pairwise;
/// with the power sums framed by the window and by another frame.
#[test]
fn branch_free_read_equals_adding_where_each_value_falls() {
    const L: usize = tree::LANES;
    let mut u = crate::numeric::testing::uniforms(5);
    let vals: Vec<f64> = (0..5003)
        .map(|i| match i % 50 {
            0 => 0.0,
            1 => -0.0,
            2 => 3.0 + 1.345 * 2.0, // on an edge
            _ => 3.0 + 8.0 * (u() - 0.5),
        })
        .collect();
    for (reciprocal, (r, s)) in [false, true]
        .into_iter()
        .flat_map(|rec| [(2.5, 1.5), (3.0, 2.0)].map(|frame| (rec, frame)))
    {
        let w = tree::Window {
            m: 3.0,
            sigma: 2.0,
            t: 1.345,
            r,
            s,
            reciprocal,
        };
        let start = ([0.25, -1.0, 2.0, 0.5], 0.125);
        let (mut direct, mut rec) = ([[0.0f64; L]; 4], [0.0f64; L]);
        let (mut left, mut right) = (0, 0);
        for (i, &v) in vals.iter().enumerate() {
            let z = (v - w.m) / w.sigma;
            if z < -w.t {
                left += 1;
            } else if z > w.t {
                right += 1;
            } else {
                let u = (v - w.r) / w.s;
                let mut pow = 1.0;
                for c in &mut direct {
                    c[i % L] += pow;
                    pow *= u;
                }
                continue;
            }
            if reciprocal {
                rec[i % L] += 1.0 / z.abs();
            }
        }
        // The lanes' pairwise total, written out (not tree::pairwise).
        let pairwise = |l: [f64; L]| (l[0] + l[1]) + (l[2] + l[3]);
        let want_direct: [f64; 4] = core::array::from_fn(|j| start.0[j] + pairwise(direct[j]));
        let want_rec = start.1 + pairwise(rec);
        let mut got = tree::Acc::<4>::new();
        (got.direct, got.out.reciprocal) = start;
        tree::read_values(&vals, &w, &mut got);
        assert_eq!(
            (got.out.left, got.out.right, got.out.reciprocal.to_bits()),
            (left, right, want_rec.to_bits())
        );
        assert_eq!(got.direct.map(f64::to_bits), want_direct.map(f64::to_bits));
    }
}
