//! The columns `outprob stream` adds after the probability (contract §12,
//! "outprob stream: p-values, alerts, a monitor"): each score's online
//! conformal p-value, the online-FDR decision on it and the monitor's
//! ln M with its alarm, in arrival order, a batch at a time.
//!
//! The parts are those of `outprob.OnlineConformal`, `OnlineFDR(method,
//! alpha=α)` and the martingale the caller builds (the command's is
//! `Martingale(kind, threshold=c, on_alarm="restart")`, whose signature
//! holds the defaults), fed the same values in the same order. A missing
//! score (NaN) has no place in the stream: its p-value and ln M are NaN,
//! its flags 0, and the parts do not see it.

use crate::error::Error;
use crate::sequential::martingale::{Martingale, Path};
use crate::sequential::online_fdr::{Method, OnlineFdr, Settings};
use crate::sequential::online_pvalues::OnlinePvalues;

/// Which columns, and their parameters.
#[derive(Debug, Clone)]
pub struct ColumnSpec {
    /// Write the p-values.
    pub pvalues: bool,
    /// The online-FDR rule and its α.
    pub alert: Option<(Method, f64)>,
    /// The monitor: a martingale with its alarm threshold, fresh.
    pub monitor: Option<Martingale>,
    /// Seed of the p-values' tie breaking.
    pub seed: u64,
    /// Lower scores are more anomalous.
    pub negate: bool,
}

/// The parts and one batch's columns (each as long as the batch).
#[derive(Debug, Clone)]
pub struct OnlineColumns {
    show_p: bool,
    pv: OnlinePvalues,
    fdr: Option<OnlineFdr>,
    mon: Option<Martingale>,
    /// The batch's p-values (NaN for a missing score).
    pub pvalue: Vec<f64>,
    /// ln M after each p-value (NaN for a missing score).
    pub log_martingale: Vec<f64>,
    /// The online-FDR decisions.
    pub alert: Vec<bool>,
    /// The monitor's alarms.
    pub alarm: Vec<bool>,
    /// Scratch: the present scores, then the CUSUM and Shiryaev–Roberts
    /// paths the monitor also computes.
    present: Vec<f64>,
    cusum: Vec<f64>,
    sr: Vec<f64>,
}

/// A column's values, borrowed (see [`OnlineColumns::doubles`]).
pub type Doubles<'a> = Vec<&'a [f64]>;

impl OnlineColumns {
    /// The parts of `spec` (`None` when it asks for no column), checked as
    /// their constructors check them.
    pub fn new(spec: ColumnSpec) -> Result<Option<Self>, Error> {
        if !spec.pvalues && spec.alert.is_none() && spec.monitor.is_none() {
            return Ok(None);
        }
        let fdr = match spec.alert {
            Some((method, alpha)) => Some(OnlineFdr::new(Settings::new(
                method, alpha, None, None, None, None,
            )?)),
            None => None,
        };
        Ok(Some(OnlineColumns {
            show_p: spec.pvalues,
            pv: OnlinePvalues::new(spec.seed, spec.negate, true),
            fdr,
            mon: spec.monitor,
            pvalue: Vec::new(),
            log_martingale: Vec::new(),
            alert: Vec::new(),
            alarm: Vec::new(),
            present: Vec::new(),
            cusum: Vec::new(),
            sr: Vec::new(),
        }))
    }

    /// The column names, in output order (the doubles, then the flags).
    pub fn names(&self) -> Vec<&'static str> {
        let shown = [
            (self.show_p, "pvalue"),
            (self.mon.is_some(), "log_martingale"),
            (self.fdr.is_some(), "alert"),
            (self.mon.is_some(), "alarm"),
        ];
        shown.iter().filter(|s| s.0).map(|s| s.1).collect()
    }

    /// The columns of the batch `x` (in arrival order), into the public
    /// vectors. Whole batch or nothing, as each part.
    pub fn compute(&mut self, x: &[f64]) -> Result<(), Error> {
        let n = x.len();
        let missing = x.iter().filter(|v| v.is_nan()).count();
        self.pvalue.resize(n, 0.0);
        if missing == 0 {
            self.pv.pvalues(x, None, &mut self.pvalue)?;
            return self.decide(n);
        }
        // Only the present scores enter the stream; the rest are spread
        // back after.
        self.present.clear();
        self.present
            .extend(x.iter().copied().filter(|v| !v.is_nan()));
        let mut p = std::mem::take(&mut self.present);
        let m = p.len();
        let mut out = vec![0.0; m];
        self.pv.pvalues(&p, None, &mut out)?;
        p.clear();
        self.present = p;
        self.pvalue[..m].copy_from_slice(&out);
        self.decide(m)?;
        // Spread each column from its first m entries to the rows.
        spread(x, &mut self.pvalue, f64::NAN);
        if self.fdr.is_some() {
            spread(x, &mut self.alert, false);
        }
        if self.mon.is_some() {
            spread(x, &mut self.log_martingale, f64::NAN);
            spread(x, &mut self.alarm, false);
        }
        Ok(())
    }

    /// The decisions and the monitor on the first `m` p-values.
    fn decide(&mut self, m: usize) -> Result<(), Error> {
        let n = self.pvalue.len();
        let p = &self.pvalue[..m];
        if let Some(fdr) = &mut self.fdr {
            self.alert.resize(n, false);
            fdr.decide(p, &mut self.alert[..m], None)?;
        }
        if let Some(mon) = &mut self.mon {
            self.log_martingale.resize(n, 0.0);
            self.alarm.resize(n, false);
            self.cusum.resize(m, 0.0);
            self.sr.resize(m, 0.0);
            mon.update(
                p,
                Path {
                    log_martingale: &mut self.log_martingale[..m],
                    log_cusum: &mut self.cusum,
                    log_shiryaev_roberts: &mut self.sr,
                    alarm: &mut self.alarm[..m],
                },
            )?;
        }
        Ok(())
    }

    /// The columns of doubles written, in order (p-value, ln M).
    pub fn doubles(&self) -> Doubles<'_> {
        let mut d: Doubles<'_> = Vec::with_capacity(2);
        if self.show_p {
            d.push(&self.pvalue);
        }
        if self.mon.is_some() {
            d.push(&self.log_martingale);
        }
        d
    }

    /// The flag columns written, in order (alert, alarm).
    pub fn flags(&self) -> Vec<&[bool]> {
        let mut f: Vec<&[bool]> = Vec::with_capacity(2);
        if self.fdr.is_some() {
            f.push(&self.alert);
        }
        if self.mon.is_some() {
            f.push(&self.alarm);
        }
        f
    }
}

