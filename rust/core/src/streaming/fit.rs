//! The streaming counterpart of [`crate::transformations::fit`]: exact
//! moments for the mean, SD and extremes, a KLL sketch of the oriented
//! scores for everything that needs order statistics (median, quantiles,
//! trimmed mean, nMAD, nIQR, trimmed SD, M-estimates), and the §5 fallback
//! chain of the in-memory fit on the resulting estimates.

use crate::error::Error;
use crate::estimators::mest::{MEstimate, MParams, Norm};
use crate::estimators::scale::fall_back;
use crate::numeric::float::Float;
use crate::numeric::sum::ExactSum;
use crate::streaming::bounds::{probability_band, Brackets, Estimate, Interval};
use crate::streaming::kll::serde::deserialize;
use crate::streaming::kll::{check_k, KllSketch, SortedView, BLOCK};
use crate::streaming::moments::Moments;
use crate::streaming::stored::{add_counts, MomentsParts};
use crate::transformations::fit::{Center, GaussianSpec, Scale};

/// A fitted streaming Gaussian scaling with its error bounds.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamingResult {
    /// μ and, when a guarantee exists, its interval.
    pub center: f64,
    /// σ (0 when every scale in the chain is 0).
    pub scale: f64,
    /// The estimator that produced σ.
    pub scale_used: Scale,
    /// Intervals for μ and σ (`None` for M-estimates: no guarantee).
    pub center_interval: Option<Interval>,
    pub scale_interval: Option<Interval>,
    /// The largest |Δp| over all scores the intervals allow.
    pub probability_error: Option<f64>,
    /// The sketch's normalized rank error (0 while it is exact).
    pub rank_error: f64,
    /// Every M-estimate the fit ran.
    pub m_estimates: Vec<(Norm, MEstimate)>,
    /// Scores seen.
    pub n: u64,
}

/// Whether a spec needs the sketch (anything beyond mean, SD, constants).
pub fn needs_sketch(spec: &GaussianSpec) -> bool {
    let center = !matches!(spec.center, Center::Mean | Center::Value(_));
    // The fallback chain reaches nIQR unless it starts at the SD or a value.
    let scale = !matches!(spec.scale, Scale::Std | Scale::Value(_));
    center || scale
}

/// Whether a spec's fit reads the exact moments: the mean, the trimmed
/// mean (its interval uses the exact total) or the SD — other than by a §5
/// fallback to the SD, which only the data decide.
pub fn reads_moments(spec: &GaussianSpec) -> bool {
    matches!(spec.center, Center::Mean | Center::TrimmedMean) || spec.scale == Scale::Std
}

/// Running state of a streaming Gaussian (or linear) fit.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamingGaussian {
    spec: GaussianSpec,
    moments: Moments,
    sketch: Option<KllSketch<f64>>,
}

impl StreamingGaussian {
    /// An empty state; the sketch (parameter `k`, checked whether kept or
    /// not, and coin `seed`) is kept only when the spec needs it.
    pub fn new(spec: GaussianSpec, k: u32, seed: u64) -> Result<Self, Error> {
        spec.check()?;
        let k = check_k(k)?;
        let sketch = if needs_sketch(&spec) {
            Some(KllSketch::new(k, seed)?)
        } else {
            None
        };
        Ok(StreamingGaussian {
            spec,
            moments: Moments::new(),
            sketch,
        })
    }

