//! [`Frustum`]: the region of space seen through a window rectangle, as half-spaces, with exact
//! triangle and sphere overlap tests (the geometry behind marquee selection).
//!
//! A [`PixelRect`] maps to an NDC box `[x0, x1] × [y0, y1] × [z_lo, z_hi]`; each face is a half-space
//! that is linear in clip coordinates (`x − x0·w ≥ 0`, …, `z_hi·w − z ≥ 0`), so its plane in world
//! space is `clip_from_worldᵀ · c` (Gribb & Hartmann's plane extraction). This one rule handles
//! perspective, orthographic, reverse-Z and infinite projections alike: the far plane of an infinite
//! projection becomes the constant half-space `near > 0` and drops out. Everything is in f64.
//!
//! The tests are exact up to f64 rounding, not conservative:
//! - triangle: Sutherland–Hodgman clipping of the triangle against every plane; it overlaps when
//!   something is left (boundary contact counts);
//! - sphere: the distance from the centre to the convex polyhedron, found by projecting the centre
//!   onto every face, edge line and vertex (every set of at most three planes) and keeping the
//!   feasible projections (the KKT conditions of the nearest-point problem); it overlaps when that
//!   distance is at most the radius.

use glam::{DMat4, DVec3, DVec4, Vec3};

use super::view::Camera;
use crate::geom::Aabb;

/// A rectangle of continuous window coordinates (the camera's pixel origin), given by two opposite
/// corners in any order. Pixel `(i, j)` is the rectangle `(i, j)`–`(i + 1, j + 1)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PixelRect {
    /// One corner's x.
    pub x0: f32,
    /// One corner's y.
    pub y0: f32,
    /// The opposite corner's x.
    pub x1: f32,
    /// The opposite corner's y.
    pub y1: f32,
}

impl PixelRect {
    /// The rectangle between two corners.
    pub const fn new(x0: f32, y0: f32, x1: f32, y1: f32) -> Self {
        Self { x0, y0, x1, y1 }
    }
}

/// Relative tolerance of the f64 feasibility checks: 1e-12 is thousands of f64 ulps (far above the
/// rounding of a plane evaluation or a 3 × 3 solve) and five orders of magnitude below the f32
/// resolution of the inputs, so it never changes an answer the f32 data can express.
const REL_TOL: f64 = 1e-12;

/// A convex region given by half-spaces `n·p + d ≥ 0` (stored as `(n, d)` with unit `n`).
#[derive(Clone, Debug, PartialEq)]
pub struct Frustum {
    planes: Vec<DVec4>,
    /// A constant half-space was violated: the region is empty.
    empty: bool,
}

impl Frustum {
    /// The region seen through `rect` (clamped to the camera's viewport) between the near and far
    /// planes, in world space. `None` when the clamped rectangle has no area (a click, a rectangle
    /// outside the viewport, a NaN corner).
    pub fn from_rect(camera: &Camera, rect: PixelRect) -> Option<Self> {
        let vp = camera.viewport();
        let (cs, origin) = (camera.clip_space(), camera.pixel_origin());
        let a = vp.window_to_ndc(DVec3::new(rect.x0 as f64, rect.y0 as f64, 0.0), cs, origin);
        let b = vp.window_to_ndc(DVec3::new(rect.x1 as f64, rect.y1 as f64, 0.0), cs, origin);
        let (x0, x1) = (a.x.min(b.x).max(-1.0), a.x.max(b.x).min(1.0));
        let (y0, y1) = (a.y.min(b.y).max(-1.0), a.y.max(b.y).min(1.0));
        // Written so that NaN corners fail too.
        if !(x0 < x1 && y0 < y1) {
            return None;
        }
        let (lo, hi) = cs.ndc_depth_range();
        let (lo, hi) = (lo as f64, hi as f64);
        let clip_planes = [
            DVec4::new(1.0, 0.0, 0.0, -x0),
            DVec4::new(-1.0, 0.0, 0.0, x1),
            DVec4::new(0.0, 1.0, 0.0, -y0),
            DVec4::new(0.0, -1.0, 0.0, y1),
            DVec4::new(0.0, 0.0, 1.0, -lo),
            DVec4::new(0.0, 0.0, -1.0, hi),
        ];
        let clip_from_world = camera.clip_from_world_f64();
        Some(Self::from_covectors(
            clip_planes.iter().map(|c| clip_from_world.transpose() * *c),
        ))
    }

