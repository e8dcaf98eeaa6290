//! Loaders for raypick: OBJ, glTF 2.0, PLY and STL into scenes.
//!
//! ```no_run
//! use raypick::{glam::Vec3, Ray};
//!
//! let loaded = raypick_io::load("CesiumMilkTruck.glb")?;
//! let ray = Ray::new(Vec3::new(0.0, 1.0, 10.0), Vec3::new(0.0, 0.0, -1.0));
//! // The path query: under `Instancing::Hierarchy` the instance path names the glTF node struck.
//! if let Some((hit, path)) = loaded.scene.intersect_path(&ray) {
//!     println!("hit {:?} at t = {}", loaded.name_of(&hit, &path), hit.t);
//! }
//! # Ok::<(), raypick_io::LoadError>(())
//! ```
//!
//! # Design
//! Parsing is separate from scene building. Each format module parses bytes into a plain
//! [`Model`] ([`model`]: meshes of finite positions and in-range triangles, plus placements);
//! [`Model::into_loaded`] builds the [`raypick::Scene`] and keeps every name ([`Loaded`]).
//!
//! | format | entry point | options | notes |
//! |---|---|---|---|
//! | OBJ | [`obj::parse`] | [`obj::ObjOptions`] | one mesh per `o`/`g` group, fans |
//! | glTF / GLB | [`gltf::parse`] | [`gltf::GltfOptions`] | default scene, nodes → instances (or nested, [`hierarchy`]) |
//! | PLY | [`ply::parse`] | [`ply::PlyOptions`] | `face` lists and `tristrips` |
//! | STL | [`stl::parse`] | [`stl::StlOptions`] | binary/ASCII by content, several solids |
//!
//! [`load`] reads a file, detects its format from the content ([`detect_format`]: magic bytes
//! first, the extension only when the content is not conclusive), parses it and builds the scene.
//! A raypick scene file (`.rpk`, written by `raypick build` or [`raypick::Scene::save`]) holds a
//! built scene with every BVH: [`load`] reads it without a build ([`scene_file`]), within the same
//! byte and triangle budgets, and names its geometries from the names stored in it.
//!
//! # Files from strangers
//! Loading a file must be safe when whoever made it is not trusted (a server, a batch pipeline, a
//! notebook): [`LoadOptions::limits`] ([`Limits`]) bounds what one load reads and builds, and where
//! the files a model refers to may be.
//! - A glTF buffer `uri` must resolve, after percent-decoding, `..` and symbolic links, to a
//!   regular file inside the model's folder; absolute, Windows-style and `scheme:` URIs are refused,
//!   and so are directories, pipes and devices. [`OutsideRefs::Allow`] lifts the folder rule for
//!   trusted files. At most a buffer's `byteLength` bytes are read.
//! - A byte budget ([`Limits::max_bytes`], default 1 GiB): a file's size is checked before it is
//!   opened, and a glTF buffer's before it is read.
//! - A triangle budget ([`Limits::max_triangles`], default 64 Mi), checked as triangles are made
//!   and against the counts a binary header announces.
//! - Files are read a line or a record at a time (glTF, whose JSON must be whole, excepted), so a
//!   malformed file is rejected at its first bad record, or right after a header whose counts the
//!   file's size cannot hold; a line that is not text (a NUL byte, or longer than 1 MiB) is an error
//!   at that line.
//!
//! # Errors
//! Every failure is a [`LoadError`] that names the file, the place ([`Location`]: line, byte
//! offset or JSON pointer) and the problem. Indices are checked against the vertex count and every
//! coordinate must be finite, so a file never loads as a silently wrong scene. The parsers never
//! panic on any input; `fuzz/` holds a cargo-fuzz target per format (see the crate README).
#![cfg_attr(docsrs, feature(doc_cfg))]

use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read};
use std::path::Path;

use raypick::bvh::BuildConfig;

pub mod error;
pub mod gltf;
pub mod hierarchy;
mod input;
pub mod limits;
pub mod model;
pub mod obj;
pub mod ply;
mod refs;
pub mod scene;
pub mod scene_file;
pub mod stl;

pub use error::{Format, LoadError, Location, RefusedReason, Source};
pub use hierarchy::Nodes;
pub use limits::{Limits, OutsideRefs, DEFAULT_MAX_BYTES, DEFAULT_MAX_TRIANGLES};
pub use model::{InstanceData, MeshData, Model, NodeData};
pub use scene::{transform_problem, Instancing, Loaded, TransformProblem};

/// How much of a file [`detect_format`] looks at: its first 64 KiB.
pub const DETECT_BYTES: usize = 64 * 1024;

