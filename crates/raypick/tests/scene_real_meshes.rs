//! The BVH against brute force on real meshes (`../shared/data`): the Stanford bunny (69,451
//! triangles) and the conference room (331,179), for every build preset. Closest hits must be the
//! same triangle at the same `t` (bit for bit: same kernel, same data); any-hit and crossing counts
//! must agree too, for incoherent rays and for camera rays (which batches walk as packets). The
//! brute force is computed once per ray (it does not depend on the preset).

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use raypick::bvh::BuildConfig;
use raypick::glam::Vec3;
use raypick::{Aabb, Hit, QueryOptions, Ray, Scene, SceneBuilder, TriMesh};

mod common;
use common::{camera_rays, read_obj};

/// Rays from a sphere of twice the box radius around the box centre to uniform points in the box
/// (the shared "incoherent" workload), plus a few axis-aligned ones (zero direction components).
fn incoherent_rays(bounds: Aabb, n: usize, seed: u64) -> Vec<Ray> {
    let mut rng = Pcg64::seed_from_u64(seed);
    let (c, r) = (bounds.center(), bounds.extent().length() * 0.5);
    (0..n)
        .map(|i| {
            let target = bounds.min + bounds.extent() * Vec3::new(rng.gen(), rng.gen(), rng.gen());
            if i % 50 == 0 {
                let axis = [Vec3::X, Vec3::Y, Vec3::Z][i / 50 % 3];
                return Ray::new(target - axis * 2.0 * r, axis);
            }
            let dir = Vec3::new(
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
            );
            let origin = c + dir.normalize_or(Vec3::X) * 2.0 * r;
            Ray::new(origin, (target - origin).normalize())
        })
        .collect()
}

struct Reference {
    closest: Vec<Option<Hit>>,
    count: Vec<usize>,
}

fn reference(scene: &Scene, rays: &[Ray], count_every: usize) -> Reference {
    let opts = QueryOptions::default();
    Reference {
        closest: rays
            .iter()
            .map(|r| scene.intersect_brute_force(r, &opts))
            .collect(),
        count: rays
            .iter()
            .step_by(count_every)
            .map(|r| scene.count_intersections_brute_force(r, &opts))
            .collect(),
    }
}

fn check(mesh: &TriMesh, rays: &[Ray], count_every: usize, min_hits: usize) {
    let mut reference_data = None;
    let compact = BuildConfig {
        compact: true,
        ..BuildConfig::BALANCED
    };
    for (name, config) in BuildConfig::PRESETS
        .into_iter()
        .chain([("balanced, compact", compact)])
    {
        let mut b = SceneBuilder::with_config(config);
        b.add_mesh(mesh.clone());
        let scene = b.build().unwrap();
        scene.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = reference_data.get_or_insert_with(|| reference(&scene, rays, count_every));
        let got = scene.intersect_batch(rays, &QueryOptions::default());
        let mut hits = 0;
        for (i, (g, w)) in got.iter().zip(&want.closest).enumerate() {
            assert_eq!(g, w, "{name}: ray {i} {:?}", rays[i]);
            hits += g.is_some() as usize;
            assert_eq!(
                scene.occluded(&rays[i]),
                w.is_some(),
                "{name}: any-hit, ray {i}"
            );
        }
        assert!(hits >= min_hits, "{name}: only {hits} hits");
        for (k, ray) in rays.iter().step_by(count_every).enumerate() {
            assert_eq!(
                scene.count_intersections(ray),
                want.count[k],
                "{name}: count, ray {ray:?}"
            );
        }
        let stats = scene.geometry_stats(0).unwrap();
        eprintln!(
            "{}: {name}: {} nodes, {} leaves, depth {}, mean leaf {:.2}, SAH {:.1}, {} KiB",
            mesh.name().unwrap_or_default(),
            stats.nodes,
            stats.leaves,
            stats.depth,
            stats.mean_leaf_size,
            stats.sah_cost,
            scene.accel_memory_bytes() / 1024
        );
    }
}

#[test]
fn bunny_bvh_equals_brute_force_for_every_preset() {
    let mesh = read_obj("obj/stanford-bunny.obj");
    assert_eq!(mesh.num_triangles(), 69_451);
    let mut rays = incoherent_rays(mesh.bounds(), 2000, 1);
    rays.extend(camera_rays(mesh.bounds(), 40));
    check(&mesh, &rays, 4, 1400);
}

#[test]
fn conference_bvh_equals_brute_force_for_every_preset() {
    let mesh = read_obj("scenes/conference.obj");
    assert_eq!(mesh.num_triangles(), 331_179);
    let mut rays = incoherent_rays(mesh.bounds(), 500, 2);
    rays.extend(camera_rays(mesh.bounds(), 24));
    check(&mesh, &rays, 10, 600);
}
