//! One conservative box test for a packet of up to eight coherent rays (a camera's neighbouring
//! pixels), its set-up, and the lane folds of the packet walk
//! ([`WideBvh::traverse_packet`](crate::bvh::wide::WideBvh::traverse_packet)).

use super::boxes::slab_hit;
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
use super::boxes::slab_hits8_avx;
use super::{max_ps, min_ps, BoxHits, Isa};

/// What `packet_box8_on` needs of a packet of rays, one box test for all of them: the range of
/// their origins and of their reciprocal directions per axis. Only for rays in one octant (one sign
/// per direction component, so one near and one far row) with finite `1/dir` components.
///
/// The test is conservative for every ray of the packet, bit for bit: each ray's distances
/// `(plane − o)·inv` lie between the smallest and the largest of the four corner products
/// `(plane − o_hi|lo)·inv_lo|hi`, because rounding is monotone in each operand (the subtraction in
/// `o`, the product in either factor while the other keeps its sign). The near distance taken is the
/// smallest corner, the far one the largest, and the padding, the maxima and minima after them are
/// monotone too, so whenever one ray's `box_scalar` reports a child, so does the packet's test (a
/// frustum test in the spirit of Reshetov, Soupikov and Hurley, "Multi-Level Ray Tracing Algorithm",
/// SIGGRAPH 2005, here with exact rounding arguments instead of planes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacketBoxRay {
    /// Smallest origin coordinate per axis.
    pub origin_lo: [f32; 3],
    /// Largest origin coordinate per axis.
    pub origin_hi: [f32; 3],
    /// Smallest `1/dir` per axis.
    pub inv_lo: [f32; 3],
    /// Largest `1/dir` per axis.
    pub inv_hi: [f32; 3],
    /// Row of each axis' near plane, as in `BoxRay` (the same for every ray of the packet).
    pub near_row: [usize; 3],
    /// Row of each axis' far plane.
    pub far_row: [usize; 3],
    /// Smallest `t_min`.
    pub t_min: f32,
}

