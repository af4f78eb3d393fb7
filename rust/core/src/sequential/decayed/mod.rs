//! An exponentially decayed fit: the moments and order statistics of a
//! stream in which a score's weight halves every `half_life` scores
//! (contract §12, "Decayed fit"), for refits that follow a drifting
//! stream without a hard window.
//!
//! After n scores x₀ … x_{n−1} (NaN are not scores), score i weighs
//! w_i = 2^{−(n−1−i)/h}: the newest 1, one h scores older ½.
//!
//! * **Moments, exact**: W = Σ w_i, the weighted mean and the weighted
//!   variance Σ w_i (x_i − μ)²/W (ddof 0), updated per score by West's
//!   weighted recursion (West 1979) with every earlier weight multiplied by
//!   ρ = 2^{−1/h} first — no approximation beyond the rounding of each step,
//!   which the decay contracts rather than accumulates.
//! * **Order statistics from a sketch**: the stream is cut into epochs of
//!   E = ⌈h/m⌉ consecutive scores (m = `epochs_per_half_life`), each
//!   summarised by its own KLL sketch (§9). An epoch's total weight W_j is
//!   exact (a geometric sum); inside it every score gets the same share
//!   W_j/B_j. Epochs whose newest score is H·h scores old or more are
//!   dropped (H = `horizon`, in half-lives). The summary's CDF F̂ is then
//!   within δ = δ_E + ε + δ_H of the decayed CDF F of all n scores at
//!   every x, where δ_E is the largest error of sharing an epoch's weight
//!   equally (the sum of the positive parts of w − w̄ over one epoch, over
//!   the epoch's weight, in closed form below), ε the KLL rank error of the
//!   epochs (0 while exact) and δ_H ≤ 2^{−H}/(1 − 2^{−H}) the weight share
//!   of the dropped epochs. A quantile is the first summary value whose
//!   normalised cumulative weight reaches q (NumPy's weighted
//!   `inverted_cdf`), so it is an exact q′-quantile of F with |q′ − q| ≤ δ.
//!
//! Trade-offs: m = 8 gives δ_E ≈ ln2/(8·8) ≈ 1.1% (δ_E ≈ 0.087/m); more
//! epochs per half-life tighten it at the price of H·m sketches. Moments
//! cover every score; order statistics the kept epochs.

use crate::error::Error;
use crate::io::record::{Field, Kind, Record, Schema, Stored};
use crate::limits;
use crate::streaming::kll::{serde, KllSketch};
use std::collections::VecDeque;

const MAGIC: &[u8; 5] = b"OPDF1";

#[derive(Debug, Clone)]
struct Epoch {
    /// Index of its first score.
    start: u64,
    sketch: KllSketch<f64>,
}

/// Exponentially decayed moments and order statistics of a stream.
#[derive(Debug, Clone)]
pub struct DecayedFit {
    half_life: f64,
    per_half_life: u32,
    horizon: u32,
    k: u16,
    seed: u64,
    epoch_len: u64,
    n: u64,
    weight: f64,
    mean: f64,
    m2: f64,
    dropped: bool,
    epochs: VecDeque<Epoch>,
}

/// The decayed moments: total weight, mean and variance (ddof 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moments {
    /// Scores seen.
    pub n: u64,
    /// W = Σ w_i.
    pub weight: f64,
    /// Σ w_i x_i / W.
    pub mean: f64,
    /// Σ w_i (x_i − mean)² / W.
    pub variance: f64,
}

impl DecayedFit {
    /// An empty fit; `half_life`, `epochs_per_half_life`, `horizon` within
    /// their [`limits`] (§5's table), `k` as the KLL's.
    pub fn new(
        half_life: f64,
        epochs_per_half_life: u32,
        horizon: u32,
        k: u16,
        seed: u64,
    ) -> Result<Self, Error> {
        limits::HALF_LIFE.check_real(half_life)?;
        limits::EPOCHS_PER_HALF_LIFE.check(u64::from(epochs_per_half_life))?;
        limits::HORIZON.check(u64::from(horizon))?;
        KllSketch::<f64>::new(k, seed)?;
        let epoch_len = (half_life / f64::from(epochs_per_half_life))
            .ceil()
            .max(1.0) as u64;
        Ok(DecayedFit {
            half_life,
            per_half_life: epochs_per_half_life,
            horizon,
            k,
            seed,
            epoch_len,
            n: 0,
            weight: 0.0,
            mean: 0.0,
            m2: 0.0,
            dropped: false,
            epochs: VecDeque::new(),
        })
    }

