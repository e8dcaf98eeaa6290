//! Ray/sphere and ray/circle kernels against hand-checked values and an `f64` reference.
//!
//! Tolerance on `t`: `|t - t₆₄| <= 2⁻¹⁶ · (|t₆₄| + |O - C| / |D|)` — the error of a crossing
//! computed in `f32` is relative to the distances involved (the origin's distance to the centre, in
//! units of `|D|`), not to `t` alone, since a crossing near `t = 0` comes out of a difference of
//! two such distances. Hits and misses are compared away from tangency (where the `f64` reference's
//! `r² - m²` is at least `2⁻¹⁶ r²`); the classic agreement test compares every ray.

use glam::{DVec2, DVec3, Vec2, Vec3};
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, RngAlgorithm, RngSeed};
use rand::{Rng, SeedableRng};
use raypick::geom::circle::{
    circle_geometric, circle_geometric_intersects, circle_quadratic, Ray2,
};
use raypick::geom::sphere::{
    sphere_geometric, sphere_geometric_intersects, sphere_quadratic, sphere_quadratic_first,
    SphereHits,
};
use raypick::Ray;

const TOL: f64 = 1.0 / 65536.0;

fn config(cases: u32, seed: u64) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(seed),
        ..ProptestConfig::default()
    }
}

/// The reference in `f64`: both crossings of the line with the sphere, in increasing `t`, and
/// `(r² - m²) / r²` (how far from tangency: negative for a miss). Generic over 2-D and 3-D through
/// the three dot products the formula needs.
fn reference_dots(fd: f64, dd: f64, m2: f64, r: f64) -> (Option<(f64, f64)>, f64) {
    // f = O - C: |O + tD - C|² = r² ⇔ dd t² + 2 fd t + |f|² - r² = 0, whose roots are
    // -fd/dd ± √((r² - m²)/dd), m the distance from the centre to the line (computed by the caller as
    // the length of the perpendicular, which does not cancel even in f64).
    let margin = (r * r - m2) / (r * r);
    if m2 > r * r {
        return (None, margin);
    }
    let q = (r * r - m2).sqrt() / dd.sqrt();
    let s = -fd / dd;
    (Some((s - q, s + q)), margin)
}

fn reference(ray: &Ray, c: Vec3, r: f32) -> (Option<(f64, f64)>, f64) {
    let f = ray.origin.as_dvec3() - c.as_dvec3();
    let d = ray.dir.as_dvec3();
    let perp = f - d * (f.dot(d) / d.dot(d));
    reference_dots(f.dot(d), d.dot(d), perp.length_squared(), r as f64)
}

fn reference2(ray: &Ray2, c: Vec2, r: f32) -> (Option<(f64, f64)>, f64) {
    let f = ray.origin.as_dvec2() - c.as_dvec2();
    let d = ray.dir.as_dvec2();
    let perp = f - d * (f.dot(d) / d.dot(d));
    reference_dots(f.dot(d), d.dot(d), perp.length_squared(), r as f64)
}

/// The reference's crossings in `[t_min, t_max]`.
fn in_range(roots: Option<(f64, f64)>, t_min: f32, t_max: f32) -> Vec<f64> {
    let Some((a, b)) = roots else { return vec![] };
    [a, b]
        .into_iter()
        .filter(|&t| t >= t_min as f64 && t <= t_max as f64)
        .collect()
}

fn close(t: f32, t64: f64, scale: f64) -> bool {
    (t as f64 - t64).abs() <= TOL * (t64.abs() + scale)
}

// ---------------------------------------------------------------------------------------------
// Hand-checked values.

