//! Crafted bad files, made here from the real files in the shared data set (no large copies are
//! committed): truncations, corrupted indices, non-finite coordinates, garbage, missing buffers.
//! Every one must be a typed, located `LoadError`, never a panic, never a silently wrong model.

use base64::Engine as _;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use raypick_io::{gltf, obj, parse_bytes, ply, stl, LoadError, LoadOptions, Location, Model};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/");

fn read(file: &str) -> Vec<u8> {
    std::fs::read(format!("{DATA}{file}")).unwrap()
}

/// The `Model` contract: finite positions, indices in range, instances of existing meshes.
fn assert_valid(model: &Model, what: &str) {
    for mesh in &model.meshes {
        assert!(mesh.vertices.iter().all(|v| v.is_finite()), "{what}");
        let n = mesh.vertices.len();
        assert!(
            mesh.triangles.iter().flatten().all(|&i| (i as usize) < n),
            "{what}"
        );
    }
    for instance in &model.instances {
        assert!(instance.mesh < model.meshes.len(), "{what}");
        assert!(instance.world_from_object.is_finite(), "{what}");
    }
    for node in &model.nodes {
        assert!(node.mesh.is_none_or(|m| m < model.meshes.len()), "{what}");
        assert!(
            node.children.iter().all(|&c| c < model.nodes.len()),
            "{what}"
        );
        assert!(node.parent_from_node.is_finite(), "{what}");
    }
    assert!(model.roots.iter().all(|&r| r < model.nodes.len()), "{what}");
}

fn parse_any(bytes: &[u8], extension: &str) -> Result<Model, LoadError> {
    parse_bytes(bytes, Some(extension), &LoadOptions::default()).map(|(_, model)| model)
}

/// Binary formats must reject every truncation; text formats may accept a cut that falls on a
/// statement boundary or removes only trailing white space (a valid file), but then the model must
/// be valid.
#[test]
fn truncated_copies_of_real_files() {
    let cases: &[(&str, &str, bool)] = &[
        ("stl/20mm-xyz-cube.stl", "stl", true),
        ("stl/idler_riser.STL", "stl", true),
        ("ply/horse.ply", "ply", true),
        ("ply/igea.ply", "ply", true),
        ("gltf/BoxInterleaved.glb", "glb", true),
        ("gltf/Duck.glb", "glb", true),
        ("gltf/Box.gltf", "gltf", false),
        ("gltf/SimpleMeshes.gltf", "gltf", false),
        ("stl/multibody.stl", "stl", false),
        ("ply/bunny-res2-ascii.ply", "ply", false),
        ("obj/teapot.obj", "obj", false),
    ];
    for &(file, extension, binary) in cases {
        let bytes = read(file);
        let n = bytes.len();
        for cut in [
            0,
            1,
            3,
            4,
            11,
            12,
            40,
            83,
            84,
            85,
            n / 3,
            n / 2,
            n - 51,
            n - 50,
            n - 2,
            n - 1,
        ] {
            let what = format!("{file} cut to {cut} bytes");
            match parse_any(&bytes[..cut.min(n)], extension) {
                Err(error) => {
                    let text = error.to_string();
                    assert!(!text.is_empty(), "{what}");
                    if cut == 0 {
                        assert!(matches!(error, LoadError::Empty { .. }), "{what}: {error}");
                    }
                }
                Ok(model) => {
                    assert!(!binary, "{what}: a truncated binary file loaded");
                    assert_valid(&model, &what);
                }
            }
        }
    }
}

#[test]
fn truncated_binary_stl_says_where() {
    let bytes = read("stl/20mm-xyz-cube.stl");
    let error = stl::parse(&bytes[..bytes.len() - 10], &Default::default()).unwrap_err();
    assert!(matches!(error, LoadError::Truncated { .. }), "{error}");
    assert_eq!(
        error.location(),
        Some(&Location::Byte(bytes.len() as u64 - 10))
    );
}

