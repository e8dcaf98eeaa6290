//! The three ray/triangle kernels (`watertight`, `moller_trumbore`, `plane_barycentric`) against
//! hand-checked values and an `f64` reference.
//!
//! Bounds stated here (`ε = 2⁻²⁴`, the unit roundoff of `f32`):
//! - on every hit `u >= 0`, `v >= 0` and `u + v <= 1 + 2ε` (each of `u`, `v` is one correctly rounded
//!   quotient of terms that sum to at most the divisor, so their rounded sum exceeds 1 by at most an ulp);
//! - away from edges, `t`, `u`, `v` agree with the `f64` reference to `TOL · κ`, where `κ` is the
//!   problem's condition number (`(|O - X| + size) / (size · |cos φ|)`, `X` the hit point, `φ` the angle
//!   between ray and normal) and `TOL = 2⁻¹⁶`;
//! - the point `O + tD` lies within `TOL_PLANE · κ · size` of the triangle's plane, `TOL_PLANE = 2⁻¹⁹`.
//!
//! Measured over the 3000 cases (in units of `ε·κ`): the largest error of `t`, `u`, `v` is 8 for
//! `watertight`, 12 for `moller_trumbore` and 83 for `plane_barycentric` (`TOL = 256ε`); the largest
//! distance to the plane is 5 (`TOL_PLANE = 32ε`).

use glam::{DVec3, Vec3};
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, RngAlgorithm, RngSeed};
use raypick::geom::triangle::{
    moller_trumbore, plane_barycentric, watertight, Culling, TriHit, DET_REL_EPS,
};
use raypick::Ray;

type Kernel = fn(&Ray, Vec3, Vec3, Vec3, Culling) -> Option<TriHit>;
const KERNELS: [(&str, Kernel); 3] = [
    ("watertight", watertight),
    ("moller_trumbore", moller_trumbore),
    ("plane_barycentric", plane_barycentric),
];

/// Relative tolerance of the agreement with `f64`, per unit of condition number (see the module docs).
const TOL: f64 = 1.0 / 65536.0;
/// Distance of `O + tD` from the plane, per unit of `κ · size`.
const TOL_PLANE: f64 = 1.0 / 524_288.0;
const EPS: f32 = f32::EPSILON * 0.5;

fn config(cases: u32, seed: u64) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(seed),
        max_global_rejects: cases * 2,
        ..ProptestConfig::default()
    }
}

/// Möller–Trumbore in `f64` on the exact `f32` inputs, without any epsilon: `(t, u, v)` of the line's
/// crossing with the triangle's plane (the caller decides what is inside).
fn reference(ray: &Ray, v0: Vec3, v1: Vec3, v2: Vec3) -> Option<(f64, f64, f64)> {
    let (o, d) = (ray.origin.as_dvec3(), ray.dir.as_dvec3());
    let (a, b, c) = (v0.as_dvec3(), v1.as_dvec3(), v2.as_dvec3());
    let (e1, e2) = (b - a, c - a);
    let p = d.cross(e2);
    let det = e1.dot(p);
    if det == 0.0 {
        return None;
    }
    let tv = o - a;
    let q = tv.cross(e1);
    Some((e2.dot(q) / det, tv.dot(p) / det, d.dot(q) / det))
}

// ---------------------------------------------------------------------------------------------
// Hand-checked values.

/// Counter-clockwise seen from +z (normal +z).
const TRI: [Vec3; 3] = [
    Vec3::new(0.0, 0.0, 0.0),
    Vec3::new(1.0, 0.0, 0.0),
    Vec3::new(0.0, 1.0, 0.0),
];

#[test]
fn hand_checked_hit() {
    // From (0.25, 0.5, 2) straight down with |D| = 2: the point (0.25, 0.5, 0) at t = 1, u = 0.25 (weight
    // of v1 = (1,0,0) is x), v = 0.5 (weight of v2 = (0,1,0) is y). All values are exact in f32.
    let ray = Ray::new(Vec3::new(0.25, 0.5, 2.0), Vec3::new(0.0, 0.0, -2.0));
    for (name, k) in KERNELS {
        let h = k(&ray, TRI[0], TRI[1], TRI[2], Culling::None).unwrap_or_else(|| panic!("{name}"));
        assert_eq!((h.t, h.u, h.v), (1.0, 0.25, 0.5), "{name}");
        assert_eq!(
            h.point_from_barycentrics(TRI[0], TRI[1], TRI[2]),
            Vec3::new(0.25, 0.5, 0.0)
        );
    }
}

