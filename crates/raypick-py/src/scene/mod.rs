//! `raypick.Scene`: geometries accumulated from Python, a Rust [`raypick::Scene`] built lazily on the
//! first query (or [`PyScene::commit`]), and the batch queries over numpy arrays of rays.
//!
//! The `#[pymethods]` block below holds every method's Python signature and docstring; the work is
//! done in one file per family of methods:
//!
//! | module | what |
//! |---|---|
//! | [`state`] | the stored geometries, instance sources, and the Rust scene built from them |
//! | [`geometry`] | `add_triangles`, `add_spheres`, `add_instance` |
//! | [`cast`] | Open3D-style `cast_rays`, `test_occlusions`, `count_intersections`, `list_intersections` |
//! | [`trimesh`] | trimesh-style `intersects_first`, `intersects_any`, `intersects_location` |
//! | [`pick`] | `pick` and `pick_rect` through a camera |
//! | [`pickle`] | `__getstate__` / `__setstate__` |

mod cast;
mod geometry;
mod options;
mod pick;
mod pickle;
mod points;
mod state;
mod trimesh;

use std::sync::{Arc, Mutex, MutexGuard};

use glam::DVec3;
use numpy::{PyArray2, PyArrayDyn};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::{PyDict, PyTuple};

use crate::arrays::to_numpy;
use crate::camera::PyCamera;
use crate::hit::PyHit;
use crate::threads::NThreads;
use options::Given;
use state::{build, mesh_flat, Built, Entry, Source, State};

/// Open3D's and Embree's "no geometry" id: `geometry_ids`, `primitive_ids` and `instance_ids` of
/// a ray that hits nothing (and `instance_ids` of a hit that is not instanced).
pub const INVALID_ID: u32 = u32::MAX;

/// A mesh's vertices and triangles as numpy arrays.
type MeshArrays<'py> = (Bound<'py, PyArrayDyn<f32>>, Bound<'py, PyArrayDyn<u32>>);

/// A ray-casting scene of triangle meshes, spheres and instances, in the style of Open3D's
/// ``RaycastingScene`` (and Embree's commit model).
///
/// Geometries are added with :meth:`add_triangles`, :meth:`add_spheres` and :meth:`add_instance`;
/// each gets the next geometry id (0, 1, 2, ...). The acceleration structure (a SAH BVH per geometry
/// and one over them) is built on the first query after a change, or by :meth:`commit`. Queries
/// take rays as arrays of shape ``(..., 6)`` (origin xyz, direction xyz; float32 or float64, any
/// strides), release the GIL and run on all cores (``nthreads=0``) or on ``nthreads`` threads.
/// ``t`` is measured in units of each ray's direction (which need not be unit length).
///
/// A scene is thread-safe and can be pickled (as the bytes of a scene file, every BVH included, so
/// the unpickled scene does no build), so it can be sent to worker processes; :meth:`save`
/// writes the same bytes to a file that :func:`raypick.load` reads.
///
/// Example::
///
///     >>> import numpy as np, raypick
///     >>> scene = raypick.Scene()
///     >>> quad = scene.add_triangles([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], [[0, 1, 2], [0, 2, 3]])
///     >>> ans = scene.cast_rays(np.array([[0.25, 0.5, 1, 0, 0, -1], [5, 5, 1, 0, 0, -1]], np.float32))
///     >>> ans["t_hit"].tolist(), ans["primitive_ids"].tolist()
///     ([1.0, inf], [1, 4294967295])
#[pyclass(name = "Scene", module = "raypick._raypick", frozen)]
pub struct PyScene {
    state: Mutex<State>,
}

impl PyScene {
    /// Locks the state, detached from Python while waiting: a thread that builds holds the lock
    /// while detached and must re-attach before it releases it, so waiting attached would deadlock.
    fn lock(&self, py: Python<'_>) -> MutexGuard<'_, State> {
        // A panic while the lock was held cannot leave `State` half-updated (every update is one
        // push or one assignment), so a poisoned lock is still consistent.
        self.state
            .lock_py_attached(py)
            .unwrap_or_else(|p| p.into_inner())
    }

    fn built(&self, py: Python<'_>) -> PyResult<Arc<Built>> {
        let mut guard = self.lock(py);
        let state: &mut State = &mut guard;
        build(py, state)
    }

    /// This scene as an instance source (built, cached).
    fn as_source(&self, py: Python<'_>) -> PyResult<Arc<Source>> {
        let mut guard = self.lock(py);
        let state: &mut State = &mut guard;
        if let Some(s) = &state.as_source {
            return Ok(s.clone());
        }
        let built = build(py, state)?;
        let source = Arc::new(Source {
            entries: state.entries.clone(),
            scene: built.scene.clone(),
            remap: None,
            origin: state.origin,
        });
        state.as_source = Some(source.clone());
        Ok(source)
    }

    fn add_entry(&self, py: Python<'_>, e: Entry) -> PyResult<u32> {
        self.lock(py).push(e)
    }

    /// A scene with these entries (from unpickling a plain state).
    fn from_entries(entries: Vec<Entry>) -> Self {
        Self {
            state: Mutex::new(State {
                entries,
                ..State::default()
            }),
        }
    }

    /// A Python scene holding a built Rust scene: its geometries, instances keeping their shared
    /// sources, and the scene itself as the built one (no query rebuilds it).
    pub fn from_built(scene: raypick::Scene) -> Self {
        let state = state::state_from_built(scene);
        Self {
            state: Mutex::new(state),
        }
    }
}

#[pymethods]
impl PyScene {
    /// An empty scene.
    #[new]
    fn new() -> Self {
        Self::from_entries(Vec::new())
    }

