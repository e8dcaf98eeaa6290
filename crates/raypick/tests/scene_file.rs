//! Scene files (`raypick::scene::file`): a saved and loaded scene answers every query bit for bit
//! as the built one, and every damaged file is refused with its typed error, never a panic.
//!
//! The scenes hold meshes, sphere sets and instances (a placed scene shared by several instances,
//! one mirrored), names and masks, in both mesh tree kinds (float and quantized), plus the bunny
//! and the conference room from `../shared/data`. Damage: wrong magic, another version, a broken
//! byte-order marker or reserved word, a bad checksum, truncation at every field boundary and at
//! random lengths (with the header left as it was, and with the header's length and checksum
//! made to match, so the decoder itself meets the short field), random byte flips (idem), and
//! out-of-range indices and node links with the checksum recomputed, so that the checks behind
//! the checksum catch them.

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use raypick::bvh::{BuildConfig, ValidationError};
use raypick::geom::triangle::Culling;
use raypick::glam::{Affine3A, Quat, Vec3};
use raypick::scene::file::{layout, FieldSpan, HEADER_BYTES, VERSION};
use raypick::scene::shapes;
use raypick::{
    Aabb, BuildError, QueryOptions, Ray, Scene, SceneBuilder, SceneFileError, Spheres, TriMesh,
};

mod common;
use common::{read_obj, DATA};

/// A placed scene: a torus and a box, named and masked.
fn part() -> Arc<Scene> {
    let mut b = SceneBuilder::new();
    let torus = b.add_mesh(shapes::torus(1.0, 0.3, 24, 12).with_name("torus"));
    b.set_mask(torus, 0b10);
    b.add_mesh(shapes::cuboid(Vec3::new(0.4, 0.2, 0.6)).with_name("box"));
    Arc::new(b.build().expect("valid part"))
}

/// A placed scene of spheres only.
fn balls() -> Arc<Scene> {
    let mut b = SceneBuilder::new();
    b.add_spheres(
        Spheres::new(
            vec![
                Vec3::ZERO,
                Vec3::new(1.5, 0.0, 0.0),
                Vec3::new(0.0, 1.5, 0.3),
            ],
            vec![0.5, 0.25, 0.7],
        )
        .with_name("balls"),
    );
    Arc::new(b.build().expect("valid balls"))
}

/// Meshes, spheres, instances sharing `part` (one mirrored), another placed scene, names, masks.
fn mixed(config: BuildConfig) -> Scene {
    let (part, balls) = (part(), balls());
    let mut b = SceneBuilder::with_config(config);
    b.add_mesh(shapes::ground(20.0, 8).with_name("ground"));
    b.add_mesh(
        shapes::icosphere(3, Vec3::new(3.0, 1.0, -2.0), 1.2)
            .with_name("ball")
            .with_mask(0b100),
    );
    b.add_mesh(TriMesh::new(Vec::new(), Vec::new()).with_name("empty"));
    let mut rng = Pcg64::seed_from_u64(36);
    let mut centers = Vec::new();
    for _ in 0..40 {
        centers.push(Vec3::new(
            rng.gen_range(-8.0..8.0),
            rng.gen_range(0.2..3.0),
            rng.gen_range(-8.0..8.0),
        ));
    }
    let radii = (0..40).map(|_| rng.gen_range(0.05..0.6)).collect();
    let s = b.add_spheres(Spheres::new(centers, radii));
    b.set_name(s, "spheres");
    b.set_mask(s, 0b1);
    for k in 0..4 {
        let placed = Affine3A::from_scale_rotation_translation(
            Vec3::splat(0.5 + 0.25 * k as f32),
            Quat::from_rotation_y(0.7 * k as f32),
            Vec3::new(-4.0 + 2.5 * k as f32, 1.0, 3.0),
        );
        let id = b.add_instance(part.clone(), placed);
        b.set_name(id, format!("part {k}"));
        if k == 2 {
            b.set_mask(id, 0b1010);
        }
    }
    let mirrored = Affine3A::from_scale(Vec3::new(-1.0, 1.0, 1.0))
        * Affine3A::from_translation(Vec3::new(2.0, 1.0, -5.0));
    b.add_instance(part, mirrored);
    b.add_instance(
        balls.clone(),
        Affine3A::from_translation(Vec3::new(0.0, 2.0, 6.0)),
    );
    b.add_instance(balls, Affine3A::from_rotation_x(0.3));
    b.build().expect("valid scene")
}

