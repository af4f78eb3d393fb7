//! Sums over scores without re-reading them, for M-estimation.
//!
//! The oriented, NaN-free scores are copied once into value buckets — a
//! counting pass and a scatter pass on the leading bits of their
//! order-preserving integer keys, no sort — and each bucket keeps its
//! count, extremes and moments about its own center in units of its radius,
//! `P_k = Σ ((y − c)/ρ)^k`. A sum over the scores inside (or outside) a
//! window `|(y − m)/σ| <= t` is then a sum over buckets: power sums of
//! standardised residuals by the binomial theorem, reciprocal sums by a
//! far-field (multipole) series, and the values of the few buckets the
//! window's edges cut through, read directly with the same predicate.
//!
//! One step of Huber's proposal 2 then costs O(buckets) instead of a pass
//! over the data, and the copy is the only scratch memory a fit holds.
//! Residuals are standardised before any power is formed and moments are
//! scaled by the bucket's radius, so nothing overflows or underflows.

use crate::numeric::float::Float;
use crate::numeric::par::{map_chunks, CHUNK};
use crate::sample::Sample;

/// A pointer that chunks running on different threads write through, each
/// to its own disjoint positions.
#[derive(Clone, Copy)]
struct Shared<T>(*mut T);
// SAFETY: writers only touch disjoint elements (see the scatter).
unsafe impl<T: Send> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// Writes `v` at `i`.
    ///
    /// # Safety
    /// `i` is in bounds and no other thread touches element `i`.
    unsafe fn write(self, i: usize, v: T) {
        // SAFETY: guaranteed by the caller.
        unsafe { self.0.add(i).write(v) };
    }
}

/// Moments kept per bucket: enough for the far-field series below.
const K: usize = 12;
/// A bucket is summed by its far-field series only when its radius is at
/// most this fraction of its center's distance to the pole; the series'
/// truncation error is then below `RHO^K ≈ 1.7e-17` relative. Buckets
/// span a 1/256 of a binade or less, so in practice only buckets next to
/// the window are read directly.
const RHO: f64 = 0.04;
/// Lanes of the vectorised moment accumulation.
const LANES: usize = 8;
/// At most this many buckets (2^12: the scatter stays cache-friendly).
const MAX_BUCKETS: usize = 1 << 12;
/// Scores per bucket aimed at for small inputs.
const MIN_PER_BUCKET: usize = 64;

/// One bucket of scores.
#[derive(Debug, Clone)]
struct Bucket {
    start: usize,
    end: usize,
    min: f64,
    max: f64,
    center: f64,
    radius: f64,
    p: [f64; K],
}

/// Bucketed copy of the oriented, NaN-free scores with per-bucket moments.
#[derive(Debug, Clone)]
pub struct Blocks<T> {
    y: Vec<T>,
    buckets: Vec<Bucket>,
}

/// Binomial coefficients C(j, l) for j < 6.
const BINOMIAL: [[f64; 6]; 6] = [
    [1.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    [1.0, 1.0, 0.0, 0.0, 0.0, 0.0],
    [1.0, 2.0, 1.0, 0.0, 0.0, 0.0],
    [1.0, 3.0, 3.0, 1.0, 0.0, 0.0],
    [1.0, 4.0, 6.0, 4.0, 1.0, 0.0],
    [1.0, 5.0, 10.0, 10.0, 5.0, 1.0],
];

/// Order-preserving unsigned key of a (non-NaN) double.
#[inline]
fn key(v: f64) -> u64 {
    let b = v.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | (1 << 63)
    }
}

crate::numeric::simd::multiversion! {
    /// `P_k = Σ ((y − c)/ρ)^k` for k < K, eight scores at a time so that
    /// the chains of multiplications run side by side.
    fn power_sums<T: Float>(vals: &[T], c: f64, unit: f64) -> [f64; K] {
        let mut acc = [[0.0f64; LANES]; K];
        let mut groups = vals.chunks_exact(LANES);
        for g in &mut groups {
            let mut pow = [1.0f64; LANES];
            let mut d = [0.0f64; LANES];
            for i in 0..LANES {
                d[i] = (g[i].to_f64() - c) / unit;
            }
            for a in &mut acc {
                for i in 0..LANES {
                    a[i] += pow[i];
                    pow[i] *= d[i];
                }
            }
        }
        let mut p = [0.0; K];
        for (pk, a) in p.iter_mut().zip(&acc) {
            *pk = a.iter().sum();
        }
        for &v in groups.remainder() {
            let d = (v.to_f64() - c) / unit;
            let mut pow = 1.0;
            for pk in &mut p {
                *pk += pow;
                pow *= d;
            }
        }
        p
    }
}

