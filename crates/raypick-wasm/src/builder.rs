//! Scene builders: meshes, sphere sets and instances added from buffers, checked as they come in
//! (so an error names the buffer and the element), then built; and scenes read from and written
//! to scene files.

use std::sync::Arc;

use glam::{Affine3A, Vec3};
use raypick::bvh::BuildConfig;
use raypick::{Scene, SceneBuilder, Spheres, TriMesh};

use crate::buffers::{keep, read_mat4, read_name, read_points};
use crate::error::{count, handle, status, AbiError};
use crate::registry::{with_state, State};

/// The BVH settings of build quality `quality`: 0 [`BuildConfig::FAST`], 1
/// [`BuildConfig::BALANCED`] (the engine's default), 2 [`BuildConfig::HIGH_QUALITY`], 3
/// [`BuildConfig::SPATIAL`] (spatial splits, for scenes built once and saved).
pub fn quality_config(quality: u32) -> Result<BuildConfig, AbiError> {
    match quality {
        0 => Ok(BuildConfig::FAST),
        1 => Ok(BuildConfig::BALANCED),
        2 => Ok(BuildConfig::HIGH_QUALITY),
        3 => Ok(BuildConfig::SPATIAL),
        q => Err(AbiError::argument(
            "quality",
            format!("{q} is not 0 (fast), 1 (balanced), 2 (high) or 3 (spatial)"),
        )),
    }
}

/// `rp_builder_new`: a builder whose BVHs are built with quality `quality` ([`quality_config`]).
pub fn builder_new(quality: u32) -> u32 {
    handle(|| {
        let config = quality_config(quality)?;
        with_state(|s| s.builders.insert(SceneBuilder::with_config(config)))
    })
}

/// `rp_builder_free`.
pub fn builder_free(b: u32) -> i32 {
    status(|| with_state(|s| s.builders.remove(b, "builder").map(|_| 0)))
}

/// Triangles from an index buffer (`None`: consecutive vertex triples, three.js's non-indexed
/// geometry), every index checked against `num_vertices`.
fn triangles(indices: Option<&[u32]>, num_vertices: usize) -> Result<Vec<[u32; 3]>, AbiError> {
    let Some(indices) = indices else {
        if !num_vertices.is_multiple_of(3) {
            return Err(AbiError::argument(
                "positions",
                format!(
                    "{num_vertices} vertices without indices: a non-indexed mesh needs a multiple of 3"
                ),
            ));
        }
        let n = u32::try_from(num_vertices)
            .map_err(|_| AbiError::argument("positions", "more than 2^32 vertices"))?;
        return Ok((0..n / 3).map(|t| [3 * t, 3 * t + 1, 3 * t + 2]).collect());
    };
    if !indices.len().is_multiple_of(3) {
        return Err(AbiError::argument(
            "indices",
            format!(
                "length {} is not a multiple of 3 (three per triangle)",
                indices.len()
            ),
        ));
    }
    if let Some(k) = indices.iter().position(|&i| i as usize >= num_vertices) {
        return Err(AbiError::argument(
            "indices",
            format!(
                "indices[{k}] = {} (triangle {}) is out of range: the mesh has {num_vertices} vertices",
                indices[k],
                k / 3
            ),
        ));
    }
    Ok(indices
        .chunks_exact(3)
        .map(|c| [c[0], c[1], c[2]])
        .collect())
}

/// The mesh of `positions` (and `indices`, 0 for none).
fn mesh_of(s: &State, positions: u32, indices: u32) -> Result<TriMesh, AbiError> {
    let vertices = read_points(s.f32.get(positions, "positions")?, "positions")?;
    let idx = match indices {
        0 => None,
        h => Some(s.u32.get(h, "indices")?.as_slice()),
    };
    let tris = triangles(idx, vertices.len())?;
    Ok(TriMesh::new(vertices, tris))
}

/// `rp_builder_add_mesh`: the new geometry's id.
pub fn add_mesh(b: u32, positions: u32, indices: u32, mask: u32, name: u32) -> i32 {
    status(|| {
        with_state(|s| {
            let mut mesh = mesh_of(s, positions, indices)?.with_mask(mask);
            if let Some(name) = read_name(s, name, "name")? {
                mesh = mesh.with_name(name);
            }
            let id = s.builders.get_mut(b, "builder")?.add_mesh(mesh);
            count(id as usize, "geometry")
        })
    })
}

/// `rp_builder_add_spheres`: the new geometry's id.
pub fn add_spheres(b: u32, centers: u32, radii: u32, mask: u32, name: u32) -> i32 {
    status(|| {
        with_state(|s| {
            let c = read_points(s.f32.get(centers, "centers")?, "centers")?;
            let r = s.f32.get(radii, "radii")?;
            if r.len() != c.len() {
                return Err(AbiError::argument(
                    "radii",
                    format!("{} radii for {} centres", r.len(), c.len()),
                ));
            }
            if let Some(i) = r.iter().position(|x| !(x.is_finite() && *x >= 0.0)) {
                return Err(AbiError::argument(
                    "radii",
                    format!("radius {i} is {} (must be finite and >= 0)", r[i]),
                ));
            }
            let mut spheres = Spheres::new(c, r.clone()).with_mask(mask);
            if let Some(name) = read_name(s, name, "name")? {
                spheres = spheres.with_name(name);
            }
            let id = s.builders.get_mut(b, "builder")?.add_spheres(spheres);
            count(id as usize, "geometry")
        })
    })
}

