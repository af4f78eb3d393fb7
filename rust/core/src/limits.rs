//! The bounds of every size and count parameter (contract §5, "Bounds of
//! size and count parameters"): one table, each entry checked by the core
//! function or constructor that takes the parameter before anything is
//! allocated, its error naming the parameter.
//!
//! A size parameter without a bound turns a typo into an allocation the
//! process cannot survive (Rust aborts on a failed allocation; no
//! exception reaches Python) or a call that never returns. So every bound
//! is either what an algorithm needs (the KLL sketch's k, DataSketches'
//! range), what keeps counts exact as doubles (2⁵³, the most scores a
//! stream counts), or a budget far beyond any useful value that still
//! bounds the memory and work of a call (bins, iterations, simulations).
//!
//! This module depends on nothing but the error type: the modules that
//! take a parameter read its bound here (`MAX_WINDOW`, `MAX_COUNT`,
//! `MAX_ITER`, `MAX_BINS` are these numbers).
//!
//! The binding exports [`ALL`] so that the Python layer checks a Python
//! int of any size against these same numbers before it crosses (an int
//! beyond 64 bits cannot cross at all): the rule lives here, Python only
//! converts.

use crate::error::Error;

/// The most scores a stream counts, and the bound of every count: 2⁵³.
const MAX_COUNT: u64 = 1 << 53;

/// The inclusive range of one integer parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// The parameter as the user spells it (errors name it).
    pub name: &'static str,
    /// Smallest value accepted.
    pub min: u64,
    /// Largest value accepted.
    pub max: u64,
}

impl Limit {
    /// The range `[min, max]` of the parameter `name`.
    pub const fn new(name: &'static str, min: u64, max: u64) -> Limit {
        Limit { name, min, max }
    }

    /// `value` if it is in `[min, max]`, else an error naming the
    /// parameter and its range.
    pub fn check(self, value: u64) -> Result<u64, Error> {
        if value < self.min {
            Err(Error::invalid(
                self.name,
                format!("must be at least {}, got {value}", self.min),
            ))
        } else if value > self.max {
            Err(Error::invalid(
                self.name,
                format!("must be at most {}, got {value}", self.max),
            ))
        } else {
            Ok(value)
        }
    }

    /// `value` if it is a real number in `[min, max]` (a bound on a real
    /// parameter such as a half-life), else an error naming the parameter
    /// and its range; NaN is outside every range.
    pub fn check_real(self, value: f64) -> Result<f64, Error> {
        // Bounds up to 2⁵³ are exact doubles (§5's counts), so the
        // comparison is that of the integers.
        if value >= self.min as f64 && value <= self.max as f64 {
            Ok(value)
        } else {
            Err(Error::invalid(
                self.name,
                format!(
                    "must be a number in [{}, {}], got {value}",
                    self.min, self.max
                ),
            ))
        }
    }

    /// [`Limit::check`] of a `usize` (every `usize` fits a `u64`).
    pub fn check_usize(self, value: usize) -> Result<usize, Error> {
        self.check(value as u64).map(|_| value)
    }

    /// This bound under another name (a count stored as `"n"`, say).
    #[must_use]
    pub const fn named(self, name: &'static str) -> Limit {
        Limit { name, ..self }
    }
}

/// The count after a batch of `more` values joins `seen`, if it stays
/// within [`COUNT`]: a stream that would pass 2⁵³ refuses the batch whole,
/// before anything changes, so its counts stay exact doubles and never wrap.
pub fn check_room(name: &'static str, seen: u64, more: usize) -> Result<u64, Error> {
    let total = seen.saturating_add(more as u64);
    if total > COUNT.max {
        return Err(Error::invalid(
            name,
            format!(
                "a stream counts at most 2^53 values; {seen} are counted and {more} more given"
            ),
        ));
    }
    Ok(total)
}