#[test]
fn hand_checked_slanted_hit() {
    // Triangle in the plane x + y + z = 3 with vertices (3,0,0), (0,3,0), (0,0,3); ray from the origin
    // along (1,1,1): crosses at (1,1,1), t = 1, the centroid: u = v = 1/3.
    let (v0, v1, v2) = (
        Vec3::new(3.0, 0.0, 0.0),
        Vec3::new(0.0, 3.0, 0.0),
        Vec3::new(0.0, 0.0, 3.0),
    );
    let ray = Ray::new(Vec3::ZERO, Vec3::ONE);
    for (name, k) in KERNELS {
        let h = k(&ray, v0, v1, v2, Culling::None).unwrap();
        assert!((h.t - 1.0).abs() <= 4.0 * EPS, "{name}: {h:?}");
        assert!(
            (h.u - 1.0 / 3.0).abs() <= 4.0 * EPS && (h.v - 1.0 / 3.0).abs() <= 4.0 * EPS,
            "{name}"
        );
        // The normal (v1-v0)x(v2-v0) = (9,9,9) points away from the origin: the ray (along +normal) sees
        // the back face.
        assert!(k(&ray, v0, v1, v2, Culling::Back).is_none(), "{name}");
        assert!(
            k(
                &Ray::new(Vec3::splat(2.0), -Vec3::ONE),
                v0,
                v1,
                v2,
                Culling::Back
            )
            .is_some(),
            "{name}"
        );
    }
}

#[test]
fn plane_equation_sign_of_the_plane_kernel() {
    // The point O + tD returned by plane_barycentric satisfies N·X + d = 0 with d = -N·v0 (the sign the
    // DirectX write-up gets wrong would put it at the mirror image -t).
    let (v0, v1, v2) = (
        Vec3::new(1.0, 2.0, 3.0),
        Vec3::new(4.0, 2.5, 3.5),
        Vec3::new(2.0, 5.0, 2.0),
    );
    let n = (v1 - v0).cross(v2 - v0);
    let d = -n.dot(v0);
    let ray = Ray::new(Vec3::new(2.0, 3.0, 10.0), Vec3::new(0.1, -0.05, -1.0));
    let h = plane_barycentric(&ray, v0, v1, v2, Culling::None).expect("hit");
    let x = ray.at(h.t);
    assert!(n.dot(x).abs() > 1.0 && (n.dot(x) + d).abs() < 1e-4 * n.length() * x.length());
    let (t64, _, _) = reference(&ray, v0, v1, v2).unwrap();
    assert!((h.t as f64 - t64).abs() < 1e-5 * t64);
}

#[test]
fn culling_for_every_dominant_axis_and_sign() {
    // Directions whose largest component is each of ±x, ±y, ±z (the watertight kernel permutes axes by
    // it), crossing the same triangle from both sides.
    let (v0, v1, v2) = (
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(1.0, 0.2, 0.1),
        Vec3::new(0.1, 0.3, 1.0),
    );
    let n = (v1 - v0).cross(v2 - v0);
    let p = 0.3 * v0 + 0.3 * v1 + 0.4 * v2;
    for axis in 0..3 {
        for sign in [-1.0f32, 1.0] {
            let mut dir = Vec3::splat(0.3);
            dir[axis] = sign;
            let ray = Ray::new(p - 3.0 * dir, dir);
            let front = dir.dot(n) < 0.0;
            for (name, k) in KERNELS {
                assert!(k(&ray, v0, v1, v2, Culling::None).is_some(), "{name} {dir}");
                assert_eq!(
                    k(&ray, v0, v1, v2, Culling::Back).is_some(),
                    front,
                    "{name} {dir}"
                );
                // Reversed winding flips the facing.
                assert_eq!(
                    k(&ray, v0, v2, v1, Culling::Back).is_some(),
                    !front,
                    "{name} {dir}"
                );
            }
        }
    }
}

