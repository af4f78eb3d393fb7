//! The plan of the distributed fit of one score column (contract §9): which
//! passes ([`Pass`]) a fit needs and the fit read from their partials. An
//! engine (Dask, Spark) runs each pass over every partition and feeds the
//! combined partial back; the loop over passes is the caller's, and the
//! plan never calls out.
//!
//! `method = "exact"` (the estimators of §1–§3 exactly, as in memory):
//!
//! 1. census: counts, §5 census, extremes; the exact moments when the fit
//!    reads the mean or the SD; a KLL sketch when it needs the median,
//!    which then brackets the median and the median deviation, so that one
//!    pass each (the count below the bracket and the values in it) usually
//!    settles them;
//! 2. order statistics: a 2^12-bucket histogram of 64-bit order keys per
//!    open bracket and pass, until a bracket holds at most `collect_max`
//!    values, which are collected and selected;
//! 3. sums below a cut-off (trimmed mean, trimmed SD, the SD about a fixed
//!    center), added exactly over the pieces;
//! 4. M-estimation: the in-memory iteration, its steps' sums read from a
//!    bucket summary of the column (one pass, [`super::msummary`]) and the
//!    scores of the buckets the windows cut (one collect pass, predicted
//!    from the summary) — a step the summary cannot answer reduced in one
//!    pass of direct sums — or taken here from the column, gathered in one
//!    pass, when it holds at most `collect_max` scores; in the in-memory
//!    fit's units (the scores times 2^-e, σ₀·2^-e in [1, 2)), so that no
//!    partition sum of squares overflows or underflows anywhere in the
//!    double range;
//!
//! then the §5 fallback chain, as the in-memory fit runs it, and §5's
//! refusal of a center or scale beyond the double range, with its message.
//!
//! `method = "sketch"`: the streaming fit's result from one census (exact
//! moments, order statistics from the sketch with intervals).
//!
//! The plan is a replay: each step reruns the fit from the start with the
//! partials fed so far, and the first pass it lacks is the next to run.
//! The fit is deterministic, so a rerun asks for the same passes in the
//! same order; what a rerun recomputes is client arithmetic on small
//! partials (the M-estimation of a gathered column, the one costly part,
//! is kept between steps). Trade-off: a fit of p passes does O(p²) of that
//! arithmetic, for a plan with no state machine to keep in step with it.

use core::cell::{Cell, RefCell};

use crate::error::Error;
use std::collections::BTreeMap;

use crate::estimators::mest::{ldexp, unit_exponent, MParams, Norm};
use crate::estimators::scale::{fall_back, NIQR_DIVISOR, NMAD_DIVISOR};
use crate::numeric::float::{from_order_key, order_key};
use crate::numeric::rank::Key;
use crate::numeric::sum::exact_sum;
use crate::streaming::extremes::linear_result;
use crate::streaming::fit::{result_from_sketch, StreamingGaussian, StreamingResult};
use crate::streaming::kll::serde::serialize;
use crate::streaming::kll::KllSketch;
use crate::transformations::fit::{Center, GaussianSpec, Scale};
use crate::transformations::gaussian_options::{Pretransform, PretransformKind};

use super::msummary::{Answer, MSummary};
use super::partition::{
    exact_total, m_iterate_reduced, m_sums, median_value, quantile_ranks, quantile_value, select,
};
use super::pass::{moments_spec, Counts, Partial, Pass, PassKind};

mod ahead;

/// Buckets of a histogram pass: 2^12.
const BUCKET_BITS: u32 = 12;

/// How a column is fitted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Method {
    /// The estimators exactly.
    Exact {
        /// The most values a pass collects for a selection.
        collect_max: u64,
        /// The column's length, if known (sizes the census's sketch).
        n_hint: Option<u64>,
    },
    /// The streaming fit from a census.
    Sketch {
        /// The sketch's k.
        k: u16,
        /// Whether the engine's census is native (no moments unless the
        /// fit reads them).
        native_census: bool,
    },
}

impl Method {
    /// The method named `name` ("exact" or "sketch") with its parameters.
    pub fn named(
        name: &str,
        collect_max: u64,
        n_hint: Option<u64>,
        k: u16,
        native_census: bool,
    ) -> Result<Self, Error> {
        match name {
            "exact" => Ok(Method::Exact {
                collect_max,
                n_hint,
            }),
            "sketch" => Ok(Method::Sketch { k, native_census }),
            other => Err(Error::invalid(
                "method",
                format!("expected 'exact' or 'sketch', got {other:?}"),
            )),
        }
    }
}

/// What to fit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanSpec {
    /// The Gaussian fit (a linear fit reads its NaN policy and
    /// orientation).
    pub spec: GaussianSpec,
    /// ELKI's pretransform (exact Gaussian fits).
    pub pretransform: PretransformKind,
    /// ELKI's fixed center: the SD and nMAD measured about it.
    pub fixed_center: Option<f64>,
    /// A linear fit instead of a Gaussian one.
    pub linear: bool,
    /// How.
    pub method: Method,
}

/// An exact fit of one column.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnFit {
    /// μ (the min of a linear fit).
    pub center: f64,
    /// σ (the max of a linear fit).
    pub scale: f64,
    /// The scale that produced σ ("value" for a fixed σ or a linear fit).
    pub scale_used: &'static str,
    /// Iterations and convergence of the last M-estimate, if one ran.
    pub n_iter: Option<usize>,
    /// See `n_iter`.
    pub converged: Option<bool>,
    /// The raw minimum of a "sqrt" pretransform.
    pub pre_min: Option<f64>,
    /// Each step of the §5 fallback chain taken: (zero scale, next).
    pub fallbacks: Vec<(&'static str, &'static str)>,
}

/// What a plan ends with.
#[derive(Debug, Clone, PartialEq)]
pub enum Fitted {
    /// Of `method = "exact"`.
    Column(ColumnFit),
    /// Of `method = "sketch"`.
    Stream(StreamingResult),
}

/// Why a replay stopped.
enum Flow {
    /// It needs a pass no partial was fed for.
    Need(Pass),
    /// The fit is refused.
    Failed(Error),
}

impl From<Error> for Flow {
    fn from(e: Error) -> Self {
        Flow::Failed(e)
    }
}

type Step<T> = Result<T, Flow>;

