//! Files a model refers to (glTF buffer `uri`s): where a reference may lead, and how it is read.
//!
//! A reference is resolved in this order, and the first rule it breaks is the error:
//! 1. a scheme (`file:`, `http:`, …) is refused, and so is a Windows-style path (a drive letter,
//!    or a backslash, raw or escaped): URIs separate folders with `/` only. These hold whatever
//!    the policy;
//! 2. the query and fragment (`?…`, `#…`) are dropped and the path is percent-decoded (RFC 3986
//!    §2.1); a malformed escape, or one that decodes to NUL or to bytes that are not UTF-8, is refused;
//! 3. unless [`OutsideRefs::Allow`]: an absolute path is refused; so is a relative path whose `..`
//!    climb above the model's folder (decided from the text, before anything outside is touched);
//!    then the path and the folder are canonicalized (symbolic links resolved) and the path must
//!    still lie inside the folder;
//! 4. the path must name a regular file: a directory, pipe, device or socket is refused before it
//!    is opened (a pipe would block, `/dev/zero` would never end), and the opened file is checked
//!    again (it is opened without blocking, so a pipe swapped in meanwhile cannot hang the load).
//!
//! The caller reads at most the buffer's `byteLength` bytes from it, and counts them against the
//! byte budget before reading (see [`crate::Limits`]).

use std::fs::File;
use std::path::{Component, Path, PathBuf};

use crate::error::RefusedReason;
use crate::limits::OutsideRefs;

/// Why a reference cannot be read.
pub(crate) enum RefError {
    /// The policy refuses it.
    Refused(RefusedReason),
    /// The file system said no (not found, permission denied, …).
    Io(std::io::Error),
}

impl From<std::io::Error> for RefError {
    fn from(error: std::io::Error) -> Self {
        RefError::Io(error)
    }
}

fn refused(reason: RefusedReason) -> RefError {
    RefError::Refused(reason)
}

/// Whether `uri` starts with a scheme (`letter *( letter / digit / "+" / "-" / "." ) ":"`,
/// RFC 3986 §3.1) before any `/`.
fn has_scheme(uri: &str) -> bool {
    let Some((scheme, _)) = uri.split_once(':') else {
        return false;
    };
    let mut bytes = scheme.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
}

/// The path part of a relative reference, percent-decoded.
pub(crate) fn decode(uri: &str) -> Result<String, RefusedReason> {
    let drive_letter =
        uri.len() >= 2 && uri.as_bytes()[0].is_ascii_alphabetic() && uri.as_bytes()[1] == b':';
    if drive_letter || uri.contains('\\') {
        return Err(RefusedReason::WindowsPath);
    }
    if has_scheme(uri) {
        return Err(RefusedReason::Scheme);
    }
    let path = uri.split(['?', '#']).next().unwrap_or_default();
    let mut bytes = Vec::with_capacity(path.len());
    let mut rest = path.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'%' {
            let hex = tail.get(..2).ok_or(RefusedReason::BadEncoding)?;
            let text = std::str::from_utf8(hex).map_err(|_| RefusedReason::BadEncoding)?;
            let value = u8::from_str_radix(text, 16).map_err(|_| RefusedReason::BadEncoding)?;
            bytes.push(value);
            rest = &tail[2..];
        } else {
            bytes.push(b);
            rest = tail;
        }
    }
    let decoded = String::from_utf8(bytes).map_err(|_| RefusedReason::BadEncoding)?;
    if decoded.contains('\0') {
        return Err(RefusedReason::BadEncoding);
    }
    if decoded.contains('\\') {
        return Err(RefusedReason::WindowsPath);
    }
    Ok(decoded)
}

