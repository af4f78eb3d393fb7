//! Stored streaming state and its checks (contract §9). State read back
//! from JSON, a pickle or bytes is untrusted: it may have been edited or
//! cut. This module holds the stored form of the exact moments
//! ([`MomentsParts`]) and the checks that decide whether stored parts
//! describe a state some stream of finite scores could have left, made
//! before anything is built from them
//! ([`crate::streaming::moments::Moments::from_parts`],
//! [`crate::streaming::fit::StreamingGaussian::from_parts`],
//! [`crate::streaming::window::Window::from_parts`]); and the one bound on
//! the counts a stream keeps, which updates and merges check too.
//!
//! The checks are necessary conditions, not a replay: a count, an exact
//! sum and double-double sums that contradict each other beyond their
//! rounding slack are refused, while an edit that keeps them consistent
//! (scores moved inside [min, max]) cannot be told from a real stream.

use crate::error::Error;
use crate::io::record::{Field, Kind, Record, Schema};
use crate::numeric::sum::{exact_product, two_sum, ExactSum};

/// The most scores a stream counts: 2^53, so that every count is exact as
/// a double (means, the SD's `Σd²/n`, merges weight by counts) and the sum
/// of two counts cannot wrap a `u64`.
pub const MAX_COUNT: u64 = crate::limits::COUNT.max;

/// Relative slack of the consistency checks: the double-double sums are
/// correct to about 2^-100 of the terms they add; 2^-32 keeps every state a
/// stream can leave, and refuses a count or sum changed by more.
const SLACK: f64 = 1.0 / (1u64 << 32) as f64;

/// Absolute slack per score, in the sums' units: what underflow may take
/// from a sum when it moves to larger units (far below any deviation).
const TINY: f64 = 1e-280;

fn refused(why: impl core::fmt::Display) -> Error {
    Error::invalid("state", format!("not a valid streaming state: {why}"))
}

/// `a + b` scores, refused beyond [`MAX_COUNT`].
pub fn add_counts(a: u64, b: u64) -> Result<u64, Error> {
    match a.checked_add(b) {
        Some(n) if n <= MAX_COUNT => Ok(n),
        _ => Err(Error::invalid(
            "scores",
            format!("a stream counts at most 2^53 scores; {a} seen and {b} more would exceed it"),
        )),
    }
}

/// A stored count of scores: at most [`MAX_COUNT`].
pub fn check_count(what: &str, n: u64) -> Result<(), Error> {
    if n > MAX_COUNT {
        return Err(refused(format_args!(
            "{what} = {n} exceeds the 2^53 scores a stream counts"
        )));
    }
    Ok(())
}

/// The state of [`crate::streaming::moments::Moments`] as plain numbers
/// ([`crate::streaming::moments::Moments::to_parts`]), as it is stored;
/// [`check_moments`] decides whether a stream could have left it.
#[derive(Debug, Clone, PartialEq)]
pub struct MomentsParts {
    /// Scores seen.
    pub n: u64,
    /// Sign of the exact sum.
    pub sum_negative: bool,
    /// Magnitude of the exact sum, 64-bit limbs in units of 2^-1074.
    pub sum_limbs: Vec<u64>,
    /// The fixed shift `c` (the first batch's mean).
    pub shift: f64,
    /// The sums' units are `2^k`.
    pub k: i32,
    /// Σ (x − shift)·2^-k as a double-double `[hi, lo]`.
    pub dsum: [f64; 2],
    /// Σ ((x − shift)·2^-k)² as a double-double `[hi, lo]`.
    pub dsq: [f64; 2],
    /// Smallest score seen.
    pub min: f64,
    /// Largest score seen.
    pub max: f64,
}

/// The fields of stored moments, as [`MomentsParts::to_record`] writes them.
pub const MOMENTS: &Schema = &[
    ("n", Kind::Count),
    ("sum_negative", Kind::Bool),
    ("sum_limbs", Kind::Counts),
    ("shift", Kind::Float),
    ("k", Kind::Int),
    ("dsum", Kind::Floats),
    ("dsq", Kind::Floats),
    ("min", Kind::Float),
    ("max", Kind::Float),
];

impl MomentsParts {
    /// The parts as a record of [`MOMENTS`].
    pub fn to_record(&self) -> Record {
        Record::new(
            MOMENTS,
            vec![
                Field::Count(self.n),
                Field::Bool(self.sum_negative),
                Field::Counts(self.sum_limbs.clone()),
                Field::Float(self.shift),
                Field::Int(self.k.into()),
                Field::Floats(self.dsum.to_vec()),
                Field::Floats(self.dsq.to_vec()),
                Field::Float(self.min),
                Field::Float(self.max),
            ],
        )
    }

