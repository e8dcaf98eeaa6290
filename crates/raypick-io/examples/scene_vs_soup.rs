//! A scene loaded as users load it against the same triangles as one mesh: the measure of "a scene
//! of many meshes casts as fast as one" (issue target: within 5 %, 15 % where instances stay).
//!
//! ```sh
//! cargo run --release -p raypick-io --example scene_vs_soup -- FILE [ROUNDS]
//! ```
//! Builds three scenes from FILE: `load` (the default: glTF nodes used once baked, OBJ groups as
//! meshes of one BVH), `shared` (every glTF node an instance, [`Instancing::Shared`]) and `soup`
//! (every triangle in world space in one mesh). Casts 1M incoherent rays (from a sphere around the
//! bounds towards random points inside them, seeded) on one thread, the three scenes interleaved
//! round by round, and prints the median Mrays/s of each and the median of the per-round ratios to
//! the soup. Also checks that the three agree on hit or miss for every ray but grazing ones.

use std::time::Instant;

use rand::{Rng, SeedableRng};
use raypick::glam::Vec3;
use raypick::{QueryOptions, Ray, Scene, SceneBuilder, TriMesh};
use raypick_io::{load_with, parse_file, Instancing, LoadOptions};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn soup(path: &str) -> Result<Scene, Box<dyn std::error::Error>> {
    let (_, model) = parse_file(path, &LoadOptions::default())?;
    let (mut vertices, mut triangles) = (Vec::new(), Vec::new());
    let mut place = |mesh: &raypick_io::MeshData, f: &dyn Fn(Vec3) -> Vec3| {
        let base = vertices.len() as u32;
        vertices.extend(mesh.vertices.iter().map(|&v| f(v)));
        triangles.extend(mesh.triangles.iter().map(|t| t.map(|i| i + base)));
    };
    if model.instances.is_empty() {
        for mesh in &model.meshes {
            place(mesh, &|v| v);
        }
    } else {
        for instance in &model.instances {
            let m = instance.world_from_object;
            place(&model.meshes[instance.mesh], &|v| m.transform_point3(v));
        }
    }
    let mut builder = SceneBuilder::new();
    builder.add_mesh(TriMesh::new(vertices, triangles));
    Ok(builder.build()?)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: scene_vs_soup FILE [ROUNDS]")?;
    let rounds: usize = args.next().map(|n| n.parse()).transpose()?.unwrap_or(7);
    let with = |instancing| LoadOptions {
        instancing,
        ..LoadOptions::default()
    };
    let scenes = [
        (
            "load",
            load_with(&path, &with(Instancing::BakeSingleUse))?.scene,
        ),
        ("shared", load_with(&path, &with(Instancing::Shared))?.scene),
        ("soup", soup(&path)?),
    ];
    let bounds = scenes[2].1.bounds();
    let (center, radius) = (bounds.center(), (bounds.max - bounds.min).length());
    let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
    let rays: Vec<Ray> = (0..1_000_000)
        .map(|_| {
            let d = Vec3::new(rng.gen(), rng.gen(), rng.gen()) * 2.0 - 1.0;
            let origin = center + d.normalize_or(Vec3::X) * radius;
            let target =
                bounds.min + (bounds.max - bounds.min) * Vec3::new(rng.gen(), rng.gen(), rng.gen());
            Ray::new(origin, (target - origin).normalize())
        })
        .collect();
    let opts = QueryOptions::default();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let mut out = vec![vec![None; rays.len()]; scenes.len()];
    let mut mrays = vec![Vec::new(); scenes.len()];
    for round in 0..=rounds {
        let order: Vec<usize> = if round % 2 == 0 {
            vec![0, 1, 2]
        } else {
            vec![2, 1, 0]
        };
        for k in order {
            let start = Instant::now();
            pool.install(|| scenes[k].1.intersect_batch_into(&rays, &opts, &mut out[k]));
            if round > 0 {
                mrays[k].push(rays.len() as f64 / start.elapsed().as_secs_f64() / 1e6);
            }
        }
    }
    let differ = |k: usize| {
        out[k]
            .iter()
            .zip(&out[2])
            .filter(|(a, b)| a.is_some() != b.is_some())
            .count()
    };
    println!(
        "{path}: {} triangles, 1 thread, {rounds} rounds",
        scenes[2].1.num_triangles()
    );
    for (k, (name, _)) in scenes.iter().enumerate() {
        let ratio = median((0..rounds).map(|r| mrays[k][r] / mrays[2][r]).collect());
        println!(
            "  {name:>6}: {:6.2} Mrays/s  ratio to soup {ratio:.3}  hit/miss differs on {} rays",
            median(mrays[k].clone()),
            differ(k)
        );
    }
    Ok(())
}
