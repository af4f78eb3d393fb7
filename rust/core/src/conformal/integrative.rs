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
//! in the order of a) and those above. Test points are swept in order of
//! a with two Fenwick trees over the ranks of the two fractions: O((n + m)
//! log n) instead of the definition's O(n·m). Ratios are compared exactly
//! (cross-multiplied counts), not in floating point, so ties are ties.
//!
//! With one score (b = a) the ratio falls as a rises and p is exactly the
//! split-conformal p-value: the labelled outliers add power only through a
//! second score.

use crate::error::Error;
use crate::sample::NanPolicy;
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
}

/// The fitted calibration of integrative p-values.
#[derive(Debug, Clone, PartialEq)]
pub struct IntegrativeCalibration {
    /// Inlier calibration `a` scores, ascending.
    a_sorted: Vec<f64>,
    /// Outlier calibration scores (second score), ascending.
    outliers: Vec<f64>,
    /// Per calibration point in the order of `a_sorted`: rank of
    /// `cᵢ/vᵢ` in `minus` and of `(cᵢ + 1)/vᵢ` in `plus`.
    rank_minus: Vec<u32>,
    rank_plus: Vec<u32>,
    /// The two fractions of every calibration point, ascending.
    minus: Vec<Ratio>,
    plus: Vec<Ratio>,
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

/// Ranks of `r` in `sorted` (ascending, holding every element of `r`).
fn ranks(r: &[Ratio], sorted: &[Ratio]) -> Vec<u32> {
    r.iter()
        .map(|&x| sorted.partition_point(|&y| y.cmp(x) == Ordering::Less) as u32)
        .collect()
}

/// A Fenwick tree of counts.
struct Fenwick(Vec<u32>);

impl Fenwick {
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
        let mut inl = pairs(a, b, nan_policy, negate, "X")?;
        let o_pairs = pairs(o, o, nan_policy, negate, "outlier_scores")?;
        let mut outliers: Vec<f64> = o_pairs.into_iter().map(|p| p.0).collect();
        outliers.sort_unstable_by(f64::total_cmp);
        inl.sort_unstable_by(|x, y| x.0.total_cmp(&y.0));
        let n = inl.len();
        let a_sorted: Vec<f64> = inl.iter().map(|p| p.0).collect();
        let (mut rm, mut rp) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for (i, &(ai, bi)) in inl.iter().enumerate() {
            // cᵢ: calibration a's ≥ aᵢ (itself included).
            let c = (n - a_sorted[..=i].partition_point(|&x| x < ai)) as u64;
            let v = 1 + outliers.partition_point(|&x| x <= bi) as u64;
            rm.push(Ratio { num: c, den: v });
            rp.push(Ratio { num: c + 1, den: v });
        }
        let sort = |r: &[Ratio]| {
            let mut s = r.to_vec();
            s.sort_unstable_by(|x, y| x.cmp(*y));
            s
        };
        let (minus, plus) = (sort(&rm), sort(&rp));
        Ok(IntegrativeCalibration {
            rank_minus: ranks(&rm, &minus),
            rank_plus: ranks(&rp, &plus),
            a_sorted,
            outliers,
            minus,
            plus,
            negate,
        })
    }

    /// n, the inlier calibration points; k, the outlier ones.
    pub fn sizes(&self) -> (usize, usize) {
        (self.a_sorted.len(), self.outliers.len())
    }

    /// The integrative p-values (or `1 − p`) of test pairs (`a`, `b`) into
    /// `out`: NaN in either score gives NaN.
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
        let n = self.a_sorted.len();
        let sign = if self.negate { -1.0 } else { 1.0 };
        // Test points in the order of a (NaN last, skipped).
        let mut order: Vec<(f64, usize)> = a
            .iter()
            .zip(b)
            .enumerate()
            .filter(|(_, (x, y))| !(x.is_nan() || y.is_nan()))
            .map(|(j, (x, _))| (sign * x, j))
            .collect();
        order.sort_unstable_by(|x, y| x.0.total_cmp(&y.0));
        for (o, (x, y)) in out.iter_mut().zip(a.iter().zip(b)) {
            if x.is_nan() || y.is_nan() {
                *o = f64::NAN;
            }
        }
        let mut fm = Fenwick(vec![0; n + 1]);
        let mut fp = Fenwick(vec![0; n + 1]);
        // Both pointers only advance: the tests come in order of a.
        let (mut prefix, mut below) = (0usize, 0usize);
        for &(qa, j) in &order {
            while below < n && self.a_sorted[below] < qa {
                below += 1;
            }
            while prefix < n && self.a_sorted[prefix] <= qa {
                fm.add(self.rank_minus[prefix] as usize);
                fp.add(self.rank_plus[prefix] as usize);
                prefix += 1;
            }
            let qb = sign * b[j];
            let c = 1 + (n - below) as u64;
            let v = 1 + self.outliers.partition_point(|&x| x <= qb) as u64;
            let r = Ratio { num: c, den: v };
            let at_most = |s: &[Ratio]| s.partition_point(|&y| y.cmp(r) != Ordering::Greater);
            let (em, ep) = (at_most(&self.minus), at_most(&self.plus));
            // Above the prefix: fractions c/v; in it: (c + 1)/v.
            let count = fp.below(ep) + (em as u64 - fm.below(em));
            let p = (1 + count) as f64 / (n + 1) as f64;
            out[j] = if complement { 1.0 - p } else { p };
        }
        Ok(())
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
