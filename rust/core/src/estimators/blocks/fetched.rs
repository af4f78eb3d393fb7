//! A cut leaf's values: read whole when a step first cuts it (or sorted at
//! once if small), sorted under a tree of their own over runs of
//! [`SUB_LEAF`] values when another step does.

use super::tree::{build, read_values, walk, Acc, Node, Window, K};
use crate::numeric::float::sort_by_order_key;

/// A fetched leaf's values, sorted, under a tree of their own over runs of
/// [`SUB_LEAF`] values: where the leaf is cut or near the pole, a step
/// then reads only the runs it must.
#[derive(Debug)]
pub(super) struct Fetched {
    pub(super) vals: Box<[f64]>,
    /// Built when a step first reads the leaf (empty until then): most
    /// leaves a fit fetches with a band are never cut.
    nodes: Vec<Node>,
    all: bool,
    /// Steps that cut the leaf so far.
    cuts: usize,
    /// Whether `nodes` is the tree over the sorted values (else one run).
    sorted: bool,
}

/// Values per leaf of a fetched leaf's tree.
const SUB_LEAF: usize = 16;
/// Largest fetched leaf that is sorted into a tree of its own when a step
/// first cuts it; a larger one is sorted when a second step does.
const SORTED_MAX: usize = 1 << 10;

impl Fetched {
    pub(super) fn new(vals: Vec<f64>, all: bool) -> Fetched {
        Fetched {
            vals: vals.into_boxed_slice(),
            nodes: Vec::new(),
            all,
            cuts: 0,
            sorted: false,
        }
    }

    /// Builds the tree over the values for a step that cuts the leaf.
    pub(super) fn prepare(&mut self) {
        self.cuts += 1;
        // Sorting a small leaf pays for itself at once. A large one is read
        // whole the first time a step cuts it, and sorted if another step
        // does: at 1e7 scores a leaf holds ~10⁴ of them and the edges cut
        // the same few leaves at every step (issue #11), while a leaf cut
        // once — as the windows widen past it — is not worth a sort.
        let sort = self.vals.len() <= SORTED_MAX || self.cuts >= 2;
        if self.vals.is_empty() || (!self.nodes.is_empty() && (self.sorted || !sort)) {
            return;
        }
        self.sorted = sort;
        if !sort {
            // One run, cut wherever its leaf is (unbounded): its values are
            // read, so it needs no moments — taking them cost as much as
            // the read of every leaf a fit cuts once (~5 ms at 1e7 scores).
            self.nodes = vec![Node::unbounded(self.vals.len())];
            return;
        }
        let all = self.all;
        let vals = &mut self.vals;
        // Scores are never NaN here: their keys sort like them, and faster.
        sort_by_order_key(vals);
        let size = SUB_LEAF;
        let kept = if all { K } else { 6 };
        let leaves = vals
            .chunks(size)
            .enumerate()
            .map(|(i, run)| Node::run(run, i * size, kept))
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
