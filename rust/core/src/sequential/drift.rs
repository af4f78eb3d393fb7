//! The rules of a refit after a drift (contract §12, "Refits after a
//! drift"): when a scaler is refitted after an exchangeability martingale
//! alarms, on what, and the record of each alarm and refit.
//!
//! A stream of scores s₀, s₁, … (NaN included in the count) is cut into
//! segments; the caller maps each segment with the fit in force, feeds its
//! online p-values to the monitor, and tells the policy where the monitor
//! alarmed. An alarm at score t is the event `("alarm", t, log statistic)`
//! and makes a refit due at t + `delay`; an alarm before a due refit moves
//! it to its own t + `delay`. At the due score the caller refits (on the
//! newest `window` non-NaN scores the policy keeps, or on a decayed fit)
//! and records `("refit", t, n_fit, fitted)` or `("refit_failed", t,
//! message)`; the new fit applies from t + 1.
//!
//! The policy knows nothing of scalers or monitors: what a refit computes
//! is the caller's, except the decayed Gaussian fit's center and scale
//! ([`decayed_gaussian`]), which reads a [`DecayedFit`]. Its state is
//! plain data ([`Parts`]) that [`Policy::from_parts`] checks, so a
//! checkpoint resumes with the same events.

use crate::error::{named_enum, Error};
use crate::limits;
use std::collections::VecDeque;

use super::decayed::DecayedFit;

/// What a refit is fitted on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refit {
    /// The newest `window` non-NaN scores.
    Window,
    /// An exponentially decayed fit of every non-NaN score.
    Decayed,
}

named_enum!(
    Refit,
    "refit",
    "must be 'window' or 'decayed'",
    "window" => Window,
    "decayed" => Decayed,
);

/// What happened at a score.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The monitor crossed its threshold.
    Alarm,
    /// The scaler was refitted.
    Refit,
    /// The refit raised; the previous fit is kept.
    RefitFailed,
}

named_enum!(
    EventKind,
    "events",
    "an event's kind must be 'alarm', 'refit' or 'refit_failed'",
    "alarm" => Alarm,
    "refit" => Refit,
    "refit_failed" => RefitFailed,
);

/// One alarm or refit.
#[derive(Debug, Clone)]
pub struct Event {
    /// What happened.
    pub kind: EventKind,
    /// 0-based position of the score after which it happened.
    pub index: u64,
    /// The monitor's log statistic at an alarm (NaN otherwise).
    pub log_statistic: f64,
    /// Scores the refit used (0 for alarms and failures).
    pub n_fit: u64,
    /// A decayed refit's (center, scale).
    pub fitted: Option<(f64, f64)>,
    /// Why a refit failed ("" otherwise).
    pub message: String,
}

impl PartialEq for Event {
    /// Equal fields, a NaN statistic (refits') equal to another.
    fn eq(&self, o: &Self) -> bool {
        let same = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
        (
            self.kind,
            self.index,
            self.n_fit,
            self.fitted,
            &self.message,
        ) == (o.kind, o.index, o.n_fit, o.fitted, &o.message)
            && same(self.log_statistic, o.log_statistic)
    }
}

impl Event {
    fn at(kind: EventKind, index: u64) -> Self {
        Event {
            kind,
            index,
            log_statistic: f64::NAN,
            n_fit: 0,
            fitted: None,
            message: String::new(),
        }
    }
}

/// The policy's state as plain data.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Parts {
    /// Scores seen (NaN included).
    pub n: u64,
    /// The index of the refit due, if one is.
    pub pending: Option<u64>,
    /// The window's scores, oldest first (empty for a decayed refit).
    pub recent: Vec<f64>,
    /// Every event so far.
    pub events: Vec<Event>,
}

/// When to refit, and the record of what happened.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    refit: Refit,
    window: u64,
    delay: u64,
    n: u64,
    pending: Option<u64>,
    recent: VecDeque<f64>,
    events: Vec<Event>,
}