    /// Adds a triangle mesh and returns its geometry id.
    ///
    /// Args:
    ///     vertices: ``(N, 3)`` float array of positions — a numpy array, anything
    ///         ``numpy.asarray`` takes, or a CPU tensor through DLPack (PyTorch, Open3D, JAX) — or a
    ///         ``trimesh.Trimesh``, ``open3d.geometry.TriangleMesh`` or
    ///         ``open3d.t.geometry.TriangleMesh`` with ``triangles`` omitted. float64 positions
    ///         far from zero keep their precision (see :attr:`origin`).
    ///     triangles: ``(M, 3)`` integer array of 0-based vertex indices; the front face is the
    ///         side from which they are counter-clockwise. Triangle ``i`` is primitive id ``i``.
    ///     name: optional name (see :meth:`geometry_name`).
    ///     mask: the geometry mask (default all bits): a query with ray mask ``m`` considers the
    ///         mesh when ``mask & m != 0`` (Embree's ``rtcSetGeometryMask``).
    ///
    /// Raises:
    ///     ValueError: wrong shapes or dtypes, an index out of range, a non-finite vertex.
    ///
    /// Example::
    ///
    ///     >>> scene = raypick.Scene()
    ///     >>> scene.add_triangles(np.eye(3), [[0, 1, 2]], name="tri")
    ///     0
    #[pyo3(signature = (vertices, triangles=None, name=None, *, mask=u32::MAX))]
    fn add_triangles(
        &self,
        py: Python<'_>,
        vertices: &Bound<'_, PyAny>,
        triangles: Option<&Bound<'_, PyAny>>,
        name: Option<String>,
        mask: u32,
    ) -> PyResult<u32> {
        geometry::add_triangles(self, py, vertices, triangles, name, mask)
    }

    /// Adds a set of spheres and returns its geometry id. Sphere ``i`` is primitive id ``i``;
    /// ``primitive_uvs`` of sphere hits are 0 and normals point outwards.
    ///
    /// Args:
    ///     centers: ``(N, 3)`` float array.
    ///     radii: ``(N,)`` float array, or one number for all spheres (finite, ``>= 0``).
    ///     name: optional name.
    ///     mask: the geometry mask (see :meth:`add_triangles`).
    ///
    /// Example::
    ///
    ///     >>> scene.add_spheres([[0, 0, -5], [2, 0, -5]], 0.5)   # the scene holds a mesh (0)
    ///     1
    #[pyo3(signature = (centers, radii, name=None, *, mask=u32::MAX))]
    fn add_spheres(
        &self,
        py: Python<'_>,
        centers: &Bound<'_, PyAny>,
        radii: &Bound<'_, PyAny>,
        name: Option<String>,
        mask: u32,
    ) -> PyResult<u32> {
        geometry::add_spheres(self, py, centers, radii, name, mask)
    }

    /// Places a whole scene, or one geometry of this scene, with a 4×4 affine transform and returns
    /// the instance's geometry id.
    ///
    /// Args:
    ///     scene_or_geometry: a :class:`Scene` — captured as it is now, like Embree's commit;
    ///         later changes to it do not affect this instance; it may hold instances itself, up
    ///         to 8 levels of instances in all — or the geometry id of a geometry of this scene (a
    ///         transformed copy; the original stays where it is).
    ///     matrix: ``(4, 4)`` ``world_from_object`` matrix (numpy convention:
    ///         ``p_world = matrix @ [x, y, z, 1]``), last row ``[0, 0, 0, 1]``; default identity.
    ///     name: optional name.
    ///     mask: the instance's geometry mask (see :meth:`add_triangles`); a ray reaches the
    ///         placed geometries when it passes both the instance's mask and theirs.
    ///
    /// Hits in an instance report ``instance_ids`` = the instance's id and ``geometry_ids`` = the
    /// geometry id inside the placed scene (for a placed geometry of this scene: its own id); with
    /// nested instances, ``instance_paths`` (see :meth:`cast_rays`) lists every instance on the
    /// way and ``geometry_ids`` is the id in the innermost placed scene.
    /// ``t`` stays in units of the world ray's direction.
    ///
    /// Example::
    ///
    ///     >>> part = raypick.Scene()
    ///     >>> part.add_triangles(v, f)
    ///     0
    ///     >>> world = raypick.Scene()
    ///     >>> a = world.add_instance(part, np.eye(4))
    ///     >>> b = world.add_instance(part, translation_matrix)
    #[pyo3(signature = (scene_or_geometry, matrix=None, name=None, *, mask=u32::MAX))]
    fn add_instance(
        &self,
        py: Python<'_>,
        scene_or_geometry: &Bound<'_, PyAny>,
        matrix: Option<&Bound<'_, PyAny>>,
        name: Option<String>,
        mask: u32,
    ) -> PyResult<u32> {
        geometry::add_instance(self, py, scene_or_geometry, matrix, name, mask)
    }

