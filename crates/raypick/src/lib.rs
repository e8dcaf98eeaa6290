//! # raypick — exact, fast ray casting and picking
//!
//! A user clicks on a 3-D scene and wants to know what is under the cursor: which object, which
//! triangle, where, how far. raypick answers with exact kernels (watertight ray/triangle by default),
//! a binned-SAH BVH, scenes of meshes, spheres and transformed instances, and camera helpers that turn
//! a pixel into a world-space ray in every graphics API's conventions.
//!
//! ## Modules
//! - [`geom`]: rays, boxes and the exact intersection kernels (free functions on plain data).
//! - [`bvh`]: the binned-SAH BVH over boxes and centroids (build presets, ordered robust traversal
//!   with a leaf closure, refit, `validate()`, statistics), and the 8-wide trees meshes are walked
//!   with.
//! - [`scene`]: meshes, spheres and instances (nesting up to 8 levels) under a top-level BVH;
//!   closest, any and all hits, crossing counts, masks, culling, filters and batches ([`Scene`],
//!   [`SceneBuilder`], [`Hit`]).
//! - [`simd`]: the SIMD routines (slab tests of one ray or a packet against a node's 4 or 8 child
//!   boxes, the watertight test on blocks of four triangles), each beside its scalar twin, and the
//!   one CPU dispatch point. Crate-internal but for [`simd::PacketBoxRay`] and
//!   [`simd::QuantBoxes8`].
//! - [`camera`]: projections, clip-space conventions, viewports, `unproject` / `project`, pixel rays.
//!
//! ## Conventions
//! Right-handed, Y-up. Transforms are named `b_from_a` (`world_from_object` maps object-space points
//! to world space) and variables carry their space (`ray_object`, `p_world`). A [`Ray`] measures `t` in
//! units of its (not necessarily unit) direction; a triangle hit's `u` weights V1 and `v` weights V2.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod bvh;
pub mod camera;
pub mod geom;
pub mod scene;
pub mod simd;

pub use geom::{Aabb, Ray};
pub use glam;
pub use scene::{
    BuildError, ClosestPoint, Crossing, Geometry, Hit, InsideMethod, Instance, InstancePath,
    PointCandidate, PointPrim, QueryOptions, Scene, SceneBuilder, SceneFileError, Spheres, TriMesh,
    MAX_INSTANCE_DEPTH,
};

/// The README's example, compiled and run as a doc-test so it cannot go stale.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
