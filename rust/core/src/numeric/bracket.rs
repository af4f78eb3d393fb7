//! One read that sorts every key into brackets: per bracket, how many keys
//! fall below it, how many equal its ends, and the keys strictly inside.
//! The selection of [`crate::numeric::rank`] reads its input with this; when
//! that read is the only one, it also takes the §5 census of the input.
//!
//! The brackets come from a sample (Floyd and Rivest, *CACM* 18(3), 1975);
//! this read is their cost on large inputs, so it runs in parallel chunks
//! (joined in chunk order: the same result on any number of threads) and,
//! where the CPU has AVX2, in the kernel of [`avx2`]. Only the keys inside
//! a bracket are kept, so a narrow bracket costs little memory; a bracket
//! the sample misjudged is redrawn wider by the selection and read again.

use crate::numeric::float::Float;
use crate::numeric::par::map_chunks;
use crate::numeric::reduce::Census;

/// A bracket of keys: `(lo, hi)` with `lo <= hi`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bracket {
    pub lo: f64,
    pub hi: f64,
}

/// What one read learned about one bracket.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub below: usize,
    pub at_lo: usize,
    pub at_hi: usize,
    pub inner: Vec<f64>,
}

/// The key of a raw score `v`: `|sign·v − center|` if `abs`, else
/// `sign·v − center` (`sign` is ±1, so `sign·v` is exact).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Affine {
    pub sign: f64,
    pub center: f64,
    pub abs: bool,
}

impl Affine {
    /// `v` itself (`1·v − 0` is `v`, also for −0).
    fn is_identity(self) -> bool {
        self.sign == 1.0 && self.center == 0.0 && !self.abs
    }

    #[inline(always)]
    fn of(self, v: f64) -> f64 {
        let d = self.sign * v - self.center;
        if self.abs {
            d.abs()
        } else {
            d
        }
    }
}

/// The NaN and ±inf among the raw scores of one read (contract §5).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct NonFinite {
    pub nan: Census,
    pub inf: Census,
}

impl NonFinite {
    /// Counted one by one: only for a chunk known to hold a NaN or ±inf.
    fn of<T: Float>(offset: usize, chunk: &[T]) -> Self {
        let mut c = NonFinite::default();
        for (i, v) in chunk.iter().enumerate() {
            if v.is_nan() {
                c.nan.add(offset + i);
            } else if !v.is_finite() {
                c.inf.add(offset + i);
            }
        }
        c
    }
}

/// The census of `x` alone (a vectorised finiteness test, then a count
/// when it fails).
pub(crate) fn census<T: Float>(x: &[T]) -> NonFinite {
    if all_finite(x) {
        NonFinite::default()
    } else {
        NonFinite::of(0, x)
    }
}

/// One read of `x`: the tally of every bracket (ties at the ends are
/// counted, never stored, so heavily tied data keeps the brackets small).
/// NaN keys fall in no bracket and below none.
pub(crate) fn tally<T: Float>(x: &[T], key: Affine, brackets: &[Bracket]) -> Vec<Tally> {
    tally_reading(x, key, brackets, false).0
}

/// [`tally`] and, in the same read, the census of the NaN and ±inf of `x`
/// (a finiteness test per key; the chunks holding one are counted again).
pub(crate) fn tally_with_census<T: Float>(
    x: &[T],
    key: Affine,
    brackets: &[Bracket],
) -> (Vec<Tally>, NonFinite) {
    tally_reading(x, key, brackets, true)
}

fn tally_reading<T: Float>(
    x: &[T],
    key: Affine,
    brackets: &[Bracket],
    census: bool,
) -> (Vec<Tally>, NonFinite) {
    let parts = map_chunks(x, |offset, chunk| {
        let mut t: Vec<Tally> = brackets.iter().map(|_| Tally::default()).collect();
        let finite = tally_chunk(chunk, key, brackets, &mut t, census);
        let c = if finite {
            NonFinite::default()
        } else {
            NonFinite::of(offset, chunk)
        };
        (t, c)
    });
    // The kept keys are gathered into one buffer per bracket, sized once
    // (growing it by doubling copied them about twice over).
    let mut total: Vec<Tally> = (0..brackets.len())
        .map(|i| Tally {
            inner: Vec::with_capacity(parts.iter().map(|(p, _)| p[i].inner.len()).sum()),
            ..Tally::default()
        })
        .collect();
    let mut non_finite = NonFinite::default();
    for (part, c) in parts {
        for (acc, p) in total.iter_mut().zip(part) {
            acc.below += p.below;
            acc.at_lo += p.at_lo;
            acc.at_hi += p.at_hi;
            acc.inner.extend(p.inner);
        }
        non_finite.nan.merge(c.nan);
        non_finite.inf.merge(c.inf);
    }
    (total, non_finite)
}

/// Files a key inside a bracket: a tie with an end is counted, the rest
/// stored.
#[inline(always)]
fn classify(k: f64, b: Bracket, t: &mut Tally) {
    if k == b.lo {
        t.at_lo += 1;
    } else if k == b.hi {
        t.at_hi += 1;
    } else {
        t.inner.push(k);
    }
}