/// Moves `v`'s first values (one per present score of `x`) to the present
/// rows' places, from the back so that none is overwritten before it
/// moves, and writes `fill` at the missing ones.
fn spread<T: Copy>(x: &[f64], v: &mut [T], fill: T) {
    let mut k = x.iter().filter(|s| !s.is_nan()).count();
    for i in (0..x.len()).rev() {
        if x[i].is_nan() {
            v[i] = fill;
        } else {
            k -= 1;
            v[i] = v[k];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sequential::martingale::{Kind, OnAlarm, Spec, Statistic};

    fn spec() -> ColumnSpec {
        let monitor = Martingale::new(Spec {
            kind: Kind::Jumper,
            jump: 0.01,
            epsilon: 0.5,
            n_grid: 100,
            min_epsilon: 0.01,
            threshold: Some(100.0),
            statistic: Statistic::Martingale,
            on_alarm: OnAlarm::Restart,
        });
        ColumnSpec {
            pvalues: true,
            alert: Some((Method::LordPlusPlus, 0.05)),
            monitor: Some(monitor.unwrap()),
            seed: 3,
            negate: false,
        }
    }

    /// Missing scores take no place: the columns of the present ones are
    /// those of the batch without them (contract §12).
    #[test]
    fn missing_scores_take_no_place() {
        let x: Vec<f64> = (0..50).map(|i| f64::from((i * 37) % 23)).collect();
        let mut holes = x.clone();
        for i in [0, 7, 8, 49] {
            holes.insert(i, f64::NAN);
        }
        let mut a = OnlineColumns::new(spec()).unwrap().unwrap();
        let mut b = OnlineColumns::new(spec()).unwrap().unwrap();
        a.compute(&x).unwrap();
        b.compute(&holes).unwrap();
        let mut k = 0;
        for (i, h) in holes.iter().enumerate() {
            if h.is_nan() {
                assert!(b.pvalue[i].is_nan() && b.log_martingale[i].is_nan());
                assert!(!b.alert[i] && !b.alarm[i]);
            } else {
                assert_eq!(b.pvalue[i].to_bits(), a.pvalue[k].to_bits());
                assert_eq!(b.log_martingale[i].to_bits(), a.log_martingale[k].to_bits());
                assert_eq!((b.alert[i], b.alarm[i]), (a.alert[k], a.alarm[k]));
                k += 1;
            }
        }
        assert_eq!(a.names(), ["pvalue", "log_martingale", "alert", "alarm"]);
    }

    /// The columns are those of the parts fed one after the other.
    #[test]
    fn columns_are_the_parts() {
        let x: Vec<f64> = (0..300)
            .map(|i| f64::from((i * 7919) % 101) * 0.5)
            .collect();
        let mut c = OnlineColumns::new(spec()).unwrap().unwrap();
        c.compute(&x[..100]).unwrap();
        let first = c.pvalue.clone();
        c.compute(&x[100..]).unwrap();
        let mut pv = OnlinePvalues::new(3, false, true);
        let mut p = vec![0.0; 300];
        pv.pvalues(&x, None, &mut p).unwrap();
        assert!(first.iter().chain(&c.pvalue).eq(p.iter()));
        let mut fdr = OnlineFdr::new(
            Settings::new(Method::LordPlusPlus, 0.05, None, None, None, None).unwrap(),
        );
        let mut alert = vec![false; 300];
        fdr.decide(&p, &mut alert, None).unwrap();
        assert_eq!(&alert[100..], &c.alert[..]);
        let none = ColumnSpec {
            pvalues: false,
            alert: None,
            monitor: None,
            ..spec()
        };
        assert!(OnlineColumns::new(none).unwrap().is_none());
    }
}
