//! Every bound of `outprob_core::limits` against the core function or
//! constructor that takes the parameter (contract §5, "Bounds of size and
//! count parameters"): a value outside the bound is refused with an error
//! naming the parameter, before anything is allocated (under the fuzzer's
//! memory limit, a size allocated first would end the run); a value
//! inside is not refused for the bound (the call may still refuse the
//! data for a reason the contract names). In-range calls whose cost grows
//! with the value (simulations, tables) are made only for small values.

use crate::input::Input;
use outprob_core::conformal::calibration::ConformalSpec;
use outprob_core::conformal::conditional::{monte_carlo_correction, Adjustment, Conditional};
use outprob_core::conformal::pvalues::TieBreak;
use outprob_core::estimators::mest::{MParams, Norm};
use outprob_core::evaluation::binning::{check_bin_counts, Scheme, Sorted};
use outprob_core::limits::{Limit, ALL};
use outprob_core::sample::NanPolicy;
use outprob_core::sequential::martingale::{Kind, OnAlarm, Spec as MartingaleSpec, Statistic};
use outprob_core::sequential::online_fdr::gamma::Gamma;
use outprob_core::streaming::kll::{check_k, KllSketch};
use outprob_core::streaming::stored::check_count;
use outprob_core::streaming::window::Window;
use outprob_core::transformations::fit::{Center, GaussianSpec, Scale};
use outprob_core::transformations::mixture::fit_mixture;
use outprob_core::transformations::rank::fit_top_k;
use outprob_core::transformations::sigmoid::fit_sigmoid;
use outprob_core::Error;

/// A value about `limit`: its ends and their neighbours, the ends of u64,
/// or any value.
fn value(r: &mut Input<'_>, limit: Limit) -> u64 {
    match r.byte() % 12 {
        0 => limit.min.saturating_sub(1),
        1 => limit.min,
        2 => limit.min.saturating_add(1),
        3 => limit.max.saturating_sub(1),
        4 => limit.max,
        5 => limit.max.saturating_add(1),
        6 => u64::MAX,
        7 => 0,
        8 => u64::from(r.byte()),
        9 => u64::from(r.u16()),
        _ => u64::from_le_bytes(core::array::from_fn(|_| r.byte())),
    }
}

/// Small enough to run in a fuzzing iteration.
fn cheap(v: u64, most: u64) -> bool {
    v <= most
}