impl Policy {
    /// A policy before the first score. `window` and `delay` within their
    /// [`limits`]; `delay` by default `window` (the window then holds only
    /// scores after the alarm) or, for a decayed refit, ⌈2·`half_life`⌉.
    pub fn new(
        refit: Refit,
        window: u64,
        half_life: f64,
        delay: Option<u64>,
    ) -> Result<Self, Error> {
        limits::WINDOW.check(window)?;
        let default = match refit {
            Refit::Window => window,
            Refit::Decayed => (2.0 * limits::HALF_LIFE.check_real(half_life)?).ceil() as u64,
        };
        let delay = limits::REFIT_DELAY.check(delay.unwrap_or(default))?;
        Ok(Policy {
            refit,
            window,
            delay,
            n: 0,
            pending: None,
            recent: VecDeque::new(),
            events: Vec::new(),
        })
    }

    /// What a refit is fitted on.
    pub fn refit(&self) -> Refit {
        self.refit
    }

    /// Scores a window refit keeps.
    pub fn window(&self) -> u64 {
        self.window
    }

    /// Scores from an alarm to its refit.
    pub fn delay(&self) -> u64 {
        self.delay
    }

    /// Scores seen.
    pub fn n(&self) -> u64 {
        self.n
    }

    /// Every event so far.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// The newest `window` non-NaN scores, oldest first (a window refit's
    /// scores).
    pub fn recent(&self) -> Vec<f64> {
        self.recent.iter().copied().collect()
    }

    /// A batch the policy takes: finite scores, NaN for missing ones (±inf
    /// refused whole, before anything changes).
    pub fn check_scores(&self, scores: &[f64]) -> Result<(), Error> {
        if let Some(i) = scores.iter().position(|s| s.is_infinite()) {
            return Err(Error::invalid(
                "scores",
                format!(
                    "scores[{i}] = {}: a stream of finite scores (NaN for missing) is monitored",
                    scores[i]
                ),
            ));
        }
        limits::check_room("scores", self.n, scores.len()).map(|_| ())
    }

    /// How many of the `remaining` scores of a batch go before the next
    /// stop (the refit due, else all of them); at least one if any remain.
    pub fn span(&self, remaining: usize) -> usize {
        match self.pending {
            // A refit due before n (one the caller did not record) stops
            // after the next score, so a batch always moves on.
            Some(due) => {
                let left = (due + 1).saturating_sub(self.n).max(1);
                remaining.min(usize::try_from(left).unwrap_or(usize::MAX))
            }
            None => remaining,
        }
    }

    /// Records that `scores` (at most [`span`](Self::span) of them, NaN
    /// for missing) went through, the last one alarming the monitor with
    /// `alarm` = its log statistic if given. Returns whether a refit is
    /// due now, after the last of them.
    pub fn advance(&mut self, scores: &[f64], alarm: Option<f64>) -> Result<bool, Error> {
        if scores.len() > self.span(scores.len()) || (scores.is_empty() && alarm.is_some()) {
            return Err(Error::invalid(
                "scores",
                "a segment runs past the refit due, or an alarm has no score",
            ));
        }
        self.check_scores(scores)?;
        if self.refit == Refit::Window {
            let keep = usize::try_from(self.window).unwrap_or(usize::MAX);
            for &s in scores.iter().filter(|s| !s.is_nan()) {
                if self.recent.len() == keep {
                    self.recent.pop_front();
                }
                self.recent.push_back(s);
            }
        }
        self.n += scores.len() as u64;
        if let Some(statistic) = alarm {
            let mut e = Event::at(EventKind::Alarm, self.n - 1);
            e.log_statistic = statistic;
            self.events.push(e);
            self.pending = Some(self.n - 1 + self.delay);
        }
        Ok(self.pending.is_some_and(|due| due < self.n))
    }