#[test]
fn the_ray_interval_is_honoured() {
    let ray = Ray::new(Vec3::new(0.25, 0.25, 2.0), Vec3::NEG_Z);
    for (name, k) in KERNELS {
        let [a, b, c] = TRI;
        assert!(
            k(&ray.with_range(0.0, 1.999), a, b, c, Culling::None).is_none(),
            "{name}"
        );
        assert!(
            k(&ray.with_range(2.001, 9.0), a, b, c, Culling::None).is_none(),
            "{name}"
        );
        assert_eq!(
            k(&ray.with_range(2.0, 2.0), a, b, c, Culling::None).map(|h| h.t),
            Some(2.0)
        );
        // A segment ending before the triangle, and a line whose crossing is behind its origin.
        let seg = Ray::segment(Vec3::new(0.25, 0.25, 2.0), Vec3::new(0.25, 0.25, 1.0));
        assert!(k(&seg, a, b, c, Culling::None).is_none(), "{name}");
        let line = Ray::line(Vec3::new(0.25, 0.25, 2.0), Vec3::Z);
        assert_eq!(
            k(&line, a, b, c, Culling::None).map(|h| h.t),
            Some(-2.0),
            "{name}"
        );
        assert!(
            k(&Ray::new(line.origin, line.dir), a, b, c, Culling::None).is_none(),
            "{name}"
        );
    }
}

#[test]
fn the_determinant_test_does_not_depend_on_the_scale() {
    // The write-ups' absolute `det < 1e-4` rejects a well-shaped triangle of size 1e-3 (det ~ 1e-6)
    // seen head-on. The relative test accepts it at every scale, and its hits scale exactly (powers of
    // two keep all values exact).
    for k in -20..=20 {
        let s = 2f32.powi(k);
        let [a, b, c] = TRI.map(|v| v * s);
        let ray = Ray::new(Vec3::new(0.25, 0.5, 1.0) * s, Vec3::NEG_Z * s);
        for (name, kern) in KERNELS {
            let h = kern(&ray, a, b, c, Culling::Back).unwrap_or_else(|| panic!("{name} at 2^{k}"));
            assert_eq!((h.t, h.u, h.v), (1.0, 0.25, 0.5), "{name} at 2^{k}");
        }
    }
    // ... and it rejects a ray within 1e-7 rad of the plane, which has no well-defined f32 hit.
    let grazing = Ray::new(Vec3::new(-1.0, 0.25, 1e-7), Vec3::new(1.0, 0.0, -1e-7));
    assert!(moller_trumbore(&grazing, TRI[0], TRI[1], TRI[2], Culling::None).is_none());
    assert!(plane_barycentric(&grazing, TRI[0], TRI[1], TRI[2], Culling::None).is_none());
    // sin θ · cos φ just above the threshold passes: θ = 90°, cos φ = 4·DET_REL_EPS.
    let c = 4.0 * DET_REL_EPS;
    let steep_enough = Ray::new(Vec3::new(-1.0, 0.25, c), Vec3::new(1.0, 0.0, -c));
    assert!(moller_trumbore(&steep_enough, TRI[0], TRI[1], TRI[2], Culling::None).is_some());
    assert!(plane_barycentric(&steep_enough, TRI[0], TRI[1], TRI[2], Culling::None).is_some());
}

#[test]
fn hits_beyond_the_f32_range_are_misses() {
    // |D| = 1e-30 and the triangle 1e10 away: the crossing is at t = 1e40, which overflows to +∞.
    // An unbounded ray must not report a hit "at infinity" (the watertight kernel used to: its range
    // test accepted t = ∞ <= t_max = ∞).
    let [a, b, c] = TRI;
    let ray = Ray::new(Vec3::new(0.25, 0.25, 1e10), Vec3::new(0.0, 0.0, -1e-30));
    assert!(ray.is_valid());
    for (name, k) in KERNELS {
        assert_eq!(k(&ray, a, b, c, Culling::None), None, "{name}");
        // The same geometry with a representable t is a hit.
        let ok = Ray::new(ray.origin, Vec3::new(0.0, 0.0, -1e-20));
        assert!(
            k(&ok, a, b, c, Culling::None).is_some_and(|h| (h.t - 1e30).abs() < 1e24),
            "{name}"
        );
    }
}

