//! Ray/triangle intersection kernels.
//!
//! Every kernel has the same signature, `fn(&Ray, v0, v1, v2, Culling) -> Option<TriHit>`, and reports
//! the hit parameter `t` (units of `ray.dir`) and the barycentrics `u` (weight of `v1`) and `v` (weight
//! of `v2`), so the hit point is both `ray.at(t)` and `(1 - u - v)·v0 + u·v1 + v·v2`.
//!
//! - [`watertight`] — Woop, Benthin, Wald, "Watertight Ray/Triangle Intersection", JCGT 2(1), 2013.
//!   The default everywhere in the engine: a ray through a shared edge or vertex of a closed mesh hits
//!   at least one of the triangles that share it, at any scale and distance from the origin.
//! - [`moller_trumbore`] — Möller & Trumbore, "Fast, Minimum Storage Ray/Triangle Intersection",
//!   JGT 2(1), 1997, as the classic picking write-ups give it, with a scale-free determinant test
//!   ([`DET_REL_EPS`]). Fast, but not watertight: a ray through a shared edge can slip between the two
//!   triangles (the `kernels_watertight` test counts how often).
//! - [`plane_barycentric`] — the "intuitive" method of the DirectX Pick sample's write-up: intersect the
//!   supporting plane, then test the point with barycentric coordinates from dot products. The baseline.
//!
//! ## Degenerate triangles and invalid rays
//! Triangles of zero area (repeated vertices, collinear vertices) never hit; rays that are not
//! [`Ray::is_valid`] (NaN or infinite components, zero direction, empty interval) never hit; a hit is
//! always at a finite `t` in `[ray.t_min, ray.t_max]`. No kernel panics on any input.
//!
//! ## Facing and culling
//! A triangle's *front* is the side from which its vertices `v0 → v1 → v2` appear counter-clockwise,
//! i.e. the side its geometric normal `(v1 - v0) × (v2 - v0)` points to. A ray hits the front face when
//! `dot(normal, dir) < 0`. With [`Culling::Back`] the kernels report front-face hits only.

use glam::{DVec2, DVec3, Vec3};

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
///
/// With `a = v - origin`, the sheared coordinates are the paper's `a[kx] - Sx·a[kz]`,
/// `a[ky] - Sy·a[kz]` and `Sz·a[kz]`, stored as `a[kx] + sx·a[kz]` with `sx = -Sx` (negating the
/// factor negates the rounded product exactly): one rounded product and one rounded sum, never
/// fused, in every implementation (the SIMD block test computes the same values bit for bit from
/// these fields, which is what makes shared edges agree). Two terms instead of the three of a dot
/// product with a row of the permutation matrix: a SIMD test loads the rows of axes `kx`, `ky`,
/// `kz` directly, a third of the arithmetic.
#[derive(Clone, Copy, Debug)]
pub struct WatertightRay {
    pub(crate) origin: Vec3,
    /// `[kx, ky, kz]`.
    pub(crate) axes: [usize; 3],
    /// `-d[kx] / d[kz]`, as `-(d[kx]·sz)`.
    pub(crate) sx: f32,
    /// `-d[ky] / d[kz]`, as `-(d[ky]·sz)`.
    pub(crate) sy: f32,
    /// `1 / d[kz]`.
    pub(crate) sz: f32,
    pub(crate) t_min: f32,
    t_max: f32,
    /// The ray's direction, for the `f64` decision next to the origin ([`plane_t_f64`]).
    dir: Vec3,
    valid: bool,
}