#[test]
fn binary_stl_with_a_nan_coordinate() {
    let mut bytes = read("stl/idler_riser.STL");
    // Facet 7, vertex 1, y: 84 + 50·7 + 12 (normal) + 12 (vertex 0) + 4.
    let at = 84 + 50 * 7 + 12 + 12 + 4;
    bytes[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    let error = stl::parse(&bytes, &Default::default()).unwrap_err();
    assert!(matches!(error, LoadError::NonFinite { .. }), "{error}");
    assert_eq!(error.location(), Some(&Location::Byte(at as u64)));
}

#[test]
fn obj_with_a_corrupted_index_names_the_line() {
    let text = String::from_utf8(read("obj/teapot.obj")).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let face_line = lines.iter().position(|l| l.starts_with("f ")).unwrap() + 10;
    lines[face_line] = "f 1 2 99999".to_owned();
    let error = obj::parse(lines.join("\n").as_bytes(), &Default::default()).unwrap_err();
    // The index as the file writes it (1-based), not the 0-based one it becomes.
    assert!(
        matches!(
            error,
            LoadError::IndexOutOfRange {
                index: 99999,
                count: 3644,
                ..
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("vertex index 99999 "), "{error}");
    assert_eq!(error.location(), Some(&Location::Line(face_line + 1)));

    lines[face_line] = "f 1 2 -99999".to_owned();
    let error = obj::parse(lines.join("\n").as_bytes(), &Default::default()).unwrap_err();
    assert!(
        matches!(error, LoadError::IndexOutOfRange { index: -99999, .. }),
        "{error}"
    );
    assert_eq!(error.location(), Some(&Location::Line(face_line + 1)));

    let vertex_line = lines.iter().position(|l| l.starts_with("v ")).unwrap() + 5;
    lines[face_line] = "f 1 2 3".to_owned();
    lines[vertex_line] = "v 1.0 inf 2.0".to_owned();
    let error = obj::parse(lines.join("\n").as_bytes(), &Default::default()).unwrap_err();
    assert!(matches!(error, LoadError::NonFinite { .. }), "{error}");
    assert_eq!(error.location(), Some(&Location::Line(vertex_line + 1)));
}

/// The byte offset where horse.ply's payload starts.
fn payload_start(bytes: &[u8]) -> usize {
    let marker = b"end_header\n";
    bytes
        .windows(marker.len())
        .position(|w| w == marker)
        .unwrap()
        + marker.len()
}

#[test]
fn binary_ply_with_a_corrupted_index_says_which_byte() {
    let mut bytes = read("ply/horse.ply");
    // 48,485 vertices of 6 floats, then faces of `uchar count, 3 × int`.
    let faces = payload_start(&bytes) + 48_485 * 24;
    let face = 1000;
    let at = faces + face * 13;
    assert_eq!(bytes[at], 3, "face {face} is a triangle");
    bytes[at + 5..at + 9].copy_from_slice(&1_000_000i32.to_le_bytes());
    let error = ply::parse(&bytes, &Default::default()).unwrap_err();
    assert!(
        matches!(
            error,
            LoadError::IndexOutOfRange {
                index: 1_000_000,
                count: 48_485,
                ..
            }
        ),
        "{error}"
    );
    assert_eq!(error.location(), Some(&Location::Byte(at as u64)));

    bytes[at + 5..at + 9].copy_from_slice(&(-7i32).to_le_bytes());
    let error = ply::parse(&bytes, &Default::default()).unwrap_err();
    assert!(
        matches!(error, LoadError::IndexOutOfRange { index: -7, .. }),
        "{error}"
    );
}

#[test]
fn ply_tristrip_index_out_of_range() {
    let mut bytes = read("ply/igea.ply");
    // 134,345 vertices of 3 floats, then one tristrips element: int count, then int indices.
    let list = payload_start(&bytes) + 134_345 * 12;
    let at = list + 4 + 4 * 100;
    bytes[at..at + 4].copy_from_slice(&134_345i32.to_le_bytes());
    let error = ply::parse(&bytes, &Default::default()).unwrap_err();
    assert!(
        matches!(error, LoadError::IndexOutOfRange { index: 134_345, .. }),
        "{error}"
    );
    assert_eq!(error.location(), Some(&Location::Byte(list as u64)));
}

#[test]
fn ply_with_an_absurd_element_count_fails_fast() {
    let bytes = read("ply/horse.ply");
    let text = String::from_utf8_lossy(&bytes[..payload_start(&bytes)]).into_owned();
    let patched = text.replace("element face 96966", "element face 4000000000");
    let mut crafted = patched.into_bytes();
    crafted.extend_from_slice(&bytes[payload_start(&bytes)..]);
    let start = std::time::Instant::now();
    let error = ply::parse(&crafted, &Default::default()).unwrap_err();
    assert!(matches!(error, LoadError::Truncated { .. }), "{error}");
    assert!(start.elapsed().as_secs() < 10);
}

/// Box.gltf with its embedded buffer decoded, edited and re-encoded.
fn box_gltf_with(edit: impl Fn(&mut Vec<u8>)) -> Vec<u8> {
    let text = String::from_utf8(read("gltf/Box.gltf")).unwrap();
    let prefix = "data:application/octet-stream;base64,";
    let start = text.find(prefix).unwrap() + prefix.len();
    let end = start + text[start..].find('"').unwrap();
    let engine = base64::engine::general_purpose::STANDARD;
    let mut buffer = engine.decode(&text[start..end]).unwrap();
    edit(&mut buffer);
    format!(
        "{}{}{}",
        &text[..start],
        engine.encode(&buffer),
        &text[end..]
    )
    .into_bytes()
}

#[test]
fn gltf_with_a_corrupted_index_names_the_accessor() {
    // Box.gltf's buffer: normals (0..288), positions (accessor 2, 288..576), then 36 u16 indices
    // (accessor 0, 576..648).
    assert!(gltf::parse(&box_gltf_with(|_| {}), &Default::default()).is_ok());
    let bytes = box_gltf_with(|buffer| buffer[586..588].copy_from_slice(&500u16.to_le_bytes()));
    let error = gltf::parse(&bytes, &Default::default()).unwrap_err();
    assert!(
        matches!(
            error,
            LoadError::IndexOutOfRange {
                index: 500,
                count: 24,
                ..
            }
        ),
        "{error}"
    );
    assert_eq!(
        error.location(),
        Some(&Location::Json("/accessors/0".into()))
    );

    let bytes =
        box_gltf_with(|buffer| buffer[292..296].copy_from_slice(&f32::INFINITY.to_le_bytes()));
    let error = gltf::parse(&bytes, &Default::default()).unwrap_err();
    assert!(matches!(error, LoadError::NonFinite { .. }), "{error}");
    assert_eq!(
        error.location(),
        Some(&Location::Json("/accessors/2".into()))
    );
}

#[test]
fn glb_with_a_corrupted_chunk_length() {
    let mut bytes = read("gltf/BoxInterleaved.glb");
    // The JSON chunk length (bytes 12..16) made larger than the file.
    bytes[12..16].copy_from_slice(&1_000_000u32.to_le_bytes());
    let error = gltf::parse(&bytes, &Default::default()).unwrap_err();
    assert!(matches!(error, LoadError::Malformed { .. }), "{error}");
    // The total length below the header size (gltf would underflow on it).
    let mut bytes = read("gltf/BoxInterleaved.glb");
    bytes[8..12].copy_from_slice(&3u32.to_le_bytes());
    let error = gltf::parse(&bytes, &Default::default()).unwrap_err();
    assert_eq!(error.location(), Some(&Location::Byte(8)), "{error}");
}

/// The accessor `min`/`max` the glTF validator requires for POSITION, as JSON numbers.
fn bound(positions: &[[f32; 3]], pick: fn(f32, f32) -> f32) -> String {
    let b = (0..3).map(|axis| {
        positions
            .iter()
            .map(|p| p[axis])
            .reduce(pick)
            .unwrap_or(0.0)
    });
    b.map(|v| format!("{v:?}")).collect::<Vec<_>>().join(",")
}

/// A minimal glTF with one embedded buffer holding `positions` then `indices` (u16).
fn tiny_gltf(
    positions: &[[f32; 3]],
    indices: &[u16],
    primitive_extra: &str,
    nodes: &str,
) -> Vec<u8> {
    let mut buffer = Vec::new();
    for p in positions {
        for c in p {
            buffer.extend_from_slice(&c.to_le_bytes());
        }
    }
    let position_bytes = buffer.len();
    for i in indices {
        buffer.extend_from_slice(&i.to_le_bytes());
    }
    let encoded = base64::engine::general_purpose::STANDARD.encode(&buffer);
    format!(
        r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0]}}],
        "nodes":{nodes},
        "meshes":[{{"name":"m","primitives":[{{"attributes":{{"POSITION":0}},"indices":1{primitive_extra}}}]}}],
        "accessors":[
          {{"bufferView":0,"componentType":5126,"count":{np},"type":"VEC3","min":[{min}],"max":[{max}]}},
          {{"bufferView":1,"componentType":5123,"count":{ni},"type":"SCALAR"}}],
        "bufferViews":[{{"buffer":0,"byteLength":{position_bytes}}},
                       {{"buffer":0,"byteOffset":{position_bytes},"byteLength":{ib}}}],
        "buffers":[{{"byteLength":{total},"uri":"data:application/octet-stream;base64,{encoded}"}}]}}"#,
        np = positions.len(),
        min = bound(positions, f32::min),
        max = bound(positions, f32::max),
        ni = indices.len(),
        ib = indices.len() * 2,
        total = buffer.len(),
    )
    .into_bytes()
}

