//! The passes of the exact distributed fit (contract §9): what an engine
//! runs over every partition of a score column ([`Pass::map`]), the small
//! partial result each partition returns ([`Partial`]), and how partials
//! of consecutive pieces combine ([`Partial::combine`], associative, so an
//! engine may fold a partition's batches first). Partials travel from
//! workers as bytes ([`Partial::to_bytes`]); so do passes, to reach them.
//!
//! The kernels are those of [`crate::distributed::partition`]; a pass on
//! pretransformed scores (contract §10) maps `f(s)` in their place. Sums
//! over pieces are kept as the pieces' values and added exactly by the
//! plan, so the result does not depend on how the column was cut.
//!
//! The byte forms are for one fit's workers and client, not for storage:
//! they carry no version, but a form that does not parse is refused, never
//! trusted, and no length is allocated before the bytes hold it.

use crate::error::Error;
use crate::estimators::mest::{MParams, Norm};
use crate::numeric::float::Float;
use crate::numeric::rank::Key;
use crate::numeric::reduce::summarize;
use crate::sample::NanPolicy;
use crate::streaming::fit::StreamingGaussian;
use crate::streaming::kll::serde::{deserialize, serialize};
use crate::streaming::kll::KllSketch;
use crate::streaming::stored::MomentsParts;
use crate::transformations::fit::{Center, GaussianSpec, Scale};
use crate::transformations::gaussian_options::Pretransform;

use super::msummary::{collect_buckets, Bucket, MSummary, Tail, BUCKETS};
use super::partition::{self, SumPart};

/// Length, non-NaN count, §5 census and extremes of scores: of a
/// partition, or of a column once combined.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Counts {
    /// Scores (NaN included).
    pub len: u64,
    /// Scores that are not NaN.
    pub count: u64,
    /// NaN.
    pub nan: u64,
    /// Index of the first NaN, when known.
    pub nan_first: Option<u64>,
    /// ±inf.
    pub inf: u64,
    /// Index of the first ±inf, when known.
    pub inf_first: Option<u64>,
    /// Smallest non-NaN score (+inf when there is none).
    pub min: f64,
    /// Largest non-NaN score (−inf when there is none).
    pub max: f64,
}

impl Counts {
    /// The counts of `x`.
    pub fn of<T: Float>(x: &[T]) -> Self {
        let s = summarize(x);
        Counts {
            len: x.len() as u64,
            count: s.count as u64,
            nan: s.nan.count as u64,
            nan_first: (s.nan.count > 0).then_some(s.nan.first as u64),
            inf: s.inf.count as u64,
            inf_first: (s.inf.count > 0).then_some(s.inf.first as u64),
            min: s.min,
            max: s.max,
        }
    }

    /// The counts of `self`'s scores followed by `b`'s (first indexes from
    /// the start of `self`; of equal extremes the first is kept).
    #[must_use]
    pub fn join(&self, b: &Counts) -> Counts {
        let (lo, hi) = match (self.count > 0, b.count > 0) {
            (true, true) => (
                if b.min < self.min { b.min } else { self.min },
                if b.max > self.max { b.max } else { self.max },
            ),
            (true, false) => (self.min, self.max),
            _ => (b.min, b.max),
        };
        let after = |first: Option<u64>| first.map(|f| self.len + f);
        Counts {
            len: self.len + b.len,
            count: self.count + b.count,
            nan: self.nan + b.nan,
            nan_first: if self.nan > 0 {
                self.nan_first
            } else {
                after(b.nan_first)
            },
            inf: self.inf + b.inf,
            inf_first: if self.inf > 0 {
                self.inf_first
            } else {
                after(b.inf_first)
            },
            min: lo,
            max: hi,
        }
    }

    /// Contract §5 over the whole column, with the in-memory fit's
    /// messages: ±inf refused, NaN refused under `raise`, nothing left
    /// refused.
    pub fn check(&self, nan_policy: NanPolicy) -> Result<(), Error> {
        let index = |i: Option<u64>| i.map(|i| i as usize);
        if self.inf > 0 {
            return Err(Error::Infinite {
                count: self.inf as usize,
                first_index: index(self.inf_first),
            });
        }
        if self.nan > 0 && nan_policy == NanPolicy::Raise {
            return Err(Error::Nan {
                count: self.nan as usize,
                first_index: index(self.nan_first),
            });
        }
        if self.count == 0 {
            return Err(Error::Empty {
                len: self.len as usize,
            });
        }
        Ok(())
    }
}

/// The spec of the exact-moments state a census keeps: the mean and the
/// SD with `ddof`, of scores oriented by `negate`.
pub(crate) fn moments_spec(negate: bool, ddof: usize) -> GaussianSpec {
    GaussianSpec {
        ddof,
        negate,
        ..GaussianSpec::new(Center::Mean, Scale::Std)
    }
}

