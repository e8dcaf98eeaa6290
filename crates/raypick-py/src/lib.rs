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
mod spawn;
mod threads;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

pub use camera::pinhole_rays;

/// Loads a model file (OBJ, glTF 2.0 / GLB, PLY, STL; the format is detected from the content)
/// or a scene file (``.rpk``, written by :meth:`Scene.save` or ``raypick build``) into a
/// :class:`Scene`, built: a scene file is read with every BVH, without a build.
///
/// Geometry ids and names follow the file: one mesh per OBJ group (named after it), one per PLY or
/// STL file, and for glTF one instance per node that shows a mesh (named after the node).
///
/// Files from strangers are safe to load: a glTF buffer ``uri`` must resolve (after
/// percent-decoding, ``..`` and symbolic links) to a regular file inside the model's folder, at
/// most ``byteLength`` bytes are read from it, and the load stops at its byte and triangle budgets.
///
/// Args:
///     path: the model file.
///     allow_outside_refs: let the model refer to files outside its folder (``..``, symbolic
///         links, absolute paths); only for files you trust. Pipes, devices and folders are
///         refused even then.
///     max_bytes: the most bytes read, the model and the files it refers to together (default
///         1 GiB). A larger file is refused before it is opened.
///     max_triangles: the most triangles made (default 67,108,864), counted as they are read.
///     keep_instances: keep every glTF node an instance of its mesh, so that every hit names
///         one (``instance_ids``). By default a node whose mesh no other node uses is baked into
///         world space and joins the scene's one mesh BVH (faster to cast); its hits have the
///         node's id in ``geometry_ids`` and no instance. Meshes used by several nodes stay
///         instances either way.
///     hierarchy: keep the glTF node tree as nested instances (a scene per node that has
///         children), so that a hit's ``instance_path`` leads from a root node down to the node
///         it struck, each id naming a node. Nodes deeper than the engine nests (8 levels) are
///         placed flat in their deepest allowed ancestor. Not together with ``keep_instances``.
///     bvh: how the BVHs are built: ``"balanced"`` (the default), ``"fast"``,
///         ``"high_quality"``, or ``"spatial"``, which cuts long triangles (walls, floors) for
///         faster casts in architecture at four to ten times the build time: for a scene built
///         once and saved (:meth:`Scene.save`). A scene file keeps the setting it was built with.
///
/// Raises:
///     FileNotFoundError: the file (or a glTF buffer file it refers to) does not exist.
///     PermissionError: it may not be read.
///     OSError: any other file-system failure (a folder given as the file, an I/O error).
///     ValueError: the content cannot be parsed, a reference is refused, or a budget is exceeded;
///         the message says which file, where, and why. Also for a budget below 1, an unknown
///         ``bvh``, and ``keep_instances`` and ``hierarchy`` together.
///
/// Example::
///
///     >>> scene = raypick.load("bunny.obj")
///     >>> scene.num_triangles
///     69451
///     >>> truck = raypick.load("truck.glb", allow_outside_refs=True, max_bytes=4 << 30)  # trusted
///     >>> truck.num_triangles
///     2856
///     >>> tree = raypick.load("truck.glb", allow_outside_refs=True, hierarchy=True)
///     >>> hit = tree.pick(raypick.Camera([1.4, 0.4, 6], [1.4, 0.4, 0]), 320, 240)  # a wheel
///     >>> hit.instance_path, tree.geometry_name(hit.instance_id), hit.geometry_name
///     ([0, 1, 0], 'node 0', 'Wheels')
#[pyfunction]
#[pyo3(signature = (path, *, allow_outside_refs=false, max_bytes=None, max_triangles=None, keep_instances=false, hierarchy=false, bvh="balanced"))]
// Each Python keyword argument is a parameter.
#[allow(clippy::too_many_arguments)]
fn load(
    py: Python<'_>,
    path: std::path::PathBuf,
    allow_outside_refs: bool,
    max_bytes: Option<i64>,
    max_triangles: Option<i64>,
    keep_instances: bool,
    hierarchy: bool,
    bvh: &str,
) -> PyResult<scene::PyScene> {
    let build = raypick::bvh::BuildConfig::PRESETS
        .iter()
        .find(|(name, _)| *name == bvh)
        .map(|&(_, config)| config)
        .ok_or_else(|| {
            let known: Vec<&str> = raypick::bvh::BuildConfig::PRESETS
                .iter()
                .map(|(name, _)| *name)
                .collect();
            PyValueError::new_err(format!("unknown bvh {bvh:?}: expected one of {known:?}"))
        })?;
    let budget = |value: Option<i64>, name: &str, default: u64| match value {
        None => Ok(default),
        Some(v) => u64::try_from(v)
            .ok()
            .filter(|&v| v >= 1)
            .ok_or_else(|| PyValueError::new_err(format!("{name} must be at least 1, got {v}"))),
    };
    let instancing = match (keep_instances, hierarchy) {
        (true, true) => {
            return Err(PyValueError::new_err(
                "keep_instances and hierarchy exclude each other: choose one",
            ))
        }
        (true, false) => raypick_io::Instancing::Shared,
        (false, true) => raypick_io::Instancing::Hierarchy,
        (false, false) => raypick_io::Instancing::BakeSingleUse,
    };
    let options = raypick_io::LoadOptions {
        instancing,
        build,
        ..raypick_io::LoadOptions::default()
    }
    .with_max_bytes(budget(
        max_bytes,
        "max_bytes",
        raypick_io::DEFAULT_MAX_BYTES,
    )?)
    .with_max_triangles(budget(
        max_triangles,
        "max_triangles",
        raypick_io::DEFAULT_MAX_TRIANGLES,
    )?)
    .with_outside_refs(if allow_outside_refs {
        raypick_io::OutsideRefs::Allow
    } else {
        raypick_io::OutsideRefs::Refuse
    });
    let loaded = py
        .detach(|| raypick_io::load_with(&path, &options))
        .map_err(load_error)?;
    Ok(scene::PyScene::from_built(loaded.scene))
}

/// The Python exception for a load error: file-system failures are `OSError`s (the subclass
/// Python itself raises for that `errno`, such as `FileNotFoundError`), bad content is a
/// `ValueError`. The message is the Rust error's (file, place, reason) either way.
fn load_error(e: raypick_io::LoadError) -> PyErr {
    use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyPermissionError};
    use raypick_io::LoadError;
    let io = match &e {
        LoadError::Io { error, .. } | LoadError::MissingBuffer { error, .. } => Some(error.kind()),
        _ => None,
    };
    let message = e.to_string();
    match io {
        Some(std::io::ErrorKind::NotFound) => PyFileNotFoundError::new_err(message),
        Some(std::io::ErrorKind::PermissionDenied) => PyPermissionError::new_err(message),
        Some(_) => PyOSError::new_err(message),
        None => PyValueError::new_err(message),
    }
}

/// The extension module.
#[pymodule]
fn _raypick(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<scene::PyScene>()?;
    m.add_class::<camera::PyCamera>()?;
    m.add_class::<hit::PyHit>()?;
    m.add_function(wrap_pyfunction!(camera::create_rays_pinhole, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(spawn::offset_ray_origin, m)?)?;
    m.add("INVALID_ID", scene::INVALID_ID)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // bench/compare.py warns when it would time a debug build.
    m.add("__debug_build__", cfg!(debug_assertions))?;
    Ok(())
}
