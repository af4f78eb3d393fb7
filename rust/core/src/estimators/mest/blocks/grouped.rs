//! Values gathered by a read, grouped by the leaf they belong to: each
//! chunk of the read groups its own (in parallel), and each leaf's list is
//! then the chunks' groups joined in chunk order — the scores' order,
//! whatever the number of threads. Pushing ~10⁶ gathered values one by one
//! into their leaves' lists was a serial tenth of a fit at 1e7 scores.

use crate::numeric::par::PARALLEL_MIN;
use rayon::prelude::*;

/// The slot of a value that belongs to no group.
pub(super) const NONE: u32 = u32::MAX;

/// One chunk's values, grouped by slot, each group in the values' order.
#[derive(Debug, Default)]
pub(super) struct Grouped {
    /// `starts[s]..starts[s + 1]` is slot `s`'s range of `vals`.
    starts: Vec<usize>,
    vals: Vec<f64>,
}

impl Grouped {
    /// `vals` grouped into `slots` slots by `slot_of` (a counting sort,
    /// stable); values of slot [`NONE`] are left out.
    pub(super) fn new(vals: &[f64], slots: usize, slot_of: impl Fn(f64) -> u32) -> Grouped {
        let keys: Vec<u32> = vals.iter().map(|&y| slot_of(y)).collect();
        Grouped::by_keys(&keys, vals, slots)
    }

    /// [`Grouped::new`] of values whose slots are known: `keys[i]` is the
    /// slot of `vals[i]`.
    pub(super) fn by_keys(keys: &[u32], vals: &[f64], slots: usize) -> Grouped {
        debug_assert_eq!(keys.len(), vals.len());
        let mut starts = vec![0usize; slots + 1];
        for &k in keys {
            if k != NONE {
                starts[k as usize + 1] += 1;
            }
        }
        for s in 0..slots {
            starts[s + 1] += starts[s];
        }
        let mut next = starts.clone();
        let mut out = vec![0.0; starts[slots]];
        for (&k, &y) in keys.iter().zip(vals) {
            if k != NONE {
                out[next[k as usize]] = y;
                next[k as usize] += 1;
            }
        }
        Grouped { starts, vals: out }
    }

    /// `vals` as they are, for [`pushed`] to group (the ablation of the
    /// grouping in chunks).
    pub(super) fn ungrouped(vals: Vec<f64>) -> Grouped {
        Grouped {
            starts: vec![0, vals.len()],
            vals,
        }
    }

    /// The values of slot `s` (none for a slot beyond this chunk's).
    fn group(&self, s: usize) -> &[f64] {
        match (self.starts.get(s), self.starts.get(s + 1)) {
            (Some(&a), Some(&b)) => &self.vals[a..b],
            _ => &[],
        }
    }

    /// Number of values held.
    fn len(&self) -> usize {
        self.vals.len()
    }

    /// The slots' starts (`starts[s]..starts[s + 1]` is slot `s`'s range)
    /// and the grouped values.
    pub(super) fn into_parts(self) -> (Vec<usize>, Vec<f64>) {
        (self.starts, self.vals)
    }
}

/// Each of `slots` slots' values: the parts' groups joined in the parts'
/// order, one list per slot (in parallel over the slots when there are
/// many values).
pub(super) fn joined(parts: &[Grouped], slots: usize) -> Vec<Vec<f64>> {
    let one = |s: usize| {
        let mut list = Vec::with_capacity(parts.iter().map(|p| p.group(s).len()).sum());
        for p in parts {
            list.extend_from_slice(p.group(s));
        }
        list
    };
    if parts.iter().map(Grouped::len).sum::<usize>() < PARALLEL_MIN {
        (0..slots).map(one).collect()
    } else {
        (0..slots).into_par_iter().map(one).collect()
    }
}

/// [`joined`] of parts left [`Grouped::ungrouped`]: each value pushed in
/// turn onto its slot's list (`slot_of`), one thread.
pub(super) fn pushed(
    parts: &[Grouped],
    slots: usize,
    slot_of: impl Fn(f64) -> u32,
) -> Vec<Vec<f64>> {
    let mut lists = vec![Vec::new(); slots];
    for &y in parts.iter().flat_map(|p| &p.vals) {
        if let Some(list) = lists.get_mut(slot_of(y) as usize) {
            list.push(y);
        }
    }
    lists
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_keep_the_values_order_across_parts() {
        // Slot = the value's tens digit; 9x values belong to none.
        let slot_of = |y: f64| if y >= 90.0 { NONE } else { (y / 10.0) as u32 };
        let a = [31.0, 5.0, 92.0, 33.0, 7.0, 11.0];
        let b = [2.0, 95.0, 34.0, 1.0];
        let parts = [
            Grouped::new(&a, 4, slot_of),
            Grouped::new(&b, 4, slot_of),
            Grouped::default(),
        ];
        let lists = joined(&parts, 4);
        assert_eq!(lists[0], vec![5.0, 7.0, 2.0, 1.0]);
        assert_eq!(lists[1], vec![11.0]);
        assert!(lists[2].is_empty());
        assert_eq!(lists[3], vec![31.0, 33.0, 34.0]);
    }

    #[test]
    fn parallel_join_equals_the_serial_order() {
        // Enough values for the parallel join: the same lists as pushing
        // each value in turn.
        let vals: Vec<f64> = (0..PARALLEL_MIN as u64 + 5000)
            .map(|i| ((i * 2_654_435_761) % 1000) as f64)
            .collect();
        let slot_of = |y: f64| if y >= 700.0 { NONE } else { (y / 100.0) as u32 };
        let parts: Vec<Grouped> = vals
            .chunks(40_000)
            .map(|c| Grouped::new(c, 7, slot_of))
            .collect();
        let mut want = vec![Vec::new(); 7];
        for &y in &vals {
            if slot_of(y) != NONE {
                want[slot_of(y) as usize].push(y);
            }
        }
        assert_eq!(joined(&parts, 7), want);
    }
}