/// One pass over the scores of a column.
#[derive(Debug, Clone, PartialEq)]
pub enum PassKind {
    /// Counts and §5 census of the raw scores; of the scores read (`f(s)`
    /// with a pretransform) their counts, a KLL sketch of the oriented
    /// ones (`sketch_k` > 0) and their exact moments (`moments_ddof`).
    Census {
        /// Orient by −1.
        negate: bool,
        /// The sketch's k, or 0 for none.
        sketch_k: u16,
        /// The SD's ddof of the moments kept, if any.
        moments_ddof: Option<usize>,
    },
    /// Per bracket `(lo, hi, shift, buckets)` of order keys: the keys
    /// below `lo` and the bucket counts of `(key − lo) >> shift`.
    Histogram {
        /// What is ranked.
        key: Key,
        /// The brackets.
        brackets: Vec<(u64, u64, u32, usize)>,
    },
    /// Per key bracket `[lo, hi]`: the keyed values in it.
    Collect {
        /// What is ranked.
        key: Key,
        /// The brackets.
        brackets: Vec<(u64, u64)>,
    },
    /// Per key bracket: the keys below it and the keyed values in it.
    Bracket {
        /// What is ranked.
        key: Key,
        /// The brackets.
        brackets: Vec<(u64, u64)>,
    },
    /// The exact sum (as limbs) and count of the oriented scores below `v`.
    SumBelow {
        /// Orient by −1.
        negate: bool,
        /// The cut-off.
        v: f64,
    },
    /// Σ((±x − c)·2^-e)² and the count over `|±x − c| < w`.
    SquaresBelow {
        /// Orient by −1.
        negate: bool,
        /// The center.
        c: f64,
        /// The bound on the deviations kept.
        w: f64,
        /// The units' exponent.
        e: i32,
    },
    /// The sums of one step of Huber's proposal 2 at `(m, σ)`, on the
    /// oriented scores times 2^-e (`(m, σ)` in those units).
    MSums {
        /// Orient by −1.
        negate: bool,
        /// The location's norm.
        norm: Norm,
        /// The location.
        m: f64,
        /// The scale.
        sigma: f64,
        /// The units' exponent.
        e: i32,
    },
    /// The bucket summary of the oriented scores times 2^-e about `c`
    /// (`msummary`), from which the M-estimation's steps are read.
    MSummary {
        /// Orient by −1.
        negate: bool,
        /// The location's norm.
        norm: Norm,
        /// The units' exponent.
        e: i32,
        /// The grid's center, in those units.
        c: f64,
    },
    /// The oriented scores times 2^-e of the summary's buckets `buckets`
    /// (increasing indexes), per bucket.
    MCollect {
        /// Orient by −1.
        negate: bool,
        /// The units' exponent.
        e: i32,
        /// The grid's center, in those units.
        c: f64,
        /// The buckets.
        buckets: Vec<u32>,
    },
    /// Several passes (none a census or itself fused) in one read of the
    /// scores: their partials, in order. A read of the column costs more
    /// than what most passes compute from it, so the plan fuses the passes
    /// whose parameters it can foresee.
    Fused(Vec<PassKind>),
}

/// A pass, on the scores or on their pretransform.
#[derive(Debug, Clone, PartialEq)]
pub struct Pass {
    /// Applied to every score first (the identity for most fits).
    pub pre: Pretransform,
    /// What the pass computes.
    pub kind: PassKind,
}

/// What a pass returns for a piece of the column: the same variant as its
/// [`PassKind`].
// A fit holds a handful of partials at a time: their size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Partial {
    /// Of [`PassKind::Census`].
    Census {
        /// Of the raw scores.
        raw: Counts,
        /// Of the scores read.
        read: Counts,
        /// Of the oriented scores read (none when not asked or ±inf).
        sketch: Option<KllSketch<f64>>,
        /// The exact moments of the scores read (when asked; none on ±inf).
        moments: Option<StreamingGaussian>,
    },
    /// Of [`PassKind::Histogram`]: per bracket, the count below and the
    /// bucket counts.
    Histograms(Vec<(u64, Vec<u64>)>),
    /// Of [`PassKind::Collect`]: per bracket, the values (in the pieces'
    /// order).
    Collected(Vec<Vec<f64>>),
    /// Of [`PassKind::Bracket`]: per bracket, the count below and the
    /// values.
    Brackets(Vec<(u64, Vec<f64>)>),
    /// Of [`PassKind::SumBelow`]: one part per piece.
    Sums(Vec<SumPart>),
    /// Of [`PassKind::SquaresBelow`]: one `(Σ, count)` per piece.
    Squares(Vec<(f64, u64)>),
    /// Of [`PassKind::MSums`]: one sum vector per piece.
    MSums(Vec<[f64; 6]>),
    /// Of [`PassKind::MSummary`].
    MSummary(Box<MSummary>),
    /// Of [`PassKind::Fused`]: per pass, its partial.
    Fused(Vec<Partial>),
}

impl Pass {
    /// The pass's partial of the scores `x` of one piece.
    pub fn map<T: Float>(&self, x: &[T]) -> Result<Partial, Error> {
        if self.pre == Pretransform::Identity {
            return self.map_read(x, None::<&[T]>);
        }
        self.map_read(x, Some(&self.pre.apply_all(x)[..]))
    }

    /// The partial of the raw scores `x`, read as `y` (`None`: as they are).
    fn map_read<T: Float, U: Float>(&self, x: &[T], y: Option<&[U]>) -> Result<Partial, Error> {
        if let PassKind::Census {
            negate,
            sketch_k,
            moments_ddof,
        } = self.kind
        {
            return match y {
                None => census(x, x, None, negate, sketch_k, moments_ddof),
                Some(y) => census(x, y, Some(Counts::of(y)), negate, sketch_k, moments_ddof),
            };
        }
        match y {
            None => self.map_scores(x),
            Some(y) => self.map_scores(y),
        }
    }

