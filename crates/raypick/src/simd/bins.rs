//! The bin indices of the binned SAH builder ([`crate::bvh::build`]): the three lanes of a
//! centroid's offset `(c − cmin) · scale` truncated to integers and clamped to the last bin, as
//! the scalar twin [`bins3_scalar`] spells it: `(x as usize).min(last)`, where `as` saturates (a
//! NaN or negative lane gives 0, +∞ gives the last bin).
//!
//! The vector versions clamp in floats first, `min(max(x, 0), last)` with `MAXPS`'s NaN rule
//! (a NaN `x` gives the second operand, 0), then truncate: every lane is then in `0..=last`,
//! where truncation is exact, so the answers are the twin's for every input. Three saturating
//! scalar conversions cost about twenty instructions; these cost four.

use glam::Vec3A;

/// The bins of the three lanes of `offset` (lane 3 ignored), each `(x as usize).min(last)`;
/// `last` at most 2^24 (exact in `f32`).
#[inline(always)]
pub fn bins3(offset: Vec3A, last: u32) -> [u32; 3] {
    debug_assert!(last <= 1 << 24);
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    {
        sse::bins3(offset, last)
    }
    #[cfg(all(
        target_arch = "wasm32",
        target_feature = "simd128",
        not(feature = "force-scalar")
    ))]
    {
        simd128::bins3(offset, last)
    }
    #[cfg(not(any(
        all(target_arch = "x86_64", not(feature = "force-scalar")),
        all(
            target_arch = "wasm32",
            target_feature = "simd128",
            not(feature = "force-scalar")
        )
    )))]
    {
        bins3_scalar(offset, last)
    }
}

/// The twin of [`bins3`]: the specification.
#[cfg_attr(
    not(test),
    allow(
        dead_code,
        reason = "a scalar twin: the spec the tests check its SIMD versions against"
    )
)]
#[inline(always)]
pub fn bins3_scalar(offset: Vec3A, last: u32) -> [u32; 3] {
    offset
        .to_array()
        .map(|x| (x as usize).min(last as usize) as u32)
}

#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
mod sse {
    //! SSE2 (the x86-64 baseline, always available; see [`super::super::boxes`]).
    use std::arch::x86_64::*;

    use glam::Vec3A;

    #[inline(always)]
    pub fn bins3(offset: Vec3A, last: u32) -> [u32; 3] {
        let x: __m128 = offset.into();
        let mut out = [0i32; 4];
        // SAFETY: SSE2 is always available on x86-64; the store writes the four i32 of `out`
        // (unaligned store).
        unsafe {
            // MAXPS(x, 0) gives 0 for a NaN x; after the clamp every lane is in 0..=last, where
            // the truncating conversion is exact.
            let clamped = _mm_min_ps(_mm_max_ps(x, _mm_setzero_ps()), _mm_set1_ps(last as f32));
            _mm_storeu_si128(out.as_mut_ptr().cast(), _mm_cvttps_epi32(clamped));
        }
        [out[0] as u32, out[1] as u32, out[2] as u32]
    }
}

#[cfg(all(
    target_arch = "wasm32",
    target_feature = "simd128",
    not(feature = "force-scalar")
))]
mod simd128 {
    //! WebAssembly `simd128`: `pmax(0, x)` is `MAXPS(x, 0)` (0 for a NaN x), and the saturating
    //! truncation is exact on the clamped lanes.
    use core::arch::wasm32::*;

    use glam::Vec3A;

    #[inline(always)]
    pub fn bins3(offset: Vec3A, last: u32) -> [u32; 3] {
        let x: v128 = offset.into();
        let clamped = f32x4_pmin(f32x4_splat(last as f32), f32x4_pmax(f32x4_splat(0.0), x));
        let k = i32x4_trunc_sat_f32x4(clamped);
        [
            u32x4_extract_lane::<0>(k),
            u32x4_extract_lane::<1>(k),
            u32x4_extract_lane::<2>(k),
        ]
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    use super::*;
    use crate::simd::test_support::float;

    #[test]
    fn bins3_equals_its_scalar_twin_on_random_and_special_values() {
        let mut rng = Pcg64::seed_from_u64(23);
        for _ in 0..200_000 {
            let last = [1, 7, 31, 63, 255][rng.gen_range(0..5)];
            // Offsets around the bin range as well as across all magnitudes and specials.
            let x = |rng: &mut Pcg64| {
                if rng.gen_bool(0.5) {
                    rng.gen_range(-2.0..last as f32 + 2.0)
                } else {
                    float(rng)
                }
            };
            let offset = Vec3A::new(x(&mut rng), x(&mut rng), x(&mut rng));
            assert_eq!(
                bins3(offset, last),
                bins3_scalar(offset, last),
                "{offset:?} {last}"
            );
        }
    }

    #[test]
    fn bins3_edges() {
        let v = Vec3A::new(f32::NAN, f32::INFINITY, -0.5);
        assert_eq!(bins3(v, 7), [0, 7, 0]);
        let v = Vec3A::new(6.999, 7.0, f32::NEG_INFINITY);
        assert_eq!(bins3(v, 7), [6, 7, 0]);
        assert_eq!(bins3_scalar(Vec3A::new(8.5, 1e30, 3.0), 7), [7, 7, 3]);
    }
}
