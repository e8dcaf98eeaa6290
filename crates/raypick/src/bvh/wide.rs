//! [`WideBvh`]: a 4- or 8-wide BVH collapsed from the binary one, traversed with SIMD box tests.
//!
//! A binary BVH visits several times as many nodes as a wide one, and each visit is a likely cache
//! miss; testing all children of a node at once turns that into one node (128 bytes at width 4, 256
//! at width 8) per step (Wald, Benthin, Boulos, "Getting Rid of Packets", IEEE RT 2008; Dammertz,
//! Hanika, Keller, "Shallow Bounding Volume Hierarchies for Fast SIMD Ray Tracing", HPG 2008).
//! Meshes use width 8: on the shared bunny workload it cast 10–40% more rays per second than width 4
//! (BENCHMARKS.md).
//!
//! ## Construction
//! [`WideBvh::from_binary`] collapses the binary tree with the collapse that minimizes the wide
//! tree's SAH cost ([`super::collapse`]: dynamic programming over the binary nodes, Ylitie, Karras,
//! Laine, HPG 2017): which binary nodes become wide nodes, which subtrees share a node's lanes,
//! and which neighbouring small leaves merge into one (up to `max_leaf_size` primitives). The
//! greedy collapse it replaced (open the child with the largest box until `W` lanes are used)
//! left the lower levels two or three children wide: on the bunny 4,001 nodes for 10,631 leaves,
//! now 2,097; incoherent rays 3–5 % fewer instructions (BENCHMARKS.md). A node's lanes are
//! ordered by decreasing box area (see [`WideRay::in_node_order`]). The builder therefore still
//! sees only boxes and centroids ([`super::Bvh::build`]).
//!
//! ## Layout
//! [`WideNode`]: the `W` child boxes in structure-of-arrays rows (`min_x, max_x, min_y, max_y, min_z,
//! max_z`), then per child an index and a count: `count > 0` is a leaf over positions
//! `index..index + count` of [`WideBvh::prim_ids`], `count == 0` an interior child at node `index`
//! (always after its parent: depth-first), and `index == 0, count == 0` an empty lane whose box is
//! [`Aabb::EMPTY`] (never hit). Every leaf starts at a multiple of [`LEAF_ALIGN`] in `prim_ids`, padded
//! with [`WideBvh::PADDING`], so callers can keep their primitives in blocks of four (the mesh's
//! [`Tri4`](crate::simd::Tri4) blocks) and a leaf is whole blocks.
//!
//! ## Traversal
//! Ordered and robust like the binary one ([`super::traverse`]): [`crate::simd::box4`] /
//! [`crate::simd::box8`] are Ize's conservative slab test, hit children are pushed farthest first with
//! their entry distances (and their nodes prefetched), and a popped entry is skipped when the leaf
//! closure has shrunk `t_max` below it. A walk that needs any leaf or every leaf rather than the
//! nearest first skips the sort ([`WideRay::in_node_order`]). Width 8 runs the whole loop compiled
//! for AVX when the CPU has it (runtime detection), else two SSE halves per node; the
//! `force-scalar` feature uses the scalar twin ([`crate::simd::box_scalar`]).
//! [`Traverse::traverse_each`] runs the walks of a run of rays in one loop compiled with the walk:
//! the CPU check, the call and the walk's set-up (a prologue, a stack probe, spilled registers,
//! about 150 of the 410 instructions of a ray that misses the root) are paid once per run.
//! It also interleaves the walks three at a time, one turn of each in turn (`Cursor::step`: a node
//! visit or a leaf test): an incoherent walk mostly waits, for its next node or leaf (a likely
//! cache miss) and along the chain node test → chosen child → next node, and the other walks'
//! turns fill that time (the "software pipelining" of independent rays that a GPU gets from its
//! warps). Two walks against the one-walk loop (paired runs, BENCHMARKS.md): the bunny's
//! incoherent rays 1.12× (closest hit) and 1.21× (any hit) as fast; the conference room's, whose
//! walks are short and miss the cache less, 0.93× and 0.97× (6 % more instructions per ray).
//! Three walks against two, once every child waited for a turn (`Cursor::next_turn`): bunny
//! 1.08–1.09× (closest) and 1.07× (any hit), conference 0.98× (1.5 % more instructions); before
//! that, three were within the noise of two.
//!
//! ## Packets
//! [`WideBvh::traverse_packet`] walks up to [`PACKET`] coherent rays together (a camera's
//! neighbouring pixels): one node test for all of them, [`crate::simd::packet_box8`], conservative
//! bit for bit for each ray ([`crate::simd::PacketBoxRay`]), so each ray reaches at least the leaves
//! its own walk reaches, and the leaf closure meets each ray on its own. The per-node work (load,
//! test, ordering, stack) is paid once per group instead of once per ray (Wald, Slusallek, Benthin,
//! Wagner, "Interactive Rendering with Coherent Ray Tracing", EG 2001; the interval test in the
//! spirit of Reshetov, Soupikov, Hurley, "Multi-Level Ray Tracing Algorithm", SIGGRAPH 2005).

use std::ops::{ControlFlow, Range};

use arrayvec::ArrayVec;
use glam::Vec3;

use super::collapse::{subtree_prims, CollapseCosts, Lane, Plan};
use super::stats::wide_stats;
use super::traverse::prune_bound;
use super::validate::{validate_wide, WideLane, WideTreeView};
use super::{Bvh, BvhStats, ValidationError, MAX_DEPTH};
use crate::simd::{
    box4, box8, lanes_max, lanes_reaching, packet_box8, prefetch, prefetch_lines, BoxHits, BoxRay,
    PacketBoxRay,
};

/// Every leaf starts at a multiple of this in [`WideBvh::prim_ids`]: the lane count of the
/// triangle blocks ([`crate::simd::Tri4`]).
pub const LEAF_ALIGN: usize = crate::simd::LANES;
use crate::{Aabb, Ray};

/// One node of a [`WideBvh`]: four child boxes and their references. 128 bytes, two cache lines.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(64))]
pub struct WideNode<const W: usize> {
    /// Rows `min_x, max_x, min_y, max_y, min_z, max_z`, one lane per child.
    pub bounds: [[f32; W]; 6],
    /// Per child: node index (interior), first position in `prim_ids` (leaf), or 0 (empty lane).
    pub index: [u32; W],
    /// Per child: primitive count of a leaf, 0 for interior children and empty lanes.
    pub count: [u32; W],
}

const _: () = assert!(std::mem::size_of::<WideNode<4>>() == 128);
const _: () = assert!(std::mem::size_of::<WideNode<8>>() == 256);

impl<const W: usize> WideNode<W> {
    /// A node with four empty lanes.
    pub const EMPTY: Self = Self {
        bounds: [
            [f32::INFINITY; W],
            [f32::NEG_INFINITY; W],
            [f32::INFINITY; W],
            [f32::NEG_INFINITY; W],
            [f32::INFINITY; W],
            [f32::NEG_INFINITY; W],
        ],
        index: [0; W],
        count: [0; W],
    };

    /// The box of child `lane` ([`Aabb::EMPTY`] for an empty lane).
    #[inline]
    pub fn child_bounds(&self, lane: usize) -> Aabb {
        let b = &self.bounds;
        Aabb::new(
            Vec3::new(b[0][lane], b[2][lane], b[4][lane]),
            Vec3::new(b[1][lane], b[3][lane], b[5][lane]),
        )
    }

    /// Sets the box of child `lane`.
    #[inline]
    pub fn set_child_bounds(&mut self, lane: usize, bounds: Aabb) {
        for axis in 0..3 {
            self.bounds[2 * axis][lane] = bounds.min[axis];
            self.bounds[2 * axis + 1][lane] = bounds.max[axis];
        }
    }

    /// The union of the four child boxes.
    pub fn bounds(&self) -> Aabb {
        (0..W).fold(Aabb::EMPTY, |b, lane| b.union(self.child_bounds(lane)))
    }

    /// `true` when child `lane` is a leaf.
    #[inline]
    pub fn is_leaf(&self, lane: usize) -> bool {
        self.count[lane] != 0
    }

    /// `true` when child `lane` is an interior node.
    #[inline]
    pub fn is_interior(&self, lane: usize) -> bool {
        self.count[lane] == 0 && self.index[lane] != 0
    }
}

/// A ray prepared for [`WideBvh::traverse`] (computed once per ray).
#[derive(Clone, Copy, Debug)]
pub struct WideRay {
    boxes: BoxRay,
    valid: bool,
    /// Whether hit children are taken nearest first ([`WideRay::in_node_order`]).
    ordered: bool,
}

impl WideRay {
    /// Prepares `ray` (its `t_max` is passed to [`WideBvh::traverse`] separately, since it shrinks).
    #[inline]
    pub fn new(ray: &Ray) -> Self {
        Self {
            boxes: BoxRay::new(ray.origin.to_array(), ray.dir.to_array(), ray.t_min),
            valid: ray.is_valid(),
            ordered: true,
        }
    }

    /// This ray for a walk that needs every leaf it reaches, or any one of them (any-hit queries,
    /// all hits, counts), not the nearest first: where two or more children of a node are hit,
    /// the walk goes on with the first in the node's lane order and defers the others unsorted.
    /// The leaves reached are the same; only their order changes. A node's lanes are ordered by
    /// decreasing box area
    /// ([`WideBvh::from_binary`]): the first child taken is the one most rays enter, where an
    /// any-hit walk most likely finds an occluder, and consecutive rays tend to take the same
    /// first path and find its nodes in cache. On the shared conference workload an incoherent
    /// any-hit ray ran 1.22× as fast as with sorting (15 % fewer instructions, 2.5 instead of 3.9
    /// simulated L1 misses), on the bunny's 1.08× (BENCHMARKS.md); ordering the lanes by area
    /// rather than the binary tree's left-to-right order saved another 2–4 %. Until the sixteenth
    /// session a node with two hit children still sent the walk to the nearer one; the larger
    /// one first cut the conference room's any-hit instructions by 8 % (0.72 instead of 1.95
    /// simulated L1 misses per ray), and both meshes' any-hit rays ran 1.05× as fast (paired
    /// runs).
    #[inline]
    pub fn in_node_order(mut self) -> Self {
        self.ordered = false;
        self
    }
}

/// A `W`-wide BVH, `W` = 4 or 8 (see the [module docs](self)).
#[derive(Clone, Debug, Default)]
pub struct WideBvh<const W: usize> {
    pub(crate) nodes: Vec<WideNode<W>>,
    pub(crate) prim_ids: Vec<u32>,
    num_prims: usize,
}

/// Entries of the traversal stack: every node visit pops one entry and pushes at most four, and the
/// tree is at most [`MAX_DEPTH`] nodes deep.
const fn stack_size(width: usize) -> usize {
    (width - 1) * MAX_DEPTH + width
}

