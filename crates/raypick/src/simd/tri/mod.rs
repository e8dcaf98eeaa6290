//! Triangles in blocks of four ([`Tri4`]) and the watertight ray/triangle test on one or two
//! blocks at once (Woop, Benthin, Wald, "Watertight Ray/Triangle Intersection", JCGT 2(1), 2013),
//! computed bit for bit as the scalar kernel
//! ([`WatertightRay::intersect`](crate::geom::triangle::WatertightRay::intersect)) computes it.

#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
use super::Isa;
use super::LANES;
use crate::geom::triangle::{t_error_scaled, Culling, WatertightRay};

/// Four triangles in structure-of-arrays form: `v[k][axis][lane]` is coordinate `axis` of vertex
/// `k` of triangle `lane`, and `ids[lane]` a caller's id for it (the mesh stores the primitive id
/// there, so a hit needs no second memory access). 160 bytes, 16-byte aligned so each row is one SSE
/// load.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Zeroable)]
#[repr(C, align(16))]
pub struct Tri4 {
    /// `v[k][axis][lane]`.
    pub v: [[[f32; LANES]; 3]; 3],
    /// One id per lane.
    pub ids: [u32; LANES],
}

impl Tri4 {
    /// Four degenerate triangles at the origin with id `u32::MAX` (what padding lanes hold).
    #[cfg(any(test, feature = "internals"))]
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
    /// The origin, the permutation and the shear of x and y of `ray`, which the prefilter
    /// ([`tri_candidates`]) computes with as the kernel does.
    #[inline(always)]
    pub fn of(ray: &WatertightRay) -> Self {
        Self {
            origin: ray.origin.to_array(),
            axes: ray.axes,
            sx: ray.sx,
            sy: ray.sy,
        }
    }

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
    /// comparison of the fields as arrays would read them back with wide loads across the
    /// narrower stores that have just written them, and a wide load across narrower stores cannot
    /// be store-forwarded (the load waits for the stores to complete).
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
    #[cfg(all(
        target_arch = "wasm32",
        target_feature = "simd128",
        not(feature = "force-scalar")
    ))]
    {
        simd128::tri4_candidates(tris, ray)
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
        tri4_candidates_scalar(tris, ray)
    }
}

/// Scalar twin (the spec) of [`tri4_candidates`].
#[cfg_attr(
    not(test),
    allow(
        dead_code,
        reason = "a scalar twin: the spec the tests check its SIMD versions against"
    )
)]
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
        if Isa::detected().has_avx() {
            // SAFETY: the CPU has AVX, checked just above.
            return unsafe { avx::tri8_candidates(a, b, ray) };
        }
    }
    blocks.iter().enumerate().fold(0, |mask, (k, block)| {
        mask | tri4_candidates(block, ray) << (LANES * k)
    })
}

/// Scalar twin (the spec) of [`tri_candidates`].
#[cfg_attr(
    not(test),
    allow(
        dead_code,
        reason = "a scalar twin: the spec the tests check its SIMD versions against"
    )
)]
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

