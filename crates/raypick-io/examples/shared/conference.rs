//! The scenes the scene-file examples time (`scene_file_timing`, `scene_file_steps`): the
//! conference room (`../shared/data`) and `conference-4x4`, the matrix's 5.3M-triangle scene
//! (sixteen copies of the room on a 4×4 grid, pitch 1.05× the room's width, turned by multiples
//! of 90°, flattened into one mesh; the turns here are a fixed sequence, so the triangles match
//! `bench/matrix.py`'s scene in count and size, not in placement). Included by each example with
//! `#[path]`: cargo does not take a folder without a `main.rs` for an example of its own.

use raypick::glam::{Mat3, Vec3};
use raypick::{Aabb, Scene, SceneBuilder, TriMesh};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/");

/// The scene of `meshes`, built with the default preset.
pub fn build(meshes: &[TriMesh]) -> Scene {
    let mut b = SceneBuilder::new();
    for m in meshes {
        b.add_mesh(m.clone());
    }
    b.build().expect("a loaded model builds")
}

/// The meshes of scene `name`: the conference room's, or `conference-4x4`'s one mesh, parsed (no
/// scene is built).
pub fn meshes(name: &str) -> Vec<TriMesh> {
    let path = format!("{DATA}scenes/conference.obj");
    let (_, model) = raypick_io::parse_file(&path, &raypick_io::LoadOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let meshes: Vec<TriMesh> = model
        .meshes
        .into_iter()
        .map(|m| TriMesh::new(m.vertices, m.triangles))
        .collect();
    match name {
        "conference" => return meshes,
        "conference-4x4" => {}
        other => panic!("unknown scene {other}: conference or conference-4x4"),
    }
    // conference-4x4: the room's meshes, sixteen times, flattened into one mesh.
    let bounds = meshes.iter().fold(Aabb::EMPTY, |b, m| b.union(m.bounds()));
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
    vec![TriMesh::new(vertices, indices)]
}
