//! The meshes' tree, [`MeshBvh`]: float or quantized child boxes, one dispatch for the
//! operations the scene runs on it.

use std::ops::ControlFlow;

use glam::Vec3;

use crate::bvh::quantized::QuantizedBvh;
use crate::bvh::wide::{BlockLeaves, Order, RayRun, Traverse, WideBvh, WideRay};
use crate::bvh::{BuildConfig, BvhStats, ValidationError};
use crate::Aabb;

/// The BVH of a mesh: 8-wide with float child boxes, or with quantized ones when the scene was built
/// with [`BuildConfig::compact`] (see [`crate::bvh::quantized`]).
#[derive(Clone, Debug)]
pub(crate) enum MeshBvh {
    Wide(WideBvh<8>),
    Quantized(QuantizedBvh),
}

impl MeshBvh {
    /// The value of padding positions (what [`Tri4::ZERO`] holds as ids).
    pub(crate) const PADDING: u32 = WideBvh::<8>::PADDING;

    /// The tree over `n` triangles whose box and centroid `prim(i)` gives
    /// ([`crate::bvh::Bvh::build_by`]).
    pub(crate) fn build_by(
        n: usize,
        prim: impl Fn(usize) -> (Aabb, Vec3) + Sync + Send,
        config: BuildConfig,
    ) -> Self {
        if config.compact {
            Self::Quantized(QuantizedBvh::build_by(n, prim, config))
        } else {
            Self::Wide(WideBvh::build_by(n, prim, config))
        }
    }

    /// Whether a triangle may sit in several leaves ([`crate::bvh::wide::WideTree`]).
    pub(crate) fn repeats(&self) -> bool {
        match self {
            Self::Wide(b) => b.repeats,
            Self::Quantized(b) => b.repeats,
        }
    }

    /// The tree's position-to-primitive map, moved out of it (the mesh keeps it in its blocks).
    pub(crate) fn take_prim_ids(&mut self) -> Vec<u32> {
        match self {
            Self::Wide(b) => b.take_prim_ids(),
            Self::Quantized(b) => b.take_prim_ids(),
        }
    }

    pub(crate) fn refit(&mut self, ids: &[u32], boxes: &[Aabb]) {
        match self {
            Self::Wide(b) => b.refit_with_ids(ids, boxes),
            Self::Quantized(b) => b.refit_with_ids(ids, boxes),
        }
    }

    pub(crate) fn stats(&self) -> BvhStats {
        match self {
            Self::Wide(b) => b.stats(),
            Self::Quantized(b) => b.stats(),
        }
    }

    /// [`WideBvh::validate`] with the ids the mesh keeps (the tree gave its own up).
    pub(crate) fn validate(&self, ids: &[u32], boxes: &[Aabb]) -> Result<(), ValidationError> {
        match self {
            Self::Wide(b) => b.validate_with_ids(ids, boxes),
            Self::Quantized(b) => b.validate_with_ids(ids, boxes),
        }
    }

    /// [`WideTree::check_counts`](crate::bvh::wide::WideTree) of the tree.
    pub(crate) fn check_counts(&self, ids: &[u32], count: usize) -> Result<(), ValidationError> {
        match self {
            Self::Wide(b) => b.check_counts(ids, count),
            Self::Quantized(b) => b.check_counts(ids, count),
        }
    }

    /// [`WideTree::block_leaves`](crate::bvh::wide::WideTree) of the tree.
    pub(crate) fn block_leaves(&self, ids: &[u32]) -> Option<BlockLeaves> {
        match self {
            Self::Wide(b) => b.block_leaves(ids),
            Self::Quantized(b) => b.block_leaves(ids),
        }
    }

    /// [`Self::validate`] for `count` triangles, each one's box given by `prim_box(prim,
    /// position)` (see [`WideTree::validate_by`](crate::bvh::wide::WideTree)).
    pub(crate) fn validate_by(
        &self,
        ids: &[u32],
        count: usize,
        prim_box: impl Fn(u32, usize) -> Aabb,
    ) -> Result<(), ValidationError> {
        match self {
            Self::Wide(b) => b.validate_by(ids, count, prim_box),
            Self::Quantized(b) => b.validate_by(ids, count, prim_box),
        }
    }
}

impl Traverse for MeshBvh {
    #[inline]
    fn traverse_prefetching<F, P>(
        &self,
        ray: &WideRay,
        order: Order,
        t_max: f32,
        leaf: F,
        leaf_data: P,
    ) -> ControlFlow<()>
    where
        F: FnMut(std::ops::Range<usize>, &mut f32) -> ControlFlow<()>,
        P: Fn(usize) -> *const u8,
    {
        match self {
            Self::Wide(b) => b.traverse_prefetching(ray, order, t_max, leaf, leaf_data),
            Self::Quantized(b) => b.traverse_prefetching(ray, order, t_max, leaf, leaf_data),
        }
    }

    #[inline]
    fn traverse_each<R: RayRun>(&self, n: usize, run: &mut R) {
        match self {
            Self::Wide(b) => b.traverse_each(n, run),
            Self::Quantized(b) => b.traverse_each(n, run),
        }
    }
}