/// Options for every format, for [`load_with`] and [`parse_bytes`], and the [`Limits`] of the load.
///
/// ```
/// use raypick_io::{LoadOptions, OutsideRefs};
///
/// // A trusted glTF whose buffers live in a sibling folder, and a tighter triangle budget.
/// let options = LoadOptions::default()
///     .with_outside_refs(OutsideRefs::Allow)
///     .with_max_triangles(1_000_000);
/// assert_eq!(options.limits.max_triangles, 1_000_000);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadOptions {
    /// OBJ options.
    pub obj: obj::ObjOptions,
    /// glTF options ([`load_with`] sets `base_dir` to the file's folder when it is `None`).
    pub gltf: gltf::GltfOptions,
    /// PLY options ([`load_with`] names the mesh by the file stem when the name is empty).
    pub ply: ply::PlyOptions,
    /// STL options.
    pub stl: stl::StlOptions,
    /// Budgets and the reference policy (see the crate docs, "Files from strangers").
    pub limits: Limits,
    /// Which instances are baked into world space ([`Instancing`]; by default those used once).
    pub instancing: Instancing,
    /// The BVH settings of the scenes built ([`BuildConfig::BALANCED`] by default;
    /// [`BuildConfig::SPATIAL`] for a scene built once, saved as a scene file and cast many
    /// times). A scene file keeps the settings it was built with.
    pub build: BuildConfig,
}

impl LoadOptions {
    /// These options with the byte budget `max_bytes` ([`Limits::max_bytes`]).
    pub fn with_max_bytes(mut self, max_bytes: u64) -> Self {
        self.limits.max_bytes = max_bytes;
        self
    }

    /// These options with the triangle budget `max_triangles` ([`Limits::max_triangles`]).
    pub fn with_max_triangles(mut self, max_triangles: u64) -> Self {
        self.limits.max_triangles = max_triangles;
        self
    }

    /// These options with the reference policy `outside_refs` ([`Limits::outside_refs`]).
    pub fn with_outside_refs(mut self, outside_refs: OutsideRefs) -> Self {
        self.limits.outside_refs = outside_refs;
        self
    }
}
/// Decides the format of a file from its content, using `extension` (without the dot, any case)
/// only when the content is not conclusive:
/// `ply` + newline → PLY; `glTF` → GLB; `{` as the first non-blank byte → glTF JSON; a size of exactly
/// `84 + 50·n` (n at byte 80) or `solid` as the first word → STL; then the extension; then OBJ if any
/// line starts with `v ` or `f `. Only the first [`DETECT_BYTES`] bytes are looked at.
pub fn detect_format(bytes: &[u8], extension: Option<&str>) -> Result<Format, LoadError> {
    detect(
        &bytes[..bytes.len().min(DETECT_BYTES)],
        bytes.len() as u64,
        extension,
    )
}

/// [`detect_format`] from the first [`DETECT_BYTES`] bytes (`head`) of a file of `len` bytes.
fn detect(head: &[u8], len: u64, extension: Option<&str>) -> Result<Format, LoadError> {
    if len == head.len() as u64 && head.iter().all(u8::is_ascii_whitespace) {
        return Err(LoadError::Empty {
            source_name: Source::default(),
        });
    }
    if scene_file::is_scene_file(head) {
        return Ok(Format::Scene);
    }
    if head.starts_with(b"ply\n") || head.starts_with(b"ply\r\n") {
        return Ok(Format::Ply);
    }
    if head.starts_with(b"glTF") || head.trim_ascii_start().starts_with(b"{") {
        return Ok(Format::Gltf);
    }
    let binary_stl = head
        .get(80..84)
        .map(|count| u32::from_le_bytes([count[0], count[1], count[2], count[3]]))
        .is_some_and(|count| 84 + 50 * u64::from(count) == len);
    if binary_stl || head.trim_ascii_start().starts_with(b"solid") {
        return Ok(Format::Stl);
    }
    match extension.map(str::to_ascii_lowercase).as_deref() {
        Some("obj") => return Ok(Format::Obj),
        Some("stl") => return Ok(Format::Stl),
        Some("ply") => return Ok(Format::Ply),
        Some("gltf" | "glb") => return Ok(Format::Gltf),
        Some("rpk") => return Ok(Format::Scene),
        _ => {}
    }
    let looks_like_obj = head.split(|&b| b == b'\n').any(|line| {
        let line = line.trim_ascii_start();
        line.starts_with(b"v ") || line.starts_with(b"f ")
    });
    if looks_like_obj {
        return Ok(Format::Obj);
    }
    Err(LoadError::UnknownFormat {
        source_name: Source::default(),
        reason: format!(
            "no PLY/glTF/STL magic, no known extension, and no OBJ `v`/`f` lines (starts with `{}`)",
            error::shown(&head[..head.len().min(16)])
        ),
    })
}

/// Parses bytes of any supported format into a [`Model`], detecting the format from the content
/// (and `extension`, see [`detect_format`]), within `options.limits`.
pub fn parse_bytes(
    bytes: &[u8],
    extension: Option<&str>,
    options: &LoadOptions,
) -> Result<(Format, Model), LoadError> {
    options
        .limits
        .check_bytes(bytes.len() as u64, Location::File)?;
    parse_reader(bytes, bytes.len() as u64, extension, options)
}

