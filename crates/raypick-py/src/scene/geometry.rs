//! Adding geometry from Python: meshes (arrays or trimesh / Open3D mesh objects), spheres and
//! instances, each checked before it is stored.

use std::sync::Arc;

use glam::{Affine3A, DMat4, Vec3};
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use raypick::{Geometry, Spheres, TriMesh};

use super::state::{build, build_rust_scene, Built, Entry, InstanceEntry, Source, State};
use super::PyScene;
use crate::arrays::{read_floats, read_floats64, read_triangles, shifted};

/// Checks positions (rows of three, `f64`) before the frame's origin is chosen from them.
pub(super) fn check_finite(points: &[f64], name: &str) -> PyResult<()> {
    if let Some(k) = points.iter().position(|x| !x.is_finite()) {
        return Err(PyValueError::new_err(format!(
            "{name}[{}] is not finite: {:?}",
            k / 3,
            &points[k / 3 * 3..k / 3 * 3 + 3]
        )));
    }
    Ok(())
}

pub(super) fn to_vec3s(data: &[f32]) -> Vec<Vec3> {
    data.chunks_exact(3).map(Vec3::from_slice).collect()
}

/// Reads a 4×4 (row-major, numpy convention: `p_world = M @ [x, y, z, 1]`) affine matrix, in
/// `f64` and as the engine's `f32` transform.
pub(super) fn read_matrix(obj: Option<&Bound<'_, PyAny>>) -> PyResult<([f64; 16], Affine3A)> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        let mut m = [0.0; 16];
        for i in 0..4 {
            m[i * 5] = 1.0;
        }
        return Ok((m, Affine3A::IDENTITY));
    };
    let (lead, values) = read_floats64(obj, "matrix", 4, Some(2))?;
    if lead != [4] {
        return Err(PyValueError::new_err(format!(
            "matrix must have shape (4, 4), got ({}, 4)",
            lead[0]
        )));
    }
    let mut m = [0.0f64; 16];
    m.copy_from_slice(&values);
    if m.iter().any(|x| !x.is_finite()) {
        return Err(PyValueError::new_err("matrix must be finite"));
    }
    if m[12..] != [0.0, 0.0, 0.0, 1.0] {
        return Err(PyValueError::new_err(format!(
            "matrix must be affine (last row [0, 0, 0, 1]), got last row {:?}",
            &m[12..]
        )));
    }
    // numpy rows are glam columns of the transpose.
    let world_from_object = Affine3A::from_mat4(DMat4::from_cols_array(&m).transpose().as_mat4());
    // The engine inverts the transform in f32: a scale so large or small that the determinant
    // leaves f32 is as unusable as a singular one, and the message says which it is.
    if let Some(problem) = raypick_io::transform_problem(&world_from_object) {
        return Err(PyValueError::new_err(format!(
            "matrix cannot place an instance: {problem}"
        )));
    }
    Ok((m, world_from_object))
}

pub(super) fn add_triangles(
    scene: &PyScene,
    py: Python<'_>,
    vertices: &Bound<'_, PyAny>,
    triangles: Option<&Bound<'_, PyAny>>,
    name: Option<String>,
    mask: u32,
) -> PyResult<u32> {
    let (vertices, triangles) = match triangles.filter(|t| !t.is_none()) {
        Some(t) => (vertices.clone(), t.clone()),
        None => {
            // trimesh.Trimesh (vertices, faces) or open3d.geometry.TriangleMesh (vertices,
            // triangles).
            let mesh = vertices;
            // open3d.t.geometry.TriangleMesh: tensors in attribute maps (read through DLPack).
            if mesh.hasattr("vertex")? && mesh.hasattr("triangle")? {
                let positions = mesh.getattr("vertex")?.getattr("positions")?;
                let indices = mesh.getattr("triangle")?.getattr("indices")?;
                return add_triangles(scene, py, &positions, Some(&indices), name, mask);
            }
            let faces = if mesh.hasattr("faces")? {
                mesh.getattr("faces")?
            } else if mesh.hasattr("triangles")? && mesh.hasattr("vertices")? {
                mesh.getattr("triangles")?
            } else {
                return Err(PyValueError::new_err(
                    "add_triangles needs (vertices, triangles) arrays, or a mesh object with \
                     .vertices and .faces (trimesh) or .triangles (Open3D), or an \
                     open3d.t.geometry.TriangleMesh",
                ));
            };
            (mesh.getattr("vertices")?, faces)
        }
    };
    let (lead, v) = read_floats64(&vertices, "vertices", 3, Some(2))?;
    check_finite(&v, "vertices")?;
    let t = read_triangles(&triangles, "triangles", lead[0])?;
    let local = shifted(&v, 3, scene.lock(py).place(&v));
    let mut mesh = TriMesh::new(to_vec3s(&local), t).with_mask(mask);
    if let Some(n) = name {
        mesh = mesh.with_name(n);
    }
    scene.add_entry(py, Entry::Mesh(mesh))
}

