//! `raypick bench`: every intersection kernel timed on the same random inputs (the classic timing
//! of the two sphere methods, extended to all kernels), and the scene queries on the demo scene.
//! Figures are the median of several runs; this machine's other load moves them by ±20%.

use std::hint::black_box;
use std::time::Instant;

use anyhow::Result;
use glam::Vec3;
use raypick::camera::{Camera, ClipSpace, Viewport};
use raypick::geom::sphere::{sphere_geometric, sphere_geometric_intersects, sphere_quadratic};
use raypick::geom::triangle::{moller_trumbore, plane_barycentric, watertight, Culling};
use raypick::{Aabb, QueryOptions, Ray};

/// A small deterministic generator (SplitMix64), so every run times the same inputs.
struct Rng(u64);

impl Rng {
    fn next_f32(&mut self) -> f32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32
    }
    fn vec(&mut self, lo: f32, hi: f32) -> Vec3 {
        Vec3::new(self.next_f32(), self.next_f32(), self.next_f32()) * (hi - lo) + Vec3::splat(lo)
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Mrays/s of `f` over `n` items, median of `runs` after one warm-up; `f` returns a hit count.
fn time(n: usize, runs: usize, mut f: impl FnMut() -> usize) -> (f64, usize) {
    let hits = f();
    let samples = (0..runs)
        .map(|_| {
            let t0 = Instant::now();
            black_box(f());
            n as f64 / t0.elapsed().as_secs_f64() / 1e6
        })
        .collect();
    (median(samples), hits)
}

/// How much `raypick bench` measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effort {
    /// A million rays per kernel, seven runs each.
    Full,
    /// Few rays and runs: a smoke test that every kernel runs.
    Quick,
}

/// Times every kernel and the demo scene's queries, and prints the figures.
pub fn run(effort: Effort) -> Result<()> {
    let quick = effort == Effort::Quick;
    let n = if quick { 20_000 } else { 1_000_000 };
    let runs = if quick { 3 } else { 7 };
    let mut rng = Rng(7);
    // Rays from random points towards random triangles in the unit cube (about half hit).
    let tris: Vec<[Vec3; 3]> = (0..n)
        .map(|_| {
            let c = rng.vec(-1.0, 1.0);
            [
                c + rng.vec(-0.5, 0.5),
                c + rng.vec(-0.5, 0.5),
                c + rng.vec(-0.5, 0.5),
            ]
        })
        .collect();
    let rays: Vec<Ray> = tris
        .iter()
        .map(|t| {
            let o = rng.vec(-3.0, 3.0);
            let target = (t[0] + t[1] + t[2]) / 3.0 + rng.vec(-0.3, 0.3);
            Ray::new(o, target - o)
        })
        .collect();
    println!("kernels: {n} rays, one primitive each, median of {runs} runs (1 thread)\n");
    println!("{:<36} {:>10} {:>8}", "kernel", "Mrays/s", "hits");
    let row =
        |name: &str, (mrays, hits): (f64, usize)| println!("{name:<36} {mrays:>10.1} {hits:>8}");
    let tri_kernel = |k: fn(&Ray, Vec3, Vec3, Vec3, Culling) -> Option<raypick::geom::TriHit>| {
        time(n, runs, || {
            rays.iter()
                .zip(&tris)
                .filter(|(r, t)| k(r, t[0], t[1], t[2], Culling::None).is_some())
                .count()
        })
    };
    row("triangle: watertight", tri_kernel(watertight));
    row("triangle: Möller–Trumbore", tri_kernel(moller_trumbore));
    row(
        "triangle: plane + barycentric",
        tri_kernel(plane_barycentric),
    );
    let spheres: Vec<(Vec3, f32)> = tris
        .iter()
        .map(|t| ((t[0] + t[1] + t[2]) / 3.0, 0.2 + 0.3 * rng.next_f32()))
        .collect();
    row(
        "sphere: quadratic (all roots)",
        time(n, runs, || {
            rays.iter()
                .zip(&spheres)
                .filter(|(r, s)| !sphere_quadratic(r, s.0, s.1).is_empty())
                .count()
        }),
    );
    row(
        "sphere: geometric (first t)",
        time(n, runs, || {
            rays.iter()
                .zip(&spheres)
                .filter(|(r, s)| sphere_geometric(r, s.0, s.1).is_some())
                .count()
        }),
    );
    row(
        "sphere: geometric, intersects only",
        time(n, runs, || {
            rays.iter()
                .zip(&spheres)
                .filter(|(r, s)| sphere_geometric_intersects(r, s.0, s.1))
                .count()
        }),
    );
    let boxes: Vec<Aabb> = tris
        .iter()
        .map(|t| Aabb::from_points(t.iter().copied()))
        .collect();
    row(
        "box: robust slab test",
        time(n, runs, || {
            rays.iter()
                .zip(&boxes)
                .filter(|(r, b)| b.intersect_ray(r).is_some())
                .count()
        }),
    );

    // Scene throughput: primary rays of the demo scene.
    let model = raypick_cli::demo::demo_scene()?;
    let (w, h) = if quick { (160, 120) } else { (1024, 768) };
    let camera = Camera::frame_bounds(
        model.scene.bounds(),
        Vec3::new(-0.35, -0.55, -1.0),
        Vec3::Y,
        45f32.to_radians(),
        Viewport::new(w as f32, h as f32),
        ClipSpace::OpenGl,
    )?;
    let primary: Vec<Ray> = (0..h)
        .flat_map(|y| (0..w).map(move |x| (x, y)))
        .map(|(x, y)| camera.pixel_center_ray(x, y))
        .collect();
    let opts = QueryOptions::default();
    let threads = rayon::current_num_threads();
    println!("\nscene: built-in demo ({} triangles + spheres), {w}x{h} primary rays, median of {runs} runs\n", model.scene.num_triangles());
    println!("{:<36} {:>10} {:>8}", "query", "Mrays/s", "hits");
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let m = primary.len();
    let closest = || {
        model
            .scene
            .intersect_batch(&primary, &opts)
            .iter()
            .filter(|h| h.is_some())
            .count()
    };
    let any = || {
        model
            .scene
            .occluded_batch(&primary, &opts)
            .iter()
            .filter(|&&o| o)
            .count()
    };
    row(
        "closest hit, 1 thread",
        one.install(|| time(m, runs, closest)),
    );
    row("any hit, 1 thread", one.install(|| time(m, runs, any)));
    row(
        &format!("closest hit, {threads} threads"),
        time(m, runs, closest),
    );
    row(&format!("any hit, {threads} threads"), time(m, runs, any));
    Ok(())
}
