//! The conservative slab test of one ray against the child boxes of a wide BVH node (Ize, "Robust
//! BVH Ray Traversal", JCGT 2(2), 2013): 4 lanes in SSE, 8 lanes in two SSE halves or one AVX
//! pass, and the scalar twin for any width.

use super::{max_ps, min_ps, Isa, LANES};
use crate::geom::aabb::gamma;

/// What the slab tests ([`box4`], [`box8`]) need of a ray, computed once per ray.
#[derive(Clone, Copy, Debug)]
pub struct BoxRay {
    /// Ray origin.
    pub origin: [f32; 3],
    /// `1 / dir` per component (±∞ for zero components; the sign is the direction's, also for
    /// ±0).
    pub inv_dir: [f32; 3],
    /// Smallest accepted `t`.
    pub t_min: f32,
}

impl BoxRay {
    /// The ray from `origin` along `dir` from `t_min` on.
    #[inline(always)]
    pub fn new(origin: [f32; 3], dir: [f32; 3], t_min: f32) -> Self {
        Self {
            origin,
            inv_dir: dir.map(f32::recip),
            t_min,
        }
    }

    /// Row of the node's bounds holding `axis`' near plane: `2·axis` (the min row) when the
    /// direction's sign bit is clear, `2·axis + 1` (the max row) when it is set. Derived where
    /// needed rather than kept: the AVX test selects the planes by the sign bit itself
    /// ([`box8_avx`]), and six stored rows would only enlarge the state every walk sets up.
    #[inline(always)]
    pub fn near_row(&self, axis: usize) -> usize {
        2 * axis + usize::from(self.inv_dir[axis].is_sign_negative())
    }

    /// Row holding `axis`' far plane (the other one).
    #[inline(always)]
    pub fn far_row(&self, axis: usize) -> usize {
        self.near_row(axis) ^ 1
    }
}

/// Relative enlargement of the far distance, `2γ(3)` (Ize 2013, eq. 1): covers the rounding of
/// `(bound - origin) · inv_dir` in both the near and the far distance.
pub const FAR_PAD: f32 = 2.0 * gamma(3);

/// Result of [`box4`] and [`box8`]: bit `i` of `mask` is set when the ray reaches child `i` within
/// `[t_min, t_max]`; `t_near[i]` is where it enters that box (meaningful only for set bits).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoxHits<const W: usize> {
    /// One bit per child lane.
    pub mask: u32,
    /// Entry distance per lane.
    pub t_near: [f32; W],
}

/// [`BoxHits`] of four lanes.
pub type Box4Hits = BoxHits<4>;

/// The slab test of `ray` against four boxes, rows `min_x, max_x, min_y, max_y, min_z, max_z`.
///
/// Per lane: `near = max(t_min, max over axes of (near plane − o)·inv)`,
/// `far = min(t_max, f + |f|·FAR_PAD)` with `f = min over axes of (far plane − o)·inv`, hit when
/// `near <= far` (`f = −∞` pads to NaN, which fails). Choosing the near plane by the direction's
/// sign (instead of `min(t0, t1)`) makes an empty lane (min = +∞, max = −∞) a miss for every ray.
#[inline(always)]
pub fn box4(bounds: &[[f32; LANES]; 6], ray: &BoxRay, t_max: f32) -> Box4Hits {
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    {
        sse::box4(bounds, ray, t_max)
    }
    #[cfg(all(
        target_arch = "wasm32",
        target_feature = "simd128",
        not(feature = "force-scalar")
    ))]
    {
        simd128::box4(bounds, ray, t_max)
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
        box4_scalar(bounds, ray, t_max)
    }
}

/// The slab test of `ray` against eight boxes: [`box4`]'s contract on eight lanes. Two SSE halves
/// here; [`box8_avx`] is the one-instruction-per-step version for CPUs with AVX.
#[inline(always)]
pub fn box8(bounds: &[[f32; 8]; 6], ray: &BoxRay, t_max: f32) -> BoxHits<8> {
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    {
        sse::box8(bounds, ray, t_max)
    }
    #[cfg(all(
        target_arch = "wasm32",
        target_feature = "simd128",
        not(feature = "force-scalar")
    ))]
    {
        simd128::box8(bounds, ray, t_max)
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
        box_scalar(bounds, ray, t_max)
    }
}