impl PacketBoxRay {
    /// The packet of `rays`, which must be valid ([`crate::Ray::is_valid`]); `None` when they are not
    /// all in one octant with finite `1/dir` components, or when there are none.
    #[inline]
    pub fn new<'a>(rays: impl IntoIterator<Item = &'a crate::Ray>) -> Option<Self> {
        use glam::Vec3A;
        let mut rays = rays.into_iter();
        let first = rays.next()?;
        let octant = first.dir.is_negative_bitmask();
        let (mut o_lo, mut inv_lo) = (Vec3A::from(first.origin), Vec3A::from(first.dir).recip());
        let (mut o_hi, mut inv_hi, mut t_min) = (o_lo, inv_lo, first.t_min);
        let mut finite = inv_lo.is_finite_mask();
        for r in rays {
            // Random rays differ in octant at once: leave before computing anything for them.
            if r.dir.is_negative_bitmask() != octant {
                return None;
            }
            let (o, inv) = (Vec3A::from(r.origin), Vec3A::from(r.dir).recip());
            finite &= inv.is_finite_mask();
            (o_lo, o_hi) = (o_lo.min(o), o_hi.max(o));
            (inv_lo, inv_hi) = (inv_lo.min(inv), inv_hi.max(inv));
            t_min = min_ps(t_min, r.t_min);
        }
        if !finite.all() {
            return None;
        }
        // `+ 0.0` turns a -0 into +0 (same value): the minima and maxima of equal zeros depend on
        // the order of the reduction, and the AVX version reduces in another order.
        let zero = Vec3A::ZERO;
        Some(Self::from_parts(
            octant,
            [o_lo + zero, o_hi + zero, inv_lo, inv_hi].map(|v| v.to_array()),
            t_min + 0.0,
        ))
    }

    #[inline(always)]
    fn from_parts(
        octant: u32,
        [origin_lo, origin_hi, inv_lo, inv_hi]: [[f32; 3]; 4],
        t_min: f32,
    ) -> Self {
        let near_row = [0, 1, 2].map(|axis| 2 * axis + (octant as usize >> axis & 1));
        Self {
            origin_lo,
            origin_hi,
            inv_lo,
            inv_hi,
            near_row,
            far_row: near_row.map(|row| row ^ 1),
            t_min,
        }
    }

    /// The mask of the valid rays among `rays` ([`crate::Ray::is_valid`]) and their packet
    /// ([`PacketBoxRay::new`]), in one pass: with AVX, the eight rays (eight floats each) are
    /// loaded as an 8×8 block; its transpose gives every check as one 8-lane operation, and its
    /// rows, folded by element-wise minima and maxima, every bound at once (groups with invalid
    /// rays go to the twin). Bit for bit the scalar twin's answer
    /// ([`PacketBoxRay::of_eight_scalar`]).
    #[inline]
    pub fn of_eight(rays: &[crate::Ray; 8]) -> (u32, Option<Self>) {
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        if Isa::detected().has_avx() {
            // SAFETY: the CPU has AVX, checked just above.
            return unsafe { Self::of_eight_avx(rays) };
        }
        Self::of_eight_scalar(rays)
    }

    /// Scalar twin (the spec) of [`PacketBoxRay::of_eight`].
    #[inline]
    pub fn of_eight_scalar(rays: &[crate::Ray; 8]) -> (u32, Option<Self>) {
        let valid = (0..8).fold(0, |m, i| m | u32::from(rays[i].is_valid()) << i);
        let packet = Self::new((0..8).filter(|i| valid >> i & 1 == 1).map(|i| &rays[i]));
        (valid, packet)
    }

    /// [`PacketBoxRay::of_eight`] with 8-lane AVX instructions.
    ///
    /// # Safety
    /// The CPU must support AVX.
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    #[target_feature(enable = "avx")]
    unsafe fn of_eight_avx(rays: &[crate::Ray; 8]) -> (u32, Option<Self>) {
        use std::arch::x86_64::*;
        // SAFETY: AVX is enabled for this function; `Ray` is `repr(C)`, eight f32 (checked at
        // compile time in `geom::ray`), so `rays` is 64 readable floats and each unaligned load
        // reads one ray.
        unsafe {
            let base = rays.as_ptr().cast::<f32>();
            let r: [__m256; 8] = std::array::from_fn(|i| _mm256_loadu_ps(base.add(8 * i)));
            // 8×8 transpose: column k holds field k of the eight rays.
            let t0 = _mm256_unpacklo_ps(r[0], r[1]);
            let t1 = _mm256_unpackhi_ps(r[0], r[1]);
            let t2 = _mm256_unpacklo_ps(r[2], r[3]);
            let t3 = _mm256_unpackhi_ps(r[2], r[3]);
            let t4 = _mm256_unpacklo_ps(r[4], r[5]);
            let t5 = _mm256_unpackhi_ps(r[4], r[5]);
            let t6 = _mm256_unpacklo_ps(r[6], r[7]);
            let t7 = _mm256_unpackhi_ps(r[6], r[7]);
            let u0 = _mm256_shuffle_ps::<0x44>(t0, t2);
            let u1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
            let u2 = _mm256_shuffle_ps::<0x44>(t1, t3);
            let u3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
            let u4 = _mm256_shuffle_ps::<0x44>(t4, t6);
            let u5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
            let u6 = _mm256_shuffle_ps::<0x44>(t5, t7);
            let u7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
            let col = [
                _mm256_permute2f128_ps::<0x20>(u0, u4),
                _mm256_permute2f128_ps::<0x20>(u1, u5),
                _mm256_permute2f128_ps::<0x20>(u2, u6),
                _mm256_permute2f128_ps::<0x20>(u3, u7),
                _mm256_permute2f128_ps::<0x31>(u0, u4),
                _mm256_permute2f128_ps::<0x31>(u1, u5),
                _mm256_permute2f128_ps::<0x31>(u2, u6),
                _mm256_permute2f128_ps::<0x31>(u3, u7),
            ];
            let [ox, oy, oz, dx, dy, dz, t_min, t_max] = col;
            // Ray::is_valid, lane by lane: finite origin and direction, a non-zero direction, and
            // t_min <= t_max (false for NaN).
            let sign = _mm256_set1_ps(-0.0);
            let inf = _mm256_set1_ps(f32::INFINITY);
            let finite = |x: __m256| _mm256_cmp_ps::<_CMP_LT_OQ>(_mm256_andnot_ps(sign, x), inf);
            let zero = _mm256_setzero_ps();
            let nonzero = |x: __m256| _mm256_cmp_ps::<_CMP_NEQ_UQ>(x, zero);
            let ok = _mm256_and_ps(
                _mm256_and_ps(
                    _mm256_and_ps(finite(ox), finite(oy)),
                    _mm256_and_ps(finite(oz), finite(dx)),
                ),
                _mm256_and_ps(
                    _mm256_and_ps(finite(dy), finite(dz)),
                    _mm256_and_ps(
                        _mm256_or_ps(_mm256_or_ps(nonzero(dx), nonzero(dy)), nonzero(dz)),
                        _mm256_cmp_ps::<_CMP_LE_OQ>(t_min, t_max),
                    ),
                ),
            );
            let valid = _mm256_movemask_ps(ok) as u32;
            if valid != 0xff {
                // No valid ray, or some invalid (rare: a camera's rays are all valid): the twin,
                // which skips them.
                return Self::of_eight_scalar(rays);
            }
            // One octant: each direction component's sign bits all clear or all set.
            let signs = [dx, dy, dz].map(|d| _mm256_movemask_ps(d) as u32);
            if signs.iter().any(|&s| s != 0 && s != 0xff) {
                return (valid, None);
            }
            let octant = (0..3).fold(0, |o, a| o | (signs[a] & 1) << a);
            // The bounds over the rays, every field at once: the element-wise minimum and maximum
            // of the rays' rows, no reduction across lanes.
            let fold = |op: unsafe fn(__m256, __m256) -> __m256| {
                let [a, b, c, d] = [0, 2, 4, 6].map(|i| op(r[i], r[i + 1]));
                op(op(a, b), op(c, d))
            };
            let (lo, hi) = (fold(_mm256_min_ps), fold(_mm256_max_ps));
            // In one octant `1/d` falls as `d` grows, and correctly rounded division is monotone:
            // the smallest reciprocal is `1/max d` and the largest `1/min d`, bit for bit the
            // extremes of the rays' own reciprocals, and all of those are finite when these two are.
            let one = _mm256_set1_ps(1.0);
            let (inv_of_hi, inv_of_lo) = (_mm256_div_ps(one, hi), _mm256_div_ps(one, lo));
            let to_array = |x: __m256| {
                let mut a = [0.0f32; 8];
                _mm256_storeu_ps(a.as_mut_ptr(), x);
                a
            };
            // `+ 0.0` makes zeros positive as in the scalar twin.
            let [lo, hi, inv_of_hi, inv_of_lo] =
                [lo, hi, inv_of_hi, inv_of_lo].map(|x| to_array(_mm256_add_ps(x, zero)));
            let (inv_lo, inv_hi) = (
                [3, 4, 5].map(|k| inv_of_hi[k]),
                [3, 4, 5].map(|k| inv_of_lo[k]),
            );
            if !inv_lo.iter().chain(&inv_hi).all(|x| x.is_finite()) {
                return (valid, None);
            }
            let packet = Self::from_parts(
                octant,
                [[lo[0], lo[1], lo[2]], [hi[0], hi[1], hi[2]], inv_lo, inv_hi],
                lo[6],
            );
            (valid, Some(packet))
        }
    }

    /// The packet of the same rays with every origin moved by `-offset` (a mesh's local frame):
    /// `round(o - offset)` is monotone in `o`, so the moved bounds still hold each moved origin.
    #[inline]
    pub fn translated(&self, offset: [f32; 3]) -> Self {
        Self {
            origin_lo: [0, 1, 2].map(|a| self.origin_lo[a] - offset[a]),
            origin_hi: [0, 1, 2].map(|a| self.origin_hi[a] - offset[a]),
            ..*self
        }
    }

    /// Whether any ray of the packet can reach `bounds` (`packet_box_scalar` on that one box, no
    /// bound on `t`): when not, every ray of the packet misses whatever lies inside it. One SSE
    /// lane per axis on x86-64, else the scalar twin.
    #[inline]
    pub fn reaches(&self, bounds: &crate::Aabb) -> bool {
        #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
        {
            !bounds.is_empty()
                && sse::packet_reaches(self, bounds.min.to_array(), bounds.max.to_array())
        }
        #[cfg(not(all(target_arch = "x86_64", not(feature = "force-scalar"))))]
        {
            self.reaches_scalar(bounds)
        }
    }

    /// Scalar twin (the spec) of [`PacketBoxRay::reaches`].
    #[inline]
    pub fn reaches_scalar(&self, bounds: &crate::Aabb) -> bool {
        if bounds.is_empty() {
            return false;
        }
        let (lo, hi) = (bounds.min.to_array(), bounds.max.to_array());
        let rows = [[lo[0]], [hi[0]], [lo[1]], [hi[1]], [lo[2]], [hi[2]]];
        packet_box_scalar::<1>(&rows, self, f32::INFINITY).mask != 0
    }

    /// Whether the rays look alike enough for a packet walk to pay, in a scene whose box is
    /// `extent` wide (its largest side): one origin and directions within [`CONE_SPREAD`] of each
    /// other (a perspective camera's neighbouring pixels), or reciprocal directions within
    /// [`COHERENT_SPREAD`] of each other from origins within [`ORIGIN_SPREAD`] times `extent`
    /// of each other (an orthographic camera's neighbouring pixels, shadow rays toward a
    /// directional light from neighbouring hit points). Only a matter of speed: the test is
    /// conservative whatever the spread. Rays from one eye through far-apart pixels, or parallel
    /// rays from scattered origins, are not a packet: the packet's bounds span the whole group,
    /// its union reaches most of the tree, and it would visit far more nodes than any of its
    /// rays alone.
    #[inline]
    pub fn is_coherent(&self, extent: f32) -> bool {
        if self.origin_lo == self.origin_hi {
            self.narrow_cone()
        } else {
            (0..3).all(|a| {
                let (lo, hi) = (self.inv_lo[a], self.inv_hi[a]);
                hi - lo <= COHERENT_SPREAD * lo.abs().min(hi.abs())
                    && self.origin_hi[a] - self.origin_lo[a] <= ORIGIN_SPREAD * extent
            })
        }
    }

    /// Whether the directions differ per axis by at most [`CONE_SPREAD`] times their largest
    /// component (about that angle in radians for directions of one length). A direction
    /// component lies between `1 / inv_hi` and `1 / inv_lo` (one sign per axis, finite), so the
    /// spread per axis is `(hi − lo) / (lo · hi)` and the largest component `1 / m`, `m` the
    /// smallest `|inv|`: compared without a division.
    fn narrow_cone(&self) -> bool {
        let m = (0..3).fold(f32::INFINITY, |m, a| {
            m.min(self.inv_lo[a].abs()).min(self.inv_hi[a].abs())
        });
        (0..3).all(|a| {
            let (lo, hi) = (self.inv_lo[a], self.inv_hi[a]);
            (hi - lo) * m <= CONE_SPREAD * (lo * hi)
        })
    }
}