fn random_rays(bounds: Aabb, n: usize, seed: u64) -> Vec<Ray> {
    let mut rng = Pcg64::seed_from_u64(seed);
    let (c, r) = (bounds.center(), bounds.extent().length() * 0.5);
    (0..n)
        .map(|_| {
            let target = bounds.min + bounds.extent() * Vec3::new(rng.gen(), rng.gen(), rng.gen());
            let dir = Vec3::new(
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
            );
            let origin = if rng.gen_bool(0.3) {
                // From inside the scene's box.
                bounds.min + bounds.extent() * Vec3::new(rng.gen(), rng.gen(), rng.gen())
            } else {
                c + dir.normalize_or(Vec3::X) * 2.0 * r
            };
            Ray::new(origin, (target - origin).normalize_or(Vec3::Y))
        })
        .collect()
}

/// Every query of `loaded` against `built`, compared through `Debug` (which prints each float's
/// shortest exact form, so equal strings mean equal bits, signs of zeros included).
fn assert_same_answers(built: &Scene, loaded: &Scene, rays: &[Ray]) -> usize {
    let filter = |h: &raypick::Hit, _: &raypick::InstancePath| h.prim % 3 != 1;
    let options = [
        QueryOptions::default(),
        QueryOptions {
            culling: Culling::Back,
            ..QueryOptions::default()
        },
        QueryOptions {
            mask: 0b10,
            ..QueryOptions::default()
        },
        QueryOptions {
            filter: Some(&filter),
            ..QueryOptions::default()
        },
    ];
    let mut hits = 0;
    for opts in &options {
        for (k, ray) in rays.iter().enumerate() {
            let a = built.intersect_with(ray, opts);
            hits += usize::from(a.is_some());
            assert_eq!(
                format!("{a:?}"),
                format!("{:?}", loaded.intersect_with(ray, opts)),
                "ray {k}"
            );
            assert_eq!(
                built.occluded_with(ray, opts),
                loaded.occluded_with(ray, opts)
            );
            assert_eq!(
                format!("{:?}", built.intersect_all_with(ray, opts)),
                format!("{:?}", loaded.intersect_all_with(ray, opts)),
                "ray {k}"
            );
            assert_eq!(
                built.count_intersections_with(ray, opts),
                loaded.count_intersections_with(ray, opts)
            );
        }
        let (mut a, mut b) = (vec![None; rays.len()], vec![None; rays.len()]);
        built.intersect_into(rays, opts, &mut a);
        loaded.intersect_into(rays, opts, &mut b);
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        let (mut a, mut b) = (vec![false; rays.len()], vec![false; rays.len()]);
        built.occluded_into(rays, opts, &mut a);
        loaded.occluded_into(rays, opts, &mut b);
        assert_eq!(a, b);
    }
    hits
}

