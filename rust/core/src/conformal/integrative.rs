//! Integrative conformal p-values with labelled outliers (contract §13;
//! Liang, Sesia & Sun, *Integrative conformal p-values for
//! out-of-distribution testing with labelled outliers*, JRSS-B 2024, §3.1,
//! eqs. (3)–(6)).
//!
//! Every point carries two scores, both oriented "higher = more outlying":
//! `a` from a detector trained on inliers and `b` from a model trained on
//! the labelled outliers (higher = more like them). With n inlier
//! calibration pairs (aᵢ, bᵢ) and k outlier calibration scores oⱼ, a test
//! point (a, b) gets
//!
//! ```text
//! u₀(x) = #{z ∈ cal ∪ {test} : a(z) ≥ a(x)} / (n + 1)   (self-inclusive)
//! u₁(x) = (1 + #{j : oⱼ ≤ b(x)}) / (k + 1)
//! r(x)  = u₀(x) / u₁(x)
//! p     = (1 + #{i ∈ cal : r(xᵢ) ≤ r(test)}) / (n + 1)
//! ```
//!
//! u₀ of a calibration point includes the test point, so r(xᵢ) takes one of
//! two values — `cᵢ/vᵢ` when a < aᵢ, `(cᵢ + 1)/vᵢ` when a ≥ aᵢ (cᵢ the
//! count of calibration a's ≥ aᵢ, vᵢ the numerator of u₁) — and the count
//! is a dominance count: with the calibration points in the order of a and
//! the test's prefix P (those with aᵢ ≤ a), it counts the fractions ≤ r(x)
//! among the set S_P of `(cᵢ + 1)/vᵢ` for i < P and `cᵢ/vᵢ` for i ≥ P.
//! The fit sorts all 2n fractions together; a test point's prefix, its u₁
//! and the number e of fractions ≤ its ratio are independent lookups (in
//! parallel chunks), and the count is then the members of S_P among the
//! first e fractions. The test points are cut into ranges of prefixes of
//! about equal size; each range is radix sorted by prefix and swept on its
//! own, the set S_P kept as a bit per fraction with counts per word and
//! per block of words ([`Members`]: a query is three reads, a step of P
//! two updates of a few hundred counts in cache). O(n log n) to fit,
//! O(m (log n + 1)) per batch, instead of the definition's O(n·m); the
//! counts do not depend on the threads.
//!
//! Ratios are compared exactly, so ties are ties: while
//! (n + 1)(k + 1) < 2⁵⁰ as their f64 quotients — two fractions with
//! numerators ≤ n + 1 and denominators ≤ k + 1 that differ, differ by at
//! least 1/((k + 1)²), more than the two roundings, and equal fractions
//! round alike — so that the lookups go through a [`SearchIndex`] (one
//! cache line read instead of a binary search's misses); beyond that by
//! cross-multiplied counts and binary searches.
//!
//! With one score (b = a) the ratio falls as a rises and p is exactly the
//! split-conformal p-value: the labelled outliers add power only through a
//! second score.

use crate::error::Error;
use crate::numeric::par::{CHUNK, PARALLEL_MIN};
use crate::numeric::search_index::{SearchIndex, GROUP};
use crate::sample::NanPolicy;
use rayon::prelude::*;
use std::cmp::Ordering;

/// A ratio `num/den` of counts (den ≥ 1), compared exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ratio {
    num: u64,
    den: u64,
}

impl Ratio {
    #[inline]
    fn cmp(self, other: Ratio) -> Ordering {
        // Counts are below 2³², so the products fit in u64.
        (self.num * other.den).cmp(&(other.num * self.den))
    }

