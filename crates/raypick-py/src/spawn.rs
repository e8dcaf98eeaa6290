//! Secondary rays from numpy: the engine's spawn offset
//! ([`raypick::geom::offset::offset_ray_origin`]) over arrays of hit points and normals.

use glam::Vec3;
use numpy::PyArrayDyn;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::arrays::{read_floats, to_numpy};

/// Origins for rays that leave a surface without hitting it again (Wächter & Binder, *Ray Tracing
/// Gems* ch. 6): each point moved off its surface along the normal by a few hundred ulps of its own
/// coordinates (a small fixed amount near zero), the engine's ``offset_ray_origin`` row by row.
///
/// Cast the new rays with ``tnear = 0``. A point computed from a hit in float32 lies a few ulps off
/// its surface; a fixed epsilon would be too small far from the origin and too large near it.
///
/// Args:
///     points: ``(..., 3)`` hit points on the surface.
///     normals: ``(..., 3)`` unit geometric normals, the same shape, each pointing to the side the
///         new ray goes to (flip it for a ray that continues through the surface).
///
/// Returns:
///     ``(..., 3)`` float32 origins.
///
/// Raises:
///     ValueError: the arrays' shapes differ or their last dimension is not 3.
///
/// Example::
///
///     >>> o = raypick.offset_ray_origin([[1000.0, 0.0, 0.5]], [[0.0, 1.0, 0.0]])
///     >>> float(o[0, 0]), bool(o[0, 1] > 0.0), float(o[0, 2])
///     (1000.0, True, 0.5)
#[pyfunction]
pub fn offset_ray_origin<'py>(
    py: Python<'py>,
    points: &Bound<'py, PyAny>,
    normals: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
    let p = read_floats(points, "points", 3, None)?;
    let n = read_floats(normals, "normals", 3, None)?;
    if p.lead != n.lead {
        return Err(PyValueError::new_err(format!(
            "points and normals must have the same shape, got {:?} and {:?} rows",
            p.lead, n.lead
        )));
    }
    let out: Vec<f32> = py.detach(|| {
        p.data
            .chunks_exact(3)
            .zip(n.data.chunks_exact(3))
            .flat_map(|(p, n)| {
                raypick::geom::offset::offset_ray_origin(Vec3::from_slice(p), Vec3::from_slice(n))
                    .to_array()
            })
            .collect()
    });
    to_numpy(py, out, &p.lead, &[3])
}
