//! Point queries: the primitives near a point ([`Scene::point_query`], a callback per candidate
//! like Embree's `rtcPointQuery`), and on it the closest point ([`Scene::closest_point`]),
//! distance, inside/outside ([`Scene::contains`]) and signed distance, one point or batches.
//!
//! ## The walk
//! Nearest first, pruned by distance: each child box's squared distance to the query point
//! ([`box_distance_squared`]) is compared with the callback's current radius, the children in
//! reach are taken nearest first and the others deferred; a deferred box is dropped when the radius
//! has shrunk below it. A box is pruned only when it is farther than the radius plus a margin that
//! covers rounding (below), with the squared bound grown by `2⁻¹⁰` (the radius is `√d²` of the
//! best candidate, and squaring it again may round below `d²`), so a primitive at exactly the
//! radius is still offered: the closest
//! point breaks ties between equidistant primitives by the smallest
//! `(top-level geometry id, geometry id, primitive id)`, as ray hits do, and the answer never
//! depends on the tree or the number of threads.
//!
//! Candidates are offered in world space (the space of the scene queried): triangles with their
//! three vertices, spheres with centre and radius. In a tree with spatial splits
//! ([`BuildConfig::spatial_splits`](crate::bvh::BuildConfig)) a triangle sits in several leaves
//! and may be offered once per leaf reached; the closest point is the same either way. The query's box margins:
//! - the meshes' tree is in its local frame (`v - c`, see the [scene docs](super)); the point is
//!   moved once into it, which rounds by at most half an ulp of `|p| + |c|` per axis, so the radius
//!   is padded by `2⁻²⁰·(|p|∞ + |c|∞)` (8 ulps of margin) when it prunes;
//! - boxes inside an instance are moved to world space by transforming their eight corners
//!   ([`transform_box`]) and padded by [`pad_box`] (`2⁻²⁰` of their magnitude), which covers the
//!   rounding of the transform.
//!
//! In a leaf of the scene's own meshes, a block's four triangles are tested at once, first by
//! their boxes, then (for the closest point) by the exact distance of the four-lane kernel
//! ([`triangle_distance_squared4`], bit for bit the scalar kernel's): only a triangle that can
//! reach or tie the best is offered, and with that distance, so that the scalar kernel (for the
//! point and its barycentrics) runs only for a candidate that beats the best; the rest, such as
//! the batch's start triangle met again in its leaf, cost a comparison (1.07–1.15× on the shared
//! models).
//!
//! ## Batches
//! [`Scene::closest_points`] and the other batches answer their points in Morton order, in runs
//! on all cores; each query of a run starts from the triangle that answered the previous point
//! (its exact distance bounds the radius before the walk begins, so the walk prunes at once what
//! it would visit while the radius shrinks: 1.3–1.6× on the shared models). A start is one more
//! candidate: the answer is the least (squared distance, key) over the candidates in reach, in
//! any order, so batches answer as single queries do, for any number of threads (tested, ties
//! included). A run's points are gathered before its walks, and the answers go back to input order
//! by a gather on all cores through the inverse order: reading each point, or writing each answer,
//! at its random input place between walks cost a cache miss per query (the gather of points:
//! 1.03–1.25× on one thread; the gather of answers: about 1.1× more for the conference room's
//! closest points on two).
//!
//! ## Instances: exact world distances
//! An [`Instance`](super::Instance) may scale non-uniformly or mirror, and then distances in its
//! object space are not world distances. The walk does not move the point into object space:
//! it moves each box of the placed scene to world space (a conservative box of the transformed
//! corners, so pruning never drops a primitive in reach), and offers each candidate triangle with
//! its vertices transformed to world space, so the closest point on it is computed in world
//! space by the exact kernel: the answer is the same as for a pre-transformed copy of the mesh,
//! up to the rounding of the vertex transform (a few ulps of the coordinates). A sphere set placed
//! by a similarity (rotation, mirroring, uniform scale, translation) is offered as world spheres;
//! under a non-uniform scale a sphere becomes an ellipsoid, which point queries do not offer.
//!
//! ## Inside, outside and the sign
//! [`InsideMethod::Parity`] (the default) casts one ray from the point and counts its crossings
//! with the half-open edge rule ([`Scene::count_intersections`]): exact for closed, consistently
//! wound meshes and spheres, whatever edges and vertices the ray passes through. The direction is
//! fixed and generic (not in an axis plane), so a ray does not run inside the flat faces of
//! axis-aligned models. [`InsideMethod::WindingNumber`] uses the generalized winding number
//! (see [`super::winding`]), which answers sensibly for meshes with holes and
//! self-intersections. Signed distances are negative inside (Open3D's convention).
//!
//! ## Bad input
//! A point with a NaN or infinite coordinate has no closest point (`None`, distances NaN) and is
//! outside. A scene without primitives answers `None` and an infinite distance.

use std::ops::{ControlFlow, Range};

use glam::{Affine3A, Vec3, Vec4};

use super::geometry::transform_box;
use super::hit::{InstancePath, PathRecord, TopInstance};
use super::order::morton_order;
use super::{pad_box, Accel, Geometry, MeshAccel, MeshBvh, Scene, Spheres, SpheresAccel, TopItem};
use crate::bvh::wide::{NodeLayout, WideTree};
use crate::bvh::{Bvh, MAX_DEPTH};
use crate::geom::closest::{
    box_distance_squared, closest_on_sphere, closest_on_triangle, triangle_distance_squared4,
    Vec3x4,
};
use crate::simd::{Tri4, LANES};
use crate::{Aabb, Ray};

