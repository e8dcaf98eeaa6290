//! Random boxes and rays shared by the wide and quantized BVH tests.

use glam::Vec3;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::{Aabb, Ray};

/// `n` boxes of size 0.01–1 (times `scale`) in a cube of side 20 (times `scale`), and their centres.
pub(crate) fn random_boxes(n: usize, seed: u64, scale: f32) -> (Vec<Aabb>, Vec<Vec3>) {
    let mut rng = Pcg64::seed_from_u64(seed);
    let boxes: Vec<Aabb> = (0..n)
        .map(|_| {
            let p = Vec3::new(
                rng.gen_range(-10.0..10.0),
                rng.gen_range(-10.0..10.0),
                rng.gen_range(-10.0..10.0),
            ) * scale;
            Aabb::new(p, p + Vec3::splat(rng.gen_range(0.01..1.0) * scale))
        })
        .collect();
    let centroids = boxes.iter().map(Aabb::center).collect();
    (boxes, centroids)
}

/// Ray `k` of a test: origin in a cube of half-side `reach`, random direction; every fourth ray is
/// parallel to an axis plane and every eighth to an axis (infinite `1/dir` components).
pub(crate) fn random_ray(rng: &mut Pcg64, k: usize, reach: f32) -> Ray {
    let origin = Vec3::new(
        rng.gen_range(-reach..reach),
        rng.gen_range(-reach..reach),
        rng.gen_range(-reach..reach),
    );
    let mut dir = Vec3::new(
        rng.gen_range(-1.0..1.0),
        rng.gen_range(-1.0..1.0),
        rng.gen_range(-1.0..1.0),
    );
    if k % 4 == 0 {
        dir[k / 4 % 3] = 0.0;
    }
    if k % 8 == 0 {
        dir[(k / 8 + 1) % 3] = 0.0;
    }
    Ray::new(origin, dir)
}
