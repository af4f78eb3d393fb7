use super::*;
use proptest::prelude::*;

fn rel(a: f64, b: f64) -> f64 {
    if a == b {
        0.0
    } else {
        (a - b).abs() / b.abs()
    }
}

/// `Q(n, x) = e⁻ˣ Σ_{k<n} xᵏ/k!` for integer `n` (Poisson tail), summed in
/// a scaled form so that large `x` does not overflow.
fn q_integer(n: u32, x: f64) -> f64 {
    let mut term = (-x).exp();
    let mut sum = term;
    for k in 1..n {
        term *= x / f64::from(k);
        sum += term;
    }
    sum
}

#[test]
fn exponential_and_integer_orders() {
    for &x in &[1e-300, 1e-10, 0.1, 0.5, 1.0, 2.0, 10.0, 100.0, 600.0] {
        let (p, q) = gamma_pq(1.0, x);
        assert!(rel(q, (-x).exp()) < 1e-14, "Q(1,{x})");
        assert!(rel(p, -(-x).exp_m1()) < 1e-14, "P(1,{x})");
    }
    for n in [2u32, 3, 5, 10, 20, 40] {
        for &x in &[0.5, 1.0, 3.0, 7.5, 15.0, 30.0, 60.0] {
            let q = gamma_q(f64::from(n), x);
            assert!(rel(q, q_integer(n, x)) < 3e-14, "Q({n},{x}) {q}");
        }
    }
}

#[test]
fn half_order_is_erf() {
    // P(1/2, x) = erf(√x): against the core's erf (<= 1 ulp).
    for &x in &[1e-12, 1e-3, 0.2, 0.9, 1.05, 1.2, 4.0, 9.0] {
        let p = gamma_p(0.5, x);
        let e = crate::numeric::erf::erf(x.sqrt());
        assert!(rel(p, e) < 1e-14, "P(0.5,{x}) {p} vs {e}");
    }
}

#[test]
fn edges() {
    assert_eq!(gamma_pq(2.0, 0.0), (0.0, 1.0));
    assert_eq!(gamma_pq(2.0, f64::INFINITY), (1.0, 0.0));
    for (a, x) in [
        (0.0, 1.0),
        (-1.0, 1.0),
        (f64::NAN, 1.0),
        (1.0, f64::NAN),
        (1.0, -1.0),
        (f64::INFINITY, 1.0),
    ] {
        let (p, q) = gamma_pq(a, x);
        assert!(p.is_nan() && q.is_nan());
    }
    // Huge orders and arguments stay finite and in [0, 1].
    for &(a, x) in &[
        (1e15, 1e15),
        (1e15, 1.1e15),
        (1e-300, 1e-300),
        (1e300, 1.0),
        (1.0, 1e300),
    ] {
        let (p, q) = gamma_pq(a, x);
        assert!(
            (0.0..=1.0).contains(&p) && (0.0..=1.0).contains(&q),
            "{a} {x}"
        );
    }
}

#[test]
fn temme_meets_the_series_at_its_border() {
    // Either side of a = 50 the two methods must agree.
    for &x in &[40.0, 45.0, 49.0, 50.0, 52.0, 60.0, 70.0] {
        let below = gamma_pq(49.999_999_999, x);
        let above = gamma_pq(50.0, x);
        assert!(rel(below.1, above.1) < 1e-9, "Q at {x}");
    }
    // Large a: the median of Γ(a, 1) is close to a − 1/3.
    // Near the median of large orders, against scipy.special.gammainc 1.17.
    for (a, p) in [
        (60.0, 0.499_982_885_335_727_5),
        (1e3, 0.499_999_750_662_253_6),
        (1e6, 0.499_999_999_992_104_2),
        (1e12, 0.499_999_999_983_767),
    ] {
        assert!(rel(gamma_p(a, a - 1.0 / 3.0), p) < 1e-14, "P({a}, a - 1/3)");
    }
}