/// A primitive offered to a [`Scene::point_query`] callback, in world space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PointPrim {
    /// A triangle's vertices `v0, v1, v2` (after the instance's transform, so a mirroring instance
    /// reverses the winding as it does for rays).
    Triangle([Vec3; 3]),
    /// A sphere.
    Sphere {
        /// Its centre.
        center: Vec3,
        /// Its radius.
        radius: f32,
    },
}

/// A primitive near the query point ([`Scene::point_query`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointCandidate {
    /// The primitive in world space.
    pub prim_shape: PointPrim,
    /// Primitive index in its geometry.
    pub prim: u32,
    /// Geometry id (in the instanced scene for instanced primitives).
    pub geom: u32,
    /// The instance's id in the queried scene, for instanced primitives.
    pub instance: Option<u32>,
}

impl PointCandidate {
    /// The tie-break key: (top-level geometry id, geometry id, primitive id). Where instances
    /// nest, [`Scene::closest_point`] compares the instance paths between the top-level id and
    /// the geometry id.
    #[inline]
    pub fn key(&self) -> (u32, u32, u32) {
        (self.instance.unwrap_or(self.geom), self.geom, self.prim)
    }
}

/// A primitive near the query point as the walk offers it, with what the walk keeps of the
/// instances it entered (`P`, as the ray queries keep it: see [`PathRecord`]).
#[derive(Clone, Copy, Debug)]
struct Candidate<P> {
    shape: PointPrim,
    prim: u32,
    geom: u32,
    path: P,
    /// The triangle's position in the queried scene's own meshes ([`Seed`]), `u32::MAX` for
    /// other primitives.
    slot: u32,
    /// A lower bound of the candidate's squared distance by the closest-point kernel, where the
    /// walk has one: a leaf's four-lane exact distance ([`lanes_within_radius`]), the scalar
    /// kernel's number bit for bit for a finite triangle, and 0 where a coordinate is NaN. It
    /// lets the closest-point query drop a candidate that cannot beat or win a tie with its best
    /// without running the scalar kernel a second time.
    d2_lower: Option<f32>,
}

impl<P: PathRecord> Candidate<P> {
    /// The order of equidistant candidates, as for ray hits ([`PathRecord::key`]).
    #[inline(always)]
    fn key(&self) -> P::Key {
        self.path.key(self.geom, self.prim)
    }
}

/// The closest point of a scene to a query point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClosestPoint {
    /// The point on the surface, world space.
    pub point: Vec3,
    /// Its distance to the query point.
    pub distance: f32,
    /// Barycentric weight of `v1` (triangles; 0 for spheres).
    pub u: f32,
    /// Barycentric weight of `v2` (triangles; 0 for spheres).
    pub v: f32,
    /// Unit geometric normal: the world winding normal `(v1-v0)×(v2-v0)` of a triangle, outwards
    /// for a sphere.
    pub normal: Vec3,
    /// Primitive index.
    pub prim: u32,
    /// Geometry id (in the instanced scene for instanced primitives).
    pub geom: u32,
    /// Instance id in the queried scene, for instanced primitives. Where instances nest,
    /// [`Scene::closest_point_path`] gives every instance on the way.
    pub instance: Option<u32>,
}

/// How [`Scene::contains`] decides inside from outside.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InsideMethod {
    /// Crossing parity of one ray (half-open edges): exact for closed meshes and spheres, and the
    /// fastest. The default.
    #[default]
    Parity,
    /// The generalized winding number above ½ (Jacobson et al. 2013), with the hierarchical
    /// approximation of Barill et al. 2018 ([`super::winding`]): for meshes that are not closed.
    WindingNumber,
}

/// The parity ray's direction: unit, with no zero component and no two equal ones, so it runs in
/// no axis plane and along no face diagonal of an axis-aligned model.
const PARITY_DIR: Vec3 = Vec3::new(0.538_516_5, 0.620_174_4, 0.570_395_8);

/// Relative pad of the radius against the rounding of the point's move into the meshes' frame
/// (see the module docs).
const FRAME_PAD: f32 = 1.0 / (1 << 20) as f32;

/// Where a walk's boxes and primitives are: moved to world space by adding the frame origin (the
/// scene's own meshes) or by an instance's transform.
#[derive(Clone, Copy, Debug)]
enum Place {
    Shift(Vec3),
    Affine(Affine3A),
}

impl Place {
    /// `point` in the frame of the boxes (the meshes' local frame for a shift, where the walk
    /// moves the point; world space for an affine placement, where it moves the boxes), and the
    /// margin of that move (module docs).
    #[inline(always)]
    fn local(&self, point: Vec3) -> (Vec3, f32) {
        match self {
            Place::Shift(o) => (
                point - *o,
                (point.abs().max_element() + o.abs().max_element()) * FRAME_PAD,
            ),
            Place::Affine(_) => (point, 0.0),
        }
    }

    #[inline(always)]
    fn point(&self, p: Vec3) -> Vec3 {
        match self {
            Place::Shift(o) => p + *o,
            Place::Affine(m) => m.transform_point3(p),
        }
    }
}

/// The state of one point query: the point, the shrinking radius and the callback.
struct Query<F> {
    point: Vec3,
    radius: f32,
    f: F,
    /// Whether the callback keeps only candidates whose exact kernel distance is within the
    /// radius (the closest-point query): the walk may then drop the triangles of a block whose
    /// four-lane exact distance ([`lanes_within_radius`]) is beyond it, before offering any.
    exact: bool,
}

impl<F> Query<F> {
    /// Whether a box at squared distance `d2` (with an absolute rounding `margin`) may hold a
    /// primitive in reach. The closest-point query sets the radius to `√d²` of its best
    /// candidate, and squaring that again may round below `d²`: the bound is grown by `2⁻¹⁰`
    /// (far above those few ulps) plus the smallest normal float (the same where `d²` is
    /// subnormal), so a box holding a primitive that ties with the best is never pruned.
    #[inline(always)]
    fn reaches(&self, d2: f32, margin: f32) -> bool {
        d2 <= self.reach2(margin)
    }