/// Relative spread of `1/dir` (per axis) up to which rays with different origins count as one
/// direction in [`PacketBoxRay::is_coherent`]: a heuristic, no tolerance of any answer.
pub const COHERENT_SPREAD: f32 = 1.0 / 64.0;

/// Spread of the origins of rays with different origins up to which they count as a packet in
/// [`PacketBoxRay::is_coherent`], relative to the scene's extent (per axis): eight neighbouring
/// pixels of an orthographic view 512 pixels wide span 1/64 of it. A heuristic, no tolerance of
/// any answer.
pub const ORIGIN_SPREAD: f32 = 1.0 / 32.0;

/// Spread of the directions of rays from one origin up to which they count as a packet in
/// [`PacketBoxRay::is_coherent`] (per axis, relative to the largest component: about 1.8°). Eight
/// neighbouring pixels of a 1024-pixel-wide image with a 45° field of view span 0.35°, of a
/// 128-pixel-wide one 2.8°. A heuristic, no tolerance of any answer.
pub const CONE_SPREAD: f32 = 1.0 / 32.0;

/// The packet test: bit `i` of the mask is set when some ray of the packet may reach child `i`
/// within `[t_min, t_max]` (every child one of them reaches is set; see [`PacketBoxRay`]), and
/// `t_near[i]` is at most the entry distance of each ray into child `i`. AVX where `isa` has it,
/// else the scalar twin. Inlined into the loops that [`dispatch`](super::dispatch) compiles, where
/// `isa` is a constant.
#[inline(always)]
pub fn packet_box8_on(
    isa: Isa,
    bounds: &[[f32; 8]; 6],
    ray: &PacketBoxRay,
    t_max: f32,
) -> BoxHits<8> {
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    if isa.has_avx() {
        // SAFETY: `isa` says the CPU has AVX (only detection makes such a token).
        return unsafe { packet_box8_avx(bounds, ray, t_max) };
    }
    let _ = isa;
    #[cfg(all(
        target_arch = "wasm32",
        target_feature = "simd128",
        not(feature = "force-scalar")
    ))]
    {
        simd128::packet_box8(bounds, ray, t_max)
    }
    #[cfg(not(all(
        target_arch = "wasm32",
        target_feature = "simd128",
        not(feature = "force-scalar")
    )))]
    {
        packet_box_scalar(bounds, ray, t_max)
    }
}

