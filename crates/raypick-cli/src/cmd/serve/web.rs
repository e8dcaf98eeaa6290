//! The files of the in-page viewer that this binary does not hold: three.js (from npm) and the
//! raypick WebAssembly package (`web/raypick`, its `.wasm` built by `scripts/build-wasm.sh`).
//!
//! They are read once, at start, from the web folder: `--web DIR`, else the `RAYPICK_WEB`
//! environment variable, else the repository's `web/` this binary was built from. Each is served
//! under a fixed URL below `/web/` from memory: no request maps a URL to a file path. When a file
//! is missing the page stays in its ray-cast modes and says what to build; the server-side modes
//! need none of these files.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// `(URL, path in the web folder, content type)` of the fixed files.
const FIXED: [(&str, &str, &str); 3] = [
    (
        "/web/three/three.module.js",
        "node_modules/three/build/three.module.js",
        JS,
    ),
    (
        "/web/three/three.core.js",
        "node_modules/three/build/three.core.js",
        JS,
    ),
    ("/web/raypick/raypick.wasm", "raypick/raypick.wasm", WASM),
];

/// Folder of the raypick package's ES modules, each served as `/web/raypick/NAME.js`.
const PACKAGE_DIR: &str = "raypick";
const JS: &str = "text/javascript; charset=utf-8";
const WASM: &str = "application/wasm";

/// The viewer's files, in memory.
#[derive(Debug, Default)]
pub struct WebAssets {
    files: HashMap<String, (&'static str, Vec<u8>)>,
    /// What could not be read, as `path: reason` lines (empty when the viewer is complete).
    pub missing: Vec<String>,
}

impl WebAssets {
    /// The folder to read from: `explicit`, else `RAYPICK_WEB`, else the build's `web/`.
    pub fn folder(explicit: Option<&Path>) -> PathBuf {
        explicit
            .map(Path::to_path_buf)
            .or_else(|| std::env::var_os("RAYPICK_WEB").map(PathBuf::from))
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../web"))
    }

    /// Reads every file the viewer needs from `folder`, noting the missing ones.
    pub fn load(folder: &Path) -> Self {
        let mut assets = Self::default();
        for (url, rel, content_type) in FIXED {
            assets.add(url.to_string(), &folder.join(rel), content_type);
        }
        let package = folder.join(PACKAGE_DIR);
        match std::fs::read_dir(&package) {
            Ok(entries) => {
                let mut names: Vec<String> = entries
                    .filter_map(|e| e.ok())
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                    .filter_map(|e| e.file_name().into_string().ok())
                    .filter(|n| n.ends_with(".js") && is_plain_name(n))
                    .collect();
                names.sort();
                for name in names {
                    assets.add(format!("/web/raypick/{name}"), &package.join(&name), JS);
                }
            }
            Err(e) => assets.missing.push(format!("{}: {e}", package.display())),
        }
        if !assets.files.contains_key("/web/raypick/index.js") {
            assets
                .missing
                .push(format!("{}: no index.js", package.display()));
        }
        assets
    }

    fn add(&mut self, url: String, path: &Path, content_type: &'static str) {
        match std::fs::read(path) {
            Ok(bytes) => {
                self.files.insert(url, (content_type, bytes));
            }
            Err(e) => self.missing.push(format!("{}: {e}", path.display())),
        }
    }

    /// The file served at `url`, with its content type.
    pub fn get(&self, url: &str) -> Option<(&'static str, &[u8])> {
        self.files.get(url).map(|(t, b)| (*t, b.as_slice()))
    }

    /// Whether the in-page viewer has every file it needs.
    pub fn complete(&self) -> bool {
        self.missing.is_empty()
    }
}

/// A file name made of letters, digits, `-`, `_` and `.` only (what URLs carry unescaped).
fn is_plain_name(name: &str) -> bool {
    !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_fixed_files_and_the_package_modules_and_names_what_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let web = dir.path();
        std::fs::create_dir_all(web.join("node_modules/three/build")).unwrap();
        std::fs::create_dir_all(web.join("raypick/sub")).unwrap();
        std::fs::write(web.join("node_modules/three/build/three.module.js"), "m").unwrap();
        std::fs::write(web.join("raypick/index.js"), "i").unwrap();
        std::fs::write(web.join("raypick/three.js"), "t").unwrap();
        std::fs::write(web.join("raypick/index.d.ts"), "d").unwrap();
        std::fs::write(web.join("raypick/.hidden.js"), "h").unwrap();
        let assets = WebAssets::load(web);
        assert_eq!(
            assets.get("/web/three/three.module.js"),
            Some((JS, &b"m"[..]))
        );
        assert_eq!(assets.get("/web/raypick/index.js"), Some((JS, &b"i"[..])));
        assert_eq!(assets.get("/web/raypick/three.js"), Some((JS, &b"t"[..])));
        assert_eq!(assets.get("/web/raypick/index.d.ts"), None);
        assert_eq!(assets.get("/web/raypick/.hidden.js"), None);
        assert_eq!(assets.get("/web/raypick/../index.js"), None);
        assert!(!assets.complete());
        let missing = assets.missing.join("\n");
        assert!(missing.contains("three.core.js"), "{missing}");
        assert!(missing.contains("raypick.wasm"), "{missing}");
        std::fs::write(web.join("node_modules/three/build/three.core.js"), "c").unwrap();
        std::fs::write(web.join("raypick/raypick.wasm"), [0, 97, 115, 109]).unwrap();
        let assets = WebAssets::load(web);
        assert!(assets.complete(), "{:?}", assets.missing);
        assert_eq!(
            assets.get("/web/raypick/raypick.wasm"),
            Some((WASM, &[0, 97, 115, 109][..]))
        );
    }
}