impl WatertightRay {
    /// Precomputes the permutation and shear of `ray`.
    #[inline(always)]
    pub fn new(ray: &Ray) -> Self {
        /// `(kx, ky)` for each `kz`: the next two axes cyclically.
        const NEXT: [[usize; 2]; 3] = [[1, 2], [2, 0], [0, 1]];
        let valid = ray.is_valid();
        let d = ray.dir.to_array();
        let a = ray.dir.abs();
        // Largest |component| becomes z; ties go to the lower axis. For invalid rays any axis will do:
        // the test returns early.
        let kz = if a.x >= a.y && a.x >= a.z {
            0
        } else if a.y >= a.z {
            1
        } else {
            2
        };
        // Swapping x and y when dir.z < 0 keeps the winding (the sign of the 2-D edge functions).
        let flip = usize::from(d[kz] < 0.0);
        // `min(2)` only tells the compiler the axes are in range (they are), so no bounds checks.
        let kx = NEXT[kz][flip].min(2);
        let ky = NEXT[kz][1 - flip].min(2);
        let sz = 1.0 / d[kz];
        Self {
            origin: ray.origin,
            axes: [kx, ky, kz],
            sx: -(d[kx] * sz),
            sy: -(d[ky] * sz),
            sz,
            t_min: ray.t_min,
            t_max: ray.t_max,
            dir: ray.dir,
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
        self.test::<true>(v0, v1, v2, culling, edges)
    }

    /// [`Self::intersect`], where `CHECK_DEGENERATE = false` skips the zero-area check: for a
    /// triangle that is either of non-zero area or collapsed to one point (`v0 == v1 == v2`, bit for
    /// bit), which is how meshes store their degenerate triangles ([`is_degenerate`] is then asked
    /// once per triangle when the scene is built, not once per hit). A collapsed triangle has three
    /// edge functions of exactly 0 (or NaN), so it fails the `det` or the `t` test; the answers are
    /// those of [`Self::intersect`] on the original triangle. Always inlined: it is the leaf test of
    /// the mesh traversal, compiled with that loop's CPU features.
    #[inline(always)]
    pub(crate) fn test<const CHECK_DEGENERATE: bool>(
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
        // Vertices relative to the ray origin, in the order [kx, ky, kz] (`min(2)`: the axes are in
        // range, and the compiler need not check).
        let permuted = |v: Vec3| {
            let p = (v - self.origin).to_array();
            self.axes.map(|k| p[k.min(2)])
        };
        let (a, b, c) = (permuted(v0), permuted(v1), permuted(v2));
        // Shear so the ray is the +z axis through the 2-D origin.
        let ax = a[0] + self.sx * a[2];
        let ay = a[1] + self.sy * a[2];
        let bx = b[0] + self.sx * b[2];
        let by = b[1] + self.sy * b[2];
        let cx = c[0] + self.sx * c[2];
        let cy = c[1] + self.sy * c[2];
        // Scaled barycentrics: edge functions of the edges opposite v0, v1, v2.
        let mut u = cx * by - cy * bx; // edge v1 → v2, weight of v0
        let mut v = ax * cy - ay * cx; // edge v2 → v0, weight of v1
        let mut w = bx * ay - by * ax; // edge v0 → v1, weight of v2
                                       // An edge function that rounded to exactly 0 may have the wrong sign: recompute all three
                                       // exactly signed.
        if u == 0.0 || v == 0.0 || w == 0.0 {
            (u, v, w) = edge_functions_f64([(ax, ay), (bx, by), (cx, cy)]);
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
        // The 2-D test runs on rounded, sheared vertices: a triangle whose vertices are exactly
        // collinear in 3-D can become a sliver of non-zero area there and report a hit. Only rays that
        // passed the sign tests pay for this check.
        if CHECK_DEGENERATE && is_degenerate(v0, v1, v2) {
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
        let az = self.sz * a[2];
        let bz = self.sz * b[2];
        let cz = self.sz * c[2];
        let t_scaled = u * az + v * bz + w * cz;
        let err_scaled = t_error_scaled(
            [ax, bx, cx].map(f32::abs),
            [ay, by, cy].map(f32::abs),
            [a[2], b[2], c[2]].map(f32::abs),
            [az, bz, cz].map(f32::abs),
            [u, v, w].map(f32::abs),
            [self.sx, self.sy].map(f32::abs),
        );
        let (t, u, v, err) = scale_by_det(t_scaled, v, w, err_scaled, det);
        // `t` overflows to ±∞ when det is tiny (a ray almost parallel to the plane); a hit "at
        // infinity" is not a hit, even for an unbounded ray.
        if !(t <= self.t_max && t.is_finite()) {
            return None;
        }
        if self.t_min >= 0.0 && t.abs() <= err {
            // For a ray (not a line), a `t` within its own rounding error of 0 may belong to a
            // plane behind the origin (see [`t_error_scaled`]): the sign is decided in f64.
            let t = plane_t_f64(self.origin, self.dir, [v0, v1, v2]);
            let t32 = t as f32;
            return (t > 0.0 && t32 >= self.t_min && t32 <= self.t_max).then_some(TriHit {
                t: t32,
                u,
                v,
            });
        }
        // `t` is finite and a valid ray's `t_min` is not NaN.
        if t < self.t_min {
            return None;
        }
        Some(TriHit { t, u, v })
    }
}

/// The three edge functions `(u, v, w)` of sheared vertices `a, b, c` in `f64`, where the products of
/// two `f32` are exact and the difference is rounded once, so each sign is exact (Woop et al. 2013,
/// §3.3). Rare (an `f32` edge function rounded to exactly 0): out of line, off the hot path.
#[cold]
#[inline(never)]
fn edge_functions_f64([a, b, c]: [(f32, f32); 3]) -> (f32, f32, f32) {
    let e = |p: (f32, f32), q: (f32, f32)| -> f32 {
        let p = DVec2::new(p.0 as f64, p.1 as f64);
        let q = DVec2::new(q.0 as f64, q.1 as f64);
        f64_to_f32_keep_sign(p.x * q.y - p.y * q.x)
    };
    (e(c, b), e(a, c), e(b, a))
}

/// Where the ray `origin + t·dir` crosses the plane of `v0 v1 v2`, in `f64`: the differences of
/// `f32` coordinates are exact there and the products carry 53 bits, so the sign of a `t` that
/// the `f32` kernel cannot tell from 0 (see [`t_error_scaled`]) is right unless the origin lies
/// within about `1e-15` of the triangle's size from the plane. Rare (hits next to the origin):
/// out of line.
#[cold]
#[inline(never)]
fn plane_t_f64(origin: Vec3, dir: Vec3, [v0, v1, v2]: [Vec3; 3]) -> f64 {
    let (a, b, c) = (v0.as_dvec3(), v1.as_dvec3(), v2.as_dvec3());
    let n = (b - a).cross(c - a);
    n.dot(a - origin.as_dvec3()) / n.dot(dir.as_dvec3())
}

/// `(t, u, v) / det` and `err / |det|`, by one reciprocal and four products, or by four divisions
/// when `1 / det` overflows: `|det| < 2⁻¹²⁸` happens for triangles of size below about `1e-19` (det
/// is a product of two coordinates), where the quotients themselves are perfectly representable.
#[inline(always)]
fn scale_by_det(t: f32, u: f32, v: f32, err: f32, det: f32) -> (f32, f32, f32, f32) {
    let rcp = 1.0 / det;
    if rcp.is_finite() {
        (t * rcp, u * rcp, v * rcp, err * rcp.abs())
    } else {
        (t / det, u / det, v / det, err / det.abs())
    }
}

/// `γₙ = nε / (1 − nε)`, `ε = 2⁻²⁴` the unit roundoff of `f32`: a bound on the relative error of `n`
/// successive roundings (Higham, *Accuracy and Stability of Numerical Algorithms*, 2002, §3.1; pbrt-v4
/// §6.8.1 calls it `gamma(n)`).
pub(crate) const fn gamma(n: f32) -> f32 {
    let eps = f32::EPSILON * 0.5;
    n * eps / (1.0 - n * eps)
}

/// The watertight kernel's bound on the rounding error of `t`, times `|det|`: pbrt-v4 §6.8
/// ("Avoiding Intersections Behind Ray Origins", the bound derived for Woop et al.'s test), from the
/// largest magnitudes of the sheared vertices' `x` and `y`, of their translated `z` before (`p`) and
/// after (`z`) the scale by `sz`, of the three edge functions (`e`), and of the shear factors
/// `[sx, sy]`.
///
/// For a ray that starts at its origin (`t_min >= 0`), a `t` within this bound of 0 may belong to
/// a plane that lies behind the origin: the kernel then decides the sign in `f64`
/// ([`plane_t_f64`]) and reports that `t`. That is what makes offset origins safe on any triangle:
/// the error of `t` scales with the vertices' distance from the origin (a room's floor triangle,
/// tens of units wide, gives `t` errors of about `1e-4`), while [`offset_ray_origin`] moves a
/// point only by ulps of its own coordinates (`1.5e-5` next to a coordinate plane); without the
/// check, rays leaving such a floor re-hit it at `t ≈ 0`. pbrt rejects every such `t` instead,
/// which also drops genuine hits next to the origin: the bound is a worst case, loose by two
/// orders of magnitude on a long sliver seen along its length (a bounce ray's real hit at
/// `t = 0.041` on a 10-unit sliver has a bound of `0.054` and an actual error of `1.5e-4`). A line
/// (`t_min < 0`) has no boundary at `0`.
///
/// The terms: `δz = γ₃·max|z|`, `δx = γ₅·(max|x| + |sx|·max|p|)`, `δy = γ₅·(max|y| + |sy|·max|p|)`,
/// `δe = 2·(γ₂·max|x|·max|y| + δy·max|x| + δx·max|y|)`, and the bound
/// `3·(γ₃·max|e|·max|z| + δe·max|z| + δz·max|e|)`. pbrt writes `δx = γ₅·(max|x| + max|z|)` with
/// the scaled `z`, which mixes units (`z` is in units of `t`, `x` in units of length) and holds
/// only for directions of about unit length: far too large for a short direction (it rejects every
/// hit of a ray whose direction is `1e-8` long) and too small for a long one. The shear
/// `x = p[kx] + sx·p[kz]` rounds its two terms, so its error grows with `|p[kx]|` (at most
/// `|x| + |sx·p[kz]|`) and with `|sx·p[kz]|`: dimensionless factors times lengths. The SIMD hit test
/// repeats these operations in this order, bit for bit.
///
/// [`offset_ray_origin`]: super::offset::offset_ray_origin
#[inline(always)]
pub(crate) fn t_error_scaled(
    x: [f32; 3],
    y: [f32; 3],
    p: [f32; 3],
    z: [f32; 3],
    e: [f32; 3],
    [sx, sy]: [f32; 2],
) -> f32 {
    let max3 = |a: [f32; 3]| a[0].max(a[1]).max(a[2]);
    let (max_x, max_y, max_p) = (max3(x), max3(y), max3(p));
    let (max_z, max_e) = (max3(z), max3(e));
    let delta_z = gamma(3.0) * max_z;
    let delta_x = gamma(5.0) * (max_x + sx * max_p);
    let delta_y = gamma(5.0) * (max_y + sy * max_p);
    let delta_e = 2.0 * (gamma(2.0) * max_x * max_y + delta_y * max_x + delta_x * max_y);
    3.0 * (gamma(3.0) * max_e * max_z + delta_e * max_z + delta_z * max_e)
}

/// Rounds an `f64` edge function to `f32` without losing its sign: a non-zero value below the smallest
/// `f32` subnormal (vertex coordinates under about `1e-23` after the shear) would round to `0` and turn
/// a strict inside/outside decision into an "exactly on the edge" one.
#[inline]
fn f64_to_f32_keep_sign(x: f64) -> f32 {
    let r = x as f32;
    if r == 0.0 && x != 0.0 {
        f32::from_bits(1).copysign(x as f32)
    } else {
        r
    }
}

/// `true` when the triangle has zero area: `(v1 - v0) × (v2 - v0)` is exactly zero in `f64`.
///
/// The edge vectors are formed in `f64`, where the difference of two `f32` is exact whenever the two
/// coordinates are within a factor of about `2²⁸` of each other (or one is zero). Then, for exactly
/// collinear vertices (repeated vertices included), each component `a·b - c·d` of the cross product
/// subtracts two roundings of the *same* real number and is exactly zero, so every truly degenerate
/// triangle is caught. A non-degenerate triangle is reported degenerate only if its area is below the
/// `f64` rounding of these products (relative `2⁻⁵³`), far below anything `f32` can resolve.
#[inline]
pub(crate) fn is_degenerate(v0: Vec3, v1: Vec3, v2: Vec3) -> bool {
    let e1 = v1.as_dvec3() - v0.as_dvec3();
    let e2 = v2.as_dvec3() - v0.as_dvec3();
    e1.cross(e2) == DVec3::ZERO
}

/// The scale-free determinant threshold of [`moller_trumbore`] and [`plane_barycentric`]: a hit is
/// rejected when `|det| <= DET_REL_EPS · |E1|·|E2|·|D|`, with `E1 = v1 - v0`, `E2 = v2 - v0`, `D` the
/// ray direction and `det = E1 · (D × E2)`.
///
/// Why a relative test: `det / (|E1||E2||D|) = sin θ · cos φ`, where `θ` is the triangle's angle at `v0`
/// and `φ` the angle between the ray and the normal, so the test does not depend on the scene's scale,
/// the triangle's size or the length of `D` (the write-ups' absolute `det < 1e-4` rejects every
/// triangle smaller than about `0.01` units and accepts anything at all in a scene measured in
/// kilometres).
///
/// Why `2⁻²⁰ ≈ 9.5e-7`: computing `det` in `f32` (two rounded differences for the edges, a cross product
/// and a dot product) has an absolute error of at most `γ(6) · √2 · |E1||E2||D| ≈ 5.1e-7 · |E1||E2||D|`
/// (`γ` as in [`super::aabb::gamma`]; the `√2` bounds `Σᵢ |E1ᵢ|(|Dⱼ E2ₖ| + |Dₖ E2ⱼ|)`). Any `det` above
/// `2⁻²⁰` of the scale is therefore at least half signal and has the right sign; anything below may be
/// pure rounding noise (an exactly degenerate triangle computes such a `det`). What the test rejects:
/// rays within about `1e-6` radians of the triangle's plane, and slivers whose smallest angle is under
/// about `1e-6` radians — neither has a well-defined hit in `f32`.
pub const DET_REL_EPS: f32 = 1.0 / 1_048_576.0;

/// `|det| > DET_REL_EPS · |E1|·|E2|·|D|`, evaluated in `f64` where the product of squared lengths can
/// neither overflow nor underflow for any finite `f32` input (at most about `1e232`, at least `1e-270`).
#[inline]
fn det_is_significant(det: f32, e1: Vec3, e2: Vec3, dir: Vec3) -> bool {
    let det = det as f64;
    let scale2 = e1.as_dvec3().length_squared()
        * e2.as_dvec3().length_squared()
        * dir.as_dvec3().length_squared();
    let eps = DET_REL_EPS as f64;
    det * det > eps * eps * scale2
}

/// Möller–Trumbore ray/triangle intersection (Möller & Trumbore 1997), as in the classic picking
/// write-ups (the DirectX Pick sample's `IntersectTriangle`).
///
/// `E1 = v1 - v0`, `E2 = v2 - v0`, `P = D × E2`, `det = E1 · P`. `det > 0` exactly when the ray meets the
/// front face (`det = -D · ((v1 - v0) × (v2 - v0))`); with [`Culling::Back`] a negative `det` is a miss,
/// otherwise the sign trick flips `T = O - v0` and `det` so that `det > 0`, and the unscaled
/// barycentrics are tested against `det` (early exits on `u`, then on `u + v`) before anything is
/// divided. The scaling by `1 / det` happens once, at the end.
///
/// Not watertight: `u` and `v` are computed per triangle, so a ray through an edge shared by two
/// triangles can be rejected by both. Use [`watertight`] where that matters.
///
/// Instead of the write-ups' absolute `det < 1e-4`, a hit needs `|det| > DET_REL_EPS · |E1||E2||D|`
/// (see [`DET_REL_EPS`]: independent of the scene's scale). Since that test only ever rejects, it runs
/// after the cheap early exits, on candidate hits only; the outcome is the same as running it first.
///
/// ```
/// use raypick::{geom::triangle::{moller_trumbore, Culling}, glam::Vec3, Ray};
/// let (v0, v1, v2) = (Vec3::new(0.0, 0.0, -1.0), Vec3::new(1.0, 0.0, -1.0), Vec3::new(0.0, 1.0, -1.0));
/// let ray = Ray::new(Vec3::new(0.25, 0.5, 0.0), Vec3::NEG_Z);
/// let hit = moller_trumbore(&ray, v0, v1, v2, Culling::Back).unwrap();
/// assert_eq!((hit.t, hit.u, hit.v), (1.0, 0.25, 0.5));
/// // The back face is culled.
/// let back = Ray::new(Vec3::new(0.25, 0.5, -2.0), Vec3::Z);
/// assert!(moller_trumbore(&back, v0, v1, v2, Culling::Back).is_none());
/// ```
#[inline]
pub fn moller_trumbore(
    ray: &Ray,
    v0: Vec3,
    v1: Vec3,
    v2: Vec3,
    culling: Culling,
) -> Option<TriHit> {
    if !ray.is_valid() {
        return None;
    }
    let e1 = v1 - v0;
    let e2 = v2 - v0;
    let p = ray.dir.cross(e2);
    let mut det = e1.dot(p);
    let mut tvec = ray.origin - v0;
    if det < 0.0 {
        // Back face.
        if culling == Culling::Back {
            return None;
        }
        // The sign trick: negating both T and det leaves u/det, v/det and t/det unchanged.
        det = -det;
        tvec = -tvec;
    }
    // det == 0 (parallel ray, degenerate triangle) or NaN (non-finite vertices).
    if det.is_nan() || det <= 0.0 {
        return None;
    }
    let u = tvec.dot(p);
    if !(u >= 0.0 && u <= det) {
        return None;
    }
    let q = tvec.cross(e1);
    let v = ray.dir.dot(q);
    if !(v >= 0.0 && u + v <= det) {
        return None;
    }
    if !det_is_significant(det, e1, e2, ray.dir) {
        return None;
    }
    let (t, u, v, _) = scale_by_det(e2.dot(q), u, v, 0.0, det);
    if !(t >= ray.t_min && t <= ray.t_max && t.is_finite()) {
        return None;
    }
    Some(TriHit { t, u, v })
}

/// Ray/plane distance, then point-in-triangle with barycentric dot products: the "intuitive" method of
/// the DirectX Pick sample's write-up (and Ericson, *Real-Time Collision Detection* §3.4). The
/// baseline the other two kernels are compared with.
///
/// 1. The plane through `v0` with normal `N = (v1 - v0) × (v2 - v0)` is met at
///    `t = N · (v0 - O) / (N · D)`. (The write-up's code writes the plane as `N · X + d = 0` and uses a
///    `d` it never declares; with `d = -N · v0` its `t = -(N · O + d) / (N · D)` is this formula. The
///    sign of the numerator is the one that makes `O + tD` satisfy the plane equation, which the
///    unit tests check.) `N · D < 0` is the front face.
/// 2. With `P = O + tD - v0`, `dᵢⱼ` the dot products of `E1 = v1 - v0`, `E2 = v2 - v0` and `P`:
///    `u = (d₂₂ d₁₀ - d₁₂ d₂₀) / den`, `v = (d₁₁ d₂₀ - d₁₂ d₁₀) / den`, and the point is inside when
///    `u ≥ 0`, `v ≥ 0`, `u + v ≤ 1` (edges closed). The usual `den = d₁₁ d₂₂ - d₁₂²` equals `|N|²`
///    (Lagrange's identity); `|N|²` is used because it does not cancel catastrophically on thin
///    triangles.
///
/// A hit also needs `|N · D| > DET_REL_EPS · |E1||E2||D|` ([`DET_REL_EPS`]): the same scale-free test as
/// [`moller_trumbore`], which rejects degenerate triangles and rays parallel to the plane.
///
/// Range: `den` and the numerators are of fourth degree in the edge lengths, so in `f32` the method
/// works for triangles of size about `1e-9` to `1e9` (beyond, they underflow or overflow and the
/// kernel misses, without panicking); the other two kernels are of second and third degree.
///
/// ```
/// use raypick::{geom::triangle::{plane_barycentric, Culling}, glam::Vec3, Ray};
/// let (v0, v1, v2) = (Vec3::new(0.0, 0.0, -1.0), Vec3::new(1.0, 0.0, -1.0), Vec3::new(0.0, 1.0, -1.0));
/// let ray = Ray::new(Vec3::new(0.25, 0.5, 0.0), Vec3::NEG_Z);
/// let hit = plane_barycentric(&ray, v0, v1, v2, Culling::None).unwrap();
/// assert_eq!((hit.t, hit.u, hit.v), (1.0, 0.25, 0.5));
/// ```
#[inline]
pub fn plane_barycentric(
    ray: &Ray,
    v0: Vec3,
    v1: Vec3,
    v2: Vec3,
    culling: Culling,
) -> Option<TriHit> {
    if !ray.is_valid() {
        return None;
    }
    let e1 = v1 - v0;
    let e2 = v2 - v0;
    let n = e1.cross(e2);
    let n_dot_d = n.dot(ray.dir);
    if culling == Culling::Back && (n_dot_d >= 0.0 || n_dot_d.is_nan()) {
        return None;
    }
    // Parallel ray or degenerate triangle (0), or non-finite vertices (NaN).
    if !(n_dot_d != 0.0 && n_dot_d.is_finite()) {
        return None;
    }
    let origin_to_v0 = v0 - ray.origin;
    let t = n.dot(origin_to_v0) / n_dot_d;
    if !(t >= ray.t_min && t <= ray.t_max && t.is_finite()) {
        return None;
    }
    // The hit point relative to v0, formed without going through world coordinates (O + tD would
    // lose the low bits of a small triangle far from the origin).
    let p = t * ray.dir - origin_to_v0;
    let d11 = e1.dot(e1);
    let d12 = e1.dot(e2);
    let d22 = e2.dot(e2);
    let d10 = p.dot(e1);
    let d20 = p.dot(e2);
    let den = n.dot(n);
    let u = (d22 * d10 - d12 * d20) / den;
    let v = (d11 * d20 - d12 * d10) / den;
    if !(u >= 0.0 && v >= 0.0 && u + v <= 1.0) {
        return None;
    }
    if !det_is_significant(n_dot_d, e1, e2, ray.dir) {
        return None;
    }
    Some(TriHit { t, u, v })
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
