//! The counts of a batch of keys against a [`CountTree`] and each other,
//! in arrival order, computed in key order (contract §12, online p-values).
//!
//! For key j of the batch, (#earlier keys > k_j, #earlier keys = k_j),
//! "earlier" meaning stored before the batch or earlier in it — what one
//! [`CountTree::insert`] per key in arrival order returns — split in two:
//!
//! * against the tree as it was before the batch: the keys are inserted in
//!   ascending order, so the batch keys already inserted are never greater
//!   and the equal ones among them are known (the run of equal keys so
//!   far). In key order consecutive inserts share their upper inner
//!   nodes, so the lowest inner node a few keys ahead, and then the leaf
//!   under it, are prefetched while the inserts before them run;
//! * against the batch: a Fenwick tree over the batch's distinct keys (in
//!   cache), filled in arrival order.
//!
//! The counts are integers, so the p-values are those of the one-by-one
//! inserts bit for bit; only the tree's layout (not its multiset) differs.

use super::tree::CountTree;

/// Keys ahead whose leaf is prefetched before an insert; the lowest inner
/// node on the path is prefetched twice as far ahead, since finding the
/// leaf reads it.
const AHEAD: usize = 16;

/// Fills `greater[j]`, `equal[j]` for each key of `keys` (arrival order)
/// and inserts them all into `tree`.
pub fn insert_batch(tree: &mut CountTree, keys: &[u64], greater: &mut [u64], equal: &mut [u64]) {
    debug_assert!(greater.len() == keys.len() && equal.len() == keys.len());
    let mut order: Vec<(u64, u32)> = keys
        .iter()
        .enumerate()
        .map(|(i, &k)| (k, i as u32))
        .collect();
    order.sort_unstable();
    // rank[i]: how many distinct batch keys are below key i.
    let mut rank = vec![0u32; keys.len()];
    let (mut distinct, mut run_start) = (0u32, 0usize);
    for t in 0..order.len() {
        let (k, i) = order[t];
        if t > 0 && order[t - 1].0 != k {
            distinct += 1;
            run_start = t;
        }
        if let Some(&(ahead, _)) = order.get(t + 2 * AHEAD) {
            tree.prefetch_inner(ahead);
        }
        if let Some(&(ahead, _)) = order.get(t + AHEAD) {
            tree.prefetch(ahead);
        }
        let (g, e) = tree.insert(k);
        greater[i as usize] = g;
        equal[i as usize] = e - (t - run_start) as u64;
        rank[i as usize] = distinct;
    }
    // Fenwick tree over ranks 1..=distinct+1: batch keys seen so far.
    let mut fenwick = vec![0u32; distinct as usize + 2];
    let prefix = |f: &[u32], mut r: usize| {
        let mut s = 0u64;
        while r > 0 {
            s += u64::from(f[r]);
            r &= r - 1;
        }
        s
    };
    for (j, &r) in rank.iter().enumerate() {
        let r = r as usize + 1;
        let (at_most, below) = (prefix(&fenwick, r), prefix(&fenwick, r - 1));
        greater[j] += j as u64 - at_most;
        equal[j] += at_most - below;
        let mut x = r;
        while x < fenwick.len() {
            fenwick[x] += 1;
            x += x & x.wrapping_neg();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn equals_one_insert_per_key(
            before in prop::collection::vec(0u64..50, 0..400),
            batch in prop::collection::vec(0u64..50, 0..400),
        ) {
            let mut one = CountTree::default();
            let mut both = CountTree::default();
            for &k in &before {
                one.insert(k);
                both.insert(k);
            }
            let want: Vec<(u64, u64)> = batch.iter().map(|&k| one.insert(k)).collect();
            let (mut g, mut e) = (vec![0; batch.len()], vec![0; batch.len()]);
            insert_batch(&mut both, &batch, &mut g, &mut e);
            let got: Vec<(u64, u64)> = g.into_iter().zip(e).collect();
            prop_assert_eq!(got, want);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            one.for_each(|k, c| a.push((k, c)));
            both.for_each(|k, c| b.push((k, c)));
            prop_assert_eq!(a, b);
        }
    }
}
