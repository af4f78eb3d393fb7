//! Evaluation measures of outlier probabilities (contract §6): Brier score,
//! sharpness, refinement and calibration errors, unstratified and stratified
//! by class, and the data of a reliability diagram. Every measure is a mean
//! of per-observation errors e_i in [0, 1].
//!
//! Source: Röchner et al., *Evaluating outlier probabilities: assessing
//! sharpness, refinement, and calibration using stratified and weighted
//! measures* (Data Mining and Knowledge Discovery, 2024) — the per-class
//! (stratified) means, and the binned refinement (Gini index) and L¹
//! calibration errors averaged over bin counts k = 5..20; the Brier score
//! (Brier, *Mon. Weather Rev.* 1950) and the binary entropy as sharpness.
//!
//! Trade-offs: one pass computes the per-observation errors, sums
//! compensated (Neumaier) per class; the binned measures come from one
//! sort of the probabilities ([`crate::evaluation::binning`]), shared by
//! every bin count and scheme. A class with no members gives NaN, for the
//! caller to raise or tabulate (§6).

use crate::error::Error;
use crate::evaluation::binning::{check_bin_counts, check_probabilities, Bin, Scheme, Sorted};
use crate::numeric::float::Float;
use crate::numeric::sum::Neumaier;

/// A measure over all observations and per class; NaN for an absent class.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Strata {
    /// Mean over all observations.
    pub all: f64,
    /// Mean over outliers (y = 1).
    pub outlier: f64,
    /// Mean over inliers (y = 0).
    pub inlier: f64,
}

/// Per-class sums of per-observation errors.
#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    outlier: Neumaier,
    inlier: Neumaier,
    n_outlier: usize,
    n_inlier: usize,
}

impl Sums {
    #[inline]
    fn add(&mut self, is_outlier: bool, e: f64) {
        if is_outlier {
            self.outlier.add(e);
            self.n_outlier += 1;
        } else {
            self.inlier.add(e);
            self.n_inlier += 1;
        }
    }

    fn strata(self) -> Strata {
        let (o, i) = (self.outlier.value(), self.inlier.value());
        let mut all = self.outlier;
        all.merge(self.inlier);
        Strata {
            all: all.value() / (self.n_outlier + self.n_inlier) as f64,
            outlier: mean_or_nan(o, self.n_outlier),
            inlier: mean_or_nan(i, self.n_inlier),
        }
    }
}

fn mean_or_nan(sum: f64, n: usize) -> f64 {
    if n == 0 {
        f64::NAN
    } else {
        sum / n as f64
    }
}

fn check_pairs<T: Float>(p: &[T], y: &[bool]) -> Result<(), Error> {
    if p.len() != y.len() {
        return Err(Error::ShapeMismatch(format!(
            "y_true has {} labels but p has {} probabilities",
            y.len(),
            p.len()
        )));
    }
    check_probabilities(p)
}

/// Per-observation Brier error `(p − y)²`.
#[inline]
pub fn brier_error(p: f64, y: bool) -> f64 {
    let d = p - f64::from(u8::from(y));
    d * d
}

/// Per-observation sharpness error: the binary entropy in bits
/// `H(p) = −p log₂ p − (1 − p) log₂(1 − p)`, `H(0) = H(1) = 0`. The second
/// term uses `log1p(−p)` so that it keeps its digits for tiny p.
#[inline]
pub fn sharpness_error(p: f64) -> f64 {
    if p <= 0.0 || p >= 1.0 {
        return 0.0;
    }
    -(p * p.log2() + (1.0 - p) * (-p).ln_1p() / core::f64::consts::LN_2)
}

/// Brier score and sharpness error in one pass.
pub fn brier_and_sharpness<T: Float>(p: &[T], y: &[bool]) -> Result<(Strata, Strata), Error> {
    check_pairs(p, y)?;
    let (mut brier, mut sharp) = (Sums::default(), Sums::default());
    for (&v, &label) in p.iter().zip(y) {
        let v = v.to_f64();
        brier.add(label, brier_error(v, label));
        sharp.add(label, sharpness_error(v));
    }
    Ok((brier.strata(), sharp.strata()))
}

/// Gini index of a bin's labels `2ȳ(1 − ȳ)` and its L¹ calibration error
/// `|p̄ − ȳ|`; both zero for an empty bin (it has no weight).
fn bin_errors(b: &Bin) -> (f64, f64) {
    if b.count == 0 {
        return (0.0, 0.0);
    }
    let n = b.count as f64;
    let ybar = b.outliers as f64 / n;
    (2.0 * ybar * (1.0 - ybar), (b.sum / n - ybar).abs())
}

