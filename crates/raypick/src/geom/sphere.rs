//! Ray/sphere intersection kernels.
//!
//! - [`sphere_quadratic`] — the parametric method: substitute `X = O + tD` into `|X - C|² = r²` and solve
//!   the quadratic in `t`. Returns every crossing in `[t_min, t_max]` ([`SphereHits`]: 0, 1 at a tangent,
//!   or 2 in increasing order), so it serves rays, segments and lines alike. [`sphere_quadratic_first`]
//!   is the closest-hit convenience.
//! - [`sphere_geometric`] — the optimized geometric method of Akenine-Möller, Haines, Hoffman,
//!   *Real-Time Rendering* (4th ed., §22.6.2): project the centre on the ray, reject early, and take the
//!   first point only. [`sphere_geometric_intersects`] stops after the rejections (a boolean query).
//!
//! ## Numerics of the quadratic
//! With `f = O - C`, `a = D·D`, the half coefficient `b = f·D` and `c = f·f - r²`, the roots are
//! `(-b ± √Δ) / a` with `Δ = b² - a·c`. Two classic losses are avoided:
//! - `Δ = b² - a·c` cancels catastrophically when the sphere is small or far (`b² ≈ a·c ≫ Δ`). It is
//!   computed instead as `Δ = a·(r² - |f - (b/a)D|²)` (Haines, Günther, Akenine-Möller, "Precision
//!   Improvements for Ray/Sphere Intersection", *Ray Tracing Gems* ch. 7, 2019): `f - (b/a)D` is the
//!   vector from the centre to the closest point of the line, and its length is accurate.
//! - `-b ± √Δ` cancels for one of the two signs. With `q = -(b + sign(b)·√Δ)` (no cancellation) the roots
//!   are `q / a` and `c / q` (Vieta: their product is `c / a`), so the near root of a far sphere keeps its
//!   digits.
//!
//! ## Conventions
//! `t` is in units of `ray.dir` (any non-zero length), as everywhere in [`super`]. A sphere whose centre
//! or radius is not finite, or whose radius is negative, is never hit; a radius of `0` is a point, hit
//! only by a line exactly through it. Invalid rays ([`Ray::is_valid`]) miss. Nothing panics.

use std::ops::{Mul, Sub};

use glam::{Vec2, Vec3};

use super::Ray;

/// The crossings of a line with a sphere (or circle) that fall in the ray's `[t_min, t_max]`: none, one
/// (a tangent, or only one of the two crossings is in range) or two, in increasing `t`.
///
/// ```
/// use raypick::{geom::sphere::{sphere_quadratic, SphereHits}, glam::Vec3, Ray};
/// let line = Ray::line(Vec3::new(-5.0, 0.0, 0.0), Vec3::X);
/// let hits = sphere_quadratic(&line, Vec3::ZERO, 2.0);
/// assert_eq!(hits.as_slice(), &[3.0, 7.0]);
/// assert_eq!(hits.first(), Some(3.0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SphereHits {
    t: [f32; 2],
    len: u8,
}

impl SphereHits {
    /// No crossing.
    pub const NONE: Self = Self {
        t: [0.0; 2],
        len: 0,
    };

    /// The crossings `t0 <= t1` kept if in `[t_min, t_max]`; a tangent (one crossing) passes
    /// `t1 = None`. Two distinct crossings may round to the same `f32` (a sphere much smaller than the
    /// ulp of its distance): they are still two, entry and exit.
    #[inline]
    fn in_range(t0: f32, t1: Option<f32>, t_min: f32, t_max: f32) -> Self {
        let mut hits = Self::NONE;
        let ok = |t: f32| t >= t_min && t <= t_max && t.is_finite();
        if ok(t0) {
            hits.t[0] = t0;
            hits.len = 1;
        }
        if let Some(t1) = t1.filter(|&t| ok(t)) {
            hits.t[hits.len as usize] = t1;
            hits.len += 1;
        }
        hits
    }

    /// How many crossings (0, 1 or 2).
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// `true` when the ray misses in its interval.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The crossings in increasing `t`.
    #[inline]
    pub fn as_slice(&self) -> &[f32] {
        &self.t[..self.len as usize]
    }

    /// The first crossing in range (the closest hit).
    #[inline]
    pub fn first(&self) -> Option<f32> {
        self.as_slice().first().copied()
    }

    /// The last crossing in range.
    #[inline]
    pub fn last(&self) -> Option<f32> {
        self.as_slice().last().copied()
    }

    /// Iterates over the crossings in increasing `t`.
    #[inline]
    pub fn iter(&self) -> std::iter::Copied<std::slice::Iter<'_, f32>> {
        self.as_slice().iter().copied()
    }
}

