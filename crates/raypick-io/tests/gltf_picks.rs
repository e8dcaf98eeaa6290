//! Picks on loaded glTF scenes (node transforms, shared meshes as instances) agree with the same
//! geometry placed by hand: literal coordinates for SimpleMeshes and Box, and every instance's
//! vertices transformed on the CPU (no instancing) for the truck and the engine; and the two
//! instancing policies (nodes used once baked, or every node an instance) answer alike.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use raypick::glam::{Mat3, Vec3};
use raypick::{Hit, Ray, Scene, SceneBuilder, TriMesh};
use raypick_io::{load, load_with, parse_file, Instancing, LoadOptions};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/");

/// Rays from points around the scene's bounds towards random points inside them.
fn rays_around(scene: &Scene, n: usize, seed: u64) -> Vec<Ray> {
    let bounds = scene.bounds();
    let center = bounds.center();
    let radius = (bounds.max - bounds.min).length().max(1e-3);
    let mut rng = Pcg64::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let dir = Vec3::new(
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
            );
            let origin = center + dir.normalize_or(Vec3::X) * radius;
            let target = bounds.min
                + (bounds.max - bounds.min)
                    * Vec3::new(rng.gen::<f32>(), rng.gen::<f32>(), rng.gen::<f32>());
            Ray::new(origin, target - origin)
        })
        .collect()
}

/// Both scenes agree on hit or miss, `t`, the point and the normal; `same_object` compares which
/// object was hit.
fn assert_agree(
    loaded: &Scene,
    by_hand: &Scene,
    rays: &[Ray],
    same_object: impl Fn(&Hit, &Hit) -> bool,
    what: &str,
) -> usize {
    let mut hits = 0;
    for (i, ray) in rays.iter().enumerate() {
        let a = loaded.intersect(ray);
        let b = by_hand.intersect(ray);
        match (a, b) {
            (None, None) => {}
            (Some(a), Some(b)) => {
                hits += 1;
                // Transforming the ray (instances) and transforming the vertices (by hand) round
                // differently; 1e-4 relative covers a few ulps of the transform chain.
                let tolerance = 1e-4 * a.t.abs().max(1.0);
                assert!(
                    (a.t - b.t).abs() <= tolerance,
                    "{what} ray {i}: t {} vs {}",
                    a.t,
                    b.t
                );
                let scale = ray.dir.length() * a.t.abs().max(1.0);
                assert!(
                    a.point.distance(b.point) <= 1e-4 * scale,
                    "{what} ray {i}: point"
                );
                // A ray can graze an edge shared by two triangles or objects at the same t:
                // only compare what was hit when the hits are not tied.
                let tied = (a.t - b.t).abs() <= tolerance && !same_object(&a, &b);
                if !tied {
                    assert!(a.normal.dot(b.normal) > 0.999, "{what} ray {i}: normal");
                }
            }
            (a, b) => {
                // Only a ray through an edge or vertex may hit in one and miss in the other.
                let hit = a.or(b).unwrap();
                assert!(
                    hit.u.min(hit.v).min(1.0 - hit.u - hit.v) < 1e-4,
                    "{what} ray {i}: hit {:?} vs {:?}",
                    a.map(|h| h.t),
                    b.map(|h| h.t)
                );
            }
        }
    }
    hits
}

#[test]
fn simple_meshes_match_literal_triangles() {
    let loaded = load(format!("{DATA}gltf/SimpleMeshes.gltf")).unwrap();
    // The file's one triangle (0,0,0) (1,0,0) (0,1,0), used by node 0 and by node 1 moved +1 on X.
    let mut builder = SceneBuilder::new();
    for dx in [0.0, 1.0] {
        let offset = Vec3::new(dx, 0.0, 0.0);
        builder.add_mesh(TriMesh::new(
            vec![offset, Vec3::X + offset, Vec3::Y + offset],
            vec![[0, 1, 2]],
        ));
    }
    let by_hand = builder.build().unwrap();
    let mut rays = Vec::new();
    for iy in 0..20 {
        for ix in 0..40 {
            let origin = Vec3::new(-0.05 + ix as f32 * 0.0571, -0.05 + iy as f32 * 0.0571, 3.0);
            rays.push(Ray::new(origin, Vec3::new(0.0, 0.0, -1.0)));
        }
    }
    let hits = assert_agree(
        &loaded.scene,
        &by_hand,
        &rays,
        |a, b| a.instance == Some(b.geom),
        "SimpleMeshes",
    );
    assert!(hits > 200, "{hits} hits");
    // Each hit names the node it went through.
    for ray in &rays {
        if let (Some(a), Some(b)) = (loaded.scene.intersect(ray), by_hand.intersect(ray)) {
            if a.t == b.t && ray.origin.x < 0.9 {
                assert_eq!(loaded.name_of(&a), Some(loaded.geometry_names[0].as_str()));
                assert_eq!(a.instance, Some(0));
            }
        }
    }
}

