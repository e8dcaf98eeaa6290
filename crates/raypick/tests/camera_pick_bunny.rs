//! Picks on a real mesh (the Stanford bunny, 69,451 triangles) agree with casting the same ray by
//! hand: the test unprojects each pixel itself (its own f64 matrix inverse and per-convention NDC
//! formulas), casts that ray through the scene and compares geometry, instance, triangle and point.
//! Cameras: every clip space, standard / infinite reverse-Z perspective, orthographic, both pixel
//! origins; the bunny alone and instanced twice.

use std::sync::Arc;

use raypick::camera::{pick, Camera, ClipSpace, DepthOrder, PixelOrigin, Projection, Viewport};
use raypick::glam::{Affine3A, Mat4, Quat, Vec2, Vec3};
use raypick::{Hit, Ray, Scene, SceneBuilder};

mod common;
use common::read_obj;

const BUNNY: &str = "obj/stanford-bunny.obj";

type M = [[f64; 4]; 4]; // m[row][col]

fn rows(m: Mat4) -> M {
    let c = m.to_cols_array_2d();
    let mut r = [[0.0; 4]; 4];
    for (i, row) in r.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = c[j][i] as f64;
        }
    }
    r
}

fn mul(a: &M, b: &M) -> M {
    let mut r = [[0.0; 4]; 4];
    for i in 0..4 {
        for j in 0..4 {
            r[i][j] = (0..4).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    r
}

fn invert(a: &M) -> M {
    let (mut m, mut inv) = (*a, [[0.0; 4]; 4]);
    for (i, row) in inv.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    for col in 0..4 {
        let piv = (col..4)
            .max_by(|&x, &y| m[x][col].abs().total_cmp(&m[y][col].abs()))
            .unwrap();
        m.swap(col, piv);
        inv.swap(col, piv);
        let p = m[col][col];
        for j in 0..4 {
            m[col][j] /= p;
            inv[col][j] /= p;
        }
        for row in 0..4 {
            if row != col {
                let f = m[row][col];
                for j in 0..4 {
                    m[row][j] -= f * m[col][j];
                    inv[row][j] -= f * inv[col][j];
                }
            }
        }
    }
    inv
}

/// The ray through continuous window point (x, y) computed by hand: NDC per the conventions
/// table, the near point and a point halfway in NDC depth (finite for every projection here),
/// `Ray::new(near, mid − near)`.
fn hand_ray(cam: &Camera, x: f32, y: f32) -> Ray {
    let vp = cam.viewport();
    let inv = invert(&mul(
        &rows(cam.projection().clip_from_view()),
        &rows(cam.view_from_world()),
    ));
    let xn = 2.0 * (x - vp.x) as f64 / vp.width as f64 - 1.0;
    let s = 2.0 * (y - vp.y) as f64 / vp.height as f64 - 1.0;
    let y_down_pixels = cam.pixel_origin() == PixelOrigin::TopLeft;
    let y_down_ndc = cam.clip_space() == ClipSpace::Vulkan;
    let yn = if y_down_pixels != y_down_ndc { -s } else { s };
    let (lo, hi) = match cam.clip_space() {
        ClipSpace::OpenGl => (-1.0, 1.0),
        _ => (0.0, 1.0),
    };
    let z_near = match cam.projection().depth_order() {
        DepthOrder::Standard => lo,
        DepthOrder::Reversed => hi,
    };
    let z_mid = 0.5 * (lo + hi);
    let point = |z: f64| {
        let v = [xn, yn, z, 1.0];
        let o: Vec<f64> = (0..4)
            .map(|i| (0..4).map(|k| inv[i][k] * v[k]).sum())
            .collect();
        Vec3::new(
            (o[0] / o[3]) as f32,
            (o[1] / o[3]) as f32,
            (o[2] / o[3]) as f32,
        )
    };
    let (near, mid) = (point(z_near), point(z_mid));
    Ray::new(near, mid - near)
}

/// Smallest barycentric coordinate of a hit: how close it is to an edge of its triangle.
fn edge_closeness(h: &Hit) -> f32 {
    h.u.min(h.v).min(1.0 - h.u - h.v)
}

fn cameras(bounds: raypick::Aabb) -> Vec<Camera> {
    let vp = Viewport::new(160.0, 120.0);
    let dir = Vec3::new(-0.3, -0.2, -1.0);
    let mut cams = Vec::new();
    for cs in [ClipSpace::OpenGl, ClipSpace::Direct3D, ClipSpace::Vulkan] {
        let framed = Camera::frame_bounds(bounds, dir, Vec3::Y, 0.7, vp, cs).unwrap();
        let view = framed.view_from_world();
        let near = framed.eye().distance(bounds.center()) - bounds.extent().length();
        let near = near.max(1e-3);
        let r = 0.5 * bounds.extent().length();
        for proj in [
            *framed.projection(),
            Projection::perspective_infinite_reverse_z(0.7, vp.aspect(), near, cs).unwrap(),
            Projection::orthographic_symmetric(2.2 * r, vp.aspect(), 0.0, 10.0 * r, cs).unwrap(),
        ] {
            for origin in [PixelOrigin::TopLeft, PixelOrigin::BottomLeft] {
                cams.push(
                    Camera::new(view, proj, vp)
                        .unwrap()
                        .with_pixel_origin(origin),
                );
            }
        }
    }
    cams
}

fn check_scene(scene: &Scene, min_hits: usize) {
    for cam in cameras(scene.bounds()) {
        let scale = scene.bounds().extent().length();
        let (mut hits, mut grazing) = (0, 0);
        for j in 0..30 {
            for i in 0..40 {
                // Off-centre positions inside pixel (4i, 4j): continuous coordinates.
                let (x, y) = (4.0 * i as f32 + 1.3, 4.0 * j as f32 + 2.7);
                let picked = pick(scene, &cam, Vec2::new(x, y));
                let by_hand = scene.intersect(&hand_ray(&cam, x, y));
                match (picked, by_hand) {
                    (Some(p), Some(h)) => {
                        hits += 1;
                        assert_eq!((p.geom(), p.instance()), (h.geom, h.instance));
                        if p.prim() != h.prim {
                            // Only through a shared edge, where rounding decides.
                            grazing += 1;
                            assert!(edge_closeness(&p.hit).min(edge_closeness(&h)) < 1e-3);
                        }
                        assert!(
                            p.point().distance(h.point) < 1e-4 * scale,
                            "{} {}",
                            p.point(),
                            h.point
                        );
                    }
                    (None, None) => {}
                    (Some(p), None) => {
                        grazing += 1;
                        assert!(
                            edge_closeness(&p.hit) < 1e-3,
                            "{cam:?} ({x}, {y}): only the pick hits"
                        );
                    }
                    (None, Some(h)) => {
                        grazing += 1;
                        assert!(
                            edge_closeness(&h) < 1e-3,
                            "{cam:?} ({x}, {y}): only the hand ray hits"
                        );
                    }
                }
            }
        }
        assert!(hits >= min_hits, "{hits} hits");
        assert!(grazing <= 6, "{grazing} grazing disagreements");
    }
}

#[test]
fn bunny_picks_agree_with_hand_cast_rays() {
    let mut b = SceneBuilder::new();
    b.add_mesh(read_obj(BUNNY).with_name("bunny"));
    let scene = b.build().unwrap();
    assert_eq!(scene.num_triangles(), 69_451);
    check_scene(&scene, 50);
}

#[test]
fn instanced_bunnies_report_their_instance() {
    let mut b = SceneBuilder::new();
    b.add_mesh(read_obj(BUNNY));
    let bunny = Arc::new(b.build().unwrap());
    let size = bunny.bounds().extent().length();
    let mut top = SceneBuilder::new();
    let a = top.add_instance(
        bunny.clone(),
        Affine3A::from_translation(Vec3::new(-0.6 * size, 0.0, 0.0)),
    );
    let c = top.add_instance(
        bunny,
        Affine3A::from_scale_rotation_translation(
            Vec3::splat(1.5),
            Quat::from_rotation_y(2.0),
            Vec3::new(0.6 * size, 0.1 * size, -0.2 * size),
        ),
    );
    let scene = top.build().unwrap();
    check_scene(&scene, 50);
    // Both instances are pickable somewhere.
    let cam = &cameras(scene.bounds())[0];
    let mut seen = [false; 2];
    for j in 0..60 {
        for i in 0..80 {
            if let Some(p) = pick(
                &scene,
                cam,
                Vec2::new(2.0 * i as f32 + 1.0, 2.0 * j as f32 + 1.0),
            ) {
                seen[(p.instance() == Some(c)) as usize] = true;
                assert!(p.instance() == Some(a) || p.instance() == Some(c));
                assert_eq!(p.geom(), 0);
            }
        }
    }
    assert_eq!(seen, [true, true]);
}