/// Child `lane` of a wide node: `(index, count)` as in [`WideNode`] (`count > 0`: a leaf over
/// positions `index..index + count`; `count == 0`: interior node `index`, or an empty lane, which the
/// node test never reports).
pub(crate) trait WideChildren {
    fn child(&self, lane: usize) -> (u32, u32);
}

impl<const W: usize> WideChildren for WideNode<W> {
    #[inline(always)]
    fn child(&self, lane: usize) -> (u32, u32) {
        (self.index[lane], self.count[lane])
    }
}

/// The stack of one walk: deferred children `(index, count, entry distance)`. An `ArrayVec` rather
/// than an array: a zeroed 2.4 kB array per ray cost a fifth of the time of a primary ray.
type WalkStack = ArrayVec<(u32, u32, f32), { stack_size(8) }>;

/// Where one walk stands between two node visits: the node it tests next and its bound. Small and
/// plain, so that a single walk ([`traverse_nodes`]) keeps it in registers; the deferred children
/// are a [`WalkStack`] beside it.
#[derive(Clone, Copy, Debug)]
struct Cursor {
    /// The node to test next, or the first position of the leaf to test next when `leaf > 0`.
    index: usize,
    /// Triangle count of the leaf to test next (asked for from memory by the step that chose it),
    /// 0 for a node.
    leaf: u32,
    t_max: f32,
    /// [`prune_bound`] of `t_max`: entry distances beyond it cannot matter.
    prune: f32,
}

/// One of the walks that [`traverse_nodes_each`] interleaves.
struct Walk {
    ray: WideRay,
    at: Cursor,
    stack: WalkStack,
}

/// What a [`Cursor::step`] left.
enum Walked {
    /// The walk goes on at `index`.
    Going,
    /// The walk is over: `Continue` when every leaf it reaches was seen, `Break` when the leaf
    /// closure stopped it.
    Over(ControlFlow<()>),
}

impl Cursor {
    /// A walk of `ray` from the root with bound `t_max`, or `None` when it reaches nothing (an
    /// invalid ray, an empty tree). The caller empties the walk's stack.
    #[inline(always)]
    fn start<N>(nodes: &[N], ray: &WideRay, t_max: f32) -> Option<Self> {
        if !ray.valid || nodes.is_empty() {
            return None;
        }
        let mut at = Self {
            index: 0,
            leaf: 0,
            t_max,
            prune: prune_bound(t_max),
        };
        at.go_to(nodes, 0);
        Some(at)
    }

    /// One turn of `ray`'s walk: tests the leaf chosen by the last turn, or node `index` with
    /// `boxes`, going on with the nearest hit child (`nearest_first`; else the first in the node's
    /// order) and deferring the others to `stack`, or with the nearest deferred child when no child
    /// is hit. The body of the traversal loop, shared by the single walk and the interleaved ones;
    /// its arguments are the pieces of a walk and of its tree as those two loops hold them.
    ///
    /// `next_turn`: whatever the walk goes on with, node or leaf, is only asked for from memory
    /// and tested at the walk's next turn ([`Cursor::next_turn`]), while the other walks' turns
    /// run. Else a leaf is tested at once and the walk goes on to the next node (a lone walk has
    /// nothing to overlap the wait with).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn step<N, const W: usize, F, P, B>(
        &mut self,
        ray: &WideRay,
        nearest_first: bool,
        next_turn: bool,
        stack: &mut WalkStack,
        nodes: &[N],
        mut leaf: F,
        leaf_data: &P,
        boxes: &B,
    ) -> Walked
    where
        F: FnMut(Range<usize>, &mut f32) -> ControlFlow<()>,
        P: Fn(usize) -> *const u8,
        N: WideChildren,
        B: Fn(&N, &BoxRay, f32) -> BoxHits<W>,
    {
        debug_assert!(stack_size(W) <= stack.capacity());
        // Puts child `lane` of `node` on the stack and asks for its data (node or leaf) early.
        let defer = |stack: &mut WalkStack, node: &N, lane: usize, t_near: f32| {
            let (child, count) = node.child(lane);
            prefetch_child(nodes, child, count, leaf_data);
            stack.push((child, count, t_near));
        };
        if self.leaf != 0 {
            // The leaf chosen by the last turn, whose data was asked for then.
            let count = std::mem::take(&mut self.leaf);
            if self.test_leaf(self.index, count, &mut leaf).is_break() {
                return Walked::Over(ControlFlow::Break(()));
            }
            return self.pop(next_turn, stack, nodes, &mut leaf, leaf_data);
        }
        let node = node_at(nodes, self.index);
        let hits = boxes(node, &ray.boxes, self.prune);
        let mut mask = hits.mask;
        let rest = mask & mask.wrapping_sub(1);
        if rest & rest.wrapping_sub(1) == 0 {
            // No, one or two hit children, without a branch on how many: both pushed, farther
            // first (a lone hit twice, no hit a lane that is dropped again), the stack cut to
            // the hits, and the top popped as after a leaf. Branching on "any child hit" first,
            // and on one or two after it, mispredicted 1.16 and 2.1 times per bunny ray
            // (callgrind); this way the pop's branches decide, whose answers are the same as
            // before whenever a child was hit (not empty, not pruned): bunny incoherent rays
            // 1.03–1.05× as fast (closest and any hit), conference 1.01× and 0.99×
            // (BENCHMARKS.md).
            let (near, far) = nearer_of_two(mask, &hits.t_near, nearest_first);
            let len = stack.len();
            defer(stack, node, far, hits.t_near[far]);
            let (child, count) = node.child(near);
            stack.push((child, count, hits.t_near[near]));
            // SAFETY: `len + count_ones <= len + 2 = stack.len()`, so the length only drops to
            // entries that were pushed (and `(u32, u32, f32)` needs no drop). `truncate` branched
            // on whether it drops anything (0.45 mispredictions per any-hit bunny ray).
            unsafe { stack.set_len(len + mask.count_ones() as usize) };
            return self.pop(next_turn, stack, nodes, &mut leaf, leaf_data);
        }
        let first_lane = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        // Three or more hits: the child to go on with is the nearest (the others deferred,
        // farthest first). A walk in node order takes the first and defers the others as
        // they come.
        let next_lane = if !nearest_first {
            let mut rest = mask;
            while rest != 0 {
                let lane = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                defer(stack, node, lane, hits.t_near[lane]);
            }
            first_lane
        } else if (mask & (mask - 1)).count_ones() <= 1 {
            // Three or four hits (nine in ten of the nodes with three or more on the
            // conference room), ordered without a branch on the data: a sorting network over
            // four keys, farthest first, a missing fourth key 0 (sorted last). The farther
            // ones are deferred, farthest first, and the nearest (key `n - 1`) taken at once
            // (not pushed and popped again: 1–2 % fewer instructions per closest-hit ray);
            // with three hits the third deferred is the nearest, dropped again.
            let keys = far_first4::<W>(mask | 1 << first_lane, &hits.t_near);
            let n = mask.count_ones() as usize + 1;
            for &key in &keys[..3] {
                let lane = key_lane::<W>(key);
                defer(stack, node, lane, hits.t_near[lane]);
            }
            stack.truncate(stack.len() - (4 - n));
            key_lane::<W>(keys[n - 1])
        } else {
            // Defer all but the nearest, farthest first, and take the nearest at once.
            let keys = far_first(mask | 1 << first_lane, &hits.t_near);
            let n = mask.count_ones() as usize + 1;
            for &key in &keys[..n - 1] {
                let lane = key_lane::<W>(key);
                defer(stack, node, lane, hits.t_near[lane]);
            }
            key_lane::<W>(keys[n - 1])
        };
        let (child, count) = node.child(next_lane);
        if next_turn {
            return self.next_turn(nodes, child, count, leaf_data);
        }
        if count == 0 {
            return self.go_to(nodes, child);
        }
        if self.test_leaf(child as usize, count, &mut leaf).is_break() {
            return Walked::Over(ControlFlow::Break(()));
        }
        self.pop(next_turn, stack, nodes, &mut leaf, leaf_data)
    }

    /// Sets child `(child, count)`, node or leaf, as what the walk's next turn tests, and asks for
    /// its data ([`LEAF_LINES`]: a whole leaf, or a node and a bit) from the address chosen
    /// without a branch. The walk's one branch on leaf or node is then the next turn's: choosing
    /// here and again there mispredicted twice for one unpredictable answer (bunny and conference
    /// incoherent rays 1.02–1.03× as fast as with a leaf tested at once near the root and a
    /// deeper one kept for the next turn, BENCHMARKS.md).
    #[inline(always)]
    fn next_turn<N, P: Fn(usize) -> *const u8>(
        &mut self,
        nodes: &[N],
        child: u32,
        count: u32,
        leaf_data: &P,
    ) -> Walked {
        self.index = child as usize;
        self.leaf = count;
        // Both addresses are computed whichever the child is (`wrapping_add`: the unused one
        // stays defined; a prefetch never faults).
        let node = nodes.as_ptr().wrapping_add(child as usize).cast::<u8>();
        let leaf = leaf_data(child as usize);
        prefetch_lines::<LEAF_LINES>(std::hint::select_unpredictable(count == 0, node, leaf));
        Walked::Going
    }

    /// Hands the leaf of `count` triangles at position `first` to `leaf`, which may shrink
    /// `t_max`, and lowers `prune` to match (unless `leaf` stopped the walk). The three places a
    /// walk tests a leaf: a deferred one, the next child, a popped one.
    #[inline(always)]
    fn test_leaf<F>(&mut self, first: usize, count: u32, leaf: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Range<usize>, &mut f32) -> ControlFlow<()>,
    {
        leaf(first..first + count as usize, &mut self.t_max)?;
        self.prune = prune_bound(self.t_max);
        ControlFlow::Continue(())
    }

    /// Pops the nearest deferred child the (possibly shrunk) t_max still reaches: kept for the
    /// next turn (`next_turn`, see [`Cursor::step`]), or a node gone on to and leaves tested right
    /// here (their data was asked for when they were deferred).
    #[inline(always)]
    fn pop<N, F, P>(
        &mut self,
        next_turn: bool,
        stack: &mut WalkStack,
        nodes: &[N],
        leaf: &mut F,
        leaf_data: &P,
    ) -> Walked
    where
        F: FnMut(Range<usize>, &mut f32) -> ControlFlow<()>,
        P: Fn(usize) -> *const u8,
    {
        loop {
            let Some((next, count, t_near)) = stack.pop() else {
                return Walked::Over(ControlFlow::Continue(()));
            };
            if t_near > self.prune {
                continue;
            }
            if next_turn {
                return self.next_turn(nodes, next, count, leaf_data);
            }
            if count == 0 {
                return self.go_to(nodes, next);
            }
            if self.test_leaf(next as usize, count, leaf).is_break() {
                return Walked::Over(ControlFlow::Break(()));
            }
        }
    }

    /// Goes on at node `index`, asking for all its lines at once: the child references (the last
    /// line) are read only after the box test, and would otherwise be a second miss in a row.
    #[inline(always)]
    fn go_to<N>(&mut self, nodes: &[N], index: u32) -> Walked {
        self.index = index as usize;
        prefetch(std::slice::from_ref(node_at(nodes, self.index)));
        Walked::Going
    }
}

