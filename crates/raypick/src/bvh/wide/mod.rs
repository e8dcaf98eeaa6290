//! Wide BVHs: 4- or 8-wide trees collapsed from the binary one and walked with SIMD node tests.
//!
//! A binary BVH visits several times as many nodes as a wide one, and each visit is a likely cache
//! miss; testing all children of a node at once turns that into one node per step (Wald, Benthin,
//! Boulos, "Getting Rid of Packets", IEEE RT 2008; Dammertz, Hanika, Keller, "Shallow Bounding
//! Volume Hierarchies for Fast SIMD Ray Tracing", HPG 2008). Meshes use width 8 (one AVX or two SSE
//! slab tests per node).
//!
//! ## The shell and the node layouts
//! [`WideTree<N>`] is the one shell of every wide tree: its nodes (root first, children after
//! their parents), the primitive order its leaves cover, refit, validation and statistics. The
//! node layout `N` ([`NodeLayout`]) is what differs: [`WideNode<W>`] stores float child boxes
//! ([`WideBvh<W>`]), [`QuantNode`](crate::bvh::quantized::QuantNode) 8-bit ones
//! ([`QuantizedBvh`](crate::bvh::quantized::QuantizedBvh)). Every leaf starts at a multiple of
//! [`LEAF_ALIGN`](crate::bvh::LEAF_ALIGN) in the primitive order, padded with
//! [`WideTree::PADDING`], so a caller can keep its primitives in blocks of four (a mesh's
//! `Tri4` blocks) and a leaf is whole blocks.
//!
//! ## Walks
//! Ordered and robust like the binary walk ([`crate::bvh::traverse`]): the node test is Ize's
//! conservative slab test; hit children are taken nearest first for closest-hit queries
//! ([`Order`]) and their entry distances kept, the others deferred on a stack with their data
//! prefetched; a popped entry is skipped when the leaf closure has shrunk `t_max` below it. Every
//! entry point of the 8-wide layouts runs its loop compiled for the CPU at hand through
//! `dispatch` (x86-64-v3, AVX, or the SSE2 baseline; the `force-scalar`
//! feature runs the scalar twins), with the caller's leaf closure inlined into it; the 4-wide
//! tree's node test is SSE2 (or its twin) on every CPU.
//!
//! | file | what |
//! |---|---|
//! | [`node`] | [`NodeLayout`], [`Child`] and the float layout [`WideNode`] (SoA child boxes, then per child an index and a count) |
//! | `build` | [`WideBvh::from_binary`]: the SAH-optimal collapse of the binary tree, lanes in `occlusion` order |
//! | `occlusion` | the lane order for walks that stop at the first hit: a subtree's chance to stop a ray per unit of work |
//! | `walk` | [`WideRay`], [`Order`] and the walk of one ray: a cursor and its stack, one turn at a time |
//! | `interleave` | [`RayRun`] and the walks of a batch, three at a time, taking turns to hide memory latency |
//! | `packet` | the walk of up to [`PACKET`] coherent rays with one node test for all |
//! | `order` | the nearest-first order of hit children: sorting networks over integer keys |
//! | `check` | validation and statistics of any layout |

mod build;
mod check;
mod interleave;
pub mod node;
mod occlusion;
mod order;
mod packet;
#[cfg(test)]
mod tests;
mod walk;

/// Node visits of the walks on this thread (single, interleaved and packet walks: one per node
/// test), for tests that compare how much work two ways of casting do without timing them.
#[cfg(test)]
pub(crate) mod visits {
    use std::cell::Cell;

    thread_local!(static NODES: Cell<u64> = const { Cell::new(0) });

    /// One node tested.
    pub(crate) fn node() {
        NODES.with(|n| n.set(n.get() + 1));
    }

    /// The visits counted since the last call.
    pub(crate) fn take() -> u64 {
        NODES.with(|n| n.replace(0))
    }
}

use std::ops::{ControlFlow, Range};

pub(crate) use check::BlockLeaves;
pub(crate) use interleave::traverse_nodes_each;
pub use interleave::RayRun;
pub use node::{Child, NodeLayout, WideNode};
pub use packet::PACKET;
pub(crate) use walk::traverse_nodes;

