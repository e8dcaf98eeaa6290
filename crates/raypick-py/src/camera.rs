//! Camera helpers: Open3D's `create_rays_pinhole` (both forms), and `raypick.Camera` (a look-at
//! camera, perspective or orthographic, or a renderer's own matrices, in every clip-space
//! convention, over [`raypick::camera::Camera`]) for pixel rays and picking.

use glam::{DMat3, DMat4, DVec3, Mat4, Vec3};
use numpy::PyArrayDyn;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use raypick::camera::{Camera, ClipSpace, DepthOrder, PixelOrigin, Projection, Viewport};
use raypick::Ray;

use crate::arrays::{read_floats, read_vec3, to_numpy};

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

/// The rays of Open3D's `create_rays_pinhole(intrinsic_matrix, extrinsic_matrix, width_px,
/// height_px)`, row-major `(height, width, 6)`.
///
/// Open3D's construction, reproduced: with `K` the 3×3 intrinsic matrix and `[R | t]` the
/// `camera_from_world` extrinsic matrix, every ray starts at the camera centre `-Rᵀ t` and pixel
/// `(x, y)` has direction `Rᵀ K⁻¹ (x + ½, y + ½, 1)` (`Rᵀ` stands for `R⁻¹`, as in Open3D, so
/// `R` must be a rotation): its component along the optical axis is 1, so `t_hit` is depth.
/// Computed in f64 and rounded once.
pub fn pinhole_rays_intrinsic(
    intrinsic: DMat3,
    extrinsic: DMat4,
    width: usize,
    height: usize,
) -> Result<Vec<f32>, &'static str> {
    if width == 0 || height == 0 {
        return Err("width_px and height_px must be > 0");
    }
    if !(intrinsic.is_finite() && extrinsic.is_finite()) {
        return Err("intrinsic_matrix and extrinsic_matrix must be finite");
    }
    let det = intrinsic.determinant();
    if !(det != 0.0 && det.is_finite()) {
        return Err("intrinsic_matrix must be invertible");
    }
    let k_inv = intrinsic.inverse();
    let r_t = DMat3::from_mat4(extrinsic).transpose();
    let t = extrinsic.w_axis.truncate();
    let world_from_pixel = r_t * k_inv;
    let o = (-(r_t * t)).as_vec3().to_array();
    let mut out = Vec::with_capacity(width * height * 6);
    for y in 0..height {
        for x in 0..width {
            let d = world_from_pixel * DVec3::new(x as f64 + 0.5, y as f64 + 0.5, 1.0);
            out.extend_from_slice(&o);
            out.extend_from_slice(&d.as_vec3().to_array());
        }
    }
    Ok(out)
}

/// The arguments of one form of `create_rays_pinhole`, matched by position then by keyword.
fn bind<'py>(
    names: &[&str],
    args: &Bound<'py, PyTuple>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let usage = format!("create_rays_pinhole({})", names.join(", "));
    if args.len() > names.len() {
        return Err(PyTypeError::new_err(format!(
            "{usage} takes {} arguments, got {}",
            names.len(),
            args.len()
        )));
    }
    let mut bound: Vec<Option<Bound<'py, PyAny>>> = args.iter().map(Some).collect();
    bound.resize(names.len(), None);
    if let Some(kwargs) = kwargs {
        for (key, value) in kwargs.iter() {
            let key: String = key.extract()?;
            let k = names.iter().position(|n| *n == key).ok_or_else(|| {
                PyTypeError::new_err(format!(
                    "{usage} got an unexpected keyword argument {key:?}"
                ))
            })?;
            if bound[k].is_some() {
                return Err(PyTypeError::new_err(format!(
                    "{usage} got multiple values for {key:?}"
                )));
            }
            bound[k] = Some(value);
        }
    }
    bound
        .into_iter()
        .zip(names)
        .map(|(b, n)| b.ok_or_else(|| PyTypeError::new_err(format!("{usage} is missing {n:?}"))))
        .collect()
}

fn read_size(width: &Bound<'_, PyAny>, height: &Bound<'_, PyAny>) -> PyResult<(usize, usize)> {
    let (w, h): (i64, i64) = (width.extract()?, height.extract()?);
    match (usize::try_from(w), usize::try_from(h)) {
        (Ok(w), Ok(h)) if w > 0 && h > 0 => Ok((w, h)),
        _ => Err(PyValueError::new_err("width_px and height_px must be > 0")),
    }
}