#[test]
fn hand_checked_crossings() {
    let c = Vec3::new(1.0, 2.0, 3.0);
    // Along +x through the centre, radius 2, from x = -4: crossings at x = -1 and 3, t = 3 and 7.
    let ray = Ray::new(Vec3::new(-4.0, 2.0, 3.0), Vec3::X);
    assert_eq!(sphere_quadratic(&ray, c, 2.0).as_slice(), &[3.0, 7.0]);
    assert_eq!(sphere_quadratic_first(&ray, c, 2.0), Some(3.0));
    assert_eq!(sphere_geometric(&ray, c, 2.0), Some(3.0));
    assert!(sphere_geometric_intersects(&ray, c, 2.0));
    // The same with |D| = 4 (t in units of D) and off-centre by 1.2 in y: half-chord 1.6.
    let ray = Ray::new(Vec3::new(-4.0, 3.2, 3.0), Vec3::new(4.0, 0.0, 0.0));
    let h = sphere_quadratic(&ray, c, 2.0);
    assert_eq!(h.len(), 2);
    assert!(
        (h.as_slice()[0] - 3.4 / 4.0).abs() < 1e-6 && (h.as_slice()[1] - 6.6 / 4.0).abs() < 1e-6
    );
    assert!((sphere_geometric(&ray, c, 2.0).unwrap() - 0.85).abs() < 1e-6);
    // Tangent: exactly one crossing.
    let tangent = Ray::new(Vec3::new(-4.0, 4.0, 3.0), Vec3::X);
    assert_eq!(sphere_quadratic(&tangent, c, 2.0).as_slice(), &[5.0]);
    assert_eq!(sphere_geometric(&tangent, c, 2.0), Some(5.0));
    // Just outside the tangent: none.
    let outside = Ray::new(Vec3::new(-4.0, 4.001, 3.0), Vec3::X);
    assert!(sphere_quadratic(&outside, c, 2.0).is_empty());
    assert_eq!(sphere_geometric(&outside, c, 2.0), None);
    assert!(!sphere_geometric_intersects(&outside, c, 2.0));
}

#[test]
fn rays_segments_lines_and_inside_origins() {
    let c = Vec3::ZERO;
    let from_inside = Ray::new(Vec3::new(0.0, 0.5, 0.0), Vec3::Y);
    assert_eq!(sphere_quadratic(&from_inside, c, 1.0).as_slice(), &[0.5]);
    assert_eq!(sphere_geometric(&from_inside, c, 1.0), Some(0.5));
    assert!(sphere_geometric_intersects(&from_inside, c, 1.0));
    // Behind an outside origin: a ray misses, the line through it has both crossings.
    let behind = Ray::new(Vec3::new(0.0, 3.0, 0.0), Vec3::Y);
    assert!(sphere_quadratic(&behind, c, 1.0).is_empty());
    assert_eq!(sphere_geometric(&behind, c, 1.0), None);
    assert!(!sphere_geometric_intersects(&behind, c, 1.0));
    let line = Ray::line(behind.origin, behind.dir);
    assert_eq!(sphere_quadratic(&line, c, 1.0).as_slice(), &[-4.0, -2.0]);
    assert_eq!(sphere_geometric(&line, c, 1.0), Some(-4.0));
    assert!(sphere_geometric_intersects(&line, c, 1.0));
    // Segments: ends before, ends inside, spans.
    let p = Vec3::new(0.0, -3.0, 0.0);
    assert!(sphere_quadratic(&Ray::segment(p, Vec3::new(0.0, -1.5, 0.0)), c, 1.0).is_empty());
    assert!(!sphere_geometric_intersects(
        &Ray::segment(p, Vec3::new(0.0, -1.5, 0.0)),
        c,
        1.0
    ));
    assert_eq!(
        sphere_quadratic(&Ray::segment(p, Vec3::ZERO), c, 1.0).as_slice(),
        &[2.0 / 3.0]
    );
    assert_eq!(
        sphere_geometric(&Ray::segment(p, Vec3::ZERO), c, 1.0),
        Some(2.0 / 3.0)
    );
    assert_eq!(
        sphere_quadratic(&Ray::segment(p, Vec3::new(0.0, 3.0, 0.0)), c, 1.0).as_slice(),
        &[1.0 / 3.0, 2.0 / 3.0]
    );
    // A segment that starts inside and ends outside: only the exit; the geometric method's "first
    // point" is the exit too.
    let seg = Ray::segment(Vec3::ZERO, Vec3::new(0.0, 4.0, 0.0));
    assert_eq!(sphere_quadratic(&seg, c, 1.0).as_slice(), &[0.25]);
    assert_eq!(sphere_geometric(&seg, c, 1.0), Some(0.25));
    // t_min past the first crossing.
    let r = Ray::new(Vec3::new(0.0, -3.0, 0.0), Vec3::Y).with_range(2.5, 10.0);
    assert_eq!(sphere_quadratic(&r, c, 1.0).as_slice(), &[4.0]);
    assert_eq!(sphere_geometric(&r, c, 1.0), Some(4.0));
    assert!(sphere_geometric_intersects(&r, c, 1.0));
    // The SphereHits API.
    let h = sphere_quadratic(&Ray::line(p, Vec3::Y), c, 1.0);
    assert_eq!((h.first(), h.last(), h.len()), (Some(2.0), Some(4.0), 2));
    assert_eq!(h.iter().collect::<Vec<_>>(), vec![2.0, 4.0]);
    assert_eq!((&h).into_iter().sum::<f32>(), 6.0);
    assert_eq!(SphereHits::NONE.first(), None);
}

