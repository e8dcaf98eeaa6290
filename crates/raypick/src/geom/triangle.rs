//! Ray/triangle intersection kernels.
//!
//! Every kernel has the same signature, `fn(&Ray, v0, v1, v2, Culling) -> Option<TriHit>`, and reports
//! the hit parameter `t` (units of `ray.dir`) and the barycentrics `u` (weight of `v1`) and `v` (weight
//! of `v2`), so the hit point is both `ray.at(t)` and `(1 - u - v)·v0 + u·v1 + v·v2`.
//!
//! - [`watertight`] — Woop, Benthin, Wald, "Watertight Ray/Triangle Intersection", JCGT 2(1), 2013.
//!   The default everywhere in the engine: a ray through a shared edge or vertex of a closed mesh hits
//!   at least one of the triangles that share it, at any scale and distance from the origin.
//!
//! ## Facing and culling
//! A triangle's *front* is the side from which its vertices `v0 → v1 → v2` appear counter-clockwise,
//! i.e. the side its geometric normal `(v1 - v0) × (v2 - v0)` points to. A ray hits the front face when
//! `dot(normal, dir) < 0`. With [`Culling::Back`] the kernels report front-face hits only.

use glam::{DVec2, Vec3};

use super::Ray;

/// A ray/triangle hit: the ray parameter and the barycentric coordinates of the hit point.
///
/// `u` is the weight of `v1` and `v` the weight of `v2` (`1 - u - v` weights `v0`); on a hit
/// `u >= 0`, `v >= 0`, `u + v <= 1` up to rounding.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriHit {
    /// Ray parameter, in units of `ray.dir`.
    pub t: f32,
    /// Barycentric weight of `v1`.
    pub u: f32,
    /// Barycentric weight of `v2`.
    pub v: f32,
}

impl TriHit {
    /// The hit point as `origin + t·dir`. Its error grows with `|t·dir|`, i.e. with the distance from
    /// the ray origin to the hit, and it does not lie exactly on the triangle's plane.
    #[inline]
    pub fn point_from_ray(&self, ray: &Ray) -> Vec3 {
        ray.at(self.t)
    }

    /// The hit point as `(1 - u - v)·v0 + u·v1 + v·v2`. Prefer this one: its error is relative to the
    /// triangle's own coordinates (a few ulps of the vertices), not to the ray length, and it lies on
    /// the triangle up to that rounding (pbrt-v4 §6.8.6 makes the same choice).
    #[inline]
    pub fn point_from_barycentrics(&self, v0: Vec3, v1: Vec3, v2: Vec3) -> Vec3 {
        (1.0 - self.u - self.v) * v0 + self.u * v1 + self.v * v2
    }
}

/// Which faces a triangle kernel reports. See the module docs for what "front" means.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Culling {
    /// Both faces (two-sided triangles). The default.
    #[default]
    None,
    /// Back faces are culled: only hits with `dot(normal, dir) < 0` are reported.
    Back,
}

/// How the watertight test treats a ray that passes exactly through an edge or vertex.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum EdgeRule {
    /// Edges and vertices belong to every triangle that has them: a ray through a shared edge hits
    /// both triangles. Never misses; the right rule for closest- and any-hit queries.
    #[default]
    Closed,
    /// Half-open edges: a point exactly on an edge belongs only to the triangle for which the edge,
    /// walked counter-clockwise in the ray's sheared 2-D frame, points "up" (`dy > 0`, or `dy = 0` and
    /// `dx < 0`) — the rasterizer's top-left rule. Two triangles that share an edge with consistent
    /// winding see it in opposite directions, so exactly one of them claims it, and a vertex shared by
    /// a fan is claimed once. Use it to count crossings (inside/outside parity).
    HalfOpen,
}

/// A ray prepared for the watertight test (Woop et al. 2013, fig. 2): the axis permutation that makes
/// the largest direction component `z`, and the shear that maps the direction to `+z`. Compute it once
/// per ray and test many triangles with [`WatertightRay::intersect`].
#[derive(Clone, Copy, Debug)]
pub struct WatertightRay {
    origin: Vec3,
    kx: usize,
    ky: usize,
    kz: usize,
    sx: f32,
    sy: f32,
    sz: f32,
    t_min: f32,
    t_max: f32,
    valid: bool,
}

