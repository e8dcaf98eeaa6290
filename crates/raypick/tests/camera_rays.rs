//! Pixel rays: origin on the near plane, unit direction (t in world units), t_max at the far plane
//! (∞ for infinite projections), the same line for standard and reversed depth, parallel rays for
//! orthographic cameras, over magnitudes 1e-6..1e6 (proptest, fixed seed).

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use raypick::camera::{pick, Camera, ClipSpace, PixelOrigin, Projection, Viewport};
use raypick::glam::{Mat4, Vec2, Vec3};
use raypick::{SceneBuilder, TriMesh};

/// View-space z of a world point, in f64.
fn view_z(cam: &Camera, p: Vec3) -> f64 {
    (cam.view_from_world().as_dmat4() * p.as_dvec3().extend(1.0)).z
}

#[test]
fn pixel_rays_span_near_to_far_in_world_units_over_magnitudes() {
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases: 40,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[3; 32]),
    );
    runner
        .run(&(-6i32..=6, any::<u64>()), |(exp, seed)| {
            let scale = 10f32.powi(exp);
            let mut rng = Pcg64::seed_from_u64(seed);
            let vp = Viewport::new(rng.gen_range(50.0..800.0), rng.gen_range(50.0..800.0));
            let (fov, a) = (rng.gen_range(0.2..2.5), vp.aspect());
            let near = rng.gen_range(0.01..1.0) * scale;
            let far = near * rng.gen_range(2.0..1e4);
            let eye = Vec3::new(
                rng.gen_range(-3.0..3.0),
                rng.gen_range(-3.0..3.0),
                rng.gen_range(-3.0..3.0),
            ) * scale;
            let target =
                eye + Vec3::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0), -1.0) * scale;
            let cs =
                [ClipSpace::OpenGl, ClipSpace::Direct3D, ClipSpace::Vulkan][rng.gen_range(0..3)];
            let origin = [PixelOrigin::TopLeft, PixelOrigin::BottomLeft][rng.gen_range(0..2)];
            let cam = |p: Projection| {
                Camera::look_at(eye, target, Vec3::Y, p, vp)
                    .unwrap()
                    .with_pixel_origin(origin)
            };
            let std_cam = cam(Projection::perspective(fov, a, near, far, cs).unwrap());
            let rev_cam = cam(Projection::perspective_reverse_z(fov, a, near, far, cs).unwrap());
            let inf_cam = cam(Projection::perspective_infinite(fov, a, near, cs).unwrap());
            let inf_rev_cam =
                cam(Projection::perspective_infinite_reverse_z(fov, a, near, cs).unwrap());
            let h = rng.gen_range(0.5..5.0) * scale;
            let ortho_cam = cam(Projection::orthographic_symmetric(h, a, near, far, cs).unwrap());
            let forward = (target - eye).normalize();
            for _ in 0..16 {
                let (x, y) = (rng.gen_range(0.0..vp.width), rng.gen_range(0.0..vp.height));
                let r = std_cam.pixel_ray(x, y);
                // Unit direction, origin on the near plane, end on the far plane (relative 1e-5:
                // f32 rounding of the origin and direction, ×far/near ≤ 1e4 for the end point
                // is covered by comparing the end relative to far).
                prop_assert!((r.dir.length() - 1.0).abs() < 1e-6);
                prop_assert!(
                    (view_z(&std_cam, r.origin) + near as f64).abs()
                        <= 1e-4 * near as f64 + 4e-7 * eye.length() as f64
                );
                // The f32 matrix entries place the far plane within ~(far/near)·ε of `far`.
                let far_tol = (1e-5 + 8.0 * f32::EPSILON as f64 * (far / near) as f64) * far as f64;
                let far_err = (view_z(&std_cam, r.at(r.t_max)) + far as f64).abs();
                prop_assert!(
                    far_err <= far_tol,
                    "far err {} tol {} ratio {}",
                    far_err,
                    far_tol,
                    far / near
                );
                prop_assert!(r.dir.dot(forward) > 0.0);
                // Reverse-Z gives the same ray.
                let rr = rev_cam.pixel_ray(x, y);
                prop_assert!((rr.origin - r.origin).length() <= 1e-5 * (near + eye.length()));
                prop_assert!((rr.dir - r.dir).length() <= 1e-5);
                prop_assert!((rr.t_max - r.t_max).abs() <= 1e-4 * r.t_max);
                // Infinite projections: same line, unbounded.
                for ic in [&inf_cam, &inf_rev_cam] {
                    let ri = ic.pixel_ray(x, y);
                    prop_assert_eq!(ri.t_max, f32::INFINITY);
                    prop_assert!((ri.origin - r.origin).length() <= 1e-5 * (near + eye.length()));
                    prop_assert!((ri.dir - r.dir).length() <= 1e-5, "{} vs {}", ri.dir, r.dir);
                }
                // Orthographic: parallel to the view direction, starting on the near plane.
                let ro = ortho_cam.pixel_ray(x, y);
                prop_assert!((ro.dir - forward).length() <= 1e-5);
                // An orthographic matrix's f32 depth entries place its planes within ~ε·far.
                let ortho_tol = 1e-4 * near as f64
                    + 8.0 * f32::EPSILON as f64 * far as f64
                    + 4e-7 * eye.length() as f64;
                prop_assert!((view_z(&ortho_cam, ro.origin) + near as f64).abs() <= ortho_tol);
                prop_assert!((ro.t_max - (far - near)).abs() <= 1e-4 * far);
                let w = ortho_cam.project(ro.origin).unwrap();
                prop_assert!((w.x - x).abs() < 1e-2 && (w.y - y).abs() < 1e-2);
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn hit_distance_is_in_world_units_from_the_near_plane() {
    // A wall at z = −D, seen from the origin: the centre pixel's hit is at t = D − near.
    let d = 7.0f32;
    let mut b = SceneBuilder::new();
    b.add_mesh(TriMesh::new(
        vec![
            Vec3::new(-100.0, -100.0, -d),
            Vec3::new(100.0, -100.0, -d),
            Vec3::new(0.0, 100.0, -d),
        ],
        vec![[0, 1, 2]],
    ));
    let scene = b.build().unwrap();
    let vp = Viewport::new(101.0, 101.0);
    for proj in [
        Projection::perspective(1.0, 1.0, 0.25, 100.0, ClipSpace::OpenGl).unwrap(),
        Projection::perspective_infinite_reverse_z(1.0, 1.0, 0.25, ClipSpace::Direct3D).unwrap(),
        Projection::orthographic_symmetric(3.0, 1.0, 0.25, 100.0, ClipSpace::Vulkan).unwrap(),
    ] {
        let cam = Camera::new(Mat4::IDENTITY, proj, vp).unwrap();
        let p = pick(&scene, &cam, Vec2::splat(50.5)).unwrap();
        assert!((p.distance() - (d - 0.25)).abs() < 1e-5, "{}", p.distance());
        // Off-centre: t is the Euclidean distance from the ray origin to the point.
        let q = pick(&scene, &cam, Vec2::new(3.0, 90.0)).unwrap();
        assert!((q.ray.origin.distance(q.point()) - q.distance()).abs() < 1e-5);
        assert!((q.point().z + d).abs() < 1e-5);
    }
    // A wall beyond the far plane is not picked; an infinite projection sees it.
    let far_cam = Camera::new(
        Mat4::IDENTITY,
        Projection::perspective(1.0, 1.0, 0.25, 5.0, ClipSpace::OpenGl).unwrap(),
        vp,
    )
    .unwrap();
    assert!(pick(&scene, &far_cam, Vec2::splat(50.5)).is_none());
}

#[test]
fn orthographic_framing_and_pixel_ray_eye_independence() {
    let b = raypick::Aabb::new(Vec3::new(-1.0, -2.0, -3.0), Vec3::new(4.0, 1.0, 0.5));
    let vp = Viewport::new(300.0, 200.0);
    for cs in [ClipSpace::OpenGl, ClipSpace::Direct3D] {
        let cam = Camera::frame_bounds_orthographic(b, Vec3::new(1.0, -1.0, -0.5), Vec3::Y, vp, cs)
            .unwrap();
        for i in 0..8 {
            let c = Vec3::new(
                if i & 1 == 0 { b.min.x } else { b.max.x },
                if i & 2 == 0 { b.min.y } else { b.max.y },
                if i & 4 == 0 { b.min.z } else { b.max.z },
            );
            let w = cam.project(c).unwrap();
            assert!(
                w.x >= 0.0 && w.x <= 300.0 && w.y >= 0.0 && w.y <= 200.0 && w.z > 0.0 && w.z < 1.0,
                "{w}"
            );
        }
        // All rays are parallel.
        let (r0, r1) = (cam.pixel_ray(0.0, 0.0), cam.pixel_ray(299.0, 150.0));
        assert!((r0.dir - r1.dir).length() < 1e-6);
    }
}
