//! Scene files: a built [`Scene`] saved to one versioned binary file and loaded back without a
//! build. The file holds the geometries (meshes, sphere sets, instances and the scenes they place,
//! each placed scene once however often it is placed), their names and masks, the build settings
//! and every BVH as it was built (the top level, each sphere set's, the meshes' shared wide or
//! quantized tree with its primitive order), so [`Scene::from_bytes`] answers every query bit for
//! bit as the saved scene does.
//!
//! ```
//! use raypick::{glam::Vec3, Ray, Scene, SceneBuilder, TriMesh};
//! let mut builder = SceneBuilder::new();
//! builder.add_mesh(TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).with_name("tri"));
//! let scene = builder.build().unwrap();
//! let bytes = scene.to_bytes();
//! let loaded = Scene::from_bytes(&bytes).unwrap();
//! let ray = Ray::new(Vec3::new(0.2, 0.2, 1.0), Vec3::NEG_Z);
//! assert_eq!(loaded.intersect(&ray), scene.intersect(&ray));
//! assert_eq!(loaded.geometry_name(0), Some("tri"));
//! ```
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | the layout (below), [`SceneFileError`], [`Place`], [`layout`] |
//! | `write.rs` | [`Scene::to_bytes`], [`Scene::save_to_writer`], [`Scene::save`] |
//! | `read.rs` | [`Scene::from_bytes`], [`Scene::from_reader`], [`Scene::load`], [`layout`]: the header and the decoding, from memory or a stream |
//! | `assemble.rs` | the checks of the decoded scenes, the trees' validation, the assembly |
//!
//! ## Layout
//! Every number is little-endian; a `len` is a `u64` element count followed by that many
//! elements, packed (no padding), so each array is one contiguous run the reader decodes in one
//! sequential pass, straight into the scene's vector (a piece at a time when it reads a stream);
//! most arrays are laid out as the engine holds them in memory, so on a little-endian host they
//! are read into place with no decoding at all, and a file's pieces on all cores at once.
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | [`MAGIC`], `RAYPICK\0` |
//! | 8..12 | format version, `u32` ([`VERSION`]) |
//! | 12..16 | byte-order marker: the `u32` `0x0102_0304` written little-endian (`04 03 02 01`) |
//! | 16..24 | payload length in bytes, `u64` (the file is exactly [`HEADER_BYTES`] + this) |
//! | 24..28 | CRC-32 (IEEE, as zlib and PNG compute it) of the payload |
//! | 28..32 | reserved, zero |
//! | 32.. | payload: a `u32` scene count `n ≥ 1`, then `n` scenes; the last is the saved scene, the ones before it the scenes its instances place |
//!
//! A scene is:
//! 1. **config**: the [`BuildConfig`](crate::bvh::BuildConfig) fields in declaration order,
//!    counts as `u64`, costs as `f32`, the flags `compact`, `longest_axis_only` and
//!    `spatial_splits` as a `u8` each (0 or 1);
//! 2. **geometries**: a `u32` count, then per geometry a kind byte (0 mesh, 1 spheres, 2
//!    instance), its mask (`u32`), its name (a `u8` 0 or 1 for none or some, then a `len` of
//!    UTF-8 bytes), and its data: a mesh's vertices (`len` of `[f32; 3]`) and triangles (`len` of
//!    `[u32; 3]`); a sphere set's centres (`len` of `[f32; 3]`) and radii (`len` of `f32`); an
//!    instance's scene (a `u32` index of an earlier scene in the file) and `world_from_object`
//!    (12 `f32`: the columns of the linear part, then the translation);
//! 3. **top tree**: the binary [`Bvh`](crate::bvh::Bvh): nodes (`len` of 8 words: `min[3]`,
//!    `index`, `max[3]`, `count`, as [`Node`](crate::bvh::Node) orders them) and the primitive
//!    order (`len` of `u32`);
//! 4. **sphere trees**: one binary tree, as above, per sphere set, in geometry order;
//! 5. **mesh tree**: a kind byte (0 none: the scene has no mesh; 1 [`WideBvh<8>`](crate::bvh::wide::WideBvh);
//!    2 [`QuantizedBvh`](crate::bvh::quantized::QuantizedBvh), as
//!    [`BuildConfig::compact`](crate::bvh::BuildConfig::compact) chose), whether the tree
//!    repeats triangles (a `u8`, 1 for a tree with spatial splits, whose order may name a
//!    triangle more than once), the primitive count (`u64`), the nodes (`len` of nodes: a float node is its 48 box planes, 8 indices and 8
//!    counts as `u32`s, 256 bytes; a quantized node its 6 anchor planes and 3 steps as `f32`, 8
//!    indices as `u32`, 48 step counts, 8 counts and the valid mask as bytes, 125 bytes), and the
//!    scene-wide triangle number at each position of the tree's order (`len` of `u32`, a multiple
//!    of four, `u32::MAX` at padding positions).
//!
//! What can be computed from the rest is not stored: the meshes' frame origin, their triangles in
//! BVH order (the `Tri4` blocks, rebuilt from the meshes and the stored order in one pass), the
//! instances' inverse transforms, the top level's items and boxes, and the lazily computed
//! winding-number dipoles. A load computes them as the build did, with the same functions.
//!
//! ## Loading files from strangers
//! A load never panics and reads nothing out of bounds, whatever the bytes: the header is checked
//! field by field (magic, version, byte order, length, reserved), then every count against the
//! bytes left before anything is allocated, every tag and index against its range, and the
//! checksum before any decoding error is reported (a file held whole is checksummed before it is
//! decoded; a stream is checksummed as it is read, and read through to its end when the decoding
//! stops early), so a damaged file is refused as damaged whichever way it is read. Then every
//! geometry passes the builder's own checks ([`SceneBuilder::build`]: indices, finite values,
//! radii, invertible transforms, nesting depth), and every tree passes the checks of its
//! `validate()` against boxes recomputed from the geometry before the scene is assembled, which
//! is what the walks' unchecked node reads rely on.
//!
//! The meshes' tree, the one as large as the meshes, is checked in passes that need no walk:
//! its counts and its order (each triangle once, so that the blocks can be filled from it; at
//! least once in a tree with spatial splits, whose leaves' boxes then meet their triangles'
//! boxes instead of holding them); one
//! pass over the nodes in array order, which finds which leaf covers each block of four
//! positions (children come after their parents, so links, reach and depth are known when a
//! node is reached); then each block as it is filled from the meshes, its triangles' vertices
//! against its leaf's box. These accept exactly the trees the validation walk accepts (a test
//! damages trees at random and compares), and when one fails, the walk runs to name the fault.
//! The meshes' box (for their frame) and the tree's node and order passes run side by side.
//! Each failure is a [`SceneFileError`] naming the [`Place`] (scene, geometry, field) where it
//! was found.
//!
//! ## Version policy
//! [`VERSION`] numbers the layout. Any change to what is stored or how (a field, a node layout, a
//! tree kind) bumps it, and a reader reads only its own version: another version is refused with
//! [`SceneFileError::UnsupportedVersion`], and the file is rebuilt from its model. A scene file is
//! a cache of a build, not an archive format.
//!
//! [`SceneBuilder::build`]: super::SceneBuilder::build