impl<'a> IntoIterator for &'a SphereHits {
    type Item = f32;
    type IntoIter = std::iter::Copied<std::slice::Iter<'a, f32>>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// The vector operations the sphere and circle kernels need, so one implementation serves
/// [`Vec3`] (here) and [`Vec2`] ([`super::circle`]).
pub(crate) trait Vector: Copy + Sub<Output = Self> + Mul<f32, Output = Self> {
    fn dot(self, other: Self) -> f32;
    fn is_finite(self) -> bool;
}

impl Vector for Vec3 {
    #[inline(always)]
    fn dot(self, other: Self) -> f32 {
        Vec3::dot(self, other)
    }
    #[inline(always)]
    fn is_finite(self) -> bool {
        Vec3::is_finite(self)
    }
}

impl Vector for Vec2 {
    #[inline(always)]
    fn dot(self, other: Self) -> f32 {
        Vec2::dot(self, other)
    }
    #[inline(always)]
    fn is_finite(self) -> bool {
        Vec2::is_finite(self)
    }
}

/// `true` for a sphere that can be hit: finite centre, finite radius `>= 0`.
#[inline(always)]
fn sphere_is_valid<V: Vector>(center: V, radius: f32) -> bool {
    center.is_finite() && radius.is_finite() && radius >= 0.0
}

/// The quadratic method on any dimension; the caller has checked the ray.
#[inline(always)]
pub(crate) fn quadratic<V: Vector>(
    origin: V,
    dir: V,
    t_min: f32,
    t_max: f32,
    center: V,
    radius: f32,
) -> SphereHits {
    if !sphere_is_valid(center, radius) {
        return SphereHits::NONE;
    }
    let f = origin - center;
    let a = dir.dot(dir);
    let b = f.dot(dir);
    let r2 = radius * radius;
    // Ray Tracing Gems ch. 7: Δ/a = r² - |f⊥|², with f⊥ the centre-to-line vector.
    let f_perp = f - dir * (b / a);
    let disc = a * (r2 - f_perp.dot(f_perp));
    if disc.is_nan() || disc < 0.0 {
        // Negative (the line misses) or NaN (overflow on absurd inputs).
        return SphereHits::NONE;
    }
    if disc == 0.0 {
        let t = -b / a;
        return SphereHits::in_range(t, None, t_min, t_max);
    }
    let c = f.dot(f) - r2;
    // q has the sign of -b and no cancellation; q != 0 because √Δ > 0.
    let q = -(b + disc.sqrt().copysign(b));
    let (t0, t1) = (q / a, c / q);
    let (t0, t1) = if t0 <= t1 { (t0, t1) } else { (t1, t0) };
    SphereHits::in_range(t0, Some(t1), t_min, t_max)
}

/// The geometric method on any dimension, up to its rejections; the caller has checked the ray.
/// `None` is an early rejection; otherwise `(s, q, 1/|D|)`: the crossings are `(s ∓ q) / |D|`.
#[inline(always)]
fn geometric_roots<V: Vector>(
    origin: V,
    dir: V,
    t_min: f32,
    center: V,
    radius: f32,
) -> Option<(f32, f32, f32)> {
    if !sphere_is_valid(center, radius) {
        return None;
    }
    // Normalize inside: s and q are lengths along the unit direction; t = length / |D| at the end.
    let inv_len = 1.0 / dir.dot(dir).sqrt();
    let d = dir * inv_len;
    let l = center - origin;
    let s = l.dot(d);
    let l2 = l.dot(l);
    let r2 = radius * radius;
    // First rejection: the sphere lies behind an origin that is outside it (both crossings at t < 0).
    // It presumes the ray starts at t >= 0; lines and rays with t_min < 0 skip it.
    if s < 0.0 && l2 > r2 && t_min >= 0.0 {
        return None;
    }
    // Second rejection: the squared distance from the centre to the line exceeds r². The book's
    // m² = l² - s² cancels when the origin is far compared with r (relative error ~ ε·l²/r²); the
    // length of the perpendicular l - s·d (Ray Tracing Gems ch. 7) has error ~ ε·l·m/r² instead.
    let perp = l - d * s;
    let m2 = perp.dot(perp);
    if m2 > r2 {
        return None;
    }
    Some((s, (r2 - m2).sqrt(), inv_len))
}

/// The geometric method's first point in range.
#[inline(always)]
pub(crate) fn geometric<V: Vector>(
    origin: V,
    dir: V,
    t_min: f32,
    t_max: f32,
    center: V,
    radius: f32,
) -> Option<f32> {
    let (s, q, inv_len) = geometric_roots(origin, dir, t_min, center, radius)?;
    let ok = |t: f32| t >= t_min && t <= t_max && t.is_finite();
    // The first point: s - q from an outside origin; from inside (s - q < 0 <= t_min), s + q.
    let t0 = (s - q) * inv_len;
    if ok(t0) {
        return Some(t0);
    }
    let t1 = (s + q) * inv_len;
    ok(t1).then_some(t1)
}

/// The geometric method's intersects-only query.
#[inline(always)]
pub(crate) fn geometric_intersects<V: Vector>(
    origin: V,
    dir: V,
    t_min: f32,
    t_max: f32,
    center: V,
    radius: f32,
) -> bool {
    if t_min == 0.0 && t_max == f32::INFINITY {
        // A ray from its origin: after both rejections there is a crossing at t >= 0 (outside and in
        // front: s - q >= 0 since q² = r² - m² <= l² - m² = s²; inside: s + q >= 0), so stop here.
        geometric_roots(origin, dir, t_min, center, radius).is_some()
    } else {
        geometric(origin, dir, t_min, t_max, center, radius).is_some()
    }
}

/// Ray/sphere intersection by the quadratic (parametric) method: every crossing of the ray's line with
/// the sphere `|X - center| = radius` whose `t` lies in `[ray.t_min, ray.t_max]`, in increasing order.
/// A tangent line gives one crossing. See the module docs for the numerically stable form.
///
/// ```
/// use raypick::{geom::sphere::sphere_quadratic, glam::Vec3, Ray};
/// // From inside: only the exit is in range.
/// let hits = sphere_quadratic(&Ray::new(Vec3::ZERO, Vec3::new(0.0, 0.0, 2.0)), Vec3::ZERO, 1.0);
/// assert_eq!(hits.as_slice(), &[0.5]);
/// // A segment that ends before the sphere.
/// let seg = Ray::segment(Vec3::new(0.0, 0.0, -5.0), Vec3::new(0.0, 0.0, -3.0));
/// assert!(sphere_quadratic(&seg, Vec3::ZERO, 1.0).is_empty());
/// ```
#[inline]
pub fn sphere_quadratic(ray: &Ray, center: Vec3, radius: f32) -> SphereHits {
    if !ray.is_valid() {
        return SphereHits::NONE;
    }
    quadratic(ray.origin, ray.dir, ray.t_min, ray.t_max, center, radius)
}

/// The first crossing in range by the quadratic method (the closest hit), or `None`.
///
/// ```
/// use raypick::{geom::sphere::sphere_quadratic_first, glam::Vec3, Ray};
/// let ray = Ray::new(Vec3::new(0.0, 0.0, 10.0), Vec3::NEG_Z);
/// assert_eq!(sphere_quadratic_first(&ray, Vec3::ZERO, 1.0), Some(9.0));
/// ```
#[inline]
pub fn sphere_quadratic_first(ray: &Ray, center: Vec3, radius: f32) -> Option<f32> {
    sphere_quadratic(ray, center, radius).first()
}

/// Ray/sphere intersection by the optimized geometric method (*Real-Time Rendering*): the first `t` in
/// `[ray.t_min, ray.t_max]` at which the ray crosses the sphere, or `None`.
///
/// With `l = C - O` and the unit direction `d = D / |D|` (the direction is normalized inside: `s` and
/// `q` are lengths, divided by `|D|` at the end, so `t` is in units of `D` as everywhere):
/// `s = l·d`; reject when `s < 0` and the origin is outside (`l² > r²`); `m² = |l - s·d|²` (the book
/// writes `l² - s²`; see below), reject when `m² > r²`; `q = √(r² - m²)`; the first point is `s - q`
/// from outside and `s + q` from inside.
/// For a general interval, that is: `s - q` if it is in `[t_min, t_max]`, else `s + q` if it is; the
/// first rejection, which presumes the ray starts at `t = 0`, is applied only when `t_min >= 0`.
///
/// `m²` is the squared length of the perpendicular from the centre to the line, as *Ray Tracing
/// Gems* ch. 7 recommends, rather than the book's `l² - s²`, which cancels catastrophically when the
/// origin is many radii away: at 100 radii its rounding (about `ε · 10⁴ r²`) turns rays that miss by
/// a tenth of a percent of `r` into hits (a case the `kernels_sphere` proptest found). The crossing
/// `s - q` still cancels when the origin is close to the surface; [`sphere_quadratic`] does not.
///
/// ```
/// use raypick::{geom::sphere::sphere_geometric, glam::Vec3, Ray};
/// let ray = Ray::new(Vec3::new(0.0, 0.0, 10.0), Vec3::new(0.0, 0.0, -2.0));
/// assert_eq!(sphere_geometric(&ray, Vec3::ZERO, 1.0), Some(4.5));
/// ```
#[inline]
pub fn sphere_geometric(ray: &Ray, center: Vec3, radius: f32) -> Option<f32> {
    if !ray.is_valid() {
        return None;
    }
    geometric(ray.origin, ray.dir, ray.t_min, ray.t_max, center, radius)
}

/// `true` when the ray crosses the sphere in `[ray.t_min, ray.t_max]`: the geometric method stopped
/// after its two rejections (for a ray with `t ∈ [0, ∞)`; other intervals need the crossing points and
/// fall back to [`sphere_geometric`]).
///
/// ```
/// use raypick::{geom::sphere::sphere_geometric_intersects, glam::Vec3, Ray};
/// assert!(sphere_geometric_intersects(&Ray::new(Vec3::new(0.0, 0.9, 5.0), Vec3::NEG_Z), Vec3::ZERO, 1.0));
/// assert!(!sphere_geometric_intersects(&Ray::new(Vec3::new(0.0, 0.0, 5.0), Vec3::Z), Vec3::ZERO, 1.0));
/// ```
#[inline]
pub fn sphere_geometric_intersects(ray: &Ray, center: Vec3, radius: f32) -> bool {
    ray.is_valid()
        && geometric_intersects(ray.origin, ray.dir, ray.t_min, ray.t_max, center, radius)
}
