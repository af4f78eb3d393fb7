//! The stored state of the online decisions (contract §12, "Checkpoints")
//! as records ([`crate::io::record`]): each type's fields declared once,
//! here, so the binding converts them to Python dicts and back by their
//! schema alone. A record read back is untrusted; `from_parts` of each
//! type checks what it can recompute.

use crate::error::Error;
use crate::io::record::{Field, Kind, Record, Schema, Stored};

use super::drift::{Event, Parts as DriftParts, Policy};
use super::martingale::{Martingale, Parts as MartingaleParts};
use super::online_fdr::{OnlineFdr, Parts as FdrParts, Settings};
use super::online_pvalues::{OnlinePvalues, Parts as PvalueParts};

/// An online FDR rule's parameters, defaults filled in (`None` for those
/// the rule does not take).
pub const FDR_SETTINGS: &Schema = &[
    ("method", Kind::Name),
    ("alpha", Kind::Float),
    ("w0", Kind::OptFloat),
    ("lam", Kind::OptFloat),
    ("tau", Kind::OptFloat),
    ("gamma", Kind::OptFloats),
];

/// An online FDR rule's state.
pub const FDR_STATE: &Schema = &[
    ("n", Kind::Count),
    ("clock", Kind::Count),
    ("rejections", Kind::Count),
    ("first", Kind::OptCount),
    ("stamps", Kind::Counts),
    ("counts", Kind::Counts),
];

/// An exchangeability martingale's state.
pub const MARTINGALE_STATE: &Schema = &[
    ("n", Kind::Count),
    ("steps", Kind::Count),
    ("log_sum", Kind::Float),
    ("log_sum_error", Kind::Float),
    ("components", Kind::Floats),
    ("log_martingale", Kind::Float),
    ("log_martingale_error", Kind::Float),
    ("log_cusum", Kind::Float),
    ("log_shiryaev_roberts", Kind::Float),
    ("alarms", Kind::Count),
    ("first_alarm", Kind::OptCount),
];

/// Online conformal p-values' state: the distinct scores (a NumPy array)
/// and their counts.
pub const PVALUE_STATE: &Schema = &[
    ("n", Kind::Count),
    ("scores", Kind::Values),
    ("counts", Kind::Counts),
];

/// One event of a refit policy.
pub const DRIFT_EVENT: &Schema = &[
    ("kind", Kind::Name),
    ("index", Kind::Count),
    ("log_statistic", Kind::Float),
    ("n_fit", Kind::Count),
    ("fitted", Kind::OptFloats),
    ("message", Kind::Name),
];

/// A refit policy's position: scores seen, the refit due, the window's
/// scores and the events.
pub const DRIFT_STATE: &Schema = &[
    ("n", Kind::Count),
    ("pending", Kind::OptCount),
    ("recent", Kind::Floats),
    ("events", Kind::Records(DRIFT_EVENT)),
];

impl Settings {
    /// The parameters as a record of [`FDR_SETTINGS`]: what the rule does
    /// not take is `None`.
    pub fn to_record(&self) -> Record {
        use super::online_fdr::Method::{Addis, Lond, Saffron};
        let m = self.method;
        Record::new(
            FDR_SETTINGS,
            vec![
                Field::Name(m.name().to_string()),
                Field::Float(self.alpha),
                Field::OptFloat((m != Lond).then_some(self.w0)),
                Field::OptFloat(matches!(m, Saffron | Addis).then_some(self.lam)),
                Field::OptFloat((m == Addis).then_some(self.tau)),
                Field::OptFloats(self.gamma.terms().map(<[f64]>::to_vec)),
            ],
        )
    }

    /// The parameters of a record of [`FDR_SETTINGS`], checked as
    /// [`Settings::new`] checks them.
    pub fn from_record(r: &Record) -> Result<Self, Error> {
        let method: String = r.get("method")?;
        Settings::new(
            method.parse()?,
            r.get("alpha")?,
            r.get("w0")?,
            r.get("lam")?,
            r.get("tau")?,
            r.get("gamma")?,
        )
    }
}

impl FdrParts {
    /// The state as a record of [`FDR_STATE`].
    pub fn to_record(self) -> Record {
        Record::new(
            FDR_STATE,
            vec![
                Field::Count(self.n),
                Field::Count(self.clock),
                Field::Count(self.rejections),
                Field::OptCount(self.first),
                Field::Counts(self.stamps),
                Field::Counts(self.counts),
            ],
        )
    }

    /// The state of a record of [`FDR_STATE`] (unchecked: `from_parts`
    /// checks it).
    pub fn from_record(r: &Record) -> Result<Self, Error> {
        Ok(FdrParts {
            n: r.get("n")?,
            clock: r.get("clock")?,
            rejections: r.get("rejections")?,
            first: r.get("first")?,
            stamps: r.get("stamps")?,
            counts: r.get("counts")?,
        })
    }
}

