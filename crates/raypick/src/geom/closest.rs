//! Closest points: point–triangle, point–sphere and point–box distance.
//!
//! ## Point–triangle
//! [`closest_on_triangle`] is the Voronoi-region method of Ericson, *Real-Time Collision
//! Detection* (2005), §5.1.5: the signs of six dot products (`d1..d6`) place the query point in the
//! region of a vertex, of an edge or of the face, and the closest point is that vertex, the
//! projection on that edge, or the projection on the plane, written as barycentrics `(u, v)` so
//! that `point = (1 - u - v)·a + u·b + v·c` (`u` weights `b`, `v` weights `c`, as a ray hit's do).
//!
//! Every quantity is formed from differences to `a` (`ab`, `ac`, `ap`), so the result is
//! translation-invariant up to the final `a + …`. Error bound: the dot products carry a relative
//! error of at most `γ(3) = 3ε/(1-3ε)` (`ε = 2⁻²⁴`) of `|ab|·|ap|`-sized terms; a region decision
//! that a rounding flips happens only where both neighbouring regions give the same closest point
//! up to that error, and the barycentrics are clamped to `[0, 1]`. The computed point is therefore
//! within a few `ε·(|ap| + |ab| + |ac|)` of the exact one, plus one rounding of `|a|` for the final
//! sum; the tests hold it to `1e-5·(|ap| + |ab| + |ac| + |a|)` against an `f64` evaluation.
//! That holds for triangles of moderate shape (the tests' random ones). On a sliver the face
//! region's barycentrics come from differences of nearly equal products, and the error grows with
//! the aspect ratio `|ab|·|ac| / |ab × ac|`: a 480 × 1.5 wall strip of the conference room, 500
//! units from the origin, gave a point 0.236 away where `f64` says 0.157 (Open3D's `f32` kernel:
//! 0.186). A better-conditioned face step (the distance measured from the nearest vertex, or the
//! barycentrics in `f64`) is not done.
//!
//! A degenerate (zero-area) triangle has no face region: its closest point is the closest of its
//! three edges, as for a segment.
//!
//! ## Four triangles at once
//! [`triangle_distance_squared4`] is the same method on four triangles held lane by lane: every
//! region's answer is formed, the same operations in the same order as the scalar kernel, and
//! the first region whose test holds is selected per lane, so each lane's squared distance is
//! the very number `(p - closest_on_triangle(..).point).length_squared()` gives (tested bit for
//! bit). The scalar kernel stays the specification; the four-lane one lets a walk discard the
//! triangles of a block that cannot beat its best answer without leaving SIMD registers.
//!
//! ## Point–box
//! [`box_distance_squared`] clamps the point to the box per axis: exact up to one rounding per
//! axis and the sum (the BVH walks inflate their bound to cover it).

use glam::{BVec4A, Vec3, Vec4};

/// The closest point of a triangle to a query point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriClosest {
    /// The point on the triangle.
    pub point: Vec3,
    /// Barycentric weight of the second vertex `b`.
    pub u: f32,
    /// Barycentric weight of the third vertex `c`.
    pub v: f32,
}

