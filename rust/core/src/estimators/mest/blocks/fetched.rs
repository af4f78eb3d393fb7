//! A cut leaf's values (docs/design/m-estimation.md §2.3, step 7): read
//! whole when a step first cuts it (or put in runs at once if small), put
//! in runs of about [`run_length`] values in value order, under a tree of
//! their own, when another step does.
//!
//! The window edges of M-estimation move little between steps, so a leaf
//! one step cuts is likely cut again: the runs let later steps read only
//! the runs an edge cuts and take the others from their moments, as the
//! leaves of [`super::tree`] are. Runs are ordered by a counting sort on
//! the leading bits of the values' order keys — the values inside a run
//! need no order.
//!
//! Trade-offs: the first cut reads the leaf whole (most leaves are cut
//! once); a second cut pays for the counting sort and a small tree (runs
//! of √n values, 32 to 256, balancing the runs read against their number);
//! leaves of at most 1 024 values are put in runs at once. Sums over the
//! runs equal a direct read's: the predicate is the same.

use super::grouped::Grouped;
use super::tree::{build, read_values, walk, Acc, Node, Window, K};
use crate::numeric::float::{order_key, sort_by_order_key};

/// A fetched leaf's values, in runs in value order (see [`runs`]) under a
/// tree of their own: where the leaf is cut or near the pole, a step then
/// reads only the runs it must.
#[derive(Debug)]
pub(super) struct Fetched {
    pub(super) vals: Box<[f64]>,
    /// Built when a step first reads the leaf (empty until then): most
    /// leaves a fit fetches with a band are never cut.
    nodes: Vec<Node>,
    all: bool,
    /// Steps that cut the leaf so far.
    cuts: usize,
    /// Whether `nodes` is the tree over the runs (else one run, unbounded).
    in_runs: bool,
}

/// Values per run of a fetched leaf of `n` values, on average: about √n
/// (a power of two from 32 to 256). A run costs a join of moments to
/// build, each of its values a read per step that cuts it; a large leaf
/// is cut by few steps against its values, a small one (a Tukey fit of a
/// few ten thousand scores) by many.
fn run_length(n: usize) -> usize {
    if ablated!("run_length") {
        return 32;
    }
    let root = (n as f64).sqrt() as usize;
    root.next_power_of_two().clamp(32, 256)
}
/// A group of more values than this many runs' length (values crowded in
/// a small part of their leaf's range) is sorted and cut into runs.
const CROWDED: usize = 4;
/// Largest fetched leaf that is put in runs when a step first cuts it; a
/// larger one is put in runs when a second step does.
const RUNS_AT_ONCE: usize = 1 << 10;

impl Fetched {
    pub(super) fn new(vals: Vec<f64>, all: bool) -> Fetched {
        Fetched {
            vals: vals.into_boxed_slice(),
            nodes: Vec::new(),
            all,
            cuts: 0,
            in_runs: false,
        }
    }

    /// Builds the tree over the values for a step that cuts the leaf.
    pub(super) fn prepare(&mut self) {
        self.cuts += 1;
        // Runs of a small leaf pay for themselves at once. A large one is
        // read whole the first time a step cuts it, and put in runs if
        // another step does: at 1e7 scores a leaf holds ~10⁴ of them and
        // the edges cut the same few leaves at every step, while a leaf cut
        // once — as the windows widen past it — is not worth its runs.
        let in_runs = (self.vals.len() <= RUNS_AT_ONCE || self.cuts >= 2 || ablated!("second_cut"))
            && !ablated!("runs");
        if self.vals.is_empty() || (!self.nodes.is_empty() && (self.in_runs || !in_runs)) {
            return;
        }
        self.in_runs = in_runs;
        if !in_runs {
            // One run, cut wherever its leaf is (unbounded): its values are
            // read, so it needs no moments — taking them would cost as much
            // as the read of every leaf a fit cuts once.
            self.nodes = vec![Node::unbounded(self.vals.len())];
            return;
        }
        let kept = if self.all { K } else { 6 };
        let vals = &mut self.vals;
        let leaves = runs(vals)
            .into_iter()
            .map(|(start, len)| Node::run(&vals[start..start + len], start, kept))
            .collect();
        self.nodes = build(leaves);
    }

    /// Adds the window's sums over these values.
    pub(super) fn walk<const J: usize>(&self, w: &Window, acc: &mut Acc<J>) {
        walk(&self.nodes, w, acc, &mut |i, acc| {
            let node = &self.nodes[i];
            read_values(&self.vals[node.bucket..node.bucket + node.count], w, acc);
        });
    }
}

