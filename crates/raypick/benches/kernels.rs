//! Throughput of the exact kernels in millions of rays per second, on one shared set of random
//! inputs: ray `i` is tested against triangle `i`, sphere `i` and box `i` (the triangle's bounds).
//! About half the rays hit. Run with `cargo bench -p raypick --bench kernels`; the figures go to
//! BENCHMARKS.md, "Kernels".

use std::time::Duration;

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use glam::Vec3;
use rand::{Rng, SeedableRng};
use raypick::bvh::quantized::quantize;
use raypick::geom::sphere::{sphere_geometric, sphere_geometric_intersects, sphere_quadratic};
use raypick::geom::triangle::{
    moller_trumbore, plane_barycentric, watertight, Culling, EdgeRule, WatertightRay,
};
use raypick::simd::{
    box4, box4_scalar, qbox8, qbox8_scalar, tri4_candidates, tri4_candidates_scalar,
    tri_candidates, tri_candidates_scalar, BoxRay, QuantBoxes8, ShearRay, Tri4, LANES,
};
use raypick::{Aabb, Ray};

const N: usize = 4096;

struct Inputs {
    rays: Vec<Ray>,
    triangles: Vec<[Vec3; 3]>,
    spheres: Vec<(Vec3, f32)>,
    boxes: Vec<Aabb>,
}

/// Triangles of size ~1 scattered in a cube of side 20, each with a sphere of radius 0.7 at the centre
/// of its vertices' cube; each ray starts 5 to 15 units away and is aimed at a random point of its
/// triangle scaled by 1.42 about the centroid (so it hits the triangle about half the time).
/// Directions are not normalized.
fn inputs() -> Inputs {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(42);
    let v3 = |rng: &mut rand_pcg::Pcg64, s: f32| {
        Vec3::new(
            rng.gen_range(-s..s),
            rng.gen_range(-s..s),
            rng.gen_range(-s..s),
        )
    };
    let mut inp = Inputs {
        rays: Vec::with_capacity(N),
        triangles: Vec::with_capacity(N),
        spheres: Vec::with_capacity(N),
        boxes: Vec::with_capacity(N),
    };
    for _ in 0..N {
        let c = v3(&mut rng, 10.0);
        let tri = [
            c + v3(&mut rng, 1.0),
            c + v3(&mut rng, 1.0),
            c + v3(&mut rng, 1.0),
        ];
        // A point of the triangle, pushed away from its centroid by 1.42: inside half the time.
        let (s, t): (f32, f32) = (rng.gen(), rng.gen());
        let (s, t) = if s + t > 1.0 {
            (1.0 - s, 1.0 - t)
        } else {
            (s, t)
        };
        let on_tri = tri[0] + s * (tri[1] - tri[0]) + t * (tri[2] - tri[0]);
        let centroid = (tri[0] + tri[1] + tri[2]) / 3.0;
        let aim = centroid + 1.42 * (on_tri - centroid);
        let from = c + v3(&mut rng, 1.0).normalize_or(Vec3::X) * rng.gen_range(5.0..15.0);
        inp.rays
            .push(Ray::new(from, (aim - from) * rng.gen_range(0.1..10.0)));
        inp.boxes.push(Aabb::from_points(tri));
        inp.triangles.push(tri);
        inp.spheres.push((c, 0.7));
    }
    inp
}

