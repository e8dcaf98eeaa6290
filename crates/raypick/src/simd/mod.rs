//! Every SIMD routine of the crate, each beside its scalar twin, and the one place that asks the
//! CPU what it has.
//!
//! The scalar twin is the specification: it performs the same IEEE operations in the same order on
//! each lane, so the SIMD version returns bit-identical results (Rust never fuses a multiply and an
//! add on its own, and both versions avoid `mul_add`). Each file's tests compare the two on random
//! and adversarial inputs (NaN, ±∞, signed zeros, magnitudes 1e-6..1e6). With the `force-scalar`
//! feature, or on a target other than x86-64 and WebAssembly-with-`simd128`, the twins are the
//! only code; CI runs the engine's unit, scene and BVH tests both ways.
//!
//! On `wasm32` compiled with `-C target-feature=+simd128` (the browser build, `raypick-wasm`), the
//! slab tests (`box4`, `box8`, the packet test `packet_box8_on`) and the triangle tests (`tri4_candidates`, `tri_hits`,
//! `tri_hits_rows`) run as 4-lane `core::arch::wasm32` code, in a `simd128` module beside each SSE
//! one and with no `unsafe`; the other routines run their twins. WebAssembly's `pmin`/`pmax` are
//! `MINPS`/`MAXPS` with the operands swapped, so NaNs resolve as on x86 and the answers are the
//! twins' bit for bit. CI runs this module's tests compiled that way under Node's WASI
//! (`scripts/wasm-simd-test.sh`). The crate's `unsafe` blocks are here, plus the BVH walk's
//! unchecked node reads; each has its `// SAFETY:` comment.
//!
//! | file | what |
//! |---|---|
//! | `bins` | `bins3`: the binned SAH builder's three bin indices of a centroid in one clamp and conversion; twin `bins3_scalar` |
//! | `cpu` | `Isa`: the instruction sets detected once per process; `dispatch`, the one entry into code compiled for AVX or x86-64-v3; `prefetch` and `prefetch_lines` (cache hints, no twin needed: they change no result) |
//! | `boxes` | `BoxRay` and the conservative slab test of one ray against the 4 or 8 child boxes of a wide node (Ize, "Robust BVH Ray Traversal", JCGT 2013): `box4`, `box8` (SSE), `box8_avx`; twin `box_scalar` |
//! | `packet` | [`PacketBoxRay`]: one conservative box test for 8 coherent rays (`packet_box8_on`, twin `packet_box_scalar`), its set-up from eight rays, and the lane folds of the packet walk |
//! | `tri` | `Tri4` blocks; the watertight test (Woop, Benthin, Wald, "Watertight Ray/Triangle Intersection", JCGT 2013) on one or two blocks: `tri_hits` (SSE/AVX, twin `tri_hits_scalar`), its prefilter `tri_candidates`, and the split `tri_rows` / `tri_hits_rows` for a packet's rays from one point |
//! | `quant` | [`QuantBoxes8`]: the 8-bit child boxes of a quantized node and their slab test (`qbox8`, `qbox8_avx2`, twin `qbox8_scalar`) |
//!
//! Only [`PacketBoxRay`] (the input of [`WideBvh::traverse_packet`](crate::bvh::wide::WideBvh::traverse_packet))
//! and [`QuantBoxes8`] (a field of [`QuantNode`](crate::bvh::quantized::QuantNode)) are public API; the
//! rest is the crate's own, opened by the `internals` feature for the kernel benchmarks.
//!
//! ## `min` / `max` and NaN
//! `MINPS(a, b)` / `MAXPS(a, b)` return `b` when either operand is NaN (and `b` for equal operands,
//! so `max(-0, +0) = +0`). The twins spell that out as `if a < b { a } else { b }`. The slab test puts
//! each axis' distance first and the running bound second, so the NaN of `0 · ∞` (an origin exactly
//! on a slab plane of an axis the ray is parallel to) leaves the bound alone: that axis constrains
//! nothing, as [`crate::Aabb::intersect_slabs`] decides.

/// Lanes of a triangle block (`Tri4`) and of the 4-wide box test.
pub const LANES: usize = 4;

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

mod bins;
mod boxes;
mod cpu;
mod packet;
mod quant;
#[cfg(test)]
mod test_support;
mod tri;

pub use packet::PacketBoxRay;
pub use quant::QuantBoxes8;

#[cfg(not(feature = "internals"))]
pub(crate) use self::{bins::*, boxes::*, cpu::*, packet::*, quant::*, tri::*};
#[cfg(feature = "internals")]
#[doc(hidden)]
pub use self::{bins::*, boxes::*, cpu::*, packet::*, quant::*, tri::*};