/// The traversal loop over `nodes` (root first, children after their parents) of any wide node type,
/// with the node test `boxes` (float rows, quantized rows, SIMD or twin): inlined into each entry
/// point ([`Traverse`]).
#[inline(always)]
pub(crate) fn traverse_nodes<N, const W: usize, F, P, B>(
    nodes: &[N],
    ray: &WideRay,
    t_max: f32,
    mut leaf: F,
    leaf_data: P,
    boxes: B,
) -> ControlFlow<()>
where
    F: FnMut(Range<usize>, &mut f32) -> ControlFlow<()>,
    P: Fn(usize) -> *const u8,
    N: WideChildren,
    B: Fn(&N, &BoxRay, f32) -> BoxHits<W>,
{
    let Some(mut at) = Cursor::start(nodes, ray, t_max) else {
        return ControlFlow::Continue(());
    };
    let mut stack = WalkStack::new();
    loop {
        let walked = at.step(
            ray,
            ray.ordered,
            // A lone walk has nothing to overlap a wait with.
            false,
            &mut stack,
            nodes,
            &mut leaf,
            &leaf_data,
            &boxes,
        );
        if let Walked::Over(flow) = walked {
            return flow;
        }
    }
}

/// The loop of [`Traverse::traverse_each`] over any wide node type: the rays' walks
/// ([`traverse_nodes`]'s, step for step) three at a time, one turn of each in turn, a finished
/// walk's place taken by the next ray. A walk mostly waits: for its next node or leaf (a likely
/// cache miss) and along the chain node test → chosen child → next node; the other walks' turns
/// fill that time (see the [module docs](self) for two and three walks). Inlined into each
/// compiled entry point, so the loop and the walks are one function.
#[inline(always)]
pub(crate) fn traverse_nodes_each<N, const W: usize, R, B>(
    nodes: &[N],
    n: usize,
    run: &mut R,
    boxes: B,
) where
    N: WideChildren,
    R: RayRun,
    B: Fn(&N, &BoxRay, f32) -> BoxHits<W>,
{
    // The next ray to start.
    let mut next = 0;
    // Each walk's stack stays in place (kilobytes); `start` fills in the rest. A slot without a
    // state is idle: no ray was left for it.
    let idle = || -> (Walk, Option<(R::State, usize)>) {
        let walk = Walk {
            ray: WideRay::new(&Ray::new(Vec3::ZERO, Vec3::X)),
            at: Cursor {
                index: 0,
                leaf: 0,
                t_max: 0.0,
                prune: 0.0,
            },
            stack: WalkStack::new(),
        };
        (walk, None)
    };
    let [mut first, mut second, mut third] = [idle(), idle(), idle()];
    first.1 = start_walk(nodes, n, &mut next, run, &mut first.0);
    second.1 = start_walk(nodes, n, &mut next, run, &mut second.0);
    third.1 = start_walk(nodes, n, &mut next, run, &mut third.0);
    // The slots take turns by rotating references: no loop over slots, whose exit branch the
    // walks' own branches made unpredictable (1.8 mispredictions per ray with two, callgrind).
    let (mut current, mut other, mut last) = (&mut first, &mut second, &mut third);
    loop {
        let (walk, slot) = &mut *current;
        if let Some((state, _)) = slot {
            // The run's order, a constant of the compiled loop: walks in node order skip the
            // comparisons that order hit children (about 20 instructions per any-hit ray).
            debug_assert_eq!(walk.ray.ordered, R::NEAREST_FIRST);
            let walked = walk.at.step(
                &walk.ray,
                R::NEAREST_FIRST,
                // What the walk goes on with is tested one turn later, its data asked for now
                // (`Cursor::next_turn`).
                true,
                &mut walk.stack,
                nodes,
                #[inline(always)]
                |range, t_max| run.leaf(state, range, t_max),
                &|first| run.leaf_data(first),
                &boxes,
            );
            if let Walked::Over(_) = walked {
                let (state, i) = slot.take().expect("the slot holds a walk");
                run.finish(i, state);
                *slot = start_walk(nodes, n, &mut next, run, walk);
            }
        } else if other.1.is_none() && last.1.is_none() {
            return;
        }
        // current, other, last <- other, last, current.
        std::mem::swap(&mut current, &mut other);
        std::mem::swap(&mut other, &mut last);
    }
}

/// Restarts `walk` for ray `next` of a run of `n` (then the next one, and so on), finishing at once
/// the rays that reach nothing; `None` when no ray is left. A function rather than a closure so
/// that it is always inlined: called, it ran without the caller's AVX (a `vzeroupper` and the
/// ray's set-up in SSE for every ray).
#[inline(always)]
fn start_walk<N, R: RayRun>(
    nodes: &[N],
    n: usize,
    next: &mut usize,
    run: &mut R,
    walk: &mut Walk,
) -> Option<(R::State, usize)> {
    while *next < n {
        let i = *next;
        *next += 1;
        let (ray, t_max, state) = run.start(i);
        if let Some(at) = Cursor::start(nodes, &ray, t_max) {
            walk.ray = ray;
            walk.at = at;
            walk.stack.clear();
            return Some((state, i));
        }
        run.finish(i, state);
    }
    None
}

/// Rays per packet of [`WideBvh::traverse_packet`]: one bit each in a `u32` ray mask.
pub const PACKET: usize = 8;

/// The packet loop of [`WideBvh::traverse_packet`] over any wide node type (see
/// [`traverse_nodes`]): one node test for the whole packet (`boxes`, conservative for each ray:
/// [`PacketBoxRay`]), the rays of a child being those of its parent whose bound still reaches the
/// child's smallest entry distance; each ray meets the triangles of a leaf on its own.
#[inline(always)]
pub(crate) fn traverse_packet_nodes<N, const W: usize, F, P, B>(
    nodes: &[N],
    packet: &PacketBoxRay,
    mut active: u32,
    t_max: &mut [f32; PACKET],
    mut leaf: F,
    leaf_data: P,
    boxes: B,
) where
    F: FnMut(Range<usize>, u32, &mut [f32; PACKET]) -> u32,
    P: Fn(usize) -> *const u8,
    N: WideChildren,
    B: Fn(&N, &PacketBoxRay, f32) -> BoxHits<W>,
{
    if active == 0 || nodes.is_empty() {
        return;
    }
    let mut prune = t_max.map(prune_bound);
    // The rays of `rays` whose bound reaches `t_near`, and the largest bound of `rays`.
    #[inline(always)]
    fn reaching(prune: &[f32; PACKET], rays: u32, t_near: f32) -> u32 {
        rays & lanes_reaching(t_near, prune)
    }
    #[inline(always)]
    fn bound(prune: &[f32; PACKET], rays: u32) -> f32 {
        lanes_max(prune, rays)
    }
    // Deferred children: (index, count, rays, smallest entry distance of the packet).
    let mut stack: ArrayVec<(u32, u32, u32, f32), { stack_size(8) }> = ArrayVec::new();
    debug_assert!(stack_size(W) <= stack.capacity());
    let mut index = 0usize;
    let mut node_rays = active;
    // Lowers the bounds after a leaf. Only the leaf's rays can have a new `t_max`, but every
    // lane is recomputed (`prune` is `t_max.map(prune_bound)` at all times, so the others keep
    // their values): one 8-lane operation instead of a branch per ray.
    #[inline(always)]
    fn lower(prune: &mut [f32; PACKET], t_max: &[f32; PACKET]) {
        *prune = t_max.map(prune_bound);
    }
    loop {
        let node = node_at(nodes, index);
        prefetch(std::slice::from_ref(node));
        let hits = boxes(node, packet, bound(&prune, node_rays));
        let mut mask = hits.mask;
        let defer = |stack: &mut ArrayVec<(u32, u32, u32, f32), { stack_size(8) }>, lane: usize| {
            let (child, count) = node.child(lane);
            prefetch_child(nodes, child, count, &leaf_data);
            stack.push((child, count, node_rays, hits.t_near[lane]));
        };
        if mask != 0 {
            // Nearest child first, as in the single-ray loop, and ordered as there: two hit
            // children by one comparison and a select, three or four by the four-key network.
            let first_lane = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let next_lane = if mask == 0 {
                first_lane
            } else if mask & (mask - 1) == 0 {
                let second_lane = mask.trailing_zeros() as usize;
                let second_nearer = hits.t_near[second_lane] < hits.t_near[first_lane];
                let near = std::hint::select_unpredictable(second_nearer, second_lane, first_lane);
                defer(&mut stack, first_lane ^ second_lane ^ near);
                near
            } else if (mask & (mask - 1)).count_ones() <= 1 {
                let keys = far_first4::<W>(mask | 1 << first_lane, &hits.t_near);
                let n = mask.count_ones() as usize + 1;
                for &key in &keys[..n - 1] {
                    defer(&mut stack, key_lane::<W>(key));
                }
                key_lane::<W>(keys[n - 1])
            } else {
                let keys = far_first(mask | 1 << first_lane, &hits.t_near);
                let n = mask.count_ones() as usize + 1;
                for &key in &keys[..n - 1] {
                    defer(&mut stack, key_lane::<W>(key));
                }
                key_lane::<W>(keys[n - 1])
            };
            let rays = reaching(&prune, node_rays, hits.t_near[next_lane]);
            if rays != 0 {
                let (child, count) = node.child(next_lane);
                if count == 0 {
                    index = child as usize;
                    node_rays = rays;
                    continue;
                }
                let first = child as usize;
                active &= !leaf(first..first + count as usize, rays, t_max);
                lower(&mut prune, t_max);
            }
        }
        // Pop the nearest deferred child that one of its rays still reaches.
        loop {
            if active == 0 {
                return;
            }
            let Some((next, count, rays, t_near)) = stack.pop() else {
                return;
            };
            let rays = reaching(&prune, rays & active, t_near);
            if rays == 0 {
                continue;
            }
            if count == 0 {
                index = next as usize;
                node_rays = rays;
                break;
            }
            let first = next as usize;
            active &= !leaf(first..first + count as usize, rays, t_max);
            lower(&mut prune, t_max);
        }
    }
}