/// The core's answer for `key` at `v`, or None where the target does not
/// call (an in-range value too costly to run; a parameter the binding
/// takes).
fn call(key: &str, v: u64, r: &mut Input<'_>) -> Option<Result<(), Error>> {
    let u = usize::try_from(v).unwrap_or(usize::MAX);
    let inside = |l: Limit| (l.min..=l.max).contains(&v);
    let limit = ALL.iter().find(|(k, _)| *k == key).map(|(_, l)| *l)?;
    Some(match key {
        "mc_simulations" => {
            if inside(limit) && !cheap(v, 400) {
                return None;
            }
            let n = 17 + u64::from(r.byte() % 20);
            monte_carlo_correction(n, 0.1, u, u64::from(r.byte())).map(|_| ())
        }
        "adjusted_n" => {
            if inside(limit) && !cheap(v, 1 << 12) {
                return None;
            }
            let simes = Adjustment::simes(v, 0.1, 1).map(|_| ());
            if v >= 17 && !inside(limit) {
                assert!(Adjustment::monte_carlo(v, 0.1, 0.0).is_err());
                assert!(monte_carlo_correction(v, 0.1, 100, 0).is_err());
            }
            // DKWM has no table: every n is taken.
            assert_eq!(Adjustment::dkwm(v, 0.1).is_ok(), v > 0);
            simes
        }
        "simes_k" => {
            let spec = ConformalSpec::new(
                TieBreak::Classical,
                Some(Conditional::Simes),
                0.1,
                Some(v),
                None,
            )
            .map(|_| ());
            assert_eq!(spec.is_ok(), Adjustment::simes(8, 0.1, v).is_ok());
            spec
        }
        "window" => Window::<f64>::new(u, 0).map(|_| ()),
        // 0 is the core's "refit only on demand" (the Python layer's None).
        "refit_every" if v == 0 => return None,
        "refit_every" => Window::<f64>::new(5, u).map(|_| ()),
        "sketch_k" => match u16::try_from(v) {
            Ok(k) => KllSketch::<f64>::new(k, 0).map(|_| ()),
            Err(_) => check_k(u32::try_from(v).unwrap_or(u32::MAX)).map(|_| ()),
        },
        "count" => check_count("n", v),
        "ddof" => GaussianSpec {
            ddof: u,
            ..GaussianSpec::new(Center::Mean, Scale::Std)
        }
        .check(),
        "maxiter" => MParams {
            maxiter: u,
            ..MParams::new(Norm::Huber)
        }
        .check(),
        // Constant scores: the EM returns before its first step.
        "em_maxiter" => {
            let sigmoid = fit_sigmoid(&[2.0f64; 3], NanPolicy::Omit, false, u).map(|_| ());
            let mixture = fit_mixture(&[2.0f64; 3], NanPolicy::Omit, false, u, 1e-8).map(|_| ());
            assert_eq!(sigmoid.is_ok(), mixture.is_ok());
            sigmoid
        }
        "top_k" => fit_top_k(&[1.0f64, 2.0, 3.0], u, NanPolicy::Omit, false, false).map(|_| ()),
        "bins" => Sorted::new(&[0.25f64, 0.5], None)
            .expect("valid probabilities")
            .edges(Scheme::EqualWidth, u)
            .map(|_| ()),
        "bin_counts" => {
            // A length: only lists that exist can be passed.
            if !cheap(v, 4096) {
                return None;
            }
            check_bin_counts(&vec![5; u])
        }
        "seed" => KllSketch::<f64>::new(8, v).map(|_| ()),
        "n_grid" => MartingaleSpec {
            kind: Kind::Mixture,
            jump: 0.01,
            epsilon: 0.5,
            n_grid: u,
            min_epsilon: 0.01,
            threshold: Some(100.0),
            statistic: Statistic::Martingale,
            on_alarm: OnAlarm::Continue,
        }
        .check(),
        "gamma_terms" => {
            // A length: only sequences that exist can be passed.
            if !cheap(v, 4096) {
                return None;
            }
            Gamma::given(vec![1.0 / 8192.0; u]).map(|_| ())
        }
        // Taken by the binding (its thread pools), not the core.
        _ => return None,
    })
}

/// Bytes → a bound and a value; checks the call that takes it.
pub fn limits(data: &[u8]) {
    let mut r = Input::new(data);
    let (key, limit) = ALL[r.byte() as usize % ALL.len()];
    let v = value(&mut r, limit);
    let Some(outcome) = call(key, v, &mut r) else {
        return;
    };
    let inside = (limit.min..=limit.max).contains(&v);
    match outcome {
        Ok(()) => assert!(
            inside,
            "{key} = {v} accepted outside [{}, {}]",
            limit.min, limit.max
        ),
        Err(e) => {
            let names_bound = match &e {
                // The n of a table is named by the adjustment that asks
                // for it; a stored count by the state it is part of.
                Error::InvalidParameter { name, .. } => {
                    *name == limit.name
                        || (key == "adjusted_n" && *name == "conditional")
                        || (key == "count" && *name == "state")
                }
                _ => false,
            };
            // Below the bound some callers say so in their own words
            // (bins: "at least one bin count"; a sketch's k) — but always
            // naming the parameter.
            assert!(
                !inside || !names_bound,
                "{key} = {v} refused inside its bound: {e}"
            );
            assert!(
                inside || names_bound,
                "{key} = {v} refused without naming it: {e}"
            );
        }
    }
}