    /// The squared distance [`Query::reaches`] compares with.
    #[inline(always)]
    fn reach2(&self, margin: f32) -> f32 {
        let r = self.radius + margin;
        r * r * (1.0 + 1.0 / 1024.0) + f32::MIN_POSITIVE
    }

    #[inline(always)]
    fn offer<P>(&mut self, c: Candidate<P>) -> ControlFlow<()>
    where
        F: FnMut(&Candidate<P>, &mut f32) -> ControlFlow<()>,
    {
        (self.f)(&c, &mut self.radius)
    }
}

/// Where a closest-point query of a batch starts: the position (slot) in the scene's own meshes
/// of the triangle that answered the batch's previous point. Batches answer their points in
/// Morton order ([`super::order`]), so that triangle is near, and its exact distance bounds the
/// query's radius from the start: the walk prunes at once what it would otherwise visit while
/// its radius shrinks. A seed never changes an answer (see [`Scene::closest_in`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Seed(u32);

impl Seed {
    /// No starting triangle.
    const NONE: Seed = Seed(u32::MAX);
}

impl Default for Seed {
    fn default() -> Self {
        Self::NONE
    }
}

/// Whether a point query walks the trees or offers every primitive (the reference).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Bvh,
    BruteForce,
}

impl Scene {
    /// Offers `callback` every primitive within `radius` of `point` (and possibly some farther
    /// ones), nearest boxes first; the callback may shrink the radius (its second argument) to
    /// prune the rest of the walk, and return `Break` to stop. Like Embree's `rtcPointQuery`; the
    /// closest-point query is built on it. A `radius` of `f32::INFINITY` reaches everything. A point
    /// with a NaN or infinite coordinate, or a NaN or negative radius, reaches nothing.
    ///
    /// ```
    /// use std::ops::ControlFlow;
    /// use raypick::{glam::Vec3, SceneBuilder, Spheres};
    /// let mut b = SceneBuilder::new();
    /// b.add_spheres(Spheres::new(vec![Vec3::ZERO, Vec3::X * 10.0], vec![1.0, 1.0]));
    /// let scene = b.build().unwrap();
    /// let mut near = Vec::new();
    /// scene.point_query(Vec3::new(0.0, 2.0, 0.0), 3.0, |c, _radius| {
    ///     near.push(c.prim);
    ///     ControlFlow::Continue(())
    /// });
    /// assert_eq!(near, [0]);
    /// ```
    pub fn point_query<F>(&self, point: Vec3, radius: f32, mut callback: F)
    where
        F: FnMut(&PointCandidate, &mut f32) -> ControlFlow<()>,
    {
        // The walk composes the transforms on its way down: a candidate needs no more of its
        // instances than the top-level one.
        self.point_walk(
            point,
            radius,
            |c: &Candidate<TopInstance>, radius: &mut f32| {
                let candidate = PointCandidate {
                    prim_shape: c.shape,
                    prim: c.prim,
                    geom: c.geom,
                    instance: c.path.top(),
                };
                callback(&candidate, radius)
            },
            Mode::Bvh,
            false,
        );
    }

    /// The walk of every point query, keeping `P` of the instances it enters; `exact` as
    /// [`Query::exact`].
    fn point_walk<P: PathRecord, F>(
        &self,
        point: Vec3,
        radius: f32,
        callback: F,
        mode: Mode,
        exact: bool,
    ) where
        F: FnMut(&Candidate<P>, &mut f32) -> ControlFlow<()>,
    {
        if !point.is_finite() || radius.is_nan() || radius < 0.0 {
            return;
        }
        let mut q = Query {
            point,
            radius,
            f: callback,
            exact,
        };
        let _ = self.walk_scene(&mut q, None, P::ROOT, mode);
    }

    /// The closest point of the scene to `point` (see the [module docs](self) for ties, instances
    /// and bad input); `None` for an empty scene or a point that is not finite.
    ///
    /// ```
    /// use raypick::{glam::Vec3, SceneBuilder, TriMesh};
    /// let mut b = SceneBuilder::new();
    /// b.add_mesh(TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]));
    /// let scene = b.build().unwrap();
    /// let c = scene.closest_point(Vec3::new(0.25, 0.5, 2.0)).unwrap();
    /// assert_eq!((c.point, c.distance, c.prim), (Vec3::new(0.25, 0.5, 0.0), 2.0, 0));
    /// assert_eq!((c.u, c.v, c.normal), (0.25, 0.5, Vec3::Z));
    /// ```
    pub fn closest_point(&self, point: Vec3) -> Option<ClosestPoint> {
        self.closest_point_within(point, f32::INFINITY)
    }

    /// [`Scene::closest_point`] among the primitives within `radius` of `point`.
    pub fn closest_point_within(&self, point: Vec3, radius: f32) -> Option<ClosestPoint> {
        self.closest_point_in(point, radius, Mode::Bvh, &mut Seed::default())
    }

    /// [`Scene::closest_point`] and the [`InstancePath`] of its primitive: every instance on the
    /// way, outermost first (see [`Scene::intersect_path`]), for scenes whose instances nest.
    /// The closest point is the one [`Scene::closest_point`] returns.
    pub fn closest_point_path(&self, point: Vec3) -> Option<(ClosestPoint, InstancePath)> {
        self.closest_point_path_within(point, f32::INFINITY)
    }

