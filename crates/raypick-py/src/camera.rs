//! Camera helpers: Open3D's `create_rays_pinhole`, and `raypick.Camera` (a perspective look-at
//! camera over [`raypick::camera::Camera`]) for pixel rays and picking.

use glam::{DVec3, Vec3};
use numpy::PyArrayDyn;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use raypick::camera::{Camera, ClipSpace, Projection, Viewport};
use raypick::Ray;

use crate::arrays::{read_vec3, to_numpy};

/// The rays of Open3D's `RaycastingScene.create_rays_pinhole`, row-major `(height, width, 6)`.
///
/// Open3D's construction, reproduced: focal length `f = width / 2 / tan(fov / 2)` (horizontal field
/// of view), principal point at the image centre, camera rotation with rows `r0 = normalize(up ×
/// forward)`, `r1 = forward × r0`, `r2 = forward`; the ray of pixel `(x, y)` starts at `eye` with
/// direction `r0·(x + ½ − w/2)/f + r1·(y + ½ − h/2)/f + r2`. The direction is *not* unit length: its
/// component along `forward` is 1, so `t_hit` is the depth along the optical axis. Computed in f64
/// and rounded once.
pub fn pinhole_rays(
    fov_deg: f64,
    center: DVec3,
    eye: DVec3,
    up: DVec3,
    width: usize,
    height: usize,
) -> Result<Vec<f32>, &'static str> {
    if !(fov_deg > 0.0 && fov_deg < 180.0) {
        return Err("fov_deg must be in (0, 180)");
    }
    if width == 0 || height == 0 {
        return Err("width_px and height_px must be > 0");
    }
    if !(center.is_finite() && eye.is_finite() && up.is_finite()) {
        return Err("center, eye and up must be finite");
    }
    let forward = (center - eye).normalize_or_zero();
    if forward == DVec3::ZERO {
        return Err("eye and center must differ");
    }
    let up = up.normalize_or_zero();
    let r0 = up.cross(forward).normalize_or_zero();
    // The same threshold as a zero vector: up parallel to the view leaves no image x axis.
    if r0 == DVec3::ZERO || !r0.is_finite() {
        return Err("up must be non-zero and not parallel to center - eye");
    }
    let r1 = forward.cross(r0);
    let f = 0.5 * width as f64 / (0.5 * fov_deg.to_radians()).tan();
    let (cx, cy) = (0.5 * width as f64, 0.5 * height as f64);
    let o = eye.as_vec3().to_array();
    let mut out = Vec::with_capacity(width * height * 6);
    for y in 0..height {
        let b = (y as f64 + 0.5 - cy) / f;
        for x in 0..width {
            let a = (x as f64 + 0.5 - cx) / f;
            let d = (r0 * a + r1 * b + forward).as_vec3();
            out.extend_from_slice(&o);
            out.extend_from_slice(&d.to_array());
        }
    }
    Ok(out)
}

/// Rays of a pinhole camera, exactly as Open3D's
/// ``RaycastingScene.create_rays_pinhole(fov_deg, center, eye, up, width_px, height_px)``.
///
/// Args:
///     fov_deg: horizontal field of view in degrees.
///     center: the point looked at; eye: the camera position; up: the up direction.
///     width_px, height_px: image size.
///
/// Returns:
///     ``(height_px, width_px, 6)`` float32 rays: origin ``eye``, direction through the pixel
///     centre, scaled so that its component along the view direction is 1 (``t_hit`` is depth).
///     The layout is Open3D's, including its orientation: image x runs along ``up x forward``
///     and image y along ``up`` (the image is rotated 180° from the usual camera view), so results
///     can be compared pixel by pixel with Open3D's.
///
/// Example::
///
///     >>> rays = raypick.create_rays_pinhole(60, [0, 0, 0], [0, 0, 5], [0, 1, 0], 640, 480)
///     >>> depth = scene.cast_rays(rays)["t_hit"]    # (480, 640)
#[pyfunction]
pub fn create_rays_pinhole<'py>(
    py: Python<'py>,
    fov_deg: f64,
    center: &Bound<'py, PyAny>,
    eye: &Bound<'py, PyAny>,
    up: &Bound<'py, PyAny>,
    width_px: i64,
    height_px: i64,
) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
    let center = read_vec3(center, "center")?.as_dvec3();
    let eye = read_vec3(eye, "eye")?.as_dvec3();
    let up = read_vec3(up, "up")?.as_dvec3();
    let (w, h) = match (usize::try_from(width_px), usize::try_from(height_px)) {
        (Ok(w), Ok(h)) => (w, h),
        _ => return Err(PyValueError::new_err("width_px and height_px must be > 0")),
    };
    let data = py
        .detach(|| pinhole_rays(fov_deg, center, eye, up, w, h))
        .map_err(PyValueError::new_err)?;
    to_numpy(py, data, &[h, w], &[6])
}

