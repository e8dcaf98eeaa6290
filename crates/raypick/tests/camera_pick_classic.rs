//! The classic OpenGL picking example: the triangle V0 = (1, 0, −1), V1 = (0, 1, −1),
//! V2 = (0, 0, −2) seen by the default OpenGL camera at the origin looking down −Z
//! (gluPerspective(45°, 1, near, far), square viewport). Every pixel centre whose 2-D position is
//! inside the projected triangle must pick it and every other must not, for both pixel origins and
//! every clip-space convention. "Inside" is computed independently: the vertices are projected with
//! gluPerspective's formula in f64 and tested with 2-D edge functions; pixels within a small margin
//! of an edge are skipped.

use raypick::camera::{
    pick, pick_with_tolerance, Camera, ClipSpace, PixelOrigin, Projection, Viewport,
};
use raypick::glam::{Mat4, Vec2, Vec3};
use raypick::{QueryOptions, Scene, SceneBuilder, Spheres, TriMesh};

const V: [[f64; 3]; 3] = [[1.0, 0.0, -1.0], [0.0, 1.0, -1.0], [0.0, 0.0, -2.0]];
const SIZE: u32 = 96;
const FOV_DEG: f64 = 45.0;

fn scene() -> Scene {
    let mut b = SceneBuilder::new();
    b.add_mesh(TriMesh::new(
        V.iter()
            .map(|v| Vec3::new(v[0] as f32, v[1] as f32, v[2] as f32))
            .collect(),
        vec![[0, 1, 2]],
    ));
    b.build().unwrap()
}

/// gluPerspective's projection of a view-space point to OpenGL window coordinates (bottom-left),
/// in f64: `f = cot(fovy / 2)`, `x_ndc = f/aspect · x / −z`, `y_ndc = f · y / −z`.
fn window_bottom_left(p: [f64; 3]) -> [f64; 2] {
    let f = 1.0 / (FOV_DEG.to_radians() / 2.0).tan();
    let (xn, yn) = (f * p[0] / -p[2], f * p[1] / -p[2]);
    let s = SIZE as f64;
    [(xn + 1.0) * 0.5 * s, (yn + 1.0) * 0.5 * s]
}

/// Signed distances (pixels) from `q` to the three edges of the 2-D triangle, positive inside
/// (for either winding).
fn edge_distances(t: [[f64; 2]; 3], q: [f64; 2]) -> [f64; 3] {
    let area =
        (t[1][0] - t[0][0]) * (t[2][1] - t[0][1]) - (t[1][1] - t[0][1]) * (t[2][0] - t[0][0]);
    let sign = area.signum();
    let mut d = [0.0; 3];
    for (i, di) in d.iter_mut().enumerate() {
        let (a, b) = (t[i], t[(i + 1) % 3]);
        let e = [b[0] - a[0], b[1] - a[1]];
        let cross = e[0] * (q[1] - a[1]) - e[1] * (q[0] - a[0]);
        *di = sign * cross / (e[0] * e[0] + e[1] * e[1]).sqrt();
    }
    d
}

/// Pixels closer than this to an edge are skipped: the pick there depends on f32 rounding, not on
/// conventions (a wrong convention moves the triangle by many pixels).
const MARGIN_PX: f64 = 0.01;