mod assemble;
mod read;
mod write;

use std::fmt;
use std::ops::Range;

use super::{BuildError, InvalidBvh, Scene};

pub use read::layout;

/// The first eight bytes of every scene file.
pub const MAGIC: [u8; 8] = *b"RAYPICK\0";

/// The layout version this build of raypick writes and reads (see "Version policy").
pub const VERSION: u32 = 3;

/// The byte-order marker as a `u32`; the file holds its little-endian bytes `04 03 02 01`.
pub const BYTE_ORDER_MARKER: u32 = 0x0102_0304;

/// Bytes of the header before the payload.
pub const HEADER_BYTES: usize = 32;

/// Where in a scene file something is: the scene (its position in the file, the saved scene
/// last), the geometry, and the field; `scene` is `None` for the header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    /// The scene's position in the file (`None`: the header or the scene count).
    pub scene: Option<u32>,
    /// The geometry id within the scene, when the field belongs to one.
    pub geometry: Option<u32>,
    /// The field's name (`"vertices"`, `"top tree nodes"`, …).
    pub field: &'static str,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.scene, self.geometry) {
            (None, _) => write!(f, "field `{}`", self.field),
            (Some(s), None) => write!(f, "scene {s}, field `{}`", self.field),
            (Some(s), Some(g)) => write!(f, "scene {s}, geometry {g}, field `{}`", self.field),
        }
    }
}

/// One field of a scene file and its bytes, as [`layout`] lists them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldSpan {
    /// The field.
    pub place: Place,
    /// Its bytes in the file.
    pub bytes: Range<usize>,
}

