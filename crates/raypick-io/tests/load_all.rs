//! Every model in the shared data set loads, with the triangle (and glTF instance) counts that
//! /work/shared/data/README.md lists (computed there with an independent parser and trimesh).

use raypick_io::{load, parse_file, Format, LoadOptions};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/");

struct Expect {
    file: &'static str,
    format: Format,
    /// Triangles in the world (each instance counted).
    world: usize,
    /// Triangles stored (each mesh counted once).
    unique: usize,
    /// Meshes in the model (OBJ groups, STL solids, glTF meshes used by the scene).
    meshes: usize,
    /// glTF nodes that reference a mesh in the default scene (0 for the other formats).
    instances: usize,
}

const fn e(
    file: &'static str,
    format: Format,
    world: usize,
    unique: usize,
    meshes: usize,
    instances: usize,
) -> Expect {
    Expect {
        file,
        format,
        world,
        unique,
        meshes,
        instances,
    }
}

/// The README's table. Instance counts for the glTF files come from walking each default scene's
/// node tree in Python (json module) and counting nodes with a `mesh`.
const TABLE: &[Expect] = &[
    e("obj/stanford-bunny.obj", Format::Obj, 69_451, 69_451, 1, 0),
    e("obj/teapot.obj", Format::Obj, 6_320, 6_320, 1, 0),
    e("obj/spot.obj", Format::Obj, 5_856, 5_856, 1, 0),
    e("obj/beast.obj", Format::Obj, 64_618, 64_618, 1, 0),
    e("obj/ogre.obj", Format::Obj, 124_008, 124_008, 1, 0),
    e("obj/nefertiti.obj", Format::Obj, 99_938, 99_938, 1, 0),
    e("ply/igea.ply", Format::Ply, 268_686, 268_686, 1, 0),
    e("ply/horse.ply", Format::Ply, 96_966, 96_966, 1, 0),
    e(
        "ply/bunny-res2-ascii.ply",
        Format::Ply,
        16_301,
        16_301,
        1,
        0,
    ),
    e("stl/20mm-xyz-cube.stl", Format::Stl, 260, 260, 1, 0),
    e("stl/idler_riser.STL", Format::Stl, 1_572, 1_572, 1, 0),
    e("stl/featuretype.STL", Format::Stl, 3_476, 3_476, 1, 0),
    e("stl/1002_tray_bottom.STL", Format::Stl, 4_520, 4_520, 1, 0),
    e("stl/multibody.stl", Format::Stl, 32, 32, 2, 0),
    e("gltf/Box.gltf", Format::Gltf, 12, 12, 1, 1),
    e("gltf/BoxAnimated.gltf", Format::Gltf, 254, 254, 2, 2),
    e("gltf/BoxInterleaved.glb", Format::Gltf, 12, 12, 1, 1),
    e("gltf/BoxTextured.glb", Format::Gltf, 12, 12, 1, 1),
    e("gltf/Duck.glb", Format::Gltf, 4_212, 4_212, 1, 1),
    e("gltf/CesiumMilkTruck.glb", Format::Gltf, 3_624, 2_856, 2, 3),
    e(
        "gltf/2CylinderEngine.glb",
        Format::Gltf,
        121_496,
        75_730,
        29,
        67,
    ),
    e("gltf/Fox.glb", Format::Gltf, 576, 576, 1, 1),
    e("gltf/SimpleMeshes.gltf", Format::Gltf, 2, 1, 1, 2),
    e("gltf/MultipleScenes.gltf", Format::Gltf, 2, 2, 1, 1),
    e(
        "scenes/sponza-dabrovic.obj",
        Format::Obj,
        66_454,
        66_454,
        34,
        0,
    ),
    e("scenes/sibenik.obj", Format::Obj, 75_284, 75_284, 1, 0),
    e("scenes/conference.obj", Format::Obj, 331_179, 331_179, 1, 0),
];