#[test]
#[allow(clippy::excessive_precision)] // mpmath's 17 digits
fn fraction_region_against_mpmath() {
    // a < 1, x just above 1.1: the continued fraction at its slowest
    // (40-80 steps). Against mpmath 1.3 at 40 digits.
    for (a, x, q) in [
        (
            0.916_991_844_514_026,
            1.144_378_799_217_244,
            0.285_360_698_534_051_6,
        ),
        (
            0.733_117_660_121_797,
            1.100_644_717_971_091_2,
            0.224_980_110_468_080_97,
        ),
        (
            0.563_998_432_492_014_6,
            1.216_645_749_862_946_6,
            0.139_131_164_702_586_91,
        ),
        (
            0.638_108_366_308_254_5,
            1.365_789_448_735_198_3,
            0.137_198_096_728_030_64,
        ),
        (
            0.672_090_230_600_564_6,
            1.155_845_984_046_399_7,
            0.188_522_381_989_453_7,
        ),
        (
            0.520_716_086_174_874,
            1.169_172_281_254_540_4,
            0.133_036_301_298_503_21,
        ),
        (0.05, 1.5, 0.005_335_593_879_485_986_7),
        (0.3, 2.2, 0.017_139_900_089_930_13),
    ] {
        let got = gamma_q(a, x);
        assert!(rel(got, q) < 2e-15, "Q({a},{x}) = {got}, mpmath {q}");
    }
}

#[test]
#[allow(clippy::excessive_precision)] // mpmath's 17 digits
fn inverse_gamma_against_mpmath() {
    // 1/Γ(a) through the shift to a + n >= 10, whose rounding is corrected.
    for (a, inv, ln) in [
        (0.917, 0.947_604_838_856_330_72, 0.053_817_700_277_101_305),
        (
            1.5,
            core::f64::consts::FRAC_2_SQRT_PI,
            -0.120_782_237_635_245_22,
        ),
        (3.3, 0.372_656_357_373_679_62, 0.987_098_577_894_734_4),
        (7.7, 0.000_361_032_940_356_593_81, 7.926_541_356_269_004_8),
        (9.99, 2.818_473_266_864_507_7e-6, 12.779_315_214_350_193),
    ] {
        assert!(rel(inv_gamma_small(a), inv) < 1e-15, "1/Γ({a})");
        // lnΓ sums terms of size z ln z ≈ 25: accurate in absolute terms.
        assert!((ln_gamma(a) - ln).abs() < 5e-15, "lnΓ({a})");
    }
}

#[test]
fn log_helpers() {
    assert!(rel(log1pmx(1e-5), -1e-10 / 2.0 + 1e-15 / 3.0 - 1e-20 / 4.0) < 1e-15);
    assert!(rel(ln_gamma(0.5), 0.5 * PI.ln()) < 1e-15);
    assert!(rel(ln_gamma(20.0), 39.339_884_187_199_495) < 1e-15);
    assert!(
        rel(
            ln_gamma_1p_small(1e-8),
            -EULER_GAMMA * 1e-8 + 0.822_467_033_424_113_2e-16
        ) < 1e-14
    );
}

#[test]
#[allow(clippy::excessive_precision)] // mpmath's 17 digits
fn large_orders_and_tiny_arguments_against_mpmath() {
    // mpmath 40 digits: exp(a ln x − x − lnΓ(a+1)) · 1F1(1; a+1; x).
    // SciPy 1.17 is off by 3e-1 and 8e-1 relative at the first two.
    for (a, x, p, tol) in [
        (
            61_372_946.307_397_99,
            61_337_461.287_540_81,
            2.943_655_239_535_148_4e-6,
            1e-12,
        ),
        (
            4_834_462_529.661_851,
            4_832_437_485.642_118,
            7.777_991_426_113_542_3e-187,
            1e-12,
        ),
        (
            14.784_857_417_158_921,
            2.770_676_225_829_164_8e-15,
            8.121_995_49e-228,
            1e-8,
        ),
    ] {
        let got = gamma_pq(a, x).0;
        assert!(rel(got, p) <= tol, "P({a},{x}) = {got}, mpmath {p}");
    }
}

