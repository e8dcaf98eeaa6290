//! A/B timing of two versions of the engine in one process (`bench/ab/run.sh` builds it).
//!
//! Wall-clock figures on the shared 2-vCPU machines drift by 10–25 % in spells of seconds (the
//! host's load changes under the VM), so two builds timed in separate processes cannot resolve a
//! change of a few per cent. Here both versions (crates `raypick_a` and `raypick_b`, copies of
//! `crates/raypick` at two revisions) cast the same rays in one process, chunk by chunk, A and B
//! taking turns (the first of each pair alternates): a slow spell hits both of a pair, and the
//! figure is the median over all pairs of the pair's speed ratio B/A, with its quartiles, and the
//! median over the passes of each pass's ratio (its pairs summed).
//!
//! A scene built first and one built second are not placed alike in memory, and that alone moved
//! the ratio of two identical builds by 1.5–3 %: the scenes are rebuilt every `ROUNDS / EPOCHS`
//! rounds, in the other order each time. What is left of that bias is measured by running a
//! revision against itself (`run.sh HEAD HEAD`).
//!
//! Environment: `MESH` (an OBJ, default the shared bunny), `RAYS` (the shared binary ray format:
//! six little-endian f32 per ray), `MODE` (`closest` or `any`), `ROUNDS` (passes over the rays,
//! default 30), `EPOCHS` (scene rebuilds, default 2), `CHUNK` (rays per timed pair, default
//! 65,536), `THREADS` (rayon threads, default 1), `SAME` (set: both scenes from version A, for
//! comparing build configurations), `A_*` / `B_*` (each scene's `BuildConfig`: `A_HQ` for the
//! high-quality preset, `A_BINS`, `A_ML` (max leaf size), `A_IC` (intersection cost), `A_ST`
//! (sweep threshold), `A_RB` / `A_RP` (reinsertion batch / passes), `A_COMPACT` (set: 8-bit child
//! boxes), `A_SPATIAL` (set: spatial splits)), and `PARTS` (the triangles as that many meshes of consecutive triangles, as a loader
//! gives an OBJ's groups; default one mesh).
use std::ops::Range;
use std::path::Path;
use std::time::Instant;

fn env<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// One version's scene and buffers.
trait Engine {
    /// Casts rays `part` into the version's own answer buffer; a checksum of the answers.
    fn cast(&mut self, part: Range<usize>) -> u64;
}

macro_rules! engine {
    ($module:ident, $crate_name:ident) => {
        mod $module {
            use $crate_name as rp;

            pub struct Version {
                scene: rp::Scene,
                rays: Vec<rp::Ray>,
                hits: Vec<Option<rp::Hit>>,
                occluded: Vec<bool>,
                any: bool,
            }

            impl Version {
                /// The scene of one mesh, built with the `BuildConfig` that the environment
                /// variables starting with `prefix` describe.
                pub fn new(
                    vertices: &[glam::Vec3],
                    indices: &[[u32; 3]],
                    rays: &[[f32; 6]],
                    any: bool,
                    prefix: &str,
                ) -> Self {
                    let var = |key: &str| std::env::var(format!("{prefix}{key}")).ok();
                    let num = |key: &str| var(key).map(|s| s.parse::<f64>().expect(key));
                    let base = if var("HQ").is_some() {
                        rp::bvh::BuildConfig::HIGH_QUALITY
                    } else {
                        rp::bvh::BuildConfig::BALANCED
                    };
                    let config = rp::bvh::BuildConfig {
                        bins: num("BINS").map_or(base.bins, |x| x as usize),
                        max_leaf_size: num("ML").map_or(base.max_leaf_size, |x| x as usize),
                        intersection_cost: num("IC").map_or(base.intersection_cost, |x| x as f32),
                        sweep_threshold: num("ST").map_or(base.sweep_threshold, |x| x as usize),
                        reinsertion_batch: num("RB").map_or(base.reinsertion_batch, |x| x as f32),
                        reinsertion_passes: num("RP")
                            .map_or(base.reinsertion_passes, |x| x as usize),
                        compact: var("COMPACT").is_some() || base.compact,
                        spatial_splits: var("SPATIAL").is_some() || base.spatial_splits,
                        ..base
                    };
                    let mut builder = rp::SceneBuilder::with_config(config);
                    // `PARTS`: the triangles as that many meshes of consecutive triangles (as a
                    // loader gives an OBJ's groups), else one mesh.
                    let parts =
                        std::env::var("PARTS").map_or(1, |s| s.parse::<usize>().expect("PARTS"));
                    let per_part = indices.len().div_ceil(parts.max(1));
                    for chunk in indices.chunks(per_part.max(1)) {
                        builder.add_mesh(rp::TriMesh::new(vertices.to_vec(), chunk.to_vec()));
                    }
                    let rays: Vec<rp::Ray> = rays
                        .iter()
                        .map(|r| {
                            rp::Ray::new(
                                glam::Vec3::new(r[0], r[1], r[2]),
                                glam::Vec3::new(r[3], r[4], r[5]),
                            )
                        })
                        .collect();
                    Self {
                        scene: builder.build().expect("the mesh builds"),
                        hits: vec![None; rays.len()],
                        occluded: vec![false; rays.len()],
                        rays,
                        any,
                    }
                }
            }

            impl super::Engine for Version {
                fn cast(&mut self, part: std::ops::Range<usize>) -> u64 {
                    let options = rp::QueryOptions::default();
                    let rays = &self.rays[part.clone()];
                    if self.any {
                        let out = &mut self.occluded[part];
                        self.scene.occluded_batch_into(rays, &options, out);
                        out.iter().filter(|&&b| b).count() as u64
                    } else {
                        let out = &mut self.hits[part];
                        self.scene.intersect_batch_into(rays, &options, out);
                        out.iter()
                            .flatten()
                            .map(|h| u64::from(h.prim) + 1 + u64::from(h.t.to_bits()))
                            .sum()
                    }
                }
            }
        }
    };
}

