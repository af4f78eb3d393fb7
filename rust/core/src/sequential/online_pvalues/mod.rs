//! Online conformal p-values (contract §12): each score is ranked against
//! every earlier score of the stream and itself (Vovk, Nouretdinov &
//! Gammerman, *Testing exchangeability on-line*, ICML 2003; Vovk, Gammerman
//! & Shafer, *Algorithmic Learning in a Random World*, 2nd ed. 2022, §2.3,
//! §8.1).
//!
//! The n-th score s_n (oriented: higher is more anomalous) gets
//!
//! p_n = (#{i ≤ n : s_i > s_n} + θ_n·#{i ≤ n : s_i = s_n}) / n,
//!
//! θ_n uniform in (0, 1] (smoothed; the count of equal scores includes s_n
//! itself, so p_n > 0), or θ_n = 1 (`smoothed = false`: conservative,
//! super-uniform). If the scores are exchangeable, the smoothed p₁, p₂, …
//! are independent and uniform on (0, 1] (Vovk et al. 2003, Theorem 1) —
//! what the martingales of [`crate::sequential::martingale`] need for
//! Ville's bound. p-values against a *fixed* calibration set are only
//! marginally valid: they share the calibration set, are dependent, and a
//! martingale fed with them can grow under exchangeability.
//!
//! θ_n is 1 − U, U output j = n − 1 (the score's 0-based position in the
//! stream) of the SplitMix64 stream seeded with `seed`
//! ([`crate::conformal::uniform`], as `ConformalScaler`'s randomised tie
//! breaking): the same stream position gets the same θ after a checkpoint,
//! in any batching.
//!
//! The earlier scores live in a few sorted runs of their order keys,
//! merged like a log-structured merge tree ([`runs`]): a batch is sorted
//! once, counted against each run (O(log n) runs) and against itself, then
//! stored by sequential merges — 8–16 bytes per distinct score. The counts
//! are integers, so the p-values do not depend on the batching or the
//! runs' layout. Sorted runs rather than a search tree with one descent
//! per score: once the scores outgrow the cache, a descent waits on a miss
//! at each level, while a batch's keys walk the runs in order and fetch
//! their buckets ahead. Rather than a Fenwick tree: a Fenwick tree needs
//! the key space up front, and the scores of an endless stream are not
//! known in advance.

mod runs;

use crate::conformal::uniform;
use crate::error::Error;
use crate::numeric::float::{from_order_key, order_key};
use runs::Runs;

/// The most scores a state holds: 2⁵³, so that n and every count are
/// exact doubles.
pub const MAX_SCORES: u64 = crate::limits::COUNT.max;

/// The state of the online p-values as plain data.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Parts {
    /// Scores seen.
    pub n: u64,
    /// The distinct scores, ascending (as given, not oriented).
    pub scores: Vec<f64>,
    /// How often each was seen.
    pub counts: Vec<u64>,
}

/// Online conformal p-values of a stream of scores. Equality is that of
/// the parameters and the multiset of scores, not of the runs' layout.
#[derive(Debug, Clone)]
pub struct OnlinePvalues {
    pub(super) seed: u64,
    pub(super) negate: bool,
    pub(super) smoothed: bool,
    runs: Runs,
}

impl PartialEq for OnlinePvalues {
    fn eq(&self, other: &Self) -> bool {
        (self.seed, self.negate, self.smoothed) == (other.seed, other.negate, other.smoothed)
            && self.parts() == other.parts()
    }
}

/// `s` oriented (higher is more anomalous) with −0 as +0, as its order key.
#[inline(always)]
fn key(s: f64, negate: bool) -> u64 {
    let x = if negate { -s } else { s };
    order_key(x + 0.0)
}

fn check_scores(scores: &[f64]) -> Result<(), Error> {
    match scores.iter().position(|s| s.is_nan()) {
        None => Ok(()),
        Some(i) => Err(Error::invalid(
            "scores",
            format!("scores[{i}] is NaN: a NaN score has no rank; drop it before the stream"),
        )),
    }
}

