//! Selection with false-discovery-rate control (contract §11):
//! Benjamini–Hochberg, Storey's adaptive BH and Benjamini–Yekutieli.
//!
//! Each is a step-up procedure with thresholds `t(k)` increasing in k: the
//! selection is `{p ≤ t(k*)}` with `k* = max{k : #{p ≤ t(k)} ≥ k}` (no
//! selection when there is no such k). Instead of sorting the m p-values,
//! each p-value at most `t(m)` is put in the bucket of the smallest k with
//! `p ≤ t(k)` (a guess `⌈p/t(1)⌉` corrected against `t` itself, so that the
//! comparisons are exactly those of a sort-based implementation), and one
//! scan of the bucket counts finds k*: O(m) time.

use crate::error::{named_enum, Error};
use crate::numeric::par::{CHUNK, PARALLEL_MIN};
use crate::numeric::sum::Neumaier;
use rayon::prelude::*;

/// A step-up procedure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Procedure {
    /// Benjamini–Hochberg: `t(k) = (k/m)·α`.
    BenjaminiHochberg,
    /// Storey's adaptive BH: BH at level `α/π̂₀` with
    /// `π̂₀ = (1 + #{p > λ})/(m(1 − λ))` (not capped at 1).
    Storey {
        /// λ in (0, 1).
        lambda: f64,
    },
    /// Benjamini–Yekutieli: `t(k) = ((k/m)/c(m))·α`, `c(m) = Σ_{i≤m} 1/i`.
    BenjaminiYekutieli,
}

/// A procedure as the user names it (`"bh"`, `"storey"`, `"by"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Benjamini–Hochberg.
    Bh,
    /// Storey's adaptive BH.
    Storey,
    /// Benjamini–Yekutieli.
    By,
}

named_enum!(
    Method,
    "method",
    "expected 'bh', 'storey' or 'by'",
    "bh" => Bh,
    "storey" => Storey,
    "by" => By,
);

impl Method {
    /// The procedure, with Storey's λ.
    pub fn procedure(self, lambda: f64) -> Procedure {
        match self {
            Method::Bh => Procedure::BenjaminiHochberg,
            Method::Storey => Procedure::Storey { lambda },
            Method::By => Procedure::BenjaminiYekutieli,
        }
    }
}

/// What a selection found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Selection {
    /// k*: the number of selected p-values.
    pub count: usize,
    /// `t(k*)`, 0 when nothing is selected.
    pub threshold: f64,
    /// π̂₀ (Storey), else 1.
    pub null_proportion: f64,
}

/// The first p-value outside [0, 1] (or NaN), with its index.
fn first_invalid(p: &[f64]) -> Option<(usize, f64)> {
    let bad = |(i, &v): (usize, &f64)| (!(0.0..=1.0).contains(&v)).then_some((i, v));
    if p.len() < PARALLEL_MIN {
        p.iter().enumerate().find_map(bad)
    } else {
        p.par_iter()
            .enumerate()
            .find_first(|&(_, &v)| !(0.0..=1.0).contains(&v))
            .map(|(i, &v)| (i, v))
    }
}

fn count_where(p: &[f64], f: impl Fn(f64) -> bool + Sync + Send) -> usize {
    if p.len() < PARALLEL_MIN {
        p.iter().filter(|&&v| f(v)).count()
    } else {
        p.par_chunks(CHUNK)
            .map(|c| c.iter().filter(|&&v| f(v)).count())
            .sum()
    }
}

/// The thresholds t(k) of a procedure on m p-values, written as the
/// sort-based implementations write them (statsmodels' fdrcorrection:
/// ecdf·α, ecdf/c(m)·α).
struct Thresholds {
    m: f64,
    level: f64,
    by_factor: Option<f64>,
}

impl Thresholds {
    #[inline]
    fn t(&self, k: usize) -> f64 {
        let ecdf = k as f64 / self.m;
        match self.by_factor {
            None => ecdf * self.level,
            Some(c) => ecdf / c * self.level,
        }
    }

