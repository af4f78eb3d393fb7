//! The one error type of the core. Every message says what was wrong and
//! what the caller can do about it (contract §5); the binding maps each variant
//! to a Python exception in one place.

use core::fmt;

/// Why a computation was refused.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// No values to fit: the input is empty or held only NaN.
    Empty {
        /// Length of the input before NaN were omitted.
        len: usize,
    },
    /// ±inf in fitting data (contract §5).
    Infinite {
        /// How many infinite values.
        count: usize,
        /// Index of the first one (`None` when the source does not say,
        /// as a Spark aggregate does not).
        first_index: Option<usize>,
    },
    /// NaN in fitting data with `nan_policy="raise"`.
    Nan {
        /// How many NaN values.
        count: usize,
        /// Index of the first one (`None` when the source does not say).
        first_index: Option<usize>,
    },
    /// A probability outside [0, 1], or NaN.
    InvalidProbability {
        /// Index of the first offender.
        index: usize,
        /// Its value.
        value: f64,
    },
    /// No probabilities to evaluate.
    NoProbabilities,
    /// A parameter outside its domain.
    InvalidParameter {
        /// Parameter name as the user spells it.
        name: &'static str,
        /// What is allowed.
        reason: String,
    },
    /// Buffers whose lengths do not fit together.
    ShapeMismatch(String),
    /// A stream asked for its fit before it saw a score.
    NothingSeen,
}

impl Error {
    pub(crate) fn invalid(name: &'static str, reason: impl Into<String>) -> Self {
        Error::InvalidParameter {
            name,
            reason: reason.into(),
        }
    }

    /// A fitted parameter that is not a finite double (contract §5): refused
    /// alike by every fit — in memory, M-estimation, streaming — since it
    /// would map every finite score to 0 (or NaN). `name` is the parameter
    /// ("scale"), `what` names the estimate ("the fitted nmad scale").
    pub(crate) fn beyond_range(name: &'static str, what: impl fmt::Display) -> Self {
        Error::invalid(
            name,
            format!(
                "{what} exceeds the double range (the scores spread over more than \
                 ±1.8e308); divide the scores by a power of two, e.g. 2**8, before fitting"
            ),
        )
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Empty { len: 0 } => write!(f, "cannot fit on an empty array of scores"),
            Error::Empty { len } => write!(
                f,
                "all {len} scores are NaN: nothing is left to fit after omitting NaN"
            ),
            Error::Infinite { count, first_index } => write!(
                f,
                "scores contain {count} infinite value{}{}; fitting needs finite scores: \
                 drop or clip them before fitting",
                plural(*count),
                at(*first_index)
            ),
            Error::Nan { count, first_index } => write!(
                f,
                "scores contain {count} NaN value{}{} and nan_policy='raise'; use \
                 nan_policy='omit' to ignore them",
                plural(*count),
                at(*first_index)
            ),
            Error::InvalidProbability { index, value } => write!(
                f,
                "p[{index}] = {value} is not a probability: every p must be in [0, 1]"
            ),
            Error::NoProbabilities => write!(f, "cannot evaluate an empty array of probabilities"),
            Error::InvalidParameter { name, reason } => write!(f, "{name}: {reason}"),
            Error::ShapeMismatch(msg) => f.write_str(msg),
            Error::NothingSeen => {
                f.write_str("nothing to fit yet: update the fit with scores first")
            }
        }
    }
}

impl std::error::Error for Error {}

/// " (first at index i)", or nothing when the index is unknown.
fn at(first_index: Option<usize>) -> String {
    first_index.map_or(String::new(), |i| format!(" (first at index {i})"))
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A parameter named by a string: `FromStr` reading the names the user
/// gives (an unknown one refused with `parameter` named and `expected`
/// saying what it takes, then the name given) and `name()` writing them
/// back — one definition for every such enum of the core.
macro_rules! named_enum {
    ($t:ident, $parameter:literal, $expected:literal, $($name:literal => $v:ident),+ $(,)?) => {
        impl core::str::FromStr for $t {
            type Err = $crate::error::Error;

            fn from_str(s: &str) -> Result<Self, $crate::error::Error> {
                match s {
                    $($name => Ok($t::$v),)+
                    other => Err($crate::error::Error::invalid(
                        $parameter,
                        format!(concat!($expected, ", got {:?}"), other),
                    )),
                }
            }
        }

        impl $t {
            /// The name [`FromStr`](core::str::FromStr) reads.
            pub fn name(self) -> &'static str {
                match self {
                    $($t::$v => $name,)+
                }
            }
        }
    };
}
pub(crate) use named_enum;