impl OnlinePvalues {
    /// No score seen; `negate` for scores where lower is more anomalous.
    pub fn new(seed: u64, negate: bool, smoothed: bool) -> Self {
        OnlinePvalues {
            seed,
            negate,
            smoothed,
            runs: Runs::default(),
        }
    }

    /// Scores seen.
    pub fn n(&self) -> u64 {
        self.runs.len()
    }

    fn check_room(&self, more: usize) -> Result<(), Error> {
        crate::limits::check_room("scores", self.n(), more).map(|_| ())
    }

    /// The p-value of each score against the earlier ones (this batch's
    /// too) into `out`; θ from the stream, or from `uniforms` (each in
    /// [0, 1]) when given. Whole batch or nothing: a NaN score or a bad
    /// uniform changes no state.
    pub fn pvalues(
        &mut self,
        scores: &[f64],
        uniforms: Option<&[f64]>,
        out: &mut [f64],
    ) -> Result<(), Error> {
        if out.len() != scores.len() || uniforms.is_some_and(|u| u.len() != scores.len()) {
            return Err(Error::ShapeMismatch(format!(
                "{} scores need as many outputs and uniforms",
                scores.len()
            )));
        }
        check_scores(scores)?;
        if let Some(u) = uniforms {
            if let Some(i) = u.iter().position(|x| !(0.0..=1.0).contains(x)) {
                return Err(Error::invalid(
                    "uniforms",
                    format!("uniforms[{i}] = {} is not in [0, 1]", u[i]),
                ));
            }
        }
        self.check_room(scores.len())?;
        let start = self.runs.len();
        let theta = |j: usize| match uniforms {
            Some(u) => u[j],
            None if self.smoothed => 1.0 - uniform(self.seed, start + j as u64),
            None => 1.0,
        };
        let p = |j: usize, greater: u64, equal: u64| {
            (greater as f64 + theta(j) * (equal + 1) as f64) / (start + j as u64 + 1) as f64
        };
        let keys: Vec<u64> = scores.iter().map(|&s| key(s, self.negate)).collect();
        let (mut greater, mut equal) = (vec![0; keys.len()], vec![0; keys.len()]);
        self.runs.insert_batch(&keys, &mut greater, &mut equal);
        for (j, out) in out.iter_mut().enumerate() {
            *out = p(j, greater[j], equal[j]);
        }
        Ok(())
    }

    /// Adds scores without computing their p-values (a warm-up).
    pub fn update(&mut self, scores: &[f64]) -> Result<(), Error> {
        check_scores(scores)?;
        self.check_room(scores.len())?;
        let keys: Vec<u64> = scores.iter().map(|&s| key(s, self.negate)).collect();
        self.runs.insert_all(&keys);
        Ok(())
    }

    /// The state as plain data.
    pub fn parts(&self) -> Parts {
        let (mut scores, mut counts) = (Vec::new(), Vec::new());
        self.runs.for_each(|k, c| {
            let x = from_order_key(k);
            scores.push(if self.negate { -x } else { x });
            counts.push(c);
        });
        if self.negate {
            scores.reverse();
            counts.reverse();
        }
        Parts {
            n: self.n(),
            scores,
            counts,
        }
    }