#[test]
fn every_shared_model_parses_with_the_readme_counts() {
    assert_eq!(TABLE.len(), 27, "the data README lists 27 model files");
    let mut failures = Vec::new();
    for expect in TABLE {
        let path = format!("{DATA}{}", expect.file);
        let (format, model) = match parse_file(&path, &LoadOptions::default()) {
            Ok(parsed) => parsed,
            Err(error) => {
                failures.push(format!("{}: {error}", expect.file));
                continue;
            }
        };
        let got = (
            format,
            model.num_triangles_in_world(),
            model.num_triangles_stored(),
            model.meshes.len(),
            model.instances.len(),
        );
        let want = (
            expect.format,
            expect.world,
            expect.unique,
            expect.meshes,
            expect.instances,
        );
        if got != want {
            failures.push(format!("{}: got {got:?}, want {want:?}", expect.file));
        }
        for mesh in &model.meshes {
            let n = mesh.vertices.len();
            assert!(
                mesh.vertices.iter().all(|v| v.is_finite()),
                "{}",
                expect.file
            );
            assert!(
                mesh.triangles.iter().flatten().all(|&i| (i as usize) < n),
                "{}",
                expect.file
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_shared_model_builds_a_scene() {
    for expect in TABLE {
        let loaded =
            load(format!("{DATA}{}", expect.file)).unwrap_or_else(|error| panic!("{error}"));
        // Triangles placed in the world: each instance's sub-scene counted once per placement.
        let world: usize = (0..loaded.scene.num_geometries() as u32)
            .map(|id| match loaded.scene.geometry(id) {
                Some(raypick::Geometry::Instance(instance)) => instance.scene().num_triangles(),
                Some(raypick::Geometry::Mesh(mesh)) => mesh.num_triangles(),
                _ => 0,
            })
            .sum();
        assert_eq!(world, expect.world, "{}", expect.file);
        if expect.instances == 0 {
            assert_eq!(
                loaded.scene.num_triangles(),
                expect.unique,
                "{}",
                expect.file
            );
        }
        let top_level = if expect.instances > 0 {
            expect.instances
        } else {
            expect.meshes
        };
        assert_eq!(loaded.scene.num_geometries(), top_level, "{}", expect.file);
        assert_eq!(loaded.geometry_names.len(), top_level, "{}", expect.file);
        for (id, name) in loaded.geometry_names.iter().enumerate() {
            assert_eq!(loaded.scene.geometry_name(id as u32), Some(name.as_str()));
        }
    }
}

/// Reference: the `f` lines of the file, read with nothing but `split_whitespace`.
#[test]
fn bunny_triangle_i_is_the_ith_face_line() {
    let path = format!("{DATA}obj/stanford-bunny.obj");
    let text = std::fs::read_to_string(&path).unwrap();
    let reference: Vec<[u32; 3]> = text
        .lines()
        .filter(|line| line.starts_with("f "))
        .map(|line| {
            let v: Vec<u32> = line[2..]
                .split_whitespace()
                .map(|t| t.split('/').next().unwrap().parse::<u32>().unwrap() - 1)
                .collect();
            assert_eq!(v.len(), 3);
            [v[0], v[1], v[2]]
        })
        .collect();
    let (_, model) = parse_file(&path, &LoadOptions::default()).unwrap();
    assert_eq!(model.meshes[0].triangles, reference);
    assert_eq!(model.meshes[0].vertices.len(), 35_947);
}

#[test]
fn names_survive_loading() {
    let truck = load(format!("{DATA}gltf/CesiumMilkTruck.glb")).unwrap();
    assert!(
        truck.mesh_names.iter().any(|name| name == "Wheels"),
        "{:?}",
        truck.mesh_names
    );
    let wheels = truck
        .mesh_names
        .iter()
        .position(|name| name == "Wheels")
        .unwrap();
    assert_eq!(
        truck.geometry_mesh.iter().filter(|&&m| m == wheels).count(),
        2
    );

    let sponza = load(format!("{DATA}scenes/sponza-dabrovic.obj")).unwrap();
    let mut names = sponza.geometry_names.clone();
    names.sort();
    names.dedup();
    assert!(
        names.len() > 1 && names.iter().all(|n| !n.is_empty()),
        "{names:?}"
    );

    let multibody = load(format!("{DATA}stl/multibody.stl")).unwrap();
    assert_eq!(multibody.geometry_names.len(), 2);
}

#[test]
fn fox_is_in_bind_pose() {
    let (_, model) = parse_file(format!("{DATA}gltf/Fox.glb"), &LoadOptions::default()).unwrap();
    let mut min = raypick::glam::Vec3::splat(f32::INFINITY);
    let mut max = -min;
    for instance in &model.instances {
        for &v in &model.meshes[instance.mesh].vertices {
            let p = instance.world_from_object.transform_point3(v);
            min = min.min(p);
            max = max.max(p);
        }
    }
    let mut extent = (max - min).to_array();
    extent.sort_by(f32::total_cmp);
    // README: "In the bind pose the bounds are about 25 × 79 × 155 units."
    for (got, want) in extent.iter().zip([25.0, 79.0, 155.0]) {
        assert!((got - want).abs() < 1.0, "extent {extent:?}");
    }
    assert!(
        model.notes.iter().any(|note| note.contains("skin")),
        "{:?}",
        model.notes
    );
}

/// BoxInterleaved.glb stores POSITION and NORMAL interleaved (byteStride 24): read with the stride,
/// the positions are the ±0.5 cube corners, as in Box.gltf; read without it they would mix in the
/// unit normals' components (0 and ±1).
#[test]
fn interleaved_positions_use_the_stride() {
    for file in ["gltf/BoxInterleaved.glb", "gltf/Box.gltf"] {
        let (_, model) = parse_file(format!("{DATA}{file}"), &LoadOptions::default()).unwrap();
        let vertices = &model.meshes[0].vertices;
        assert_eq!(vertices.len(), 24, "{file}");
        for v in vertices {
            assert!(
                v.abs().cmpeq(raypick::glam::Vec3::splat(0.5)).all(),
                "{file}: {v}"
            );
        }
    }
}