    /// Rebuilds a state from stored parts: the moments, the sketch's
    /// bytes (DataSketches' format) and its coin seed. The one entry point
    /// for stored (untrusted) streaming state: every part is checked
    /// (`stored::check_moments`, the sketch's reader), and against the
    /// others: a sketch exactly when the spec needs one, of as many scores
    /// as the moments and with their extremes (oriented).
    pub fn from_parts(
        spec: GaussianSpec,
        moments: &MomentsParts,
        sketch: Option<&[u8]>,
        seed: u64,
    ) -> Result<Self, Error> {
        spec.check()?;
        let moments = Moments::from_parts(moments)?;
        let sketch = match sketch {
            Some(bytes) => {
                let mut s: KllSketch<f64> = deserialize(bytes)?;
                s.set_seed(seed);
                Some(s)
            }
            None => None,
        };
        if needs_sketch(&spec) != sketch.is_some() {
            return Err(Error::InvalidParameter {
                name: "state",
                reason: "the sketch does not match the center/scale".into(),
            });
        }
        let state = StreamingGaussian {
            spec,
            moments,
            sketch,
        };
        if let Some(s) = &state.sketch {
            if s.n() != state.n() {
                return Err(Error::InvalidParameter {
                    name: "state",
                    reason: format!("sketch of {} scores with moments of {}", s.n(), state.n()),
                });
            }
            let extremes = s.min().zip(s.max());
            if state.n() > 0 && extremes != Some(state.extremes()?) {
                return Err(Error::invalid(
                    "state",
                    "the sketch's extremes differ from the moments' min and max",
                ));
            }
        }
        Ok(state)
    }

    /// The spec.
    pub fn spec(&self) -> &GaussianSpec {
        &self.spec
    }
    /// The exact moments (of the raw scores).
    pub fn moments(&self) -> &Moments {
        &self.moments
    }
    /// The sketch of the oriented scores, if kept.
    pub fn sketch(&self) -> Option<&KllSketch<f64>> {
        self.sketch.as_ref()
    }
    /// Scores seen.
    pub fn n(&self) -> u64 {
        self.moments.n()
    }

    /// Adds a batch (contract §5 per batch: refused whole on ±inf, or NaN
    /// under `raise`); returns how many scores it added.
    pub fn update<T: Float>(&mut self, x: &[T]) -> Result<usize, Error> {
        add_counts(self.n(), x.len() as u64)?;
        let added = self.moments.update(x, self.spec.nan_policy)?;
        if let Some(sk) = &mut self.sketch {
            let sign = if self.spec.negate { -1.0 } else { 1.0 };
            let mut buf = Vec::with_capacity(BLOCK.min(x.len()));
            for chunk in x.chunks(BLOCK) {
                buf.clear();
                buf.extend(chunk.iter().map(|v| sign * v.to_f64()));
                sk.update(&buf);
            }
        }
        Ok(added)
    }

    /// Adds everything `other` has seen (same spec required).
    pub fn merge(&mut self, other: &StreamingGaussian) -> Result<(), Error> {
        if self.spec != other.spec {
            return Err(Error::InvalidParameter {
                name: "other",
                reason: "only states of the same center, scale and parameters merge".into(),
            });
        }
        add_counts(self.n(), other.n())?;
        self.moments.merge(&other.moments);
        if let (Some(a), Some(b)) = (&mut self.sketch, &other.sketch) {
            a.merge(b);
        }
        Ok(())
    }

    /// `(min, max)` of the oriented scores (linear scaling).
    pub fn extremes(&self) -> Result<(f64, f64), Error> {
        let (lo, hi) = self.moments.extremes()?;
        Ok(if self.spec.negate {
            (-hi, -lo)
        } else {
            (lo, hi)
        })
    }

    /// The fitted μ and σ with their intervals.
    pub fn result(&self) -> Result<StreamingResult, Error> {
        self.fit(true)
    }

    fn fit(&self, intervals: bool) -> Result<StreamingResult, Error> {
        fit_result(
            &self.spec,
            Some(&self.moments),
            self.sketch.as_ref(),
            intervals,
        )?
        .ok_or_else(|| Error::InvalidParameter {
            name: "state",
            reason: "the exact moments are missing".into(),
        })
    }

    /// The fit a stream maps its next batch with (contract §9, "Command
    /// line"), given `n` at its last fit (`None`: none yet): `None` while
    /// the last fit stands, else the fitted μ and σ without intervals
    /// (every other field as [`StreamingGaussian::result`]'s). The fit is
    /// redone after every batch when it reads the exact moments (they
    /// change with every score) or the sketch is exact; otherwise once
    /// more than `⌊εn⌋` scores came since the last fit, so that the last
    /// fit's order statistics are within `2εn` ranks of the scores seen —
    /// ε from the query, at most εn from the scores that came after.
    pub fn stream_fit(&self, last: Option<u64>) -> Result<Option<StreamingResult>, Error> {
        let n = self.n();
        if let (Some(last), Some(sk)) = (last, &self.sketch) {
            let eps = sk.normalized_rank_error(false);
            let stale = n.saturating_sub(last) as f64 > (eps * n as f64).floor();
            if !reads_moments(&self.spec) && sk.is_estimation_mode() && !stale {
                return Ok(None);
            }
        }
        self.fit(false).map(Some)
    }
}