impl MartingaleParts {
    /// The state as a record of [`MARTINGALE_STATE`].
    pub fn to_record(self) -> Record {
        Record::new(
            MARTINGALE_STATE,
            vec![
                Field::Count(self.n),
                Field::Count(self.steps),
                Field::Float(self.log_sum),
                Field::Float(self.log_sum_error),
                Field::Floats(self.components.to_vec()),
                Field::Float(self.log_martingale),
                Field::Float(self.log_martingale_error),
                Field::Float(self.log_cusum),
                Field::Float(self.log_shiryaev_roberts),
                Field::Count(self.alarms),
                Field::OptCount(self.first_alarm),
            ],
        )
    }

    /// The state of a record of [`MARTINGALE_STATE`] (three components,
    /// else unchecked: `from_parts` checks it).
    pub fn from_record(r: &Record) -> Result<Self, Error> {
        let components: Vec<f64> = r.get("components")?;
        let components: [f64; 3] = components
            .try_into()
            .map_err(|_| Error::invalid("state", "\"components\" needs 3 numbers"))?;
        Ok(MartingaleParts {
            n: r.get("n")?,
            steps: r.get("steps")?,
            log_sum: r.get("log_sum")?,
            log_sum_error: r.get("log_sum_error")?,
            components,
            log_martingale: r.get("log_martingale")?,
            log_martingale_error: r.get("log_martingale_error")?,
            log_cusum: r.get("log_cusum")?,
            log_shiryaev_roberts: r.get("log_shiryaev_roberts")?,
            alarms: r.get("alarms")?,
            first_alarm: r.get("first_alarm")?,
        })
    }
}

impl PvalueParts {
    /// The state as a record of [`PVALUE_STATE`].
    pub fn to_record(self) -> Record {
        Record::new(
            PVALUE_STATE,
            vec![
                Field::Count(self.n),
                Field::Values(self.scores),
                Field::Counts(self.counts),
            ],
        )
    }

    /// The state of a record of [`PVALUE_STATE`] (unchecked: `from_parts`
    /// checks it).
    pub fn from_record(r: &Record) -> Result<Self, Error> {
        Ok(PvalueParts {
            n: r.get("n")?,
            scores: r.get("scores")?,
            counts: r.get("counts")?,
        })
    }
}

/// An online FDR rule's state, read back under its settings.
impl Stored for OnlineFdr {
    const STATE: &'static Schema = FDR_STATE;

    fn to_record(&self) -> Record {
        self.parts().to_record()
    }

    fn restore(&mut self, r: &Record) -> Result<(), Error> {
        let parts = FdrParts::from_record(r)?;
        *self = OnlineFdr::from_parts(self.settings().clone(), &parts)?;
        Ok(())
    }
}

/// A martingale's state, read back under its parameters.
impl Stored for Martingale {
    const STATE: &'static Schema = MARTINGALE_STATE;

    fn to_record(&self) -> Record {
        self.parts().to_record()
    }

    fn restore(&mut self, r: &Record) -> Result<(), Error> {
        let parts = MartingaleParts::from_record(r)?;
        *self = Martingale::from_parts(self.spec().clone(), &parts)?;
        Ok(())
    }
}

/// Online p-values' state, read back under their seed, orientation and
/// smoothing.
impl Stored for OnlinePvalues {
    const STATE: &'static Schema = PVALUE_STATE;

    fn to_record(&self) -> Record {
        self.parts().to_record()
    }

    fn restore(&mut self, r: &Record) -> Result<(), Error> {
        let parts = PvalueParts::from_record(r)?;
        *self = OnlinePvalues::from_parts(self.seed, self.negate, self.smoothed, &parts)?;
        Ok(())
    }
}

impl Event {
    /// The event as a record of [`DRIFT_EVENT`] (`fitted` as [center, scale]).
    pub fn to_record(&self) -> Record {
        Record::new(
            DRIFT_EVENT,
            vec![
                Field::Name(self.kind.name().to_string()),
                Field::Count(self.index),
                Field::Float(self.log_statistic),
                Field::Count(self.n_fit),
                Field::OptFloats(self.fitted.map(|(c, s)| vec![c, s])),
                Field::Name(self.message.clone()),
            ],
        )
    }

    /// The event of a record of [`DRIFT_EVENT`] (its place among the others
    /// unchecked: `Policy::from_parts` checks it).
    pub fn from_record(r: &Record) -> Result<Self, Error> {
        let fitted = match r.get::<Option<Vec<f64>>>("fitted")?.as_deref() {
            None => None,
            Some(&[center, scale]) => Some((center, scale)),
            Some(_) => return Err(Error::invalid("fitted", "needs [center, scale]")),
        };
        Ok(Event {
            kind: r.parse("kind")?,
            index: r.get("index")?,
            log_statistic: r.get("log_statistic")?,
            n_fit: r.get("n_fit")?,
            fitted,
            message: r.get("message")?,
        })
    }
}

