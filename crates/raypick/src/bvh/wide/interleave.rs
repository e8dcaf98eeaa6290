//! The walks of a run of rays ([`super::Traverse::traverse_each`]), three at a time, one turn of
//! each in rotation.
//!
//! An incoherent walk mostly waits: for its next node or leaf (a likely cache miss) and along the
//! chain node test → chosen child → next node. Three independent walks taking turns fill that
//! time, the software form of the latency hiding a GPU gets from its warps: each walk's turn asks
//! for the data of what it goes on with and tests it only at its next turn
//! ([`Pace::NextTurn`]), when the other two walks' turns have given the memory time to answer.
//! Each walk computes exactly what a single walk computes, turn for turn; only the interleaving of
//! the turns differs, so every ray's leaves, their order and its answer are the same.

use std::ops::{ControlFlow, Range};

use glam::Vec3;

use super::node::NodeLayout;
use super::walk::{Cursor, Order, Pace, WalkStack, Walked, WideRay};
use crate::simd::{BoxHits, BoxRay};
use crate::Ray;

/// A run of rays for [`super::Traverse::traverse_each`]: each ray's set-up, its leaves and its end.
/// Implementations mark the methods `#[inline(always)]`, so that they are compiled into the loop
/// with its CPU features.
pub trait RayRun {
    /// The order in which every walk of the run takes hit children: a constant of the compiled
    /// loop, so walks in node order carry no ordering code.
    const ORDER: Order;
    /// The caller's state for one ray's walk.
    type State;
    /// Ray `i`: its prepared ray, its `t_max` and its state.
    fn start(&self, i: usize) -> (WideRay, f32, Self::State);
    /// A leaf that the walk of `state` reaches: the `leaf` of
    /// [`super::Traverse::traverse_prefetching`] (`Break` ends this ray's walk).
    fn leaf(
        &self,
        state: &mut Self::State,
        range: Range<usize>,
        t_max: &mut f32,
    ) -> ControlFlow<()>;
    /// Where the data of the leaf starting at position `first` lies, for the walk to prefetch: the
    /// `leaf_data` of [`super::Traverse::traverse_prefetching`].
    fn leaf_data(&self, first: usize) -> *const u8;
    /// Ray `i`'s walk is over.
    fn finish(&mut self, i: usize, state: Self::State);
}

/// One of the walks that [`traverse_nodes_each`] interleaves.
struct Walk {
    ray: WideRay,
    at: Cursor,
    stack: WalkStack,
}

/// The loop of [`super::Traverse::traverse_each`] over any node layout: the rays' walks three at
/// a time, one turn of each in rotation, a finished walk's place taken by the next ray. Inlined
/// into each compiled entry point, so the loop and the walks are one function.
#[inline(always)]
pub(crate) fn traverse_nodes_each<N, const W: usize, R, B>(
    nodes: &[N],
    n: usize,
    run: &mut R,
    boxes: B,
) where
    N: NodeLayout,
    R: RayRun,
    B: Fn(&N, &BoxRay, f32) -> BoxHits<W>,
{
    // The next ray to start.
    let mut next = 0;
    // Each walk's stack stays in place (kilobytes); `start_walk` fills in the rest. A slot without
    // a state is idle: no ray was left for it.
    let idle = || -> (Walk, Option<(R::State, usize)>) {
        let walk = Walk {
            ray: WideRay::new(&Ray::new(Vec3::ZERO, Vec3::X)),
            at: Cursor::IDLE,
            stack: WalkStack::new(),
        };
        (walk, None)
    };
    let [mut first, mut second, mut third] = [idle(), idle(), idle()];
    first.1 = start_walk(nodes, n, &mut next, run, &mut first.0);
    second.1 = start_walk(nodes, n, &mut next, run, &mut second.0);
    third.1 = start_walk(nodes, n, &mut next, run, &mut third.0);
    // The slots take turns by rotating references: no loop over the slots, whose exit branch the
    // walks' own branches would make unpredictable.
    let (mut current, mut other, mut last) = (&mut first, &mut second, &mut third);
    loop {
        let (walk, slot) = &mut *current;
        if let Some((state, _)) = slot {
            let walked = walk.at.step(
                &walk.ray,
                R::ORDER,
                Pace::NextTurn,
                &mut walk.stack,
                nodes,
                &mut leaf_fn(
                    #[inline(always)]
                    |range, t_max| run.leaf(state, range, t_max),
                ),
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
/// that it is always inlined, compiled with the caller's CPU features.
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

/// `leaf` itself: a call argument, where a closure may carry `#[inline(always)]`, whose result
/// the walk borrows (`&mut`) for its step.
#[inline(always)]
fn leaf_fn<F: FnMut(Range<usize>, &mut f32) -> ControlFlow<()>>(leaf: F) -> F {
    leaf
}
