//! # raypick-wasm — the engine for WebAssembly, behind a small C ABI
//!
//! Built for `wasm32-unknown-unknown` by `scripts/build-wasm.sh` (with `simd128`), this crate
//! exports plain `extern "C"` functions that take and return numbers only; the JavaScript package
//! `web/raypick` (`index.js`) wraps them in `SceneBuilder`, `Scene` and `Camera` classes and a
//! three.js adapter. There is no wasm-bindgen: the build needs cargo and the target, nothing to
//! install and keep in step with a crate version, and the glue is a few hundred lines written
//! against the conventions below. The crate builds natively too (an `rlib`), where its tests run.
//!
//! ## Conventions of the ABI
//! - **No unsafe.** Rust owns every buffer; JavaScript only ever reads or writes memory at
//!   addresses Rust hands out, through typed-array views. The crate denies `unsafe_code`; the
//!   only exception is the `#[no_mangle]` attribute of the export shims ([`abi`]).
//! - **Handles.** Buffers, builders, scenes and cameras live in Rust, in per-kind slabs
//!   ([`registry`]), named by `u32` handles that carry their kind and a generation: a handle of
//!   the wrong kind or a freed one is refused with an error, never misread. 0 is never a handle.
//!   Every object is freed explicitly (`rp_*_free`; `rp_builder_build` frees its builder).
//! - **Buffers.** `rp_f32_alloc(n)` (and `u32`, `u8`) makes a zeroed buffer; `rp_f32_ptr(h)` is its
//!   byte address in the module's memory and `rp_f32_len(h)` its length. JavaScript fills it with
//!   `new Float32Array(memory.buffer, ptr, len).set(data)` and passes the handle to the call that
//!   reads it. Buffers never resize, so an address holds until the buffer is freed, but **any call
//!   may grow the memory, which detaches every view**: make views afresh after each call.
//!   Functions that produce arrays (`rp_scene_to_bytes`, `rp_scene_mesh_positions`, …) return
//!   a new buffer's handle, which the caller frees.
//! - **Answers.** Functions that make an object return its handle, or 0 on error. The others
//!   return an `i32`: ≥ 0 is the answer (a count, a flag, an id), −1 an error. Single queries
//!   leave records in the out area ([`out`]: hit records, rays, points), read with
//!   `rp_out_f32_ptr` / `rp_out_u32_ptr` before the next call.
//! - **Errors.** After a failed call, `rp_last_error_kind` ([`error::kind`]: argument, handle,
//!   build, scene file, camera, out of memory), `rp_last_error_field_*` (the argument at fault,
//!   as the JavaScript API names it) and `rp_last_error_*` (the message, UTF-8) say why; the JS
//!   glue throws them as a `RaypickError`. Input is checked where it enters: a buffer of the
//!   wrong length, an index out of range, a NaN vertex or a bad enumeration value are errors
//!   naming the element. A ray is never an error: a NaN or infinite one is a miss.
//! - **Options and enumerations** are `u32` codes documented where they are read: query options
//!   in [`query`], cameras in [`camera`], inside tests in [`point`].
//! - **Matrices** are 16 `f32` in column-major order (glam's, WebGL's, three.js's
//!   `Matrix4.elements`), named `b_from_a` like the engine's.
//!
//! ## Files
//! | module | what |
//! |---|---|
//! | [`abi`] | every export, one line each, and [`abi::ABI_VERSION`] |
//! | [`registry`] | the slabs, handles and their checks |
//! | [`error`] | [`error::AbiError`], the last error |
//! | [`buffers`] | typed buffers; readers of points and matrices |
//! | [`builder`] | scene builders, scene files |
//! | [`query`] | ray queries, options, batches into columns |
//! | [`point`] | closest point, distance, inside, signed distance |
//! | [`camera`] | cameras (look-at, matrices, the CLI's), pixel rays, picking |
//! | [`summary`] | bounds, counts, names; the render list of meshes and matrices |
//! | [`out`] | the out area and its record layouts |
//! | [`json`] | the JSON writer of the summaries |
#![deny(unsafe_code)]

pub mod abi;
pub mod buffers;
pub mod builder;
pub mod camera;
pub mod error;
pub mod json;
pub mod out;
pub mod point;
pub mod query;
pub mod registry;
pub mod summary;