/// [`box8`] for the instruction set `isa`: [`box8_avx`] where it has AVX, else two SSE halves (or
/// the twin). Inlined into the loops that [`dispatch`](super::dispatch) compiles, where `isa` is a
/// constant.
#[inline(always)]
pub fn box8_on(isa: Isa, bounds: &[[f32; 8]; 6], ray: &BoxRay, t_max: f32) -> BoxHits<8> {
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    if isa.has_avx() {
        // SAFETY: `isa` says the CPU has AVX (only detection makes such a token).
        return unsafe { box8_avx(bounds, ray, t_max) };
    }
    let _ = isa;
    box8(bounds, ray, t_max)
}

/// [`box8`] with 8-lane AVX instructions.
///
/// # Safety
/// The CPU must support AVX: callers hold an [`Isa`] that has it ([`box8_on`]), or call it from a
/// function compiled for AVX.
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
#[inline]
#[target_feature(enable = "avx")]
pub fn box8_avx(bounds: &[[f32; 8]; 6], ray: &BoxRay, t_max: f32) -> BoxHits<8> {
    // SAFETY: this function is compiled for AVX (its callers checked the CPU); each load reads the
    // eight floats of one `[f32; 8]` row, unaligned (`row` < 6: the slab test asks for rows
    // `2·axis` and `2·axis + 1`).
    unsafe {
        slab8_avx(
            ray,
            t_max,
            #[inline(always)]
            |row| std::arch::x86_64::_mm256_loadu_ps(bounds[row].as_ptr()),
        )
    }
}

/// The 8-lane slab test of [`box8_avx`] and [`qbox8_avx2`], given how to get plane row `row` (the
/// float node loads it, the quantized one dequantizes it).
///
/// # Safety
/// The CPU must support AVX, and the caller must be compiled with it (this is inlined into it).
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
#[inline(always)]
pub(super) unsafe fn slab8_avx(
    ray: &BoxRay,
    t_max: f32,
    plane: impl Fn(usize) -> std::arch::x86_64::__m256,
) -> BoxHits<8> {
    use std::arch::x86_64::*;
    // SAFETY: the caller guarantees AVX; the store writes the eight floats of `t_near`, unaligned.
    unsafe {
        let mut near = _mm256_set1_ps(ray.t_min);
        let mut far = _mm256_set1_ps(f32::INFINITY);
        for axis in 0..3 {
            let o = _mm256_set1_ps(ray.origin[axis]);
            let inv = _mm256_set1_ps(ray.inv_dir[axis]);
            // The near plane is the max plane where the direction is negative
            // ([`BoxRay::near_row`]): the sign of `inv_dir` (±0 gives ±∞), by which BLENDVPS
            // selects. Fixed rows and a blend instead of row arithmetic: a node visit computes
            // no row index, and reloads none when the ray's values do not stay in registers.
            let (min_plane, max_plane) = (plane(2 * axis), plane(2 * axis + 1));
            let near_plane = _mm256_blendv_ps(min_plane, max_plane, inv);
            let far_plane = _mm256_blendv_ps(max_plane, min_plane, inv);
            near = _mm256_max_ps(_mm256_mul_ps(_mm256_sub_ps(near_plane, o), inv), near);
            far = _mm256_min_ps(_mm256_mul_ps(_mm256_sub_ps(far_plane, o), inv), far);
        }
        slab_hits8_avx(near, far, t_max)
    }
}

/// The end of every 8-lane slab test: the far distance padded by [`FAR_PAD`] and clipped to
/// `t_max`, a lane hit when `near <= far`, and the entry distances.
///
/// # Safety
/// The CPU must support AVX, and the caller must be compiled with it (this is inlined into it).
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
#[inline(always)]
pub(super) unsafe fn slab_hits8_avx(
    near: std::arch::x86_64::__m256,
    far: std::arch::x86_64::__m256,
    t_max: f32,
) -> BoxHits<8> {
    use std::arch::x86_64::*;
    // SAFETY: the caller guarantees AVX; the store writes the eight floats of `t_near`, unaligned.
    unsafe {
        let mut t_near = [0.0f32; 8];
        let abs_far = _mm256_andnot_ps(_mm256_set1_ps(-0.0), far);
        let padded = _mm256_add_ps(far, _mm256_mul_ps(abs_far, _mm256_set1_ps(FAR_PAD)));
        // t_max first, so a NaN `padded` (from far = -∞) is the result: a miss.
        let far = _mm256_min_ps(_mm256_set1_ps(t_max), padded);
        _mm256_storeu_ps(t_near.as_mut_ptr(), near);
        let mask = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LE_OQ>(near, far)) as u32;
        BoxHits { mask, t_near }
    }
}

