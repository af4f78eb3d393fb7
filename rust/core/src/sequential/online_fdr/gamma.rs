//! The γ sequences of the online FDR rules (contract §12): the papers'
//! defaults, evaluated by their formulas, or a finite sequence given by
//! the user (zero after its last term).

use crate::error::Error;
use crate::numeric::sum::TwoSum;

/// Javanmard & Montanari's (2018, eq. 31) constant, which makes the LORD
/// sequence sum to 1.
pub const LORD_C: f64 = 0.077_208_38;
/// 1/ζ(1.6): the SAFFRON sequence c·j^−1.6 sums to 1.
pub const SAFFRON_C: f64 = 0.437_490_165_8;
/// The SAFFRON sequence's exponent.
pub const SAFFRON_EXPONENT: f64 = 1.6;
/// A given sequence may sum to 1 plus this much (its terms' rounding).
pub const SUM_SLACK: f64 = 1e-12;
/// The longest sequence accepted: 2^32 terms (`crate::limits::GAMMA_TERMS`).
pub const MAX_LEN: usize = crate::limits::GAMMA_TERMS.max as usize;

/// γ_j for j ≥ 1: non-negative, non-increasing, Σγ ≤ 1.
#[derive(Debug, Clone, PartialEq)]
pub enum Gamma {
    /// LORD's γ_j = C·ln(max(j, 2))/(j·e^√(ln j)) (LOND, LORD++).
    Lord,
    /// SAFFRON's γ_j = C·j^−1.6 (SAFFRON, ADDIS).
    Saffron,
    /// γ_j = terms[j − 1], and 0 beyond the last term.
    Given(Vec<f64>),
}

impl Gamma {
    /// A given sequence, checked: 1 to 2^32 finite terms, none negative,
    /// non-increasing (the rules' guarantees need it), summing to at most 1.
    pub fn given(terms: Vec<f64>) -> Result<Self, Error> {
        crate::limits::GAMMA_TERMS.check_usize(terms.len())?;
        let mut sum = TwoSum::default();
        let mut previous = f64::INFINITY;
        for (j, &g) in terms.iter().enumerate() {
            if !(g.is_finite() && g >= 0.0) {
                return Err(Error::invalid(
                    "gamma",
                    format!("gamma[{j}] = {g}: every term must be finite and non-negative"),
                ));
            }
            if g > previous {
                return Err(Error::invalid(
                    "gamma",
                    format!(
                        "gamma[{j}] = {g} > gamma[{}] = {previous}: the sequence must be \
                         non-increasing",
                        j - 1
                    ),
                ));
            }
            previous = g;
            sum.add(g);
        }
        let total = sum.value();
        if total > 1.0 + SUM_SLACK {
            return Err(Error::invalid(
                "gamma",
                format!("the terms sum to {total}; they must sum to at most 1"),
            ));
        }
        Ok(Gamma::Given(terms))
    }

    /// γ_j (j ≥ 1), evaluated as online-fdr 1.0 and R's onlineFDR write
    /// the formulas, so that both give the same doubles.
    #[inline]
    pub fn at(&self, j: u64) -> f64 {
        debug_assert!(j >= 1);
        match self {
            Gamma::Lord => {
                let x = j as f64;
                LORD_C * x.max(2.0).ln() / (x * x.ln().sqrt().exp())
            }
            Gamma::Saffron => SAFFRON_C / (j as f64).powf(SAFFRON_EXPONENT),
            Gamma::Given(t) => usize::try_from(j - 1)
                .ok()
                .and_then(|i| t.get(i))
                .copied()
                .unwrap_or(0.0),
        }
    }

    /// LOND's β_j = α·γ_j, with online-fdr's order of operations for the
    /// default sequence ((C·α)·(ln(max(j, 2))/(j·e^√(ln j)))).
    #[inline]
    pub fn lond(&self, alpha: f64, j: u64) -> f64 {
        match self {
            Gamma::Lord => {
                let x = j as f64;
                LORD_C * alpha * (x.max(2.0).ln() / (x * x.ln().sqrt().exp()))
            }
            _ => alpha * self.at(j),
        }
    }

    /// The last j with γ_j possibly > 0: the length of a given sequence.
    pub fn horizon(&self) -> Option<u64> {
        match self {
            Gamma::Given(t) => Some(t.len() as u64),
            _ => None,
        }
    }

    /// The terms of a given sequence.
    pub fn terms(&self) -> Option<&[f64]> {
        match self {
            Gamma::Given(t) => Some(t),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_papers_formulas() {
        // γ₁ of LORD: C·ln 2 (the first alphai of R onlineFDR's LOND
        // example, 0.0026758385 = 0.05·γ₁).
        assert!((Gamma::Lord.lond(0.05, 1) - 0.002_675_838_5).abs() < 5e-11);
        assert_eq!(Gamma::Saffron.at(1), SAFFRON_C);
        for j in 1..2000 {
            assert!(Gamma::Lord.at(j + 1) <= Gamma::Lord.at(j));
            assert!(Gamma::Saffron.at(j + 1) <= Gamma::Saffron.at(j));
        }
        let lord: f64 = (1..200_000).map(|j| Gamma::Lord.at(j)).sum();
        let saffron: f64 = (1..200_000).map(|j| Gamma::Saffron.at(j)).sum();
        assert!(lord < 1.0 && saffron < 1.0, "{lord} {saffron}");
        assert!(Gamma::Lord.at(1 << 40) > 0.0 && Gamma::Saffron.at(u64::MAX) >= 0.0);
    }

    #[test]
    fn given_sequences_are_checked() {
        assert!(Gamma::given(vec![0.5, 0.25, 0.25]).is_ok());
        let g = Gamma::given(vec![0.5, 0.5]).unwrap();
        assert_eq!((g.at(2), g.at(3), g.horizon()), (0.5, 0.0, Some(2)));
        for bad in [
            vec![],
            vec![0.6, 0.6],
            vec![0.1, 0.2],
            vec![-0.1],
            vec![f64::NAN],
            vec![f64::INFINITY],
        ] {
            let e = Gamma::given(bad).unwrap_err().to_string();
            assert!(e.starts_with("gamma:"), "{e}");
        }
        // A normalised sequence whose rounded terms sum to 1 + a few ulp.
        let raw: Vec<f64> = (1..=7).map(|j| 1.0 / f64::from(j)).collect();
        let s: f64 = raw.iter().sum();
        assert!(Gamma::given(raw.iter().map(|g| g / s).collect()).is_ok());
    }
}