/// An M-estimate kept between replays, with the partials it consumed
/// (their positions before and after it).
type KeptEstimate = (Norm, (f64, f64, usize, bool), usize, usize);

/// The plan of one column's fit.
#[derive(Debug)]
pub struct ColumnPlan {
    spec: PlanSpec,
    partials: Vec<Partial>,
    kept: RefCell<Vec<KeptEstimate>>,
    fitted: Option<Fitted>,
}

impl ColumnPlan {
    /// A plan (parameters checked: the spec, `collect_max` ≥ 1).
    pub fn new(spec: PlanSpec) -> Result<Self, Error> {
        spec.spec.check()?;
        if let Method::Exact { collect_max: 0, .. } = spec.method {
            return Err(Error::invalid("collect_max", "must be positive"));
        }
        Ok(ColumnPlan {
            spec,
            partials: Vec::new(),
            kept: RefCell::new(Vec::new()),
            fitted: None,
        })
    }

    /// The next pass to run and feed, or `None` once the column is fitted
    /// ([`Self::fitted`]).
    pub fn next_pass(&mut self) -> Result<Option<Pass>, Error> {
        let replay = Replay {
            partials: &self.partials,
            next: Cell::new(0),
        };
        let out = match self.spec.method {
            Method::Exact {
                collect_max,
                n_hint,
            } => exact(&self.spec, &replay, &self.kept, collect_max, n_hint).map(Fitted::Column),
            Method::Sketch { k, native_census } => {
                sketched(&self.spec, &replay, k, native_census).map(Fitted::Stream)
            }
        };
        match out {
            Ok(fit) => {
                self.fitted = Some(fit);
                Ok(None)
            }
            Err(Flow::Need(pass)) => Ok(Some(pass)),
            Err(Flow::Failed(e)) => Err(e),
        }
    }

    /// The fit, once [`Self::next_pass`] returned `None`.
    pub fn fitted(&self) -> Result<&Fitted, Error> {
        self.fitted.as_ref().ok_or_else(|| {
            Error::invalid(
                "plan",
                "no fit yet: run every pass next_pass asks for first",
            )
        })
    }

    /// Feeds the combined partial of the pass [`Self::next`] asked for.
    pub fn feed(&mut self, partial: Partial) {
        self.partials.push(partial);
    }
}

/// The partials fed so far, handed out in the order the fit asks.
struct Replay<'a> {
    partials: &'a [Partial],
    next: Cell<usize>,
}

impl<'a> Replay<'a> {
    fn run(&self, pass: Pass) -> Step<&'a Partial> {
        let i = self.next.get();
        match self.partials.get(i) {
            Some(p) => {
                self.next.set(i + 1);
                Ok(p)
            }
            None => Err(Flow::Need(pass)),
        }
    }
}

/// The ranks of `ranks` that `got` holds no value for (which a guessed
/// pass left to the exact selection).
fn missing(ranks: &[u64], got: &[(u64, f64)]) -> Vec<u64> {
    let held = |r: &u64| got.iter().any(|g| g.0 == *r);
    ranks.iter().copied().filter(|r| !held(r)).collect()
}

fn changed() -> Flow {
    Flow::Failed(Error::invalid(
        "collection",
        "the partials do not fit the pass: the column changed between the passes of a fit",
    ))
}

/// The entries of `$partial` if it is a `Partial::$kind` of `$n` of them;
/// otherwise the enclosing function returns [`changed`]: a partial of
/// another kind or length than its pass asked for means the data changed
/// between passes.
macro_rules! entries {
    ($partial:expr, $kind:ident, $n:expr) => {
        match $partial {
            Partial::$kind(v) if v.len() == $n => v,
            _ => return Err(changed()),
        }
    };
}

/// The census partial's parts.
struct Census<'a> {
    raw: Counts,
    read: Counts,
    sketch: Option<&'a KllSketch<f64>>,
    moments: Option<&'a StreamingGaussian>,
}

fn census_of(p: &Partial) -> Step<Census<'_>> {
    match p {
        Partial::Census {
            raw,
            read,
            sketch,
            moments,
        } => Ok(Census {
            raw: *raw,
            read: *read,
            sketch: sketch.as_ref(),
            moments: moments.as_ref(),
        }),
        _ => Err(changed()),
    }
}

fn census_pass(pre: Pretransform, negate: bool, sketch_k: u16, ddof: Option<usize>) -> Pass {
    Pass {
        pre,
        kind: PassKind::Census {
            negate,
            sketch_k,
            moments_ddof: ddof,
        },
    }
}

/// The census's sketch k: a bracket of 5εn ranks should hold at most
/// `collect_max` values (k in [800, 20000]; 2000 when the length is
/// unknown; 0 — no sketch — when even k = 20000 is too coarse).
fn sketch_k(n_hint: Option<u64>, collect_max: u64) -> u16 {
    let Some(n) = n_hint.filter(|&n| n > 0) else {
        return 2000;
    };
    // 5εn and a margin for rounding k.
    let eps = collect_max as f64 / (6.0 * n as f64);
    let k = if eps > 0.0 {
        (2.296 / eps).powf(1.0 / 0.9723)
    } else {
        f64::INFINITY
    };
    if k > 20000.0 {
        0
    } else {
        k.max(800.0) as u16
    }
}

/// The order keys of every value in `[lo, hi]` as numbers: the extremes
/// compare −0 equal to +0, their keys do not, so a bracket that ends at a
/// zero takes in both zeros (a −0 left below it was lost to the fit).
fn key_bracket(lo: f64, hi: f64) -> (u64, u64) {
    (
        order_key(if lo == 0.0 { -0.0 } else { lo }),
        order_key(if hi == 0.0 { 0.0 } else { hi }),
    )
}

/// `(lo, hi)` of the oriented extremes `(min, max)`.
fn oriented(negate: bool, min: f64, max: f64) -> (f64, f64) {
    if negate {
        (-max, -min)
    } else {
        (min, max)
    }
}

/// Ranks with the key bracket each is expected in.
type KeyBrackets = Vec<(u64, (u64, u64))>;

/// What the median's pass reads ahead: the value brackets of [`Ahead`]
/// and the bucket summary's `(norm, e, c)`, if any.
type ReadAhead = (Vec<(f64, f64)>, Option<(Norm, i32, f64)>);

