//! The 8-bit child boxes of a quantized wide node and their slab test: the float test of
//! [`super::boxes`] on planes dequantized in registers.

#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
use super::boxes::slab8_avx;
use super::{box8, box_scalar, BoxHits, BoxRay, Isa};

/// The eight child boxes of a quantized node ([`crate::bvh::quantized`]): 8 bits per plane on a
/// per-node grid. Row `r` (`min_x, max_x, min_y, max_y, min_z, max_z`) of lane `l` is the plane
/// `anchor[r] + q[r][l] · (±scale[r / 2])`, `+` for min rows and `−` for max rows: min planes count up
/// from the node's exact minimum and max planes down from its exact maximum, so every plane lies
/// inside the node's exact box. `scale` is a power of two (or 1 on an axis the grid cannot span), so
/// `q · scale` is exact and a plane is one rounding of `anchor ± q·scale`; the builder picks `q` so
/// that the rounded plane holds the child's exact box. Lanes whose bit in `valid` is clear are empty.
/// 88 bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct QuantBoxes8 {
    /// The node's exact box in row order: `min_x, max_x, min_y, max_y, min_z, max_z`.
    pub anchor: [f32; 6],
    /// Grid step per axis.
    pub scale: [f32; 3],
    /// Per row and lane, the number of steps from the anchor.
    pub q: [[u8; 8]; 6],
    /// Bit `l` set when lane `l` holds a child.
    pub valid: u8,
}

impl QuantBoxes8 {
    /// The grid step of row `row` with its sign: `+scale` for min rows, `−scale` for max rows.
    #[inline(always)]
    pub fn signed_scale(&self, row: usize) -> f32 {
        // The sign bit flipped for odd (max) rows, as `-scale` does, without a branch.
        f32::from_bits(self.scale[row / 2].to_bits() ^ ((row as u32 & 1) << 31))
    }

    /// Plane `row` of lane `lane` (the spec of every dequantization).
    #[inline(always)]
    pub fn plane(&self, row: usize, lane: usize) -> f32 {
        self.anchor[row] + f32::from(self.q[row][lane]) * self.signed_scale(row)
    }

    /// Every plane, as the rows of a float node.
    #[inline(always)]
    pub fn rows(&self) -> [[f32; 8]; 6] {
        std::array::from_fn(|row| std::array::from_fn(|lane| self.plane(row, lane)))
    }
}

/// The slab test of `ray` against the quantized boxes: [`box8`] on the dequantized rows, empty lanes
/// cleared. Scalar dequantization and two SSE halves here; [`qbox8_avx2`] dequantizes in registers.
#[inline(always)]
pub fn qbox8(boxes: &QuantBoxes8, ray: &BoxRay, t_max: f32) -> BoxHits<8> {
    let mut hits = box8(&boxes.rows(), ray, t_max);
    hits.mask &= u32::from(boxes.valid);
    hits
}

/// [`qbox8`] for the instruction set `isa`: [`qbox8_avx2`] on x86-64-v3 CPUs, else [`qbox8`].
/// Inlined into the loops that [`dispatch`](super::dispatch) compiles, where `isa` is a constant.
#[inline(always)]
pub fn qbox8_on(isa: Isa, boxes: &QuantBoxes8, ray: &BoxRay, t_max: f32) -> BoxHits<8> {
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    if isa.has_x86_64_v3() {
        // SAFETY: `isa` says the CPU is x86-64-v3 (only detection makes such a token).
        return unsafe { qbox8_avx2(boxes, ray, t_max) };
    }
    let _ = isa;
    qbox8(boxes, ray, t_max)
}

/// Scalar twin (the spec) of [`qbox8`] and [`qbox8_avx2`].
#[cfg_attr(
    not(test),
    allow(
        dead_code,
        reason = "a scalar twin: the spec the tests check its SIMD versions against"
    )
)]
#[inline(always)]
pub fn qbox8_scalar(boxes: &QuantBoxes8, ray: &BoxRay, t_max: f32) -> BoxHits<8> {
    let mut hits = box_scalar(&boxes.rows(), ray, t_max);
    hits.mask &= u32::from(boxes.valid);
    hits
}

