//! Shared by every target: a parse may fail, but a model it returns must keep the `Model`
//! contract (finite positions, every index in range, instances naming existing meshes), and
//! building its scene must not panic (it may fail with a typed error, e.g. when a finite
//! transform carries finite vertices beyond f32 range).

use raypick_io::{LoadError, Model};

pub fn check(result: Result<Model, LoadError>) {
    let Ok(model) = result else {
        return;
    };
    for mesh in &model.meshes {
        assert!(
            mesh.vertices.iter().all(|v| v.is_finite()),
            "non-finite vertex"
        );
        let n = mesh.vertices.len();
        assert!(
            mesh.triangles.iter().flatten().all(|&i| (i as usize) < n),
            "index out of range"
        );
    }
    for instance in &model.instances {
        assert!(
            instance.mesh < model.meshes.len(),
            "instance of a missing mesh"
        );
        assert!(
            instance.world_from_object.is_finite(),
            "non-finite transform"
        );
    }
    if model.num_triangles_stored() < 20_000 {
        if let Err(error) = model.to_scene() {
            assert!(matches!(error, LoadError::Scene { .. }), "{error}");
        }
    }
}
