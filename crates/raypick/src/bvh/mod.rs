//! Bounding volume hierarchy: a binned-SAH builder over boxes and centroids, a compact depth-first
//! node layout, ordered robust traversal with a leaf closure, refit and validation.
//!
//! The BVH never knows what a primitive is. [`Bvh::build`] sees one [`Aabb`](crate::Aabb) and one centroid per
//! primitive and returns a tree plus a permutation of primitive ids ([`Bvh::prim_ids`]): leaves cover
//! contiguous ranges of that permutation, so a caller that stores its primitives in BVH order
//! (`data[i] = original[prim_ids[i]]`) touches contiguous memory in every leaf. Traversal calls a
//! closure with each reached leaf's range and lets it shrink the ray's `t_max`. The one builder
//! that must see more is [`Bvh::build_spatial`] ([`spatial`]): a spatial split cuts triangles, so
//! it takes their vertices, and its permutation may name a primitive more than once.
//!
//! | file | what |
//! |---|---|
//! | [`build`] | [`BuildConfig`] and its presets; the binned SAH builder (Wald 2007), parallel with rayon |
//! | [`node`] | [`Node`]: 32 bytes, `#[repr(C)]`, depth-first with the left child adjacent |
//! | [`traverse`] | [`BvhRay`] and ordered (near-first) traversal with a fixed-size stack |
//! | [`refit`] | recomputing node boxes after primitives move, keeping the topology |
//! | [`spatial`] | [`Bvh::build_spatial`]: spatial splits (Stich et al. 2009), a triangle cut by a plane sits in both sides' leaves |
//! | [`reinsert`] | tree optimization after the build: reinsertion (Meister & Bittner 2018) |
//! | [`validate`] | [`Bvh::validate`]: every structural invariant, as a typed [`ValidationError`] |
//! | [`collapse`] | which binary nodes become the wide tree's nodes and leaves: the SAH-optimal collapse (Ylitie et al. 2017) |
//! | [`wide`] | [`wide::WideTree`], the shell of every wide tree, and [`wide::WideBvh`]: the 4- or 8-wide BVH collapsed from the binary one, its walks (single, interleaved, packets) |
//! | [`quantized`] | [`quantized::QuantizedBvh`]: the 8-wide tree with 8-bit child boxes, 128-byte nodes (meshes use it with [`BuildConfig::compact`]) |
//! | [`stats`] | [`BvhStats`]: node and leaf counts, depth, leaf sizes, SAH cost, memory |
//!
//! ## References
//! - Wald, "On fast Construction of SAH-based Bounding Volume Hierarchies", IEEE RT 2007 (binning).
//! - Ize, "Robust BVH Ray Traversal", JCGT 2(2), 2013 (conservative slab test).
//! - Stich, Friedrich, Dietrich, "Spatial Splits in Bounding Volume Hierarchies", HPG 2009.
//! - Ylitie, Karras, Laine, "Efficient Incoherent Ray Traversal on GPUs Through Compressed Wide
//!   BVHs", HPG 2017 (the wide collapse).

pub mod build;
pub mod collapse;
pub mod node;
pub mod quantized;
pub mod refit;
pub mod reinsert;
pub mod spatial;
pub mod stats;
#[cfg(test)]
mod test_support;
pub mod traverse;
pub mod validate;
pub mod wide;

pub use build::BuildConfig;
pub use node::Node;
pub use stats::BvhStats;
pub use traverse::BvhRay;
pub use validate::ValidationError;

/// Every leaf of a wide tree starts at a multiple of this in its primitive order: the lane count of
/// the triangle blocks (`crate::simd::Tri4`), so a mesh's leaf is whole blocks.
pub const LEAF_ALIGN: usize = crate::simd::LANES;

/// The deepest a [`Bvh`] may be (root at depth 1). The builder switches to median splits, which
/// halve the node, well before this depth, so any input (at most `u32::MAX` primitives) fits; the
/// traversal stack has this many entries.
pub const MAX_DEPTH: usize = 64;

/// A binary BVH over primitives known only by their boxes.
///
/// Nodes are stored depth-first: node 0 is the root, an interior node's left child is the next node
/// and its right child is [`Node::right_child`]. Leaves hold the range
/// `first..first + count` of [`Bvh::prim_ids`].
#[derive(Clone, Debug, Default)]
pub struct Bvh {
    pub(crate) nodes: Vec<Node>,
    pub(crate) prim_ids: Vec<u32>,
}

impl Bvh {
    /// The nodes, root first (empty when the BVH holds no primitive).
    #[inline]
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The primitive permutation: position `i` in leaf order holds primitive `prim_ids()[i]`.
    #[inline]
    pub fn prim_ids(&self) -> &[u32] {
        &self.prim_ids
    }

    /// Number of primitives.
    #[inline]
    pub fn num_prims(&self) -> usize {
        self.prim_ids.len()
    }

    /// The box of the whole tree ([`crate::Aabb::EMPTY`] when empty).
    #[inline]
    pub fn bounds(&self) -> crate::Aabb {
        self.nodes
            .first()
            .map_or(crate::Aabb::EMPTY, |n| n.bounds())
    }
}