/// What [`Blocks::visit`] reports.
enum Visit<'a> {
    /// A whole bucket on one side of the window (or inside it).
    Bucket(&'a Bucket, Side),
    /// One score of a bucket the window's edges cut, with its side.
    Value(f64, Side),
}

/// Where a window `[lo, hi]` of standardised residuals puts a bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Left,
    Inside,
    Right,
    Across,
}

impl<T: Float> Blocks<T> {
    /// Copies the scores of a sample into value buckets and takes their
    /// moments.
    pub fn new(s: &Sample<'_, T>) -> Self {
        Self::scaled(s, 0)
    }

    /// [`Blocks::new`] of the scores times 2^k, under which every score
    /// stays finite in `T` (M-estimation's scaled domain).
    pub fn scaled(s: &Sample<'_, T>, k: i32) -> Self {
        let n = s.len();
        let scale = |v: f64| crate::estimators::mest::ldexp(v, k);
        let (lo, hi) = if s.negate {
            (scale(-s.summary.max), scale(-s.summary.min))
        } else {
            (scale(s.summary.min), scale(s.summary.max))
        };
        let (kmin, kmax) = (key(lo), key(hi));
        let want = (n / MIN_PER_BUCKET).clamp(1, MAX_BUCKETS);
        // Bucket = the leading bits of (key − kmin): the shift that gives
        // at most `want` buckets.
        let range = kmax - kmin;
        let shifted = |k: u64, shift: u32| k.checked_shr(shift).unwrap_or(0);
        let shift = (0..=64u32)
            .find(|&s| shifted(range, s) < want as u64)
            .unwrap_or(64);
        let nb = shifted(range, shift) as usize + 1;
        let bucket = |v: f64| shifted(key(v) - kmin, shift) as usize;
        let oriented = |v: T| scale(s.orient(v.to_f64()));

        // NaN map to bucket `nb`, which is dropped.
        let has_nan = s.summary.nan.count > 0;
        let target = |v: T| {
            if has_nan && v.is_nan() {
                nb
            } else {
                bucket(oriented(v))
            }
        };
        // Counting sort by bucket, chunk by chunk: each chunk's histogram,
        // then each chunk scatters to its own (disjoint) positions, so the
        // layout is the same whatever the number of threads.
        let histograms = map_chunks(s.x, |_, chunk| {
            let mut h = vec![0u32; nb + 1];
            for &v in chunk {
                h[target(v)] += 1;
            }
            h
        });
        let mut bounds = vec![0usize; nb + 2];
        for h in &histograms {
            for (b, &c) in h.iter().enumerate() {
                bounds[b + 1] += c as usize;
            }
        }
        for i in 1..bounds.len() {
            bounds[i] += bounds[i - 1];
        }
        // Where each chunk starts writing in each bucket.
        let mut next = bounds[..=nb].to_vec();
        let starts: Vec<Vec<usize>> = histograms
            .iter()
            .map(|h| {
                let start = next.clone();
                for (n, &c) in next.iter_mut().zip(h) {
                    *n += c as usize;
                }
                start
            })
            .collect();
        let mut y = crate::numeric::scratch::zeroed::<T>(s.x.len());
        let out = Shared(y.as_mut_ptr());
        let scatter = |i: usize, chunk: &[T]| {
            let mut pos = starts[i].clone();
            for &v in chunk {
                let b = target(v);
                // SAFETY: `pos[b]` runs over this chunk's own range of bucket
                // b, disjoint from every other chunk's and inside `y`.
                unsafe { out.write(pos[b], T::from_f64(oriented(v))) };
                pos[b] += 1;
            }
        };
        map_chunks(s.x, |offset, chunk| scatter(offset / CHUNK, chunk));
        y.truncate(n);
        let ranges: Vec<(usize, usize)> = bounds[..=nb]
            .windows(2)
            .filter(|w| w[1] > w[0])
            .map(|w| (w[0], w[1]))
            .collect();
        let buckets = map_chunks(&ranges, |_, rs| {
            rs.iter()
                .map(|&(a, b)| Self::moments(&y, a, b))
                .collect::<Vec<_>>()
        })
        .into_iter()
        .flatten()
        .collect();
        Blocks { y, buckets }
    }