    /// The parts from a stored record (fields of the right kinds; the
    /// state itself is checked by [`check_moments`]).
    pub fn from_record(r: &Record) -> Result<Self, Error> {
        let pair = |name: &str| -> Result<[f64; 2], Error> {
            <[f64; 2]>::try_from(r.get::<Vec<f64>>(name)?)
                .map_err(|_| refused(format_args!("{name} must hold two numbers")))
        };
        Ok(MomentsParts {
            n: r.get("n")?,
            sum_negative: r.get("sum_negative")?,
            sum_limbs: r.get("sum_limbs")?,
            shift: r.get("shift")?,
            k: i32::try_from(r.get::<i64>("k")?)
                .map_err(|_| refused("the exponent k is out of range"))?,
            dsum: pair("dsum")?,
            dsq: pair("dsq")?,
            min: r.get("min")?,
            max: r.get("max")?,
        })
    }
}

/// The stored parts of [`crate::streaming::moments::Moments`] describe
/// scores some stream could have seen: a count within [`MAX_COUNT`];
/// finite extremes with `min <= max`; the exact sum's mean and the shift
/// (a batch mean) inside them (up to the mean's one-ulp double rounding);
/// the shifted sums `Σd`, `Σd²` (d = (s − shift)·2^-k) finite, within what
/// n deviations no larger than the extremes allow, with `Σd² >= (Σd)²/n`
/// and the variance at most `(max − min)²/4` (Popoviciu); and `Σd` equal
/// to `(Σs − n·shift)·2^-k` from the exact sum. An empty state holds no
/// sums.
pub fn check_moments(p: &MomentsParts) -> Result<(), Error> {
    check_count("n", p.n)?;
    if p.sum_limbs.len() > 40 {
        // 2^53 scores below 2^1024 sum to below 2^2151 units of 2^-1074.
        return Err(refused("the exact sum has too many limbs"));
    }
    let sum = ExactSum::from_limbs(p.sum_negative, &p.sum_limbs);
    let (dsum, dsq) = (two_sum(p.dsum[0], p.dsum[1]), two_sum(p.dsq[0], p.dsq[1]));
    let sums = [
        p.shift, p.dsum[0], p.dsum[1], p.dsq[0], p.dsq[1], dsum.0, dsq.0,
    ];
    if !sums.iter().all(|v| v.is_finite()) {
        return Err(refused("the shift and the shifted sums must be finite"));
    }
    if p.n == 0 {
        let empty =
            sum.to_limbs().is_some_and(|(_, l)| l.is_empty()) && dsum.0 == 0.0 && dsq.0 == 0.0;
        return if empty {
            Ok(())
        } else {
            Err(refused("a state of 0 scores holds sums"))
        };
    }
    if !(-1100..=1100).contains(&p.k) {
        return Err(refused(format_args!(
            "the exponent k = {} is out of range",
            p.k
        )));
    }
    let (lo, hi) = (p.min, p.max);
    if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
        return Err(refused("min and max must be finite with min <= max"));
    }
    let within = |v: f64| v.next_up() >= lo && v.next_down() <= hi;
    let mean = sum.mean(p.n as usize);
    if !within(mean) {
        return Err(refused(format_args!(
            "the mean of the exact sum over n = {} scores, {mean}, lies outside [min, max] = \
             [{lo}, {hi}]",
            p.n
        )));
    }
    if !within(p.shift) {
        return Err(refused("the shift (a batch mean) lies outside [min, max]"));
    }
    // Differences in the sums' units: a difference of doubles errs by at
    // most 2^-53 of itself (and is exact between subnormals, which halving
    // would round); halved first only where it could overflow.
    let units = |a: f64, b: f64| {
        if a.abs().max(b.abs()) < f64::MAX / 2.0 {
            libm::scalbn(a - b, -p.k)
        } else {
            libm::scalbn(a / 2.0 - b / 2.0, 1 - p.k)
        }
    };
    let reach = units(hi, p.shift).max(units(p.shift, lo));
    let range = units(hi, lo);
    if reach > 2f64.powi(64) {
        return Err(refused("the exponent k is too small for the extremes"));
    }
    let n = p.n as f64;
    let tiny = TINY * (n + 1.0);
    let (s, q) = (dsum.0 + dsum.1, dsq.0 + dsq.1);
    if s.abs() > n * reach * (1.0 + SLACK) + tiny || q > n * reach * reach * (1.0 + SLACK) + tiny {
        return Err(refused(
            "the shifted sums exceed what n scores inside [min, max] can add up to",
        ));
    }
    // Σ(s − mean)² = Σd² − (Σd)²/n, in [0, n·(max − min)²/4].
    let centered = q - s * (s / n);
    if centered < -SLACK * q - tiny || centered > n * range * range / 4.0 * (1.0 + SLACK) + tiny {
        return Err(refused(
            "the sum of squared deviations contradicts the sum of deviations",
        ));
    }
    let mut deviation = sum;
    deviation.merge(&exact_product(-p.shift, p.n as usize));
    let want = deviation.scaled_value(-p.k);
    if (s - want).abs() > SLACK * n * reach + tiny {
        return Err(refused(format_args!(
            "the sum of deviations does not match the exact sum of n = {} scores",
            p.n
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::NanPolicy;
    use crate::streaming::moments::Moments;
    use proptest::prelude::*;

    fn parts_of(x: &[f64], cuts: &[usize]) -> MomentsParts {
        let mut m = Moments::new();
        let mut start = 0;
        for &c in cuts.iter().chain([&x.len()]) {
            let c = c.clamp(start, x.len());
            let mut part = Moments::new();
            part.update(&x[start..c], NanPolicy::Omit).unwrap();
            m.merge(&part);
            start = c;
        }
        m.to_parts()
    }

    #[test]
    fn counts_have_headroom() {
        assert_eq!(add_counts(3, 4).unwrap(), 7);
        assert!(add_counts(MAX_COUNT, 1).is_err());
        assert!(add_counts(u64::MAX, 1).is_err());
        assert!(check_count("n", MAX_COUNT).is_ok());
        assert!(check_count("n", MAX_COUNT + 1).is_err());
    }

    type Edit = Box<dyn Fn(&mut MomentsParts)>;

    #[test]
    fn records_round_trip_and_refuse_wrong_kinds() {
        let p = parts_of(&[1.0, 2.0, 7.5], &[1]);
        assert_eq!(MomentsParts::from_record(&p.to_record()).unwrap(), p);
        let mut r = p.to_record();
        r.fields[5] = Field::Floats(vec![1.0]);
        assert!(MomentsParts::from_record(&r).is_err());
        let mut r = p.to_record();
        r.fields[4] = Field::Int(i64::from(i32::MAX) + 1);
        assert!(MomentsParts::from_record(&r).is_err());
        let mut r = p.to_record();
        r.fields[0] = Field::Float(3.0);
        assert!(MomentsParts::from_record(&r).is_err());
    }

    #[test]
    fn subnormal_streams_pass() {
        // Halving 8.1407e-320 rounds; the reach from the extremes must not.
        for x in [[0.0, 8.1407e-320], [5e-324, 1.5e-323], [-3e-322, 7e-323]] {
            check_moments(&parts_of(&x, &[])).unwrap();
            check_moments(&parts_of(&x, &[1])).unwrap();
        }
    }

    #[test]
    fn contradictions_are_refused() {
        let x: Vec<f64> = (0..100).map(|i| f64::from(i) + 5.0).collect();
        let good = parts_of(&x, &[30, 70]);
        check_moments(&good).unwrap();
        let edits: Vec<(&str, Edit)> = vec![
            ("negative dsq", Box::new(|p| p.dsq = [1.0, -1e308])),
            ("huge dsq", Box::new(|p| p.dsq[0] *= 1e6)),
            ("count 1e15", Box::new(|p| p.n = 1_000_000_000_000_000)),
            ("count doubled", Box::new(|p| p.n *= 2)),
            ("count one more", Box::new(|p| p.n += 1)),
            ("count beyond 2^53", Box::new(|p| p.n = MAX_COUNT + 1)),
            ("sum flipped", Box::new(|p| p.sum_negative = true)),
            (
                "sum edited",
                Box::new(|p| {
                    let top = p.sum_limbs.len() - 1;
                    p.sum_limbs[top] ^= 1 << 55;
                }),
            ),
            ("shift outside", Box::new(|p| p.shift = 1000.0)),
            ("dsum edited", Box::new(|p| p.dsum[0] += 1.0)),
            ("nan dsum", Box::new(|p| p.dsum[1] = f64::NAN)),
            ("inf shift", Box::new(|p| p.shift = f64::INFINITY)),
            ("min above max", Box::new(|p| p.min = 200.0)),
            ("max shrunk", Box::new(|p| p.max = 50.0)),
            ("k too small", Box::new(|p| p.k = -80)),
            ("k out of range", Box::new(|p| p.k = 5000)),
            ("empty with sums", Box::new(|p| p.n = 0)),
            ("limbs", Box::new(|p| p.sum_limbs = vec![1; 41])),
        ];
        for (what, edit) in edits {
            let mut p = good.clone();
            edit(&mut p);
            assert!(check_moments(&p).is_err(), "{what}: {p:?}");
            assert!(Moments::from_parts(&p).is_err(), "{what}");
        }
        check_moments(&Moments::new().to_parts()).unwrap();
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// Every state a stream leaves passes, at every magnitude.
        #[test]
        fn every_stream_state_passes(
            x in proptest::collection::vec(prop_oneof![
                -1e3f64..1e3,
                (-1.0f64..1.0).prop_map(|v| 1e12 + v),
                (-1.0f64..1.0).prop_map(|v| v * 1e-300),
                (-1.0f64..1.0).prop_map(|v| v * 1e-315),
                (0u32..64).prop_map(|v| f64::from_bits(u64::from(v) * 977)),
                (-1.0f64..1.0).prop_map(|v| v * 1.79e308),
                Just(3.0),
                Just(f64::NAN),
            ], 1..200),
            cuts in proptest::collection::vec(0usize..200, 0..6),
        ) {
            let mut cuts = cuts;
            cuts.sort_unstable();
            let p = parts_of(&x, &cuts);
            prop_assert!(check_moments(&p).is_ok(), "{:?}: {:?}", p, check_moments(&p));
        }
    }
}