/// Refinement and calibration errors for given bins: every observation
/// takes its bin's error, so a class mean weights bin b by its members of
/// that class.
fn binned_strata(bins: &[Bin], n_outliers: usize, n: usize) -> (Strata, Strata) {
    let (mut r, mut c) = ([Neumaier::default(); 3], [Neumaier::default(); 3]);
    for b in bins {
        let (g, cal) = bin_errors(b);
        let weights = [b.count, b.outliers, b.count - b.outliers].map(|w| w as f64);
        for i in 0..3 {
            r[i].add(weights[i] * g);
            c[i].add(weights[i] * cal);
        }
    }
    let strata = |s: [Neumaier; 3]| Strata {
        all: s[0].value() / n as f64,
        outlier: mean_or_nan(s[1].value(), n_outliers),
        inlier: mean_or_nan(s[2].value(), n - n_outliers),
    };
    (strata(r), strata(c))
}

/// Refinement and calibration errors averaged over the bin counts `ks`
/// (contract §6; the paper uses k = 5..20 equiareal bins).
pub fn refinement_and_calibration(
    sorted: &Sorted,
    scheme: Scheme,
    ks: &[usize],
) -> Result<(Strata, Strata), Error> {
    check_bin_counts(ks)?;
    let (n, n1) = (sorted.len(), sorted.n_outliers());
    let mut acc = [Neumaier::default(); 6];
    for &k in ks {
        let (r, c) = binned_strata(&sorted.bins(&sorted.edges(scheme, k)?), n1, n);
        for (a, v) in acc
            .iter_mut()
            .zip([r.all, r.outlier, r.inlier, c.all, c.outlier, c.inlier])
        {
            a.add(v);
        }
    }
    let m = ks.len() as f64;
    let v = acc.map(|a| a.value() / m);
    Ok((
        Strata {
            all: v[0],
            outlier: v[1],
            inlier: v[2],
        },
        Strata {
            all: v[3],
            outlier: v[4],
            inlier: v[5],
        },
    ))
}

/// [`refinement_and_calibration`] of probabilities `p` with labels `y`:
/// the bin counts checked first, then one sort.
pub fn binned_errors<T: Float>(
    p: &[T],
    y: &[bool],
    scheme: Scheme,
    ks: &[usize],
) -> Result<(Strata, Strata), Error> {
    check_bin_counts(ks)?;
    refinement_and_calibration(&Sorted::new(p, Some(y))?, scheme, ks)
}

/// Every measure of contract §6.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Evaluation {
    /// Brier score.
    pub brier: Strata,
    /// Sharpness error.
    pub sharpness: Strata,
    /// Refinement error (averaged over the bin counts).
    pub refinement: Strata,
    /// Calibration error (averaged over the bin counts).
    pub calibration: Strata,
    /// Number of outliers.
    pub n_outliers: usize,
    /// Number of observations.
    pub n: usize,
}

/// All measures of `p` against labels `y`: one pass for the per-observation
/// errors, one sort for every binning.
pub fn evaluate<T: Float>(
    p: &[T],
    y: &[bool],
    scheme: Scheme,
    ks: &[usize],
) -> Result<Evaluation, Error> {
    check_bin_counts(ks)?;
    let (brier, sharpness) = brier_and_sharpness(p, y)?;
    let sorted = Sorted::new(p, Some(y))?;
    let (refinement, calibration) = refinement_and_calibration(&sorted, scheme, ks)?;
    Ok(Evaluation {
        brier,
        sharpness,
        refinement,
        calibration,
        n_outliers: sorted.n_outliers(),
        n: sorted.len(),
    })
}

/// The data of a reliability diagram for one binning.
#[derive(Debug, Clone, PartialEq)]
pub struct Reliability {
    /// Bin edges `[0, …, 1]`.
    pub edges: Vec<f64>,
    /// Mean probability per bin (NaN for an empty bin).
    pub mean_probability: Vec<f64>,
    /// Fraction of outliers per bin (NaN for an empty bin).
    pub outlier_fraction: Vec<f64>,
    /// Observations per bin.
    pub count: Vec<usize>,
}