#[test]
fn edge_functions_below_the_f32_range_keep_their_sign() {
    // A triangle of size s = 2⁻⁶⁴ and a ray along -z through a point one ulp outside its long edge:
    // the edge function of that edge is δ·s = 2⁻¹⁵², below the smallest f32 subnormal, so the f32
    // products cancel to 0 and the f64 recomputation must keep its sign rather than round it to 0 (an
    // "exactly on the edge" that the closed rule would accept; the watertight kernel used to). At this
    // scale det = 2⁻¹²⁸ and 1/det overflows: the hits must still come out finite (they used to be
    // t = ∞, u = v = NaN).
    let s = 2f32.powi(-64);
    let delta = 2f32.powi(-88); // one ulp of s/2
    let (a, b, c) = (Vec3::ZERO, Vec3::new(s, 0.0, 0.0), Vec3::new(0.0, s, 0.0));
    let outside = Ray::new(Vec3::new(s / 2.0 + delta, s / 2.0, 1.0), Vec3::NEG_Z);
    let inside = Ray::new(Vec3::new(s / 2.0 - delta, s / 2.0, 1.0), Vec3::NEG_Z);
    let on_edge = Ray::new(Vec3::new(s / 2.0, s / 2.0, 1.0), Vec3::NEG_Z);
    assert_eq!(watertight(&outside, a, b, c, Culling::None), None);
    assert!(watertight(&inside, a, b, c, Culling::None).is_some());
    let h = watertight(&on_edge, a, b, c, Culling::None).expect("closed edge");
    assert_eq!((h.t, h.u, h.v), (1.0, 0.5, 0.5));
    for k in [moller_trumbore, watertight] {
        let h = k(&inside, a, b, c, Culling::None).expect("inside");
        assert!(h.t == 1.0 && h.u.is_finite() && h.v.is_finite() && h.u + h.v <= 1.0);
    }
}

#[test]
fn degenerate_triangles_never_hit() {
    // Repeated vertices and exactly collinear vertices (small integers times powers of two keep the
    // collinearity exact in f32), at scales 2^-20..2^20, with rays aimed at points of the degenerate
    // "triangle" from many directions.
    let mut tested = 0;
    for k in (-20..=20).step_by(4) {
        let s = 2f32.powi(k);
        let p = Vec3::new(3.0, -5.0, 7.0) * s;
        let d = Vec3::new(1.0, 2.0, -3.0) * s;
        let tris = [
            (p, p, p),
            (p, p, p + d),
            (p, p + d, p),
            (p + d, p, p),
            (p, p + d, p + 2.0 * d),
            (p, p + 3.0 * d, p + d),
            (p - d, p + 5.0 * d, p + 0.5 * d),
        ];
        for (v0, v1, v2) in tris {
            for target in [v0, v1, v2, 0.5 * (v0 + v2), p + 0.25 * d] {
                for dir in [
                    Vec3::X,
                    Vec3::new(0.3, -0.7, 0.2),
                    Vec3::new(-1.0, 2.0, 3.0),
                    d,                         // along the line itself
                    Vec3::new(2.0, -1.0, 0.0), // perpendicular to d
                ] {
                    let ray = Ray::new(target - dir * s, dir * s);
                    for (name, kern) in KERNELS {
                        for culling in [Culling::None, Culling::Back] {
                            assert_eq!(
                                kern(&ray, v0, v1, v2, culling),
                                None,
                                "{name}: {v0} {v1} {v2} along {dir}"
                            );
                        }
                    }
                    tested += 1;
                }
            }
        }
    }
    assert!(tested > 1000);
}

#[test]
fn collinear_triangles_with_full_mantissas_never_hit() {
    // v0 = p with arbitrary 24-bit mantissas in [1, 2)³, v1 = p + d, v2 = p + λd with d a multiple of
    // 2⁻⁸ and the results still in [1, 2)³: every sum is exact, so the three vertices are exactly
    // collinear. Rays with arbitrary directions aimed at points between them: the sheared 2-D vertices of
    // the watertight test are rounded and no longer collinear, so without its 3-D degeneracy check it
    // reports hits here.
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64::seed_from_u64(0xDE6E);
    let mut rays = 0;
    for _ in 0..4000 {
        let p = Vec3::from_array(std::array::from_fn(|_| rng.gen_range(1.25f32..1.75)));
        let d = Vec3::from_array(std::array::from_fn(|_| {
            rng.gen_range(-16i32..=16) as f32 / 256.0
        }));
        let lambda = [-1.0f32, 0.5, 2.0, 3.0][rng.gen_range(0..4)];
        let scale = 2f32.powi(rng.gen_range(-20..=20));
        let (v0, v1, v2) = (p * scale, (p + d) * scale, (p + lambda * d) * scale);
        let target = (p + rng.gen_range(-1.0f32..2.0) * d) * scale;
        let dir = Vec3::from_array(std::array::from_fn(|_| rng.gen_range(-1.0f32..1.0)));
        let ray = Ray::new(target - dir * scale, dir * scale);
        for (name, k) in KERNELS {
            assert_eq!(
                k(&ray, v0, v1, v2, Culling::None),
                None,
                "{name}: {v0} {v1} {v2} {ray:?}"
            );
        }
        rays += 1;
    }
    assert_eq!(rays, 4000);
}