    /// Moves the vertices of mesh ``geometry_id`` (an animated or deformed mesh): same vertex
    /// count, same triangles. The scene's trees are refitted (their boxes recomputed with the
    /// topology kept), which is much cheaper than a rebuild; after large deformations a fresh
    /// scene casts faster. Instances placed before the update keep the mesh they captured.
    ///
    /// Raises:
    ///     ValueError: not a mesh, another vertex count, a non-finite vertex.
    ///     IndexError: no such geometry.
    ///
    /// Example::
    ///
    ///     >>> scene = raypick.Scene()
    ///     >>> scene.add_triangles([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    ///     0
    ///     >>> scene.update_vertices(0, [[0, 0, 2], [1, 0, 2], [0, 1, 2]])
    ///     >>> ans = scene.cast_rays(np.array([[0.2, 0.2, 5, 0, 0, -1]], np.float32))
    ///     >>> np.round(ans["t_hit"], 5).tolist()
    ///     [3.0]
    fn update_vertices(
        &self,
        py: Python<'_>,
        geometry_id: u32,
        vertices: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        geometry::update_vertices(self, py, geometry_id, vertices)
    }

    /// Builds the acceleration structure now (queries otherwise build it on first use after a
    /// change). Releases the GIL while building.
    ///
    /// Example::
    ///
    ///     >>> scene.commit()   # build now, not at the first query
    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        self.built(py).map(|_| ())
    }

    /// Number of geometries (ids are ``0 .. num_geometries - 1``).
    #[getter]
    fn num_geometries(&self, py: Python<'_>) -> usize {
        self.lock(py).entries.len()
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        self.num_geometries(py)
    }

    /// Triangles stored: the scene's meshes and the meshes of the scenes its instances place, each
    /// placed scene counted once however often it is placed (``raypick info``'s "stored" count).
    #[getter]
    fn num_triangles(&self, py: Python<'_>) -> usize {
        self.lock(py).num_triangles()
    }

    /// The name of geometry ``geometry_id`` (``None`` when it has none).
    ///
    /// Raises:
    ///     IndexError: no such geometry.
    ///
    /// Example::
    ///
    ///     >>> s = raypick.Scene()
    ///     >>> s.add_spheres([[0, 0, 0]], 1.0, name="ball")
    ///     0
    ///     >>> s.geometry_name(0)
    ///     'ball'
    fn geometry_name(&self, py: Python<'_>, geometry_id: u32) -> PyResult<Option<String>> {
        Ok(match self.lock(py).entry(geometry_id)? {
            Entry::Mesh(m) => m.name().map(str::to_owned),
            Entry::Spheres(s) => s.name().map(str::to_owned),
            Entry::Instance(i) => i.name.clone(),
        })
    }

    /// The kind of geometry ``geometry_id``: ``"mesh"``, ``"spheres"`` or ``"instance"``.
    ///
    /// Example::
    ///
    ///     >>> scene.geometry_kind(0)
    ///     'mesh'
    fn geometry_kind(&self, py: Python<'_>, geometry_id: u32) -> PyResult<&'static str> {
        Ok(match self.lock(py).entry(geometry_id)? {
            Entry::Mesh(_) => "mesh",
            Entry::Spheres(_) => "spheres",
            Entry::Instance(_) => "instance",
        })
    }

    /// The world-space bounding box as a ``(2, 3)`` float32 array ``[min, max]`` (``min > max``
    /// when the scene is empty). Builds the scene.
    ///
    /// Example::
    ///
    ///     >>> scene.bounds().tolist()       # the cube [-1, 1]^3
    ///     [[-1.0, -1.0, -1.0], [1.0, 1.0, 1.0]]
    fn bounds<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
        let built = self.built(py)?;
        let b = built.scene.bounds();
        let o = built.origin;
        let data = [
            (b.min.as_dvec3() + o).as_vec3().to_array(),
            (b.max.as_dvec3() + o).as_vec3().to_array(),
        ]
        .concat();
        to_numpy(py, data, &[2], &[3])
    }

