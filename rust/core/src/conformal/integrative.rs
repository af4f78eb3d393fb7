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
//! is a dominance count: over the calibration points with aᵢ ≤ a (a prefix
//! in the order of a) and those above. A test point's prefix, its u₁ and
//! the positions of its ratio among the two fractions are independent
//! lookups (in parallel chunks); the test points are then sorted by prefix
//! and swept with two Fenwick trees over the ranks of the two fractions,
//! the sweep cut into one segment per thread, each starting from trees
//! built for its first prefix: O((n + m) log n) instead of the
//! definition's O(n·m), and the counts do not depend on the threads.
//!
//! Ratios are compared exactly, so ties are ties: while
//! (n + 1)(k + 1) < 2⁵⁰ as their f64 quotients — two fractions with
//! numerators ≤ n + 1 and denominators ≤ k + 1 that differ, differ by at
//! least 1/((k + 1)²), more than the two roundings, and equal fractions
//! round alike — so that the lookups go through a [`SearchIndex`] (one
//! table read instead of a binary search's cache misses); beyond that by
//! cross-multiplied counts and binary searches.
//!
//! With one score (b = a) the ratio falls as a rises and p is exactly the
//! split-conformal p-value: the labelled outliers add power only through a
//! second score.

use crate::error::Error;
use crate::numeric::par::PARALLEL_MIN;
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

/// A sorted slice of finite values and its index, for `#{v ≤ q}`.
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

    /// `#{v < qᵢ}` (`or_equal`: `#{v ≤ qᵢ}`) of each query into `out`
    /// (up to [`GROUP`]; the values are finite, so `v ≤ q` is
    /// `v < next_up(q)`).
    fn count(&self, qs: &[f64], or_equal: bool, out: &mut [usize]) {
        if or_equal {
            let mut q = [0.0f64; GROUP];
            for (qi, &x) in q.iter_mut().zip(qs) {
                *qi = x.next_up();
            }
            self.index.lower_bounds(&self.values, &q[..qs.len()], out);
        } else {
            self.index.lower_bounds(&self.values, qs, out);
        }
    }
}

/// The fitted calibration of integrative p-values.
#[derive(Debug, Clone, PartialEq)]
pub struct IntegrativeCalibration {
    /// Inlier calibration `a` scores, ascending.
    a_sorted: Sorted,
    /// Outlier calibration scores (second score), ascending.
    outliers: Sorted,
    /// Per calibration point in the order of `a_sorted`: rank of
    /// `cᵢ/vᵢ` in `minus` and of `(cᵢ + 1)/vᵢ` in `plus`.
    rank_minus: Vec<u32>,
    rank_plus: Vec<u32>,
    /// The two fractions of every calibration point, ascending.
    minus: Fractions,
    plus: Fractions,
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
    if out.len() >= u32::MAX as usize {
        return Err(Error::invalid(
            what,
            format!("at most {} scores", u32::MAX - 1),
        ));
    }
    Ok(out)
}

/// The fractions `r` sorted, and the rank of each (`#{rⱼ < rᵢ}`).
fn sorted_ranks(r: &[Ratio]) -> (Vec<Ratio>, Vec<u32>) {
    let mut order: Vec<(Ratio, u32)> = r.iter().enumerate().map(|(i, &x)| (x, i as u32)).collect();
    // Ties may come in any order: a rank counts the strictly smaller ones.
    if r.len() >= PARALLEL_MIN {
        order.par_sort_unstable_by(|x, y| x.0.cmp(y.0));
    } else {
        order.sort_unstable_by(|x, y| x.0.cmp(y.0));
    }
    let mut ranks = vec![0u32; r.len()];
    let mut first = 0usize;
    for k in 0..order.len() {
        if k > 0 && order[k].0.cmp(order[k - 1].0) != Ordering::Equal {
            first = k;
        }
        ranks[order[k].1 as usize] = first as u32;
    }
    (order.into_iter().map(|x| x.0).collect(), ranks)
}

/// A Fenwick tree of counts.
struct Fenwick(Vec<u32>);

impl Fenwick {
    /// The tree of the counts of `ranks` (each < `n`), built in O(n).
    fn of(ranks: &[u32], n: usize) -> Self {
        let mut t = vec![0u32; n + 1];
        for &r in ranks {
            t[r as usize + 1] += 1;
        }
        for i in 1..=n {
            let j = i + (i & i.wrapping_neg());
            if j <= n {
                t[j] += t[i];
            }
        }
        Fenwick(t)
    }

    fn add(&mut self, i: usize) {
        let mut i = i + 1;
        while i < self.0.len() {
            self.0[i] += 1;
            i += i & i.wrapping_neg();
        }
    }

    /// Count of positions < `end`.
    fn below(&self, end: usize) -> u64 {
        let (mut i, mut s) = (end, 0u64);
        while i > 0 {
            s += u64::from(self.0[i]);
            i &= i - 1;
        }
        s
    }
}