/// Detects the format from the first [`DETECT_BYTES`] of `reader` (a file of `len` bytes) and
/// parses it a piece at a time (glTF whole: its JSON must be).
fn parse_reader(
    mut reader: impl BufRead,
    len: u64,
    extension: Option<&str>,
    options: &LoadOptions,
) -> Result<(Format, Model), LoadError> {
    let mut head = Vec::with_capacity(DETECT_BYTES.min(len as usize));
    (&mut reader)
        .take(DETECT_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|error| LoadError::Io {
            source_name: Source::default(),
            error,
        })?;
    let format = detect(&head, len, extension)?;
    if format == Format::Gltf {
        gltf::check_glb_head(&head, len)?;
    }
    let limits = &options.limits;
    let reader = Cursor::new(head).chain(reader);
    let model = match format {
        Format::Obj => obj::read(reader, &options.obj, limits)?,
        Format::Ply => ply::read(reader, len, &options.ply, limits)?,
        Format::Stl => stl::read(reader, len, &options.stl, limits)?,
        Format::Gltf => {
            let mut bytes = Vec::with_capacity(len as usize);
            let mut reader = reader;
            reader
                .read_to_end(&mut bytes)
                .map_err(|error| LoadError::Io {
                    source_name: Source::default(),
                    error,
                })?;
            gltf::parse_within(&bytes, &options.gltf, limits)?
        }
        Format::Scene => {
            return Err(LoadError::Unsupported {
                source_name: Source::default(),
                format,
                location: Location::File,
                feature: "a raypick scene file holds a built scene, not a model: read it with \
                          `load` or `scene_file::load_scene_bytes`"
                    .to_string(),
            })
        }
    };
    // The copies baked for instances with singular transforms count too.
    if model.triangles_to_build() > limits.max_triangles as u128 {
        return Err(limits::too_many_triangles(
            format,
            Location::File,
            limits.max_triangles,
        ));
    }
    Ok((format, model))
}

/// Reads a model file, detects its format from the content, parses it and builds the scene, with
/// the default [`LoadOptions`] (and so the default [`Limits`]).
pub fn load(path: impl AsRef<Path>) -> Result<Loaded, LoadError> {
    load_with(path, &LoadOptions::default())
}

/// [`load`] with options.
pub fn load_with(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Loaded, LoadError> {
    let path = path.as_ref();
    if let Some(loaded) = scene_file::load_if_scene_file(path, &options.limits)? {
        return Ok(loaded);
    }
    let (format, model) = parse_file(path, options)?;
    model
        .into_loaded_built(format, options.instancing, options.build)
        .map_err(|error| error.with_path(path))
}

/// Reads and parses a model file without building a scene (see [`load`]).
///
/// A regular file's size is checked against the byte budget before it is opened, and the file is
/// read a piece at a time. A pipe or device (which has no size) is read into memory, at most
/// [`Limits::max_bytes`] bytes of it, then parsed.
pub fn parse_file(
    path: impl AsRef<Path>,
    options: &LoadOptions,
) -> Result<(Format, Model), LoadError> {
    let path = path.as_ref();
    let io_error = |error| LoadError::Io {
        source_name: Source(Some(path.to_path_buf())),
        error,
    };
    let metadata = std::fs::metadata(path).map_err(io_error)?;
    let mut options = options.clone();
    if options.gltf.base_dir.is_none() {
        options.gltf.base_dir = Some(
            path.parent()
                .map_or_else(|| Path::new(".").to_path_buf(), Path::to_path_buf),
        );
    }
    if options.ply.name.is_empty() {
        options.ply.name = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
    }
    let extension = path.extension().and_then(|e| e.to_str());
    let max_bytes = options.limits.max_bytes;
    let result = if metadata.is_dir() {
        return Err(io_error(std::io::ErrorKind::IsADirectory.into()));
    } else if metadata.is_file() {
        let len = metadata.len();
        options
            .limits
            .check_bytes(len, Location::File)
            .map_err(|error| error.with_path(path))?;
        let file = File::open(path).map_err(io_error)?;
        // At most the size checked above, even if the file grows while it is read.
        parse_reader(BufReader::new(file.take(len)), len, extension, &options)
    } else {
        let mut bytes = Vec::new();
        File::open(path)
            .and_then(|file| {
                file.take(max_bytes.saturating_add(1))
                    .read_to_end(&mut bytes)
            })
            .map_err(io_error)?;
        if bytes.len() as u64 > max_bytes {
            return Err(LoadError::TooManyBytes {
                source_name: Source(Some(path.to_path_buf())),
                location: Location::File,
                size: None,
                limit: max_bytes,
            });
        }
        parse_bytes(&bytes, extension, &options)
    };
    result.map_err(|error| error.with_path(path))
}
