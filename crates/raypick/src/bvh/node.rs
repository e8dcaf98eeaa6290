//! [`Node`]: the 32-byte BVH node.
//!
//! `#[repr(C, align(32))]` and exactly 32 bytes: the box as two `[f32; 3]` corners, the child or
//! first-primitive index, and the primitive count (0 for interior nodes). The alignment keeps every node
//! inside one cache line (two per 64-byte line), so a node test costs at most one miss. The layout is
//! depth-first: an interior node's left child is the node right after it, so only the right child's
//! index is stored.

use glam::Vec3;

use crate::Aabb;

/// One BVH node: a box, and either two children or a leaf's primitive range. Plain data with
/// no padding (`Pod`): a scene file stores nodes in this byte order, so a load reads them
/// straight into place.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(32))]
pub struct Node {
    /// Smallest corner of the box.
    pub min: [f32; 3],
    /// For an interior node, the index of the right child (the left child is the next node); for a
    /// leaf, the first position of its range in [`super::Bvh::prim_ids`].
    pub index: u32,
    /// Largest corner of the box.
    pub max: [f32; 3],
    /// Number of primitives of a leaf; 0 marks an interior node.
    pub count: u32,
}

const _: () = assert!(std::mem::size_of::<Node>() == 32);
const _: () = assert!(std::mem::align_of::<Node>() == 32);

impl Node {
    /// A leaf over positions `first..first + count` (`count > 0`).
    #[inline]
    pub fn leaf(bounds: Aabb, first: u32, count: u32) -> Self {
        debug_assert!(count > 0);
        Self {
            min: bounds.min.to_array(),
            index: first,
            max: bounds.max.to_array(),
            count,
        }
    }

    /// An interior node whose right child is node `right`.
    #[inline]
    pub fn interior(bounds: Aabb, right: u32) -> Self {
        Self {
            min: bounds.min.to_array(),
            index: right,
            max: bounds.max.to_array(),
            count: 0,
        }
    }

    /// `true` for a leaf.
    #[inline]
    pub fn is_leaf(&self) -> bool {
        self.count != 0
    }

    /// The node's box.
    #[inline]
    pub fn bounds(&self) -> Aabb {
        Aabb::new(Vec3::from_array(self.min), Vec3::from_array(self.max))
    }

    /// Sets the node's box.
    #[inline]
    pub fn set_bounds(&mut self, bounds: Aabb) {
        self.min = bounds.min.to_array();
        self.max = bounds.max.to_array();
    }

    /// The right child of an interior node (the left one is `self_index + 1`).
    #[inline]
    pub fn right_child(&self) -> usize {
        self.index as usize
    }

    /// The leaf's range of positions in [`super::Bvh::prim_ids`] (empty for interior nodes).
    #[inline]
    pub fn prim_range(&self) -> std::ops::Range<usize> {
        if self.is_leaf() {
            self.index as usize..self.index as usize + self.count as usize
        } else {
            0..0
        }
    }
}