#[test]
fn invalid_rays_and_non_finite_vertices_miss_without_panic() {
    let [a, b, c] = TRI;
    let good = Ray::new(Vec3::new(0.25, 0.25, 1.0), Vec3::NEG_Z);
    let bad_rays = [
        Ray::new(Vec3::new(f32::NAN, 0.25, 1.0), Vec3::NEG_Z),
        Ray::new(Vec3::new(0.25, 0.25, f32::INFINITY), Vec3::NEG_Z),
        Ray::new(good.origin, Vec3::new(0.0, f32::NAN, -1.0)),
        Ray::new(good.origin, Vec3::new(0.0, 0.0, f32::NEG_INFINITY)),
        Ray::new(good.origin, Vec3::ZERO),
        good.with_range(f32::NAN, 10.0),
        good.with_range(0.0, f32::NAN),
        good.with_range(5.0, 1.0),
    ];
    for (name, k) in KERNELS {
        assert!(k(&good, a, b, c, Culling::None).is_some());
        for ray in bad_rays {
            for culling in [Culling::None, Culling::Back] {
                assert_eq!(k(&ray, a, b, c, culling), None, "{name}: {ray:?}");
            }
        }
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MAX] {
            for i in 0..9 {
                let mut v = [a, b, c];
                v[i / 3][i % 3] = bad;
                // No panic; a hit, if any, is finite and in range.
                if let Some(h) = k(&good, v[0], v[1], v[2], Culling::None) {
                    assert!(h.t.is_finite() && h.t >= 0.0, "{name}: {v:?} -> {h:?}");
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Random configurations over magnitudes 1e-6..1e6.

fn unit3() -> impl Strategy<Value = DVec3> {
    [-1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0]
        .prop_map(|[x, y, z]| DVec3::new(x, y, z))
        .prop_filter("not too short to normalize", |v| v.length() > 0.1)
        .prop_map(|v| v.normalize())
}

/// A random triangle whose coordinates have magnitude `10^m`, `m ∈ [-6, 6]`, of size `10^(m - k)`,
/// `k ∈ [0, 3]`, with no angle sharper than about 6° (so "away from edges" is meaningful); a ray from
/// a random direction at most 60° from the normal (|cos φ| ≥ 0.5), of random length `10^[-3, 3]`, from a
/// distance `size · 10^[-1, 3]` to the point with barycentrics `bary`.
#[derive(Debug, Clone)]
struct Case {
    v: [Vec3; 3],
    ray: Ray,
    size: f64,
    kappa: f64,
}

fn case(bary_margin: f64, outside: bool) -> impl Strategy<Value = Case> {
    (
        -6.0f64..6.0,
        0.0f64..3.0,
        unit3(),
        [unit3(), unit3(), unit3()],
        (0.0f64..1.0, 0.0f64..1.0, 0usize..3),
        unit3(),
        -3.0f64..3.0,
        -1.0f64..3.0,
    )
        .prop_map(
            move |(m, k, centre_dir, corners, (b1, b2, side), dir, len_exp, dist_exp)| {
                let mag = 10f64.powf(m);
                let size = mag * 10f64.powf(-k);
                let v = corners.map(|c| (centre_dir * mag + c * size).as_vec3());
                let [a, b, c] = v.map(|p| p.as_dvec3());
                // Barycentrics (w0, w1, w2) folded into the simplex, then moved away from the edges by
                // `bary_margin`, or pushed outside across edge `side` by at least that much.
                let (b1, b2) = if b1 + b2 > 1.0 {
                    (1.0 - b1, 1.0 - b2)
                } else {
                    (b1, b2)
                };
                let mut w =
                    [1.0 - b1 - b2, b1, b2].map(|w| bary_margin + (1.0 - 3.0 * bary_margin) * w);
                if outside {
                    let push = 2.0 * bary_margin + w[side];
                    w[side] -= push;
                    w[(side + 1) % 3] += push / 2.0;
                    w[(side + 2) % 3] += push / 2.0;
                }
                let target = w[0] * a + w[1] * b + w[2] * c;
                let n = (b - a).cross(c - a).normalize();
                let cos_phi = dir.dot(n).abs();
                let dist = size * 10f64.powf(dist_exp);
                let d = dir * 10f64.powf(len_exp);
                let origin = target - dir * dist;
                let ray = Ray::new(origin.as_vec3(), d.as_vec3());
                let kappa = (dist + size) / (size * cos_phi.max(1e-3));
                Case {
                    v,
                    ray,
                    size,
                    kappa,
                }
            },
        )
        .prop_filter("well-shaped triangle, ray not grazing", |c| {
            let [a, b, d] = c.v.map(|p| p.as_dvec3());
            let n = (b - a).cross(d - a);
            let longest2 = (b - a)
                .length_squared()
                .max((d - a).length_squared())
                .max((d - b).length_squared());
            let cos_phi = c.ray.dir.as_dvec3().normalize().dot(n.normalize()).abs();
            n.length() >= 0.1 * longest2 && cos_phi >= 0.5
        })
}

proptest! {
    #![proptest_config(config(3000, 0x7A1_0001))]

    /// Away from edges all three kernels hit, agree with the f64 reference, return valid barycentrics,
    /// and put the hit on the triangle's plane.
    #[test]
    fn kernels_agree_with_f64_away_from_edges(c in case(0.02, false)) {
        let [v0, v1, v2] = c.v;
        let (t64, u64, v64) = reference(&c.ray, v0, v1, v2).expect("not parallel");
        prop_assert!(u64 >= 0.0 && v64 >= 0.0 && u64 + v64 <= 1.0 && t64 > 0.0);
        let n = (v1.as_dvec3() - v0.as_dvec3()).cross(v2.as_dvec3() - v0.as_dvec3()).normalize();
        let front = c.ray.dir.as_dvec3().dot(n) < 0.0;
        for (name, k) in KERNELS {
            let h = k(&c.ray, v0, v1, v2, Culling::None);
            prop_assert!(h.is_some(), "{} missed {:?}", name, c);
            let h = h.unwrap();
            prop_assert_eq!(k(&c.ray, v0, v1, v2, Culling::Back).is_some(), front, "{}", name);
            prop_assert!(h.u >= 0.0 && h.v >= 0.0 && h.u + h.v <= 1.0 + 2.0 * EPS, "{}: {:?}", name, h);
            let tol = TOL * c.kappa;
            prop_assert!((h.t as f64 - t64).abs() <= tol * t64, "{}: t {} vs {} ({:?})", name, h.t, t64, c);
            prop_assert!((h.u as f64 - u64).abs() <= tol, "{}: u {} vs {} ({:?})", name, h.u, u64, c);
            prop_assert!((h.v as f64 - v64).abs() <= tol, "{}: v {} vs {} ({:?})", name, h.v, v64, c);
            let x = c.ray.origin.as_dvec3() + h.t as f64 * c.ray.dir.as_dvec3();
            let off_plane = (x - v0.as_dvec3()).dot(n).abs();
            prop_assert!(off_plane <= TOL_PLANE * c.kappa * c.size, "{}: {} off the plane ({:?})", name, off_plane, c);
        }
    }

    /// Rays that pass the triangle at least 2% (in barycentrics) outside an edge: every kernel misses,
    /// as the f64 reference says.
    #[test]
    fn kernels_miss_away_from_edges(c in case(0.02, true)) {
        let [v0, v1, v2] = c.v;
        let (_, u64, v64) = reference(&c.ray, v0, v1, v2).expect("not parallel");
        prop_assert!(u64 < 0.0 || v64 < 0.0 || u64 + v64 > 1.0);
        for (name, k) in KERNELS {
            prop_assert!(k(&c.ray, v0, v1, v2, Culling::None).is_none(), "{} hit {:?}", name, c);
        }
    }
}