    /// Records the refit due as done with `n_fit` scores (a decayed
    /// refit's center and scale in `fitted`); the new fit applies from the
    /// next score.
    pub fn refitted(&mut self, n_fit: u64, fitted: Option<(f64, f64)>) -> Result<&Event, Error> {
        let mut e = self.due(EventKind::Refit)?;
        (e.n_fit, e.fitted) = (n_fit, fitted);
        Ok(self.push(e))
    }

    /// Records that the refit due raised `message`; the fit is kept.
    pub fn refit_failed(&mut self, message: &str) -> Result<&Event, Error> {
        let mut e = self.due(EventKind::RefitFailed)?;
        e.message = message.to_string();
        Ok(self.push(e))
    }

    fn due(&mut self, kind: EventKind) -> Result<Event, Error> {
        match self.pending {
            Some(due) if due < self.n => {
                self.pending = None;
                Ok(Event::at(kind, self.n - 1))
            }
            _ => Err(Error::invalid("refit", "no refit is due at this score")),
        }
    }

    fn push(&mut self, e: Event) -> &Event {
        self.events.push(e);
        self.events.last().expect("just pushed")
    }

    /// The state as plain data.
    pub fn parts(&self) -> Parts {
        Parts {
            n: self.n,
            pending: self.pending,
            recent: self.recent(),
            events: self.events.clone(),
        }
    }

    /// A policy of these parameters resumed from `p`, checked: n ≤ 2⁵³;
    /// at most `window` (and n) finite scores in `recent`, none for a
    /// decayed refit; `pending` in (n − 1, n − 1 + delay]; events at an
    /// index below n, in order, alarms with their statistic, refits with
    /// theirs.
    pub fn from_parts(refit: Refit, window: u64, delay: u64, p: &Parts) -> Result<Self, Error> {
        let mut policy = Policy::new(refit, window, 1.0, Some(delay))?;
        limits::COUNT.named("n").check(p.n)?;
        let most = match refit {
            Refit::Window => window.min(p.n),
            Refit::Decayed => 0,
        };
        if p.recent.len() as u64 > most || p.recent.iter().any(|s| !s.is_finite()) {
            return Err(Error::invalid(
                "recent",
                "must hold at most window (and n) finite scores, none for a decayed refit",
            ));
        }
        if let Some(due) = p.pending {
            // n − 1 < due ≤ n − 1 + delay, without underflow at n = 0.
            if due < p.n || due + 1 > p.n + delay {
                return Err(Error::invalid(
                    "pending",
                    "must be None or a refit due after n - 1 and within delay scores",
                ));
            }
        }
        let mut last = 0;
        for e in &p.events {
            let sound = match e.kind {
                EventKind::Alarm => e.n_fit == 0 && e.fitted.is_none() && e.message.is_empty(),
                EventKind::Refit => e.log_statistic.is_nan() && e.message.is_empty(),
                EventKind::RefitFailed => {
                    e.log_statistic.is_nan() && e.n_fit == 0 && e.fitted.is_none()
                }
            };
            if e.index >= p.n || e.index < last || !sound {
                return Err(Error::invalid(
                    "events",
                    "hold an index beyond n, out of order, or fields of another kind",
                ));
            }
            last = e.index;
        }
        policy.n = p.n;
        policy.pending = p.pending;
        policy.recent = p.recent.iter().copied().collect();
        policy.events.clone_from(&p.events);
        Ok(policy)
    }
}

/// Centers a decayed refit takes (§12).
pub const DECAYED_CENTERS: [&str; 2] = ["mean", "median"];
/// Scales a decayed refit takes (§12).
pub const DECAYED_SCALES: [&str; 3] = ["std", "nmad", "niqr"];