/// A rank being selected: the rank, its bracket `[lo, hi, below, count]`
/// and, once settled, the bracket it settled in `(lo, hi, below)`.
type RankState = (u64, [u64; 4], Option<(u64, u64, u64)>);

/// The estimators of one column, each computed once, from passes.
struct Column<'a, 'k> {
    replay: &'a Replay<'a>,
    kept: &'k RefCell<Vec<KeptEstimate>>,
    spec: GaussianSpec,
    collect_max: u64,
    negate: bool,
    pre: Pretransform,
    n: u64,
    lo: f64,
    hi: f64,
    moments: Option<&'a StreamingGaussian>,
    sketch: Option<&'a KllSketch<f64>>,
    median: Option<f64>,
    nmad: Vec<(Option<u64>, f64)>,
    niqr: Option<f64>,
    m: Vec<(Norm, (f64, f64, usize, bool))>,
    /// n_iter and convergence of the last M-estimate asked for.
    last_m: Option<(usize, bool)>,
    /// Whether the fit will ask for the nMAD about the median, and the
    /// norm of the bucket summary it will ask for: the median's pass
    /// reads what these need too, as far as the sketch foresees it.
    foresee: (bool, Option<Norm>),
    /// Read ahead by the median's pass: the values about the median's
    /// bracket that hold the median deviation (`Ahead`).
    ahead: Option<Ahead<'a>>,
    /// Read ahead by the median's pass: a bucket summary `(norm, e, c)`.
    ahead_summary: Option<(Norm, i32, f64, &'a MSummary)>,
}

/// The oriented values that settle the median deviation about any center
/// in the median's bracket: key brackets `[l1, l2]`, `[r1, r2]` (one when
/// they meet) as values, with the count below each and the values in it.
struct Ahead<'a> {
    brackets: Vec<(f64, f64)>,
    parts: &'a [(u64, Vec<f64>)],
}

impl<'a, 'k> Column<'a, 'k> {
    fn new(
        p: &PlanSpec,
        replay: &'a Replay<'a>,
        kept: &'k RefCell<Vec<KeptEstimate>>,
        collect_max: u64,
        n_hint: Option<u64>,
    ) -> Step<(Self, Option<f64>)> {
        let spec = p.spec;
        let negate = spec.negate;
        let (k, moments) = if p.linear {
            (0, None)
        } else {
            let median = matches!(spec.center, Center::Median | Center::M(_))
                || matches!(spec.scale, Scale::Nmad | Scale::M(_));
            let reads = spec.center == Center::Mean
                || (spec.scale == Scale::Std && !matches!(spec.center, Center::Value(_)));
            let k = if median {
                sketch_k(n_hint, collect_max)
            } else {
                0
            };
            (k, reads.then_some(spec.ddof))
        };
        let kind = if p.linear {
            PretransformKind::Identity
        } else {
            p.pretransform
        };
        let mut pre_min = None;
        if kind == PretransformKind::Sqrt {
            // y = √max(0, s − min) needs the raw minimum first.
            let first = replay.run(census_pass(Pretransform::Identity, negate, 0, None))?;
            let c = census_of(first)?;
            c.raw.check(spec.nan_policy)?;
            pre_min = Some(c.raw.min);
        }
        let pre = kind.fitted(pre_min.unwrap_or(0.0));
        let c = census_of(replay.run(census_pass(pre, negate, k, moments))?)?;
        c.raw.check(spec.nan_policy)?;
        if kind == PretransformKind::MinusLog && c.raw.min <= 0.0 {
            return Err(Error::invalid(
                "pretransform",
                format!(
                    "'minus_log' needs positive scores to fit, got scores <= 0 (the smallest \
                     is {:?})",
                    c.raw.min
                ),
            )
            .into());
        }
        let (lo, hi) = oriented(negate, c.read.min, c.read.max);
        let column = Column {
            replay,
            kept,
            spec,
            collect_max,
            negate,
            pre,
            n: c.read.count,
            lo,
            hi,
            moments: c.moments,
            sketch: c.sketch,
            median: None,
            nmad: Vec::new(),
            niqr: None,
            m: Vec::new(),
            last_m: None,
            foresee: (false, None),
            ahead: None,
            ahead_summary: None,
        };
        let mut column = column;
        if !p.linear {
            let norm = match (spec.center, spec.scale) {
                (Center::M(norm), _) | (_, Scale::M(norm)) => Some(norm),
                _ => None,
            };
            let nmad = norm.is_some() || (spec.scale == Scale::Nmad && p.fixed_center.is_none());
            column.foresee = (nmad, norm.filter(|_| column.n > collect_max));
        }
        Ok((column, pre_min))
    }

