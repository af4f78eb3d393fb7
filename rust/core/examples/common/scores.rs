//! Scores for the profiling examples, drawn by a fixed xorshift generator
//! (no dependency, the same scores every run): the benchmark suite's
//! long-tailed ones (a lognormal bulk and 3% far outliers at
//! 10 + lognormal(2, 1)), and standard normal ones for the conformal
//! profiles. `erf_bench` draws from the generator too.

/// A xorshift64 stream of uniforms in (0, 1) (never 0: their logarithms
/// are finite) from a nonzero `state`.
pub fn uniforms(mut state: u64) -> impl FnMut() -> f64 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
}

#[allow(dead_code)] // not every example that includes this file uses it
pub fn long_tailed(n: usize) -> Vec<f64> {
    let mut u = uniforms(0x9E37_79B9_7F4A_7C15);
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

/// `n` standard normal scores by Box–Muller from the uniforms of `seed`.
#[allow(dead_code)] // not every example that includes this file uses it
pub fn normals(n: usize, seed: u64) -> Vec<f64> {
    let mut u = uniforms(seed);
    (0..n)
        .map(|_| (-2.0 * u().ln()).sqrt() * (std::f64::consts::TAU * u()).cos())
        .collect()
}
