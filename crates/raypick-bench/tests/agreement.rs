//! The comparison itself under test: every engine, on a small generated mesh and a few hundred rays,
//! must agree with the f64 brute force, report `t` in units of the ray direction, and the check must
//! catch an engine that is wrong.

use std::f32::consts::{PI, TAU};

use glam::Vec3;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use raypick::Ray;
use raypick_bench::{
    agree::{self, Answers},
    engines::{EngineKind, HitRec},
    mesh::Mesh,
    rays,
};

/// A closed, bumpy UV sphere (radii 0.7..1.3 around the origin) plus a few free-floating random
/// triangles crossing it: closed surfaces, shared edges and vertices, overlaps, both facings.
fn blob(seed: u64) -> Mesh {
    let mut rng = Pcg64::seed_from_u64(seed);
    let (rings, segments) = (12u32, 20u32);
    let mut vertices = vec![Vec3::new(0.0, 1.0, 0.0)];
    for i in 1..rings {
        let theta = PI * i as f32 / rings as f32;
        for j in 0..segments {
            let phi = TAU * j as f32 / segments as f32;
            let r = rng.gen_range(0.7..1.3);
            vertices.push(
                r * Vec3::new(
                    theta.sin() * phi.cos(),
                    theta.cos(),
                    theta.sin() * phi.sin(),
                ),
            );
        }
    }
    vertices.push(Vec3::new(0.0, -1.0, 0.0));
    let ring = |i: u32, j: u32| 1 + (i - 1) * segments + j % segments;
    let south = vertices.len() as u32 - 1;
    let mut indices = Vec::new();
    for j in 0..segments {
        indices.push([0, ring(1, j + 1), ring(1, j)]);
        indices.push([south, ring(rings - 1, j), ring(rings - 1, j + 1)]);
        for i in 1..rings - 1 {
            let (a, b, c, d) = (
                ring(i, j),
                ring(i, j + 1),
                ring(i + 1, j),
                ring(i + 1, j + 1),
            );
            indices.push([a, b, d]);
            indices.push([a, d, c]);
        }
    }
    for _ in 0..12 {
        let base = vertices.len() as u32;
        for _ in 0..3 {
            vertices.push(Vec3::new(
                rng.gen_range(-1.5..1.5),
                rng.gen_range(-1.5..1.5),
                rng.gen_range(-1.5..1.5),
            ));
        }
        indices.push([base, base + 1, base + 2]);
    }
    Mesh { vertices, indices }
}

/// Incoherent and primary rays at the mesh, half of them with directions scaled by 0.01..100 (so `t`
/// units matter), all with `t ∈ [0, ∞)`.
fn test_rays(mesh: &Mesh) -> Vec<Ray> {
    let mut rng = Pcg64::seed_from_u64(99);
    let mut all = rays::incoherent(mesh, 300, 5);
    all.extend(rays::primary(mesh, 14));
    for ray in all.iter_mut().skip(1).step_by(2) {
        ray.dir *= 10f32.powf(rng.gen_range(-2.0..2.0));
    }
    all
}

fn answers(kind: EngineKind, mesh: &Mesh, rays: &[Ray]) -> Answers {
    let engine = kind.build(mesh).unwrap();
    let mut closest = vec![None; rays.len()];
    let mut any = vec![false; rays.len()];
    engine.closest_batch(rays, &mut closest);
    engine.any_batch(rays, &mut any);
    Answers {
        name: kind.name().to_string(),
        closest,
        any,
    }
}

#[test]
fn every_engine_agrees_with_the_f64_brute_force() {
    let mesh = blob(3);
    let rays = test_rays(&mesh);
    let all: Vec<Answers> = EngineKind::available()
        .iter()
        .map(|&kind| answers(kind, &mesh, &rays))
        .collect();
    let report = agree::compare(&mesh, &rays, &all, usize::MAX);
    assert!(report.no_errors(), "{report:#?}");
    assert_eq!(report.checked, report.disputed, "every dispute settled");

    let reference: Vec<_> = rays
        .iter()
        .map(|r| agree::brute_force_f64(&mesh, r))
        .collect();
    let ref_hits = reference.iter().filter(|r| r.is_some()).count();
    assert!(
        ref_hits > rays.len() / 3 && ref_hits < rays.len(),
        "{ref_hits} hits: a poor test"
    );
    for (engine, line) in all.iter().zip(&report.engines) {
        // Random rays graze an edge with probability ~0: allow a couple, no more.
        assert!(
            line.closest.grazing <= 2 && line.any.grazing <= 2,
            "{line:?}"
        );
        assert!(
            line.hits.abs_diff(ref_hits) <= line.closest.grazing,
            "{line:?} vs {ref_hits}"
        );
        // Where the engine names the reference triangle, its t (units of dir) matches the f64 one.
        for ((hit, r), ray) in engine.closest.iter().zip(&reference).zip(&rays) {
            if let (Some(HitRec { t, prim }), Some(r)) = (hit, r) {
                if *prim == r.prim {
                    let err = (*t as f64 - r.t).abs() / r.t;
                    assert!(err < 1e-5, "{}: t = {t} vs {} on {ray:?}", engine.name, r.t);
                }
            }
        }
    }
}

#[test]
fn the_check_catches_a_wrong_engine() {
    let mesh = blob(4);
    let rays = test_rays(&mesh);
    let good = answers(EngineKind::Raypick, &mesh, &rays);
    let mut bad = answers(EngineKind::Raypick, &mesh, &rays);
    bad.name = "raypick, sabotaged".into();
    // Report the farthest hit instead of the nearest on every tenth hitting ray: an engine that
    // forgets to shrink t_max.
    let mut sabotaged = 0;
    for (i, ray) in rays.iter().enumerate() {
        if bad.closest[i].is_none() || i % 10 != 0 {
            continue;
        }
        let farthest = (0..mesh.num_triangles())
            .filter_map(|p| {
                let [v0, v1, v2] = mesh.triangle(p);
                raypick_bench::engines::moller_trumbore(ray, f32::INFINITY, v0, v1, v2)
                    .map(|(t, _, _)| HitRec { t, prim: p as u32 })
            })
            .max_by(|a, b| a.t.total_cmp(&b.t))
            .unwrap();
        if Some(farthest.prim) != bad.closest[i].map(|h| h.prim) {
            bad.closest[i] = Some(farthest);
            sabotaged += 1;
        }
    }
    assert!(sabotaged >= 5, "only {sabotaged} rays sabotaged");
    let report = agree::compare(&mesh, &rays, &[good, bad], usize::MAX);
    let line = &report.engines[1];
    assert_eq!(line.prim_vs_first, sabotaged);
    assert_eq!(line.closest.wrong, sabotaged, "{line:?}");
    assert!(!report.no_errors());
}
