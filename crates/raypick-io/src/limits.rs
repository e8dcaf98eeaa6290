//! What one load may read and build: a byte budget, a triangle budget, and where the files a model
//! refers to may be.
//!
//! A loader that reads files it did not make (a server, a batch pipeline, a notebook) must not be
//! made to read anything else on the machine, nor to exhaust its memory. The checks run before the
//! work they bound:
//! - **bytes**: a model file's size is taken from its metadata and compared with
//!   [`Limits::max_bytes`] before it is opened; a glTF file's external buffers count against the same
//!   budget, each before it is read, and no more than its `byteLength` is read from it;
//! - **triangles**: the parsers count triangles as they make them (a binary STL or PLY header's
//!   counts are checked before the first record is read), and the copies made for glTF instances
//!   with singular transforms count too, so a small file cannot expand into an enormous mesh;
//! - **references**: a glTF buffer `uri` must resolve, after percent-decoding, `..` and symbolic
//!   links, to a regular file inside the model's folder, unless [`OutsideRefs::Allow`] says the
//!   file is trusted (see [`crate::gltf`]).

use crate::error::{Format, LoadError, Location, Source};

/// The default [`Limits::max_bytes`]: 1 GiB. Every model of the shared test data (the largest is
/// 12.4 MB) fits many times over; a file of 2 GB is refused before a byte of it is read.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;

/// The default [`Limits::max_triangles`]: 64 Mi (67,108,864). More than any file within the default
/// byte budget holds unless it expands (glTF instances baked into copies); the largest shared model
/// has 331,179.
pub const DEFAULT_MAX_TRIANGLES: u64 = 1 << 26;

/// May a model refer to files outside its own folder?
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OutsideRefs {
    /// No (the default): a reference must resolve, after percent-decoding, `..` and symbolic links,
    /// to a regular file inside the folder of the model file. Absolute paths and Windows-style
    /// paths (`C:\`, `\\server`) are refused too.
    #[default]
    Refuse,
    /// Yes, for files you trust: relative references may leave the model's folder (through `..`
    /// or symbolic links) and absolute paths are followed. A reference must still be a path (no
    /// scheme, no Windows-style path) naming a regular file (never a directory, pipe or device),
    /// and at most its declared length is read.
    Allow,
}

/// The budgets and the reference policy of one load (part of [`crate::LoadOptions`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Limits {
    /// The most bytes read: the model file and every file it refers to, together. Default
    /// [`DEFAULT_MAX_BYTES`].
    pub max_bytes: u64,
    /// The most triangles made: every mesh once, plus each copy of a mesh that an instance with a
    /// singular transform bakes into world space. Default [`DEFAULT_MAX_TRIANGLES`].
    pub max_triangles: u64,
    /// Where referenced files may be. Default [`OutsideRefs::Refuse`].
    pub outside_refs: OutsideRefs,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_MAX_BYTES,
            max_triangles: DEFAULT_MAX_TRIANGLES,
            outside_refs: OutsideRefs::Refuse,
        }
    }
}

impl Limits {
    /// A [`LoadError::TooManyBytes`] unless `size` bytes fit the budget.
    pub(crate) fn check_bytes(&self, size: u64, location: Location) -> Result<(), LoadError> {
        if size > self.max_bytes {
            return Err(LoadError::TooManyBytes {
                source_name: Source::default(),
                location,
                size: Some(size),
                limit: self.max_bytes,
            });
        }
        Ok(())
    }

    /// A counter of the triangles a parser makes, against [`Self::max_triangles`].
    pub(crate) fn triangles(&self, format: Format) -> Triangles {
        Triangles {
            format,
            limit: self.max_triangles,
            count: 0,
        }
    }
}

/// Counts triangles as a parser makes them; the first one over the budget is an error that says
/// where it is.
pub(crate) struct Triangles {
    format: Format,
    limit: u64,
    count: u64,
}

impl Triangles {
    /// Counts `n` more triangles, made at `location`.
    pub(crate) fn add(
        &mut self,
        n: u64,
        location: impl FnOnce() -> Location,
    ) -> Result<(), LoadError> {
        self.count = self.count.saturating_add(n);
        if self.count > self.limit {
            return Err(too_many_triangles(self.format, location(), self.limit));
        }
        Ok(())
    }

    /// A [`LoadError::TooManyTriangles`] unless `n` more triangles (announced, not made yet)
    /// would fit.
    pub(crate) fn check_announced(&self, n: u64, location: Location) -> Result<(), LoadError> {
        if self.count.saturating_add(n) > self.limit {
            return Err(too_many_triangles(self.format, location, self.limit));
        }
        Ok(())
    }
}

pub(crate) fn too_many_triangles(format: Format, location: Location, limit: u64) -> LoadError {
    LoadError::TooManyTriangles {
        source_name: Source::default(),
        format,
        location,
        limit,
    }
}