impl WatertightRay {
    /// Precomputes the permutation and shear of `ray`.
    #[inline]
    pub fn new(ray: &Ray) -> Self {
        let valid = ray.is_valid();
        let d = ray.dir;
        let a = d.abs();
        // Largest |component| becomes z; ties go to the lower axis. For invalid rays any axis will do:
        // the test returns early.
        let kz = if a.x >= a.y && a.x >= a.z {
            0
        } else if a.y >= a.z {
            1
        } else {
            2
        };
        let mut kx = (kz + 1) % 3;
        let mut ky = (kx + 1) % 3;
        // Swapping x and y when dir.z < 0 keeps the winding (the sign of the 2-D edge functions).
        if d[kz] < 0.0 {
            std::mem::swap(&mut kx, &mut ky);
        }
        let sz = 1.0 / d[kz];
        Self {
            origin: ray.origin,
            kx,
            ky,
            kz,
            sx: d[kx] * sz,
            sy: d[ky] * sz,
            sz,
            t_min: ray.t_min,
            t_max: ray.t_max,
            valid,
        }
    }

    /// The watertight test against one triangle. See [`watertight`] for the contract and [`EdgeRule`]
    /// for how exact edge hits are assigned.
    #[inline]
    pub fn intersect(
        &self,
        v0: Vec3,
        v1: Vec3,
        v2: Vec3,
        culling: Culling,
        edges: EdgeRule,
    ) -> Option<TriHit> {
        if !self.valid {
            return None;
        }
        let (kx, ky, kz) = (self.kx, self.ky, self.kz);
        // Vertices relative to the ray origin.
        let a = v0 - self.origin;
        let b = v1 - self.origin;
        let c = v2 - self.origin;
        // Shear and scale so the ray is the +z axis through the 2-D origin.
        let ax = a[kx] - self.sx * a[kz];
        let ay = a[ky] - self.sy * a[kz];
        let bx = b[kx] - self.sx * b[kz];
        let by = b[ky] - self.sy * b[kz];
        let cx = c[kx] - self.sx * c[kz];
        let cy = c[ky] - self.sy * c[kz];
        // Scaled barycentrics: edge functions of the edges opposite v0, v1, v2.
        let mut u = cx * by - cy * bx; // edge v1 → v2, weight of v0
        let mut v = ax * cy - ay * cx; // edge v2 → v0, weight of v1
        let mut w = bx * ay - by * ax; // edge v0 → v1, weight of v2
                                       // An edge function that rounded to exactly 0 may have the wrong sign; recompute all three in
                                       // f64, where the products of two f32 are exact and the difference is rounded once, so the
                                       // sign is exact (Woop et al. 2013, §3.3).
        if u == 0.0 || v == 0.0 || w == 0.0 {
            let e = |p: (f32, f32), q: (f32, f32)| -> f32 {
                let p = DVec2::new(p.0 as f64, p.1 as f64);
                let q = DVec2::new(q.0 as f64, q.1 as f64);
                (p.x * q.y - p.y * q.x) as f32
            };
            u = e((cx, cy), (bx, by));
            v = e((ax, ay), (cx, cy));
            w = e((bx, by), (ax, ay));
        }
        let any_neg = u < 0.0 || v < 0.0 || w < 0.0;
        let any_pos = u > 0.0 || v > 0.0 || w > 0.0;
        match culling {
            // Front faces have all edge functions >= 0 (see the facing test in the unit tests).
            Culling::Back if any_neg => return None,
            _ if any_neg && any_pos => return None,
            _ => {}
        }
        let det = u + v + w;
        if det == 0.0 {
            // Degenerate (zero projected area) or the ray is parallel to the plane.
            return None;
        }
        if edges == EdgeRule::HalfOpen {
            // Edge k runs between the vertices that the other two weights belong to; walk it in the
            // counter-clockwise sense of the 2-D frame (flip when det < 0).
            let flip = if det < 0.0 { -1.0 } else { 1.0 };
            let claims = |ex: f32, ey: f32| {
                let (ex, ey) = (ex * flip, ey * flip);
                ey > 0.0 || (ey == 0.0 && ex < 0.0)
            };
            if (u == 0.0 && !claims(cx - bx, cy - by))
                || (v == 0.0 && !claims(ax - cx, ay - cy))
                || (w == 0.0 && !claims(bx - ax, by - ay))
            {
                return None;
            }
        }
        let az = self.sz * a[kz];
        let bz = self.sz * b[kz];
        let cz = self.sz * c[kz];
        let t_scaled = u * az + v * bz + w * cz;
        let rcp = 1.0 / det;
        let t = t_scaled * rcp;
        if !(t >= self.t_min && t <= self.t_max) {
            return None;
        }
        Some(TriHit {
            t,
            u: v * rcp,
            v: w * rcp,
        })
    }
}