pub(super) fn add_spheres(
    scene: &PyScene,
    py: Python<'_>,
    centers: &Bound<'_, PyAny>,
    radii: &Bound<'_, PyAny>,
    name: Option<String>,
    mask: u32,
) -> PyResult<u32> {
    let (lead, c) = read_floats64(centers, "centers", 3, Some(2))?;
    check_finite(&c, "centers")?;
    let n = lead[0];
    let r: Vec<f32> = if let Ok(x) = radii.extract::<f64>() {
        vec![x as f32; n]
    } else {
        // A (N,) array: read as (N, 1).
        let np = radii.py().import("numpy")?;
        let col = np.call_method1("reshape", (np.call_method1("asarray", (radii,))?, (-1, 1)))?;
        let r = read_floats(&col, "radii", 1, Some(2))?;
        if r.rows() != n {
            return Err(PyValueError::new_err(format!(
                "radii must be one number or have shape ({n},), got {} values",
                r.rows()
            )));
        }
        r.data
    };
    if let Some(k) = r.iter().position(|x| !(x.is_finite() && *x >= 0.0)) {
        return Err(PyValueError::new_err(format!(
            "radii[{k}] = {} must be finite and >= 0",
            r[k]
        )));
    }
    let local = shifted(&c, 3, scene.lock(py).place(&c));
    let mut s = Spheres::new(to_vec3s(&local), r).with_mask(mask);
    if let Some(name) = name {
        s = s.with_name(name);
    }
    scene.add_entry(py, Entry::Spheres(s))
}

pub(super) fn add_instance(
    scene: &PyScene,
    py: Python<'_>,
    scene_or_geometry: &Bound<'_, PyAny>,
    matrix: Option<&Bound<'_, PyAny>>,
    name: Option<String>,
    mask: u32,
) -> PyResult<u32> {
    let (matrix, world_from_object) = read_matrix(matrix)?;
    let source = if let Ok(other) = scene_or_geometry.cast::<PyScene>() {
        let other = other.get();
        if std::ptr::eq(other, scene) {
            return Err(PyValueError::new_err(
                "a scene cannot be placed inside itself",
            ));
        }
        other.as_source(py)?
    } else if let Ok(g) = scene_or_geometry.extract::<u32>() {
        let mut state = scene.lock(py);
        if let Some(s) = state.geometry_sources.get(&g) {
            s.clone()
        } else {
            let entry = match state.entries.get(g as usize) {
                Some(e) => e.clone(),
                None => {
                    return Err(PyIndexError::new_err(format!(
                        "no geometry {g} (the scene has {})",
                        state.entries.len()
                    )))
                }
            };
            let entries = vec![entry];
            let origin = state.origin;
            let scene = py.detach(|| build_rust_scene(&entries, origin))?;
            let s = Arc::new(Source {
                entries,
                scene: Arc::new(scene),
                remap: Some(g),
                origin,
            });
            state.geometry_sources.insert(g, s.clone());
            s
        }
    } else {
        return Err(PyValueError::new_err(
            "add_instance needs a raypick.Scene or a geometry id (int) of this scene",
        ));
    };
    let depth = 1 + source.scene.instance_depth();
    if depth > raypick::MAX_INSTANCE_DEPTH {
        return Err(PyValueError::new_err(format!(
            "instances would nest {depth} deep, more than the {} supported",
            raypick::MAX_INSTANCE_DEPTH
        )));
    }
    scene.add_entry(
        py,
        Entry::Instance(InstanceEntry {
            source,
            matrix,
            world_from_object,
            name,
            mask,
        }),
    )
}

/// Moves the vertices of mesh `geometry_id` and refits the built scene's trees (the engine's
/// [`raypick::Scene::update_mesh_vertices`]); the stored mesh shares the engine's new vertices.
pub(super) fn update_vertices(
    scene: &PyScene,
    py: Python<'_>,
    geometry_id: u32,
    vertices: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let (_, v) = read_floats64(vertices, "vertices", 3, Some(2))?;
    check_finite(&v, "vertices")?;
    let mut guard = scene.lock(py);
    let state: &mut State = &mut guard;
    let vertices = to_vec3s(&shifted(&v, 3, state.origin));
    match state.entry(geometry_id)? {
        Entry::Mesh(m) if m.vertices().len() == vertices.len() => {}
        Entry::Mesh(m) => {
            return Err(PyValueError::new_err(format!(
            "vertices has {} rows, mesh {geometry_id} has {} vertices (the count cannot change)",
            vertices.len(),
            m.vertices().len()
        )))
        }
        _ => {
            return Err(PyValueError::new_err(format!(
                "geometry {geometry_id} is not a mesh"
            )))
        }
    }
    let built = build(py, state)?;
    state.built = None;
    // Queries running on other threads hold the built scene: it is copied then (its meshes share
    // their arrays), else updated in place.
    let mut built = Arc::try_unwrap(built).unwrap_or_else(|shared| Built {
        scene: shared.scene.clone(),
        entries: shared.entries.clone(),
        origin: shared.origin,
    });
    let rust = Arc::make_mut(&mut built.scene);
    py.detach(|| rust.update_mesh_vertices(geometry_id, &vertices))
        .map_err(|e| PyValueError::new_err(format!("cannot update mesh {geometry_id}: {e}")))?;
    if let Some(Geometry::Mesh(m)) = rust.geometry(geometry_id) {
        state.entries[geometry_id as usize] = Entry::Mesh(m.clone());
    }
    state.built = Some(Arc::new(built));
    // Instances made from now on place the moved mesh; those made before keep what they captured.
    state.as_source = None;
    state.geometry_sources.remove(&geometry_id);
    Ok(())
}