/// `Scene::from_bytes(bytes)`, once `Scene::from_reader` (the file read a piece at a time) and
/// `Scene::load` of the bytes written to a file (read at positions, on all cores, on Unix) have
/// given the same scene (the same bytes saved) or the same error.
fn read(bytes: &[u8]) -> Result<Scene, SceneFileError> {
    static FILES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let whole = Scene::from_bytes(bytes);
    let streamed = Scene::from_reader(bytes, bytes.len() as u64);
    let path = std::env::temp_dir().join(format!(
        "raypick-read-{}-{}.rpk",
        std::process::id(),
        FILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::write(&path, bytes).unwrap();
    let loaded = Scene::load(&path);
    std::fs::remove_file(&path).unwrap();
    for (how, other) in [("from_reader", &streamed), ("load", &loaded)] {
        match (&whole, other) {
            (Ok(a), Ok(b)) => assert!(a.to_bytes() == b.to_bytes(), "{how}: the loads differ"),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{how}"),
            (a, b) => panic!(
                "from_bytes: {:?}, {how}: {:?}",
                a.as_ref().err().map(ToString::to_string),
                b.as_ref().err().map(ToString::to_string)
            ),
        }
    }
    whole
}

fn round_trip(built: &Scene) -> Scene {
    let bytes = built.to_bytes();
    let loaded = read(&bytes).expect("a saved scene loads");
    assert_eq!(loaded.validate(), Ok(()));
    // Saving the loaded scene gives the same bytes: nothing was rebuilt or lost.
    assert!(
        loaded.to_bytes() == bytes,
        "the loaded scene saves to other bytes"
    );
    loaded
}

#[test]
fn a_loaded_scene_answers_bit_for_bit_as_the_built_one() {
    let compact = BuildConfig {
        compact: true,
        ..BuildConfig::FAST
    };
    for config in [BuildConfig::BALANCED, compact] {
        let built = mixed(config);
        let loaded = round_trip(&built);
        // The whole structure, every float and index, is the built one (the winding dipoles
        // are computed lazily and not stored; no query has computed them yet).
        assert_eq!(format!("{built:?}"), format!("{loaded:?}"));
        assert_eq!(loaded.config(), config);
        assert_eq!(loaded.geometry_name(0), Some("ground"));
        assert_eq!(loaded.geometry_name(3), Some("spheres"));
        assert_eq!(loaded.geometry_name(6), Some("part 2"));
        assert_eq!(loaded.geometry(1).map(|g| g.mask()), Some(0b100));
        assert_eq!(loaded.geometry(6).map(|g| g.mask()), Some(0b1010));
        // Shared placed scenes stay shared: written once, loaded once.
        let placed = |id| match loaded.geometry(id) {
            Some(raypick::Geometry::Instance(i)) => i.scene().clone(),
            other => panic!("geometry {id} is {other:?}"),
        };
        assert!(Arc::ptr_eq(&placed(4), &placed(8)));
        assert!(Arc::ptr_eq(&placed(9), &placed(10)));
        assert!(!Arc::ptr_eq(&placed(4), &placed(9)));
        assert_eq!(placed(4).geometry_name(0), Some("torus"));
        let rays = random_rays(built.bounds(), 3000, 1);
        let hits = assert_same_answers(&built, &loaded, &rays);
        assert!(hits > 3000, "{hits} hits: the rays should hit the scene");
    }
}

#[test]
fn a_scene_saved_to_a_file_loads_from_it() {
    let built = mixed(BuildConfig::BALANCED);
    let dir = std::env::temp_dir().join(format!("raypick-scene-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mixed.rpk");
    built.save(&path).unwrap();
    let mut via_writer = Vec::new();
    built.save_to_writer(&mut via_writer).unwrap();
    assert!(std::fs::read(&path).unwrap() == via_writer);
    let loaded = Scene::load(&path).unwrap();
    assert_eq!(format!("{built:?}"), format!("{loaded:?}"));
    // A stream is read no further than the length given, and one that ends before it fails.
    let len = via_writer.len() as u64;
    let mut longer = via_writer.clone();
    longer.extend_from_slice(b"more bytes");
    let from_longer = Scene::from_reader(&longer[..], len).unwrap();
    assert_eq!(format!("{built:?}"), format!("{from_longer:?}"));
    assert!(matches!(
        Scene::from_reader(&via_writer[..via_writer.len() / 2], len),
        Err(SceneFileError::Io(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof
    ));
    assert!(matches!(
        Scene::load(dir.join("missing.rpk")),
        Err(SceneFileError::Io(_))
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A reader that fails once `at` bytes of `bytes` have been read.
struct FailingAt<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl std::io::Read for FailingAt<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.at == 0 {
            return Err(std::io::Error::other("the disk went away"));
        }
        let n = out.len().min(self.at).min(self.bytes.len());
        out[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        self.at -= n;
        Ok(n)
    }
}

/// An array of many pieces (a mesh's 400,000 vertices, 4.8 MB) is read ahead of its decoding,
/// or from a file in pieces on all cores: the stream and the file give the scene the bytes in
/// memory give, and a stream that ends or fails inside the array is an I/O error.
#[test]
fn a_long_array_is_read_ahead_and_a_failing_stream_is_an_io_error() {
    let vertices: Vec<Vec3> = (0..400_000)
        .map(|i| Vec3::new(i as f32, (i % 7) as f32, 0.0))
        .collect();
    let mut b = SceneBuilder::new();
    b.add_mesh(TriMesh::new(vertices, vec![[0, 1, 2], [3, 4, 5]]));
    let built = b.build().unwrap();
    let bytes = built.to_bytes();
    assert!(bytes.len() > 4_800_000);
    let loaded = read(&bytes).unwrap();
    assert_eq!(format!("{built:?}"), format!("{loaded:?}"));
    let len = bytes.len() as u64;
    assert!(matches!(
        Scene::from_reader(&bytes[..bytes.len() / 2], len),
        Err(SceneFileError::Io(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof
    ));
    let failing = FailingAt {
        bytes: &bytes,
        at: bytes.len() / 2,
    };
    assert!(matches!(
        Scene::from_reader(failing, len),
        Err(SceneFileError::Io(e)) if e.to_string() == "the disk went away"
    ));
}

#[test]
fn empty_scenes_and_scenes_of_one_kind_round_trip() {
    let empty = SceneBuilder::new().build().unwrap();
    let mut spheres = SceneBuilder::new();
    spheres.add_spheres(Spheres::new(vec![Vec3::ONE], vec![0.5]));
    let spheres = spheres.build().unwrap();
    let mut empty_mesh = SceneBuilder::new();
    empty_mesh.add_mesh(TriMesh::new(vec![Vec3::ZERO], Vec::new()));
    let empty_mesh = empty_mesh.build().unwrap();
    for built in [empty, spheres, empty_mesh] {
        let loaded = round_trip(&built);
        assert_eq!(format!("{built:?}"), format!("{loaded:?}"));
    }
}

/// The real meshes: the bunny and the conference room, answers on incoherent rays bit for bit.
#[test]
fn real_models_round_trip() {
    for (model, rays) in [
        ("obj/stanford-bunny.obj", 20_000),
        ("scenes/conference.obj", 20_000),
    ] {
        if !std::path::Path::new(&format!("{DATA}{model}")).exists() {
            eprintln!("skipping {model}: not in {DATA}");
            continue;
        }
        let mut b = SceneBuilder::new();
        b.add_mesh(read_obj(model));
        let built = b.build().unwrap();
        let loaded = round_trip(&built);
        let rays = random_rays(built.bounds(), rays, 2);
        let opts = QueryOptions::default();
        let (mut a, mut l) = (vec![None; rays.len()], vec![None; rays.len()]);
        built.intersect_into(&rays, &opts, &mut a);
        loaded.intersect_into(&rays, &opts, &mut l);
        assert_eq!(format!("{a:?}"), format!("{l:?}"), "{model}");
        assert!(
            a.iter().filter(|h| h.is_some()).count() > rays.len() / 4,
            "{model}"
        );
        for ray in rays.iter().step_by(20) {
            assert_eq!(built.occluded(ray), loaded.occluded(ray));
            assert_eq!(
                format!("{:?}", built.intersect_all(ray)),
                format!("{:?}", loaded.intersect_all(ray))
            );
        }
    }
}

/// The header's payload length and checksum made to match `bytes`' payload, so that a damage
/// behind them reaches the decoder and the checks.
fn reseal(bytes: &mut [u8]) {
    let len = (bytes.len() - HEADER_BYTES) as u64;
    bytes[16..24].copy_from_slice(&len.to_le_bytes());
    let crc = crc32fast::hash(&bytes[HEADER_BYTES..]);
    bytes[24..28].copy_from_slice(&crc.to_le_bytes());
}

fn spans_of<'a>(spans: &'a [FieldSpan], field: &str) -> Vec<&'a FieldSpan> {
    spans.iter().filter(|s| s.place.field == field).collect()
}

#[test]
fn the_layout_covers_the_file_in_order() {
    let bytes = mixed(BuildConfig::BALANCED).to_bytes();
    let spans = layout(&bytes).unwrap();
    assert_eq!(spans[0].bytes, 0..8);
    assert_eq!(spans[0].place.field, "magic");
    for w in spans.windows(2) {
        assert_eq!(
            w[0].bytes.end, w[1].bytes.start,
            "{:?} then {:?}",
            w[0], w[1]
        );
    }
    assert_eq!(spans.last().unwrap().bytes.end, bytes.len());
    // Three scenes: `part`, `balls`, then the saved one.
    assert_eq!(spans.iter().filter_map(|s| s.place.scene).max(), Some(2));
}

#[test]
fn a_damaged_header_is_refused_with_its_error() {
    let bytes = mixed(BuildConfig::FAST).to_bytes();
    let mut magic = bytes.clone();
    magic[3] = b'X';
    assert!(matches!(read(&magic), Err(SceneFileError::BadMagic { .. })));
    assert!(matches!(
        read(b"PK\x03\x04 a zip file"),
        Err(SceneFileError::BadMagic { .. })
    ));
    let mut version = bytes.clone();
    version[8..12].copy_from_slice(&(VERSION + 1).to_le_bytes());
    assert!(matches!(
        read(&version),
        Err(SceneFileError::UnsupportedVersion { found, supported })
            if found == VERSION + 1 && supported == VERSION
    ));
    let mut order = bytes.clone();
    order[12..16].copy_from_slice(&[1, 2, 3, 4]);
    assert!(matches!(
        read(&order),
        Err(SceneFileError::ByteOrder {
            found: [1, 2, 3, 4]
        })
    ));
    let mut crc = bytes.clone();
    crc[25] ^= 0x40;
    assert!(matches!(read(&crc), Err(SceneFileError::Checksum { .. })));
    let mut reserved = bytes.clone();
    reserved[30] = 1;
    assert!(matches!(
        read(&reserved),
        Err(SceneFileError::BadValue { at, .. }) if at.field == "reserved"
    ));
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(
        read(&longer),
        Err(SceneFileError::PayloadLength { .. })
    ));
    // Bytes after the last scene, with the header made to agree.
    reseal(&mut longer);
    assert!(matches!(
        read(&longer),
        Err(SceneFileError::BadValue { at, .. }) if at.field == "payload end"
    ));
}

#[test]
fn truncation_at_every_field_and_at_random_lengths_is_refused() {
    let bytes = mixed(BuildConfig::FAST).to_bytes();
    let spans = layout(&bytes).unwrap();
    let mut cuts: Vec<usize> = spans
        .iter()
        .flat_map(|s| [s.bytes.start, s.bytes.end - 1])
        .collect();
    let mut rng = Pcg64::seed_from_u64(7);
    cuts.extend((0..300).map(|_| rng.gen_range(0..bytes.len())));
    for cut in cuts {
        let short = &bytes[..cut];
        let err = read(short).expect_err("a truncated file loads");
        let header_whole = cut >= HEADER_BYTES;
        assert!(
            matches!(err, SceneFileError::PayloadLength { .. }) || !header_whole,
            "cut at {cut}: {err}"
        );
        if !header_whole {
            assert!(
                matches!(
                    err,
                    SceneFileError::Truncated { .. } | SceneFileError::BadMagic { .. }
                ),
                "cut at {cut}: {err}"
            );
            continue;
        }
        // The header made to agree: the decoder meets the end inside a field.
        let mut sealed = short.to_vec();
        reseal(&mut sealed);
        match read(&sealed) {
            Err(SceneFileError::Truncated { at, .. }) => assert!(!at.field.is_empty()),
            Err(e) => panic!("cut at {cut}: {e} (expected Truncated)"),
            Ok(_) => panic!("cut at {cut}: a truncated file loads"),
        }
    }
}

#[test]
fn random_byte_flips_are_refused_or_load_a_valid_scene() {
    let built = mixed(BuildConfig::FAST);
    let bytes = built.to_bytes();
    let mut rng = Pcg64::seed_from_u64(11);
    let mut loaded_anyway = 0;
    for round in 0..600 {
        let mut bad = bytes.clone();
        for _ in 0..rng.gen_range(1..4) {
            let at = rng.gen_range(HEADER_BYTES..bad.len());
            bad[at] ^= 1 << rng.gen_range(0..8);
        }
        assert!(
            matches!(read(&bad), Err(SceneFileError::Checksum { .. })),
            "round {round}: a flip behind the checksum"
        );
        reseal(&mut bad);
        // Behind a matching checksum: refused by a check, or a scene that is valid (a flipped
        // bit in a vertex that stays inside its leaf box, in a name, in a mask).
        if let Ok(scene) = read(&bad) {
            assert_eq!(scene.validate(), Ok(()), "round {round}");
            let _ = scene.intersect(&Ray::new(Vec3::new(0.0, 5.0, 0.0), Vec3::NEG_Y));
            loaded_anyway += 1;
        }
    }
    assert!(loaded_anyway < 600, "every flip went unnoticed");
}

/// Sets the `u32` (or the first four bytes) at `offset` and reseals.
fn set_u32(bytes: &[u8], offset: usize, value: u32) -> Vec<u8> {
    let mut bad = bytes.to_vec();
    bad[offset..offset + 4].copy_from_slice(&value.to_le_bytes());
    reseal(&mut bad);
    bad
}

#[test]
fn out_of_range_indices_and_links_behind_the_checksum_are_refused() {
    for config in [
        BuildConfig::FAST,
        BuildConfig {
            compact: true,
            ..BuildConfig::FAST
        },
    ] {
        let bytes = mixed(config).to_bytes();
        let spans = layout(&bytes).unwrap();
        let last = |field: &str| -> Vec<&FieldSpan> {
            spans_of(&spans, field)
                .into_iter()
                .filter(|s| s.place.scene == Some(2))
                .collect()
        };

        // An instance that places a scene not written before it.
        let inst = last("instance scene")[0];
        let err = read(&set_u32(&bytes, inst.bytes.start, 7)).unwrap_err();
        assert!(
            matches!(err, SceneFileError::OutOfRange { value: 7, max: 1, at } if at.scene == Some(2) && at.geometry == Some(4)),
            "{err}"
        );

        // A triangle's vertex index (the second span of `triangles` is the data).
        let tris = last("triangles")[1];
        let err = read(&set_u32(&bytes, tris.bytes.start + 4, 1 << 30)).unwrap_err();
        assert!(
            matches!(
                err,
                SceneFileError::Geometry { scene: 2, error: BuildError::IndexOutOfRange { geom: 0, triangle: 0, index, .. } }
                    if index == 1 << 30
            ),
            "{err}"
        );

        // A vertex made NaN.
        let verts = last("vertices")[1];
        let err = read(&set_u32(&bytes, verts.bytes.start, f32::NAN.to_bits())).unwrap_err();
        assert!(
            matches!(
                err,
                SceneFileError::Geometry {
                    error: BuildError::NonFiniteVertex { .. },
                    ..
                }
            ),
            "{err}"
        );

        // The top tree's root is interior: its right-child link (word 3) out of the array.
        let top = last("top tree nodes")[1];
        let err = read(&set_u32(&bytes, top.bytes.start + 12, 1_000_000)).unwrap_err();
        assert!(
            matches!(
                &err,
                SceneFileError::InvalidBvh { scene: 2, error } if error.geom.is_none()
                    && matches!(error.error, ValidationError::Layout { node: 0, right: 1_000_000, .. })
            ),
            "{err}"
        );

        // A sphere tree's primitive order naming a sphere that does not exist.
        let order = last("sphere tree order")[1];
        let err = read(&set_u32(&bytes, order.bytes.start, 40)).unwrap_err();
        assert!(
            matches!(
                &err,
                SceneFileError::InvalidBvh { scene: 2, error } if error.geom == Some(3)
                    && matches!(error.error, ValidationError::Permutation { .. })
            ),
            "{err}"
        );

        // The mesh tree's root: lane 0's link to a node past the end (index word, count 0).
        let nodes = last("mesh tree nodes")[1];
        let (index_word, count_at) = if config.compact {
            (nodes.bytes.start + 36, nodes.bytes.start + 116)
        } else {
            (nodes.bytes.start + 192, nodes.bytes.start + 224)
        };
        let mut bad = bytes.clone();
        bad[index_word..index_word + 4].copy_from_slice(&123_456u32.to_le_bytes());
        bad[count_at] = 0;
        if !config.compact {
            bad[count_at + 1..count_at + 4].fill(0);
        }
        reseal(&mut bad);
        let err = read(&bad).unwrap_err();
        assert!(
            matches!(
                &err,
                SceneFileError::InvalidBvh { scene: 2, error } if error.geom == Some(0)
                    && matches!(error.error, ValidationError::Layout { .. } | ValidationError::Reach { .. } | ValidationError::ChildOutside { .. })
            ),
            "{err}"
        );

        // The mesh tree's order naming a triangle past the last.
        let order = last("mesh tree order")[1];
        let err = read(&set_u32(&bytes, order.bytes.start, 10_000_000)).unwrap_err();
        assert!(
            matches!(&err, SceneFileError::InvalidBvh { scene: 2, error } if matches!(error.error, ValidationError::Permutation { .. })),
            "{err}"
        );

        // The tree's primitive count disagrees with the meshes.
        let prims = last("mesh tree primitives")[0];
        let err = read(&set_u32(&bytes, prims.bytes.start, 5)).unwrap_err();
        assert!(
            matches!(&err, SceneFileError::InvalidBvh { error, .. } if matches!(error.error, ValidationError::BoxCount { .. })),
            "{err}"
        );

        // The mesh tree's kind against the setting.
        let kind = last("mesh tree kind")[0];
        let mut bad = bytes.clone();
        bad[kind.bytes.start] = if config.compact { 1 } else { 2 };
        reseal(&mut bad);
        assert!(read(&bad).is_err());

        // An unknown geometry kind, and a count larger than the file.
        let kind = last("kind")[0];
        let mut bad = bytes.clone();
        bad[kind.bytes.start] = 9;
        reseal(&mut bad);
        assert!(matches!(
            read(&bad),
            Err(SceneFileError::BadValue { at, .. }) if at.field == "kind" && at.geometry == Some(0)
        ));
        let count = last("vertices")[0];
        let mut bad = bytes.clone();
        bad[count.bytes.start..count.bytes.end].copy_from_slice(&u64::MAX.to_le_bytes());
        reseal(&mut bad);
        assert!(matches!(
            read(&bad),
            Err(SceneFileError::Truncated { at, .. }) if at.field == "vertices"
        ));
        // A name that is not UTF-8.
        let name = last("name")[1];
        let mut bad = bytes.clone();
        bad[name.bytes.start] = 0xFF;
        reseal(&mut bad);
        assert!(matches!(
            read(&bad),
            Err(SceneFileError::BadValue { at, .. }) if at.field == "name"
        ));
    }
}
