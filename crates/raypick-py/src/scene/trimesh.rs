//! trimesh-style queries (`intersects_first`, `intersects_any`, `intersects_location`): rays as
//! `(N, 3)` origins and `(N, 3)` directions, answers as trimesh's `ray` helpers give them.

use glam::{DVec3, Vec3};
use numpy::PyArrayDyn;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rayon::prelude::*;
use raypick::{Hit, QueryOptions, Ray};

use super::PyScene;
use crate::arrays::{read_floats, read_floats_from, to_numpy};

/// Rays from trimesh-style `(N, 3)` origins and `(N, 3)` directions.
/// The origins are moved into the scene's frame (at `origin`).
pub(super) fn rays_from_pairs(
    origins: &Bound<'_, PyAny>,
    directions: &Bound<'_, PyAny>,
    origin: DVec3,
) -> PyResult<Vec<Ray>> {
    let o = read_floats_from(origins, "ray_origins", 3, Some(2), origin)?;
    let d = read_floats(directions, "ray_directions", 3, Some(2))?;
    if o.lead != d.lead {
        return Err(PyValueError::new_err(format!(
            "ray_origins and ray_directions must have the same length, got {} and {}",
            o.lead[0], d.lead[0]
        )));
    }
    Ok(o.data
        .chunks_exact(3)
        .zip(d.data.chunks_exact(3))
        .map(|(o, d)| Ray::new(Vec3::from_slice(o), Vec3::from_slice(d)))
        .collect())
}

pub(super) fn intersects_first<'py>(
    scene: &PyScene,
    py: Python<'py>,
    ray_origins: &Bound<'py, PyAny>,
    ray_directions: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArrayDyn<i64>>> {
    let built = scene.built(py)?;
    let rays = rays_from_pairs(ray_origins, ray_directions, built.origin)?;
    let out: Vec<i64> = py.detach(|| {
        built
            .scene
            .intersect_batch(&rays, &QueryOptions::default())
            .iter()
            .map(|h| h.as_ref().map_or(-1, |h| i64::from(h.prim)))
            .collect()
    });
    to_numpy(py, out, &[rays.len()], &[])
}

pub(super) fn intersects_any<'py>(
    scene: &PyScene,
    py: Python<'py>,
    ray_origins: &Bound<'py, PyAny>,
    ray_directions: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArrayDyn<bool>>> {
    let built = scene.built(py)?;
    let rays = rays_from_pairs(ray_origins, ray_directions, built.origin)?;
    let out = py.detach(|| built.scene.occluded_batch(&rays, &QueryOptions::default()));
    to_numpy(py, out, &[rays.len()], &[])
}

pub(super) fn intersects_location<'py>(
    scene: &PyScene,
    py: Python<'py>,
    ray_origins: &Bound<'py, PyAny>,
    ray_directions: &Bound<'py, PyAny>,
    multiple_hits: bool,
) -> PyResult<Bound<'py, PyTuple>> {
    let built = scene.built(py)?;
    let rays = rays_from_pairs(ray_origins, ray_directions, built.origin)?;
    let (loc, index_ray, index_tri) = py.detach(|| {
        let per_ray: Vec<Vec<Hit>> = if multiple_hits {
            rays.par_iter()
                .with_min_len(64)
                .map(|r| built.scene.intersect_all(r))
                .collect()
        } else {
            built
                .scene
                .intersect_batch(&rays, &QueryOptions::default())
                .into_iter()
                .map(|h| h.into_iter().collect())
                .collect()
        };
        let mut loc = Vec::new();
        let mut index_ray = Vec::new();
        let mut index_tri = Vec::new();
        for (i, hits) in per_ray.iter().enumerate() {
            for h in hits {
                loc.extend((h.point.as_dvec3() + built.origin).to_array());
                index_ray.push(i as i64);
                index_tri.push(i64::from(h.prim));
            }
        }
        (loc, index_ray, index_tri)
    });
    let k = index_ray.len();
    PyTuple::new(
        py,
        [
            to_numpy(py, loc, &[k], &[3])?.into_any(),
            to_numpy(py, index_ray, &[k], &[])?.into_any(),
            to_numpy(py, index_tri, &[k], &[])?.into_any(),
        ],
    )
}