    /// Normalizes covectors, dropping constant ones that always hold and marking the region empty
    /// when a constant one never holds.
    fn from_covectors(covectors: impl IntoIterator<Item = DVec4>) -> Self {
        let mut planes = Vec::with_capacity(6);
        let mut empty = false;
        for c in covectors {
            let len = c.truncate().length();
            if len > 0.0 && len.is_finite() {
                planes.push(c / len);
            } else if c.w.is_nan() || c.w < 0.0 || !len.is_finite() {
                empty = true;
            }
        }
        Self { planes, empty }
    }

    /// The same region in the space of an object placed by `world_from_object`: each plane
    /// `(n, d)` becomes `world_from_objectᵀ · (n, d)`, renormalized.
    pub fn to_object(&self, world_from_object: DMat4) -> Self {
        let t = world_from_object.transpose();
        let mut f = Self::from_covectors(self.planes.iter().map(|p| t * *p));
        f.empty |= self.empty;
        f
    }

    /// The half-spaces `(n, d)`, unit `n`, inside where `n·p + d ≥ 0`.
    pub fn planes(&self) -> &[DVec4] {
        &self.planes
    }

    /// `true` when the region is empty.
    pub fn is_empty(&self) -> bool {
        self.empty
    }

    #[inline]
    fn eval(plane: DVec4, p: DVec3) -> f64 {
        plane.truncate().dot(p) + plane.w
    }

    /// `Some(true)` when the box is inside every plane, `Some(false)` when it is entirely outside
    /// one plane, `None` when it straddles (a quick cull before per-primitive tests).
    pub fn classify_box(&self, b: &Aabb) -> Option<bool> {
        if self.empty || b.is_empty() {
            return Some(false);
        }
        let (min, max) = (b.min.as_dvec3(), b.max.as_dvec3());
        let mut inside = true;
        for &p in &self.planes {
            let n = p.truncate();
            // The corners that maximize and minimize n·x.
            let hi = DVec3::select(n.cmpge(DVec3::ZERO), max, min);
            let lo = DVec3::select(n.cmpge(DVec3::ZERO), min, max);
            if Self::eval(p, hi) < 0.0 {
                return Some(false);
            }
            if Self::eval(p, lo) < 0.0 {
                inside = false;
            }
        }
        inside.then_some(true)
    }

    /// Whether the triangle `v0 v1 v2` has a point in the region (boundary included): clips the
    /// triangle against each plane in turn and reports whether anything is left.
    pub fn intersects_triangle(&self, v0: Vec3, v1: Vec3, v2: Vec3) -> bool {
        if self.empty {
            return false;
        }
        let (a, b, c) = (v0.as_dvec3(), v1.as_dvec3(), v2.as_dvec3());
        if !(a.is_finite() && b.is_finite() && c.is_finite()) {
            return false;
        }
        // Quick answers: all three vertices outside one plane (reject), or inside every plane
        // (accept); otherwise clip. A triangle clipped by k planes has at most 3 + k vertices.
        let mut all_inside = true;
        for &plane in &self.planes {
            let s = [
                Self::eval(plane, a),
                Self::eval(plane, b),
                Self::eval(plane, c),
            ];
            if s.iter().all(|&si| si < 0.0) {
                return false;
            }
            all_inside &= s.iter().all(|&si| si >= 0.0);
        }
        if all_inside {
            return true;
        }
        const MAX: usize = 3 + 8;
        let mut poly = [DVec3::ZERO; MAX];
        let mut next = [DVec3::ZERO; MAX];
        poly[..3].copy_from_slice(&[a, b, c]);
        let mut n = 3;
        for &plane in &self.planes {
            let mut m = 0;
            for i in 0..n {
                let (p, q) = (poly[i], poly[(i + 1) % n]);
                let (sp, sq) = (Self::eval(plane, p), Self::eval(plane, q));
                if sp >= 0.0 && m < MAX {
                    next[m] = p;
                    m += 1;
                }
                if ((sp > 0.0 && sq < 0.0) || (sp < 0.0 && sq > 0.0)) && m < MAX {
                    next[m] = p + (q - p) * (sp / (sp - sq));
                    m += 1;
                }
            }
            if m == 0 {
                return false;
            }
            std::mem::swap(&mut poly, &mut next);
            n = m;
        }
        true
    }