/// Tallies one chunk: with AVX2 sixteen keys at a time (the work is all
/// compares and counts), else element by element. With `census`, returns
/// whether every raw score was finite (else `true`, unchecked).
fn tally_chunk<T: Float>(
    chunk: &[T],
    key: Affine,
    brackets: &[Bracket],
    t: &mut [Tally],
    census: bool,
) -> bool {
    let mut done = 0;
    let mut finite = true;
    #[cfg(target_arch = "x86_64")]
    if crate::numeric::simd::has_avx2() && avx2::loads::<T>() {
        // Up to four brackets per read of the chunk, their bounds in
        // registers; the census is taken with the first four.
        for (i, (b, tb)) in brackets.chunks(4).zip(t.chunks_mut(4)).enumerate() {
            let c = census && i == 0;
            // SAFETY: the CPU supports AVX2 (and with it POPCNT).
            let (n, ok) = unsafe {
                match (b.len(), key.is_identity(), c) {
                    (1, true, true) => avx2::tally_groups::<T, 1, true, true>(chunk, key, b, tb),
                    (1, false, true) => avx2::tally_groups::<T, 1, false, true>(chunk, key, b, tb),
                    (_, _, true) => {
                        let ok = all_finite(chunk);
                        let (n, _) = avx2::tally_any::<T>(chunk, key, b, tb);
                        (n, ok)
                    }
                    _ => avx2::tally_any::<T>(chunk, key, b, tb),
                }
            };
            done = n;
            finite &= ok;
        }
    }
    if census && done < chunk.len() {
        finite &= all_finite(&chunk[done..]);
    }
    for &v in &chunk[done..] {
        let k = key.of(v.to_f64());
        for (b, tb) in brackets.iter().zip(t.iter_mut()) {
            tb.below += usize::from(k < b.lo);
            if k >= b.lo && k <= b.hi {
                classify(k, *b, tb);
            }
        }
    }
    finite
}

crate::numeric::simd::multiversion! {
    /// Whether every value is finite, in lanes (no early exit: it runs
    /// where a NaN or ±inf is rare, and its read is the tally's).
    fn all_finite<T: Float>(x: &[T]) -> bool {
        const L: usize = 8;
        let mut ok = [true; L];
        let mut groups = x.chunks_exact(L);
        for g in &mut groups {
            for i in 0..L {
                ok[i] &= g[i].to_f64().abs() <= f64::MAX;
            }
        }
        ok.iter().all(|&b| b) && groups.remainder().iter().all(|v| v.is_finite())
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The tally by definition, one key at a time.
    fn by_definition(x: &[f64], key: Affine, b: Bracket) -> (usize, usize, usize, Vec<f64>) {
        let keys: Vec<f64> = x.iter().map(|&v| key.of(v)).collect();
        let mut inner: Vec<f64> = keys
            .iter()
            .copied()
            .filter(|&k| k > b.lo && k < b.hi)
            .collect();
        inner.sort_by(f64::total_cmp);
        (
            keys.iter().filter(|&&k| k < b.lo).count(),
            keys.iter().filter(|&&k| k == b.lo).count(),
            keys.iter().filter(|&&k| k == b.hi && b.hi != b.lo).count(),
            inner,
        )
    }

    proptest! {
        #[test]
        fn tally_counts_every_key_once(
            x in proptest::collection::vec(prop_oneof![
                8 => -10.0f64..10.0,
                1 => Just(1.0),
                1 => Just(-0.0),
                1 => Just(f64::NAN),
                1 => Just(f64::INFINITY),
                1 => Just(f64::NEG_INFINITY),
            ], 0..300),
            ends in proptest::collection::vec((-12.0f64..12.0, 0.0f64..6.0), 1..4),
            sign in prop_oneof![Just(1.0), Just(-1.0)],
            center in prop_oneof![Just(0.0), -3.0f64..3.0],
            abs in any::<bool>(),
            as_f32 in any::<bool>(),
        ) {
            let key = Affine { sign, center, abs };
            let brackets: Vec<Bracket> = ends.iter().map(|&(lo, w)| Bracket { lo, hi: lo + w }).collect();
            let (x, got, (with_census, non_finite)) = if as_f32 {
                let y: Vec<f32> = x.iter().map(|&v| v as f32).collect();
                let t = (tally(&y, key, &brackets), tally_with_census(&y, key, &brackets));
                (y.iter().map(|&v| f64::from(v)).collect::<Vec<_>>(), t.0, t.1)
            } else {
                let t = (tally(&x, key, &brackets), tally_with_census(&x, key, &brackets));
                (x, t.0, t.1)
            };
            let mut want = NonFinite::default();
            for (i, v) in x.iter().enumerate() {
                if v.is_nan() {
                    want.nan.add(i);
                } else if v.is_infinite() {
                    want.inf.add(i);
                }
            }
            prop_assert_eq!(non_finite, want);
            prop_assert_eq!(census(&x), want);
            for ((b, mut t), mut c) in brackets.iter().zip(got).zip(with_census) {
                c.inner.sort_by(f64::total_cmp);
                t.inner.sort_by(f64::total_cmp);
                prop_assert_eq!((c.below, c.at_lo, c.at_hi, &c.inner), (t.below, t.at_lo, t.at_hi, &t.inner));
                t.inner.sort_by(f64::total_cmp);
                prop_assert_eq!((t.below, t.at_lo, t.at_hi, t.inner), by_definition(&x, key, *b));
            }
        }
    }
}
