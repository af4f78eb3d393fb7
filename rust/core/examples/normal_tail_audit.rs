//! Audits the normal survival function against correctly rounded values:
//!
//! ```text
//! python3 rust/core/tools/normal_tail_reference.py /tmp/normal_sf.bin 200000
//! cargo run --release -p outprob-core --example normal_tail_audit /tmp/normal_sf.bin
//! ```
//!
//! The file holds little-endian f64 pairs (z, S(z) correctly rounded).
//! Prints the largest relative error where S(z) is a normal double and the
//! largest absolute error (in units of the smallest subnormal) where it is
//! not; exits non-zero beyond the bounds contract §11 states (relative
//! 10⁻¹⁵, absolute 4 subnormal units).

use outprob_core::numeric::erf::normal_sf;

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: normal_tail_audit FILE");
    let bytes = std::fs::read(path).expect("reference file");
    let vals: Vec<f64> = bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let tiny = f64::from_bits(1);
    let (mut rel, mut rel_at, mut abs, mut abs_at, mut count) = (0.0f64, 0.0, 0.0f64, 0.0, 0);
    for p in vals.chunks_exact(2) {
        let (z, want) = (p[0], p[1]);
        let got = normal_sf(z);
        count += 1;
        if want >= f64::MIN_POSITIVE {
            let e = ((got - want) / want).abs();
            if e > rel {
                (rel, rel_at) = (e, z);
            }
        } else {
            let e = (got - want).abs() / tiny;
            if e > abs {
                (abs, abs_at) = (e, z);
            }
        }
    }
    println!("{count} points");
    println!(
        "normal results: largest relative error {rel:.3e} ({:.2} × 2⁻⁵³) at z = {rel_at}",
        rel / f64::EPSILON * 2.0
    );
    println!("subnormal results: largest error {abs} subnormal units at z = {abs_at}");
    if rel > 1e-15 || abs > 4.0 {
        std::process::exit(1);
    }
}
