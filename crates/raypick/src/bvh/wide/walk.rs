//! The walk of one ray through a wide tree: a [`Cursor`] (the child it visits next, its bound)
//! and a stack of deferred children, advanced one turn at a time by [`Cursor::step`]. The single
//! walk ([`traverse_nodes`]) runs the turns back to back; the interleaved walks of a batch
//! ([`super::interleave`]) run the same turns of three walks in rotation.
//!
//! The walk is Ize's robust traversal ("Robust BVH Ray Traversal", JCGT 2(2), 2013): the node test
//! is conservative, so a ray reaches every leaf whose box it touches within `[t_min, t_max]`; a
//! deferred child is skipped when the leaf closure has shrunk `t_max` below its entry distance
//! ([`prune_bound`], which pads `t_max` by the test's rounding).

use std::ops::{ControlFlow, Range};

use arrayvec::ArrayVec;

use super::node::{Child, NodeLayout};
use super::order::{far_first, far_first4, key_lane, nearer_of_two};
use crate::bvh::traverse::prune_bound;
use crate::bvh::MAX_DEPTH;
use crate::simd::{prefetch, prefetch_lines, BoxHits, BoxRay};
use crate::Ray;

/// A ray prepared for a wide tree's walks (computed once per ray).
#[derive(Clone, Copy, Debug)]
pub struct WideRay {
    pub(super) boxes: BoxRay,
    pub(super) valid: bool,
}

impl WideRay {
    /// Prepares `ray` (its `t_max` is passed to the walk separately, since it shrinks).
    #[inline]
    pub fn new(ray: &Ray) -> Self {
        Self {
            boxes: BoxRay::new(ray.origin.to_array(), ray.dir.to_array(), ray.t_min),
            valid: ray.is_valid(),
        }
    }
}

/// The order in which a walk takes the hit children of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Nearest entry distance first: for closest-hit queries, whose `t_max` shrinks with each hit
    /// and prunes what lies behind.
    NearestFirst,
    /// The node's lane order (decreasing chance to stop a ray per unit of work, see
    /// `super::occlusion`): for walks that need any leaf or every leaf (any hit, all hits,
    /// counts). The leaves reached are the same; the walk skips the sort, and takes first the
    /// child where an any-hit walk most likely ends soonest.
    NodeOrder,
}

/// When a walk tests the child it goes on with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pace {
    /// A leaf at once, then the walk goes on to the next node: a lone walk has nothing to overlap
    /// a wait with.
    Now,
    /// Whatever the walk goes on with, node or leaf, is only asked for from memory, and tested at
    /// the walk's next turn ([`Cursor::next_turn`]) while the other interleaved walks take theirs.
    NextTurn,
}

/// Entries of a walk's stack: every node visit pops one entry and pushes at most `width` (the
/// nodes with at most two hit children push both candidates, see [`Cursor::step`]), and the tree
/// is at most [`MAX_DEPTH`] nodes deep.
pub(super) const fn stack_size(width: usize) -> usize {
    (width - 1) * MAX_DEPTH + width
}

/// The stack of one walk: deferred children and their entry distances. An `ArrayVec` rather than
/// an array, so that nothing is zeroed per ray.
pub(super) type WalkStack = ArrayVec<(Child, f32), { stack_size(8) }>;

/// Where one walk stands between two turns: the child it visits next and its bound. Small and
/// plain, so that a single walk ([`traverse_nodes`]) keeps it in registers; the deferred children
/// are a [`WalkStack`] beside it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Cursor {
    /// The child the next turn visits: a node to test, or a leaf whose data the last turn asked
    /// for ([`Pace::NextTurn`]).
    pub(super) next: Child,
    pub(super) t_max: f32,
    /// [`prune_bound`] of `t_max`: entry distances beyond it cannot matter.
    pub(super) prune: f32,
}

/// What a [`Cursor::step`] left.
pub(super) enum Walked {
    /// The walk goes on at [`Cursor::next`].
    Going,
    /// The walk is over: `Continue` when every leaf it reaches was seen, `Break` when the leaf
    /// closure stopped it.
    Over(ControlFlow<()>),
}

impl Cursor {
    /// A cursor that visits nothing, for a walk slot without a ray.
    pub(super) const IDLE: Self = Self {
        next: Child::NODE_0,
        t_max: 0.0,
        prune: 0.0,
    };

    /// A walk of `ray` from the root with bound `t_max`, or `None` when it reaches nothing (an
    /// invalid ray, an empty tree). The caller empties the walk's stack.
    #[inline(always)]
    pub(super) fn start<N>(nodes: &[N], ray: &WideRay, t_max: f32) -> Option<Self> {
        if !ray.valid || nodes.is_empty() {
            return None;
        }
        let mut at = Self {
            next: Child::NODE_0,
            t_max,
            prune: prune_bound(t_max),
        };
        at.go_to(nodes, 0);
        Some(at)
    }