/// The point of triangle `(a, b, c)` closest to `p` (Ericson 5.1.5; see the [module docs](self)).
/// NaN in gives NaN out; never panics.
///
/// ```
/// use raypick::geom::closest::closest_on_triangle;
/// use raypick::glam::Vec3;
/// let c = closest_on_triangle(Vec3::new(0.25, 0.25, 2.0), Vec3::ZERO, Vec3::X, Vec3::Y);
/// assert_eq!(c.point, Vec3::new(0.25, 0.25, 0.0));
/// assert_eq!((c.u, c.v), (0.25, 0.25));
/// ```
pub fn closest_on_triangle(p: Vec3, a: Vec3, b: Vec3, c: Vec3) -> TriClosest {
    let ab = b - a;
    let ac = c - a;
    let ap = p - a;
    let at = |u: f32, v: f32| TriClosest {
        point: a + u * ab + v * ac,
        u,
        v,
    };
    // Vertices are returned as they are (not rebuilt from `a + ab`, which rounds), so the
    // triangles sharing a vertex report the same point and distance, and a tie is a tie.
    let vertex = |point: Vec3, u: f32, v: f32| TriClosest { point, u, v };
    let d1 = ab.dot(ap);
    let d2 = ac.dot(ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return vertex(a, 0.0, 0.0);
    }
    let bp = p - b;
    let d3 = ab.dot(bp);
    let d4 = ac.dot(bp);
    if d3 >= 0.0 && d4 <= d3 {
        return vertex(b, 1.0, 0.0);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let t = clamp01(d1 / (d1 - d3));
        return at(t, 0.0);
    }
    let cp = p - c;
    let d5 = ab.dot(cp);
    let d6 = ac.dot(cp);
    if d6 >= 0.0 && d5 <= d6 {
        return vertex(c, 0.0, 1.0);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let t = clamp01(d2 / (d2 - d6));
        return at(0.0, t);
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let t = clamp01((d4 - d3) / ((d4 - d3) + (d5 - d6)));
        return TriClosest {
            point: b + t * (c - b),
            u: 1.0 - t,
            v: t,
        };
    }
    let denom = va + vb + vc;
    if denom > 0.0 && denom.is_finite() {
        let u = clamp01(vb / denom);
        let v = clamp01(vc / denom).min(1.0 - u);
        return at(u, v);
    }
    if p.is_nan() || a.is_nan() || b.is_nan() || c.is_nan() {
        return TriClosest {
            point: Vec3::NAN,
            u: f32::NAN,
            v: f32::NAN,
        };
    }
    // Zero-area triangle (or one whose products overflow): the closest of its edges.
    degenerate(p, a, ab, ac)
}

/// The closest point of the three edges of a degenerate triangle, as barycentrics.
fn degenerate(p: Vec3, a: Vec3, ab: Vec3, ac: Vec3) -> TriClosest {
    let on_segment = |from: Vec3, dir: Vec3| -> f32 {
        let len2 = dir.length_squared();
        if len2 > 0.0 {
            clamp01((p - from).dot(dir) / len2)
        } else {
            0.0
        }
    };
    let bc = ac - ab;
    let candidates = [
        {
            let t = on_segment(a, ab);
            (t, 0.0)
        },
        {
            let t = on_segment(a, ac);
            (0.0, t)
        },
        {
            let t = on_segment(a + ab, bc);
            (1.0 - t, t)
        },
    ];
    let mut best = TriClosest {
        point: a,
        u: 0.0,
        v: 0.0,
    };
    let mut best_d2 = f32::INFINITY;
    for (u, v) in candidates {
        let point = a + u * ab + v * ac;
        let d2 = (p - point).length_squared();
        if d2 < best_d2 {
            best_d2 = d2;
            best = TriClosest { point, u, v };
        }
    }
    best
}

/// Three coordinates of four points or vectors, lane by lane (structure of arrays).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Vec3x4 {
    /// The four `x` coordinates.
    pub x: Vec4,
    /// The four `y` coordinates.
    pub y: Vec4,
    /// The four `z` coordinates.
    pub z: Vec4,
}

impl Vec3x4 {
    /// `p` in every lane.
    #[inline(always)]
    pub fn splat(p: Vec3) -> Self {
        Self {
            x: Vec4::splat(p.x),
            y: Vec4::splat(p.y),
            z: Vec4::splat(p.z),
        }
    }

    #[inline(always)]
    fn zip(self, o: Self, f: impl Fn(Vec4, Vec4) -> Vec4) -> Self {
        Self {
            x: f(self.x, o.x),
            y: f(self.y, o.y),
            z: f(self.z, o.z),
        }
    }

    /// Lane-wise `self + o`.
    #[inline(always)]
    #[allow(clippy::should_implement_trait)]
    pub fn add(self, o: Self) -> Self {
        self.zip(o, |a, b| a + b)
    }

    /// Lane-wise `self - o`.
    #[inline(always)]
    #[allow(clippy::should_implement_trait)]
    pub fn sub(self, o: Self) -> Self {
        self.zip(o, |a, b| a - b)
    }

    /// Each lane's vector scaled by that lane of `s` (`s * v`, as `f32 * Vec3`).
    #[inline(always)]
    fn scale(self, s: Vec4) -> Self {
        Self {
            x: s * self.x,
            y: s * self.y,
            z: s * self.z,
        }
    }

    /// Lane-wise dot product, summed in `Vec3::dot`'s order (`x`, then `y`, then `z`).
    #[inline(always)]
    fn dot(self, o: Self) -> Vec4 {
        self.x * o.x + self.y * o.y + self.z * o.z
    }

