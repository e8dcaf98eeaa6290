//! Point queries against references: closest points and distances against an `f64` brute force
//! over every triangle on the shared models (bunny, teapot) and on an instanced scene with a
//! mirroring non-uniform scale, at magnitudes 1e-6..1e6, with points near vertices, near edges,
//! in the box and far away; the tree walk against the engine's own brute force (same answers,
//! ties included); inside/outside by parity against the winding number on closed meshes; the
//! hierarchical winding number against the exact sum; bad input.

mod common;

use std::sync::Arc;

use common::{read_obj, tri_distance};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use raypick::glam::{Affine3A, DVec3, Quat, Vec3};
use raypick::scene::shapes::{cuboid, icosphere, torus};
use raypick::{ClosestPoint, InsideMethod, Scene, SceneBuilder, Spheres, TriMesh};

/// World triangles in `f64`: `(geom or instance, prim, vertices)`.
type WorldTris = Vec<((u32, Option<u32>), u32, [DVec3; 3])>;

fn world_tris(mesh: &TriMesh, geom: u32, instance: Option<u32>, m: Option<Affine3A>) -> WorldTris {
    let v = mesh.vertices();
    mesh.indices()
        .iter()
        .enumerate()
        .filter_map(|(prim, t)| {
            let w = t.map(|i| {
                let p = v[i as usize];
                match m {
                    // The transform in f64 from the f32 matrix: the reference world vertex.
                    Some(m) => {
                        let m = raypick::glam::DAffine3::from_cols_array(
                            &m.to_cols_array().map(f64::from),
                        );
                        m.transform_point3(p.as_dvec3())
                    }
                    None => p.as_dvec3(),
                }
            });
            // Zero-area triangles are no surface (as for rays).
            let zero = (w[1] - w[0]).cross(w[2] - w[0]).length_squared() == 0.0
                && mesh
                    .triangle(prim as u32)
                    .is_some_and(|[a, b, c]| (b - a).cross(c - a) == Vec3::ZERO);
            (!zero).then_some(((geom, instance), prim as u32, w))
        })
        .collect()
}

/// Checks the scene's closest point of `p` against the `f64` brute force over `tris`: the distance
/// within `tol`, and the reported triangle one of the nearest (a tie is recognised when its `f64`
/// distance is within `tol` of the minimum).
fn check_closest(scene: &Scene, tris: &WorldTris, p: Vec3, tol: f64) {
    let pd = p.as_dvec3();
    let best = tris
        .iter()
        .map(|(_, _, [a, b, c])| tri_distance(pd, *a, *b, *c))
        .fold(f64::INFINITY, f64::min);
    let got: ClosestPoint = scene.closest_point(p).expect("a closest point");
    assert!(
        (f64::from(got.distance) - best).abs() <= tol,
        "p {p}: distance {} vs reference {best} (tol {tol})",
        got.distance
    );
    // The point lies at the reported distance, on the reported triangle.
    assert!((f64::from((got.point - p).length()) - f64::from(got.distance)).abs() <= tol);
    let (_, _, [a, b, c]) = tris
        .iter()
        .find(|((g, i), prim, _)| *g == got.geom && *i == got.instance && *prim == got.prim)
        .expect("the reported triangle exists");
    let mine = tri_distance(pd, *a, *b, *c);
    assert!(
        (mine - best).abs() <= tol,
        "p {p}: triangle {} at {mine}, nearest at {best}: not a tie",
        got.prim
    );
    // Its barycentrics rebuild the point.
    let rebuilt = *a + f64::from(got.u) * (*b - *a) + f64::from(got.v) * (*c - *a);
    assert!(
        (rebuilt - got.point.as_dvec3()).length() <= tol,
        "p {p}: barycentrics"
    );
    // The tree walk answers exactly as the brute force through the same kernel.
    assert_eq!(
        Some(got),
        scene.closest_point_brute_force(p, f32::INFINITY),
        "p {p}"
    );
}