    /// The partial of a pass other than the census, of the scores read.
    fn map_scores<U: Float>(&self, y: &[U]) -> Result<Partial, Error> {
        Ok(match &self.kind {
            PassKind::Census { .. } => unreachable!("the census is mapped by `census`"),
            PassKind::Histogram { key, brackets } => Partial::Histograms(
                brackets
                    .iter()
                    .map(|&(lo, _, shift, buckets)| {
                        partition::histogram(y, *key, lo, shift, buckets)
                    })
                    .collect::<Result<_, _>>()?,
            ),
            PassKind::Collect { key, brackets } => Partial::Collected(
                brackets
                    .iter()
                    .map(|&(lo, hi)| partition::collect(y, *key, lo, hi))
                    .collect(),
            ),
            PassKind::Bracket { key, brackets } => Partial::Brackets(
                brackets
                    .iter()
                    .map(|&(lo, hi)| {
                        let (below, _) = partition::histogram(y, *key, lo, 63, 1)?;
                        Ok((below, partition::collect(y, *key, lo, hi)))
                    })
                    .collect::<Result<_, Error>>()?,
            ),
            PassKind::SumBelow { negate, v } => {
                Partial::Sums(vec![partition::sum_below(y, *negate, *v)])
            }
            PassKind::SquaresBelow { negate, c, w, e } => {
                Partial::Squares(vec![partition::squares_below(y, *negate, *c, *w, *e)])
            }
            PassKind::MSums {
                negate,
                norm,
                m,
                sigma,
                e,
            } => {
                let params = MParams::new(*norm);
                Partial::MSums(vec![partition::m_sums(
                    y,
                    *negate,
                    &params,
                    (*m, *sigma),
                    *e,
                )])
            }
            PassKind::MSummary { negate, norm, e, c } => Partial::MSummary(Box::new(MSummary::of(
                y,
                *negate,
                *e,
                *c,
                *norm == Norm::Huber,
            ))),
            PassKind::MCollect {
                negate,
                e,
                c,
                buckets,
            } => Partial::Collected(collect_buckets(y, *negate, *e, *c, buckets)),
            PassKind::Fused(kinds) => Partial::Fused(
                kinds
                    .iter()
                    .map(|kind| {
                        Pass {
                            pre: self.pre,
                            kind: kind.clone(),
                        }
                        .map_scores(y)
                    })
                    .collect::<Result<_, _>>()?,
            ),
        })
    }

    /// What the pass computes, in a word ("census", "histogram",
    /// "collect", "bracket", "sum_below", "squares_below", "m_sums").
    pub fn name(&self) -> &'static str {
        match self.kind {
            PassKind::Census { .. } => "census",
            PassKind::Histogram { .. } => "histogram",
            PassKind::Collect { .. } => "collect",
            PassKind::Bracket { .. } => "bracket",
            PassKind::SumBelow { .. } => "sum_below",
            PassKind::SquaresBelow { .. } => "squares_below",
            PassKind::MSums { .. } => "m_sums",
            PassKind::MSummary { .. } => "m_summary",
            PassKind::MCollect { .. } => "m_collect",
            PassKind::Fused(_) => "fused",
        }
    }

    /// Whether this pass is a census an engine may run natively (counts,
    /// extremes and a sketch, no moments, no pretransform): its
    /// orientation and the sketch's k.
    pub fn native_census(&self) -> Option<(bool, u16)> {
        match self.kind {
            PassKind::Census {
                negate,
                sketch_k,
                moments_ddof: None,
            } if self.pre == Pretransform::Identity => Some((negate, sketch_k)),
            _ => None,
        }
    }
}

/// The census partial of raw scores `x` read as `y`, whose counts are
/// `read` (`None`: `y` is `x`).
fn census<T: Float, U: Float>(
    x: &[T],
    y: &[U],
    read: Option<Counts>,
    negate: bool,
    sketch_k: u16,
    moments_ddof: Option<usize>,
) -> Result<Partial, Error> {
    let raw = Counts::of(x);
    let read = read.unwrap_or(raw);
    let (mut sketch, mut moments) = (None, None);
    // ±inf: refused by the plan, nothing to sketch.
    if read.inf == 0 {
        if sketch_k > 0 {
            let sign = if negate { -1.0 } else { 1.0 };
            let oriented: Vec<f64> = y.iter().map(|v| sign * v.to_f64()).collect();
            let mut s = KllSketch::new(sketch_k, 0)?;
            s.update(&oriented);
            sketch = Some(s);
        }
        if let Some(ddof) = moments_ddof {
            let mut st = StreamingGaussian::new(moments_spec(negate, ddof), 8, 0)?;
            st.update(y)?;
            moments = Some(st);
        }
    }
    Ok(Partial::Census {
        raw,
        read,
        sketch,
        moments,
    })
}

fn mismatch() -> Error {
    Error::invalid("partial", "partials of different passes do not combine")
}

impl Partial {
    /// The partial of a census an engine ran natively (see
    /// [`Pass::native_census`]): counts without first indexes, and the
    /// sketch's bytes (DataSketches' `kll_doubles_sketch`).
    pub fn native_census(counts: Counts, sketch: Option<&[u8]>) -> Result<Partial, Error> {
        let sketch = match sketch {
            Some(b) => {
                let mut s: KllSketch<f64> = deserialize(b)?;
                s.set_seed(0);
                Some(s)
            }
            None => None,
        };
        Ok(Partial::Census {
            raw: counts,
            read: counts,
            sketch,
            moments: None,
        })
    }