const QUAD: [[f32; 3]; 4] = [
    [0.0, 0.0, 0.0],
    [1.0, 0.0, 0.0],
    [1.0, 1.0, 0.0],
    [0.0, 1.0, 0.0],
];

#[test]
fn gltf_strips_fans_points_and_hierarchy_errors() {
    let node = r#"[{"mesh":0}]"#;
    // TRIANGLE_STRIP (5): (0 1 2), (1 3 2) per the glTF vertex order, both facing +z.
    let model = gltf::parse(
        &tiny_gltf(&QUAD, &[0, 1, 3, 2], r#","mode":5"#, node),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(model.meshes[0].triangles, vec![[0, 1, 3], [1, 2, 3]]);
    // TRIANGLE_FAN (6): (1 2 0), (2 3 0).
    let model = gltf::parse(
        &tiny_gltf(&QUAD, &[0, 1, 2, 3], r#","mode":6"#, node),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(model.meshes[0].triangles, vec![[1, 2, 0], [2, 3, 0]]);
    for triangles in [&model.meshes[0].triangles] {
        for t in triangles {
            let [a, b, c] = t.map(|i| raypick::glam::Vec3::from_array(QUAD[i as usize]));
            assert!((b - a).cross(c - a).z > 0.0, "winding kept");
        }
    }
    // POINTS (0) only: skipped with a note, so the file holds no triangles.
    let error = gltf::parse(
        &tiny_gltf(&QUAD, &[0, 1, 2], r#","mode":0"#, node),
        &Default::default(),
    )
    .unwrap_err();
    assert!(matches!(error, LoadError::NoTriangles { .. }), "{error}");
    // A cycle in the node tree.
    let cycle = r#"[{"mesh":0,"children":[1]},{"children":[0]}]"#;
    let result = gltf::parse(
        &tiny_gltf(&QUAD, &[0, 1, 2], "", cycle),
        &Default::default(),
    );
    assert!(result.is_err(), "a node cycle must not load");
    // A non-affine matrix.
    let projective = r#"[{"mesh":0,"matrix":[1,0,0,0, 0,1,0,0, 0,0,1,1, 0,0,0,1]}]"#;
    let error = gltf::parse(
        &tiny_gltf(&QUAD, &[0, 1, 2], "", projective),
        &Default::default(),
    )
    .unwrap_err();
    assert_eq!(
        error.location(),
        Some(&Location::Json("/nodes/0/matrix".into())),
        "{error}"
    );
    // Indices not a multiple of 3 in TRIANGLES mode.
    let error = gltf::parse(
        &tiny_gltf(&QUAD, &[0, 1, 2, 3], "", node),
        &Default::default(),
    )
    .unwrap_err();
    assert!(matches!(error, LoadError::Malformed { .. }), "{error}");
}

#[test]
fn gltf_unsupported_features_are_typed() {
    let plain = String::from_utf8(tiny_gltf(&QUAD, &[0, 1, 2], "", r#"[{"mesh":0}]"#)).unwrap();
    // A required extension that does not touch geometry is fine.
    let texture = plain.replacen('{', r#"{"extensionsUsed":["KHR_texture_transform"],"extensionsRequired":["KHR_texture_transform"],"#, 1);
    assert!(gltf::parse(texture.as_bytes(), &Default::default()).is_ok());
    let mut text = plain;
    text = text.replacen('{', r#"{"extensionsUsed":["KHR_draco_mesh_compression"],"extensionsRequired":["KHR_draco_mesh_compression"],"#, 1);
    let error = gltf::parse(text.as_bytes(), &Default::default()).unwrap_err();
    assert!(matches!(error, LoadError::Unsupported { .. }), "{error}");
    assert!(
        matches!(error.location(), Some(Location::Json(p)) if p.starts_with("/extensionsRequired/0")),
        "{error}"
    );
}

#[test]
fn gltf_external_buffers() {
    let dir = tempfile::tempdir().unwrap();
    let mut buffer = Vec::new();
    for p in QUAD {
        for c in p {
            buffer.extend_from_slice(&c.to_le_bytes());
        }
    }
    std::fs::write(dir.path().join("quad data.bin"), &buffer).unwrap();
    let json = |uri: &str| {
        format!(
            r#"{{"asset":{{"version":"2.0"}},"scenes":[{{"nodes":[0]}}],"nodes":[{{"mesh":0,"name":"n"}}],
            "meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}},"mode":6}}]}}],
            "accessors":[{{"bufferView":0,"componentType":5126,"count":4,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}}],
            "bufferViews":[{{"buffer":0,"byteLength":48}}],
            "buffers":[{{"byteLength":48,"uri":"{uri}"}}]}}"#
        )
    };
    let good = dir.path().join("good.gltf");
    std::fs::write(&good, json("quad%20data.bin")).unwrap();
    let loaded = raypick_io::load(&good).unwrap();
    assert_eq!(loaded.geometry_names, ["n"]);

    let bad = dir.path().join("bad.gltf");
    std::fs::write(&bad, json("missing.bin")).unwrap();
    let error = raypick_io::load(&bad).unwrap_err();
    match &error {
        LoadError::MissingBuffer {
            uri,
            source_name,
            location,
            ..
        } => {
            assert_eq!(uri, "missing.bin");
            assert_eq!(source_name.path(), Some(bad.as_path()));
            assert_eq!(location, &Location::Json("/buffers/0".into()));
        }
        other => panic!("{other}"),
    }
    assert!(error.to_string().contains("bad.gltf"), "{error}");
    // From memory there is no folder to resolve the URI against.
    let error = gltf::parse(json("quad%20data.bin").as_bytes(), &Default::default()).unwrap_err();
    assert!(matches!(error, LoadError::MissingBuffer { .. }), "{error}");
}

#[test]
fn load_names_the_path_and_sniffs_content() {
    let dir = tempfile::tempdir().unwrap();
    for extension in ["obj", "stl", "ply", "gltf", "glb", "xyz"] {
        let path = dir.path().join(format!("empty.{extension}"));
        std::fs::write(&path, b"").unwrap();
        let error = raypick_io::load(&path).unwrap_err();
        assert!(matches!(error, LoadError::Empty { .. }), "{error}");
        assert_eq!(error.source_name().path(), Some(path.as_path()));
    }
    // A PLY file with an OBJ extension is read as PLY; a garbage .xyz file is unknown.
    let path = dir.path().join("really-a-ply.obj");
    std::fs::write(&path, read("ply/bunny-res2-ascii.ply")).unwrap();
    let loaded = raypick_io::load(&path).unwrap();
    assert_eq!(loaded.format, raypick_io::Format::Ply);
    assert_eq!(loaded.geometry_names, ["really-a-ply"]);
    let path = dir.path().join("garbage.xyz");
    std::fs::write(&path, [0xffu8, 0, 7, 9, 200, 13, 10, 1]).unwrap();
    assert!(matches!(
        raypick_io::load(&path).unwrap_err(),
        LoadError::UnknownFormat { .. }
    ));
    let error = raypick_io::load(dir.path().join("no-such-file.obj")).unwrap_err();
    assert!(matches!(error, LoadError::Io { .. }), "{error}");
}

/// Seeded random garbage and random byte flips of real files through every entry point: each
/// result is an error or a valid model (a small in-test fuzzer; `fuzz/` runs the long version).
#[test]
fn garbage_and_mutations_never_panic_or_load_wrong() {
    let mut rng = Pcg64::seed_from_u64(0x5eed_0005);
    let seeds: Vec<(Vec<u8>, &str)> = vec![
        (read("gltf/Box.gltf"), "gltf"),
        (read("gltf/BoxInterleaved.glb"), "glb"),
        (read("gltf/SimpleMeshes.gltf"), "gltf"),
        (read("stl/multibody.stl"), "stl"),
        (read("stl/20mm-xyz-cube.stl"), "stl"),
        (read("ply/bunny-res2-ascii.ply")[..4000].to_vec(), "ply"),
        (read("ply/horse.ply")[..6000].to_vec(), "ply"),
        (read("obj/spot.obj")[..6000].to_vec(), "obj"),
    ];
    for round in 0..300 {
        let garbage: Vec<u8> = (0..rng.gen_range(0..600)).map(|_| rng.gen()).collect();
        for extension in ["obj", "stl", "ply", "gltf", "glb", "bin"] {
            if let Ok(model) = parse_any(&garbage, extension) {
                assert_valid(&model, &format!("garbage round {round}"));
            }
        }
        for (seed, extension) in &seeds {
            let mut mutated = seed.clone();
            for _ in 0..rng.gen_range(1..8) {
                let at = rng.gen_range(0..mutated.len());
                mutated[at] = rng.gen();
            }
            if let Ok(model) = parse_any(&mutated, extension) {
                assert_valid(&model, &format!("mutation round {round} of a .{extension}"));
            }
        }
    }
}

/// Every input the fuzzers (`fuzz/`) made crash, kept in `tests/fuzz-regressions/` and named
/// `<format>-<what>`: each must now be a typed error, or a valid model whose scene builds.
#[test]
fn fuzz_finds_stay_fixed() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fuzz-regressions");
    let mut count = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let direct = match name.split('-').next().unwrap() {
            "gltf" => gltf::parse(&bytes, &Default::default()),
            "ply" => ply::parse(&bytes, &Default::default()),
            "stl" => stl::parse(&bytes, &Default::default()),
            "obj" => obj::parse(&bytes, &Default::default()),
            other => panic!("{name}: unknown format prefix {other}"),
        };
        for model in [direct, parse_any(&bytes, "bin")].into_iter().flatten() {
            assert_valid(&model, &name);
            model
                .to_scene()
                .unwrap_or_else(|error| panic!("{name}: {error}"));
        }
        count += 1;
    }
    assert!(count >= 2);
}

#[test]
fn gltf_position_accessor_out_of_range() {
    // Fuzz find: gltf-json's validation indexed `accessors` with this index unchecked.
    let text = String::from_utf8(tiny_gltf(&QUAD, &[0, 1, 2], "", r#"[{"mesh":0}]"#)).unwrap();
    let text = text.replace(r#""POSITION":0"#, r#""POSITION":7"#);
    let error = gltf::parse(text.as_bytes(), &Default::default()).unwrap_err();
    assert_eq!(
        error.location(),
        Some(&Location::Json(
            "/meshes/0/primitives/0/attributes/POSITION".into()
        )),
        "{error}"
    );
}

#[test]
fn gltf_transforms_that_overflow_when_composed() {
    // Each scale is finite; their product is not.
    let nodes =
        r#"[{"children":[1],"scale":[1e30,1e30,1e30]},{"mesh":0,"scale":[1e30,1e30,1e30]}]"#;
    let error = gltf::parse(
        &tiny_gltf(&QUAD, &[0, 1, 2], "", nodes),
        &Default::default(),
    )
    .unwrap_err();
    assert!(matches!(error, LoadError::NonFinite { .. }), "{error}");
    assert_eq!(error.location(), Some(&Location::Json("/nodes/1".into())));
}

#[test]
fn gltf_zero_scale_instances_are_baked_not_refused() {
    // Fuzz find: a node with a zero scale (legal glTF) made the scene builder refuse the instance.
    let nodes = r#"[{"mesh":0,"name":"flat","scale":[1,1,0]},{"mesh":0,"name":"gone","scale":[0,0,0]},{"mesh":0,"name":"moved","translation":[5,0,0]}]"#;
    let mut text = String::from_utf8(tiny_gltf(&QUAD, &[0, 1, 2, 0, 2, 3], "", nodes)).unwrap();
    text = text.replace(r#""nodes":[0]"#, r#""nodes":[0,1,2]"#);
    let model = gltf::parse(text.as_bytes(), &Default::default()).unwrap();
    let loaded = model.into_loaded(raypick_io::Format::Gltf).unwrap();
    assert_eq!(loaded.geometry_names, ["flat", "gone", "moved"]);
    assert_eq!(
        loaded
            .notes
            .iter()
            .filter(|n| n.contains("singular"))
            .count(),
        2
    );
    let down = raypick::glam::Vec3::new(0.0, 0.0, -1.0);
    for (x, name) in [(0.25, "flat"), (5.25, "moved")] {
        let ray = raypick::Ray::new(raypick::glam::Vec3::new(x, 0.25, 1.0), down);
        let (hit, path) = loaded.scene.intersect_path(&ray).expect(name);
        assert_eq!(loaded.name_of(&hit, &path), Some(name));
        assert!((hit.t - 1.0).abs() < 1e-6);
    }
}
