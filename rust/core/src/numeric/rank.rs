//! Order statistics of raw input in one read-only pass (Floyd–Rivest
//! style): a pseudo-random sample brackets each wanted rank, one pass counts
//! what falls below each bracket and keeps only what falls inside, and a
//! selection inside the (small) bracket finishes — by the same method
//! again, in cache, when the bracket is large. No copy of the input is
//! made, NaN are skipped, and the result is exact: the sample only decides
//! how fast, never what. A bracket the sample misjudged is redrawn wider.

use crate::error::Error;
use crate::numeric::bracket::{
    census, tally, tally_with_census, Affine, Bracket, NonFinite, Tally,
};
use crate::numeric::float::{from_order_key, order_key, Float};
use crate::numeric::par::{map_chunks, PARALLEL_MIN};
use crate::numeric::select::order_statistics_by;
use rayon::prelude::*;

/// What is ranked: the scores (negated for `higher_is_outlier=False`) or
/// their absolute deviations from a center.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Key {
    /// `±x`.
    Value {
        /// Rank `−x`.
        negate: bool,
    },
    /// `|±x − center|`.
    Deviation {
        /// The center.
        center: f64,
        /// Take deviations of `−x`.
        negate: bool,
    },
}

impl Key {
    /// The plain scores.
    pub const VALUE: Key = Key::Value { negate: false };

    /// The key as `|sign·v − center|` or `sign·v − center`.
    pub(crate) fn affine(self) -> Affine {
        match self {
            Key::Value { negate } => Affine {
                sign: if negate { -1.0 } else { 1.0 },
                center: 0.0,
                abs: false,
            },
            Key::Deviation { center, negate } => Affine {
                sign: if negate { -1.0 } else { 1.0 },
                center,
                abs: true,
            },
        }
    }

    /// The key of a raw score.
    #[inline(always)]
    pub fn of(self, v: f64) -> f64 {
        match self {
            Key::Value { negate } => {
                if negate {
                    -v
                } else {
                    v
                }
            }
            Key::Deviation { center, negate } => {
                let s = if negate { -v } else { v };
                (s - center).abs()
            }
        }
    }
}

/// Half-width of the first bracket, in binomial standard deviations of the
/// sample.
const FIRST_WIDTH: f64 = 5.0;

/// Below this many values the keys are copied and selected directly.
const SMALL: usize = 1 << 13;
/// Sample size: about (N)^(2/3), the Floyd–Rivest balance between ordering
/// the sample and selecting inside the bracket.
fn sample_size(n: usize) -> usize {
    ((n as f64).powf(2.0 / 3.0) as usize).clamp(1024, 1 << 16)
}