/// Watertight ray/triangle intersection (Woop, Benthin, Wald 2013), closed edges.
///
/// Translates the vertices to the ray origin, permutes the axes so the largest direction component is
/// `z`, shears so the ray becomes the `z` axis, and evaluates three 2-D edge functions; an edge function
/// that is exactly zero is recomputed in `f64`. Edges and vertices are closed ([`EdgeRule::Closed`]).
///
/// ```
/// use raypick::{geom::triangle::{watertight, Culling}, glam::Vec3, Ray};
/// let (v0, v1, v2) = (Vec3::new(0.0, 0.0, -1.0), Vec3::new(1.0, 0.0, -1.0), Vec3::new(0.0, 1.0, -1.0));
/// let ray = Ray::new(Vec3::new(0.25, 0.25, 0.0), Vec3::NEG_Z);
/// let hit = watertight(&ray, v0, v1, v2, Culling::None).unwrap();
/// assert_eq!((hit.t, hit.u, hit.v), (1.0, 0.25, 0.25));
/// ```
#[inline]
pub fn watertight(ray: &Ray, v0: Vec3, v1: Vec3, v2: Vec3, culling: Culling) -> Option<TriHit> {
    WatertightRay::new(ray).intersect(v0, v1, v2, culling, EdgeRule::Closed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counter-clockwise seen from +z: the normal is +z.
    const TRI: [Vec3; 3] = [
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(0.0, 1.0, 0.0),
    ];

    #[test]
    fn facing_and_back_face_culling_for_every_dominant_axis() {
        let p = Vec3::new(0.2, 0.3, 0.0);
        for dir in [
            Vec3::new(0.1, -0.2, -1.0),
            Vec3::new(3.0, 0.5, -1.0),
            Vec3::new(-0.5, 4.0, -1.0),
        ] {
            // Travelling against the normal: front face.
            let front = Ray::new(p - dir, dir);
            let back = Ray::new(p + dir, -dir);
            let [v0, v1, v2] = TRI;
            let h =
                watertight(&front, v0, v1, v2, Culling::Back).expect("front face survives culling");
            assert!(
                (h.t - 1.0).abs() < 1e-6 && (h.u - 0.2).abs() < 1e-6 && (h.v - 0.3).abs() < 1e-6
            );
            assert!(watertight(&back, v0, v1, v2, Culling::Back).is_none());
            assert!(watertight(&back, v0, v1, v2, Culling::None).is_some());
        }
    }

    #[test]
    fn half_open_edges_claim_a_shared_edge_once() {
        // Two triangles sharing the diagonal of the unit square, consistent winding.
        let q = [
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(1.0, 1.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
        ];
        // Dyadic directions and points keep `p - dir` and the shear exact, so the rays really pass
        // through the edge.
        for dir in [
            Vec3::NEG_Z,
            Vec3::Z,
            Vec3::new(0.25, 0.125, -1.0),
            Vec3::new(-2.0, 0.125, 1.0),
        ] {
            for p in [
                Vec3::new(0.5, 0.5, 0.0),
                Vec3::new(0.25, 0.25, 0.0),
                Vec3::new(0.0, 0.0, 0.0),
                Vec3::new(1.0, 1.0, 0.0),
            ] {
                let ray = WatertightRay::new(&Ray::new(p - dir, dir));
                let hits = [(q[0], q[1], q[2]), (q[0], q[2], q[3])]
                    .iter()
                    .filter(|(a, b, c)| {
                        ray.intersect(*a, *b, *c, Culling::None, EdgeRule::HalfOpen)
                            .is_some()
                    })
                    .count();
                let closed = [(q[0], q[1], q[2]), (q[0], q[2], q[3])]
                    .iter()
                    .filter(|(a, b, c)| {
                        ray.intersect(*a, *b, *c, Culling::None, EdgeRule::Closed)
                            .is_some()
                    })
                    .count();
                assert_eq!(
                    closed, 2,
                    "closed edges: both triangles hit at {p} along {dir}"
                );
                // Corners of the square are on its boundary: claimed at most once; the diagonal's
                // interior exactly once.
                if p.x == 0.5 || p.x == 0.25 {
                    assert_eq!(hits, 1, "half-open: exactly one claim at {p} along {dir}");
                } else {
                    assert!(hits <= 1);
                }
            }
        }
    }
}