/// A `(rows, cols)` float matrix as f64 values in row-major order.
fn read_matrix_f64(
    obj: &Bound<'_, PyAny>,
    name: &str,
    rows: usize,
    cols: usize,
) -> PyResult<Vec<f64>> {
    let np = obj.py().import("numpy")?;
    let a = np.call_method1("asarray", (obj, "float64"))?;
    let shape: Vec<usize> = a.getattr("shape")?.extract()?;
    if shape != [rows, cols] {
        return Err(PyValueError::new_err(format!(
            "{name} must have shape ({rows}, {cols}), got {shape:?}"
        )));
    }
    a.call_method0("ravel")?.extract()
}

/// Rays of a pinhole camera, exactly as Open3D's ``RaycastingScene.create_rays_pinhole``, in
/// either of its two forms:
///
/// - ``create_rays_pinhole(fov_deg, center, eye, up, width_px, height_px)``: horizontal field of
///   view in degrees, the point looked at, the camera position, the up direction;
/// - ``create_rays_pinhole(intrinsic_matrix, extrinsic_matrix, width_px, height_px)``: the
///   ``(3, 3)`` intrinsic matrix ``K`` (focal lengths and principal point in pixels) and the
///   ``(4, 4)`` ``camera_from_world`` extrinsic matrix ``[R | t]``; rays start at ``-R^T t``
///   with direction ``R^T K^-1 (x + 0.5, y + 0.5, 1)``.
///
/// Returns:
///     ``(height_px, width_px, 6)`` float32 rays: origin at the camera, direction through the
///     pixel centre, scaled so that its component along the optical axis is 1 (``t_hit`` is
///     depth). The layout is Open3D's: in the first form image x runs along ``up x forward`` and
///     image y along ``up`` (the image is rotated 180° from the usual camera view), so results
///     can be compared pixel by pixel with Open3D's.
///
/// Example::
///
///     >>> rays = raypick.create_rays_pinhole(60, [0, 0, 0], [0, 0, 5], [0, 1, 0], 640, 480)
///     >>> depth = scene.cast_rays(rays)["t_hit"]    # (480, 640)
///     >>> K = [[500, 0, 320], [0, 500, 240], [0, 0, 1]]
///     >>> rays = raypick.create_rays_pinhole(K, np.eye(4), 640, 480)
#[pyfunction]
#[pyo3(signature = (*args, **kwargs))]
pub fn create_rays_pinhole<'py>(
    py: Python<'py>,
    args: &Bound<'py, PyTuple>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
    // The intrinsic form's first argument is a matrix, the other's a number.
    let intrinsic_form = match args.iter().next() {
        Some(first) => first.extract::<f64>().is_err(),
        None => kwargs.is_some_and(|k| k.contains("intrinsic_matrix").unwrap_or(false)),
    };
    let (data, w, h) = if intrinsic_form {
        let a = bind(
            &[
                "intrinsic_matrix",
                "extrinsic_matrix",
                "width_px",
                "height_px",
            ],
            args,
            kwargs,
        )?;
        let k = read_matrix_f64(&a[0], "intrinsic_matrix", 3, 3)?;
        let e = read_matrix_f64(&a[1], "extrinsic_matrix", 4, 4)?;
        let (w, h) = read_size(&a[2], &a[3])?;
        // Row-major values: glam's column-major constructors take the transpose.
        let k = DMat3::from_cols_slice(&k).transpose();
        let e = DMat4::from_cols_slice(&e).transpose();
        let data = py
            .detach(|| pinhole_rays_intrinsic(k, e, w, h))
            .map_err(PyValueError::new_err)?;
        (data, w, h)
    } else {
        let a = bind(
            &["fov_deg", "center", "eye", "up", "width_px", "height_px"],
            args,
            kwargs,
        )?;
        let fov_deg: f64 = a[0].extract()?;
        let center = read_vec3(&a[1], "center")?.as_dvec3();
        let eye = read_vec3(&a[2], "eye")?.as_dvec3();
        let up = read_vec3(&a[3], "up")?.as_dvec3();
        let (w, h) = read_size(&a[4], &a[5])?;
        let data = py
            .detach(|| pinhole_rays(fov_deg, center, eye, up, w, h))
            .map_err(PyValueError::new_err)?;
        (data, w, h)
    };
    to_numpy(py, data, &[h, w], &[6])
}