/// The keys at the given 0-based ranks (ascending, unique, each `< count`)
/// among the non-NaN elements of `x`, `count` of them.
pub fn ranked<T: Float>(x: &[T], count: usize, key: Key, ranks: &[usize]) -> Vec<f64> {
    debug_assert!(ranks.windows(2).all(|w| w[0] < w[1]));
    debug_assert!(ranks.iter().all(|&r| r < count));
    if count <= SMALL {
        return direct(x, count, key, ranks);
    }
    let mut sample = draw_sample(x, key, sample_size(count));
    let mut out = vec![f64::NAN; ranks.len()];
    let mut todo: Vec<usize> = (0..ranks.len()).collect();
    let mut width = FIRST_WIDTH;
    for _ in 0..3 {
        // One bracket per wanted rank; overlapping brackets (the two middle
        // ranks of a median) merge into one.
        // Only the sample's order statistics at the bracket ends are
        // needed: selected, not sorted (a sort would be most of the serial
        // work).
        let ends: Vec<(Option<usize>, Option<usize>)> = todo
            .iter()
            .map(|&j| bracket_ends(sample.len(), ranks[j], count, width))
            .collect();
        let mut positions: Vec<usize> = ends
            .iter()
            .flat_map(|&(a, b)| a.into_iter().chain(b))
            .collect();
        positions.sort_unstable();
        positions.dedup();
        let values = order_statistics_by(&mut sample, &positions, |k| k);
        let at = |p: Option<usize>, outside: f64| {
            p.map_or(outside, |p| {
                values[positions.binary_search(&p).unwrap_or(0)]
            })
        };
        let mut groups: Vec<(Bracket, Vec<usize>)> = Vec::new();
        for (&j, &(lo, hi)) in todo.iter().zip(&ends) {
            let b = Bracket {
                lo: at(lo, f64::NEG_INFINITY),
                hi: at(hi, f64::INFINITY),
            };
            match groups.last_mut() {
                Some((g, members)) if b.lo <= g.hi => {
                    g.hi = g.hi.max(b.hi);
                    members.push(j);
                }
                _ => groups.push((b, vec![j])),
            }
        }
        let brackets: Vec<Bracket> = groups.iter().map(|(b, _)| *b).collect();
        let tallies = tally(x, key.affine(), &brackets);
        // The brackets (two for a pair of quartiles) are resolved side by
        // side: their selections are the serial part of the work.
        let resolve_group = |((b, members), mut t): ((Bracket, Vec<usize>), Tally)| {
            let wanted: Vec<usize> = members.iter().map(|&j| ranks[j]).collect();
            (resolve(&wanted, count, b, &mut t), members)
        };
        let work: Vec<_> = groups.into_iter().zip(tallies).collect();
        let resolved: Vec<_> = if work.len() > 1 && x.len() >= PARALLEL_MIN {
            work.into_par_iter().map(resolve_group).collect()
        } else {
            work.into_iter().map(resolve_group).collect()
        };
        let mut missed = Vec::new();
        for (values, members) in resolved {
            match values {
                Some(values) => {
                    for (&j, v) in members.iter().zip(values) {
                        out[j] = v;
                    }
                }
                None => missed.extend(members),
            }
        }
        if missed.is_empty() {
            return out;
        }
        todo = missed;
        width *= 4.0;
    }
    // Adversarial orderings can keep defeating the sample: select on a copy.
    let rest: Vec<usize> = todo.iter().map(|&j| ranks[j]).collect();
    for (v, &j) in direct(x, count, key, &rest).into_iter().zip(&todo) {
        out[j] = v;
    }
    out
}

/// [`ranked`] of input not yet checked, for ranks close together (a
/// median's): the census of contract §5 is taken in the read that
/// brackets them, so a caller that needs nothing else of the input reads
/// it once, besides the sample. `ranks_of(count)` gives the wanted ranks
/// of the `count` non-NaN values; `check` applies the contract to the
/// census and gives `count`, or the error returned. The sample places the
/// bracket by quantile, so it is chosen before `count` is known (as if
/// there were no NaN); a bracket that missed is read again by [`ranked`].
pub(crate) fn ranked_checking<T: Float>(
    x: &[T],
    key: Key,
    ranks_of: impl Fn(usize) -> Vec<usize>,
    check: impl FnOnce(NonFinite) -> Result<usize, Error>,
) -> Result<Vec<f64>, Error> {
    let mut sample = if x.len() > SMALL {
        draw_sample(x, key, sample_size(x.len()))
    } else {
        Vec::new()
    };
    let guess = if sample.is_empty() {
        Vec::new()
    } else {
        ranks_of(x.len())
    };
    let (Some(&first), Some(&last)) = (guess.first(), guess.last()) else {
        // Small (or nearly all NaN): check, then select.
        let count = check(census(x))?;
        return Ok(ranked(x, count, key, &ranks_of(count)));
    };
    let (lo, _) = bracket_ends(sample.len(), first, x.len(), FIRST_WIDTH);
    let (_, hi) = bracket_ends(sample.len(), last, x.len(), FIRST_WIDTH);
    let positions: Vec<usize> = lo.into_iter().chain(hi).collect();
    let values = order_statistics_by(&mut sample, &positions, |k| k);
    let b = Bracket {
        lo: lo.map_or(f64::NEG_INFINITY, |_| values[0]),
        hi: hi.map_or(f64::INFINITY, |_| values[positions.len() - 1]),
    };
    let (mut t, non_finite) = tally_with_census(x, key.affine(), &[b]);
    let count = check(non_finite)?;
    let ranks = ranks_of(count);
    Ok(
        match t.pop().and_then(|mut t| resolve(&ranks, count, b, &mut t)) {
            Some(values) => values,
            None => ranked(x, count, key, &ranks),
        },
    )
}