    /// The partial of `self`'s piece followed by `other`'s.
    pub fn combine(self, other: Partial) -> Result<Partial, Error> {
        Ok(match (self, other) {
            (
                Partial::Census {
                    raw,
                    read,
                    sketch,
                    moments,
                },
                Partial::Census {
                    raw: raw_b,
                    read: read_b,
                    sketch: sketch_b,
                    moments: moments_b,
                },
            ) => {
                let sketch = match (sketch, sketch_b) {
                    (Some(mut a), Some(b)) => {
                        a.n().checked_add(b.n()).ok_or_else(|| {
                            Error::invalid("scores", "a sketch counts at most 2^64 − 1 scores")
                        })?;
                        a.merge(&b);
                        Some(a)
                    }
                    (a, b) => a.or(b),
                };
                let moments = match (moments, moments_b) {
                    (Some(mut a), Some(b)) => {
                        a.merge(&b)?;
                        Some(a)
                    }
                    (a, b) => a.or(b),
                };
                Partial::Census {
                    raw: raw.join(&raw_b),
                    read: read.join(&read_b),
                    sketch,
                    moments,
                }
            }
            (Partial::Histograms(a), Partial::Histograms(b)) if a.len() == b.len() => {
                Partial::Histograms(
                    a.into_iter()
                        .zip(b)
                        .map(|((ba, ca), (bb, cb))| {
                            if ca.len() != cb.len() {
                                return Err(mismatch());
                            }
                            let counts = ca.iter().zip(&cb).map(|(x, y)| x + y).collect();
                            Ok((ba + bb, counts))
                        })
                        .collect::<Result<_, _>>()?,
                )
            }
            (Partial::Collected(a), Partial::Collected(b)) if a.len() == b.len() => {
                Partial::Collected(a.into_iter().zip(b).map(|(x, y)| [x, y].concat()).collect())
            }
            (Partial::Brackets(a), Partial::Brackets(b)) if a.len() == b.len() => {
                Partial::Brackets(
                    a.into_iter()
                        .zip(b)
                        .map(|((ba, va), (bb, vb))| (ba + bb, [va, vb].concat()))
                        .collect(),
                )
            }
            (Partial::Sums(a), Partial::Sums(b)) => Partial::Sums([a, b].concat()),
            (Partial::Squares(a), Partial::Squares(b)) => Partial::Squares([a, b].concat()),
            (Partial::MSums(a), Partial::MSums(b)) => Partial::MSums([a, b].concat()),
            (Partial::MSummary(a), Partial::MSummary(b)) => {
                Partial::MSummary(Box::new(a.combine(*b)))
            }
            (Partial::Fused(a), Partial::Fused(b)) if a.len() == b.len() => Partial::Fused(
                a.into_iter()
                    .zip(b)
                    .map(|(x, y)| x.combine(y))
                    .collect::<Result<_, _>>()?,
            ),
            _ => return Err(mismatch()),
        })
    }
}

// -- bytes --------------------------------------------------------------------------------

/// Little-endian fields, written in order.
#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    fn opt(&mut self, v: Option<u64>) {
        self.u8(u8::from(v.is_some()));
        self.u64(v.unwrap_or(0));
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    fn f64s(&mut self, v: &[f64]) {
        self.u64(v.len() as u64);
        for &x in v {
            self.f64(x);
        }
    }
    fn u64s(&mut self, v: &[u64]) {
        self.u64(v.len() as u64);
        for &x in v {
            self.u64(x);
        }
    }
}

/// Reads what a [`Writer`] wrote, refusing what does not parse.
struct Reader<'a>(&'a [u8]);

fn corrupt() -> Error {
    Error::invalid("partial", "not the bytes of a pass or of a partial result")
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], Error> {
        if n > self.0.len() {
            return Err(corrupt());
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?[0])
    }
    fn u64(&mut self) -> Result<u64, Error> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().map_err(|_| corrupt())?))
    }
    fn f64(&mut self) -> Result<f64, Error> {
        Ok(f64::from_bits(self.u64()?))
    }
    /// A units' exponent: within ±2^12, wider than any a fit picks
    /// (the double range spans 2^-1074..2^1024), so that negating and
    /// rescaling by it cannot overflow.
    fn exponent(&mut self) -> Result<i32, Error> {
        let e = self.u64()? as i64;
        if e.unsigned_abs() > 1 << 12 {
            return Err(corrupt());
        }
        Ok(e as i32)
    }
    fn bool(&mut self) -> Result<bool, Error> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(corrupt()),
        }
    }
    fn opt(&mut self) -> Result<Option<u64>, Error> {
        let some = self.bool()?;
        let v = self.u64()?;
        Ok(some.then_some(v))
    }
    /// A length of items of `size` bytes, bounded by the bytes left.
    fn len(&mut self, size: usize) -> Result<usize, Error> {
        let n = usize::try_from(self.u64()?).map_err(|_| corrupt())?;
        if n.checked_mul(size).is_none_or(|b| b > self.0.len()) {
            return Err(corrupt());
        }
        Ok(n)
    }
    fn bytes(&mut self) -> Result<&[u8], Error> {
        let n = self.len(1)?;
        self.take(n)
    }
    fn f64s(&mut self) -> Result<Vec<f64>, Error> {
        let n = self.len(8)?;
        (0..n).map(|_| self.f64()).collect()
    }
    fn u64s(&mut self) -> Result<Vec<u64>, Error> {
        let n = self.len(8)?;
        (0..n).map(|_| self.u64()).collect()
    }
    /// `n` items read by `f`, `n` bounded by the bytes left (each item at
    /// least `size` bytes).
    fn list<T>(
        &mut self,
        size: usize,
        mut f: impl FnMut(&mut Self) -> Result<T, Error>,
    ) -> Result<Vec<T>, Error> {
        let n = self.len(size)?;
        (0..n).map(|_| f(self)).collect()
    }
    fn end(&self) -> Result<(), Error> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(corrupt())
        }
    }
}