/// Scalar twin (the spec) of [`box4`].
#[cfg_attr(
    not(test),
    allow(
        dead_code,
        reason = "a scalar twin: the spec the tests check its SIMD versions against"
    )
)]
#[inline(always)]
pub fn box4_scalar(bounds: &[[f32; LANES]; 6], ray: &BoxRay, t_max: f32) -> Box4Hits {
    box_scalar(bounds, ray, t_max)
}

/// The end of every scalar slab test (the twin of the lanes of the SIMD tests' last step): the
/// far distance padded by [`FAR_PAD`] and clipped to `t_max`, hit when `near <= far`. `t_max`
/// first: a far distance of -∞ (the ray runs parallel to and outside a slab, or the lane is empty)
/// pads to -∞ + ∞ = NaN, which must win the min and fail the test.
#[inline(always)]
pub(super) fn slab_hit(near: f32, far: f32, t_max: f32) -> bool {
    near <= min_ps(t_max, far + far.abs() * FAR_PAD)
}

/// Scalar twin (the spec) of [`box4`], [`box8`] and [`box8_avx`], for any width.
#[cfg_attr(
    not(test),
    allow(
        dead_code,
        reason = "a scalar twin: the spec the tests check its SIMD versions against"
    )
)]
#[inline(always)]
pub fn box_scalar<const W: usize>(bounds: &[[f32; W]; 6], ray: &BoxRay, t_max: f32) -> BoxHits<W> {
    let mut mask = 0;
    let mut t_near = [0.0; W];
    for lane in 0..W {
        let mut near = ray.t_min;
        let mut far = f32::INFINITY;
        for axis in 0..3 {
            let tn = (bounds[ray.near_row(axis)][lane] - ray.origin[axis]) * ray.inv_dir[axis];
            let tf = (bounds[ray.far_row(axis)][lane] - ray.origin[axis]) * ray.inv_dir[axis];
            near = max_ps(tn, near);
            far = min_ps(tf, far);
        }
        t_near[lane] = near;
        mask |= u32::from(slab_hit(near, far, t_max)) << lane;
    }
    BoxHits { mask, t_near }
}

#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
mod sse {
    //! SSE2 versions. SSE2 is part of the x86-64 baseline: every x86-64 CPU has it and the compiler
    //! enables it for every x86-64 target, so calling these intrinsics is always sound; Rust still
    //! asks for an `unsafe` block around `#[target_feature]` functions called from code without the
    //! attribute, hence one block per routine.
    use std::arch::x86_64::*;

    use super::{Box4Hits, BoxHits, BoxRay, FAR_PAD, LANES};

    #[inline(always)]
    pub fn box4(bounds: &[[f32; LANES]; 6], ray: &BoxRay, t_max: f32) -> Box4Hits {
        let mut t_near = [0.0f32; LANES];
        let mask = half(bounds, 0, ray, t_max, &mut t_near);
        BoxHits { mask, t_near }
    }

    #[inline(always)]
    pub fn box8(bounds: &[[f32; 8]; 6], ray: &BoxRay, t_max: f32) -> BoxHits<8> {
        let mut t_near = [0.0f32; 8];
        let (lo, hi) = t_near.split_at_mut(4);
        let mask = half(bounds, 0, ray, t_max, lo) | half(bounds, 4, ray, t_max, hi) << 4;
        BoxHits { mask, t_near }
    }

    /// Lanes `first..first + 4` of rows of width `W`; writes their entry distances to `t_near`.
    #[inline(always)]
    fn half<const W: usize>(
        bounds: &[[f32; W]; 6],
        first: usize,
        ray: &BoxRay,
        t_max: f32,
        t_near: &mut [f32],
    ) -> u32 {
        assert!(first + LANES <= W && t_near.len() == LANES);
        // SAFETY: SSE2 is always available on x86-64 (see the module docs); the loads read the
        // four floats `first..first + 4` of a `[f32; W]` row and the store the four of `t_near`
        // (both in bounds by the assert), unaligned accesses.
        unsafe {
            let mut near = _mm_set1_ps(ray.t_min);
            let mut far = _mm_set1_ps(f32::INFINITY);
            for axis in 0..3 {
                let o = _mm_set1_ps(ray.origin[axis]);
                let inv = _mm_set1_ps(ray.inv_dir[axis]);
                let near_plane = _mm_loadu_ps(bounds[ray.near_row(axis)].as_ptr().add(first));
                let far_plane = _mm_loadu_ps(bounds[ray.far_row(axis)].as_ptr().add(first));
                near = _mm_max_ps(_mm_mul_ps(_mm_sub_ps(near_plane, o), inv), near);
                far = _mm_min_ps(_mm_mul_ps(_mm_sub_ps(far_plane, o), inv), far);
            }
            let abs_far = _mm_andnot_ps(_mm_set1_ps(-0.0), far);
            let padded = _mm_add_ps(far, _mm_mul_ps(abs_far, _mm_set1_ps(FAR_PAD)));
            // t_max first, so a NaN `padded` (from far = -∞) is the result: a miss.
            let far = _mm_min_ps(_mm_set1_ps(t_max), padded);
            _mm_storeu_ps(t_near.as_mut_ptr(), near);
            _mm_movemask_ps(_mm_cmple_ps(near, far)) as u32
        }
    }
}