    /// ln 2 / h: the decay per score in natural logs.
    fn rate(&self) -> f64 {
        std::f64::consts::LN_2 / self.half_life
    }

    /// Adds the scores (NaN skipped). A batch holding ±inf, or one whose
    /// moments would leave the double range, is refused whole.
    pub fn update(&mut self, xs: &[f64]) -> Result<(), Error> {
        let inf: Vec<usize> = (0..xs.len()).filter(|&i| xs[i].is_infinite()).collect();
        if let Some(&first_index) = inf.first() {
            return Err(Error::Infinite {
                count: inf.len(),
                first_index: Some(first_index),
            });
        }
        let scores: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
        limits::check_room("scores", self.n, scores.len())?;
        let rho = (-self.rate()).exp();
        let (mut weight, mut mean, mut m2) = (self.weight, self.mean, self.m2);
        for &x in &scores {
            let earlier = weight * rho;
            let total = earlier + 1.0;
            let d = x - mean;
            mean += d / total;
            m2 = m2 * rho + earlier * (d * d) / total;
            weight = total;
        }
        if !(mean.is_finite() && m2.is_finite()) {
            return Err(Error::beyond_range("scores", "the decayed variance"));
        }
        (self.weight, self.mean, self.m2) = (weight, mean, m2);
        let mut rest = &scores[..];
        while !rest.is_empty() {
            let full = self
                .epochs
                .back()
                .is_none_or(|e| e.sketch.n() >= self.epoch_len);
            if full {
                self.epochs.push_back(Epoch {
                    start: self.n,
                    sketch: KllSketch::new(self.k, self.seed)?,
                });
            }
            let epoch = self.epochs.back_mut().expect("an open epoch");
            let room = (self.epoch_len - epoch.sketch.n()) as usize;
            let (now, later) = rest.split_at(room.min(rest.len()));
            epoch.sketch.update(now);
            self.n += now.len() as u64;
            rest = later;
        }
        self.drop_old();
        Ok(())
    }

    /// Drops the epochs whose newest score is H·h scores old or more.
    fn drop_old(&mut self) {
        let limit = f64::from(self.horizon) * self.half_life;
        while self.epochs.len() > 1 {
            let e = &self.epochs[0];
            let age = self.n - (e.start + e.sketch.n());
            if (age as f64) < limit {
                break;
            }
            self.epochs.pop_front();
            self.dropped = true;
        }
    }

    /// Scores seen.
    pub fn n(&self) -> u64 {
        self.n
    }

    /// The exact decayed moments; `None` before the first score.
    pub fn moments(&self) -> Option<Moments> {
        (self.n > 0).then(|| Moments {
            n: self.n,
            weight: self.weight,
            mean: self.mean,
            variance: (self.m2 / self.weight).max(0.0),
        })
    }

    /// The summary: (value, weight) pairs in ascending value order, the
    /// weights summing to 1.
    fn summary(&self) -> Vec<(f64, f64)> {
        let c = self.rate();
        let mut pairs = Vec::new();
        for e in &self.epochs {
            let b = e.sketch.n();
            // W_j = ρ^g (1 − ρ^B)/(1 − ρ), g the age of its newest score.
            let age = (self.n - e.start - b) as f64;
            let w = (-c * age).exp() * ((-c * b as f64).exp_m1() / (-c).exp_m1());
            let share = w / b as f64;
            pairs.extend(
                e.sketch
                    .weighted_items()
                    .map(|(v, k)| (v, share * k as f64)),
            );
        }
        pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let total: f64 = pairs.iter().map(|p| p.1).sum();
        for p in &mut pairs {
            p.1 /= total;
        }
        pairs
    }

    /// The first value whose normalised cumulative weight reaches q.
    fn first_reaching(pairs: &[(f64, f64)], q: f64) -> f64 {
        let mut cum = 0.0;
        for &(v, w) in pairs {
            cum += w;
            if cum >= q {
                return v;
            }
        }
        pairs.last().map_or(f64::NAN, |p| p.0)
    }

