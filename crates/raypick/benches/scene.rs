//! Scene benchmarks on the shared workload (BENCHMARKS.md): the Stanford bunny (69,451 triangles),
//! incoherent rays (origins on a sphere of twice the box radius, aimed at uniform points in the box)
//! and primary rays (a 512×512 pinhole camera at `centre + (0, 0.6, 2.2)·radius`, 45° vertical field
//! of view). Throughput is reported in rays per second (criterion's "elem/s"); single-thread figures
//! loop over `Scene::intersect`/`occluded`, the batch figures use `intersect_batch` on all cores and
//! `intersect_into` / `occluded_into` on one thread (the batch walk, packets for primary rays).
//!
//! Run: `cargo bench -p raypick --bench scene`.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use raypick::bvh::BuildConfig;
use raypick::glam::Vec3;
use raypick::{Aabb, QueryOptions, Ray, Scene, SceneBuilder, TriMesh};

#[path = "../tests/common/mod.rs"]
mod common;
use common::{camera_rays, read_obj};

const BUNNY: &str = "obj/stanford-bunny.obj";

fn incoherent(bounds: Aabb, n: usize) -> Vec<Ray> {
    let mut rng = Pcg64::seed_from_u64(7);
    let (c, r) = (bounds.center(), bounds.extent().length() * 0.5);
    (0..n)
        .map(|_| {
            let target = bounds.min + bounds.extent() * Vec3::new(rng.gen(), rng.gen(), rng.gen());
            let on_sphere = loop {
                let p = Vec3::new(
                    rng.gen_range(-1.0..1.0),
                    rng.gen_range(-1.0..1.0),
                    rng.gen_range(-1.0..1.0),
                );
                if p.length_squared() <= 1.0 && p.length_squared() > 1e-6 {
                    break p.normalize();
                }
            };
            let origin = c + on_sphere * 2.0 * r;
            Ray::new(origin, (target - origin).normalize())
        })
        .collect()
}

fn bunny_scene(config: BuildConfig) -> (TriMesh, Scene) {
    let mesh = read_obj(BUNNY);
    let mut b = SceneBuilder::with_config(config);
    b.add_mesh(mesh.clone());
    (mesh, b.build().unwrap())
}

fn bench(c: &mut Criterion) {
    let (mesh, _) = bunny_scene(BuildConfig::default());

    let mut build = c.benchmark_group("build_bunny");
    build.sample_size(10);
    for (name, config) in BuildConfig::PRESETS {
        build.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| {
                let mut sb = SceneBuilder::with_config(config);
                sb.add_mesh(mesh.clone());
                sb.build().unwrap()
            })
        });
    }
    build.finish();

    let bounds = mesh.bounds();
    // The SAH's primitive/node cost ratio decides leaf sizes: cheaper primitives mean bigger leaves,
    // fewer nodes and less memory traffic. Charging per triangle (block 1) or per block of four.
    {
        let rays = incoherent(bounds, 100_000);
        let primary_rays = camera_rays(bounds, 256);
        let mut g = c.benchmark_group("leaf_cost");
        g.sample_size(10);
        for (isect, block, max_leaf) in [(0.3, 1, 8), (0.5, 4, 8), (0.8, 4, 8), (1.2, 4, 8)] {
            let config = BuildConfig {
                intersection_cost: isect,
                block_size: block,
                max_leaf_size: max_leaf,
                ..BuildConfig::BALANCED
            };
            let (_, scene) = bunny_scene(config);
            let s = scene.geometry_stats(0).unwrap();
            eprintln!(
                "isect {isect} block {block} max_leaf {max_leaf}: {} nodes, mean leaf {:.2}, SAH {:.1}",
                s.nodes, s.mean_leaf_size, s.sah_cost
            );
            g.throughput(Throughput::Elements(rays.len() as u64));
            g.bench_function(
                format!("incoherent/isect_{isect}_block_{block}_leaf_{max_leaf}"),
                |b| b.iter(|| rays.iter().filter(|r| scene.intersect(r).is_some()).count()),
            );
            g.throughput(Throughput::Elements(primary_rays.len() as u64));
            g.bench_function(
                format!("primary/isect_{isect}_block_{block}_leaf_{max_leaf}"),
                |b| {
                    b.iter(|| {
                        primary_rays
                            .iter()
                            .filter(|r| scene.intersect(r).is_some())
                            .count()
                    })
                },
            );
        }
        g.finish();
    }
    let sets = [
        ("incoherent", incoherent(bounds, 200_000)),
        ("primary", camera_rays(bounds, 512)),
    ];
    let opts = QueryOptions::default();
    for (name, config) in BuildConfig::PRESETS {
        let (_, scene) = bunny_scene(config);
        let mut g = c.benchmark_group(format!("bunny_{name}"));
        g.sample_size(10);
        for (set, rays) in &sets {
            g.throughput(Throughput::Elements(rays.len() as u64));
            g.bench_function(format!("closest_1t/{set}"), |b| {
                b.iter(|| rays.iter().filter(|r| scene.intersect(r).is_some()).count())
            });
            g.bench_function(format!("occluded_1t/{set}"), |b| {
                b.iter(|| rays.iter().filter(|r| scene.occluded(r)).count())
            });
            if name == "balanced" {
                g.bench_function(format!("closest_batch/{set}"), |b| {
                    b.iter(|| scene.intersect_batch(rays, &opts))
                });
                // The batch walk on one thread: primary rays go through the packet path.
                let mut hits = vec![None; rays.len()];
                g.bench_function(format!("closest_batch_1t/{set}"), |b| {
                    b.iter(|| scene.intersect_into(rays, &opts, &mut hits))
                });
                let mut occluded = vec![false; rays.len()];
                g.bench_function(format!("occluded_batch_1t/{set}"), |b| {
                    b.iter(|| scene.occluded_into(rays, &opts, &mut occluded))
                });
            }
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