/// [`qbox8`] with AVX2: the two rows each axis needs are widened from bytes, converted and scaled in
/// registers (`anchor + q·scale` by a multiply and an add, never fused, as the twin computes it).
///
/// # Safety
/// The CPU must support AVX and AVX2 (callers hold an [`Isa`] that has them: [`qbox8_on`]), and the
/// caller must be compiled with both enabled (`#[target_feature]`): it is inlined into the caller, so that the
/// ray's broadcast values stay in registers across nodes.
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
#[inline(always)]
pub unsafe fn qbox8_avx2(boxes: &QuantBoxes8, ray: &BoxRay, t_max: f32) -> BoxHits<8> {
    use std::arch::x86_64::*;
    // SAFETY: the caller guarantees AVX and AVX2. The slab test asks for rows below 6; each byte
    // load reads the eight bytes of one `[u8; 8]` row, unaligned.
    let mut hits = unsafe {
        // Inlined, so that the intrinsics are compiled for the caller's AVX2.
        slab8_avx(
            ray,
            t_max,
            #[inline(always)]
            |row| {
                let bytes = _mm_loadl_epi64(boxes.q[row].as_ptr().cast::<__m128i>());
                let q = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes));
                _mm256_add_ps(
                    _mm256_set1_ps(boxes.anchor[row]),
                    _mm256_mul_ps(q, _mm256_set1_ps(boxes.signed_scale(row))),
                )
            },
        )
    };
    hits.mask &= u32::from(boxes.valid);
    hits
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    use super::*;
    use crate::simd::test_support::*;

    #[test]
    fn qbox8_and_its_avx2_version_equal_the_scalar_twin() {
        let mut rng = Pcg64::seed_from_u64(21);
        let mut hits = 0u32;
        for _ in 0..100_000 {
            let boxes = QuantBoxes8 {
                anchor: [0; 6].map(|_| float(&mut rng)),
                scale: [0; 3].map(|_| {
                    if rng.gen_bool(0.8) {
                        2f32.powi(rng.gen_range(-30..30))
                    } else {
                        float(&mut rng)
                    }
                }),
                q: [[0; 8]; 6].map(|row| row.map(|_: u8| rng.gen())),
                valid: rng.gen(),
            };
            let mut ray = box_ray(&mut rng);
            let mut boxes = boxes;
            if rng.gen_bool(0.5) {
                // A node around the origin of size m and a ray starting near it: many lanes hit.
                let m = 10f32.powf(rng.gen_range(-3.0..3.0));
                boxes.anchor = [-m, m, -m, m, -m, m];
                boxes.scale = [2f32.powi((m / 128.0).log2().ceil() as i32); 3];
                ray.origin = [0; 3].map(|_| rng.gen_range(-2.0..2.0) * m);
                ray.t_min = 0.0;
                boxes.q = [[0; 8]; 6].map(|row| row.map(|_: u8| rng.gen_range(0..100)));
                boxes.valid = 0xFF;
            }
            let t_max = if rng.gen_bool(0.5) {
                f32::INFINITY
            } else {
                float(&mut rng)
            };
            let scalar = qbox8_scalar(&boxes, &ray, t_max);
            let simd = qbox8(&boxes, &ray, t_max);
            assert_eq!(simd.mask, scalar.mask, "{boxes:?} {ray:?} {t_max}");
            assert!(same_bits(&simd.t_near, &scalar.t_near, scalar.mask));
            #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
            if Isa::detected().has_x86_64_v3() {
                // SAFETY: the CPU has AVX2, checked just above.
                let avx2 = unsafe { qbox8_avx2(&boxes, &ray, t_max) };
                assert_eq!(avx2.mask, scalar.mask, "{boxes:?} {ray:?} {t_max}");
                assert!(same_bits(&avx2.t_near, &scalar.t_near, scalar.mask));
            }
            hits += scalar.mask.count_ones();
        }
        // Both answers occur often: the comparison is not vacuous.
        assert!(
            (10_000..700_000).contains(&hits),
            "{hits} lanes hit of 800000"
        );
    }
}