    fn run(&self, kind: PassKind) -> Step<&'a Partial> {
        self.replay.run(Pass {
            pre: self.pre,
            kind,
        })
    }

    /// The keyed values (values, or deviations from `center`) in each of
    /// `brackets`, one list per bracket.
    fn collect(&self, center: Option<f64>, brackets: Vec<(u64, u64)>) -> Step<&'a [Vec<f64>]> {
        let n = brackets.len();
        let key = self.key(center);
        Ok(entries!(
            self.run(PassKind::Collect { key, brackets })?,
            Collected,
            n
        ))
    }

    fn key(&self, center: Option<f64>) -> Key {
        match center {
            None => Key::Value {
                negate: self.negate,
            },
            Some(center) => Key::Deviation {
                center,
                negate: self.negate,
            },
        }
    }

    // -- order statistics -----------------------------------------------------------------

    /// Exact keyed values at the 0-based `ranks` (values, or deviations
    /// from `center`), all in the same passes: histograms narrow each
    /// rank's key bracket until it holds at most `collect_max` values,
    /// which are collected and selected.
    fn select(
        &self,
        center: Option<f64>,
        lo_value: f64,
        hi_value: f64,
        ranks: &[u64],
    ) -> Step<Vec<(u64, f64)>> {
        let (lo0, hi0) = key_bracket(lo_value, hi_value);
        let mut wanted: Vec<u64> = ranks.to_vec();
        wanted.sort_unstable();
        wanted.dedup();
        let mut state: Vec<RankState> = wanted
            .iter()
            .map(|&r| (r, [lo0, hi0, 0, 0], None))
            .collect();
        for _ in 0..(64 / BUCKET_BITS + 2) {
            let active: Vec<bool> = state.iter().map(|s| s.2.is_none()).collect();
            if !active.contains(&true) {
                break;
            }
            let mut brackets: Vec<(u64, u64)> = state
                .iter()
                .filter(|s| s.2.is_none())
                .map(|s| (s.1[0], s.1[1]))
                .collect();
            brackets.sort_unstable();
            brackets.dedup();
            let specs: Vec<(u64, u64, u32, usize)> = brackets
                .iter()
                .map(|&(lo, hi)| {
                    let width = hi - lo;
                    let bits = 64 - width.leading_zeros();
                    let shift = bits.saturating_sub(BUCKET_BITS);
                    (lo, hi, shift, ((width >> shift) + 1) as usize)
                })
                .collect();
            let key = self.key(center);
            let pass = self.run(PassKind::Histogram {
                key,
                brackets: specs.clone(),
            })?;
            let out = entries!(pass, Histograms, specs.len());
            for (spec, histogram) in specs.iter().zip(out) {
                for (s, _) in state.iter_mut().zip(&active).filter(|(_, a)| **a) {
                    self.narrow(s, *spec, histogram)?;
                }
            }
        }
        let settled: Vec<(u64, (u64, u64, u64))> = state
            .iter()
            .map(|s| s.2.map(|d| (s.0, d)))
            .collect::<Option<_>>()
            .ok_or_else(changed)?;
        let mut values: Vec<(u64, f64)> = settled
            .iter()
            .filter(|(_, d)| d.0 == d.1)
            .map(|&(r, d)| (r, from_order_key(d.0)))
            .collect();
        let mut to_collect: Vec<(u64, u64)> = settled
            .iter()
            .filter(|(_, d)| d.0 != d.1)
            .map(|(_, d)| (d.0, d.1))
            .collect();
        to_collect.sort_unstable();
        to_collect.dedup();
        if !to_collect.is_empty() {
            let out = self.collect(center, to_collect.clone())?;
            for (&bracket, vals) in to_collect.iter().zip(out) {
                let here: Vec<&(u64, (u64, u64, u64))> = settled
                    .iter()
                    .filter(|(_, d)| (d.0, d.1) == bracket)
                    .collect();
                let at: Vec<usize> = here
                    .iter()
                    .map(|(r, d)| r.checked_sub(d.2).map(|i| i as usize))
                    .collect::<Option<_>>()
                    .ok_or_else(changed)?;
                let got = select(vals.clone(), &at)?;
                values.extend(here.iter().map(|h| h.0).zip(got));
            }
        }
        Ok(values)
    }

    /// Narrows the bracket of rank `s.0` by the histogram of bracket
    /// `(lo, hi, shift, _)`, if it is that rank's bracket: to the bucket
    /// that holds the rank, settled once it holds at most `collect_max`
    /// values (or one key).
    fn narrow(
        &self,
        s: &mut RankState,
        (lo, hi, shift, _): (u64, u64, u32, usize),
        (below, counts): &(u64, Vec<u64>),
    ) -> Step<()> {
        if (s.1[0], s.1[1]) != (lo, hi) {
            return Ok(());
        }
        let r = s.0;
        // The bucket whose cumulative count first exceeds r.
        let mut before = *below;
        let mut b = 0;
        while b < counts.len() && before + counts[b] <= r {
            before += counts[b];
            b += 1;
        }
        if b >= counts.len() {
            return Err(changed());
        }
        let new_lo = lo + ((b as u64) << shift);
        let new_hi = new_lo.saturating_add((1u64 << shift) - 1).min(hi);
        s.1 = [new_lo, new_hi, before, counts[b]];
        if counts[b] <= self.collect_max || new_lo == new_hi {
            s.2 = Some((new_lo, new_hi, before));
        }
        Ok(())
    }

    /// The key bracket the sketch expects each rank in (values, or
    /// deviations from `center`); None when there is no sketch or its
    /// brackets would hold too many values to collect.
    fn guess_keys(&self, center: Option<f64>, ranks: &[u64]) -> Step<Option<KeyBrackets>> {
        let Some(sketch) = self.sketch else {
            return Ok(None);
        };
        if sketch.n() == 0 {
            return Ok(None);
        }
        let view = sketch.sorted_view()?;
        let mut items: Vec<(f64, u64)> = view
            .values()
            .iter()
            .enumerate()
            .map(|(j, &v)| (center.map_or(v, |c| (v - c).abs()), view.weight(j)))
            .collect();
        // Stable, and −0 beside +0 in the order seen.
        items.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(core::cmp::Ordering::Equal));
        let mut cum = Vec::with_capacity(items.len());
        let mut total = 0u64;
        for &(_, w) in &items {
            total += w;
            cum.push(total);
        }
        // Deviation counts err by up to twice the sketch's rank error ε
        // (with its 99% confidence); a margin on top.
        let slack = 2.5 * sketch.normalized_rank_error(false) * self.n as f64 + 2.0;
        if 2.0 * slack > self.collect_max as f64 {
            // A bracket would hold too many values to collect.
            return Ok(None);
        }
        let last = items.len() - 1;
        let at = |target: f64| cum.partition_point(|&c| (c as f64) < target).min(last);
        Ok(Some(
            ranks
                .iter()
                .map(|&r| {
                    let (a, b) = (
                        items[at((r + 1) as f64 - slack)].0,
                        items[at((r + 1) as f64 + slack)].0,
                    );
                    (r, key_bracket(a, b))
                })
                .collect(),
        ))
    }

    /// The ranks one pass over the sketch's brackets settles (values, or
    /// deviations from `center`); the others are left out (a bad guess
    /// only costs the usual passes).
    fn guessed(&self, center: Option<f64>, ranks: &[u64]) -> Step<Vec<(u64, f64)>> {
        let Some(keys) = self.guess_keys(center, ranks)? else {
            return Ok(Vec::new());
        };
        let brackets = bracket_list(&keys);
        let key = self.key(center);
        let pass = self.run(PassKind::Bracket {
            key,
            brackets: brackets.clone(),
        })?;
        settled(&keys, &brackets, entries!(pass, Brackets, brackets.len()))
    }

    /// [`Self::guessed`] for the median, its pass fused with what the fit
    /// will ask for next ([`Self::foresee`]) as far as the sketch foresees
    /// it: the values that hold the median deviation about any center in
    /// the median's bracket, and the M-estimation's bucket summary.
    fn guessed_median(&mut self, ranks: &[u64]) -> Step<Vec<(u64, f64)>> {
        let Some(keys) = self.guess_keys(None, ranks)? else {
            return Ok(Vec::new());
        };
        let brackets = bracket_list(&keys);
        let median = PassKind::Bracket {
            key: self.key(None),
            brackets: brackets.clone(),
        };
        let Some((deviations, summary)) = self.read_ahead(&brackets)? else {
            let pass = self.run(median)?;
            return settled(&keys, &brackets, entries!(pass, Brackets, brackets.len()));
        };
        let mut kinds = vec![
            median,
            PassKind::Bracket {
                key: self.key(None),
                brackets: deviations
                    .iter()
                    .map(|&(lo, hi)| key_bracket(lo, hi))
                    .collect(),
            },
        ];
        if let Some((norm, e, c)) = summary {
            kinds.push(PassKind::MSummary {
                negate: self.negate,
                norm,
                e,
                c,
            });
        }
        let parts = entries!(
            self.run(PassKind::Fused(kinds))?,
            Fused,
            2 + usize::from(summary.is_some())
        );
        let (out, ahead) = match (&parts[0], &parts[1]) {
            (Partial::Brackets(m), Partial::Brackets(d))
                if m.len() == brackets.len() && d.len() == deviations.len() =>
            {
                (m, d)
            }
            _ => return Err(changed()),
        };
        self.ahead = Some(Ahead {
            brackets: deviations,
            parts: ahead,
        });
        if let (Some((norm, e, c)), Some(part)) = (summary, parts.get(2)) {
            let Partial::MSummary(s) = part else {
                return Err(changed());
            };
            self.ahead_summary = Some((norm, e, c, &**s));
        }
        settled(&keys, &brackets, out)
    }

    /// What the median's pass reads ahead, given the median's key
    /// brackets: the value brackets of [`Ahead`] and, for an
    /// M-estimation, the bucket summary's `(norm, e, c)` when the
    /// sketch's bracket of the nMAD fixes the units' exponent.
    fn read_ahead(&self, brackets: &[(u64, u64)]) -> Step<Option<ReadAhead>> {
        if !self.foresee.0 || brackets.is_empty() {
            return Ok(None);
        }
        let a = from_order_key(brackets[0].0);
        let b = from_order_key(brackets.iter().map(|k| k.1).max().unwrap_or(brackets[0].1));
        let mid = a * 0.5 + b * 0.5;
        let Some(keys) = self.guess_keys(Some(mid), &self.middle())? else {
            return Ok(None);
        };
        let (lo, hi) = (
            keys.iter().map(|k| k.1 .0).min(),
            keys.iter().map(|k| k.1 .1).max(),
        );
        let (Some(lo), Some(hi)) = (lo, hi) else {
            return Ok(None);
        };
        let Some(deviations) = ahead::brackets((a, b), (from_order_key(lo), from_order_key(hi)))
        else {
            return Ok(None);
        };
        let summary = self.foresee.1.and_then(|norm| {
            let largest = self.hi.abs().max(self.lo.abs());
            let (d_lo, d_hi) = ahead::widened((a, b), (from_order_key(lo), from_order_key(hi)));
            let (s_lo, s_hi) = (d_lo / NMAD_DIVISOR, d_hi / NMAD_DIVISOR);
            // A bracket reaching a zero nMAD (ties) does not fix the units.
            if !(s_lo > 0.0 && s_hi.is_finite()) {
                return None;
            }
            let e = unit_exponent(s_lo, largest, 1023);
            (e == unit_exponent(s_hi, largest, 1023)).then(|| (norm, e, ldexp(mid, -e)))
        });
        Ok(Some((deviations, summary)))
    }

    fn pick(got: &[(u64, f64)], ranks: &[u64]) -> Step<Vec<f64>> {
        ranks
            .iter()
            .map(|r| got.iter().find(|(g, _)| g == r).map(|g| g.1))
            .collect::<Option<_>>()
            .ok_or_else(changed)
    }

    fn values(&self, ranks: &[u64]) -> Step<Vec<f64>> {
        Self::pick(&self.select(None, self.lo, self.hi, ranks)?, ranks)
    }

    fn deviation_values(&self, c: f64, ranks: &[u64]) -> Step<Vec<f64>> {
        let mut got = self.guessed(Some(c), ranks)?;
        let rest = missing(ranks, &got);
        if !rest.is_empty() {
            let (a, b) = ((self.hi - c).abs(), (c - self.lo).abs());
            let top = if b > a { b } else { a };
            got.extend(self.select(Some(c), 0.0, top, &rest)?);
        }
        Self::pick(&got, ranks)
    }

    fn middle(&self) -> Vec<u64> {
        let n = self.n;
        if n % 2 == 1 {
            vec![n / 2]
        } else {
            vec![n / 2 - 1, n / 2]
        }
    }

    // -- estimators (contract §1–§3) -----------------------------------------------------

    fn median(&mut self) -> Step<f64> {
        if let Some(m) = self.median {
            return Ok(m);
        }
        let ranks = self.middle();
        let mut got = self.guessed_median(&ranks)?;
        let rest = missing(&ranks, &got);
        if !rest.is_empty() {
            let vals = self.values(&rest)?;
            got.extend(rest.into_iter().zip(vals));
        }
        let m = median_value(&Self::pick(&got, &ranks)?);
        self.median = Some(m);
        Ok(m)
    }

    /// median |±y − c| / Φ⁻¹(¾), c the median (or a fixed center).
    fn nmad(&mut self, about: Option<f64>) -> Step<f64> {
        let key = about.map(f64::to_bits);
        if let Some(&(_, v)) = self.nmad.iter().find(|(k, _)| *k == key) {
            return Ok(v);
        }
        let c = match about {
            None => self.median()?,
            Some(c) => c,
        };
        let ranks = self.middle();
        let read = match (&self.ahead, about) {
            (Some(ahead), None) => ahead::deviations(c, &ahead.brackets, ahead.parts, &ranks),
            _ => None,
        };
        let deviations = match read {
            Some(d) => d,
            None => self.deviation_values(c, &ranks)?,
        };
        let v = median_value(&deviations) / NMAD_DIVISOR;
        self.nmad.push((key, v));
        Ok(v)
    }

    fn niqr(&mut self) -> Step<f64> {
        if let Some(v) = self.niqr {
            return Ok(v);
        }
        let n = self.n as usize;
        let sets = [quantile_ranks(n, 0.25)?, quantile_ranks(n, 0.75)?];
        let mut wanted: Vec<u64> = sets.iter().flatten().map(|&r| r as u64).collect();
        wanted.sort_unstable();
        wanted.dedup();
        let vals = self.values(&wanted)?;
        let value_of = |r: usize| vals[wanted.iter().position(|&w| w == r as u64).unwrap_or(0)];
        let q: Vec<f64> = [0.25, 0.75]
            .iter()
            .zip(&sets)
            .map(|(&q, rs)| {
                quantile_value(n, q, &rs.iter().map(|&r| value_of(r)).collect::<Vec<_>>())
            })
            .collect();
        let v = (q[1] - q[0]) / NIQR_DIVISOR;
        self.niqr = Some(v);
        Ok(v)
    }

    /// The exact-moments state (one more census if the first skipped it).
    fn moments(&mut self) -> Step<&'a StreamingGaussian> {
        if let Some(m) = self.moments {
            return Ok(m);
        }
        let pass = census_pass(self.pre, self.negate, 0, Some(self.spec.ddof));
        let m = census_of(self.replay.run(pass)?)?
            .moments
            .ok_or_else(changed)?;
        self.moments = Some(m);
        Ok(m)
    }

    fn mean(&mut self) -> Step<f64> {
        Ok(self.moments()?.result()?.center)
    }

    fn std(&mut self) -> Step<f64> {
        // N <= ddof: no spread measurable (as in memory).
        Ok(self.moments()?.result().map_or(0.0, |r| r.scale))
    }

    /// The SD with ddof = 0 (the M-estimation's last starting scale).
    fn std0(&mut self) -> Step<f64> {
        let parts = self.moments()?.moments().to_parts();
        let state = StreamingGaussian::from_parts(moments_spec(self.negate, 0), &parts, None, 0)?;
        Ok(state.result()?.scale)
    }

    /// Σ((±y − c)·2^-e)² over `|±y − c| < w` (added exactly over the
    /// pieces) and its count.
    fn squares(&self, c: f64, w: f64, e: i32) -> Step<(f64, u64)> {
        match self.run(PassKind::SquaresBelow {
            negate: self.negate,
            c,
            w,
            e,
        })? {
            Partial::Squares(s) => {
                let sums: Vec<f64> = s.iter().map(|p| p.0).collect();
                Ok((exact_sum(&sums).value(), s.iter().map(|p| p.1).sum()))
            }
            _ => Err(changed()),
        }
    }

    /// √(Σ(±y − c)²/(N − ddof)): the SD about a fixed center (ELKI).
    fn rms_about(&self, c: f64) -> Step<f64> {
        let ddof = self.spec.ddof as u64;
        if self.n <= ddof {
            return Ok(0.0);
        }
        // In units of 2^k near the largest deviation: no overflow anywhere.
        let (a, b) = (self.hi * 0.5 - c * 0.5, c * 0.5 - self.lo * 0.5);
        let half = if b > a { b } else { a };
        let k = if half > 0.0 && half.is_finite() {
            libm::frexp(half).1.clamp(-1022, 1022)
        } else {
            0
        };
        let (total, _) = self.squares(c, f64::INFINITY, k)?;
        Ok(libm::scalbn((total / (self.n - ddof) as f64).sqrt(), k))
    }

    /// Values dropped and kept by a trimmed estimator.
    fn keep(&self) -> (u64, u64) {
        let k = ((self.spec.trim * self.n as f64).floor() as u64).min(self.n - 1);
        (k, self.n - k)
    }

    fn trimmed_mean(&mut self) -> Step<f64> {
        let (k, keep) = self.keep();
        if k == 0 {
            return self.mean();
        }
        let v = self.values(&[keep - 1])?[0];
        let Partial::Sums(parts) = self.run(PassKind::SumBelow {
            negate: self.negate,
            v,
        })?
        else {
            return Err(changed());
        };
        let below: u64 = parts.iter().map(|p| p.count).sum();
        let ties = keep.checked_sub(below).ok_or_else(changed)? as usize;
        // The in-memory rounding (`ExactSum::mean`): finite wherever the
        // mean is, even when the kept sum is beyond the double range.
        Ok(exact_total(parts, v, ties).mean(keep as usize))
    }

    fn trimmed_std(&self, c: f64) -> Step<f64> {
        let (_, keep) = self.keep();
        let w = self.deviation_values(c, &[keep - 1])?[0];
        if w == 0.0 {
            return Ok(0.0);
        }
        if w.is_infinite() {
            // The kept deviations overflowed, as in memory: a scale beyond
            // the double range, refused by the fit (contract §5).
            return Ok(f64::INFINITY);
        }
        let e = (libm::frexp(w).1 - 1).clamp(-1022, 1022);
        let (total, count) = self.squares(c, w, e)?;
        let tie = libm::scalbn(w, -e);
        let total = total + (keep as i64 - count as i64) as f64 * tie * tie;
        Ok(libm::scalbn((total / keep as f64).sqrt(), e))
    }

    /// Huber's proposal 2 (§3) with the norm's location, started from the
    /// median and nMAD (or their fallbacks): each location step's sums
    /// reduced in one pass, or — when the column fits in `collect_max`
    /// values — the column gathered in one pass and the sums taken here.
    fn m_estimate(&mut self, norm: Norm) -> Step<(f64, f64)> {
        let e = if let Some(&(_, e)) = self.m.iter().find(|(n, _)| *n == norm) {
            e
        } else {
            let e = self.m_estimate_anew(norm)?;
            self.m.push((norm, e));
            e
        };
        self.last_m = Some((e.2, e.3));
        Ok((e.0, e.1))
    }

    fn m_estimate_anew(&mut self, norm: Norm) -> Step<(f64, f64, usize, bool)> {
        let mu0 = self.median()?;
        let mut sigma0 = self.nmad(None)?;
        if sigma0 <= 0.0 {
            sigma0 = self.niqr()?;
        }
        if sigma0 <= 0.0 {
            sigma0 = if self.spec.ddof == 0 {
                self.std()?
            } else {
                self.std0()?
            };
        }
        if sigma0 <= 0.0 {
            return Ok((mu0, 0.0, 0, true));
        }
        let start = self.replay.next.get();
        let kept = self
            .kept
            .borrow()
            .iter()
            .copied()
            .find(|k| (k.0, k.2) == (norm, start));
        if let Some((_, e, _, after)) = kept {
            // Computed by an earlier replay from the same partials.
            self.replay.next.set(after);
            return Ok(e);
        }
        let params = MParams {
            maxiter: self.spec.maxiter,
            tol: self.spec.tol,
            ..MParams::new(norm)
        };
        let sums = MParams::new(norm);
        let n = self.n as usize;
        let from = (mu0, sigma0);
        let largest = self.hi.abs().max(self.lo.abs());
        let e = if self.n <= self.collect_max {
            let oriented = &self.collect(None, vec![key_bracket(self.lo, self.hi)])?[0];
            let reduce = |ms: (f64, f64), e: i32| -> Step<[f64; 6]> {
                Ok(m_sums(oriented, false, &sums, ms, e))
            };
            m_iterate_reduced(reduce, &params, n, from, largest)?
        } else {
            self.m_summarized(norm, &params, from, largest)?
        };
        let e = (e.location, e.scale, e.n_iter, e.converged);
        self.kept
            .borrow_mut()
            .push((norm, e, start, self.replay.next.get()));
        Ok(e)
    }
}