/// Copies the keys (NaN left out; `count` of them) and selects.
fn direct<T: Float>(x: &[T], count: usize, key: Key, ranks: &[usize]) -> Vec<f64> {
    // Selection on order-preserving integer keys: integer comparisons are
    // cheaper than `total_cmp` and order the same way.
    let mut keys: Vec<u64> = if count == x.len() {
        // No NaN: a plain map, which vectorises (the filter does not; at
        // 100 scores it took as long as the selection).
        x.iter().map(|v| order_key(key.of(v.to_f64()))).collect()
    } else {
        x.iter()
            .map(|v| v.to_f64())
            .filter(|v| !v.is_nan())
            .map(|v| order_key(key.of(v)))
            .collect()
    };
    let mut out = Vec::with_capacity(ranks.len());
    let mut end = keys.len();
    for &r in ranks.iter().rev() {
        let prefix = &mut keys[..end];
        let v = if r + 1 == end {
            let (i, &m) = prefix
                .iter()
                .enumerate()
                .max_by_key(|&(_, k)| k)
                .unwrap_or((0, &0));
            prefix.swap(i, r);
            m
        } else {
            *prefix.select_nth_unstable(r).1
        };
        out.push(from_order_key(v));
        end = r;
    }
    out.reverse();
    out
}

/// A deterministic pseudo-random sample of about `m` keys (NaN skipped),
/// stratified: each chunk of [`map_chunks`] draws its share with its own
/// xorshift stream, so the sample is the same whatever the thread count and
/// is drawn in parallel.
fn draw_sample<T: Float>(x: &[T], key: Key, m: usize) -> Vec<f64> {
    let n = x.len() as u128;
    let share = |i: usize| (m as u128 * i as u128 / n) as usize;
    let parts = map_chunks(x, |offset, chunk| {
        let want = share(offset + chunk.len()) - share(offset);
        // SplitMix64 of the chunk's offset seeds its stream.
        let mut z = (offset as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        let mut state = (z ^ (z >> 31)) | 1;
        let len = chunk.len() as u128;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((u128::from(state) * len) >> 64) as usize
        };
        // The first `want` places are fetched ahead of their reads: the
        // reads are misses to memory, and a read waits on its own miss.
        let places: Vec<usize> = (0..want).map(|_| next()).collect();
        for &i in &places {
            prefetch(&chunk[i]);
        }
        let mut out: Vec<f64> = places
            .iter()
            .map(|&i| chunk[i].to_f64())
            .filter(|v| !v.is_nan())
            .map(|v| key.of(v))
            .collect();
        // Places that held NaN are drawn again, up to four tries in all.
        for _ in want..4 * want {
            if out.len() == want {
                break;
            }
            let v = chunk[next()].to_f64();
            if !v.is_nan() {
                out.push(key.of(v));
            }
        }
        out
    });
    parts.concat()
}

/// A hint to fetch the cache line of `v`.
#[inline(always)]
pub(crate) fn prefetch<T>(v: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch of a valid reference; it never faults.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(core::ptr::from_ref(v).cast());
    }
}

/// Positions in the ordered sample (of `m` keys) of the ends of the bracket
/// around where rank `r` of `count` should fall, `width` binomial standard
/// deviations (plus a few) to each side; `None` past an end of the sample.
fn bracket_ends(m: usize, r: usize, count: usize, width: f64) -> (Option<usize>, Option<usize>) {
    let q = (r as f64 + 0.5) / count as f64;
    let pos = q * m as f64;
    let delta = width * (m as f64 * q * (1.0 - q)).sqrt() + 4.0;
    let lo = (pos - delta).floor();
    let hi = (pos + delta).ceil();
    (
        (lo >= 0.0).then_some(lo as usize),
        (hi < m as f64).then_some(hi as usize),
    )
}