/// Whether a Gaussian scaler of this `center` and `scale`, with or without
/// a pretransform and a fixed center, can be refitted on a decayed fit: an
/// error naming what it needs otherwise.
pub fn check_decayed(
    center: &str,
    scale: &str,
    pretransform: bool,
    fixed_center: bool,
) -> Result<(), Error> {
    if DECAYED_CENTERS.contains(&center)
        && DECAYED_SCALES.contains(&scale)
        && !pretransform
        && !fixed_center
    {
        return Ok(());
    }
    Err(Error::invalid(
        "refit",
        "'decayed' needs a GaussianScaler with center 'mean' or 'median', scale 'std', \
         'nmad' or 'niqr', no pretransform and no fixed_center (a ConformalScaler is \
         re-calibrated on a window: refit='window')",
    ))
}

/// (center, scale, the scale used) of a Gaussian refit on a decayed fit:
/// the decayed `center` and the first of `scale`, then the `fallbacks`
/// among [`DECAYED_SCALES`], that is positive; an error if none is or
/// the fit has no score.
pub fn decayed_gaussian(
    fit: &DecayedFit,
    center: &str,
    scale: &str,
    fallbacks: &[&str],
) -> Result<(f64, f64, &'static str), Error> {
    check_decayed(center, scale, false, false)?;
    let m = fit
        .moments()
        .ok_or_else(|| Error::invalid("scores", "the decayed fit has no scores yet"))?;
    let quantiles = |qs: &[f64]| -> Result<Vec<f64>, Error> {
        Ok(fit
            .quantiles(qs)?
            .unwrap_or_else(|| vec![f64::NAN; qs.len()]))
    };
    let value = |name: &str| -> Result<f64, Error> {
        Ok(match name {
            "std" => m.variance.sqrt(),
            "nmad" => NMAD_FACTOR * fit.median_mad().map_or(f64::NAN, |mm| mm.1),
            _ => {
                let q = quantiles(&[0.25, 0.75])?;
                (q[1] - q[0]) / NIQR_DIVISOR
            }
        })
    };
    let c = if center == "mean" {
        m.mean
    } else {
        quantiles(&[0.5])?[0]
    };
    let chain = std::iter::once(scale).chain(
        fallbacks
            .iter()
            .copied()
            .filter(|f| DECAYED_SCALES.contains(f)),
    );
    let mut last = scale;
    for name in chain {
        last = name;
        let s = value(name)?;
        if s > 0.0 {
            let used = DECAYED_SCALES
                .iter()
                .find(|&&k| k == name)
                .expect("checked");
            return Ok((c, s, used));
        }
    }
    Err(Error::invalid(
        "scale",
        format!("the decayed {last} scale is 0"),
    ))
}

