//! Point queries: Open3D's `compute_closest_points`, `compute_distance`,
//! `compute_signed_distance`, `compute_occupancy`, and trimesh's `contains` and
//! `proximity.closest_point`. Points are any `(..., 3)` real array; answers are shaped like its
//! leading dimensions. Each batch runs detached from the GIL on the requested threads, through the
//! engine's batches (points in Morton order, each query starting from its neighbour's answer);
//! the answers are those of single queries, whatever the number of threads.

use glam::{DVec3, Vec3};
use numpy::PyArrayDyn;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use raypick::{ClosestPoint, InsideMethod, InstancePath};

use super::{PyScene, INVALID_ID};
use crate::arrays::{put, read_floats_from, to_numpy, Floats};
use crate::threads::{self, NThreads};

/// The `method` argument: `"parity"` or `"winding_number"`.
pub(super) fn inside_method(method: &str) -> PyResult<InsideMethod> {
    match method {
        "parity" => Ok(InsideMethod::Parity),
        "winding_number" => Ok(InsideMethod::WindingNumber),
        other => Err(PyValueError::new_err(format!(
            "method must be 'parity' (closed meshes, exact) or 'winding_number' (meshes with holes), got {other:?}"
        ))),
    }
}

/// Query points moved into the scene's frame (at `origin`).
fn points_of(
    obj: &Bound<'_, PyAny>,
    name: &str,
    exact_ndim: Option<usize>,
    origin: DVec3,
) -> PyResult<(Floats, Vec<Vec3>)> {
    let f = read_floats_from(obj, name, 3, exact_ndim, origin)?;
    let points = f.data.chunks_exact(3).map(Vec3::from_slice).collect();
    Ok((f, points))
}

/// Runs the engine's batch `f` on `nthreads` threads, the GIL released.
fn batch<T: Send>(py: Python<'_>, nthreads: NThreads, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    py.detach(|| threads::run(nthreads, f))
}

pub(super) fn compute_closest_points<'py>(
    scene: &PyScene,
    py: Python<'py>,
    query_points: &Bound<'py, PyAny>,
    nthreads: NThreads,
) -> PyResult<Bound<'py, PyDict>> {
    let built = scene.built(py)?;
    let (f, points) = points_of(query_points, "query_points", None, built.origin)?;
    // With the instance path where instances nest (the geometry ids depend on it); elsewhere
    // the top-level instance is the whole path.
    let nests = built.nests();
    let found: Vec<Option<(ClosestPoint, InstancePath)>> = batch(py, nthreads, || {
        if nests {
            built.scene.closest_point_paths(&points)
        } else {
            let found = built.scene.closest_points(&points);
            found
                .into_iter()
                .map(|c| c.map(|c| (c, InstancePath::EMPTY)))
                .collect()
        }
    })?;
    let n = found.len();
    let (mut at, mut geom, mut prim) = (
        Vec::with_capacity(3 * n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let (mut uvs, mut normals) = (Vec::with_capacity(2 * n), Vec::with_capacity(3 * n));
    for c in &found {
        match c {
            Some((c, path)) => {
                let path = if nests {
                    path.as_slice()
                } else {
                    c.instance.as_slice()
                };
                at.extend((c.point.as_dvec3() + built.origin).as_vec3().to_array());
                geom.push(built.geometry_id_of(c.geom, path));
                prim.push(c.prim);
                uvs.extend([c.u, c.v]);
                normals.extend(c.normal.to_array());
            }
            None => {
                at.extend([f32::NAN; 3]);
                geom.push(INVALID_ID);
                prim.push(INVALID_ID);
                uvs.extend([0.0; 2]);
                normals.extend([0.0; 3]);
            }
        }
    }
    let d = PyDict::new(py);
    put(&d, "points", at, &f.lead, &[3])?;
    put(&d, "geometry_ids", geom, &f.lead, &[])?;
    put(&d, "primitive_ids", prim, &f.lead, &[])?;
    put(&d, "primitive_uvs", uvs, &f.lead, &[2])?;
    put(&d, "primitive_normals", normals, &f.lead, &[3])?;
    Ok(d)
}

pub(super) fn compute_distance<'py>(
    scene: &PyScene,
    py: Python<'py>,
    query_points: &Bound<'py, PyAny>,
    nthreads: NThreads,
) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
    let built = scene.built(py)?;
    let (f, points) = points_of(query_points, "query_points", None, built.origin)?;
    let out = batch(py, nthreads, || built.scene.distances(&points))?;
    to_numpy(py, out, &f.lead, &[])
}

pub(super) fn compute_signed_distance<'py>(
    scene: &PyScene,
    py: Python<'py>,
    query_points: &Bound<'py, PyAny>,
    nthreads: NThreads,
    method: &str,
) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
    let method = inside_method(method)?;
    let built = scene.built(py)?;
    let (f, points) = points_of(query_points, "query_points", None, built.origin)?;
    let out = batch(py, nthreads, || {
        built.scene.signed_distances(&points, method)
    })?;
    to_numpy(py, out, &f.lead, &[])
}

pub(super) fn compute_occupancy<'py>(
    scene: &PyScene,
    py: Python<'py>,
    query_points: &Bound<'py, PyAny>,
    nthreads: NThreads,
    method: &str,
) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
    let method = inside_method(method)?;
    let built = scene.built(py)?;
    let (f, points) = points_of(query_points, "query_points", None, built.origin)?;
    let inside = batch(py, nthreads, || built.scene.contains_batch(&points, method))?;
    let out: Vec<f32> = inside.into_iter().map(|b| f32::from(u8::from(b))).collect();
    to_numpy(py, out, &f.lead, &[])
}

pub(super) fn contains<'py>(
    scene: &PyScene,
    py: Python<'py>,
    points: &Bound<'py, PyAny>,
    method: &str,
) -> PyResult<Bound<'py, PyArrayDyn<bool>>> {
    let method = inside_method(method)?;
    let built = scene.built(py)?;
    let (f, pts) = points_of(points, "points", Some(2), built.origin)?;
    let out = batch(py, NThreads::ALL, || {
        built.scene.contains_batch(&pts, method)
    })?;
    to_numpy(py, out, &f.lead, &[])
}

pub(super) fn closest_point<'py>(
    scene: &PyScene,
    py: Python<'py>,
    points: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    let built = scene.built(py)?;
    let (f, pts) = points_of(points, "points", Some(2), built.origin)?;
    let found = batch(py, NThreads::ALL, || built.scene.closest_points(&pts))?;
    let n = found.len();
    let mut at = Vec::with_capacity(3 * n);
    let mut distance = Vec::with_capacity(n);
    let mut tri = Vec::with_capacity(n);
    for c in &found {
        match c {
            Some(c) => {
                at.extend((c.point.as_dvec3() + built.origin).to_array());
                distance.push(f64::from(c.distance));
                tri.push(i64::from(c.prim));
            }
            None => {
                at.extend([f64::NAN; 3]);
                distance.push(f64::NAN);
                tri.push(-1);
            }
        }
    }
    PyTuple::new(
        py,
        [
            to_numpy(py, at, &f.lead, &[3])?.into_any(),
            to_numpy(py, distance, &f.lead, &[])?.into_any(),
            to_numpy(py, tri, &f.lead, &[])?.into_any(),
        ],
    )
}