/// Query points for a mesh: uniform in its box grown by 10 %, near vertices and edge midpoints
/// (offsets of 1e-4 of the box), and far away.
fn query_points(mesh: &TriMesh, n: usize, rng: &mut Pcg64) -> Vec<Vec3> {
    let b = mesh.bounds();
    let (c, h) = (b.center(), (b.max - b.min) * 0.55);
    let size = (b.max - b.min).max_element();
    let jitter = |rng: &mut Pcg64, s: f32| {
        Vec3::new(
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
        ) * s
    };
    let mut out = Vec::new();
    for i in 0..n {
        let t = mesh.indices()[rng.gen_range(0..mesh.indices().len())];
        let [a, bb, _] = t.map(|k| mesh.vertices()[k as usize]);
        out.push(match i % 4 {
            0 => c + jitter(rng, 1.0) * h,
            1 => a + jitter(rng, size * 1e-4),
            2 => (a + bb) * 0.5 + jitter(rng, size * 1e-4),
            _ => c + jitter(rng, 1.0).normalize_or(Vec3::X) * size * 1e3,
        });
    }
    out
}

fn scene_of(mesh: TriMesh) -> Scene {
    let mut b = SceneBuilder::new();
    b.add_mesh(mesh);
    b.build().unwrap()
}

/// The mesh scaled by `s` and moved by `shift`.
fn placed(mesh: &TriMesh, s: f32, shift: Vec3) -> TriMesh {
    TriMesh::new(
        mesh.vertices().iter().map(|&v| v * s + shift).collect(),
        mesh.indices().to_vec(),
    )
}

/// The tolerance of a distance: a few ulps of the coordinates' magnitude (the closest-point
/// kernel's bound, see `geom::closest`), plus the same of the distance itself.
fn tol_of(mesh: &TriMesh, p: Vec3) -> f64 {
    let b = mesh.bounds();
    let magnitude = b
        .min
        .abs()
        .max(b.max.abs())
        .max_element()
        .max(p.abs().max_element());
    f64::from(magnitude) * 4e-6
}

#[test]
fn bunny_and_teapot_match_the_f64_brute_force_at_every_magnitude() {
    let mut rng = Pcg64::seed_from_u64(34);
    for model in ["obj/stanford-bunny.obj", "obj/teapot.obj"] {
        let base = read_obj(model);
        for (s, shift) in [
            (1.0, Vec3::ZERO),
            (1e-6, Vec3::splat(3e-6)),
            (1e-3, Vec3::ZERO),
            (1e3, Vec3::new(-2e3, 0.0, 5e2)),
            (1e6, Vec3::splat(1e6)),
        ] {
            let mesh = placed(&base, s, shift);
            let scene = scene_of(mesh.clone());
            let tris = world_tris(&mesh, 0, None, None);
            let n = if model.contains("bunny") { 40 } else { 120 };
            for p in query_points(&mesh, n, &mut rng) {
                check_closest(&scene, &tris, p, tol_of(&mesh, p));
            }
        }
    }
}