fn write_counts(w: &mut Writer, c: &Counts) {
    w.u64(c.len);
    w.u64(c.count);
    w.u64(c.nan);
    w.opt(c.nan_first);
    w.u64(c.inf);
    w.opt(c.inf_first);
    w.f64(c.min);
    w.f64(c.max);
}

fn read_counts(r: &mut Reader<'_>) -> Result<Counts, Error> {
    Ok(Counts {
        len: r.u64()?,
        count: r.u64()?,
        nan: r.u64()?,
        nan_first: r.opt()?,
        inf: r.u64()?,
        inf_first: r.opt()?,
        min: r.f64()?,
        max: r.f64()?,
    })
}

fn write_key(w: &mut Writer, key: Key) {
    match key {
        Key::Value { negate } => {
            w.u8(0);
            w.u8(u8::from(negate));
            w.f64(0.0);
        }
        Key::Deviation { center, negate } => {
            w.u8(1);
            w.u8(u8::from(negate));
            w.f64(center);
        }
    }
}

fn read_key(r: &mut Reader<'_>) -> Result<Key, Error> {
    let (kind, negate, center) = (r.u8()?, r.bool()?, r.f64()?);
    match kind {
        0 => Ok(Key::Value { negate }),
        1 => Ok(Key::Deviation { center, negate }),
        _ => Err(corrupt()),
    }
}

fn norm_code(norm: Norm) -> u8 {
    match norm {
        Norm::Huber => 0,
        Norm::Tukey => 1,
    }
}

fn read_norm(r: &mut Reader<'_>) -> Result<Norm, Error> {
    match r.u8()? {
        0 => Ok(Norm::Huber),
        1 => Ok(Norm::Tukey),
        _ => Err(corrupt()),
    }
}

fn write_kind(w: &mut Writer, kind: &PassKind) {
    match kind {
        PassKind::Census {
            negate,
            sketch_k,
            moments_ddof,
        } => {
            w.u8(0);
            w.u8(u8::from(*negate));
            w.u64(u64::from(*sketch_k));
            w.opt(moments_ddof.map(|d| d as u64));
        }
        PassKind::Histogram { key, brackets } => {
            w.u8(1);
            write_key(w, *key);
            w.u64(brackets.len() as u64);
            for &(lo, hi, shift, buckets) in brackets {
                w.u64(lo);
                w.u64(hi);
                w.u64(u64::from(shift));
                w.u64(buckets as u64);
            }
        }
        PassKind::Collect { key, brackets } | PassKind::Bracket { key, brackets } => {
            w.u8(if matches!(kind, PassKind::Collect { .. }) {
                2
            } else {
                3
            });
            write_key(w, *key);
            w.u64(brackets.len() as u64);
            for &(lo, hi) in brackets {
                w.u64(lo);
                w.u64(hi);
            }
        }
        PassKind::SumBelow { negate, v } => {
            w.u8(4);
            w.u8(u8::from(*negate));
            w.f64(*v);
        }
        PassKind::SquaresBelow {
            negate,
            c,
            w: width,
            e,
        } => {
            w.u8(5);
            w.u8(u8::from(*negate));
            w.f64(*c);
            w.f64(*width);
            w.u64(i64::from(*e) as u64);
        }
        PassKind::MSums {
            negate,
            norm,
            m,
            sigma,
            e,
        } => {
            w.u8(6);
            w.u8(u8::from(*negate));
            w.u8(norm_code(*norm));
            w.f64(*m);
            w.f64(*sigma);
            w.u64(i64::from(*e) as u64);
        }
        PassKind::MSummary { negate, norm, e, c } => {
            w.u8(7);
            w.u8(u8::from(*negate));
            w.u8(norm_code(*norm));
            w.u64(i64::from(*e) as u64);
            w.f64(*c);
        }
        PassKind::MCollect {
            negate,
            e,
            c,
            buckets,
        } => {
            w.u8(8);
            w.u8(u8::from(*negate));
            w.u64(i64::from(*e) as u64);
            w.f64(*c);
            w.u64s(&buckets.iter().map(|&b| u64::from(b)).collect::<Vec<_>>());
        }
        PassKind::Fused(kinds) => {
            w.u8(9);
            w.u64(kinds.len() as u64);
            for k in kinds {
                write_kind(w, k);
            }
        }
    }
}