    /// The smallest k with p ≤ t(k), for p ≤ t(m).
    #[inline]
    fn first_k(&self, v: f64, m: usize) -> usize {
        let mut k = ((v / self.t(1)).ceil() as usize).clamp(1, m);
        while k > 1 && v <= self.t(k - 1) {
            k -= 1;
        }
        while k < m && v > self.t(k) {
            k += 1;
        }
        k
    }
}

/// How many p-values have each k ∈ 1..=`candidates` as their smallest k
/// (index k of the result).
fn bucket_counts(p: &[f64], th: &Thresholds, candidates: usize) -> Vec<u32> {
    let m = p.len();
    let top = th.t(m);
    let bucket = |mut counts: Vec<u32>, chunk: &[f64]| {
        for &v in chunk {
            if v <= top {
                let k = th.first_k(v, m);
                if k <= candidates {
                    counts[k] += 1;
                }
            }
        }
        counts
    };
    if m < PARALLEL_MIN {
        return bucket(vec![0u32; candidates + 1], p);
    }
    p.par_chunks(CHUNK)
        .fold(|| vec![0u32; candidates + 1], bucket)
        .reduce(
            || vec![0u32; candidates + 1],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    *x += y;
                }
                a
            },
        )
}

fn write_mask(p: &[f64], threshold: f64, mask: &mut [bool]) {
    if p.len() < PARALLEL_MIN {
        for (d, &v) in mask.iter_mut().zip(p) {
            *d = v <= threshold;
        }
    } else {
        mask.par_chunks_mut(CHUNK)
            .zip(p.par_chunks(CHUNK))
            .for_each(|(d, s)| {
                for (x, &v) in d.iter_mut().zip(s) {
                    *x = v <= threshold;
                }
            });
    }
}

fn check(p: &[f64], alpha: f64, procedure: Procedure, mask: &[bool]) -> Result<(), Error> {
    if p.len() != mask.len() {
        return Err(Error::ShapeMismatch(format!(
            "p-values ({}) and mask ({}) differ in length",
            p.len(),
            mask.len()
        )));
    }
    if !(alpha > 0.0 && alpha <= 1.0) {
        return Err(Error::invalid(
            "alpha",
            format!("must be in (0, 1], got {alpha}"),
        ));
    }
    if let Procedure::Storey { lambda } = procedure {
        if !(lambda > 0.0 && lambda < 1.0) {
            return Err(Error::invalid(
                "lam",
                format!("must be in (0, 1), got {lambda}"),
            ));
        }
    }
    if let Some((index, value)) = first_invalid(p) {
        return Err(Error::InvalidProbability { index, value });
    }
    Ok(())
}

