//! Files made by someone who means harm, and careless calls: references that leave the model's
//! folder, files that are not files, budgets of bytes and triangles, binary data where text should
//! be. Every file is made here, in a temporary folder.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use raypick_io::{LoadError, LoadOptions, Location, OutsideRefs, RefusedReason, DEFAULT_MAX_BYTES};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/");

/// A unit quad's four positions: 48 bytes of little-endian f32, a valid buffer.
fn quad_bytes() -> Vec<u8> {
    [0f32, 0., 0., 1., 0., 0., 1., 1., 0., 0., 1., 0.]
        .iter()
        .flat_map(|c| c.to_le_bytes())
        .collect()
}

/// A glTF whose only buffer (48 bytes: a quad as a triangle fan) is the file `uri` names.
fn gltf_with_buffer(uri: &str) -> String {
    let uri = uri.replace('\\', "\\\\");
    format!(
        r#"{{"asset":{{"version":"2.0"}},"scenes":[{{"nodes":[0]}}],"nodes":[{{"mesh":0,"name":"n"}}],
        "meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}},"mode":6}}]}}],
        "accessors":[{{"bufferView":0,"componentType":5126,"count":4,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}}],
        "bufferViews":[{{"buffer":0,"byteLength":48}}],
        "buffers":[{{"byteLength":48,"uri":"{uri}"}}]}}"#
    )
}

/// A temporary folder holding `secret.bin` (a valid buffer, so that reading it would load) and a
/// folder `models/` with `inside.bin` (the same bytes) for the models to live in.
struct Tree {
    root: tempfile::TempDir,
}

impl Tree {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("models")).unwrap();
        std::fs::create_dir(root.path().join("models/sub")).unwrap();
        std::fs::write(root.path().join("secret.bin"), quad_bytes()).unwrap();
        std::fs::write(root.path().join("models/inside.bin"), quad_bytes()).unwrap();
        Self { root }
    }

    fn models(&self) -> PathBuf {
        self.root.path().join("models")
    }

    /// Writes `models/<name>.gltf` referring to `uri` and loads it with `options`.
    fn load(
        &self,
        name: &str,
        uri: &str,
        options: &LoadOptions,
    ) -> Result<raypick_io::Loaded, LoadError> {
        let path = self.models().join(format!("{name}.gltf"));
        std::fs::write(&path, gltf_with_buffer(uri)).unwrap();
        raypick_io::load_with(&path, options)
    }
}

/// Whether the quad (placed by the glTF's node) is there: a ray down onto it hits.
fn shows_the_quad(loaded: &raypick_io::Loaded) -> bool {
    use raypick::glam::Vec3;
    let ray = raypick::Ray::new(Vec3::new(0.25, 0.5, 1.0), Vec3::NEG_Z);
    loaded.scene.intersect(&ray).is_some()
}

fn refused(result: Result<raypick_io::Loaded, LoadError>, uri: &str) -> RefusedReason {
    match result {
        Err(LoadError::RefusedReference {
            uri: said,
            reason,
            location,
            ..
        }) => {
            assert_eq!(said, uri);
            assert_eq!(location, Location::Json("/buffers/0".into()));
            reason
        }
        Err(other) => panic!("{uri}: expected a refused reference, got {other}"),
        Ok(_) => panic!("{uri}: loaded"),
    }
}

