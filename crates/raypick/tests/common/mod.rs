//! Shared by the engine's tests and benches (and the loader crate's point-query tests): the path
//! of the shared test data, a minimal OBJ reader (the engine cannot use its own loader crate, which
//! depends on it) and the `f64` point–triangle distance the point queries are checked against.

use raypick::glam::{DVec3, Vec3};
use raypick::{Aabb, Ray, TriMesh};

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

/// The shared "primary" ray recipe (`shared/tools/make_rays.py`) at `res`×`res`: a pinhole camera at
/// `c + (0, 0.6, 2.2)·r` (box centre and half diagonal) looking at `c`, 45° vertical field of view,
/// row-major, unit directions.
#[allow(dead_code)] // not every test binary that includes this module casts camera rays
pub fn camera_rays(bounds: Aabb, res: usize) -> Vec<Ray> {
    let (c, r) = (bounds.center(), bounds.extent().length() * 0.5);
    let eye = c + Vec3::new(0.0, 0.6, 2.2) * r;
    let forward = (c - eye).normalize();
    let right = forward.cross(Vec3::Y).normalize();
    let up = right.cross(forward);
    let half = 22.5f32.to_radians().tan();
    (0..res * res)
        .map(|i| {
            let (x, y) = ((i % res) as f32 + 0.5, (i / res) as f32 + 0.5);
            let px = (x / res as f32 * 2.0 - 1.0) * half;
            let py = (1.0 - y / res as f32 * 2.0) * half;
            Ray::new(eye, (forward + px * right + py * up).normalize())
        })
        .collect()
}

/// `f64` distance from `p` to triangle `(a, b, c)`: the face projection when it falls inside, else
/// the nearest of the three edges.
#[allow(dead_code)] // not every test binary that includes this module measures distances
pub fn tri_distance(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> f64 {
    let seg = |s: DVec3, e: DVec3| {
        let d = e - s;
        let t = if d.length_squared() > 0.0 {
            ((p - s).dot(d) / d.length_squared()).clamp(0.0, 1.0)
        } else {
            0.0
        };
        (p - (s + t * d)).length()
    };
    let mut best = seg(a, b).min(seg(b, c)).min(seg(c, a));
    let n = (b - a).cross(c - a);
    if n.length_squared() > 0.0 {
        let n = n.normalize();
        let q = p - n * (p - a).dot(n);
        if [(a, b), (b, c), (c, a)]
            .iter()
            .all(|&(s, e)| (e - s).cross(q - s).dot(n) >= 0.0)
        {
            best = best.min((p - q).length());
        }
    }
    best
}