impl HitRay {
    /// The whole shear of `ray`, its `t_min` and the culling, for [`tri_hits`] (which computes the
    /// same values as [`WatertightRay::intersect`]).
    #[inline(always)]
    pub fn of(ray: &WatertightRay, culling: Culling) -> Self {
        Self {
            shear: ShearRay::of(ray),
            sz: ray.sz,
            t_min: ray.t_min,
            cull_back: culling == Culling::Back,
        }
    }
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
    /// a point, always lands here), `1 / det` overflowed (the kernel then divides), or a ray's
    /// `t` lies within its error bound of 0 (the kernel decides its sign in `f64`).
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
/// triangle the ray's line crosses (each an out-of-line call that recomputes what the prefilter
/// has computed). Eight AVX lanes where the CPU has AVX, inlined into the caller (which must then
/// be compiled with AVX for speed: the walks are); else the twin.
///
/// Only the lanes of `lanes` are decided (bit `4·b + i`: lane `i` of block `b`; a leaf's
/// triangles, without the padding that fills its last block); the others read as misses. The
/// padding must not count when deciding whether a pass can stop early: a padding triangle is
/// collapsed to a point, its edge functions are all 0, and such a lane is undecided, which
/// would keep every pass over a padded block from stopping at the early exit and send it on to
/// the division.
#[inline(always)]
pub fn tri_hits(blocks: &[Tri4], lanes: u32, ray: &HitRay, t_max: f32) -> TriHits {
    debug_assert!(matches!(blocks.len(), 1 | 2));
    debug_assert_eq!(lanes >> (LANES * blocks.len()), 0);
    #[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
    if Isa::detected().has_avx() {
        // The second block is the first again for a one-block leaf, its lanes not in `lanes`:
        // chosen by index arithmetic, not a branch on the leaf's size, which would be
        // unpredictable for incoherent rays (their leaves come in both sizes).
        let (a, b) = (&blocks[0], &blocks[blocks.len() - 1]);
        // SAFETY: the CPU has AVX, checked just above.
        return unsafe { avx::tri8_hits(a, b, lanes, ray, t_max) };
    }
    #[cfg(all(
        target_arch = "wasm32",
        target_feature = "simd128",
        not(feature = "force-scalar")
    ))]
    {
        simd128::tri_hits(blocks, lanes, ray, t_max)
    }
    #[cfg(not(all(
        target_arch = "wasm32",
        target_feature = "simd128",
        not(feature = "force-scalar")
    )))]
    {
        tri_hits_scalar(blocks, lanes, ray, t_max)
    }
}

/// Scalar twin (the spec) of [`tri_hits`]: per lane, the scalar kernel's steps up to its result.
#[cfg_attr(
    all(
        not(test),
        target_arch = "wasm32",
        target_feature = "simd128",
        not(feature = "force-scalar")
    ),
    allow(
        dead_code,
        reason = "a scalar twin: the spec the tests check its SIMD versions against"
    )
)]
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
#[cfg_attr(
    all(
        not(test),
        target_arch = "wasm32",
        target_feature = "simd128",
        not(feature = "force-scalar")
    ),
    allow(
        dead_code,
        reason = "a scalar twin: the spec the tests check its SIMD versions against"
    )
)]
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
    let err = t_error_scaled(
        [ax, bx, cx].map(f32::abs),
        [ay, by, cy].map(f32::abs),
        [pa[2], pb[2], pc[2]].map(f32::abs),
        [az, bz, cz].map(f32::abs),
        [u, v, w].map(f32::abs),
        [sh.sx, sh.sy].map(f32::abs),
    ) * rcp.abs();
    if !(t <= t_max && t.is_finite()) {
        return;
    }
    // Next to a ray's origin the scalar kernel decides the sign of `t` in f64.
    if ray.t_min >= 0.0 && t.abs() <= err {
        out.undecided |= 1 << k;
        return;
    }
    if t >= ray.t_min {
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
    if Isa::detected().has_avx() {
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
    if Isa::detected().has_avx() {
        // SAFETY: the CPU has AVX, checked just above.
        return unsafe { avx::tri8_hits_rows(rows, lanes, ray, t_max) };
    }
    #[cfg(all(
        target_arch = "wasm32",
        target_feature = "simd128",
        not(feature = "force-scalar")
    ))]
    {
        simd128::tri_hits_rows(rows, lanes, ray, t_max)
    }
    #[cfg(not(all(
        target_arch = "wasm32",
        target_feature = "simd128",
        not(feature = "force-scalar")
    )))]
    {
        tri_hits_rows_scalar(rows, lanes, ray, t_max)
    }
}

/// Scalar twin of [`tri_hits_rows`].
#[cfg_attr(
    all(
        not(test),
        target_arch = "wasm32",
        target_feature = "simd128",
        not(feature = "force-scalar")
    ),
    allow(
        dead_code,
        reason = "a scalar twin: the spec the tests check its SIMD versions against"
    )
)]
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

#[cfg(all(target_arch = "x86_64", not(feature = "force-scalar")))]
mod avx {
    //! 8-lane AVX versions; callers check that the CPU has AVX ([`super::Isa::has_avx`]).
    use std::arch::x86_64::*;

