//! Location and scale estimators (contract §1, §2) and joint M-estimation
//! (§3).

pub mod location;
pub mod mest;
pub mod scale;