#[test]
fn box_matches_a_cube_rotated_by_hand() {
    let loaded = load(format!("{DATA}gltf/Box.gltf")).unwrap();
    let (_, model) = parse_file(format!("{DATA}gltf/Box.gltf"), &LoadOptions::default()).unwrap();
    // The root node's matrix rotates −90° about X (data README); apply it to the raw positions.
    let rotate = Mat3::from_rotation_x(-std::f32::consts::FRAC_PI_2);
    let mesh = &model.meshes[0];
    let by_hand = {
        let mut builder = SceneBuilder::new();
        builder.add_mesh(TriMesh::new(
            mesh.vertices.iter().map(|&v| rotate * v).collect(),
            mesh.triangles.clone(),
        ));
        builder.build().unwrap()
    };
    let rays = rays_around(&by_hand, 2000, 7);
    let hits = assert_agree(
        &loaded.scene,
        &by_hand,
        &rays,
        |a, b| a.prim == b.prim,
        "Box",
    );
    assert!(hits > 1000, "{hits} hits");
    // And the cube is the ±0.5 box whatever the rotation: check hit points lie on it.
    for ray in &rays {
        if let Some(hit) = loaded.scene.intersect(ray) {
            let p = hit.point.abs();
            assert!((p.max_element() - 0.5).abs() < 1e-5, "{p}");
        }
    }
}

/// Every instance baked into world space by hand, one plain mesh per node.
fn baked(path: &str) -> (raypick_io::Loaded, Scene) {
    let loaded = load(path).unwrap();
    let (_, model) = parse_file(path, &LoadOptions::default()).unwrap();
    let mut builder = SceneBuilder::new();
    for instance in &model.instances {
        let mesh = &model.meshes[instance.mesh];
        builder.add_mesh(TriMesh::new(
            mesh.vertices
                .iter()
                .map(|&v| instance.world_from_object.transform_point3(v))
                .collect(),
            mesh.triangles.clone(),
        ));
    }
    (loaded, builder.build().unwrap())
}

#[test]
fn instanced_truck_and_engine_match_baked_geometry() {
    for (file, seed) in [
        ("gltf/CesiumMilkTruck.glb", 1),
        ("gltf/2CylinderEngine.glb", 2),
    ] {
        let (loaded, by_hand) = baked(&format!("{DATA}{file}"));
        let rays = rays_around(&by_hand, 1500, seed);
        let hits = assert_agree(
            &loaded.scene,
            &by_hand,
            &rays,
            |a, b| a.instance.unwrap_or(a.geom) == b.geom && a.prim == b.prim,
            file,
        );
        assert!(hits > 300, "{file}: {hits} hits");
        // The instance a pick names is the node whose baked copy the same ray hits.
        let mut agreeing = 0;
        for ray in &rays {
            if let (Some(a), Some(b)) = (loaded.scene.intersect(ray), by_hand.intersect(ray)) {
                if loaded.top_level_of(&a) == b.geom {
                    agreeing += 1;
                }
            }
        }
        // Ties at shared faces can pick either object; nearly all picks must agree.
        assert!(agreeing * 100 >= hits * 97, "{file}: {agreeing} of {hits}");
    }
}

#[test]
fn baking_single_use_nodes_answers_as_instancing_them() {
    for file in [
        "gltf/CesiumMilkTruck.glb",
        "gltf/2CylinderEngine.glb",
        "gltf/Box.gltf",
    ] {
        let path = format!("{DATA}{file}");
        let (_, model) = parse_file(&path, &LoadOptions::default()).unwrap();
        let baked = load(&path).unwrap();
        let shared = load_with(
            &path,
            &LoadOptions {
                instancing: Instancing::Shared,
                ..LoadOptions::default()
            },
        )
        .unwrap();
        // Which nodes the default bakes: those whose mesh no other node uses (these files have
        // no mirrored or non-invertible node transforms).
        let mut uses = vec![0; model.meshes.len()];
        for instance in &model.instances {
            uses[instance.mesh] += 1;
        }
        let single: Vec<bool> = model.instances.iter().map(|i| uses[i.mesh] == 1).collect();
        assert_eq!(baked.geometry_names, shared.geometry_names, "{file}");
        assert_eq!(baked.geometry_mesh, shared.geometry_mesh, "{file}");
        let rays = rays_around(&shared.scene, 3000, 11);
        let (mut hits, mut baked_hits, mut instance_hits) = (0, 0, 0);
        for ray in &rays {
            let (a, b) = (baked.scene.intersect(ray), shared.scene.intersect(ray));
            assert_eq!(a.is_some(), b.is_some(), "{file}: {ray:?}");
            let (Some(a), Some(b)) = (a, b) else { continue };
            hits += 1;
            // Baked vertices and a transformed ray round differently: a few ulps.
            assert!((a.t - b.t).abs() <= 1e-4 * b.t.abs().max(1.0), "{file}");
            let node = shared.top_level_of(&b);
            if baked.top_level_of(&a) != node {
                continue; // a tie between two nodes' coincident faces
            }
            assert_eq!(a.prim, b.prim, "{file}");
            assert_eq!(
                b.instance,
                Some(node),
                "{file}: shared keeps every node an instance"
            );
            if single[node as usize] {
                assert_eq!(
                    (a.instance, a.geom),
                    (None, node),
                    "{file}: a single use is baked"
                );
                baked_hits += 1;
            } else {
                assert_eq!(a.instance, Some(node), "{file}: a shared mesh stays shared");
                instance_hits += 1;
            }
        }
        assert!(hits > 500, "{file}: {hits}");
        assert!(baked_hits > 100, "{file}: {baked_hits} hits on baked nodes");
        if file != "gltf/Box.gltf" {
            assert!(
                instance_hits > 5,
                "{file}: {instance_hits} hits on shared meshes"
            );
        }
    }
}