fn bench(c: &mut Criterion) {
    let inp = inputs();
    let mut g = c.benchmark_group("kernels");
    g.throughput(Throughput::Elements(N as u64));
    g.measurement_time(Duration::from_secs(2));
    g.warm_up_time(Duration::from_millis(500));
    g.sample_size(30);

    type TriKernel = fn(&Ray, Vec3, Vec3, Vec3, Culling) -> Option<raypick::geom::TriHit>;
    for (name, k) in [
        ("watertight", watertight as TriKernel),
        ("moller_trumbore", moller_trumbore),
        ("plane_barycentric", plane_barycentric),
    ] {
        let hits = (0..N)
            .filter(|&i| {
                let [a, b, c] = inp.triangles[i];
                k(&inp.rays[i], a, b, c, Culling::None).is_some()
            })
            .count();
        println!("{name}: {hits} of {N} rays hit");
        g.bench_function(BenchmarkId::new("triangle", name), |b| {
            b.iter(|| {
                let mut hits = 0u32;
                for (ray, [v0, v1, v2]) in inp.rays.iter().zip(&inp.triangles) {
                    hits += k(black_box(ray), *v0, *v1, *v2, Culling::None).is_some() as u32;
                }
                hits
            })
        });
    }
    // The BVH's form: the ray's permutation and shear computed once, reused per triangle.
    let prepared: Vec<WatertightRay> = inp.rays.iter().map(WatertightRay::new).collect();
    g.bench_function(BenchmarkId::new("triangle", "watertight_prepared"), |b| {
        b.iter(|| {
            let mut hits = 0u32;
            for (ray, [v0, v1, v2]) in prepared.iter().zip(&inp.triangles) {
                hits += black_box(ray)
                    .intersect(*v0, *v1, *v2, Culling::None, EdgeRule::Closed)
                    .is_some() as u32;
            }
            hits
        })
    });

    let hits = (0..N)
        .filter(|&i| sphere_geometric(&inp.rays[i], inp.spheres[i].0, inp.spheres[i].1).is_some())
        .count();
    println!("sphere: {hits} of {N} rays hit");
    g.bench_function(BenchmarkId::new("sphere", "quadratic"), |b| {
        b.iter(|| {
            let mut n = 0u32;
            for (ray, (c, r)) in inp.rays.iter().zip(&inp.spheres) {
                n += sphere_quadratic(black_box(ray), *c, *r).len() as u32;
            }
            n
        })
    });
    g.bench_function(BenchmarkId::new("sphere", "geometric"), |b| {
        b.iter(|| {
            let mut n = 0u32;
            for (ray, (c, r)) in inp.rays.iter().zip(&inp.spheres) {
                n += sphere_geometric(black_box(ray), *c, *r).is_some() as u32;
            }
            n
        })
    });
    g.bench_function(BenchmarkId::new("sphere", "geometric_intersects"), |b| {
        b.iter(|| {
            let mut n = 0u32;
            for (ray, (c, r)) in inp.rays.iter().zip(&inp.spheres) {
                n += sphere_geometric_intersects(black_box(ray), *c, *r) as u32;
            }
            n
        })
    });

    let hits = (0..N)
        .filter(|&i| inp.boxes[i].intersect_ray(&inp.rays[i]).is_some())
        .count();
    println!("box: {hits} of {N} rays hit");
    g.bench_function(BenchmarkId::new("box", "intersect_ray"), |b| {
        b.iter(|| {
            let mut n = 0u32;
            for (ray, aabb) in inp.rays.iter().zip(&inp.boxes) {
                n += aabb.intersect_ray(black_box(ray)).is_some() as u32;
            }
            n
        })
    });
    // The BVH's form: 1/dir computed once per ray.
    let inv: Vec<Vec3> = inp.rays.iter().map(|r| r.dir.recip()).collect();
    g.bench_function(BenchmarkId::new("box", "intersect_slabs_prepared"), |b| {
        b.iter(|| {
            let mut n = 0u32;
            for ((ray, inv_dir), aabb) in inp.rays.iter().zip(&inv).zip(&inp.boxes) {
                let ray = black_box(ray);
                n += aabb
                    .intersect_slabs(ray.origin, *inv_dir, ray.t_min, ray.t_max)
                    .is_some() as u32;
            }
            n
        })
    });
    // The SIMD routines against their scalar twins (N rays, each against 4 boxes / 4 triangles: the
    // group's element is one ray, i.e. one 4-wide test).
    let quads: Vec<usize> = (0..N).map(|i| i & !3).collect();
    let box_rays: Vec<BoxRay> = inp
        .rays
        .iter()
        .map(|r| BoxRay::new(r.origin.to_array(), r.dir.to_array(), r.t_min))
        .collect();
    let rows: Vec<[[f32; LANES]; 6]> = (0..N)
        .step_by(LANES)
        .map(|q| {
            std::array::from_fn(|row| {
                std::array::from_fn(|lane| {
                    let b = inp.boxes[q + lane];
                    if row % 2 == 0 {
                        b.min[row / 2]
                    } else {
                        b.max[row / 2]
                    }
                })
            })
        })
        .collect();
    type Box4 = fn(&[[f32; LANES]; 6], &BoxRay, f32) -> raypick::simd::Box4Hits;
    let box4_fns: [(&str, Box4); 2] = [("simd", box4), ("scalar_twin", box4_scalar)];
    for (name, f) in box4_fns {
        g.bench_function(BenchmarkId::new("box4", name), |b| {
            b.iter(|| {
                let mut n = 0u32;
                for (ray, q) in box_rays.iter().zip(&quads) {
                    n += f(&rows[q / LANES], black_box(ray), f32::INFINITY)
                        .mask
                        .count_ones();
                }
                n
            })
        });
    }
    // The same boxes eight to a node, quantized (`BuildConfig::compact`): the AVX2 dequantizing
    // test, the SSE one (scalar dequantization) and the twin. One element: one ray against 8 boxes.
    let octets: Vec<usize> = (0..N).map(|i| i & !7).collect();
    let quantized: Vec<QuantBoxes8> = (0..N)
        .step_by(8)
        .map(|o| quantize(&std::array::from_fn(|l| inp.boxes[o + l]), 0xFF))
        .collect();
    type QBox = fn(&QuantBoxes8, &BoxRay, f32) -> raypick::simd::BoxHits<8>;
    #[cfg_attr(
        not(all(target_arch = "x86_64", not(feature = "force-scalar"))),
        allow(unused_mut)
    )]
    let mut qbox_fns: Vec<(&str, QBox)> = vec![("sse", qbox8), ("scalar_twin", qbox8_scalar)];
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    if raypick::simd::Isa::detected().has_x86_64_v3() {
        qbox_fns.push(("avx2", |b, r, t| {
            // SAFETY: the CPU has AVX2, checked above.
            unsafe { qbox8_avx2_compiled(b, r, t) }
        }));
    }
    for (name, f) in qbox_fns {
        g.bench_function(BenchmarkId::new("qbox8", name), |b| {
            b.iter(|| {
                let mut n = 0u32;
                for (ray, o) in box_rays.iter().zip(&octets) {
                    n += f(&quantized[o / 8], black_box(ray), f32::INFINITY)
                        .mask
                        .count_ones();
                }
                n
            })
        });
    }
    let blocks: Vec<Tri4> = (0..N)
        .step_by(LANES)
        .map(|q| {
            let mut block = Tri4::ZERO;
            for lane in 0..LANES {
                block.set(lane, inp.triangles[q + lane]);
            }
            block
        })
        .collect();
    let shear_rays: Vec<_> = inp
        .rays
        .iter()
        .map(|r| ShearRay::of(&WatertightRay::new(r)))
        .collect();
    type Tri4Fn = fn(&Tri4, &raypick::simd::ShearRay) -> u32;
    let tri4_fns: [(&str, Tri4Fn); 2] = [
        ("simd", tri4_candidates),
        ("scalar_twin", tri4_candidates_scalar),
    ];
    for (name, f) in tri4_fns {
        g.bench_function(BenchmarkId::new("tri4_candidates", name), |b| {
            b.iter(|| {
                let mut n = 0u32;
                for (ray, q) in shear_rays.iter().zip(&quads) {
                    n += f(&blocks[q / LANES], black_box(ray)).count_ones();
                }
                n
            })
        });
    }
    // Two blocks per call (a leaf of 5 to 8 triangles): one 8-lane AVX pass against the twin. The
    // element is still one ray, here against eight triangles.
    let pairs: Vec<usize> = (0..N).map(|i| i & !7).collect();
    type TriPairFn = fn(&[Tri4], &raypick::simd::ShearRay) -> u32;
    let pair_fns: [(&str, TriPairFn); 2] = [
        ("simd", tri_candidates),
        ("scalar_twin", tri_candidates_scalar),
    ];
    for (name, f) in pair_fns {
        g.bench_function(BenchmarkId::new("tri_candidates_two_blocks", name), |b| {
            b.iter(|| {
                let mut n = 0u32;
                for (ray, p) in shear_rays.iter().zip(&pairs) {
                    let first = p / LANES;
                    n += f(&blocks[first..first + 2], black_box(ray)).count_ones();
                }
                n
            })
        });
    }
    g.finish();
}

/// [`raypick::simd::qbox8_avx2`] inlined into a function compiled for AVX2, as the traversal does.
///
/// # Safety
/// The CPU must support AVX and AVX2.
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
#[target_feature(enable = "avx,avx2")]
unsafe fn qbox8_avx2_compiled(
    boxes: &QuantBoxes8,
    ray: &BoxRay,
    t_max: f32,
) -> raypick::simd::BoxHits<8> {
    // SAFETY: this function is compiled for AVX2 and only called when the CPU has it.
    unsafe { raypick::simd::qbox8_avx2(boxes, ray, t_max) }
}

// criterion_group! defines a public function without a doc comment: keep it out of the lint's reach.
mod group {
    use super::*;
    criterion_group!(kernels, bench);
}
criterion_main!(group::kernels);