/// Simulated calibration sets of the Monte Carlo adjustment (§11): each
/// keeps one critical constant (8 bytes, so at most 80 MB) and costs n
/// draws; γ is an order statistic of the constants, whose simulation error
/// `√(δ(1 − δ)/m)` is below 10⁻⁴ long before the bound. At least 100, so
/// that a fraction δ of them is a count.
pub const MC_SIMULATIONS: Limit = Limit::new("mc_simulations", 100, 10_000_000);

/// Calibration scores of a Simes or Monte Carlo adjustment (§11): it
/// tabulates b₁…bₙ beside the Simes window sums (16 bytes a score, so at
/// most 256 MiB), and the Monte Carlo correction keeps n + 1 spacings per
/// thread and draws `mc_simulations · n` (1.7·10¹¹ at the default). For a
/// sketch n counts every score seen, not the few thousand it holds, so
/// without this bound a long stream grows the table without limit; DKWM
/// (O(1)) has none.
pub const ADJUSTED_N: Limit = Limit::new("calibration", 1, 1 << 24);

/// The generalised Simes parameter k (§11): capped at n when used, so
/// only its crossing matters; a count as §5's others.
pub const SIMES_K: Limit = Limit::new("simes_k", 1, MAX_COUNT);

/// A window's length W (§9): its buffer holds up to 2W scores.
pub const WINDOW: Limit = Limit::new("window", 1, 1 << 32);

/// Scores between a window's refits (§9): a count of scores.
pub const REFIT_EVERY: Limit = Limit::new("refit_every", 1, MAX_COUNT);

/// The KLL sketch's k (§9): DataSketches' range (the smallest level
/// holds 8 items; k is stored in 16 bits).
pub const SKETCH_K: Limit = Limit::new("k", 8, u16::MAX as u64);

/// Scores a stream counts (§9): 2⁵³, exact as doubles, and two counts
/// never wrap a `u64`.
pub const COUNT: Limit = Limit::new("n_samples_seen_", 0, MAX_COUNT);

/// Delta degrees of freedom of the standard deviation: a count of scores.
pub const DDOF: Limit = Limit::new("ddof", 0, MAX_COUNT);

/// Iterations of §3's M-estimation (the inner loop may take as many per
/// outer step: at most 10⁶ passes).
pub const MAXITER: Limit = Limit::new("maxiter", 1, 1_000);

/// EM iterations of the sigmoid and mixture fits (§10): each is one pass;
/// they stop at convergence, so the bound is a count as §5's others.
pub const EM_MAXITER: Limit = Limit::new("maxiter", 1, MAX_COUNT);

/// The k of top-k scaling (§10): capped at n when used.
pub const TOP_K: Limit = Limit::new("k", 1, MAX_COUNT);

/// Bins of one binning (§6): the edges take 8 bytes each.
pub const BINS: Limit = Limit::new("n_bins", 1, 1_000_000);

/// Bin counts averaged over in one call (§6): the work is their sum.
pub const BIN_COUNTS: Limit = Limit::new("n_bins", 1, 1_000);

/// Points of the mixture martingale's grid of ε (§12): one power
/// martingale each, updated at every step.
pub const N_GRID: Limit = Limit::new("n_grid", 2, 1 << 16);

/// Terms of a finite γ sequence of the online FDR rules (§12): the rule
/// keeps them, 8 bytes each, and drops rejections older than their count.
pub const GAMMA_TERMS: Limit = Limit::new("gamma", 1, 1 << 32);

/// A seed: any 64-bit value.
pub const SEED: Limit = Limit::new("seed", 0, u64::MAX);

/// Threads of one call: each count gets a thread pool that is kept.
pub const THREADS: Limit = Limit::new("threads", 1, 1024);

/// A decayed fit's half-life h, in scores (§12): a real number. Below one
/// score the newest score would outweigh the rest by more than 2:1 per
/// step and epochs would be shorter than a score; at 2⁴⁰ the decay per
/// score, 2^(−1/h), is still distinct from 1 as a double.
pub const HALF_LIFE: Limit = Limit::new("half_life", 1, 1 << 40);

/// Epochs per half-life of a decayed fit (§12): one KLL sketch each, and
/// `horizon` half-lives of them are kept.
pub const EPOCHS_PER_HALF_LIFE: Limit = Limit::new("epochs_per_half_life", 1, 1024);