    use super::{HitRay, ShearRay, Tri4, TriHits, TriRows};
    use crate::geom::triangle::gamma;

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
    /// `array::map`) with run-time axes these loads can be left as calls, outside the AVX context,
    /// each with its call overhead on the hot path.
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
    /// traversal that calls it (a `#[target_feature]` function cannot be `#[inline(always)]`, and
    /// one of this size is left a call, with a `vzeroupper` and the traversal's registers spilled
    /// around it).
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
            // `t_error_scaled`, its operations in its order.
            let (mul, add) = (|a, b| _mm256_mul_ps(a, b), |a, b| _mm256_add_ps(a, b));
            let max3 = |a, b, c| _mm256_max_ps(_mm256_max_ps(abs(a), abs(b)), abs(c));
            let (max_x, max_y) = (max3(ax, bx, cx), max3(ay, by, cy));
            let max_p = max3(pa[2], pb[2], pc[2]);
            let (max_z, max_e) = (max3(az, bz, cz), max3(u, v, w));
            let splat_gamma = |n| _mm256_set1_ps(gamma(n));
            let delta_z = mul(splat_gamma(3.0), max_z);
            let delta_x = mul(
                splat_gamma(5.0),
                add(max_x, mul(_mm256_set1_ps(sh.sx.abs()), max_p)),
            );
            let delta_y = mul(
                splat_gamma(5.0),
                add(max_y, mul(_mm256_set1_ps(sh.sy.abs()), max_p)),
            );
            let delta_e = mul(
                _mm256_set1_ps(2.0),
                add(
                    add(
                        mul(mul(splat_gamma(2.0), max_x), max_y),
                        mul(delta_y, max_x),
                    ),
                    mul(delta_x, max_y),
                ),
            );
            let err_scaled = mul(
                _mm256_set1_ps(3.0),
                add(
                    add(
                        mul(mul(splat_gamma(3.0), max_e), max_z),
                        mul(delta_e, max_z),
                    ),
                    mul(delta_z, max_e),
                ),
            );
            let err = mul(err_scaled, abs(rcp));
            // Next to a ray's origin (`|t| <= err`; a line, `t_min < 0`, has no boundary at 0)
            // the scalar kernel decides in f64: those lanes are undecided, not hits.
            let below_t_max = _mm256_and_ps(
                _mm256_cmp_ps::<_CMP_LE_OQ>(t, _mm256_set1_ps(t_max)),
                finite(t),
            );
            let near_origin = if ray.t_min >= 0.0 {
                _mm256_and_ps(_mm256_cmp_ps::<_CMP_LE_OQ>(abs(t), err), below_t_max)
            } else {
                zero
            };
            let in_range = _mm256_andnot_ps(
                near_origin,
                _mm256_and_ps(
                    _mm256_cmp_ps::<_CMP_GE_OQ>(t, _mm256_set1_ps(ray.t_min)),
                    below_t_max,
                ),
            );
            // Lanes that reach the reciprocal: no zero edge function, not rejected, det != 0.
            let reached =
                _mm256_andnot_ps(_mm256_or_ps(_mm256_or_ps(is_zero, rejected), eq(det)), all);
            let rcp_finite = finite(rcp);
            let undecided = _mm256_or_ps(
                _mm256_or_ps(is_zero, _mm256_andnot_ps(rcp_finite, reached)),
                _mm256_and_ps(_mm256_and_ps(reached, rcp_finite), near_origin),
            );
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

    use super::{ShearRay, Tri4};

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

#[cfg(all(
    target_arch = "wasm32",
    target_feature = "simd128",
    not(feature = "force-scalar")
))]
mod simd128 {
    //! WebAssembly `simd128` versions, 4 lanes per pass (a compile-time feature of the module; see
    //! the `simd128` module of `boxes`). The operations and their order are the AVX versions' and
    //! the twin's; `MAXPS(a, b)` is `pmax(b, a)`.
    use core::arch::wasm32::*;

    use super::{HitRay, ShearRay, Tri4, TriHits, TriRows, LANES};
    use crate::geom::triangle::gamma;

    /// The four lanes of a row.
    #[inline(always)]
    fn load(row: &[f32]) -> v128 {
        f32x4(row[0], row[1], row[2], row[3])
    }

    /// The four lanes of `v`.
    #[inline(always)]
    fn store(v: v128) -> [f32; 4] {
        [
            f32x4_extract_lane::<0>(v),
            f32x4_extract_lane::<1>(v),
            f32x4_extract_lane::<2>(v),
            f32x4_extract_lane::<3>(v),
        ]
    }