#[cfg(all(
    target_arch = "wasm32",
    target_feature = "simd128",
    not(feature = "force-scalar")
))]
mod simd128 {
    //! The WebAssembly `simd128` packet box test: two 4-lane halves, the twin's operations in its
    //! order (`MINPS(a, b)` is `pmin(b, a)`, `MAXPS(a, b)` is `pmax(b, a)`; see `boxes`).
    use core::arch::wasm32::*;

    use super::super::boxes::simd128::slab_hits4;
    use super::PacketBoxRay;
    use crate::simd::BoxHits;

    #[inline(always)]
    pub fn packet_box8(bounds: &[[f32; 8]; 6], ray: &PacketBoxRay, t_max: f32) -> BoxHits<8> {
        let mut t_near = [0.0f32; 8];
        let mut mask = 0;
        for (half, out) in t_near.chunks_exact_mut(4).enumerate() {
            let first = 4 * half;
            let load =
                |row: &[f32; 8]| f32x4(row[first], row[first + 1], row[first + 2], row[first + 3]);
            let mut near = f32x4_splat(ray.t_min);
            let mut far = f32x4_splat(f32::INFINITY);
            for axis in 0..3 {
                let (o_lo, o_hi) = (
                    f32x4_splat(ray.origin_lo[axis]),
                    f32x4_splat(ray.origin_hi[axis]),
                );
                let (inv_lo, inv_hi) =
                    (f32x4_splat(ray.inv_lo[axis]), f32x4_splat(ray.inv_hi[axis]));
                let corners = |plane: v128| {
                    let (lo, hi) = (f32x4_sub(plane, o_hi), f32x4_sub(plane, o_lo));
                    [
                        f32x4_mul(lo, inv_lo),
                        f32x4_mul(lo, inv_hi),
                        f32x4_mul(hi, inv_lo),
                        f32x4_mul(hi, inv_hi),
                    ]
                };
                // min_ps(min_ps(a, b), min_ps(c, d)), and the same with max_ps.
                let [a, b, c, d] = corners(load(&bounds[2 * axis + (ray.near_row[axis] & 1)]));
                let tn = f32x4_pmin(f32x4_pmin(d, c), f32x4_pmin(b, a));
                let [a, b, c, d] = corners(load(&bounds[2 * axis + (ray.far_row[axis] & 1)]));
                let tf = f32x4_pmax(f32x4_pmax(d, c), f32x4_pmax(b, a));
                near = f32x4_pmax(near, tn);
                far = f32x4_pmin(far, tf);
            }
            mask |= slab_hits4(near, far, t_max, out) << first;
        }
        BoxHits { mask, t_near }
    }
}

