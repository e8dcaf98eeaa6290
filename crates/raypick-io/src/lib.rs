//! Loaders for raypick: OBJ, glTF 2.0, PLY and STL into scenes.
//!
//! ```no_run
//! use raypick::{glam::Vec3, Ray};
//!
//! let loaded = raypick_io::load("CesiumMilkTruck.glb")?;
//! let ray = Ray::new(Vec3::new(0.0, 1.0, 10.0), Vec3::new(0.0, 0.0, -1.0));
//! if let Some(hit) = loaded.scene.intersect(&ray) {
//!     println!("hit {:?} at t = {}", loaded.name_of(&hit), hit.t);
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
//! | glTF / GLB | [`gltf::parse`] | [`gltf::GltfOptions`] | default scene, nodes → instances |
//! | PLY | [`ply::parse`] | [`ply::PlyOptions`] | `face` lists and `tristrips` |
//! | STL | [`stl::parse`] | [`stl::StlOptions`] | binary/ASCII by content, several solids |
//!
//! [`load`] reads a file, detects its format from the content ([`detect_format`]: magic bytes
//! first, the extension only when the content is not conclusive), parses it and builds the scene.
//!
//! # Errors
//! Every failure is a [`LoadError`] that names the file, the place ([`Location`]: line, byte
//! offset or JSON pointer) and the problem. Indices are checked against the vertex count and every
//! coordinate must be finite, so a file never loads as a silently wrong scene. The parsers never
//! panic on any input; `fuzz/` holds a cargo-fuzz target per format (see the crate README).
#![cfg_attr(docsrs, feature(doc_cfg))]

use std::path::Path;

pub mod error;
pub mod gltf;
pub mod model;
pub mod obj;
pub mod ply;
pub mod scene;
pub mod stl;

pub use error::{Format, LoadError, Location, Source};
pub use model::{InstanceData, MeshData, Model};
pub use scene::Loaded;

/// Options for every format, for [`load_with`] and [`parse_bytes`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// OBJ options.
    pub obj: obj::ObjOptions,
    /// glTF options ([`load_with`] sets `base_dir` to the file's folder when it is `None`).
    pub gltf: gltf::GltfOptions,
    /// PLY options ([`load_with`] names the mesh by the file stem when the name is empty).
    pub ply: ply::PlyOptions,
    /// STL options.
    pub stl: stl::StlOptions,
}

/// Decides the format of a file from its content, using `extension` (without the dot, any case)
/// only when the content is not conclusive:
/// `ply` + newline → PLY; `glTF` → GLB; `{` as the first non-blank byte → glTF JSON; a size of exactly
/// `84 + 50·n` (n at byte 80) or `solid` as the first word → STL; then the extension; then OBJ if any
/// line starts with `v ` or `f `.
pub fn detect_format(bytes: &[u8], extension: Option<&str>) -> Result<Format, LoadError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(LoadError::Empty {
            source_name: Source::default(),
        });
    }
    if bytes.starts_with(b"ply\n") || bytes.starts_with(b"ply\r\n") {
        return Ok(Format::Ply);
    }
    if bytes.starts_with(b"glTF") || bytes.trim_ascii_start().starts_with(b"{") {
        return Ok(Format::Gltf);
    }
    if matches!(stl::detect(bytes), Ok(stl::StlKind::Binary(_)))
        || bytes.trim_ascii_start().starts_with(b"solid")
    {
        return Ok(Format::Stl);
    }
    match extension.map(str::to_ascii_lowercase).as_deref() {
        Some("obj") => return Ok(Format::Obj),
        Some("stl") => return Ok(Format::Stl),
        Some("ply") => return Ok(Format::Ply),
        Some("gltf" | "glb") => return Ok(Format::Gltf),
        _ => {}
    }
    let looks_like_obj = bytes.split(|&b| b == b'\n').any(|line| {
        let line = line.trim_ascii_start();
        line.starts_with(b"v ") || line.starts_with(b"f ")
    });
    if looks_like_obj {
        return Ok(Format::Obj);
    }
    Err(LoadError::UnknownFormat {
        source_name: Source::default(),
        reason: format!(
            "no PLY/glTF/STL magic, no known extension, and no OBJ `v`/`f` lines (starts with {:?})",
            String::from_utf8_lossy(&bytes[..bytes.len().min(16)])
        ),
    })
}

/// Parses bytes of any supported format into a [`Model`], detecting the format from the content
/// (and `extension`, see [`detect_format`]).
pub fn parse_bytes(
    bytes: &[u8],
    extension: Option<&str>,
    options: &LoadOptions,
) -> Result<(Format, Model), LoadError> {
    let format = detect_format(bytes, extension)?;
    let model = match format {
        Format::Obj => obj::parse(bytes, &options.obj)?,
        Format::Gltf => gltf::parse(bytes, &options.gltf)?,
        Format::Ply => ply::parse(bytes, &options.ply)?,
        Format::Stl => stl::parse(bytes, &options.stl)?,
    };
    Ok((format, model))
}

/// Reads a model file, detects its format from the content, parses it and builds the scene.
pub fn load(path: impl AsRef<Path>) -> Result<Loaded, LoadError> {
    load_with(path, &LoadOptions::default())
}

/// [`load`] with options.
pub fn load_with(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Loaded, LoadError> {
    let path = path.as_ref();
    let (format, model) = parse_file(path, options)?;
    model
        .into_loaded(format)
        .map_err(|error| error.with_path(path))
}

/// Reads and parses a model file without building a scene (see [`load`]).
pub fn parse_file(
    path: impl AsRef<Path>,
    options: &LoadOptions,
) -> Result<(Format, Model), LoadError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|error| LoadError::Io {
        source_name: Source(Some(path.to_path_buf())),
        error,
    })?;
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
    parse_bytes(&bytes, extension, &options).map_err(|error| error.with_path(path))
}