/// Why a scene file could not be written or read. Every variant about the content names where the
/// problem is; none of them leaves a half-loaded scene behind.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SceneFileError {
    /// The file could not be read or written.
    #[error("scene file: {0}")]
    Io(#[from] std::io::Error),
    /// The file does not start with [`MAGIC`]: it is not a raypick scene file (or not the start
    /// of one).
    #[error("not a raypick scene file: it starts with {found:02x?}, not \"RAYPICK\\0\"")]
    BadMagic {
        /// The file's first bytes (at most eight).
        found: Vec<u8>,
    },
    /// The file was written in another layout version. Rebuild it from its model
    /// (`raypick build MODEL -o FILE`, or [`Scene::save`] after building).
    #[error("scene file version {found}, but this raypick reads version {supported}: rebuild the file from its model")]
    UnsupportedVersion {
        /// The file's version.
        found: u32,
        /// The version this raypick reads ([`VERSION`]).
        supported: u32,
    },
    /// The byte-order marker is not `04 03 02 01`: the header is damaged (the format is
    /// little-endian on every machine).
    #[error("scene file byte-order marker is {found:02x?}, expected [04, 03, 02, 01]: the header is damaged")]
    ByteOrder {
        /// The marker's bytes.
        found: [u8; 4],
    },
    /// The file ends inside the field at `at`: truncated, or a count in it is damaged.
    #[error(
        "scene file is truncated: {at} needs {needed} bytes from byte {offset}, the file has {len}"
    )]
    Truncated {
        /// The field being read.
        at: Place,
        /// Where it starts.
        offset: usize,
        /// How many bytes it needs.
        needed: u64,
        /// The file's length.
        len: usize,
    },
    /// The file's length is not the header's payload length plus the header: truncated, or
    /// with bytes appended.
    #[error("scene file holds {found} payload bytes, but its header announces {expected}: the file is truncated or has trailing bytes")]
    PayloadLength {
        /// What the header announces.
        expected: u64,
        /// What the file holds.
        found: u64,
    },
    /// The payload's CRC-32 differs from the header's: the file is damaged.
    #[error("scene file checksum mismatch: the header says {stored:#010x}, the payload's is {computed:#010x}: the file is damaged")]
    Checksum {
        /// The header's checksum.
        stored: u32,
        /// The payload's.
        computed: u32,
    },
    /// An index or count is out of its range.
    #[error("scene file: {at} is {value}, out of range (at most {max})")]
    OutOfRange {
        /// The field.
        at: Place,
        /// Its value.
        value: u64,
        /// The largest value allowed there.
        max: u64,
    },
    /// A value the format does not allow (an unknown tag, a name that is not UTF-8, a setting out
    /// of range, a tree of the wrong kind, bytes left after the last scene).
    #[error("scene file: {at}: {problem}")]
    BadValue {
        /// The field.
        at: Place,
        /// What is wrong with it.
        problem: String,
    },
    /// A geometry fails the checks [`SceneBuilder::build`](super::SceneBuilder::build) makes.
    #[error("scene file, scene {scene}: {error}")]
    Geometry {
        /// The scene's position in the file.
        scene: u32,
        /// What is wrong.
        error: BuildError,
    },
    /// A stored tree fails its validation against the geometry.
    #[error("scene file, scene {scene}: {error}")]
    InvalidBvh {
        /// The scene's position in the file.
        scene: u32,
        /// Which tree and what is broken.
        error: InvalidBvh,
    },
}

/// The CRC-32 the header holds for `payload`.
fn checksum(payload: &[u8]) -> u32 {
    crc32fast::hash(payload)
}

/// Tags of the geometry kinds.
mod kind {
    pub(super) const MESH: u8 = 0;
    pub(super) const SPHERES: u8 = 1;
    pub(super) const INSTANCE: u8 = 2;
}

/// Tags of the mesh tree kinds.
mod tree {
    pub(super) const NONE: u8 = 0;
    pub(super) const WIDE: u8 = 1;
    pub(super) const QUANTIZED: u8 = 2;
}

/// Bytes of a binary node, a float wide node and a quantized node in the file.
const NODE_BYTES: usize = 32;
const WIDE_NODE_BYTES: usize = 256;
const QUANT_NODE_BYTES: usize = 125;

impl Scene {
    /// Reads a scene file (see the [module docs](self)) a piece at a time: as
    /// [`Scene::from_reader`] reads the file with its size, or (feature `parallel`, on Unix) at
    /// positions, a long array's pieces read on all cores. Either way it accepts and refuses
    /// exactly the files [`Scene::from_bytes`] does.
    ///
    /// # Errors
    /// [`SceneFileError::Io`] when the file cannot be read, else what [`Scene::from_bytes`]
    /// reports.
    pub fn load(path: impl AsRef<std::path::Path>) -> Result<Scene, SceneFileError> {
        let file = std::fs::File::open(path)?;
        let len = file.metadata()?.len();
        Scene::from_file(file, len)
    }
}
