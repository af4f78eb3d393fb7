//! One p-value per point from several detectors (contract §11, "Several
//! detectors").
//!
//! * [`cauchy`]: the Cauchy combination `T = Σⱼ wⱼ tan((½ − pⱼ)π)`,
//!   `p = ½ − arctan(T)/π` (Liu & Xie, JASA 2020): exact for independent
//!   p-values, and `P(p ≤ α)/α → 1` as α → 0 under their dependence
//!   conditions; not valid at every α under arbitrary dependence.
//! * [`harmonic`]: the harmonic mean `K/Σⱼ 1/pⱼ` times `e·ln K` (K ≥ 3; K
//!   for K ≤ 2), valid under arbitrary dependence (Vovk & Wang,
//!   Biometrika 2020).
//! * [`ensemble_scores`]: one score per point — the mean (or maximum) of
//!   each detector's robust z-score `(s − median)/nMAD`, the median and
//!   nMAD taken over the pooled calibration and test scores of that
//!   detector. A function of the pooled set treats calibration and test
//!   points alike, so conformal p-values of these scores keep their
//!   validity and BH's FDR control (Marandon, Lei, Mary & Roquain, Annals
//!   of Statistics 2024: scores learned from the unordered calibration ∪
//!   test sample).
//!
//! Matrices are row-major `n × k`, a row per point and a column per
//! detector.

use crate::error::{named_enum, Error};
use crate::estimators::location::median;
use crate::estimators::scale::{nmad_about_median, std};
use crate::numeric::float::Float;
use crate::sample::{NanPolicy, Sample};

fn check_shape(len: usize, k: usize, out: usize) -> Result<usize, Error> {
    if k == 0 || !len.is_multiple_of(k) {
        return Err(Error::ShapeMismatch(format!(
            "{len} values do not form rows of {k} detectors"
        )));
    }
    if len / k != out {
        return Err(Error::ShapeMismatch(format!(
            "{} rows and an output of {out}",
            len / k
        )));
    }
    Ok(len / k)
}

/// `cot(pπ) = tan((½ − p)π)`, accurate for small p.
#[inline]
fn cauchy_term(p: f64) -> f64 {
    let (sin, cos) = (p * core::f64::consts::PI).sin_cos();
    cos / sin
}

/// The Cauchy combination of each row of the row-major `p` (k columns),
/// weighted by `weights` (k non-negative values, not all zero; None:
/// equal). A row with a NaN gives NaN; a p-value 0 gives 0.
pub fn cauchy<T: Float>(
    p: &[T],
    k: usize,
    weights: Option<&[f64]>,
    out: &mut [T],
) -> Result<(), Error> {
    check_shape(p.len(), k, out.len())?;
    let w: Vec<f64> = match weights {
        Some(w) => {
            if w.len() != k || w.iter().any(|v| !(v.is_finite() && *v >= 0.0)) {
                return Err(Error::invalid(
                    "weights",
                    format!("must be {k} finite non-negative values"),
                ));
            }
            let total: f64 = w.iter().sum();
            if total <= 0.0 {
                return Err(Error::invalid("weights", "must not all be zero"));
            }
            w.iter().map(|v| v / total).collect()
        }
        None => vec![1.0 / k as f64; k],
    };
    check_probabilities(p)?;
    for (row, o) in p.chunks(k).zip(out.iter_mut()) {
        let mut t = 0.0;
        for (v, wj) in row.iter().zip(&w) {
            t += wj * cauchy_term(v.to_f64());
        }
        let c = if t.is_nan() {
            f64::NAN
        } else if t > 1.0 {
            // ½ − arctan(T)/π = arctan(1/T)/π: no cancellation for large T.
            (1.0 / t).atan() / core::f64::consts::PI
        } else {
            0.5 - t.atan() / core::f64::consts::PI
        };
        *o = T::from_f64(c.clamp(0.0, 1.0));
    }
    Ok(())
}

/// The factor that makes the harmonic mean of K p-values valid under any
/// dependence: `e·ln K` for K ≥ 3, K for K ≤ 2 (Bonferroni).
pub fn harmonic_factor(k: usize) -> f64 {
    if k <= 2 {
        k as f64
    } else {
        core::f64::consts::E * (k as f64).ln()
    }
}

/// `min(1, a_K · K / Σⱼ 1/pⱼ)` of each row (see [`harmonic_factor`]).
pub fn harmonic<T: Float>(p: &[T], k: usize, out: &mut [T]) -> Result<(), Error> {
    check_shape(p.len(), k, out.len())?;
    check_probabilities(p)?;
    let a = harmonic_factor(k);
    for (row, o) in p.chunks(k).zip(out.iter_mut()) {
        let inv: f64 = row.iter().map(|v| 1.0 / v.to_f64()).sum();
        let h = if inv.is_nan() {
            f64::NAN
        } else {
            (a * k as f64 / inv).min(1.0)
        };
        *o = T::from_f64(h);
    }
    Ok(())
}

