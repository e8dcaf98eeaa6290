//! The one error type of the crate: every failure says which file, where in it, and what is wrong.
//!
//! Each message is complete on one line, its cause included (an OS error, the scene builder's
//! reason), so no variant also reports that cause through `Error::source`: a caller that prints the
//! chain would otherwise repeat it. Bytes from a file are never echoed raw: [`shown`] escapes them.

use std::fmt;
use std::path::{Path, PathBuf};

/// The file formats this crate reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// Wavefront OBJ (text).
    Obj,
    /// glTF 2.0, JSON (`.gltf`) or binary (`.glb`).
    Gltf,
    /// Stanford PLY, ASCII or binary of either endianness.
    Ply,
    /// STL, ASCII or binary.
    Stl,
    /// A raypick scene file (`.rpk`, [`raypick::scene::file`]): a built scene, every BVH
    /// included, which [`crate::load`] reads without a build.
    Scene,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Obj => "OBJ",
            Format::Gltf => "glTF",
            Format::Ply => "PLY",
            Format::Stl => "STL",
            Format::Scene => "raypick scene",
        })
    }
}

/// Where in a file a problem is.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Location {
    /// The file as a whole (e.g. it is empty, or no geometry was found).
    File,
    /// A 1-based line of a text file (OBJ, ASCII STL, ASCII PLY, the PLY header).
    Line(usize),
    /// A 1-based line and column (glTF JSON syntax errors).
    LineColumn(usize, usize),
    /// A 0-based byte offset into the file (binary STL, binary PLY, GLB chunks).
    Byte(u64),
    /// A path into the glTF JSON document, as a JSON pointer (e.g. `/meshes/0/primitives/1`).
    Json(String),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::File => f.write_str("file"),
            Location::Line(line) => write!(f, "line {line}"),
            Location::LineColumn(line, column) => write!(f, "line {line}, column {column}"),
            Location::Byte(offset) => write!(f, "byte {offset}"),
            Location::Json(pointer) => write!(f, "JSON {pointer}"),
        }
    }
}

/// The name of what was read: a file path, or `<memory>` for the per-format `parse` functions on bytes
/// (which [`crate::load`] replaces with the real path).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Source(pub Option<PathBuf>);

impl Source {
    /// The path, if the bytes came from a file.
    pub fn path(&self) -> Option<&Path> {
        self.0.as_deref()
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(path) => write!(f, "{}", path.display()),
            None => f.write_str("<memory>"),
        }
    }
}