impl Column<'_, '_> {
    /// The sums of one step at `(m, σ)` in units of 2^e, reduced in one
    /// pass over the scores.
    fn direct_sums(&self, norm: Norm, (m, sigma): (f64, f64), e: i32) -> Step<[f64; 6]> {
        match self.run(PassKind::MSums {
            negate: self.negate,
            norm,
            m,
            sigma,
            e,
        })? {
            Partial::MSums(out) => Ok(core::array::from_fn(|i| {
                exact_sum(&out.iter().map(|o| o[i]).collect::<Vec<f64>>()).value()
            })),
            _ => Err(changed()),
        }
    }

    /// The M-estimate of a column too long to gather: one pass builds the
    /// bucket summary (`msummary`) about μ₀ in the fit's units; an
    /// iteration on the summary alone predicts which buckets the
    /// windows' edges cut, and one pass collects their scores (at most
    /// `collect_max`, in the order the steps need them); the iteration
    /// then reads the summary and those scores. A bucket cut that was not
    /// predicted costs one more collect pass; a step the summary cannot
    /// answer (a far tail reached, a bucket over `collect_max` cut)
    /// costs one pass of the direct sums. Every step's sums are those of
    /// a direct read to rounding, so the estimate is the reduced one.
    fn m_summarized(
        &self,
        norm: Norm,
        params: &MParams,
        (mu0, sigma0): (f64, f64),
        largest: f64,
    ) -> Step<crate::estimators::mest::MEstimate> {
        let sums = MParams::new(norm);
        let n = self.n as usize;
        if !sigma0.is_finite() {
            // Refused by the iteration, with the in-memory message.
            return m_iterate_reduced(
                |ms, e| self.direct_sums(norm, ms, e),
                params,
                n,
                (mu0, sigma0),
                largest,
            );
        }
        let e = unit_exponent(sigma0, largest, 1023);
        // The summary the median's pass read ahead, if its units are the
        // fit's (its grid about the median's bracket, not μ₀ itself: any
        // center serves, the sums are a direct read's to rounding).
        let (c, summary): (f64, &MSummary) = match self.ahead_summary {
            Some((n, e_ahead, c, s)) if n == norm && e_ahead == e => (c, s),
            _ => {
                let c = ldexp(mu0, -e);
                let Partial::MSummary(summary) = self.run(PassKind::MSummary {
                    negate: self.negate,
                    norm,
                    e,
                    c,
                })?
                else {
                    return Err(changed());
                };
                (c, summary)
            }
        };
        // The prediction: the buckets an iteration on the summary cuts.
        let noted = RefCell::new(Vec::new());
        let none = BTreeMap::new();
        let _ = m_iterate_reduced::<Error>(
            |ms, _| {
                let mut list = noted.borrow_mut();
                Ok(match summary.sums(&sums, c, ms, &none, Some(&mut list)) {
                    Answer::Sums(s) => s,
                    _ => [f64::NAN; 6],
                })
            },
            params,
            n,
            (mu0, sigma0),
            largest,
        );
        let mut pending: Vec<u32> = Vec::new();
        for &i in noted.borrow().iter() {
            for j in [i, i.wrapping_sub(1), i + 1] {
                if summary.count(j) > 0 && !pending.contains(&j) {
                    pending.push(j);
                }
            }
        }
        let held = RefCell::new(BTreeMap::<u32, Vec<f64>>::new());
        let budget = self.collect_max;
        let reduce = |ms: (f64, f64), e_step: i32| -> Step<[f64; 6]> {
            loop {
                let answer = summary.sums(&sums, c, ms, &held.borrow(), None);
                match answer {
                    Answer::Sums(s) => return Ok(s),
                    Answer::Direct => return self.direct_sums(norm, ms, e_step),
                    Answer::Missing(ids) => {
                        if ids.iter().any(|&i| summary.count(i) > budget) {
                            return self.direct_sums(norm, ms, e_step);
                        }
                        let mut batch: Vec<u32> = Vec::new();
                        let mut total = 0u64;
                        let h = held.borrow();
                        for &i in ids.iter().chain(pending.iter()) {
                            let k = summary.count(i);
                            if h.contains_key(&i) || batch.contains(&i) || total + k > budget {
                                continue;
                            }
                            total += k;
                            batch.push(i);
                        }
                        drop(h);
                        batch.sort_unstable();
                        let pass = self.run(PassKind::MCollect {
                            negate: self.negate,
                            e,
                            c,
                            buckets: batch.clone(),
                        })?;
                        let got = entries!(pass, Collected, batch.len());
                        let mut h = held.borrow_mut();
                        for (i, values) in batch.into_iter().zip(got) {
                            if values.len() as u64 != summary.count(i) {
                                return Err(changed());
                            }
                            h.insert(i, values.clone());
                        }
                    }
                }
            }
        };
        m_iterate_reduced(reduce, params, n, (mu0, sigma0), largest)
    }
}

