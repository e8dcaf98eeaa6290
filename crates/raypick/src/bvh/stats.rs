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

impl Bvh {
    /// Computes the statistics (one pass over the nodes).
    pub fn stats(&self) -> BvhStats {
        let mut leaves = 0;
        let mut depth = 0;
        let mut histogram = Vec::new();
        let mut cost = 0.0f64;
        let root_area = self.bounds().surface_area() as f64;
        let mut stack = Vec::new();
        if !self.nodes.is_empty() {
            stack.push((0usize, 1usize));
        }
        while let Some((i, d)) = stack.pop() {
            let node: &Node = &self.nodes[i];
            let area = node.bounds().surface_area() as f64;
            if node.is_leaf() {
                leaves += 1;
                depth = depth.max(d);
                let n = node.count as usize;
                if histogram.len() <= n {
                    histogram.resize(n + 1, 0);
                }
                histogram[n] += 1;
                cost += area * n as f64;
            } else {
                cost += area;
                stack.push((i + 1, d + 1));
                stack.push((node.right_child(), d + 1));
            }
        }
        BvhStats {
            nodes: self.nodes.len(),
            leaves,
            depth,
            prims: self.prim_ids.len(),
            leaf_size_histogram: histogram,
            mean_leaf_size: if leaves == 0 {
                0.0
            } else {
                self.prim_ids.len() as f32 / leaves as f32
            },
            sah_cost: if root_area > 0.0 {
                (cost / root_area) as f32
            } else {
                0.0
            },
            memory_bytes: self.nodes.capacity() * std::mem::size_of::<Node>()
                + self.prim_ids.capacity() * std::mem::size_of::<u32>(),
        }
    }
}