/// [`packet_box8_on`] with 8-lane AVX instructions.
///
/// # Safety
/// The CPU must support AVX: callers check it, or call it from a function compiled for AVX.
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
#[inline]
#[target_feature(enable = "avx")]
pub fn packet_box8_avx(bounds: &[[f32; 8]; 6], ray: &PacketBoxRay, t_max: f32) -> BoxHits<8> {
    // Rays from one point (a pinhole camera's): `plane − o_lo` and `plane − o_hi` are the same
    // number, the four corner products two, and the minimum (maximum) of the four is that of the
    // two, bit for bit. Half the subtractions and products. (Compared as bits: a `-0` and a `+0`
    // bound would give differently signed zeros.)
    if ray.origin_lo.map(f32::to_bits) == ray.origin_hi.map(f32::to_bits) {
        packet_box8_avx_with::<true>(bounds, ray, t_max)
    } else {
        packet_box8_avx_with::<false>(bounds, ray, t_max)
    }
}

/// [`packet_box8_avx`] for packets from one origin (`ONE_ORIGIN`) or not.
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
#[inline]
#[target_feature(enable = "avx")]
fn packet_box8_avx_with<const ONE_ORIGIN: bool>(
    bounds: &[[f32; 8]; 6],
    ray: &PacketBoxRay,
    t_max: f32,
) -> BoxHits<8> {
    use std::arch::x86_64::*;
    // SAFETY: this function is compiled for AVX (its callers checked the CPU); each load reads the
    // eight floats of one `[f32; 8]` row (the row index is below 6 by construction), the store the
    // eight of `t_near`, unaligned.
    unsafe {
        let mut near = _mm256_set1_ps(ray.t_min);
        let mut far = _mm256_set1_ps(f32::INFINITY);
        for axis in 0..3 {
            let o_lo = _mm256_set1_ps(ray.origin_lo[axis]);
            let o_hi = _mm256_set1_ps(ray.origin_hi[axis]);
            let inv_lo = _mm256_set1_ps(ray.inv_lo[axis]);
            let inv_hi = _mm256_set1_ps(ray.inv_hi[axis]);
            let near_plane = _mm256_loadu_ps(bounds[2 * axis + (ray.near_row[axis] & 1)].as_ptr());
            let far_plane = _mm256_loadu_ps(bounds[2 * axis + (ray.far_row[axis] & 1)].as_ptr());
            // The smallest and the largest of the corner products `(plane − o)·inv`.
            let corners = |plane: __m256| {
                if ONE_ORIGIN {
                    let d = _mm256_sub_ps(plane, o_lo);
                    let (a, b) = (_mm256_mul_ps(d, inv_lo), _mm256_mul_ps(d, inv_hi));
                    (_mm256_min_ps(a, b), _mm256_max_ps(a, b))
                } else {
                    let (lo, hi) = (_mm256_sub_ps(plane, o_hi), _mm256_sub_ps(plane, o_lo));
                    let (a, b) = (_mm256_mul_ps(lo, inv_lo), _mm256_mul_ps(lo, inv_hi));
                    let (c, d) = (_mm256_mul_ps(hi, inv_lo), _mm256_mul_ps(hi, inv_hi));
                    (
                        _mm256_min_ps(_mm256_min_ps(a, b), _mm256_min_ps(c, d)),
                        _mm256_max_ps(_mm256_max_ps(a, b), _mm256_max_ps(c, d)),
                    )
                }
            };
            let (tn, _) = corners(near_plane);
            let (_, tf) = corners(far_plane);
            near = _mm256_max_ps(tn, near);
            far = _mm256_min_ps(tf, far);
        }
        slab_hits8_avx(near, far, t_max)
    }
}