/// A pass's kind from [`write_kind`]; a fused pass only when `outer`.
fn read_kind(r: &mut Reader<'_>, outer: bool) -> Result<PassKind, Error> {
    Ok(match r.u8()? {
        0 => PassKind::Census {
            negate: r.bool()?,
            sketch_k: u16::try_from(r.u64()?).map_err(|_| corrupt())?,
            moments_ddof: r
                .opt()?
                .map(|d| usize::try_from(d).map_err(|_| corrupt()))
                .transpose()?,
        },
        1 => {
            let key = read_key(r)?;
            let brackets = r.list(32, |r| {
                Ok((
                    r.u64()?,
                    r.u64()?,
                    u32::try_from(r.u64()?).map_err(|_| corrupt())?,
                    usize::try_from(r.u64()?).map_err(|_| corrupt())?,
                ))
            })?;
            PassKind::Histogram { key, brackets }
        }
        tag @ (2 | 3) => {
            let key = read_key(r)?;
            let brackets = r.list(16, |r| Ok((r.u64()?, r.u64()?)))?;
            if tag == 2 {
                PassKind::Collect { key, brackets }
            } else {
                PassKind::Bracket { key, brackets }
            }
        }
        4 => PassKind::SumBelow {
            negate: r.bool()?,
            v: r.f64()?,
        },
        5 => PassKind::SquaresBelow {
            negate: r.bool()?,
            c: r.f64()?,
            w: r.f64()?,
            e: r.exponent()?,
        },
        6 => PassKind::MSums {
            negate: r.bool()?,
            norm: read_norm(r)?,
            m: r.f64()?,
            sigma: r.f64()?,
            e: r.exponent()?,
        },
        7 => PassKind::MSummary {
            negate: r.bool()?,
            norm: read_norm(r)?,
            e: r.exponent()?,
            c: r.f64()?,
        },
        8 => {
            let (negate, e, c) = (r.bool()?, r.exponent()?, r.f64()?);
            let buckets = r
                .u64s()?
                .into_iter()
                .map(|b| u32::try_from(b).ok().filter(|&b| (b as usize) < BUCKETS))
                .collect::<Option<Vec<u32>>>()
                .filter(|b| b.windows(2).all(|w| w[0] < w[1]))
                .ok_or_else(corrupt)?;
            PassKind::MCollect {
                negate,
                e,
                c,
                buckets,
            }
        }
        9 if outer => {
            // One level, no census: what the plan fuses.
            let kinds = r.list(2, |r| read_kind(r, false))?;
            if kinds.iter().any(|k| matches!(k, PassKind::Census { .. })) {
                return Err(corrupt());
            }
            PassKind::Fused(kinds)
        }
        _ => return Err(corrupt()),
    })
}

impl Pass {
    /// The pass as bytes, for the workers that run it.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::default();
        match self.pre {
            Pretransform::Identity => w.u8(0),
            Pretransform::Sqrt { min } => {
                w.u8(1);
                w.f64(min);
            }
            Pretransform::MinusLog => w.u8(2),
        }
        write_kind(&mut w, &self.kind);
        w.0
    }

    /// A pass from [`Pass::to_bytes`].
    pub fn from_bytes(b: &[u8]) -> Result<Pass, Error> {
        let mut r = Reader(b);
        let pre = match r.u8()? {
            0 => Pretransform::Identity,
            1 => Pretransform::Sqrt { min: r.f64()? },
            2 => Pretransform::MinusLog,
            _ => return Err(corrupt()),
        };
        let kind = read_kind(&mut r, true)?;
        r.end()?;
        Ok(Pass { pre, kind })
    }
}

fn write_summary(w: &mut Writer, s: &MSummary) {
    for t in [&s.left, &s.right] {
        w.u64(t.n);
        w.f64(t.min);
        w.f64(t.max);
        w.f64s(&t.sums);
    }
    let entries: Vec<(u32, &Bucket)> = s.entries().collect();
    w.u64(entries.len() as u64);
    for (i, b) in entries {
        w.u64(u64::from(i));
        w.u64(b.n);
        w.f64(b.min);
        w.f64(b.max);
        for &p in &b.sums {
            w.f64(p);
        }
    }
}

fn write_partial(w: &mut Writer, p: &Partial) {
    match p {
        Partial::Census {
            raw,
            read,
            sketch,
            moments,
        } => {
            w.u8(0);
            write_counts(w, raw);
            write_counts(w, read);
            w.u8(u8::from(sketch.is_some()));
            w.bytes(&sketch.as_ref().map(serialize).unwrap_or_default());
            w.u8(u8::from(moments.is_some()));
            if let Some(st) = moments {
                let spec = st.spec();
                w.u8(u8::from(spec.negate));
                w.u64(spec.ddof as u64);
                let p = st.moments().to_parts();
                w.u64(p.n);
                w.u8(u8::from(p.sum_negative));
                w.u64s(&p.sum_limbs);
                w.f64(p.shift);
                w.u64(i64::from(p.k) as u64);
                w.f64s(&p.dsum);
                w.f64s(&p.dsq);
                w.f64(p.min);
                w.f64(p.max);
            }
        }
        Partial::Histograms(h) => {
            w.u8(1);
            w.u64(h.len() as u64);
            for (below, counts) in h {
                w.u64(*below);
                w.u64s(counts);
            }
        }
        Partial::Collected(c) => {
            w.u8(2);
            w.u64(c.len() as u64);
            for v in c {
                w.f64s(v);
            }
        }
        Partial::Brackets(b) => {
            w.u8(3);
            w.u64(b.len() as u64);
            for (below, v) in b {
                w.u64(*below);
                w.f64s(v);
            }
        }
        Partial::Sums(s) => {
            w.u8(4);
            w.u64(s.len() as u64);
            for p in s {
                w.u8(u8::from(p.negative));
                w.u64s(&p.limbs);
                w.u64(p.count);
            }
        }
        Partial::Squares(s) => {
            w.u8(5);
            w.u64(s.len() as u64);
            for &(sum, count) in s {
                w.f64(sum);
                w.u64(count);
            }
        }
        Partial::MSums(m) => {
            w.u8(6);
            w.u64(m.len() as u64);
            for &x in m.iter().flatten() {
                w.f64(x);
            }
        }
        Partial::MSummary(s) => {
            w.u8(7);
            write_summary(w, s);
        }
        Partial::Fused(parts) => {
            w.u8(8);
            w.u64(parts.len() as u64);
            for part in parts {
                write_partial(w, part);
            }
        }
    }
}