    /// Per lane, `t` where `m` holds, else `f`.
    #[inline(always)]
    fn select(m: BVec4A, t: Self, f: Self) -> Self {
        Self {
            x: Vec4::select(m, t.x, f.x),
            y: Vec4::select(m, t.y, f.y),
            z: Vec4::select(m, t.z, f.z),
        }
    }
}

/// For each lane, the squared distance from `p` to triangle `(a, b, c)` of that lane: bit for bit
/// `(p - closest_on_triangle(p, a, b, c).point).length_squared()` (see the
/// [module docs](self)), except for a triangle the scalar kernel answers by its degenerate branch
/// (zero area, overflowing products, NaN), whose lane is 0: a lower bound, so a filter on these
/// distances never drops a triangle the scalar kernel would keep.
#[inline(always)]
pub fn triangle_distance_squared4(p: Vec3, a: Vec3x4, b: Vec3x4, c: Vec3x4) -> Vec4 {
    let zero = Vec4::ZERO;
    let p4 = Vec3x4::splat(p);
    let (ab, ac, ap) = (b.sub(a), c.sub(a), p4.sub(a));
    // `a + u·ab + v·ac`, as the scalar kernel's `at(u, v)`.
    let at = |u: Vec4, v: Vec4| a.add(ab.scale(u)).add(ac.scale(v));
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    let in_a = d1.cmple(zero) & d2.cmple(zero);
    let bp = p4.sub(b);
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    let in_b = d3.cmpge(zero) & d4.cmple(d3);
    let vc = d1 * d4 - d3 * d2;
    let in_ab = vc.cmple(zero) & d1.cmpge(zero) & d3.cmple(zero);
    let on_ab = at(clamp01x4(d1 / (d1 - d3)), zero);
    let cp = p4.sub(c);
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    let in_c = d6.cmpge(zero) & d5.cmple(d6);
    let vb = d5 * d2 - d1 * d6;
    let in_ac = vb.cmple(zero) & d2.cmpge(zero) & d6.cmple(zero);
    let on_ac = at(zero, clamp01x4(d2 / (d2 - d6)));
    let va = d3 * d6 - d5 * d4;
    let (e, f) = (d4 - d3, d5 - d6);
    let in_bc = va.cmple(zero) & e.cmpge(zero) & f.cmpge(zero);
    let t_bc = clamp01x4(e / (e + f));
    let on_bc = b.add(c.sub(b).scale(t_bc));
    let denom = va + vb + vc;
    let in_face = denom.cmpgt(zero) & denom.abs().cmplt(Vec4::splat(f32::INFINITY));
    let u = clamp01x4(vb / denom);
    let v = clamp01x4(vc / denom).min(Vec4::ONE - u);
    // The first region that holds wins, as the scalar kernel's early returns: select from the
    // last to the first.
    let mut on = at(u, v);
    on = Vec3x4::select(in_bc, on_bc, on);
    on = Vec3x4::select(in_ac, on_ac, on);
    on = Vec3x4::select(in_c, c, on);
    on = Vec3x4::select(in_ab, on_ab, on);
    on = Vec3x4::select(in_b, b, on);
    on = Vec3x4::select(in_a, a, on);
    let d = p4.sub(on);
    let dist2 = d.dot(d);
    let regular = in_a | in_b | in_ab | in_c | in_ac | in_bc | in_face;
    Vec4::select(regular, dist2, zero)
}

/// [`clamp01`] lane by lane (by selects, so NaN and signed zeros follow the scalar rule).
#[inline(always)]
fn clamp01x4(x: Vec4) -> Vec4 {
    let x = Vec4::select(x.cmplt(Vec4::ZERO), Vec4::ZERO, x);
    let x = Vec4::select(x.cmpgt(Vec4::ONE), Vec4::ONE, x);
    Vec4::select(x.cmpeq(x), x, Vec4::ZERO)
}

#[inline(always)]
fn clamp01(x: f32) -> f32 {
    // A NaN ratio (0/0 cannot occur in the regions that divide, but overflow can) goes to 0.
    if x.is_nan() {
        0.0
    } else {
        x.clamp(0.0, 1.0)
    }
}

/// The point of the sphere `(center, radius)` closest to `p`. From the centre itself every point
/// of the sphere is equally close; the answer is then the point at `+x`. NaN in gives NaN out.
pub fn closest_on_sphere(p: Vec3, center: Vec3, radius: f32) -> Vec3 {
    let d = p - center;
    let len = d.length();
    if len > 0.0 && len.is_finite() {
        center + d * (radius / len)
    } else if len == 0.0 {
        center + Vec3::X * radius
    } else {
        // NaN, or an overflowing difference: scale down before normalizing.
        let n = d.normalize_or(Vec3::NAN);
        center + n * radius
    }
}