/// The fit of `spec` from a sketch of the oriented scores alone, for an
/// engine that sketches natively (Spark's `kll_sketch_agg_double`) and
/// reads the exact moments only when the fit needs them: `None` when it
/// does (the center is the mean or the trimmed mean, whose interval uses
/// the exact total, or the scale — chosen or reached by the §5 fallback
/// chain — is the SD). Otherwise the result equals that of a
/// [`StreamingGaussian`] holding the same sketch.
pub fn result_from_sketch(
    spec: &GaussianSpec,
    sketch: &KllSketch<f64>,
) -> Result<Option<StreamingResult>, Error> {
    spec.check()?;
    fit_result(spec, None, Some(sketch), true)
}

/// The result of a spec from its moments (`None`: not taken) and sketch;
/// `None` when the fit reads the moments and they are missing. Without
/// `intervals` the values are the same and no interval is returned.
fn fit_result(
    spec: &GaussianSpec,
    moments: Option<&Moments>,
    sketch: Option<&KllSketch<f64>>,
    intervals: bool,
) -> Result<Option<StreamingResult>, Error> {
    let n = match (moments, sketch) {
        (Some(m), _) => m.n(),
        (None, Some(s)) => s.n(),
        (None, None) => 0,
    };
    if n == 0 {
        return Err(Error::Empty { len: 0 });
    }
    let view = match sketch {
        Some(s) => Some(s.sorted_view()?),
        None => None,
    };
    let rank_error = match sketch {
        Some(s) if s.is_estimation_mode() => s.normalized_rank_error(false),
        _ => 0.0,
    };
    let mut ctx = Context {
        spec,
        moments,
        brackets: view.as_ref().map(|v| {
            let b = Brackets::new(v, rank_error);
            if intervals {
                b
            } else {
                b.values_only()
            }
        }),
        median: None,
        m: Vec::new(),
    };
    let Some(center) = ctx.center()? else {
        return Ok(None);
    };
    // A sketch too small for a scale (None) ends the fit; a NaN scale
    // settles, and is refused below.
    let (scale_used, scale) = fall_back(
        spec.scale,
        spec.scale.chain(),
        |s| ctx.scale(s, &center),
        |v| v.as_ref().is_none_or(|v| v.0 > 0.0 || v.0.is_nan()),
    )?;
    let Some(scale) = scale else {
        return Ok(None);
    };
    // contract §5, as the in-memory fit: a parameter beyond the double
    // range is refused, never published.
    if !scale.0.is_finite() {
        let what = format_args!("the fitted {} scale", scale_used.name());
        return Err(Error::beyond_range("scale", what));
    }
    if !center.0.is_finite() {
        let what = format_args!("the fitted {} center", spec.center.name());
        return Err(Error::beyond_range("center", what));
    }
    let (center_interval, scale_interval) = if intervals {
        (center.1, scale.1)
    } else {
        (None, None)
    };
    let probability_error = match (center_interval, scale_interval) {
        (Some(c), Some(s)) => Some(probability_band(c, s)),
        _ => None,
    };
    Ok(Some(StreamingResult {
        center: center.0,
        scale: scale.0.max(0.0),
        scale_used,
        center_interval,
        scale_interval,
        probability_error,
        rank_error,
        m_estimates: ctx.m,
        n,
    }))
}

type Value = (f64, Option<Interval>);

struct Context<'a> {
    spec: &'a GaussianSpec,
    /// `None` when only the sketch was taken.
    moments: Option<&'a Moments>,
    brackets: Option<Brackets<'a>>,
    median: Option<Estimate>,
    m: Vec<(Norm, MEstimate)>,
}

