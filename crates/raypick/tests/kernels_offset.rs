//! `offset_ray_origin` (Wächter & Binder, Ray Tracing Gems ch. 6): a ray leaving a triangle from the
//! offset hit point never hits that triangle again, on either side, at magnitudes 1e-6..1e6.
//!
//! The hit points are what a renderer has: the barycentric point of a watertight hit, rounded to
//! `f32`, so they lie up to a few ulps off the plane, on either side. The control (origin not
//! offset) re-hits the triangle on a good share of the rays, so the test can tell: with this seed,
//! 96,000 rays from 12,000 triangles (1,000 per decade of magnitude), none re-hit with the offset
//! and 48,047 (50%) re-hit without it.
//!
//! Scope, as in the chapter: the method assumes the error of the hit point is relative to the point's
//! own coordinates. That holds when the triangle's coordinates are of the same magnitude as the point's
//! on each axis; here every coordinate of the triangle's centre is at least 0.3 of its magnitude and the
//! triangle is at most a tenth of it. A huge triangle straddling a coordinate plane, hit near that
//! plane, has errors (relative to its vertices) larger than the ulp-scaled offset; there the
//! watertight kernel's conservative `t` (pbrt-v4's error bound) keeps the rays from re-hitting it,
//! which the last test checks (the Möller–Trumbore kernel has no such bound).

use glam::{DVec3, Vec3};
use rand::{Rng, SeedableRng};
use raypick::geom::offset::{offset_ray_origin, OFFSET_ORIGIN};
use raypick::geom::triangle::{moller_trumbore, watertight, Culling};
use raypick::Ray;

fn unit(rng: &mut impl Rng) -> DVec3 {
    loop {
        let v = DVec3::new(
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
        );
        let l = v.length();
        if (0.1..=1.0).contains(&l) {
            return v / l;
        }
    }
}

#[test]
fn offset_hand_checked() {
    // Integer offsets: 256·n ulps; below 1/32, 2⁻¹⁶·n.
    let p = Vec3::new(-2.0, 1.0, 0.01);
    let n = Vec3::new(0.6, -0.8, 0.0);
    let q = offset_ray_origin(p, n);
    // -2.0 moved towards +: ⌊256 · 0.6⌋ = 153 ulps of the magnitudes just below 2 (2⁻²³).
    assert_eq!(q.x, -2.0 + 153.0 * 2f32.powi(-23));
    // 1.0 moved towards -: 204 ulps down (below 1.0 the ulp is 2⁻²⁴).
    assert_eq!(q.y, f32::from_bits(1.0f32.to_bits() - 204));
    // |0.01| < 1/32: float offset, n.z = 0 leaves it.
    assert_eq!(q.z, 0.01);
    let q = offset_ray_origin(Vec3::new(0.0, 0.02, -0.0), Vec3::new(0.0, -1.0, 1.0));
    assert_eq!(q, Vec3::new(0.0, 0.02 - 1.0 / 65536.0, 1.0 / 65536.0));
    // At |p| = 1/32 the integer offset applies; just below it, the float offset.
    let at = offset_ray_origin(Vec3::splat(OFFSET_ORIGIN), Vec3::X).x;
    assert_eq!(at, f32::from_bits((1.0f32 / 32.0).to_bits() + 256));
    let below = f32::from_bits(OFFSET_ORIGIN.to_bits() - 1);
    assert_eq!(
        offset_ray_origin(Vec3::splat(below), Vec3::X).x,
        below + 1.0 / 65536.0
    );
    // Non-finite input: no panic.
    let _ = offset_ray_origin(
        Vec3::new(f32::NAN, f32::INFINITY, f32::MAX),
        Vec3::new(1.0, -1.0, 1.0),
    );
    let _ = offset_ray_origin(Vec3::ONE, Vec3::splat(f32::NAN));
}

