//! Online decisions on a stream of p-values (contract §12).
//!
//! * [`columns`]: the columns `outprob stream` adds (p-value, decision,
//!   monitor), a batch at a time.
//! * [`online_fdr`]: LOND, LORD++, SAFFRON and ADDIS — one decision per
//!   p-value, in arrival order, with the false discovery rate controlled at
//!   every time.
//! * [`martingale`]: exchangeability martingales (power, simple mixture,
//!   simple jumper) with CUSUM and Shiryaev–Roberts statistics and alarms.
//! * [`decayed`]: exponentially decayed moments and order statistics, for
//!   refits after a drift.
//! * [`drift`]: when a scaler is refitted after the martingale alarms, and
//!   the record of the alarms and refits.
//! * [`online_pvalues`]: online smoothed conformal p-values, each score
//!   ranked against every earlier one — independent and uniform under
//!   exchangeability, which the martingales' guarantee needs.
//!
//! Each state is plain data (`Parts`) that its `from_parts` checks against
//! itself and its parameters, so a checkpoint resumes bit for bit and a
//! tampered one is refused with the field named.

pub mod columns;
pub mod decayed;
pub mod drift;
pub mod martingale;
pub mod online_fdr;
pub mod online_pvalues;
pub mod stored;
