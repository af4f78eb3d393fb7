//! Inverse-power sums `Σ 1/d^(k+1)` of distances to a point: the terms of
//! the series `Σ 1/(d − δ) = Σ_k δ^k Σ 1/d^(k+1)` that M-estimation uses for
//! Huber's weights outside a window (`mest::tails`, the far
//! tails of `mest::blocks`).

use crate::numeric::sum::TwoSum;

/// Scores per chunk: their terms are computed in one loop that vectorises,
/// summed in eight lanes folded pairwise; the chunks' sums of the first
/// power are joined by TwoSum.
const CHUNK: usize = 64;
const LANES: usize = 8;

crate::numeric::simd::multiversion! {
    /// Adds `Σ 1/d^(k+1)`, `k < out.len()`, over the positive distances
    /// `d = sign·(s − m₀)` of the scores `s` to `out`. The first power, the
    /// sum itself, carries at most ~11ε of its value (lanes, then TwoSum);
    /// the others are plain sums of positive terms, which the series
    /// multiplies by ever smaller powers of its ratio.
    pub fn sums(s: &[f64], m0: f64, sign: f64, out: &mut [f64]) -> () {
        let mut first = TwoSum::default();
        let mut rest = [0.0; 32];
        let terms = out.len().min(rest.len());
        for chunk in s.chunks(CHUNK) {
            // A short chunk is padded with zeros (the inverse of an
            // infinite distance): the loops stay whole.
            let mut pw = [0.0; CHUNK];
            for (p, &v) in pw.iter_mut().zip(chunk) {
                *p = 1.0 / (sign * (v - m0));
            }
            let inv = pw;
            for (k, sum) in rest.iter_mut().enumerate().take(terms) {
                let mut lanes = [0.0; LANES];
                for block in pw.chunks_exact(LANES) {
                    for (lane, &p) in lanes.iter_mut().zip(block) {
                        *lane += p;
                    }
                }
                let total = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3]))
                    + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
                if k == 0 {
                    first.add(total);
                } else {
                    *sum += total;
                }
                for (p, &i) in pw.iter_mut().zip(&inv) {
                    *p *= i;
                }
            }
        }
        rest[0] = first.value();
        for (o, r) in out.iter_mut().zip(&rest) {
            *o += r;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::sum::exact_sum;

    #[test]
    fn sums_equal_exactly_rounded_sums() {
        let s: Vec<f64> = (0..1000).map(|i| 3.0 + f64::from(i) * 0.013).collect();
        let mut out = [0.0; 20];
        sums(&s, 1.0, 1.0, &mut out);
        for (k, &got) in out.iter().enumerate() {
            let terms: Vec<f64> = s
                .iter()
                .map(|v| (v - 1.0_f64).powi(-(k as i32) - 1))
                .collect();
            let want = exact_sum(&terms).value();
            let tol = if k == 0 { 1e-15 } else { 1e-13 };
            assert!((got - want).abs() <= tol * want, "{k}: {got} {want}");
        }
        // The other side: distances m₀ − s.
        let mut left = [0.0; 3];
        sums(&s, 20.0, -1.0, &mut left);
        let want: f64 = s.iter().map(|v| 1.0 / (20.0 - v)).sum();
        assert!((left[0] - want).abs() <= 1e-13 * want);
    }
}