/// `folder` joined with the relative `path`, `.` and `..` applied to the text; `None` when the
/// `..` climb above `folder`.
fn join_lexically(folder: &Path, path: &Path) -> Option<PathBuf> {
    let mut joined = folder.to_path_buf();
    let mut depth = 0usize;
    for component in path.components() {
        match component {
            Component::Normal(name) => {
                joined.push(name);
                depth += 1;
            }
            Component::CurDir => {}
            Component::ParentDir => {
                depth = depth.checked_sub(1)?;
                joined.pop();
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(joined)
}

/// The file a buffer `uri` names, resolved against the model's folder `base_dir` under `policy`
/// (rules 1 to 3 of the module docs).
pub(crate) fn resolve(
    uri: &str,
    base_dir: &Path,
    policy: OutsideRefs,
) -> Result<PathBuf, RefError> {
    let decoded = decode(uri).map_err(refused)?;
    let path = Path::new(&decoded);
    match policy {
        OutsideRefs::Allow => Ok(base_dir.join(path)),
        OutsideRefs::Refuse => {
            if path.has_root() {
                return Err(refused(RefusedReason::NotRelative));
            }
            let folder = base_dir.canonicalize()?;
            let Some(inside) = join_lexically(&folder, path) else {
                return Err(refused(RefusedReason::OutsideFolder {
                    resolved: lexical_outside(&folder, path),
                    folder,
                }));
            };
            let resolved = inside.canonicalize()?;
            if !resolved.starts_with(&folder) {
                return Err(refused(RefusedReason::OutsideFolder { resolved, folder }));
            }
            Ok(resolved)
        }
    }
}

/// Where a relative path that climbs out of `folder` points, for the message (never opened).
fn lexical_outside(folder: &Path, path: &Path) -> PathBuf {
    let mut joined = folder.to_path_buf();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                joined.pop();
            }
            Component::Normal(name) => joined.push(name),
            _ => {}
        }
    }
    joined
}

/// What a file that is not a regular file is, for the message.
fn kind_of(file_type: std::fs::FileType) -> &'static str {
    if file_type.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a pipe (FIFO)";
        }
        if file_type.is_char_device() || file_type.is_block_device() {
            return "a device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    "something that is not a regular file"
}

/// Opens the regular file at `path` for reading (rule 4 of the module docs) and returns it with
/// its size.
pub(crate) fn open_regular(path: &Path) -> Result<(File, u64), RefError> {
    let metadata = std::fs::metadata(path)?;
    if !metadata.is_file() {
        return Err(refused(RefusedReason::NotAFile {
            kind: kind_of(metadata.file_type()),
        }));
    }
    let mut open = std::fs::OpenOptions::new();
    open.read(true);
    // Without blocking: if a pipe replaced the file since the check above, opening it must not
    // wait for a writer. On a regular file the flag changes nothing.
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        open.custom_flags(libc::O_NONBLOCK);
    }
    let file = open.open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(refused(RefusedReason::NotAFile {
            kind: kind_of(metadata.file_type()),
        }));
    }
    Ok((file, metadata.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding_follows_rfc_3986_and_refuses_what_is_not_a_relative_path() {
        assert_eq!(decode("quad%20data.bin").unwrap(), "quad data.bin");
        assert_eq!(decode("%2e%2e/x.bin").unwrap(), "../x.bin");
        assert_eq!(decode("a/b.bin?v=2#frag").unwrap(), "a/b.bin");
        assert_eq!(decode("caf%C3%A9.bin").unwrap(), "café.bin");
        for (uri, reason) in [
            ("C:\\data\\x.bin", RefusedReason::WindowsPath),
            ("c:/data/x.bin", RefusedReason::WindowsPath),
            ("\\\\server\\share\\x.bin", RefusedReason::WindowsPath),
            ("..\\..\\x.bin", RefusedReason::WindowsPath),
            ("..%5c..%5Cx.bin", RefusedReason::WindowsPath),
            ("file:///etc/passwd", RefusedReason::Scheme),
            ("http://example.com/x.bin", RefusedReason::Scheme),
            ("x%2", RefusedReason::BadEncoding),
            ("x%zz", RefusedReason::BadEncoding),
            ("x%00.bin", RefusedReason::BadEncoding),
            ("x%ff.bin", RefusedReason::BadEncoding),
        ] {
            assert_eq!(decode(uri).unwrap_err(), reason, "{uri}");
        }
    }

    #[test]
    fn lexical_join_stays_below_the_folder() {
        let folder = Path::new("/m");
        assert_eq!(
            join_lexically(folder, Path::new("a/../b/./c.bin")),
            Some(PathBuf::from("/m/b/c.bin"))
        );
        assert_eq!(join_lexically(folder, Path::new("a/../../c.bin")), None);
        assert_eq!(join_lexically(folder, Path::new("/etc/passwd")), None);
        assert_eq!(
            lexical_outside(Path::new("/m/n"), Path::new("../../etc/passwd")),
            PathBuf::from("/etc/passwd")
        );
    }
}