    fn check_q(q: f64) -> Result<(), Error> {
        if !(0.0..=1.0).contains(&q) {
            return Err(Error::invalid("q", format!("must be in [0, 1], got {q}")));
        }
        Ok(())
    }

    /// The decayed quantiles at `qs` (each in [0, 1]); `None` before the
    /// first score.
    pub fn quantiles(&self, qs: &[f64]) -> Result<Option<Vec<f64>>, Error> {
        for &q in qs {
            Self::check_q(q)?;
        }
        if self.n == 0 {
            return Ok(None);
        }
        let pairs = self.summary();
        Ok(Some(
            qs.iter()
                .map(|&q| Self::first_reaching(&pairs, q))
                .collect(),
        ))
    }

    /// The decayed median m̂ and the median of |x − m̂| (the MAD, before
    /// the consistency factor) under the same summary weights.
    pub fn median_mad(&self) -> Option<(f64, f64)> {
        if self.n == 0 {
            return None;
        }
        let pairs = self.summary();
        let m = Self::first_reaching(&pairs, 0.5);
        let mut dev: Vec<(f64, f64)> = pairs.iter().map(|&(v, w)| ((v - m).abs(), w)).collect();
        dev.sort_by(|a, b| a.0.total_cmp(&b.0));
        Some((m, Self::first_reaching(&dev, 0.5)))
    }

    /// δ = δ_E + ε + δ_H: the largest |F̂(x) − F(x)| (module docs).
    pub fn rank_error(&self) -> f64 {
        let eps = self
            .epochs
            .iter()
            .filter(|e| e.sketch.is_estimation_mode())
            .map(|e| e.sketch.normalized_rank_error(false))
            .fold(0.0, f64::max);
        let drop = if self.dropped {
            let t = (-f64::from(self.horizon) * std::f64::consts::LN_2).exp();
            t / (1.0 - t)
        } else {
            0.0
        };
        epoch_share_error(self.epoch_len.min(self.n.max(1)), self.half_life) + eps + drop
    }

    /// The state as bytes: parameters, moments, epochs with their KLL bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = MAGIC.to_vec();
        b.extend(self.half_life.to_le_bytes());
        b.extend(self.per_half_life.to_le_bytes());
        b.extend(self.horizon.to_le_bytes());
        b.extend(self.k.to_le_bytes());
        b.extend(self.seed.to_le_bytes());
        b.extend(self.n.to_le_bytes());
        for v in [self.weight, self.mean, self.m2] {
            b.extend(v.to_le_bytes());
        }
        b.push(u8::from(self.dropped));
        b.extend((self.epochs.len() as u32).to_le_bytes());
        for e in &self.epochs {
            let s = serde::serialize(&e.sketch);
            b.extend(e.start.to_le_bytes());
            b.extend((s.len() as u32).to_le_bytes());
            b.extend(s);
        }
        b
    }

    /// A state from [`to_bytes`](Self::to_bytes), checked: the parameters'
    /// ranges, W against its recomputation (1 − ρⁿ)/(1 − ρ), finite mean
    /// and variance, epochs contiguous and ending at n, each full but the
    /// newest, none beyond the horizon, sketches of the fit's k.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let bad = |field: &'static str, why: &str| Error::invalid(field, why.to_string());
        let mut r = Reader(bytes);
        if r.take(5)? != MAGIC {
            return Err(bad("state", "not a decayed fit's bytes (format OPDF1)"));
        }
        let half_life = r.f64()?;
        let per = r.u32()?;
        let horizon = r.u32()?;
        let k = u16::from_le_bytes(r.array()?);
        let seed = r.u64()?;
        let mut fit = DecayedFit::new(half_life, per, horizon, k, seed)?;
        fit.n = r.u64()?;
        (fit.weight, fit.mean, fit.m2) = (r.f64()?, r.f64()?, r.f64()?);
        fit.dropped = match r.take(1)?[0] {
            0 => false,
            1 => true,
            _ => return Err(bad("dropped", "must be 0 or 1")),
        };
        limits::COUNT.named("n").check(fit.n)?;
        let c = fit.rate();
        let expect = (-c * fit.n as f64).exp_m1() / (-c).exp_m1();
        if (fit.weight - expect).abs() > 1e-9 * expect.max(1.0) {
            return Err(bad("weight", "does not equal (1 - rho**n)/(1 - rho)"));
        }
        if !(fit.mean.is_finite() && fit.m2.is_finite() && fit.m2 >= 0.0) {
            return Err(bad(
                "moments",
                "the mean and the sum of squares must be finite, the sum of squares >= 0",
            ));
        }
        let count = r.u32()? as usize;
        let most = (horizon as usize) * (per as usize) + 2;
        if count > most || (count == 0) != (fit.n == 0) {
            return Err(bad("epochs", "their number does not fit n and the horizon"));
        }
        let mut next = None;
        for i in 0..count {
            let start = r.u64()?;
            let len = r.u32()? as usize;
            let mut sketch: KllSketch<f64> = serde::deserialize(r.take(len)?)?;
            sketch.set_seed(seed);
            let b = sketch.n();
            let last = i + 1 == count;
            if sketch.k() != k || b == 0 || b > fit.epoch_len || (!last && b != fit.epoch_len) {
                return Err(bad(
                    "epochs",
                    "a sketch of another k, empty, or not full before the newest",
                ));
            }
            if next.is_some_and(|s| s != start) || start.checked_add(b).is_none_or(|e| e > fit.n) {
                return Err(bad(
                    "epochs",
                    "epochs are not contiguous within the n scores",
                ));
            }
            next = Some(start + b);
            fit.epochs.push_back(Epoch { start, sketch });
        }
        if next.is_some_and(|e| e != fit.n) {
            return Err(bad("epochs", "the newest epoch does not end at n"));
        }
        if fit.epochs.front().is_some_and(|e| e.start > 0) != fit.dropped {
            return Err(bad("dropped", "disagrees with the oldest epoch's start"));
        }
        let before = fit.epochs.len();
        fit.drop_old();
        if fit.epochs.len() != before {
            return Err(bad("epochs", "an epoch lies beyond the horizon"));
        }
        if !r.0.is_empty() {
            return Err(bad("state", "trailing bytes"));
        }
        Ok(fit)
    }
}