/// splitmix64, as `scipy_grid.py` draws.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * f64::EPSILON / 2.0
    }

    /// `2^e·(1 + u)`, `e` uniform in `[lo, hi)`: exact.
    fn log_uniform(&mut self, lo: i64, hi: i64) -> f64 {
        let e = lo + (self.next() % (hi - lo) as u64) as i64;
        let two_e = f64::from_bits(((1023 + e) as u64) << 52);
        (1.0 + self.unit()) * two_e
    }
}

/// The points of `scipy_grid.py`, drawn the same way (exact arithmetic).
fn scipy_grid_points() -> Vec<(f64, f64)> {
    let mut rng = SplitMix(12);
    let mut points = Vec::with_capacity(80_000);
    for _ in 0..60_000 {
        let a = rng.log_uniform(-20, 14);
        points.push((a, a * rng.log_uniform(-10, 10)));
    }
    for _ in 0..20_000 {
        let a = rng.log_uniform(-7, 14);
        let mut z = -6.0;
        for _ in 0..12 {
            z += rng.unit();
        }
        points.push((a, (a * (1.0 + z / a.sqrt())).max(1e-3)));
    }
    points
}

#[test]
fn matches_scipy_on_a_wide_grid() {
    // scipy.special.gammainc/gammaincc 1.17 at the points above
    // (`scipy_grid.py` writes them): orders 1e-6..1e4, arguments 1e-3..1e3
    // times the order, and 20 000 near the median, where the methods meet.
    let bytes = include_bytes!("scipy_grid.bin");
    let theirs: Vec<f64> = bytes
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
        .collect();
    let points = scipy_grid_points();
    assert_eq!(theirs.len(), 2 * points.len());
    let (mut err_p, mut err_q) = (Vec::new(), Vec::new());
    for (&(a, x), sp) in points.iter().zip(theirs.chunks_exact(2)) {
        let (p, q) = gamma_pq(a, x);
        assert!(
            (0.0..=1.0).contains(&p) && (0.0..=1.0).contains(&q),
            "P, Q({a},{x})"
        );
        assert!((p + q - 1.0).abs() <= 4.0 * EPS, "P+Q({a},{x}) = {}", p + q);
        // The far tails: both are limited by the condition number.
        for (mine, theirs, errs) in [(p, sp[0], &mut err_p), (q, sp[1], &mut err_q)] {
            if theirs > 1e-8 {
                errs.push((mine - theirs).abs() / theirs);
            }
        }
    }
    for errs in [&mut err_p, &mut err_q] {
        errs.sort_by(f64::total_cmp);
        // NumPy's linear-interpolated 0.999 quantile.
        let h = 0.999 * (errs.len() - 1) as f64;
        let (i, f) = (h.floor() as usize, h - h.floor());
        let q999 = errs[i] + f * (errs[(i + 1).min(errs.len() - 1)] - errs[i]);
        assert!(
            q999 < 5e-14,
            "0.999 quantile of the relative error: {q999:e}"
        );
        assert!(
            errs[errs.len() - 1] < 1e-12,
            "max relative error {:e}",
            errs[errs.len() - 1]
        );
    }
}

proptest! {
    #[test]
    fn complementary_bounded_and_monotone(
        la in -6.0f64..12.0,
        lx in -8.0f64..13.0,
        step in 1.0f64..1.5,
    ) {
        let (a, x) = (10f64.powf(la), 10f64.powf(lx));
        let (p, q) = gamma_pq(a, x);
        prop_assert!((0.0..=1.0).contains(&p) && (0.0..=1.0).contains(&q));
        prop_assert!((p + q - 1.0).abs() <= 4.0 * EPS, "P+Q = {}", p + q);
        let (p2, q2) = gamma_pq(a, x * step);
        // Monotone up to a few ulp of rounding at method borders.
        prop_assert!(p2 >= p - 4.0 * EPS * p.max(1e-300), "P({a},{x}) {p} > {p2}");
        prop_assert!(q2 <= q * (1.0 + 1e-13) + 1e-300, "Q({a},{x}) {q} < {q2}");
    }
}
