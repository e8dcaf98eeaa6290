//! Random inputs shared by the SIMD routines' tests.

use rand::Rng;
use rand_pcg::Pcg64;

use super::boxes::BoxRay;

/// A float drawn from a mix of ordinary magnitudes (1e-6..1e6, both signs) and edge values.
pub(crate) fn float(rng: &mut Pcg64) -> f32 {
    const SPECIAL: [f32; 8] = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MIN_POSITIVE,
        f32::NAN,
    ];
    if rng.gen_bool(0.08) {
        SPECIAL[rng.gen_range(0..SPECIAL.len())]
    } else {
        let magnitude = 10f32.powf(rng.gen_range(-6.0..6.0));
        if rng.gen_bool(0.5) {
            magnitude
        } else {
            -magnitude
        }
    }
}

pub(crate) fn box_ray(rng: &mut Pcg64) -> BoxRay {
    let dir = [0; 3].map(|_| float(rng));
    let origin = [0; 3].map(|_| float(rng));
    let t_min = if rng.gen_bool(0.5) { 0.0 } else { float(rng) };
    BoxRay::new(origin, dir, t_min)
}

/// Random rows of `W` boxes (one lane made empty, as the wide BVH pads its nodes, with
/// probability `empty`), a random ray and a random `t_max`.
pub(crate) fn random_box_case<const W: usize>(
    rng: &mut Pcg64,
    empty: f64,
) -> ([[f32; W]; 6], BoxRay, f32) {
    let mut bounds = [[0.0; W]; 6];
    for row in &mut bounds {
        for x in row.iter_mut() {
            *x = float(rng);
        }
    }
    if rng.gen_bool(empty) {
        let lane = rng.gen_range(0..W);
        for axis in 0..3 {
            bounds[2 * axis][lane] = f32::INFINITY;
            bounds[2 * axis + 1][lane] = f32::NEG_INFINITY;
        }
    }
    let ray = box_ray(rng);
    let t_max = if rng.gen_bool(0.5) {
        f32::INFINITY
    } else {
        float(rng)
    };
    (bounds, ray, t_max)
}

pub(crate) fn same_bits(a: &[f32], b: &[f32], mask: u32) -> bool {
    a.iter()
        .zip(b)
        .enumerate()
        .all(|(i, (x, y))| mask & (1 << i) == 0 || x.to_bits() == y.to_bits())
}