#[test]
fn invalid_rays_and_spheres_miss_without_panic() {
    let good = Ray::new(Vec3::new(0.0, 0.0, -5.0), Vec3::Z);
    let bad_rays = [
        Ray::new(Vec3::new(f32::NAN, 0.0, -5.0), Vec3::Z),
        Ray::new(Vec3::new(0.0, f32::INFINITY, -5.0), Vec3::Z),
        Ray::new(good.origin, Vec3::new(0.0, 0.0, f32::NAN)),
        Ray::new(good.origin, Vec3::new(f32::INFINITY, 0.0, 1.0)),
        Ray::new(good.origin, Vec3::ZERO),
        good.with_range(f32::NAN, 1.0),
        good.with_range(7.0, 3.0),
    ];
    let spheres = [
        (Vec3::ZERO, 1.0),
        (Vec3::ZERO, -1.0),
        (Vec3::ZERO, f32::NAN),
        (Vec3::ZERO, f32::INFINITY),
        (Vec3::new(f32::NAN, 0.0, 0.0), 1.0),
        (Vec3::new(0.0, f32::INFINITY, 0.0), 1.0),
    ];
    for (i, &(c, r)) in spheres.iter().enumerate() {
        let valid = i == 0;
        assert_eq!(!sphere_quadratic(&good, c, r).is_empty(), valid);
        assert_eq!(sphere_geometric(&good, c, r).is_some(), valid);
        assert_eq!(sphere_geometric_intersects(&good, c, r), valid);
        for ray in bad_rays {
            assert!(sphere_quadratic(&ray, c, r).is_empty(), "{ray:?}");
            assert_eq!(sphere_geometric(&ray, c, r), None, "{ray:?}");
            assert!(!sphere_geometric_intersects(&ray, c, r), "{ray:?}");
        }
    }
    // Radius 0: a point, hit only by a line exactly through it (tangent, one crossing).
    assert_eq!(sphere_quadratic(&good, Vec3::ZERO, 0.0).as_slice(), &[5.0]);
    assert!(sphere_quadratic(&good, Vec3::new(0.0, 1e-10, 0.0), 0.0).is_empty());
    // Huge values: no panic, nothing non-finite reported.
    let huge = Ray::new(Vec3::splat(-f32::MAX), Vec3::splat(f32::MAX));
    for t in sphere_quadratic(&huge, Vec3::ZERO, f32::MAX).iter() {
        assert!(t.is_finite());
    }
    let _ = sphere_geometric(&huge, Vec3::ZERO, f32::MAX);
}