    /// Closest hit of every ray (Open3D ``RaycastingScene.cast_rays``).
    ///
    /// Args:
    ///     rays: ``(..., 6)`` array ``[ox, oy, oz, dx, dy, dz]``, float32 or float64, any leading
    ///         shape and strides. ``t`` is in units of ``d``.
    ///     nthreads: threads to use; 0 (default) uses every core. At most 1024 (else
    ///         ``ValueError``); a few thread pools of the counts used are kept for reuse.
    ///     tnear, tfar: the range of ``t`` searched, ``[tnear, tfar]``: numbers (default 0 and
    ///         ``inf``) or one value per ray (shaped like ``rays.shape[:-1]``, or flat).
    ///     mask: the ray mask; a geometry is considered when ``geometry_mask & mask != 0``
    ///         (geometry masks are set by ``add_triangles(..., mask=)`` etc.; default all bits).
    ///     cull_back_faces: skip triangles seen from behind (``dot(normal, d) >= 0``) and the
    ///         exit crossing of spheres.
    ///     instance_paths: also return ``instance_paths``, ``(..., 8)`` uint32: every instance a
    ///         hit was reached through, outermost first, padded with ``INVALID_ID`` (nested
    ///         instances; ``instance_ids`` is the first column).
    ///
    /// Returns:
    ///     dict of numpy arrays shaped like ``rays.shape[:-1]``: ``t_hit`` (float32, ``inf`` on a
    ///     miss), ``geometry_ids``, ``primitive_ids`` and ``instance_ids`` (uint32,
    ///     ``INVALID_ID = 4294967295`` on a miss; ``instance_ids`` is also ``INVALID_ID`` for a hit
    ///     that is not in an instance), ``primitive_uvs`` (``(..., 2)`` float32 barycentrics: ``u``
    ///     weights the triangle's second vertex, ``v`` its third; 0 on a miss) and
    ///     ``primitive_normals`` (``(..., 3)`` float32 unit geometric normals in world space, the
    ///     direction of ``(v1 - v0) x (v2 - v0)``; 0 on a miss).
    ///
    /// The arrays reuse the memory of earlier answer arrays of the same size once numpy has freed
    /// them (up to 256 MB is kept for that): casting the same number of rays again and again, as a
    /// viewer does every frame, then costs no fresh memory.
    ///
    /// Example::
    ///
    ///     >>> ans = scene.cast_rays(rays)            # rays: (H, W, 6)
    ///     >>> depth = ans["t_hit"]                   # (H, W)
    ///     >>> ans = scene.cast_rays(rays, tfar=10.0, mask=0b10, cull_back_faces=True)
    #[pyo3(
        signature = (rays, nthreads=NThreads::ALL, *, tnear=None, tfar=None, mask=u32::MAX, cull_back_faces=false, instance_paths=false),
        text_signature = "($self, rays, nthreads=0, *, tnear=0.0, tfar=inf, mask=0xFFFFFFFF, cull_back_faces=False, instance_paths=False)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn cast_rays<'py>(
        &self,
        py: Python<'py>,
        rays: &Bound<'py, PyAny>,
        nthreads: NThreads,
        tnear: Option<&Bound<'py, PyAny>>,
        tfar: Option<&Bound<'py, PyAny>>,
        mask: u32,
        cull_back_faces: bool,
        instance_paths: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let given = Given {
            tnear,
            tfar,
            mask,
            cull_back_faces,
        };
        cast::cast_rays(self, py, rays, &given, nthreads, instance_paths)
    }

    /// Whether anything is hit with ``t`` in ``[tnear, tfar]`` (Open3D
    /// ``RaycastingScene.test_occlusions``): a bool array shaped like ``rays.shape[:-1]``.
    /// ``tnear`` and ``tfar`` are numbers or one value per ray; ``mask`` and ``cull_back_faces``
    /// as for :meth:`cast_rays`.
    ///
    /// Example::
    ///
    ///     >>> # shadow rays from surface points p towards a light at L (t in [eps, 1])
    ///     >>> shadow = scene.test_occlusions(np.hstack([p, L - p]), tnear=1e-4, tfar=1.0)
    #[pyo3(
        signature = (rays, tnear=None, tfar=None, nthreads=NThreads::ALL, *, mask=u32::MAX, cull_back_faces=false),
        text_signature = "($self, rays, tnear=0.0, tfar=inf, nthreads=0, *, mask=0xFFFFFFFF, cull_back_faces=False)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn test_occlusions<'py>(
        &self,
        py: Python<'py>,
        rays: &Bound<'py, PyAny>,
        tnear: Option<&Bound<'py, PyAny>>,
        tfar: Option<&Bound<'py, PyAny>>,
        nthreads: NThreads,
        mask: u32,
        cull_back_faces: bool,
    ) -> PyResult<Bound<'py, PyArrayDyn<bool>>> {
        let given = Given {
            tnear,
            tfar,
            mask,
            cull_back_faces,
        };
        cast::test_occlusions(self, py, rays, &given, nthreads)
    }

    /// Number of surface crossings along each ray over ``t`` in ``[0, inf)`` (Open3D
    /// ``RaycastingScene.count_intersections``): an int32 array shaped like ``rays.shape[:-1]``.
    ///
    /// A ray through an edge or vertex shared by consistently wound triangles counts it once, so
    /// the count's parity tells inside (odd) from outside (even) for a closed mesh. A sphere counts
    /// its entry and exit. ``tnear``, ``tfar``, ``mask`` and ``cull_back_faces`` as for
    /// :meth:`cast_rays`.
    ///
    /// Example::
    ///
    ///     >>> scene.count_intersections([[0.3, 0.1, 5, 0, 0, -1], [0.3, 0.1, 0, 0, 0, 1]]).tolist()
    ///     [2, 1]
    #[pyo3(
        signature = (rays, nthreads=NThreads::ALL, *, tnear=None, tfar=None, mask=u32::MAX, cull_back_faces=false),
        text_signature = "($self, rays, nthreads=0, *, tnear=0.0, tfar=inf, mask=0xFFFFFFFF, cull_back_faces=False)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn count_intersections<'py>(
        &self,
        py: Python<'py>,
        rays: &Bound<'py, PyAny>,
        nthreads: NThreads,
        tnear: Option<&Bound<'py, PyAny>>,
        tfar: Option<&Bound<'py, PyAny>>,
        mask: u32,
        cull_back_faces: bool,
    ) -> PyResult<Bound<'py, PyArrayDyn<i32>>> {
        let given = Given {
            tnear,
            tfar,
            mask,
            cull_back_faces,
        };
        cast::count_intersections(self, py, rays, &given, nthreads)
    }

    /// Every hit along each ray over ``t`` in ``[0, inf)``, sorted by ray then ``t`` (Open3D
    /// ``RaycastingScene.list_intersections``).
    ///
    /// Returns:
    ///     dict with ``ray_splits`` (int64, ``num_rays + 1``: the hits of ray ``i`` are
    ///     ``ray_splits[i]:ray_splits[i+1]``), ``ray_ids`` (int64, index into the flattened rays),
    ///     ``t_hit`` (float32), ``geometry_ids``, ``primitive_ids``, ``instance_ids`` (uint32),
    ///     ``primitive_uvs`` (``(K, 2)`` float32) and ``primitive_normals`` (``(K, 3)``).
    ///
    /// Edges and vertices shared by consistently wound triangles are reported once (as in
    /// :meth:`count_intersections`). ``tnear``, ``tfar``, ``mask``, ``cull_back_faces`` and
    /// ``instance_paths`` as for :meth:`cast_rays`.
    ///
    /// Example::
    ///
    ///     >>> ans = scene.list_intersections([[0.3, 0.1, 5, 0, 0, -1]])
    ///     >>> ans["ray_splits"].tolist(), np.round(ans["t_hit"], 4).tolist()
    ///     ([0, 2], [4.0, 6.0])
    #[pyo3(
        signature = (rays, nthreads=NThreads::ALL, *, tnear=None, tfar=None, mask=u32::MAX, cull_back_faces=false, instance_paths=false),
        text_signature = "($self, rays, nthreads=0, *, tnear=0.0, tfar=inf, mask=0xFFFFFFFF, cull_back_faces=False, instance_paths=False)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn list_intersections<'py>(
        &self,
        py: Python<'py>,
        rays: &Bound<'py, PyAny>,
        nthreads: NThreads,
        tnear: Option<&Bound<'py, PyAny>>,
        tfar: Option<&Bound<'py, PyAny>>,
        mask: u32,
        cull_back_faces: bool,
        instance_paths: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let given = Given {
            tnear,
            tfar,
            mask,
            cull_back_faces,
        };
        cast::list_intersections(self, py, rays, &given, nthreads, instance_paths)
    }

    /// The closest surface point of each query point (Open3D
    /// ``RaycastingScene.compute_closest_points``).
    ///
    /// Args:
    ///     query_points: a ``(..., 3)`` real array.
    ///     nthreads: 0 for every core, else the number of threads.
    ///
    /// Returns:
    ///     dict with ``points`` (``(..., 3)`` float32, world space), ``geometry_ids`` and
    ///     ``primitive_ids`` (uint32), ``primitive_uvs`` (``(..., 2)`` float32 barycentrics: ``u``
    ///     weights the triangle's second vertex, ``v`` its third) and ``primitive_normals``
    ///     (``(..., 3)`` float32 unit geometric normals). A point with a NaN or infinite coordinate
    ///     (or any point, in an empty scene) gets NaN ``points`` and ``INVALID_ID`` ids. Of
    ///     equidistant primitives, the one with the smallest ids is reported.
    ///
    /// Example::
    ///
    ///     >>> ans = scene.compute_closest_points(np.random.rand(1000, 3))
    ///     >>> ans["points"].shape
    ///     (1000, 3)
    #[pyo3(signature = (query_points, nthreads=NThreads::ALL), text_signature = "($self, query_points, nthreads=0)")]
    fn compute_closest_points<'py>(
        &self,
        py: Python<'py>,
        query_points: &Bound<'py, PyAny>,
        nthreads: NThreads,
    ) -> PyResult<Bound<'py, PyDict>> {
        points::compute_closest_points(self, py, query_points, nthreads)
    }

    /// The distance from each query point to the surface (Open3D
    /// ``RaycastingScene.compute_distance``): float32 shaped like ``query_points.shape[:-1]``;
    /// NaN for a point that is not finite, ``inf`` in an empty scene.
    ///
    /// Example::
    ///
    ///     >>> np.round(scene.compute_distance([[0, 0, 3], [0, 0, 0.5]]), 5).tolist()
    ///     [2.0, 0.5]
    #[pyo3(signature = (query_points, nthreads=NThreads::ALL), text_signature = "($self, query_points, nthreads=0)")]
    fn compute_distance<'py>(
        &self,
        py: Python<'py>,
        query_points: &Bound<'py, PyAny>,
        nthreads: NThreads,
    ) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
        points::compute_distance(self, py, query_points, nthreads)
    }

    /// The distance to the surface, negative inside (Open3D
    /// ``RaycastingScene.compute_signed_distance``). ``method`` decides inside:
    /// ``"parity"`` (default: the crossing parity of one ray, exact for closed meshes) or
    /// ``"winding_number"`` (the generalized winding number above 1/2, for meshes with holes).
    ///
    /// Example::
    ///
    ///     >>> np.round(scene.compute_signed_distance([[0, 0, 3], [0, 0, 0.5]]), 5).tolist()
    ///     [2.0, -0.5]
    #[pyo3(
        signature = (query_points, nthreads=NThreads::ALL, method="parity"),
        text_signature = "($self, query_points, nthreads=0, method='parity')"
    )]
    fn compute_signed_distance<'py>(
        &self,
        py: Python<'py>,
        query_points: &Bound<'py, PyAny>,
        nthreads: NThreads,
        method: &str,
    ) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
        points::compute_signed_distance(self, py, query_points, nthreads, method)
    }

    /// 1.0 inside, 0.0 outside, float32 (Open3D ``RaycastingScene.compute_occupancy``);
    /// ``method`` as for :meth:`compute_signed_distance`. A point that is not finite is outside.
    ///
    /// Example::
    ///
    ///     >>> scene.compute_occupancy([[0, 0, 3], [0, 0, 0.5]]).tolist()
    ///     [0.0, 1.0]
    #[pyo3(
        signature = (query_points, nthreads=NThreads::ALL, method="parity"),
        text_signature = "($self, query_points, nthreads=0, method='parity')"
    )]
    fn compute_occupancy<'py>(
        &self,
        py: Python<'py>,
        query_points: &Bound<'py, PyAny>,
        nthreads: NThreads,
        method: &str,
    ) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
        points::compute_occupancy(self, py, query_points, nthreads, method)
    }

    /// trimesh-style: whether each of the ``(N, 3)`` points is inside (bool, like
    /// ``trimesh.Trimesh.contains``); ``method`` as for :meth:`compute_signed_distance`.
    ///
    /// Example::
    ///
    ///     >>> scene.contains([[0, 0, 3], [0, 0, 0.5]]).tolist()
    ///     [False, True]
    #[pyo3(signature = (points, method="parity"))]
    fn contains<'py>(
        &self,
        py: Python<'py>,
        points: &Bound<'py, PyAny>,
        method: &str,
    ) -> PyResult<Bound<'py, PyArrayDyn<bool>>> {
        points::contains(self, py, points, method)
    }

    /// trimesh-style ``proximity.closest_point``: for ``(N, 3)`` points, a tuple of the closest
    /// surface points (``(N, 3)`` float64), their distances (float64) and the triangle ids
    /// (int64, the primitive id within its geometry; ``-1`` and NaN for a point that is not
    /// finite).
    ///
    /// Example::
    ///
    ///     >>> points, distances, triangles = scene.closest_point([[0.3, 0.1, 3]])
    ///     >>> np.round(points, 5).tolist(), np.round(distances, 5).tolist()
    ///     ([[0.3, 0.1, 1.0]], [2.0])
    fn closest_point<'py>(
        &self,
        py: Python<'py>,
        points: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        points::closest_point(self, py, points)
    }

    /// trimesh-style: the index of the first triangle each ray hits, ``-1`` on a miss (int64, one
    /// per ray). Like ``trimesh.Trimesh.ray.intersects_first``; in a scene of several geometries
    /// the index is the primitive id within the hit geometry (see :meth:`cast_rays` for ids).
    ///
    /// Example::
    ///
    ///     >>> tri = scene.intersects_first(origins, directions)   # (N, 3), (N, 3)
    fn intersects_first<'py>(
        &self,
        py: Python<'py>,
        ray_origins: &Bound<'py, PyAny>,
        ray_directions: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArrayDyn<i64>>> {
        trimesh::intersects_first(self, py, ray_origins, ray_directions)
    }

    /// trimesh-style: whether each ray hits anything (bool, one per ray), like
    /// ``trimesh.Trimesh.ray.intersects_any``.
    ///
    /// Example::
    ///
    ///     >>> scene.intersects_any([[0.3, 0.1, 5], [5, 5, 5]], [[0, 0, -1], [0, 0, 1]]).tolist()
    ///     [True, False]
    fn intersects_any<'py>(
        &self,
        py: Python<'py>,
        ray_origins: &Bound<'py, PyAny>,
        ray_directions: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArrayDyn<bool>>> {
        trimesh::intersects_any(self, py, ray_origins, ray_directions)
    }

    /// trimesh-style: where the rays hit, like ``trimesh.Trimesh.ray.intersects_location``.
    ///
    /// Args:
    ///     ray_origins, ray_directions: ``(N, 3)`` arrays.
    ///     multiple_hits: every hit along each ray (default), or only the closest.
    ///
    /// Returns:
    ///     ``(locations, index_ray, index_tri)``: ``(K, 3)`` float64 world points, and int64
    ///     arrays of the ray and the triangle (primitive id) of each, sorted by ray then distance.
    ///
    /// Example::
    ///
    ///     >>> locations, index_ray, index_tri = scene.intersects_location(origins, directions)
    #[pyo3(signature = (ray_origins, ray_directions, multiple_hits=true))]
    fn intersects_location<'py>(
        &self,
        py: Python<'py>,
        ray_origins: &Bound<'py, PyAny>,
        ray_directions: &Bound<'py, PyAny>,
        multiple_hits: bool,
    ) -> PyResult<Bound<'py, PyTuple>> {
        trimesh::intersects_location(self, py, ray_origins, ray_directions, multiple_hits)
    }

    /// What is under window position ``(x, y)`` of ``camera`` (continuous pixel coordinates, origin
    /// top-left, pixel ``(i, j)`` covers ``[i, i+1) x [j, j+1)``): the closest :class:`Hit` along
    /// the camera's pixel ray between its near and far planes, or ``None`` (``raypick::camera::pick``).
    ///
    /// Args:
    ///     tolerance_px: when nothing is exactly under ``(x, y)``, also look up to this many pixels
    ///         around it (rings of rays 0.5 px apart; the hit nearest the cursor wins) — for small
    ///         or thin objects.
    ///
    /// Example::
    ///
    ///     >>> cam = raypick.Camera(eye=[0, 0, 5], target=[0, 0, 0], width=640, height=480)
    ///     >>> hit = scene.pick(cam, 320.5, 240.5)
    ///     >>> hit.geometry_id, hit.primitive_id      # the cube, its top face
    ///     (0, 2)
    #[pyo3(signature = (camera, x, y, tolerance_px=0.0))]
    fn pick(
        &self,
        py: Python<'_>,
        camera: &Bound<'_, PyCamera>,
        x: f32,
        y: f32,
        tolerance_px: f32,
    ) -> PyResult<Option<PyHit>> {
        pick::pick(self, py, camera, x, y, tolerance_px)
    }

    /// Everything visible or hidden inside the window rectangle with corners ``(x0, y0)`` and
    /// ``(x1, y1)`` of ``camera`` (a marquee selection; exact, every primitive is tested against
    /// the rectangle's frustum): a sorted list of ``(geometry_id, instance_id or None)``
    /// (``raypick::camera::pick_rect``).
    ///
    /// Example::
    ///
    ///     >>> scene.pick_rect(cam, 0, 0, 32, 48)   # the left half of a 64 x 48 view: the cube
    ///     [(0, None)]
    fn pick_rect(
        &self,
        py: Python<'_>,
        camera: &Bound<'_, PyCamera>,
        x0: f32,
        y0: f32,
        x1: f32,
        y1: f32,
    ) -> PyResult<Vec<(u32, Option<u32>)>> {
        pick::pick_rect(self, py, camera, x0, y0, x1, y1)
    }

    /// Open3D's ``RaycastingScene.create_rays_pinhole``, both forms; see
    /// :func:`raypick.create_rays_pinhole`.
    ///
    /// Example::
    ///
    ///     >>> raypick.Scene.create_rays_pinhole(60, [0, 0, 0], [0, 0, 5], [0, 1, 0], 4, 3).shape
    ///     (3, 4, 6)
    #[staticmethod]
    #[pyo3(signature = (*args, **kwargs))]
    fn create_rays_pinhole<'py>(
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
        crate::camera::create_rays_pinhole(py, args, kwargs)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let state = self.lock(py);
        let (mut meshes, mut spheres, mut instances) = (0, 0, 0);
        for e in &state.entries {
            match e {
                Entry::Mesh(_) => meshes += 1,
                Entry::Spheres(_) => spheres += 1,
                Entry::Instance(_) => instances += 1,
            }
        }
        let tris = state.num_triangles();
        format!(
            "raypick.Scene({meshes} meshes, {tris} triangles, {spheres} sphere sets, {instances} instances{})",
            if state.built.is_some() { ", built" } else { "" }
        )
    }

    /// Saves the scene, built, to a scene file (``.rpk``): every geometry, name and mask and
    /// every BVH as built, so :func:`raypick.load` reads it back without a build. The file is
    /// the Rust scene: an instance made with ``add_instance(geometry_id, ...)`` loads as an
    /// instance of a one-geometry scene, whose hits report geometry id 0 (pickling keeps the
    /// id).
    ///
    /// A scene file holds float32 coordinates in one frame: a scene whose :attr:`origin` is not
    /// zero (float64 input far from zero) cannot be saved without losing that precision, and is
    /// refused.
    ///
    /// Raises:
    ///     ValueError: the scene cannot be built, or its origin is not zero.
    ///     OSError: the file cannot be written.
    ///
    /// Example::
    ///
    ///     >>> scene.save("room.rpk")
    ///     >>> same = raypick.load("room.rpk")
    fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        let origin = self.lock(py).origin;
        if origin != DVec3::ZERO {
            return Err(PyValueError::new_err(format!(
                "{}: a scene file stores float32 coordinates at the world origin; this scene's \
                 frame is at {:?} (float64 input far from zero) and would lose its precision",
                path.display(),
                origin.to_array()
            )));
        }
        let built = self.built(py)?;
        py.detach(|| built.scene.save(&path)).map_err(|e| match e {
            raypick::SceneFileError::Io(io) => {
                pyo3::exceptions::PyOSError::new_err(format!("{}: {io}", path.display()))
            }
            other => PyValueError::new_err(format!("{}: {other}", path.display())),
        })
    }

    /// The scene as pickle stores it: the bytes of a scene file (geometry and every BVH, built
    /// first if needed) and the geometry ids instanced hits report, so unpickling does no build.
    fn __getstate__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        pickle::get_state(self, py)
    }

    /// Restores what :meth:`__getstate__` returned, without a build (states of the older plain
    /// form, version 1, are rebuilt on the first query).
    fn __setstate__(&self, py: Python<'_>, state: &Bound<'_, PyDict>) -> PyResult<()> {
        pickle::set_state(self, py, state)
    }

    /// The world position of the scene's frame: the scene stores its coordinates in ``float32``
    /// relative to it (subtracted in ``float64`` first), and moves rays and query points into it
    /// the same way, so that a model far from zero keeps the precision of its size. Zero unless
    /// the first geometry added lies farther from zero than twice its extent; then the centre of
    /// its box. A ``(3,)`` float64 array.
    ///
    /// A coordinate ``x`` is stored as ``float32(x - origin)``, within ``2**-24 |x - origin|`` of
    /// the exact difference (half an ulp), and so are ray origins and query points: hits on a
    /// model at 1e8 are as exact as on the same model at zero (float32 alone would round its
    /// coordinates to multiples of 8).
    #[getter]
    fn origin<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
        to_numpy(py, self.lock(py).origin.to_array().to_vec(), &[3], &[])
    }

    /// The vertices ``(N, 3)`` float32 (world space) and triangles ``(M, 3)`` uint32 of mesh
    /// ``geometry_id``. In a scene whose :attr:`origin` is not zero the vertices are the stored
    /// ones plus the origin, added in float64 and rounded to float32.
    ///
    /// Example::
    ///
    ///     >>> vertices, triangles = scene.mesh_arrays(0)
    ///     >>> vertices.shape, triangles.shape
    ///     ((8, 3), (12, 3))
    fn mesh_arrays<'py>(&self, py: Python<'py>, geometry_id: u32) -> PyResult<MeshArrays<'py>> {
        let state = self.lock(py);
        match state.entry(geometry_id)? {
            Entry::Mesh(m) => {
                let (mut v, t) = mesh_flat(m);
                if state.origin != DVec3::ZERO {
                    let o = state.origin.to_array();
                    for (k, x) in v.iter_mut().enumerate() {
                        *x = (f64::from(*x) + o[k % 3]) as f32;
                    }
                }
                Ok((
                    to_numpy(py, v, &[m.vertices().len()], &[3])?,
                    to_numpy(py, t, &[m.indices().len()], &[3])?,
                ))
            }
            _ => Err(PyValueError::new_err(format!(
                "geometry {geometry_id} is not a mesh"
            ))),
        }
    }

    /// The ``(4, 4)`` float32 ``world_from_object`` matrix of instance ``geometry_id``.
    ///
    /// Example::
    ///
    ///     >>> world, part = raypick.Scene(), raypick.Scene()
    ///     >>> part.add_spheres([[0, 0, 0]], 1.0)
    ///     0
    ///     >>> m = np.eye(4); m[0, 3] = 5.0
    ///     >>> world.add_instance(part, m)
    ///     0
    ///     >>> float(world.instance_matrix(0)[0, 3])
    ///     5.0
    fn instance_matrix<'py>(
        &self,
        py: Python<'py>,
        geometry_id: u32,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        match self.lock(py).entry(geometry_id)? {
            Entry::Instance(i) => PyArray2::from_vec2(
                py,
                &i.matrix
                    .chunks(4)
                    .map(|row| row.iter().map(|&x| x as f32).collect())
                    .collect::<Vec<Vec<f32>>>(),
            )
            .map_err(|e| PyValueError::new_err(e.to_string())),
            _ => Err(PyValueError::new_err(format!(
                "geometry {geometry_id} is not an instance"
            ))),
        }
    }
}