    #[inline]
    fn quotient(self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

/// Largest (n + 1)(k + 1) for which f64 quotients order the ratios exactly
/// (module doc).
const FLOAT_EXACT: u64 = 1 << 50;

/// The sorted fractions of one kind, to count those ≤ a ratio.
#[derive(Debug, Clone, PartialEq)]
enum Fractions {
    /// Their f64 quotients (exact in order and equality, module doc) and
    /// the quotients' search index.
    Float { keys: Vec<f64>, index: SearchIndex },
    /// The fractions themselves, binary searched.
    Exact(Vec<Ratio>),
}

impl Fractions {
    fn new(sorted: Vec<Ratio>, float: bool) -> Self {
        if float {
            let keys: Vec<f64> = sorted.iter().map(|r| r.quotient()).collect();
            let index = SearchIndex::new(&keys);
            Fractions::Float { keys, index }
        } else {
            Fractions::Exact(sorted)
        }
    }

    /// `#{fractions ≤ rᵢ}` of each ratio into `out` (up to [`GROUP`]).
    fn at_most(&self, r: &[Ratio], out: &mut [usize]) {
        match self {
            Fractions::Float { keys, index } => {
                let mut q = [0.0f64; GROUP];
                for (qi, x) in q.iter_mut().zip(r) {
                    *qi = x.quotient().next_up();
                }
                index.lower_bounds(keys, &q[..r.len()], out);
            }
            Fractions::Exact(s) => {
                for (o, &x) in out.iter_mut().zip(r) {
                    *o = s.partition_point(|&y| y.cmp(x) != Ordering::Greater);
                }
            }
        }
    }
}

/// A sorted slice of finite values and its index, for `#{v ≤ q}` (and,
/// through the index, `#{v < q}` with it).
#[derive(Debug, Clone, PartialEq)]
struct Sorted {
    values: Vec<f64>,
    index: SearchIndex,
}

impl Sorted {
    fn new(values: Vec<f64>) -> Self {
        let index = SearchIndex::new(&values);
        Sorted { values, index }
    }

    /// `#{v ≤ qᵢ}` of each query into `out` (up to [`GROUP`]; the values
    /// are finite, so `v ≤ q` is `v < next_up(q)`).
    fn at_most(&self, qs: &[f64], out: &mut [usize]) {
        let mut q = [0.0f64; GROUP];
        for (qi, &x) in q.iter_mut().zip(qs) {
            *qi = x.next_up();
        }
        self.index.lower_bounds(&self.values, &q[..qs.len()], out);
    }
}

/// The fitted calibration of integrative p-values.
#[derive(Debug, Clone, PartialEq)]
pub struct IntegrativeCalibration {
    /// Inlier calibration `a` scores, ascending.
    a_sorted: Sorted,
    /// Outlier calibration scores (second score), ascending.
    outliers: Sorted,
    /// Per calibration point in the order of `a_sorted`: the positions of
    /// `cᵢ/vᵢ` and of `(cᵢ + 1)/vᵢ` among all 2n fractions (distinct; ties
    /// in any order).
    pos_minus: Vec<u32>,
    pos_plus: Vec<u32>,
    /// The 2n fractions of the calibration points, ascending.
    fractions: Fractions,
    negate: bool,
}

/// Finite pairs (rows with NaN dropped or refused), oriented.
fn pairs(
    a: &[f64],
    b: &[f64],
    nan: NanPolicy,
    negate: bool,
    what: &'static str,
) -> Result<Vec<(f64, f64)>, Error> {
    if a.len() != b.len() {
        return Err(Error::ShapeMismatch(format!(
            "{what}: the two score columns differ in length ({} and {})",
            a.len(),
            b.len()
        )));
    }
    let mut out = Vec::with_capacity(a.len());
    for (&x, &y) in a.iter().zip(b) {
        if x.is_nan() || y.is_nan() {
            if nan == NanPolicy::Raise {
                return Err(Error::invalid(what, "scores hold NaN (nan_policy='raise')"));
            }
            continue;
        }
        if !(x.is_finite() && y.is_finite()) {
            return Err(Error::invalid(what, "calibration scores must be finite"));
        }
        out.push(if negate { (-x, -y) } else { (x, y) });
    }
    if out.is_empty() {
        return Err(Error::invalid(
            what,
            "needs at least one (non-NaN) calibration score",
        ));
    }
    // 2n fraction positions fit in u32.
    if out.len() >= (u32::MAX / 2) as usize {
        return Err(Error::invalid(
            what,
            format!("at most {} scores", u32::MAX / 2 - 1),
        ));
    }
    Ok(out)
}

/// The fractions `minus` (ids 2i) and `plus` (ids 2i + 1) merged and
/// sorted, and the position of each in that order.
fn merged(minus: &[Ratio], plus: &[Ratio], float: bool) -> (Vec<Ratio>, Vec<u32>, Vec<u32>) {
    let n = minus.len();
    let parallel = n >= PARALLEL_MIN;
    let ids: Vec<u32> = if float {
        // Positive quotients order as their bits (module doc: exact).
        let mut keyed: Vec<(u64, u32)> = (0..2 * n)
            .map(|id| {
                let r = if id.is_multiple_of(2) {
                    minus[id / 2]
                } else {
                    plus[id / 2]
                };
                (r.quotient().to_bits(), id as u32)
            })
            .collect();
        if parallel {
            keyed.par_sort_unstable_by_key(|x| x.0);
        } else {
            keyed.sort_unstable_by_key(|x| x.0);
        }
        keyed.into_iter().map(|x| x.1).collect()
    } else {
        let at = |id: u32| {
            let id = id as usize;
            if id.is_multiple_of(2) {
                minus[id / 2]
            } else {
                plus[id / 2]
            }
        };
        let mut ids: Vec<u32> = (0..2 * n as u32).collect();
        if parallel {
            ids.par_sort_unstable_by(|&x, &y| at(x).cmp(at(y)));
        } else {
            ids.sort_unstable_by(|&x, &y| at(x).cmp(at(y)));
        }
        ids
    };
    let (mut pos_minus, mut pos_plus) = (vec![0u32; n], vec![0u32; n]);
    let mut sorted = Vec::with_capacity(2 * n);
    for (k, &id) in ids.iter().enumerate() {
        let i = id as usize / 2;
        if id.is_multiple_of(2) {
            pos_minus[i] = k as u32;
            sorted.push(minus[i]);
        } else {
            pos_plus[i] = k as u32;
            sorted.push(plus[i]);
        }
    }
    (sorted, pos_minus, pos_plus)
}

/// Words of 64 positions per block of [`Members`].
const BLOCK_WORDS: usize = 256;

/// A set of positions that answers "how many below `e`" in three reads:
/// a bit per position, the count before each word within its block of
/// [`BLOCK_WORDS`] words (u16: a block holds at most 16 384), and the
/// count before each block. Adding or removing a position updates at most
/// 255 word counts and one count per later block, a few hundred adds in
/// cache, against the ~log₂ n dependent reads of a Fenwick tree's query.
struct Members {
    words: Vec<u64>,
    inner: Vec<u16>,
    outer: Vec<u32>,
}

impl Members {
    /// The set of `positions` (each < `len`, distinct).
    fn of(len: usize, positions: impl Iterator<Item = usize>) -> Self {
        let nw = len / 64 + 1;
        let mut words = vec![0u64; nw];
        for p in positions {
            words[p >> 6] |= 1 << (p & 63);
        }
        let mut inner = vec![0u16; nw];
        let mut outer = vec![0u32; nw.div_ceil(BLOCK_WORDS) + 1];
        let mut total = 0u32;
        for (b, (ws, is)) in words
            .chunks(BLOCK_WORDS)
            .zip(inner.chunks_mut(BLOCK_WORDS))
            .enumerate()
        {
            outer[b] = total;
            let mut within = 0u16;
            for (w, i) in ws.iter().zip(is.iter_mut()) {
                *i = within;
                within += w.count_ones() as u16;
            }
            total += u32::from(within);
        }
        let last = outer.len() - 1;
        outer[last] = total;
        Members {
            words,
            inner,
            outer,
        }
    }

    /// Members at positions < `e` (`e` ≤ the length).
    #[inline]
    fn below(&self, e: usize) -> u64 {
        let w = e >> 6;
        let bits = self.words[w] & ((1u64 << (e & 63)) - 1);
        u64::from(self.outer[w / BLOCK_WORDS])
            + u64::from(self.inner[w])
            + u64::from(bits.count_ones())
    }

    /// Adds (`up`) or removes the position `p` (not / already a member).
    fn toggle(&mut self, p: usize, up: bool) {
        let w = p >> 6;
        self.words[w] ^= 1 << (p & 63);
        let end = ((w / BLOCK_WORDS + 1) * BLOCK_WORDS).min(self.inner.len());
        let d16 = if up { 1u16 } else { u16::MAX };
        for i in &mut self.inner[w + 1..end] {
            *i = i.wrapping_add(d16);
        }
        let d32 = if up { 1u32 } else { u32::MAX };
        for o in &mut self.outer[w / BLOCK_WORDS + 1..] {
            *o = o.wrapping_add(d32);
        }
    }
}

/// A test point's lookups: its prefix (calibration a's ≤ its a) in the
/// high half of `key` and its position in the low half, and the number of
/// fractions ≤ its ratio.
#[derive(Debug, Clone, Copy, Default)]
struct Lookup {
    key: u64,
    e: u32,
}

/// Test points per block: their positions fit the low half of a key.
const BLOCK: usize = 1 << 31;

impl IntegrativeCalibration {
    /// From the inlier calibration pairs (`a`, `b`) and the outlier
    /// calibration scores `o` (their second score). NaN rows are dropped
    /// (`Omit`) or refused; calibration scores must be finite. `negate`
    /// orients every score (`higher_is_outlier=False`).
    pub fn new(
        a: &[f64],
        b: &[f64],
        o: &[f64],
        nan_policy: NanPolicy,
        negate: bool,
    ) -> Result<Self, Error> {
        let inl = pairs(a, b, nan_policy, negate, "X")?;
        let o_pairs = pairs(o, o, nan_policy, negate, "outlier_scores")?;
        let float = (inl.len() as u64 + 1) * (o_pairs.len() as u64 + 1) < FLOAT_EXACT;
        Ok(Self::build(inl, o_pairs, negate, float))
    }

    fn build(
        mut inl: Vec<(f64, f64)>,
        o_pairs: Vec<(f64, f64)>,
        negate: bool,
        float: bool,
    ) -> Self {
        let mut outliers: Vec<f64> = o_pairs.into_iter().map(|p| p.0).collect();
        outliers.sort_unstable_by(f64::total_cmp);
        let outliers = Sorted::new(outliers);
        let n = inl.len();
        let parallel = n >= PARALLEL_MIN;
        if parallel {
            inl.par_sort_unstable_by(|x, y| x.0.total_cmp(&y.0));
        } else {
            inl.sort_unstable_by(|x, y| x.0.total_cmp(&y.0));
        }
        let (mut rm, mut rp) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let mut first = 0usize;
        let mut v = [0usize; GROUP];
        for (g, group) in inl.chunks(GROUP).enumerate() {
            let b: Vec<f64> = group.iter().map(|p| p.1).collect();
            outliers.at_most(&b, &mut v[..group.len()]);
            for (k, &(ai, _)) in group.iter().enumerate() {
                let i = g * GROUP + k;
                // cᵢ: calibration a's ≥ aᵢ (itself included): those from the
                // first of its ties on.
                if i > 0 && inl[i - 1].0 < ai {
                    first = i;
                }
                let c = (n - first) as u64;
                let den = 1 + v[k] as u64;
                rm.push(Ratio { num: c, den });
                rp.push(Ratio { num: c + 1, den });
            }
        }
        let (sorted, pos_minus, pos_plus) = merged(&rm, &rp, float);
        IntegrativeCalibration {
            a_sorted: Sorted::new(inl.iter().map(|p| p.0).collect()),
            outliers,
            pos_minus,
            pos_plus,
            fractions: Fractions::new(sorted, float),
            negate,
        }
    }

    /// n, the inlier calibration points; k, the outlier ones.
    pub fn sizes(&self) -> (usize, usize) {
        (self.a_sorted.values.len(), self.outliers.values.len())
    }

    /// The lookups of test pairs `a`, `b` (positions from `at`); NaN
    /// pairs get none.
    fn lookups(&self, a: &[f64], b: &[f64], at: usize, out: &mut Vec<Lookup>) {
        let values = &self.a_sorted.values;
        let n = values.len();
        let sign = if self.negate { -1.0 } else { 1.0 };
        let (mut qa, mut qb) = ([0.0f64; GROUP], [0.0f64; GROUP]);
        let (mut below, mut prefix, mut v) = ([0usize; GROUP], [0usize; GROUP], [0usize; GROUP]);
        let (mut r, mut e) = ([Ratio { num: 0, den: 1 }; GROUP], [0usize; GROUP]);
        for (g, (ga, gb)) in a.chunks(GROUP).zip(b.chunks(GROUP)).enumerate() {
            let mut len = 0;
            let mut pos = [0usize; GROUP];
            for (k, (&x, &y)) in ga.iter().zip(gb).enumerate() {
                if !(x.is_nan() || y.is_nan()) {
                    (qa[len], qb[len], pos[len]) = (sign * x, sign * y, at + g * GROUP + k);
                    len += 1;
                }
            }
            // The prefix counts the calibration a's equal to the test's
            // too; u₀ the strictly larger ones. One line read gives both.
            self.a_sorted.index.lower_and_upper_bounds(
                values,
                &qa[..len],
                &mut below[..len],
                &mut prefix[..len],
            );
            self.outliers.at_most(&qb[..len], &mut v[..len]);
            for k in 0..len {
                r[k] = Ratio {
                    num: 1 + (n - below[k]) as u64,
                    den: 1 + v[k] as u64,
                };
            }
            self.fractions.at_most(&r[..len], &mut e[..len]);
            for k in 0..len {
                out.push(Lookup {
                    key: ((prefix[k] as u64) << 32) | pos[k] as u64,
                    e: e[k] as u32,
                });
            }
        }
    }

    /// The integrative p-values (or `1 − p`) of test pairs (`a`, `b`) into
    /// `out`: NaN in either score gives NaN. Large inputs run on the
    /// thread pool; the result does not depend on the number of threads.
    pub fn pvalues(
        &self,
        a: &[f64],
        b: &[f64],
        complement: bool,
        out: &mut [f64],
    ) -> Result<(), Error> {
        if a.len() != b.len() || a.len() != out.len() {
            return Err(Error::ShapeMismatch(format!(
                "score columns ({}, {}) and output ({}) differ in length",
                a.len(),
                b.len(),
                out.len()
            )));
        }
        for ((a, b), out) in a
            .chunks(BLOCK)
            .zip(b.chunks(BLOCK))
            .zip(out.chunks_mut(BLOCK))
        {
            self.block(a, b, complement, out);
        }
        Ok(())
    }

    /// [`Self::pvalues`] of fewer than 2³¹ test points.
    fn block(&self, a: &[f64], b: &[f64], complement: bool, out: &mut [f64]) {
        let n = self.a_sorted.values.len();
        let m = a.len();
        let parallel = m >= PARALLEL_MIN;
        let threads = if parallel {
            rayon::current_num_threads().max(1)
        } else {
            1
        };
        // Ranges of prefixes, about equal in test points (estimated from a
        // sample of them): each is sorted and swept on its own.
        let cuts = self.prefix_cuts(a, b, if parallel { 4 * threads } else { 1 });
        let bucket = |prefix: u64| cuts.partition_point(|&c| c <= prefix);
        // Lookups, in chunks of the input, into the ranges.
        let step = if parallel {
            m.div_ceil(4 * threads).max(GROUP)
        } else {
            m.max(1)
        };
        let look = |(i, (a, b)): (usize, (&[f64], &[f64]))| {
            let mut v = Vec::with_capacity(a.len());
            self.lookups(a, b, i * step, &mut v);
            let mut parts = vec![Vec::new(); cuts.len() + 1];
            for t in v {
                parts[bucket(t.key >> 32)].push(t);
            }
            parts
        };
        let chunks: Vec<Vec<Vec<Lookup>>> = if parallel {
            a.par_chunks(step)
                .zip(b.par_chunks(step))
                .enumerate()
                .map(look)
                .collect()
        } else {
            a.chunks(step)
                .zip(b.chunks(step))
                .enumerate()
                .map(look)
                .collect()
        };
        if parallel {
            out.par_chunks_mut(CHUNK).for_each(|o| o.fill(f64::NAN));
        } else {
            out.fill(f64::NAN);
        }
        let target = Target(out.as_mut_ptr(), out.len());
        // The sweep of one range of prefixes: the members are the
        // fractions (cᵢ + 1)/vᵢ in the prefix and cᵢ/vᵢ above it.
        let sweep = |r: usize| {
            let tests = sort_by_prefix(chunks.iter().map(|c| c[r].as_slice()));
            let Some(first) = tests.first() else { return };
            let start = (first.key >> 32) as usize;
            let mut members = Members::of(
                2 * n,
                self.pos_plus[..start]
                    .iter()
                    .chain(&self.pos_minus[start..])
                    .map(|&p| p as usize),
            );
            let mut prefix = start;
            for t in &tests {
                let p = (t.key >> 32) as usize;
                while prefix < p {
                    members.toggle(self.pos_minus[prefix] as usize, false);
                    members.toggle(self.pos_plus[prefix] as usize, true);
                    prefix += 1;
                }
                let count = members.below(t.e as usize);
                let pv = (1 + count) as f64 / (n + 1) as f64;
                target.write(
                    (t.key & 0xffff_ffff) as usize,
                    if complement { 1.0 - pv } else { pv },
                );
            }
        };
        if parallel {
            (0..=cuts.len()).into_par_iter().for_each(sweep);
        } else {
            (0..=cuts.len()).for_each(sweep);
        }
    }

    /// Prefix values that cut the test points into about `parts` ranges of
    /// equal size, ascending, from the prefixes of an evenly spaced sample.
    fn prefix_cuts(&self, a: &[f64], b: &[f64], parts: usize) -> Vec<u64> {
        if parts <= 1 || a.is_empty() {
            return Vec::new();
        }
        let stride = (a.len() / (64 * parts)).max(1);
        let (sa, sb): (Vec<f64>, Vec<f64>) = a
            .iter()
            .zip(b)
            .step_by(stride)
            .map(|(&x, &y)| (x, y))
            .unzip();
        let mut sample = Vec::with_capacity(sa.len());
        self.lookups(&sa, &sb, 0, &mut sample);
        let mut prefixes: Vec<u64> = sample.iter().map(|t| t.key >> 32).collect();
        prefixes.sort_unstable();
        let mut cuts: Vec<u64> = (1..parts)
            .filter_map(|j| prefixes.get(j * prefixes.len() / parts).copied())
            .collect();
        cuts.dedup();
        cuts
    }
}

/// The output of [`IntegrativeCalibration::block`], written at the test
/// points' positions by the sweeps of several ranges at once.
#[derive(Clone, Copy)]
struct Target(*mut f64, usize);

// SAFETY: every position is written by one sweep only (each test point
// lies in one range of prefixes), and the slice outlives the sweeps.
unsafe impl Sync for Target {}

impl Target {
    #[inline]
    fn write(self, at: usize, value: f64) {
        assert!(at < self.1);
        // SAFETY: in bounds (above), and no other thread writes `at`.
        unsafe { *self.0.add(at) = value };
    }
}

/// Digits of [`sort_by_prefix`]'s passes.
const RADIX_BITS: u32 = 11;

/// The lookups of `parts` sorted by prefix: a stable least-significant
/// digit radix sort of the prefixes' offsets from the smallest one, a few
/// sequential passes instead of a comparison sort's ~log₂ m.
fn sort_by_prefix<'a>(parts: impl Iterator<Item = &'a [Lookup]> + Clone) -> Vec<Lookup> {
    let mut src: Vec<Lookup> = Vec::with_capacity(parts.clone().map(<[Lookup]>::len).sum());
    for p in parts {
        src.extend_from_slice(p);
    }
    let (Some(lo), Some(hi)) = (
        src.iter().map(|t| t.key >> 32).min(),
        src.iter().map(|t| t.key >> 32).max(),
    ) else {
        return src;
    };
    let bits = 64 - (hi - lo).leading_zeros();
    let mut dst = vec![Lookup::default(); src.len()];
    let mask = (1u64 << RADIX_BITS) - 1;
    let mut shift = 0;
    while shift < bits {
        let digit = |t: &Lookup| ((((t.key >> 32) - lo) >> shift) & mask) as usize;
        let mut at = vec![0usize; 1 << RADIX_BITS];
        for t in &src {
            at[digit(t)] += 1;
        }
        let mut sum = 0;
        for c in &mut at {
            (*c, sum) = (sum, sum + *c);
        }
        for t in &src {
            let d = digit(t);
            dst[at[d]] = *t;
            at[d] += 1;
        }
        std::mem::swap(&mut src, &mut dst);
        shift += RADIX_BITS;
    }
    src
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The paper's definition (eqs. (3)–(6)), counted directly in rationals.
    fn direct(cal: &[(f64, f64)], out: &[f64], t: (f64, f64)) -> f64 {
        let n = cal.len();
        let u0 = |x: f64, others: &mut dyn Iterator<Item = f64>| {
            1 + others.filter(|&z| z >= x).count() as u64
        };
        let u1 = |y: f64| 1 + out.iter().filter(|&&o| o <= y).count() as u64;
        let rt = Ratio {
            num: u0(t.0, &mut cal.iter().map(|p| p.0)),
            den: u1(t.1),
        };
        let mut count = 0;
        for (i, &(ai, bi)) in cal.iter().enumerate() {
            let mut others = cal
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, p)| p.0)
                .chain(std::iter::once(t.0));
            let ri = Ratio {
                num: u0(ai, &mut others),
                den: u1(bi),
            };
            if ri.cmp(rt) != Ordering::Greater {
                count += 1;
            }
        }
        f64::from(1 + count) / (n + 1) as f64
    }

    #[test]
    fn refuses_bad_input() {
        assert!(
            IntegrativeCalibration::new(&[1.0], &[1.0, 2.0], &[1.0], NanPolicy::Omit, false)
                .is_err()
        );
        assert!(
            IntegrativeCalibration::new(&[f64::NAN], &[1.0], &[1.0], NanPolicy::Omit, false)
                .is_err()
        );
        assert!(
            IntegrativeCalibration::new(&[1.0], &[1.0], &[f64::NAN], NanPolicy::Raise, false)
                .is_err()
        );
        assert!(IntegrativeCalibration::new(
            &[1.0],
            &[f64::INFINITY],
            &[1.0],
            NanPolicy::Omit,
            false
        )
        .is_err());
        let c =
            IntegrativeCalibration::new(&[1.0, 2.0], &[0.0, 1.0], &[3.0], NanPolicy::Omit, false)
                .unwrap();
        let mut out = [0.0; 2];
        assert!(c.pvalues(&[1.0], &[1.0, 2.0], false, &mut out).is_err());
        c.pvalues(&[f64::NAN, 1.5], &[0.0, f64::NAN], false, &mut out)
            .unwrap();
        assert!(out.iter().all(|p| p.is_nan()));
    }

    #[test]
    fn large_batches_equal_small_ones_at_any_thread_count() {
        // The parallel lookups and the segmented sweep against the
        // sequential path (checked against the definition above).
        let m = PARALLEL_MIN + 1000;
        let at = |i: usize, s: u64| ((i as u64 * s) % 97) as f64 * 0.25;
        let (ca, cb): (Vec<f64>, Vec<f64>) = (0..300).map(|i| (at(i, 31), at(i, 17))).unzip();
        let o: Vec<f64> = (0..40).map(|i| at(i, 13) + 5.0).collect();
        let (ta, tb): (Vec<f64>, Vec<f64>) = (0..m)
            .map(|i| {
                if i % 1001 == 0 {
                    (f64::NAN, 0.0)
                } else {
                    (at(i, 7) + 1.0, at(i, 11))
                }
            })
            .unzip();
        let c = IntegrativeCalibration::new(&ca, &cb, &o, NanPolicy::Omit, false).unwrap();
        let mut small = vec![0.0; m];
        for ((a, b), out) in ta
            .chunks(4096)
            .zip(tb.chunks(4096))
            .zip(small.chunks_mut(4096))
        {
            c.pvalues(a, b, false, out).unwrap();
        }
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut large = vec![0.0; m];
            pool.install(|| c.pvalues(&ta, &tb, false, &mut large))
                .unwrap();
            assert!(large
                .iter()
                .zip(&small)
                .all(|(x, y)| x.to_bits() == y.to_bits()));
        }
    }

    proptest! {
        #[test]
        fn equals_the_definition(
            cal in prop::collection::vec((-4i32..4, -4i32..4), 1..40),
            out in prop::collection::vec(-4i32..4, 1..15),
            test in prop::collection::vec((-5i32..5, -5i32..5), 0..40),
            negate: bool,
        ) {
            let f = |v: i32| f64::from(v) * 0.5;
            let (ca, cb): (Vec<f64>, Vec<f64>) = cal.iter().map(|&(x, y)| (f(x), f(y))).unzip();
            let o: Vec<f64> = out.iter().map(|&v| f(v)).collect();
            let (ta, tb): (Vec<f64>, Vec<f64>) = test.iter().map(|&(x, y)| (f(x), f(y))).unzip();
            let c = IntegrativeCalibration::new(&ca, &cb, &o, NanPolicy::Omit, negate).unwrap();
            let mut p = vec![0.0; ta.len()];
            c.pvalues(&ta, &tb, false, &mut p).unwrap();
            let s = if negate { -1.0 } else { 1.0 };
            let cal_o: Vec<(f64, f64)> = ca.iter().zip(&cb).map(|(&x, &y)| (s * x, s * y)).collect();
            let out_o: Vec<f64> = o.iter().map(|&x| s * x).collect();
            for ((&x, &y), &pi) in ta.iter().zip(&tb).zip(&p) {
                prop_assert_eq!(pi, direct(&cal_o, &out_o, (s * x, s * y)));
            }
        }

        #[test]
        fn float_and_exact_fractions_agree(
            cal in prop::collection::vec((-6i32..6, -6i32..6), 1..60),
            out in prop::collection::vec(-6i32..6, 1..20),
            test in prop::collection::vec((-7i32..7, -7i32..7), 0..60),
        ) {
            let f = |v: i32| f64::from(v) * 0.5;
            let inl: Vec<(f64, f64)> = cal.iter().map(|&(x, y)| (f(x), f(y))).collect();
            let o: Vec<(f64, f64)> = out.iter().map(|&v| (f(v), f(v))).collect();
            let (ta, tb): (Vec<f64>, Vec<f64>) = test.iter().map(|&(x, y)| (f(x), f(y))).unzip();
            let float = IntegrativeCalibration::build(inl.clone(), o.clone(), false, true);
            let exact = IntegrativeCalibration::build(inl, o, false, false);
            let (mut p, mut q) = (vec![0.0; ta.len()], vec![0.0; ta.len()]);
            float.pvalues(&ta, &tb, false, &mut p).unwrap();
            exact.pvalues(&ta, &tb, false, &mut q).unwrap();
            prop_assert_eq!(p, q);
        }

        #[test]
        fn one_score_is_the_split_conformal_pvalue(
            cal in prop::collection::vec(-6i32..6, 1..50),
            out in prop::collection::vec(-6i32..6, 1..20),
            test in prop::collection::vec(-7i32..7, 0..50),
        ) {
            let f = |v: &i32| f64::from(*v) * 0.5;
            let ca: Vec<f64> = cal.iter().map(f).collect();
            let o: Vec<f64> = out.iter().map(f).collect();
            let t: Vec<f64> = test.iter().map(f).collect();
            let c = IntegrativeCalibration::new(&ca, &ca, &o, NanPolicy::Omit, false).unwrap();
            let mut p = vec![0.0; t.len()];
            c.pvalues(&t, &t, false, &mut p).unwrap();
            for (&x, &pi) in t.iter().zip(&p) {
                let plain = (1 + ca.iter().filter(|&&z| z >= x).count()) as f64 / (ca.len() + 1) as f64;
                prop_assert_eq!(pi, plain);
            }
        }
    }
}