    /// Vertex `k` of the block relative to the origin, rows in the order `[kx, ky, kz]`.
    #[inline(always)]
    fn permuted(tris: &Tri4, k: usize, ray: &ShearRay) -> [v128; 3] {
        ray.axes()
            .map(|axis| f32x4_sub(load(&tris.v[k][axis]), f32x4_splat(ray.origin[axis])))
    }

    /// The three edge functions of the four lanes from their sheared coordinates.
    #[inline(always)]
    fn edges(sheared: [(v128, v128); 3]) -> [v128; 3] {
        let [(ax, ay), (bx, by), (cx, cy)] = sheared;
        [
            f32x4_sub(f32x4_mul(cx, by), f32x4_mul(cy, bx)),
            f32x4_sub(f32x4_mul(ax, cy), f32x4_mul(ay, cx)),
            f32x4_sub(f32x4_mul(bx, ay), f32x4_mul(by, ax)),
        ]
    }

    /// Sheared x and y of a vertex from its permuted rows: `p[kx] + sx·p[kz]`, `p[ky] + sy·p[kz]`.
    #[inline(always)]
    fn sheared(p: [v128; 3], ray: &ShearRay) -> (v128, v128) {
        (
            f32x4_add(p[0], f32x4_mul(f32x4_splat(ray.sx), p[2])),
            f32x4_add(p[1], f32x4_mul(f32x4_splat(ray.sy), p[2])),
        )
    }

    /// Lane masks of negative, positive and zero edge functions.
    #[inline(always)]
    fn signs([u, v, w]: [v128; 3]) -> (v128, v128, v128) {
        let zero = f32x4_splat(0.0);
        let any = |f: fn(v128, v128) -> v128| v128_or(v128_or(f(u, zero), f(v, zero)), f(w, zero));
        (any(f32x4_lt), any(f32x4_gt), any(f32x4_eq))
    }

    pub fn tri4_candidates(tris: &Tri4, ray: &ShearRay) -> u32 {
        let xy = |k| sheared(permuted(tris, k, ray), ray);
        let (neg, pos, is_zero) = signs(edges([xy(0), xy(1), xy(2)]));
        // Rejected: mixed signs and no zero.
        let rejected = v128_andnot(v128_and(neg, pos), is_zero);
        !u32::from(i32x4_bitmask(rejected)) & 0xF
    }

    /// [`super::tri_hits`]: one 4-lane pass per block.
    #[inline(always)]
    pub fn tri_hits(blocks: &[Tri4], lanes: u32, ray: &HitRay, t_max: f32) -> TriHits {
        let mut out = TriHits::NONE;
        for (b, block) in blocks.iter().enumerate() {
            let rows = [0, 1, 2].map(|k| permuted(block, k, &ray.shear));
            hits4(&mut out, LANES * b, rows, lanes, ray, t_max);
        }
        out
    }

    /// [`super::tri_hits_rows`]: one 4-lane pass per half of the rows.
    #[inline(always)]
    pub fn tri_hits_rows(rows: &TriRows, lanes: u32, ray: &HitRay, t_max: f32) -> TriHits {
        let mut out = TriHits::NONE;
        for first in [0, LANES] {
            let half = [0, 1, 2].map(|k| rows.p[k].map(|row| load(&row[first..first + LANES])));
            hits4(&mut out, first, half, lanes, ray, t_max);
        }
        out
    }

