//! The order a batch is answered in: Morton order (Z-order) of points, and the one kind of ray
//! batch whose own order costs a walk its coherence, parallel rays from scattered origins.
//!
//! A directional light's shadow rays, an orthographic view or a sampling along one axis give
//! rays that share a direction; from hit points in shuffled order (or any order unrelated to
//! space) neighbouring rays start far apart, so the batch walk finds no packet and each ray
//! reloads the nodes its predecessor left. Cast in the Morton order of their origins the same
//! rays form tight packets (same direction, close origins) and share cached nodes: on the
//! matrix's directional shadow rays, 1.9× on sponza and sibenik (one thread), where the sort
//! costs a tenth of that. Rays of other batches (camera rays, bounces and shadow rays in pixel
//! order, rays of random directions) gain nothing from reordering, so only parallel rays in
//! scattered order are reordered ([`scattered_parallel_order`]). Every ray is answered on its
//! own (packets answer as single rays do), so the order never changes an answer.

use glam::Vec3;

use crate::Aabb;

/// The indices of `n` points (`point(i)`) sorted by the Morton code (8 bits per axis) of their
/// position in `bounds` (points outside clamp to its faces, a NaN coordinate counts as its
/// minimum): points close in space come close in the order. Ties keep input order.
pub(crate) fn morton_order(n: usize, point: impl Fn(usize) -> Vec3, bounds: Aabb) -> Vec<u32> {
    let extent = (bounds.max - bounds.min).max(Vec3::splat(f32::MIN_POSITIVE));
    let scale = Vec3::splat(255.0) / extent;
    // Spreads the low 8 bits of `x` to every third bit (the usual 10-bit spread; 256 cells a side
    // order the rays of a million-ray batch as well as 1024 do, in one radix pass less).
    let spread = |x: u32| {
        let mut x = x & 0xff;
        x = (x | x << 16) & 0x0300_00ff;
        x = (x | x << 8) & 0x0300_f00f;
        x = (x | x << 4) & 0x030c_30c3;
        (x | x << 2) & 0x0924_9249
    };
    let code = |p: Vec3| {
        // `as u32` saturates (and sends NaN to 0); a finite box keeps `scale` finite, and an
        // infinite or NaN one gives some order, still a permutation.
        let q = ((p - bounds.min) * scale).to_array().map(|c| c as u32);
        spread(q[0]) << 2 | spread(q[1]) << 1 | spread(q[2])
    };
    // A least-significant-digit radix sort, three stable passes of 8 bits: a few linear passes,
    // where a comparison sort of the same keys took a tenth of a fast point-query batch.
    let mut keyed: Vec<(u32, u32)> = (0..n).map(|i| (code(point(i)), i as u32)).collect();
    let mut other = vec![(0u32, 0u32); keyed.len()];
    for shift in [0, 8, 16] {
        let digit = |k: u32| (k >> shift & 0xff) as usize;
        let mut start = [0u32; 257];
        for &(k, _) in &keyed {
            start[digit(k) + 1] += 1;
        }
        for d in 0..256 {
            start[d + 1] += start[d];
        }
        for &e in &keyed {
            let at = &mut start[digit(e.0)];
            other[*at as usize] = e;
            *at += 1;
        }
        std::mem::swap(&mut keyed, &mut other);
    }
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// Batches smaller than this are cast in their own order: sorting would not pay.
const MIN_REORDER: usize = 2048;

/// Rays sampled to decide (pairs of neighbours, evenly spread over the batch).
const SAMPLES: usize = 64;

/// The Morton order of the origins of a batch of `n` rays (origin `origin(i)`, direction
/// `dir(i)`) when it is a batch of
/// parallel rays in scattered order (see the [module docs](self)), else `None` (cast it as it
/// is). Decided on [`SAMPLES`] pairs of neighbouring rays spread over the batch: every sampled
/// direction equal to the first (bit for bit, as a directional light's rays are), finite
/// origins, and neighbours on average farther apart than 1/64 of the diagonal of the sampled
/// origins' box (pixel order puts neighbours about 1/1000 apart; shuffled points about 1/2).
pub fn scattered_parallel_order(
    n: usize,
    origin: impl Fn(usize) -> Vec3,
    dir: impl Fn(usize) -> Vec3,
) -> Option<Vec<u32>> {
    if n < MIN_REORDER {
        return None;
    }
    let first = dir(0);
    let mut origins = Aabb::EMPTY;
    let mut steps = 0.0f64;
    for k in 0..SAMPLES {
        let i = k * (n - 2) / (SAMPLES - 1);
        let (a, b) = (origin(i), origin(i + 1));
        if dir(i) != first || dir(i + 1) != first || !a.is_finite() || !b.is_finite() {
            return None;
        }
        origins = origins.grow(a).grow(b);
        steps += f64::from((b - a).length());
    }
    // Finite origins: both are finite, and equal origins (0 and 0) stay as they are.
    let diagonal = f64::from((origins.max - origins.min).length());
    if steps / SAMPLES as f64 <= diagonal / 64.0 {
        return None;
    }
    // The sampled origins' box orders the batch: origins outside it clamp to its faces, which
    // keeps them together (a pass for the whole batch's box cost a fifth of the sort).
    Some(morton_order(n, origin, origins))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn morton_order_is_a_permutation_that_keeps_ties_and_groups_neighbours() {
        // A 16³ lattice, shuffled: in Morton order each aligned run of 8 is one 2×2×2 cell.
        let mut points: Vec<Vec3> = (0..4096)
            .map(|i| Vec3::new((i % 16) as f32, (i / 16 % 16) as f32, (i / 256) as f32))
            .collect();
        let mut s = 7u64;
        for i in (1..points.len()).rev() {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            points.swap(i, (s >> 33) as usize % (i + 1));
        }
        let bounds = Aabb::new(Vec3::ZERO, Vec3::splat(15.0));
        let order = morton_order(points.len(), |i| points[i], bounds);
        let mut seen = order.clone();
        seen.sort_unstable();
        assert!(seen.iter().enumerate().all(|(i, &j)| i as u32 == j));
        for cell in order.chunks(8) {
            let lo = cell
                .iter()
                .map(|&i| points[i as usize])
                .fold(Vec3::INFINITY, Vec3::min);
            let hi = cell
                .iter()
                .map(|&i| points[i as usize])
                .fold(Vec3::NEG_INFINITY, Vec3::max);
            assert_eq!(hi - lo, Vec3::ONE, "{lo} {hi}");
        }
        // Equal points (and NaN, which counts as the box's minimum) keep their input order.
        let same = [Vec3::ONE, Vec3::NAN, Vec3::ONE, Vec3::ZERO, Vec3::ONE];
        assert_eq!(morton_order(5, |i| same[i], bounds), [1, 3, 0, 2, 4]);
    }

    #[test]
    fn only_parallel_rays_in_scattered_order_are_reordered() {
        let n = 10_000;
        let hash = |i: usize| ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as f32;
        let scattered =
            |i: usize| Vec3::new(hash(i) % 97.0, hash(i + n) % 89.0, hash(i + 2 * n) % 83.0);
        let in_rows = |i: usize| Vec3::new((i % 100) as f32, (i / 100) as f32, 0.0);
        let sun = Vec3::new(0.3, 0.9, 0.1);
        let order = scattered_parallel_order(n, scattered, |_| sun).unwrap();
        // In Morton order, neighbours are close.
        let step = |o: &[u32]| -> f32 {
            o.windows(2)
                .map(|w| (scattered(w[1] as usize) - scattered(w[0] as usize)).length())
                .sum()
        };
        let input: Vec<u32> = (0..n as u32).collect();
        assert!(
            step(&order) * 10.0 < step(&input),
            "{} {}",
            step(&order),
            step(&input)
        );
        // Parallel rays in pixel order (an orthographic camera), rays of varied directions, a
        // batch too small to pay: as they are.
        assert!(scattered_parallel_order(n, in_rows, |_| sun).is_none());
        assert!(scattered_parallel_order(n, scattered, |i| scattered(i + 1)).is_none());
        assert!(scattered_parallel_order(100, scattered, |_| sun).is_none());
    }
}
