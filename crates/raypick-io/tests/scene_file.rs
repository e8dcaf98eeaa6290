//! Scene files through the loader: a model built, saved and read back by `raypick_io::load` gives
//! the same names and answers bit for bit, and is found by its content whatever its extension;
//! damaged files and budgets give `LoadError`s.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use raypick::glam::Vec3;
use raypick::{QueryOptions, Ray};
use raypick_io::{Format, Instancing, LoadError, LoadOptions};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/");

fn rays(bounds: raypick::Aabb, n: usize) -> Vec<Ray> {
    let mut rng = Pcg64::seed_from_u64(3);
    let (c, r) = (bounds.center(), bounds.extent().length() * 0.5);
    (0..n)
        .map(|_| {
            let target = bounds.min + bounds.extent() * Vec3::new(rng.gen(), rng.gen(), rng.gen());
            let from = Vec3::new(
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
            );
            let origin = c + from.normalize_or(Vec3::X) * 2.0 * r;
            Ray::new(origin, (target - origin).normalize())
        })
        .collect()
}

#[test]
fn models_saved_as_scene_files_load_with_their_names_and_answers() {
    let dir = tempfile::tempdir().unwrap();
    for (model, instancing) in [
        ("scenes/conference.obj", Instancing::BakeSingleUse),
        ("gltf/2CylinderEngine.glb", Instancing::Shared),
        ("gltf/CesiumMilkTruck.glb", Instancing::Shared),
    ] {
        let path = format!("{DATA}{model}");
        if !std::path::Path::new(&path).exists() {
            eprintln!("skipping {model}: not in {DATA}");
            continue;
        }
        let options = LoadOptions {
            instancing,
            ..LoadOptions::default()
        };
        let built = raypick_io::load_with(&path, &options).unwrap();
        let file = dir.path().join("model.rpk");
        built.scene.save(&file).unwrap();
        let loaded = raypick_io::load(&file).unwrap();
        assert_eq!(loaded.format, Format::Scene);
        assert_eq!(loaded.geometry_names, built.geometry_names, "{model}");
        assert_eq!(
            loaded.geometry_mesh.len(),
            built.geometry_mesh.len(),
            "{model}"
        );
        // Instances of one glTF mesh share one mesh entry, as the glTF loader's do.
        for i in 0..built.geometry_mesh.len() {
            for j in 0..i {
                assert_eq!(
                    built.geometry_mesh[i] == built.geometry_mesh[j],
                    loaded.geometry_mesh[i] == loaded.geometry_mesh[j],
                    "{model}: geometries {j} and {i}"
                );
            }
        }
        let rays = rays(built.scene.bounds(), 20_000);
        let opts = QueryOptions::default();
        let a = built.scene.intersect_batch(&rays, &opts);
        let b = loaded.scene.intersect_batch(&rays, &opts);
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{model}");
        assert!(a.iter().filter(|h| h.is_some()).count() > 1000, "{model}");
        // Found by its content under another name.
        let renamed = dir.path().join("model.obj");
        std::fs::copy(&file, &renamed).unwrap();
        assert_eq!(raypick_io::load(&renamed).unwrap().format, Format::Scene);
    }
}

#[test]
fn damaged_scene_files_and_budgets_give_load_errors() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = raypick::SceneBuilder::new();
    b.add_mesh(raypick::scene::shapes::icosphere(2, Vec3::ZERO, 1.0));
    let scene = b.build().unwrap();
    let bytes = scene.to_bytes();
    let file = dir.path().join("ball.rpk");

    std::fs::write(&file, &bytes[..bytes.len() - 3]).unwrap();
    let err = raypick_io::load(&file).unwrap_err();
    assert!(matches!(
        &err,
        LoadError::SceneFile {
            error: raypick::SceneFileError::PayloadLength { .. },
            ..
        }
    ));
    assert!(err.to_string().contains("ball.rpk"), "{err}");

    // The extension alone sends a file that is not one to the scene file reader.
    std::fs::write(&file, b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n").unwrap();
    assert!(matches!(
        raypick_io::load(&file),
        Err(LoadError::SceneFile {
            error: raypick::SceneFileError::BadMagic { .. },
            ..
        })
    ));

    std::fs::write(&file, &bytes).unwrap();
    let tight = LoadOptions::default().with_max_triangles(10);
    assert!(matches!(
        raypick_io::load_with(&file, &tight),
        Err(LoadError::TooManyTriangles {
            format: Format::Scene,
            ..
        })
    ));
    let small = LoadOptions::default().with_max_bytes(100);
    assert!(matches!(
        raypick_io::load_with(&file, &small),
        Err(LoadError::TooManyBytes { .. })
    ));
    // The model parsers do not take scene files.
    assert!(matches!(
        raypick_io::parse_bytes(&bytes, None, &LoadOptions::default()),
        Err(LoadError::Unsupported {
            format: Format::Scene,
            ..
        })
    ));
}

/// A scene saved from a hierarchy load keeps no node table, but its instances keep their nodes'
/// names: read back, a hit is named by the node it struck, as the hierarchy load names it.
#[test]
fn scene_files_saved_from_hierarchy_loads_name_the_node_struck() {
    let dir = tempfile::tempdir().unwrap();
    let mut nested_hits = 0;
    let gltf = std::path::Path::new(DATA).join("gltf");
    let Ok(entries) = std::fs::read_dir(&gltf) else {
        eprintln!("skipping: no {}", gltf.display());
        return;
    };
    let mut models: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    models.sort();
    for path in models {
        let options = LoadOptions {
            instancing: Instancing::Hierarchy,
            ..LoadOptions::default()
        };
        let Ok(built) = raypick_io::load_with(&path, &options) else {
            continue;
        };
        // A node whose transform cannot be inverted is baked into its parent's scene, under
        // its parent's instance: the file names it by that parent.
        if built.notes.iter().any(|n| n.contains("baked")) {
            continue;
        }
        let file = dir.path().join("model.rpk");
        built.scene.save(&file).unwrap();
        let loaded = raypick_io::load(&file).unwrap();
        for ray in rays(built.scene.bounds(), 3000) {
            let (Some((hit, p)), Some((hit2, p2))) = (
                built.scene.intersect_path(&ray),
                loaded.scene.intersect_path(&ray),
            ) else {
                continue;
            };
            assert_eq!((hit, p), (hit2, p2));
            assert_eq!(
                loaded.name_of(&hit, &p),
                built.name_of(&hit, &p),
                "{}: path {:?}",
                path.display(),
                p.as_slice()
            );
            nested_hits += usize::from(p.as_slice().len() > 1);
        }
    }
    assert!(
        nested_hits > 100,
        "{nested_hits} hits through nested instances"
    );
}
