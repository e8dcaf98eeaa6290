//! The robust slab test (`Aabb::intersect_ray`, `Aabb::intersect_slabs`): zero direction components,
//! NaN handling, and the property the BVH relies on — a box that holds the exact hit point of a
//! triangle inside it is never missed, and its interval holds the hit's `t` (Ize 2013).

use glam::{DVec3, Vec3};
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, RngAlgorithm, RngSeed};
use raypick::geom::aabb::gamma;
use raypick::{Aabb, Ray};

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

#[test]
fn zero_direction_components() {
    let b = Aabb::new(Vec3::new(-1.0, 2.0, 3.0), Vec3::new(1.0, 4.0, 5.0));
    // Axis-aligned rays: two zero components each, both signs, inside and outside the other slabs,
    // and exactly on the slab planes (0 · ∞ = NaN must not cause a miss).
    for axis in 0..3 {
        for sign in [-1.0f32, 1.0] {
            let mut dir = Vec3::ZERO;
            dir[axis] = sign * 2.0;
            let start = b.center() - dir * 5.0;
            let ray = Ray::new(start, dir);
            let (near, far) = b.intersect_ray(&ray).expect("through the centre");
            // Entry and exit at distance 5 ∓ half-extent / |dir| along the axis.
            let half = b.extent()[axis] / 2.0 / 2.0;
            assert!((near - (5.0 - half)).abs() < 1e-5 && (far - (5.0 + half)).abs() < 1e-5);
            for other in (0..3).filter(|&o| o != axis) {
                for (value, inside) in [
                    (b.min[other], true),
                    (b.max[other], true),
                    (b.min[other] - 1e-3, false),
                    (b.max[other] + 1e-3, false),
                ] {
                    let mut o = start;
                    o[other] = value;
                    let r = Ray::new(o, dir);
                    assert_eq!(b.intersect_ray(&r).is_some(), inside, "{r:?}");
                    let inv = dir.recip();
                    assert_eq!(
                        b.intersect_slabs(o, inv, 0.0, f32::INFINITY).is_some(),
                        inside
                    );
                }
            }
        }
    }
    // A ray in the plane of a face, along a diagonal of it (one zero component).
    let r = Ray::new(Vec3::new(-2.0, 1.0, 3.0), Vec3::new(1.0, 1.0, 0.0));
    assert!(b.intersect_ray(&r).is_some());
    // Negative zero behaves as zero.
    let r = Ray::new(Vec3::new(0.0, 3.0, 0.0), Vec3::new(-0.0, 0.0, 1.0));
    assert!(b.intersect_ray(&r).is_some());
    let r = Ray::new(Vec3::new(0.0, 3.0, 0.0), Vec3::new(-0.0, -0.0, -1.0));
    assert!(b.intersect_ray(&r).is_none());
}

#[test]
fn nan_and_infinite_inputs_miss_without_panic() {
    let b = Aabb::new(Vec3::ZERO, Vec3::ONE);
    let good = Ray::new(Vec3::new(0.5, 0.5, -1.0), Vec3::Z);
    assert!(b.intersect_ray(&good).is_some());
    for ray in [
        Ray::new(Vec3::new(f32::NAN, 0.5, -1.0), Vec3::Z),
        Ray::new(Vec3::new(0.5, 0.5, f32::NEG_INFINITY), Vec3::Z),
        Ray::new(good.origin, Vec3::new(f32::NAN, 0.0, 1.0)),
        Ray::new(good.origin, Vec3::new(0.0, 0.0, f32::INFINITY)),
        Ray::new(good.origin, Vec3::ZERO),
        good.with_range(f32::NAN, 5.0),
        good.with_range(0.0, f32::NAN),
        good.with_range(3.0, 2.0),
    ] {
        assert_eq!(b.intersect_ray(&ray), None, "{ray:?}");
    }
    // The interval is honoured: the box is at t ∈ [1, 2].
    assert!(b.intersect_ray(&good.with_range(0.0, 0.99)).is_none());
    assert!(b.intersect_ray(&good.with_range(2.01, 9.0)).is_none());
    assert_eq!(
        b.intersect_ray(&good.with_range(1.5, 1.6)),
        Some((1.5, 1.6))
    );
    // A box with NaN bounds does not panic. (Whether it is hit is unspecified: NaN slabs are skipped
    // like the 0·∞ case, so it is.)
    let nan_box = Aabb::new(Vec3::splat(f32::NAN), Vec3::splat(f32::NAN));
    let _ = nan_box.intersect_ray(&good);
}

