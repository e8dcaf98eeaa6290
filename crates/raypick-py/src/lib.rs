//! Python bindings for raypick: the extension module `raypick._raypick`, re-exported by the
//! `raypick` Python package (`python/raypick/__init__.py`).
//!
//! The Python API follows Open3D's `RaycastingScene` (`cast_rays`, `test_occlusions`,
//! `count_intersections`, `list_intersections`, `create_rays_pinhole`: same names, result keys,
//! dtypes, shapes and miss values) and trimesh's ray helpers (`intersects_first`,
//! `intersects_any`, `intersects_location`). Rays are numpy arrays of shape `(..., 6)`; queries
//! copy them while holding the GIL, then release it and cast on all cores.
//!
//! Build with maturin (`pip install ./crates/raypick-py`); the `extension-module` feature, which
//! maturin turns on, keeps the extension from linking libpython.

mod arrays;
mod camera;
mod hit;
mod scene;
mod threads;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

pub use camera::pinhole_rays;

/// Loads a model file (OBJ, glTF 2.0 / GLB, PLY, STL; the format is detected from the content)
/// into a :class:`Scene`.
///
/// Geometry ids and names follow the file: one mesh per OBJ group (named after it), one per PLY or
/// STL file, and for glTF one instance per node that shows a mesh (named after the node).
///
/// Raises:
///     ValueError: the file cannot be read or parsed; the message says where.
///
/// Example::
///
///     >>> scene = raypick.load("bunny.obj")
///     >>> scene.num_triangles
///     69451
#[pyfunction]
fn load(py: Python<'_>, path: std::path::PathBuf) -> PyResult<scene::PyScene> {
    let loaded = py
        .detach(|| raypick_io::load(&path))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(scene::PyScene::from_rust(&loaded.scene))
}

/// The extension module.
#[pymodule]
fn _raypick(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<scene::PyScene>()?;
    m.add_class::<camera::PyCamera>()?;
    m.add_class::<hit::PyHit>()?;
    m.add_function(wrap_pyfunction!(camera::create_rays_pinhole, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add("INVALID_ID", scene::INVALID_ID)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // bench/compare.py warns when it would time a debug build.
    m.add("__debug_build__", cfg!(debug_assertions))?;
    Ok(())
}