/// The nearer and the farther hit lane of `mask`, which holds at most two lanes (`nearest_first`;
/// else the first and the second in the node's order): a lone lane is both, and an empty mask
/// gives lane 0 twice. No branch on the distances: `&`, not `&&`, and a select (with `&&` the
/// comparison became a branch, mispredicted).
#[inline(always)]
fn nearer_of_two<const W: usize>(
    mask: u32,
    t_near: &[f32; W],
    nearest_first: bool,
) -> (usize, usize) {
    debug_assert!(mask.count_ones() <= 2);
    let first_lane = mask.trailing_zeros() as usize % W;
    let rest = mask & mask.wrapping_sub(1);
    let second_lane = if rest == 0 {
        first_lane
    } else {
        rest.trailing_zeros() as usize
    };
    let second_nearer = (t_near[second_lane] < t_near[first_lane]) & nearest_first;
    let near = std::hint::select_unpredictable(second_nearer, second_lane, first_lane);
    (near, first_lane ^ second_lane ^ near)
}

/// Asks for the data of a deferred child early: node `child` of `nodes` when `count == 0`, else
/// the leaf at position `child` (`leaf_data(child)`, the caller's primitives). Which one is picked
/// without a branch, and a fixed [`DEFERRED_LINES`] lines are asked for either way: branching on
/// leaf or node here mispredicted 1.6 times per incoherent ray on the conference room (callgrind),
/// as did the loop over a leaf's lines.
#[inline(always)]
fn prefetch_child<N, P: Fn(usize) -> *const u8>(
    nodes: &[N],
    child: u32,
    count: u32,
    leaf_data: &P,
) {
    // Both addresses are computed whichever the child is; `wrapping_add` keeps the unused one
    // defined, and a prefetch never faults.
    let node = nodes.as_ptr().wrapping_add(child as usize).cast::<u8>();
    let leaf = leaf_data(child as usize);
    prefetch_lines::<DEFERRED_LINES>(std::hint::select_unpredictable(count == 0, node, leaf));
}

/// Cache lines asked for per deferred child: an 8-wide node (256 bytes), or the first 256 bytes of
/// a leaf's triangle blocks.
const DEFERRED_LINES: usize = 4;

/// Cache lines asked for a leaf that a walk tests at its next turn: every line of the largest
/// leaf, two 160-byte blocks starting halfway into a line (six), where [`DEFERRED_LINES`] left the
/// last one or two to miss during the test.
const LEAF_LINES: usize = 6;

/// The sort key of hit lane `lane`: its entry distance as ordered bits above the lane (reversed:
/// of equal distances the lower lane sorts first, is pushed first, so the higher one is popped
/// first). Entry distances are `>= 0`, so a key is never 0, which [`far_first4`] and
/// [`far_first`] use for missing lanes. [`key_lane`] reads the lane back.
#[inline(always)]
fn lane_key<const W: usize>(t_near: &[f32; W], lane: usize) -> u64 {
    u64::from(ordered_bits(t_near[lane])) << 32 | (W - 1 - lane) as u64
}

/// Sorts `keys` in decreasing order with the sorting network `[(i, j), ...]`: each compare-exchange
/// a max into `i` and a min into `j`, which compile to conditional moves, so nothing branches on
/// the keys. A macro so that the exchanges are written out (a loop over a table of pairs was not
/// unrolled: 65 more instructions per ray).
macro_rules! sort_decreasing {
    ($keys:expr, [$(($i:literal, $j:literal)),* $(,)?]) => {{
        let mut k = $keys;
        $(
            let (a, b) = (k[$i], k[$j]);
            k[$i] = a.max(b);
            k[$j] = a.min(b);
        )*
        k
    }};
}

/// Four keys in decreasing order: the optimal network, five compare-exchanges (Knuth, TAOCP vol. 3,
/// 5.3.4).
#[inline(always)]
fn sort4(keys: [u64; 4]) -> [u64; 4] {
    sort_decreasing!(keys, [(0, 1), (2, 3), (0, 2), (1, 3), (1, 2)])
}

/// Eight keys in decreasing order: the optimal network, 19 compare-exchanges in six rounds (Knuth,
/// TAOCP vol. 3, 5.3.4).
#[inline(always)]
fn sort8(keys: [u64; 8]) -> [u64; 8] {
    sort_decreasing!(
        keys,
        [
            (0, 2),
            (1, 3),
            (4, 6),
            (5, 7),
            (0, 4),
            (1, 5),
            (2, 6),
            (3, 7),
            (0, 1),
            (2, 3),
            (4, 5),
            (6, 7),
            (2, 4),
            (3, 5),
            (1, 4),
            (3, 6),
            (1, 2),
            (3, 4),
            (5, 6),
        ]
    )
}

/// The keys of the lanes of `mask` (at most eight lanes) farthest first: the first
/// `mask.count_ones()` entries, the rest 0. Shared by the single-ray loop (five or more hit
/// children) and the packet loop (two or more); the insertion sort it replaces mispredicted about
/// ten times per node with five or more.
#[inline(always)]
fn far_first<const W: usize>(mask: u32, t_near: &[f32; W]) -> [u64; 8] {
    // Lanes outside `mask` (and beyond `W`) masked to 0 without a branch.
    sort8(std::array::from_fn(|lane| {
        lane_key(t_near, lane % W) & 0u64.wrapping_sub(u64::from(mask >> lane & 1))
    }))
}

/// [`far_first`] for three or four lanes in `mask`: the keys farthest first, a missing fourth key
/// 0 (sorted last). Gathers the set lanes into four keys first, so the network is the small one.
#[inline(always)]
fn far_first4<const W: usize>(mask: u32, t_near: &[f32; W]) -> [u64; 4] {
    let mut rest = mask;
    let mut next = || {
        let lane = rest.trailing_zeros() as usize % W;
        let key = if rest == 0 { 0 } else { lane_key(t_near, lane) };
        rest &= rest.wrapping_sub(1);
        key
    };
    sort4([next(), next(), next(), next()])
}

/// The lane of a [`far_first`] key.
#[inline(always)]
fn key_lane<const W: usize>(key: u64) -> usize {
    W - 1 - key as u32 as usize
}

/// `t`'s bits mapped so that unsigned order is float order (negative values flipped, positive ones
/// above them). Entry distances of hit children are never NaN (the hit test is false for NaN).
#[inline(always)]
fn ordered_bits(t: f32) -> u32 {
    let bits = t.to_bits();
    bits ^ (((bits as i32 >> 31) as u32) | 0x8000_0000)
}

/// Node `i`, without a bounds check on the hot path.
///
/// Every index the traversal follows is an interior child's `index`, which
/// [`WideBvh::from_binary`] sets to a node it pushed (refit changes boxes, never indices); `nodes`
/// is private to the crate, and [`WideBvh::validate`] checks the layout in the tests. With the
/// `force-scalar` feature the access is checked.
#[inline(always)]
fn node_at<N>(nodes: &[N], i: usize) -> &N {
    debug_assert!(i < nodes.len());
    #[cfg(not(feature = "force-scalar"))]
    {
        // SAFETY: `i < nodes.len()` by the layout invariant described above.
        unsafe { nodes.get_unchecked(i) }
    }
    #[cfg(feature = "force-scalar")]
    {
        &nodes[i]
    }
}

impl<const W: usize> WideBvh<W> {
    /// The value of padding positions in [`WideBvh::prim_ids`] (no leaf covers them).
    pub const PADDING: u32 = u32::MAX;

    /// Builds the binary BVH ([`Bvh::build`]) and collapses it with the costs of `config`.
    pub fn build(boxes: &[Aabb], centroids: &[Vec3], config: super::BuildConfig) -> Self {
        Self::from_binary_with(&Bvh::build(boxes, centroids, config), config)
    }

    /// Collapses a binary BVH (see the [module docs](self)) with the costs of
    /// [`super::BuildConfig::BALANCED`].
    pub fn from_binary(bvh: &Bvh) -> Self {
        Self::from_binary_with(bvh, super::BuildConfig::BALANCED)
    }

    /// Collapses a binary BVH with the node and leaf costs of `config` (see the
    /// [module docs](self)).
    pub fn from_binary_with(bvh: &Bvh, config: super::BuildConfig) -> Self {
        let mut wide = Self {
            nodes: Vec::new(),
            prim_ids: Vec::with_capacity(bvh.num_prims() + bvh.num_prims() / 2),
            num_prims: bvh.num_prims(),
        };
        if bvh.nodes.is_empty() {
            return wide;
        }
        let plan = Plan::<W>::new(bvh, CollapseCosts::of(&config));
        wide.nodes.push(WideNode::EMPTY);
        wide.fill(bvh, &plan, 0, 0);
        wide.nodes.shrink_to_fit();
        wide.prim_ids.shrink_to_fit();
        wide
    }

    /// Fills wide node `at` with the lanes `plan` gives binary node `binary`, and their nodes
    /// after it (depth first).
    fn fill(&mut self, bvh: &Bvh, plan: &Plan<W>, at: usize, binary: usize) {
        // Largest box first: a walk in node order (any hit, all hits, counts) takes the first hit
        // lane and meets an occluder sooner in the child most rays enter, and the depth-first
        // layout puts that child's nodes next to this one (conference any-hit rays: 4 % fewer
        // instructions than the binary tree's left-to-right order).
        let mut children = plan.children(bvh, binary);
        children.sort_by(|a, b| {
            let area = |lane: &Lane| bvh.nodes[lane.node].bounds().surface_area();
            area(b).total_cmp(&area(a))
        });
        for (lane, child) in children.into_iter().enumerate() {
            self.nodes[at].set_child_bounds(lane, bvh.nodes[child.node].bounds());
            if child.leaf {
                let padded = self.prim_ids.len().next_multiple_of(LEAF_ALIGN);
                self.prim_ids.resize(padded, Self::PADDING);
                subtree_prims(bvh, child.node, &mut self.prim_ids);
                self.nodes[at].index[lane] = padded as u32;
                self.nodes[at].count[lane] = (self.prim_ids.len() - padded) as u32;
            } else {
                let index = self.nodes.len();
                self.nodes.push(WideNode::EMPTY);
                self.nodes[at].index[lane] = index as u32;
                self.fill(bvh, plan, index, child.node);
            }
        }
    }

    /// The nodes, root first (empty when the BVH holds no primitive).
    #[inline]
    pub fn nodes(&self) -> &[WideNode<W>] {
        &self.nodes
    }