/// A camera for pixel rays and :meth:`Scene.pick`: a look-at camera with a perspective or
/// orthographic projection (the constructor), or the view and projection matrices a renderer
/// already has (:meth:`from_matrices`), for the OpenGL, Direct3D / wgpu / Metal or Vulkan clip
/// space, with standard or reversed depth.
///
/// Window coordinates are continuous pixels with the origin at the top-left corner (or the
/// bottom-left with ``pixel_origin="bottom-left"``, OpenGL's window coordinates): pixel ``(i, j)``
/// covers ``[i, i+1) x [j, j+1)`` and its centre is ``(i + 0.5, j + 0.5)``. Pixel rays start on
/// the near plane, have unit directions (``t`` in world units from the near plane) and end at the
/// far plane (``inf`` for an infinite far plane). The convention changes the matrices, not the
/// rays: the same camera in every convention casts the same rays.
///
/// Args:
///     eye, target, up: ``(3,)`` points / direction (right-handed, ``up`` default ``+y``).
///     fov_y_deg: vertical field of view in degrees (perspective).
///     width, height: viewport size in pixels.
///     near, far: clip distances (``0 < near < far``; ``far=inf`` for an infinite perspective).
///     projection: ``"perspective"`` (default) or ``"orthographic"``.
///     ortho_height: the orthographic view's height in world units; default the height the
///         perspective view has at ``target``, ``2 |target - eye| tan(fov_y / 2)``.
///     convention: ``"opengl"`` (default), ``"direct3d"`` (also ``"wgpu"``, ``"metal"``) or
///         ``"vulkan"`` (clip y down).
///     reverse_z: reversed depth (near → 1, far → 0), perspective only.
///     pixel_origin: ``"top-left"`` (default) or ``"bottom-left"``.
///
/// Example::
///
///     >>> cam = raypick.Camera(eye=[0, 1, 5], target=[0, 0, 0], width=800, height=600)
///     >>> hit = scene.pick(cam, 400, 300)
///     >>> image = scene.cast_rays(cam.rays())["t_hit"]   # (600, 800), row 0 at the top
///     >>> top = raypick.Camera([0, 9, 0], [0, 0, 0], up=[0, 0, -1], projection="orthographic",
///     ...                      ortho_height=4.0, convention="vulkan")
#[pyclass(name = "Camera", module = "raypick._raypick", frozen)]
#[derive(Clone, Debug)]
pub struct PyCamera {
    camera: Camera,
    made: Made,
    width: u32,
    height: u32,
    clip_space: ClipSpace,
    reverse_z: bool,
    pixel_origin: PixelOrigin,
}

/// How a camera was made (for `repr` and pickling).
#[derive(Clone, Debug)]
enum Made {
    LookAt {
        eye: Vec3,
        target: Vec3,
        up: Vec3,
        fov_y_deg: f32,
        near: f32,
        far: f32,
        orthographic: bool,
        ortho_height: Option<f32>,
    },
    /// Row-major (numpy) `view_from_world` and `clip_from_view`.
    Matrices { view: [f32; 16], proj: [f32; 16] },
}

impl PyCamera {
    /// The Rust camera.
    pub fn rust(&self) -> &Camera {
        &self.camera
    }

    /// The camera in a scene's frame at `origin` (world position of the frame's origin): its view
    /// matrix times `T(origin)`, composed in `f64` and rounded once, so a camera near a model far
    /// from zero keeps a small translation.
    pub fn in_frame(&self, origin: DVec3) -> PyResult<Camera> {
        if origin == DVec3::ZERO {
            return Ok(self.camera);
        }
        let view = self.camera.view_from_world().as_dmat4() * DMat4::from_translation(origin);
        Camera::new(
            view.as_mat4(),
            *self.camera.projection(),
            *self.camera.viewport(),
        )
        .map(|c| c.with_pixel_origin(self.pixel_origin))
        .map_err(camera_error)
    }
}

fn ray_row(r: &Ray) -> [f32; 6] {
    [
        r.origin.x, r.origin.y, r.origin.z, r.dir.x, r.dir.y, r.dir.z,
    ]
}

