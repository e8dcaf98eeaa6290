//! Ordered, robust traversal with a leaf closure.
//!
//! [`Bvh::traverse`] walks the tree near child first (the child whose box the ray enters first), with
//! a fixed-size stack of [`MAX_DEPTH`] entries that remembers each deferred node's entry distance, so a
//! node is skipped when the closure has shrunk `t_max` below it. The closure receives each reached
//! leaf's range of positions in [`Bvh::prim_ids`] and the current `t_max`, which it may lower (closest
//! hit) or leave alone (all hits); it returns [`ControlFlow::Break`] to stop (any hit).
//!
//! ## Robustness
//! Box tests are Ize's conservative slab test (Ize, "Robust BVH Ray Traversal", JCGT 2(2), 2013): the
//! far distance is pushed out by `2γ(3)` of its magnitude, which covers the rounding of
//! `(bound - origin) · inv_dir`, so a box is never missed when the ray touches it, and a primitive the
//! watertight kernel hits is reached. When every component of `1/dir` is finite the test runs on
//! `Vec3A` lanes with no NaN possible; otherwise (a zero or denormal direction component) a scalar twin
//! treats the `0 · ∞` NaN of an origin on a slab plane as "this axis constrains nothing", as
//! [`crate::Aabb::intersect_slabs`] does.

use std::ops::{ControlFlow, Range};

use glam::Vec3A;

use super::{Bvh, Node, MAX_DEPTH};
use crate::geom::aabb::gamma;
use crate::Ray;

/// `2γ(3)`: the relative enlargement of the far slab distance (Ize 2013, eq. 1).
const FAR_PAD: f32 = 2.0 * gamma(3);

/// Relative enlargement (`2⁻¹⁶ ≈ 1.5e-5`) of the closure's `t_max` when it prunes nodes. A primitive
/// hit at exactly `t_max` (a tie, e.g. the two faces of a double-sided wall) must still be reached so
/// the caller can break the tie by id, but the box entry distance carries the rounding of the slab
/// test (`γ(3) ≈ 1.8e-7` relative) and the primitive's `t` its kernel's (a few ulps for well-shaped
/// triangles): 2⁻¹⁶ covers both with a wide margin and costs a negligible amount of extra visits.
const PRUNE_PAD: f32 = 1.0 / 65536.0;

/// The bound a walk prunes boxes with: `t_max` padded by [`PRUNE_PAD`], and at most `f32::MAX`.
/// Hits have finite `t`, so a box entered at `+∞` holds none: a ray whose direction is so small
/// that every reciprocal overflows (denormal components) enters every box ahead of it at `+∞`,
/// and without the cap an unbounded walk would visit every one of them.
#[inline(always)]
pub(crate) fn prune_bound(t_max: f32) -> f32 {
    (t_max + t_max.abs() * PRUNE_PAD).min(f32::MAX)
}

/// A ray prepared for box tests: origin, reciprocal direction and `t_min`, computed once per ray.
#[derive(Clone, Copy, Debug)]
pub struct BvhRay {
    /// Ray origin.
    pub origin: Vec3A,
    /// `1 / dir` per component (`±∞` for zero components).
    pub inv_dir: Vec3A,
    /// Smallest accepted `t`.
    pub t_min: f32,
    /// `true` when `inv_dir` is finite, so the lane-wise slab test cannot produce NaN.
    finite: bool,
    /// `false` for rays that are not [`Ray::is_valid`]: they reach no leaf.
    valid: bool,
}

impl BvhRay {
    /// Prepares `ray` (its `t_max` is passed to [`Bvh::traverse`] separately, since it shrinks).
    #[inline]
    pub fn new(ray: &Ray) -> Self {
        let inv_dir = Vec3A::from(ray.dir).recip();
        Self {
            origin: ray.origin.into(),
            inv_dir,
            t_min: ray.t_min,
            finite: inv_dir.is_finite(),
            valid: ray.is_valid(),
        }
    }
}

/// Lane-wise conservative slab test: the entry distance, or `None`. Requires a finite `inv_dir`.
#[inline(always)]
fn slabs_lanes(node: &Node, ray: &BvhRay, t_max: f32) -> Option<f32> {
    let min = Vec3A::from_array(node.min);
    let max = Vec3A::from_array(node.max);
    let t0 = (min - ray.origin) * ray.inv_dir;
    let t1 = (max - ray.origin) * ray.inv_dir;
    let near = t0.min(t1).max_element().max(ray.t_min);
    let far = t0.max(t1).min_element();
    let far = (far + far.abs() * FAR_PAD).min(t_max);
    (near <= far).then_some(near)
}

/// Scalar twin for rays with infinite `inv_dir` components: NaN (origin on a slab plane, direction
/// parallel to it) means the axis does not constrain `t`.
#[inline(always)]
fn slabs_scalar(node: &Node, ray: &BvhRay, t_max: f32) -> Option<f32> {
    let mut near = ray.t_min;
    let mut far = t_max;
    for axis in 0..3 {
        let a = (node.min[axis] - ray.origin[axis]) * ray.inv_dir[axis];
        let b = (node.max[axis] - ray.origin[axis]) * ray.inv_dir[axis];
        let (lo, hi) = if a <= b {
            (a, b)
        } else if b < a {
            (b, a)
        } else {
            continue;
        };
        near = near.max(lo);
        // hi = -∞ (a parallel axis with the box entirely behind the origin's coordinate) must stay
        // -∞: padding it would give -∞ + ∞ = NaN, which f32::min ignores.
        far = far.min(if hi.is_finite() {
            hi + hi.abs() * FAR_PAD
        } else {
            hi
        });
    }
    (near <= far).then_some(near)
}

