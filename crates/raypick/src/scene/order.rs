//! Morton order (Z-order): the order point batches are answered in ([`super::point`]), so that
//! consecutive queries start close to each other and walk the same cached nodes.
//!
//! Ray batches are cast in their own order. Parallel rays from scattered origins (a directional
//! light's shadow rays from shuffled hit points) run up to 1.9× faster in the Morton order of
//! their origins (sibenik, sponza, one thread: they form tight packets), but putting a million
//! rays in that order and back (the sort, the gather, the scatter) cost ~60 ms on one thread,
//! more than the gain on scenes where such rays stop at once (the conference room: 16 Mrays/s
//! either way, 8–11 with the reordering). Callers that make such rays can make them in spatial
//! order (see BENCHMARKS.md, "Ideas measured and not kept").

use glam::Vec3;

use crate::Aabb;

/// The indices of `points` sorted by the Morton code (8 bits per axis) of their
/// position in `bounds` (points outside clamp to its faces, a NaN coordinate counts as its
/// minimum): points close in space come close in the order. Ties keep input order.
pub(crate) fn morton_order(points: &[Vec3], bounds: Aabb) -> Vec<u32> {
    let extent = (bounds.max - bounds.min).max(Vec3::splat(f32::MIN_POSITIVE));
    let scale = Vec3::splat(255.0) / extent;
    // Spreads the low 8 bits of `x` to every third bit (the usual 10-bit spread; 256 cells a side
    // are 16M cells, finer than a batch of a million points needs, in one radix pass less).
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
    let mut keyed: Vec<(u32, u32)> = points
        .iter()
        .enumerate()
        .map(|(i, &p)| (code(p), i as u32))
        .collect();
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
        let order = morton_order(&points, bounds);
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
        assert_eq!(morton_order(&same, bounds), [1, 3, 0, 2, 4]);
    }
}