#[test]
fn small_far_spheres_keep_the_near_root() {
    // A sphere of radius 1e-3 at distance 1e3 (and 1e-3 at 1e5), seen off-centre by 0.6 r: the
    // textbook discriminant b² - ac subtracts two numbers of size 1e6 (resp. 1e10) to get 6.4e-7 and
    // is pure rounding; the stable form gets both crossings to f32 accuracy.
    for (dist, r) in [(1e3f32, 1e-3f32), (1e5, 1e-3), (1e6, 1.0), (1.0, 1e-6)] {
        let c = Vec3::new(0.0, 0.0, dist);
        let ray = Ray::new(Vec3::new(0.6 * r, 0.0, 0.0), Vec3::Z);
        let (roots, _) = reference(&ray, c, r);
        let (a, b) = roots.unwrap();
        let h = sphere_quadratic(&ray, c, r);
        assert_eq!(h.len(), 2, "{dist} {r}");
        for (t, t64) in h.iter().zip([a, b]) {
            // Within a few ulps of the f64 value.
            assert!(
                (t as f64 - t64).abs() <= 4.0 * (t64.abs() * f32::EPSILON as f64),
                "{dist} {r}: {t} vs {t64}"
            );
        }
        // The textbook form, for the record: it does not resolve the sphere at the larger distances.
        let f = ray.origin - c;
        let (bb, cc) = (f.dot(ray.dir), f.dot(f) - r * r);
        let naive = bb * bb - cc;
        // Δ = b² - ac = r² - m² for a unit direction; m = 0.6 r here.
        let exact = (r as f64).powi(2) * (1.0 - 0.36);
        if dist >= 1e5 {
            assert!(
                (naive as f64 - exact).abs() >= exact.abs(),
                "the naive form happens to be right: {naive} vs {exact}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The classic agreement test.

/// 100,000 rays between two random integer points of [0, 2000)³ (resampled when they coincide),
/// origin at the first, `D` = second - first (not unit), against the sphere of radius 1000 centred at
/// (1000, 1000, 1000): the quadratic and geometric methods agree with each other and with the f64
/// reference on hit/miss for every ray, and on the first `t` to the stated tolerance.
#[test]
fn classic_agreement_100k_rays() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(2000);
    let (c, r) = (Vec3::splat(1000.0), 1000.0f32);
    let mut hits = 0;
    let mut worst = 0.0f64;
    let mut closest_to_tangent = f64::INFINITY;
    for i in 0..100_000 {
        let (p, q) = loop {
            let mut p = || Vec3::from_array(std::array::from_fn(|_| rng.gen_range(0..2000) as f32));
            let (p, q) = (p(), p());
            if p != q {
                break (p, q);
            }
        };
        let ray = Ray::new(p, q - p);
        let (roots, margin) = reference(&ray, c, r);
        closest_to_tangent = closest_to_tangent.min(margin.abs());
        let expect = in_range(roots, ray.t_min, ray.t_max);
        let quad = sphere_quadratic(&ray, c, r);
        let geo = sphere_geometric(&ray, c, r);
        assert_eq!(quad.len(), expect.len(), "ray {i}: {ray:?}");
        assert_eq!(geo.is_some(), !expect.is_empty(), "ray {i}: {ray:?}");
        assert_eq!(
            sphere_geometric_intersects(&ray, c, r),
            !expect.is_empty(),
            "ray {i}"
        );
        assert_eq!(quad.first().is_some(), geo.is_some(), "ray {i}");
        let scale = (p - c).as_dvec3().length() / ray.dir.as_dvec3().length();
        for (t, t64) in quad.iter().zip(&expect) {
            assert!(close(t, *t64, scale), "ray {i}: quadratic {t} vs {t64}");
            worst = worst.max((t as f64 - t64).abs() / (t64.abs() + scale));
        }
        if let Some(t) = geo {
            assert!(
                close(t, expect[0], scale),
                "ray {i}: geometric {t} vs {}",
                expect[0]
            );
            worst = worst.max((t as f64 - expect[0]).abs() / (expect[0].abs() + scale));
            hits += 1;
        }
    }
    println!(
        "classic test: {hits} of 100000 rays hit; worst relative t error {worst:.2e}; \
         closest to tangency (r² - m²)/r² = {closest_to_tangent:.2e}"
    );
    assert!(hits > 50_000);
}

// ---------------------------------------------------------------------------------------------
// Random spheres and rays over magnitudes 1e-6..1e6.

fn unit3() -> impl Strategy<Value = DVec3> {
    [-1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0]
        .prop_map(|[x, y, z]| DVec3::new(x, y, z))
        .prop_filter("normalizable", |v| v.length() > 0.1)
        .prop_map(|v| v.normalize())
}

proptest! {
    #![proptest_config(config(4000, 0x5_F3E2))]

    /// A sphere of radius 10^[-6, 6] at distance up to 10³ radii from a point at magnitude up to
    /// 10⁶... and a ray from up to 10³ radii away, with `|D| = 10^[-3, 3]`, as a ray, a segment or a
    /// line: both methods agree with the f64 reference away from tangency.
    #[test]
    fn sphere_kernels_agree_with_f64(
        r_exp in -6.0f64..6.0,
        centre in unit3(), centre_exp in -1.0f64..3.0,
        from in unit3(), from_exp in -1.0f64..3.0,
        aim in unit3(), aim_r in 0.0f64..1.5,
        len_exp in -3.0f64..3.0,
        kind in 0usize..3, seg_len in 0.0f64..3.0,
    ) {
        let r = 10f64.powf(r_exp);
        let c = (centre * r * 10f64.powf(centre_exp)).as_vec3();
        let origin = (c.as_dvec3() + from * r * 10f64.powf(from_exp)).as_vec3();
        let target = c.as_dvec3() + aim * r * aim_r;
        let d = ((target - origin.as_dvec3()).normalize() * 10f64.powf(len_exp)).as_vec3();
        let base = Ray::new(origin, d);
        let ray = match kind {
            0 => base,
            1 => base.with_range(0.0, (seg_len * (target - origin.as_dvec3()).length() / d.as_dvec3().length()) as f32),
            _ => Ray::line(origin, d),
        };
        let r = r as f32;
        let (roots, margin) = reference(&ray, c, r);
        prop_assume!(margin.abs() >= TOL);
        let expect = in_range(roots, ray.t_min, ray.t_max);
        let scale = (origin - c).as_dvec3().length() / d.as_dvec3().length();
        // Crossings within tolerance of an interval end may legitimately be in or out.
        let at_end = roots.is_some_and(|(a, b)| [a, b].iter().any(|&t| {
            [ray.t_min, ray.t_max].iter().any(|&e| e.is_finite() && (t - e as f64).abs() <= TOL * (t.abs() + scale))
        }));
        prop_assume!(!at_end);
        let quad = sphere_quadratic(&ray, c, r);
        prop_assert_eq!(quad.len(), expect.len(), "{:?} {:?}", quad, expect);
        for (t, t64) in quad.iter().zip(&expect) {
            prop_assert!(close(t, *t64, scale), "quadratic {} vs {}", t, t64);
        }
        let geo = sphere_geometric(&ray, c, r);
        prop_assert_eq!(geo.is_some(), !expect.is_empty());
        prop_assert_eq!(sphere_geometric_intersects(&ray, c, r), !expect.is_empty());
        if let Some(t) = geo {
            // The geometric method's m² = l² - s² cancels when the sphere is far: its tolerance
            // grows with the ratio distance / radius (RTR's method, as published).
            let ratio = (origin - c).as_dvec3().length() / r as f64;
            let tol_scale = scale * ratio.max(1.0);
            prop_assert!(close(t, expect[0], tol_scale), "geometric {} vs {}", t, expect[0]);
        }
    }

    /// The same in 2-D for the circle kernels.
    #[test]
    fn circle_kernels_agree_with_f64(
        r_exp in -6.0f64..6.0,
        centre in unit3(), centre_exp in -1.0f64..3.0,
        from in unit3(), from_exp in -1.0f64..3.0,
        aim in unit3(), aim_r in 0.0f64..1.5,
        len_exp in -3.0f64..3.0,
        kind in 0usize..3, seg_len in 0.0f64..3.0,
    ) {
        let flat = |v: DVec3| { let v = DVec2::new(v.x, v.y); if v.length() > 1e-3 { v.normalize() } else { DVec2::X } };
        let r = 10f64.powf(r_exp);
        let c = (flat(centre) * r * 10f64.powf(centre_exp)).as_vec2();
        let origin = (c.as_dvec2() + flat(from) * r * 10f64.powf(from_exp)).as_vec2();
        let target = c.as_dvec2() + flat(aim) * r * aim_r;
        let d = ((target - origin.as_dvec2()).normalize() * 10f64.powf(len_exp)).as_vec2();
        prop_assume!(d.is_finite() && d != Vec2::ZERO);
        let base = Ray2::new(origin, d);
        let ray = match kind {
            0 => base,
            1 => Ray2 { t_max: (seg_len * (target - origin.as_dvec2()).length() / d.as_dvec2().length()) as f32, ..base },
            _ => Ray2::line(origin, d),
        };
        let r = r as f32;
        let (roots, margin) = reference2(&ray, c, r);
        prop_assume!(margin.abs() >= TOL);
        let expect = in_range(roots, ray.t_min, ray.t_max);
        let scale = (origin - c).as_dvec2().length() / d.as_dvec2().length();
        let at_end = roots.is_some_and(|(a, b)| [a, b].iter().any(|&t| {
            [ray.t_min, ray.t_max].iter().any(|&e| e.is_finite() && (t - e as f64).abs() <= TOL * (t.abs() + scale))
        }));
        prop_assume!(!at_end);
        let quad = circle_quadratic(&ray, c, r);
        prop_assert_eq!(quad.len(), expect.len());
        for (t, t64) in quad.iter().zip(&expect) {
            prop_assert!(close(t, *t64, scale), "quadratic {} vs {}", t, t64);
        }
        let geo = circle_geometric(&ray, c, r);
        prop_assert_eq!(geo.is_some(), !expect.is_empty());
        prop_assert_eq!(circle_geometric_intersects(&ray, c, r), !expect.is_empty());
        if let Some(t) = geo {
            let ratio = (origin - c).as_dvec2().length() / r as f64;
            prop_assert!(close(t, expect[0], scale * ratio.max(1.0)), "geometric {} vs {}", t, expect[0]);
        }
    }
}

#[test]
fn circle_hand_checked() {
    let c = Vec2::new(1.0, 1.0);
    let ray = Ray2::new(Vec2::new(-2.0, 1.0), Vec2::new(2.0, 0.0));
    assert_eq!(circle_quadratic(&ray, c, 1.0).as_slice(), &[1.0, 2.0]);
    assert_eq!(circle_geometric(&ray, c, 1.0), Some(1.0));
    assert!(circle_geometric_intersects(&ray, c, 1.0));
    // Tangent, inside, behind, segment, invalid.
    assert_eq!(
        circle_quadratic(&Ray2::new(Vec2::new(-2.0, 2.0), Vec2::X), c, 1.0).as_slice(),
        &[3.0]
    );
    assert_eq!(circle_geometric(&Ray2::new(c, Vec2::Y), c, 1.0), Some(1.0));
    assert_eq!(
        circle_geometric(&Ray2::new(Vec2::new(3.0, 1.0), Vec2::X), c, 1.0),
        None
    );
    assert_eq!(
        circle_quadratic(&Ray2::line(Vec2::new(3.0, 1.0), Vec2::X), c, 1.0).as_slice(),
        &[-3.0, -1.0]
    );
    assert!(circle_quadratic(
        &Ray2::segment(Vec2::new(-2.0, 1.0), Vec2::new(-0.5, 1.0)),
        c,
        1.0
    )
    .is_empty());
    assert_eq!(
        circle_quadratic(
            &Ray2::segment(Vec2::new(-1.0, 1.0), Vec2::new(1.0, 1.0)),
            c,
            1.0
        )
        .as_slice(),
        &[0.5]
    );
    assert!(!Ray2::new(Vec2::ZERO, Vec2::ZERO).is_valid());
    assert!(circle_quadratic(&Ray2::new(Vec2::NAN, Vec2::X), c, 1.0).is_empty());
    assert_eq!(
        circle_geometric(&Ray2::new(Vec2::ZERO, Vec2::INFINITY), c, 1.0),
        None
    );
    assert!(!circle_geometric_intersects(
        &Ray2::new(Vec2::ZERO, Vec2::X),
        c,
        f32::NAN
    ));
    assert_eq!(Ray2::new(Vec2::ZERO, Vec2::X).at(2.0), Vec2::new(2.0, 0.0));
}