/// Scalar twin (the spec) of [`packet_box8_on`] and [`packet_box8_avx`], for any width.
#[inline(always)]
pub fn packet_box_scalar<const W: usize>(
    bounds: &[[f32; W]; 6],
    ray: &PacketBoxRay,
    t_max: f32,
) -> BoxHits<W> {
    let mut mask = 0;
    let mut t_near = [0.0; W];
    for lane in 0..W {
        let mut near = ray.t_min;
        let mut far = f32::INFINITY;
        for axis in 0..3 {
            let corners = |plane: f32| {
                let (lo, hi) = (plane - ray.origin_hi[axis], plane - ray.origin_lo[axis]);
                let (inv_lo, inv_hi) = (ray.inv_lo[axis], ray.inv_hi[axis]);
                [lo * inv_lo, lo * inv_hi, hi * inv_lo, hi * inv_hi]
            };
            let [a, b, c, d] = corners(bounds[2 * axis + (ray.near_row[axis] & 1)][lane]);
            let tn = min_ps(min_ps(a, b), min_ps(c, d));
            let [a, b, c, d] = corners(bounds[2 * axis + (ray.far_row[axis] & 1)][lane]);
            let tf = max_ps(max_ps(a, b), max_ps(c, d));
            near = max_ps(tn, near);
            far = min_ps(tf, far);
        }
        t_near[lane] = near;
        mask |= u32::from(slab_hit(near, far, t_max)) << lane;
    }
    BoxHits { mask, t_near }
}

/// The eight rays with `offset` subtracted from their origins (`Ray { origin: o - offset, ..ray }`,
/// a mesh's frame): on x86-64 one SSE subtraction per ray, of `[offset, 0]` from the origin and
/// the direction's `x` (`x - 0 = x` bit for bit for every number, a NaN stays a NaN), else the
/// scalar twin.
#[inline(always)]
pub fn moved_rays(rays: &[crate::Ray; 8], offset: glam::Vec3) -> [crate::Ray; 8] {
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    {
        sse::moved_rays(rays, offset)
    }
    #[cfg(not(all(target_arch = "x86_64", not(feature = "force-scalar"))))]
    {
        moved_rays_scalar(rays, offset)
    }
}