/// Node `i` of a built BVH, without a bounds check on the hot path.
///
/// Every index the traversal follows comes from the builder (the root, `i + 1` and `right_child()` of
/// interior nodes), which lays out children inside the array; `nodes` is private to the crate and
/// only `Bvh::build` creates it (refit changes boxes, never indices), and [`Bvh::validate`] checks the
/// layout in the tests. With the `force-scalar` feature (the spec twin) the access is checked.
#[inline(always)]
fn node_at(nodes: &[Node], i: usize) -> &Node {
    debug_assert!(i < nodes.len());
    #[cfg(not(feature = "force-scalar"))]
    {
        // SAFETY: `i < nodes.len()` by the builder's layout invariant described above.
        unsafe { nodes.get_unchecked(i) }
    }
    #[cfg(feature = "force-scalar")]
    {
        &nodes[i]
    }
}

impl Bvh {
    /// Visits, near child first, every leaf whose box the ray reaches within `[ray.t_min, t_max]`,
    /// calling `leaf(range, &mut t_max)` with the leaf's positions in [`Bvh::prim_ids`]. The closure
    /// may lower `t_max` (nodes entered beyond it are then skipped) and returns
    /// [`ControlFlow::Break`] to stop; `traverse` returns what stopped it. Rays that are not valid
    /// reach nothing.
    ///
    /// ```
    /// use std::ops::ControlFlow;
    /// use raypick::{bvh::{Bvh, BvhRay, BuildConfig}, glam::Vec3, Aabb, Ray};
    /// let boxes: Vec<Aabb> = (0..8)
    ///     .map(|i| Aabb::new(Vec3::new(i as f32, 0.0, 0.0), Vec3::new(i as f32 + 0.5, 1.0, 1.0)))
    ///     .collect();
    /// let centroids: Vec<Vec3> = boxes.iter().map(Aabb::center).collect();
    /// let bvh = Bvh::build(&boxes, &centroids, BuildConfig::default());
    /// let ray = Ray::new(Vec3::new(-1.0, 0.5, 0.5), Vec3::X);
    /// let mut reached = Vec::new();
    /// let _ = bvh.traverse(&BvhRay::new(&ray), ray.t_max, |range, _t_max| {
    ///     reached.extend(range.map(|i| bvh.prim_ids()[i]));
    ///     ControlFlow::Continue(())
    /// });
    /// reached.sort();
    /// assert_eq!(reached, (0..8).collect::<Vec<u32>>());
    /// ```
    #[inline]
    pub fn traverse<F>(&self, ray: &BvhRay, t_max: f32, leaf: F) -> ControlFlow<()>
    where
        F: FnMut(Range<usize>, &mut f32) -> ControlFlow<()>,
    {
        if !ray.valid || self.nodes.is_empty() {
            return ControlFlow::Continue(());
        }
        if ray.finite {
            self.traverse_with(ray, t_max, leaf, slabs_lanes)
        } else {
            self.traverse_with(ray, t_max, leaf, slabs_scalar)
        }
    }

    #[inline(always)]
    fn traverse_with<F, S>(
        &self,
        ray: &BvhRay,
        mut t_max: f32,
        mut leaf: F,
        slabs: S,
    ) -> ControlFlow<()>
    where
        F: FnMut(Range<usize>, &mut f32) -> ControlFlow<()>,
        S: Fn(&Node, &BvhRay, f32) -> Option<f32>,
    {
        let nodes = &self.nodes[..];
        let mut prune = prune_bound(t_max);
        if slabs(&nodes[0], ray, prune).is_none() {
            return ControlFlow::Continue(());
        }
        // Deferred far children and their entry distances. Each level pushes at most one, and the
        // builder bounds the depth by MAX_DEPTH.
        let mut stack = [(0u32, 0f32); MAX_DEPTH];
        let mut sp = 0usize;
        let mut index = 0usize;
        loop {
            let node = node_at(nodes, index);
            if node.is_leaf() {
                leaf(node.prim_range(), &mut t_max)?;
                prune = prune_bound(t_max);
            } else {
                let (l, r) = (index + 1, node.right_child());
                let hl = slabs(node_at(nodes, l), ray, prune);
                let hr = slabs(node_at(nodes, r), ray, prune);
                match (hl, hr) {
                    (Some(tl), Some(tr)) => {
                        let (near, far, t_far) = if tl <= tr { (l, r, tr) } else { (r, l, tl) };
                        stack[sp] = (far as u32, t_far);
                        sp += 1;
                        index = near;
                        continue;
                    }
                    (Some(_), None) => {
                        index = l;
                        continue;
                    }
                    (None, Some(_)) => {
                        index = r;
                        continue;
                    }
                    (None, None) => {}
                }
            }
            // Pop the nearest deferred node that the (possibly shrunk) t_max still reaches.
            loop {
                if sp == 0 {
                    return ControlFlow::Continue(());
                }
                sp -= 1;
                let (next, t_near) = stack[sp];
                if t_near <= prune {
                    index = next as usize;
                    break;
                }
            }
        }
    }
}