/// An affine transform from a column-major 4×4 matrix whose bottom row is `0, 0, 0, 1`.
pub fn read_affine(data: &[f32], field: &'static str) -> Result<Affine3A, AbiError> {
    let m = read_mat4(data, field)?;
    let bottom = m.row(3);
    if bottom != glam::Vec4::W {
        return Err(AbiError::argument(
            field,
            format!(
                "the bottom row is ({}, {}, {}, {}), not (0, 0, 0, 1): an instance transform must be affine",
                bottom.x, bottom.y, bottom.z, bottom.w
            ),
        ));
    }
    Ok(Affine3A::from_mat4(m))
}

/// `rp_builder_add_instance`: places built scene `scene` with `world_from_object` (16 values,
/// column-major); the new geometry's id. The scene stays usable on its own.
pub fn add_instance(b: u32, scene: u32, world_from_object: u32, mask: u32, name: u32) -> i32 {
    status(|| {
        with_state(|s| {
            let placed = Arc::clone(s.scenes.get(scene, "scene")?);
            let m = read_affine(
                s.f32.get(world_from_object, "worldFromObject")?,
                "worldFromObject",
            )?;
            let name = read_name(s, name, "name")?;
            let builder = s.builders.get_mut(b, "builder")?;
            let id = builder.add_instance(placed, m);
            builder.set_mask(id, mask);
            if let Some(name) = name {
                builder.set_name(id, name);
            }
            count(id as usize, "geometry")
        })
    })
}

/// `rp_builder_build`: the scene's handle. The builder is used up (freed) either way.
pub fn build(b: u32) -> u32 {
    handle(|| {
        with_state(|s| {
            let builder = s.builders.remove(b, "builder")?;
            let scene = builder.build()?;
            s.scenes.insert(Arc::new(scene))
        })
    })
}

/// `rp_scene_free`. Instances that place the scene keep it alive.
pub fn scene_free(scene: u32) -> i32 {
    status(|| with_state(|s| s.scenes.remove(scene, "scene").map(|_| 0)))
}

/// `rp_scene_from_bytes`: a scene read from the scene file (`.rpk`) in byte buffer `bytes`,
/// checked as [`Scene::from_bytes`] checks any bytes.
pub fn from_bytes(bytes: u32) -> u32 {
    handle(|| {
        with_state(|s| {
            let scene = Scene::from_bytes(s.u8.get(bytes, "bytes")?)?;
            s.scenes.insert(Arc::new(scene))
        })
    })
}

/// `rp_scene_to_bytes`: a new byte buffer holding the scene file.
pub fn to_bytes(scene: u32) -> u32 {
    handle(|| {
        with_state(|s| {
            let bytes = s.scenes.get(scene, "scene")?.to_bytes();
            keep(s, bytes)
        })
    })
}

/// `rp_scene_update_mesh`: new vertices for mesh `geom` (same count), the BVHs refitted. A scene
/// that an instance also places is copied first: the instance keeps the old vertices.
pub fn update_mesh(scene: u32, geom: u32, positions: u32) -> i32 {
    status(|| {
        with_state(|s| {
            let vertices: Vec<Vec3> = read_points(s.f32.get(positions, "positions")?, "positions")?;
            let scene = s.scenes.get_mut(scene, "scene")?;
            Arc::make_mut(scene).update_mesh_vertices(geom, &vertices)?;
            Ok(0)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualities_are_the_engine_presets_in_order() {
        let configs: Vec<BuildConfig> = (0..4).map(|q| quality_config(q).unwrap()).collect();
        assert_eq!(configs, BuildConfig::PRESETS.map(|(_, c)| c));
        let e = quality_config(4).unwrap_err();
        assert!(e.to_string().contains("3 (spatial)"), "{e}");
    }

    #[test]
    fn indices_are_checked_with_the_element_named() {
        let e = triangles(Some(&[0, 1, 2, 0, 2, 9]), 4).unwrap_err();
        assert_eq!(
            e.to_string(),
            "indices: indices[5] = 9 (triangle 1) is out of range: the mesh has 4 vertices"
        );
        assert!(triangles(Some(&[0, 1]), 4).is_err());
        assert_eq!(triangles(None, 6).unwrap(), vec![[0, 1, 2], [3, 4, 5]]);
        assert!(triangles(None, 4).is_err());
    }

    #[test]
    fn instance_transforms_must_be_affine() {
        let mut m = Affine3A::from_translation(Vec3::new(1.0, 2.0, 3.0));
        let cols = glam::Mat4::from(m).to_cols_array();
        assert_eq!(read_affine(&cols, "m").unwrap(), m);
        let mut projective = cols;
        projective[3] = 0.5;
        let e = read_affine(&projective, "worldFromObject").unwrap_err();
        assert!(e.to_string().contains("must be affine"), "{e}");
        m.translation.x = f32::NAN;
        let e = read_affine(&glam::Mat4::from(m).to_cols_array(), "m").unwrap_err();
        assert!(e.to_string().contains("element 12"), "{e}");
    }
}
