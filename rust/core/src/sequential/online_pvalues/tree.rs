//! A counted B+ tree of u64 keys with multiplicities: inserting a key
//! returns how many stored keys are greater and how many equal, in one
//! descent — O(log n) with a fan-out of up to [`CAP`], whatever order the
//! keys arrive in (no rebalancing by rotation: nodes split when full, so
//! every leaf is at the same depth and each node is at least half full).
//!
//! Inner nodes keep, per child, its smallest key (the first child's is
//! never read) and its total count; the count of keys greater than the new
//! one is the sum of the totals right of the path plus the counts right of
//! its place in the leaf.

/// Keys per leaf, children per inner node.
pub const CAP: usize = 32;
/// Depth bound: each level below the root holds at least CAP/2 per node,
/// so 2^64 keys need fewer than 16 levels.
const MAX_DEPTH: usize = 20;
/// Entries per node when built from sorted keys (room for later inserts).
const FILL: usize = CAP * 3 / 4;

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Leaf {
        keys: Vec<u64>,
        counts: Vec<u64>,
    },
    Inner {
        mins: Vec<u64>,
        totals: Vec<u64>,
        children: Vec<u32>,
    },
}

/// A multiset of u64 keys, counted.
#[derive(Debug, Clone, PartialEq)]
pub struct CountTree {
    nodes: Vec<Node>,
    root: u32,
    len: u64,
}

impl Default for CountTree {
    fn default() -> Self {
        CountTree {
            nodes: vec![Node::Leaf {
                keys: Vec::new(),
                counts: Vec::new(),
            }],
            root: 0,
            len: 0,
        }
    }
}

impl CountTree {
    /// Keys stored (with multiplicity).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// No key stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds `key`; returns (#stored keys > key, #stored keys == key) as
    /// they were before.
    pub fn insert(&mut self, key: u64) -> (u64, u64) {
        let mut path = [(0u32, 0usize); MAX_DEPTH];
        let mut depth = 0;
        let mut node = self.root;
        let mut greater = 0u64;
        self.len += 1;
        loop {
            match &mut self.nodes[node as usize] {
                Node::Inner {
                    mins,
                    totals,
                    children,
                } => {
                    let i = mins[1..].partition_point(|&m| m <= key);
                    greater += totals[i + 1..].iter().sum::<u64>();
                    totals[i] += 1;
                    path[depth] = (node, i);
                    depth += 1;
                    node = children[i];
                }
                Node::Leaf { keys, counts } => {
                    let pos = keys.partition_point(|&k| k < key);
                    if pos < keys.len() && keys[pos] == key {
                        let equal = counts[pos];
                        counts[pos] += 1;
                        greater += counts[pos + 1..].iter().sum::<u64>();
                        return (greater, equal);
                    }
                    greater += counts[pos..].iter().sum::<u64>();
                    keys.insert(pos, key);
                    counts.insert(pos, 1);
                    if keys.len() <= CAP {
                        return (greater, 0);
                    }
                    break;
                }
            }
        }
        // The leaf overflowed: split it, and every full node above.
        let (mut min, mut total, mut right) = self.split(node);
        let mut left = node;
        while depth > 0 {
            depth -= 1;
            let (parent, slot) = path[depth];
            let Node::Inner {
                mins,
                totals,
                children,
            } = &mut self.nodes[parent as usize]
            else {
                unreachable!("the path holds inner nodes")
            };
            totals[slot] -= total;
            mins.insert(slot + 1, min);
            totals.insert(slot + 1, total);
            children.insert(slot + 1, right);
            if children.len() <= CAP {
                return (greater, 0);
            }
            (min, total, right) = self.split(parent);
            left = parent;
        }
        self.nodes.push(Node::Inner {
            mins: vec![0, min],
            totals: vec![self.len - total, total],
            children: vec![left, right],
        });
        self.root = (self.nodes.len() - 1) as u32;
        (greater, 0)
    }

