//! [`AbiError`]: why a call failed, and the last error JavaScript reads back
//! (`rp_last_error_kind`, `rp_last_error_field_*`, `rp_last_error_*`).

use std::cell::RefCell;

use raypick::camera::CameraError;
use raypick::{BuildError, SceneFileError};

/// Why an exported function refused its input. Each variant names the argument at fault
/// ([`AbiError::field`]) so the JavaScript error can say which one to fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AbiError {
    /// An argument is out of range or a buffer has the wrong length or content.
    #[error("{field}: {why}")]
    Argument {
        /// The argument (as the JavaScript API names it).
        field: &'static str,
        /// What is wrong with it.
        why: String,
    },
    /// A handle names no live object of the expected kind (never made, freed, or another kind).
    #[error("{field}: {why}")]
    Handle {
        /// The argument that holds the handle.
        field: &'static str,
        /// Why it names nothing usable.
        why: String,
    },
    /// `SceneBuilder::build` refused the geometry.
    #[error("{0}")]
    Build(#[from] BuildError),
    /// The bytes are not a scene file this engine reads.
    #[error("scene file: {0}")]
    SceneFile(#[from] SceneFileError),
    /// A camera could not be made from the parameters.
    #[error("camera: {0}")]
    Camera(#[from] CameraError),
    /// An allocation the call needs failed (the module's memory is limited to 4 GiB).
    #[error("{field}: cannot allocate {bytes} bytes")]
    OutOfMemory {
        /// The buffer that could not be made.
        field: &'static str,
        /// Its size.
        bytes: u64,
    },
}

/// `rp_last_error_kind` values.
pub mod kind {
    /// No error has happened yet.
    pub const NONE: u32 = 0;
    /// [`super::AbiError::Argument`].
    pub const ARGUMENT: u32 = 1;
    /// [`super::AbiError::Handle`].
    pub const HANDLE: u32 = 2;
    /// [`super::AbiError::Build`].
    pub const BUILD: u32 = 3;
    /// [`super::AbiError::SceneFile`].
    pub const SCENE_FILE: u32 = 4;
    /// [`super::AbiError::Camera`].
    pub const CAMERA: u32 = 5;
    /// [`super::AbiError::OutOfMemory`].
    pub const OUT_OF_MEMORY: u32 = 6;
}

impl AbiError {
    /// An [`AbiError::Argument`].
    pub fn argument(field: &'static str, why: impl Into<String>) -> Self {
        Self::Argument {
            field,
            why: why.into(),
        }
    }

    /// The `rp_last_error_kind` code.
    pub fn kind(&self) -> u32 {
        match self {
            Self::Argument { .. } => kind::ARGUMENT,
            Self::Handle { .. } => kind::HANDLE,
            Self::Build(_) => kind::BUILD,
            Self::SceneFile(_) => kind::SCENE_FILE,
            Self::Camera(_) => kind::CAMERA,
            Self::OutOfMemory { .. } => kind::OUT_OF_MEMORY,
        }
    }

    /// The argument at fault, as the JavaScript API names it (`""` when no single one is).
    pub fn field(&self) -> &'static str {
        match self {
            Self::Argument { field, .. }
            | Self::Handle { field, .. }
            | Self::OutOfMemory { field, .. } => field,
            Self::Build(e) => build_field(e),
            Self::SceneFile(_) => "bytes",
            Self::Camera(_) => "camera",
        }
    }
}

/// The builder argument a [`BuildError`] is about.
fn build_field(e: &BuildError) -> &'static str {
    match e {
        BuildError::IndexOutOfRange { .. } => "indices",
        BuildError::NonFiniteVertex { .. } | BuildError::VertexCountMismatch { .. } => "positions",
        BuildError::NonFiniteCenter { .. } => "centers",
        BuildError::InvalidRadius { .. } | BuildError::SphereCountMismatch { .. } => "radii",
        BuildError::NonInvertibleTransform { .. } => "worldFromObject",
        BuildError::TooDeep { .. } => "scene",
        BuildError::NotAMesh { .. } | BuildError::UnknownGeometry { .. } => "geometry",
        _ => "",
    }
}

/// The last error, as JavaScript reads it.
#[derive(Default)]
struct Last {
    kind: u32,
    field: String,
    message: String,
}

thread_local! {
    static LAST: RefCell<Last> = RefCell::new(Last::default());
}

/// Records `e` as the last error.
pub fn record(e: &AbiError) {
    LAST.with(|l| {
        let mut l = l.borrow_mut();
        l.kind = e.kind();
        l.field = e.field().to_string();
        l.message = e.to_string();
    });
}

/// `rp_last_error_kind`.
pub fn last_kind() -> u32 {
    LAST.with(|l| l.borrow().kind)
}

/// The address and byte length of the last error's message (`field == false`) or field name.
pub fn last_text(field: bool) -> (*const u8, u32) {
    LAST.with(|l| {
        let l = l.borrow();
        let s = if field { &l.field } else { &l.message };
        (s.as_ptr(), s.len() as u32)
    })
}

/// Runs `f` for a function that answers an `i32` (a count, a flag, an id): an error is recorded
/// and answered with -1.
pub fn status(f: impl FnOnce() -> Result<i32, AbiError>) -> i32 {
    f().unwrap_or_else(|e| {
        record(&e);
        -1
    })
}

/// Runs `f` for a function that makes an object: an error is recorded and answered with the
/// handle 0, which names nothing.
pub fn handle(f: impl FnOnce() -> Result<u32, AbiError>) -> u32 {
    f().unwrap_or_else(|e| {
        record(&e);
        0
    })
}

/// A count as an `i32` answer.
pub fn count(n: usize, field: &'static str) -> Result<i32, AbiError> {
    i32::try_from(n).map_err(|_| AbiError::argument(field, format!("{n} exceeds i32")))
}