fn camera_error(e: raypick::camera::CameraError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

fn read_clip_space(convention: &str) -> PyResult<ClipSpace> {
    match convention.to_ascii_lowercase().as_str() {
        "opengl" | "gl" | "webgl" => Ok(ClipSpace::OpenGl),
        "direct3d" | "d3d" | "wgpu" | "webgpu" | "metal" => Ok(ClipSpace::Direct3D),
        "vulkan" => Ok(ClipSpace::Vulkan),
        other => Err(PyValueError::new_err(format!(
            "convention must be \"opengl\", \"direct3d\" (\"wgpu\", \"metal\") or \"vulkan\", got {other:?}"
        ))),
    }
}

fn clip_space_name(c: ClipSpace) -> &'static str {
    match c {
        ClipSpace::OpenGl => "opengl",
        ClipSpace::Direct3D => "direct3d",
        ClipSpace::Vulkan => "vulkan",
    }
}

fn read_pixel_origin(origin: &str) -> PyResult<PixelOrigin> {
    match origin {
        "top-left" => Ok(PixelOrigin::TopLeft),
        "bottom-left" => Ok(PixelOrigin::BottomLeft),
        other => Err(PyValueError::new_err(format!(
            "pixel_origin must be \"top-left\" or \"bottom-left\", got {other:?}"
        ))),
    }
}

fn pixel_origin_name(o: PixelOrigin) -> &'static str {
    match o {
        PixelOrigin::TopLeft => "top-left",
        PixelOrigin::BottomLeft => "bottom-left",
    }
}

/// A `(4, 4)` matrix in numpy's convention (row-major, `p' = M @ p`) as a glam matrix, and its
/// row-major values.
fn read_mat4(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<(Mat4, [f32; 16])> {
    let f = read_floats(obj, name, 4, Some(2))?;
    if f.lead != [4] {
        return Err(PyValueError::new_err(format!(
            "{name} must have shape (4, 4), got ({}, 4)",
            f.lead[0]
        )));
    }
    let mut m = [0.0f32; 16];
    m.copy_from_slice(&f.data);
    if m.iter().any(|x| !x.is_finite()) {
        return Err(PyValueError::new_err(format!("{name} must be finite")));
    }
    // numpy rows are glam columns of the transpose.
    Ok((Mat4::from_cols_array(&m).transpose(), m))
}

fn mat4_numpy<'py>(py: Python<'py>, m: Mat4) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
    to_numpy(py, m.transpose().to_cols_array().to_vec(), &[4], &[4])
}