/// Two instances of the teapot, one mirrored with a non-uniform scale, plus a mesh and spheres in
/// the top level: world distances, against the pre-transformed copies in `f64`.
#[test]
fn instances_with_mirroring_non_uniform_scale_answer_world_distances() {
    let teapot = read_obj("obj/teapot.obj");
    let inner = Arc::new(scene_of(teapot.clone()));
    let mirror = Affine3A::from_scale_rotation_translation(
        Vec3::new(-2.0, 0.5, 1.25),
        Quat::from_rotation_y(0.7),
        Vec3::new(8.0, 0.0, 0.0),
    );
    let plain = Affine3A::from_translation(Vec3::new(0.0, 0.0, -6.0));
    let ground = placed(
        &cuboid(Vec3::new(10.0, 0.1, 10.0)),
        1.0,
        Vec3::new(0.0, -3.0, 0.0),
    );
    let mut b = SceneBuilder::new();
    let g_ground = b.add_mesh(ground.clone());
    let i_mirror = b.add_instance(inner.clone(), mirror);
    let i_plain = b.add_instance(inner, plain);
    b.add_spheres(Spheres::new(vec![Vec3::new(-8.0, 0.0, 0.0)], vec![1.5]));
    let scene = b.build().unwrap();
    let mut tris = world_tris(&ground, g_ground, None, None);
    tris.extend(world_tris(&teapot, 0, Some(i_mirror), Some(mirror)));
    tris.extend(world_tris(&teapot, 0, Some(i_plain), Some(plain)));
    let mut rng = Pcg64::seed_from_u64(35);
    let bounds = scene.bounds();
    for _ in 0..300 {
        let p = Vec3::new(
            rng.gen_range(bounds.min.x..bounds.max.x),
            rng.gen_range(bounds.min.y..bounds.max.y),
            rng.gen_range(bounds.min.z..bounds.max.z),
        );
        // Skip points nearer the sphere than any triangle: the reference holds triangles only.
        let c = scene.closest_point(p).unwrap();
        if c.geom == 3 {
            let d = (p - Vec3::new(-8.0, 0.0, 0.0)).length() - 1.5;
            assert!((c.distance - d.abs()).abs() <= 1e-5 * (1.0 + d.abs()));
            assert_eq!(scene.closest_point_brute_force(p, f32::INFINITY), Some(c));
            continue;
        }
        check_closest(&scene, &tris, p, 2e-5);
    }
}

#[test]
fn equidistant_triangles_tie_to_the_smallest_id_and_radius_limits() {
    // Two coincident copies of a quad: every point is equidistant from both; the smaller geometry
    // id wins, whatever the tree.
    let quad = TriMesh::new(
        vec![
            Vec3::new(-1.0, -1.0, 0.0),
            Vec3::new(1.0, -1.0, 0.0),
            Vec3::new(1.0, 1.0, 0.0),
            Vec3::new(-1.0, 1.0, 0.0),
        ],
        vec![[0, 1, 2], [0, 2, 3]],
    );
    let mut b = SceneBuilder::new();
    b.add_mesh(quad.clone());
    b.add_mesh(quad);
    let scene = b.build().unwrap();
    // On the shared diagonal: both triangles of both copies are at distance 1.
    let c = scene.closest_point(Vec3::new(0.3, 0.3, 1.0)).unwrap();
    assert_eq!((c.geom, c.prim, c.distance), (0, 0, 1.0));
    assert!(scene
        .closest_point_within(Vec3::new(0.3, 0.3, 1.0), 0.5)
        .is_none());
    assert_eq!(
        scene.closest_point_within(Vec3::new(0.3, 0.3, 1.0), 1.0),
        Some(c)
    );
}

#[test]
fn parity_and_winding_number_agree_on_closed_meshes() {
    let mut rng = Pcg64::seed_from_u64(36);
    let meshes = [
        icosphere(3, Vec3::new(0.2, -0.1, 0.3), 1.0),
        cuboid(Vec3::new(1.0, 0.5, 2.0)),
        torus(1.0, 0.35, 48, 24),
    ];
    for mesh in meshes {
        let scene = scene_of(mesh);
        let b = scene.bounds();
        let (c, h) = (b.center(), (b.max - b.min) * 0.55);
        let mut inside = 0;
        for _ in 0..3000 {
            let p = c + Vec3::new(
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
            ) * h;
            let parity = scene.contains(p, InsideMethod::Parity);
            let w = scene.winding_number(p);
            let exact = scene.winding_number_exact(p);
            // Away from the surface the exact winding number is 0 or 1 and the hierarchy is close.
            if scene.distance(p) > 1e-3 {
                assert!(
                    (exact - if parity { 1.0 } else { 0.0 }).abs() < 1e-3,
                    "p {p}: {exact}"
                );
                assert_eq!(
                    scene.contains(p, InsideMethod::WindingNumber),
                    parity,
                    "p {p}: {w}"
                );
            }
            assert!((w - exact).abs() < 0.02, "p {p}: {w} vs {exact}");
            let sd = scene.signed_distance(p, InsideMethod::Parity);
            assert_eq!(
                sd,
                if parity {
                    -scene.distance(p)
                } else {
                    scene.distance(p)
                }
            );
            inside += usize::from(parity);
        }
        assert!(inside > 300, "the sample reaches inside ({inside})");
    }
}

