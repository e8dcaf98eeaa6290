//! Build time against scene-file load time: the conference room (`../shared/data`) and
//! `conference-4x4`, the matrix's 5.3M-triangle scene (sixteen copies of the room on a 4×4 grid,
//! pitch 1.05× the room's width, turned by multiples of 90°, flattened into one mesh; the turns
//! here are a fixed sequence, so the triangles match `bench/matrix.py`'s scene in count and
//! size, not in placement).
//!
//! For each scene: the BVH build from geometry in memory (`SceneBuilder::build`), then the scene
//! saved to a temporary `.rpk` and read back (`Scene::load`: read, checksum, decode, check,
//! fill the triangle blocks, validate every tree), each the median of `RUNS` runs (default 5,
//! builds and loads taking turns), and the file's size.
//!
//! ```text
//! cargo run --release -p raypick-io --example scene_file_timing [RUNS]
//! ```

use std::path::Path;
use std::time::Instant;

use raypick::glam::{Mat3, Vec3};
use raypick::{Geometry, Scene, SceneBuilder, TriMesh};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/");

fn median(mut ms: Vec<f64>) -> f64 {
    ms.sort_by(f64::total_cmp);
    ms[ms.len() / 2]
}

fn build(meshes: &[TriMesh]) -> Scene {
    let mut b = SceneBuilder::new();
    for m in meshes {
        b.add_mesh(m.clone());
    }
    b.build().expect("a loaded model builds")
}

fn time(name: &str, meshes: &[TriMesh], runs: usize, dir: &Path) {
    let triangles: usize = meshes.iter().map(TriMesh::num_triangles).sum();
    let scene = build(meshes);
    let path = dir.join(format!("{name}.rpk"));
    let t = Instant::now();
    scene.save(&path).expect("the scene saves");
    let save_ms = t.elapsed().as_secs_f64() * 1e3;
    drop(scene);
    let bytes = std::fs::metadata(&path).expect("the file exists").len();
    // Builds and loads take turns, so a burst of load from elsewhere on the host falls on both.
    let (mut build_ms, mut load_ms) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let t = Instant::now();
        let built = build(meshes);
        build_ms.push(t.elapsed().as_secs_f64() * 1e3);
        drop(built);
        let t = Instant::now();
        let loaded = Scene::load(&path).expect("the file loads");
        load_ms.push(t.elapsed().as_secs_f64() * 1e3);
        drop(loaded);
    }
    let (b, l) = (median(build_ms), median(load_ms));
    println!(
        "{name:<16} {triangles:>9} tris  build {b:>9.1} ms  load {l:>8.1} ms  (1/{:.1})  save {save_ms:>7.1} ms  file {:>6.1} MB",
        b / l,
        bytes as f64 / 1e6
    );
    std::fs::remove_file(&path).expect("the file is removed");
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .map_or(5, |s| s.parse().expect("RUNS is a number"));
    let path = format!("{DATA}scenes/conference.obj");
    let loaded = raypick_io::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let meshes: Vec<TriMesh> = (0..loaded.scene.num_geometries() as u32)
        .filter_map(|id| match loaded.scene.geometry(id) {
            Some(Geometry::Mesh(m)) => Some(m.clone()),
            _ => None,
        })
        .collect();
    let dir = std::env::temp_dir().join(format!("raypick-scene-timing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    println!(
        "median of {runs} runs, {} threads",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    time("conference", &meshes, runs, &dir);

    // conference-4x4: the room's meshes, sixteen times, flattened into one mesh.
    let bounds = loaded.scene.bounds();
    let centre = bounds.center();
    let pitch = 1.05 * bounds.extent().x.max(bounds.extent().z);
    let (mut vertices, mut indices) = (Vec::new(), Vec::new());
    for k in 0..16u32 {
        let turn = Mat3::from_rotation_y(std::f32::consts::FRAC_PI_2 * ((k * 7 + 3) % 4) as f32);
        let at = Vec3::new((k % 4) as f32 * pitch, 0.0, (k / 4) as f32 * pitch);
        for m in &meshes {
            let base = vertices.len() as u32;
            vertices.extend(
                m.vertices()
                    .iter()
                    .map(|&v| centre + turn * (v - centre) + at),
            );
            indices.extend(m.indices().iter().map(|t| t.map(|i| i + base)));
        }
    }
    time(
        "conference-4x4",
        &[TriMesh::new(vertices, indices)],
        runs,
        &dir,
    );
    std::fs::remove_dir_all(&dir).expect("the folder is removed");
}
