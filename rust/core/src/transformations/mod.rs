//! Score → probability maps (contract §4) and fitting them (§5).

pub mod fit;
pub mod fitted;
pub mod fused;
pub mod gamma;
pub mod gamma_table;
pub mod gaussian_options;
pub mod mixture;
pub mod rank;
pub mod scaling;
pub mod sigmoid;
pub mod stored;
