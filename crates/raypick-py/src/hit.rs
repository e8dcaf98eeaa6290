//! `raypick.Hit`: one hit, as returned by `Scene.pick`.

use glam::DVec3;
use pyo3::prelude::*;
use raypick::{Hit, InstancePath};

/// One ray hit (returned by :meth:`Scene.pick`).
///
/// Attributes:
///     t: ray parameter of the hit (for a camera ray: world distance from the near plane).
///     point: world-space hit point ``(x, y, z)``.
///     normal: unit geometric normal in world space ``(x, y, z)``.
///     u, v: barycentrics (``u`` weights the triangle's second vertex, ``v`` its third; 0 for
///         spheres).
///     primitive_id: triangle or sphere index in its geometry.
///     geometry_id: geometry id (inside the placed scene for an instanced hit).
///     instance_id: the top-level instance's geometry id, or ``None`` when not instanced.
///     instance_path: every instance on the way, outermost first (nested instances).
///     geometry_name: the hit geometry's name, or ``None``.
///
/// Example::
///
///     >>> s = raypick.Scene()
///     >>> s.add_spheres([[0, 0, 0]], 1.0, name="ball")
///     0
///     >>> hit = s.pick(raypick.Camera([0, 0, 5], [0, 0, 0]), 320, 240)
///     >>> hit.geometry_name, hit.primitive_id, round(hit.t, 4)   # t from the near plane
///     ('ball', 0, 3.99)
#[pyclass(name = "Hit", module = "raypick._raypick", frozen, get_all)]
#[derive(Clone, Debug)]
pub struct PyHit {
    /// Ray parameter of the hit (for a camera ray: world distance from the near plane).
    t: f32,
    /// World-space hit point ``(x, y, z)``.
    point: (f32, f32, f32),
    /// Unit geometric normal in world space ``(x, y, z)``.
    normal: (f32, f32, f32),
    /// Barycentric weight of the triangle's second vertex (0 for spheres).
    u: f32,
    /// Barycentric weight of the triangle's third vertex (0 for spheres).
    v: f32,
    /// Triangle or sphere index in its geometry.
    primitive_id: u32,
    /// Geometry id (inside the placed scene for an instanced hit).
    geometry_id: u32,
    /// The top-level instance's geometry id, or ``None`` when not instanced.
    instance_id: Option<u32>,
    /// Every instance the hit was reached through, outermost first (``[]`` when not instanced;
    /// more than one id when instances nest).
    instance_path: Vec<u32>,
    /// The hit geometry's name, or ``None``.
    geometry_name: Option<String>,
}

impl PyHit {
    /// A Python hit from a Rust one and its instance path (from the engine's path queries) in the
    /// scene's frame at `origin`; `geometry_id` is the id to report (see `Built::geometry_id_of`).
    pub fn new(
        h: &Hit,
        path: &InstancePath,
        origin: DVec3,
        geometry_id: u32,
        geometry_name: Option<String>,
    ) -> Self {
        Self {
            t: h.t,
            point: (h.point.as_dvec3() + origin).as_vec3().into(),
            normal: h.normal.into(),
            u: h.u,
            v: h.v,
            primitive_id: h.prim,
            geometry_id,
            instance_id: h.instance,
            instance_path: path.as_slice().to_vec(),
            geometry_name,
        }
    }
}

#[pymethods]
impl PyHit {
    fn __repr__(&self) -> String {
        format!(
            "raypick.Hit(t={}, point={:?}, normal={:?}, u={}, v={}, primitive_id={}, geometry_id={}, instance_id={}, geometry_name={})",
            self.t,
            self.point,
            self.normal,
            self.u,
            self.v,
            self.primitive_id,
            self.geometry_id,
            self.instance_id
                .map_or_else(|| "None".to_owned(), |i| i.to_string()),
            self.geometry_name
                .as_deref()
                .map_or_else(|| "None".to_owned(), |n| format!("{n:?}"))
        )
    }
}