/// A partial from [`write_partial`]; a fused one only when `outer`.
fn read_partial(r: &mut Reader<'_>, outer: bool) -> Result<Partial, Error> {
    Ok(match r.u8()? {
        0 => {
            let (raw, read) = (read_counts(r)?, read_counts(r)?);
            let has_sketch = r.bool()?;
            let bytes = r.bytes()?;
            let sketch = if has_sketch {
                let mut s: KllSketch<f64> = deserialize(bytes)?;
                s.set_seed(0);
                Some(s)
            } else {
                None
            };
            let moments = if r.bool()? {
                let (negate, ddof) = (r.bool()?, r.u64()?);
                let ddof = usize::try_from(ddof).map_err(|_| corrupt())?;
                let parts = MomentsParts {
                    n: r.u64()?,
                    sum_negative: r.bool()?,
                    sum_limbs: r.u64s()?,
                    shift: r.f64()?,
                    k: i32::try_from(r.u64()? as i64).map_err(|_| corrupt())?,
                    dsum: <[f64; 2]>::try_from(r.f64s()?).map_err(|_| corrupt())?,
                    dsq: <[f64; 2]>::try_from(r.f64s()?).map_err(|_| corrupt())?,
                    min: r.f64()?,
                    max: r.f64()?,
                };
                let spec = moments_spec(negate, ddof);
                Some(StreamingGaussian::from_parts(spec, &parts, None, 0)?)
            } else {
                None
            };
            Partial::Census {
                raw,
                read,
                sketch,
                moments,
            }
        }
        1 => Partial::Histograms(r.list(16, |r| Ok((r.u64()?, r.u64s()?)))?),
        2 => Partial::Collected(r.list(8, Reader::f64s)?),
        3 => Partial::Brackets(r.list(16, |r| Ok((r.u64()?, r.f64s()?)))?),
        4 => Partial::Sums(r.list(17, |r| {
            Ok(SumPart {
                negative: r.bool()?,
                limbs: r.u64s()?,
                count: r.u64()?,
            })
        })?),
        5 => Partial::Squares(r.list(16, |r| Ok((r.f64()?, r.u64()?)))?),
        6 => Partial::MSums(r.list(48, |r| {
            let mut v = [0.0; 6];
            for x in &mut v {
                *x = r.f64()?;
            }
            Ok(v)
        })?),
        7 => {
            let mut tail = || -> Result<Tail, Error> {
                let (n, min, max) = (r.u64()?, r.f64()?, r.f64()?);
                let terms = r.f64s()?;
                let mut t = Tail {
                    n,
                    min,
                    max,
                    ..Tail::default()
                };
                if terms.len() != t.sums.len() {
                    return Err(corrupt());
                }
                t.sums.copy_from_slice(&terms);
                Ok(t)
            };
            let (left, right) = (tail()?, tail()?);
            let buckets = r.list(8 * (4 + 7), |r| {
                let i = u32::try_from(r.u64()?).map_err(|_| corrupt())?;
                let mut b = Bucket {
                    n: r.u64()?,
                    min: r.f64()?,
                    max: r.f64()?,
                    ..Bucket::default()
                };
                for p in &mut b.sums {
                    *p = r.f64()?;
                }
                Ok((i, b))
            })?;
            Partial::MSummary(Box::new(MSummary::from_parts(buckets, left, right)?))
        }
        8 if outer => Partial::Fused(r.list(1, |r| read_partial(r, false))?),
        _ => return Err(corrupt()),
    })
}