pub use walk::{Order, WideRay};

use super::ValidationError;
use crate::simd::{box4, box8_on, dispatch_to, BoxHits, BoxRay, Isa};
use crate::Aabb;

/// A wide BVH over primitives known only by their boxes, with node layout `N` (see the
/// [module docs](self)).
#[derive(Clone, Debug)]
pub struct WideTree<N> {
    pub(crate) nodes: Vec<N>,
    pub(crate) prim_ids: Vec<u32>,
    /// Distinct primitives (ids `0..num_prims`).
    pub(crate) num_prims: usize,
    /// A primitive may sit in several leaves (a tree with spatial splits,
    /// [`crate::bvh::spatial`]): every id appears at least once in the order, and a leaf's box
    /// meets its primitives' boxes rather than holding them.
    pub(crate) repeats: bool,
}

impl<N> Default for WideTree<N> {
    fn default() -> Self {
        Self {
            nodes: Vec::new(),
            prim_ids: Vec::new(),
            num_prims: 0,
            repeats: false,
        }
    }
}

/// A `W`-wide BVH with float child boxes, `W` = 4 or 8.
pub type WideBvh<const W: usize> = WideTree<WideNode<W>>;

impl<N: NodeLayout> WideTree<N> {
    /// The value of padding positions in [`WideTree::prim_ids`] (no leaf covers them).
    pub const PADDING: u32 = u32::MAX;

    /// The nodes, root first (empty when the tree holds no primitive).
    #[inline]
    pub fn nodes(&self) -> &[N] {
        &self.nodes
    }

    /// The primitive permutation in leaf order, [`WideTree::PADDING`] between leaves so that each
    /// leaf starts at a multiple of [`LEAF_ALIGN`](crate::bvh::LEAF_ALIGN).
    #[inline]
    pub fn prim_ids(&self) -> &[u32] {
        &self.prim_ids
    }

    /// Number of primitives.
    #[inline]
    pub fn num_prims(&self) -> usize {
        self.num_prims
    }

    /// The box of the whole tree ([`Aabb::EMPTY`] when empty).
    pub fn bounds(&self) -> Aabb {
        self.nodes.first().map_or(Aabb::EMPTY, N::bounds)
    }

    /// Visits, near child first, every leaf whose box the ray reaches within `[ray.t_min, t_max]`,
    /// calling `leaf(range, &mut t_max)` with the leaf's positions in [`WideTree::prim_ids`] (the
    /// range starts at a multiple of [`LEAF_ALIGN`](crate::bvh::LEAF_ALIGN)). The closure may lower
    /// `t_max` and returns [`ControlFlow::Break`] to stop; `traverse` returns what stopped it. Rays
    /// that are not valid reach nothing.
    ///
    /// ```
    /// use std::ops::ControlFlow;
    /// use raypick::{bvh::{wide::{WideBvh, WideRay}, BuildConfig}, glam::Vec3, Aabb, Ray};
    /// let boxes: Vec<Aabb> = (0..20)
    ///     .map(|i| Aabb::new(Vec3::new(i as f32, 0.0, 0.0), Vec3::new(i as f32 + 0.5, 1.0, 1.0)))
    ///     .collect();
    /// let centroids: Vec<Vec3> = boxes.iter().map(Aabb::center).collect();
    /// let bvh = WideBvh::<8>::build(&boxes, &centroids, BuildConfig::default());
    /// let ray = Ray::new(Vec3::new(-1.0, 0.5, 0.5), Vec3::X);
    /// let mut reached = Vec::new();
    /// let _ = bvh.traverse(&WideRay::new(&ray), ray.t_max, |range, _t_max| {
    ///     reached.extend(range.map(|i| bvh.prim_ids()[i]));
    ///     ControlFlow::Continue(())
    /// });
    /// reached.sort();
    /// assert_eq!(reached, (0..20).collect::<Vec<u32>>());
    /// ```
    #[inline]
    pub fn traverse<F>(&self, ray: &WideRay, t_max: f32, leaf: F) -> ControlFlow<()>
    where
        F: FnMut(Range<usize>, &mut f32) -> ControlFlow<()>,
        Self: Traverse,
    {
        self.traverse_prefetching(ray, Order::NearestFirst, t_max, leaf, |_| std::ptr::null())
    }

