//! Scene queries against references: the brute-force twins (every primitive, same kernels, same
//! data) for closest/any/all/count with every build preset and option, pre-transformed copies for
//! instances, parity on closed meshes, the watertight sphere far from the origin, build errors,
//! NaN rays, batches, precision far from the origin and refit.

use std::sync::Arc;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use raypick::bvh::BuildConfig;
use raypick::geom::sphere::sphere_quadratic;
use raypick::geom::Culling;
use raypick::glam::{Affine3A, Quat, Vec3};
use raypick::scene::shapes::icosphere;
use raypick::{
    BuildError, Hit, InstancePath, QueryOptions, Ray, Scene, SceneBuilder, Spheres, TriMesh,
};

// ---------------------------------------------------------------------------------------------
// Generators

/// Both crossings of the line through `origin` along `dir` with the sphere (the geom kernel).
fn sphere_roots(origin: Vec3, dir: Vec3, center: Vec3, radius: f32) -> Option<[f32; 2]> {
    let hits = sphere_quadratic(&Ray::line(origin, dir), center, radius);
    Some([hits.first()?, hits.last()?])
}

fn rand_vec(rng: &mut Pcg64) -> Vec3 {
    Vec3::new(
        rng.gen_range(-1.0..1.0),
        rng.gen_range(-1.0..1.0),
        rng.gen_range(-1.0..1.0),
    )
}

/// `n` random triangles of size about `scale / 10` in the cube of half-side `scale` around `center`.
fn soup(rng: &mut Pcg64, n: usize, center: Vec3, scale: f32) -> TriMesh {
    let mut vertices = Vec::with_capacity(3 * n);
    for _ in 0..n {
        let p = center + rand_vec(rng) * scale;
        for _ in 0..3 {
            vertices.push(p + rand_vec(rng) * scale * 0.1);
        }
    }
    let indices = (0..n as u32)
        .map(|i| [3 * i, 3 * i + 1, 3 * i + 2])
        .collect();
    TriMesh::new(vertices, indices)
}

/// A tree of leaves larger than the presets' eight triangles: cheap primitives, so that the SAH
/// keeps up to 24 in a leaf, which the mesh walks test in several eight-lane passes.
const LARGE_LEAVES: BuildConfig = BuildConfig {
    max_leaf_size: 24,
    intersection_cost: 0.02,
    ..BuildConfig::BALANCED
};

/// Every preset and [`LARGE_LEAVES`], with float and with quantized (`compact`) mesh BVHs.
fn every_config() -> Vec<(String, BuildConfig)> {
    BuildConfig::PRESETS
        .into_iter()
        .chain([("large leaves", LARGE_LEAVES)])
        .flat_map(|(name, config)| {
            [
                (name.to_string(), config),
                (
                    format!("{name}, compact"),
                    BuildConfig {
                        compact: true,
                        ..config
                    },
                ),
            ]
        })
        .collect()
}

fn random_scene(rng: &mut Pcg64, scale: f32, config: BuildConfig) -> Scene {
    let mut b = SceneBuilder::with_config(config);
    b.add_mesh(soup(rng, 400, Vec3::ZERO, scale));
    b.add_mesh(soup(rng, 150, Vec3::new(1.5, 0.0, 0.0) * scale, scale * 0.5).with_mask(0b10));
    b.add_mesh(icosphere(2, Vec3::new(0.0, 1.5, 0.0) * scale, scale * 0.4).with_name("ball mesh"));
    b.add_mesh(TriMesh::new(vec![], vec![]).with_name("empty"));
    let n = 60;
    let centers = (0..n).map(|_| rand_vec(rng) * scale * 1.5).collect();
    let radii = (0..n).map(|_| rng.gen_range(0.01..0.1) * scale).collect();
    b.add_spheres(Spheres::new(centers, radii).with_mask(0b01));
    let scene = b.build().expect("valid random scene");
    scene.validate().expect("valid BVHs");
    scene
}

fn random_ray(rng: &mut Pcg64, scale: f32) -> Ray {
    let origin = rand_vec(rng) * scale * 3.0;
    let target = rand_vec(rng) * scale;
    let dir = (target - origin) * rng.gen_range(0.1..10.0);
    match rng.gen_range(0..4) {
        0 => Ray::segment(origin, origin + dir),
        1 => Ray::line(origin, dir),
        _ => Ray::new(origin, dir),
    }
}

fn skip_every_third(h: &Hit, _: &InstancePath) -> bool {
    !h.prim.is_multiple_of(3)
}

/// The option sets every comparison runs with.
fn option_sets() -> Vec<QueryOptions<'static>> {
    vec![
        QueryOptions::default(),
        QueryOptions {
            culling: Culling::Back,
            ..Default::default()
        },
        QueryOptions {
            mask: 0b01,
            ..Default::default()
        },
        QueryOptions {
            filter: Some(&skip_every_third),
            ..Default::default()
        },
    ]
}

/// BVH answers equal brute-force answers exactly (same prim, t, u, v, point, normal, ids).
fn assert_matches_brute_force(scene: &Scene, ray: &Ray, opts: &QueryOptions) {
    assert_eq!(
        scene.intersect_with(ray, opts),
        scene.intersect_brute_force(ray, opts),
        "closest, ray {ray:?}, {opts:?}"
    );
    assert_eq!(
        scene.occluded_with(ray, opts),
        scene.occluded_brute_force(ray, opts)
    );
    let all = scene.intersect_all_with(ray, opts);
    assert_eq!(
        all,
        scene.intersect_all_brute_force(ray, opts),
        "all, ray {ray:?}"
    );
    assert!(all.windows(2).all(|w| w[0].t <= w[1].t));
    assert_eq!(scene.count_intersections_with(ray, opts), all.len());
    assert_eq!(scene.count_intersections_brute_force(ray, opts), all.len());
    if let (Some(first), Some(closest)) = (all.first(), scene.intersect_with(ray, opts)) {
        // Half-open all-hits may drop an edge hit that closed edges keep, never the other way.
        assert!(closest.t <= first.t);
    }
    // The path queries keep the whole instance path where the plain ones keep the top-level
    // instance alone: the same hits, in the same order.
    let with_path = scene.intersect_path_with(ray, opts);
    assert_eq!(
        with_path.map(|(h, _)| h),
        scene.intersect_with(ray, opts),
        "closest with path, ray {ray:?}, {opts:?}"
    );
    assert_eq!(with_path, scene.intersect_path_brute_force(ray, opts));
    if let Some((h, path)) = with_path {
        assert_eq!(path.top(), h.instance);
    }
    let all_paths = scene.intersect_all_paths_with(ray, opts);
    assert!(all_paths.iter().map(|(h, _)| h).eq(&all), "all with paths");
    assert!(all_paths.iter().all(|(h, p)| p.top() == h.instance));
}

// ---------------------------------------------------------------------------------------------

#[test]
fn the_large_leaf_config_makes_leaves_of_several_passes() {
    // Not vacuous: the comparisons with brute force below walk leaves of more than eight
    // triangles (two or three passes of the SIMD triangle test) with this config.
    let mut rng = Pcg64::seed_from_u64(100);
    let scene = random_scene(&mut rng, 1.0, LARGE_LEAVES);
    let stats = scene.geometry_stats(0).expect("a mesh");
    let large: usize = stats.leaf_size_histogram.iter().skip(9).sum();
    assert!(large > 5, "{:?}", stats.leaf_size_histogram);
}

#[test]
fn bvh_equals_brute_force_on_random_scenes_for_every_preset_and_option() {
    for (name, config) in every_config() {
        let mut rng = Pcg64::seed_from_u64(100);
        let scene = random_scene(&mut rng, 1.0, config);
        let opts = option_sets();
        let mut hits = 0;
        for _ in 0..250 {
            let ray = random_ray(&mut rng, 1.0);
            for o in &opts {
                assert_matches_brute_force(&scene, &ray, o);
            }
            hits += scene.intersect(&ray).is_some() as usize;
        }
        assert!(hits > 50, "{name}: the rays must hit something ({hits})");
    }
}

