//! The built-in demo scene: needs no file. A ground plane, an icosphere, a torus knot, a row of
//! analytic spheres and three instances of one torus (rotated, scaled, and one mirrored).

use std::sync::Arc;

use glam::{Affine3A, Quat, Vec3};
use raypick::scene::shapes;
use raypick::{Aabb, BuildError, Scene, SceneBuilder, Spheres, TriMesh};

/// The part of the demo scene worth framing: the objects, not the whole ground plane.
pub const DEMO_FRAME: Aabb = Aabb::new(Vec3::new(-4.6, 0.0, -4.4), Vec3::new(4.6, 3.0, 4.2));

/// A scene plus a name for each top-level geometry id.
pub struct NamedScene {
    /// The scene.
    pub scene: Scene,
    /// Name of each top-level geometry (index = geometry id; an instance's id for instanced hits).
    pub names: Vec<String>,
    /// The files it was read from: the model file and the files that refer to (glTF buffers);
    /// none for the demo scene. Outputs must not overwrite them.
    pub files: Vec<std::path::PathBuf>,
    /// The model's node tree when it was loaded as nested instances (`--hierarchy`); else empty.
    pub nodes: raypick_io::Nodes,
}

impl NamedScene {
    /// The name of what a hit struck: the node struck in a node tree (read off the hit's
    /// instance path `path`, from the path queries), else its top-level instance's name, else
    /// its geometry's.
    pub fn name_of(&self, hit: &raypick::Hit, path: &raypick::InstancePath) -> &str {
        if let Some(node) = self.nodes.node_of(hit, path) {
            return self.nodes.names.get(node).map_or("?", String::as_str);
        }
        let top = hit.instance.unwrap_or(hit.geom) as usize;
        self.names.get(top).map_or("?", String::as_str)
    }
}

fn mesh(data: TriMesh, world_from_object: Affine3A, name: &str) -> TriMesh {
    let vertices = data
        .vertices()
        .iter()
        .map(|&p| world_from_object.transform_point3(p))
        .collect();
    TriMesh::new(vertices, data.indices().to_vec()).with_name(name)
}

/// Builds the demo scene.
pub fn demo_scene() -> Result<NamedScene, BuildError> {
    let mut b = SceneBuilder::new();
    let mut names = Vec::new();
    let mut add_name = |id: u32, name: &str| {
        debug_assert_eq!(id as usize, names.len());
        names.push(name.to_string());
    };
    let id = b.add_mesh(mesh(shapes::ground(14.0, 14), Affine3A::IDENTITY, "ground"));
    add_name(id, "ground");
    let id =
        b.add_mesh(shapes::icosphere(3, Vec3::new(-3.2, 1.3, 0.5), 1.3).with_name("icosphere"));
    add_name(id, "icosphere");
    let id = b.add_mesh(mesh(
        shapes::torus_knot(2, 3, 0.45, 0.22, 360, 16),
        Affine3A::from_translation(Vec3::new(3.0, 1.75, -0.5)),
        "torus-knot",
    ));
    add_name(id, "torus-knot");
    let centers: Vec<Vec3> = (0..5)
        .map(|i| Vec3::new(-4.0 + 2.0 * i as f32, 0.45, 3.6))
        .collect();
    let radii = vec![0.45; 5];
    let id = b.add_spheres(Spheres::new(centers, radii).with_name("spheres"));
    add_name(id, "spheres");
    // One torus, instanced three times.
    let mut torus_scene = SceneBuilder::new();
    torus_scene.add_mesh(mesh(
        shapes::torus(0.8, 0.28, 64, 24),
        Affine3A::IDENTITY,
        "torus",
    ));
    let torus = Arc::new(torus_scene.build()?);
    let placements = [
        (
            "torus-flat",
            Affine3A::from_translation(Vec3::new(0.0, 0.28, -0.2)),
        ),
        (
            "torus-standing",
            Affine3A::from_scale_rotation_translation(
                Vec3::splat(1.2),
                Quat::from_rotation_x(std::f32::consts::FRAC_PI_2) * Quat::from_rotation_z(0.4),
                Vec3::new(0.2, 1.3, -3.5),
            ),
        ),
        (
            "torus-mirrored",
            // Non-uniform and negative scale: a mirrored, squashed copy.
            Affine3A::from_translation(Vec3::new(-2.5, 0.9, -2.6))
                * Affine3A::from_rotation_x(0.8)
                * Affine3A::from_scale(Vec3::new(-1.1, 0.6, 1.1)),
        ),
    ];
    for (name, world_from_object) in placements {
        let id = b.add_instance(Arc::clone(&torus), world_from_object);
        b.set_name(id, name);
        add_name(id, name);
    }
    Ok(NamedScene {
        scene: b.build()?,
        names,
        files: Vec::new(),
        nodes: raypick_io::Nodes::default(),
    })
}