#[test]
fn references_that_leave_the_model_folder_are_refused() {
    let tree = Tree::new();
    let strict = LoadOptions::default();
    for uri in [
        "../secret.bin",
        "%2e%2e/secret.bin",
        "%2E%2E%2Fsecret.bin",
        "sub/../../secret.bin",
        "./../secret.bin",
        "../../../../../../../../etc/passwd",
    ] {
        let reason = refused(tree.load("climb", uri, &strict), uri);
        assert!(
            matches!(reason, RefusedReason::OutsideFolder { .. }),
            "{uri}: {reason}"
        );
    }
    // The message names the file, the URI and the fix.
    let error = tree.load("climb", "../secret.bin", &strict).unwrap_err();
    let text = error.to_string();
    for part in ["climb.gltf", "`../secret.bin`", "allow_outside_refs"] {
        assert!(text.contains(part), "{text}");
    }
    for uri in [
        "..\\secret.bin",
        "C:\\secret.bin",
        "c:/secret.bin",
        "\\\\server\\share\\secret.bin",
        "..%5Csecret.bin",
    ] {
        assert_eq!(
            refused(tree.load("windows", uri, &strict), uri),
            RefusedReason::WindowsPath,
            "{uri}"
        );
    }
    let absolute = tree.root.path().join("secret.bin");
    let absolute = absolute.to_str().unwrap();
    assert_eq!(
        refused(tree.load("absolute", absolute, &strict), absolute),
        RefusedReason::NotRelative
    );
    // A scheme is refused whatever the policy: only paths are read.
    let trusted = LoadOptions::default().with_outside_refs(OutsideRefs::Allow);
    for uri in ["file:///etc/passwd", "http://example.com/x.bin"] {
        for options in [&strict, &trusted] {
            assert_eq!(
                refused(tree.load("scheme", uri, options), uri),
                RefusedReason::Scheme,
                "{uri}"
            );
        }
    }
    for uri in ["in%zzside.bin", "inside%00.bin"] {
        assert_eq!(
            refused(tree.load("encoding", uri, &strict), uri),
            RefusedReason::BadEncoding,
            "{uri}"
        );
    }
    // Paths that stay inside still load, however they are spelt.
    for uri in [
        "inside.bin",
        "sub/../inside.bin",
        "./inside.bin",
        "%69nside.bin",
    ] {
        let loaded = tree.load("fine", uri, &strict).unwrap();
        assert!(shows_the_quad(&loaded), "{uri}");
    }
}

#[cfg(unix)]
#[test]
fn symbolic_links_out_of_the_folder_are_refused() {
    use std::os::unix::fs::symlink;
    let tree = Tree::new();
    let models = tree.models();
    symlink(tree.root.path().join("secret.bin"), models.join("link.bin")).unwrap();
    symlink(tree.root.path(), models.join("up")).unwrap();
    symlink(models.join("inside.bin"), models.join("sub/near.bin")).unwrap();
    let strict = LoadOptions::default();
    for uri in ["link.bin", "up/secret.bin", "sub/../link.bin"] {
        let reason = refused(tree.load("link", uri, &strict), uri);
        let RefusedReason::OutsideFolder { resolved, folder } = reason else {
            panic!("{uri}: {reason}");
        };
        assert_eq!(
            resolved,
            tree.root.path().canonicalize().unwrap().join("secret.bin")
        );
        assert_eq!(folder, models.canonicalize().unwrap());
    }
    // A link that stays inside is fine.
    assert!(tree.load("near", "sub/near.bin", &strict).is_ok());
    // Allowed for a trusted file: `..`, links and absolute paths all load.
    let trusted = LoadOptions::default().with_outside_refs(OutsideRefs::Allow);
    let absolute = tree.root.path().join("secret.bin");
    for uri in [
        "../secret.bin",
        "link.bin",
        "up/secret.bin",
        absolute.to_str().unwrap(),
    ] {
        let loaded = tree.load("trusted", uri, &trusted).unwrap();
        assert!(shows_the_quad(&loaded), "{uri}");
    }
}

/// Runs `f` on a thread and fails the test if it takes more than 20 s (a load that blocks on a
/// pipe would otherwise hang the suite).
fn within_20s<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || send.send(f()).ok());
    receive
        .recv_timeout(Duration::from_secs(20))
        .expect("the load blocked")
}

#[cfg(unix)]
#[test]
fn references_to_pipes_devices_and_folders_are_refused_without_blocking() {
    let tree = Tree::new();
    let fifo = tree.models().join("pipe.bin");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let trusted = LoadOptions::default().with_outside_refs(OutsideRefs::Allow);
    for (uri, options, kind) in [
        ("pipe.bin", LoadOptions::default(), "a pipe (FIFO)"),
        ("pipe.bin", trusted.clone(), "a pipe (FIFO)"),
        ("sub", LoadOptions::default(), "a directory"),
        (
            "../../../../../../../../dev/zero",
            trusted.clone(),
            "a device",
        ),
        ("/dev/zero", trusted.clone(), "a device"),
    ] {
        let path = tree.models().join("special.gltf");
        std::fs::write(&path, gltf_with_buffer(uri)).unwrap();
        let result = within_20s(move || raypick_io::load_with(&path, &options));
        assert_eq!(
            refused(result, uri),
            RefusedReason::NotAFile { kind },
            "{uri}"
        );
    }
    // Without permission to leave the folder, /dev/zero is refused for that first.
    let reason = refused(
        tree.load(
            "zero",
            "../../../../../../../../dev/zero",
            &LoadOptions::default(),
        ),
        "../../../../../../../../dev/zero",
    );
    assert!(
        matches!(reason, RefusedReason::OutsideFolder { .. }),
        "{reason}"
    );
}