#[test]
fn bvh_equals_brute_force_over_magnitudes() {
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases: 16,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[42; 32]),
    );
    runner
        .run(&(-6i32..=6, any::<u64>()), |(exp, seed)| {
            let scale = 10f32.powi(exp);
            let mut rng = Pcg64::seed_from_u64(seed);
            let scene = random_scene(&mut rng, scale, BuildConfig::default());
            for _ in 0..60 {
                let ray = random_ray(&mut rng, scale);
                let opts = QueryOptions::default();
                prop_assert_eq!(
                    scene.intersect(&ray),
                    scene.intersect_brute_force(&ray, &opts)
                );
                prop_assert_eq!(
                    scene.intersect_all(&ray),
                    scene.intersect_all_brute_force(&ray, &opts)
                );
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn hits_lie_on_the_surface_and_ids_names_and_normals_are_right() {
    let mut b = SceneBuilder::new();
    let quad = b.add_mesh(
        TriMesh::new(
            vec![
                Vec3::new(-1.0, -1.0, 0.0),
                Vec3::new(1.0, -1.0, 0.0),
                Vec3::new(1.0, 1.0, 0.0),
                Vec3::new(-1.0, 1.0, 0.0),
            ],
            vec![[0, 1, 2], [0, 2, 3]],
        )
        .with_name("quad"),
    );
    let balls = b.add_spheres(Spheres::new(
        vec![Vec3::new(0.0, 0.0, -4.0), Vec3::new(3.0, 0.0, 0.0)],
        vec![1.0, 0.5],
    ));
    b.set_name(balls, "balls");
    let scene = b.build().unwrap();
    assert_eq!(scene.geometry_name(quad), Some("quad"));
    assert_eq!(scene.geometry_name(balls), Some("balls"));
    assert_eq!(scene.geometry_name(9), None);
    assert_eq!(scene.num_geometries(), 2);
    assert_eq!(scene.num_triangles(), 2);
    assert_eq!(scene.bounds().min, Vec3::new(-1.0, -1.0, -5.0));

    // Front of the quad: normal +z, barycentrics weight v1 and v2.
    let hit = scene
        .intersect(&Ray::new(
            Vec3::new(0.5, -0.5, 2.0),
            Vec3::new(0.0, 0.0, -2.0),
        ))
        .unwrap();
    assert_eq!(
        (hit.geom, hit.prim, hit.t, hit.instance),
        (quad, 0, 1.0, None)
    );
    assert_eq!(hit.normal, Vec3::Z);
    assert!((hit.point - Vec3::new(0.5, -0.5, 0.0)).length() < 1e-6);
    assert!((hit.u - 0.5).abs() < 1e-6 && (hit.v - 0.25).abs() < 1e-6);
    // Back-face culling from below skips the quad and finds the sphere's front.
    let up = Ray::new(Vec3::new(0.0, 0.0, -10.0), Vec3::Z);
    let culled = scene
        .intersect_with(
            &up,
            &QueryOptions {
                culling: Culling::Back,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!((culled.geom, culled.prim, culled.t), (balls, 0, 5.0));
    assert_eq!(culled.normal, Vec3::NEG_Z);
    // From inside the sphere, culling drops the exit and the quad's back: only the quad from above...
    let inside = Ray::new(Vec3::new(0.0, 0.0, -4.0), Vec3::Z);
    let h = scene.intersect_with(
        &inside,
        &QueryOptions {
            culling: Culling::Back,
            ..Default::default()
        },
    );
    assert!(h.is_none(), "{h:?}");
    let h = scene.intersect(&inside).unwrap();
    assert_eq!((h.geom, h.t, h.normal), (balls, 1.0, Vec3::Z));
    // Sphere hits match the kernel.
    let mut rng = Pcg64::seed_from_u64(8);
    for _ in 0..200 {
        // Origins within 1.5 of the sphere's centre: x > 1.5, clear of the quad.
        let o = Vec3::new(3.0, 0.0, 0.0) + rand_vec(&mut rng).normalize() * 1.5;
        let d = Vec3::new(3.0, 0.0, 0.0) + rand_vec(&mut rng) * 0.3 - o;
        let h = scene.intersect(&Ray::new(o, d)).unwrap();
        let [t0, _] = sphere_roots(o, d, Vec3::new(3.0, 0.0, 0.0), 0.5).unwrap();
        assert_eq!((h.geom, h.prim, h.t), (balls, 1, t0));
        assert!(((h.point - Vec3::new(3.0, 0.0, 0.0)).length() - 0.5).abs() < 1e-6);
        assert!((h.normal.length() - 1.0).abs() < 1e-6 && h.normal.dot(d) < 0.0);
    }
}

#[test]
fn ties_at_equal_t_go_to_the_smallest_ids() {
    // The same triangle three times (two meshes, and twice within one): the hit is geometry 0, prim 0.
    let tri = || {
        TriMesh::new(
            vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::ZERO, Vec3::X, Vec3::Y],
            vec![[3, 4, 5], [0, 1, 2]],
        )
    };
    for (_, config) in BuildConfig::PRESETS {
        let mut b = SceneBuilder::with_config(config);
        b.add_mesh(tri());
        b.add_mesh(tri());
        let scene = b.build().unwrap();
        let ray = Ray::new(Vec3::new(0.25, 0.25, 1.0), Vec3::NEG_Z);
        let hit = scene.intersect(&ray).unwrap();
        assert_eq!((hit.geom, hit.prim), (0, 0));
        let all = scene.intersect_all(&ray);
        let ids: Vec<(u32, u32)> = all.iter().map(|h| (h.geom, h.prim)).collect();
        assert_eq!(ids, vec![(0, 0), (0, 1), (1, 0), (1, 1)]);
    }
}

/// Ties across instances: the top-level id decides first (an instance's id standing for its
/// hits), then the path, then the geometry and primitive ids; the plain queries, which keep
/// only the top-level instance where instances do not nest, and the path queries agree.
#[test]
fn ties_across_instances_go_to_the_smallest_ids_with_or_without_paths() {
    let tri = || {
        TriMesh::new(
            vec![Vec3::ZERO, Vec3::X, Vec3::Y],
            vec![[0, 0, 0], [0, 1, 2]],
        )
    };
    let two = {
        let mut b = SceneBuilder::new();
        b.add_mesh(tri());
        b.add_mesh(tri());
        Arc::new(b.build().unwrap())
    };
    let ray = Ray::new(Vec3::new(0.25, 0.25, 1.0), Vec3::NEG_Z);
    let check = |scene: &Scene, want: (Option<u32>, u32, u32), path: &[u32]| {
        let hit = scene.intersect(&ray).unwrap();
        assert_eq!((hit.instance, hit.geom, hit.prim), want);
        let (with_path, p) = scene.intersect_path(&ray).unwrap();
        assert_eq!((with_path, p.as_slice()), (hit, path));
        let mut batch = vec![None; 20];
        scene.intersect_batch_into(&[ray; 20], &QueryOptions::default(), &mut batch);
        assert!(batch.iter().all(|b| *b == Some(hit)));
        let mut paths = vec![None; 20];
        scene.intersect_path_batch_into(&[ray; 20], &QueryOptions::default(), &mut paths);
        assert!(paths.iter().all(|b| *b == Some((hit, p))));
    };
    // A mesh between two instances of the same scene: the mesh (geometry 1) loses to instance 0.
    let mut b = SceneBuilder::new();
    b.add_instance(Arc::clone(&two), Affine3A::IDENTITY);
    b.add_mesh(tri());
    b.add_instance(Arc::clone(&two), Affine3A::IDENTITY);
    let flat = Arc::new(b.build().unwrap());
    assert_eq!(flat.instance_depth(), 1);
    check(&flat, (Some(0), 0, 1), &[0]);
    // Nested: the scene above placed twice, after a mesh. The mesh (top-level id 0) wins; without
    // it, instance 1 does, and inside it the shorter path [1] (its mesh) before [1, 0].
    let mut b = SceneBuilder::new();
    b.add_mesh(tri().with_mask(0b10));
    b.add_instance(Arc::clone(&flat), Affine3A::IDENTITY);
    b.add_instance(flat, Affine3A::IDENTITY);
    let nested = b.build().unwrap();
    assert_eq!(nested.instance_depth(), 2);
    check(&nested, (None, 0, 1), &[]);
    let only_instances = QueryOptions {
        mask: 0b1,
        ..Default::default()
    };
    let hit = nested.intersect_with(&ray, &only_instances).unwrap();
    assert_eq!((hit.instance, hit.geom, hit.prim), (Some(1), 1, 1));
    let (with_path, p) = nested.intersect_path_with(&ray, &only_instances).unwrap();
    assert_eq!((with_path, p.as_slice()), (hit, &[1][..]));
}

// ---------------------------------------------------------------------------------------------
// Instances

/// A transform with rotation, non-uniform scale (mirrored when `mirror`) and translation.
fn transform(rng: &mut Pcg64, mirror: bool) -> Affine3A {
    let axis = rand_vec(rng).normalize();
    let rot = Quat::from_axis_angle(axis, rng.gen_range(0.0..std::f32::consts::TAU));
    let mut scale = Vec3::new(
        rng.gen_range(0.3..3.0),
        rng.gen_range(0.3..3.0),
        rng.gen_range(0.3..3.0),
    );
    if mirror {
        scale.x = -scale.x;
    }
    Affine3A::from_scale_rotation_translation(scale, rot, rand_vec(rng) * 8.0)
}

#[test]
fn instances_agree_with_pre_transformed_copies() {
    let mut rng = Pcg64::seed_from_u64(200);
    let meshes = [
        soup(&mut rng, 200, Vec3::ZERO, 1.0),
        icosphere(2, Vec3::new(2.0, 0.0, 0.0), 0.7),
    ];
    let mut part = SceneBuilder::new();
    for m in &meshes {
        part.add_mesh(m.clone());
    }
    let part = Arc::new(part.build().unwrap());
    let transforms: Vec<Affine3A> = (0..6).map(|i| transform(&mut rng, i % 2 == 1)).collect();

    let mut inst = SceneBuilder::new();
    let mut flat = SceneBuilder::new();
    // flat geometry id = 2 * instance + mesh
    for xf in &transforms {
        inst.add_instance(part.clone(), *xf);
        for m in &meshes {
            let v = m
                .vertices()
                .iter()
                .map(|&p| xf.transform_point3(p))
                .collect();
            flat.add_mesh(TriMesh::new(v, m.indices().to_vec()));
        }
    }
    let inst = inst.build().unwrap();
    let flat = flat.build().unwrap();
    inst.validate().unwrap();
    assert!(inst.has_instances());
    assert_eq!(inst.num_triangles(), 0);

    let mut compared = 0;
    for k in 0..1500 {
        let i = rng.gen_range(0..transforms.len());
        let m = rng.gen_range(0..2);
        let p = rng.gen_range(0..meshes[m].num_triangles() as u32);
        let [a, b, c] = meshes[m]
            .triangle(p)
            .unwrap()
            .map(|v| transforms[i].transform_point3(v));
        let (u, v) = (rng.gen_range(0.1..0.45), rng.gen_range(0.1..0.45));
        let target = (1.0 - u - v) * a + u * b + v * c;
        let origin = target + rand_vec(&mut rng).normalize() * rng.gen_range(1.0..20.0);
        let ray = Ray::new(origin, (target - origin) * rng.gen_range(0.2..5.0));
        let opts = if k % 2 == 0 {
            QueryOptions::default()
        } else {
            QueryOptions {
                culling: Culling::Back,
                ..Default::default()
            }
        };
        // Skip near-ties, where rounding in the two representations may pick either triangle.
        let flat_all = flat.intersect_all_with(&ray, &opts);
        if flat_all.len() >= 2 && (flat_all[1].t - flat_all[0].t) <= 1e-3 * flat_all[0].t.abs() {
            continue;
        }
        let want = flat.intersect_with(&ray, &opts);
        let got = inst.intersect_with(&ray, &opts);
        assert_eq!(
            want.is_some(),
            got.is_some(),
            "ray {ray:?} {opts:?}: {want:?} vs {got:?}"
        );
        let (Some(w), Some(g)) = (want, got) else {
            continue;
        };
        assert_eq!(
            (g.instance, g.geom, g.prim),
            (Some(w.geom / 2), w.geom % 2, w.prim)
        );
        assert!(
            (g.t - w.t).abs() <= 1e-4 * w.t.abs(),
            "t {} vs {}",
            g.t,
            w.t
        );
        assert!(
            (g.normal - w.normal).length() < 1e-3,
            "normal {} vs {}",
            g.normal,
            w.normal
        );
        assert!((g.point - w.point).length() < 1e-4 * (1.0 + w.point.length()));
        // Barycentrics of the random (often skinny) triangles amplify the f32 rounding of the two
        // representations; the point check above is the accuracy check.
        assert!(
            (g.u - w.u).abs() < 2e-2 && (g.v - w.v).abs() < 2e-2,
            "{g:?} vs {w:?}"
        );
        // Instanced BVH == instanced brute force, exactly.
        assert_eq!(got, inst.intersect_brute_force(&ray, &opts));
        compared += 1;
    }
    assert!(compared > 1000, "compared {compared}");
}

#[test]
fn instanced_spheres_map_points_and_normals_back() {
    let mut part = SceneBuilder::new();
    part.add_spheres(Spheres::new(vec![Vec3::new(1.0, 0.0, 0.0)], vec![0.5]));
    let part = Arc::new(part.build().unwrap());
    let xf = Affine3A::from_scale_rotation_translation(
        Vec3::splat(-2.0),
        Quat::from_rotation_y(0.7),
        Vec3::new(5.0, 1.0, -3.0),
    );
    let mut b = SceneBuilder::new();
    let id = b.add_instance(part, xf);
    let scene = b.build().unwrap();
    let center = xf.transform_point3(Vec3::new(1.0, 0.0, 0.0));
    let mut rng = Pcg64::seed_from_u64(9);
    for _ in 0..200 {
        let o = center + rand_vec(&mut rng).normalize() * 4.0;
        let d = center + rand_vec(&mut rng) * 0.5 - o;
        let h = scene.intersect(&Ray::new(o, d)).unwrap();
        // World sphere: centre, radius 1 (uniform scale 2, mirrored).
        let [t0, _] = sphere_roots(o, d, center, 1.0).unwrap();
        assert_eq!(h.instance, Some(id));
        assert!((h.t - t0).abs() < 1e-5 * t0, "{} vs {t0}", h.t);
        assert!(((h.point - center).length() - 1.0).abs() < 1e-5);
        assert!(
            (h.normal - (h.point - center)).length() < 1e-4,
            "outward normal"
        );
    }
}

#[test]
fn singular_instances_are_build_errors_and_nested_ones_build() {
    let mut part = SceneBuilder::new();
    part.add_mesh(icosphere(0, Vec3::ZERO, 1.0));
    let part = Arc::new(part.build().unwrap());
    let mut b = SceneBuilder::new();
    b.add_instance(part.clone(), Affine3A::from_scale(Vec3::new(1.0, 0.0, 1.0)));
    b.set_name(0, "flat");
    assert!(matches!(
        b.build(),
        Err(BuildError::NonInvertibleTransform { geom: 0, ref name, .. }) if name == "flat"
    ));
    let mut b = SceneBuilder::new();
    b.add_instance(
        part.clone(),
        Affine3A::from_translation(Vec3::new(f32::NAN, 0.0, 0.0)),
    );
    let err = b.build().unwrap_err();
    assert!(matches!(err, BuildError::NonInvertibleTransform { .. }));
    assert!(err.to_string().contains("NaN or infinite"), "{err}");
    // A scale of 1e30: the determinant (1e90) overflows f32, which the message says; a zero
    // scale is singular.
    let mut b = SceneBuilder::new();
    b.add_instance(part.clone(), Affine3A::from_scale(Vec3::splat(1e30)));
    let err = b.build().unwrap_err();
    assert!(err.to_string().contains("1.000e90 overflows f32"), "{err}");
    let mut b = SceneBuilder::new();
    b.add_instance(part.clone(), Affine3A::from_scale(Vec3::new(1.0, 0.0, 1.0)));
    let err = b.build().unwrap_err();
    assert!(
        err.to_string().contains("singular (determinant 0)"),
        "{err}"
    );
    let mut outer = SceneBuilder::new();
    outer.add_instance(part.clone(), Affine3A::IDENTITY);
    let outer = Arc::new(outer.build().unwrap());
    let mut b = SceneBuilder::new();
    b.add_mesh(icosphere(0, Vec3::ZERO, 1.0));
    b.add_instance(outer, Affine3A::IDENTITY);
    // Instances nest (up to `MAX_INSTANCE_DEPTH`, see tests/scene_nested.rs).
    assert_eq!(b.build().unwrap().instance_depth(), 2);
}

// ---------------------------------------------------------------------------------------------
// Closed meshes: parity and watertightness

/// Rays towards every vertex and edge midpoint of `mesh` (and some random points) from `origin`.
fn rays_at_vertices_and_edges(mesh: &TriMesh, origin: Vec3) -> Vec<Ray> {
    let mut rays = Vec::new();
    for t in mesh.indices() {
        for k in 0..3 {
            let a = mesh.vertices()[t[k] as usize];
            let b = mesh.vertices()[t[(k + 1) % 3] as usize];
            rays.push(Ray::new(origin, a - origin));
            rays.push(Ray::new(origin, (a + b) * 0.5 - origin));
            rays.push(Ray::new(origin, (a * 0.25 + b * 0.75) - origin));
        }
    }
    rays
}

#[test]
fn counts_on_a_closed_mesh_are_odd_inside_and_even_outside() {
    let mesh = icosphere(3, Vec3::new(0.1, -0.2, 0.3), 2.0);
    let mut b = SceneBuilder::new();
    b.add_mesh(mesh.clone());
    let scene = b.build().unwrap();
    let c = Vec3::new(0.1, -0.2, 0.3);
    let mut rng = Pcg64::seed_from_u64(300);
    // Inside: the centre and random points; convex, so exactly one crossing.
    for origin in [
        c,
        c + Vec3::new(0.3, 0.2, -0.5),
        c + Vec3::new(-1.0, 0.5, 0.5),
    ] {
        for ray in rays_at_vertices_and_edges(&mesh, origin) {
            let n = scene.count_intersections(&ray);
            assert_eq!(n, 1, "inside at {origin}: {ray:?}");
            assert_eq!(scene.intersect_all(&ray).len(), 1);
            assert!(scene.intersect(&ray).is_some(), "closest never misses");
        }
    }
    // Outside, also along full lines (which see the mesh twice or not at all).
    for _ in 0..6 {
        let origin = c + rand_vec(&mut rng).normalize() * rng.gen_range(3.0..10.0);
        for ray in rays_at_vertices_and_edges(&mesh, origin) {
            let n = scene.count_intersections(&ray);
            assert_eq!(n % 2, 0, "outside: {n} crossings for {ray:?}");
            let line = Ray::line(ray.origin, ray.dir);
            assert_eq!(scene.count_intersections(&line) % 2, 0);
            assert_eq!(
                scene.intersect_all(&ray),
                scene.intersect_all_brute_force(&ray, &QueryOptions::default())
            );
        }
    }
    // Random interior points of a non-convex closed union (two overlapping spheres as one mesh
    // each): parity per mesh through the filter.
    let mut b = SceneBuilder::new();
    b.add_mesh(icosphere(2, Vec3::ZERO, 1.0));
    b.add_mesh(icosphere(2, Vec3::new(0.8, 0.0, 0.0), 1.0));
    let two = b.build().unwrap();
    for _ in 0..400 {
        let o = rand_vec(&mut rng) * 2.0;
        let d = rand_vec(&mut rng);
        for g in 0..2u32 {
            let only = move |h: &Hit, _: &InstancePath| h.geom == g;
            let opts = QueryOptions {
                filter: Some(&only),
                ..Default::default()
            };
            let n = two.count_intersections_with(&Ray::new(o, d), &opts);
            let center = if g == 0 {
                Vec3::ZERO
            } else {
                Vec3::new(0.8, 0.0, 0.0)
            };
            // The icosphere is inscribed in the unit sphere: skip points in the thin shell between.
            let r = (o - center).length();
            if (0.97..=1.0).contains(&r) {
                continue;
            }
            assert_eq!(n % 2 == 1, r < 0.97, "parity at {o} for mesh {g}");
        }
    }
}

#[test]
fn a_closed_sphere_far_from_the_origin_has_no_cracks() {
    let center = Vec3::new(148376.0, 1234.0, -223423.0);
    let mesh = icosphere(3, center, 100.0);
    for (_, config) in every_config() {
        let mut b = SceneBuilder::with_config(config);
        b.add_mesh(mesh.clone());
        let scene = b.build().unwrap();
        scene.validate().unwrap();
        let mut misses = 0;
        let mut total = 0;
        // Two origins inside (every target counts) and one outside, from which only targets clearly
        // on the near or the far side count: a ray at a silhouette vertex or edge only grazes the
        // surface and may rightly miss.
        let origins = [
            center,
            center + Vec3::new(-40.0, 10.0, 25.0),
            center + Vec3::new(500.0, 300.0, -200.0),
        ];
        for origin in origins {
            let outside = (origin - center).length() > 100.0;
            for ray in rays_at_vertices_and_edges(&mesh, origin) {
                let target = ray.origin + ray.dir;
                let cos = (target - center)
                    .normalize()
                    .dot((origin - center).normalize());
                let silhouette = ((origin - center).length() / 100.0).recip();
                if outside && (cos - silhouette).abs() < 0.2 {
                    continue;
                }
                total += 1;
                if scene.intersect(&ray).is_none() {
                    misses += 1;
                }
            }
        }
        assert!(total > 30_000, "{total}");
        assert_eq!(misses, 0, "{misses} of {total} rays slipped through");
    }
}

// ---------------------------------------------------------------------------------------------
// Errors, invalid rays, batches

#[test]
fn bad_input_is_a_typed_error_naming_the_geometry() {
    let ok = || icosphere(0, Vec3::ZERO, 1.0);
    let mut b = SceneBuilder::new();
    b.add_mesh(ok());
    b.add_mesh(
        TriMesh::new(
            vec![Vec3::ZERO, Vec3::X, Vec3::Y],
            vec![[0, 1, 2], [0, 1, 3]],
        )
        .with_name("bad"),
    );
    let e = b.build().unwrap_err();
    assert_eq!(
        e,
        BuildError::IndexOutOfRange {
            geom: 1,
            name: "bad".into(),
            triangle: 1,
            index: 3,
            num_vertices: 3
        }
    );
    assert!(e.to_string().contains("\"bad\"") && e.to_string().contains("triangle 1"));

    let mut b = SceneBuilder::new();
    b.add_mesh(TriMesh::new(
        vec![Vec3::ZERO, Vec3::new(f32::NAN, 0.0, 0.0), Vec3::Y],
        vec![[0, 1, 2]],
    ));
    assert!(matches!(
        b.build(),
        Err(BuildError::NonFiniteVertex {
            geom: 0,
            vertex: 1,
            ..
        })
    ));
    let mut b = SceneBuilder::new();
    b.add_mesh(TriMesh::new(
        vec![Vec3::ZERO, Vec3::X, Vec3::new(0.0, f32::INFINITY, 0.0)],
        vec![],
    ));
    assert!(matches!(
        b.build(),
        Err(BuildError::NonFiniteVertex { vertex: 2, .. })
    ));

    for (radius, name) in [(-1.0, "neg"), (f32::NAN, "nan"), (f32::INFINITY, "inf")] {
        let mut b = SceneBuilder::new();
        b.add_mesh(ok());
        b.add_spheres(Spheres::new(vec![Vec3::ZERO, Vec3::X], vec![1.0, radius]).with_name(name));
        match b.build() {
            Err(BuildError::InvalidRadius {
                geom: 1,
                name: n,
                sphere: 1,
                ..
            }) => assert_eq!(n, name),
            other => panic!("{other:?}"),
        }
    }
    let mut b = SceneBuilder::new();
    b.add_spheres(Spheres::new(vec![Vec3::new(0.0, f32::NAN, 0.0)], vec![1.0]));
    assert!(matches!(
        b.build(),
        Err(BuildError::NonFiniteCenter { sphere: 0, .. })
    ));
    let mut b = SceneBuilder::new();
    b.add_spheres(Spheres::new(vec![Vec3::ZERO; 2], vec![1.0]));
    assert!(matches!(
        b.build(),
        Err(BuildError::SphereCountMismatch {
            centers: 2,
            radii: 1,
            ..
        })
    ));
    let mut b = SceneBuilder::new();
    b.set_name(4, "nobody");
    assert!(matches!(
        b.build(),
        Err(BuildError::UnknownGeometry { geom: 4, count: 0 })
    ));
    // Zero radius and degenerate triangles are fine (they are just never hit).
    let mut b = SceneBuilder::new();
    b.add_spheres(Spheres::new(vec![Vec3::ZERO], vec![0.0]));
    b.add_mesh(TriMesh::new(
        vec![Vec3::ZERO, Vec3::X, Vec3::X * 2.0],
        vec![[0, 1, 2]],
    ));
    let s = b.build().unwrap();
    assert!(s
        .intersect(&Ray::new(Vec3::new(1.0, 0.0, 1.0), Vec3::NEG_Z))
        .is_none());
}

#[test]
fn degenerate_triangles_of_a_mesh_never_hit() {
    // Exactly collinear triangles with full 24-bit mantissas (v1 = p + d, v2 = p + λd, every sum
    // exact in [1.25, 1.75]³, where moving them to the mesh's local frame is exact too): the
    // watertight test's sheared 2-D vertices round to slivers of non-zero area, so only the 3-D
    // degeneracy check, done once per triangle when the scene is built, keeps them from being hit.
    // Repeated vertices too. Rays aimed at points of their lines from random directions.
    let mut rng = Pcg64::seed_from_u64(0xDE6F);
    let mut vertices = Vec::new();
    let mut lines = Vec::new();
    for k in 0..600 {
        let p = Vec3::from_array(std::array::from_fn(|_| rng.gen_range(1.25f32..1.75)));
        let d = Vec3::from_array(std::array::from_fn(|_| {
            rng.gen_range(-16i32..=16) as f32 / 256.0
        }));
        let lambda = [-1.0f32, 0.5, 2.0, 3.0][rng.gen_range(0..4)];
        let tri = match k % 3 {
            0 | 1 => [p, p + d, p + lambda * d],
            _ => [p, p, p + d],
        };
        vertices.extend(tri);
        lines.push((p, d));
    }
    let indices: Vec<[u32; 3]> = (0..600u32).map(|t| [3 * t, 3 * t + 1, 3 * t + 2]).collect();
    for config in [BuildConfig::default(), BuildConfig::FAST] {
        let mut b = SceneBuilder::with_config(config);
        b.add_mesh(TriMesh::new(vertices.clone(), indices.clone()));
        let scene = b.build().unwrap();
        for &(p, d) in &lines {
            let target = p + rng.gen_range(-1.0f32..2.0) * d;
            let dir = Vec3::from_array(std::array::from_fn(|_| rng.gen_range(-1.0f32..1.0)));
            let ray = Ray::new(target - dir, dir);
            assert_eq!(scene.intersect(&ray), None, "{ray:?}");
            assert!(!scene.occluded(&ray));
            assert_eq!(scene.count_intersections(&ray), 0);
        }
    }
}

#[test]
fn invalid_rays_hit_nothing() {
    let mut rng = Pcg64::seed_from_u64(400);
    let scene = random_scene(&mut rng, 1.0, BuildConfig::default());
    let bad = [
        Ray::new(Vec3::new(f32::NAN, 0.0, 0.0), Vec3::X),
        Ray::new(Vec3::ZERO, Vec3::new(0.0, f32::NAN, 1.0)),
        Ray::new(Vec3::ZERO, Vec3::ZERO),
        Ray::new(Vec3::splat(f32::INFINITY), Vec3::X),
        Ray::new(Vec3::ZERO, Vec3::X).with_range(f32::NAN, 1.0),
        Ray::new(Vec3::ZERO, Vec3::X).with_range(1.0, 0.5),
    ];
    for ray in bad {
        assert_eq!(scene.intersect(&ray), None);
        assert!(!scene.occluded(&ray));
        assert!(scene.intersect_all(&ray).is_empty());
        assert_eq!(scene.count_intersections(&ray), 0);
    }
}

#[test]
fn batches_equal_single_queries_for_any_thread_count() {
    let mut rng = Pcg64::seed_from_u64(500);
    let scene = random_scene(&mut rng, 1.0, BuildConfig::default());
    let rays: Vec<Ray> = (0..3000).map(|_| random_ray(&mut rng, 1.0)).collect();
    for opts in option_sets() {
        let single: Vec<Option<Hit>> = rays
            .iter()
            .map(|r| scene.intersect_with(r, &opts))
            .collect();
        let occl: Vec<bool> = rays.iter().map(|r| scene.occluded_with(r, &opts)).collect();
        assert_eq!(scene.intersect_batch(&rays, &opts), single);
        assert_eq!(scene.occluded_batch(&rays, &opts), occl);
        #[cfg(feature = "parallel")]
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            assert_eq!(pool.install(|| scene.intersect_batch(&rays, &opts)), single);
        }
    }
}

/// Parallel rays from scattered origins (a directional light's shadow rays from shuffled points),
/// where packets must not form across far-apart origins: batches answer as single rays, for
/// every option set and thread count, with and without segments' ends.
#[test]
fn scattered_parallel_rays_answer_as_single_rays() {
    let mut rng = Pcg64::seed_from_u64(501);
    let scene = random_scene(&mut rng, 1.0, BuildConfig::default());
    let sun = Vec3::new(-0.31, 0.87, 0.38);
    let rays: Vec<Ray> = (0..5000)
        .map(|i| {
            let origin = rand_vec(&mut rng) * 1.2 - sun * 0.5;
            if i % 2 == 0 {
                Ray::new(origin, sun)
            } else {
                Ray::new(origin, sun).with_range(0.0, rng.gen_range(0.1..3.0))
            }
        })
        .collect();
    for opts in option_sets() {
        let single: Vec<Option<Hit>> = rays
            .iter()
            .map(|r| scene.intersect_with(r, &opts))
            .collect();
        let occl: Vec<bool> = rays.iter().map(|r| scene.occluded_with(r, &opts)).collect();
        if opts.mask == QueryOptions::default().mask {
            let hits = single.iter().flatten().count();
            assert!(hits > 200 && hits < 4800, "{hits}");
        }
        let paths: Vec<Option<(Hit, InstancePath)>> = rays
            .iter()
            .map(|r| scene.intersect_path_with(r, &opts))
            .collect();
        let check = || {
            assert_eq!(scene.intersect_batch(&rays, &opts), single);
            assert_eq!(scene.occluded_batch(&rays, &opts), occl);
            let mut with_paths = vec![None; rays.len()];
            scene.intersect_path_batch_into(&rays, &opts, &mut with_paths);
            assert_eq!(with_paths, paths);
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
}

#[test]
fn batches_in_a_scene_of_one_mesh_answer_like_single_rays() {
    // A scene of one mesh answers a batch's single rays in one loop inside the mesh's compiled
    // traversal (`Traverse::traverse_each`), with a collector per ray. Incoherent rays, invalid
    // ones, and a run of camera rays in the middle (packets: the runs of single rays around them
    // start and end inside the batch), for every preset with float and quantized nodes, every
    // option set, a mesh that a mask hides, and scales from 1e-3 to 1e4.
    for (name, config) in every_config() {
        for scale in [1e-3, 1.0, 1e4] {
            let mut rng = Pcg64::seed_from_u64(800);
            for mesh_mask in [u32::MAX, 0b10] {
                let mut b = SceneBuilder::with_config(config);
                b.add_mesh(soup(&mut rng, 700, Vec3::ZERO, scale).with_mask(mesh_mask));
                let scene = b.build().unwrap();
                let mut rays: Vec<Ray> = (0..603).map(|_| random_ray(&mut rng, scale)).collect();
                for (k, i) in (5..rays.len()).step_by(37).enumerate() {
                    rays[i] = match k % 3 {
                        0 => rays[i].with_range(f32::NAN, 1.0),
                        1 => Ray::new(Vec3::splat(f32::INFINITY), Vec3::X),
                        _ => Ray::new(rays[i].origin, Vec3::ZERO),
                    };
                }
                let (_, camera) = camera_batches(&mut rng, scale).swap_remove(0);
                rays.splice(203..203, camera[..45].iter().copied());
                for opts in option_sets() {
                    let single: Vec<Option<Hit>> = rays
                        .iter()
                        .map(|r| scene.intersect_with(r, &opts))
                        .collect();
                    let occl: Vec<bool> =
                        rays.iter().map(|r| scene.occluded_with(r, &opts)).collect();
                    let visible = mesh_mask & opts.mask != 0;
                    let hits = single.iter().filter(|h| h.is_some()).count();
                    assert_eq!(visible, hits > 100, "{name}: {hits} hits, {opts:?}");
                    assert_eq!(occl.iter().filter(|&&o| o).count() > 100, visible);
                    let what = format!("{name}, scale {scale}, mesh mask {mesh_mask}, {opts:?}");
                    assert_eq!(scene.intersect_batch(&rays, &opts), single, "{what}");
                    assert_eq!(scene.occluded_batch(&rays, &opts), occl, "{what}");
                    let mut out = vec![None; 77];
                    scene.intersect_into(&rays[100..177], &opts, &mut out);
                    assert_eq!(out, single[100..177], "{what}");
                }
            }
        }
    }
}

/// Rows of camera rays, as a picking or rendering caller casts them: neighbours in a batch are
/// neighbouring pixels, so the batch walks them as packets. Perspective rays share the eye
/// (some as segments to a far plane, so `t_max` differs per ray); orthographic ones share a
/// direction, one set along an axis (zero components: the packet falls back to single rays).
fn camera_batches(rng: &mut Pcg64, scale: f32) -> Vec<(&'static str, Vec<Ray>)> {
    let (w, h) = (37, 23); // not multiples of the packet size: partial groups at row ends
    let eye = Vec3::new(0.3, 0.8, 3.5) * scale;
    let fwd = (Vec3::new(0.1, 0.3, 0.0) * scale - eye).normalize();
    let right = fwd.cross(Vec3::Y).normalize();
    let up = right.cross(fwd);
    let pixel = |x: usize, y: usize| {
        let px = (x as f32 + 0.5) / w as f32 * 2.0 - 1.0;
        let py = 1.0 - (y as f32 + 0.5) / h as f32 * 2.0;
        (px, py)
    };
    let grid = |f: &mut dyn FnMut(f32, f32) -> Ray| -> Vec<Ray> {
        (0..h)
            .flat_map(|y| (0..w).map(move |x| (x, y)))
            .map(|(x, y)| {
                let (px, py) = pixel(x, y);
                f(px, py)
            })
            .collect()
    };
    let perspective = grid(&mut |px, py| Ray::new(eye, fwd + (px * right + py * up) * 0.3));
    let far = 4.5 * scale;
    let segments = grid(&mut |px, py| {
        let dir = fwd + (px * right + py * up) * 0.3;
        Ray::segment(eye, eye + dir * far * rng.gen_range(0.5..1.2))
    });
    let ortho = grid(&mut |px, py| Ray::new(eye + (px * right + py * up) * scale, fwd));
    let down =
        grid(&mut |px, py| Ray::new(Vec3::new(px * scale, 3.0 * scale, py * scale), Vec3::NEG_Y));
    // Invalid rays inside coherent groups: they answer nothing, their neighbours as usual.
    let mut broken = perspective.clone();
    for (i, ray) in broken.iter_mut().enumerate().filter(|(i, _)| i % 11 == 3) {
        *ray = match i % 3 {
            0 => ray.with_range(f32::NAN, 1.0),
            1 => ray.with_range(2.0, 1.0),
            _ => Ray::new(eye, Vec3::new(f32::NAN, 1.0, 1.0)),
        };
    }
    // Looking along a diagonal of the x-z plane: the directions' largest component is x for
    // some pixels of a row and z for their neighbours, so some packets hold rays of both kinds
    // (the watertight test's axes differ within the packet).
    let side = Vec3::new(2.4, 0.8, 2.4) * scale;
    let diagonal_fwd = (Vec3::new(0.0, 0.3, 0.0) * scale - side).normalize();
    let diagonal_right = diagonal_fwd.cross(Vec3::Y).normalize();
    let diagonal_up = diagonal_right.cross(diagonal_fwd);
    // Fields of view wide enough that neighbouring pixels are no packet (single rays), and
    // narrow enough that they are (eight neighbours within `CONE_SPREAD`).
    let diagonal = |spread: f32| {
        grid(&mut |px, py| {
            Ray::new(
                side,
                diagonal_fwd + (px * diagonal_right + py * diagonal_up) * spread,
            )
        })
    };
    let (diagonal_wide, diagonal_narrow) = (diagonal(0.3), diagonal(0.03));
    let narrow = grid(&mut |px, py| Ray::new(eye, fwd + (px * right + py * up) * 0.03));
    vec![
        ("perspective", perspective),
        ("narrow perspective", narrow),
        ("diagonal", diagonal_wide),
        ("narrow diagonal", diagonal_narrow),
        ("segments", segments),
        ("orthographic", ortho),
        ("axis-aligned", down),
        ("with invalid rays", broken),
    ]
}

#[test]
fn packets_of_camera_rays_answer_like_single_rays() {
    // Meshes only (the scenes batches walk as packets), for every preset with float and quantized
    // nodes, every option set, at small and large scales: each batch answer must be the single
    // query's (and so brute force's, which the other tests check), bit for bit.
    for (name, config) in every_config() {
        for scale in [1e-3, 1.0, 1e4] {
            let mut rng = Pcg64::seed_from_u64(700);
            let mut b = SceneBuilder::with_config(config);
            b.add_mesh(soup(&mut rng, 500, Vec3::ZERO, scale));
            b.add_mesh(soup(&mut rng, 100, Vec3::X * scale, scale * 0.5).with_mask(0b10));
            b.add_mesh(icosphere(3, Vec3::new(0.0, 0.6, 0.0) * scale, scale * 0.5));
            let scene = b.build().unwrap();
            for (kind, rays) in camera_batches(&mut rng, scale) {
                let groups = || {
                    rays.chunks_exact(8)
                        .map(|g| <&[Ray; 8]>::try_from(g).unwrap())
                };
                if kind.starts_with("narrow") {
                    // Not vacuous: most groups of eight are walked as packets.
                    let packets = groups()
                        .filter(|g| {
                            raypick::simd::PacketBoxRay::of_eight(g).1.is_some_and(|p| {
                                p.is_coherent(scene.bounds().extent().max_element())
                            })
                        })
                        .count();
                    assert!(packets * 2 > rays.len() / 8, "{kind}: {packets} packets");
                }
                if kind.ends_with("diagonal") {
                    // Some groups mix rays whose largest direction component is x with rays
                    // whose largest is z: the watertight test's axes differ within them.
                    let largest_is_x = |r: &Ray| r.dir.x.abs() > r.dir.z.abs();
                    assert!(
                        groups().any(|g| g.iter().any(largest_is_x) && !g.iter().all(largest_is_x))
                    );
                }
                for opts in option_sets() {
                    let single: Vec<Option<Hit>> = rays
                        .iter()
                        .map(|r| scene.intersect_with(r, &opts))
                        .collect();
                    let hits = single.iter().filter(|h| h.is_some()).count();
                    assert!(hits > rays.len() / 8, "{name} {kind}: {hits} hits");
                    let batch = scene.intersect_batch(&rays, &opts);
                    for (i, (b, s)) in batch.iter().zip(&single).enumerate() {
                        assert_eq!(b, s, "{name}, scale {scale}, {kind}, ray {i}, {opts:?}");
                    }
                    let occl: Vec<bool> =
                        rays.iter().map(|r| scene.occluded_with(r, &opts)).collect();
                    assert_eq!(scene.occluded_batch(&rays, &opts), occl, "{name} {kind}");
                    // Into buffers holding other answers: every answer is written, misses too
                    // (packets that miss the scene's box are answered without a walk).
                    let mut into = vec![single.iter().flatten().next().copied(); rays.len()];
                    scene.intersect_batch_into(&rays, &opts, &mut into);
                    assert_eq!(into, batch, "{name} {kind}: into a used buffer");
                    let mut into = vec![true; rays.len()];
                    scene.occluded_batch_into(&rays, &opts, &mut into);
                    assert_eq!(into, occl, "{name} {kind}: into a used buffer");
                }
                for ray in rays.iter().step_by(17) {
                    assert_matches_brute_force(&scene, ray, &QueryOptions::default());
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Precision far from the origin, refit

#[test]
fn a_mesh_far_from_the_origin_is_hit_like_the_same_mesh_at_the_origin() {
    // Coordinates on a 1/8 grid keep `v + T` exact in f32 up to |T| < 2^21, so the two meshes are
    // the same shape; ray origins are on the grid too and directions are untouched.
    let mut rng = Pcg64::seed_from_u64(600);
    let grid = |rng: &mut Pcg64, half: i32| {
        Vec3::new(
            rng.gen_range(-half..=half) as f32 / 8.0,
            rng.gen_range(-half..=half) as f32 / 8.0,
            rng.gen_range(-half..=half) as f32 / 8.0,
        )
    };
    let n = 300;
    let mut v = Vec::new();
    for _ in 0..n {
        let p = grid(&mut rng, 96);
        for _ in 0..3 {
            v.push(p + grid(&mut rng, 16));
        }
    }
    let idx: Vec<[u32; 3]> = (0..n as u32)
        .map(|i| [3 * i, 3 * i + 1, 3 * i + 2])
        .collect();
    for offset in [
        Vec3::new(131072.0, -262144.0, 524288.0),
        Vec3::new(-1048576.0, 1048576.0, 123456.0),
    ] {
        let moved: Vec<Vec3> = v.iter().map(|&p| p + offset).collect();
        assert!(
            moved.iter().zip(&v).all(|(m, p)| *m - offset == *p),
            "exact translation"
        );
        let build = |verts: Vec<Vec3>| {
            let mut b = SceneBuilder::new();
            b.add_mesh(TriMesh::new(verts, idx.clone()));
            b.build().unwrap()
        };
        let (near, far) = (build(v.clone()), build(moved));
        let mut hits = 0;
        for _ in 0..1500 {
            let o = grid(&mut rng, 200);
            let d = rand_vec(&mut rng) - o / 16.0;
            let a = near.intersect(&Ray::new(o, d));
            let b = far.intersect(&Ray::new(o + offset, d));
            assert_eq!(a.is_some(), b.is_some());
            let (Some(a), Some(b)) = (a, b) else { continue };
            hits += 1;
            assert_eq!((a.prim, a.t, a.u, a.v), (b.prim, b.t, b.u, b.v));
            assert_eq!(a.normal, b.normal);
            // The point is exact up to the rounding of the output coordinate (half an ulp at 2^20).
            assert!(
                (b.point - offset - a.point).abs().max_element() <= 0.0625,
                "{} vs {}",
                b.point - offset,
                a.point
            );
        }
        assert!(hits > 300, "{hits}");
    }
}

#[test]
fn updating_vertices_refits_to_what_a_rebuild_answers() {
    for (_, config) in every_config() {
        refit_matches_rebuild(config);
    }
}

fn refit_matches_rebuild(config: BuildConfig) {
    let mut rng = Pcg64::seed_from_u64(700);
    let mesh = icosphere(3, Vec3::ZERO, 1.0);
    let mut b = SceneBuilder::with_config(config);
    let id = b.add_mesh(mesh.clone());
    b.add_spheres(Spheres::new(vec![Vec3::new(3.0, 0.0, 0.0)], vec![0.5]));
    let mut scene = b.build().unwrap();
    let scene_vertices = |scene: &raypick::Scene| match scene.geometry(id) {
        Some(raypick::Geometry::Mesh(m)) => m.vertices().to_vec(),
        other => panic!("not a mesh: {other:?}"),
    };
    // Adding a clone shares the arrays (no copy)...
    match scene.geometry(id) {
        Some(raypick::Geometry::Mesh(m)) => {
            assert_eq!(m.vertices().as_ptr(), mesh.vertices().as_ptr());
        }
        other => panic!("not a mesh: {other:?}"),
    }
    let original = mesh.vertices().to_vec();
    for step in 1..4 {
        let s = step as f32;
        let moved: Vec<Vec3> = mesh
            .vertices()
            .iter()
            .map(|p| {
                Vec3::new(
                    p.x * (1.0 + 0.3 * s) + (p.y * s).sin(),
                    p.y + 0.5 * s,
                    p.z * 0.7,
                ) + Vec3::new(1e3, 0.0, 0.0) * s
            })
            .collect();
        scene.update_mesh_vertices(id, &moved).unwrap();
        // ... and an update copies on write: the caller's mesh keeps its vertices.
        assert_eq!(mesh.vertices(), &original[..]);
        assert_eq!(scene_vertices(&scene), moved);
        scene.validate().expect("valid after refit");
        let mut fresh = SceneBuilder::with_config(config);
        fresh.add_mesh(TriMesh::new(moved.clone(), mesh.indices().to_vec()));
        fresh.add_spheres(Spheres::new(vec![Vec3::new(3.0, 0.0, 0.0)], vec![0.5]));
        let fresh = fresh.build().unwrap();
        assert_eq!(scene.bounds(), fresh.bounds());
        let target_center = Vec3::new(1e3 * s, 0.5 * s, 0.0);
        for _ in 0..300 {
            let o = target_center + rand_vec(&mut rng).normalize() * 6.0;
            let ray = Ray::new(o, target_center + rand_vec(&mut rng) * 1.5 - o);
            // Same mesh frame (box centre) in both, so the answers are identical.
            assert_eq!(scene.intersect(&ray), fresh.intersect(&ray));
            assert_eq!(
                scene.count_intersections(&ray),
                fresh.count_intersections(&ray)
            );
        }
    }
    assert!(matches!(
        scene.update_mesh_vertices(1, &[]),
        Err(BuildError::NotAMesh { geom: 1 })
    ));
    assert!(matches!(
        scene.update_mesh_vertices(id, &[Vec3::ZERO]),
        Err(BuildError::VertexCountMismatch { .. })
    ));
    let mut bad = mesh.vertices().to_vec();
    bad[5] = Vec3::NAN;
    assert!(matches!(
        scene.update_mesh_vertices(id, &bad),
        Err(BuildError::NonFiniteVertex { vertex: 5, .. })
    ));
    scene.validate().unwrap();
}

/// Diffuse bounces off a room's floor, through every path of the scene (single rays, batches that
/// form packets, any-hit): the floor is two triangles a few thousand units wide in the plane
/// `y = 0`, where the spawn offset is the float one (`2⁻¹⁶`) and the kernel's `t` error grows with
/// the floor's size; the kernel's conservative `t` keeps every bounce from re-hitting the floor.
#[test]
fn bounces_off_a_huge_floor_never_rehit_it() {
    use raypick::geom::offset::offset_ray_origin;
    let mut rng = Pcg64::seed_from_u64(0xF1_00_F2);
    for half in [30.0f32, 3000.0] {
        let corners = [
            Vec3::new(-half, 0.0, -0.7 * half),
            Vec3::new(1.1 * half, 0.0, -0.8 * half),
            Vec3::new(0.9 * half, 0.0, half),
            Vec3::new(-1.2 * half, 0.0, 0.8 * half),
        ];
        // A thin post in a corner shares the floor's leaf and lifts its box off the plane, as the
        // furniture of a real room does (a flat box alone would already turn the bounces away).
        let post = [
            Vec3::new(-0.9 * half, 0.0, -0.6 * half),
            Vec3::new(-0.9 * half, 0.5 * half, -0.6 * half),
            Vec3::new(-0.89 * half, 0.0, -0.6 * half),
        ];
        let mut vertices = corners.to_vec();
        vertices.extend(post);
        let mut builder = SceneBuilder::new();
        builder.add_mesh(TriMesh::new(
            vertices,
            vec![[0, 2, 1], [0, 3, 2], [4, 5, 6]],
        ));
        let scene = builder.build().unwrap();
        let eye = Vec3::new(0.1 * half, 0.05 * half, 0.2 * half);
        let camera: Vec<Ray> = (0..20_000)
            .map(|_| {
                let target = Vec3::new(
                    rng.gen_range(-0.9..0.9) * half,
                    0.0,
                    rng.gen_range(-0.6..0.6) * half,
                );
                Ray::new(eye, target - eye)
            })
            .collect();
        let opts = QueryOptions::default();
        let mut bounces = Vec::new();
        for hit in scene.intersect_batch(&camera, &opts).into_iter().flatten() {
            let n = if hit.normal.y > 0.0 {
                hit.normal
            } else {
                -hit.normal
            };
            let origin = offset_ray_origin(hit.point, n);
            for _ in 0..5 {
                let mut d = rand_vec(&mut rng);
                if d.y < 0.0 {
                    d.y = -d.y;
                }
                if d.y > 0.0 {
                    bounces.push(Ray::new(origin, d));
                }
            }
        }
        assert!(bounces.len() > 90_000, "{}", bounces.len());
        let on_floor = |hit: &Option<Hit>| hit.is_some_and(|h| h.prim < 2);
        let hits = scene.intersect_batch(&bounces, &opts);
        let rehits = hits.iter().filter(|h| on_floor(h)).count();
        assert_eq!(rehits, 0, "closest hit, batch, floor of half-size {half}");
        // Any hit: a bounce may hit the post (the f64 plane test tells which ones may).
        let occluded = scene.occluded_batch(&bounces, &opts);
        for (ray, &o) in bounces.iter().zip(&occluded) {
            let post_hit =
                raypick::geom::triangle::watertight(ray, post[0], post[1], post[2], Culling::None);
            assert_eq!(o, post_hit.is_some(), "any hit, batch: {ray:?}");
        }
        for ray in bounces.iter().step_by(37) {
            assert!(!on_floor(&scene.intersect(ray)), "single ray {ray:?}");
        }
    }
}

/// A scene of meshes among other items (spheres, an instance, a mirrored instance) answers a batch
/// in two passes: the mesh tree with the batch's fast walks (packets for camera rays, the
/// interleaved walk for the rest), then the other items. Every answer must be the single query's,
/// bit for bit, for camera and incoherent rays and every option set.
#[test]
fn batches_in_a_scene_of_meshes_and_instances_answer_like_single_rays() {
    // With meshes and spheres beside the instances, and with the instances alone.
    for (scale, alone) in [(1e-3, false), (1.0, false), (1e4, false), (1.0, true)] {
        let mut rng = Pcg64::seed_from_u64(900);
        let inner = {
            let mut b = SceneBuilder::new();
            b.add_mesh(soup(&mut rng, 200, Vec3::ZERO, scale * 0.3));
            Arc::new(b.build().unwrap())
        };
        let mut b = SceneBuilder::new();
        if !alone {
            b.add_mesh(soup(&mut rng, 500, Vec3::ZERO, scale));
            b.add_mesh(icosphere(3, Vec3::new(0.0, 0.6, 0.0) * scale, scale * 0.5).with_mask(0b10));
            let centers = (0..40).map(|_| rand_vec(&mut rng) * scale).collect();
            let radii = (0..40).map(|_| rng.gen_range(0.02..0.1) * scale).collect();
            b.add_spheres(Spheres::new(centers, radii));
        }
        b.add_instance(
            Arc::clone(&inner),
            Affine3A::from_translation(Vec3::new(0.5, 0.2, 0.3) * scale),
        );
        b.add_instance(
            inner,
            Affine3A::from_scale_rotation_translation(
                Vec3::new(-1.0, 0.7, 1.2),
                Quat::from_rotation_y(0.4),
                Vec3::new(-0.4, 0.1, 0.2) * scale,
            ),
        );
        let scene = b.build().unwrap();
        let mut sets = camera_batches(&mut rng, scale);
        sets.push((
            "incoherent",
            (0..1500).map(|_| random_ray(&mut rng, scale)).collect(),
        ));
        let mut instance_hits = 0;
        for (kind, rays) in sets {
            for (k, opts) in option_sets().into_iter().enumerate() {
                let single: Vec<Option<Hit>> = rays
                    .iter()
                    .map(|r| scene.intersect_with(r, &opts))
                    .collect();
                let on_instances = single.iter().flatten().filter(|h| h.instance.is_some());
                if k == 0 {
                    instance_hits += on_instances.count();
                }
                let what = format!("scale {scale}, {kind}, {opts:?}");
                let batch = scene.intersect_batch(&rays, &opts);
                for (i, (b, s)) in batch.iter().zip(&single).enumerate() {
                    assert_eq!(b, s, "{what}, ray {i}");
                }
                let occl: Vec<bool> = rays.iter().map(|r| scene.occluded_with(r, &opts)).collect();
                assert_eq!(scene.occluded_batch(&rays, &opts), occl, "{what}");
                let mut into = vec![single.iter().flatten().next().copied(); rays.len()];
                scene.intersect_batch_into(&rays, &opts, &mut into);
                assert_eq!(into, batch, "{what}: into a used buffer");
                let mut paths = vec![None; rays.len()];
                scene.intersect_path_batch_into(&rays, &opts, &mut paths);
                for (i, (p, s)) in paths.iter().zip(&single).enumerate() {
                    assert_eq!(p.map(|(h, _)| h), *s, "{what}, ray {i}: with paths");
                    assert_eq!(
                        *p,
                        scene.intersect_path_with(&rays[i], &opts),
                        "{what}, ray {i}"
                    );
                }
            }
            for ray in rays.iter().step_by(23) {
                assert_matches_brute_force(&scene, ray, &QueryOptions::default());
            }
        }
        assert!(
            instance_hits > 50,
            "scale {scale}: {instance_hits} hits on the instances"
        );
    }
}