impl Context<'_> {
    fn brackets(&self) -> Result<Brackets<'_>, Error> {
        self.brackets.ok_or_else(|| Error::InvalidParameter {
            name: "state",
            reason: "this estimator needs the sketch".into(),
        })
    }

    fn orient(&self, v: f64) -> f64 {
        if self.spec.negate {
            -v
        } else {
            v
        }
    }

    fn median(&mut self) -> Result<Estimate, Error> {
        if let Some(m) = self.median {
            return Ok(m);
        }
        let m = self.brackets()?.median();
        self.median = Some(m);
        Ok(m)
    }

    fn m_estimate(&mut self, norm: Norm) -> Result<MEstimate, Error> {
        if let Some((_, e)) = self.m.iter().find(|(n, _)| *n == norm) {
            return Ok(*e);
        }
        let params = MParams {
            maxiter: self.spec.maxiter,
            tol: self.spec.tol,
            ..MParams::new(norm)
        };
        let e = self.brackets()?.m_estimate(&params)?;
        self.m.push((norm, e));
        Ok(e)
    }

    /// μ with its interval; `None` when it needs the missing moments.
    fn center(&mut self) -> Result<Option<Value>, Error> {
        let spec = self.spec;
        Ok(Some(match spec.center {
            Center::Mean => {
                let Some(moments) = self.moments else {
                    return Ok(None);
                };
                let m = self.orient(moments.mean()?);
                (m, Some(Interval::exact(m)))
            }
            Center::Median => {
                let m = self.median()?;
                (m.value, Some(m.interval))
            }
            Center::TrimmedMean => {
                let Some(moments) = self.moments else {
                    return Ok(None);
                };
                let total = moments
                    .exact_sum()
                    .to_limbs()
                    .map(|(neg, limbs)| ExactSum::from_limbs(neg != spec.negate, &limbs));
                let e = self
                    .brackets()?
                    .upper_trimmed_mean(spec.trim, total.as_ref());
                (e.value, Some(e.interval))
            }
            Center::M(norm) => (self.m_estimate(norm)?.location, None),
            Center::Value(c) => (c, Some(Interval::exact(c))),
        }))
    }

    /// σ with its interval; `None` when it needs the missing moments.
    fn scale(&mut self, which: Scale, center: &Value) -> Result<Option<Value>, Error> {
        let spec = self.spec;
        Ok(Some(match which {
            Scale::Std => {
                let Some(moments) = self.moments else {
                    return Ok(None);
                };
                // Correct to the last bit or so, not exactly rounded: the
                // in-memory SD may differ by an ulp or two.
                let s = moments.std(spec.ddof).unwrap_or(0.0);
                (s, Some(Interval::exact(s).widen(s, 4.0)))
            }
            Scale::Nmad => {
                let m = self.median()?;
                let e = self.brackets()?.nmad(&m);
                (e.value, Some(e.interval))
            }
            Scale::Niqr => {
                let e = self.brackets()?.niqr();
                (e.value, Some(e.interval))
            }
            Scale::TrimmedStd => {
                let Some(iv) = center.1 else {
                    // An M-estimated center has no interval to carry.
                    let c = Estimate {
                        value: center.0,
                        interval: Interval::exact(center.0),
                    };
                    let e = self.brackets()?.trimmed_std(&c, spec.trim);
                    return Ok(Some((e.value, None)));
                };
                let c = Estimate {
                    value: center.0,
                    interval: iv,
                };
                let e = self.brackets()?.trimmed_std(&c, spec.trim);
                (e.value, Some(e.interval))
            }
            Scale::M(norm) => (self.m_estimate(norm)?.scale, None),
            Scale::Value(v) => (v, Some(Interval::exact(v))),
        }))
    }
}

/// The sorted view of a state's sketch, for callers that query it.
pub fn view_of(state: &StreamingGaussian) -> Option<Result<SortedView, Error>> {
    state.sketch().map(KllSketch::sorted_view)
}

#[cfg(test)]
mod tests;