/// Every way loading can fail. Each variant names the source and, where it applies, the format and
/// the place in the file ([`Location`]), so a message reads like
/// `bunny.obj: OBJ line 12: face index 40000 is out of range (35947 vertices)`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The file could not be read at all.
    #[error("{source_name}: cannot read the file: {error}")]
    Io {
        /// The file.
        source_name: Source,
        /// What the operating system said.
        error: std::io::Error,
    },
    /// The file has no bytes (or only white space).
    #[error("{source_name}: the file is empty")]
    Empty {
        /// The file.
        source_name: Source,
    },
    /// The content matches none of the formats (checked by magic bytes first, extension second).
    #[error("{source_name}: not a recognised OBJ, glTF, PLY or STL file: {reason}")]
    UnknownFormat {
        /// The file.
        source_name: Source,
        /// What was found instead.
        reason: String,
    },
    /// The file is malformed: a syntax error, a wrong magic number, a missing field.
    #[error("{source_name}: {format} {location}: {message}")]
    Malformed {
        /// The file.
        source_name: Source,
        /// The format the file was read as.
        format: Format,
        /// Where the problem is.
        location: Location,
        /// What is wrong.
        message: String,
    },
    /// The file ends before the data its header or structure promises.
    #[error("{source_name}: {format} {location}: the file is truncated: {message}")]
    Truncated {
        /// The file.
        source_name: Source,
        /// The format the file was read as.
        format: Format,
        /// Where the missing data should have been.
        location: Location,
        /// What was expected there.
        message: String,
    },
    /// A vertex index points outside the vertex array.
    #[error("{source_name}: {format} {location}: vertex index {index} is out of range ({count} vertices)")]
    IndexOutOfRange {
        /// The file.
        source_name: Source,
        /// The format the file was read as.
        format: Format,
        /// Where the index is.
        location: Location,
        /// The index as the file writes it: 0-based for PLY and glTF, 1-based or negative
        /// (counting back from the latest vertex) for OBJ.
        index: i64,
        /// How many vertices there are.
        count: usize,
    },
    /// A coordinate is NaN or infinite (or a transform has such an entry).
    #[error("{source_name}: {format} {location}: coordinate {value} is not finite")]
    NonFinite {
        /// The file.
        source_name: Source,
        /// The format the file was read as.
        format: Format,
        /// Where the value is.
        location: Location,
        /// The value as read.
        value: f64,
    },
    /// A glTF buffer stored in another file could not be read.
    #[error("{source_name}: glTF {location}: cannot read the external buffer `{uri}`: {error}")]
    MissingBuffer {
        /// The glTF file.
        source_name: Source,
        /// The buffer in the JSON document.
        location: Location,
        /// The buffer's URI as written.
        uri: String,
        /// What the operating system said (or why no path could be formed).
        error: std::io::Error,
    },
    /// A file the model refers to (a glTF buffer `uri`) is refused by the reference policy
    /// ([`crate::OutsideRefs`]) or cannot be a file at all.
    #[error("{source_name}: glTF {location}: the buffer URI `{}` is refused: {reason}", .uri.escape_debug())]
    RefusedReference {
        /// The glTF file.
        source_name: Source,
        /// The buffer in the JSON document.
        location: Location,
        /// The URI as written.
        uri: String,
        /// Why it is refused.
        reason: RefusedReason,
    },
    /// Reading the file (or a file it refers to) would exceed the byte budget
    /// ([`crate::Limits::max_bytes`]).
    #[error("{source_name}: {}", too_many_bytes(.location, *.size, *.limit))]
    TooManyBytes {
        /// The file.
        source_name: Source,
        /// [`Location::File`] for the file itself, the buffer's JSON pointer for a glTF buffer.
        location: Location,
        /// The bytes the load would have read by then; `None` for a pipe or device, which has no
        /// size (it went on past the budget).
        size: Option<u64>,
        /// The budget.
        limit: u64,
    },
    /// The file holds (or announces) more triangles than the triangle budget
    /// ([`crate::Limits::max_triangles`]).
    #[error("{source_name}: {format} {location}: more than {limit} triangles, the budget of this load (max_triangles)")]
    TooManyTriangles {
        /// The file.
        source_name: Source,
        /// The format the file was read as.
        format: Format,
        /// Where the triangle over the budget is (or the count that announces it).
        location: Location,
        /// The budget.
        limit: u64,
    },
    /// A valid file uses a feature this crate does not read (e.g. Draco compression, sparse positions).
    #[error("{source_name}: {format} {location}: unsupported: {feature}")]
    Unsupported {
        /// The file.
        source_name: Source,
        /// The format the file was read as.
        format: Format,
        /// Where the feature is used.
        location: Location,
        /// What the feature is.
        feature: String,
    },
    /// The file is well formed but holds no triangles (e.g. only points or lines).
    #[error("{source_name}: {format}: the file holds no triangles")]
    NoTriangles {
        /// The file.
        source_name: Source,
        /// The format the file was read as.
        format: Format,
    },
    /// The scene could not be built from the parsed model (the parsers validate indices and
    /// coordinates, so this means the model was changed or built by hand).
    #[error("{source_name}: building the scene failed: {error}")]
    Scene {
        /// The file.
        source_name: Source,
        /// The scene builder's error.
        error: raypick::BuildError,
    },
    /// A raypick scene file is damaged, of another version, or not one (see
    /// [`raypick::SceneFileError`], which names the field).
    #[error("{source_name}: {error}")]
    SceneFile {
        /// The file.
        source_name: Source,
        /// What is wrong, and where.
        error: raypick::SceneFileError,
    },
    /// A hand-built [`crate::Model`] is inconsistent (an instance names a mesh that does not exist).
    #[error("invalid model: {message}")]
    InvalidModel {
        /// What is inconsistent.
        message: String,
    },
}