    /// [`Scene::closest_point_path`] among the primitives within `radius` of `point`.
    pub fn closest_point_path_within(
        &self,
        point: Vec3,
        radius: f32,
    ) -> Option<(ClosestPoint, InstancePath)> {
        self.closest_in::<InstancePath>(point, radius, Mode::Bvh, &mut Seed::default())
    }

    /// [`Scene::closest_point_within`] by testing every primitive: the reference the tests hold
    /// the tree walk to (same kernel, no pruning).
    pub fn closest_point_brute_force(&self, point: Vec3, radius: f32) -> Option<ClosestPoint> {
        self.closest_point_in(point, radius, Mode::BruteForce, &mut Seed::default())
    }

    /// [`Scene::closest_in`] with the record this scene needs: the whole path where instances
    /// nest (equidistant candidates are ordered by it), else the top-level instance alone;
    /// starting from `seed` (see [`Seed`]).
    fn closest_point_in(
        &self,
        point: Vec3,
        radius: f32,
        mode: Mode,
        seed: &mut Seed,
    ) -> Option<ClosestPoint> {
        if self.instance_depth() > 1 {
            self.closest_in::<InstancePath>(point, radius, mode, seed)
                .map(|(c, _)| c)
        } else {
            self.closest_in::<TopInstance>(point, radius, mode, seed)
                .map(|(c, _)| c)
        }
    }

    /// The closest point and its primitive's instances as the walk kept them (`P`). The query
    /// starts from `seed`'s triangle (see [`Seed`]) and leaves in it the triangle it answers.
    fn closest_in<P: PathRecord>(
        &self,
        point: Vec3,
        radius: f32,
        mode: Mode,
        seed: &mut Seed,
    ) -> Option<(ClosestPoint, P)> {
        let mut best: Option<(f32, P::Key, ClosestPoint, P, u32)> = None;
        let limit2 = radius * radius;
        let mut consider = |c: &Candidate<P>, radius: &mut f32| {
            // The squared distance a candidate must not exceed: the best so far (equal ones
            // go to the tie-break), or the caller's limit.
            let bound2 = best.as_ref().map_or(limit2, |b| b.0);
            // A lower bound from the walk settles most candidates of a leaf: beyond the best,
            // or level with it and later in the tie-break order (the seed's own triangle, met
            // again in its leaf, is one).
            if let Some(lower) = c.d2_lower {
                if lower > bound2
                    || (lower == bound2 && best.as_ref().is_some_and(|b| c.key() >= b.1))
                {
                    return ControlFlow::Continue(());
                }
            }
            let (on, u, v) = match c.shape {
                PointPrim::Triangle([a, b, cc]) => {
                    // The triangle's box first: a few min/max against the exact kernel's
                    // dozens of operations, and most candidates of a leaf fail it. Its
                    // distance is a lower bound of the triangle's; the relative slack of
                    // 2⁻¹⁰ is far above the rounding of either, so a candidate that could
                    // tie is never dropped, whatever the order of the walk.
                    let d2_box = box_distance_squared(point, a.min(b).min(cc), a.max(b).max(cc));
                    if d2_box > bound2 * (1.0 + 1.0 / 1024.0) {
                        return ControlFlow::Continue(());
                    }
                    let t = closest_on_triangle(point, a, b, cc);
                    (t.point, t.u, t.v)
                }
                PointPrim::Sphere { center, radius } => {
                    (closest_on_sphere(point, center, radius), 0.0, 0.0)
                }
            };
            let d2 = (point - on).length_squared();
            // Against the caller's limit or the best so far, not the shrunk radius: the radius
            // is rounded from the best squared distance, and an equidistant candidate must
            // still reach the tie-break.
            if d2 > bound2 || d2.is_nan() {
                return ControlFlow::Continue(());
            }
            let key = c.key();
            let better = match &best {
                None => true,
                Some((bd2, bkey, ..)) => d2 < *bd2 || (d2 == *bd2 && key < *bkey),
            };
            if better {
                let normal = match c.shape {
                    PointPrim::Triangle([a, b, cc]) => (b - a).cross(cc - a).normalize_or_zero(),
                    PointPrim::Sphere { center, .. } => (on - center).normalize_or_zero(),
                };
                best = Some((
                    d2,
                    key,
                    ClosestPoint {
                        point: on,
                        distance: d2.sqrt(),
                        u,
                        v,
                        normal,
                        prim: c.prim,
                        geom: c.geom,
                        instance: c.path.top(),
                    },
                    c.path,
                    c.slot,
                ));
                *radius = radius.min(d2.sqrt());
            }
            ControlFlow::Continue(())
        };
        // The seed is one more candidate, offered first: the answer is the least (squared
        // distance, key) over every candidate in reach, whatever the order they come in, so a
        // seed only shrinks the radius sooner (see the module docs).
        let mut start = radius;
        let valid = point.is_finite() && radius >= 0.0;
        if let (Some(m), Mode::Bvh, true) = (&self.meshes, mode, valid && seed.0 != Seed::NONE.0) {
            if let Some(c) = m.candidate(seed.0 as usize, Place::Shift(m.offset), P::ROOT) {
                let _ = consider(&c, &mut start);
            }
        }
        self.point_walk(point, start, consider, mode, true);
        if let Some(b) = &best {
            *seed = Seed(b.4);
        }
        best.map(|(_, _, c, path, _)| (c, path))
    }

    /// The distance from `point` to the scene's surface: `+∞` for an empty scene, NaN for a point
    /// that is not finite.
    pub fn distance(&self, point: Vec3) -> f32 {
        self.distance_seeded(point, &mut Seed::default())
    }

    fn distance_seeded(&self, point: Vec3, seed: &mut Seed) -> f32 {
        if !point.is_finite() {
            return f32::NAN;
        }
        self.closest_point_in(point, f32::INFINITY, Mode::Bvh, seed)
            .map_or(f32::INFINITY, |c| c.distance)
    }