/// Scalar twin (the spec) of [`moved_rays`].
#[cfg_attr(
    not(test),
    allow(
        dead_code,
        reason = "a scalar twin: the spec the tests check its SIMD versions against"
    )
)]
#[inline(always)]
pub fn moved_rays_scalar(rays: &[crate::Ray; 8], offset: glam::Vec3) -> [crate::Ray; 8] {
    rays.map(|ray| crate::Ray {
        origin: ray.origin - offset,
        ..ray
    })
}

/// The lanes `i` with `t <= bounds[i]`, as a mask (false for NaN): which rays of a packet a child
/// entered at `t` can still matter to ([`crate::bvh::wide::WideBvh::traverse_packet`]). Two SSE
/// halves on x86-64 (two compares and two mask moves instead of eight scalar compares, shifts and
/// ors), else the scalar twin.
#[inline(always)]
pub fn lanes_reaching(t: f32, bounds: &[f32; 8]) -> u32 {
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    {
        sse::lanes_reaching(t, bounds)
    }
    #[cfg(not(all(target_arch = "x86_64", not(feature = "force-scalar"))))]
    {
        lanes_reaching_scalar(t, bounds)
    }
}

/// Scalar twin (the spec) of [`lanes_reaching`].
#[cfg_attr(
    not(test),
    allow(
        dead_code,
        reason = "a scalar twin: the spec the tests check its SIMD versions against"
    )
)]
#[inline(always)]
pub fn lanes_reaching_scalar(t: f32, bounds: &[f32; 8]) -> u32 {
    (0..8).fold(0, |m, i| m | u32::from(t <= bounds[i]) << i)
}

/// The largest of `values[i]` over the lanes of `mask` (`-∞` for none), for values that are not
/// NaN: the bound of a packet's node test. Two SSE halves on x86-64, else the scalar twin.
#[inline(always)]
pub fn lanes_max(values: &[f32; 8], mask: u32) -> f32 {
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    {
        sse::lanes_max(values, mask)
    }
    #[cfg(not(all(target_arch = "x86_64", not(feature = "force-scalar"))))]
    {
        lanes_max_scalar(values, mask)
    }
}

/// Scalar twin (the spec) of [`lanes_max`]. The maximum of numbers does not depend on the order it
/// is taken in, up to the sign of a zero (which compares equal, and the bound is only compared), so
/// the SIMD version may pair the lanes differently.
#[cfg_attr(
    not(test),
    allow(
        dead_code,
        reason = "a scalar twin: the spec the tests check its SIMD versions against"
    )
)]
#[inline(always)]
pub fn lanes_max_scalar(values: &[f32; 8], mask: u32) -> f32 {
    (0..8)
        .filter(|i| mask >> i & 1 == 1)
        .fold(f32::NEG_INFINITY, |m, i| max_ps(values[i], m))
}

#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
mod sse {
    //! SSE2 versions. SSE2 is part of the x86-64 baseline: every x86-64 CPU has it and the compiler
    //! enables it for every x86-64 target, so calling these intrinsics is always sound; Rust still
    //! asks for an `unsafe` block around `#[target_feature]` functions called from code without the
    //! attribute, hence one block per routine.
    use std::arch::x86_64::*;

    use super::{max_ps, min_ps, slab_hit, PacketBoxRay};

    #[inline(always)]
    pub fn lanes_reaching(t: f32, bounds: &[f32; 8]) -> u32 {
        // SAFETY: SSE is always available on x86-64 (see the module docs); the two loads read the
        // eight floats of `bounds`, unaligned.
        unsafe {
            let t = _mm_set1_ps(t);
            let lo = _mm_cmple_ps(t, _mm_loadu_ps(bounds.as_ptr()));
            let hi = _mm_cmple_ps(t, _mm_loadu_ps(bounds.as_ptr().add(4)));
            (_mm_movemask_ps(lo) | _mm_movemask_ps(hi) << 4) as u32
        }
    }