#[test]
fn offset_rays_never_rehit_their_triangle() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(0x0FF5E7);
    let (mut rays, mut control_rehits, mut triangles) = (0usize, 0usize, 0usize);
    let mut per_decade = [0usize; 12];
    while triangles < 12_000 {
        let m: f64 = rng.gen_range(-6.0..6.0);
        let mag = 10f64.powf(m);
        let centre = DVec3::new(
            rng.gen_range(0.3..1.0) * if rng.gen() { mag } else { -mag },
            rng.gen_range(0.3..1.0) * if rng.gen() { mag } else { -mag },
            rng.gen_range(0.3..1.0) * if rng.gen() { mag } else { -mag },
        );
        let size = mag * 10f64.powf(-rng.gen_range(1.0..3.0));
        let v = [0; 3].map(|_| (centre + unit(&mut rng) * size).as_vec3());
        let [a, b, c] = v.map(|p| p.as_dvec3());
        let n64 = (b - a).cross(c - a);
        let longest2 = (b - a)
            .length_squared()
            .max((c - a).length_squared())
            .max((c - b).length_squared());
        if n64.length() < 0.05 * longest2 {
            continue; // a sliver: skip, it says nothing about the offset
        }
        // A primary ray at a random point of the triangle, from a random side.
        let (s, t): (f64, f64) = (rng.gen(), rng.gen());
        let (s, t) = if s + t > 1.0 {
            (1.0 - s, 1.0 - t)
        } else {
            (s, t)
        };
        let target = a + (b - a) * s + (c - a) * t;
        let from = target + unit(&mut rng) * size * rng.gen_range(0.5..50.0);
        let primary = Ray::new(from.as_vec3(), (target - from).as_vec3());
        let Some(hit) = watertight(&primary, v[0], v[1], v[2], Culling::None) else {
            continue;
        };
        triangles += 1;
        per_decade[(m + 6.0) as usize] += 1;
        let p = hit.point_from_barycentrics(v[0], v[1], v[2]);
        let n = n64.normalize().as_vec3();
        for side in [1.0f32, -1.0] {
            let n_side = n * side;
            let origin = offset_ray_origin(p, n_side);
            for _ in 0..4 {
                // A direction into the side's hemisphere, grazing ones included.
                let mut w = unit(&mut rng).as_vec3();
                if w.dot(n_side) < 0.0 {
                    w = -w;
                }
                if w.dot(n_side) <= 0.0 {
                    continue;
                }
                let ray = Ray::new(origin, w);
                assert_eq!(
                    watertight(&ray, v[0], v[1], v[2], Culling::None),
                    None,
                    "re-hit from {origin} (hit point {p}, normal {n_side}) along {w}; triangle {v:?}"
                );
                assert_eq!(moller_trumbore(&ray, v[0], v[1], v[2], Culling::None), None);
                rays += 1;
                let control = Ray::new(p, w);
                control_rehits +=
                    watertight(&control, v[0], v[1], v[2], Culling::None).is_some() as usize;
            }
        }
    }
    println!(
        "offset: {rays} rays from {triangles} triangles, none re-hit; without the offset {control_rehits} re-hit"
    );
    assert!(
        per_decade.iter().all(|&k| k > 500),
        "every decade 1e-6..1e6 is covered: {per_decade:?}"
    );
    assert!(
        control_rehits > rays / 20,
        "the control should re-hit often: {control_rehits} of {rays}"
    );
}

/// The case the ulp offset alone does not cover (see the module docs): a room's floor, one huge
/// triangle lying in a coordinate plane, hit near that plane, where the offset is the float one
/// (`2⁻¹⁶`) while the error of the kernel's `t` grows with the vertices' distance from the origin.
/// The watertight kernel's conservative `t` (pbrt-v4's bound, `t > δt`) keeps every offset ray from
/// re-hitting the floor; the control counts the rays whose plane crossing lies behind the origin in
/// `f64` yet computes to `t ≥ 0` without the bound, so the test shows the case is real.
#[test]
fn offset_rays_leave_huge_triangles_in_coordinate_planes() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(0xF100F);
    let (mut rays, mut plain_rehits) = (0usize, 0usize);
    for round in 0..400 {
        // Floors and walls of rooms from 10 to 10,000 units wide, in the plane `axis = 0`.
        let scale = 10f64.powf(rng.gen_range(1.0..4.0));
        let axis = round % 3;
        let corner = |a: f64, b: f64| {
            let mut p = [0.0f64; 3];
            p[(axis + 1) % 3] = a * scale;
            p[(axis + 2) % 3] = b * scale;
            DVec3::from_array(p)
        };
        let w = [corner(-1.0, -0.7), corner(1.2, -0.9), corner(0.1, 1.1)];
        let v = w.map(|p| p.as_vec3());
        let n64 = (w[1] - w[0]).cross(w[2] - w[0]).normalize();
        for _ in 0..50 {
            // A camera ray from above or below the floor to a random point on it.
            let (s, t): (f64, f64) = (rng.gen(), rng.gen());
            let (s, t) = if s + t > 1.0 {
                (1.0 - s, 1.0 - t)
            } else {
                (s, t)
            };
            let target = w[0] + (w[1] - w[0]) * s + (w[2] - w[0]) * t;
            let side = if rng.gen() { 1.0 } else { -1.0 };
            let mut eye = unit(&mut rng) * scale * rng.gen_range(0.05..0.5);
            if eye.dot(n64) * side < 0.0 {
                eye -= 2.0 * eye.dot(n64) * n64;
            }
            let from = target + eye;
            let primary = Ray::new(from.as_vec3(), (target - from).as_vec3());
            let Some(hit) = watertight(&primary, v[0], v[1], v[2], Culling::None) else {
                continue;
            };
            let p = hit.point_from_barycentrics(v[0], v[1], v[2]);
            let n_side = (n64 * side).as_vec3();
            let origin = offset_ray_origin(p, n_side);
            assert!(
                (origin.as_dvec3() - w[0]).dot(n64) * side > 0.0,
                "the offset origin {origin} is on the viewer's side of the plane in f64"
            );
            for _ in 0..20 {
                let mut d = unit(&mut rng).as_vec3();
                if d.dot(n_side) < 0.0 {
                    d = -d;
                }
                if d.dot(n_side) <= 0.0 {
                    continue;
                }
                let ray = Ray::new(origin, d);
                assert_eq!(
                    watertight(&ray, v[0], v[1], v[2], Culling::None),
                    None,
                    "re-hit from {origin} along {d}; triangle {v:?}"
                );
                rays += 1;
                // Control: the same sheared `t`, rounded as the kernel rounds it, without the bound.
                plain_rehits += usize::from(plain_t(&ray, v) >= 0.0);
            }
        }
    }
    println!(
        "huge triangles: {rays} rays, none re-hit; without the t bound {plain_rehits} compute t >= 0"
    );
    assert!(rays > 200_000, "{rays}");
    assert!(
        plain_rehits > 100,
        "the control should find the case: {plain_rehits} of {rays}"
    );
}