/// Instanced closed meshes, mirrored and scaled: inside by parity and by winding number agree with
/// the object-space answer.
#[test]
fn inside_through_mirroring_instances() {
    let inner = Arc::new(scene_of(icosphere(3, Vec3::ZERO, 1.0)));
    let mirror = Affine3A::from_scale_rotation_translation(
        Vec3::new(-2.0, 0.5, 1.0),
        Quat::IDENTITY,
        Vec3::X * 4.0,
    );
    let mut b = SceneBuilder::new();
    b.add_instance(inner.clone(), mirror);
    let scene = b.build().unwrap();
    for (p, want) in [
        (Vec3::new(4.5, 0.1, 0.2), true),
        (Vec3::new(4.0, 0.6, 0.0), false),
        (Vec3::new(2.5, 0.0, 0.0), true),
        (Vec3::ZERO, false),
    ] {
        assert_eq!(scene.contains(p, InsideMethod::Parity), want, "{p}");
        assert_eq!(scene.contains(p, InsideMethod::WindingNumber), want, "{p}");
    }
}

#[test]
fn hierarchical_winding_number_is_close_to_the_exact_sum_on_the_open_bunny() {
    let scene = scene_of(read_obj("obj/stanford-bunny.obj"));
    let mut rng = Pcg64::seed_from_u64(37);
    let b = scene.bounds();
    let (c, h) = (b.center(), (b.max - b.min) * 0.55);
    let mut worst = 0.0f32;
    for _ in 0..200 {
        let p = c + Vec3::new(
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
        ) * h;
        worst = worst.max((scene.winding_number(p) - scene.winding_number_exact(p)).abs());
    }
    assert!(worst < 0.02, "worst error {worst}");
}

#[test]
fn batches_answer_as_single_queries() {
    let scene = scene_of(read_obj("obj/teapot.obj"));
    let mut rng = Pcg64::seed_from_u64(38);
    let points = query_points(&read_obj("obj/teapot.obj"), 3000, &mut rng);
    let closest = scene.closest_points(&points);
    let signed = scene.signed_distances(&points, InsideMethod::Parity);
    let inside = scene.contains_batch(&points, InsideMethod::WindingNumber);
    for (i, &p) in points.iter().enumerate() {
        assert_eq!(closest[i], scene.closest_point(p));
        assert_eq!(
            signed[i].to_bits(),
            scene.signed_distance(p, InsideMethod::Parity).to_bits()
        );
        assert_eq!(inside[i], scene.contains(p, InsideMethod::WindingNumber));
    }
}