    /// [`PacketBoxRay::reaches`] of a non-empty box `lo..hi`: the three axes' slabs in lanes 0-2
    /// (lane 3 is ignored), each lane the twin's operations in the twin's order.
    #[inline]
    pub fn packet_reaches(p: &PacketBoxRay, lo: [f32; 3], hi: [f32; 3]) -> bool {
        let plane = |row: [usize; 3]| {
            let mut x = [0.0; 3];
            for axis in 0..3 {
                x[axis] = if row[axis] & 1 == 0 {
                    lo[axis]
                } else {
                    hi[axis]
                };
            }
            x
        };
        // SAFETY: SSE is always available on x86-64 (see the module docs); no memory is read
        // through pointers.
        unsafe {
            let set = |a: [f32; 3]| _mm_setr_ps(a[0], a[1], a[2], 0.0);
            let (o_lo, o_hi) = (set(p.origin_lo), set(p.origin_hi));
            let (inv_lo, inv_hi) = (set(p.inv_lo), set(p.inv_hi));
            let corners = |plane: __m128, op: unsafe fn(__m128, __m128) -> __m128| {
                let (lo, hi) = (_mm_sub_ps(plane, o_hi), _mm_sub_ps(plane, o_lo));
                op(
                    op(_mm_mul_ps(lo, inv_lo), _mm_mul_ps(lo, inv_hi)),
                    op(_mm_mul_ps(hi, inv_lo), _mm_mul_ps(hi, inv_hi)),
                )
            };
            let tn = corners(set(plane(p.near_row)), _mm_min_ps);
            let tf = corners(set(plane(p.far_row)), _mm_max_ps);
            // The twin folds the axes in order x, y, z: near from `t_min` by `max`, far from ∞ by
            // `min` (the same first operands, so the same results for every input).
            let lane = |x: __m128, k: i32| match k {
                0 => _mm_cvtss_f32(x),
                1 => _mm_cvtss_f32(_mm_shuffle_ps::<0b01>(x, x)),
                _ => _mm_cvtss_f32(_mm_shuffle_ps::<0b10>(x, x)),
            };
            let (mut near, mut far) = (p.t_min, f32::INFINITY);
            for k in 0..3 {
                near = max_ps(lane(tn, k), near);
                far = min_ps(lane(tf, k), far);
            }
            slab_hit(near, far, f32::INFINITY)
        }
    }

    #[inline(always)]
    pub fn moved_rays(rays: &[crate::Ray; 8], offset: glam::Vec3) -> [crate::Ray; 8] {
        let mut out = *rays;
        // SAFETY: SSE is always available on x86-64 (see the module docs); `Ray` is `repr(C)`,
        // eight f32 with the origin first (checked at compile time in `geom::ray`), so each load
        // reads and each store writes the first four floats of one ray of `rays` / `out`,
        // unaligned.
        unsafe {
            let by = _mm_setr_ps(offset.x, offset.y, offset.z, 0.0);
            for (ray, moved) in rays.iter().zip(&mut out) {
                let head = _mm_loadu_ps((ray as *const crate::Ray).cast::<f32>());
                _mm_storeu_ps(
                    (moved as *mut crate::Ray).cast::<f32>(),
                    _mm_sub_ps(head, by),
                );
            }
        }
        out
    }

    #[inline(always)]
    pub fn lanes_max(values: &[f32; 8], mask: u32) -> f32 {
        // SAFETY: SSE2 is always available on x86-64 (see the module docs); the two loads read the
        // eight floats of `values`, unaligned.
        unsafe {
            // Lane i of a half is kept when bit i of its four mask bits is set, else -∞.
            let bits = _mm_setr_epi32(1, 2, 4, 8);
            let keep = |m: u32| {
                let m = _mm_set1_epi32(m as i32);
                _mm_castsi128_ps(_mm_cmpeq_epi32(_mm_and_si128(m, bits), bits))
            };
            let ninf = _mm_set1_ps(f32::NEG_INFINITY);
            let pick = |v: __m128, k: __m128| _mm_or_ps(_mm_and_ps(k, v), _mm_andnot_ps(k, ninf));
            let lo = pick(_mm_loadu_ps(values.as_ptr()), keep(mask & 15));
            let hi = pick(_mm_loadu_ps(values.as_ptr().add(4)), keep(mask >> 4 & 15));
            let m = _mm_max_ps(lo, hi);
            let m = _mm_max_ps(m, _mm_movehl_ps(m, m));
            let m = _mm_max_ss(m, _mm_shuffle_ps::<0b01>(m, m));
            _mm_cvtss_f32(m)
        }
    }
}

#[cfg(test)]
mod tests;