/// Half-lives of epochs a decayed fit keeps (§12): the dropped weight share
/// 2^(−H)/(1 − 2^(−H)) is below a double's resolution long before 64.
pub const HORIZON: Limit = Limit::new("horizon", 1, 64);

/// Scores between a drift alarm and its refit (§12): 0 refits at once.
pub const REFIT_DELAY: Limit = Limit::new("delay", 0, 1 << 32);

/// Every bound, by the key the Python layer looks it up with.
pub const ALL: [(&str, Limit); 21] = [
    ("mc_simulations", MC_SIMULATIONS),
    ("adjusted_n", ADJUSTED_N),
    ("simes_k", SIMES_K),
    ("window", WINDOW),
    ("refit_every", REFIT_EVERY),
    ("sketch_k", SKETCH_K),
    ("count", COUNT),
    ("ddof", DDOF),
    ("maxiter", MAXITER),
    ("em_maxiter", EM_MAXITER),
    ("top_k", TOP_K),
    ("bins", BINS),
    ("bin_counts", BIN_COUNTS),
    ("n_grid", N_GRID),
    ("gamma_terms", GAMMA_TERMS),
    ("seed", SEED),
    ("threads", THREADS),
    ("half_life", HALF_LIFE),
    ("epochs_per_half_life", EPOCHS_PER_HALF_LIFE),
    ("horizon", HORIZON),
    ("refit_delay", REFIT_DELAY),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_refuses_outside_its_range_naming_the_parameter() {
        for (_, limit) in ALL {
            assert_eq!(limit.check(limit.min), Ok(limit.min));
            assert_eq!(limit.check(limit.max), Ok(limit.max));
            if limit.min > 0 {
                let e = limit.check(limit.min - 1).unwrap_err().to_string();
                assert!(e.starts_with(limit.name) && e.contains("at least"), "{e}");
            }
            if limit.max < u64::MAX {
                let e = limit.check(limit.max + 1).unwrap_err().to_string();
                assert!(e.starts_with(limit.name) && e.contains("at most"), "{e}");
                assert!(limit.check(u64::MAX).is_err());
            }
        }
    }

    #[test]
    fn a_real_limit_refuses_nan_and_outside() {
        assert_eq!(HALF_LIFE.check_real(1.0), Ok(1.0));
        assert_eq!(
            HALF_LIFE.check_real(1_099_511_627_776.0),
            Ok(1_099_511_627_776.0)
        );
        for bad in [0.999, f64::NAN, f64::INFINITY, -1.0, 1_099_511_627_776.5] {
            let e = HALF_LIFE.check_real(bad).unwrap_err().to_string();
            assert!(
                e.starts_with("half_life") && e.contains("[1, 1099511627776]"),
                "{e}"
            );
        }
    }

    #[test]
    fn keys_are_unique_and_bounds_ordered() {
        for (i, (key, limit)) in ALL.iter().enumerate() {
            assert!(limit.min <= limit.max, "{key}");
            assert!(ALL[..i].iter().all(|(k, _)| k != key), "{key}");
            // §5: counts are bounded by 2^53 or tighter (seeds excepted).
            assert!(*key == "seed" || limit.max <= 1 << 53, "{key}");
        }
    }

    #[test]
    fn a_stream_counts_up_to_two_to_the_53() {
        assert_eq!(check_room("n", 0, 0), Ok(0));
        assert_eq!(check_room("n", COUNT.max - 3, 3), Ok(COUNT.max));
        let e = check_room("n", COUNT.max - 3, 4).unwrap_err().to_string();
        assert!(e.starts_with("n:") && e.contains("2^53"), "{e}");
        assert!(check_room("n", u64::MAX, usize::MAX).is_err());
        assert_eq!(COUNT.named("n").check(5), Ok(5));
        assert!(COUNT
            .named("n")
            .check(COUNT.max + 1)
            .unwrap_err()
            .to_string()
            .starts_with("n:"));
    }
}