    /// The primitive permutation in leaf order, [`WideBvh::PADDING`] between leaves so that each
    /// leaf starts at a multiple of [`LEAF_ALIGN`].
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
        self.nodes
            .first()
            .map_or(Aabb::EMPTY, WideNode::<W>::bounds)
    }

    /// Visits, near child first, every leaf whose box the ray reaches within `[ray.t_min, t_max]`,
    /// calling `leaf(range, &mut t_max)` with the leaf's positions in [`WideBvh::prim_ids`] (the
    /// range starts at a multiple of [`LEAF_ALIGN`]). The closure may lower `t_max` and returns
    /// [`ControlFlow::Break`] to stop; `traverse` returns what stopped it. Rays that are not valid
    /// reach nothing.
    ///
    /// ```
    /// use std::ops::ControlFlow;
    /// use raypick::{bvh::{wide::{WideBvh, WideRay}, BuildConfig}, glam::Vec3, Aabb, Ray};
    /// // (`traverse` needs `Traverse`, implemented for the widths 4 and 8.)
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
        self.traverse_prefetching(ray, t_max, leaf, |_| std::ptr::null())
    }

    /// The traversal loop, with the node test `boxes` ([`crate::simd::box4`], [`crate::simd::box8`]
    /// or a twin): inlined into each width's entry point ([`Traverse`]).
    #[inline(always)]
    fn traverse_with<F, P, B>(
        &self,
        ray: &WideRay,
        t_max: f32,
        leaf: F,
        leaf_data: P,
        boxes: B,
    ) -> ControlFlow<()>
    where
        F: FnMut(Range<usize>, &mut f32) -> ControlFlow<()>,
        P: Fn(usize) -> *const u8,
        B: Fn(&[[f32; W]; 6], &BoxRay, f32) -> BoxHits<W>,
    {
        traverse_nodes(&self.nodes, ray, t_max, leaf, leaf_data, |node, r, t| {
            boxes(&node.bounds, r, t)
        })
    }

    /// [`Traverse::traverse_each`] with the node test `boxes`: inlined into each compiled entry
    /// point, so the loop over the rays and the walk are one function.
    #[inline(always)]
    fn traverse_each_with<R: RayRun, B>(&self, n: usize, run: &mut R, boxes: B)
    where
        B: Fn(&[[f32; W]; 6], &BoxRay, f32) -> BoxHits<W>,
    {
        traverse_nodes_each(&self.nodes, n, run, |node: &WideNode<W>, r, t| {
            boxes(&node.bounds, r, t)
        });
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
    /// [`Self::take_prim_ids`]).
    ///
    /// # Panics
    /// When `boxes.len()` differs from the number of primitives.
    pub(crate) fn refit_with_ids(&mut self, ids: &[u32], boxes: &[Aabb]) {
        assert_eq!(
            boxes.len(),
            self.num_prims,
            "WideBvh::refit: one box per primitive"
        );
        for i in (0..self.nodes.len()).rev() {
            for lane in 0..W {
                let node = &self.nodes[i];
                let bounds = if node.is_leaf(lane) {
                    let first = node.index[lane] as usize;
                    ids[first..first + node.count[lane] as usize]
                        .iter()
                        .fold(Aabb::EMPTY, |b, &p| b.union(boxes[p as usize]))
                } else if node.is_interior(lane) {
                    self.nodes[node.index[lane] as usize].bounds()
                } else {
                    continue;
                };
                self.nodes[i].set_child_bounds(lane, bounds);
            }
        }
    }

    /// Shape figures, as for the binary BVH: `nodes` counts wide nodes, `leaves` leaf children,
    /// `sah_cost` charges one 4-wide box test per node visit and one test per primitive.
    pub fn stats(&self) -> BvhStats {
        wide_stats(
            self,
            self.nodes.capacity() * std::mem::size_of::<WideNode<W>>()
                + self.prim_ids.capacity() * std::mem::size_of::<u32>(),
        )
    }

    /// Checks every structural invariant against the primitives' current `boxes` (indexed by
    /// primitive id): each primitive id once in `prim_ids` and every other position padding; interior
    /// children after their parent and reached once; no deeper than [`MAX_DEPTH`]; leaves non-empty,
    /// starting at a multiple of [`LEAF_ALIGN`], covering each id's position once; empty lanes with empty
    /// boxes; child boxes holding their node's children and leaf boxes their primitives' boxes.
    pub fn validate(&self, boxes: &[Aabb]) -> Result<(), ValidationError> {
        validate_wide(self, &self.prim_ids, boxes, Self::PADDING)
    }

    /// Moves [`Self::prim_ids`] out of the tree, leaving it empty, for an owner that keeps each
    /// position's id with the primitive it stores there (a mesh's triangle blocks): one copy of
    /// the ids instead of two. Such an owner refits with [`Self::refit_with_ids`] and validates
    /// with `validate_wide`, giving both its ids.
    pub(crate) fn take_prim_ids(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.prim_ids)
    }
}

impl<const W: usize> WideTreeView for WideBvh<W> {
    const WIDTH: usize = W;
    fn num_nodes(&self) -> usize {
        self.nodes.len()
    }
    fn num_prims(&self) -> usize {
        self.num_prims
    }
    fn lane_ref(&self, node: usize, lane: usize) -> Option<(usize, usize)> {
        let n = &self.nodes[node];
        (n.is_leaf(lane) || n.is_interior(lane))
            .then_some((n.index[lane] as usize, n.count[lane] as usize))
    }
    fn node_bounds(&self, node: usize) -> Aabb {
        self.nodes[node].bounds()
    }
    fn lane_bounds(&self, node: usize, lane: usize) -> Aabb {
        self.nodes[node].child_bounds(lane)
    }
    /// An empty lane has an empty box (never hit); an interior lane's box holds its child's boxes.
    fn check_lane(&self, node: usize, lane: usize) -> Result<(), ValidationError> {
        let bounds = self.lane_bounds(node, lane);
        let holds = match self.lane(node, lane) {
            WideLane::Empty => bounds.is_empty(),
            WideLane::Leaf { .. } => true,
            WideLane::Interior { child } => {
                (0..W).all(|l| bounds.contains(&self.nodes[child].child_bounds(l)))
            }
        };
        if holds {
            Ok(())
        } else {
            let child = match self.lane(node, lane) {
                WideLane::Interior { child } => child,
                _ => 0,
            };
            Err(ValidationError::ChildOutside {
                parent: node,
                child,
            })
        }
    }
}

/// The width-specific entry point of the traversal: the node test each width uses.
pub trait Traverse {
    /// [`WideBvh::traverse`], also prefetching the primitives of a leaf that is hit but put on the
    /// stack behind a nearer child, so they are in cache when the leaf's turn comes:
    /// `leaf_data(first)` is where the caller keeps the primitives of the leaf starting at
    /// position `first` (any address, never read: a prefetch is a hint; `std::ptr::null()` when
    /// there is nothing to prefetch). It is also called for interior children, whose answer is
    /// discarded, so it must be cheap and must not dereference anything.
    fn traverse_prefetching<F, P>(
        &self,
        ray: &WideRay,
        t_max: f32,
        leaf: F,
        leaf_data: P,
    ) -> ControlFlow<()>
    where
        F: FnMut(Range<usize>, &mut f32) -> ControlFlow<()>,
        P: Fn(usize) -> *const u8;

    /// [`Traverse::traverse_prefetching`] for rays `0..n` of `run` in turn ([`RayRun`]). One
    /// call for a run of rays: an implementation may compile the whole loop for the CPU at hand,
    /// so that the CPU check, the call into the compiled walk and the walk's set-up are paid once
    /// per run instead of once per ray.
    #[inline]
    fn traverse_each<R: RayRun>(&self, n: usize, run: &mut R) {
        for i in 0..n {
            let (ray, t_max, mut state) = run.start(i);
            let _ = self.traverse_prefetching(
                &ray,
                t_max,
                #[inline(always)]
                |range, t_max| run.leaf(&mut state, range, t_max),
                |first| run.leaf_data(first),
            );
            run.finish(i, state);
        }
    }
}

/// A run of rays for [`Traverse::traverse_each`]: each ray's set-up, its leaves and its end.
/// Implementations mark the methods `#[inline(always)]`, so that they are compiled into the loop
/// with its CPU features.
pub trait RayRun {
    /// Whether the walks take hit children nearest first, or in node order (the rays'
    /// [`WideRay::in_node_order`]): one order for every ray of a run.
    const NEAREST_FIRST: bool;
    /// The caller's state for one ray's walk.
    type State;
    /// Ray `i`: its prepared ray, its `t_max` and its state.
    fn start(&self, i: usize) -> (WideRay, f32, Self::State);
    /// A leaf that the walk of `state` reaches: the `leaf` of [`Traverse::traverse_prefetching`]
    /// (`Break` ends this ray's walk).
    fn leaf(
        &self,
        state: &mut Self::State,
        range: Range<usize>,
        t_max: &mut f32,
    ) -> ControlFlow<()>;
    /// Where the data of the leaf starting at position `first` lies, for the walk to prefetch when
    /// it puts the leaf behind a nearer child: the `leaf_data` of
    /// [`Traverse::traverse_prefetching`].
    fn leaf_data(&self, first: usize) -> *const u8;
    /// Ray `i`'s walk is over.
    fn finish(&mut self, i: usize, state: Self::State);
}

impl Traverse for WideBvh<4> {
    #[inline]
    fn traverse_prefetching<F, P>(
        &self,
        ray: &WideRay,
        t_max: f32,
        leaf: F,
        leaf_data: P,
    ) -> ControlFlow<()>
    where
        F: FnMut(Range<usize>, &mut f32) -> ControlFlow<()>,
        P: Fn(usize) -> *const u8,
    {
        self.traverse_with(ray, t_max, leaf, leaf_data, box4)
    }
}

impl Traverse for WideBvh<8> {
    /// The loop is compiled three times and picked at run time (`is_x86_feature_detected!`, a
    /// cached load): for x86-64-v3 CPUs (AVX2, FMA, BMI; the leaf closure and the kernels it calls
    /// are compiled for them too when inlined), for AVX-only CPUs, and with two SSE halves per node
    /// otherwise. All three give the same answers: the box tests are bit-identical
    /// ([`crate::simd`]), and Rust never fuses a multiply and an add unless asked to.
    #[inline]
    fn traverse_prefetching<F, P>(
        &self,
        ray: &WideRay,
        t_max: f32,
        leaf: F,
        leaf_data: P,
    ) -> ControlFlow<()>
    where
        F: FnMut(Range<usize>, &mut f32) -> ControlFlow<()>,
        P: Fn(usize) -> *const u8,
    {
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        {
            if crate::simd::has_x86_64_v3() {
                // SAFETY: the CPU has every feature `traverse_v3` is compiled for, checked just
                // above.
                return unsafe { self.traverse_v3(ray, t_max, leaf, leaf_data) };
            }
            if std::arch::is_x86_feature_detected!("avx") {
                // SAFETY: the CPU has AVX, checked just above.
                return unsafe { self.traverse_avx(ray, t_max, leaf, leaf_data) };
            }
        }
        self.traverse_with(ray, t_max, leaf, leaf_data, box8)
    }