    /// Whether `point` is inside the scene's closed surfaces, decided by `method`. A point that
    /// is not finite is outside; a point exactly on the surface may be either.
    ///
    /// ```
    /// use raypick::{glam::Vec3, scene::shapes::cuboid, InsideMethod, SceneBuilder};
    /// let mut b = SceneBuilder::new();
    /// b.add_mesh(cuboid(Vec3::ONE));
    /// let scene = b.build().unwrap();
    /// assert!(scene.contains(Vec3::new(0.5, 0.0, 0.0), InsideMethod::Parity));
    /// assert!(!scene.contains(Vec3::new(1.5, 0.0, 0.0), InsideMethod::WindingNumber));
    /// ```
    pub fn contains(&self, point: Vec3, method: InsideMethod) -> bool {
        if !point.is_finite() {
            return false;
        }
        match method {
            InsideMethod::Parity => self.count_intersections(&Ray::new(point, PARITY_DIR)) % 2 == 1,
            InsideMethod::WindingNumber => self.winding_number(point) > 0.5,
        }
    }

    /// The distance to the surface, negative inside ([`Scene::contains`] with `method`); NaN for
    /// a point that is not finite, `+∞` for an empty scene.
    pub fn signed_distance(&self, point: Vec3, method: InsideMethod) -> f32 {
        self.signed_distance_seeded(point, method, &mut Seed::default())
    }

    fn signed_distance_seeded(&self, point: Vec3, method: InsideMethod, seed: &mut Seed) -> f32 {
        let d = self.distance_seeded(point, seed);
        if d.is_finite() && self.contains(point, method) {
            -d
        } else {
            d
        }
    }

    /// [`Scene::closest_point`] for every point, on all cores (feature `parallel`): the answers
    /// of [`Scene::closest_point`] for any number of threads. The points are answered in Morton
    /// order, each query starting from its predecessor's triangle (see the
    /// [module docs](self#batches)).
    pub fn closest_points(&self, points: &[Vec3]) -> Vec<Option<ClosestPoint>> {
        self.answer_points(points, |p, seed| {
            self.closest_point_in(p, f32::INFINITY, Mode::Bvh, seed)
        })
    }

    /// [`Scene::closest_point_path`] for every point, on all cores, as
    /// [`Scene::closest_points`].
    pub fn closest_point_paths(
        &self,
        points: &[Vec3],
    ) -> Vec<Option<(ClosestPoint, InstancePath)>> {
        self.answer_points(points, |p, seed| {
            self.closest_in::<InstancePath>(p, f32::INFINITY, Mode::Bvh, seed)
        })
    }

    /// [`Scene::distance`] for every point, on all cores, as [`Scene::closest_points`].
    pub fn distances(&self, points: &[Vec3]) -> Vec<f32> {
        self.answer_points(points, |p, seed| self.distance_seeded(p, seed))
    }

    /// [`Scene::signed_distance`] for every point, on all cores, as [`Scene::closest_points`].
    pub fn signed_distances(&self, points: &[Vec3], method: InsideMethod) -> Vec<f32> {
        self.answer_points(points, |p, seed| {
            self.signed_distance_seeded(p, method, seed)
        })
    }

    /// [`Scene::contains`] for every point, on all cores. In input order: a parity ray is
    /// cheap enough that sorting the points costs more than their order saves.
    pub fn contains_batch(&self, points: &[Vec3], method: InsideMethod) -> Vec<bool> {
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            points
                .par_iter()
                .with_min_len(RUN)
                .map(|&p| self.contains(p, method))
                .collect()
        }
        #[cfg(not(feature = "parallel"))]
        points.iter().map(|&p| self.contains(p, method)).collect()
    }

    /// `answer(points[i], seed)` for every `i`, in Morton order ([`super::order`]), in runs of
    /// [`RUN`] points on all cores (feature `parallel`), each run carrying its [`Seed`] from
    /// point to point; the answers come back in input order.
    fn answer_points<T: Copy + Send + Sync>(
        &self,
        points: &[Vec3],
        answer: impl Fn(Vec3, &mut Seed) -> T + Sync,
    ) -> Vec<T> {
        let order = morton_order(points, self.bounds());
        let run = |ids: &[u32]| {
            // The run's points gathered first, in a loop whose reads overlap: read one by one
            // between walks, each is a cache miss of its own (the order is not the input's).
            let run_points: Vec<Vec3> = ids.iter().map(|&i| points[i as usize]).collect();
            let mut seed = Seed::NONE;
            run_points
                .into_iter()
                .map(|p| answer(p, &mut seed))
                .collect::<Vec<T>>()
        };
        // Each answer goes back to its point's place through the inverse of the order (a
        // scatter of `u32`s), then a gather on all cores: scattering the answers themselves
        // (50-odd bytes each) to random places took a tenth of a fast batch on one core.
        let mut place = vec![0u32; order.len()];
        for (k, &i) in order.iter().enumerate() {
            place[i as usize] = k as u32;
        }
        let answer_at = |runs: &[Vec<T>], i: usize| {
            let k = place[i] as usize;
            runs[k / RUN][k % RUN]
        };
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            let runs: Vec<Vec<T>> = order.par_chunks(RUN).map(run).collect();
            (0..points.len())
                .into_par_iter()
                .map(|i| answer_at(&runs, i))
                .collect()
        }
        #[cfg(not(feature = "parallel"))]
        {
            let runs: Vec<Vec<T>> = order.chunks(RUN).map(run).collect();
            (0..points.len()).map(|i| answer_at(&runs, i)).collect()
        }
    }

    /// Walks this scene, placed in world space by `world_from_scene` (`None`: the scene is the
    /// world), its primitives reported under instances `path`.
    fn walk_scene<P: PathRecord, F>(
        &self,
        q: &mut Query<F>,
        world_from_scene: Option<&Affine3A>,
        path: P,
        mode: Mode,
    ) -> ControlFlow<()>
    where
        F: FnMut(&Candidate<P>, &mut f32) -> ControlFlow<()>,
    {
        if mode == Mode::BruteForce {
            if let Some(m) = &self.meshes {
                m.walk(q, world_from_scene, path, mode)?;
            }
            for id in 0..self.geometries.len() {
                self.walk_geometry(id, q, world_from_scene, path, mode)?;
            }
            return ControlFlow::Continue(());
        }
        let top = &self.top;
        let top_items = &self.top_items;
        let point = q.point;
        walk_binary(
            top,
            |b| world_box_d2(point, world_from_scene, b),
            q,
            |q, i| match top_items[top.prim_ids()[i] as usize] {
                TopItem::Meshes => match &self.meshes {
                    Some(m) => m.walk(q, world_from_scene, path, mode),
                    None => ControlFlow::Continue(()),
                },
                TopItem::Geometry(id) => {
                    self.walk_geometry(id as usize, q, world_from_scene, path, mode)
                }
            },
        )
    }

    fn walk_geometry<P: PathRecord, F>(
        &self,
        id: usize,
        q: &mut Query<F>,
        world_from_scene: Option<&Affine3A>,
        path: P,
        mode: Mode,
    ) -> ControlFlow<()>
    where
        F: FnMut(&Candidate<P>, &mut f32) -> ControlFlow<()>,
    {
        match (&self.geometries[id], &self.accels[id]) {
            (Geometry::Spheres(s), Accel::Spheres(a)) => {
                a.walk(s, id as u32, q, world_from_scene, path, mode)
            }
            (Geometry::Instance(inst), Accel::Instance(_)) => {
                let world_from_object = match world_from_scene {
                    Some(m) => *m * inst.world_from_object(),
                    None => inst.world_from_object(),
                };
                inst.scene
                    .walk_scene(q, Some(&world_from_object), path.entered(id as u32), mode)
            }
            _ => ControlFlow::Continue(()),
        }
    }
}

