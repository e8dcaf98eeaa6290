//! Every SIMD routine of the crate, each beside its scalar twin.
//!
//! The scalar twin is the specification: it performs the same IEEE operations in the same order on
//! each lane, so the SIMD version returns bit-identical results (Rust never fuses a multiply and an
//! add on its own, and both versions avoid `mul_add`). The tests at the bottom compare the two on
//! random and adversarial inputs (NaN, ±∞, signed zeros). With the `force-scalar` feature, or on a
//! target other than x86-64, the twins are the only code; CI runs the engine's unit, scene and BVH
//! tests both ways.
//!
//! The routines (SSE2 is part of the x86-64 baseline and needs no detection; AVX is detected at run
//! time by the caller, see [`crate::bvh::wide`]). The crate's only `unsafe` blocks besides the BVHs'
//! unchecked node reads and the AVX dispatch are here, each with its `// SAFETY:` comment:
//! - [`box4`], [`box8`] (two SSE halves) and [`box8_avx`]: the conservative slab test of one ray
//!   against the child boxes of a [`WideNode`](crate::bvh::wide::WideNode) (Ize, "Robust BVH Ray
//!   Traversal", JCGT 2013); twin [`box_scalar`];
//! - [`tri4_candidates`]: the 2-D edge-function sign test of the watertight kernel (Woop, Benthin,
//!   Wald, "Watertight Ray/Triangle Intersection", JCGT 2013) on a [`Tri4`] block, which rejects the
//!   triangles the ray's line misses; the lanes it keeps go through the scalar kernel, which decides;
//!   twin [`tri4_candidates_scalar`]; [`tri_candidates`] runs it on two blocks at once with AVX,
//!   twin [`tri_candidates_scalar`];
//! - [`tri_hits`]: the whole watertight test on one or two blocks in one 8-lane AVX pass (hit, `t`,
//!   barycentrics), leaving to the scalar kernel only the lanes with an edge function rounded to 0;
//!   twin [`tri_hits_scalar`] (also what CPUs without AVX run); split in two for a packet's rays
//!   from one point, [`tri_rows`] (the triangles relative to the origin, once per pass, twin
//!   [`tri_rows_scalar`]) and [`tri_hits_rows`] (the rest, per ray, twin
//!   [`tri_hits_rows_scalar`]);
//! - [`qbox8`] (scalar dequantization, SSE test) and [`qbox8_avx2`]: the same slab test on the 8-bit
//!   child boxes of a quantized node ([`QuantBoxes8`]); twin [`qbox8_scalar`];
//! - [`prefetch`]: a cache hint (no twin needed: it changes no result).
//!
//! ## `min` / `max` and NaN
//! `MINPS(a, b)` / `MAXPS(a, b)` return `b` when either operand is NaN (and `b` for equal operands,
//! so `max(-0, +0) = +0`). The twins spell that out as `if a < b { a } else { b }`. The slab test puts
//! each axis' distance first and the running bound second, so the NaN of `0 · ∞` (an origin exactly
//! on a slab plane of an axis the ray is parallel to) leaves the bound alone: that axis constrains
//! nothing, as [`crate::Aabb::intersect_slabs`] decides.

/// Lanes of the 4-wide routines (triangles per [`Tri4`], children of a 4-wide node).
pub const LANES: usize = 4;

/// Four triangles in structure-of-arrays form: `v[k][axis][lane]` is coordinate `axis` of vertex
/// `k` of triangle `lane`, and `ids[lane]` a caller's id for it (the mesh stores the primitive id
/// there, so a hit needs no second memory access). 160 bytes, 16-byte aligned so each row is one SSE
/// load.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(16))]
pub struct Tri4 {
    /// `v[k][axis][lane]`.
    pub v: [[[f32; LANES]; 3]; 3],
    /// One id per lane.
    pub ids: [u32; LANES],
}

impl Tri4 {
    /// Four degenerate triangles at the origin with id `u32::MAX` (what padding lanes hold).
    pub const ZERO: Self = Self {
        v: [[[0.0; LANES]; 3]; 3],
        ids: [u32::MAX; LANES],
    };

    /// Vertex `k` of triangle `lane`.
    #[inline(always)]
    pub fn vertex(&self, k: usize, lane: usize) -> glam::Vec3 {
        glam::Vec3::new(self.v[k][0][lane], self.v[k][1][lane], self.v[k][2][lane])
    }

    /// Stores triangle `tri` in `lane`.
    #[inline]
    pub fn set(&mut self, lane: usize, tri: [glam::Vec3; 3]) {
        for (k, p) in tri.iter().enumerate() {
            self.v[k][0][lane] = p.x;
            self.v[k][1][lane] = p.y;
            self.v[k][2][lane] = p.z;
        }
    }
}

/// What [`box4`] needs of a ray, computed once per ray.
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
    /// ([`box8_avx`]), and storing six rows per ray cost about 15 instructions per walk.
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
pub const FAR_PAD: f32 = 2.0 * crate::geom::aabb::gamma(3);

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
/// `near <= far` (`f = −∞` pads to NaN, which fails). Choosing the near plane by the direction's sign (instead of `min(t0, t1)`) makes an
/// empty lane (min = +∞, max = −∞) a miss for every ray.
#[inline(always)]
pub fn box4(bounds: &[[f32; LANES]; 6], ray: &BoxRay, t_max: f32) -> Box4Hits {
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    {
        sse::box4(bounds, ray, t_max)
    }
    #[cfg(not(all(target_arch = "x86_64", not(feature = "force-scalar"))))]
    {
        box4_scalar(bounds, ray, t_max)
    }
}

/// `MINPS` on one lane: `a` when `a < b`, else `b` (so a NaN `a` gives `b`).
#[inline(always)]
fn min_ps(a: f32, b: f32) -> f32 {
    if a < b {
        a
    } else {
        b
    }
}

