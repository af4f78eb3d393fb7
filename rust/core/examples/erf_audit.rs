//! Audits the erf against a large file of correctly rounded values:
//!
//! ```text
//! python3 rust/core/tools/erf_coefficients.py --dump /tmp/erf.bin 4000000
//! cargo run --release -p outprob-core --example erf_audit /tmp/erf.bin
//! ```
//!
//! The file holds little-endian f64 pairs (x, erf(x) correctly rounded,
//! mpmath at 60 digits). Prints the ulp histogram; exits non-zero above
//! 1 ulp. (The unit tests check a committed table of ~350 such points.)

use outprob_core::numeric::erf::erf_slice;

fn ulps(a: f64, b: f64) -> u64 {
    let key = |x: f64| {
        let b = x.to_bits() as i64;
        if b < 0 {
            i64::MIN - b
        } else {
            b
        }
    };
    key(a).abs_diff(key(b))
}

fn main() {
    let path = std::env::args().nth(1).expect("usage: erf_audit FILE");
    let bytes = std::fs::read(path).expect("reference file");
    let vals: Vec<f64> = bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    let (xs, want): (Vec<f64>, Vec<f64>) = vals.chunks_exact(2).map(|p| (p[0], p[1])).unzip();
    let mut out = vec![0.0; xs.len()];
    erf_slice(&xs, &mut out);
    let mut hist = [0usize; 4];
    let mut worst = (0u64, 0.0);
    for ((&x, &w), &o) in xs.iter().zip(&want).zip(&out) {
        let d = ulps(o, w);
        hist[usize::try_from(d).unwrap_or(3).min(3)] += 1;
        if d > worst.0 {
            worst = (d, x);
        }
    }
    println!(
        "{} points: {hist:?} at 0/1/2/3+ ulp; max {} ulp at {:e}",
        xs.len(),
        worst.0,
        worst.1
    );
    std::process::exit(i32::from(worst.0 > 1));
}