/// 1/Φ⁻¹(3/4) (contract §2).
const NMAD_FACTOR: f64 = 1.482_602_218_505_602;
/// Φ⁻¹(3/4) − Φ⁻¹(1/4) (contract §2).
const NIQR_DIVISOR: f64 = 1.348_979_500_392_163_4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_alarm_makes_a_refit_due_after_delay_and_a_second_moves_it() {
        let mut p = Policy::new(Refit::Window, 3, 1.0, Some(2)).unwrap();
        assert_eq!(p.span(10), 10);
        assert!(!p.advance(&[1.0, f64::NAN, 2.0], Some(4.7)).unwrap());
        assert_eq!(p.parts().pending, Some(4));
        assert_eq!(p.span(10), 2);
        assert!(
            p.advance(&[3.0, 4.0, 5.0], None).is_err(),
            "past the refit due"
        );
        assert!(!p.advance(&[3.0], Some(5.0)).unwrap()); // moves it to 3 + 2
        assert_eq!(p.span(10), 2);
        assert!(p.advance(&[4.0, 5.0], None).unwrap());
        assert_eq!(p.recent(), vec![3.0, 4.0, 5.0]);
        let e = p.refitted(3, None).unwrap().clone();
        assert_eq!((e.kind, e.index, e.n_fit), (EventKind::Refit, 5, 3));
        assert!(p.refitted(3, None).is_err(), "nothing due");
        let kinds: Vec<_> = p.events().iter().map(|e| (e.kind, e.index)).collect();
        assert_eq!(
            kinds,
            [
                (EventKind::Alarm, 2),
                (EventKind::Alarm, 3),
                (EventKind::Refit, 5)
            ]
        );
        let back = Policy::from_parts(Refit::Window, 3, 2, &p.parts()).unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn a_delay_of_zero_refits_at_the_alarm() {
        let mut p = Policy::new(Refit::Decayed, 10, 4.0, Some(0)).unwrap();
        assert!(p.advance(&[1.0, 2.0], Some(3.0)).unwrap());
        assert_eq!(
            p.span(5),
            1,
            "a refit due and not recorded: one score at a time"
        );
        p.refit_failed("the decayed std scale is 0").unwrap();
        assert_eq!(p.events()[1].kind, EventKind::RefitFailed);
        assert!(p.recent().is_empty());
        assert_eq!(
            Policy::new(Refit::Decayed, 10, 4.5, None).unwrap().delay(),
            9
        );
    }

    #[test]
    fn parameters_and_tampered_parts_are_refused_by_name() {
        for (e, name) in [
            (
                Policy::new(Refit::Window, 0, 1.0, None).unwrap_err(),
                "window",
            ),
            (
                Policy::new(Refit::Window, 1 << 33, 1.0, None).unwrap_err(),
                "window",
            ),
            (
                Policy::new(Refit::Decayed, 5, 0.5, None).unwrap_err(),
                "half_life",
            ),
            (
                Policy::new(Refit::Window, 5, 1.0, Some(1 << 33)).unwrap_err(),
                "delay",
            ),
            ("sometimes".parse::<Refit>().unwrap_err(), "refit"),
        ] {
            assert!(e.to_string().starts_with(name), "{e}");
        }
        let mut p = Policy::new(Refit::Window, 2, 1.0, None).unwrap();
        assert!(p.check_scores(&[1.0, f64::INFINITY]).is_err());
        p.advance(&[1.0, 2.0, 3.0], Some(9.0)).unwrap();
        let good = p.parts();
        for (bad, name) in [
            (
                Parts {
                    n: (1 << 53) + 1,
                    ..good.clone()
                },
                "n",
            ),
            (
                Parts {
                    recent: vec![1.0, 2.0, 3.0],
                    ..good.clone()
                },
                "recent",
            ),
            (
                Parts {
                    recent: vec![f64::NAN],
                    ..good.clone()
                },
                "recent",
            ),
            (
                Parts {
                    pending: Some(2),
                    ..good.clone()
                },
                "pending",
            ),
            (
                Parts {
                    pending: Some(5),
                    ..good.clone()
                },
                "pending",
            ),
            (
                Parts {
                    n: 2,
                    pending: None,
                    ..good.clone()
                },
                "events",
            ),
        ] {
            let e = Policy::from_parts(Refit::Window, 2, 2, &bad).unwrap_err();
            assert!(e.to_string().starts_with(name), "{e}");
        }
        let mut odd = good.clone();
        odd.events[0].n_fit = 4;
        assert!(Policy::from_parts(Refit::Window, 2, 2, &odd).is_err());
    }

    #[test]
    fn a_decayed_refit_falls_back_to_a_positive_scale() {
        let mut f = DecayedFit::new(4.0, 8, 20, 200, 0).unwrap();
        assert!(decayed_gaussian(&f, "mean", "std", &[]).is_err());
        f.update(&[2.0; 30]).unwrap();
        let e = decayed_gaussian(&f, "median", "nmad", &["niqr"]).unwrap_err();
        assert!(e.to_string().contains("decayed niqr scale is 0"), "{e}");
        f.update(&[3.0]).unwrap();
        let (c, s, used) = decayed_gaussian(&f, "median", "nmad", &["mad", "std"]).unwrap();
        let m = f.moments().unwrap();
        assert_eq!((c, s, used), (2.0, m.variance.sqrt(), "std"));
        assert!(check_decayed("mean", "iqr", false, false).is_err());
        assert!(check_decayed("mean", "std", true, false).is_err());
    }
}