/// Batches answer their points in Morton order, each query starting from the previous point's
/// triangle: the answers must still be those of single queries, ties included. Two coincident
/// copies of a box and points on a lattice (on the box's planes of symmetry, so many are
/// equidistant from two or three faces and always from both copies): the smallest key wins in
/// every batch, for 1 and 3 threads, whatever triangle the previous point left as the start.
#[test]
fn seeded_batches_keep_single_answers_and_ties_for_any_thread_count() {
    let mut b = SceneBuilder::new();
    b.add_mesh(cuboid(Vec3::ONE));
    b.add_mesh(cuboid(Vec3::ONE));
    b.add_mesh(placed(
        &read_obj("obj/teapot.obj"),
        0.1,
        Vec3::new(3.0, 0.0, 0.0),
    ));
    let scene = b.build().unwrap();
    let mut points = Vec::new();
    for i in -8..=8 {
        for j in -8..=8 {
            for k in -8..=8 {
                points.push(Vec3::new(i as f32, j as f32, k as f32) * 0.25);
            }
        }
    }
    let mut rng = Pcg64::seed_from_u64(39);
    points.extend(
        query_points(&read_obj("obj/teapot.obj"), 500, &mut rng)
            .iter()
            .map(|&p| p * 0.1 + Vec3::new(3.0, 0.0, 0.0)),
    );
    let single: Vec<Option<ClosestPoint>> =
        points.iter().map(|&p| scene.closest_point(p)).collect();
    let on_box = single
        .iter()
        .filter(|c| c.is_some_and(|c| c.geom < 2))
        .count();
    assert!(on_box > 4000, "{on_box}");
    assert!(
        single.iter().all(|c| c.is_some_and(|c| c.geom != 1)),
        "the first copy wins ties"
    );
    let paths: Vec<_> = points
        .iter()
        .map(|&p| scene.closest_point_path(p))
        .collect();
    let distances: Vec<u32> = points
        .iter()
        .map(|&p| scene.distance(p).to_bits())
        .collect();
    let signed: Vec<u32> = points
        .iter()
        .map(|&p| scene.signed_distance(p, InsideMethod::Parity).to_bits())
        .collect();
    let check = || {
        let got = scene.closest_points(&points);
        for ((got, want), p) in got.iter().zip(&single).zip(&points) {
            assert_eq!(got, want, "{p}");
        }
        assert_eq!(scene.closest_point_paths(&points), paths);
        let bits = |v: Vec<f32>| v.into_iter().map(f32::to_bits).collect::<Vec<_>>();
        assert_eq!(bits(scene.distances(&points)), distances);
        assert_eq!(
            bits(scene.signed_distances(&points, InsideMethod::Parity)),
            signed
        );
    };
    check();
    #[cfg(feature = "parallel")]
    for threads in [1, 3] {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(check);
    }
}

#[test]
fn bad_points_answer_nan_or_nothing_and_empty_scenes_infinity() {
    let scene = scene_of(icosphere(1, Vec3::ZERO, 1.0));
    for p in [
        Vec3::NAN,
        Vec3::new(0.0, f32::INFINITY, 0.0),
        Vec3::new(f32::NAN, 0.0, 0.0),
    ] {
        assert_eq!(scene.closest_point(p), None);
        assert!(scene.distance(p).is_nan());
        assert!(scene.signed_distance(p, InsideMethod::Parity).is_nan());
        assert!(!scene.contains(p, InsideMethod::Parity));
        assert!(!scene.contains(p, InsideMethod::WindingNumber));
        assert!(scene.winding_number(p).is_nan());
    }
    assert_eq!(scene.closest_point_within(Vec3::ZERO, f32::NAN), None);
    assert_eq!(scene.closest_point_within(Vec3::ZERO, -1.0), None);
    let empty = SceneBuilder::new().build().unwrap();
    assert_eq!(empty.closest_point(Vec3::ZERO), None);
    assert_eq!(empty.distance(Vec3::ZERO), f32::INFINITY);
    assert_eq!(
        empty.signed_distance(Vec3::ZERO, InsideMethod::Parity),
        f32::INFINITY
    );
}

/// The winding number's dipoles are recomputed after the vertices move.
#[test]
fn winding_number_follows_updated_vertices() {
    let mesh = cuboid(Vec3::ONE);
    let mut b = SceneBuilder::new();
    let g = b.add_mesh(mesh.clone());
    let mut scene = b.build().unwrap();
    let far = Vec3::new(0.0, 0.0, 40.0);
    assert!((scene.winding_number(Vec3::ZERO) - 1.0).abs() < 1e-3);
    assert!(scene.winding_number(far).abs() < 1e-3);
    let moved: Vec<Vec3> = mesh.vertices().iter().map(|&v| v + far).collect();
    scene.update_mesh_vertices(g, &moved).unwrap();
    assert!(scene.winding_number(Vec3::ZERO).abs() < 1e-3);
    assert!((scene.winding_number(far) - 1.0).abs() < 1e-3);
    assert!(scene.contains(far, InsideMethod::WindingNumber));
    assert_eq!(scene.closest_point(far).unwrap().distance, 1.0);
}
