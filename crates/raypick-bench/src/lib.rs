//! Comparison of raypick against other Rust ray casters (obvhs, parry3d, bvh) on the shared ray sets.
//!
//! The `raypick-bench` binary loads a mesh (through raypick-io), makes or reads the two shared ray
//! sets ([`rays`]), builds every engine ([`engines`]: raypick's `Scene` and the three crates) in one
//! process, times BVH builds and closest-hit / any-hit batches on 1 and N threads ([`measure`]), and
//! checks that the engines agree ray by ray, settling disagreements with an `f64` brute force
//! ([`agree`]).
//!
//! The library exists so that the integration tests can run the agreement check on a small mesh.

pub mod agree;
pub mod engines;
pub mod measure;
pub mod mesh;
pub mod rays;