#[test]
fn no_more_than_byte_length_is_read_from_a_buffer() {
    let tree = Tree::new();
    // A 48-byte buffer at the start of an 8 MiB file: only the 48 bytes are read, so a byte
    // budget far below the file's size is enough.
    let mut big = quad_bytes();
    big.resize(8 << 20, 0xAB);
    std::fs::write(tree.models().join("big.bin"), big).unwrap();
    let tight = LoadOptions::default().with_max_bytes(4096);
    let loaded = tree.load("big", "big.bin", &tight).unwrap();
    assert!(shows_the_quad(&loaded));
    // The buffer's file is reported, so that tools can refuse to overwrite it.
    assert_eq!(
        loaded.references,
        [tree.models().join("big.bin").canonicalize().unwrap()]
    );
    // The budget counts the glTF file and its buffer together: one byte short is refused
    // before the buffer is read, the exact total loads.
    let total = gltf_with_buffer("inside.bin").len() as u64 + 48;
    let short = LoadOptions::default().with_max_bytes(total - 1);
    let error = tree.load("over", "inside.bin", &short).unwrap_err();
    match &error {
        LoadError::TooManyBytes {
            location,
            size,
            limit,
            ..
        } => {
            assert_eq!(location, &Location::Json("/buffers/0".into()));
            assert_eq!((*size, *limit), (Some(total), total - 1));
        }
        other => panic!("{other}"),
    }
    let exact = LoadOptions::default().with_max_bytes(total);
    assert!(shows_the_quad(
        &tree.load("exact", "inside.bin", &exact).unwrap()
    ));
}

/// A sparse file of `size` zero bytes (no disk space used).
fn zeros(dir: &Path, name: &str, size: u64) -> PathBuf {
    let path = dir.join(name);
    std::fs::File::create(&path).unwrap().set_len(size).unwrap();
    path
}

#[test]
fn a_file_over_the_byte_budget_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let huge = zeros(dir.path(), "zeros.stl", 2 << 30);
    let start = std::time::Instant::now();
    let error = raypick_io::load(&huge).unwrap_err();
    assert!(
        matches!(
            error,
            LoadError::TooManyBytes {
                size: Some(size),
                limit: DEFAULT_MAX_BYTES,
                ..
            } if size == 2 << 30
        ),
        "{error}"
    );
    assert!(error.to_string().contains("zeros.stl"), "{error}");
    assert!(start.elapsed() < Duration::from_secs(5));
    let small = dir.path().join("teapot.obj");
    std::fs::copy(format!("{DATA}obj/teapot.obj"), &small).unwrap();
    let error =
        raypick_io::load_with(&small, &LoadOptions::default().with_max_bytes(1000)).unwrap_err();
    assert!(matches!(error, LoadError::TooManyBytes { .. }), "{error}");
}

/// With the byte budget raised past the file's size, a 2 GiB file of zeros is still refused at
/// once, whatever its extension says: after the STL header's count, at the first line of text, or
/// because it starts like no format.
#[test]
fn a_huge_malformed_file_is_refused_after_its_first_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let generous = LoadOptions::default().with_max_bytes(4 << 30);
    for (name, expect) in [
        ("zeros.stl", "84 + 50·0 = 84 bytes"),
        ("zeros.obj", "NUL byte"),
        ("zeros.ply", "starts with `ply`"),
        ("zeros.glb", "neither a GLB header"),
        ("zeros.gltf", "neither a GLB header"),
        ("zeros.bin", "no PLY/glTF/STL magic"),
    ] {
        let path = zeros(dir.path(), name, 2 << 30);
        let start = std::time::Instant::now();
        let error = raypick_io::load_with(&path, &generous).unwrap_err();
        assert!(error.to_string().contains(expect), "{name}: {error}");
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{name} took {:?}",
            start.elapsed()
        );
    }
}

