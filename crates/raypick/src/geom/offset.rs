//! Spawning secondary rays without self-intersection: Wächter & Binder, "A Fast and Robust Method for
//! Avoiding Self-Intersection", *Ray Tracing Gems* ch. 6, 2019.
//!
//! A hit point computed in `f32` lies near, not on, the surface, and a ray cast from it may hit the
//! same surface again at `t ≈ 0`. Instead of a scene-dependent `t_min`, the origin is moved off the
//! surface along the geometric normal by an amount proportional to the point's own ulp: a fixed number
//! of ulps per coordinate (integer arithmetic on the float's bits), which scales with the magnitude
//! of the coordinate and therefore with its rounding error. Near the world origin, where ulps become
//! tiny while the error of a hit point does not (it is relative to the triangle's coordinates), a
//! fixed float offset takes over.

use glam::Vec3;

/// Below this magnitude a coordinate is offset by [`OFFSET_FLOAT_SCALE`] instead of in ulps (the
/// chapter's `origin() = 1/32`). At `1/32` an offset of 256 ulps is `256 · 2⁻²⁸ ≈ 1e-6`, close to the
/// float offset `2⁻¹⁶ ≈ 1.5e-5`, so the two regimes meet without a gap.
pub const OFFSET_ORIGIN: f32 = 1.0 / 32.0;

/// The float offset used near the origin, per unit of normal (the chapter's `float_scale() = 1/65536`):
/// larger than the error of hit points computed from coordinates of magnitude up to about `1/32`.
pub const OFFSET_FLOAT_SCALE: f32 = 1.0 / 65536.0;

/// The integer offset in ulps, per unit of normal (the chapter's `int_scale() = 256`): each coordinate
/// moves by up to 256 ulps of itself, enough to cover the error of a hit point computed from
/// barycentrics (a few ulps of the vertices) and of the kernels' rounding, with a wide margin.
pub const OFFSET_INT_SCALE: f32 = 256.0;

/// The origin for a ray leaving the surface at `p` on the side of `n` (Wächter & Binder 2019).
///
/// `n` is the geometric normal, unit length, pointing to the side the new ray goes to (flip it for a
/// ray that continues through the surface, e.g. refraction). Each coordinate of `p` moves by
/// `⌊256·nᵢ⌋` ulps towards the sign of `nᵢ` when `|pᵢ| >= 1/32`, and by `nᵢ/65536` otherwise. Cast the
/// new ray with `t_min = 0`.
///
/// Non-finite inputs give a non-finite or meaningless origin, never a panic (the integer arithmetic
/// wraps).
///
/// ```
/// use raypick::{geom::offset::offset_ray_origin, glam::Vec3};
/// let p = Vec3::new(1000.0, 0.0, 0.5);
/// let q = offset_ray_origin(p, Vec3::Y);
/// assert_eq!(q.x, 1000.0);
/// assert!(q.y > 0.0);
/// // 256 ulps of 0.5 is 256 · 2⁻²⁴.
/// let r = offset_ray_origin(p, Vec3::Z);
/// assert_eq!(r.z, 0.5 + 256.0 * 2f32.powi(-24));
/// ```
#[inline]
pub fn offset_ray_origin(p: Vec3, n: Vec3) -> Vec3 {
    let of_i = n * OFFSET_INT_SCALE;
    let axis = |p: f32, n: f32, of: f32| -> f32 {
        if p.abs() < OFFSET_ORIGIN {
            p + OFFSET_FLOAT_SCALE * n
        } else {
            // `as` truncates towards zero (like the chapter's C++ conversion) and saturates.
            let of = of as i32;
            // The bits of a negative float grow away from zero as well: add the offset with the sign
            // that moves the value towards the sign of n.
            let of = if p < 0.0 { of.wrapping_neg() } else { of };
            f32::from_bits((p.to_bits() as i32).wrapping_add(of) as u32)
        }
    };
    Vec3::new(
        axis(p.x, n.x, of_i.x),
        axis(p.y, n.y, of_i.y),
        axis(p.z, n.z, of_i.z),
    )
}