#[cfg(all(
    target_arch = "wasm32",
    target_feature = "simd128",
    not(feature = "force-scalar")
))]
pub(super) mod simd128 {
    //! WebAssembly `simd128` versions (4 lanes). `simd128` is a compile-time feature of the module
    //! (`-C target-feature=+simd128`): a module that has it runs only on engines that do, so there
    //! is nothing to detect. `MINPS(a, b)` is `pmin(b, a)` and `MAXPS(a, b)` is `pmax(b, a)` (the
    //! pseudo-min/max return their first operand unless the second is strictly smaller/larger),
    //! so NaN operands resolve exactly as in the SSE versions and the scalar twin.
    use core::arch::wasm32::*;

    use super::{Box4Hits, BoxHits, BoxRay, FAR_PAD, LANES};

    #[inline(always)]
    pub fn box4(bounds: &[[f32; LANES]; 6], ray: &BoxRay, t_max: f32) -> Box4Hits {
        let mut t_near = [0.0f32; LANES];
        let mask = half(bounds, 0, ray, t_max, &mut t_near);
        BoxHits { mask, t_near }
    }

    #[inline(always)]
    pub fn box8(bounds: &[[f32; 8]; 6], ray: &BoxRay, t_max: f32) -> BoxHits<8> {
        let mut t_near = [0.0f32; 8];
        let (lo, hi) = t_near.split_at_mut(4);
        let mask = half(bounds, 0, ray, t_max, lo) | half(bounds, 4, ray, t_max, hi) << 4;
        BoxHits { mask, t_near }
    }

    /// Four lanes `first..first + 4` of a row.
    #[inline(always)]
    fn lanes4<const W: usize>(row: &[f32; W], first: usize) -> v128 {
        f32x4(row[first], row[first + 1], row[first + 2], row[first + 3])
    }

    /// Lanes `first..first + 4` of rows of width `W`; writes their entry distances to `t_near`.
    #[inline(always)]
    fn half<const W: usize>(
        bounds: &[[f32; W]; 6],
        first: usize,
        ray: &BoxRay,
        t_max: f32,
        t_near: &mut [f32],
    ) -> u32 {
        assert!(first + LANES <= W && t_near.len() == LANES);
        let mut near = f32x4_splat(ray.t_min);
        let mut far = f32x4_splat(f32::INFINITY);
        for axis in 0..3 {
            let o = f32x4_splat(ray.origin[axis]);
            let inv = f32x4_splat(ray.inv_dir[axis]);
            let near_plane = lanes4(&bounds[ray.near_row(axis)], first);
            let far_plane = lanes4(&bounds[ray.far_row(axis)], first);
            // max_ps(d, near) = pmax(near, d); min_ps(d, far) = pmin(far, d).
            near = f32x4_pmax(near, f32x4_mul(f32x4_sub(near_plane, o), inv));
            far = f32x4_pmin(far, f32x4_mul(f32x4_sub(far_plane, o), inv));
        }
        slab_hits4(near, far, t_max, t_near)
    }