#[test]
fn triangle_budget_is_checked_as_triangles_are_made() {
    let dir = tempfile::tempdir().unwrap();
    let five = LoadOptions::default().with_max_triangles(5);
    // OBJ: the sixth triangle's line (a quad makes two).
    let obj = dir.path().join("many.obj");
    let mut text = String::from("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n");
    for _ in 0..4 {
        text.push_str("f 1 2 3 4\n");
    }
    std::fs::write(&obj, &text).unwrap();
    let error = raypick_io::load_with(&obj, &five).unwrap_err();
    assert!(
        matches!(error, LoadError::TooManyTriangles { limit: 5, .. }),
        "{error}"
    );
    assert_eq!(error.location(), Some(&Location::Line(7)), "{error}");
    assert!(raypick_io::load_with(&obj, &LoadOptions::default().with_max_triangles(8)).is_ok());

    // Binary STL: the header's count, before any facet is read.
    let stl = dir.path().join("many.stl");
    let mut bytes = vec![0u8; 80];
    bytes.extend_from_slice(&1000u32.to_le_bytes());
    bytes.resize(84 + 50 * 1000, 0);
    std::fs::write(&stl, &bytes).unwrap();
    let error = raypick_io::load_with(&stl, &five).unwrap_err();
    assert_eq!(error.location(), Some(&Location::Byte(80)), "{error}");

    // PLY: the `face` count in the header.
    let ply = dir.path().join("many.ply");
    let mut bytes = b"ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nelement face 6\nproperty list uchar int vertex_indices\nend_header\n".to_vec();
    bytes.resize(bytes.len() + 36 + 6 * 13, 0);
    std::fs::write(&ply, &bytes).unwrap();
    let error = raypick_io::load_with(&ply, &five).unwrap_err();
    assert!(
        matches!(error, LoadError::TooManyTriangles { .. }),
        "{error}"
    );
    assert_eq!(error.location(), Some(&Location::Line(7)), "{error}");

    // glTF: copies baked for instances with a zero scale count as well.
    let gltf = dir.path().join("baked.gltf");
    std::fs::write(dir.path().join("inside.bin"), quad_bytes()).unwrap();
    let nodes = (0..3)
        .map(|i| format!(r#"{{"mesh":0,"name":"flat{i}","scale":[1,1,0]}}"#))
        .collect::<Vec<_>>()
        .join(",");
    let text = gltf_with_buffer("inside.bin")
        .replace(r#""nodes":[0]"#, r#""nodes":[0,1,2]"#)
        .replace(r#"[{"mesh":0,"name":"n"}]"#, &format!("[{nodes}]"));
    std::fs::write(&gltf, text).unwrap();
    assert!(raypick_io::load_with(&gltf, &LoadOptions::default().with_max_triangles(8)).is_ok());
    let error = raypick_io::load_with(&gltf, &five).unwrap_err();
    assert!(
        matches!(error, LoadError::TooManyTriangles { .. }),
        "{error}"
    );
}

/// No control character or U+FFFD (a lossy decoding) in a message: bytes are escaped.
fn assert_clean(text: &str) {
    assert!(
        !text.chars().any(|c| c.is_control() || c == '\u{FFFD}'),
        "{text:?}"
    );
}

#[test]
fn truncated_binary_stl_with_a_solid_header_says_so() {
    // idler_riser.STL is binary, 1,572 facets, and its header starts with `solid`.
    let bytes = std::fs::read(format!("{DATA}stl/idler_riser.STL")).unwrap();
    assert!(bytes.starts_with(b"solid"));
    for (cut, truncated) in [(bytes.len() - 10, true), (5000, true), (100, true)] {
        let error = raypick_io::stl::parse(&bytes[..cut], &Default::default()).unwrap_err();
        let text = error.to_string();
        assert_eq!(
            matches!(error, LoadError::Truncated { .. }),
            truncated,
            "{text}"
        );
        assert!(text.contains("binary data follows"), "{text}");
        assert!(text.contains("84 + 50·1572 = 78684 bytes"), "{text}");
        assert!(text.contains(&format!("the file has {cut}")), "{text}");
        assert_eq!(error.location(), Some(&Location::Byte(cut as u64)));
        assert_clean(&text);
    }
    let mut longer = bytes.clone();
    longer.extend_from_slice(&[0; 7]);
    let error = raypick_io::stl::parse(&longer, &Default::default()).unwrap_err();
    assert!(matches!(error, LoadError::Malformed { .. }), "{error}");
    assert!(
        error.to_string().contains("7 bytes after the 1572 facets"),
        "{error}"
    );
    // An ASCII file is still ASCII.
    let ascii = std::fs::read(format!("{DATA}stl/multibody.stl")).unwrap();
    assert!(raypick_io::stl::parse(&ascii, &Default::default()).is_ok());
}

#[test]
fn bytes_that_are_not_text_are_escaped_in_messages() {
    let cases: [(&str, &[u8], &str); 5] = [
        ("obj", b"v 0 0 \xff\xfe\x1b[31m\n", "\\xff\\xfe\\x1b[31m"),
        (
            "obj",
            b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 \xc3\x28\n",
            "\\xc3(",
        ),
        (
            "stl",
            b"solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\n\xe9\xe8\x7f\n",
            "\\xe9\\xe8\\x7f",
        ),
        (
            "ply",
            b"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\nend_header\n0 \xff 0\n",
            "\\xff",
        ),
        ("bin", b"\x01\x02garbage\xff", "\\x01\\x02garbage\\xff"),
    ];
    for (extension, bytes, escaped) in cases {
        let error =
            raypick_io::parse_bytes(bytes, Some(extension), &LoadOptions::default()).unwrap_err();
        let text = error.to_string();
        assert!(text.contains(escaped), "{extension}: {text}");
        assert_clean(&text);
    }
}

#[test]
fn messages_do_not_repeat_themselves() {
    // ply-rs starts its messages with "Line N:", which the location already says.
    let ply = b"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\nproperty foo bar\nend_header\n0 0 0\n";
    let text = raypick_io::ply::parse(ply, &Default::default())
        .unwrap_err()
        .to_string();
    assert_eq!(text.matches("ine 7").count(), 1, "{text}");
    // serde_json ends its messages with "at line L column C", which the location already says.
    let json = br#"{"asset":{"version":"2.0"},"meshes":[{"primitives":[]}]"#;
    let text = raypick_io::gltf::parse(json, &Default::default())
        .unwrap_err()
        .to_string();
    assert_eq!(text.matches("line 1").count(), 1, "{text}");
    // The cause is in the message, so it is not also the error's source (which a chain printer
    // would repeat).
    let error = raypick_io::load("/no/such/model.obj").unwrap_err();
    assert!(std::error::Error::source(&error).is_none(), "{error}");
}

#[test]
fn a_huge_instance_scale_is_not_called_singular() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("inside.bin"), quad_bytes()).unwrap();
    let gltf = dir.path().join("huge.gltf");
    let text = gltf_with_buffer("inside.bin").replace(
        r#"{"mesh":0,"name":"n"}"#,
        r#"{"mesh":0,"name":"n","scale":[1e30,1e30,1e30]}"#,
    );
    std::fs::write(&gltf, text).unwrap();
    let loaded = raypick_io::load(&gltf).unwrap();
    assert_eq!(loaded.notes.len(), 1, "{:?}", loaded.notes);
    let note = &loaded.notes[0];
    assert!(!note.contains("singular"), "{note}");
    assert!(note.contains("e90") && note.contains("overflows"), "{note}");
    assert_eq!(
        raypick_io::transform_problem(&raypick::glam::Affine3A::from_scale(
            raypick::glam::Vec3::ZERO
        )),
        Some(raypick_io::TransformProblem::Singular)
    );
}

/// The files of `tests/hostile-inputs/` (also the fuzzers' seeds, see `fuzz/README.md`), named
/// `<format>-<what>`: each is refused with a typed error whose message escapes the file's bytes,
/// parsed from memory by its own format and by detection, and loaded from a folder of its own (a
/// glTF's references then resolve against that folder and are refused by the policy).
#[test]
fn hostile_inputs_are_refused() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/hostile-inputs");
    let mut count = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let format = name.split('-').next().unwrap();
        let direct = match format {
            "gltf" | "glb" => raypick_io::gltf::parse(&bytes, &Default::default()),
            "ply" => raypick_io::ply::parse(&bytes, &Default::default()),
            "stl" => raypick_io::stl::parse(&bytes, &Default::default()),
            "obj" => raypick_io::obj::parse(&bytes, &Default::default()),
            other => panic!("{name}: unknown format prefix {other}"),
        };
        let detected = raypick_io::parse_bytes(&bytes, None, &LoadOptions::default());
        let folder = tempfile::tempdir().unwrap();
        std::fs::create_dir(folder.path().join("models")).unwrap();
        let file = folder
            .path()
            .join("models")
            .join(format!("{name}.{format}"));
        std::fs::write(&file, &bytes).unwrap();
        let loaded = raypick_io::load(&file);
        for (how, error) in [
            ("parse", direct.err()),
            ("parse_bytes", detected.err()),
            ("load", loaded.err()),
        ] {
            let error = error.unwrap_or_else(|| panic!("{name}: {how} accepted it"));
            assert_clean(&error.to_string());
            if how == "load" && format == "gltf" {
                assert!(
                    matches!(error, LoadError::RefusedReference { .. }),
                    "{name}: {error}"
                );
            }
        }
        count += 1;
    }
    assert!(count >= 10);
}
