//! The ray/sphere kernel used by scenes (until `geom::sphere` provides the shared one).
//!
//! Precision (pbrt-v4 §6.8.4; Haines et al., "Precision Improvements for Ray/Sphere Intersection",
//! Ray Tracing Gems ch. 7): the discriminant is computed as `a·(r - |l|)(r + |l|)` where `l` is the
//! vector from the centre to the point of the line closest to it, instead of `b² - ac`, which cancels
//! catastrophically for small spheres far away; the roots come from the stable pair `q/a`, `c/q`.

use glam::Vec3;

/// Both parameters `[t0, t1]` (`t0 <= t1`) where the line `origin + t·dir` meets the sphere, in
/// units of `dir`, or `None` when it misses (or an input is NaN or `dir` is zero). A tangent line
/// gives a double root. No range check: the caller clips to its `[t_min, t_max]`.
///
/// ```
/// use raypick::{glam::Vec3, scene::sphere_roots};
/// let [t0, t1] = sphere_roots(Vec3::new(0.0, 0.0, 5.0), Vec3::new(0.0, 0.0, -2.0), Vec3::ZERO, 1.0).unwrap();
/// assert_eq!((t0, t1), (2.0, 3.0));
/// ```
#[inline]
pub fn sphere_roots(origin: Vec3, dir: Vec3, center: Vec3, radius: f32) -> Option<[f32; 2]> {
    let f = origin - center;
    let a = dir.length_squared();
    // Half of the usual `b`: the quadratic is a·t² + 2b·t + c.
    let b = f.dot(dir);
    let l = f - (b / a) * dir;
    let l_len = l.length();
    // r² - |l|², factored to avoid cancellation; b² - ac = a·(r² - |l|²).
    let disc = (radius - l_len) * (radius + l_len);
    if disc.is_nan() || disc < 0.0 {
        return None;
    }
    let root = (a * disc).sqrt();
    let q = -(b + root.copysign(b));
    let f_len = f.length();
    let c = (f_len - radius) * (f_len + radius);
    let (t0, t1) = if q == 0.0 {
        // b = 0 and a tangent line: the double root is at t = -b/a = 0.
        (0.0, 0.0)
    } else {
        (q / a, c / q)
    };
    if t0.is_nan() || t1.is_nan() {
        return None;
    }
    Some(if t0 <= t1 { [t0, t1] } else { [t1, t0] })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The roots in f64 from the textbook formula.
    fn reference(o: Vec3, d: Vec3, c: Vec3, r: f32) -> Option<[f64; 2]> {
        let (o, d, c) = (o.as_dvec3(), d.as_dvec3(), c.as_dvec3());
        let f = o - c;
        let (a, b, cc) = (d.dot(d), f.dot(d), f.dot(f) - (r as f64).powi(2));
        let disc = b * b - a * cc;
        (disc >= 0.0).then(|| [(-b - disc.sqrt()) / a, (-b + disc.sqrt()) / a])
    }

    #[test]
    fn matches_f64_over_magnitudes() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
        for _ in 0..2000 {
            let scale = 10f32.powi(rng.gen_range(-3..=5));
            let c = Vec3::new(rng.gen(), rng.gen(), rng.gen()) * scale * 10.0;
            let r = scale * rng.gen_range(0.1..1.0);
            let target = c + Vec3::new(
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
            ) * r
                * 0.5;
            let o = c + Vec3::new(
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
            )
            .normalize()
                * r
                * rng.gen_range(2.0..50.0);
            let d = (target - o) * rng.gen_range(0.1..10.0);
            let got = sphere_roots(o, d, c, r).expect("aimed inside the sphere");
            let want = reference(o, d, c, r).unwrap();
            // Both roots lie on the sphere to f32 accuracy relative to the distances involved.
            for k in 0..2 {
                let err = (got[k] as f64 - want[k]).abs();
                let tol = 1e-5 * want[1].abs().max(1e-3);
                assert!(
                    err <= tol,
                    "root {k}: {} vs {} (o {o}, d {d}, c {c}, r {r})",
                    got[k],
                    want[k]
                );
            }
        }
    }

    #[test]
    fn misses_tangents_and_bad_input() {
        assert!(sphere_roots(Vec3::new(0.0, 2.0, 5.0), Vec3::NEG_Z, Vec3::ZERO, 1.0).is_none());
        assert_eq!(
            sphere_roots(Vec3::new(0.0, 1.0, 5.0), Vec3::NEG_Z, Vec3::ZERO, 1.0),
            Some([5.0, 5.0])
        );
        assert!(sphere_roots(Vec3::ZERO, Vec3::ZERO, Vec3::Z, 1.0).is_none());
        assert!(sphere_roots(Vec3::NAN, Vec3::Z, Vec3::ZERO, 1.0).is_none());
        // From inside: one root behind, one ahead.
        let [t0, t1] = sphere_roots(Vec3::ZERO, Vec3::X, Vec3::ZERO, 2.0).unwrap();
        assert_eq!((t0, t1), (-2.0, 2.0));
    }
}
