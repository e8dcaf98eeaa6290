//! Meshes built with spatial splits ([`BuildConfig::SPATIAL`]), whose trees hold some triangles
//! in several leaves, answer every query as the brute force and as a tree without splits do:
//! closest and any hits, every hit and crossing counts once per triangle, closest points,
//! winding numbers, after a refit, and through a scene file.

mod common;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use raypick::bvh::BuildConfig;
use raypick::glam::Vec3;
use raypick::{QueryOptions, Ray, Scene, SceneBuilder, TriMesh};

/// Long slivers across a 100-unit room (walls, beams) among small triangles: the kind of mesh
/// whose boxes overlap whatever object split is chosen, where spatial splits cut triangles.
fn slivers_and_clutter(seed: u64) -> TriMesh {
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut vertices = Vec::new();
    let mut indices = Vec::new();
    let point = |rng: &mut Pcg64, scale: f32| {
        Vec3::new(rng.gen(), rng.gen(), rng.gen()) * scale - Vec3::splat(scale / 2.0)
    };
    for i in 0..1500u32 {
        let (a, b, c) = if i % 5 == 0 {
            // A sliver from one side of the room to the other.
            let a = point(&mut rng, 100.0);
            let b = point(&mut rng, 100.0);
            let c = a + (b - a) * 0.5 + point(&mut rng, 2.0);
            (a, b, c)
        } else {
            let a = point(&mut rng, 100.0);
            (a, a + point(&mut rng, 4.0), a + point(&mut rng, 4.0))
        };
        let k = vertices.len() as u32;
        vertices.extend([a, b, c]);
        indices.push([k, k + 1, k + 2]);
    }
    TriMesh::new(vertices, indices)
}

fn scene(mesh: &TriMesh, config: BuildConfig) -> Scene {
    let mut b = SceneBuilder::with_config(config);
    b.add_mesh(mesh.clone());
    b.build().unwrap()
}

fn rays(n: usize, seed: u64) -> Vec<Ray> {
    let mut rng = Pcg64::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let o = Vec3::new(rng.gen(), rng.gen(), rng.gen()) * 160.0 - Vec3::splat(80.0);
            let d = Vec3::new(rng.gen(), rng.gen(), rng.gen()) * 2.0 - Vec3::ONE;
            Ray::new(o, d.normalize_or(Vec3::X))
        })
        .collect()
}

fn hit_key(h: &Option<raypick::Hit>) -> Option<(u32, u32, f32)> {
    h.map(|h| (h.geom, h.prim, h.t))
}

#[test]
fn spatial_splits_repeat_triangles_and_validate() {
    let mesh = slivers_and_clutter(1);
    let split = scene(&mesh, BuildConfig::SPATIAL);
    let stats = split.geometry_stats(0).unwrap();
    assert_eq!(stats.prims, mesh.indices().len());
    // The leaves hold more triangles than the mesh has: the tests here exercise repeats.
    let positions: usize = stats
        .leaf_size_histogram
        .iter()
        .enumerate()
        .map(|(size, leaves)| size * leaves)
        .sum();
    assert!(
        positions > mesh.indices().len() * 21 / 20,
        "too few triangles split: {positions} positions for {} triangles",
        mesh.indices().len()
    );
    split.validate().unwrap();
    let plain = scene(&mesh, BuildConfig::HIGH_QUALITY);
    assert!(
        stats.sah_cost < plain.geometry_stats(0).unwrap().sah_cost,
        "spatial splits should lower the SAH cost of slivers"
    );
}

