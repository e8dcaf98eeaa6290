//! The one error type of the crate: every failure says which file, where in it, and what is wrong.

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
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Obj => "OBJ",
            Format::Gltf => "glTF",
            Format::Ply => "PLY",
            Format::Stl => "STL",
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
        #[source]
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
        /// The index as written in the file (after resolving OBJ's relative indices, 0-based).
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
        #[source]
        error: std::io::Error,
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
        #[source]
        error: raypick::BuildError,
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
            | LoadError::Unsupported { source_name, .. }
            | LoadError::NoTriangles { source_name, .. }
            | LoadError::Scene { source_name, .. } => source_name,
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
            | LoadError::Unsupported { source_name, .. }
            | LoadError::NoTriangles { source_name, .. }
            | LoadError::Scene { source_name, .. } => source_name,
        };
        *name = Source(Some(path.to_path_buf()));
        self
    }
}

/// Shorthands the parsers use to build errors for one format (the source is `<memory>` until
/// [`LoadError::with_path`]).
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

    pub(crate) fn no_triangles(&self) -> LoadError {
        LoadError::NoTriangles {
            source_name: Source::default(),
            format: self.format,
        }
    }
}