/// Points per run of a batch (one task, one seed chain): long enough that the first query's
/// missing seed does not matter, short enough to balance the cores.
const RUN: usize = 1024;

/// The squared distance from `point_world` to box `b` of a scene placed by `world_from_scene`,
/// and the margin that covers its rounding.
#[inline(always)]
fn world_box_d2(point_world: Vec3, world_from_scene: Option<&Affine3A>, b: Aabb) -> (f32, f32) {
    let b = match world_from_scene {
        Some(m) => pad_box(transform_box(m, &b)),
        None => b,
    };
    (box_distance_squared(point_world, b.min, b.max), 0.0)
}

/// The nearest-first walk of a binary BVH: `box_d2(b)` gives a box's squared distance and
/// margin, `leaf(q, position)` answers each primitive position of a reached leaf.
fn walk_binary<P, F>(
    bvh: &Bvh,
    box_d2: impl Fn(Aabb) -> (f32, f32),
    q: &mut Query<F>,
    mut leaf: impl FnMut(&mut Query<F>, usize) -> ControlFlow<()>,
) -> ControlFlow<()>
where
    F: FnMut(&Candidate<P>, &mut f32) -> ControlFlow<()>,
{
    let nodes = bvh.nodes();
    if nodes.is_empty() {
        return ControlFlow::Continue(());
    }
    let (d2, m) = box_d2(nodes[0].bounds());
    if !q.reaches(d2, m) {
        return ControlFlow::Continue(());
    }
    let mut stack = arrayvec::ArrayVec::<(f32, f32, usize), MAX_DEPTH>::new();
    stack.push((d2, m, 0));
    while let Some((d2, m, i)) = stack.pop() {
        if !q.reaches(d2, m) {
            continue;
        }
        let node = &nodes[i];
        if node.is_leaf() {
            for pos in node.prim_range() {
                leaf(q, pos)?;
            }
            continue;
        }
        let (l, r) = (i + 1, node.right_child());
        let (dl, ml) = box_d2(nodes[l].bounds());
        let (dr, mr) = box_d2(nodes[r].bounds());
        // Push the farther child first, so the nearer is walked first.
        let (near, far) = if dl <= dr {
            ((dl, ml, l), (dr, mr, r))
        } else {
            ((dr, mr, r), (dl, ml, l))
        };
        for e in [far, near] {
            if q.reaches(e.0, e.1) {
                stack.push(e);
            }
        }
    }
    ControlFlow::Continue(())
}

impl SpheresAccel {
    fn walk<P: PathRecord, F>(
        &self,
        spheres: &Spheres,
        geom: u32,
        q: &mut Query<F>,
        world_from_scene: Option<&Affine3A>,
        path: P,
        mode: Mode,
    ) -> ControlFlow<()>
    where
        F: FnMut(&Candidate<P>, &mut f32) -> ControlFlow<()>,
    {
        // Under an instance, spheres stay spheres only under a similarity.
        let scale = match world_from_scene {
            None => 1.0,
            Some(m) => match similarity_scale(m) {
                Some(s) => s,
                None => return ControlFlow::Continue(()),
            },
        };
        let offer = |q: &mut Query<F>, prim: u32| {
            let center = spheres.centers[prim as usize];
            let center = world_from_scene.map_or(center, |m| m.transform_point3(center));
            q.offer(Candidate {
                shape: PointPrim::Sphere {
                    center,
                    radius: spheres.radii[prim as usize] * scale,
                },
                prim,
                geom,
                path,
                slot: Seed::NONE.0,
                d2_lower: None,
            })
        };
        match mode {
            Mode::BruteForce => {
                for prim in 0..spheres.len() as u32 {
                    offer(q, prim)?;
                }
                ControlFlow::Continue(())
            }
            Mode::Bvh => {
                let ids = self.bvh.prim_ids();
                let point = q.point;
                walk_binary(
                    &self.bvh,
                    |b| world_box_d2(point, world_from_scene, b),
                    q,
                    |q, pos| offer(q, ids[pos]),
                )
            }
        }
    }
}

