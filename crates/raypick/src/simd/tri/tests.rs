use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use super::*;
use crate::simd::test_support::*;

#[test]
fn tri4_candidates_equal_their_scalar_twin() {
    let mut rng = Pcg64::seed_from_u64(14);
    let mut kept = 0u32;
    for _ in 0..100_000 {
        let blocks = [random_block(&mut rng), random_block(&mut rng)];
        let ray = random_shear(&mut rng);
        let one = tri4_candidates(&blocks[0], &ray);
        assert_eq!(
            one,
            tri4_candidates_scalar(&blocks[0], &ray),
            "{blocks:?} {ray:?}"
        );
        // One block and two (8 lanes in one AVX pass where the CPU has it).
        assert_eq!(tri_candidates(&blocks[..1], &ray), one);
        let two = tri_candidates(&blocks, &ray);
        assert_eq!(
            two,
            tri_candidates_scalar(&blocks, &ray),
            "{blocks:?} {ray:?}"
        );
        assert_eq!(two & 0xF, one);
        kept += two.count_ones();
    }
    // Not a vacuous comparison: both answers occur often.
    assert!(
        (100_000..700_000).contains(&kept),
        "{kept} lanes kept of 800000"
    );
}

/// A random origin, one of the six axis permutations and random shears.
fn random_shear(rng: &mut Pcg64) -> ShearRay {
    const PERMUTATIONS: [[usize; 3]; 6] = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    ShearRay {
        origin: [0; 3].map(|_| float(rng)),
        axes: PERMUTATIONS[rng.gen_range(0..6)],
        sx: float(rng),
        sy: float(rng),
    }
}

fn random_block(rng: &mut Pcg64) -> Tri4 {
    let mut tris = Tri4::ZERO;
    for k in 0..3 {
        for axis in 0..3 {
            for lane in 0..LANES {
                tris.v[k][axis][lane] = float(rng);
            }
        }
    }
    if rng.gen_bool(0.3) {
        // Shared vertices produce exact zeros.
        let lane = rng.gen_range(0..LANES);
        for axis in 0..3 {
            tris.v[1][axis][lane] = tris.v[0][axis][lane];
        }
    }
    tris
}

/// `N` random triangles at one random scale (1e-6 to 1e6), a share `collapsed` of them with
/// two equal vertices, and the origin and the target (one of their vertices) of a ray aimed at
/// them: the cases of the triangle tests against the scalar kernel.
fn aimed_case<const N: usize>(
    rng: &mut Pcg64,
    collapsed: f64,
) -> ([[glam::Vec3; 3]; N], glam::Vec3, glam::Vec3) {
    let scale = 10f32.powf(rng.gen_range(-6.0..6.0));
    let mut p = || {
        glam::Vec3::new(
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
        ) * scale
    };
    let mut list = [[glam::Vec3::ZERO; 3]; N];
    for t in list.iter_mut() {
        *t = [p(), p(), p()];
    }
    let origin = p() * 3.0;
    for t in list.iter_mut() {
        if rng.gen_bool(collapsed) {
            t[2] = t[0];
        }
    }
    let target = list[rng.gen_range(0..N)][rng.gen_range(0..3)];
    (list, origin, target)
}

/// `list` in blocks of four, triangle `k` in lane `k % 4` of block `k / 4`.
fn packed(list: &[[glam::Vec3; 3]]) -> Vec<Tri4> {
    let mut blocks = vec![Tri4::ZERO; list.len().div_ceil(LANES)];
    for (k, t) in list.iter().enumerate() {
        blocks[k / LANES].set(k % LANES, *t);
    }
    blocks
}

/// `hit`, `undecided`, and the bits of `t`, `u`, `v` on hit lanes (the only meaningful ones).
fn hits_key(h: &TriHits) -> (u32, u32, Vec<[u32; 3]>) {
    let lanes = (0..8)
        .filter(|&k| h.hit >> k & 1 != 0)
        .map(|k| [h.t[k].to_bits(), h.u[k].to_bits(), h.v[k].to_bits()])
        .collect();
    (h.hit, h.undecided, lanes)
}