/// `MAXPS` on one lane: `a` when `a > b`, else `b` (so a NaN `a` gives `b`).
#[inline(always)]
fn max_ps(a: f32, b: f32) -> f32 {
    if a > b {
        a
    } else {
        b
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
    #[cfg(not(all(target_arch = "x86_64", not(feature = "force-scalar"))))]
    {
        box_scalar(bounds, ray, t_max)
    }
}

/// [`box8`] with 8-lane AVX instructions.
///
/// # Safety
/// The CPU must support AVX: callers check `is_x86_feature_detected!("avx")` (see
/// [`crate::bvh::wide`]), or call it from a function compiled for AVX.
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
unsafe fn slab8_avx(
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
            // selects. Fixed rows and a blend instead of row arithmetic per node:
            // 12 fewer instructions per node visit when the ray's rows are not kept in registers.
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
unsafe fn slab_hits8_avx(
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

/// `true` when the CPU is x86-64-v3 (AVX2, FMA, BMI1/2, LZCNT, POPCNT): what the fastest traversal
/// ([`crate::bvh::wide`]) is compiled for. Asked once per process; then one relaxed load (the six
/// separate `is_x86_feature_detected!` checks cost 2% of an incoherent ray).
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
#[inline]
pub fn has_x86_64_v3() -> bool {
    use std::arch::is_x86_feature_detected as has;
    static V3: CpuCheck = CpuCheck::new();
    V3.get(|| {
        has!("avx2")
            && has!("fma")
            && has!("bmi1")
            && has!("bmi2")
            && has!("lzcnt")
            && has!("popcnt")
    })
}

/// A CPU feature answer asked once per process, then one relaxed load.
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
struct CpuCheck(std::sync::atomic::AtomicU8);

#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
impl CpuCheck {
    const fn new() -> Self {
        Self(std::sync::atomic::AtomicU8::new(0))
    }

    /// The cached answer, or `detect()` the first time (0: not asked yet, 1: no, 2: yes). Two
    /// threads asking at once both detect the same answer, so a race only repeats the question.
    #[inline(always)]
    fn get(&self, detect: impl FnOnce() -> bool) -> bool {
        match self.0.load(std::sync::atomic::Ordering::Relaxed) {
            0 => self.detect(detect),
            answer => answer == 2,
        }
    }

    /// The first question: out of line, so [`Self::get`] inlines to a load and a compare (it was
    /// a call on every traversal).
    #[cold]
    #[inline(never)]
    fn detect(&self, detect: impl FnOnce() -> bool) -> bool {
        let answer = detect();
        self.0
            .store(1 + u8::from(answer), std::sync::atomic::Ordering::Relaxed);
        answer
    }
}

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

/// Scalar twin (the spec) of [`qbox8`] and [`qbox8_avx2`].
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
/// The CPU must support AVX and AVX2 (callers check [`has_x86_64_v3`]), and the caller must be
/// compiled with both enabled (`#[target_feature]`): it is inlined into the caller, so that the
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

/// Scalar twin (the spec) of [`box4`].
#[inline(always)]
pub fn box4_scalar(bounds: &[[f32; LANES]; 6], ray: &BoxRay, t_max: f32) -> Box4Hits {
    box_scalar(bounds, ray, t_max)
}

/// The end of every scalar slab test (the twin of the lanes of the SIMD tests' last step): the
/// far distance padded by [`FAR_PAD`] and clipped to `t_max`, hit when `near <= far`. `t_max`
/// first: a far distance of -∞ (the ray runs parallel to and outside a slab, or the lane is empty)
/// pads to -∞ + ∞ = NaN, which must win the min and fail the test.
#[inline(always)]
fn slab_hit(near: f32, far: f32, t_max: f32) -> bool {
    near <= min_ps(t_max, far + far.abs() * FAR_PAD)
}

/// Scalar twin (the spec) of [`box4`], [`box8`] and [`box8_avx`], for any width.
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

/// What [`packet_box8`] needs of a packet of rays, one box test for all of them: the range of
/// their origins and of their reciprocal directions per axis. Only for rays in one octant (one sign
/// per direction component, so one near and one far row) with finite `1/dir` components.
///
/// The test is conservative for every ray of the packet, bit for bit: each ray's distances
/// `(plane − o)·inv` lie between the smallest and the largest of the four corner products
/// `(plane − o_hi|lo)·inv_lo|hi`, because rounding is monotone in each operand (the subtraction in
/// `o`, the product in either factor while the other keeps its sign). The near distance taken is the
/// smallest corner, the far one the largest, and the padding, the maxima and minima after them are
/// monotone too, so whenever one ray's [`box_scalar`] reports a child, so does the packet's test (a
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
    /// Row of each axis' near plane, as in [`BoxRay`] (the same for every ray of the packet).
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
        if has_avx() {
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

    /// Whether any ray of the packet can reach `bounds` ([`packet_box_scalar`] on that one box, no
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

    /// Whether the rays look alike enough for a packet walk to pay: one origin and directions
    /// within [`CONE_SPREAD`] of each other (a perspective camera's neighbouring pixels), or
    /// reciprocal directions within [`COHERENT_SPREAD`] of each other (an orthographic camera's).
    /// Only a matter of speed: the test is conservative whatever the spread. Rays from one eye
    /// through far-apart pixels (a sparse sample of an image) are not a packet: their union
    /// reaches most of the tree, and such packets cast 5 times slower than single rays.
    #[inline]
    pub fn is_coherent(&self) -> bool {
        if self.origin_lo == self.origin_hi {
            self.narrow_cone()
        } else {
            (0..3).all(|a| {
                let (lo, hi) = (self.inv_lo[a], self.inv_hi[a]);
                hi - lo <= COHERENT_SPREAD * lo.abs().min(hi.abs())
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

/// Spread of the directions of rays from one origin up to which they count as a packet in
/// [`PacketBoxRay::is_coherent`] (per axis, relative to the largest component: about 1.8°). Eight
/// neighbouring pixels of a 1024-pixel-wide image with a 45° field of view span 0.35°, of a
/// 128-pixel-wide one 2.8°. A heuristic, no tolerance of any answer.
pub const CONE_SPREAD: f32 = 1.0 / 32.0;

/// The packet test: bit `i` of the mask is set when some ray of the packet may reach child `i`
/// within `[t_min, t_max]` (every child one of them reaches is set; see [`PacketBoxRay`]), and
/// `t_near[i]` is at most the entry distance of each ray into child `i`. AVX where the CPU has it,
/// else the scalar twin.
#[inline(always)]
pub fn packet_box8(bounds: &[[f32; 8]; 6], ray: &PacketBoxRay, t_max: f32) -> BoxHits<8> {
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    if has_avx() {
        // SAFETY: the CPU has AVX, checked just above.
        return unsafe { packet_box8_avx(bounds, ray, t_max) };
    }
    packet_box_scalar(bounds, ray, t_max)
}

/// [`packet_box8`] with 8-lane AVX instructions.
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

/// Scalar twin (the spec) of [`packet_box8`] and [`packet_box8_avx`], for any width.
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
#[inline(always)]
pub fn moved_rays_scalar(rays: &[crate::Ray; 8], offset: glam::Vec3) -> [crate::Ray; 8] {
    rays.map(|ray| crate::Ray {
        origin: ray.origin - offset,
        ..ray
    })
}

/// The lanes `i` with `t <= bounds[i]`, as a mask (false for NaN): which rays of a packet a child
/// entered at `t` can still matter to ([`crate::bvh::wide::WideBvh::traverse_packet`]). Two SSE
/// halves on x86-64 (the fold compiled to about 40 scalar and vector instructions), else the
/// scalar twin.
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
#[inline(always)]
pub fn lanes_max_scalar(values: &[f32; 8], mask: u32) -> f32 {
    (0..8)
        .filter(|i| mask >> i & 1 == 1)
        .fold(f32::NEG_INFINITY, |m, i| max_ps(values[i], m))
}

/// Asks the CPU to start loading every cache line of `values` (at most [`PREFETCH_MAX`] bytes from
/// the start) into all cache levels; a hint with no effect on results. Used by the BVH traversal
/// for the node it tests next (a whole 8-wide node is four lines, whose last one, the child
/// references, is read only after the box test); the children it defers go through
/// [`prefetch_lines`], a fixed count from an address chosen without a branch.
#[inline(always)]
pub fn prefetch<T>(values: &[T]) {
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    {
        let start = values.as_ptr().cast::<i8>();
        let bytes = std::mem::size_of_val(values).min(PREFETCH_MAX);
        // Every line from the one holding the first byte to the one holding the last.
        let mut offset = -((start as usize & 63) as isize);
        while offset < bytes as isize {
            // SAFETY: SSE is always available on x86-64 (see the `sse` module); PREFETCHT0 never
            // faults and reads nothing architecturally, whatever the address (`wrapping_offset`
            // keeps the pointer computation defined).
            unsafe {
                use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                _mm_prefetch::<_MM_HINT_T0>(start.wrapping_offset(offset));
            }
            offset += 64;
        }
    }
    #[cfg(not(all(target_arch = "x86_64", not(feature = "force-scalar"))))]
    {
        let _ = values;
    }
}

/// Asks the CPU to start loading the `LINES` cache lines from the one holding `start` on; a hint
/// with no effect on results, for any address (nothing is read). A fixed count, so no loop branch
/// depends on the data.
#[inline(always)]
pub fn prefetch_lines<const LINES: usize>(start: *const u8) {
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    for line in 0..LINES {
        // SAFETY: as in `prefetch`: SSE is always available on x86-64, PREFETCHT0 never faults
        // and reads nothing architecturally, and `wrapping_add` keeps the address defined.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(64 * line).cast::<i8>());
        }
    }
    #[cfg(not(all(target_arch = "x86_64", not(feature = "force-scalar"))))]
    {
        let _ = start;
    }
}

/// Most bytes [`prefetch`] asks for: a wide node, or two triangle blocks.
pub const PREFETCH_MAX: usize = 320;

/// What [`tri4_candidates`] needs of a ray: the watertight kernel's origin, axis permutation and
/// shear (see [`crate::geom::triangle::WatertightRay`]). With `p = v − origin`, a vertex's sheared
/// coordinates are `x = p[kx] + sx·p[kz]` and `y = p[ky] + sy·p[kz]`: one rounded product, then one
/// rounded sum (never fused), as in the kernel.
#[derive(Clone, Copy, Debug)]
pub struct ShearRay {
    /// Ray origin.
    pub origin: [f32; 3],
    /// `[kx, ky, kz]`: a permutation of `[0, 1, 2]`, `kz` the axis of the direction's largest
    /// component.
    pub axes: [usize; 3],
    /// Shear of x: `−d[kx] / d[kz]`.
    pub sx: f32,
    /// Shear of y: `−d[ky] / d[kz]`.
    pub sy: f32,
}

impl ShearRay {
    /// `[kx, ky, kz]`, each clamped to `0..3` (which they are: the clamp, a conditional move, lets
    /// the compiler drop the bounds checks of the row loads).
    #[inline(always)]
    pub fn axes(&self) -> [usize; 3] {
        self.axes.map(|a| a.min(2))
    }

    /// The components of `p` in the order `[kx, ky, kz]`.
    #[inline(always)]
    fn permute<T: Copy>(&self, p: [T; 3]) -> [T; 3] {
        self.axes().map(|a| p[a])
    }

    /// A key that two shear rays share exactly when they have the same origin (bit for bit) and
    /// axes, so the same [`tri_rows`]. Packed into two integers from the fields' own values: a
    /// comparison of the fields as arrays read them back with wide loads across the narrower
    /// stores that had just written them, which the CPU cannot forward (any-hit camera rays ran
    /// 7 % slower for it).
    #[inline(always)]
    pub fn frame(&self) -> [u64; 2] {
        let [x, y, z] = self.origin.map(f32::to_bits);
        let [kx, ky, kz] = self.axes().map(|a| a as u64);
        [
            u64::from(x) << 32 | u64::from(y),
            u64::from(z) << 32 | kx << 16 | ky << 8 | kz,
        ]
    }
}

/// Lanes of `tris` that the watertight kernel may hit: bit `i` is clear only when triangle `i`'s
/// three edge functions are all non-zero and of mixed signs, where the scalar kernel returns `None`
/// without looking further. Every set lane must go through the scalar kernel, which decides (and
/// recomputes zeros in f64). The sheared coordinates are computed with the kernel's operations in
/// its order ([`ShearRay`]), so the values equal the kernel's bit for bit.
#[inline(always)]
pub fn tri4_candidates(tris: &Tri4, ray: &ShearRay) -> u32 {
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    {
        sse::tri4_candidates(tris, ray)
    }
    #[cfg(not(all(target_arch = "x86_64", not(feature = "force-scalar"))))]
    {
        tri4_candidates_scalar(tris, ray)
    }
}

/// Scalar twin (the spec) of [`tri4_candidates`].
#[inline(always)]
pub fn tri4_candidates_scalar(tris: &Tri4, ray: &ShearRay) -> u32 {
    let mut mask = 0;
    for lane in 0..LANES {
        let mut xy = [[0.0f32; 2]; 3];
        for (k, out) in xy.iter_mut().enumerate() {
            let p = ray.permute([0, 1, 2].map(|axis| tris.v[k][axis][lane] - ray.origin[axis]));
            *out = [p[0] + ray.sx * p[2], p[1] + ray.sy * p[2]];
        }
        let [[ax, ay], [bx, by], [cx, cy]] = xy;
        let u = cx * by - cy * bx;
        let v = ax * cy - ay * cx;
        let w = bx * ay - by * ax;
        let neg = u < 0.0 || v < 0.0 || w < 0.0;
        let pos = u > 0.0 || v > 0.0 || w > 0.0;
        let zero = u == 0.0 || v == 0.0 || w == 0.0;
        mask |= u32::from(!(neg && pos) || zero) << lane;
    }
    mask
}

/// [`tri4_candidates`] of one block or of two consecutive ones (`blocks.len()` is 1 or 2): bit
/// `4·b + i` for lane `i` of `blocks[b]`. Two blocks go through one pass of 8-lane AVX instructions
/// on CPUs with AVX (a leaf of 5 to 8 triangles, the most common size), else through two 4-lane
/// passes.
#[inline(always)]
pub fn tri_candidates(blocks: &[Tri4], ray: &ShearRay) -> u32 {
    debug_assert!(matches!(blocks.len(), 1 | 2));
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    if let [a, b] = blocks {
        if has_avx() {
            // SAFETY: the CPU has AVX, checked just above.
            return unsafe { avx::tri8_candidates(a, b, ray) };
        }
    }
    blocks.iter().enumerate().fold(0, |mask, (k, block)| {
        mask | tri4_candidates(block, ray) << (LANES * k)
    })
}

/// Scalar twin (the spec) of [`tri_candidates`].
#[inline(always)]
pub fn tri_candidates_scalar(blocks: &[Tri4], ray: &ShearRay) -> u32 {
    blocks.iter().enumerate().fold(0, |mask, (k, block)| {
        mask | tri4_candidates_scalar(block, ray) << (LANES * k)
    })
}

/// What [`tri_hits`] needs of a ray: the watertight kernel's whole shear (see
/// [`crate::geom::triangle::WatertightRay`]), its smallest `t` and its culling. The largest `t`
/// shrinks during a walk and is passed per call.
#[derive(Clone, Copy, Debug)]
pub struct HitRay {
    /// Origin, axis permutation and the shear of x and y.
    pub shear: ShearRay,
    /// Scale of z: the sheared z of `p = v − origin` is `sz·p[kz]`, `sz = 1 / d[kz]`.
    pub sz: f32,
    /// Smallest `t` reported.
    pub t_min: f32,
    /// Back faces culled ([`crate::geom::triangle::Culling::Back`]).
    pub cull_back: bool,
}

/// What [`tri_hits`] decided for the (up to) eight triangles of one or two blocks; bit `4·b + i` is
/// lane `i` of block `b`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriHits {
    /// Lanes the ray hits within `[t_min, t_max]`, with `t`, `u`, `v` below: bit for bit what the
    /// scalar kernel ([`crate::geom::triangle::WatertightRay::intersect`] with `t_max`) returns for
    /// them.
    pub hit: u32,
    /// Lanes left to the scalar kernel: an edge function rounded to exactly 0 (the kernel
    /// recomputes it in `f64` and applies the edge rule; a degenerate triangle, stored collapsed to
    /// a point, always lands here), or `1 / det` overflowed (the kernel then divides).
    pub undecided: u32,
    /// Ray parameter per lane (meaningful on `hit` lanes).
    pub t: [f32; 8],
    /// Barycentric weight of `v1` per lane.
    pub u: [f32; 8],
    /// Barycentric weight of `v2` per lane.
    pub v: [f32; 8],
}

impl TriHits {
    /// No hit, nothing undecided.
    pub const NONE: Self = Self {
        hit: 0,
        undecided: 0,
        t: [0.0; 8],
        u: [0.0; 8],
        v: [0.0; 8],
    };
}

/// The watertight test of one ray against the triangles of one or two blocks (`blocks.len()` is 1
/// or 2) within `[ray.t_min, t_max]`, completed in SIMD: where every edge function is non-zero, a
/// lane's hit, `t` and barycentrics are computed with the scalar kernel's operations in its order,
/// so the scalar kernel runs only on the rare [`TriHits::undecided`] lanes instead of on every
/// triangle the ray's line crosses (on the conference room 1.7 times per closest-hit ray, about
/// 140 instructions a call, recomputing what the prefilter had computed). Eight AVX lanes where the
/// CPU has AVX, inlined into the caller (which must then be compiled with AVX for speed: the
/// walks are); else the twin.
///
/// Only the lanes of `lanes` are decided (bit `4·b + i`: lane `i` of block `b`; a leaf's
/// triangles, without the padding that fills its last block); the others read as misses. The
/// padding must not count when deciding whether a pass can stop early: a padding triangle is
/// collapsed to a point, its edge functions are all 0, and such a lane is undecided, which
/// kept every pass over a padded block from stopping at the early exit (the conference room:
/// 85 % of the passes went on to the division).
#[inline(always)]
pub fn tri_hits(blocks: &[Tri4], lanes: u32, ray: &HitRay, t_max: f32) -> TriHits {
    debug_assert!(matches!(blocks.len(), 1 | 2));
    debug_assert_eq!(lanes >> (LANES * blocks.len()), 0);
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    if has_avx() {
        // The second block is the first again for a one-block leaf, its lanes not in `lanes`:
        // chosen by index arithmetic, not a branch on the leaf's size (0.4 mispredictions per
        // incoherent conference ray).
        let (a, b) = (&blocks[0], &blocks[blocks.len() - 1]);
        // SAFETY: the CPU has AVX, checked just above.
        return unsafe { avx::tri8_hits(a, b, lanes, ray, t_max) };
    }
    tri_hits_scalar(blocks, lanes, ray, t_max)
}

/// Scalar twin (the spec) of [`tri_hits`]: per lane, the scalar kernel's steps up to its result.
#[inline(always)]
pub fn tri_hits_scalar(blocks: &[Tri4], lanes: u32, ray: &HitRay, t_max: f32) -> TriHits {
    let mut out = TriHits::NONE;
    let (o, sh) = (ray.shear.origin, &ray.shear);
    for (b, block) in blocks.iter().enumerate() {
        for lane in 0..LANES {
            let k = LANES * b + lane;
            if lanes >> k & 1 == 0 {
                continue;
            }
            // Vertex `vertex` relative to the origin, in the order [kx, ky, kz].
            let rel = |vertex: usize| {
                sh.permute([0, 1, 2].map(|axis| block.v[vertex][axis][lane] - o[axis]))
            };
            let (pa, pb, pc) = (rel(0), rel(1), rel(2));
            lane_hit(&mut out, k, [pa, pb, pc], ray, t_max);
        }
    }
    out
}

/// The watertight test of lane `k` from its vertices relative to the origin (in the order
/// `[kx, ky, kz]`), into `out`: the per-lane body of both scalar twins, [`tri_hits_scalar`] and
/// [`tri_hits_rows_scalar`].
#[inline(always)]
fn lane_hit(out: &mut TriHits, k: usize, [pa, pb, pc]: [[f32; 3]; 3], ray: &HitRay, t_max: f32) {
    let sh = &ray.shear;
    let xy = |p: [f32; 3]| (p[0] + sh.sx * p[2], p[1] + sh.sy * p[2]);
    let ((ax, ay), (bx, by), (cx, cy)) = (xy(pa), xy(pb), xy(pc));
    let u = cx * by - cy * bx;
    let v = ax * cy - ay * cx;
    let w = bx * ay - by * ax;
    if u == 0.0 || v == 0.0 || w == 0.0 {
        out.undecided |= 1 << k;
        return;
    }
    let neg = u < 0.0 || v < 0.0 || w < 0.0;
    let pos = u > 0.0 || v > 0.0 || w > 0.0;
    if neg && (ray.cull_back || pos) {
        return;
    }
    let det = u + v + w;
    if det == 0.0 {
        return;
    }
    let (az, bz, cz) = (ray.sz * pa[2], ray.sz * pb[2], ray.sz * pc[2]);
    let t_scaled = u * az + v * bz + w * cz;
    let rcp = 1.0 / det;
    if !rcp.is_finite() {
        out.undecided |= 1 << k;
        return;
    }
    let t = t_scaled * rcp;
    if t >= ray.t_min && t <= t_max && t.is_finite() {
        out.hit |= 1 << k;
        out.t[k] = t;
        out.u[k] = v * rcp;
        out.v[k] = w * rcp;
    }
}

/// The first step of [`tri_hits`], which depends on the ray only through its origin and axes: the
/// vertices of one or two blocks relative to `shear.origin`, their components in the order
/// `[kx, ky, kz]` of `shear.axes`, eight lanes (a single block fills both halves, as in
/// [`tri_hits`]). The rays of a packet from one point that share the axes (a camera's
/// neighbouring pixels, nearly always) have the same rows: a packet's leaf computes them once per
/// pass and each ray goes on from them ([`tri_hits_rows`]), bit for bit as [`tri_hits`] would.
#[inline(always)]
pub fn tri_rows(blocks: &[Tri4], shear: &ShearRay) -> TriRows {
    debug_assert!(matches!(blocks.len(), 1 | 2));
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    if has_avx() {
        let (a, b) = (&blocks[0], &blocks[blocks.len() - 1]);
        // SAFETY: the CPU has AVX, checked just above.
        return unsafe { avx::tri8_rows(a, b, shear) };
    }
    tri_rows_scalar(blocks, shear)
}

/// Scalar twin of [`tri_rows`].
#[inline(always)]
pub fn tri_rows_scalar(blocks: &[Tri4], shear: &ShearRay) -> TriRows {
    let mut rows = TriRows {
        p: [[[0.0; 8]; 3]; 3],
    };
    for (half, block) in [&blocks[0], &blocks[blocks.len() - 1]]
        .into_iter()
        .enumerate()
    {
        for lane in 0..LANES {
            for (k, vertex) in rows.p.iter_mut().enumerate() {
                let rel = shear
                    .permute([0, 1, 2].map(|axis| block.v[k][axis][lane] - shear.origin[axis]));
                for (row, value) in vertex.iter_mut().zip(rel) {
                    row[LANES * half + lane] = value;
                }
            }
        }
    }
    rows
}

/// [`tri_hits`] from the pass's [`TriRows`] (made by [`tri_rows`] with this ray's origin and
/// axes): the same answer, without the rows' loads and subtractions.
#[inline(always)]
pub fn tri_hits_rows(rows: &TriRows, lanes: u32, ray: &HitRay, t_max: f32) -> TriHits {
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    if has_avx() {
        // SAFETY: the CPU has AVX, checked just above.
        return unsafe { avx::tri8_hits_rows(rows, lanes, ray, t_max) };
    }
    tri_hits_rows_scalar(rows, lanes, ray, t_max)
}

/// Scalar twin of [`tri_hits_rows`].
#[inline(always)]
pub fn tri_hits_rows_scalar(rows: &TriRows, lanes: u32, ray: &HitRay, t_max: f32) -> TriHits {
    let mut out = TriHits::NONE;
    for k in 0..2 * LANES {
        if lanes >> k & 1 == 0 {
            continue;
        }
        // Vertex `vertex` relative to the origin, in the order [kx, ky, kz].
        let rel = |vertex: usize| rows.p[vertex].map(|row| row[k]);
        let (pa, pb, pc) = (rel(0), rel(1), rel(2));
        lane_hit(&mut out, k, [pa, pb, pc], ray, t_max);
    }
    out
}

/// The first step of the watertight test on a pass's eight triangles ([`tri_rows`]): `p[k][j]` is
/// row `j` of vertex `k`, component `axes[j]` of the vertex minus the origin's, one lane per
/// triangle. 288 bytes, aligned for AVX loads.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(32))]
pub struct TriRows {
    /// `p[k][j][lane]`.
    pub p: [[[f32; 8]; 3]; 3],
}

/// `true` when the CPU has AVX. Asked once per process; then one relaxed load.
#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
#[inline]
pub fn has_avx() -> bool {
    static AVX: CpuCheck = CpuCheck::new();
    AVX.get(|| std::arch::is_x86_feature_detected!("avx"))
}

#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
mod avx {
    //! 8-lane AVX versions; callers check that the CPU has AVX ([`super::has_avx`]).
    use std::arch::x86_64::*;

    use super::{HitRay, ShearRay, Tri4, TriHits, TriRows};

    /// Row `axis` of vertex `k`, the lanes of `a` low and those of `b` high, minus the origin.
    #[inline]
    #[target_feature(enable = "avx")]
    fn relative(a: &Tri4, b: &Tri4, k: usize, axis: usize, origin: f32) -> __m256 {
        // SAFETY: each load reads the four floats of one `[f32; 4]` row, unaligned.
        let row = unsafe { _mm256_loadu2_m128(b.v[k][axis].as_ptr(), a.v[k][axis].as_ptr()) };
        _mm256_sub_ps(row, _mm256_set1_ps(origin))
    }

    /// Sheared x and y of vertex `k` of the eight triangles: `p[kx] + sx·p[kz]`, `p[ky] + sy·p[kz]`.
    #[inline]
    #[target_feature(enable = "avx")]
    fn sheared(a: &Tri4, b: &Tri4, k: usize, ray: &ShearRay) -> (__m256, __m256) {
        let [kx, ky, kz] = ray.axes();
        let pz = relative(a, b, k, kz, ray.origin[kz]);
        let x = relative(a, b, k, kx, ray.origin[kx]);
        let y = relative(a, b, k, ky, ray.origin[ky]);
        (
            _mm256_add_ps(x, _mm256_mul_ps(_mm256_set1_ps(ray.sx), pz)),
            _mm256_add_ps(y, _mm256_mul_ps(_mm256_set1_ps(ray.sy), pz)),
        )
    }

    /// [`super::tri4_candidates`] of `a` (bits 0–3) and `b` (bits 4–7) in one pass.
    #[inline]
    #[target_feature(enable = "avx")]
    pub fn tri8_candidates(a: &Tri4, b: &Tri4, ray: &ShearRay) -> u32 {
        let (ax, ay) = sheared(a, b, 0, ray);
        let (bx, by) = sheared(a, b, 1, ray);
        let (cx, cy) = sheared(a, b, 2, ray);
        let u = _mm256_sub_ps(_mm256_mul_ps(cx, by), _mm256_mul_ps(cy, bx));
        let v = _mm256_sub_ps(_mm256_mul_ps(ax, cy), _mm256_mul_ps(ay, cx));
        let w = _mm256_sub_ps(_mm256_mul_ps(bx, ay), _mm256_mul_ps(by, ax));
        let zero = _mm256_setzero_ps();
        let lt = |x| _mm256_cmp_ps::<_CMP_LT_OQ>(x, zero);
        let gt = |x| _mm256_cmp_ps::<_CMP_GT_OQ>(x, zero);
        let eq = |x| _mm256_cmp_ps::<_CMP_EQ_OQ>(x, zero);
        let neg = _mm256_or_ps(_mm256_or_ps(lt(u), lt(v)), lt(w));
        let pos = _mm256_or_ps(_mm256_or_ps(gt(u), gt(v)), gt(w));
        let is_zero = _mm256_or_ps(_mm256_or_ps(eq(u), eq(v)), eq(w));
        // Rejected: mixed signs and no zero.
        let rejected = _mm256_andnot_ps(is_zero, _mm256_and_ps(neg, pos));
        !(_mm256_movemask_ps(rejected) as u32) & 0xFF
    }

    /// Vertex `k` of the eight triangles relative to the origin, rows in the order `[kx, ky, kz]`.
    /// Functions, always inlined, like [`tri8_hits`] and written out: as closures (or through
    /// `array::map`) with run-time axes these loads stayed calls, outside the AVX context (2,010
    /// instead of 1,335 instructions per ray).
    ///
    /// # Safety
    /// The CPU must support AVX.
    #[inline(always)]
    unsafe fn permuted(a: &Tri4, b: &Tri4, k: usize, ray: &ShearRay) -> [__m256; 3] {
        let [kx, ky, kz] = ray.axes();
        // SAFETY: the caller guarantees AVX.
        unsafe {
            [
                row(a, b, k, kx, ray.origin[kx]),
                row(a, b, k, ky, ray.origin[ky]),
                row(a, b, k, kz, ray.origin[kz]),
            ]
        }
    }

    /// Row `axis` of vertex `k`, the lanes of `a` low and those of `b` high, minus `origin`.
    ///
    /// # Safety
    /// The CPU must support AVX.
    #[inline(always)]
    unsafe fn row(a: &Tri4, b: &Tri4, k: usize, axis: usize, origin: f32) -> __m256 {
        // SAFETY: the caller guarantees AVX; each load reads the four floats of one `[f32; 4]`
        // row, unaligned.
        unsafe {
            let row = _mm256_loadu2_m128(b.v[k][axis].as_ptr(), a.v[k][axis].as_ptr());
            _mm256_sub_ps(row, _mm256_set1_ps(origin))
        }
    }

    /// [`super::tri_hits`] of the `lanes` of `a` (bits 0–3) and `b` (bits 4–7): the twin's steps
    /// as lane masks.
    /// Not a `#[target_feature]` function but always inlined, so that it becomes part of the AVX
    /// traversal that calls it (a `#[target_feature]` function of this size stayed a call, with a
    /// `vzeroupper` and the traversal's registers spilled around it).
    ///
    /// # Safety
    /// The CPU must support AVX.
    #[inline(always)]
    pub unsafe fn tri8_hits(a: &Tri4, b: &Tri4, lanes: u32, ray: &HitRay, t_max: f32) -> TriHits {
        let sh = &ray.shear;
        // SAFETY: the caller guarantees AVX.
        unsafe {
            let rows = [
                permuted(a, b, 0, sh),
                permuted(a, b, 1, sh),
                permuted(a, b, 2, sh),
            ];
            hits_of_rows(rows, lanes, ray, t_max)
        }
    }

    /// [`super::tri_rows`] of `a` (lanes 0–3) and `b` (lanes 4–7).
    ///
    /// # Safety
    /// The CPU must support AVX.
    #[inline(always)]
    pub unsafe fn tri8_rows(a: &Tri4, b: &Tri4, shear: &ShearRay) -> TriRows {
        let mut out = TriRows {
            p: [[[0.0; 8]; 3]; 3],
        };
        // SAFETY: the caller guarantees AVX; each store writes the eight floats of one
        // `[f32; 8]` row, aligned (`TriRows` is 32-byte aligned, each row 32 bytes).
        unsafe {
            for (k, vertex) in out.p.iter_mut().enumerate() {
                let rows = permuted(a, b, k, shear);
                for (dst, row) in vertex.iter_mut().zip(rows) {
                    _mm256_store_ps(dst.as_mut_ptr(), row);
                }
            }
        }
        out
    }

    /// [`super::tri_hits_rows`].
    ///
    /// # Safety
    /// The CPU must support AVX.
    #[inline(always)]
    pub unsafe fn tri8_hits_rows(rows: &TriRows, lanes: u32, ray: &HitRay, t_max: f32) -> TriHits {
        // SAFETY: the caller guarantees AVX; each load reads the eight floats of one `[f32; 8]`
        // row, aligned (as in `tri8_rows`).
        unsafe {
            let load = |k: usize| rows.p[k].map(|row| _mm256_load_ps(row.as_ptr()));
            hits_of_rows([load(0), load(1), load(2)], lanes, ray, t_max)
        }
    }

    /// The watertight test from the three vertices' rows (relative to the origin, in the order
    /// `[kx, ky, kz]`) on: the twin's steps as lane masks.
    ///
    /// # Safety
    /// The CPU must support AVX.
    #[inline(always)]
    unsafe fn hits_of_rows(
        [pa, pb, pc]: [[__m256; 3]; 3],
        lanes: u32,
        ray: &HitRay,
        t_max: f32,
    ) -> TriHits {
        // SAFETY: the caller guarantees AVX; each store writes the eight floats of one
        // `[f32; 8]`, unaligned.
        unsafe {
            let sh = &ray.shear;
            let (sx, sy) = (_mm256_set1_ps(sh.sx), _mm256_set1_ps(sh.sy));
            let xy = |p: [__m256; 3]| {
                (
                    _mm256_add_ps(p[0], _mm256_mul_ps(sx, p[2])),
                    _mm256_add_ps(p[1], _mm256_mul_ps(sy, p[2])),
                )
            };
            let ((ax, ay), (bx, by), (cx, cy)) = (xy(pa), xy(pb), xy(pc));
            let u = _mm256_sub_ps(_mm256_mul_ps(cx, by), _mm256_mul_ps(cy, bx));
            let v = _mm256_sub_ps(_mm256_mul_ps(ax, cy), _mm256_mul_ps(ay, cx));
            let w = _mm256_sub_ps(_mm256_mul_ps(bx, ay), _mm256_mul_ps(by, ax));
            let zero = _mm256_setzero_ps();
            let lt = |x| _mm256_cmp_ps::<_CMP_LT_OQ>(x, zero);
            let gt = |x| _mm256_cmp_ps::<_CMP_GT_OQ>(x, zero);
            let eq = |x| _mm256_cmp_ps::<_CMP_EQ_OQ>(x, zero);
            let is_zero = _mm256_or_ps(_mm256_or_ps(eq(u), eq(v)), eq(w));
            let neg = _mm256_or_ps(_mm256_or_ps(lt(u), lt(v)), lt(w));
            let pos = _mm256_or_ps(_mm256_or_ps(gt(u), gt(v)), gt(w));
            let rejected = if ray.cull_back {
                neg
            } else {
                _mm256_and_ps(neg, pos)
            };
            // Most passes end here: the ray's line misses every triangle of the leaf (the
            // prefilter's answer).
            let all = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
            let open = _mm256_movemask_ps(_mm256_or_ps(_mm256_andnot_ps(rejected, all), is_zero));
            if open as u32 & lanes == 0 {
                return TriHits::NONE;
            }
            let det = _mm256_add_ps(_mm256_add_ps(u, v), w);
            let sz = _mm256_set1_ps(ray.sz);
            let (az, bz, cz) = (
                _mm256_mul_ps(sz, pa[2]),
                _mm256_mul_ps(sz, pb[2]),
                _mm256_mul_ps(sz, pc[2]),
            );
            let t_scaled = _mm256_add_ps(
                _mm256_add_ps(_mm256_mul_ps(u, az), _mm256_mul_ps(v, bz)),
                _mm256_mul_ps(w, cz),
            );
            let rcp = _mm256_div_ps(_mm256_set1_ps(1.0), det);
            // |x| < ∞, false for NaN: `f32::is_finite`.
            let abs = |x| _mm256_andnot_ps(_mm256_set1_ps(-0.0), x);
            let finite = |x| _mm256_cmp_ps::<_CMP_LT_OQ>(abs(x), _mm256_set1_ps(f32::INFINITY));
            let t = _mm256_mul_ps(t_scaled, rcp);
            let in_range = _mm256_and_ps(
                _mm256_and_ps(
                    _mm256_cmp_ps::<_CMP_GE_OQ>(t, _mm256_set1_ps(ray.t_min)),
                    _mm256_cmp_ps::<_CMP_LE_OQ>(t, _mm256_set1_ps(t_max)),
                ),
                finite(t),
            );
            // Lanes that reach the reciprocal: no zero edge function, not rejected, det != 0.
            let reached =
                _mm256_andnot_ps(_mm256_or_ps(_mm256_or_ps(is_zero, rejected), eq(det)), all);
            let rcp_finite = finite(rcp);
            let undecided = _mm256_or_ps(is_zero, _mm256_andnot_ps(rcp_finite, reached));
            let hit = _mm256_and_ps(_mm256_and_ps(reached, rcp_finite), in_range);
            let mut out = TriHits {
                hit: _mm256_movemask_ps(hit) as u32 & lanes,
                undecided: _mm256_movemask_ps(undecided) as u32 & lanes,
                ..TriHits::NONE
            };
            _mm256_storeu_ps(out.t.as_mut_ptr(), _mm256_and_ps(hit, t));
            _mm256_storeu_ps(
                out.u.as_mut_ptr(),
                _mm256_and_ps(hit, _mm256_mul_ps(v, rcp)),
            );
            _mm256_storeu_ps(
                out.v.as_mut_ptr(),
                _mm256_and_ps(hit, _mm256_mul_ps(w, rcp)),
            );
            out
        }
    }
}

#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
mod sse {
    //! SSE2 versions. SSE2 is part of the x86-64 baseline: every x86-64 CPU has it and the compiler
    //! enables it for every x86-64 target, so calling these intrinsics is always sound; Rust still
    //! asks for an `unsafe` block around `#[target_feature]` functions called from code without the
    //! attribute, hence one block per routine.
    use std::arch::x86_64::*;

    use super::{Box4Hits, BoxHits, BoxRay, PacketBoxRay, ShearRay, Tri4, FAR_PAD, LANES};

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
                near = super::max_ps(lane(tn, k), near);
                far = super::min_ps(lane(tf, k), far);
            }
            super::slab_hit(near, far, f32::INFINITY)
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

    #[inline(always)]
    pub fn tri4_candidates(tris: &Tri4, ray: &ShearRay) -> u32 {
        // SAFETY: SSE2 is always available on x86-64 (see the module docs); every load reads the
        // four floats of one `[f32; 4]` row of `tris`, unaligned.
        unsafe {
            let [kx, ky, kz] = ray.axes();
            let sheared = |k: usize| {
                let rel = |axis: usize| {
                    _mm_sub_ps(
                        _mm_loadu_ps(tris.v[k][axis].as_ptr()),
                        _mm_set1_ps(ray.origin[axis]),
                    )
                };
                let pz = rel(kz);
                (
                    _mm_add_ps(rel(kx), _mm_mul_ps(_mm_set1_ps(ray.sx), pz)),
                    _mm_add_ps(rel(ky), _mm_mul_ps(_mm_set1_ps(ray.sy), pz)),
                )
            };
            let (ax, ay) = sheared(0);
            let (bx, by) = sheared(1);
            let (cx, cy) = sheared(2);
            let u = _mm_sub_ps(_mm_mul_ps(cx, by), _mm_mul_ps(cy, bx));
            let v = _mm_sub_ps(_mm_mul_ps(ax, cy), _mm_mul_ps(ay, cx));
            let w = _mm_sub_ps(_mm_mul_ps(bx, ay), _mm_mul_ps(by, ax));
            let zero = _mm_setzero_ps();
            let neg = _mm_or_ps(
                _mm_or_ps(_mm_cmplt_ps(u, zero), _mm_cmplt_ps(v, zero)),
                _mm_cmplt_ps(w, zero),
            );
            let pos = _mm_or_ps(
                _mm_or_ps(_mm_cmpgt_ps(u, zero), _mm_cmpgt_ps(v, zero)),
                _mm_cmpgt_ps(w, zero),
            );
            let is_zero = _mm_or_ps(
                _mm_or_ps(_mm_cmpeq_ps(u, zero), _mm_cmpeq_ps(v, zero)),
                _mm_cmpeq_ps(w, zero),
            );
            // Rejected: mixed signs and no zero.
            let rejected = _mm_andnot_ps(is_zero, _mm_and_ps(neg, pos));
            !(_mm_movemask_ps(rejected) as u32) & 0xF
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    use super::*;

    /// A float drawn from a mix of ordinary magnitudes (1e-6..1e6, both signs) and edge values.
    fn float(rng: &mut Pcg64) -> f32 {
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

    fn box_ray(rng: &mut Pcg64) -> BoxRay {
        let dir = [0; 3].map(|_| float(rng));
        let origin = [0; 3].map(|_| float(rng));
        let t_min = if rng.gen_bool(0.5) { 0.0 } else { float(rng) };
        BoxRay::new(origin, dir, t_min)
    }

    /// Random rows of `W` boxes (one lane made empty, as the wide BVH pads its nodes, with
    /// probability `empty`), a random ray and a random `t_max`.
    fn random_box_case<const W: usize>(
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

    fn same_bits(a: &[f32], b: &[f32], mask: u32) -> bool {
        a.iter()
            .zip(b)
            .enumerate()
            .all(|(i, (x, y))| mask & (1 << i) == 0 || x.to_bits() == y.to_bits())
    }

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
            if has_x86_64_v3() {
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

    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    #[test]
    fn the_cached_cpu_check_gives_the_detected_answer_every_time() {
        use std::arch::is_x86_feature_detected as has;
        let direct = has!("avx2")
            && has!("fma")
            && has!("bmi1")
            && has!("bmi2")
            && has!("lzcnt")
            && has!("popcnt");
        assert_eq!(has_x86_64_v3(), direct);
        assert_eq!(has_x86_64_v3(), direct, "second, cached answer");
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

    /// Eight valid rays in one octant around a random ray, at magnitudes 1e-6..1e6: one origin
    /// and spread directions (a perspective camera), one direction and spread origins
    /// (orthographic), or both spread; and eight boxes around points on them, some with a plane
    /// through the point (grazing), some empty.
    #[allow(clippy::needless_range_loop)] // a lane indexes six rows
    fn random_packet_case(rng: &mut Pcg64) -> ([crate::Ray; 8], [[f32; 8]; 6], [f32; 8]) {
        use glam::Vec3;
        let m = 10f32.powf(rng.gen_range(-6.0..6.0));
        let mut sign = || if rng.gen_bool(0.5) { 1.0 } else { -1.0 };
        let signs = Vec3::new(sign(), sign(), sign());
        let base_dir =
            signs * Vec3::from_array([0; 3].map(|_| 10f32.powf(rng.gen_range(-3.0..0.0))));
        let base_origin = Vec3::from_array([0; 3].map(|_| rng.gen_range(-2.0..2.0) * m));
        let kind = rng.gen_range(0..3);
        let dir_spread = 10f32.powf(rng.gen_range(-6.0..-1.0));
        let origin_spread = m * 10f32.powf(rng.gen_range(-6.0..0.0));
        let rays = [0; 8].map(|_| {
            let jitter =
                |rng: &mut Pcg64| Vec3::from_array([0; 3].map(|_| rng.gen_range(-1.0..1.0)));
            let dir = if kind == 1 {
                base_dir
            } else {
                // Relative jitter per component keeps every sign, so the octant.
                base_dir * (Vec3::ONE + jitter(rng) * dir_spread)
            };
            let origin = if kind == 0 {
                base_origin
            } else {
                base_origin + jitter(rng) * origin_spread
            };
            let t_min = if rng.gen_bool(0.8) {
                0.0
            } else {
                rng.gen_range(0.0..1.0) * m
            };
            crate::Ray::new(origin, dir).with_range(t_min, f32::INFINITY)
        });
        let mut bounds = [[0.0; 8]; 6];
        for lane in 0..8 {
            if rng.gen_bool(0.1) {
                for axis in 0..3 {
                    bounds[2 * axis][lane] = f32::INFINITY;
                    bounds[2 * axis + 1][lane] = f32::NEG_INFINITY;
                }
                continue;
            }
            let ray = rays[rng.gen_range(0..8)];
            let t = rng.gen_range(0.0..4.0) * m / ray.dir.length();
            let p = ray.at(t);
            let half = Vec3::from_array([0; 3].map(|_| m * 10f32.powf(rng.gen_range(-6.0..0.0))));
            let offset = Vec3::from_array([0; 3].map(|_| rng.gen_range(-1.5..1.5))) * half;
            let (mut lo, mut hi) = (p + offset - half, p + offset + half);
            if rng.gen_bool(0.5) {
                let axis = rng.gen_range(0..3);
                if rng.gen_bool(0.5) {
                    lo[axis] = p[axis];
                } else {
                    hi[axis] = p[axis];
                }
            }
            for axis in 0..3 {
                bounds[2 * axis][lane] = lo[axis].min(hi[axis]);
                bounds[2 * axis + 1][lane] = lo[axis].max(hi[axis]);
            }
        }
        let t_max = [0; 8].map(|_| {
            if rng.gen_bool(0.5) {
                f32::INFINITY
            } else {
                rng.gen_range(0.0..5.0) * m
            }
        });
        (rays, bounds, t_max)
    }

    #[test]
    fn packets_are_neighbouring_pixels_or_one_direction() {
        use crate::Ray;
        use glam::Vec3;
        let packet = |origin: &dyn Fn(usize) -> Vec3, dir: &dyn Fn(usize) -> Vec3| {
            let rays: Vec<Ray> = (0..8).map(|i| Ray::new(origin(i), dir(i))).collect();
            PacketBoxRay::new(&rays).expect("one octant, finite 1/dir")
        };
        let eye = |_| Vec3::new(1.0, 2.0, 3.0);
        // Eight neighbouring pixels of a 1024-pixel-wide camera with a 45° field of view.
        let pixel = 0.83 / 1024.0;
        let neighbours = |i| Vec3::new(0.2 + i as f32 * pixel, 0.1, -1.0).normalize();
        assert!(packet(&eye, &neighbours).is_coherent());
        // The same eye through pixels 52 apart (a sparse sample of the image): not a packet.
        let sparse = |i| Vec3::new(0.05 + 52.0 * i as f32 * pixel, 0.1, -1.0).normalize();
        assert!(!packet(&eye, &sparse).is_coherent());
        // Just inside and just outside the cone: x spreads over `s` times the largest component.
        let spread = |s: f32| move |i: usize| Vec3::new(2.0 + s * 4.0 * i as f32 / 7.0, 1.0, -4.0);
        assert!(packet(&eye, &spread(0.9 * CONE_SPREAD)).is_coherent());
        assert!(!packet(&eye, &spread(1.1 * CONE_SPREAD)).is_coherent());
        // An orthographic camera: one direction, origins apart.
        let grid = |i| Vec3::new(i as f32, 0.0, 5.0);
        assert!(packet(&grid, &|_| Vec3::new(0.3, 0.2, -1.0)).is_coherent());
        // Different origins and directions: not a packet.
        assert!(!packet(&grid, &neighbours).is_coherent());
    }

    #[test]
    fn packet_box_test_is_conservative_for_every_ray_and_equals_its_scalar_twin() {
        let mut rng = Pcg64::seed_from_u64(31);
        let (mut single_hits, mut partial) = (0, 0);
        for _ in 0..100_000 {
            let (rays, bounds, t_max) = random_packet_case(&mut rng);
            let packet = PacketBoxRay::new(&rays).expect("one octant, finite 1/dir");
            let bound = t_max.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
            let scalar = packet_box_scalar(&bounds, &packet, bound);
            let simd = packet_box8(&bounds, &packet, bound);
            assert_eq!(simd.mask, scalar.mask, "{bounds:?} {packet:?}");
            assert!(same_bits(&simd.t_near, &scalar.t_near, scalar.mask));
            let mut reached = [0u32; 8];
            for (i, ray) in rays.iter().enumerate() {
                let single = BoxRay::new(ray.origin.to_array(), ray.dir.to_array(), ray.t_min);
                let hits = box_scalar(&bounds, &single, t_max[i]);
                for lane in (0..8).filter(|&l| hits.mask >> l & 1 == 1) {
                    single_hits += 1;
                    reached[lane] |= 1 << i;
                    assert!(
                        scalar.mask >> lane & 1 == 1,
                        "ray {i} reaches lane {lane}, the packet does not: {rays:?} {bounds:?}"
                    );
                    assert!(scalar.t_near[lane] <= hits.t_near[lane]);
                }
            }
            partial += reached.iter().filter(|&&r| r != 0 && r != 0xff).count();
        }
        assert!(
            single_hits > 100_000 && partial > 10_000,
            "{single_hits} {partial}"
        );
    }

    #[test]
    fn moved_rays_equal_their_scalar_twin() {
        use crate::Ray;
        use glam::Vec3;
        let mut rng = Pcg64::seed_from_u64(47);
        let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        for _ in 0..20_000 {
            let mut v = || Vec3::from_array([0; 3].map(|_| float(&mut rng)));
            let rays: [Ray; 8] = std::array::from_fn(|_| Ray {
                origin: v(),
                dir: v(),
                t_min: 0.0,
                t_max: f32::INFINITY,
            });
            let offset = v();
            let (fast, twin) = (moved_rays(&rays, offset), moved_rays_scalar(&rays, offset));
            for (a, b) in fast.iter().zip(&twin) {
                let fields = |r: &Ray| {
                    [r.origin.to_array(), r.dir.to_array()]
                        .concat()
                        .into_iter()
                        .chain([r.t_min, r.t_max])
                        .collect::<Vec<_>>()
                };
                assert!(
                    fields(a).iter().zip(fields(b)).all(|(&x, y)| same(x, y)),
                    "{a:?} {b:?}"
                );
            }
        }
    }

    #[test]
    fn lane_folds_equal_their_scalar_twins() {
        let mut rng = Pcg64::seed_from_u64(43);
        let specials = [
            0.0,
            -0.0,
            1.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MAX,
            f32::MIN_POSITIVE,
        ];
        let value = |rng: &mut Pcg64| {
            if rng.gen_bool(0.2) {
                specials[rng.gen_range(0..specials.len())]
            } else {
                rng.gen_range(-2.0f32..2.0) * 10f32.powi(rng.gen_range(-6..7))
            }
        };
        let (mut reached, mut partial) = (0, 0);
        for _ in 0..100_000 {
            let values: [f32; 8] = std::array::from_fn(|_| value(&mut rng));
            let t = if rng.gen_bool(0.02) {
                f32::NAN
            } else {
                value(&mut rng)
            };
            let mask = rng.gen_range(0..256u32);
            let lanes = lanes_reaching(t, &values);
            assert_eq!(lanes, lanes_reaching_scalar(t, &values), "{t} {values:?}");
            reached += lanes.count_ones();
            partial += u32::from(lanes != 0 && lanes != 0xff);
            // Equal as numbers (a zero's sign may differ with the pairing).
            let (fast, twin) = (lanes_max(&values, mask), lanes_max_scalar(&values, mask));
            assert!(fast == twin, "{mask:#b} {values:?}: {fast} against {twin}");
        }
        assert!(reached > 100_000 && partial > 10_000, "{reached} {partial}");
    }

    #[test]
    fn a_packet_reaches_every_box_one_of_its_rays_reaches() {
        let mut rng = Pcg64::seed_from_u64(37);
        let (mut reached, mut missed) = (0, 0);
        for _ in 0..20_000 {
            let (rays, bounds, _) = random_packet_case(&mut rng);
            let packet = PacketBoxRay::new(&rays).expect("one octant, finite 1/dir");
            for lane in 0..8 {
                let b = crate::Aabb::new(
                    glam::Vec3::new(bounds[0][lane], bounds[2][lane], bounds[4][lane]),
                    glam::Vec3::new(bounds[1][lane], bounds[3][lane], bounds[5][lane]),
                );
                let any_ray = rays.iter().any(|ray| {
                    let single = BoxRay::new(ray.origin.to_array(), ray.dir.to_array(), ray.t_min);
                    box_scalar(&bounds, &single, f32::INFINITY).mask >> lane & 1 == 1
                });
                // The SSE version answers as its scalar twin.
                assert_eq!(
                    packet.reaches(&b),
                    packet.reaches_scalar(&b),
                    "{rays:?} {b:?}"
                );
                if any_ray {
                    reached += 1;
                    assert!(packet.reaches(&b), "{rays:?} {b:?}");
                } else if !packet.reaches(&b) {
                    missed += 1;
                }
            }
            assert!(!packet.reaches(&crate::Aabb::EMPTY));
        }
        // Both answers occur: the test is not vacuous either way.
        assert!(reached > 50_000 && missed > 10_000, "{reached} {missed}");
    }

    #[test]
    fn eight_rays_make_the_same_packet_with_avx_and_with_the_scalar_twin() {
        use crate::Ray;
        use glam::Vec3;
        let bits = |p: &PacketBoxRay| {
            let f = |a: [f32; 3]| a.map(f32::to_bits);
            (
                [p.origin_lo, p.origin_hi, p.inv_lo, p.inv_hi].map(f),
                p.near_row,
                p.far_row,
                p.t_min.to_bits(),
            )
        };
        let mut rng = Pcg64::seed_from_u64(41);
        let (mut packets, mut partial) = (0, 0);
        for k in 0..50_000 {
            // Camera-like groups (one origin or one direction, one octant) with special values
            // and invalid rays mixed in at random, and fully random groups.
            let (mut rays, _, _) = random_packet_case(&mut rng);
            if k % 4 == 0 {
                for ray in &mut rays {
                    *ray = Ray::new(
                        Vec3::from_array([0; 3].map(|_| float(&mut rng))),
                        Vec3::from_array([0; 3].map(|_| float(&mut rng))),
                    );
                }
            }
            for ray in &mut rays {
                if rng.gen_bool(0.05) {
                    let i = rng.gen_range(0..8);
                    let value = float(&mut rng);
                    match i {
                        0..3 => ray.origin[i] = value,
                        3..6 => ray.dir[i - 3] = value,
                        6 => ray.t_min = value,
                        _ => ray.t_max = value,
                    }
                }
            }
            if rng.gen_bool(0.2) {
                // Zeros of both signs on one axis: their minimum and maximum depend on the order
                // of the reduction unless made positive.
                let axis = rng.gen_range(0..3);
                for ray in &mut rays {
                    ray.origin[axis] = if rng.gen_bool(0.5) { 0.0 } else { -0.0 };
                }
            }
            let (valid, packet) = PacketBoxRay::of_eight_scalar(&rays);
            let (valid_fast, packet_fast) = PacketBoxRay::of_eight(&rays);
            assert_eq!(valid_fast, valid, "{rays:?}");
            assert_eq!(
                packet_fast.as_ref().map(bits),
                packet.as_ref().map(bits),
                "{rays:?}"
            );
            packets += usize::from(packet.is_some());
            partial += usize::from(packet.is_some() && valid != 0xff);
        }
        assert!(packets > 20_000 && partial > 1_000, "{packets} {partial}");
    }

    #[test]
    fn packets_need_one_octant_and_finite_reciprocals() {
        use crate::Ray;
        use glam::Vec3;
        let a = Ray::new(Vec3::ZERO, Vec3::new(1.0, 2.0, 3.0));
        assert!(PacketBoxRay::new(&[a, a]).is_some());
        assert!(PacketBoxRay::new(&[a, Ray::new(Vec3::ZERO, Vec3::new(1.0, -2.0, 3.0))]).is_none());
        assert!(PacketBoxRay::new(&[a, Ray::new(Vec3::ZERO, Vec3::new(1.0, 0.0, 3.0))]).is_none());
        assert!(
            PacketBoxRay::new(&[a, Ray::new(Vec3::ZERO, Vec3::new(1e-40, 1.0, 3.0))]).is_none()
        );
        assert!(PacketBoxRay::new(&[] as &[Ray]).is_none());
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

    #[test]
    fn tri4_candidates_equal_their_scalar_twin() {
        let mut rng = Pcg64::seed_from_u64(14);
        let mut kept = 0u32;
        for _ in 0..100_000 {
            let blocks = [random_block(&mut rng), random_block(&mut rng)];
            let ray = random_shear(&mut rng);
            let one = tri4_candidates(&blocks[0], &ray);
            assert_eq!(
                one,
                tri4_candidates_scalar(&blocks[0], &ray),
                "{blocks:?} {ray:?}"
            );
            // One block and two (8 lanes in one AVX pass where the CPU has it).
            assert_eq!(tri_candidates(&blocks[..1], &ray), one);
            let two = tri_candidates(&blocks, &ray);
            assert_eq!(
                two,
                tri_candidates_scalar(&blocks, &ray),
                "{blocks:?} {ray:?}"
            );
            assert_eq!(two & 0xF, one);
            kept += two.count_ones();
        }
        // Not a vacuous comparison: both answers occur often.
        assert!(
            (100_000..700_000).contains(&kept),
            "{kept} lanes kept of 800000"
        );
    }

    /// A random origin, one of the six axis permutations and random shears.
    fn random_shear(rng: &mut Pcg64) -> ShearRay {
        const PERMUTATIONS: [[usize; 3]; 6] = [
            [0, 1, 2],
            [0, 2, 1],
            [1, 0, 2],
            [1, 2, 0],
            [2, 0, 1],
            [2, 1, 0],
        ];
        ShearRay {
            origin: [0; 3].map(|_| float(rng)),
            axes: PERMUTATIONS[rng.gen_range(0..6)],
            sx: float(rng),
            sy: float(rng),
        }
    }

    fn random_block(rng: &mut Pcg64) -> Tri4 {
        let mut tris = Tri4::ZERO;
        for k in 0..3 {
            for axis in 0..3 {
                for lane in 0..LANES {
                    tris.v[k][axis][lane] = float(rng);
                }
            }
        }
        if rng.gen_bool(0.3) {
            // Shared vertices produce exact zeros.
            let lane = rng.gen_range(0..LANES);
            for axis in 0..3 {
                tris.v[1][axis][lane] = tris.v[0][axis][lane];
            }
        }
        tris
    }

    /// `N` random triangles at one random scale (1e-6 to 1e6), a share `collapsed` of them with
    /// two equal vertices, and the origin and the target (one of their vertices) of a ray aimed at
    /// them: the cases of the triangle tests against the scalar kernel.
    fn aimed_case<const N: usize>(
        rng: &mut Pcg64,
        collapsed: f64,
    ) -> ([[glam::Vec3; 3]; N], glam::Vec3, glam::Vec3) {
        let scale = 10f32.powf(rng.gen_range(-6.0..6.0));
        let mut p = || {
            glam::Vec3::new(
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
            ) * scale
        };
        let mut list = [[glam::Vec3::ZERO; 3]; N];
        for t in list.iter_mut() {
            *t = [p(), p(), p()];
        }
        let origin = p() * 3.0;
        for t in list.iter_mut() {
            if rng.gen_bool(collapsed) {
                t[2] = t[0];
            }
        }
        let target = list[rng.gen_range(0..N)][rng.gen_range(0..3)];
        (list, origin, target)
    }

    /// `list` in blocks of four, triangle `k` in lane `k % 4` of block `k / 4`.
    fn packed(list: &[[glam::Vec3; 3]]) -> Vec<Tri4> {
        let mut blocks = vec![Tri4::ZERO; list.len().div_ceil(LANES)];
        for (k, t) in list.iter().enumerate() {
            blocks[k / LANES].set(k % LANES, *t);
        }
        blocks
    }

    /// `hit`, `undecided`, and the bits of `t`, `u`, `v` on hit lanes (the only meaningful ones).
    fn hits_key(h: &TriHits) -> (u32, u32, Vec<[u32; 3]>) {
        let lanes = (0..8)
            .filter(|&k| h.hit >> k & 1 != 0)
            .map(|k| [h.t[k].to_bits(), h.u[k].to_bits(), h.v[k].to_bits()])
            .collect();
        (h.hit, h.undecided, lanes)
    }

    #[test]
    fn tri_hits_equal_their_scalar_twin() {
        let mut rng = Pcg64::seed_from_u64(16);
        let (mut hit, mut undecided) = (0u32, 0u32);
        for i in 0..100_000 {
            let blocks = [random_block(&mut rng), random_block(&mut rng)];
            let ray = HitRay {
                shear: random_shear(&mut rng),
                sz: float(&mut rng),
                t_min: if i % 3 == 0 { 0.0 } else { float(&mut rng) },
                cull_back: rng.gen_bool(0.5),
            };
            let t_max = if i % 3 == 0 {
                f32::INFINITY
            } else {
                float(&mut rng)
            };
            for n in 1..=2 {
                // Every block's lanes, and a leaf that ends inside the last block.
                let live = 1 + rng.gen_range(0..LANES * n);
                // The rows shared by a packet's rays: the same bits in SIMD and twin, and the
                // same answers from them as from the blocks.
                let rows = tri_rows(&blocks[..n], &ray.shear);
                let rows_twin = tri_rows_scalar(&blocks[..n], &ray.shear);
                let bits = |r: &TriRows| r.p.map(|k| k.map(|row| row.map(f32::to_bits)));
                assert_eq!(bits(&rows), bits(&rows_twin), "{blocks:?} {ray:?}");
                for lanes in [(1u32 << (LANES * n)) - 1, (1 << live) - 1] {
                    let simd = tri_hits(&blocks[..n], lanes, &ray, t_max);
                    let twin = tri_hits_scalar(&blocks[..n], lanes, &ray, t_max);
                    assert_eq!(
                        hits_key(&simd),
                        hits_key(&twin),
                        "{blocks:?} {lanes:b} {ray:?} {t_max}"
                    );
                    assert_eq!((simd.hit | simd.undecided) & !lanes, 0);
                    let from_rows = tri_hits_rows(&rows, lanes, &ray, t_max);
                    let from_rows_twin = tri_hits_rows_scalar(&rows, lanes, &ray, t_max);
                    assert_eq!(
                        hits_key(&from_rows),
                        hits_key(&simd),
                        "{blocks:?} {lanes:b}"
                    );
                    assert_eq!(hits_key(&from_rows_twin), hits_key(&simd), "{blocks:?}");
                }
            }
            let two = tri_hits_scalar(&blocks, 0xFF, &ray, t_max);
            hit += two.hit.count_ones();
            undecided += two.undecided.count_ones();
        }
        // Not a vacuous comparison: hits and undecided lanes both occur.
        assert!(
            hit > 2_000 && undecided > 10_000,
            "{hit} hits, {undecided} undecided"
        );
    }

    #[test]
    fn tri_hits_decide_as_the_scalar_kernel() {
        // Every decided lane: a hit with the same t, u, v bits as `WatertightRay::intersect`, or a
        // miss of it. Degenerate triangles (zero area, which the kernel rejects by an f64 check)
        // are stored collapsed to a point by the meshes, which makes every edge function 0:
        // undecided; here they are left out of the comparison when decided.
        use crate::geom::triangle::{is_degenerate, Culling, EdgeRule, WatertightRay};
        use crate::Ray;
        let mut rng = Pcg64::seed_from_u64(17);
        let (mut hits, mut decided_misses) = (0usize, 0usize);
        for _ in 0..50_000 {
            let (list, origin, target) = aimed_case::<{ 2 * LANES }>(&mut rng, 0.1);
            let blocks = packed(&list);
            let ray = Ray::new(origin, target - origin).with_range(
                if rng.gen_bool(0.5) { 0.0 } else { 0.5 },
                if rng.gen_bool(0.5) {
                    f32::INFINITY
                } else {
                    1.5
                },
            );
            let culling = if rng.gen_bool(0.5) {
                Culling::Back
            } else {
                Culling::None
            };
            let wray = WatertightRay::new(&ray);
            let decided = tri_hits(&blocks, 0xFF, &wray.hit_ray(culling), ray.t_max);
            for (k, [a, b, c]) in list.iter().enumerate() {
                if decided.undecided >> k & 1 != 0 || is_degenerate(*a, *b, *c) {
                    continue;
                }
                let kernel = wray.intersect(*a, *b, *c, culling, EdgeRule::Closed);
                let simd = (decided.hit >> k & 1 != 0)
                    .then(|| [decided.t[k], decided.u[k], decided.v[k]].map(f32::to_bits));
                assert_eq!(
                    simd,
                    kernel.map(|h| [h.t, h.u, h.v].map(f32::to_bits)),
                    "{:?} {ray:?} {culling:?}",
                    [a, b, c]
                );
                hits += usize::from(kernel.is_some());
                decided_misses += usize::from(kernel.is_none());
            }
        }
        assert!(
            hits > 20_000 && decided_misses > 100_000,
            "{hits} hits, {decided_misses} misses"
        );
    }

    #[test]
    fn tri4_keeps_every_triangle_the_kernel_hits() {
        // The prefilter may keep misses but never drops a hit of the scalar watertight kernel.
        use crate::geom::triangle::{Culling, EdgeRule, WatertightRay};
        use crate::Ray;
        let mut rng = Pcg64::seed_from_u64(15);
        let mut kept_misses = 0usize;
        let mut hits = 0usize;
        for _ in 0..50_000 {
            let (list, origin, target) = aimed_case::<LANES>(&mut rng, 0.2);
            let tris = packed(&list)[0];
            let ray = Ray::new(origin, target - origin);
            let wray = WatertightRay::new(&ray);
            let mask = tri4_candidates(&tris, &wray.shear_ray());
            for (lane, t) in list.iter().enumerate() {
                let hit = wray
                    .intersect(t[0], t[1], t[2], Culling::None, EdgeRule::Closed)
                    .is_some();
                hits += usize::from(hit);
                assert!(
                    !hit || mask & (1 << lane) != 0,
                    "lane {lane} dropped: {t:?} {ray:?}"
                );
                kept_misses += usize::from(!hit && mask & (1 << lane) != 0);
            }
        }
        assert!(hits > 10_000, "{hits}");
        // It does reject most misses (otherwise it would be useless).
        assert!(kept_misses < 50_000, "{kept_misses}");
    }
}