/// The exact hit point (computed in f64 on the f32 inputs) of a ray with a triangle, if it lies inside
/// the triangle: `(t, point)`.
fn exact_hit(ray: &Ray, v: [Vec3; 3]) -> Option<(f64, DVec3)> {
    let (o, d) = (ray.origin.as_dvec3(), ray.dir.as_dvec3());
    let [a, b, c] = v.map(|p| p.as_dvec3());
    let (e1, e2) = (b - a, c - a);
    let p = d.cross(e2);
    let det = e1.dot(p);
    if det == 0.0 {
        return None;
    }
    let tv = o - a;
    let q = tv.cross(e1);
    let (t, u, w) = (e2.dot(q) / det, tv.dot(p) / det, d.dot(q) / det);
    (u >= 0.0 && w >= 0.0 && u + w <= 1.0 && t >= 0.0).then(|| (t, o + d * t))
}

fn unit3() -> impl Strategy<Value = DVec3> {
    [-1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0]
        .prop_map(|[x, y, z]| DVec3::new(x, y, z))
        .prop_filter("normalizable", |v| v.length() > 0.1)
        .prop_map(|v| v.normalize())
}

proptest! {
    #![proptest_config(config(6000, 0xB0C5))]

    /// Triangles at magnitudes 1e-6..1e6 (some flattened onto an axis plane, so their box has zero
    /// thickness), rays aimed at a point of the triangle (vertices and edge points included) from
    /// random directions, some with zero components: whenever the exact hit point is inside the
    /// triangle, the triangle's bounding box is hit and its interval holds the exact `t`.
    #[test]
    fn the_slab_test_never_misses_a_box_holding_the_exact_hit(
        m in -6.0f64..6.0, k in 0.0f64..3.0,
        centre in unit3(), corners in [unit3(), unit3(), unit3()],
        flatten in 0usize..5,
        bary in (0.0f64..1.0, 0.0f64..1.0, 0usize..4),
        dir in unit3(), zero_mask in 0u8..8, dist_exp in -1.0f64..3.0, len_exp in -3.0f64..3.0,
    ) {
        let mag = 10f64.powf(m);
        let size = mag * 10f64.powf(-k);
        let mut v = corners.map(|c| (centre * mag + c * size).as_vec3());
        if flatten < 3 {
            // All three vertices share one coordinate: the box is flat along that axis.
            let value = v[0][flatten];
            for p in &mut v {
                p[flatten] = value;
            }
        }
        let [a, b, c] = v.map(|p| p.as_dvec3());
        let target = match bary {
            (_, _, 0) => a,
            (s, _, 1) => a + (b - a) * s,
            (s, t, _) => {
                let (s, t) = if s + t > 1.0 { (1.0 - s, 1.0 - t) } else { (s, t) };
                a + (b - a) * s + (c - a) * t
            }
        };
        let mut dir = dir;
        for axis in 0..3 {
            if zero_mask & (1 << axis) != 0 && zero_mask != 7 {
                dir[axis] = 0.0;
            }
        }
        prop_assume!(dir.length() > 0.1);
        let dir = dir.normalize();
        let origin = (target - dir * size * 10f64.powf(dist_exp)).as_vec3();
        let ray = Ray::new(origin, (dir * 10f64.powf(len_exp)).as_vec3());
        let Some((t, p)) = exact_hit(&ray, v) else {
            // Rounding of the origin moved the ray off the triangle: nothing to check.
            return Ok(());
        };
        let aabb = Aabb::from_points(v);
        // The exact point is in the box, up to its own f64 rounding.
        let slack = 1e-12 * (mag + size);
        prop_assert!((0..3).all(|i| p[i] >= aabb.min[i] as f64 - slack && p[i] <= aabb.max[i] as f64 + slack));
        let hit = aabb.intersect_ray(&ray);
        prop_assert!(hit.is_some(), "box {:?} missed by {:?} (exact hit at t = {})", aabb, ray, t);
        let (near, far) = hit.unwrap();
        // Ize's enlargement of far by 1 + 2γ(3) makes far >= t; near is the rounded entry distance
        // (three roundings: relative error up to γ(3)) and may exceed the exact t by that much when the
        // hit is on the box's boundary.
        let g3 = gamma(3) as f64;
        prop_assert!(near as f64 <= t * (1.0 + g3) + 1e-300 && t <= far as f64, "t {} outside [{}, {}]", t, near, far);
        let inv = ray.dir.recip();
        prop_assert_eq!(aabb.intersect_slabs(ray.origin, inv, ray.t_min, ray.t_max), Some((near, far)));
    }
}
