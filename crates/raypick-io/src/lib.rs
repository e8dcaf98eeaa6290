//! Loaders for raypick: OBJ, glTF 2.0, PLY and STL into scenes.
//!
//! Parsing is separate from scene building: each format module parses bytes into a plain
//! [`Model`] (meshes of positions and triangles, plus placements), documented in [`model`].
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod error;
pub mod model;
pub mod obj;
pub mod ply;
pub mod stl;

pub use error::{Format, LoadError, Location, Source};
pub use model::{InstanceData, MeshData, Model};