    /// The end of every 4-lane slab test: the far distance padded by [`FAR_PAD`] and clipped to
    /// `t_max`, a lane hit when `near <= far`; writes the entry distances to `t_near`.
    #[inline(always)]
    pub(in crate::simd) fn slab_hits4(
        near: v128,
        far: v128,
        t_max: f32,
        t_near: &mut [f32],
    ) -> u32 {
        let padded = f32x4_add(far, f32x4_mul(f32x4_abs(far), f32x4_splat(FAR_PAD)));
        // min_ps(t_max, padded) = pmin(padded, t_max): a NaN `padded` (from far = -∞) is the
        // result, a miss.
        let far = f32x4_pmin(padded, f32x4_splat(t_max));
        t_near.copy_from_slice(&[
            f32x4_extract_lane::<0>(near),
            f32x4_extract_lane::<1>(near),
            f32x4_extract_lane::<2>(near),
            f32x4_extract_lane::<3>(near),
        ]);
        u32::from(i32x4_bitmask(f32x4_le(near, far)))
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    use super::*;
    use crate::simd::test_support::*;

    #[test]
    fn box4_equals_its_scalar_twin_on_random_and_special_values() {
        let mut rng = Pcg64::seed_from_u64(11);
        for _ in 0..200_000 {
            let (bounds, ray, t_max) = random_box_case::<LANES>(&mut rng, 0.2);
            let simd = box4(&bounds, &ray, t_max);
            let scalar = box4_scalar(&bounds, &ray, t_max);
            assert_eq!(simd.mask, scalar.mask, "{bounds:?} {ray:?} {t_max}");
            assert!(same_bits(&simd.t_near, &scalar.t_near, scalar.mask));
        }
    }

    #[test]
    fn box8_and_its_avx_version_equal_the_scalar_twin() {
        let mut rng = Pcg64::seed_from_u64(16);
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        let avx = std::arch::is_x86_feature_detected!("avx");
        for _ in 0..100_000 {
            let (bounds, ray, t_max) = random_box_case::<8>(&mut rng, 1.0);
            let scalar = box_scalar(&bounds, &ray, t_max);
            let simd = box8(&bounds, &ray, t_max);
            assert_eq!(simd.mask, scalar.mask, "{bounds:?} {ray:?} {t_max}");
            assert!(same_bits(&simd.t_near, &scalar.t_near, scalar.mask));
            #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
            if avx {
                // SAFETY: AVX was detected above.
                let wide = unsafe { box8_avx(&bounds, &ray, t_max) };
                assert_eq!(wide.mask, scalar.mask, "{bounds:?} {ray:?} {t_max}");
                assert!(same_bits(&wide.t_near, &scalar.t_near, scalar.mask));
            }
        }
    }

    #[test]
    fn box4_rejects_empty_lanes_for_every_ray() {
        let mut rng = Pcg64::seed_from_u64(12);
        let mut bounds = [[0.0; LANES]; 6];
        for axis in 0..3 {
            bounds[2 * axis] = [f32::INFINITY; LANES];
            bounds[2 * axis + 1] = [f32::NEG_INFINITY; LANES];
        }
        for _ in 0..100_000 {
            let ray = box_ray(&mut rng);
            // Only rays the BVHs traverse: finite origin, finite non-NaN direction (1/dir ≠ 0).
            if ray.origin.iter().any(|o| !o.is_finite())
                || ray.inv_dir.iter().any(|&i| i == 0.0 || i.is_nan())
            {
                continue;
            }
            assert_eq!(box4(&bounds, &ray, f32::INFINITY).mask, 0, "{ray:?}");
            assert_eq!(box4_scalar(&bounds, &ray, f32::INFINITY).mask, 0);
        }
    }

    #[test]
    fn box4_agrees_with_the_reference_slab_test() {
        // Against Aabb::intersect_slabs (the documented single-box test) on finite boxes.
        use crate::{Aabb, Ray};
        use glam::Vec3;
        let mut rng = Pcg64::seed_from_u64(13);
        let mut disagreements = 0;
        for _ in 0..100_000 {
            let p = |rng: &mut Pcg64| {
                Vec3::new(
                    rng.gen_range(-10.0..10.0),
                    rng.gen_range(-10.0..10.0),
                    rng.gen_range(-10.0..10.0),
                )
            };
            let (a, b) = (p(&mut rng), p(&mut rng));
            let aabb = Aabb::new(a.min(b), a.max(b));
            let mut dir = p(&mut rng);
            if rng.gen_bool(0.2) {
                dir[rng.gen_range(0..3)] = 0.0;
            }
            let ray = Ray::new(p(&mut rng), dir);
            let mut bounds = [[0.0; LANES]; 6];
            for axis in 0..3 {
                bounds[2 * axis] = [aabb.min[axis]; LANES];
                bounds[2 * axis + 1] = [aabb.max[axis]; LANES];
            }
            let box_ray = BoxRay::new(ray.origin.to_array(), dir.to_array(), ray.t_min);
            let hit = box4(&bounds, &box_ray, ray.t_max).mask == 0xF;
            let reference = aabb.intersect_ray(&ray).is_some();
            // The wide test is conservative (padded far distance): it may only add grazing hits.
            assert!(hit || !reference, "{aabb:?} {ray:?}");
            disagreements += usize::from(hit != reference);
        }
        assert!(disagreements < 10, "{disagreements} grazing disagreements");
    }
}
