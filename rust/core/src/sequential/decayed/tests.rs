//! The decayed fit against its definition computed directly (contract
//! §12, "Decayed fit").

use super::*;
use proptest::prelude::*;

/// w_i = 2^{−(n−1−i)/h}, from the definition.
fn weights(n: usize, h: f64) -> Vec<f64> {
    (0..n).map(|i| (-((n - 1 - i) as f64) / h).exp2()).collect()
}

/// NumPy's weighted inverted_cdf: the first sorted value whose
/// cumulative weight over the total reaches q.
fn direct_quantile(x: &[f64], w: &[f64], q: f64) -> f64 {
    let mut p: Vec<(f64, f64)> = x.iter().copied().zip(w.iter().copied()).collect();
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: f64 = w.iter().sum();
    let mut cum = 0.0;
    for (v, wi) in &p {
        cum += wi;
        if cum / total >= q {
            return *v;
        }
    }
    p.last().unwrap().0
}

#[test]
fn share_error_matches_the_sum_over_the_epoch() {
    for &(b, h) in &[(2u64, 1.0), (7, 3.0), (125, 1000.0), (1000, 64.0), (5, 1e9)] {
        let v: Vec<f64> = (0..b).map(|j| (j as f64 / h).exp2()).collect();
        let mean = v.iter().sum::<f64>() / b as f64;
        let above: f64 = v.iter().map(|&x| (x - mean).max(0.0)).sum();
        let want = above / v.iter().sum::<f64>();
        let got = epoch_share_error(b, h);
        // 1e-15 absolute: the direct sum's own cancellation for h = 1e9.
        assert!(
            (got - want).abs() <= 1e-9 * want + 1e-15,
            "{b} {h}: {got} vs {want}"
        );
    }
    assert_eq!(epoch_share_error(1, 10.0), 0.0);
    // m epochs per half-life: δ_E ≈ ln 2/(8m).
    let d = epoch_share_error(125, 1000.0);
    assert!((d - std::f64::consts::LN_2 / 64.0).abs() < 1e-3, "{d}");
}

proptest! {
    #[test]
    fn moments_equal_the_weighted_definition(
        x in prop::collection::vec(-1e6f64..1e6, 1..300),
        h in 1.0f64..500.0,
        cut in 0usize..300,
    ) {
        let mut f = DecayedFit::new(h, 8, 20, 200, 0).unwrap();
        let cut = cut.min(x.len());
        f.update(&x[..cut]).unwrap();
        f.update(&x[cut..]).unwrap();
        let w = weights(x.len(), h);
        let sw: f64 = w.iter().sum();
        let mean = x.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>() / sw;
        let var = x.iter().zip(&w).map(|(a, b)| b * (a - mean) * (a - mean)).sum::<f64>() / sw;
        let m = f.moments().unwrap();
        prop_assert_eq!(m.n, x.len() as u64);
        prop_assert!((m.weight - sw).abs() <= 1e-12 * sw);
        prop_assert!((m.mean - mean).abs() <= 1e-9 * (1.0 + mean.abs()));
        prop_assert!((m.variance - var).abs() <= 1e-9 * (1.0 + var));
    }

    #[test]
    fn one_score_per_epoch_gives_the_exact_weighted_quantile(
        x in prop::collection::vec(-1e3f64..1e3, 1..200),
        h in 1.0f64..50.0,
        q in 0.0f64..1.0,
    ) {
        // m ≥ h: epochs of one score, each weight exact, nothing dropped
        // within 64 half-lives of 200 scores when h ≥ 4.
        let f = {
            let mut f = DecayedFit::new(h, 1024, 64, 200, 0).unwrap();
            f.update(&x).unwrap();
            f
        };
        prop_assume!(!f.dropped);
        prop_assert_eq!(f.rank_error(), 0.0);
        let w = weights(x.len(), h);
        let got = f.quantiles(&[q]).unwrap().unwrap()[0];
        prop_assert_eq!(got, direct_quantile(&x, &w, q));
    }

    #[test]
    fn quantiles_are_within_the_stated_rank_error(
        x in prop::collection::vec(-1e3f64..1e3, 1..3000),
        h in 1.0f64..400.0,
        m in 1u32..16,
        q in 0.01f64..0.99,
    ) {
        let mut f = DecayedFit::new(h, m, 8, 64, 1).unwrap();
        f.update(&x).unwrap();
        let w = weights(x.len(), h);
        let total: f64 = w.iter().sum();
        let v = f.quantiles(&[q]).unwrap().unwrap()[0];
        // F(v⁻) ≤ q + δ and F(v) ≥ q − δ, F the decayed CDF of all scores.
        let below: f64 = x.iter().zip(&w).filter(|(a, _)| **a < v).map(|p| p.1).sum::<f64>() / total;
        let upto: f64 = x.iter().zip(&w).filter(|(a, _)| **a <= v).map(|p| p.1).sum::<f64>() / total;
        // The KLL ε is a 99th percentile (§9); its part is doubled here so
        // the test holds whatever the compaction coins.
        let d = f.rank_error() + f.epochs.iter().filter(|e| e.sketch.is_estimation_mode())
            .map(|e| e.sketch.normalized_rank_error(false)).fold(0.0, f64::max) + 1e-12;
        prop_assert!(below <= q + d, "F(v-) = {} > {} + {}", below, q, d);
        prop_assert!(upto >= q - d, "F(v) = {} < {} - {}", upto, q, d);
    }
}

