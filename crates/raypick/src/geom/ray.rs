//! [`Ray`]: an origin, a direction and a parameter interval.
//!
//! One type serves rays, segments and lines: a segment from `P` to `Q` is `origin = P, dir = Q - P,
//! t ∈ [0, 1]`, and a line is `t ∈ (-∞, ∞)`. `dir` is never normalized behind the caller's back, so `t`
//! is always in units of `dir`.

use glam::{Vec3, Vec3A};

/// A ray (or segment, or line): the points `origin + t * dir` for `t_min <= t <= t_max`.
///
/// `dir` need not be unit length; `t` is measured in units of `dir`.
///
/// ```
/// use raypick::{glam::Vec3, Ray};
/// let seg = Ray::segment(Vec3::ZERO, Vec3::new(2.0, 0.0, 0.0));
/// assert_eq!(seg.at(0.5), Vec3::new(1.0, 0.0, 0.0));
/// assert_eq!((seg.t_min, seg.t_max), (0.0, 1.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Ray {
    /// Where `t = 0` is.
    pub origin: Vec3,
    /// Direction; any non-zero length. `t` is in units of this vector.
    pub dir: Vec3,
    /// Smallest accepted `t` (inclusive).
    pub t_min: f32,
    /// Largest accepted `t` (inclusive).
    pub t_max: f32,
}

// Eight floats in this order: `simd::PacketBoxRay::of_eight` loads eight rays as an 8×8 block.
const _: () = assert!(std::mem::size_of::<Ray>() == 32 && std::mem::offset_of!(Ray, t_max) == 28);

impl Ray {
    /// A ray from `origin` along `dir`: `t ∈ [0, ∞)`.
    #[inline]
    pub fn new(origin: Vec3, dir: Vec3) -> Self {
        Self {
            origin,
            dir,
            t_min: 0.0,
            t_max: f32::INFINITY,
        }
    }

    /// The segment from `p` to `q`: `origin = p`, `dir = q - p`, `t ∈ [0, 1]`.
    #[inline]
    pub fn segment(p: Vec3, q: Vec3) -> Self {
        Self {
            origin: p,
            dir: q - p,
            t_min: 0.0,
            t_max: 1.0,
        }
    }

    /// The infinite line through `point` along `dir`: `t ∈ (-∞, ∞)`.
    #[inline]
    pub fn line(point: Vec3, dir: Vec3) -> Self {
        Self {
            origin: point,
            dir,
            t_min: f32::NEG_INFINITY,
            t_max: f32::INFINITY,
        }
    }

    /// The same ray restricted to `t ∈ [t_min, t_max]`.
    #[inline]
    #[must_use]
    pub fn with_range(self, t_min: f32, t_max: f32) -> Self {
        Self {
            t_min,
            t_max,
            ..self
        }
    }

    /// The point at parameter `t`: `origin + t * dir`.
    #[inline]
    pub fn at(&self, t: f32) -> Vec3 {
        self.origin + t * self.dir
    }

    /// `true` when the ray can hit anything: finite origin and direction, a non-zero direction, and a
    /// non-empty, non-NaN interval. Kernels return a miss for rays that fail this test.
    #[inline]
    pub fn is_valid(&self) -> bool {
        // Four-lane compares without branches: every query checks this at least once per ray.
        let origin = Vec3A::from(self.origin);
        let dir = Vec3A::from(self.dir);
        (origin.is_finite_mask() & dir.is_finite_mask()).all()
            & dir.cmpne(Vec3A::ZERO).any()
            & (self.t_min <= self.t_max) // false for NaN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_set_the_interval() {
        let r = Ray::new(Vec3::ONE, Vec3::X);
        assert_eq!((r.t_min, r.t_max), (0.0, f32::INFINITY));
        let l = Ray::line(Vec3::ONE, Vec3::X);
        assert_eq!((l.t_min, l.t_max), (f32::NEG_INFINITY, f32::INFINITY));
        let s = Ray::segment(Vec3::ONE, Vec3::new(1.0, 3.0, 1.0));
        assert_eq!(s.dir, Vec3::new(0.0, 2.0, 0.0));
        assert_eq!(s.at(1.0), Vec3::new(1.0, 3.0, 1.0));
    }

    #[test]
    fn validity_rejects_nan_inf_and_zero_dir() {
        assert!(Ray::new(Vec3::ZERO, Vec3::X).is_valid());
        assert!(!Ray::new(Vec3::ZERO, Vec3::ZERO).is_valid());
        assert!(!Ray::new(Vec3::new(f32::NAN, 0.0, 0.0), Vec3::X).is_valid());
        assert!(!Ray::new(Vec3::ZERO, Vec3::new(f32::INFINITY, 0.0, 0.0)).is_valid());
        assert!(!Ray::new(Vec3::ZERO, Vec3::X)
            .with_range(f32::NAN, 1.0)
            .is_valid());
        assert!(!Ray::new(Vec3::ZERO, Vec3::X)
            .with_range(2.0, 1.0)
            .is_valid());
    }
}