/// The squared distance from `p` to the box `[min, max]` (0 inside). An empty box
/// (`min > max`, such as [`super::Aabb::EMPTY`]) is infinitely far.
#[inline(always)]
pub fn box_distance_squared(p: Vec3, min: Vec3, max: Vec3) -> f32 {
    if min.cmpgt(max).any() {
        return f32::INFINITY;
    }
    let d = (min - p).max(p - max).max(Vec3::ZERO);
    d.length_squared()
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec3;

    /// `f64` reference: the minimum over the face projection (when inside) and the three edges.
    fn reference(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> f64 {
        let seg = |s: DVec3, e: DVec3| {
            let d = e - s;
            let t = if d.length_squared() > 0.0 {
                ((p - s).dot(d) / d.length_squared()).clamp(0.0, 1.0)
            } else {
                0.0
            };
            (p - (s + t * d)).length()
        };
        let mut best = seg(a, b).min(seg(b, c)).min(seg(c, a));
        let n = (b - a).cross(c - a);
        if n.length_squared() > 0.0 {
            let n = n.normalize();
            let q = p - n * (p - a).dot(n);
            let inside = [(a, b), (b, c), (c, a)]
                .iter()
                .all(|&(s, e)| (e - s).cross(q - s).dot(n) >= 0.0);
            if inside {
                best = best.min((p - q).length());
            }
        }
        best
    }

    fn check(p: Vec3, a: Vec3, b: Vec3, c: Vec3) {
        let got = closest_on_triangle(p, a, b, c);
        let want = reference(p.as_dvec3(), a.as_dvec3(), b.as_dvec3(), c.as_dvec3());
        let scale = ((p - a).length() + (b - a).length() + (c - a).length() + a.length()) as f64;
        let d = (p.as_dvec3() - got.point.as_dvec3()).length();
        assert!(
            (d - want).abs() <= 1e-5 * scale,
            "p {p} tri {a} {b} {c}: got {d} want {want}"
        );
        // The point is what the barycentrics say.
        let rebuilt = a + got.u * (b - a) + got.v * (c - a);
        assert!((rebuilt - got.point).length() as f64 <= 1e-6 * scale);
        assert!(got.u >= 0.0 && got.v >= 0.0 && got.u + got.v <= 1.0 + 1e-6);
    }

    #[test]
    fn each_voronoi_region_gives_its_feature() {
        let (a, b, c) = (Vec3::ZERO, Vec3::X, Vec3::Y);
        let at = |p: Vec3| closest_on_triangle(p, a, b, c);
        assert_eq!(at(Vec3::new(-1.0, -1.0, 0.5)).point, a);
        assert_eq!(at(Vec3::new(2.0, -0.5, 0.0)).point, b);
        assert_eq!(at(Vec3::new(-0.5, 3.0, 1.0)).point, c);
        assert_eq!(
            at(Vec3::new(0.5, -2.0, 0.0)).point,
            Vec3::new(0.5, 0.0, 0.0)
        );
        assert_eq!(
            at(Vec3::new(-2.0, 0.25, 0.0)).point,
            Vec3::new(0.0, 0.25, 0.0)
        );
        assert_eq!(at(Vec3::new(1.0, 1.0, 0.0)).point, Vec3::new(0.5, 0.5, 0.0));
        assert_eq!(
            at(Vec3::new(0.2, 0.3, -4.0)).point,
            Vec3::new(0.2, 0.3, 0.0)
        );
    }

    #[test]
    fn degenerate_triangles_answer_their_edges_and_nan_gives_nan() {
        let c = closest_on_triangle(Vec3::new(0.5, 1.0, 0.0), Vec3::ZERO, Vec3::X, Vec3::X * 2.0);
        assert_eq!(c.point, Vec3::new(0.5, 0.0, 0.0));
        let c = closest_on_triangle(Vec3::ONE, Vec3::Y, Vec3::Y, Vec3::Y);
        assert_eq!(c.point, Vec3::Y);
        let c = closest_on_triangle(Vec3::NAN, Vec3::ZERO, Vec3::X, Vec3::Y);
        assert!(c.point.is_nan());
    }

    #[test]
    fn sphere_and_box() {
        assert_eq!(
            closest_on_sphere(Vec3::new(0.0, 3.0, 0.0), Vec3::ZERO, 2.0),
            Vec3::new(0.0, 2.0, 0.0)
        );
        assert_eq!(
            closest_on_sphere(Vec3::ZERO, Vec3::ZERO, 2.0),
            Vec3::new(2.0, 0.0, 0.0)
        );
        assert!(closest_on_sphere(Vec3::NAN, Vec3::ZERO, 1.0).is_nan());
        assert_eq!(
            box_distance_squared(Vec3::new(3.0, 0.5, 0.5), Vec3::ZERO, Vec3::ONE),
            4.0
        );
        assert_eq!(
            box_distance_squared(Vec3::splat(0.5), Vec3::ZERO, Vec3::ONE),
            0.0
        );
        assert_eq!(
            box_distance_squared(Vec3::ZERO, Vec3::ONE, Vec3::ZERO),
            f32::INFINITY
        );
    }

    /// Fixed-seed random triangles and points over magnitudes 1e-6..1e6, a third of the points
    /// near a vertex and a third near an edge midpoint, where regions meet.
    #[test]
    fn matches_f64_reference_at_every_magnitude() {
        use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
        let mut runner = TestRunner::new_with_rng(
            Config {
                cases: 3000,
                ..Config::default()
            },
            TestRng::from_seed(RngAlgorithm::ChaCha, &[34; 32]),
        );
        let strategy = (
            -6i32..=6,
            proptest::array::uniform12(-1.0f32..1.0),
            0usize..3,
        );
        runner
            .run(&strategy, |(exp, coords, near)| {
                let s = 10f32.powi(exp);
                let v = |i: usize| Vec3::new(coords[i], coords[i + 1], coords[i + 2]) * s;
                let (a, b, c) = (v(0), v(3), v(6));
                let p = match near {
                    0 => a + (v(9) - a) * 1e-3,
                    1 => (a + b) * 0.5 + (v(9) - a) * 1e-3,
                    _ => v(9),
                };
                check(p, a, b, c);
                Ok(())
            })
            .unwrap();
    }

    /// The four-lane kernel gives each lane the scalar kernel's squared distance bit for bit, on
    /// random triangles over magnitudes 1e-6..1e6 with points in every region (near vertices and
    /// edges, where regions meet); degenerate lanes give the scalar answer or 0.
    #[test]
    fn four_lanes_equal_the_scalar_kernel_bit_for_bit() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(5115);
        let mut regular = 0;
        for round in 0..20_000 {
            let s = 10f32.powi(rng.gen_range(-6..=6));
            let mut v = || Vec3::new(rng.gen(), rng.gen(), rng.gen()) * 2.0 - 1.0;
            let mut tris: [[Vec3; 3]; 4] = std::array::from_fn(|_| [v() * s, v() * s, v() * s]);
            // Some lanes degenerate: a repeated vertex, or collinear vertices.
            if round % 7 == 0 {
                tris[1][2] = tris[1][0];
                tris[2][2] = tris[2][0] + (tris[2][1] - tris[2][0]) * 0.5;
            }
            let base = tris[round % 4];
            let p = match round % 3 {
                0 => base[0] + v() * s * 1e-3,
                1 => (base[0] + base[1]) * 0.5 + v() * s * 1e-3,
                _ => v() * s * 2.0,
            };
            let lanes = |k: usize| Vec3x4 {
                x: Vec4::from_array(tris.map(|t| t[k].x)),
                y: Vec4::from_array(tris.map(|t| t[k].y)),
                z: Vec4::from_array(tris.map(|t| t[k].z)),
            };
            let got = triangle_distance_squared4(p, lanes(0), lanes(1), lanes(2)).to_array();
            for (lane, [a, b, c]) in tris.into_iter().enumerate() {
                let want = (p - closest_on_triangle(p, a, b, c).point).length_squared();
                let area2 = (b - a).cross(c - a).length_squared();
                if area2 > 0.0 && area2.is_finite() {
                    regular += 1;
                    assert_eq!(got[lane].to_bits(), want.to_bits(), "{a} {b} {c} {p}");
                } else {
                    assert!(got[lane] == 0.0 || got[lane].to_bits() == want.to_bits());
                }
            }
        }
        assert!(regular > 70_000);
    }
}