    /// Whether the ball of `radius` around `center` has a point in the region (boundary included).
    pub fn intersects_sphere(&self, center: Vec3, radius: f32) -> bool {
        if self.empty || !center.is_finite() || radius.is_nan() || radius < 0.0 {
            return false;
        }
        let (c, r) = (center.as_dvec3(), radius as f64);
        let s: Vec<f64> = self.planes.iter().map(|&p| Self::eval(p, c)).collect();
        if s.iter().any(|&si| si < -r) {
            return false; // entirely outside one plane
        }
        if s.iter().all(|&si| si >= 0.0) {
            return true; // centre inside
        }
        let scale = c.abs().max_element().max(r).max(1.0);
        let tol = REL_TOL * scale;
        let m = self.planes.len();
        let feasible = |x: DVec3| self.planes.iter().all(|&p| Self::eval(p, x) >= -tol);
        let within = |x: DVec3| (x - c).length() <= r + tol;
        // Faces.
        for (p, si) in self.planes.iter().zip(&s) {
            let x = c - p.truncate() * *si;
            if feasible(x) && within(x) {
                return true;
            }
        }
        // Edge lines.
        for i in 0..m {
            for j in (i + 1)..m {
                if let Some(x) = project_onto_2(c, self.planes[i], self.planes[j]) {
                    if feasible(x) && within(x) {
                        return true;
                    }
                }
            }
        }
        // Vertices.
        for i in 0..m {
            for j in (i + 1)..m {
                for k in (j + 1)..m {
                    if let Some(x) = intersect_3(self.planes[i], self.planes[j], self.planes[k]) {
                        if feasible(x) && within(x) {
                            return true;
                        }
                    }
                }
            }
        }
        false
    }
}

/// The projection of `c` onto the line `a·x = 0 ∧ b·x = 0` (homogeneous planes with unit normals);
/// `None` when the planes are parallel.
fn project_onto_2(c: DVec3, a: DVec4, b: DVec4) -> Option<DVec3> {
    let (na, nb) = (a.truncate(), b.truncate());
    // Solve [1 g; g 1] λ = (sa, sb) for the Gram matrix of the unit normals, x = c − λa na − λb nb.
    let g = na.dot(nb);
    let det = 1.0 - g * g;
    // Normals closer than ~1e-8 rad are parallel for this purpose: the line would be ill-defined
    // and a face or vertex candidate covers it.
    if det <= 1e-16 {
        return None;
    }
    let (sa, sb) = (na.dot(c) + a.w, nb.dot(c) + b.w);
    let la = (sa - g * sb) / det;
    let lb = (sb - g * sa) / det;
    let x = c - na * la - nb * lb;
    x.is_finite().then_some(x)
}

