//! `pick_rect` (exact marquee selection) against an independent 2-D reference on random scenes.
//!
//! Every object lies entirely between the near and far planes, entirely beyond the far plane, or
//! entirely behind the camera, so selection is a 2-D question: does the object's projection overlap
//! the rectangle (clamped to the viewport)? The reference projects with its own f64 matrix
//! arithmetic and per-convention formulas:
//! - triangles: exact 2-D separating-axis test of the projected triangle against the rectangle
//!   shrunk / grown by a margin (must / must not be selected; in between is skipped);
//! - spheres and ellipsoids (spheres in scaled instances): the whole surface is sampled on a
//!   (θ, φ) grid; the projection of the solid is covered by the projected samples up to the largest
//!   projected grid cell `g`, so a sample inside the shrunk rectangle (or the rectangle's centre
//!   ray hitting the solid) means "must", and all samples farther than `g` + margin means "must not".

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use raypick::camera::{
    pick_rect, pick_rect_with, Camera, ClipSpace, PixelOrigin, PixelRect, Projection, Viewport,
};
use raypick::glam::{Affine3A, DVec3, Mat4, Quat, Vec3};
use raypick::{SceneBuilder, Spheres, TriMesh};

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

/// The reference projector: world point → continuous window (x, y) in the camera's pixel origin,
/// and clip w (> 0 in front of the camera).
struct Projector {
    m: M,
    vp: Viewport,
    flip: bool,
}

impl Projector {
    fn new(cam: &Camera) -> Self {
        let m = mul(
            &rows(cam.projection().clip_from_view()),
            &rows(cam.view_from_world()),
        );
        let flip =
            (cam.pixel_origin() == PixelOrigin::TopLeft) != (cam.clip_space() == ClipSpace::Vulkan);
        Self {
            m,
            vp: *cam.viewport(),
            flip,
        }
    }

    fn window(&self, p: DVec3) -> [f64; 2] {
        let v = [p.x, p.y, p.z, 1.0];
        let c: Vec<f64> = (0..4)
            .map(|i| (0..4).map(|k| self.m[i][k] * v[k]).sum())
            .collect();
        assert!(
            c[3] > 0.0,
            "objects used for the 2-D reference are in front of the camera"
        );
        let (xn, yn) = (c[0] / c[3], c[1] / c[3]);
        let s = if self.flip { -yn } else { yn };
        [
            self.vp.x as f64 + (xn + 1.0) * 0.5 * self.vp.width as f64,
            self.vp.y as f64 + (s + 1.0) * 0.5 * self.vp.height as f64,
        ]
    }
}

#[derive(Clone, Copy)]
struct Rect2 {
    min: [f64; 2],
    max: [f64; 2],
}

impl Rect2 {
    fn grown(self, m: f64) -> Self {
        Self {
            min: [self.min[0] - m, self.min[1] - m],
            max: [self.max[0] + m, self.max[1] + m],
        }
    }
    fn valid(&self) -> bool {
        self.min[0] < self.max[0] && self.min[1] < self.max[1]
    }
    fn contains(&self, p: [f64; 2]) -> bool {
        p[0] >= self.min[0] && p[0] <= self.max[0] && p[1] >= self.min[1] && p[1] <= self.max[1]
    }
    fn distance(&self, p: [f64; 2]) -> f64 {
        let dx = (self.min[0] - p[0]).max(0.0).max(p[0] - self.max[0]);
        let dy = (self.min[1] - p[1]).max(0.0).max(p[1] - self.max[1]);
        (dx * dx + dy * dy).sqrt()
    }
}