    fn moments(y: &[T], start: usize, end: usize) -> Bucket {
        let vals = &y[start..end];
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        for &v in vals {
            let v = v.to_f64();
            min = min.min(v);
            max = max.max(v);
        }
        let center = min + (max - min) / 2.0;
        let radius = (max - center).max(center - min);
        let unit = if radius > 0.0 { radius } else { 1.0 };
        Bucket {
            start,
            end,
            min,
            max,
            center,
            radius: unit,
            p: power_sums(vals, center, unit),
        }
    }

    /// Number of scores.
    pub fn len(&self) -> usize {
        self.y.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }

    /// Where bucket `b` lies relative to `-t <= (y − m)/σ <= t` (the
    /// predicate is monotone in y, so its extremes decide).
    fn side(b: &Bucket, m: f64, sigma: f64, t: f64) -> Side {
        let (rmin, rmax) = ((b.min - m) / sigma, (b.max - m) / sigma);
        if rmax < -t {
            Side::Left
        } else if rmin > t {
            Side::Right
        } else if rmin >= -t && rmax <= t {
            Side::Inside
        } else {
            Side::Across
        }
    }

    /// Visits the window `|(y − m)/σ| <= t`: whole buckets inside or
    /// outside it, and every score of the buckets its edges cut through.
    fn visit(&self, m: f64, sigma: f64, t: f64, mut f: impl FnMut(Visit<'_>)) {
        for b in &self.buckets {
            match Self::side(b, m, sigma, t) {
                Side::Across => {
                    for &v in &self.y[b.start..b.end] {
                        let v = v.to_f64();
                        let r = (v - m) / sigma;
                        let side = if r < -t {
                            Side::Left
                        } else if r > t {
                            Side::Right
                        } else {
                            Side::Inside
                        };
                        f(Visit::Value(v, side));
                    }
                }
                side => f(Visit::Bucket(b, side)),
            }
        }
    }

    /// `S_j = Σ ((y − m)/s)^j`, j < J, over a whole bucket.
    fn bucket_power_sums<const J: usize>(b: &Bucket, m: f64, s: f64, out: &mut [f64; J]) {
        // Σ ((y − m)/s)^j = Σ_l C(j, l) α^l P_l h^(j−l), α = ρ/s, h = (c − m)/s.
        let (alpha, h) = (b.radius / s, (b.center - m) / s);
        let (mut ap, mut hp) = ([1.0; 6], [1.0; 6]);
        for i in 1..J {
            ap[i] = ap[i - 1] * alpha;
            hp[i] = hp[i - 1] * h;
        }
        for (j, sj) in out.iter_mut().enumerate() {
            let mut term = 0.0;
            for l in 0..=j {
                term += BINOMIAL[j][l] * ap[l] * b.p[l] * hp[j - l];
            }
            *sj += term;
        }
    }

    /// `Σ σ/|y − m|` over a whole bucket off the pole.
    fn bucket_reciprocal_sum(&self, b: &Bucket, m: f64, sigma: f64) -> f64 {
        let h = b.center - m;
        if b.radius <= RHO * h.abs() {
            // σ/(y − m) = (σ/(c − m)) Σ_k P_k (−ρ/(c − m))^k.
            let z = -b.radius / h;
            let mut acc = 0.0;
            for &pk in b.p.iter().rev() {
                acc = acc * z + pk;
            }
            (acc * (sigma / h)).abs()
        } else {
            self.y[b.start..b.end]
                .iter()
                .map(|&v| 1.0 / ((v.to_f64() - m) / sigma).abs())
                .sum()
        }
    }

    /// One visit of the window `|(y − m)/σ| <= t`: the power sums `Σ u^j`
    /// (j < J) of `u = (y − r)/s` inside it, the numbers of scores left and
    /// right of it, and — if asked — `Σ σ/|y − m|` outside it.
    pub fn window_sums<const J: usize>(
        &self,
        m: f64,
        sigma: f64,
        t: f64,
        (r, s): (f64, f64),
        reciprocal: bool,
    ) -> WindowSums<J> {
        let mut out = WindowSums {
            power: [0.0; J],
            left: 0,
            right: 0,
            reciprocal: 0.0,
        };
        let mut direct = [0.0; J];
        self.visit(m, sigma, t, |visit| match visit {
            Visit::Bucket(b, Side::Inside) => Self::bucket_power_sums(b, r, s, &mut out.power),
            Visit::Value(v, Side::Inside) => {
                let u = (v - r) / s;
                let mut pow = 1.0;
                for c in &mut direct {
                    *c += pow;
                    pow *= u;
                }
            }
            Visit::Bucket(b, side) => {
                *out.side_count(side) += b.end - b.start;
                if reciprocal {
                    out.reciprocal += self.bucket_reciprocal_sum(b, m, sigma);
                }
            }
            Visit::Value(v, side) => {
                *out.side_count(side) += 1;
                if reciprocal {
                    out.reciprocal += 1.0 / ((v - m) / sigma).abs();
                }
            }
        });
        for (p, c) in out.power.iter_mut().zip(direct) {
            *p += c;
        }
        out
    }
}

/// What one visit of a window sums up.
#[derive(Debug, Clone, Copy)]
pub struct WindowSums<const J: usize> {
    /// `Σ u^j` inside the window.
    pub power: [f64; J],
    /// Scores left of the window.
    pub left: usize,
    /// Scores right of it.
    pub right: usize,
    /// `Σ σ/|y − m|` outside it (when asked for).
    pub reciprocal: f64,
}

impl<const J: usize> WindowSums<J> {
    fn side_count(&mut self, side: Side) -> &mut usize {
        if side == Side::Left {
            &mut self.left
        } else {
            &mut self.right
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::NanPolicy;
    use proptest::prelude::*;

    fn blocks(y: &[f64], negate: bool) -> Blocks<f64> {
        Blocks::new(&Sample::new(y, NanPolicy::Omit, negate).unwrap())
    }

    /// Large enough for the parallel counting sort: the layout and every sum
    /// are the same with one thread and with several.
    #[test]
    fn parallel_build_is_deterministic_and_exact() {
        let mut state = 7u64;
        let y: Vec<f64> = (0..400_003)
            .map(|i| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let u = (state >> 11) as f64 / (1u64 << 53) as f64;
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
        let one = pool(1).install(|| Blocks::new(&sample));
        let two = pool(2).install(|| Blocks::new(&sample));
        assert_eq!(one.y, two.y);
        let (m, sigma, t) = (-3.0, 2.0, 1.345);
        let w1 = one.window_sums::<3>(m, sigma, t, (m, sigma), true);
        let w2 = two.window_sums::<3>(m, sigma, t, (m, sigma), true);
        assert_eq!(
            (w1.power, w1.left, w1.right, w1.reciprocal),
            (w2.power, w2.left, w2.right, w2.reciprocal)
        );
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

    proptest! {
        #[test]
        fn power_sums_equal_direct_sums(
            y in proptest::collection::vec(prop_oneof![-50.0f64..50.0, Just(3.0), Just(f64::NAN)], 2..5000),
            m in -20.0f64..20.0,
            t in 0.1f64..4.0,
            negate in any::<bool>(),
        ) {
            prop_assume!(y.iter().any(|v| !v.is_nan()));
            let b = blocks(&y, negate);
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
        ) {
            let b = blocks(&y, false);
            let sigma = 0.7;
            let got = b.window_sums::<1>(m, sigma, t, (m, sigma), true).reciprocal;
            let want: f64 = y.iter().map(|v| (v - m) / sigma).filter(|r| r.abs() > t).map(|r| 1.0 / r.abs()).sum();
            prop_assert!((got - want).abs() <= 1e-13 * want.max(1e-300), "{got} vs {want}");
        }
    }
}