fn check_probabilities<T: Float>(p: &[T]) -> Result<(), Error> {
    match p.iter().position(|v| {
        let v = v.to_f64();
        !v.is_nan() && !(0.0..=1.0).contains(&v)
    }) {
        Some(i) => Err(Error::invalid(
            "pvalues",
            format!("must lie in [0, 1]; entry {i} is {}", p[i].to_f64()),
        )),
        None => Ok(()),
    }
}

/// A rule combining p-values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// [`cauchy`].
    Cauchy,
    /// [`harmonic`].
    Harmonic,
}

named_enum!(
    Rule,
    "rule",
    "expected 'cauchy' or 'harmonic'",
    "cauchy" => Cauchy,
    "harmonic" => Harmonic,
);

/// [`cauchy`] or [`harmonic`] (which takes no weights).
pub fn combine<T: Float>(
    p: &[T],
    k: usize,
    rule: Rule,
    weights: Option<&[f64]>,
    out: &mut [T],
) -> Result<(), Error> {
    match (rule, weights) {
        (Rule::Cauchy, w) => cauchy(p, k, w, out),
        (Rule::Harmonic, None) => harmonic(p, k, out),
        (Rule::Harmonic, Some(_)) => Err(Error::invalid(
            "weights",
            "are taken by the Cauchy rule only",
        )),
    }
}

/// How the detectors' robust z-scores are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ensemble {
    /// Their mean.
    Mean,
    /// Their maximum.
    Max,
}

named_enum!(
    Ensemble,
    "combine",
    "expected 'mean' or 'max'",
    "mean" => Mean,
    "max" => Max,
);

/// The ensemble scores of calibration rows `cal` and test rows `test`
/// (row-major, k columns each, finite; `negate` orients them), written to
/// `cal_out` and `test_out`. Each column is standardised by the median and
/// nMAD of its pooled calibration and test scores (the standard deviation
/// when the nMAD is 0; a constant column contributes 0).
pub fn ensemble_scores(
    cal: &[f64],
    test: &[f64],
    k: usize,
    negate: bool,
    how: Ensemble,
    cal_out: &mut [f64],
    test_out: &mut [f64],
) -> Result<(), Error> {
    let n = check_shape(cal.len(), k, cal_out.len())?;
    check_shape(test.len(), k, test_out.len())?;
    if n == 0 {
        return Err(Error::invalid(
            "calibration",
            "needs at least one calibration row",
        ));
    }
    let sign = if negate { -1.0 } else { 1.0 };
    let init = match how {
        Ensemble::Mean => 0.0,
        Ensemble::Max => f64::NEG_INFINITY,
    };
    cal_out.fill(init);
    test_out.fill(init);
    let mut pooled = Vec::with_capacity(cal.len() / k + test.len() / k);
    for j in 0..k {
        pooled.clear();
        pooled.extend(cal.iter().skip(j).step_by(k).map(|v| sign * v));
        pooled.extend(test.iter().skip(j).step_by(k).map(|v| sign * v));
        let sample = Sample::new(&pooled, NanPolicy::Raise, false)?;
        let center = median(&sample);
        let mut scale = nmad_about_median(&sample, center);
        if scale.is_nan() || scale <= 0.0 {
            scale = std(&sample, 0)?;
        }
        for (rows, out) in [(cal, &mut *cal_out), (test, &mut *test_out)] {
            for (v, o) in rows.iter().skip(j).step_by(k).zip(out.iter_mut()) {
                let z = if scale > 0.0 {
                    (sign * v - center) / scale
                } else {
                    0.0
                };
                *o = match how {
                    Ensemble::Mean => *o + z / k as f64,
                    Ensemble::Max => o.max(z),
                };
            }
        }
    }
    Ok(())
}

/// The number of rows of `len` values of `k` detectors (0 when they do
/// not form rows: the call that writes them then names the mismatch).
fn rows(len: usize, k: usize) -> usize {
    len.checked_div(k).unwrap_or(0)
}

/// [`combine`] into a new vector: one p-value per row of `p`.
pub fn combined(
    p: &[f64],
    k: usize,
    rule: Rule,
    weights: Option<&[f64]>,
) -> Result<Vec<f64>, Error> {
    let mut out = vec![0.0; rows(p.len(), k)];
    combine(p, k, rule, weights, &mut out)?;
    Ok(out)
}

