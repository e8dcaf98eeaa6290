//! 2-D ray/circle intersection, with the same two methods as [`super::sphere`].
//!
//! [`circle_quadratic`] solves `|O + tD - C|² = r²` in the numerically stable form (half `b`, the
//! *Ray Tracing Gems* ch. 7 discriminant, `q = -(b + sign(b)√Δ)`); [`circle_geometric`] is the
//! *Real-Time Rendering* method (project the centre, two early rejections, first point).
//! [`circle_geometric_intersects`] stops after the rejections. The code is shared with the 3-D kernels,
//! so the two are tested together; the contracts (units of `t`, invalid inputs) are those of
//! [`super::sphere`].

use glam::Vec2;

use super::sphere::{self, SphereHits};

/// A 2-D ray (or segment, or line): the points `origin + t * dir` for `t_min <= t <= t_max`, with `t`
/// in units of `dir`, exactly like [`super::Ray`] in 3-D.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ray2 {
    /// Where `t = 0` is.
    pub origin: Vec2,
    /// Direction; any non-zero length.
    pub dir: Vec2,
    /// Smallest accepted `t` (inclusive).
    pub t_min: f32,
    /// Largest accepted `t` (inclusive).
    pub t_max: f32,
}

impl Ray2 {
    /// A ray from `origin` along `dir`: `t ∈ [0, ∞)`.
    #[inline]
    pub fn new(origin: Vec2, dir: Vec2) -> Self {
        Self {
            origin,
            dir,
            t_min: 0.0,
            t_max: f32::INFINITY,
        }
    }

    /// The segment from `p` to `q`: `dir = q - p`, `t ∈ [0, 1]`.
    #[inline]
    pub fn segment(p: Vec2, q: Vec2) -> Self {
        Self {
            origin: p,
            dir: q - p,
            t_min: 0.0,
            t_max: 1.0,
        }
    }

    /// The infinite line through `point` along `dir`: `t ∈ (-∞, ∞)`.
    #[inline]
    pub fn line(point: Vec2, dir: Vec2) -> Self {
        Self {
            origin: point,
            dir,
            t_min: f32::NEG_INFINITY,
            t_max: f32::INFINITY,
        }
    }

    /// The point at parameter `t`.
    #[inline]
    pub fn at(&self, t: f32) -> Vec2 {
        self.origin + t * self.dir
    }

    /// `true` when the ray can hit anything: finite, non-zero direction, non-empty non-NaN interval.
    #[inline]
    pub fn is_valid(&self) -> bool {
        self.origin.is_finite()
            && self.dir.is_finite()
            && self.dir != Vec2::ZERO
            && self.t_min <= self.t_max
    }
}

/// The crossings of a 2-D ray with a circle: the same type as the sphere's.
pub type CircleHits = SphereHits;

/// Ray/circle intersection by the quadratic method: every crossing in `[t_min, t_max]`, in order.
///
/// ```
/// use raypick::{geom::circle::{circle_quadratic, Ray2}, glam::Vec2};
/// let hits = circle_quadratic(&Ray2::new(Vec2::new(-3.0, 0.0), Vec2::X), Vec2::ZERO, 1.0);
/// assert_eq!(hits.as_slice(), &[2.0, 4.0]);
/// ```
#[inline]
pub fn circle_quadratic(ray: &Ray2, center: Vec2, radius: f32) -> CircleHits {
    if !ray.is_valid() {
        return SphereHits::NONE;
    }
    sphere::quadratic(ray.origin, ray.dir, ray.t_min, ray.t_max, center, radius)
}

/// Ray/circle intersection by the geometric method: the first crossing in `[t_min, t_max]`. The
/// direction is normalized inside, as in [`super::sphere::sphere_geometric`].
///
/// ```
/// use raypick::{geom::circle::{circle_geometric, Ray2}, glam::Vec2};
/// let ray = Ray2::new(Vec2::new(0.0, 5.0), Vec2::new(0.0, -4.0));
/// assert_eq!(circle_geometric(&ray, Vec2::ZERO, 1.0), Some(1.0));
/// ```
#[inline]
pub fn circle_geometric(ray: &Ray2, center: Vec2, radius: f32) -> Option<f32> {
    if !ray.is_valid() {
        return None;
    }
    sphere::geometric(ray.origin, ray.dir, ray.t_min, ray.t_max, center, radius)
}

/// `true` when the 2-D ray crosses the circle in its interval (the geometric method's rejections).
#[inline]
pub fn circle_geometric_intersects(ray: &Ray2, center: Vec2, radius: f32) -> bool {
    ray.is_valid()
        && sphere::geometric_intersects(ray.origin, ray.dir, ray.t_min, ray.t_max, center, radius)
}
