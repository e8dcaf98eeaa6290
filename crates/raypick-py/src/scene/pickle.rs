//! Pickling: a scene as the bytes of a scene file (`raypick::scene::file`: geometries, names,
//! masks and every BVH as built, instanced scenes once however often they are placed) with the
//! geometry ids its instanced hits report, so unpickling does no build. States of the older plain
//! form (version 1: numpy arrays, names and matrices, rebuilt on the first query) are still read.

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use raypick::{Spheres, TriMesh};

use super::geometry::{read_matrix, to_vec3s};
use super::state::{
    build, build_rust_scene, state_from_built, Entry, InstanceEntry, Source, State,
};
use super::PyScene;
use crate::arrays::{read_floats, read_triangles};

/// The state `__getstate__` writes: a scene file's bytes and the remap.
pub(super) const STATE_VERSION: u32 = 2;

/// The plain state of earlier versions, still read.
const PLAIN_STATE_VERSION: u32 = 1;

pub(super) fn get<'py>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Bound<'py, PyAny>> {
    d.get_item(key)?
        .ok_or_else(|| PyValueError::new_err(format!("bad Scene state: no {key:?}")))
}

pub(super) fn entry_from_py(d: &Bound<'_, PyDict>, sources: &[Arc<Source>]) -> PyResult<Entry> {
    let kind: String = get(d, "kind")?.extract()?;
    let name: Option<String> = get(d, "name")?.extract()?;
    Ok(match kind.as_str() {
        "mesh" => {
            let v = read_floats(&get(d, "vertices")?, "vertices", 3, Some(2))?;
            let t = read_triangles(&get(d, "triangles")?, "triangles", v.rows())?;
            let mut m = TriMesh::new(to_vec3s(&v.data), t);
            if let Some(n) = name {
                m = m.with_name(n);
            }
            Entry::Mesh(m)
        }
        "spheres" => {
            let c = read_floats(&get(d, "centers")?, "centers", 3, Some(2))?;
            let r: Vec<f32> = get(d, "radii")?.extract()?;
            let mut s = Spheres::new(to_vec3s(&c.data), r);
            if let Some(n) = name {
                s = s.with_name(n);
            }
            Entry::Spheres(s)
        }
        "instance" => {
            let k: usize = get(d, "source")?.extract()?;
            let source = sources
                .get(k)
                .ok_or_else(|| PyValueError::new_err("bad Scene state: unknown instance source"))?
                .clone();
            let (matrix, world_from_object) = read_matrix(Some(&get(d, "matrix")?))?;
            Entry::Instance(InstanceEntry {
                source,
                matrix,
                world_from_object,
                name,
            })
        }
        other => {
            return Err(PyValueError::new_err(format!(
                "bad Scene state: unknown geometry kind {other:?}"
            )))
        }
    })
}

pub(super) fn get_state<'py>(scene: &PyScene, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let built = {
        let mut guard = scene.lock(py);
        build(py, &mut guard)?
    };
    let bytes = py.detach(|| built.scene.to_bytes());
    let d = PyDict::new(py);
    d.set_item("version", STATE_VERSION)?;
    d.set_item("scene", PyBytes::new(py, &bytes))?;
    d.set_item("remap", built.remap.clone())?;
    Ok(d)
}

pub(super) fn set_state(
    scene: &PyScene,
    py: Python<'_>,
    state: &Bound<'_, PyDict>,
) -> PyResult<()> {
    let version: u32 = get(state, "version")?.extract()?;
    if version == STATE_VERSION {
        let bytes = get(state, "scene")?;
        let bytes = bytes.cast::<PyBytes>()?.as_bytes();
        let remap: Vec<Option<u32>> = get(state, "remap")?.extract()?;
        let rust = py
            .detach(|| raypick::Scene::from_bytes(bytes))
            .map_err(|e| PyValueError::new_err(format!("bad Scene state: {e}")))?;
        let restored = state_from_built(rust, remap)?;
        *scene.lock(py) = restored;
        return Ok(());
    }
    if version != PLAIN_STATE_VERSION {
        return Err(PyValueError::new_err(format!(
            "Scene state version {version} is not supported (this raypick reads {STATE_VERSION} \
             and {PLAIN_STATE_VERSION})"
        )));
    }
    let mut sources = Vec::new();
    for s in get(state, "sources")?.cast::<PyList>()?.iter() {
        let s = s.cast::<PyDict>()?;
        let entries = get(s, "geometries")?
            .cast::<PyList>()?
            .iter()
            .map(|g| entry_from_py(g.cast::<PyDict>()?, &[]))
            .collect::<PyResult<Vec<_>>>()?;
        let remap: Option<u32> = get(s, "remap")?.extract()?;
        let scene = py.detach(|| build_rust_scene(&entries))?;
        sources.push(Arc::new(Source {
            entries,
            scene: Arc::new(scene),
            remap,
        }));
    }
    let entries = get(state, "geometries")?
        .cast::<PyList>()?
        .iter()
        .map(|g| entry_from_py(g.cast::<PyDict>()?, &sources))
        .collect::<PyResult<Vec<_>>>()?;
    let mut st = scene.lock(py);
    *st = State {
        entries,
        ..State::default()
    };
    for s in &sources {
        if let Some(g) = s.remap {
            st.geometry_sources.insert(g, s.clone());
        }
    }
    Ok(())
}