    /// Moves the upper half of node `i` into a new node: its smallest key,
    /// total and index.
    fn split(&mut self, i: u32) -> (u64, u64, u32) {
        let new = match &mut self.nodes[i as usize] {
            Node::Leaf { keys, counts } => {
                let h = keys.len() / 2;
                Node::Leaf {
                    keys: keys.split_off(h),
                    counts: counts.split_off(h),
                }
            }
            Node::Inner {
                mins,
                totals,
                children,
            } => {
                let h = children.len() / 2;
                Node::Inner {
                    mins: mins.split_off(h),
                    totals: totals.split_off(h),
                    children: children.split_off(h),
                }
            }
        };
        let (min, total) = match &new {
            Node::Leaf { keys, counts } => (keys[0], counts.iter().sum()),
            Node::Inner { mins, totals, .. } => (mins[0], totals.iter().sum()),
        };
        self.nodes.push(new);
        (min, total, (self.nodes.len() - 1) as u32)
    }

    /// Each distinct key and its count, ascending.
    pub fn for_each(&self, mut f: impl FnMut(u64, u64)) {
        let mut stack = vec![self.root];
        while let Some(i) = stack.pop() {
            match &self.nodes[i as usize] {
                Node::Leaf { keys, counts } => {
                    keys.iter().zip(counts).for_each(|(&k, &c)| f(k, c));
                }
                Node::Inner { children, .. } => stack.extend(children.iter().rev()),
            }
        }
    }

    /// The tree of strictly increasing `keys` with `counts` (≥ 1, equal
    /// lengths; the caller checks), built bottom-up.
    pub fn from_sorted(keys: &[u64], counts: &[u64]) -> Self {
        if keys.is_empty() {
            return CountTree::default();
        }
        let mut nodes = Vec::new();
        // (index, smallest key, total) of the level being built.
        let mut level: Vec<(u32, u64, u64)> = keys
            .chunks(FILL)
            .zip(counts.chunks(FILL))
            .map(|(k, c)| {
                nodes.push(Node::Leaf {
                    keys: k.to_vec(),
                    counts: c.to_vec(),
                });
                ((nodes.len() - 1) as u32, k[0], c.iter().sum())
            })
            .collect();
        while level.len() > 1 {
            level = level
                .chunks(FILL)
                .map(|group| {
                    nodes.push(Node::Inner {
                        mins: group.iter().map(|g| g.1).collect(),
                        totals: group.iter().map(|g| g.2).collect(),
                        children: group.iter().map(|g| g.0).collect(),
                    });
                    (
                        (nodes.len() - 1) as u32,
                        group[0].1,
                        group.iter().map(|g| g.2).sum(),
                    )
                })
                .collect();
        }
        CountTree {
            nodes,
            root: level[0].0,
            len: counts.iter().sum(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn counts_equal_a_scan(keys in prop::collection::vec(0u64..200, 0..3000), bulk in 0usize..100) {
            let bulk = bulk.min(keys.len());
            let mut start: Vec<u64> = keys[..bulk].to_vec();
            start.sort_unstable();
            let mut distinct = start.clone();
            distinct.dedup();
            let counts: Vec<u64> = distinct
                .iter()
                .map(|d| start.iter().filter(|&&k| k == *d).count() as u64)
                .collect();
            let mut t = CountTree::from_sorted(&distinct, &counts);
            let mut seen = start;
            for &k in &keys[bulk..] {
                let want = (
                    seen.iter().filter(|&&s| s > k).count() as u64,
                    seen.iter().filter(|&&s| s == k).count() as u64,
                );
                prop_assert_eq!(t.insert(k), want);
                seen.push(k);
            }
            prop_assert_eq!(t.len(), seen.len() as u64);
            let mut listed = Vec::new();
            t.for_each(|k, c| listed.extend(std::iter::repeat_n(k, c as usize)));
            seen.sort_unstable();
            prop_assert_eq!(listed, seen);
        }
    }

    #[test]
    fn sorted_and_reversed_arrivals_stay_shallow() {
        for reverse in [false, true] {
            let mut t = CountTree::default();
            for i in 0..200_000u64 {
                let k = if reverse { u64::MAX - i } else { i };
                let (g, e) = t.insert(k);
                assert_eq!((g, e), (if reverse { i } else { 0 }, 0));
            }
            // Depth: follow the first children.
            let mut depth = 1;
            let mut node = t.root;
            while let Node::Inner { children, .. } = &t.nodes[node as usize] {
                node = children[0];
                depth += 1;
            }
            assert!(depth <= 5, "{depth}");
        }
    }
}
