//! The keyword parameters of the constructors the binding exposes, as
//! records ([`super::record`]): each family declares its parameters once,
//! here — names and kinds, in a [`Schema`] — and builds its value from
//! them in one place ([`FromRecord`]), so that the binding passes a dict of
//! keywords through unread and a wrong name or kind is refused by the core,
//! naming the field. Names are parsed by the core's `FromStr`; the values'
//! domains are checked by the constructors they feed (contract §5).

use crate::conformal::calibration::ConformalSpec;
use crate::conformal::pvalues::Ties;
use crate::conformal::tails::TailSpec;
use crate::distributed::pass::{Counts, Partial};
use crate::distributed::plan::Method;
use crate::error::Error;
use crate::estimators::mest::{MParams, Norm};
use crate::sequential::decayed::DecayedFit;
use crate::sequential::martingale::{Martingale, Spec};
use crate::sequential::online_fdr::Settings;
use crate::sequential::stored::FDR_SETTINGS;

use super::record::{FromRecord, Kind, Record, Schema};

/// An exchangeability martingale (contract §12): a new one.
impl FromRecord for Martingale {
    const SCHEMA: &'static Schema = &[
        ("kind", Kind::Name),
        ("jump", Kind::Float),
        ("epsilon", Kind::Float),
        ("n_grid", Kind::Count),
        ("min_epsilon", Kind::Float),
        ("threshold", Kind::OptFloat),
        ("statistic", Kind::Name),
        ("on_alarm", Kind::Name),
    ];

    fn from_record(r: &Record) -> Result<Self, Error> {
        Martingale::new(Spec {
            kind: r.parse("kind")?,
            jump: r.get("jump")?,
            epsilon: r.get("epsilon")?,
            n_grid: r.count("n_grid")?,
            min_epsilon: r.get("min_epsilon")?,
            threshold: r.get("threshold")?,
            statistic: r.parse("statistic")?,
            on_alarm: r.parse("on_alarm")?,
        })
    }
}

/// An online FDR rule's parameters (contract §12), as stored.
impl FromRecord for Settings {
    const SCHEMA: &'static Schema = FDR_SETTINGS;

    fn from_record(r: &Record) -> Result<Self, Error> {
        Settings::from_record(r)
    }
}

/// The exponentially decayed fit (contract §12): an empty one.
impl FromRecord for DecayedFit {
    const SCHEMA: &'static Schema = &[
        ("half_life", Kind::Float),
        ("epochs_per_half_life", Kind::Count),
        ("horizon", Kind::Count),
        ("k", Kind::Count),
        ("seed", Kind::Count),
    ];

    fn from_record(r: &Record) -> Result<Self, Error> {
        DecayedFit::new(
            r.get("half_life")?,
            r.count("epochs_per_half_life")?,
            r.count("horizon")?,
            r.count("k")?,
            r.get("seed")?,
        )
    }
}

/// A p-value map's options (contract §11).
impl FromRecord for ConformalSpec {
    const SCHEMA: &'static Schema = &[
        ("tie_break", Kind::Name),
        ("seed", Kind::Count),
        ("conditional", Kind::OptName),
        ("delta", Kind::Float),
        ("simes_k", Kind::OptCount),
        ("mc_correction", Kind::OptFloat),
    ];

    fn from_record(r: &Record) -> Result<Self, Error> {
        let ties: Ties = r.parse("tie_break")?;
        ConformalSpec::new(
            ties.with_seed(r.get("seed")?),
            r.parse_opt("conditional")?,
            r.get("delta")?,
            r.get("simes_k")?,
            r.get("mc_correction")?,
        )
    }
}

/// A fitted tail's family and thresholds (contract §11; checked by the fit).
impl FromRecord for TailSpec {
    const SCHEMA: &'static Schema = &[
        ("kind", Kind::Name),
        ("quantile", Kind::Float),
        ("delta", Kind::Float),
    ];

    fn from_record(r: &Record) -> Result<Self, Error> {
        Ok(TailSpec {
            kind: r.parse("kind")?,
            quantile: r.get("quantile")?,
            delta: r.get("delta")?,
        })
    }
}

