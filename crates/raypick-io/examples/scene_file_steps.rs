//! One step of the build-against-load comparison per process, for instruction counts
//! (`valgrind --tool=callgrind`) where wall-clock times are too noisy: the scene's meshes made,
//! built, saved, or a saved `.rpk` loaded. A step's own cost is its count less the count of the
//! step it extends (`build` less `meshes`; `load` stands alone).
//!
//! ```text
//! cargo run --release -p raypick-io --example scene_file_steps -- STEP SCENE FILE
//! ```
//! STEP is `meshes` (make SCENE's meshes), `build` (and build them), `save` (and save the scene to
//! FILE) or `load` (`Scene::load(FILE)` alone). SCENE is `conference` or `conference-4x4`, made as
//! `scene_file_timing` makes them.

use raypick::glam::{Mat3, Vec3};
use raypick::{Geometry, Scene, SceneBuilder, TriMesh};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/");

fn meshes(scene: &str) -> Vec<TriMesh> {
    let path = format!("{DATA}scenes/conference.obj");
    let loaded = raypick_io::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let meshes: Vec<TriMesh> = (0..loaded.scene.num_geometries() as u32)
        .filter_map(|id| match loaded.scene.geometry(id) {
            Some(Geometry::Mesh(m)) => Some(m.clone()),
            _ => None,
        })
        .collect();
    match scene {
        "conference" => meshes,
        "conference-4x4" => {
            let bounds = loaded.scene.bounds();
            let centre = bounds.center();
            let pitch = 1.05 * bounds.extent().x.max(bounds.extent().z);
            let (mut vertices, mut indices) = (Vec::new(), Vec::new());
            for k in 0..16u32 {
                let turn =
                    Mat3::from_rotation_y(std::f32::consts::FRAC_PI_2 * ((k * 7 + 3) % 4) as f32);
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
            vec![TriMesh::new(vertices, indices)]
        }
        other => panic!("unknown scene {other}: conference or conference-4x4"),
    }
}

fn build(meshes: &[TriMesh]) -> Scene {
    let mut b = SceneBuilder::new();
    for m in meshes {
        b.add_mesh(m.clone());
    }
    b.build().expect("a loaded model builds")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [step, scene, file] = &args[..] else {
        panic!("usage: scene_file_steps STEP SCENE FILE");
    };
    match step.as_str() {
        "meshes" => {
            let m = meshes(scene);
            println!("{} meshes", m.len());
        }
        "build" => {
            let s = build(&meshes(scene));
            println!("{} triangles", s.num_triangles());
        }
        "save" => {
            let s = build(&meshes(scene));
            s.save(file).expect("the scene saves");
            println!("{} triangles saved", s.num_triangles());
        }
        "load" => {
            let s = Scene::load(file).expect("the file loads");
            println!("{} triangles loaded", s.num_triangles());
        }
        other => panic!("unknown step {other}: meshes, build, save or load"),
    }
}
