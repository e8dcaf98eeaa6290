//! Closest points on glTF scenes whose nodes carry transforms (nested rotations and translations):
//! the engine's answer against an `f64` brute force over every world-space triangle, with the
//! node transforms applied in `f64` from the loaded scene's instances.

// The engine's test helpers: the shared data's path and the `f64` reference distance.
#[path = "../../raypick/tests/common/mod.rs"]
#[allow(dead_code)]
mod common;

use common::{tri_distance, DATA};
use glam::{DAffine3, DVec3, Vec3};
use raypick::{Geometry, Scene};

/// Every triangle of `scene` in world space, in `f64`.
fn world_triangles(scene: &Scene, world_from_scene: DAffine3, out: &mut Vec<[DVec3; 3]>) {
    for id in 0..scene.num_geometries() as u32 {
        match scene.geometry(id).unwrap() {
            Geometry::Mesh(m) => {
                for t in m.indices() {
                    out.push(t.map(|i| {
                        world_from_scene.transform_point3(m.vertices()[i as usize].as_dvec3())
                    }));
                }
            }
            Geometry::Instance(inst) => {
                let m = DAffine3::from_cols_array(
                    &inst.world_from_object().to_cols_array().map(f64::from),
                );
                world_triangles(inst.scene(), world_from_scene * m, out);
            }
            _ => {}
        }
    }
}

#[test]
fn closest_points_on_gltf_node_hierarchies_match_the_f64_brute_force() {
    for model in [
        "gltf/BoxAnimated.gltf",
        "gltf/2CylinderEngine.glb",
        "gltf/Box.gltf",
    ] {
        let scene = raypick_io::load(format!("{DATA}{model}")).unwrap().scene;
        let mut tris = Vec::new();
        world_triangles(&scene, DAffine3::IDENTITY, &mut tris);
        assert!(!tris.is_empty(), "{model}");
        let b = scene.bounds();
        let (c, h) = (b.center(), (b.max - b.min) * 0.55);
        let size = f64::from((b.max - b.min).max_element());
        let mut checked = 0;
        for i in 0..150 {
            let f = i as f32 * 0.618_034;
            let p = c + h
                * (2.0 * Vec3::new((f * 3.1).fract(), (f * 5.7).fract(), (f * 7.3).fract()) - 1.0);
            let want = tris
                .iter()
                .map(|[a, b, c]| tri_distance(p.as_dvec3(), *a, *b, *c))
                .fold(f64::INFINITY, f64::min);
            let got = scene.closest_point(p).expect("a closest point");
            assert!(
                (f64::from(got.distance) - want).abs() <= 1e-5 * size,
                "{model} p {p}: {} vs {want}",
                got.distance
            );
            assert_eq!(Some(got), scene.closest_point_brute_force(p, f32::INFINITY));
            checked += 1;
        }
        assert_eq!(checked, 150);
    }
}