/// The distinct key brackets of `keys`, sorted.
fn bracket_list(keys: &[(u64, (u64, u64))]) -> Vec<(u64, u64)> {
    let mut brackets: Vec<(u64, u64)> = keys.iter().map(|k| k.1).collect();
    brackets.sort_unstable();
    brackets.dedup();
    brackets
}

/// The ranks of `keys` their brackets' partial `out` settles, with their
/// values (a rank outside its bracket's counts is left out).
fn settled(
    keys: &[(u64, (u64, u64))],
    brackets: &[(u64, u64)],
    out: &[(u64, Vec<f64>)],
) -> Step<Vec<(u64, f64)>> {
    let mut values = Vec::new();
    for (bracket, (below, vals)) in brackets.iter().zip(out) {
        let mut rs: Vec<u64> = keys
            .iter()
            .filter(|(r, k)| k == bracket && *below <= *r && *r < below + vals.len() as u64)
            .map(|k| k.0)
            .collect();
        rs.sort_unstable();
        if !rs.is_empty() {
            let at: Vec<usize> = rs.iter().map(|r| (r - below) as usize).collect();
            values.extend(rs.into_iter().zip(select(vals.clone(), &at)?));
        }
    }
    Ok(values)
}

/// The exact fit of one column: μ, σ and the scale used, as the in-memory
/// fit computes them (§1–§5, §10's options), or a linear fit's extremes.
fn exact(
    p: &PlanSpec,
    replay: &Replay<'_>,
    kept: &RefCell<Vec<KeptEstimate>>,
    collect_max: u64,
    n_hint: Option<u64>,
) -> Step<ColumnFit> {
    let (mut col, pre_min) = Column::new(p, replay, kept, collect_max, n_hint)?;
    if p.linear {
        return Ok(ColumnFit {
            center: col.lo,
            scale: col.hi,
            scale_used: "value",
            n_iter: None,
            converged: None,
            pre_min: None,
            fallbacks: Vec::new(),
        });
    }
    let spec = p.spec;
    let c = match spec.center {
        Center::Value(c) => c,
        Center::Mean => col.mean()?,
        Center::Median => col.median()?,
        Center::TrimmedMean => col.trimmed_mean()?,
        Center::M(norm) => col.m_estimate(norm)?.0,
    };
    // With a fixed center the SD and the nMAD are about it, and the chain
    // runs over the scales that have such a form (as the in-memory fit).
    let about =
        p.fixed_center.is_some() && matches!(spec.scale, Scale::Std | Scale::Nmad | Scale::Niqr);
    let scale = |which: Scale, col: &mut Column<'_, '_>| -> Step<f64> {
        Ok(match which {
            Scale::Value(v) => v,
            Scale::Std if about => col.rms_about(c)?,
            Scale::Nmad if about => col.nmad(Some(c))?,
            Scale::Std => col.std()?,
            Scale::Nmad => col.nmad(None)?,
            Scale::Niqr => col.niqr()?,
            Scale::TrimmedStd => col.trimmed_std(c)?,
            Scale::M(norm) => col.m_estimate(norm)?.1,
        })
    };
    let mut tried = Vec::new();
    let (used, s) = fall_back(
        spec.scale,
        spec.scale.chain(),
        |which| {
            tried.push(which.name());
            scale(which, &mut col)
        },
        |v| *v > 0.0,
    )?;
    let fallbacks = tried.windows(2).map(|w| (w[0], w[1])).collect();
    // contract §5, as the in-memory fit: a parameter beyond the double
    // range is refused with the fit's message, never published.
    if !s.is_finite() {
        let what = format_args!("the fitted {} scale", used.name());
        return Err(Error::beyond_range("scale", what).into());
    }
    if !c.is_finite() {
        let what = format_args!("the fitted {} center", spec.center.name());
        return Err(Error::beyond_range("center", what).into());
    }
    Ok(ColumnFit {
        center: c,
        scale: s.max(0.0),
        scale_used: used.name(),
        n_iter: col.last_m.map(|m| m.0),
        converged: col.last_m.map(|m| m.1),
        pre_min: pre_min.filter(|_| p.pretransform == PretransformKind::Sqrt),
        fallbacks,
    })
}