    /// The watertight test of lanes `first..first + 4` from the three vertices' rows (relative
    /// to the origin, in the order `[kx, ky, kz]`), into `out`: the AVX version's lane masks.
    #[inline(always)]
    fn hits4(
        out: &mut TriHits,
        first: usize,
        [pa, pb, pc]: [[v128; 3]; 3],
        lanes: u32,
        ray: &HitRay,
        t_max: f32,
    ) {
        let lanes = lanes >> first & 0xF;
        if lanes == 0 {
            return;
        }
        let sh = &ray.shear;
        let ((ax, ay), (bx, by), (cx, cy)) = (sheared(pa, sh), sheared(pb, sh), sheared(pc, sh));
        let [u, v, w] = edges([(ax, ay), (bx, by), (cx, cy)]);
        let (neg, pos, is_zero) = signs([u, v, w]);
        let rejected = if ray.cull_back {
            neg
        } else {
            v128_and(neg, pos)
        };
        let open = v128_or(v128_not(rejected), is_zero);
        if u32::from(i32x4_bitmask(open)) & lanes == 0 {
            return;
        }
        let (mul, add) = (f32x4_mul, f32x4_add);
        let det = add(add(u, v), w);
        let sz = f32x4_splat(ray.sz);
        let (az, bz, cz) = (mul(sz, pa[2]), mul(sz, pb[2]), mul(sz, pc[2]));
        let t_scaled = add(add(mul(u, az), mul(v, bz)), mul(w, cz));
        let rcp = f32x4_div(f32x4_splat(1.0), det);
        // |x| < ∞, false for NaN: `f32::is_finite`.
        let finite = |x| f32x4_lt(f32x4_abs(x), f32x4_splat(f32::INFINITY));
        let t = mul(t_scaled, rcp);
        // `t_error_scaled`, its operations in its order; MAXPS(MAXPS(|a|, |b|), |c|).
        let max3 = |a, b, c| f32x4_pmax(f32x4_abs(c), f32x4_pmax(f32x4_abs(b), f32x4_abs(a)));
        let (max_x, max_y) = (max3(ax, bx, cx), max3(ay, by, cy));
        let max_p = max3(pa[2], pb[2], pc[2]);
        let (max_z, max_e) = (max3(az, bz, cz), max3(u, v, w));
        let splat_gamma = |n| f32x4_splat(gamma(n));
        let delta_z = mul(splat_gamma(3.0), max_z);
        let delta_x = mul(
            splat_gamma(5.0),
            add(max_x, mul(f32x4_splat(sh.sx.abs()), max_p)),
        );
        let delta_y = mul(
            splat_gamma(5.0),
            add(max_y, mul(f32x4_splat(sh.sy.abs()), max_p)),
        );
        let delta_e = mul(
            f32x4_splat(2.0),
            add(
                add(
                    mul(mul(splat_gamma(2.0), max_x), max_y),
                    mul(delta_y, max_x),
                ),
                mul(delta_x, max_y),
            ),
        );
        let err_scaled = mul(
            f32x4_splat(3.0),
            add(
                add(
                    mul(mul(splat_gamma(3.0), max_e), max_z),
                    mul(delta_e, max_z),
                ),
                mul(delta_z, max_e),
            ),
        );
        let err = mul(err_scaled, f32x4_abs(rcp));
        // Next to a ray's origin the scalar kernel decides in f64: undecided, not hits.
        let below_t_max = v128_and(f32x4_le(t, f32x4_splat(t_max)), finite(t));
        let near_origin = if ray.t_min >= 0.0 {
            v128_and(f32x4_le(f32x4_abs(t), err), below_t_max)
        } else {
            f32x4_splat(0.0)
        };
        let in_range = v128_andnot(
            v128_and(f32x4_ge(t, f32x4_splat(ray.t_min)), below_t_max),
            near_origin,
        );
        // Lanes that reach the reciprocal: no zero edge function, not rejected, det != 0.
        let zero = f32x4_splat(0.0);
        let reached = v128_not(v128_or(v128_or(is_zero, rejected), f32x4_eq(det, zero)));
        let rcp_finite = finite(rcp);
        let undecided = v128_or(
            v128_or(is_zero, v128_andnot(reached, rcp_finite)),
            v128_and(v128_and(reached, rcp_finite), near_origin),
        );
        let hit = v128_and(v128_and(reached, rcp_finite), in_range);
        out.hit |= (u32::from(i32x4_bitmask(hit)) & lanes) << first;
        out.undecided |= (u32::from(i32x4_bitmask(undecided)) & lanes) << first;
        let span = first..first + LANES;
        out.t[span.clone()].copy_from_slice(&store(v128_and(hit, t)));
        out.u[span.clone()].copy_from_slice(&store(v128_and(hit, mul(v, rcp))));
        out.v[span].copy_from_slice(&store(v128_and(hit, mul(w, rcp))));
    }
}

#[cfg(test)]
mod tests;