/// Per-bin mean probability, outlier fraction and count for `k` bins.
pub fn reliability_curve<T: Float>(
    p: &[T],
    y: &[bool],
    scheme: Scheme,
    k: usize,
) -> Result<Reliability, Error> {
    check_bin_counts(&[k])?;
    check_pairs(p, y)?;
    let sorted = Sorted::new(p, Some(y))?;
    let edges = sorted.edges(scheme, k)?;
    let bins = sorted.bins(&edges);
    Ok(Reliability {
        mean_probability: bins.iter().map(|b| mean_or_nan(b.sum, b.count)).collect(),
        outlier_fraction: bins
            .iter()
            .map(|b| mean_or_nan(b.outliers as f64, b.count))
            .collect(),
        count: bins.iter().map(|b| b.count).collect(),
        edges,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const KS: [usize; 16] = [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20];

    #[test]
    fn perfect_probabilities_score_zero() {
        let y = [false, true, false, true, true];
        let p: Vec<f64> = y.iter().map(|&b| f64::from(u8::from(b))).collect();
        for scheme in [
            Scheme::Equiareal,
            Scheme::EqualWidth,
            Scheme::EqualFrequency,
        ] {
            let e = evaluate(&p, &y, scheme, &KS).unwrap();
            for s in [e.brier, e.sharpness, e.refinement, e.calibration] {
                assert_eq!((s.all, s.outlier, s.inlier), (0.0, 0.0, 0.0));
            }
        }
    }

    #[test]
    fn hand_computed_example() {
        // p = [0.1, 0.0, 0.3, 0.9], y = [0, 0, 0, 1]
        let p = [0.1, 0.0, 0.3, 0.9];
        let y = [false, false, false, true];
        let (b, s) = brier_and_sharpness(&p, &y).unwrap();
        assert!((b.all - (0.01 + 0.0 + 0.09 + 0.01) / 4.0).abs() < 1e-16);
        assert!((b.outlier - 0.01).abs() < 1e-16);
        assert!((b.inlier - 0.1 / 3.0).abs() < 1e-16);
        assert!((s.outlier - sharpness_error(0.9)).abs() < 1e-16);
        // Two equal-width bins [0, .5], (.5, 1]: pure, so no refinement
        // error; calibration |0.4/3 − 0| for inliers, |0.9 − 1| for outliers.
        let sorted = Sorted::new(&p, Some(&y[..])).unwrap();
        let (r, c) = refinement_and_calibration(&sorted, Scheme::EqualWidth, &[2]).unwrap();
        assert_eq!((r.all, r.outlier, r.inlier), (0.0, 0.0, 0.0));
        assert!((c.inlier - 0.4 / 3.0).abs() < 1e-16);
        assert!((c.outlier - 0.1).abs() < 1e-15);
    }

    #[test]
    fn sharpness_is_binary_entropy() {
        assert_eq!(sharpness_error(0.5), 1.0);
        assert_eq!(sharpness_error(0.0), 0.0);
        assert_eq!(sharpness_error(1.0), 0.0);
        // Tiny p: −p log₂ p + p/ln 2 to leading order.
        let p = 1e-20f64;
        let want = -p * p.log2() + p / core::f64::consts::LN_2;
        assert!((sharpness_error(p) - want).abs() < 1e-15 * want);
    }

    #[test]
    fn absent_class_is_nan_and_errors_are_reported() {
        let (b, _) = brier_and_sharpness(&[0.2f32, 0.4], &[false, false]).unwrap();
        assert!(b.outlier.is_nan() && !b.inlier.is_nan());
        assert!(brier_and_sharpness(&[0.2], &[false, true]).is_err());
        assert!(evaluate(&[0.2], &[true], Scheme::Equiareal, &[]).is_err());
        assert!(evaluate(&[0.2], &[true], Scheme::Equiareal, &[0]).is_err());
    }

    proptest! {
        #[test]
        fn measures_are_in_unit_interval(
            py in proptest::collection::vec((prop_oneof![0.0f64..=1.0, Just(0.0), Just(1.0)], any::<bool>()), 1..200),
            k in 1usize..25,
        ) {
            let (p, y): (Vec<f64>, Vec<bool>) = py.into_iter().unzip();
            for scheme in [Scheme::Equiareal, Scheme::EqualWidth, Scheme::EqualFrequency] {
                let e = evaluate(&p, &y, scheme, &[k]).unwrap();
                for s in [e.brier, e.sharpness, e.refinement, e.calibration] {
                    for v in [s.all, s.outlier, s.inlier] {
                        prop_assert!(v.is_nan() || (0.0..=1.0 + 1e-15).contains(&v));
                    }
                }
            }
        }

        #[test]
        fn reliability_counts_partition(
            p in proptest::collection::vec(0.0f64..=1.0, 1..200), k in 1usize..15,
        ) {
            let y = vec![false; p.len()];
            let r = reliability_curve(&p, &y, Scheme::EqualWidth, k).unwrap();
            prop_assert_eq!(r.count.iter().sum::<usize>(), p.len());
            prop_assert_eq!(r.edges.len(), r.count.len() + 1);
        }
    }
}