/// The scale of `m` when its linear part is a similarity (orthogonal columns of equal length, to
/// `2⁻¹⁶` relative: a transform composed in `f32` from a rotation and a uniform scale), else `None`.
fn similarity_scale(m: &Affine3A) -> Option<f32> {
    let c = [m.matrix3.x_axis, m.matrix3.y_axis, m.matrix3.z_axis];
    let l2 = c.map(|a| a.length_squared());
    let tol = l2[0] * (1.0 / 65536.0);
    let equal = (l2[1] - l2[0]).abs() <= tol && (l2[2] - l2[0]).abs() <= tol;
    let orthogonal =
        c[0].dot(c[1]).abs() <= tol && c[0].dot(c[2]).abs() <= tol && c[1].dot(c[2]).abs() <= tol;
    (equal && orthogonal && l2[0] > 0.0).then(|| l2[0].sqrt())
}

impl MeshAccel {
    /// The triangle at position `slot`, placed by `place`, as a candidate reached through
    /// `path`; `None` for a padding lane or a zero-area triangle (stored collapsed onto a
    /// vertex: no surface, as for rays).
    #[inline(always)]
    fn candidate<P>(&self, slot: usize, place: Place, path: P) -> Option<Candidate<P>> {
        let id = self.blocks[slot / LANES].ids[slot % LANES];
        if id == MeshBvh::PADDING {
            return None;
        }
        let [v0, v1, v2] = self.tri(slot);
        if v0 == v1 && v1 == v2 {
            return None;
        }
        let (geom, prim) = self.parts.locate(id);
        Some(Candidate {
            shape: PointPrim::Triangle([v0, v1, v2].map(|v| place.point(v))),
            prim,
            geom,
            path,
            // Only the queried scene's own meshes (shifted, not under an instance) seed.
            slot: match place {
                Place::Shift(_) => slot as u32,
                Place::Affine(_) => Seed::NONE.0,
            },
            d2_lower: None,
        })
    }

    fn walk<P: PathRecord, F>(
        &self,
        q: &mut Query<F>,
        world_from_scene: Option<&Affine3A>,
        path: P,
        mode: Mode,
    ) -> ControlFlow<()>
    where
        F: FnMut(&Candidate<P>, &mut f32) -> ControlFlow<()>,
    {
        let place = match world_from_scene {
            None => Place::Shift(self.offset),
            Some(m) => Place::Affine(*m * Affine3A::from_translation(self.offset)),
        };
        let offer = |q: &mut Query<F>, slot: usize, d2_lower: Option<f32>| match self
            .candidate(slot, place, path)
        {
            Some(c) => q.offer(Candidate { d2_lower, ..c }),
            None => ControlFlow::Continue(()),
        };
        match mode {
            Mode::BruteForce => {
                for slot in 0..self.blocks.len() * LANES {
                    offer(q, slot, None)?;
                }
                ControlFlow::Continue(())
            }
            Mode::Bvh => {
                let (point_local, frame_margin) = place.local(q.point);
                let offer_leaf = |q: &mut Query<F>, leaf: Range<usize>| {
                    for b in leaf.start / LANES..leaf.end.div_ceil(LANES) {
                        // The lanes whose triangle's box is in reach, four at once (see
                        // `lanes_in_reach`); under an instance the boxes are not in world space,
                        // and every lane is offered.
                        // For the closest point, the lanes' exact distances go with them.
                        let (near, d2_lower) = match place {
                            Place::Shift(offset) => {
                                let block = &self.blocks[b];
                                let near = lanes_in_reach(block, point_local, q, frame_margin);
                                if near != 0 && q.exact {
                                    let (within, d2) = lanes_within_radius(block, offset, q);
                                    (near & within, Some(d2.to_array()))
                                } else {
                                    (near, None)
                                }
                            }
                            Place::Affine(_) => (u32::MAX, None),
                        };
                        for lane in 0..LANES {
                            let slot = b * LANES + lane;
                            if near >> lane & 1 == 1 && leaf.contains(&slot) {
                                offer(q, slot, d2_lower.map(|d2| d2[lane]))?;
                            }
                        }
                    }
                    ControlFlow::Continue(())
                };
                match &self.bvh {
                    MeshBvh::Wide(t) => walk_wide(t, place, q, offer_leaf),
                    MeshBvh::Quantized(t) => walk_wide(t, place, q, offer_leaf),
                }
            }
        }
    }
}

/// The lanes of `block` (bit `i` for lane `i`) whose triangle's box may hold a point within the
/// query's radius of `point_local` (the block's frame, moved there with rounding `margin`): the
/// walk's box test, on the four triangles' boxes at once ([`triangle_box_d2`]), before any
/// triangle is offered. It only prunes, by the test that prunes the tree's boxes
/// ([`Query::reaches`]), so no triangle that could reach or tie the radius is dropped; the
/// offered ones go through the exact kernel.
#[inline(always)]
fn lanes_in_reach<F>(block: &Tri4, point_local: Vec3, q: &Query<F>, margin: f32) -> u32 {
    // NaN distances (never from finite vertices) compare false: such a lane is not offered, as
    // `box_distance_squared` gives no reach to a NaN box.
    Vec4::from(triangle_box_d2(block, point_local))
        .cmple(Vec4::splat(q.reach2(margin)))
        .bitmask()
}