    /// The state of [`parts`](Self::parts), checked: scores strictly
    /// increasing and not NaN, counts ≥ 1 summing to n ≤ 2⁵³.
    pub fn from_parts(seed: u64, negate: bool, smoothed: bool, p: &Parts) -> Result<Self, Error> {
        let bad = |name: &'static str, why: String| Err(Error::invalid(name, why));
        if p.scores.len() != p.counts.len() {
            return bad(
                "counts",
                format!("{} scores but {} counts", p.scores.len(), p.counts.len()),
            );
        }
        if let Some(i) = p.scores.iter().position(|s| s.is_nan()) {
            return bad("scores", format!("scores[{i}] is NaN"));
        }
        if let Some(i) = p.scores.windows(2).position(|w| w[0] >= w[1]) {
            return bad(
                "scores",
                format!(
                    "must be distinct and increasing, but scores[{i}] = {} ≥ scores[{}] = {}",
                    p.scores[i],
                    i + 1,
                    p.scores[i + 1]
                ),
            );
        }
        let mut total: u64 = 0;
        for (i, &c) in p.counts.iter().enumerate() {
            if c == 0 {
                return bad("counts", format!("counts[{i}] is 0"));
            }
            total = total.saturating_add(c);
        }
        if total != p.n || p.n > MAX_SCORES {
            return bad(
                "n",
                format!(
                    "{} scores seen, but the counts add up to {total} (at most 2^53)",
                    p.n
                ),
            );
        }
        let mut pairs: Vec<(u64, u64)> = p
            .scores
            .iter()
            .zip(&p.counts)
            .map(|(&s, &c)| (key(s, negate), c))
            .collect();
        if negate {
            pairs.reverse();
        }
        let keys: Vec<u64> = pairs.iter().map(|x| x.0).collect();
        let counts: Vec<u64> = pairs.iter().map(|x| x.1).collect();
        Ok(OnlinePvalues {
            seed,
            negate,
            smoothed,
            runs: Runs::from_sorted(&keys, &counts),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, O(n²): each score against all earlier ones and
    /// itself, with the same θ.
    fn brute(scores: &[f64], seed: u64) -> Vec<f64> {
        (0..scores.len())
            .map(|n| {
                let s = scores[n];
                let greater = scores[..=n].iter().filter(|&&x| x > s).count() as f64;
                let equal = scores[..=n].iter().filter(|&&x| x == s).count() as f64;
                (greater + (1.0 - uniform(seed, n as u64)) * equal) / (n + 1) as f64
            })
            .collect()
    }

    #[test]
    fn equal_to_the_definition_in_any_batching() {
        let scores: Vec<f64> = (0..2000u64)
            .map(|j| (uniform(3, j) * 40.0).round() / 4.0 - 5.0) // many ties
            .chain([0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY])
            .collect();
        let want = brute(&scores, 11);
        for cut in [0, 1, 999, scores.len()] {
            let mut o = OnlinePvalues::new(11, false, true);
            let mut got = vec![0.0; scores.len()];
            o.pvalues(&scores[..cut], None, &mut got[..cut]).unwrap();
            let mut o = OnlinePvalues::from_parts(11, false, true, &o.parts()).unwrap();
            o.pvalues(&scores[cut..], None, &mut got[cut..]).unwrap();
            assert_eq!(got, want);
        }
        // Lower is more anomalous: the negated scores' p-values.
        let mut low = OnlinePvalues::new(11, true, true);
        let mut got = vec![0.0; scores.len()];
        let neg: Vec<f64> = scores.iter().map(|s| -s).collect();
        low.pvalues(&neg, None, &mut got).unwrap();
        assert_eq!(got, want);
        let back = OnlinePvalues::from_parts(11, true, true, &low.parts()).unwrap();
        assert_eq!(back, low);
    }

    #[test]
    fn bad_input_changes_nothing() {
        let mut o = OnlinePvalues::new(0, false, true);
        o.update(&[1.0, 2.0]).unwrap();
        let before = o.clone();
        let mut out = [0.0; 2];
        let e = o
            .pvalues(&[1.0, f64::NAN], None, &mut out)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("scores: scores[1] is NaN"), "{e}");
        let e = o
            .pvalues(&[1.0, 2.0], Some(&[0.5, 1.5]), &mut out)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("uniforms:"), "{e}");
        assert_eq!(o, before);
        let good = o.parts();
        for (field, p) in [
            (
                "n",
                Parts {
                    n: 3,
                    ..good.clone()
                },
            ),
            (
                "counts",
                Parts {
                    counts: vec![1, 0],
                    ..good.clone()
                },
            ),
            (
                "scores",
                Parts {
                    scores: vec![2.0, 1.0],
                    ..good.clone()
                },
            ),
            (
                "scores",
                Parts {
                    scores: vec![1.0, f64::NAN],
                    ..good.clone()
                },
            ),
        ] {
            let e = OnlinePvalues::from_parts(0, false, true, &p)
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(&format!("{field}:")), "{e}");
        }
    }
}