engine!(version_a, raypick_a);
engine!(version_b, raypick_b);

fn quartiles(mut v: Vec<f64>) -> [f64; 3] {
    v.sort_by(f64::total_cmp);
    [v[v.len() / 4], v[v.len() / 2], v[3 * v.len() / 4]]
}

fn main() {
    let mesh = std::env::var("MESH").unwrap_or("../shared/data/obj/stanford-bunny.obj".into());
    let rays_path = std::env::var("RAYS").expect("RAYS: a file of rays (six f32 per ray)");
    let any = std::env::var("MODE").is_ok_and(|m| m == "any");
    let same = std::env::var("SAME").is_ok();
    let (rounds, epochs, chunk) = (
        env("ROUNDS", 30usize),
        env("EPOCHS", 2usize),
        env("CHUNK", 65536usize),
    );
    rayon::ThreadPoolBuilder::new()
        .num_threads(env("THREADS", 1))
        .build_global()
        .expect("one rayon pool");
    let mesh = raypick_bench::mesh::load_mesh(Path::new(&mesh)).expect("MESH loads");
    let bytes = std::fs::read(&rays_path).expect("RAYS reads");
    let rays: Vec<[f32; 6]> = bytes
        .chunks_exact(24)
        .map(|c| {
            std::array::from_fn(|k| f32::from_le_bytes(c[4 * k..4 * k + 4].try_into().unwrap()))
        })
        .collect();
    let make = |which: usize| -> Box<dyn Engine> {
        let (v, i) = (&mesh.vertices, &mesh.indices);
        match (which, same) {
            (0, _) | (1, true) => Box::new(version_a::Version::new(
                v,
                i,
                &rays,
                any,
                ["A_", "B_"][which],
            )),
            _ => Box::new(version_b::Version::new(v, i, &rays, any, "B_")),
        }
    };
    let (mut ratios, mut time) = (Vec::new(), [Vec::new(), Vec::new()]);
    let mut pair = 0;
    for epoch in 0..epochs {
        // Built in the other order each epoch (the one built first is dropped last).
        let mut engines: [Option<Box<dyn Engine>>; 2] = [None, None];
        let order = if epoch % 2 == 0 { [0, 1] } else { [1, 0] };
        for which in order {
            let t0 = Instant::now();
            engines[which] = Some(make(which));
            eprintln!(
                "epoch {epoch}: built {} in {:.0} ms",
                ["A", "B"][which],
                t0.elapsed().as_secs_f64() * 1e3
            );
        }
        let [Some(a), Some(b)] = &mut engines else {
            unreachable!("both built")
        };
        let mut engines: [&mut Box<dyn Engine>; 2] = [a, b];
        let sums = [0, 1].map(|which| engines[which].cast(0..rays.len()));
        assert!(same || sums[0] == sums[1], "A and B answer differently");
        for _ in 0..rounds / epochs {
            let mut round = [0.0; 2];
            for start in (0..rays.len()).step_by(chunk) {
                let part = start..(start + chunk).min(rays.len());
                let mut t = [0.0; 2];
                for k in 0..2 {
                    let which = (k + pair) % 2;
                    let t0 = Instant::now();
                    std::hint::black_box(engines[which].cast(part.clone()));
                    t[which] = t0.elapsed().as_secs_f64();
                }
                pair += 1;
                ratios.push(t[0] / t[1]);
                round[0] += t[0];
                round[1] += t[1];
            }
            time[0].push(round[0]);
            time[1].push(round[1]);
        }
    }
    let [q1, median, q3] = quartiles(ratios);
    // Per pass over all the rays (its pairs summed): the figure to read when the chunks differ
    // (a camera's empty sky against the model), where the median pair is a typical chunk's.
    let passes: Vec<f64> = time[0].iter().zip(&time[1]).map(|(a, b)| a / b).collect();
    let [p1, pass_median, p3] = quartiles(passes);
    let mrays = |t: &Vec<f64>| rays.len() as f64 / 1e6 / quartiles(t.clone())[1];
    println!(
        "B/A speed: median {median:.3} (quartiles {q1:.3}-{q3:.3}, {pair} pairs), per pass {pass_median:.3} ({p1:.3}-{p3:.3}); A {:.2}, B {:.2} Mrays/s (medians of {} passes)",
        mrays(&time[0]),
        mrays(&time[1]),
        time[0].len()
    );
}