impl Partial {
    /// The partial as bytes, for the trip from a worker.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::default();
        write_partial(&mut w, self);
        w.0
    }

    /// A partial from [`Partial::to_bytes`] (its sketch and moments checked
    /// by their readers).
    pub fn from_bytes(b: &[u8]) -> Result<Partial, Error> {
        let mut r = Reader(b);
        let p = read_partial(&mut r, true)?;
        r.end()?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transformations::gaussian_options::PretransformKind;

    fn passes() -> Vec<Pass> {
        let key = Key::Deviation {
            center: 1.5,
            negate: true,
        };
        let kinds = vec![
            PassKind::Census {
                negate: true,
                sketch_k: 20,
                moments_ddof: Some(1),
            },
            PassKind::Histogram {
                key,
                brackets: vec![(0, u64::MAX, 52, 4096), (7, 9, 0, 3)],
            },
            PassKind::Collect {
                key: Key::VALUE,
                brackets: vec![(0, u64::MAX)],
            },
            PassKind::Bracket {
                key,
                brackets: vec![(0, u64::MAX), (3, 4)],
            },
            PassKind::SumBelow {
                negate: false,
                v: 2.5,
            },
            PassKind::SquaresBelow {
                negate: true,
                c: 0.5,
                w: f64::INFINITY,
                e: -3,
            },
            PassKind::MSums {
                negate: false,
                norm: Norm::Tukey,
                m: 1.0,
                sigma: 2.0,
                e: -2,
            },
            PassKind::MSummary {
                negate: true,
                norm: Norm::Huber,
                e: -1,
                c: 0.5,
            },
            PassKind::MCollect {
                negate: false,
                e: 1,
                c: 0.0,
                buckets: vec![60_000, 65_536, 70_000],
            },
            PassKind::Fused(vec![
                PassKind::Bracket {
                    key: Key::VALUE,
                    brackets: vec![(3, 4), (0, u64::MAX)],
                },
                PassKind::MSummary {
                    negate: false,
                    norm: Norm::Tukey,
                    e: 0,
                    c: 1.0,
                },
            ]),
        ];
        let sqrt = PretransformKind::Sqrt.fitted(0.25);
        kinds
            .into_iter()
            .flat_map(|kind| {
                [Pretransform::Identity, sqrt].map(|pre| Pass {
                    pre,
                    kind: kind.clone(),
                })
            })
            .collect()
    }

    #[test]
    fn passes_and_partials_travel_as_bytes_and_combine_as_one_piece() {
        let x: Vec<f64> = (0..300).map(|i| f64::from(i % 23) * 0.37 - 2.0).collect();
        let (a, b) = x.split_at(111);
        for pass in passes() {
            assert_eq!(Pass::from_bytes(&pass.to_bytes()).unwrap(), pass);
            let whole = pass.map(&x).unwrap();
            let parts = pass.map(a).unwrap().combine(pass.map(b).unwrap()).unwrap();
            let back = Partial::from_bytes(&parts.to_bytes()).unwrap();
            assert_eq!(back.to_bytes(), parts.to_bytes());
            match (&whole, &parts) {
                (
                    Partial::Census { raw, read, .. },
                    Partial::Census {
                        raw: r2, read: e2, ..
                    },
                ) => {
                    assert_eq!((raw, read), (r2, e2));
                }
                (
                    Partial::Sums(_)
                    | Partial::Squares(_)
                    | Partial::MSums(_)
                    | Partial::MSummary(_)
                    | Partial::Fused(_),
                    _,
                ) => {}
                _ => assert_eq!(whole, parts),
            }
            for cut in 0..parts.to_bytes().len() {
                assert!(Partial::from_bytes(&parts.to_bytes()[..cut]).is_err());
            }
            let tail = [parts.to_bytes(), vec![0]].concat();
            assert!(Partial::from_bytes(&tail).is_err());
            assert!(Pass::from_bytes(&[pass.to_bytes(), vec![0]].concat()).is_err());
        }
        // A units' exponent beyond any fit's is refused, not negated.
        for pass in passes().iter().filter(|p| p.name() == "m_sums") {
            let mut bytes = pass.to_bytes();
            let at = bytes.len() - 8;
            bytes[at..].copy_from_slice(&(i64::from(i32::MIN) as u64).to_le_bytes());
            assert!(Pass::from_bytes(&bytes).is_err());
        }
        let census = passes()[0].map(&x).unwrap();
        assert!(census.combine(Partial::MSums(Vec::new())).is_err());
        // A fused pass holds plain passes only: no census, no nesting.
        let fused = passes().pop().unwrap();
        let PassKind::Fused(kinds) = &fused.kind else {
            panic!("the last pass is fused")
        };
        let parts = fused.map(&x).unwrap();
        match &parts {
            Partial::Fused(p) => {
                assert_eq!(p.len(), 2);
                let alone = Pass {
                    pre: fused.pre,
                    kind: kinds[0].clone(),
                };
                assert_eq!(p[0], alone.map(&x).unwrap());
            }
            _ => panic!("a fused pass maps to a fused partial"),
        }
        for inner in [passes()[0].kind.clone(), fused.kind.clone()] {
            let bad = Pass {
                pre: Pretransform::Identity,
                kind: PassKind::Fused(vec![inner]),
            };
            assert!(Pass::from_bytes(&bad.to_bytes()).is_err());
        }
        let nested = Partial::Fused(vec![parts.clone()]);
        assert!(Partial::from_bytes(&nested.to_bytes()).is_err());
        assert!(parts.combine(Partial::Fused(Vec::new())).is_err());
    }

    #[test]
    fn counts_join_and_check_like_one_read() {
        let x = [1.0, f64::NAN, -0.0, 0.0, f64::INFINITY, 3.0];
        let whole = Counts::of(&x);
        for cut in 0..=x.len() {
            let (a, b) = x.split_at(cut);
            let joined = Counts::of(a).join(&Counts::of(b));
            assert_eq!(
                (
                    joined.len,
                    joined.count,
                    joined.nan,
                    joined.nan_first,
                    joined.inf,
                    joined.inf_first
                ),
                (
                    whole.len,
                    whole.count,
                    whole.nan,
                    whole.nan_first,
                    whole.inf,
                    whole.inf_first
                )
            );
        }
        assert_eq!(
            whole.check(NanPolicy::Omit).unwrap_err().to_string(),
            "scores contain 1 infinite value (first at index 4); fitting needs finite scores: \
             drop or clip them before fitting"
        );
        let unknown = Counts {
            inf_first: None,
            ..whole
        };
        assert!(!unknown
            .check(NanPolicy::Omit)
            .unwrap_err()
            .to_string()
            .contains("index"));
        let nan = Counts::of(&[f64::NAN, 1.0]);
        assert!(nan.check(NanPolicy::Raise).is_err() && nan.check(NanPolicy::Omit).is_ok());
        assert_eq!(
            Counts::of::<f64>(&[]).check(NanPolicy::Omit),
            Err(Error::Empty { len: 0 })
        );
    }
}