/// [`ensemble_scores`] into new vectors: `(calibration, test)` scores.
pub fn ensembled(
    cal: &[f64],
    test: &[f64],
    k: usize,
    negate: bool,
    how: Ensemble,
) -> Result<(Vec<f64>, Vec<f64>), Error> {
    let (mut c, mut t) = (
        vec![0.0; rows(cal.len(), k)],
        vec![0.0; rows(test.len(), k)],
    );
    ensemble_scores(cal, test, k, negate, how, &mut c, &mut t)?;
    Ok((c, t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_results_have_one_value_per_row() {
        let p = [0.01, 0.5, 0.2, 0.3, 0.9, 0.9];
        let mut want = [0.0; 3];
        combine(&p, 2, Rule::Harmonic, None, &mut want).unwrap();
        assert_eq!(combined(&p, 2, Rule::Harmonic, None).unwrap(), want);
        assert!(combined(&p, 0, Rule::Cauchy, None).is_err());
        assert!(combined(&p, 4, Rule::Cauchy, None).is_err());
        let (c, t) =
            ensembled(&[1.0, 2.0, 3.0, 5.0], &[4.0, 0.5], 2, false, Ensemble::Max).unwrap();
        let (mut wc, mut wt) = ([0.0; 2], [0.0; 1]);
        ensemble_scores(
            &[1.0, 2.0, 3.0, 5.0],
            &[4.0, 0.5],
            2,
            false,
            Ensemble::Max,
            &mut wc,
            &mut wt,
        )
        .unwrap();
        assert_eq!((c, t), (wc.to_vec(), wt.to_vec()));
        assert!(ensembled(&[1.0, 2.0, 3.0], &[4.0, 0.5], 2, false, Ensemble::Mean).is_err());
    }

    #[test]
    fn cauchy_of_one_pvalue_is_itself() {
        let p: [f64; 5] = [0.001, 0.2, 0.5, 0.9, 1.0];
        let mut out = [0.0f64; 5];
        cauchy(&p, 1, None, &mut out).unwrap();
        for (a, b) in p.iter().zip(&out) {
            assert!((a - b).abs() < 1e-12, "{a} {b}");
        }
    }

    #[test]
    fn cauchy_of_equal_pvalues_is_that_pvalue() {
        // tan((½ − p)π) averaged over equal terms is the same term.
        let p = [0.03, 0.03, 0.03, 0.4, 0.4, 0.4];
        let mut out = [0.0f64; 2];
        cauchy(&p, 3, None, &mut out).unwrap();
        assert!((out[0] - 0.03).abs() < 1e-12 && (out[1] - 0.4).abs() < 1e-12);
    }

    #[test]
    fn harmonic_applies_the_factor() {
        let p = [0.01, 0.02, 0.04];
        let mut out = [0.0f64];
        harmonic(&p, 3, &mut out).unwrap();
        let hm = 3.0 / (100.0 + 50.0 + 25.0);
        assert!((out[0] - core::f64::consts::E * 3f64.ln() * hm).abs() < 1e-15);
        assert_eq!(harmonic_factor(2), 2.0);
    }

    #[test]
    fn nan_rows_and_bad_input() {
        let mut out = [0.0f64; 2];
        cauchy(&[0.1, f64::NAN, 0.2, 0.3], 2, None, &mut out).unwrap();
        assert!(out[0].is_nan() && !out[1].is_nan());
        assert!(cauchy(&[0.1, 1.5], 2, None, &mut out[..1]).is_err());
        assert!(cauchy(&[0.1, 0.5, 0.2], 2, None, &mut out[..1]).is_err());
        assert!(cauchy(&[0.1, 0.5], 2, Some(&[0.0, 0.0]), &mut out[..1]).is_err());
        assert!(harmonic(&[0.1, -0.5], 2, &mut out[..1]).is_err());
    }

    #[test]
    fn ensemble_is_symmetric_in_calibration_and_test() {
        // Moving a row from calibration to test leaves every score as it was.
        let rows: Vec<f64> = (0..40).map(|i| f64::from((i * 7) % 13)).collect();
        let (mut c1, mut t1) = (vec![0.0; 12], vec![0.0; 8]);
        ensemble_scores(
            &rows[..24],
            &rows[24..],
            2,
            false,
            Ensemble::Mean,
            &mut c1,
            &mut t1,
        )
        .unwrap();
        let (mut c2, mut t2) = (vec![0.0; 10], vec![0.0; 10]);
        ensemble_scores(
            &rows[..20],
            &rows[20..],
            2,
            false,
            Ensemble::Mean,
            &mut c2,
            &mut t2,
        )
        .unwrap();
        let a: Vec<f64> = c1.iter().chain(&t1).copied().collect();
        let b: Vec<f64> = c2.iter().chain(&t2).copied().collect();
        assert_eq!(a, b);
        let mut bad = vec![0.0; 1];
        assert!(ensemble_scores(
            &[f64::NAN, 1.0],
            &[],
            2,
            false,
            Ensemble::Max,
            &mut bad,
            &mut []
        )
        .is_err());
    }
}