/// The streaming fit's result (exact moments, order statistics from the
/// sketch with intervals) from one census — two when a fit from the
/// sketch alone needs the moments after all.
fn sketched(
    p: &PlanSpec,
    replay: &Replay<'_>,
    k: u16,
    native_census: bool,
) -> Step<StreamingResult> {
    let spec = p.spec;
    let needs_sketch = !p.linear && crate::streaming::fit::needs_sketch(&spec);
    let moments = !p.linear && (crate::streaming::fit::reads_moments(&spec) || !native_census);
    let sketch_k = if needs_sketch { k } else { 0 };
    let ddof = moments.then_some(spec.ddof);
    let pass = census_pass(Pretransform::Identity, spec.negate, sketch_k, ddof);
    let c = census_of(replay.run(pass)?)?;
    c.raw.check(spec.nan_policy)?;
    if p.linear {
        let (lo, hi) = oriented(spec.negate, c.read.min, c.read.max);
        return Ok(linear_result(lo, hi, c.read.count));
    }
    if c.moments.is_none() {
        if let Some(sketch) = c.sketch {
            if let Some(r) = result_from_sketch(&spec, sketch)? {
                return Ok(r);
            }
        }
    }
    let moments = if let Some(m) = c.moments {
        m
    } else {
        let pass = census_pass(Pretransform::Identity, spec.negate, 0, Some(spec.ddof));
        census_of(replay.run(pass)?)?.moments.ok_or_else(changed)?
    };
    let bytes = c.sketch.map(serialize);
    let state =
        StreamingGaussian::from_parts(spec, &moments.moments().to_parts(), bytes.as_deref(), 0)?;
    Ok(state.result()?)
}

#[cfg(test)]
mod tests;
