//! `Q(a, x)` of several arguments at once, each equal bit for bit to
//! [`Order::q`]: the arguments whose `Q` comes from the continued fraction
//! run it in lockstep. One evaluation is a chain of dependent divisions
//! (two per Lentz step, one per backward step, 40–80 steps near `x ≈ 1`),
//! so a single one waits on each division's latency; [`LANES`]
//! independent chains keep the divider busy. Every lane performs the
//! scalar evaluation's operations in the same order (no fused
//! multiply-adds), lanes that have converged or not yet started only
//! carry values that are discarded.

use super::{Order, EPS, MAX_ITER, TEMME_MIN_A};
use crate::numeric::gamma::log1pmx;

/// Arguments evaluated together.
pub const LANES: usize = 8;

impl Order {
    /// Whether [`Order::q`] of `x` is the continued fraction.
    fn takes_fraction(&self, x: f64) -> bool {
        let a = self.a;
        a > 0.0
            && a.is_finite()
            && x > 0.0
            && x != f64::INFINITY
            && !(a >= TEMME_MIN_A && log1pmx((x - a) / a) >= -0.5)
            && (x >= a + 1.0 || (a < 1.0 && x >= 1.1))
    }

    /// `Q(a, xᵢ)` of up to [`LANES`] arguments into `out`, equal to
    /// [`Order::q`] of each.
    pub fn q_lanes(&self, xs: &[f64], out: &mut [f64]) {
        debug_assert!(xs.len() <= LANES && out.len() == xs.len());
        let (mut at, mut lane_x, mut k) = ([0usize; LANES], [0.0f64; LANES], 0);
        for (i, &x) in xs.iter().enumerate() {
            if self.takes_fraction(x) {
                (at[k], lane_x[k]) = (i, x);
                k += 1;
            } else {
                out[i] = self.q(x);
            }
        }
        if k == 0 {
            return;
        }
        let first = lane_x[0];
        lane_x[k..].fill(first);
        let f = q_fraction_lanes(self.a, &lane_x, k);
        for l in 0..k {
            out[at[l]] = (self.prefactor(lane_x[l]) * f[l]).min(1.0);
        }
    }
}

/// [`super::q_fraction`] of the first `k` lanes of `xs` (the others are
/// computed on copies and discarded).
fn q_fraction_lanes(a: f64, xs: &[f64; LANES], k: usize) -> [f64; LANES] {
    const TAIL: usize = 10;
    let depth = lentz_depths(a, xs, k);
    let mut n = [0usize; LANES];
    for l in 0..k {
        n[l] = depth[l] + TAIL;
    }
    let top = n.iter().copied().max().unwrap_or(0);
    let mut f = [0.0f64; LANES];
    for l in 0..LANES {
        f[l] = xs[l] + (2 * n[l] + 1) as f64 - a;
    }
    for i in (1..=top).rev() {
        let i_f = i as f64;
        let t = i_f * (i_f - a);
        let c = (2 * i - 1) as f64;
        for l in 0..LANES {
            let next = (xs[l] + c - a) - t / f[l];
            f[l] = if i <= n[l] { next } else { f[l] };
        }
    }
    let mut q = [0.0f64; LANES];
    for l in 0..LANES {
        q[l] = 1.0 / f[l];
    }
    q
}

/// [`super::lentz_depth`] of the first `k` lanes of `xs`.
fn lentz_depths(a: f64, xs: &[f64; LANES], k: usize) -> [usize; LANES] {
    const TINY: f64 = 1e-300;
    let mut b = [0.0f64; LANES];
    let mut c = [1.0 / TINY; LANES];
    let mut d = [0.0f64; LANES];
    for l in 0..LANES {
        b[l] = xs[l] + 1.0 - a;
        d[l] = 1.0 / b[l];
    }
    let mut depth = [MAX_ITER; LANES];
    let mut done = [false; LANES];
    done[k..].fill(true);
    for i in 1..MAX_ITER {
        let i_f = i as f64;
        let an = -i_f * (i_f - a);
        let mut all = true;
        for l in 0..LANES {
            b[l] += 2.0;
            let mut dl = an * d[l] + b[l];
            if dl.abs() < TINY {
                dl = TINY;
            }
            let mut cl = b[l] + an / c[l];
            if cl.abs() < TINY {
                cl = TINY;
            }
            c[l] = cl;
            d[l] = 1.0 / dl;
            let hit = !done[l] && (d[l] * cl - 1.0).abs() <= EPS;
            if hit {
                depth[l] = i;
                done[l] = true;
            }
            all &= done[l];
        }
        if all {
            break;
        }
    }
    depth
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn equal_to_one_at_a_time(
            a in prop_oneof![Just(0.5), 0.01f64..5.0, 40.0f64..80.0],
            xs in prop::collection::vec(prop_oneof![
                0.0f64..3.0, 1.0f64..60.0, Just(0.0), Just(1.1), Just(f64::INFINITY), Just(f64::NAN)
            ], 0..=LANES),
        ) {
            let order = Order::new(a);
            let mut out = vec![0.0; xs.len()];
            order.q_lanes(&xs, &mut out);
            for (&x, &q) in xs.iter().zip(&out) {
                prop_assert_eq!(q.to_bits(), order.q(x).to_bits(), "a {} x {}", a, x);
            }
        }
    }
}
