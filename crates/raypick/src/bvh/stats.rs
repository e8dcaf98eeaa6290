//! [`BvhStats`]: what a BVH looks like (for the CLI's `info` and for comparing build presets).

use super::{Bvh, Node};

/// Shape and cost figures of a [`Bvh`].
#[derive(Clone, Debug, PartialEq)]
pub struct BvhStats {
    /// Number of nodes.
    pub nodes: usize,
    /// Number of leaves.
    pub leaves: usize,
    /// Depth of the deepest leaf (root = 1; 0 when empty).
    pub depth: usize,
    /// Number of primitives.
    pub prims: usize,
    /// `leaf_size_histogram[k]` leaves hold `k` primitives.
    pub leaf_size_histogram: Vec<usize>,
    /// Mean primitives per leaf.
    pub mean_leaf_size: f32,
    /// SAH cost of the tree with unit costs: `(Σ_interior A + Σ_leaf A·N) / A_root`, the expected
    /// number of box tests plus primitive tests of a random ray that hits the root box.
    pub sah_cost: f32,
    /// Heap bytes of the nodes and the permutation.
    pub memory_bytes: usize,
}

/// What a walk over a tree accumulates for [`BvhStats`] (shared by the binary and the wide BVH).
#[derive(Default)]
pub(crate) struct Tally {
    leaves: usize,
    depth: usize,
    histogram: Vec<usize>,
    /// Σ interior area + Σ leaf area · primitives.
    cost: f64,
}

impl Tally {
    /// A leaf of `prims` primitives, box area `area`, at depth `depth`.
    pub(crate) fn leaf(&mut self, prims: usize, area: f32, depth: usize) {
        self.leaves += 1;
        self.depth = self.depth.max(depth);
        if self.histogram.len() <= prims {
            self.histogram.resize(prims + 1, 0);
        }
        self.histogram[prims] += 1;
        self.cost += area as f64 * prims as f64;
    }

    /// A node visit (box tests) of cost `area`.
    pub(crate) fn interior(&mut self, area: f32) {
        self.cost += area as f64;
    }

    /// The statistics of a tree of `nodes` nodes over `prims` primitives.
    pub(crate) fn finish(
        self,
        nodes: usize,
        prims: usize,
        root_area: f32,
        memory_bytes: usize,
    ) -> BvhStats {
        BvhStats {
            nodes,
            leaves: self.leaves,
            depth: self.depth,
            prims,
            leaf_size_histogram: self.histogram,
            mean_leaf_size: if self.leaves == 0 {
                0.0
            } else {
                prims as f32 / self.leaves as f32
            },
            sah_cost: if root_area > 0.0 {
                (self.cost / root_area as f64) as f32
            } else {
                0.0
            },
            memory_bytes,
        }
    }
}

impl Bvh {
    /// Computes the statistics (one pass over the nodes).
    pub fn stats(&self) -> BvhStats {
        let mut tally = Tally::default();
        let mut stack = Vec::new();
        if !self.nodes.is_empty() {
            stack.push((0usize, 1usize));
        }
        while let Some((i, d)) = stack.pop() {
            let node: &Node = &self.nodes[i];
            let area = node.bounds().surface_area();
            if node.is_leaf() {
                tally.leaf(node.count as usize, area, d);
            } else {
                tally.interior(area);
                stack.push((i + 1, d + 1));
                stack.push((node.right_child(), d + 1));
            }
        }
        tally.finish(
            self.nodes.len(),
            self.prim_ids.len(),
            self.bounds().surface_area(),
            self.nodes.capacity() * std::mem::size_of::<Node>()
                + self.prim_ids.capacity() * std::mem::size_of::<u32>(),
        )
    }
}
