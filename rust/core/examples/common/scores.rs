//! The benchmark suite's long-tailed scores for the profiling examples:
//! a lognormal bulk and 3% far outliers at 10 + lognormal(2, 1), drawn by a
//! fixed xorshift generator (no dependency, the same scores every run).

pub fn long_tailed(n: usize) -> Vec<f64> {
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut u = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| {
            let z = (-2.0 * u().ln()).sqrt() * (std::f64::consts::TAU * u()).cos();
            if u() < 0.03 {
                10.0 + (2.0 + z).exp()
            } else {
                z.exp()
            }
        })
        .collect()
}