/// The keys at ranks `wanted` (ascending) if the bracket caught them all
/// (of `count` keys: a bracket holding at most half of them is selected
/// from recursively, so the recursion ends).
fn resolve(wanted: &[usize], count: usize, b: Bracket, t: &mut Tally) -> Option<Vec<f64>> {
    let (lo_end, inner_end) = (t.below + t.at_lo, t.below + t.at_lo + t.inner.len());
    let hi_end = inner_end + t.at_hi;
    if wanted.iter().any(|&r| r < t.below || r >= hi_end) {
        return None;
    }
    let inner_ranks: Vec<usize> = wanted
        .iter()
        .filter(|&&r| r >= lo_end && r < inner_end)
        .map(|&r| r - lo_end)
        .collect();
    // A large bracket (most of the serial work) is itself selected from by
    // sampling, in cache; a small one by quickselect.
    let inner_values = if t.inner.len() > SMALL && t.inner.len() <= count / 2 {
        ranked(&t.inner, t.inner.len(), Key::VALUE, &inner_ranks)
    } else {
        order_statistics_by(&mut t.inner, &inner_ranks, |k| k)
    };
    let mut next = inner_values.into_iter();
    Some(
        wanted
            .iter()
            .map(|&r| {
                if r < lo_end {
                    b.lo
                } else if r < inner_end {
                    next.next().unwrap_or(f64::NAN)
                } else {
                    b.hi
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn by_sorting(x: &[f64], key: Key, ranks: &[usize]) -> Vec<f64> {
        let mut k: Vec<f64> = x
            .iter()
            .filter(|v| !v.is_nan())
            .map(|&v| key.of(v))
            .collect();
        k.sort_by(f64::total_cmp);
        ranks.iter().map(|&r| k[r]).collect()
    }

    fn data(n: usize, kind: u8, seed: u64) -> Vec<f64> {
        let mut s = seed | 1;
        (0..n)
            .map(|i| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                let u = (s >> 11) as f64 / (1u64 << 53) as f64;
                match kind {
                    0 => (u * 4.0).exp(),
                    1 => (u * 5.0).floor(), // heavy ties
                    2 => i as f64,          // sorted
                    3 => (n - i) as f64,    // reversed
                    4 => {
                        if i % 1000 == 0 {
                            f64::NAN
                        } else {
                            u
                        }
                    }
                    _ => 1.0, // constant
                }
            })
            .collect()
    }

    #[test]
    fn large_inputs_all_kinds() {
        for kind in 0..6u8 {
            let x = data(300_001, kind, 7);
            let count = x.iter().filter(|v| !v.is_nan()).count();
            let ranks = [
                0,
                1,
                count / 4,
                count / 2 - 1,
                count / 2,
                count - 2,
                count - 1,
            ];
            for key in [
                Key::VALUE,
                Key::Value { negate: true },
                Key::Deviation {
                    center: 0.7,
                    negate: false,
                },
            ] {
                assert_eq!(
                    ranked(&x, count, key, &ranks),
                    by_sorting(&x, key, &ranks),
                    "{kind} {key:?}"
                );
            }
        }
    }

    /// A bracket placed for the wrong ranks (here: the smallest value is
    /// guessed, the largest wanted once the NaN are counted) is read again,
    /// and the result stays exact; the contract's error comes first.
    #[test]
    fn checking_recovers_from_a_missed_bracket() {
        let mut x = data(100_000, 0, 3);
        x[77] = f64::NAN;
        let len = x.len();
        let ranks_of = |n: usize| if n == len { vec![0] } else { vec![n - 1] };
        let count = len - 1;
        let got = ranked_checking(&x, Key::VALUE, ranks_of, |c| Ok(len - c.nan.count));
        assert_eq!(got, Ok(by_sorting(&x, Key::VALUE, &[count - 1])));
        let refused = ranked_checking(&x, Key::VALUE, ranks_of, |c| {
            Err(Error::Nan {
                count: c.nan.count,
                first_index: Some(c.nan.first),
            })
        });
        assert_eq!(
            refused,
            Err(Error::Nan {
                count: 1,
                first_index: Some(77)
            })
        );
    }

    proptest! {
        #[test]
        fn equals_sorting(
            x in proptest::collection::vec(prop_oneof![-1e3f64..1e3, Just(0.0), Just(f64::NAN)], 1..20_000),
            picks in proptest::collection::vec(0usize..20_000, 1..4),
            c in -10.0f64..10.0,
        ) {
            let count = x.iter().filter(|v| !v.is_nan()).count();
            prop_assume!(count > 0);
            let mut ranks: Vec<usize> = picks.iter().map(|p| p % count).collect();
            ranks.sort_unstable();
            ranks.dedup();
            for key in [Key::VALUE, Key::Deviation { center: c, negate: true }] {
                prop_assert_eq!(ranked(&x, count, key, &ranks), by_sorting(&x, key, &ranks));
            }
        }
    }
}