/// Selects from the p-values `p` at level `alpha` into `mask` (same
/// length): `mask[i]` is whether `p[i]` is selected.
pub fn select(
    p: &[f64],
    alpha: f64,
    procedure: Procedure,
    mask: &mut [bool],
) -> Result<Selection, Error> {
    check(p, alpha, procedure, mask)?;
    let m = p.len();
    let mf = m as f64;
    let mut null_proportion = 1.0;
    let th = match procedure {
        Procedure::Storey { lambda } if m > 0 => {
            let above = count_where(p, |v| v > lambda);
            null_proportion = (1 + above) as f64 / (mf * (1.0 - lambda));
            Thresholds {
                m: mf,
                level: alpha / null_proportion,
                by_factor: None,
            }
        }
        // Storey without p-values: nothing to estimate π̂₀ from (its formula
        // divides by m); reported as 1, as BH reports it.
        Procedure::BenjaminiHochberg | Procedure::Storey { .. } => Thresholds {
            m: mf,
            level: alpha,
            by_factor: None,
        },
        Procedure::BenjaminiYekutieli => {
            let mut c = Neumaier::default();
            for i in 1..=m {
                c.add(1.0 / i as f64);
            }
            Thresholds {
                m: mf,
                level: alpha,
                by_factor: Some(c.value()),
            }
        }
    };
    let none = Selection {
        count: 0,
        threshold: 0.0,
        null_proportion,
    };
    mask.fill(false);
    if m == 0 {
        return Ok(none);
    }
    let top = th.t(m);
    let candidates = count_where(p, |v| v <= top);
    if candidates == 0 {
        return Ok(none);
    }
    let counts = bucket_counts(p, &th, candidates);
    let mut below = 0usize;
    let mut best = 0usize;
    for (k, &c) in counts.iter().enumerate().skip(1) {
        below += c as usize;
        if below >= k {
            best = k;
        }
    }
    if best == 0 {
        return Ok(none);
    }
    let threshold = th.t(best);
    write_mask(p, threshold, mask);
    Ok(Selection {
        count: best,
        threshold,
        null_proportion,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The sort-based step-up procedure (statsmodels' formulation).
    fn sorted_step_up(p: &[f64], t: impl Fn(usize) -> f64) -> Vec<bool> {
        let mut order: Vec<usize> = (0..p.len()).collect();
        order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
        let mut last = None;
        for (rank, &i) in order.iter().enumerate() {
            if p[i] <= t(rank + 1) {
                last = Some(rank);
            }
        }
        let mut mask = vec![false; p.len()];
        if let Some(r) = last {
            for &i in &order[..=r] {
                mask[i] = true;
            }
        }
        mask
    }

    #[test]
    fn no_pvalues_select_nothing_with_a_finite_null_proportion() {
        for procedure in [
            Procedure::BenjaminiHochberg,
            Procedure::Storey { lambda: 0.5 },
            Procedure::BenjaminiYekutieli,
        ] {
            let s = select(&[], 0.1, procedure, &mut []).unwrap();
            assert_eq!((s.count, s.threshold, s.null_proportion), (0, 0.0, 1.0));
        }
    }

    proptest! {
        #[test]
        fn equals_the_sorted_procedure(
            grid in prop::collection::vec(0u32..=40, 0..200),
            alpha in prop::sample::select(vec![0.05, 0.1, 0.2, 0.5, 1.0]),
        ) {
            // p-values on a grid, as conformal p-values are: many ties.
            let p: Vec<f64> = grid.iter().map(|&g| f64::from(g) / 40.0).collect();
            let m = p.len() as f64;
            let mut mask = vec![false; p.len()];
            let s = select(&p, alpha, Procedure::BenjaminiHochberg, &mut mask).unwrap();
            let want = sorted_step_up(&p, |k| k as f64 / m * alpha);
            prop_assert_eq!(&mask, &want);
            prop_assert_eq!(s.count, want.iter().filter(|&&b| b).count());
            let c: f64 = (1..=p.len()).map(|i| 1.0 / i as f64).sum();
            select(&p, alpha, Procedure::BenjaminiYekutieli, &mut mask).unwrap();
            prop_assert_eq!(&mask, &sorted_step_up(&p, |k| k as f64 / m / c * alpha));
            let s = select(&p, alpha, Procedure::Storey { lambda: 0.5 }, &mut mask).unwrap();
            let pi0 = (1 + p.iter().filter(|&&v| v > 0.5).count()) as f64 / (m * 0.5);
            prop_assert_eq!(s.null_proportion, if p.is_empty() { 1.0 } else { pi0 });
            let level = alpha / pi0;
            prop_assert_eq!(&mask, &sorted_step_up(&p, |k| k as f64 / m * level));
        }
    }

    #[test]
    fn refuses_bad_input() {
        let mut mask = [false; 2];
        assert!(select(
            &[0.1, f64::NAN],
            0.1,
            Procedure::BenjaminiHochberg,
            &mut mask
        )
        .is_err());
        assert!(select(&[0.1, 1.5], 0.1, Procedure::BenjaminiHochberg, &mut mask).is_err());
        assert!(select(&[0.1, 0.5], 0.0, Procedure::BenjaminiHochberg, &mut mask).is_err());
        assert!(select(
            &[0.1, 0.5],
            0.1,
            Procedure::Storey { lambda: 1.0 },
            &mut mask
        )
        .is_err());
        let s = select(&[0.01, 0.5], 0.05, Procedure::BenjaminiHochberg, &mut mask).unwrap();
        assert_eq!((s.count, mask), (1, [true, false]));
    }
}
