//! Order statistics of raw input in one read-only pass (Floyd–Rivest
//! style): a pseudo-random sample brackets each wanted rank, one pass counts
//! what falls below each bracket and keeps only what falls inside, and a
//! quickselect inside the (small) bracket finishes. No copy of the input is
//! made, NaN are skipped, and the result is exact: the sample only decides
//! how fast, never what. A bracket the sample misjudged is redrawn wider.

use crate::numeric::float::Float;
use crate::numeric::par::map_chunks;
use crate::numeric::select::order_statistics_by;

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

/// Below this many values the keys are copied and selected directly.
const SMALL: usize = 1 << 13;
/// Sample size: about (N)^(2/3), the Floyd–Rivest balance between sorting
/// the sample and selecting inside the bracket.
fn sample_size(n: usize) -> usize {
    ((n as f64).powf(2.0 / 3.0) as usize).clamp(1024, 1 << 16)
}

/// A bracket of keys: `(lo, hi)` with `lo <= hi`.
#[derive(Debug, Clone, Copy)]
struct Bracket {
    lo: f64,
    hi: f64,
}

/// What one pass learned about one bracket.
#[derive(Debug, Default)]
struct Tally {
    below: usize,
    at_lo: usize,
    at_hi: usize,
    inner: Vec<f64>,
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
    sample.sort_unstable_by(f64::total_cmp);
    let mut out = vec![f64::NAN; ranks.len()];
    let mut todo: Vec<usize> = (0..ranks.len()).collect();
    let mut width = 5.0;
    for _ in 0..3 {
        // One bracket per wanted rank; overlapping brackets (the two middle
        // ranks of a median) merge into one.
        let mut groups: Vec<(Bracket, Vec<usize>)> = Vec::new();
        for &j in &todo {
            let b = bracket(&sample, ranks[j], count, width);
            match groups.last_mut() {
                Some((g, members)) if b.lo <= g.hi => {
                    g.hi = g.hi.max(b.hi);
                    members.push(j);
                }
                _ => groups.push((b, vec![j])),
            }
        }
        let brackets: Vec<Bracket> = groups.iter().map(|(b, _)| *b).collect();
        let tallies = tally(x, key, &brackets);
        let mut missed = Vec::new();
        for ((b, members), mut t) in groups.into_iter().zip(tallies) {
            let wanted: Vec<usize> = members.iter().map(|&j| ranks[j]).collect();
            match resolve(&wanted, b, &mut t) {
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

/// Copies the keys (NaN left out; `count` of them) and selects.
fn direct<T: Float>(x: &[T], count: usize, key: Key, ranks: &[usize]) -> Vec<f64> {
    // Selection on order-preserving integer keys: integer comparisons are
    // cheaper than `total_cmp` and order the same way.
    let mut keys: Vec<u64> = if count == x.len() {
        // No NaN: a plain map, which vectorises (the filter does not; at
        // 100 scores it took as long as the selection).
        x.iter().map(|v| ordered(key.of(v.to_f64()))).collect()
    } else {
        x.iter()
            .map(|v| v.to_f64())
            .filter(|v| !v.is_nan())
            .map(|v| ordered(key.of(v)))
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
        out.push(unordered(v));
        end = r;
    }
    out.reverse();
    out
}

/// Order-preserving map of a non-NaN double to an unsigned integer.
#[inline]
fn ordered(v: f64) -> u64 {
    let b = v.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | (1 << 63)
    }
}

/// The inverse of [`ordered`].
#[inline]
fn unordered(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// A deterministic pseudo-random sample of keys (xorshift; NaN skipped).
fn draw_sample<T: Float>(x: &[T], key: Key, m: usize) -> Vec<f64> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let n = x.len() as u128;
    let mut out = Vec::with_capacity(m);
    for _ in 0..4 * m {
        if out.len() == m {
            break;
        }
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let i = ((u128::from(state) * n) >> 64) as usize;
        let v = x[i].to_f64();
        if !v.is_nan() {
            out.push(key.of(v));
        }
    }
    out
}

/// The sample keys around where rank `r` of `count` should fall, `width`
/// binomial standard deviations (plus a few) to each side.
fn bracket(sample: &[f64], r: usize, count: usize, width: f64) -> Bracket {
    let m = sample.len();
    let q = (r as f64 + 0.5) / count as f64;
    let pos = q * m as f64;
    let delta = width * (m as f64 * q * (1.0 - q)).sqrt() + 4.0;
    let lo = (pos - delta).floor();
    let hi = (pos + delta).ceil();
    Bracket {
        lo: if lo < 0.0 {
            f64::NEG_INFINITY
        } else {
            sample[lo as usize]
        },
        hi: if hi >= m as f64 {
            f64::INFINITY
        } else {
            sample[hi as usize]
        },
    }
}

/// One read of `x`: per bracket, keys below it, equal to its ends, and the
/// keys strictly inside (ties at the ends are counted, never stored, so
/// heavily tied data keeps the bracket small).
fn tally<T: Float>(x: &[T], key: Key, brackets: &[Bracket]) -> Vec<Tally> {
    // The key's variant is fixed for the whole pass: monomorphise on it.
    match key {
        Key::Value { negate: false } => tally_with(x, |v| v, brackets),
        Key::Value { negate: true } => tally_with(x, |v| -v, brackets),
        Key::Deviation {
            center,
            negate: false,
        } => tally_with(x, |v| (v - center).abs(), brackets),
        Key::Deviation {
            center,
            negate: true,
        } => tally_with(x, |v| (-v - center).abs(), brackets),
    }
}

fn tally_with<T: Float>(
    x: &[T],
    key: impl Fn(f64) -> f64 + Sync + Send + Copy,
    brackets: &[Bracket],
) -> Vec<Tally> {
    let parts = map_chunks(x, |_, chunk| {
        let mut t: Vec<Tally> = brackets.iter().map(|_| Tally::default()).collect();
        for (b, tb) in brackets.iter().zip(t.iter_mut()) {
            tally_chunk(chunk, key, *b, tb);
        }
        t
    });
    let mut total: Vec<Tally> = brackets.iter().map(|_| Tally::default()).collect();
    for part in parts {
        for (acc, p) in total.iter_mut().zip(part) {
            acc.below += p.below;
            acc.at_lo += p.at_lo;
            acc.at_hi += p.at_hi;
            acc.inner.extend(p.inner);
        }
    }
    total
}

/// Adds one chunk to a bracket's tally. Keys are classified sixteen at a
/// time into a count and a bit mask without branching (a branch on
/// `k < lo` would be a coin toss for a median); only the rare keys inside
/// the bracket take the scalar path.
#[inline(always)]
#[allow(clippy::needless_bitwise_bool)] // `&` on purpose: no branch
fn tally_chunk<T: Float>(chunk: &[T], key: impl Fn(f64) -> f64 + Copy, b: Bracket, t: &mut Tally) {
    const G: usize = 16;
    let (lo, hi) = (b.lo, b.hi);
    let mut below = 0usize;
    let mut classify = |k: f64| {
        if k == lo {
            t.at_lo += 1;
        } else if k == hi {
            t.at_hi += 1;
        } else {
            t.inner.push(k);
        }
    };
    let mut groups = chunk.chunks_exact(G);
    for g in &mut groups {
        let mut keys = [0.0f64; G];
        let mut mask = 0u32;
        for i in 0..G {
            keys[i] = key(g[i].to_f64());
            below += usize::from(keys[i] < lo);
            mask |= u32::from((keys[i] >= lo) & (keys[i] <= hi)) << i;
        }
        while mask != 0 {
            classify(keys[mask.trailing_zeros() as usize]);
            mask &= mask - 1;
        }
    }
    for &v in groups.remainder() {
        let k = key(v.to_f64());
        below += usize::from(k < lo);
        if (k >= lo) & (k <= hi) {
            classify(k);
        }
    }
    t.below += below;
}

/// The keys at ranks `wanted` (ascending) if the bracket caught them all.
fn resolve(wanted: &[usize], b: Bracket, t: &mut Tally) -> Option<Vec<f64>> {
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
    let inner_values = order_statistics_by(&mut t.inner, &inner_ranks, |k| k);
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
