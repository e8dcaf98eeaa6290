//! Axis-aligned bounding boxes and the robust ray/box slab test.
//!
//! The slab test follows Ize, "Robust BVH Ray Traversal", JCGT 2(2), 2013 (as in pbrt-v4's
//! `Bounds3::IntersectP`): the far distance of each slab is enlarged by `1 + 2γ(3)` so that rounding in
//! `(bound - origin) * inv_dir` can never make a box that contains the hit look missed. Direction
//! components that are zero give `±∞` reciprocals; the `0 · ∞ = NaN` that arises when the origin lies
//! exactly on a slab plane is ignored by NaN-discarding min/max ([`f32::min`] and [`f32::max`] return
//! the non-NaN operand), so it can never cause a false miss.

use glam::Vec3;

use super::Ray;

/// `γ(n) = n·u / (1 - n·u)` with `u = 2⁻²⁴` the unit roundoff of `f32` (pbrt-v4 §6.8.1): a bound on the
/// relative error accumulated by `n` rounded operations.
#[inline]
pub const fn gamma(n: u32) -> f32 {
    let nu = n as f32 * (f32::EPSILON * 0.5);
    nu / (1.0 - nu)
}

/// The factor that makes the slab test conservative: `1 + 2γ(3)` (Ize 2013, eq. 1).
pub const SLAB_FAR_SCALE: f32 = 1.0 + 2.0 * gamma(3);

/// An axis-aligned box `[min, max]`. The empty box has `min = +∞`, `max = -∞`, so growing it by a point
/// gives that point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Smallest corner.
    pub min: Vec3,
    /// Largest corner.
    pub max: Vec3,
}

impl Default for Aabb {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl Aabb {
    /// The empty box: the identity of [`Aabb::union`].
    pub const EMPTY: Self = Self {
        min: Vec3::INFINITY,
        max: Vec3::NEG_INFINITY,
    };

    /// The box `[min, max]` (no check that `min <= max`).
    #[inline]
    pub const fn new(min: Vec3, max: Vec3) -> Self {
        Self { min, max }
    }

    /// The smallest box holding every point.
    pub fn from_points(points: impl IntoIterator<Item = Vec3>) -> Self {
        points.into_iter().fold(Self::EMPTY, |b, p| b.grow(p))
    }

    /// The box grown to hold `p`.
    #[inline]
    #[must_use]
    pub fn grow(self, p: Vec3) -> Self {
        Self {
            min: self.min.min(p),
            max: self.max.max(p),
        }
    }

