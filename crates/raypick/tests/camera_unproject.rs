//! `unproject` / `project` against the published formulas, evaluated independently in f64:
//! gluUnProject (the OpenGL man page / Mesa's `gluUnProject`) and D3DXVec3Unproject (the D3DX 9
//! documentation, row-vector matrices), for random cameras built from glam's `perspective_rh_gl`,
//! `perspective_rh`, `orthographic_rh_gl`, `orthographic_rh` and `perspective_infinite_reverse_rh`,
//! over scene magnitudes 1e-6..1e6; and project ∘ unproject round trips.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use raypick::camera::{
    d3dx_unproject, glu_project, glu_unproject, project, unproject, Camera, ClipSpace, DepthOrder,
    PixelOrigin, Projection, Viewport,
};
use raypick::glam::{Mat4, Quat, Vec3};

type M = [[f64; 4]; 4]; // m[row][col]

fn from_glam(m: Mat4) -> M {
    let c = m.to_cols_array_2d(); // c[col][row]
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

fn transpose(a: &M) -> M {
    let mut r = [[0.0; 4]; 4];
    for i in 0..4 {
        for j in 0..4 {
            r[i][j] = a[j][i];
        }
    }
    r
}

/// Gauss–Jordan elimination with partial pivoting (as Mesa's `__gluInvertMatrixd` fallback).
fn invert(a: &M) -> Option<M> {
    let mut m = *a;
    let mut inv = [[0.0; 4]; 4];
    for (i, row) in inv.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    for col in 0..4 {
        let piv = (col..4).max_by(|&x, &y| m[x][col].abs().total_cmp(&m[y][col].abs()))?;
        if m[piv][col] == 0.0 {
            return None;
        }
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
    Some(inv)
}

/// gluUnProject, per its man page: `final = proj · model`, NDC `2(win − vp)/size − 1`,
/// `z = 2·winz − 1`, `obj = final⁻¹ · (x, y, z, 1)`, divided by w.
fn glu_unproject_ref(win: [f64; 3], model: &M, proj: &M, vp: [f64; 4]) -> Option<[f64; 3]> {
    let inv = invert(&mul(proj, model))?;
    let v = [
        (win[0] - vp[0]) / vp[2] * 2.0 - 1.0,
        (win[1] - vp[1]) / vp[3] * 2.0 - 1.0,
        2.0 * win[2] - 1.0,
        1.0,
    ];
    let o: Vec<f64> = (0..4)
        .map(|i| (0..4).map(|k| inv[i][k] * v[k]).sum())
        .collect();
    (o[3] != 0.0).then(|| [o[0] / o[3], o[1] / o[3], o[2] / o[3]])
}

/// D3DXVec3Unproject, per its documentation: row vector
/// `((x − X)/W·2 − 1, −((y − Y)/H·2 − 1), (z − MinZ)/(MaxZ − MinZ), 1) · (World · View · Proj)⁻¹`,
/// divided by w; the matrices are D3D's row-vector ones (transposes of glam's).
#[allow(clippy::too_many_arguments)]
fn d3dx_unproject_ref(
    v: [f64; 3],
    vp: [f64; 6],
    proj_row: &M,
    view_row: &M,
    world_row: &M,
) -> Option<[f64; 3]> {
    let inv = invert(&mul(&mul(world_row, view_row), proj_row))?;
    let r = [
        (v[0] - vp[0]) / vp[2] * 2.0 - 1.0,
        -((v[1] - vp[1]) / vp[3] * 2.0 - 1.0),
        (v[2] - vp[4]) / (vp[5] - vp[4]),
        1.0,
    ];
    let o: Vec<f64> = (0..4)
        .map(|j| (0..4).map(|k| r[k] * inv[k][j]).sum())
        .collect();
    (o[3] != 0.0).then(|| [o[0] / o[3], o[1] / o[3], o[2] / o[3]])
}

struct Setup {
    world: Mat4,
    view: Mat4,
    proj: Mat4,
    kind: usize,
    scale: f32,
}

const KINDS: [&str; 5] = [
    "perspective_rh_gl",
    "perspective_rh",
    "orthographic_rh_gl",
    "orthographic_rh",
    "perspective_infinite_reverse_rh",
];

fn random_setup(rng: &mut Pcg64, scale: f32, kind: usize) -> Setup {
    let v = |rng: &mut Pcg64| {
        Vec3::new(
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
        )
    };
    let eye = v(rng) * 4.0 * scale;
    let target = v(rng) * scale;
    let view = Mat4::look_at_rh(eye, target, Vec3::Y);
    let axis = v(rng).normalize_or(Vec3::X);
    let world = Mat4::from_scale_rotation_translation(
        Vec3::new(
            rng.gen_range(0.5..2.0),
            rng.gen_range(0.5..2.0),
            rng.gen_range(0.5..2.0),
        ),
        Quat::from_axis_angle(axis, rng.gen_range(0.0..6.0)),
        v(rng) * scale,
    );
    let fov = rng.gen_range(0.3..2.0);
    let aspect = rng.gen_range(0.5..2.5);
    let near = rng.gen_range(0.01..1.0) * scale;
    let far = near * rng.gen_range(10.0..1000.0);
    let h = rng.gen_range(0.5..3.0) * scale;
    let proj = match kind {
        0 => Mat4::perspective_rh_gl(fov, aspect, near, far),
        1 => Mat4::perspective_rh(fov, aspect, near, far),
        2 => Mat4::orthographic_rh_gl(-h * aspect, h * aspect, -h, h, near, far),
        3 => Mat4::orthographic_rh(-h * aspect, h * aspect, -h, h, near, far),
        _ => Mat4::perspective_infinite_reverse_rh(fov, aspect, near),
    };
    Setup {
        world,
        view,
        proj,
        kind,
        scale,
    }
}

fn close(a: Vec3, b: [f64; 3], rel: f64) -> bool {
    let d =
        ((a.x as f64 - b[0]).powi(2) + (a.y as f64 - b[1]).powi(2) + (a.z as f64 - b[2]).powi(2))
            .sqrt();
    let m = (b[0] * b[0] + b[1] * b[1] + b[2] * b[2]).sqrt();
    d <= rel * m + 1e-30
}

/// f32 rounding of the result (6e-8 relative) dominates; 1e-6 leaves room for the different f64
/// inversion algorithms on matrices whose condition number reaches ~1e6 (far / near = 1000, scales).
const REL: f64 = 1e-6;

#[test]
fn unproject_equals_glu_and_d3dx_references_over_magnitudes() {
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases: 48,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    runner
        .run(
            &(-6i32..=6, 0usize..KINDS.len(), any::<u64>()),
            |(exp, kind, seed)| {
                let scale = 10f32.powi(exp);
                let mut rng = Pcg64::seed_from_u64(seed);
                let s = random_setup(&mut rng, scale, kind);
                let model_view = s.view * s.world;
                let vp_i = [
                    rng.gen_range(0..50),
                    rng.gen_range(0..50),
                    rng.gen_range(100..1200),
                    rng.gen_range(100..1200),
                ];
                let vp_gl = Viewport {
                    x: vp_i[0] as f32,
                    y: vp_i[1] as f32,
                    width: vp_i[2] as f32,
                    height: vp_i[3] as f32,
                    min_depth: 0.0,
                    max_depth: 1.0,
                };
                let vp_d3d = Viewport {
                    x: rng.gen_range(0.0..50.0),
                    y: rng.gen_range(0.0..50.0),
                    width: rng.gen_range(100.0..1200.0),
                    height: rng.gen_range(100.0..1200.0),
                    min_depth: rng.gen_range(0.0..0.3),
                    max_depth: rng.gen_range(0.7..1.0),
                };
                for _ in 0..20 {
                    // Depths away from the plane at infinity of the infinite reverse-Z projection.
                    let z01: f32 = rng.gen_range(0.02..1.0);
                    let win = Vec3::new(
                        vp_gl.x + rng.gen_range(0.0..vp_gl.width),
                        vp_gl.y + rng.gen_range(0.0..vp_gl.height),
                        z01,
                    );
                    let ours = glu_unproject(win, model_view, s.proj, vp_i).unwrap();
                    let reference = glu_unproject_ref(
                        [win.x as f64, win.y as f64, win.z as f64],
                        &from_glam(model_view),
                        &from_glam(s.proj),
                        [
                            vp_i[0] as f64,
                            vp_i[1] as f64,
                            vp_i[2] as f64,
                            vp_i[3] as f64,
                        ],
                    )
                    .unwrap();
                    prop_assert!(
                        close(ours, reference, REL),
                        "glu {} scale {}: {} vs {:?}",
                        KINDS[s.kind],
                        s.scale,
                        ours,
                        reference
                    );
                    // The general entry point with the caller's f32 product: the same up to that
                    // product's rounding (amplified by the matrix's condition, hence 1e-4).
                    let general = unproject(
                        win,
                        s.proj * model_view,
                        &vp_gl,
                        ClipSpace::OpenGl,
                        PixelOrigin::BottomLeft,
                    )
                    .unwrap();
                    prop_assert!(
                        close(general, reference, 1e-4),
                        "{} vs {:?}",
                        general,
                        reference
                    );

                    let win = Vec3::new(
                        vp_d3d.x + rng.gen_range(0.0..vp_d3d.width),
                        vp_d3d.y + rng.gen_range(0.0..vp_d3d.height),
                        vp_d3d.min_depth + z01 * (vp_d3d.max_depth - vp_d3d.min_depth),
                    );
                    let ours = d3dx_unproject(win, &vp_d3d, s.proj, s.view, s.world).unwrap();
                    let reference = d3dx_unproject_ref(
                        [win.x as f64, win.y as f64, win.z as f64],
                        [
                            vp_d3d.x,
                            vp_d3d.y,
                            vp_d3d.width,
                            vp_d3d.height,
                            vp_d3d.min_depth,
                            vp_d3d.max_depth,
                        ]
                        .map(|v| v as f64),
                        &transpose(&from_glam(s.proj)),
                        &transpose(&from_glam(s.view)),
                        &transpose(&from_glam(s.world)),
                    )
                    .unwrap();
                    prop_assert!(
                        close(ours, reference, REL),
                        "d3dx {} scale {}: {} vs {:?}",
                        KINDS[s.kind],
                        s.scale,
                        ours,
                        reference
                    );
                    let general = unproject(
                        win,
                        s.proj * s.view * s.world,
                        &vp_d3d,
                        ClipSpace::Direct3D,
                        PixelOrigin::TopLeft,
                    )
                    .unwrap();
                    prop_assert!(
                        close(general, reference, 1e-4),
                        "{} vs {:?}",
                        general,
                        reference
                    );
                }
                Ok(())
            },
        )
        .unwrap();
}

#[test]
fn project_inverts_unproject_in_every_convention() {
    let mut rng = Pcg64::seed_from_u64(11);
    for (kind, kind_name) in KINDS.iter().enumerate() {
        for exp in [-6, -2, 0, 3, 6] {
            let s = random_setup(&mut rng, 10f32.powi(exp), kind);
            let clip_from_world = s.proj * s.view;
            let vp = Viewport {
                x: 3.0,
                y: 7.0,
                width: 640.0,
                height: 360.0,
                min_depth: 0.1,
                max_depth: 0.9,
            };
            for cs in [ClipSpace::OpenGl, ClipSpace::Direct3D, ClipSpace::Vulkan] {
                for origin in [PixelOrigin::TopLeft, PixelOrigin::BottomLeft] {
                    for _ in 0..20 {
                        let win = Vec3::new(
                            rng.gen_range(3.0..643.0),
                            rng.gen_range(7.0..367.0),
                            rng.gen_range(0.12..0.9),
                        );
                        let p = unproject(win, clip_from_world, &vp, cs, origin).unwrap();
                        let back = project(p, clip_from_world, &vp, cs, origin).unwrap();
                        // p is rounded to f32: allow the window movement that moving p by two ulps
                        // along each axis causes, plus 1e-4 px / 1e-6 depth for the arithmetic.
                        let ulp2 = 2.0 * f32::EPSILON * p.abs().max_element();
                        let slack = [Vec3::X, Vec3::Y, Vec3::Z]
                            .map(|e| {
                                (project(p + e * ulp2, clip_from_world, &vp, cs, origin).unwrap()
                                    - back)
                                    .abs()
                            })
                            .into_iter()
                            .fold(Vec3::ZERO, |a, b| a + b);
                        let err = (back - win).abs();
                        assert!(
                            err.x <= slack.x + 1e-4
                                && err.y <= slack.y + 1e-4
                                && err.z <= slack.z + 1e-6
                                && slack.x < 1.0
                                && slack.y < 1.0,
                            "{} {cs:?} {origin:?} scale 1e{exp}: {win} -> {p} -> {back}",
                            kind_name
                        );
                    }
                }
            }
            // glu_project is the inverse of glu_unproject too (slack as above).
            let w = Vec3::new(100.5, 20.5, 0.75); // NDC z = 0.5: finite for every kind
            let vp_i = [0, 0, 640, 480];
            let p = glu_unproject(w, s.view, s.proj, vp_i).unwrap();
            let back = glu_project(p, s.view, s.proj, vp_i).unwrap();
            let ulp2 = 2.0 * f32::EPSILON * p.abs().max_element();
            let slack: f32 = [Vec3::X, Vec3::Y, Vec3::Z]
                .map(|e| {
                    (glu_project(p + e * ulp2, s.view, s.proj, vp_i).unwrap() - back)
                        .abs()
                        .max_element()
                })
                .iter()
                .sum();
            assert!(
                (back - w).abs().max_element() <= slack + 1e-4 && slack < 1.0,
                "{w} {back} {slack}"
            );
        }
    }
}

#[test]
fn the_two_pixel_origins_differ_by_the_classic_realy() {
    // The same physical pixel, named top-left (j) or bottom-left (height − j − 1), unprojects to
    // the same point.
    let vp = Viewport::new(300.0, 200.0);
    let proj = Projection::perspective(0.9, vp.aspect(), 0.1, 50.0, ClipSpace::OpenGl).unwrap();
    let cam = Camera::look_at(Vec3::new(1.0, 2.0, 3.0), Vec3::ZERO, Vec3::Y, proj, vp).unwrap();
    let cam_bl = cam.with_pixel_origin(PixelOrigin::BottomLeft);
    for (i, j) in [(0u32, 0u32), (17, 123), (299, 199)] {
        let realy = 200 - j - 1;
        assert_eq!(
            cam.pixel_center_ray(i, j),
            cam_bl.pixel_center_ray(i, realy)
        );
        let a = cam
            .unproject(Vec3::new(i as f32 + 0.5, j as f32 + 0.5, 0.3))
            .unwrap();
        let b = cam_bl
            .unproject(Vec3::new(i as f32 + 0.5, realy as f32 + 0.5, 0.3))
            .unwrap();
        assert_eq!(a, b);
    }
}

#[test]
fn raw_matrices_match_the_named_constructors() {
    let vp = Viewport::new(640.0, 480.0);
    let (fov, a, n) = (0.8, vp.aspect(), 0.05);
    let named = Projection::perspective_infinite_reverse_z(fov, a, n, ClipSpace::WGPU).unwrap();
    let raw = Projection::from_matrix(
        Mat4::perspective_infinite_reverse_rh(fov, a, n),
        ClipSpace::Direct3D,
        DepthOrder::Reversed,
    )
    .unwrap();
    let eye = Vec3::new(0.0, 1.0, 5.0);
    let c1 = Camera::look_at(eye, Vec3::ZERO, Vec3::Y, named, vp).unwrap();
    let c2 = Camera::new(Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y), raw, vp).unwrap();
    for (x, y) in [(0.0, 0.0), (320.0, 240.0), (639.5, 1.25)] {
        let (r1, r2) = (c1.pixel_ray(x, y), c2.pixel_ray(x, y));
        assert_eq!(r1, r2);
        assert_eq!(r1.t_max, f32::INFINITY);
    }
}