/// A perspective camera looking from ``eye`` at ``target`` (right-handed, OpenGL conventions),
/// for pixel rays and :meth:`Scene.pick`.
///
/// Window coordinates are continuous pixels with the origin at the top-left corner: pixel
/// ``(i, j)`` covers ``[i, i+1) x [j, j+1)`` and its centre is ``(i + 0.5, j + 0.5)``. Pixel rays
/// start on the near plane, have unit directions (``t`` in world units from the near plane) and
/// end at the far plane.
///
/// Args:
///     eye, target, up: ``(3,)`` points / direction.
///     fov_y_deg: vertical field of view in degrees.
///     width, height: viewport size in pixels.
///     near, far: clip distances (``0 < near < far``).
///
/// Example::
///
///     >>> cam = raypick.Camera(eye=[0, 1, 5], target=[0, 0, 0], width=800, height=600)
///     >>> hit = scene.pick(cam, 400, 300)
///     >>> image = scene.cast_rays(cam.rays())["t_hit"]   # (600, 800), row 0 at the top
#[pyclass(name = "Camera", module = "raypick._raypick", frozen)]
#[derive(Clone, Debug)]
pub struct PyCamera {
    camera: Camera,
    eye: Vec3,
    target: Vec3,
    up: Vec3,
    fov_y_deg: f32,
    width: u32,
    height: u32,
    near: f32,
    far: f32,
}

impl PyCamera {
    /// The Rust camera.
    pub fn rust(&self) -> &Camera {
        &self.camera
    }
}

fn ray_row(r: &Ray) -> [f32; 6] {
    [
        r.origin.x, r.origin.y, r.origin.z, r.dir.x, r.dir.y, r.dir.z,
    ]
}