    /// The smallest box holding both.
    #[inline]
    #[must_use]
    pub fn union(self, other: Self) -> Self {
        Self {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// `true` when the box holds no point (some `min > max`).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.min.cmpgt(self.max).any()
    }

    /// The centre `(min + max) / 2`.
    #[inline]
    pub fn center(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }

    /// `max - min` (negative on the empty box).
    #[inline]
    pub fn extent(&self) -> Vec3 {
        self.max - self.min
    }

    /// Surface area; 0 for the empty box (the SAH's measure of a node).
    #[inline]
    pub fn surface_area(&self) -> f32 {
        if self.is_empty() {
            return 0.0;
        }
        let e = self.extent();
        2.0 * (e.x * e.y + e.y * e.z + e.z * e.x)
    }

    /// `true` when `p` lies in the box (boundary included).
    #[inline]
    pub fn contains_point(&self, p: Vec3) -> bool {
        p.cmpge(self.min).all() && p.cmple(self.max).all()
    }

    /// `true` when `other` lies entirely in `self` (the empty box lies in every box).
    #[inline]
    pub fn contains(&self, other: &Self) -> bool {
        other.is_empty() || (other.min.cmpge(self.min).all() && other.max.cmple(self.max).all())
    }

    /// `true` when the two boxes share a point (boundaries included); the empty box meets
    /// nothing.
    #[inline]
    pub fn overlaps(&self, other: &Self) -> bool {
        !self.is_empty()
            && !other.is_empty()
            && other.max.cmpge(self.min).all()
            && other.min.cmple(self.max).all()
    }

    /// Index of the longest axis (0 = x, 1 = y, 2 = z).
    #[inline]
    pub fn longest_axis(&self) -> usize {
        let e = self.extent();
        if e.x >= e.y && e.x >= e.z {
            0
        } else if e.y >= e.z {
            1
        } else {
            2
        }
    }

    /// The robust slab test for a single ray: the parameter interval `[t_near, t_far]` in which the
    /// ray is inside the box, clipped to `[ray.t_min, ray.t_max]`, or `None` on a miss. Conservative
    /// (never misses a point of the box; may report a sliver just outside it). Rays that are not
    /// [`Ray::is_valid`] miss.
    #[inline]
    pub fn intersect_ray(&self, ray: &Ray) -> Option<(f32, f32)> {
        if !ray.is_valid() {
            return None;
        }
        self.intersect_slabs(ray.origin, ray.dir.recip(), ray.t_min, ray.t_max)
    }

    /// The slab test with a precomputed reciprocal direction (`inv_dir = 1 / dir`, components may be
    /// `±∞`). Same contract as [`Aabb::intersect_ray`]; this is the form the BVH uses per node.
    #[inline(always)]
    pub fn intersect_slabs(
        &self,
        origin: Vec3,
        inv_dir: Vec3,
        t_min: f32,
        t_max: f32,
    ) -> Option<(f32, f32)> {
        // The empty box (min = +∞, max = -∞) would give every axis the interval (-∞, ∞), and NaN
        // bounds compare false everywhere: neither holds a point, so neither is hit.
        if !self.min.cmple(self.max).all() {
            return None;
        }
        let t0 = (self.min - origin) * inv_dir;
        let t1 = (self.max - origin) * inv_dir;
        // Reduce with scalar f32::min/max, whose NaN behaviour is specified (glam's lane-wise min/max
        // follow the SIMD instruction's, which differs between backends).
        let mut near = t_min;
        let mut far = t_max;
        for axis in 0..3 {
            let (a, b) = (t0[axis], t1[axis]);
            // A NaN (0 · ∞: the origin lies on a slab plane and the direction is parallel to it)
            // means the ray runs inside that slab's boundary for every t: the axis constrains
            // nothing. Both comparisons are false then, and the axis is skipped.
            let (lo, hi) = if a <= b {
                (a, b)
            } else if b < a {
                (b, a)
            } else {
                continue;
            };
            near = near.max(lo);
            far = far.min(hi * SLAB_FAR_SCALE);
        }
        (near <= far).then_some((near, far))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit() -> Aabb {
        Aabb::new(Vec3::ZERO, Vec3::ONE)
    }

    #[test]
    fn empty_box_is_union_identity() {
        let b = unit();
        assert_eq!(Aabb::EMPTY.union(b), b);
        assert!(Aabb::EMPTY.is_empty());
        assert_eq!(Aabb::EMPTY.surface_area(), 0.0);
        assert_eq!(b.surface_area(), 6.0);
        assert!(b.contains(&Aabb::EMPTY));
    }

    #[test]
    fn slab_hits_and_misses() {
        let b = unit();
        let hit = b
            .intersect_ray(&Ray::new(Vec3::new(-1.0, 0.5, 0.5), Vec3::X))
            .unwrap();
        assert!((hit.0 - 1.0).abs() < 1e-6 && (hit.1 - 2.0).abs() < 1e-5);
        assert!(b
            .intersect_ray(&Ray::new(Vec3::new(-1.0, 2.0, 0.5), Vec3::X))
            .is_none());
        // Behind the origin.
        assert!(b
            .intersect_ray(&Ray::new(Vec3::new(2.0, 0.5, 0.5), Vec3::X))
            .is_none());
        // Origin inside: near is t_min.
        let inside = b
            .intersect_ray(&Ray::new(Vec3::splat(0.5), Vec3::Y))
            .unwrap();
        assert_eq!(inside.0, 0.0);
    }

    #[test]
    fn zero_direction_components_and_origin_on_a_slab_plane() {
        let b = unit();
        // dir.y = dir.z = 0 and the origin lies exactly on the planes y = 0 and z = 1: 0 · ∞ = NaN
        // must not turn into a miss.
        let r = Ray::new(Vec3::new(-1.0, 0.0, 1.0), Vec3::X);
        assert!(b.intersect_ray(&r).is_some());
        // Outside a slab with a zero component: a miss.
        let r = Ray::new(Vec3::new(-1.0, -0.001, 0.5), Vec3::X);
        assert!(b.intersect_ray(&r).is_none());
    }

    #[test]
    fn invalid_rays_miss() {
        let b = unit();
        assert!(b
            .intersect_ray(&Ray::new(Vec3::splat(f32::NAN), Vec3::X))
            .is_none());
        assert!(b.intersect_ray(&Ray::new(Vec3::ZERO, Vec3::ZERO)).is_none());
        assert!(b
            .intersect_ray(&Ray::new(Vec3::ZERO, Vec3::new(f32::INFINITY, 1.0, 1.0)))
            .is_none());
    }

    #[test]
    fn empty_and_nan_boxes_are_never_hit() {
        let r = Ray::new(Vec3::new(-1.0, 0.5, 0.5), Vec3::new(1.0, 0.1, 0.2));
        assert!(Aabb::EMPTY.intersect_ray(&r).is_none());
        assert!(Aabb::new(Vec3::splat(f32::NAN), Vec3::ONE)
            .intersect_ray(&r)
            .is_none());
        assert!(Aabb::new(Vec3::ONE, Vec3::ZERO).intersect_ray(&r).is_none());
    }

    #[test]
    fn gamma_matches_pbrt() {
        // pbrt: gamma(3) = 3u / (1 - 3u) with u = 2^-24.
        let u = 2f64.powi(-24);
        let expect = 3.0 * u / (1.0 - 3.0 * u);
        assert!(((gamma(3) as f64) - expect).abs() < 1e-12);
    }
}