#[test]
fn pixels_inside_the_projected_triangle_pick_it_and_others_do_not() {
    let scene = scene();
    let tri_bl = V.map(window_bottom_left);
    let vp = Viewport::new(SIZE as f32, SIZE as f32);
    let fov = (FOV_DEG as f32).to_radians();
    for cs in [ClipSpace::OpenGl, ClipSpace::Direct3D, ClipSpace::Vulkan] {
        for proj in [
            Projection::perspective(fov, 1.0, 0.1, 100.0, cs).unwrap(),
            Projection::perspective_infinite_reverse_z(fov, 1.0, 0.1, cs).unwrap(),
        ] {
            for origin in [PixelOrigin::BottomLeft, PixelOrigin::TopLeft] {
                // The default OpenGL camera: at the origin, looking down −Z, Y up.
                let cam = Camera::new(Mat4::IDENTITY, proj, vp)
                    .unwrap()
                    .with_pixel_origin(origin);
                let (mut inside, mut outside, mut skipped) = (0, 0, 0);
                for j in 0..SIZE {
                    for i in 0..SIZE {
                        let (x, y) = (i as f64 + 0.5, j as f64 + 0.5);
                        // The classic conversion: row j from the top is row SIZE − j − 1 from the
                        // bottom; in continuous coordinates y_bl = SIZE − y.
                        let y_bl = match origin {
                            PixelOrigin::BottomLeft => y,
                            PixelOrigin::TopLeft => SIZE as f64 - y,
                        };
                        let d = edge_distances(tri_bl, [x, y_bl]);
                        let min = d.iter().cloned().fold(f64::INFINITY, f64::min);
                        if min.abs() < MARGIN_PX {
                            skipped += 1;
                            continue;
                        }
                        let hit = pick(&scene, &cam, Vec2::new(x as f32, y as f32));
                        if min > 0.0 {
                            inside += 1;
                            let p = hit.unwrap_or_else(|| {
                                panic!("{cs:?} {origin:?}: ({i}, {j}) must hit")
                            });
                            assert_eq!((p.geom(), p.prim(), p.instance()), (0, 0, None));
                            // The hit is on the triangle's plane: n = (V1 − V0) × (V2 − V0).
                            let n = Vec3::new(-1.0, 1.0, 0.0).cross(Vec3::new(-1.0, 0.0, -1.0));
                            let plane = n.dot(p.point() - Vec3::new(1.0, 0.0, -1.0)) / n.length();
                            assert!(plane.abs() < 1e-5, "{plane}");
                            // ... and projects back onto the pixel centre.
                            let w = cam.project(p.point()).unwrap();
                            assert!((w.x - x as f32).abs() < 1e-3 && (w.y - y as f32).abs() < 1e-3);
                            // t is the world distance from the near point.
                            assert!((p.ray.origin.distance(p.point()) - p.distance()).abs() < 1e-5);
                        } else {
                            outside += 1;
                            assert!(hit.is_none(), "{cs:?} {origin:?}: ({i}, {j}) must miss");
                        }
                    }
                }
                assert!(
                    inside > 300 && outside > 3000 && skipped < 50,
                    "{inside} {outside} {skipped}"
                );
            }
        }
    }
}

#[test]
fn tolerance_picks_a_small_sphere_next_to_the_cursor() {
    let mut b = SceneBuilder::new();
    // A sphere at (0, 0, −5) of radius 0.01: about 0.25 px at 96 px and 45°.
    b.add_spheres(Spheres::new(vec![Vec3::new(0.0, 0.0, -5.0)], vec![0.01]));
    let scene = b.build().unwrap();
    let vp = Viewport::new(SIZE as f32, SIZE as f32);
    let proj = Projection::perspective(
        (FOV_DEG as f32).to_radians(),
        1.0,
        0.1,
        100.0,
        ClipSpace::OpenGl,
    )
    .unwrap();
    let cam = Camera::new(Mat4::IDENTITY, proj, vp).unwrap();
    let centre = Vec2::splat(SIZE as f32 / 2.0);
    let off = centre + Vec2::new(3.0, -2.0);
    assert!(pick(&scene, &cam, off).is_none());
    let opts = QueryOptions::default();
    assert!(pick_with_tolerance(&scene, &cam, off, 2.0, &opts).is_none());
    let p = pick_with_tolerance(&scene, &cam, off, 4.0, &opts).unwrap();
    assert_eq!((p.geom(), p.prim()), (0, 0));
    // The winning sample is within the tolerance and the ray really hits the sphere.
    assert!(p.pixel.distance(off) <= 4.0 + 1e-4);
    assert!((p.point() - Vec3::new(0.0, 0.0, -5.0)).length() < 0.0101);
}

#[test]
fn tolerance_prefers_the_object_closest_to_the_cursor_on_screen() {
    // Two tiny spheres: A is 2 px from the cursor but far away in depth, B is 5 px away and near.
    let vp = Viewport::new(SIZE as f32, SIZE as f32);
    let proj = Projection::perspective(
        (FOV_DEG as f32).to_radians(),
        1.0,
        0.1,
        100.0,
        ClipSpace::OpenGl,
    )
    .unwrap();
    let cam = Camera::new(Mat4::IDENTITY, proj, vp).unwrap();
    let cursor = Vec2::new(40.0, 40.0);
    let at = |dx: f32, depth: f32| {
        let r = cam.pixel_ray(cursor.x + dx, cursor.y);
        r.origin + r.dir * (depth - r.origin.length())
    };
    let mut b = SceneBuilder::new();
    let far_one = b.add_spheres(Spheres::new(vec![at(2.0, 20.0)], vec![0.1])); // ~0.6 px
    let near_one = b.add_spheres(Spheres::new(vec![at(-5.0, 2.0)], vec![0.01])); // ~0.6 px
    let scene = b.build().unwrap();
    let opts = QueryOptions::default();
    assert_eq!(
        pick_with_tolerance(&scene, &cam, cursor, 8.0, &opts)
            .unwrap()
            .geom(),
        far_one
    );
    // Moving the cursor next to the near one flips the answer.
    let p = pick_with_tolerance(&scene, &cam, cursor - Vec2::new(4.0, 0.0), 8.0, &opts).unwrap();
    assert_eq!(p.geom(), near_one);
}