#[test]
fn tri_hits_equal_their_scalar_twin() {
    let mut rng = Pcg64::seed_from_u64(16);
    let (mut hit, mut undecided) = (0u32, 0u32);
    for i in 0..100_000 {
        let blocks = [random_block(&mut rng), random_block(&mut rng)];
        let ray = HitRay {
            shear: random_shear(&mut rng),
            sz: float(&mut rng),
            t_min: if i % 3 == 0 { 0.0 } else { float(&mut rng) },
            cull_back: rng.gen_bool(0.5),
        };
        let t_max = if i % 3 == 0 {
            f32::INFINITY
        } else {
            float(&mut rng)
        };
        for n in 1..=2 {
            // Every block's lanes, and a leaf that ends inside the last block.
            let live = 1 + rng.gen_range(0..LANES * n);
            // The rows shared by a packet's rays: the same bits in SIMD and twin, and the
            // same answers from them as from the blocks.
            let rows = tri_rows(&blocks[..n], &ray.shear);
            let rows_twin = tri_rows_scalar(&blocks[..n], &ray.shear);
            let bits = |r: &TriRows| r.p.map(|k| k.map(|row| row.map(f32::to_bits)));
            assert_eq!(bits(&rows), bits(&rows_twin), "{blocks:?} {ray:?}");
            for lanes in [(1u32 << (LANES * n)) - 1, (1 << live) - 1] {
                let simd = tri_hits(&blocks[..n], lanes, &ray, t_max);
                let twin = tri_hits_scalar(&blocks[..n], lanes, &ray, t_max);
                assert_eq!(
                    hits_key(&simd),
                    hits_key(&twin),
                    "{blocks:?} {lanes:b} {ray:?} {t_max}"
                );
                assert_eq!((simd.hit | simd.undecided) & !lanes, 0);
                let from_rows = tri_hits_rows(&rows, lanes, &ray, t_max);
                let from_rows_twin = tri_hits_rows_scalar(&rows, lanes, &ray, t_max);
                assert_eq!(
                    hits_key(&from_rows),
                    hits_key(&simd),
                    "{blocks:?} {lanes:b}"
                );
                assert_eq!(hits_key(&from_rows_twin), hits_key(&simd), "{blocks:?}");
            }
        }
        let two = tri_hits_scalar(&blocks, 0xFF, &ray, t_max);
        hit += two.hit.count_ones();
        undecided += two.undecided.count_ones();
    }
    // Not a vacuous comparison: hits and undecided lanes both occur.
    assert!(
        hit > 2_000 && undecided > 10_000,
        "{hit} hits, {undecided} undecided"
    );
}

#[test]
fn tri_hits_decide_as_the_scalar_kernel() {
    // Every decided lane: a hit with the same t, u, v bits as `WatertightRay::intersect`, or a
    // miss of it. Degenerate triangles (zero area, which the kernel rejects by an f64 check)
    // are stored collapsed to a point by the meshes, which makes every edge function 0:
    // undecided; here they are left out of the comparison when decided.
    use crate::geom::triangle::{is_degenerate, Culling, EdgeRule, WatertightRay};
    use crate::Ray;
    let mut rng = Pcg64::seed_from_u64(17);
    let (mut hits, mut decided_misses) = (0usize, 0usize);
    for _ in 0..50_000 {
        let (list, origin, target) = aimed_case::<{ 2 * LANES }>(&mut rng, 0.1);
        let blocks = packed(&list);
        let ray = Ray::new(origin, target - origin).with_range(
            if rng.gen_bool(0.5) { 0.0 } else { 0.5 },
            if rng.gen_bool(0.5) {
                f32::INFINITY
            } else {
                1.5
            },
        );
        let culling = if rng.gen_bool(0.5) {
            Culling::Back
        } else {
            Culling::None
        };
        let wray = WatertightRay::new(&ray);
        let decided = tri_hits(&blocks, 0xFF, &HitRay::of(&wray, culling), ray.t_max);
        for (k, [a, b, c]) in list.iter().enumerate() {
            if decided.undecided >> k & 1 != 0 || is_degenerate(*a, *b, *c) {
                continue;
            }
            let kernel = wray.intersect(*a, *b, *c, culling, EdgeRule::Closed);
            let simd = (decided.hit >> k & 1 != 0)
                .then(|| [decided.t[k], decided.u[k], decided.v[k]].map(f32::to_bits));
            assert_eq!(
                simd,
                kernel.map(|h| [h.t, h.u, h.v].map(f32::to_bits)),
                "{:?} {ray:?} {culling:?}",
                [a, b, c]
            );
            hits += usize::from(kernel.is_some());
            decided_misses += usize::from(kernel.is_none());
        }
    }
    assert!(
        hits > 20_000 && decided_misses > 100_000,
        "{hits} hits, {decided_misses} misses"
    );
}

#[test]
fn tri4_keeps_every_triangle_the_kernel_hits() {
    // The prefilter may keep misses but never drops a hit of the scalar watertight kernel.
    use crate::geom::triangle::{Culling, EdgeRule, WatertightRay};
    use crate::Ray;
    let mut rng = Pcg64::seed_from_u64(15);
    let mut kept_misses = 0usize;
    let mut hits = 0usize;
    for _ in 0..50_000 {
        let (list, origin, target) = aimed_case::<LANES>(&mut rng, 0.2);
        let tris = packed(&list)[0];
        let ray = Ray::new(origin, target - origin);
        let wray = WatertightRay::new(&ray);
        let mask = tri4_candidates(&tris, &ShearRay::of(&wray));
        for (lane, t) in list.iter().enumerate() {
            let hit = wray
                .intersect(t[0], t[1], t[2], Culling::None, EdgeRule::Closed)
                .is_some();
            hits += usize::from(hit);
            assert!(
                !hit || mask & (1 << lane) != 0,
                "lane {lane} dropped: {t:?} {ray:?}"
            );
            kept_misses += usize::from(!hit && mask & (1 << lane) != 0);
        }
    }
    assert!(hits > 10_000, "{hits}");
    // It does reject most misses (otherwise it would be useless).
    assert!(kept_misses < 50_000, "{kept_misses}");
}
