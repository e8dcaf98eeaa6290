//! The packet walk: up to [`PACKET`] coherent rays (a camera's neighbouring pixels) through one
//! tree together, one node test for all of them (Wald, Slusallek, Benthin, Wagner, "Interactive
//! Rendering with Coherent Ray Tracing", EG 2001; the interval test in the spirit of Reshetov,
//! Soupikov, Hurley, "Multi-Level Ray Tracing Algorithm", SIGGRAPH 2005).
//!
//! The node test ([`PacketBoxRay`]) is conservative bit for bit for every ray it was made of, so
//! each ray reaches at least the leaves its own walk reaches, and the leaf closure meets each ray
//! on its own: the answers are a single walk's. The per-node work (load, test, ordering, stack)
//! is paid once per packet instead of once per ray.

use std::ops::Range;

use arrayvec::ArrayVec;

use super::node::{Child, NodeLayout, WideNode};
use super::order::{far_first, far_first4, key_lane};
use super::walk::{node_at, prefetch_child, stack_size};
use super::WideBvh;
use crate::bvh::traverse::prune_bound;
use crate::simd::{
    dispatch, lanes_max, lanes_reaching, packet_box8_on, prefetch, BoxHits, PacketBoxRay,
};

/// Rays per packet of [`WideBvh::traverse_packet`]: one bit each in a `u32` ray mask.
pub const PACKET: usize = 8;

/// The packet loop of [`WideBvh::traverse_packet`] over any wide node type (see
/// [`super::walk::traverse_nodes`]): one node test for the whole packet (`boxes`, conservative for
/// each ray: [`PacketBoxRay`]), the rays of a child being those of its parent whose bound still
/// reaches the child's smallest entry distance; each ray meets the triangles of a leaf on its own.
#[inline(always)]
pub(super) fn traverse_packet_nodes<N, const W: usize, F, P, B>(
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
    N: NodeLayout,
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
    // Deferred children: (child, rays, smallest entry distance of the packet).
    let mut stack: ArrayVec<(Child, u32, f32), { stack_size(8) }> = ArrayVec::new();
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
        #[cfg(test)]
        super::visits::node();
        let hits = boxes(node, packet, bound(&prune, node_rays));
        let mut mask = hits.mask;
        let defer = |stack: &mut ArrayVec<(Child, u32, f32), { stack_size(8) }>, lane: usize| {
            let child = node.child(lane);
            prefetch_child(nodes, child, &leaf_data);
            stack.push((child, node_rays, hits.t_near[lane]));
        };
        if mask != 0 {
            // Nearest child first, as in the single-ray loop, and ordered as there: two hit
            // children by one comparison and a select, three or four by the four-key network,
            // five or more by the eight-key one.
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
                let child = node.child(next_lane);
                if !child.is_leaf() {
                    index = child.index as usize;
                    node_rays = rays;
                    continue;
                }
                active &= !leaf(child.range(), rays, t_max);
                lower(&mut prune, t_max);
            }
        }
        // Pop the nearest deferred child that one of its rays still reaches.
        loop {
            if active == 0 {
                return;
            }
            let Some((child, rays, t_near)) = stack.pop() else {
                return;
            };
            let rays = reaching(&prune, rays & active, t_near);
            if rays == 0 {
                continue;
            }
            if !child.is_leaf() {
                index = child.index as usize;
                node_rays = rays;
                break;
            }
            active &= !leaf(child.range(), rays, t_max);
            lower(&mut prune, t_max);
        }
    }
}

impl WideBvh<8> {
    /// [`Traverse::traverse_prefetching`](super::Traverse::traverse_prefetching) for up to
    /// [`PACKET`] rays at once, bit `i` of `active` standing for ray `i` of the packet (the
    /// caller's numbering): each node is loaded, tested and its children ordered once for all of
    /// them, which is where coherent rays (one camera's neighbouring pixels) spend most of a
    /// single-ray walk. The node test is the packet's
    /// ([`PacketBoxRay`]: conservative, bit for bit, for every ray it was made of), so each ray
    /// reaches every leaf its own walk would reach, and more; a child is dropped for ray `i` only
    /// when the packet's entry distance into it (at most the ray's) is beyond `t_max[i]`. Children
    /// go nearest first by the packet's entry distance, an order that differs from the single-ray
    /// walk's, so a closest-hit caller must break ties by id (the scene does).
    ///
    /// `leaf(range, rays, t_max)` is called with the leaf's positions, the mask of the rays that may
    /// reach it and every ray's bound (it may lower those of `rays`), and returns the mask of the
    /// rays it finished (any-hit queries), which the walk then drops. The leaf closure decides for
    /// each ray on its own (the mesh runs each ray's SIMD triangle test, and the kernel on the
    /// lanes that test leaves undecided).
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
        let active = active & ((1 << PACKET) - 1);
        dispatch(
            #[inline(always)]
            |isa| {
                traverse_packet_nodes(
                    &self.nodes,
                    packet,
                    active,
                    t_max,
                    leaf,
                    leaf_data,
                    #[inline(always)]
                    |node: &WideNode<8>, r, t| packet_box8_on(isa, &node.bounds, r, t),
                )
            },
        );
    }
}
