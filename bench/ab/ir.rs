//! Instruction counts of one revision of the engine (`bench/ab/ir.sh` builds it, once per
//! revision, and runs it under callgrind).
//!
//! Wall-clock A/B runs resolve 1–2 % on the shared machines (`run.sh`); an instruction count is
//! exact and repeatable, so it resolves a change of a few instructions per ray, though it does not
//! see what a change does to cache misses or to stores the CPU cannot forward. Callgrind counts
//! only inside `measured` (`--toggle-collect`): the scene's build, the file reads and the checksum
//! stay out.
//!
//! Arguments: `MESH RAYS FIRST COUNT MODE`: an OBJ (one mesh, as `run.sh` loads it), the shared
//! binary ray format (six little-endian f32 per ray), the rays `FIRST..FIRST + COUNT`, and `closest`
//! (the batch of 256-ray chunks that `intersect_batch_into` hands each thread), `any` (the same
//! with `occluded_into`) or `points` (`COUNT` closest points at pseudo-random positions in and
//! around the scene's box). Prints a checksum of the answers, equal between revisions that answer
//! alike.
use std::hash::{Hash, Hasher};
use std::path::Path;

use raypick_rev as rp;

/// What the query writes, per ray or point.
enum Answers {
    Closest(Vec<Option<rp::Hit>>),
    Any(Vec<bool>),
    Points(Vec<Option<rp::ClosestPoint>>),
}

/// The queries callgrind counts: chunk by chunk on the calling thread, as one batch thread does.
#[inline(never)]
fn measured(scene: &rp::Scene, rays: &[rp::Ray], points: &[glam::Vec3], answers: &mut Answers) {
    let opts = rp::QueryOptions::default();
    match answers {
        Answers::Closest(out) => {
            for (r, o) in rays.chunks(256).zip(out.chunks_mut(256)) {
                scene.intersect_into(r, &opts, o);
            }
        }
        Answers::Any(out) => {
            for (r, o) in rays.chunks(256).zip(out.chunks_mut(256)) {
                scene.occluded_into(r, &opts, o);
            }
        }
        Answers::Points(out) => {
            for (p, o) in points.iter().zip(out.iter_mut()) {
                *o = scene.closest_point(*p);
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, mesh, rays_path, first, count, mode] = &args[..] else {
        panic!("arguments: MESH RAYS FIRST COUNT closest|any|points");
    };
    let (first, count): (usize, usize) = (first.parse().unwrap(), count.parse().unwrap());
    let mesh = raypick_bench::mesh::load_mesh(Path::new(mesh)).expect("MESH loads");
    let mut b = rp::SceneBuilder::new();
    b.add_mesh(rp::TriMesh::new(mesh.vertices.clone(), mesh.indices.clone()));
    let scene = b.build().expect("the mesh builds");
    let bytes = std::fs::read(rays_path).expect("RAYS reads");
    let f: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let rays: Vec<rp::Ray> = f
        .chunks_exact(6)
        .skip(first)
        .take(count)
        .map(|c| rp::Ray::new(glam::Vec3::new(c[0], c[1], c[2]), glam::Vec3::new(c[3], c[4], c[5])))
        .collect();
    // xorshift64: the same points for every revision.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 40) as f32 / (1u64 << 24) as f32
    };
    let bounds = scene.bounds();
    let mut answers = match mode.as_str() {
        "closest" => Answers::Closest(vec![None; rays.len()]),
        "any" => Answers::Any(vec![false; rays.len()]),
        "points" => Answers::Points(vec![None; count]),
        other => panic!("MODE {other}: closest, any or points"),
    };
    let points: Vec<glam::Vec3> = match answers {
        Answers::Points(_) => (0..count)
            .map(|_| {
                let f = glam::Vec3::new(next(), next(), next()) * 1.2 - 0.1;
                bounds.min + f * (bounds.max - bounds.min)
            })
            .collect(),
        _ => Vec::new(),
    };
    measured(&scene, &rays, &points, &mut answers);
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let bits = |v: glam::Vec3| v.to_array().map(f32::to_bits);
    let n = match &answers {
        Answers::Closest(out) => {
            for a in out {
                a.map(|h| (h.t.to_bits(), h.u.to_bits(), h.v.to_bits(), h.prim, h.geom, h.instance))
                    .hash(&mut h);
                a.map(|h| (bits(h.point), bits(h.normal))).hash(&mut h);
            }
            out.len()
        }
        Answers::Any(out) => {
            out.hash(&mut h);
            out.len()
        }
        Answers::Points(out) => {
            for a in out {
                a.map(|c| (c.distance.to_bits(), c.prim, c.geom, bits(c.point))).hash(&mut h);
            }
            out.len()
        }
    };
    println!("{n} {mode} answers {:016x}", h.finish());
}