#[pymethods]
impl PyCamera {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (
        eye, target, up=None, fov_y_deg=60.0, width=640, height=480, near=0.01, far=1000.0, *,
        projection="perspective", ortho_height=None, convention="opengl", reverse_z=false,
        pixel_origin="top-left"
    ))]
    fn new(
        eye: &Bound<'_, PyAny>,
        target: &Bound<'_, PyAny>,
        up: Option<&Bound<'_, PyAny>>,
        fov_y_deg: f32,
        width: u32,
        height: u32,
        near: f32,
        far: f32,
        projection: &str,
        ortho_height: Option<f32>,
        convention: &str,
        reverse_z: bool,
        pixel_origin: &str,
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
        let clip_space = read_clip_space(convention)?;
        let origin = read_pixel_origin(pixel_origin)?;
        let orthographic = match projection {
            "perspective" => false,
            "orthographic" => true,
            other => {
                return Err(PyValueError::new_err(format!(
                    "projection must be \"perspective\" or \"orthographic\", got {other:?}"
                )))
            }
        };
        let viewport = Viewport::new(width as f32, height as f32);
        let aspect = viewport.aspect();
        let fov_y = fov_y_deg.to_radians();
        let proj = if orthographic {
            if reverse_z {
                return Err(PyValueError::new_err(
                    "reverse_z is for perspective projections",
                ));
            }
            let h =
                ortho_height.unwrap_or_else(|| 2.0 * (target - eye).length() * (0.5 * fov_y).tan());
            if !(h.is_finite() && h > 0.0) {
                return Err(PyValueError::new_err(format!(
                    "ortho_height must be finite and > 0, got {h}"
                )));
            }
            Projection::orthographic_symmetric(h, aspect, near, far, clip_space)
        } else if far == f32::INFINITY {
            if reverse_z {
                Projection::perspective_infinite_reverse_z(fov_y, aspect, near, clip_space)
            } else {
                Projection::perspective_infinite(fov_y, aspect, near, clip_space)
            }
        } else if reverse_z {
            Projection::perspective_reverse_z(fov_y, aspect, near, far, clip_space)
        } else {
            Projection::perspective(fov_y, aspect, near, far, clip_space)
        }
        .map_err(camera_error)?;
        let camera = Camera::look_at(eye, target, up, proj, viewport)
            .map_err(camera_error)?
            .with_pixel_origin(origin);
        Ok(Self {
            camera,
            made: Made::LookAt {
                eye,
                target,
                up,
                fov_y_deg,
                near,
                far,
                orthographic,
                ortho_height,
            },
            width,
            height,
            clip_space,
            reverse_z,
            pixel_origin: origin,
        })
    }

    /// A camera from a renderer's own matrices: ``view_from_world`` (the view matrix) and
    /// ``clip_from_view`` (the projection matrix), both ``(4, 4)`` in numpy's convention
    /// (``p_clip = clip_from_view @ view_from_world @ [x, y, z, 1]``; transpose a column-major
    /// OpenGL / glm array first), any handedness, perspective or orthographic.
    ///
    /// Args:
    ///     convention: the clip space the projection targets (as for the constructor).
    ///     reverse_z: the projection maps the near plane to NDC depth 1.
    ///     pixel_origin: ``"top-left"`` or ``"bottom-left"``.
    ///
    /// Example::
    ///
    ///     >>> cam = raypick.Camera.from_matrices(view, proj, 1280, 720, convention="direct3d")
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (
        view_from_world, clip_from_view, width, height, *, convention="opengl", reverse_z=false,
        pixel_origin="top-left"
    ))]
    fn from_matrices(
        view_from_world: &Bound<'_, PyAny>,
        clip_from_view: &Bound<'_, PyAny>,
        width: u32,
        height: u32,
        convention: &str,
        reverse_z: bool,
        pixel_origin: &str,
    ) -> PyResult<Self> {
        let (view, view_rows) = read_mat4(view_from_world, "view_from_world")?;
        let (proj, proj_rows) = read_mat4(clip_from_view, "clip_from_view")?;
        if width == 0 || height == 0 {
            return Err(PyValueError::new_err("width and height must be > 0"));
        }
        let clip_space = read_clip_space(convention)?;
        let origin = read_pixel_origin(pixel_origin)?;
        let order = if reverse_z {
            DepthOrder::Reversed
        } else {
            DepthOrder::Standard
        };
        let projection = Projection::from_matrix(proj, clip_space, order).map_err(camera_error)?;
        let viewport = Viewport::new(width as f32, height as f32);
        let camera = Camera::new(view, projection, viewport)
            .map_err(camera_error)?
            .with_pixel_origin(origin);
        Ok(Self {
            camera,
            made: Made::Matrices {
                view: view_rows,
                proj: proj_rows,
            },
            width,
            height,
            clip_space,
            reverse_z,
            pixel_origin: origin,
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

    /// The camera position ``(3,)`` (for an orthographic camera, the centre of its view plane
    /// at distance 0).
    #[getter]
    fn eye<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
        let eye = match &self.made {
            Made::LookAt { eye, .. } => *eye,
            Made::Matrices { .. } => self.camera.eye(),
        };
        to_numpy(py, eye.to_array().to_vec(), &[3], &[])
    }

    /// The clip-space convention: ``"opengl"``, ``"direct3d"`` or ``"vulkan"``.
    #[getter]
    fn convention(&self) -> &'static str {
        clip_space_name(self.clip_space)
    }

    /// ``view_from_world`` as a ``(4, 4)`` float32 array (numpy convention).
    #[getter]
    fn view_matrix<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
        mat4_numpy(py, self.camera.view_from_world())
    }

    /// ``clip_from_view`` as a ``(4, 4)`` float32 array (numpy convention).
    #[getter]
    fn projection_matrix<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
        mat4_numpy(py, self.camera.projection().clip_from_view())
    }

    /// The window position ``(x, y, depth)`` of world point ``point`` (depth in the
    /// convention's window depth range, ``[0, 1]``), or ``None`` when it is behind the camera.
    ///
    /// Example::
    ///
    ///     >>> cam = raypick.Camera([0, 0, 5], [0, 0, 0], width=640, height=480)
    ///     >>> [round(c, 3) for c in cam.project([0, 0, 0])[:2]]
    ///     [320.0, 240.0]
    fn project(&self, point: &Bound<'_, PyAny>) -> PyResult<Option<(f32, f32, f32)>> {
        let p = read_vec3(point, "point")?;
        Ok(self.camera.project(p).map(|w| (w.x, w.y, w.z)))
    }

    /// The ray through window position ``(x, y)``: ``(6,)`` float32 ``[origin, unit direction]``,
    /// origin on the near plane.
    ///
    /// Example::
    ///
    ///     >>> cam = raypick.Camera([0, 0, 5], [0, 0, 0], width=640, height=480, near=0.01)
    ///     >>> np.allclose(cam.pixel_ray(320, 240), [0, 0, 4.99, 0, 0, -1])   # the centre, from the near plane
    ///     True
    fn pixel_ray<'py>(
        &self,
        py: Python<'py>,
        x: f32,
        y: f32,
    ) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
        let r = self.camera.pixel_ray(x, y);
        to_numpy(py, ray_row(&r).to_vec(), &[6], &[])
    }

    /// The rays through every pixel centre: ``(height, width, 6)`` float32, row 0 at the top
    /// (at the bottom with ``pixel_origin="bottom-left"``).
    ///
    /// Example::
    ///
    ///     >>> raypick.Camera([0, 0, 5], [0, 0, 0], width=64, height=48).rays().shape
    ///     (48, 64, 6)
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
        let common = format!(
            "width={}, height={}, convention={:?}, reverse_z={}, pixel_origin={:?}",
            self.width,
            self.height,
            clip_space_name(self.clip_space),
            if self.reverse_z { "True" } else { "False" },
            pixel_origin_name(self.pixel_origin)
        );
        match &self.made {
            Made::LookAt {
                eye,
                target,
                up,
                fov_y_deg,
                near,
                far,
                orthographic,
                ortho_height,
            } => format!(
                "raypick.Camera(eye={:?}, target={:?}, up={:?}, fov_y_deg={fov_y_deg}, near={near}, far={far}, projection={:?}{}, {common})",
                eye.to_array(),
                target.to_array(),
                up.to_array(),
                if *orthographic { "orthographic" } else { "perspective" },
                ortho_height.map_or(String::new(), |h| format!(", ortho_height={h}")),
            ),
            Made::Matrices { .. } => format!("raypick.Camera.from_matrices(..., {common})"),
        }
    }

    /// Pickles as the constructor call that made the camera.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let c = slf.get();
        let kwargs = PyDict::new(py);
        kwargs.set_item("convention", clip_space_name(c.clip_space))?;
        kwargs.set_item("reverse_z", c.reverse_z)?;
        kwargs.set_item("pixel_origin", pixel_origin_name(c.pixel_origin))?;
        // `functools.partial(constructor, *args, **kwargs)()`: pickle's reduce takes positional
        // arguments only.
        let partial = py.import("functools")?.getattr("partial")?;
        let (make, args) = match &c.made {
            Made::LookAt {
                eye,
                target,
                up,
                fov_y_deg,
                near,
                far,
                orthographic,
                ortho_height,
            } => {
                kwargs.set_item(
                    "projection",
                    if *orthographic {
                        "orthographic"
                    } else {
                        "perspective"
                    },
                )?;
                kwargs.set_item("ortho_height", *ortho_height)?;
                let args = (
                    eye.to_array().to_vec(),
                    target.to_array().to_vec(),
                    up.to_array().to_vec(),
                    *fov_y_deg,
                    c.width,
                    c.height,
                    *near,
                    *far,
                )
                    .into_pyobject(py)?
                    .into_any();
                (slf.get_type().into_any(), args)
            }
            Made::Matrices { view, proj } => {
                let rows = |m: &[f32; 16]| m.chunks(4).map(<[f32]>::to_vec).collect::<Vec<_>>();
                let args = (rows(view), rows(proj), c.width, c.height)
                    .into_pyobject(py)?
                    .into_any();
                (slf.get_type().getattr("from_matrices")?, args)
            }
        };
        let mut all = vec![make];
        all.extend(args.cast::<PyTuple>()?.iter());
        let make = partial.call(PyTuple::new(py, all)?, Some(&kwargs))?;
        PyTuple::new(py, [make, PyTuple::empty(py).into_any()])
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