/// The preset keeps the tree of lower SAH cost: never a costlier tree than the same settings
/// without spatial splits, whichever of the two a mesh favours.
#[test]
fn the_spatial_preset_keeps_the_cheaper_tree() {
    for mesh in [
        slivers_and_clutter(9),
        common::read_obj("obj/stanford-bunny.obj"),
    ] {
        let split = scene(&mesh, BuildConfig::SPATIAL)
            .geometry_stats(0)
            .unwrap();
        let plain = scene(&mesh, BuildConfig::HIGH_QUALITY)
            .geometry_stats(0)
            .unwrap();
        assert!(
            split.sah_cost <= plain.sah_cost,
            "{} triangles: {} with splits against {} without",
            mesh.indices().len(),
            split.sah_cost,
            plain.sah_cost
        );
    }
}

/// Every ray's closest hit, every hit and crossing count against the brute force over the same
/// scene, each triangle reported once; returns the crossings counted (so that a test can check
/// its rays cross something).
fn check_against_brute_force(scene: &Scene, rays: &[Ray]) -> usize {
    let opts = QueryOptions::default();
    let mut crossings = 0;
    for (i, ray) in rays.iter().enumerate() {
        let reference = scene.intersect_brute_force(ray, &opts);
        assert_eq!(
            hit_key(&scene.intersect(ray)),
            hit_key(&reference),
            "ray {i}"
        );
        let all = hits_of(&scene.intersect_all(ray));
        let all_reference = hits_of(&scene.intersect_all_brute_force(ray, &opts));
        assert_eq!(all, all_reference, "all hits, ray {i}");
        let mut prims: Vec<u32> = all.iter().map(|&(p, _)| p).collect();
        prims.sort_unstable();
        prims.dedup();
        assert_eq!(prims.len(), all.len(), "a triangle reported twice, ray {i}");
        assert_eq!(scene.count_intersections(ray), all.len(), "count, ray {i}");
        assert_eq!(
            scene.count_intersections_brute_force(ray, &opts),
            all.len(),
            "brute-force count, ray {i}"
        );
        crossings += all.len();
    }
    crossings
}

fn hits_of(hits: &[raypick::Hit]) -> Vec<(u32, f32)> {
    hits.iter().map(|h| (h.prim, h.t)).collect()
}

#[test]
fn every_ray_query_answers_as_the_brute_force() {
    let mesh = slivers_and_clutter(2);
    let split = scene(&mesh, BuildConfig::SPATIAL);
    let plain = scene(&mesh, BuildConfig::BALANCED);
    let opts = QueryOptions::default();
    let rays = rays(4000, 3);
    let crossings = check_against_brute_force(&split, &rays);
    assert!(crossings > 300, "the rays cross too little: {crossings}");
    // The batches, and a tree without splits: the same answers.
    let batch = split.intersect_batch(&rays, &opts);
    let occluded = split.occluded_batch(&rays, &opts);
    for (i, ray) in rays.iter().enumerate() {
        let reference = plain.intersect(ray);
        assert_eq!(hit_key(&batch[i]), hit_key(&reference), "batch ray {i}");
        assert_eq!(occluded[i], reference.is_some(), "any hit, ray {i}");
        assert_eq!(
            hits_of(&split.intersect_all(ray)),
            hits_of(&plain.intersect_all(ray)),
            "all hits against a tree without splits, ray {i}"
        );
    }
}