/// Exact 2-D overlap of a triangle and an axis-aligned rectangle (separating axes: x, y and the
/// three edge normals).
fn tri_overlaps_rect(t: [[f64; 2]; 3], r: Rect2) -> bool {
    if !r.valid() {
        return false;
    }
    let corners = [r.min, [r.max[0], r.min[1]], r.max, [r.min[0], r.max[1]]];
    for axis in 0..2 {
        let lo = t.iter().map(|p| p[axis]).fold(f64::INFINITY, f64::min);
        let hi = t.iter().map(|p| p[axis]).fold(f64::NEG_INFINITY, f64::max);
        if hi < r.min[axis] || lo > r.max[axis] {
            return false;
        }
    }
    for i in 0..3 {
        let (a, b) = (t[i], t[(i + 1) % 3]);
        let n = [-(b[1] - a[1]), b[0] - a[0]];
        let proj = |p: [f64; 2]| n[0] * p[0] + n[1] * p[1];
        let tri: Vec<f64> = t.iter().map(|&p| proj(p)).collect();
        let (tlo, thi) = (
            tri.iter().cloned().fold(f64::INFINITY, f64::min),
            tri.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        );
        let rect: Vec<f64> = corners.iter().map(|&p| proj(p)).collect();
        let (rlo, rhi) = (
            rect.iter().cloned().fold(f64::INFINITY, f64::min),
            rect.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        );
        if thi < rlo || tlo > rhi {
            return false;
        }
    }
    true
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Expect {
    Must,
    MustNot,
    Either,
}

/// Margin in pixels between "must" and "must not": f32 rounding of the vertices and matrices moves
/// projections by ~1e-4 px at these scales; 0.02 px is two orders of magnitude above that.
const MARGIN: f64 = 0.02;

/// An object of the test scene in world space: a triangle, or an ellipsoid
/// `world_from_object · (centre + r · unit sphere)`.
#[derive(Clone, Copy)]
enum Obj {
    Tri([DVec3; 3]),
    Ball {
        world_from_object: Affine3A,
        center: Vec3,
        radius: f32,
    },
    /// Fully outside the depth range: never selected.
    Hidden,
}

/// An object projected once per camera: triangle corners, or the ball's surface samples and the
/// largest projected grid cell `g`.
enum Projected {
    Tri([[f64; 2]; 3]),
    Ball { samples: Vec<[f64; 2]>, g: f64 },
    Hidden,
}

fn project_obj(obj: &Obj, proj: &Projector) -> Projected {
    match *obj {
        Obj::Hidden => Projected::Hidden,
        Obj::Tri(v) => Projected::Tri(v.map(|p| proj.window(p))),
        Obj::Ball {
            world_from_object,
            center,
            radius,
        } => {
            let (nt, np) = (48, 96);
            let mut grid = vec![[0.0f64; 2]; (nt + 1) * np];
            for i in 0..=nt {
                let theta = std::f64::consts::PI * i as f64 / nt as f64;
                for j in 0..np {
                    let phi = std::f64::consts::TAU * j as f64 / np as f64;
                    let d = DVec3::new(
                        theta.sin() * phi.cos(),
                        theta.cos(),
                        theta.sin() * phi.sin(),
                    );
                    let p_object = center.as_dvec3() + d * radius as f64;
                    let p = world_from_object
                        .transform_point3(p_object.as_vec3())
                        .as_dvec3();
                    grid[i * np + j] = proj.window(p);
                }
            }
            let dist =
                |a: [f64; 2], b: [f64; 2]| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt();
            let mut g: f64 = 0.0;
            for i in 0..nt {
                for j in 0..np {
                    let j1 = (j + 1) % np;
                    let (a, b, c, d) = (
                        grid[i * np + j],
                        grid[i * np + j1],
                        grid[(i + 1) * np + j],
                        grid[(i + 1) * np + j1],
                    );
                    g = g
                        .max(dist(a, d))
                        .max(dist(b, c))
                        .max(dist(a, b))
                        .max(dist(a, c));
                }
            }
            Projected::Ball { samples: grid, g }
        }
    }
}

fn expect(obj: &Projected, rect: Rect2, centre_ray_hits: &dyn Fn() -> bool) -> Expect {
    match obj {
        Projected::Hidden => Expect::MustNot,
        Projected::Tri(t) => {
            if tri_overlaps_rect(*t, rect.grown(-MARGIN)) {
                Expect::Must
            } else if !tri_overlaps_rect(*t, rect.grown(MARGIN)) {
                Expect::MustNot
            } else {
                Expect::Either
            }
        }
        Projected::Ball { samples, g } => {
            let shrunk = rect.grown(-MARGIN);
            if (shrunk.valid() && samples.iter().any(|&p| shrunk.contains(p))) || centre_ray_hits()
            {
                Expect::Must
            } else if samples.iter().all(|&p| rect.distance(p) > g + MARGIN) {
                Expect::MustNot
            } else {
                Expect::Either
            }
        }
    }
}

fn random_unit(rng: &mut Pcg64) -> DVec3 {
    loop {
        let v = DVec3::new(
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
        );
        if v.length_squared() > 1e-3 && v.length_squared() <= 1.0 {
            return v.normalize();
        }
    }
}

/// A point in view space at depth `z` (positive, in front), spread over 1.4× the view's width.
fn view_point(rng: &mut Pcg64, depth: f64, half_w: f64, half_h: f64) -> DVec3 {
    DVec3::new(
        rng.gen_range(-1.4..1.4) * half_w * depth,
        rng.gen_range(-1.4..1.4) * half_h * depth,
        -depth,
    )
}

#[test]
fn pick_rect_matches_the_2d_reference() {
    let mut rng = Pcg64::seed_from_u64(2024);
    let vp = Viewport {
        x: 10.0,
        y: 5.0,
        width: 320.0,
        height: 240.0,
        min_depth: 0.0,
        max_depth: 1.0,
    };
    let (near, far, fov) = (0.5f32, 30.0f32, 0.9f32);
    let (mut musts, mut must_nots) = (0, 0);
    for case in 0..12 {
        let cs = [ClipSpace::OpenGl, ClipSpace::Direct3D, ClipSpace::Vulkan][case % 3];
        let origin = [PixelOrigin::TopLeft, PixelOrigin::BottomLeft][(case / 3) % 2];
        let ortho = case >= 9;
        let proj = match (ortho, case % 2) {
            (true, _) => {
                Projection::orthographic_symmetric(10.0, vp.aspect(), near, far, cs).unwrap()
            }
            (false, 0) => Projection::perspective(fov, vp.aspect(), near, far, cs).unwrap(),
            (false, _) => {
                Projection::perspective_reverse_z(fov, vp.aspect(), near, far, cs).unwrap()
            }
        };
        let eye = Vec3::new(
            rng.gen_range(-5.0..5.0),
            rng.gen_range(-5.0..5.0),
            rng.gen_range(-5.0..5.0),
        );
        let target = eye + random_unit(&mut rng).as_vec3();
        let cam = Camera::look_at(eye, target, Vec3::Y, proj, vp)
            .unwrap()
            .with_pixel_origin(origin);
        let world_from_view = cam.view_from_world().inverse();
        let to_world = |p: DVec3| world_from_view.transform_point3(p.as_vec3()).as_dvec3();
        // Half extents of the view per unit depth (perspective) or absolute (orthographic).
        let (half_w, half_h, per_depth) = if ortho {
            (5.0 * vp.aspect() as f64, 5.0, false)
        } else {
            let t = (0.5 * fov as f64).tan();
            (t * vp.aspect() as f64, t, true)
        };
        let mut b = SceneBuilder::new();
        let mut objs = Vec::new();
        for k in 0..80 {
            // 80 % inside the depth range, 10 % beyond the far plane, 10 % behind the eye.
            let (depth, hidden): (f64, bool) = match k % 10 {
                8 => (rng.gen_range(33.0..45.0), true),
                9 => (rng.gen_range(-12.0..-3.0), true),
                _ => (rng.gen_range(1.5..25.0), false),
            };
            let c_view = if per_depth {
                view_point(&mut rng, depth.abs(), half_w, half_h)
                    * DVec3::new(1.0, 1.0, depth.signum())
            } else {
                DVec3::new(
                    rng.gen_range(-1.4..1.4) * half_w,
                    rng.gen_range(-1.4..1.4) * half_h,
                    -depth,
                )
            };
            let size = rng.gen_range(0.05..0.6) * if per_depth { depth.abs() / 10.0 } else { 1.0 };
            if k % 2 == 0 {
                let v = [0, 1, 2].map(|_| to_world(c_view + random_unit(&mut rng) * size));
                b.add_mesh(TriMesh::new(
                    v.iter().map(|p| p.as_vec3()).collect(),
                    vec![[0, 1, 2]],
                ));
                objs.push(if hidden {
                    Obj::Hidden
                } else {
                    Obj::Tri(v.map(|p| p.as_vec3().as_dvec3()))
                });
            } else {
                let c = to_world(c_view).as_vec3();
                let r = (0.5 * size) as f32;
                b.add_spheres(Spheres::new(vec![c], vec![r]));
                objs.push(if hidden {
                    Obj::Hidden
                } else {
                    Obj::Ball {
                        world_from_object: Affine3A::IDENTITY,
                        center: c,
                        radius: r,
                    }
                });
            }
        }
        let scene = b.build().unwrap();
        let projector = Projector::new(&cam);
        let projected: Vec<Projected> = objs.iter().map(|o| project_obj(o, &projector)).collect();
        let center_hits = |obj: &Obj, ray: raypick::Ray| -> bool {
            // The reference cast: one object's own little scene.
            match *obj {
                Obj::Ball {
                    world_from_object,
                    center,
                    radius,
                } => {
                    let mut sb = SceneBuilder::new();
                    sb.add_spheres(Spheres::new(vec![center], vec![radius]));
                    let mut top = SceneBuilder::new();
                    top.add_instance(Arc::new(sb.build().unwrap()), world_from_object);
                    top.build().unwrap().intersect(&ray).is_some()
                }
                _ => false,
            }
        };
        for _ in 0..25 {
            let x0 = rng.gen_range(0.0..350.0f32);
            let y0 = rng.gen_range(-10.0..255.0f32);
            let (w, h) = (rng.gen_range(1.0..150.0f32), rng.gen_range(1.0..120.0f32));
            let rect = PixelRect::new(x0 + w, y0, x0, y0 + h); // corners in any order
            let clamped = Rect2 {
                min: [(x0 as f64).max(vp.x as f64), (y0 as f64).max(vp.y as f64)],
                max: [
                    ((x0 + w) as f64).min((vp.x + vp.width) as f64),
                    ((y0 + h) as f64).min((vp.y + vp.height) as f64),
                ],
            };
            let selected = pick_rect(&scene, &cam, rect);
            let centre_ray = cam.pixel_ray(x0 + 0.5 * w, y0 + 0.5 * h);
            let centre_in_viewport =
                clamped.valid() && clamped.contains([(x0 + 0.5 * w) as f64, (y0 + 0.5 * h) as f64]);
            for (id, obj) in objs.iter().enumerate() {
                let e = if clamped.valid() {
                    expect(&projected[id], clamped, &|| {
                        centre_in_viewport && center_hits(obj, centre_ray)
                    })
                } else {
                    Expect::MustNot
                };
                let got = selected.contains(&(id as u32, None));
                match e {
                    Expect::Must => {
                        musts += 1;
                        assert!(got, "case {case}: object {id} must be selected by {rect:?}");
                    }
                    Expect::MustNot => {
                        must_nots += 1;
                        assert!(
                            !got,
                            "case {case}: object {id} must not be selected by {rect:?}"
                        );
                    }
                    Expect::Either => {}
                }
            }
            assert!(selected.iter().all(|&(_, inst)| inst.is_none()));
            assert!(selected.windows(2).all(|w| w[0].0 < w[1].0), "scene order");
        }
    }
    assert!(musts > 300 && must_nots > 10000, "{musts} {must_nots}");
}

#[test]
fn instances_with_non_uniform_scale_select_ellipsoids_exactly() {
    // One sub-scene (a triangle mesh and a ball) placed twice; the second placement squashes the
    // ball into an ellipsoid, which only an object-space test gets right.
    let mut sb = SceneBuilder::new();
    let mesh = sb.add_mesh(TriMesh::new(
        vec![
            Vec3::new(-0.5, 0.0, 0.0),
            Vec3::new(0.5, 0.0, 0.0),
            Vec3::new(0.0, 0.5, 0.0),
        ],
        vec![[0, 1, 2]],
    ));
    let ball_id = sb.add_spheres(Spheres::new(vec![Vec3::new(0.0, -1.0, 0.0)], vec![0.4]));
    let sub = Arc::new(sb.build().unwrap());
    let placements = [
        Affine3A::from_translation(Vec3::new(-2.0, 0.0, -8.0)),
        Affine3A::from_scale_rotation_translation(
            Vec3::new(3.0, 0.3, 1.0),
            Quat::from_rotation_z(0.4),
            Vec3::new(2.0, 0.5, -10.0),
        ),
    ];
    let mut top = SceneBuilder::new();
    let ids: Vec<u32> = placements
        .iter()
        .map(|&p| top.add_instance(sub.clone(), p))
        .collect();
    let scene = top.build().unwrap();
    let vp = Viewport::new(400.0, 300.0);
    let mut rng = Pcg64::seed_from_u64(5);
    let (mut musts, mut must_nots) = (0, 0);
    for cs in [ClipSpace::OpenGl, ClipSpace::Vulkan] {
        let proj = Projection::perspective(1.0, vp.aspect(), 0.1, 100.0, cs).unwrap();
        let cam = Camera::look_at(
            Vec3::new(0.0, 0.0, 2.0),
            Vec3::new(0.0, 0.0, -9.0),
            Vec3::Y,
            proj,
            vp,
        )
        .unwrap();
        let projector = Projector::new(&cam);
        let projected: Vec<Vec<(u32, Projected)>> = placements
            .iter()
            .map(|&place| {
                let tri = [
                    Vec3::new(-0.5, 0.0, 0.0),
                    Vec3::new(0.5, 0.0, 0.0),
                    Vec3::new(0.0, 0.5, 0.0),
                ]
                .map(|p| place.transform_point3(p).as_dvec3());
                let ball = Obj::Ball {
                    world_from_object: place,
                    center: Vec3::new(0.0, -1.0, 0.0),
                    radius: 0.4,
                };
                vec![
                    (mesh, project_obj(&Obj::Tri(tri), &projector)),
                    (ball_id, project_obj(&ball, &projector)),
                ]
            })
            .collect();
        for _ in 0..300 {
            let (x0, y0) = (rng.gen_range(0.0..400.0f32), rng.gen_range(0.0..300.0f32));
            let (w, h) = (rng.gen_range(1.0..60.0f32), rng.gen_range(1.0..60.0f32));
            let rect = PixelRect::new(x0, y0, x0 + w, y0 + h);
            let clamped = Rect2 {
                min: [x0 as f64, y0 as f64],
                max: [((x0 + w) as f64).min(400.0), ((y0 + h) as f64).min(300.0)],
            };
            let selected = pick_rect(&scene, &cam, rect);
            let centre_ray = cam.pixel_ray(
                0.5 * (x0 as f64 + clamped.max[0]) as f32,
                0.5 * (y0 as f64 + clamped.max[1]) as f32,
            );
            for (inst, objs) in ids.iter().zip(&projected) {
                for (geom, obj) in objs {
                    let geom = *geom;
                    let hits_centre = || {
                        scene
                            .intersect(&centre_ray)
                            .is_some_and(|h| h.instance == Some(*inst) && h.geom == geom)
                    };
                    let e = expect(obj, clamped, &hits_centre);
                    let got = selected.contains(&(geom, Some(*inst)));
                    match e {
                        Expect::Must => {
                            musts += 1;
                            assert!(got, "{cs:?}: ({geom}, {inst}) must be selected by {rect:?}");
                        }
                        Expect::MustNot => {
                            must_nots += 1;
                            assert!(
                                !got,
                                "{cs:?}: ({geom}, {inst}) must not be selected by {rect:?}"
                            );
                        }
                        Expect::Either => {}
                    }
                }
            }
        }
        // Masks: an instance whose mask does not match is never selected.
        let all = pick_rect_with(
            &scene,
            &cam,
            PixelRect::new(0.0, 0.0, 400.0, 300.0),
            u32::MAX,
        );
        assert_eq!(all.len(), 4, "{all:?}");
    }
    assert!(musts > 50 && must_nots > 1000, "{musts} {must_nots}");
}

#[test]
fn empty_and_outside_rectangles_select_nothing() {
    let mut b = SceneBuilder::new();
    b.add_spheres(Spheres::new(vec![Vec3::new(0.0, 0.0, -5.0)], vec![1.0]));
    let scene = b.build().unwrap();
    let vp = Viewport::new(100.0, 100.0);
    let proj = Projection::perspective(1.0, 1.0, 0.1, 100.0, ClipSpace::OpenGl).unwrap();
    let cam = Camera::new(Mat4::IDENTITY, proj, vp).unwrap();
    assert_eq!(
        pick_rect(&scene, &cam, PixelRect::new(0.0, 0.0, 100.0, 100.0)),
        vec![(0, None)]
    );
    assert!(pick_rect(&scene, &cam, PixelRect::new(50.0, 50.0, 50.0, 50.0)).is_empty());
    assert!(pick_rect(&scene, &cam, PixelRect::new(120.0, 0.0, 200.0, 100.0)).is_empty());
    assert!(pick_rect(&scene, &cam, PixelRect::new(f32::NAN, 0.0, 20.0, 100.0)).is_empty());
    assert!(pick_rect_with(&scene, &cam, PixelRect::new(0.0, 0.0, 100.0, 100.0), 0).is_empty());
}

#[test]
fn spheres_off_a_marquee_corner_are_judged_by_true_distance() {
    // Orthographic view: the marquee's sub-frustum is a box whose corner edge runs along the corner
    // pixel's ray. A ball centred at distance d from that edge, diagonally outwards, is within d/√2
    // of both side planes: a per-plane test accepts any radius > 0.71·d, the exact test only > d.
    let vp = Viewport::new(200.0, 100.0);
    for cs in [ClipSpace::OpenGl, ClipSpace::Direct3D, ClipSpace::Vulkan] {
        for origin in [PixelOrigin::TopLeft, PixelOrigin::BottomLeft] {
            let proj = Projection::orthographic_symmetric(4.0, vp.aspect(), 0.5, 50.0, cs).unwrap();
            let eye = Vec3::new(1.0, 2.0, 10.0);
            let cam = Camera::look_at(eye, Vec3::new(0.5, 1.0, 0.0), Vec3::Y, proj, vp)
                .unwrap()
                .with_pixel_origin(origin);
            let rect = PixelRect::new(60.0, 30.0, 120.0, 70.0);
            // The corner (120, 70) and its outward diagonal, measured on the screen.
            let corner = cam.pixel_ray(120.0, 70.0);
            let p = corner.at(10.0);
            let right = (cam.pixel_ray(121.0, 70.0).origin - corner.origin).normalize();
            let down = (cam.pixel_ray(120.0, 71.0).origin - corner.origin).normalize();
            let out = (right + down).normalize();
            let d = 0.2;
            let c = p + out * d;
            for (radius, selected) in [(0.9 * d, false), (0.98 * d, false), (1.02 * d, true)] {
                let mut b = SceneBuilder::new();
                b.add_spheres(Spheres::new(vec![c], vec![radius]));
                let scene = b.build().unwrap();
                assert_eq!(
                    !pick_rect(&scene, &cam, rect).is_empty(),
                    selected,
                    "{cs:?} {origin:?} r = {radius}"
                );
            }
        }
    }
}
