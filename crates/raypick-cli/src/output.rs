//! Files the tool writes. An output never replaces one of the command's inputs, and it is written
//! to a temporary file in the same folder, flushed to disk and renamed over the target, so a write
//! that fails part-way (disk full, a file-size limit) leaves the previous file as it was.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Why an output was not written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The output path names one of the command's input files.
    #[error("{out}: refusing to overwrite the {what} {input} (choose another output file)")]
    IsAnInput {
        /// The output path as given.
        out: String,
        /// What the input is (`"model file"`, `"ray file"`, …).
        what: String,
        /// The input path.
        input: String,
    },
    /// Writing failed; the previous file, if any, is unchanged.
    #[error("{path}: {error} (nothing was replaced)")]
    Io {
        /// The output path.
        path: String,
        /// What the operating system said.
        error: std::io::Error,
    },
}

/// Whether `a` and `b` name the same existing file: the same canonical path (through symbolic
/// links, `..` and relative spellings) or, on Unix, the same device and inode (a hard link).
pub fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(ca), Ok(cb)) = (a.canonicalize(), b.canonicalize()) else {
        return false;
    };
    if ca == cb {
        return true;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(ma), Ok(mb)) = (std::fs::metadata(&ca), std::fs::metadata(&cb)) {
            return ma.dev() == mb.dev() && ma.ino() == mb.ino();
        }
    }
    false
}

/// Refuses `out` when it names one of `inputs` (`(what, path)` pairs, e.g. `("model file", …)`).
pub fn refuse_inputs<'a>(
    out: &Path,
    inputs: impl IntoIterator<Item = (&'a str, &'a Path)>,
) -> Result<(), OutputError> {
    for (what, input) in inputs {
        if same_file(out, input) {
            return Err(OutputError::IsAnInput {
                out: out.display().to_string(),
                what: what.to_owned(),
                input: input.display().to_string(),
            });
        }
    }
    Ok(())
}

/// Writes `bytes` to `path` through a temporary file in the same folder, renamed into place once
/// it is complete and on disk. On failure the temporary file is removed and `path` is untouched.
pub fn write_replacing(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let io = |error| OutputError::Io {
        path: path.display().to_string(),
        error,
    };
    let folder: PathBuf = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".raypick-").suffix(".part");
    // The mode `std::fs::write` gives a new file (0o666 less the umask), not tempfile's 0o600.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut file = builder.tempfile_in(&folder).map_err(io)?;
    // Through the `File` itself: `NamedTempFile`'s own writer adds the temporary path to every
    // error, a name the user never chose.
    file.as_file_mut().write_all(bytes).map_err(io)?;
    file.as_file().sync_all().map_err(io)?;
    file.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_files_and_spots_inputs_however_named() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.bin");
        write_replacing(&out, b"first").unwrap();
        write_replacing(&out, b"second").unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"second");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, ["out.bin"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&out).unwrap().permissions().mode();
            assert_ne!(
                mode & 0o044,
                0,
                "readable by others as fs::write makes it: {mode:o}"
            );
        }
        // A folder in the way: the error says so and nothing is left behind.
        let error = write_replacing(dir.path(), b"x").unwrap_err();
        assert!(matches!(error, OutputError::Io { .. }), "{error}");

        let model = dir.path().join("model.obj");
        std::fs::write(&model, b"v 0 0 0").unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        for name in [model.clone(), sub.join("../model.obj")] {
            assert!(refuse_inputs(&name, [("model file", model.as_path())]).is_err());
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&model, dir.path().join("link.obj")).unwrap();
            std::fs::hard_link(&model, dir.path().join("hard.obj")).unwrap();
            for name in ["link.obj", "hard.obj"] {
                let error =
                    refuse_inputs(&dir.path().join(name), [("model file", model.as_path())])
                        .unwrap_err();
                assert!(error.to_string().contains("model file"), "{error}");
            }
        }
        assert!(refuse_inputs(&out, [("model file", model.as_path())]).is_ok());
        assert!(refuse_inputs(
            &dir.path().join("new.npz"),
            [("model file", model.as_path())]
        )
        .is_ok());
    }
}