    /// The whole loop over the rays compiled for each CPU level, like the single walk: the set-up
    /// of a walk inside it (the ray's broadcasts, the stack) is a few instructions, where a call
    /// per ray cost a prologue, a stack probe and the CPU check each time.
    #[inline]
    fn traverse_each<R: RayRun>(&self, n: usize, run: &mut R) {
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        {
            if crate::simd::has_x86_64_v3() {
                // SAFETY: the CPU has every feature `traverse_each_v3` is compiled for, checked
                // just above.
                return unsafe { self.traverse_each_v3(n, run) };
            }
            if std::arch::is_x86_feature_detected!("avx") {
                // SAFETY: the CPU has AVX, checked just above.
                return unsafe { self.traverse_each_avx(n, run) };
            }
        }
        self.traverse_each_with(n, run, box8);
    }
}

impl WideBvh<8> {
    /// [`Traverse::traverse_prefetching`] for up to [`PACKET`] rays at once, bit `i` of `active`
    /// standing for ray `i` of the packet (the caller's numbering): each node is loaded, tested and
    /// its children ordered once for all of them, which is where coherent rays (one camera's
    /// neighbouring pixels) spend most of a single-ray walk. The node test is the packet's
    /// ([`PacketBoxRay`]: conservative, bit for bit, for every ray it was made of), so each ray
    /// reaches every leaf its own walk would reach, and more; a child is dropped for ray `i` only
    /// when the packet's entry distance into it (at most the ray's) is beyond `t_max[i]`. Children
    /// go nearest first by the packet's entry distance, an order that differs from the single-ray
    /// walk's, so a closest-hit caller must break ties by id (the scene does).
    ///
    /// `leaf(range, rays, t_max)` is called with the leaf's positions, the mask of the rays that may
    /// reach it and every ray's bound (it may lower those of `rays`), and returns the mask of the
    /// rays it finished (any-hit queries), which the walk then drops. The leaf closure decides for
    /// each ray on its own (the mesh runs each ray's triangle prefilter and kernel).
    ///
    /// ```
    /// use raypick::{bvh::{wide::{WideBvh, PACKET}, BuildConfig}, glam::Vec3, simd::PacketBoxRay, Aabb, Ray};
    /// let boxes: Vec<Aabb> = (0..20)
    ///     .map(|i| Aabb::new(Vec3::new(i as f32, 0.0, 0.0), Vec3::new(i as f32 + 0.5, 1.0, 1.0)))
    ///     .collect();
    /// let centroids: Vec<Vec3> = boxes.iter().map(Aabb::center).collect();
    /// let bvh = WideBvh::<8>::build(&boxes, &centroids, BuildConfig::default());
    /// // Ray i looks down at the box under x = i + 0.25 (one direction: an orthographic packet).
    /// let down = Vec3::new(1e-3, -1.0, 1e-3);
    /// let rays: [Ray; PACKET] =
    ///     std::array::from_fn(|i| Ray::new(Vec3::new(i as f32 + 0.25, 5.0, 0.5), down));
    /// let packet = PacketBoxRay::new(&rays).unwrap();
    /// let mut t_max = rays.map(|r| r.t_max);
    /// let mut reached = vec![Vec::new(); PACKET];
    /// bvh.traverse_packet(&packet, u32::MAX, &mut t_max, |range, rs, _| {
    ///     for i in (0..PACKET).filter(|i| rs >> i & 1 == 1) {
    ///         reached[i].extend(range.clone().map(|k| bvh.prim_ids()[k]));
    ///     }
    ///     0
    /// }, |_| std::ptr::null());
    /// // Each ray meets its box's leaf (leaves hold several boxes), and no box twice.
    /// for (i, prims) in reached.iter_mut().enumerate() {
    ///     assert!(prims.contains(&(i as u32)));
    ///     prims.sort();
    ///     assert!(prims.windows(2).all(|w| w[0] < w[1]));
    /// }
    /// ```
    #[inline]
    pub fn traverse_packet<F, P>(
        &self,
        packet: &PacketBoxRay,
        active: u32,
        t_max: &mut [f32; PACKET],
        leaf: F,
        leaf_data: P,
    ) where
        F: FnMut(Range<usize>, u32, &mut [f32; PACKET]) -> u32,
        P: Fn(usize) -> *const u8,
    {
        let (packet, active) = (packet, active & ((1 << PACKET) - 1));
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        {
            if crate::simd::has_x86_64_v3() {
                // SAFETY: the CPU has every feature `traverse_packet_v3` is compiled for, checked
                // just above.
                return unsafe { self.traverse_packet_v3(packet, active, t_max, leaf, leaf_data) };
            }
        }
        traverse_packet_nodes(
            &self.nodes,
            packet,
            active,
            t_max,
            leaf,
            leaf_data,
            |node: &WideNode<8>, r, t| packet_box8(&node.bounds, r, t),
        );
    }
}

#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
impl WideBvh<8> {
    /// The traversal compiled for x86-64-v3 (the leaf closure is inlined into it when it can be).
    ///
    /// # Safety
    /// The CPU must support the enabled features ([`crate::simd::has_x86_64_v3`]).
    #[target_feature(enable = "avx,avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
    unsafe fn traverse_v3<F, P>(
        &self,
        ray: &WideRay,
        t_max: f32,
        leaf: F,
        leaf_data: P,
    ) -> ControlFlow<()>
    where
        F: FnMut(Range<usize>, &mut f32) -> ControlFlow<()>,
        P: Fn(usize) -> *const u8,
    {
        self.traverse_with(ray, t_max, leaf, leaf_data, |bounds, r, t| {
            crate::simd::box8_avx(bounds, r, t)
        })
    }

    /// [`Traverse::traverse_each`] compiled for x86-64-v3 (the closures are inlined into it).
    ///
    /// # Safety
    /// The CPU must support the enabled features ([`crate::simd::has_x86_64_v3`]).
    #[target_feature(enable = "avx,avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
    unsafe fn traverse_each_v3<R: RayRun>(&self, n: usize, run: &mut R) {
        self.traverse_each_with(n, run, |bounds, r, t| crate::simd::box8_avx(bounds, r, t));
    }

    /// [`Traverse::traverse_each`] compiled with AVX enabled.
    ///
    /// # Safety
    /// The CPU must support AVX.
    #[target_feature(enable = "avx")]
    unsafe fn traverse_each_avx<R: RayRun>(&self, n: usize, run: &mut R) {
        self.traverse_each_with(n, run, |bounds, r, t| crate::simd::box8_avx(bounds, r, t));
    }

    /// [`WideBvh::traverse_packet`] compiled for x86-64-v3 (the leaf closure is inlined into it).
    ///
    /// # Safety
    /// The CPU must support the enabled features ([`crate::simd::has_x86_64_v3`]).
    #[target_feature(enable = "avx,avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
    unsafe fn traverse_packet_v3<F, P>(
        &self,
        packet: &PacketBoxRay,
        active: u32,
        t_max: &mut [f32; PACKET],
        leaf: F,
        leaf_data: P,
    ) where
        F: FnMut(Range<usize>, u32, &mut [f32; PACKET]) -> u32,
        P: Fn(usize) -> *const u8,
    {
        traverse_packet_nodes(
            &self.nodes,
            packet,
            active,
            t_max,
            leaf,
            leaf_data,
            |node: &WideNode<8>, r, t| crate::simd::packet_box8_avx(&node.bounds, r, t),
        );
    }