#[test]
fn point_queries_and_winding_numbers_count_each_triangle_once() {
    // A closed mesh (the bunny is open; an icosphere is closed) built with splits: the winding
    // number is 1 inside and 0 outside only if each triangle counts once.
    let mut b = SceneBuilder::with_config(BuildConfig::SPATIAL);
    let sphere = raypick::scene::shapes::icosphere(3, Vec3::ZERO, 10.0);
    b.add_mesh(sphere.clone());
    b.add_mesh(slivers_and_clutter(4));
    let split = b.build().unwrap();
    let mut b = SceneBuilder::with_config(BuildConfig::SPATIAL);
    b.add_mesh(sphere);
    let alone = b.build().unwrap();
    let plain = {
        let mut b = SceneBuilder::with_config(BuildConfig::BALANCED);
        b.add_mesh(raypick::scene::shapes::icosphere(3, Vec3::ZERO, 10.0));
        b.add_mesh(slivers_and_clutter(4));
        b.build().unwrap()
    };
    let mut rng = Pcg64::seed_from_u64(5);
    for _ in 0..300 {
        let p = Vec3::new(rng.gen(), rng.gen(), rng.gen()) * 120.0 - Vec3::splat(60.0);
        let exact_split = split.winding_number_exact(p);
        let exact_plain = plain.winding_number_exact(p);
        assert!(
            (exact_split - exact_plain).abs() < 1e-3,
            "exact winding at {p}: {exact_split} split, {exact_plain} plain"
        );
        let fast = split.winding_number(p);
        assert!(
            (fast - exact_split).abs() < 0.02,
            "hierarchical winding at {p}: {fast} against exact {exact_split}"
        );
        let (a, b) = (
            split.closest_point(p).unwrap(),
            plain.closest_point(p).unwrap(),
        );
        assert_eq!(a.distance, b.distance, "closest distance at {p}");
    }
    // Near the sphere alone the winding number is the solid's indicator.
    for p in [
        Vec3::ZERO,
        Vec3::new(3.0, -2.0, 1.0),
        Vec3::new(0.0, 0.0, 9.0),
    ] {
        let (w, exact) = (alone.winding_number(p), alone.winding_number_exact(p));
        assert!(
            (exact - 1.0).abs() < 1e-4,
            "winding {exact} inside the sphere at {p}"
        );
        assert!(
            (w - 1.0).abs() < 0.02,
            "hierarchical winding {w} inside the sphere at {p}"
        );
    }
}

#[test]
fn a_refit_and_a_scene_file_keep_the_answers() {
    let mesh = slivers_and_clutter(6);
    let mut split = scene(&mesh, BuildConfig::SPATIAL);
    let rays = rays(2000, 7);

    // Through a scene file: the same tree, the same answers.
    let loaded = Scene::from_bytes(&split.to_bytes()).unwrap();
    assert_eq!(loaded.config(), split.config());
    loaded.validate().unwrap();
    for ray in &rays {
        assert_eq!(
            hit_key(&loaded.intersect(ray)),
            hit_key(&split.intersect(ray))
        );
        assert_eq!(
            loaded.count_intersections(ray),
            split.count_intersections(ray)
        );
    }

    // Moved vertices: the refit tree (whole triangles' boxes in the leaves) against the brute
    // force.
    let moved: Vec<Vec3> = mesh
        .vertices()
        .iter()
        .map(|v| *v * 1.1 + Vec3::new(v.y * 0.05, 0.0, 1.0))
        .collect();
    split.update_mesh_vertices(0, &moved).unwrap();
    split.validate().unwrap();
    check_against_brute_force(&split, &rays);
}

#[test]
fn a_real_room_keeps_its_answers() {
    let mesh = common::read_obj("scenes/sponza-dabrovic.obj");
    let split = scene(&mesh, BuildConfig::SPATIAL);
    let plain = scene(&mesh, BuildConfig::BALANCED);
    split.validate().unwrap();
    let bounds = split.bounds();
    let mut rng = Pcg64::seed_from_u64(8);
    let opts = QueryOptions::default();
    let rays: Vec<Ray> = (0..20000)
        .map(|_| {
            let o =
                bounds.min + (bounds.max - bounds.min) * Vec3::new(rng.gen(), rng.gen(), rng.gen());
            let d = Vec3::new(rng.gen(), rng.gen(), rng.gen()) * 2.0 - Vec3::ONE;
            Ray::new(o, d.normalize_or(Vec3::Y))
        })
        .collect();
    let (a, b) = (
        split.intersect_batch(&rays, &opts),
        plain.intersect_batch(&rays, &opts),
    );
    for i in 0..rays.len() {
        assert_eq!(hit_key(&a[i]), hit_key(&b[i]), "ray {i}");
    }
}