    /// One turn of `ray`'s walk: tests the leaf chosen by the last turn, or the node [`Self::next`]
    /// with `boxes`, going on with one hit child (the nearest for [`Order::NearestFirst`], else
    /// the first in the node's order) and deferring the others to `stack`, or with the nearest
    /// deferred child when no child is hit. The body of the traversal loop, shared by the single
    /// walk and the interleaved ones; its arguments are the pieces of a walk and of its tree as
    /// those loops hold them.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn step<N, const W: usize, F, P, B>(
        &mut self,
        ray: &WideRay,
        order: Order,
        pace: Pace,
        stack: &mut WalkStack,
        nodes: &[N],
        leaf: &mut F,
        leaf_data: &P,
        boxes: &B,
    ) -> Walked
    where
        F: FnMut(Range<usize>, &mut f32) -> ControlFlow<()>,
        P: Fn(usize) -> *const u8,
        N: NodeLayout,
        B: Fn(&N, &BoxRay, f32) -> BoxHits<W>,
    {
        debug_assert!(stack_size(W) <= stack.capacity());
        let nearest_first = order == Order::NearestFirst;
        // Puts child `lane` of `node` on the stack and asks for its data (node or leaf) early.
        let defer = |stack: &mut WalkStack, node: &N, lane: usize, t_near: f32| {
            let child = node.child(lane);
            prefetch_child(nodes, child, leaf_data);
            stack.push((child, t_near));
        };
        if self.next.is_leaf() {
            // The leaf chosen by the last turn, whose data was asked for then.
            let child = std::mem::replace(&mut self.next, Child::NODE_0);
            if self.test_leaf(child, leaf).is_break() {
                return Walked::Over(ControlFlow::Break(()));
            }
            return self.pop(pace, stack, nodes, leaf, leaf_data);
        }
        let node = node_at(nodes, self.next.index as usize);
        #[cfg(test)]
        super::visits::node();
        let hits = boxes(node, &ray.boxes, self.prune);
        let mut mask = hits.mask;
        let rest = mask & mask.wrapping_sub(1);
        if rest & rest.wrapping_sub(1) == 0 {
            // No, one or two hit children, without a branch on how many: both candidates pushed,
            // the farther first (a lone hit twice, no hit a lane that is dropped again), the
            // stack cut back to the hits, and the top popped as after a leaf. The pop's branches
            // then decide, and "is any child hit" and "one or two" are never asked on their own:
            // both are unpredictable for incoherent rays.
            let (near, far) = nearer_of_two(mask, &hits.t_near, nearest_first);
            let len = stack.len();
            defer(stack, node, far, hits.t_near[far]);
            stack.push((node.child(near), hits.t_near[near]));
            // SAFETY: `len + count_ones <= len + 2 = stack.len()`, so the length only drops to
            // entries that were pushed (and `(Child, f32)` needs no drop). `truncate` would
            // branch on whether it drops anything.
            unsafe { stack.set_len(len + mask.count_ones() as usize) };
            return self.pop(pace, stack, nodes, leaf, leaf_data);
        }
        let first_lane = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        // Three or more hits: the child to go on with is the nearest (the others deferred,
        // farthest first). A walk in node order takes the first and defers the others as they
        // come.
        let next_lane = if !nearest_first {
            let mut rest = mask;
            while rest != 0 {
                let lane = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                defer(stack, node, lane, hits.t_near[lane]);
            }
            first_lane
        } else if (mask & (mask - 1)).count_ones() <= 1 {
            // Three or four hits (most nodes with three or more), ordered by the four-key
            // network, farthest first, a missing fourth key 0 (sorted last). The farther ones are
            // deferred, farthest first, and the nearest (key `n - 1`) taken at once; with three
            // hits the third deferred is the nearest, dropped again.
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
        let child = node.child(next_lane);
        if pace == Pace::NextTurn {
            return self.next_turn(nodes, child, leaf_data);
        }
        if !child.is_leaf() {
            return self.go_to(nodes, child.index);
        }
        if self.test_leaf(child, leaf).is_break() {
            return Walked::Over(ControlFlow::Break(()));
        }
        self.pop(pace, stack, nodes, leaf, leaf_data)
    }

    /// Sets `child`, node or leaf, as what the walk's next turn visits, and asks for its data
    /// ([`LEAF_LINES`]: a whole leaf, or a node and a bit) from the address chosen without a
    /// branch. The walk's one branch on leaf or node is then the next turn's.
    #[inline(always)]
    fn next_turn<N, P: Fn(usize) -> *const u8>(
        &mut self,
        nodes: &[N],
        child: Child,
        leaf_data: &P,
    ) -> Walked {
        self.next = child;
        // Both addresses are computed whichever the child is (`wrapping_add`: the unused one
        // stays defined; a prefetch never faults).
        let node = nodes
            .as_ptr()
            .wrapping_add(child.index as usize)
            .cast::<u8>();
        let leaf = leaf_data(child.index as usize);
        prefetch_lines::<LEAF_LINES>(std::hint::select_unpredictable(
            !child.is_leaf(),
            node,
            leaf,
        ));
        Walked::Going
    }

    /// Hands the leaf `child` to `leaf`, which may shrink `t_max`, and lowers `prune` to match
    /// (unless `leaf` stopped the walk). The three places a walk tests a leaf: one chosen by the
    /// last turn, the next child, a popped one.
    #[inline(always)]
    fn test_leaf<F>(&mut self, child: Child, leaf: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Range<usize>, &mut f32) -> ControlFlow<()>,
    {
        // `(*leaf)`: the closure's own `call_mut`, inlined with the walk's CPU features. A call
        // on the reference itself goes through the standard library's `&mut F` forwarding
        // impl, which the compiler may keep out of line, compiled without them: the leaf's AVX
        // intrinsics then become calls (the crossing counts of the parity test ran 4.6× slower).
        (*leaf)(child.range(), &mut self.t_max)?;
        self.prune = prune_bound(self.t_max);
        ControlFlow::Continue(())
    }

    /// Pops the nearest deferred child the (possibly shrunk) `t_max` still reaches: kept for the
    /// next turn ([`Pace::NextTurn`]), or a node gone on to and leaves tested right here (their
    /// data was asked for when they were deferred).
    #[inline(always)]
    fn pop<N, F, P>(
        &mut self,
        pace: Pace,
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
            let Some((child, t_near)) = stack.pop() else {
                return Walked::Over(ControlFlow::Continue(()));
            };
            if t_near > self.prune {
                continue;
            }
            if pace == Pace::NextTurn {
                return self.next_turn(nodes, child, leaf_data);
            }
            if !child.is_leaf() {
                return self.go_to(nodes, child.index);
            }
            if self.test_leaf(child, leaf).is_break() {
                return Walked::Over(ControlFlow::Break(()));
            }
        }
    }

    /// Goes on at node `index`, asking for all its lines at once: the child references (the last
    /// line) are read only after the box test, and would otherwise be a second miss in a row.
    #[inline(always)]
    fn go_to<N>(&mut self, nodes: &[N], index: u32) -> Walked {
        self.next = Child::node(index);
        prefetch(std::slice::from_ref(node_at(nodes, index as usize)));
        Walked::Going
    }
}

