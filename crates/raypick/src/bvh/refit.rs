//! Refit: recompute every node box bottom-up after primitives moved, keeping the topology.
//!
//! The depth-first layout puts every child after its parent, so one reverse pass over the nodes sees
//! children before parents. Refit is `O(nodes)` and keeps the tree valid (see [`Bvh::validate`]);
//! its quality degrades when primitives move far relative to each other, and a rebuild restores it.

use super::Bvh;
use crate::Aabb;

impl Bvh {
    /// Recomputes all node boxes from `boxes` (indexed by primitive id, as given to
    /// [`Bvh::build`]).
    ///
    /// # Panics
    /// When `boxes.len()` differs from the number of primitives the BVH was built with.
    pub fn refit(&mut self, boxes: &[Aabb]) {
        assert_eq!(
            boxes.len(),
            self.prim_ids.len(),
            "Bvh::refit: one box per primitive"
        );
        for i in (0..self.nodes.len()).rev() {
            let node = self.nodes[i];
            let bounds = if node.is_leaf() {
                node.prim_range().fold(Aabb::EMPTY, |b, p| {
                    b.union(boxes[self.prim_ids[p] as usize])
                })
            } else {
                self.nodes[i + 1]
                    .bounds()
                    .union(self.nodes[node.right_child()].bounds())
            };
            self.nodes[i].set_bounds(bounds);
        }
    }
}