/// The watertight kernel's `t` (Woop et al. 2013) computed as the kernel computes it, without the
/// edge tests or the error bound: whether a rounded `t` would come out non-negative.
fn plain_t(ray: &Ray, v: [Vec3; 3]) -> f32 {
    let d = ray.dir.to_array();
    let a = ray.dir.abs();
    let kz = if a.x >= a.y && a.x >= a.z {
        0
    } else if a.y >= a.z {
        1
    } else {
        2
    };
    let (kx, ky) = ((kz + 1) % 3, (kz + 2) % 3);
    let sz = 1.0 / d[kz];
    let (sx, sy) = (-(d[kx] * sz), -(d[ky] * sz));
    let rel = v.map(|p| (p - ray.origin).to_array());
    let xy = rel.map(|p| (p[kx] + sx * p[kz], p[ky] + sy * p[kz]));
    let z = rel.map(|p| sz * p[kz]);
    let [(ax, ay), (bx, by), (cx, cy)] = xy;
    let (u, v, w) = (cx * by - cy * bx, ax * cy - ay * cx, bx * ay - by * ax);
    (u * z[0] + v * z[1] + w * z[2]) / (u + v + w)
}

/// The other side of the conservative `t`: a genuine hit next to the origin on a long sliver seen
/// along its length, where the worst-case bound (0.054) exceeds the hit's `t` (0.041) and the
/// kernel's actual error is 1.5e-4. The kernel decides such a `t` in `f64` and keeps the hit,
/// alone and through a scene's batch (where the SIMD hit test hands the lane to it).
#[test]
fn a_real_hit_next_to_the_origin_on_a_sliver_is_kept() {
    let v = [
        Vec3::new(0.00724, 15.584311, 2.469_987),
        Vec3::new(0.00724, 15.559811, 2.488487),
        Vec3::new(-10.87976, 15.559811, 2.488487),
    ];
    let ray = Ray::new(
        Vec3::new(-4.216123, 15.587073, 2.4648197),
        Vec3::new(0.7180859, -0.516853, 0.466064),
    );
    // f64: the plane crossing and how far inside the triangle it lies.
    let [a, b, c] = v.map(|p| p.as_dvec3());
    let (o, d) = (ray.origin.as_dvec3(), ray.dir.as_dvec3());
    let n = (b - a).cross(c - a);
    let t64 = n.dot(a - o) / n.dot(d);
    let p = o + d * t64;
    let area = |x: DVec3, y: DVec3, z: DVec3| (y - x).cross(z - x).dot(n) / n.length_squared();
    let bary = [area(p, b, c), area(a, p, c), area(a, b, p)];
    assert!(bary.iter().all(|&w| w > 0.2), "well inside: {bary:?}");
    let hit = watertight(&ray, v[0], v[1], v[2], Culling::None).expect("a real hit");
    assert!(
        (f64::from(hit.t) - t64).abs() < 1e-6 * t64,
        "{} vs {t64}",
        hit.t
    );
    let mut builder = raypick::SceneBuilder::new();
    builder.add_mesh(raypick::TriMesh::new(v.to_vec(), vec![[0, 1, 2]]));
    let scene = builder.build().unwrap();
    let rays = vec![ray; 64];
    let hits = scene.intersect_batch(&rays, &raypick::QueryOptions::default());
    assert!(hits.iter().all(|h| h.is_some_and(|h| h.t == hit.t)));
    assert!(scene.occluded(&ray));
}