/// Huber's proposal 2 (contract §3): `tuning` None is the norm's default
/// (checked by the estimate).
impl FromRecord for MParams {
    const SCHEMA: &'static Schema = &[
        ("norm", Kind::Name),
        ("c", Kind::Float),
        ("tuning", Kind::OptFloat),
        ("maxiter", Kind::Count),
        ("tol", Kind::Float),
    ];

    fn from_record(r: &Record) -> Result<Self, Error> {
        let norm: Norm = r.parse("norm")?;
        let tuning: Option<f64> = r.get("tuning")?;
        Ok(MParams {
            c: r.get("c")?,
            tuning: tuning.unwrap_or(norm.default_tuning()),
            maxiter: r.count("maxiter")?,
            tol: r.get("tol")?,
            ..MParams::new(norm)
        })
    }
}

/// The partial of a census an engine ran natively (contract §9): counts
/// without first indexes, and the doubles sketch's bytes.
impl FromRecord for Partial {
    const SCHEMA: &'static Schema = &[
        ("len", Kind::Count),
        ("count", Kind::Count),
        ("nan_count", Kind::Count),
        ("inf_count", Kind::Count),
        ("min", Kind::Float),
        ("max", Kind::Float),
        ("sketch", Kind::Bytes),
    ];

    fn from_record(r: &Record) -> Result<Self, Error> {
        let counts = Counts {
            len: r.get("len")?,
            count: r.get("count")?,
            nan: r.get("nan_count")?,
            nan_first: None,
            inf: r.get("inf_count")?,
            inf_first: None,
            min: r.get("min")?,
            max: r.get("max")?,
        };
        let sketch: Option<Vec<u8>> = r.get("sketch")?;
        Partial::native_census(counts, sketch.as_deref())
    }
}

/// How a column's distributed fit runs (contract §9): linear or Gaussian,
/// and its method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanOptions {
    /// A linear fit (else the Gaussian fit of the spec).
    pub linear: bool,
    /// Exact or from a sketch.
    pub method: Method,
}

impl FromRecord for PlanOptions {
    const SCHEMA: &'static Schema = &[
        ("linear", Kind::Bool),
        ("method", Kind::Name),
        ("collect_max", Kind::Count),
        ("n_hint", Kind::OptCount),
        ("k", Kind::Count),
        ("native_census", Kind::Bool),
    ];

    fn from_record(r: &Record) -> Result<Self, Error> {
        let method: String = r.get("method")?;
        Ok(PlanOptions {
            linear: r.get("linear")?,
            method: Method::named(
                &method,
                r.get("collect_max")?,
                r.get("n_hint")?,
                r.count("k")?,
                r.get("native_census")?,
            )?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::record::Field;

    fn record<T: FromRecord>(fields: Vec<Field>) -> Result<T, Error> {
        T::from_record(&Record::new(T::SCHEMA, fields))
    }

    #[test]
    fn parameters_are_read_by_name_and_checked_by_their_constructor() {
        let spec = |delta: f64, conditional: Option<&str>| {
            record::<ConformalSpec>(vec![
                Field::Name("randomized".into()),
                Field::Count(3),
                Field::OptName(conditional.map(str::to_owned)),
                Field::Float(delta),
                Field::OptCount(None),
                Field::OptFloat(None),
            ])
        };
        let s = spec(0.1, Some("simes")).unwrap();
        assert_eq!(s.tie_break, Ties::Randomized.with_seed(3));
        assert!(s.conditional.is_some());
        assert!(spec(1.5, None).unwrap_err().to_string().contains("delta"));
        let bad = spec(0.1, Some("nope")).unwrap_err().to_string();
        assert!(bad.contains("conditional"), "{bad}");
        let m = record::<MParams>(vec![
            Field::Name("tukey".into()),
            Field::Float(1.5),
            Field::OptFloat(None),
            Field::Count(30),
            Field::Float(1e-8),
        ])
        .unwrap();
        assert_eq!(m, MParams::new(Norm::Tukey));
        let d = record::<DecayedFit>(vec![
            Field::Float(100.0),
            Field::Count(4),
            Field::Count(1 << 40),
            Field::Count(200),
            Field::Count(1),
        ]);
        assert!(d.unwrap_err().to_string().contains("horizon"));
    }
}