    /// The traversal compiled with AVX enabled.
    ///
    /// # Safety
    /// The CPU must support AVX.
    #[target_feature(enable = "avx")]
    unsafe fn traverse_avx<F, P>(
        &self,
        ray: &WideRay,
        t_max: f32,
        leaf: F,
        leaf_data: P,
    ) -> ControlFlow<()>
    where
        F: FnMut(Range<usize>, &mut f32) -> ControlFlow<()>,
        P: Fn(usize) -> *const u8,
    {
        self.traverse_with(ray, t_max, leaf, leaf_data, |bounds, r, t| {
            crate::simd::box8_avx(bounds, r, t)
        })
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    use super::*;
    use crate::bvh::test_support::{random_ray, record_leaf, LeafRecorder};
    use crate::bvh::BuildConfig;

    /// Both networks sort: every 0/1 input (the 0-1 principle, Knuth 5.3.4, makes this a proof).
    #[test]
    fn sorting_networks_sort_every_zero_one_input() {
        for bits in 0u32..256 {
            let keys: [u64; 8] = std::array::from_fn(|i| u64::from(bits >> i & 1));
            let sorted = sort8(keys);
            assert!(
                sorted.windows(2).all(|w| w[0] >= w[1]),
                "{keys:?} -> {sorted:?}"
            );
            let keys4 = [keys[0], keys[1], keys[2], keys[3]];
            let sorted4 = sort4(keys4);
            assert!(
                sorted4.windows(2).all(|w| w[0] >= w[1]),
                "{keys4:?} -> {sorted4:?}"
            );
        }
    }

    /// The hit lanes farthest first, equal distances (drawn from a few values) with the lower lane
    /// first, then zeros: for every mask of 8 lanes (`far_first`) and of 3 or 4 (`far_first4`),
    /// against a plain sort of the lanes.
    #[test]
    fn hit_lanes_come_farthest_first() {
        let mut rng = Pcg64::seed_from_u64(4);
        for mask in 1u32..256 {
            for _ in 0..100 {
                let t_near: [f32; 8] = std::array::from_fn(|_| match rng.gen_range(0..3) {
                    0 => 0.0,
                    1 => rng.gen_range(0..4) as f32,
                    _ => rng.gen_range(0.0..1e6),
                });
                let mut lanes: Vec<usize> = (0..8).filter(|l| mask >> l & 1 != 0).collect();
                lanes.sort_by(|&a, &b| t_near[b].total_cmp(&t_near[a]).then(a.cmp(&b)));
                let n = lanes.len();
                let keys = far_first(mask, &t_near);
                let order: Vec<usize> = keys[..n].iter().map(|&k| key_lane::<8>(k)).collect();
                assert_eq!(order, lanes, "mask {mask:#b}, t {t_near:?}");
                assert!(keys[n..].iter().all(|&k| k == 0));
                if (3..=4).contains(&n) {
                    let keys4 = far_first4(mask, &t_near);
                    assert_eq!(keys4[..n], keys[..n]);
                    assert!(keys4[n..].iter().all(|&k| k == 0));
                }
            }
        }
    }

    fn random_boxes(n: usize, seed: u64) -> (Vec<Aabb>, Vec<Vec3>) {
        crate::bvh::test_support::random_boxes(n, seed, 1.0)
    }

    #[test]
    fn collapsed_trees_are_valid_for_every_size_and_preset() {
        collapsed_trees_are_valid_for_every_size_and_preset_w::<4>();
        collapsed_trees_are_valid_for_every_size_and_preset_w::<8>();
    }

    fn collapsed_trees_are_valid_for_every_size_and_preset_w<const W: usize>()
    where
        WideBvh<W>: Traverse,
    {
        for n in [0, 1, 2, 3, 4, 5, 9, 17, 100, 1000] {
            for (name, config) in BuildConfig::PRESETS {
                let (boxes, centroids) = random_boxes(n, n as u64);
                let wide = WideBvh::<W>::build(&boxes, &centroids, config);
                assert_eq!(wide.validate(&boxes), Ok(()), "n={n} {name}");
                assert_eq!(wide.num_prims(), n);
                if n > 0 {
                    let stats = wide.stats();
                    assert_eq!(
                        stats
                            .leaf_size_histogram
                            .iter()
                            .enumerate()
                            .map(|(k, c)| k * c)
                            .sum::<usize>(),
                        n
                    );
                }
            }
        }
    }

    #[test]
    fn collapsing_shortens_the_tree() {
        collapsing_shortens_the_tree_w::<4>();
        collapsing_shortens_the_tree_w::<8>();
    }

    fn collapsing_shortens_the_tree_w<const W: usize>()
    where
        WideBvh<W>: Traverse,
    {
        let (boxes, centroids) = random_boxes(5000, 3);
        let binary = Bvh::build(&boxes, &centroids, BuildConfig::BALANCED);
        let wide = WideBvh::<W>::from_binary(&binary);
        let (b, w) = (binary.stats(), wide.stats());
        // Small neighbouring leaves may merge.
        assert!(w.leaves <= b.leaves);
        assert!(
            w.nodes * 2 < b.nodes,
            "{} wide nodes for {} binary",
            w.nodes,
            b.nodes
        );
        assert!(
            w.depth * 3 < b.depth * 2 + 3,
            "depth {} vs {}",
            w.depth,
            b.depth
        );
    }

    #[test]
    fn traversal_reaches_exactly_the_leaves_of_the_binary_bvh() {
        traversal_reaches_exactly_the_leaves_of_the_binary_bvh_w::<4>();
        traversal_reaches_exactly_the_leaves_of_the_binary_bvh_w::<8>();
    }

    fn traversal_reaches_exactly_the_leaves_of_the_binary_bvh_w<const W: usize>()
    where
        WideBvh<W>: Traverse,
    {
        // Same boxes, same conservative slab test: both trees must report the same primitives
        // (reached through leaves whose boxes the ray touches) for rays in every direction,
        // including axis-parallel ones (infinite 1/dir).
        let (boxes, centroids) = random_boxes(3000, 4);
        // Leaves of one or two primitives, which the default collapse merges where it pays.
        let small_leaves = BuildConfig {
            max_leaf_size: 2,
            ..BuildConfig::BALANCED
        };
        let binary = Bvh::build(&boxes, &centroids, small_leaves);
        // Binary leaves kept as they are (a merged leaf is reached wherever the union of its
        // parts' boxes is: see below).
        let wide = WideBvh::<W>::from_binary_with(
            &binary,
            BuildConfig {
                max_leaf_size: 1,
                ..BuildConfig::BALANCED
            },
        );
        let merged = WideBvh::<W>::from_binary(&binary);
        assert!(merged.stats().leaves < binary.stats().leaves);
        let mut rng = Pcg64::seed_from_u64(5);
        let mut reordered = 0;
        for k in 0..2000 {
            let ray = random_ray(&mut rng, k, 15.0);
            let mut reached_binary = Vec::new();
            let _ = binary.traverse(&crate::bvh::BvhRay::new(&ray), ray.t_max, |range, _| {
                reached_binary.extend(range.map(|i| binary.prim_ids()[i]));
                ControlFlow::Continue(())
            });
            let mut reached_wide = Vec::new();
            let _ = wide.traverse(&WideRay::new(&ray), ray.t_max, |range, _| {
                reached_wide.extend(range.map(|i| wide.prim_ids()[i]));
                ControlFlow::Continue(())
            });
            // The walk in node order reaches the same leaves, in its own order.
            let mut reached_in_node_order = Vec::new();
            let _ = wide.traverse(
                &WideRay::new(&ray).in_node_order(),
                ray.t_max,
                |range, _| {
                    reached_in_node_order.extend(range.map(|i| wide.prim_ids()[i]));
                    ControlFlow::Continue(())
                },
            );
            let mut reached_merged = Vec::new();
            let _ = merged.traverse(&WideRay::new(&ray), ray.t_max, |range, _| {
                reached_merged.extend(range.map(|i| merged.prim_ids()[i]));
                ControlFlow::Continue(())
            });
            reordered += usize::from(reached_in_node_order != reached_wide);
            reached_binary.sort_unstable();
            reached_wide.sort_unstable();
            reached_in_node_order.sort_unstable();
            reached_merged.sort_unstable();
            assert_eq!(reached_binary, reached_wide, "{ray:?}");
            // Merged leaves reach everything their parts reach (and more where the ray touches
            // a merged leaf's box but not the part's).
            assert!(
                reached_binary
                    .iter()
                    .all(|p| reached_merged.binary_search(p).is_ok()),
                "{ray:?}"
            );
            assert!(reached_merged.windows(2).all(|w| w[0] < w[1]));
            assert_eq!(reached_in_node_order, reached_wide, "{ray:?}");
            // No padding ever reaches the closure, and each prim at most once.
            assert!(reached_wide.windows(2).all(|w| w[0] < w[1]));
            assert!(reached_in_node_order.windows(2).all(|w| w[0] < w[1]));
        }
        // The node order is another order for rays that meet three or more children of a node.
        assert!(reordered > 100, "{reordered}");
    }

    #[test]
    fn a_packet_reaches_every_leaf_each_of_its_rays_reaches() {
        // Packets around random rays (one origin, directions spread by up to 2 %), with the same
        // t_max throughout: each ray must meet every primitive its own walk meets, each at most
        // once.
        let (boxes, centroids) = random_boxes(3000, 8);
        let wide = WideBvh::<8>::build(&boxes, &centroids, BuildConfig::BALANCED);
        let mut rng = Pcg64::seed_from_u64(9);
        let (mut partial, mut checked) = (0, 0);
        for k in 0..600 {
            let base = random_ray(&mut rng, k, 15.0);
            let rays: [Ray; PACKET] = std::array::from_fn(|_| {
                let jitter = Vec3::new(
                    rng.gen_range(-0.02..0.02),
                    rng.gen_range(-0.02..0.02),
                    rng.gen_range(-0.02..0.02),
                );
                Ray::new(base.origin, base.dir * (Vec3::ONE + jitter))
            });
            let Some(packet) = PacketBoxRay::new(&rays) else {
                // A zero direction component: batches walk such rays one at a time.
                assert!(k % 4 == 0 || rays.iter().any(|r| r.dir.cmpeq(Vec3::ZERO).any()));
                continue;
            };
            let mut t_max = rays.map(|r| r.t_max);
            let mut reached = vec![Vec::new(); PACKET];
            wide.traverse_packet(
                &packet,
                u32::MAX,
                &mut t_max,
                |range, rs, _| {
                    for (i, prims) in reached.iter_mut().enumerate() {
                        if rs >> i & 1 == 1 {
                            prims.extend(range.clone().map(|p| wide.prim_ids()[p]));
                        }
                    }
                    0
                },
                |_| std::ptr::null(),
            );
            let mut alone_counts = Vec::new();
            for (ray, got) in rays.iter().zip(&mut reached) {
                let mut alone = Vec::new();
                let _ = wide.traverse(&WideRay::new(ray), ray.t_max, |range, _| {
                    alone.extend(range.map(|p| wide.prim_ids()[p]));
                    ControlFlow::Continue(())
                });
                got.sort_unstable();
                assert!(got.windows(2).all(|w| w[0] < w[1]), "a leaf twice");
                assert!(
                    alone.iter().all(|p| got.binary_search(p).is_ok()),
                    "{ray:?}"
                );
                alone_counts.push(alone.len());
                checked += alone.len();
            }
            partial += usize::from(alone_counts.iter().any(|&n| n != alone_counts[0]));
        }
        assert!(checked > 10_000 && partial > 50, "{checked} {partial}");
    }

    #[test]
    fn every_compiled_traversal_visits_the_same_leaves_in_the_same_order() {
        // The x86-64-v3, AVX, SSE and scalar builds of the 8-wide loop: bit-identical box tests,
        // so the same leaves in the same order, and the same shrinking t_max.
        let (boxes, centroids) = random_boxes(3000, 6);
        let wide = WideBvh::<8>::build(&boxes, &centroids, BuildConfig::BALANCED);
        let mut rng = Pcg64::seed_from_u64(7);
        type Visit = fn(&WideBvh<8>, &WideRay, &mut dyn FnMut(Range<usize>, &mut f32));
        #[cfg_attr(
            not(all(target_arch = "x86_64", not(feature = "force-scalar"))),
            allow(unused_mut)
        )]
        let mut ways: Vec<(&str, Visit)> = vec![
            ("scalar", |w, r, f| {
                let _ = w.traverse_with(
                    r,
                    f32::INFINITY,
                    leaf_of(f),
                    |_| std::ptr::null(),
                    crate::simd::box_scalar::<8>,
                );
            }),
            ("entry", |w, r, f| {
                let _ = w.traverse_prefetching(r, f32::INFINITY, leaf_of(f), |_| std::ptr::null());
            }),
        ];
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        {
            ways.push(("sse", |w, r, f| {
                let _ = w.traverse_with(r, f32::INFINITY, leaf_of(f), |_| std::ptr::null(), box8);
            }));
            if std::arch::is_x86_feature_detected!("avx") {
                ways.push(("avx", |w, r, f| {
                    // SAFETY: AVX checked above.
                    let _ = unsafe {
                        w.traverse_avx(r, f32::INFINITY, leaf_of(f), |_| std::ptr::null())
                    };
                }));
            }
            if crate::simd::has_x86_64_v3() {
                ways.push(("v3", |w, r, f| {
                    // SAFETY: the features were checked above.
                    let _ = unsafe {
                        w.traverse_v3(r, f32::INFINITY, leaf_of(f), |_| std::ptr::null())
                    };
                }));
            }
        }
        let mut total = 0;
        for k in 0..2000 {
            // Every second ray walks in node order.
            let ray = WideRay::new(&random_ray(&mut rng, k / 2, 15.0));
            let ray = if k % 2 == 1 { ray.in_node_order() } else { ray };
            let mut seen: Vec<(&str, Vec<(usize, usize)>)> = Vec::new();
            for (name, visit) in &ways {
                let mut leaves = Vec::new();
                // Shrink t_max to the entry of every second leaf, as a closest-hit query would.
                visit(&wide, &ray, &mut |range, t_max| {
                    leaves.push((range.start, range.end));
                    if leaves.len() % 2 == 0 {
                        *t_max = t_max.min(25.0 - leaves.len() as f32);
                    }
                });
                seen.push((name, leaves));
            }
            for (name, leaves) in &seen[1..] {
                assert_eq!(leaves, &seen[0].1, "{name} vs scalar, ray {k}");
            }
            total += seen[0].1.len();
        }
        assert!(
            total > 1000,
            "{total} leaves: the rays should cross the boxes"
        );
    }

    #[test]
    fn runs_of_rays_visit_what_single_walks_visit() {
        // `traverse_each` (each compiled build) against one scalar walk per ray: the same leaves
        // in the same order for every ray of a run, with per-ray bounds, a t_max that shrinks,
        // walks that the leaf closure stops early (any hit) and invalid rays that reach nothing,
        // so that the interleaved walks end at different times; the state starts afresh per ray
        // and each walk is finished once. Runs of rays nearest first, and in node order.
        let (boxes, centroids) = random_boxes(3000, 8);
        let wide = WideBvh::<8>::build(&boxes, &centroids, BuildConfig::BALANCED);
        let mut rng = Pcg64::seed_from_u64(9);
        let rays: Vec<WideRay> = (0..600)
            .map(|k| {
                let mut ray = random_ray(&mut rng, k, 15.0);
                if k % 7 == 3 {
                    ray.dir.y = f32::NAN;
                }
                WideRay::new(&ray)
            })
            .collect();
        runs_visit_what_single_walks_visit::<true>(&wide, &boxes, &centroids, &rays);
        let in_node_order: Vec<WideRay> = rays.iter().map(|r| r.in_node_order()).collect();
        runs_visit_what_single_walks_visit::<false>(&wide, &boxes, &centroids, &in_node_order);
    }

    fn runs_visit_what_single_walks_visit<const NEAREST_FIRST: bool>(
        wide: &WideBvh<8>,
        boxes: &[Aabb],
        centroids: &[Vec3],
        rays: &[WideRay],
    ) {
        let t_max_of = |k: usize| {
            if k.is_multiple_of(3) {
                f32::INFINITY
            } else {
                2.0 + k as f32 * 0.05
            }
        };
        let stop = |k: usize| k.is_multiple_of(5);
        let recorder = || LeafRecorder::<NEAREST_FIRST> {
            rays,
            t_max: t_max_of,
            stop,
            leaves: vec![Vec::new(); rays.len()],
            finished: vec![0; rays.len()],
        };
        let single = single_walks(wide, rays, t_max_of, stop);
        let stops = (0..rays.len()).filter(|&k| single[k].len() >= 3 && stop(k));
        assert!(stops.count() > 20, "some walks must stop early");
        assert!((0..rays.len()).all(|k| k % 7 != 3 || single[k].is_empty()));
        // Runs shorter than the interleaving, and one of odd length.
        for n in [0, 1, 2, 3, 101] {
            let mut run = recorder();
            wide.traverse_each(n, &mut run);
            assert_eq!(run.leaves[..n], single[..n], "run of {n}");
            assert!(run.finished[..n].iter().all(|&f| f == 1), "run of {n}");
            assert!(run.finished[n..].iter().all(|&f| f == 0), "run of {n}");
        }
        // The trait's own loop, which the 4-wide tree uses, against that tree's single walks.
        let wide4 = WideBvh::<4>::build(boxes, centroids, BuildConfig::BALANCED);
        let mut run = recorder();
        wide4.traverse_each(rays.len(), &mut run);
        assert_eq!(run.leaves, single_walks(&wide4, rays, t_max_of, stop));
        assert!(run.finished.iter().all(|&f| f == 1));
        #[cfg_attr(
            not(all(target_arch = "x86_64", not(feature = "force-scalar"))),
            allow(unused_mut)
        )]
        let mut ways = vec!["entry"];
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        {
            ways.push("sse");
            if std::arch::is_x86_feature_detected!("avx") {
                ways.push("avx");
            }
            if crate::simd::has_x86_64_v3() {
                ways.push("v3");
            }
        }
        for way in ways {
            let mut run = recorder();
            let n = rays.len();
            match way {
                "entry" => wide.traverse_each(n, &mut run),
                #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
                "sse" => wide.traverse_each_with(n, &mut run, box8),
                #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
                // SAFETY: AVX was checked when the ways were listed.
                "avx" => unsafe { wide.traverse_each_avx(n, &mut run) },
                #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
                // SAFETY: x86-64-v3 was checked when the ways were listed.
                "v3" => unsafe { wide.traverse_each_v3(n, &mut run) },
                _ => unreachable!(),
            }
            for (k, (got, want)) in run.leaves.iter().zip(&single).enumerate() {
                assert_eq!(got, want, "{way}, ray {k}");
            }
            assert!(run.finished.iter().all(|&f| f == 1), "{way}");
        }
    }

    /// Each ray's leaves in one scalar walk of `tree` ([`record_leaf`], bound `t_max(k)`).
    fn single_walks<const W: usize>(
        tree: &WideBvh<W>,
        rays: &[WideRay],
        t_max: fn(usize) -> f32,
        stop: fn(usize) -> bool,
    ) -> Vec<Vec<(usize, usize)>> {
        (0..rays.len())
            .map(|k| {
                let mut leaves = Vec::new();
                let _ = tree.traverse_with(
                    &rays[k],
                    t_max(k),
                    |range, t| record_leaf(k, stop, &mut leaves, range, t),
                    |_| std::ptr::null(),
                    crate::simd::box_scalar::<W>,
                );
                leaves
            })
            .collect()
    }

    #[test]
    fn ordered_bits_sort_like_the_floats() {
        let values = [
            f32::NEG_INFINITY,
            -1e30,
            -1.0,
            -1e-30,
            -f32::MIN_POSITIVE / 2.0,
            -0.0,
            0.0,
            f32::MIN_POSITIVE / 2.0,
            1e-30,
            1.0,
            1.5,
            1e30,
            f32::MAX,
            f32::INFINITY,
        ];
        for pair in values.windows(2) {
            assert!(
                ordered_bits(pair[0]) < ordered_bits(pair[1]),
                "{} < {}",
                pair[0],
                pair[1]
            );
        }
    }

    fn leaf_of(
        f: &mut dyn FnMut(Range<usize>, &mut f32),
    ) -> impl FnMut(Range<usize>, &mut f32) -> ControlFlow<()> + '_ {
        move |range, t_max| {
            f(range, t_max);
            ControlFlow::Continue(())
        }
    }

    /// Every lane box equals the union of what is under it (refit leaves no slack).
    fn assert_tight<const W: usize>(wide: &WideBvh<W>, boxes: &[Aabb]) {
        for node in &wide.nodes {
            for lane in 0..W {
                let expected = if node.is_leaf(lane) {
                    let first = node.index[lane] as usize;
                    wide.prim_ids[first..first + node.count[lane] as usize]
                        .iter()
                        .fold(Aabb::EMPTY, |b, &p| b.union(boxes[p as usize]))
                } else if node.is_interior(lane) {
                    wide.nodes[node.index[lane] as usize].bounds()
                } else {
                    Aabb::EMPTY
                };
                assert_eq!(node.child_bounds(lane), expected);
            }
        }
    }

    #[test]
    fn refit_gives_tight_boxes_and_stays_valid() {
        refit_gives_tight_boxes_and_stays_valid_w::<4>();
        refit_gives_tight_boxes_and_stays_valid_w::<8>();
    }

    fn refit_gives_tight_boxes_and_stays_valid_w<const W: usize>()
    where
        WideBvh<W>: Traverse,
    {
        let (boxes, centroids) = random_boxes(2000, 6);
        let mut wide = WideBvh::<W>::build(&boxes, &centroids, BuildConfig::BALANCED);
        assert_tight(&wide, &boxes);
        let built = wide.nodes.clone();
        wide.refit(&boxes);
        assert_eq!(
            wide.nodes, built,
            "refit with unchanged boxes changes nothing"
        );
        let moved: Vec<Aabb> = boxes
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let d = Vec3::new((i % 7) as f32, (i % 3) as f32 * -2.0, 0.5);
                Aabb::new(b.min + d, b.max + d)
            })
            .collect();
        assert!(wide.validate(&moved).is_err());
        wide.refit(&moved);
        assert_eq!(wide.validate(&moved), Ok(()));
        assert_tight(&wide, &moved);
    }

    #[test]
    fn validate_names_each_corruption() {
        validate_names_each_corruption_w::<4>();
        validate_names_each_corruption_w::<8>();
    }

    fn validate_names_each_corruption_w<const W: usize>()
    where
        WideBvh<W>: Traverse,
    {
        let (boxes, centroids) = random_boxes(300, 7);
        let wide = WideBvh::<W>::build(&boxes, &centroids, BuildConfig::FAST);
        assert_eq!(wide.validate(&boxes), Ok(()));
        let leaf_at = |w: &WideBvh<W>| {
            w.nodes
                .iter()
                .enumerate()
                .find_map(|(i, n)| (0..W).find(|&l| n.is_leaf(l)).map(|l| (i, l)))
                .unwrap()
        };

        let mut shrunk = wide.clone();
        let (i, l) = leaf_at(&shrunk);
        let b = shrunk.nodes[i].child_bounds(l);
        shrunk.nodes[i].set_child_bounds(l, Aabb::new(b.min, b.min));
        assert!(matches!(
            shrunk.validate(&boxes),
            Err(ValidationError::PrimOutside { .. })
        ));

        let mut misaligned = wide.clone();
        let (i, l) = leaf_at(&misaligned);
        misaligned.nodes[i].index[l] += 1;
        assert!(matches!(
            misaligned.validate(&boxes),
            Err(ValidationError::LeafRange { .. })
        ));

        let mut dup = wide.clone();
        let real: Vec<usize> = (0..dup.prim_ids.len())
            .filter(|&p| dup.prim_ids[p] != WideBvh::<W>::PADDING)
            .collect();
        dup.prim_ids[real[0]] = dup.prim_ids[real[1]];
        assert!(matches!(
            dup.validate(&boxes),
            Err(ValidationError::Permutation { .. })
        ));

        let mut backwards = wide.clone();
        let lane = (0..W).find(|&l| backwards.nodes[0].is_interior(l)).unwrap();
        let child = backwards.nodes[0].index[lane] as usize;
        let grand = (0..W).find(|&l| backwards.nodes[child].is_interior(l));
        if let Some(g) = grand {
            backwards.nodes[child].index[g] = child as u32;
            assert!(matches!(
                backwards.validate(&boxes),
                Err(ValidationError::Layout { .. })
            ));
        }

        let mut grown = wide.clone();
        grown.nodes[child].bounds[1][0] += 100.0;
        assert!(matches!(
            grown.validate(&boxes),
            Err(ValidationError::ChildOutside { .. })
        ));

        assert!(matches!(
            wide.validate(&boxes[1..]),
            Err(ValidationError::BoxCount { .. })
        ));
    }
}