/// A refit policy's position and events, read back under its refit, window
/// and delay.
impl Stored for Policy {
    const STATE: &'static Schema = DRIFT_STATE;

    fn to_record(&self) -> Record {
        let p = self.parts();
        let events = p.events.iter().map(Event::to_record).collect();
        Record::new(
            DRIFT_STATE,
            vec![
                Field::Count(p.n),
                Field::OptCount(p.pending),
                Field::Floats(p.recent),
                Field::Records(events),
            ],
        )
    }

    fn restore(&mut self, r: &Record) -> Result<(), Error> {
        let events: Vec<Record> = r.get("events")?;
        let parts = DriftParts {
            n: r.get("n")?,
            pending: r.get("pending")?,
            recent: r.get("recent")?,
            events: events
                .iter()
                .map(Event::from_record)
                .collect::<Result<_, _>>()?,
        };
        *self = Policy::from_parts(self.refit(), self.window(), self.delay(), &parts)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sequential::online_fdr::Method;

    #[test]
    fn records_round_trip() {
        let s = Settings::new(Method::Saffron, 0.1, None, None, None, None).unwrap();
        let back = Settings::from_record(&s.to_record()).unwrap();
        assert_eq!(back.to_record(), s.to_record());
        let p = FdrParts {
            n: 9,
            clock: 9,
            rejections: 2,
            first: Some(3),
            stamps: vec![7],
            counts: vec![1],
        };
        assert_eq!(FdrParts::from_record(&p.clone().to_record()).unwrap(), p);
        let q = PvalueParts {
            n: 3,
            scores: vec![1.0, 2.0],
            counts: vec![1, 2],
        };
        assert_eq!(PvalueParts::from_record(&q.clone().to_record()).unwrap(), q);
    }

    #[test]
    fn components_other_than_three_are_refused_by_name() {
        let mut r = MartingaleParts {
            n: 0,
            steps: 0,
            log_sum: 0.0,
            log_sum_error: 0.0,
            components: [1.0, 0.0, 0.0],
            log_martingale: 0.0,
            log_martingale_error: 0.0,
            log_cusum: f64::NEG_INFINITY,
            log_shiryaev_roberts: f64::NEG_INFINITY,
            alarms: 0,
            first_alarm: None,
        }
        .to_record();
        r.fields[4] = Field::Floats(vec![0.5, 0.5]);
        let err = MartingaleParts::from_record(&r).unwrap_err().to_string();
        assert!(err.starts_with("state: \"components\""), "{err}");
    }

    #[test]
    fn a_stored_state_restores_whole_or_not_at_all() {
        let mut a = OnlinePvalues::new(7, false, true);
        a.update(&[1.0, 2.0, 2.0]).unwrap();
        let mut b = OnlinePvalues::new(7, false, true);
        b.restore(&a.to_record()).unwrap();
        assert_eq!(b.to_record(), a.to_record());
        let mut bad = a.to_record();
        bad.fields[2] = Field::Counts(vec![1, 1]);
        let err = b.restore(&bad).unwrap_err().to_string();
        assert!(err.starts_with("n: "), "{err}");
        assert_eq!(b.to_record(), a.to_record());
    }

    #[test]
    fn a_policy_round_trips_and_refuses_a_foreign_event() {
        use crate::sequential::drift::Refit;
        let mut p = Policy::new(Refit::Window, 10, 1.0, Some(0)).unwrap();
        p.advance(&[1.0, 2.0, 3.0], None).unwrap();
        let stored = p.to_record();
        let mut q = Policy::new(Refit::Window, 10, 1.0, Some(0)).unwrap();
        q.restore(&stored).unwrap();
        assert_eq!(q.to_record(), stored);
        let event = |kind: &str, fitted: Option<Vec<f64>>| {
            Record::new(
                DRIFT_EVENT,
                vec![
                    Field::Name(kind.to_string()),
                    Field::Count(0),
                    Field::Float(f64::NAN),
                    Field::Count(0),
                    Field::OptFloats(fitted),
                    Field::Name(String::new()),
                ],
            )
        };
        for (bad, name) in [
            (event("boom", None), "events"),
            (event("refit", Some(vec![1.0])), "fitted"),
        ] {
            let mut r = stored.clone();
            r.fields[3] = Field::Records(vec![bad]);
            let err = q.restore(&r).unwrap_err().to_string();
            assert!(err.starts_with(name), "{err}");
            assert_eq!(q.to_record(), stored);
        }
    }
}