/// The single walk over `nodes` (root first, children after their parents) of any node layout,
/// with the node test `boxes` (float rows, quantized rows, SIMD or twin): inlined into each entry
/// point ([`super::Traverse`]).
#[inline(always)]
pub(crate) fn traverse_nodes<N, const W: usize, F, P, B>(
    nodes: &[N],
    ray: &WideRay,
    order: Order,
    t_max: f32,
    mut leaf: F,
    leaf_data: P,
    boxes: B,
) -> ControlFlow<()>
where
    F: FnMut(Range<usize>, &mut f32) -> ControlFlow<()>,
    P: Fn(usize) -> *const u8,
    N: NodeLayout,
    B: Fn(&N, &BoxRay, f32) -> BoxHits<W>,
{
    let Some(mut at) = Cursor::start(nodes, ray, t_max) else {
        return ControlFlow::Continue(());
    };
    let mut stack = WalkStack::new();
    loop {
        let walked = at.step(
            ray,
            order,
            Pace::Now,
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

/// Asks for the data of a deferred child early: its node when it is one, else its leaf
/// (`leaf_data(first)`, the caller's primitives). Which one is picked without a branch, and a
/// fixed [`DEFERRED_LINES`] lines are asked for either way: a branch on leaf or node, or a loop
/// over a leaf's lines, would be unpredictable.
#[inline(always)]
pub(super) fn prefetch_child<N, P: Fn(usize) -> *const u8>(
    nodes: &[N],
    child: Child,
    leaf_data: &P,
) {
    // Both addresses are computed whichever the child is; `wrapping_add` keeps the unused one
    // defined, and a prefetch never faults.
    let node = nodes
        .as_ptr()
        .wrapping_add(child.index as usize)
        .cast::<u8>();
    let leaf = leaf_data(child.index as usize);
    prefetch_lines::<DEFERRED_LINES>(std::hint::select_unpredictable(
        !child.is_leaf(),
        node,
        leaf,
    ));
}

/// Cache lines asked for per deferred child: an 8-wide node (256 bytes), or the first 256 bytes of
/// a leaf's triangle blocks.
const DEFERRED_LINES: usize = 4;

/// Cache lines asked for a leaf that a walk tests at its next turn: every line of the largest
/// leaf, two 160-byte blocks starting halfway into a line (six).
const LEAF_LINES: usize = 6;

/// Node `i`, without a bounds check on the hot path.
///
/// Every index a walk follows is an interior child's `index`, which the builder sets to a node it
/// pushed (refit changes boxes, never indices); the nodes are private to the crate, and
/// `validate` checks the layout in the tests. With the `force-scalar` feature the access is
/// checked.
#[inline(always)]
pub(super) fn node_at<N>(nodes: &[N], i: usize) -> &N {
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