/// The point on three planes; `None` when they do not meet in one point.
fn intersect_3(a: DVec4, b: DVec4, c: DVec4) -> Option<DVec3> {
    let (na, nb, nc) = (a.truncate(), b.truncate(), c.truncate());
    let bc = nb.cross(nc);
    let det = na.dot(bc);
    // Unit normals: |det| is the volume of their parallelepiped; below 1e-12 the point is
    // ill-conditioned beyond f32 resolution (and an edge candidate covers that configuration).
    if det.abs() <= 1e-12 {
        return None;
    }
    let x = (bc * -a.w + nc.cross(na) * -b.w + na.cross(nb) * -c.w) / det;
    x.is_finite().then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::camera::{ClipSpace, Projection, Viewport};

    fn box_frustum() -> Frustum {
        // The unit cube [0, 1]³ as six half-spaces.
        Frustum::from_covectors([
            DVec4::new(1.0, 0.0, 0.0, 0.0),
            DVec4::new(-1.0, 0.0, 0.0, 1.0),
            DVec4::new(0.0, 1.0, 0.0, 0.0),
            DVec4::new(0.0, -1.0, 0.0, 1.0),
            DVec4::new(0.0, 0.0, 1.0, 0.0),
            DVec4::new(0.0, 0.0, -1.0, 1.0),
        ])
    }

    #[test]
    fn sphere_against_a_cube_uses_the_true_distance() {
        let f = box_frustum();
        // Near a corner: plane distances are all ≥ −r, but the true distance is r·√3-ish.
        let c = Vec3::new(1.5, 1.5, 1.5);
        let d = (3.0f32 * 0.25).sqrt(); // distance to the corner (1, 1, 1)
        assert!(!f.intersects_sphere(c, 0.6)); // 0.6 > 0.5 (plane test would accept) but < d
        assert!(f.intersects_sphere(c, d + 1e-4));
        // Near an edge.
        let c = Vec3::new(1.3, 1.4, 0.5);
        let d = (0.09f32 + 0.16).sqrt();
        assert!(!f.intersects_sphere(c, d - 1e-4));
        assert!(f.intersects_sphere(c, d + 1e-4));
        // Near a face, and inside.
        assert!(f.intersects_sphere(Vec3::new(0.5, 0.5, 1.2), 0.2001));
        assert!(!f.intersects_sphere(Vec3::new(0.5, 0.5, 1.2), 0.1999));
        assert!(f.intersects_sphere(Vec3::splat(0.5), 0.0));
    }

    #[test]
    fn triangle_against_a_cube() {
        let f = box_frustum();
        // Crosses the cube without any vertex inside.
        assert!(f.intersects_triangle(
            Vec3::new(-1.0, 0.5, 0.5),
            Vec3::new(2.0, 0.4, 0.5),
            Vec3::new(2.0, 0.6, 0.6)
        ));
        // Cuts close to a corner but misses it (the plane x + y + z = 3.1).
        assert!(!f.intersects_triangle(
            Vec3::new(3.1, 0.0, 0.0),
            Vec3::new(0.0, 3.1, 0.0),
            Vec3::new(0.0, 0.0, 3.1)
        ));
        // The plane x + y + z = 2.9 cuts the corner off.
        assert!(f.intersects_triangle(
            Vec3::new(2.9, 0.0, 0.0),
            Vec3::new(0.0, 2.9, 0.0),
            Vec3::new(0.0, 0.0, 2.9)
        ));
        assert!(!f.intersects_triangle(Vec3::NAN, Vec3::ONE, Vec3::ZERO));
    }

    #[test]
    fn box_classification() {
        let f = box_frustum();
        assert_eq!(
            f.classify_box(&Aabb::new(Vec3::splat(0.2), Vec3::splat(0.8))),
            Some(true)
        );
        assert_eq!(
            f.classify_box(&Aabb::new(Vec3::splat(1.2), Vec3::splat(1.8))),
            Some(false)
        );
        assert_eq!(
            f.classify_box(&Aabb::new(Vec3::splat(0.5), Vec3::splat(1.8))),
            None
        );
    }

    #[test]
    fn infinite_far_plane_drops_out_and_empty_rects_give_none() {
        let vp = Viewport::new(100.0, 100.0);
        let p = Projection::perspective_infinite(1.0, 1.0, 0.1, ClipSpace::Direct3D).unwrap();
        let cam = Camera::look_at(Vec3::new(0.0, 0.0, 1.0), Vec3::ZERO, Vec3::Y, p, vp).unwrap();
        let f = Frustum::from_rect(&cam, PixelRect::new(0.0, 0.0, 100.0, 100.0)).unwrap();
        assert_eq!(f.planes().len(), 5);
        assert!(!f.is_empty());
        assert!(f.intersects_sphere(Vec3::new(0.0, 0.0, -1e6), 1.0));
        assert!(Frustum::from_rect(&cam, PixelRect::new(5.0, 5.0, 5.0, 50.0)).is_none());
        assert!(Frustum::from_rect(&cam, PixelRect::new(200.0, 5.0, 300.0, 50.0)).is_none());
        assert!(Frustum::from_rect(&cam, PixelRect::new(f32::NAN, 5.0, 300.0, 50.0)).is_none());
    }
}