/// Reorders `vals` (never NaN) into runs in value order — each run's values
/// all below the next run's — and gives each run's `(start, len)`.
///
/// The values are grouped by the bits of their order keys below those all
/// share, into about one group per [`run_length`] values: the counting
/// sort the read groups its gathered values with ([`Grouped`]), a third
/// of the time of sorting ~10⁴ values (the
/// values inside a run need no order: a run is summed whole, or read
/// value by value). A group of more than [`CROWDED`] runs' length is
/// sorted and cut into runs of that length, so that a cut reads no more.
fn runs(vals: &mut [f64]) -> Vec<(usize, usize)> {
    let n = vals.len();
    let run = run_length(n);
    if ablated!("counting_sort") {
        sort_by_order_key(vals);
        return (0..n).step_by(run).map(|s| (s, run.min(n - s))).collect();
    }
    let (lo, hi) = vals
        .iter()
        .map(|&v| order_key(v))
        .fold((u64::MAX, 0), |(a, b), k| (a.min(k), b.max(k)));
    let groups = n.div_ceil(run).next_power_of_two();
    let range = hi.saturating_sub(lo);
    let shift = (u64::BITS - range.leading_zeros()).saturating_sub(groups.trailing_zeros());
    // A shift of 64 (one group over keys of both signs) takes every key to 0.
    // Groups number fewer than 2·n/32 + 2: far below `grouped::NONE`.
    let group = |k: u64| (k - lo).checked_shr(shift).unwrap_or(0) as u32;
    let slots = if n == 0 { 0 } else { group(hi) as usize + 1 };
    let keys: Vec<u32> = vals.iter().map(|&v| group(order_key(v))).collect();
    let (starts, grouped) = Grouped::by_keys(&keys, vals, slots).into_parts();
    vals.copy_from_slice(&grouped);
    let mut out = Vec::with_capacity(starts.len() + n / run);
    for w in starts.windows(2) {
        let (start, len) = (w[0], w[1] - w[0]);
        if len > CROWDED * run {
            sort_by_order_key(&mut vals[start..start + len]);
            out.extend(
                (start..start + len)
                    .step_by(run)
                    .map(|s| (s, run.min(start + len - s))),
            );
        } else if len > 0 {
            out.push((start, len));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::testing::uniforms;
    use proptest::prelude::*;

    /// `runs` keeps the values, covers them with runs in value order (every
    /// key of a run at most every key of the next), none over `CROWDED`
    /// runs' length.
    fn check_runs(vals: &[f64]) -> Result<(), TestCaseError> {
        let mut got = vals.to_vec();
        let runs = runs(&mut got);
        let mut want: Vec<u64> = vals.iter().map(|&v| order_key(v)).collect();
        let mut have: Vec<u64> = got.iter().map(|&v| order_key(v)).collect();
        want.sort_unstable();
        have.sort_unstable();
        prop_assert_eq!(have, want);
        let mut end = 0;
        let mut below = 0u64;
        for &(start, len) in &runs {
            prop_assert_eq!(start, end);
            prop_assert!(len > 0 && len <= CROWDED * run_length(vals.len()));
            let keys = got[start..start + len].iter().map(|&v| order_key(v));
            prop_assert!(keys.clone().all(|k| k >= below));
            below = keys.max().unwrap_or(below);
            end = start + len;
        }
        prop_assert_eq!(end, vals.len());
        Ok(())
    }

    #[test]
    fn a_leaf_of_spread_values_is_grouped_into_small_runs() {
        let mut u = uniforms(7);
        // Runs of 32, 128 and 256 values.
        for (n, run) in [(700, 32), (13_700, 128), (70_000, 256)] {
            assert_eq!(run_length(n), run);
            let vals: Vec<f64> = (0..n).map(|_| 3.1 + 0.2 * u()).collect();
            check_runs(&vals).unwrap();
            let runs = runs(&mut vals.clone());
            // About one run per run_length values, none crowded.
            assert!(runs.len() >= n / (2 * run), "{} runs of {n}", runs.len());
        }
    }

    #[test]
    fn crowded_values_are_cut_into_sorted_runs() {
        // Nine in ten values on a few points of a leaf stretched by the
        // rest: their group is sorted and cut.
        let mut u = uniforms(11);
        let vals: Vec<f64> = (0..10_000)
            .map(|i| {
                if i % 10 == 0 {
                    1e3 * u()
                } else {
                    5.0 + f64::from(i % 3) * 1e-12
                }
            })
            .collect();
        check_runs(&vals).unwrap();
    }

    proptest! {
        #[test]
        fn runs_keep_the_values_in_value_order(
            vals in prop::collection::vec(
                prop_oneof![
                    -1e6f64..1e6,
                    Just(0.0),
                    Just(-0.0),
                    Just(f64::MIN_POSITIVE),
                    Just(-5e-324),
                    Just(1e300),
                    Just(2.5),
                ],
                0..3000,
            ),
        ) {
            check_runs(&vals)?;
        }
    }
}
