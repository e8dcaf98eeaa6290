//! Picks on loaded glTF scenes (node transforms, shared meshes as instances) agree with the same
//! geometry placed by hand: literal coordinates for SimpleMeshes and Box, and every instance's
//! vertices transformed on the CPU (no instancing) for the truck and the engine; and the two
//! instancing policies (nodes used once baked, or every node an instance) answer alike; and the
//! node tree built as nested instances answers as the flat policies do, naming every node on a
//! hit's path, within the engine's nesting depth and below it.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use raypick::glam::{Mat3, Vec3};
use raypick::{Hit, InstancePath, Ray, Scene, SceneBuilder, TriMesh};
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
        if let (Some((a, path)), Some(b)) =
            (loaded.scene.intersect_path(ray), by_hand.intersect(ray))
        {
            if a.t == b.t && ray.origin.x < 0.9 {
                assert_eq!(
                    loaded.name_of(&a, &path),
                    Some(loaded.geometry_names[0].as_str())
                );
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

fn load_as(path: &str, instancing: Instancing) -> raypick_io::Loaded {
    load_with(
        path,
        &LoadOptions {
            instancing,
            ..LoadOptions::default()
        },
    )
    .unwrap()
}

/// `a` and `b`, two loads of one model, give every ray the same closest hit: both hit or both
/// miss (a miss in one only is a ray through an edge), `t` within the rounding of the transform
/// chains, the same triangle of the same node by name (or, when the nodes differ, a tie: `b`
/// has a hit on `a`'s node at the same `t`). Returns the number of hits.
fn assert_same_answers(
    a: &raypick_io::Loaded,
    b: &raypick_io::Loaded,
    rays: &[Ray],
    what: &str,
) -> usize {
    let mut hits = 0;
    for (i, ray) in rays.iter().enumerate() {
        let (ha, hb) = (a.scene.intersect_path(ray), b.scene.intersect_path(ray));
        let ((ha, pa), (hb, pb)) = match (ha, hb) {
            (Some(ha), Some(hb)) => (ha, hb),
            (None, None) => continue,
            (ha, hb) => {
                let (hit, _) = ha.or(hb).unwrap();
                assert!(
                    hit.u.min(hit.v).min(1.0 - hit.u - hit.v) < 1e-4,
                    "{what} ray {i}: {:?} vs {:?}",
                    ha.map(|(h, _)| h.t),
                    hb.map(|(h, _)| h.t)
                );
                continue;
            }
        };
        hits += 1;
        // Each instance level rounds the ray's move into its frame (a few ulps of the ray's
        // origin and direction, relative to the scene's size); along the ray a shift of the
        // surface by d moves t by d / (|dir| |cos|), with cos between the ray and the normal.
        let cos = ray.dir.normalize().dot(ha.normal).abs().max(1e-3);
        let scale = ray
            .origin
            .abs()
            .max_element()
            .max(ha.point.abs().max_element())
            .max(1.0);
        let tolerance = 64.0 * f32::EPSILON * scale / (ray.dir.length() * cos);
        assert!(
            (ha.t - hb.t).abs() <= tolerance,
            "{what} ray {i}: t {} vs {} (tolerance {tolerance})",
            ha.t,
            hb.t
        );
        let (na, nb) = (a.name_of(&ha, &pa), b.name_of(&hb, &pb));
        assert!(na.is_some() && nb.is_some(), "{what} ray {i}: unnamed hit");
        assert_eq!(
            a.mesh_of(&ha, &pa).is_some(),
            b.mesh_of(&hb, &pb).is_some(),
            "{what}"
        );
        if na != nb {
            let on_a_node = |h: &Hit, path: &InstancePath| b.name_of(h, path) == na;
            let options = raypick::QueryOptions {
                filter: Some(&on_a_node),
                ..Default::default()
            };
            let tie = b.scene.intersect_with(ray, &options);
            assert!(
                tie.is_some_and(|h| (h.t - ha.t).abs() <= tolerance),
                "{what} ray {i}: {na:?} vs {nb:?}, not a tie"
            );
            continue;
        }
        assert_eq!(
            a.mesh_of(&ha, &pa),
            b.mesh_of(&hb, &pb),
            "{what} ray {i}: mesh"
        );
        if ha.prim != hb.prim {
            // Two triangles of one mesh meeting at the point: an edge or vertex hit.
            let on_edge = |h: &Hit| h.u.min(h.v).min(1.0 - h.u - h.v) < 1e-3;
            assert!(
                on_edge(&ha) && on_edge(&hb),
                "{what} ray {i}: triangle {} vs {}",
                ha.prim,
                hb.prim
            );
        }
    }
    hits
}

#[test]
fn hierarchy_answers_as_the_flat_policies_on_every_gltf_model() {
    let mut files: Vec<_> = std::fs::read_dir(format!("{DATA}gltf"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    for (seed, file) in files.iter().enumerate() {
        let path = file.to_str().unwrap();
        let nested = load_as(path, Instancing::Hierarchy);
        let (_, model) = parse_file(path, &LoadOptions::default()).unwrap();
        assert!(nested.scene.instance_depth() <= raypick::MAX_INSTANCE_DEPTH);
        assert_eq!(nested.nodes.names.len(), model.nodes.len(), "{path}");
        let rays = rays_around(&nested.scene, 2000, 100 + seed as u64);
        for instancing in [Instancing::Shared, Instancing::BakeSingleUse] {
            let flat = load_as(path, instancing);
            let what = format!("{path} ({instancing:?})");
            let hits = assert_same_answers(&nested, &flat, &rays, &what);
            assert!(hits > 100, "{what}: {hits} hits");
        }
        // A hit's node shows a mesh, and its chain of ancestors leads down the path's nodes.
        for ray in &rays {
            let Some((hit, hit_path)) = nested.scene.intersect_path(ray) else {
                continue;
            };
            assert_eq!(nested.scene.intersect(ray), Some(hit));
            let node = nested.node_of(&hit, &hit_path).unwrap();
            assert!(nested.nodes.mesh[node].is_some(), "{path}");
            let chain = nested.nodes.chain(node);
            assert_eq!(chain.last(), Some(&node));
            let path_names = names_on_path(&nested.scene, &hit_path);
            for name in &path_names {
                assert!(
                    chain.iter().any(|&n| &nested.nodes.names[n] == name),
                    "{path}: {name} not in the chain"
                );
            }
        }
    }
}

/// The names of the instances on a hit's path, outermost first.
fn names_on_path(scene: &Scene, path: &InstancePath) -> Vec<String> {
    let mut outer = InstancePath::EMPTY;
    let mut names = Vec::new();
    for &id in path.as_slice() {
        let holder = scene.placed_scene(&outer).unwrap();
        names.push(holder.geometry_name(id).unwrap().to_string());
        outer = outer.pushed(id);
    }
    names
}

/// A glTF document whose meshes are all the one triangle (0,0,0) (1,0,0) (0,1,0); `nodes` is the
/// JSON of the node array, `roots` of the scene's node list, `meshes` the number of meshes.
fn triangle_gltf(nodes: &str, roots: &str, meshes: usize) -> String {
    let mesh_list = (0..meshes)
        .map(|m| {
            format!(r#"{{"name":"mesh{m}","primitives":[{{"attributes":{{"POSITION":0}}}}]}}"#)
        })
        .collect::<Vec<_>>()
        .join(",");
    format!(
        r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":{roots}}}],
  "nodes":{nodes},
  "meshes":[{mesh_list}],
  "accessors":[{{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3",
                "min":[0,0,0],"max":[1,1,0]}}],
  "bufferViews":[{{"buffer":0,"byteLength":36}}],
  "buffers":[{{"byteLength":36,"uri":"data:application/octet-stream;base64,AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAA"}}]}}"#
    )
}

fn write_temp(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_three_level_hierarchy_names_every_node_on_the_path() {
    // car (no mesh, at x = 10) ─┬─ body (mesh 0) ── wheel (mesh 0, +2 on x, 1 down)
    //                           ├─ lamp (mesh 0, +4 on x)
    //                           └─ joint (no mesh, no children: left out)
    // and a root "sign" (mesh 1) at x = -3: mesh 0 is used by three nodes, mesh 1 by one.
    let nodes = r#"[
      {"name":"car","translation":[10,0,0],"children":[1,3,4]},
      {"name":"body","mesh":0,"children":[2]},
      {"name":"wheel","mesh":0,"translation":[2,0,-1]},
      {"name":"lamp","mesh":0,"translation":[4,0,0]},
      {"name":"joint","rotation":[0,0,0.7071068,0.7071068]},
      {"name":"sign","mesh":1,"translation":[-3,0,0]}]"#;
    let dir = tempfile::tempdir().unwrap();
    let path = write_temp(&dir, "car.gltf", &triangle_gltf(nodes, "[0,5]", 2));
    let nested = load_as(&path, Instancing::Hierarchy);
    assert_eq!(
        nested.nodes.names,
        ["car", "body", "wheel", "lamp", "joint", "sign"]
    );
    assert_eq!(
        nested.nodes.parent,
        [None, Some(0), Some(1), Some(0), Some(0), None]
    );
    assert_eq!(nested.geometry_names, ["car", "sign"]);
    assert_eq!(nested.scene.instance_depth(), 3);
    // (x of the ray, straight down from z = 5): node, mesh, t, the names on the path.
    let cases: [(f32, &str, usize, f32, &[&str]); 4] = [
        (10.2, "body", 0, 5.0, &["car", "body", "body"]),
        (12.2, "wheel", 0, 6.0, &["car", "body", "wheel"]),
        (14.2, "lamp", 0, 5.0, &["car", "lamp"]),
        (-2.8, "sign", 1, 5.0, &["sign"]),
    ];
    let flat = load_as(&path, Instancing::Shared);
    for (x, node, mesh, t, on_path) in cases {
        let ray = Ray::new(Vec3::new(x, 0.2, 5.0), Vec3::new(0.0, 0.0, -1.0));
        let (hit, hit_path) = nested.scene.intersect_path(&ray).unwrap();
        assert_eq!(nested.name_of(&hit, &hit_path), Some(node));
        assert_eq!(nested.mesh_of(&hit, &hit_path), Some(mesh));
        assert_eq!(
            nested.mesh_name_of(&hit, &hit_path),
            Some(format!("mesh{mesh}").as_str())
        );
        assert_eq!(hit.t, t, "{node}");
        assert_eq!(hit_path.len(), on_path.len(), "{node}");
        assert_eq!(names_on_path(&nested.scene, &hit_path), on_path, "{node}");
        let chain: Vec<&str> = nested
            .nodes
            .chain(nested.node_of(&hit, &hit_path).unwrap())
            .into_iter()
            .map(|n| nested.nodes.names[n].as_str())
            .collect();
        assert_eq!(chain.last(), Some(&node));
        // The flat load names the same node.
        let (flat_hit, flat_path) = flat.scene.intersect_path(&ray).unwrap();
        assert_eq!(flat.name_of(&flat_hit, &flat_path), Some(node));
        assert_eq!((flat_hit.t, flat_hit.prim), (hit.t, hit.prim));
    }
    // The shared mesh is stored once.
    assert_eq!(nested.scene.num_triangles(), flat.scene.num_triangles());
}

#[test]
fn a_chain_deeper_than_the_engine_nests_loads_flat_below_the_limit() {
    // n0 → n1 → … → n11, each a triangle turned a little about z and moved along x and down.
    let depth = 12;
    let s = (0.05f32).sin();
    let c = (0.05f32).cos();
    let nodes: Vec<String> = (0..depth)
        .map(|i| {
            let children = if i + 1 < depth {
                format!(r#","children":[{}]"#, i + 1)
            } else {
                String::new()
            };
            format!(
                r#"{{"name":"n{i}","mesh":0,"translation":[1.5,0.1,-0.25],"rotation":[0,0,{s},{c}]{children}}}"#
            )
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = write_temp(
        &dir,
        "chain.gltf",
        &triangle_gltf(&format!("[{}]", nodes.join(",")), "[0]", 1),
    );
    let nested = load_as(&path, Instancing::Hierarchy);
    assert_eq!(nested.scene.instance_depth(), raypick::MAX_INSTANCE_DEPTH);
    assert!(
        nested
            .notes
            .iter()
            .any(|note| note.contains("deeper than 8 nested instances")),
        "{:?}",
        nested.notes
    );
    for instancing in [Instancing::Shared, Instancing::BakeSingleUse] {
        let flat = load_as(&path, instancing);
        let rays = rays_around(&flat.scene, 4000, 5);
        let hits = assert_same_answers(&nested, &flat, &rays, &format!("chain ({instancing:?})"));
        assert!(hits > 100, "{hits}");
    }
    // A ray down onto each node's triangle names that node.
    let (_, model) = parse_file(&path, &LoadOptions::default()).unwrap();
    for instance in &model.instances {
        let centre =
            instance
                .world_from_object
                .transform_point3(Vec3::new(1.0 / 3.0, 1.0 / 3.0, 0.0));
        let ray = Ray::new(centre + Vec3::Z * 10.0, -Vec3::Z);
        let (hit, hit_path) = nested.scene.intersect_path(&ray).unwrap();
        assert_eq!(
            nested.name_of(&hit, &hit_path),
            Some(instance.name.as_str())
        );
        assert_eq!(
            nested
                .nodes
                .chain(nested.node_of(&hit, &hit_path).unwrap())
                .len(),
            instance.name[1..].parse::<usize>().unwrap() + 1
        );
    }
}

#[test]
fn a_node_transform_that_cannot_be_inverted_is_baked_under_hierarchy() {
    // "flat" scales its subtree to zero height (the triangles stand on edge: no hits from
    // above, none lost); "mirror" flips x and stays an instance.
    let nodes = r#"[
      {"name":"group","children":[1,2]},
      {"name":"flat","scale":[1,0,1],"children":[3]},
      {"name":"mirror","mesh":0,"scale":[-1,1,1]},
      {"name":"leaf","mesh":0,"translation":[5,0,0]}]"#;
    let dir = tempfile::tempdir().unwrap();
    let path = write_temp(&dir, "zero.gltf", &triangle_gltf(nodes, "[0]", 1));
    let nested = load_as(&path, Instancing::Hierarchy);
    assert!(
        nested
            .notes
            .iter()
            .any(|note| note.contains("\"flat\"") && note.contains("singular")),
        "{:?}",
        nested.notes
    );
    let ray = Ray::new(Vec3::new(-0.2, 0.2, 5.0), -Vec3::Z);
    let (hit, hit_path) = nested.scene.intersect_path(&ray).unwrap();
    assert_eq!(nested.name_of(&hit, &hit_path), Some("mirror"));
    let flat = load_as(&path, Instancing::Shared);
    let rays = rays_around(&flat.scene, 1000, 9);
    assert_same_answers(&nested, &flat, &rays, "zero scale");
}

#[test]
fn hierarchy_of_a_model_without_nodes_places_each_instance_at_the_top() {
    let (_, mut model) = parse_file(
        format!("{DATA}gltf/CesiumMilkTruck.glb"),
        &LoadOptions::default(),
    )
    .unwrap();
    let flat = model
        .clone()
        .into_loaded_with(raypick_io::Format::Gltf, Instancing::Shared);
    model.nodes.clear();
    model.roots.clear();
    let nested = model
        .into_loaded_with(raypick_io::Format::Gltf, Instancing::Hierarchy)
        .unwrap();
    let flat = flat.unwrap();
    assert_eq!(nested.geometry_names, flat.geometry_names);
    assert_eq!(nested.scene.instance_depth(), 1);
    let rays = rays_around(&flat.scene, 1000, 3);
    assert!(assert_same_answers(&nested, &flat, &rays, "truck without nodes") > 300);
}
