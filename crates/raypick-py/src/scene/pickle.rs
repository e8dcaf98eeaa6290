//! Pickling: a scene as plain Python data (numpy arrays, names, matrices) and back. Instanced
//! scenes are stored once however often they are placed; the BVH is rebuilt on the first query.

use std::sync::Arc;

use glam::DVec3;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use raypick::{Spheres, TriMesh};

use super::geometry::{read_matrix, to_vec3s};
use super::state::{
    build, build_rust_scene, mesh_flat, Built, Entry, InstanceEntry, Source, State,
};
use super::PyScene;
use crate::arrays::{put, read_floats, read_triangles};

/// 3: also the built scene as a scene file's bytes (`"scene"`, `raypick::Scene::to_bytes`), so
/// the receiver does no build, neither of the scene nor of the scenes its instances place; the
/// geometries stay as arrays for the Python side (kind, names, `mesh_arrays`, instancing again).
/// 2: geometry masks, the frames' origins (`"origin"`, world position of the frame the stored
/// `f32` coordinates are relative to), and sources whose instances place other sources (nested
/// instances; each source is stored after those it places). Version 1 states (no masks, origin
/// zero, two levels) still load.
pub(super) const STATE_VERSION: u32 = 3;

/// The instance sources of a state, each stored once, every source after those its own instances
/// place (so that loading can build them in order).
pub(super) struct Sources<'py> {
    placed: Vec<Arc<Source>>,
    dicts: Vec<Bound<'py, PyDict>>,
}

impl<'py> Sources<'py> {
    fn new() -> Self {
        Self {
            placed: Vec::new(),
            dicts: Vec::new(),
        }
    }

    /// The index of source `s`, stored (after the sources it places) on first sight.
    fn index(&mut self, py: Python<'py>, s: &Arc<Source>) -> PyResult<usize> {
        if let Some(k) = self.placed.iter().position(|x| Arc::ptr_eq(x, s)) {
            return Ok(k);
        }
        let list = PyList::empty(py);
        for e in &s.entries {
            list.append(entry_to_py(py, e, self)?)?;
        }
        let d = PyDict::new(py);
        d.set_item("geometries", list)?;
        d.set_item("remap", s.remap)?;
        d.set_item("origin", s.origin.to_array())?;
        self.placed.push(s.clone());
        self.dicts.push(d);
        Ok(self.placed.len() - 1)
    }
}

pub(super) fn entry_to_py<'py>(
    py: Python<'py>,
    e: &Entry,
    sources: &mut Sources<'py>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    match e {
        Entry::Mesh(m) => {
            d.set_item("kind", "mesh")?;
            d.set_item("name", m.name())?;
            d.set_item("mask", m.mask())?;
            let (v, t) = mesh_flat(m);
            put(&d, "vertices", v, &[m.vertices().len()], &[3])?;
            put(&d, "triangles", t, &[m.indices().len()], &[3])?;
        }
        Entry::Spheres(s) => {
            d.set_item("kind", "spheres")?;
            d.set_item("name", s.name())?;
            d.set_item("mask", s.mask())?;
            let c: Vec<f32> = s.centers().iter().flat_map(|p| p.to_array()).collect();
            put(&d, "centers", c, &[s.centers().len()], &[3])?;
            put(&d, "radii", s.radii().to_vec(), &[s.radii().len()], &[])?;
        }
        Entry::Instance(i) => {
            let k = sources.index(py, &i.source)?;
            d.set_item("kind", "instance")?;
            d.set_item("name", i.name.as_deref())?;
            d.set_item("mask", i.mask)?;
            d.set_item("source", k)?;
            put(&d, "matrix", i.matrix.to_vec(), &[4], &[4])?;
        }
    }
    Ok(d)
}

pub(super) fn get<'py>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Bound<'py, PyAny>> {
    d.get_item(key)?
        .ok_or_else(|| PyValueError::new_err(format!("bad Scene state: no {key:?}")))
}