/// δ_E for an epoch of `b` scores: weights v_j = r^j (r = 2^{1/h},
/// j < b) with mean v̄; Σ_j max(0, v_j − v̄) / Σ_j v_j, in closed form with
/// j* = the first j with v_j > v̄.
pub fn epoch_share_error(b: u64, half_life: f64) -> f64 {
    if b <= 1 {
        return 0.0;
    }
    let c = std::f64::consts::LN_2 / half_life;
    let bf = b as f64;
    let g = |x: f64| (c * x).exp_m1(); // r^x − 1
    let mean = g(bf) / (bf * g(1.0)); // v̄
    let jstar = (mean.ln() / c).floor() + 1.0;
    let above = (g(bf) - g(jstar)) / g(1.0) - (bf - jstar) * mean;
    (above / (bf * mean)).max(0.0)
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        if self.0.len() < n {
            return Err(Error::invalid("state", "the decayed fit's bytes end early"));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        Ok(self.take(N)?.try_into().expect("N bytes"))
    }
    fn u32(&mut self) -> Result<u32, Error> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Result<u64, Error> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    fn f64(&mut self) -> Result<f64, Error> {
        Ok(f64::from_le_bytes(self.array()?))
    }
}

/// A decayed fit's stored state: its bytes ([`DecayedFit::to_bytes`]).
pub const DECAYED_STATE: &Schema = &[("bytes", Kind::Bytes)];

/// A decayed fit's state, read back under its parameters: the bytes carry
/// them too, and they must be the fit's.
impl Stored for DecayedFit {
    const STATE: &'static Schema = DECAYED_STATE;

    fn to_record(&self) -> Record {
        Record::new(DECAYED_STATE, vec![Field::Bytes(Some(self.to_bytes()))])
    }

    fn restore(&mut self, r: &Record) -> Result<(), Error> {
        let bytes: Option<Vec<u8>> = r.get("bytes")?;
        let fit = DecayedFit::from_bytes(bytes.as_deref().unwrap_or_default())?;
        let params = |f: &DecayedFit| {
            let h = f.half_life.to_bits();
            (h, f.per_half_life, f.horizon, f.k, f.seed)
        };
        if params(&fit) != params(self) {
            let why = "bytes were written with other parameters than 'params'";
            return Err(Error::invalid("state", why.to_string()));
        }
        *self = fit;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