/// The lanes of `block` (bit `i` for lane `i`) whose triangle, moved to world space by `offset`,
/// may be within the query's radius by the closest-point query's own measure: the squared
/// distance of [`triangle_distance_squared4`], bit for bit what the query's scalar kernel computes
/// on the same world vertices (`v + offset`, the same additions), against the bound of
/// [`Query::reaches`] (no frame margin: both distances are computed in world space), so a
/// candidate that could reach or tie the best is never dropped; and those distances, which the
/// query then uses as its candidates' lower bounds ([`Candidate::d2_lower`]).
#[inline(always)]
fn lanes_within_radius<F>(block: &Tri4, offset: Vec3, q: &Query<F>) -> (u32, Vec4) {
    let world = |k: usize| {
        let axis = |a: usize| Vec4::from(block.v[k][a]) + Vec4::splat(offset[a]);
        Vec3x4 {
            x: axis(0),
            y: axis(1),
            z: axis(2),
        }
    };
    let d2 = triangle_distance_squared4(q.point, world(0), world(1), world(2));
    (d2.cmple(Vec4::splat(q.reach2(0.0))).bitmask(), d2)
}

/// The squared distance from `p` to the box of each of `block`'s four triangles, four at once:
/// for finite vertices the very numbers of [`box_distance_squared`] on each box (the same
/// operations in the same order).
#[inline(always)]
fn triangle_box_d2(block: &Tri4, p: Vec3) -> [f32; LANES] {
    let mut d2 = Vec4::ZERO;
    for axis in 0..3 {
        let [a, b, c] = [0, 1, 2].map(|k| Vec4::from(block.v[k][axis]));
        let (lo, hi) = (a.min(b).min(c), a.max(b).max(c));
        let p = Vec4::splat(p[axis]);
        let d = (lo - p).max(p - hi).max(Vec4::ZERO);
        d2 += d * d;
    }
    d2.to_array()
}

/// The nearest-first walk of a mesh's wide tree, in the meshes' local frame placed by `place`.
fn walk_wide<N: NodeLayout, P, F>(
    tree: &WideTree<N>,
    place: Place,
    q: &mut Query<F>,
    mut offer_leaf: impl FnMut(&mut Query<F>, Range<usize>) -> ControlFlow<()>,
) -> ControlFlow<()>
where
    F: FnMut(&Candidate<P>, &mut f32) -> ControlFlow<()>,
{
    let nodes = tree.nodes();
    if nodes.is_empty() {
        return ControlFlow::Continue(());
    }
    // The point in the local frame and the margin of that move (module docs), or world boxes.
    let point = q.point;
    let (point_local, frame_margin) = place.local(point);
    // Every lane's squared distance: in the local frame all at once; under an affine placement
    // each lane's box moved to world space first.
    let lane_d2 = |node: &N| -> [f32; 8] {
        match place {
            Place::Shift(_) => node.lane_distances_squared(point_local),
            Place::Affine(m) => std::array::from_fn(|lane| {
                if lane >= N::WIDTH {
                    return f32::INFINITY;
                }
                let b = pad_box(transform_box(&m, &node.child_bounds(lane)));
                box_distance_squared(point, b.min, b.max)
            }),
        }
    };
    // A wide tree is at most as deep as its binary tree; each level defers at most WIDTH - 1.
    let mut stack: Vec<(f32, crate::bvh::wide::Child)> = Vec::with_capacity(64);
    stack.push((0.0, crate::bvh::wide::Child::node(0)));
    let mut lanes: arrayvec::ArrayVec<(f32, crate::bvh::wide::Child), 8> =
        arrayvec::ArrayVec::new();
    while let Some((d2, child)) = stack.pop() {
        if !q.reaches(d2, frame_margin) {
            continue;
        }
        if child.is_leaf() {
            offer_leaf(q, child.range())?;
            continue;
        }
        let node = &nodes[child.index as usize];
        let d2 = lane_d2(node);
        lanes.clear();
        let reach2 = q.reach2(frame_margin);
        for (lane, &d2) in d2.iter().enumerate().take(N::WIDTH) {
            if d2 <= reach2 && node.holds(lane) {
                lanes.push((d2, node.child(lane)));
            }
        }
        // Farthest first onto the stack, so the nearest is popped next.
        lanes.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
        stack.extend(lanes.iter().copied());
    }
    ControlFlow::Continue(())
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    use super::*;

    /// The four-at-once triangle box distances are `box_distance_squared` of each triangle's box,
    /// bit for bit, at magnitudes from 1e-6 to 1e6.
    #[test]
    fn triangle_box_distances_equal_box_distance_lane_by_lane() {
        let mut rng = Pcg64::seed_from_u64(34);
        for _ in 0..20_000 {
            let scale = 10f32.powi(rng.gen_range(-6..=6));
            let mut v = || (Vec3::new(rng.gen(), rng.gen(), rng.gen()) - 0.5) * scale;
            let mut block = Tri4::ZERO;
            let tris: [[Vec3; 3]; LANES] = std::array::from_fn(|_| [v(), v(), v()]);
            for (lane, &tri) in tris.iter().enumerate() {
                block.set(lane, tri);
            }
            let p = v() * 2.0;
            let reference = tris.map(|[a, b, c]| {
                box_distance_squared(p, a.min(b).min(c), a.max(b).max(c)).to_bits()
            });
            assert_eq!(
                triangle_box_d2(&block, p).map(f32::to_bits),
                reference,
                "{tris:?} {p}"
            );
        }
    }
}