#[pymethods]
impl PyCamera {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (eye, target, up=None, fov_y_deg=60.0, width=640, height=480, near=0.01, far=1000.0))]
    fn new(
        eye: &Bound<'_, PyAny>,
        target: &Bound<'_, PyAny>,
        up: Option<&Bound<'_, PyAny>>,
        fov_y_deg: f32,
        width: u32,
        height: u32,
        near: f32,
        far: f32,
    ) -> PyResult<Self> {
        let eye = read_vec3(eye, "eye")?;
        let target = read_vec3(target, "target")?;
        let up = match up {
            Some(u) if !u.is_none() => read_vec3(u, "up")?,
            _ => Vec3::Y,
        };
        if width == 0 || height == 0 {
            return Err(PyValueError::new_err("width and height must be > 0"));
        }
        let viewport = Viewport::new(width as f32, height as f32);
        let err = |e: raypick::camera::CameraError| PyValueError::new_err(e.to_string());
        let projection = Projection::perspective(
            fov_y_deg.to_radians(),
            viewport.aspect(),
            near,
            far,
            ClipSpace::OpenGl,
        )
        .map_err(err)?;
        let camera = Camera::look_at(eye, target, up, projection, viewport).map_err(err)?;
        Ok(Self {
            camera,
            eye,
            target,
            up,
            fov_y_deg,
            width,
            height,
            near,
            far,
        })
    }

    /// Viewport width in pixels.
    #[getter]
    fn width(&self) -> u32 {
        self.width
    }

    /// Viewport height in pixels.
    #[getter]
    fn height(&self) -> u32 {
        self.height
    }

    /// The camera position ``(3,)``.
    #[getter]
    fn eye<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
        to_numpy(py, self.eye.to_array().to_vec(), &[3], &[])
    }

    /// The ray through window position ``(x, y)``: ``(6,)`` float32 ``[origin, unit direction]``,
    /// origin on the near plane.
    fn pixel_ray<'py>(
        &self,
        py: Python<'py>,
        x: f32,
        y: f32,
    ) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
        let r = self.camera.pixel_ray(x, y);
        to_numpy(py, ray_row(&r).to_vec(), &[6], &[])
    }

    /// The rays through every pixel centre: ``(height, width, 6)`` float32, row 0 at the top.
    fn rays<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
        let (w, h) = (self.width, self.height);
        let camera = self.camera;
        let data: Vec<f32> = py.detach(|| {
            (0..h)
                .flat_map(|j| (0..w).map(move |i| (i, j)))
                .flat_map(|(i, j)| ray_row(&camera.pixel_center_ray(i, j)))
                .collect()
        });
        to_numpy(py, data, &[h as usize, w as usize], &[6])
    }

    fn __repr__(&self) -> String {
        format!(
            "raypick.Camera(eye={:?}, target={:?}, up={:?}, fov_y_deg={}, width={}, height={}, near={}, far={})",
            self.eye.to_array(),
            self.target.to_array(),
            self.up.to_array(),
            self.fov_y_deg,
            self.width,
            self.height,
            self.near,
            self.far
        )
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let c = slf.get();
        let args = (
            c.eye.to_array().to_vec(),
            c.target.to_array().to_vec(),
            c.up.to_array().to_vec(),
            c.fov_y_deg,
            c.width,
            c.height,
            c.near,
            c.far,
        );
        PyTuple::new(
            py,
            [
                slf.get_type().into_any(),
                args.into_pyobject(py)?.into_any(),
            ],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinhole_centre_pixel_looks_at_the_centre() {
        // An odd image has a pixel whose centre is the principal point: its ray is `forward`.
        let rays =
            pinhole_rays(90.0, DVec3::ZERO, DVec3::new(0.0, 0.0, 5.0), DVec3::Y, 3, 3).unwrap();
        let mid = &rays[(3 + 1) * 6..(3 + 1) * 6 + 6];
        assert_eq!(mid, &[0.0, 0.0, 5.0, 0.0, 0.0, -1.0]);
        // fov 90° on 3 px: f = 1.5, pixel (0, 0) is at (-1/1.5, -1/1.5); Open3D's x axis is
        // up × forward = Y × -Z = -X, its y axis forward × x = -Z × -X = +Y.
        let first = &rays[..6];
        let k = 1.0f32 / 1.5;
        assert!((first[3] - k).abs() < 1e-7, "{first:?}");
        assert!((first[4] + k).abs() < 1e-7, "{first:?}");
        assert_eq!(first[5], -1.0);
    }

    #[test]
    fn pinhole_rejects_degenerate_input() {
        let e = DVec3::new(0.0, 0.0, 5.0);
        assert!(pinhole_rays(0.0, DVec3::ZERO, e, DVec3::Y, 4, 4).is_err());
        assert!(pinhole_rays(60.0, e, e, DVec3::Y, 4, 4).is_err());
        assert!(pinhole_rays(60.0, DVec3::ZERO, e, DVec3::Z, 4, 4).is_err());
        assert!(pinhole_rays(60.0, DVec3::ZERO, e, DVec3::Y, 0, 4).is_err());
    }
}
