//! Shared by the engine's tests and benches: the path of the shared test data and a minimal OBJ
//! reader (the engine cannot use its own loader crate, which depends on it).

use raypick::glam::Vec3;
use raypick::TriMesh;

/// `../shared/data/` beside the repository.
pub const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/");

/// Reads `v x y z` and `f a b c …` lines (1-based indices, `a/…` forms, polygons as fans in order),
/// which is all the shared OBJ meshes the tests use contain. `rel` is relative to [`DATA`]. The mesh
/// is named `rel`.
pub fn read_obj(rel: &str) -> TriMesh {
    let path = format!("{DATA}{rel}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let (mut vertices, mut indices) = (Vec::new(), Vec::new());
    for line in text.lines() {
        let mut it = line.split_whitespace();
        match it.next() {
            Some("v") => {
                let c: Vec<f32> = it.take(3).map(|s| s.parse().unwrap()).collect();
                vertices.push(Vec3::new(c[0], c[1], c[2]));
            }
            Some("f") => {
                let f: Vec<u32> = it
                    .map(|s| s.split('/').next().unwrap().parse::<u32>().unwrap() - 1)
                    .collect();
                for k in 1..f.len() - 1 {
                    indices.push([f[0], f[k], f[k + 1]]);
                }
            }
            _ => {}
        }
    }
    TriMesh::new(vertices, indices).with_name(rel)
}
