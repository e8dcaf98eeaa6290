//! Two-sided Möller–Trumbore ray/triangle test (Möller, Trumbore, "Fast, Minimum Storage Ray/Triangle
//! Intersection", JGT 2(1), 1997), used with the `bvh` crate, whose own kernel culls back faces.

use glam::Vec3;
use raypick::Ray;

/// The hit of `ray` on the triangle `v0 v1 v2` as `(t, u, v)` (`t` in units of `ray.dir`, `u` the
/// weight of `v1`, `v` of `v2`), for `t ∈ [ray.t_min, t_max]`; both faces count.
///
/// No epsilon on the determinant: it is exactly zero only when the ray is parallel to the plane (or
/// the triangle degenerate), the one case where the division is undefined; nearly parallel rays give
/// large but finite barycentrics that the range tests reject. Edges are closed (`u >= 0`, …).
#[inline(always)]
pub fn moller_trumbore(
    ray: &Ray,
    t_max: f32,
    v0: Vec3,
    v1: Vec3,
    v2: Vec3,
) -> Option<(f32, f32, f32)> {
    let e1 = v1 - v0;
    let e2 = v2 - v0;
    let p = ray.dir.cross(e2);
    let det = e1.dot(p);
    if det == 0.0 {
        return None;
    }
    let inv_det = 1.0 / det;
    let s = ray.origin - v0;
    let u = s.dot(p) * inv_det;
    if !(0.0..=1.0).contains(&u) {
        return None;
    }
    let q = s.cross(e1);
    let v = ray.dir.dot(q) * inv_det;
    if v < 0.0 || u + v > 1.0 {
        return None;
    }
    let t = e2.dot(q) * inv_det;
    (t >= ray.t_min && t <= t_max).then_some((t, u, v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_both_faces_and_respects_the_interval() {
        let (v0, v1, v2) = (Vec3::ZERO, Vec3::X, Vec3::Y);
        let down = Ray::new(Vec3::new(0.25, 0.5, 2.0), Vec3::new(0.0, 0.0, -2.0));
        assert_eq!(
            moller_trumbore(&down, f32::INFINITY, v0, v1, v2),
            Some((1.0, 0.25, 0.5))
        );
        let up = Ray::new(Vec3::new(0.25, 0.5, -1.0), Vec3::Z);
        assert_eq!(
            moller_trumbore(&up, f32::INFINITY, v0, v1, v2),
            Some((1.0, 0.25, 0.5))
        );
        assert_eq!(moller_trumbore(&up, 0.5, v0, v1, v2), None);
        let outside = Ray::new(Vec3::new(0.75, 0.5, 1.0), Vec3::NEG_Z);
        assert_eq!(moller_trumbore(&outside, f32::INFINITY, v0, v1, v2), None);
        let parallel = Ray::new(Vec3::new(0.2, 0.2, 0.0), Vec3::X);
        assert_eq!(moller_trumbore(&parallel, f32::INFINITY, v0, v1, v2), None);
        let behind = Ray::new(Vec3::new(0.25, 0.25, 1.0), Vec3::Z);
        assert_eq!(moller_trumbore(&behind, f32::INFINITY, v0, v1, v2), None);
    }
}