pub(super) fn entry_from_py(d: &Bound<'_, PyDict>, sources: &[Arc<Source>]) -> PyResult<Entry> {
    let kind: String = get(d, "kind")?.extract()?;
    let name: Option<String> = get(d, "name")?.extract()?;
    // States written before masks existed have none: every bit set, the default.
    let mask: u32 = match d.get_item("mask")? {
        Some(m) => m.extract()?,
        None => u32::MAX,
    };
    Ok(match kind.as_str() {
        "mesh" => {
            let v = read_floats(&get(d, "vertices")?, "vertices", 3, Some(2))?;
            let t = read_triangles(&get(d, "triangles")?, "triangles", v.rows())?;
            let mut m = TriMesh::new(to_vec3s(&v.data), t).with_mask(mask);
            if let Some(n) = name {
                m = m.with_name(n);
            }
            Entry::Mesh(m)
        }
        "spheres" => {
            let c = read_floats(&get(d, "centers")?, "centers", 3, Some(2))?;
            let r: Vec<f32> = get(d, "radii")?.extract()?;
            let mut s = Spheres::new(to_vec3s(&c.data), r).with_mask(mask);
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
                mask,
            })
        }
        other => {
            return Err(PyValueError::new_err(format!(
                "bad Scene state: unknown geometry kind {other:?}"
            )))
        }
    })
}

/// The `"origin"` of a state or source dict (zero in version 1 states, which have none).
fn origin_of(d: &Bound<'_, PyDict>) -> PyResult<DVec3> {
    let origin = match d.get_item("origin")? {
        Some(o) => DVec3::from_array(o.extract::<[f64; 3]>()?),
        None => DVec3::ZERO,
    };
    if !origin.is_finite() {
        return Err(PyValueError::new_err(
            "bad Scene state: the origin is not finite",
        ));
    }
    Ok(origin)
}