impl LoadError {
    /// The source this error is about.
    pub fn source_name(&self) -> &Source {
        static NONE: Source = Source(None);
        match self {
            LoadError::InvalidModel { .. } => &NONE,
            LoadError::Io { source_name, .. }
            | LoadError::Empty { source_name }
            | LoadError::UnknownFormat { source_name, .. }
            | LoadError::Malformed { source_name, .. }
            | LoadError::Truncated { source_name, .. }
            | LoadError::IndexOutOfRange { source_name, .. }
            | LoadError::NonFinite { source_name, .. }
            | LoadError::MissingBuffer { source_name, .. }
            | LoadError::RefusedReference { source_name, .. }
            | LoadError::TooManyBytes { source_name, .. }
            | LoadError::TooManyTriangles { source_name, .. }
            | LoadError::Unsupported { source_name, .. }
            | LoadError::NoTriangles { source_name, .. }
            | LoadError::Scene { source_name, .. }
            | LoadError::SceneFile { source_name, .. } => source_name,
        }
    }

    /// The place in the file, where the error has one.
    pub fn location(&self) -> Option<&Location> {
        match self {
            LoadError::Malformed { location, .. }
            | LoadError::Truncated { location, .. }
            | LoadError::IndexOutOfRange { location, .. }
            | LoadError::NonFinite { location, .. }
            | LoadError::MissingBuffer { location, .. }
            | LoadError::RefusedReference { location, .. }
            | LoadError::TooManyBytes { location, .. }
            | LoadError::TooManyTriangles { location, .. }
            | LoadError::Unsupported { location, .. } => Some(location),
            _ => None,
        }
    }

    /// The same error naming `path` as its source (the per-format parsers on bytes say `<memory>`).
    pub fn with_path(mut self, path: &Path) -> Self {
        let name = match &mut self {
            LoadError::InvalidModel { .. } => return self,
            LoadError::Io { source_name, .. }
            | LoadError::Empty { source_name }
            | LoadError::UnknownFormat { source_name, .. }
            | LoadError::Malformed { source_name, .. }
            | LoadError::Truncated { source_name, .. }
            | LoadError::IndexOutOfRange { source_name, .. }
            | LoadError::NonFinite { source_name, .. }
            | LoadError::MissingBuffer { source_name, .. }
            | LoadError::RefusedReference { source_name, .. }
            | LoadError::TooManyBytes { source_name, .. }
            | LoadError::TooManyTriangles { source_name, .. }
            | LoadError::Unsupported { source_name, .. }
            | LoadError::NoTriangles { source_name, .. }
            | LoadError::Scene { source_name, .. }
            | LoadError::SceneFile { source_name, .. } => source_name,
        };
        *name = Source(Some(path.to_path_buf()));
        self
    }
}

/// Why a referenced file is refused ([`LoadError::RefusedReference`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RefusedReason {
    /// An absolute path ([`crate::OutsideRefs::Allow`] accepts it).
    NotRelative,
    /// A URI with a scheme other than `data:` (`file:`, `http:`, …): only paths are read.
    Scheme,
    /// A Windows-style path (a drive letter such as `C:` or a backslash): URIs separate folders
    /// with `/` only, and such a path would mean something else on each system.
    WindowsPath,
    /// A malformed percent-escape, or an escape that decodes to a NUL byte or to bytes that are
    /// not UTF-8.
    BadEncoding,
    /// The reference resolves (after `..` and symbolic links) to this path, outside the model's
    /// folder.
    OutsideFolder {
        /// Where it resolves to.
        resolved: PathBuf,
        /// The model's folder, resolved.
        folder: PathBuf,
    },
    /// The path names something that is not a regular file: a directory, a pipe (FIFO), a device
    /// or a socket. Reading one could block forever or never end.
    NotAFile {
        /// What it is: `"a directory"`, `"a pipe (FIFO)"`, `"a device"`, …
        kind: &'static str,
    },
}