/// A test point's lookups: its prefix (calibration a's ≤ its a) in the
/// high half of `key` and its position in the low half, and the number of
/// `minus` and `plus` fractions ≤ its ratio.
#[derive(Debug, Clone, Copy, Default)]
struct Lookup {
    key: u64,
    em: u32,
    ep: u32,
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
        let n = inl.len();
        let parallel = n >= PARALLEL_MIN;
        if parallel {
            inl.par_sort_unstable_by(|x, y| x.0.total_cmp(&y.0));
        } else {
            inl.sort_unstable_by(|x, y| x.0.total_cmp(&y.0));
        }
        let (mut rm, mut rp) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let mut first = 0usize;
        for (i, &(ai, bi)) in inl.iter().enumerate() {
            // cᵢ: calibration a's ≥ aᵢ (itself included): those from the
            // first of its ties on.
            if i > 0 && inl[i - 1].0 < ai {
                first = i;
            }
            let c = (n - first) as u64;
            let v = 1 + outliers.partition_point(|&x| x <= bi) as u64;
            rm.push(Ratio { num: c, den: v });
            rp.push(Ratio { num: c + 1, den: v });
        }
        let ((minus, rank_minus), (plus, rank_plus)) = if parallel {
            rayon::join(|| sorted_ranks(&rm), || sorted_ranks(&rp))
        } else {
            (sorted_ranks(&rm), sorted_ranks(&rp))
        };
        IntegrativeCalibration {
            a_sorted: Sorted::new(inl.iter().map(|p| p.0).collect()),
            outliers: Sorted::new(outliers),
            rank_minus,
            rank_plus,
            minus: Fractions::new(minus, float),
            plus: Fractions::new(plus, float),
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
        let n = self.a_sorted.values.len();
        let sign = if self.negate { -1.0 } else { 1.0 };
        let (mut qa, mut qb) = ([0.0f64; GROUP], [0.0f64; GROUP]);
        let (mut below, mut prefix, mut v) = ([0usize; GROUP], [0usize; GROUP], [0usize; GROUP]);
        let (mut r, mut em, mut ep) = (
            [Ratio { num: 0, den: 1 }; GROUP],
            [0usize; GROUP],
            [0usize; GROUP],
        );
        for (g, (ga, gb)) in a.chunks(GROUP).zip(b.chunks(GROUP)).enumerate() {
            let mut len = 0;
            let mut pos = [0usize; GROUP];
            for (k, (&x, &y)) in ga.iter().zip(gb).enumerate() {
                if !(x.is_nan() || y.is_nan()) {
                    (qa[len], qb[len], pos[len]) = (sign * x, sign * y, at + g * GROUP + k);
                    len += 1;
                }
            }
            self.a_sorted.count(&qa[..len], false, &mut below[..len]);
            self.a_sorted.count(&qa[..len], true, &mut prefix[..len]);
            self.outliers.count(&qb[..len], true, &mut v[..len]);
            for k in 0..len {
                r[k] = Ratio {
                    num: 1 + (n - below[k]) as u64,
                    den: 1 + v[k] as u64,
                };
            }
            self.minus.at_most(&r[..len], &mut em[..len]);
            self.plus.at_most(&r[..len], &mut ep[..len]);
            for k in 0..len {
                out.push(Lookup {
                    key: ((prefix[k] as u64) << 32) | pos[k] as u64,
                    em: em[k] as u32,
                    ep: ep[k] as u32,
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
        // Lookups, in chunks of the input, then in order of prefix.
        let step = if parallel {
            m.div_ceil(4 * rayon::current_num_threads()).max(GROUP)
        } else {
            m.max(1)
        };
        let mut tests: Vec<Lookup> = if parallel {
            a.par_chunks(step)
                .zip(b.par_chunks(step))
                .enumerate()
                .flat_map_iter(|(i, (a, b))| {
                    let mut v = Vec::with_capacity(a.len());
                    self.lookups(a, b, i * step, &mut v);
                    v
                })
                .collect()
        } else {
            let mut v = Vec::with_capacity(m);
            self.lookups(a, b, 0, &mut v);
            v
        };
        if parallel {
            tests.par_sort_unstable_by_key(|t| t.key);
        } else {
            tests.sort_unstable_by_key(|t| t.key);
        }
        for o in out.iter_mut() {
            *o = f64::NAN;
        }
        // The sweep, one segment per thread: above the prefix the
        // fractions c/v count, in it (c + 1)/v.
        let segments = if parallel {
            rayon::current_num_threads().max(1)
        } else {
            1
        };
        let seg_len = tests.len().div_ceil(segments).max(1);
        let sweep = |seg: &[Lookup]| -> Vec<u64> {
            let start = (seg[0].key >> 32) as usize;
            let mut fm = Fenwick::of(&self.rank_minus[..start], n);
            let mut fp = Fenwick::of(&self.rank_plus[..start], n);
            let mut prefix = start;
            seg.iter()
                .map(|t| {
                    let p = (t.key >> 32) as usize;
                    while prefix < p {
                        fm.add(self.rank_minus[prefix] as usize);
                        fp.add(self.rank_plus[prefix] as usize);
                        prefix += 1;
                    }
                    let (em, ep) = (t.em as usize, t.ep as usize);
                    fp.below(ep) + (em as u64 - fm.below(em))
                })
                .collect()
        };
        let counts: Vec<Vec<u64>> = if parallel {
            tests.par_chunks(seg_len).map(sweep).collect()
        } else {
            tests.chunks(seg_len).map(sweep).collect()
        };
        for (t, count) in tests.iter().zip(counts.iter().flatten()) {
            let p = (1 + count) as f64 / (n + 1) as f64;
            out[(t.key & 0xffff_ffff) as usize] = if complement { 1.0 - p } else { p };
        }
    }
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