/// The Rust scene of each stored source, found in the built scene by following its instances
/// (each source is stored after those it places, so walking sources from the last finds every
/// source's scene before its own instances need it). `None` for a source no instance reaches.
fn placed_scenes(
    rust: &raypick::Scene,
    geometries: &[Bound<'_, PyDict>],
    sources: &[Bound<'_, PyDict>],
) -> PyResult<Vec<Option<Arc<raypick::Scene>>>> {
    let mismatch =
        || PyValueError::new_err("bad Scene state: the scene and the geometries disagree");
    let mut found: Vec<Option<Arc<raypick::Scene>>> = vec![None; sources.len()];
    let visit = |scene: &raypick::Scene,
                 dicts: &[Bound<'_, PyDict>],
                 found: &mut Vec<Option<Arc<raypick::Scene>>>|
     -> PyResult<()> {
        for (id, d) in dicts.iter().enumerate() {
            if get(d, "kind")?.extract::<String>()? != "instance" {
                continue;
            }
            let k: usize = get(d, "source")?.extract()?;
            let Some(raypick::Geometry::Instance(inst)) = scene.geometry(id as u32) else {
                return Err(mismatch());
            };
            let slot = found.get_mut(k).ok_or_else(mismatch)?;
            slot.get_or_insert_with(|| inst.scene().clone());
        }
        Ok(())
    };
    visit(rust, geometries, &mut found)?;
    for k in (0..sources.len()).rev() {
        let Some(scene) = found[k].clone() else {
            continue;
        };
        let dicts: Vec<Bound<'_, PyDict>> = get(&sources[k], "geometries")?
            .cast::<PyList>()?
            .iter()
            .map(|g| g.cast_into::<PyDict>().map_err(PyErr::from))
            .collect::<PyResult<_>>()?;
        visit(&scene, &dicts, &mut found)?;
    }
    Ok(found)
}

pub(super) fn get_state<'py>(scene: &PyScene, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let built = {
        let mut guard = scene.lock(py);
        build(py, &mut guard)?
    };
    let bytes = py.detach(|| built.scene.to_bytes());
    let state = scene.lock(py);
    let mut sources = Sources::new();
    let geoms = PyList::empty(py);
    for e in &state.entries {
        geoms.append(entry_to_py(py, e, &mut sources)?)?;
    }
    let srcs = PyList::new(py, sources.dicts)?;
    let d = PyDict::new(py);
    d.set_item("version", STATE_VERSION)?;
    d.set_item("origin", state.origin.to_array())?;
    d.set_item("geometries", geoms)?;
    d.set_item("sources", srcs)?;
    // Only while the geometries are those the scene was built from (another thread may have
    // added one since): then the receiver takes the built scene as it is.
    if state.built.as_ref().is_some_and(|b| Arc::ptr_eq(b, &built)) {
        d.set_item("scene", PyBytes::new(py, &bytes))?;
    }
    Ok(d)
}

pub(super) fn set_state(
    scene: &PyScene,
    py: Python<'_>,
    state: &Bound<'_, PyDict>,
) -> PyResult<()> {
    let version: u32 = get(state, "version")?.extract()?;
    if !(1..=STATE_VERSION).contains(&version) {
        return Err(PyValueError::new_err(format!(
            "Scene state version {version} is not supported (this raypick reads {STATE_VERSION})"
        )));
    }
    let source_dicts: Vec<Bound<'_, PyDict>> = get(state, "sources")?
        .cast::<PyList>()?
        .iter()
        .map(|s| s.cast_into::<PyDict>().map_err(PyErr::from))
        .collect::<PyResult<_>>()?;
    let geometry_dicts: Vec<Bound<'_, PyDict>> = get(state, "geometries")?
        .cast::<PyList>()?
        .iter()
        .map(|g| g.cast_into::<PyDict>().map_err(PyErr::from))
        .collect::<PyResult<_>>()?;
    // The built scene, when the state carries it (version 3): no build, for it or for the
    // scenes its instances place.
    let built = match state.get_item("scene")? {
        Some(bytes) => {
            let bytes = bytes.cast::<PyBytes>()?.as_bytes();
            let rust = py
                .detach(|| raypick::Scene::from_bytes(bytes))
                .map_err(|e| PyValueError::new_err(format!("bad Scene state: {e}")))?;
            Some(rust)
        }
        None => None,
    };
    let placed = match &built {
        Some(rust) => placed_scenes(rust, &geometry_dicts, &source_dicts)?,
        None => vec![None; source_dicts.len()],
    };
    let mut sources = Vec::new();
    for (s, scene) in source_dicts.iter().zip(placed) {
        // A source's instances place sources stored before it.
        let entries = get(s, "geometries")?
            .cast::<PyList>()?
            .iter()
            .map(|g| entry_from_py(g.cast::<PyDict>()?, &sources))
            .collect::<PyResult<Vec<_>>>()?;
        let remap: Option<u32> = get(s, "remap")?.extract()?;
        let origin = origin_of(s)?;
        let scene = match scene {
            Some(scene) => scene,
            None => Arc::new(py.detach(|| build_rust_scene(&entries, origin))?),
        };
        sources.push(Arc::new(Source {
            entries,
            scene,
            remap,
            origin,
        }));
    }
    let entries = geometry_dicts
        .iter()
        .map(|g| entry_from_py(g, &sources))
        .collect::<PyResult<Vec<_>>>()?;
    let origin = origin_of(state)?;
    let built = match built {
        Some(rust) if rust.num_geometries() == entries.len() => Some(Arc::new(Built {
            scene: Arc::new(rust),
            entries: entries.clone(),
            origin,
        })),
        Some(_) => {
            return Err(PyValueError::new_err(
                "bad Scene state: the scene and the geometries disagree",
            ))
        }
        None => None,
    };
    let mut st = scene.lock(py);
    *st = State {
        entries,
        origin,
        built,
        ..State::default()
    };
    for s in &sources {
        if let Some(g) = s.remap {
            st.geometry_sources.insert(g, s.clone());
        }
    }
    Ok(())
}