impl fmt::Display for RefusedReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RefusedReason::NotRelative => f.write_str(
                "an absolute path (references outside the model's folder need allow_outside_refs)",
            ),
            RefusedReason::Scheme => f.write_str(
                "a URI with a scheme; only relative paths (and base64 data: URIs) are read",
            ),
            RefusedReason::WindowsPath => f.write_str(
                "a Windows-style path (drive letter or backslash); URIs separate folders with `/`",
            ),
            RefusedReason::BadEncoding => f.write_str(
                "a malformed percent-escape, or one that decodes to a NUL byte or to non-UTF-8 bytes",
            ),
            RefusedReason::OutsideFolder { resolved, folder } => write!(
                f,
                "it resolves to {}, outside the model's folder {} (allow_outside_refs allows it for trusted files)",
                resolved.display(),
                folder.display()
            ),
            RefusedReason::NotAFile { kind } => {
                write!(f, "it names {kind}, not a regular file")
            }
        }
    }
}

fn too_many_bytes(location: &Location, size: Option<u64>, limit: u64) -> String {
    match (location, size) {
        (Location::File, Some(size)) => {
            format!("the file is {size} bytes, over the byte budget of {limit} (max_bytes)")
        }
        (Location::File, None) => {
            format!("the file goes on past the byte budget of {limit} (max_bytes)")
        }
        (_, size) => format!(
            "glTF {location}: the buffer would bring the bytes read to {}, over the byte budget of {limit} (max_bytes)",
            size.map_or_else(|| format!("more than {limit}"), |s| s.to_string())
        ),
    }
}

/// Bytes from a file as they may appear in a message: printable ASCII as it is, everything else
/// escaped (`\xff`, `\0`, `\n`, …), and at most 40 bytes (then `…`), so a binary file or a very
/// long token cannot flood or garble the message.
pub fn shown(bytes: &[u8]) -> String {
    const MOST: usize = 40;
    let mut text = bytes[..bytes.len().min(MOST)].escape_ascii().to_string();
    if bytes.len() > MOST {
        text.push('…');
    }
    text
}

/// Shorthands the parsers use to build errors for one format (the source is `<memory>` until
/// [`LoadError::with_path`]).
#[derive(Clone, Copy)]
pub(crate) struct Err {
    pub(crate) format: Format,
}

impl Err {
    pub(crate) fn malformed(&self, location: Location, message: impl Into<String>) -> LoadError {
        LoadError::Malformed {
            source_name: Source::default(),
            format: self.format,
            location,
            message: message.into(),
        }
    }

    pub(crate) fn truncated(&self, location: Location, message: impl Into<String>) -> LoadError {
        LoadError::Truncated {
            source_name: Source::default(),
            format: self.format,
            location,
            message: message.into(),
        }
    }

    pub(crate) fn index(&self, location: Location, index: i64, count: usize) -> LoadError {
        LoadError::IndexOutOfRange {
            source_name: Source::default(),
            format: self.format,
            location,
            index,
            count,
        }
    }

    pub(crate) fn non_finite(&self, location: Location, value: f64) -> LoadError {
        LoadError::NonFinite {
            source_name: Source::default(),
            format: self.format,
            location,
            value,
        }
    }

    pub(crate) fn unsupported(&self, location: Location, feature: impl Into<String>) -> LoadError {
        LoadError::Unsupported {
            source_name: Source::default(),
            format: self.format,
            location,
            feature: feature.into(),
        }
    }

    pub(crate) fn io(&self, error: std::io::Error) -> LoadError {
        LoadError::Io {
            source_name: Source::default(),
            error,
        }
    }

    pub(crate) fn no_triangles(&self) -> LoadError {
        LoadError::NoTriangles {
            source_name: Source::default(),
            format: self.format,
        }
    }
}