    /// Recomputes every child box bottom-up from `boxes` (indexed by primitive id), keeping the
    /// topology. Children come after their parents, so one reverse pass suffices.
    ///
    /// # Panics
    /// When `boxes.len()` differs from the number of primitives.
    pub fn refit(&mut self, boxes: &[Aabb]) {
        let ids = std::mem::take(&mut self.prim_ids);
        self.refit_with_ids(&ids, boxes);
        self.prim_ids = ids;
    }

    /// [`Self::refit`] with the position-to-primitive map `ids` kept outside the tree (see
    /// [`Self::take_prim_ids`]): each node's exact lane boxes, bottom-up, stored by the layout
    /// ([`NodeLayout::set_lanes`]).
    ///
    /// # Panics
    /// When `boxes.len()` differs from the number of primitives.
    pub(crate) fn refit_with_ids(&mut self, ids: &[u32], boxes: &[Aabb]) {
        assert_eq!(boxes.len(), self.num_prims, "refit: one box per primitive");
        let mut exact = vec![Aabb::EMPTY; self.nodes.len()];
        let mut lanes = vec![Aabb::EMPTY; N::WIDTH];
        for i in (0..self.nodes.len()).rev() {
            let node = &self.nodes[i];
            for (lane, bounds) in lanes.iter_mut().enumerate() {
                let child = node.child(lane);
                *bounds = if !node.holds(lane) {
                    Aabb::EMPTY
                } else if child.is_leaf() {
                    ids[child.range()]
                        .iter()
                        .fold(Aabb::EMPTY, |b, &p| b.union(boxes[p as usize]))
                } else {
                    exact[child.index as usize]
                };
            }
            exact[i] = lanes.iter().fold(Aabb::EMPTY, |b, &l| b.union(l));
            self.nodes[i].set_lanes(&lanes);
        }
    }

    /// Checks every structural invariant against the primitives' current `boxes` (indexed by
    /// primitive id): each primitive id once in `prim_ids` and every other position padding;
    /// interior children after their parent and reached once; no deeper than
    /// [`MAX_DEPTH`](crate::bvh::MAX_DEPTH); leaves non-empty, starting at a multiple of
    /// [`LEAF_ALIGN`](crate::bvh::LEAF_ALIGN), covering each id's position once; the layout's rules
    /// for empty lanes; child boxes holding their node's children and leaf boxes their primitives'
    /// boxes.
    pub fn validate(&self, boxes: &[Aabb]) -> Result<(), ValidationError> {
        self.validate_with_ids(&self.prim_ids, boxes)
    }

    /// Moves [`Self::prim_ids`] out of the tree, leaving it empty, for an owner that keeps each
    /// position's id with the primitive it stores there (a mesh's triangle blocks): one copy of
    /// the ids instead of two. Such an owner refits with [`Self::refit_with_ids`] and validates
    /// with [`Self::validate_with_ids`], giving both its ids.
    pub(crate) fn take_prim_ids(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.prim_ids)
    }
}

/// The walks of a tree: each layout's entry points, compiled for the CPU at hand.
pub trait Traverse {
    /// Walks `ray` through the tree in `order`, calling `leaf` for each leaf it reaches (as
    /// [`WideTree::traverse`] does), and prefetching the primitives of a leaf that is hit but
    /// deferred behind a nearer child, so they are in cache when the leaf's turn comes:
    /// `leaf_data(first)` is where the caller keeps the primitives of the leaf starting at
    /// position `first` (any address, never read: a prefetch is a hint; `std::ptr::null()` when
    /// there is nothing to prefetch). It is also called for interior children, whose answer is
    /// discarded, so it must be cheap and must not dereference anything.
    fn traverse_prefetching<F, P>(
        &self,
        ray: &WideRay,
        order: Order,
        t_max: f32,
        leaf: F,
        leaf_data: P,
    ) -> ControlFlow<()>
    where
        F: FnMut(Range<usize>, &mut f32) -> ControlFlow<()>,
        P: Fn(usize) -> *const u8;