#[test]
fn infinite_scores_refuse_the_batch_and_nan_are_skipped() {
    let mut f = DecayedFit::new(10.0, 4, 20, 200, 0).unwrap();
    f.update(&[1.0, f64::NAN, 2.0]).unwrap();
    assert_eq!(f.n(), 2);
    let before = f.to_bytes();
    let e = f.update(&[3.0, f64::INFINITY]).unwrap_err();
    assert!(matches!(
        e,
        Error::Infinite {
            count: 1,
            first_index: Some(1)
        }
    ));
    assert_eq!(f.to_bytes(), before);
    let e = f.update(&[1e300, -1e300]).unwrap_err();
    assert!(e.to_string().contains("double range"), "{e}");
    assert_eq!(f.to_bytes(), before);
}

#[test]
fn parameters_are_checked() {
    for (h, m, hz) in [
        (0.5, 8, 20),
        (f64::NAN, 8, 20),
        (2e12, 8, 20),
        (10.0, 0, 20),
        (10.0, 2000, 20),
        (10.0, 8, 0),
        (10.0, 8, 65),
    ] {
        assert!(DecayedFit::new(h, m, hz, 200, 0).is_err(), "{h} {m} {hz}");
    }
    assert!(DecayedFit::new(10.0, 8, 20, 2, 0).is_err());
    let f = DecayedFit::new(10.0, 8, 20, 200, 0).unwrap();
    assert!(f.quantiles(&[1.5]).is_err());
    assert_eq!(f.quantiles(&[0.5]).unwrap(), None);
    assert_eq!(f.moments(), None);
}

#[test]
fn bytes_resume_exactly_and_tampering_is_refused() {
    let x: Vec<f64> = (0..5000)
        .map(|i: i32| f64::from((i * 7919) % 1000) + if i > 3000 { 500.0 } else { 0.0 })
        .collect();
    let mut a = DecayedFit::new(100.0, 4, 6, 64, 3).unwrap();
    a.update(&x[..2345]).unwrap();
    let mut b = DecayedFit::from_bytes(&a.to_bytes()).unwrap();
    a.update(&x[2345..]).unwrap();
    b.update(&x[2345..]).unwrap();
    assert_eq!(a.to_bytes(), b.to_bytes());
    assert!(a.dropped);
    assert_eq!(
        a.quantiles(&[0.1, 0.5, 0.9]).unwrap(),
        b.quantiles(&[0.1, 0.5, 0.9]).unwrap()
    );
    let good = a.to_bytes();
    // weight at offset 5 + 8 + 4 + 4 + 2 + 8 + 8 = 39
    let mut t = good.clone();
    t[39..47].copy_from_slice(&1.0f64.to_le_bytes());
    assert!(DecayedFit::from_bytes(&t)
        .unwrap_err()
        .to_string()
        .contains("weight"));
    let mut t = good.clone();
    t[55..63].copy_from_slice(&(-1.0f64).to_le_bytes());
    assert!(DecayedFit::from_bytes(&t)
        .unwrap_err()
        .to_string()
        .contains("moments"));
    let mut t = good.clone();
    t[31..39].copy_from_slice(&4000u64.to_le_bytes());
    assert!(DecayedFit::from_bytes(&t).is_err());
    assert!(DecayedFit::from_bytes(&good[..good.len() - 1]).is_err());
    assert!(DecayedFit::from_bytes(b"OPDF2").is_err());
    let mut t = good.clone();
    t.push(0);
    assert!(DecayedFit::from_bytes(&t)
        .unwrap_err()
        .to_string()
        .contains("trailing"));
}

#[test]
fn stored_bytes_restore_only_under_their_parameters() {
    let mut a = DecayedFit::new(50.0, 8, 20, 200, 1).unwrap();
    a.update(&[1.0, 2.0, 3.0]).unwrap();
    let mut same = DecayedFit::new(50.0, 8, 20, 200, 1).unwrap();
    same.restore(&a.to_record()).unwrap();
    assert_eq!(same.to_bytes(), a.to_bytes());
    let mut other = DecayedFit::new(60.0, 8, 20, 200, 1).unwrap();
    let err = other.restore(&a.to_record()).unwrap_err().to_string();
    assert!(err.contains("other parameters"), "{err}");
    assert_eq!(other.n(), 0);
}
