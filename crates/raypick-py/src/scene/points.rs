//! Point queries: Open3D's `compute_closest_points`, `compute_distance`,
//! `compute_signed_distance`, `compute_occupancy`, and trimesh's `contains` and
//! `proximity.closest_point`. Points are any `(..., 3)` real array; answers are shaped like its
//! leading dimensions. Each batch runs detached from the GIL on the requested threads, through the
//! engine's batches (points in Morton order, each query starting from its neighbour's answer);
//! the answers are those of single queries, whatever the number of threads.

use glam::{DVec3, Vec3};
use numpy::{PyArrayDyn, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use raypick::{ClosestPoint, InsideMethod};

use super::{Built, PyScene, INVALID_ID};
use crate::arrays::{pooled, read_floats_from, to_numpy, Floats};
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
    let lead = &f.lead;
    let at = pooled::<f32>(py, lead, &[3])?;
    let geometry_ids = pooled::<u32>(py, lead, &[])?;
    let primitive_ids = pooled::<u32>(py, lead, &[])?;
    let primitive_uvs = pooled::<f32>(py, lead, &[2])?;
    let primitive_normals = pooled::<f32>(py, lead, &[3])?;
    {
        let (mut a, mut g, mut p) = (
            at.readwrite(),
            geometry_ids.readwrite(),
            primitive_ids.readwrite(),
        );
        let (mut uv, mut n) = (primitive_uvs.readwrite(), primitive_normals.readwrite());
        let out = ClosestOut {
            points: a.as_slice_mut()?,
            geometry_ids: g.as_slice_mut()?,
            primitive_ids: p.as_slice_mut()?,
            primitive_uvs: uv.as_slice_mut()?,
            primitive_normals: n.as_slice_mut()?,
        };
        batch(py, nthreads, || {
            // With the instance path where instances nest (the geometry ids depend on it);
            // elsewhere the top-level instance is the whole path.
            if built.nests() {
                let found = built.scene.closest_point_paths(&points);
                out.write(&built, &found, |c| (&c.0, c.1.as_slice()));
            } else {
                let found = built.scene.closest_points(&points);
                out.write(&built, &found, |c| (c, c.instance.as_slice()));
            }
        })?;
    }
    let d = PyDict::new(py);
    d.set_item("points", at)?;
    d.set_item("geometry_ids", geometry_ids)?;
    d.set_item("primitive_ids", primitive_ids)?;
    d.set_item("primitive_uvs", primitive_uvs)?;
    d.set_item("primitive_normals", primitive_normals)?;
    Ok(d)
}

/// The columns of [`compute_closest_points`] as they are filled: the memory of the numpy arrays
/// it returns ([`pooled`], which reuses freed answer arrays), written in place on all the batch's
/// threads, every element (misses too). Handing over fresh `Vec`s, filled on one thread after the
/// batch, cost a fifth of a closest-point batch near the surface (the distances alone, which
/// return one `f32` per point, ran 1.25× faster).
struct ClosestOut<'a> {
    points: &'a mut [f32],
    geometry_ids: &'a mut [u32],
    primitive_ids: &'a mut [u32],
    primitive_uvs: &'a mut [f32],
    primitive_normals: &'a mut [f32],
}

impl ClosestOut<'_> {
    /// Writes `found[i]` into row `i`, with `parts` giving an answer's closest point and its
    /// instance path.
    fn write<T: Sync>(
        self,
        built: &Built,
        found: &[Option<T>],
        parts: impl Fn(&T) -> (&ClosestPoint, &[u32]) + Sync,
    ) {
        use rayon::prelude::*;
        const CHUNK: usize = 4096;
        self.points
            .par_chunks_mut(3 * CHUNK)
            .zip(self.geometry_ids.par_chunks_mut(CHUNK))
            .zip(self.primitive_ids.par_chunks_mut(CHUNK))
            .zip(self.primitive_uvs.par_chunks_mut(2 * CHUNK))
            .zip(self.primitive_normals.par_chunks_mut(3 * CHUNK))
            .zip(found.par_chunks(CHUNK))
            .for_each(|(((((at, geom), prim), uv), normal), found)| {
                // The columns zipped row by row: no index, no bounds check per element.
                let rows = found
                    .iter()
                    .zip(at.chunks_exact_mut(3))
                    .zip(geom.iter_mut())
                    .zip(prim.iter_mut())
                    .zip(uv.chunks_exact_mut(2))
                    .zip(normal.chunks_exact_mut(3));
                for (((((c, at), geom), prim), uv), normal) in rows {
                    match c.as_ref().map(&parts) {
                        Some((c, path)) => {
                            at.copy_from_slice(
                                &(c.point.as_dvec3() + built.origin).as_vec3().to_array(),
                            );
                            *geom = built.geometry_id_of(c.geom, path);
                            *prim = c.prim;
                            uv.copy_from_slice(&[c.u, c.v]);
                            normal.copy_from_slice(&c.normal.to_array());
                        }
                        None => {
                            at.fill(f32::NAN);
                            *geom = INVALID_ID;
                            *prim = INVALID_ID;
                            uv.fill(0.0);
                            normal.fill(0.0);
                        }
                    }
                }
            });
    }
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