    /// [`Traverse::traverse_prefetching`] for rays `0..n` of `run` ([`RayRun`]), in the run's
    /// order. One call for a run of rays: an implementation may compile the whole loop for the
    /// CPU at hand and interleave the walks, so that the dispatch, the call into the compiled walk
    /// and its set-up are paid once per run and the walks' waits for memory overlap.
    #[inline]
    fn traverse_each<R: RayRun>(&self, n: usize, run: &mut R) {
        for i in 0..n {
            let (ray, t_max, mut state) = run.start(i);
            let _ = self.traverse_prefetching(
                &ray,
                R::ORDER,
                t_max,
                #[inline(always)]
                |range, t_max| run.leaf(&mut state, range, t_max),
                |first| run.leaf_data(first),
            );
            run.finish(i, state);
        }
    }
}

/// The box test of a node layout for the instruction set `isa` (a constant in each copy that
/// [`dispatch_to`] compiles): what the shared walks need to be compiled for a layout. Eight lanes
/// of answers whatever the width (a 4-wide node's upper lanes are never hit), so one walk serves
/// every layout.
pub(crate) trait NodeTest: NodeLayout {
    /// Which of the node's children `ray` reaches within `[ray.t_min, t_max]`, and where it
    /// enters them (conservative: Ize's padded slab test).
    fn test(&self, isa: Isa, ray: &BoxRay, t_max: f32) -> BoxHits<8>;
}

/// Four lanes in one SSE pass on every x86-64 CPU (or the twin).
impl NodeTest for WideNode<4> {
    #[inline(always)]
    fn test(&self, _isa: Isa, ray: &BoxRay, t_max: f32) -> BoxHits<8> {
        let hits = box4(&self.bounds, ray, t_max);
        let mut t_near = [0.0; 8];
        t_near[..4].copy_from_slice(&hits.t_near);
        BoxHits {
            mask: hits.mask,
            t_near,
        }
    }
}

impl NodeTest for WideNode<8> {
    #[inline(always)]
    fn test(&self, isa: Isa, ray: &BoxRay, t_max: f32) -> BoxHits<8> {
        box8_on(isa, &self.bounds, ray, t_max)
    }
}

impl<N: NodeTest> Traverse for WideTree<N> {
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
        F: FnMut(Range<usize>, &mut f32) -> ControlFlow<()>,
        P: Fn(usize) -> *const u8,
    {
        self.traverse_on(Isa::detected(), ray, order, t_max, leaf, leaf_data)
    }

    #[inline]
    fn traverse_each<R: RayRun>(&self, n: usize, run: &mut R) {
        self.traverse_each_on(Isa::detected(), n, run);
    }
}

#[allow(
    private_bounds,
    reason = "crate-internal entry points, for the tests and the public trait"
)]
impl<N: NodeTest> WideTree<N> {
    /// [`Traverse::traverse_prefetching`] compiled for `isa` ([`dispatch_to`]).
    #[inline(always)]
    pub(crate) fn traverse_on<F, P>(
        &self,
        isa: Isa,
        ray: &WideRay,
        order: Order,
        t_max: f32,
        leaf: F,
        leaf_data: P,
    ) -> ControlFlow<()>
    where
        F: FnMut(Range<usize>, &mut f32) -> ControlFlow<()>,
        P: Fn(usize) -> *const u8,
    {
        dispatch_to(
            isa,
            #[inline(always)]
            |isa| {
                traverse_nodes(
                    &self.nodes,
                    ray,
                    order,
                    t_max,
                    leaf,
                    leaf_data,
                    #[inline(always)]
                    |node: &N, r, t| node.test(isa, r, t),
                )
            },
        )
    }

    /// [`Traverse::traverse_each`] compiled for `isa` ([`dispatch_to`]).
    #[inline(always)]
    pub(crate) fn traverse_each_on<R: RayRun>(&self, isa: Isa, n: usize, run: &mut R) {
        dispatch_to(
            isa,
            #[inline(always)]
            |isa| {
                traverse_nodes_each(
                    &self.nodes,
                    n,
                    run,
                    #[inline(always)]
                    |node: &N, r, t| node.test(isa, r, t),
                )
            },
        );
    }
}
