//! The traps of /work/shared/data/README.md tried on the well-kept crates themselves, to record
//! why this crate hand-writes what it does (module docs). If one of these starts failing, the
//! crate fixed the trap and the hand-written part can go.

use std::io::Cursor;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/");

fn read(file: &str) -> Vec<u8> {
    std::fs::read(format!("{DATA}{file}")).unwrap()
}

/// `stl_io` probes with `read_line`: idler_riser.STL (header "solid idler_riser") passes only
/// because its bytes are not UTF-8 before the first newline, which fails the probe. A binary file
/// whose header is a clean text line starting with `solid ` is read as ASCII and rejected.
#[test]
fn stl_io_reads_a_binary_file_with_a_text_solid_header_as_ascii() {
    let real = read("stl/idler_riser.STL");
    let mesh = stl_io::read_stl(&mut Cursor::new(real.clone())).unwrap();
    assert_eq!(mesh.faces.len(), 1_572);

    let mut crafted = real;
    let header = b"solid idler_riser exported by a CAD tool\n";
    crafted[..80].fill(b' ');
    crafted[..header.len()].copy_from_slice(header);
    let result = stl_io::read_stl(&mut Cursor::new(crafted.clone()));
    assert!(
        result.is_err(),
        "stl_io now reads it: {:?}",
        result.map(|m| m.faces.len())
    );
    // This crate decides by the size check and reads it whole.
    let model = raypick_io::stl::parse(&crafted, &Default::default()).unwrap();
    assert_eq!(model.num_triangles_stored(), 1_572);
}

#[test]
fn stl_io_stops_at_the_first_endsolid() {
    let mesh = stl_io::read_stl(&mut Cursor::new(read("stl/multibody.stl"))).unwrap();
    assert!(mesh.faces.len() < 32, "stl_io now reads both solids");
    let model = raypick_io::stl::parse(&read("stl/multibody.stl"), &Default::default()).unwrap();
    assert_eq!(model.meshes.len(), 2);
    assert_eq!(model.num_triangles_stored(), 32);
}

fn tobj_load(text: &str) -> tobj::LoadResult {
    let options = tobj::LoadOptions {
        triangulate: true,
        single_index: true,
        ..Default::default()
    };
    tobj::load_obj_buf(&mut Cursor::new(text.as_bytes()), &options, |_| {
        Ok(Default::default())
    })
}

#[test]
fn tobj_turns_a_polyline_into_a_triangle_and_errors_without_a_line() {
    let (models, _) = tobj_load("v 0 0 0\nv 1 0 0\nv 0 1 0\nl 1 2 3\n").unwrap();
    assert_eq!(
        models[0].mesh.indices.len(),
        3,
        "tobj no longer triangulates `l`"
    );
    // This crate ignores `l` (no triangles in the file).
    assert!(
        raypick_io::obj::parse(b"v 0 0 0\nv 1 0 0\nv 0 1 0\nl 1 2 3\n", &Default::default())
            .is_err()
    );

    // An out-of-range index: tobj's error is a bare enum value, this crate's names the line.
    let bad = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 2 9\n";
    assert_eq!(
        tobj_load(bad).unwrap_err(),
        tobj::LoadError::FaceVertexOutOfBounds
    );
    let error = raypick_io::obj::parse(bad.as_bytes(), &Default::default()).unwrap_err();
    assert_eq!(error.location(), Some(&raypick_io::Location::Line(5)));
}

#[test]
fn ply_rs_drops_a_repeated_property_name_silently() {
    use ply_rs::parser::Parser;
    use ply_rs::ply::DefaultElement;
    let header = "ply\nformat binary_little_endian 1.0\nelement vertex 1\nproperty float x\nproperty float x\nproperty float z\nend_header\n";
    let parsed = Parser::<DefaultElement>::new()
        .read_header(&mut Cursor::new(header.as_bytes()))
        .unwrap();
    assert_eq!(
        parsed.elements["vertex"].properties.len(),
        2,
        "ply-rs now keeps both"
    );
    let error = raypick_io::ply::parse(header.as_bytes(), &Default::default()).unwrap_err();
    assert_eq!(
        error.location(),
        Some(&raypick_io::Location::Line(3)),
        "{error}"
    );
}

#[test]
fn ply_rs_reads_tristrips_as_a_plain_list() {
    use ply_rs::parser::Parser;
    use ply_rs::ply::{DefaultElement, Property};
    let ply = Parser::<DefaultElement>::new()
        .read_ply(&mut Cursor::new(read("ply/igea.ply")))
        .unwrap();
    assert!(
        !ply.payload.contains_key("face"),
        "igea has no face element"
    );
    let strips = &ply.payload["tristrips"][0]["vertex_indices"];
    let Property::ListInt(indices) = strips else {
        panic!("{strips:?}");
    };
    assert_eq!(indices.len(), 373_830);
    // Each strip of k indices is k − 2 triangles: the README's 268,686.
    let triangles: usize = indices
        .split(|&i| i == -1)
        .map(|s| s.len().saturating_sub(2))
        .sum();
    assert_eq!(triangles, 268_686);
}
