//! `raypick.Scene`: geometries accumulated from Python, a Rust [`raypick::Scene`] built lazily on the
//! first query (or [`PyScene::commit`]), and the batch queries over numpy arrays of rays.

use std::collections::HashMap;
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Mutex, MutexGuard};

use glam::{Affine3A, Mat4, Vec3};
use numpy::{PyArray2, PyArrayDyn, PyArrayMethods};
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::{PyDict, PyList, PyTuple};
use rayon::prelude::*;
use raypick::{Geometry, Hit, QueryOptions, Ray, SceneBuilder, Spheres, TriMesh};

use crate::arrays::{pooled, put, read_floats, read_rows, read_triangles, to_numpy, value, Floats};
use crate::camera::PyCamera;
use crate::hit::PyHit;
use crate::threads;

/// Open3D's and Embree's "no geometry" id: `geometry_ids`, `primitive_ids` and `instance_ids` of
/// a ray that hits nothing (and `instance_ids` of a hit that is not instanced).
pub const INVALID_ID: u32 = u32::MAX;

/// One geometry as added from Python.
#[derive(Clone, Debug)]
enum Entry {
    Mesh(TriMesh),
    Spheres(Spheres),
    Instance(InstanceEntry),
}

#[derive(Clone, Debug)]
struct InstanceEntry {
    source: Arc<Source>,
    /// Row-major 4×4 as given (kept for pickling and `geometry()`).
    matrix: [f32; 16],
    world_from_object: Affine3A,
    name: Option<String>,
}

/// A built scene that instances place: its geometries (none of them instances) and its Rust scene.
#[derive(Debug)]
struct Source {
    entries: Vec<Entry>,
    scene: Arc<raypick::Scene>,
    /// `Some(g)`: the source is geometry `g` of the placing scene itself (`add_instance(g, …)`),
    /// and hits in it report geometry id `g`.
    remap: Option<u32>,
}

/// What a query runs on: the built scene and, per top-level geometry id, the geometry id that
/// instanced hits report instead of the inner one (see [`Source::remap`]).
struct Built {
    scene: Arc<raypick::Scene>,
    remap: Vec<Option<u32>>,
}

impl Built {
    #[inline]
    fn geometry_id(&self, hit: &Hit) -> u32 {
        match hit.instance {
            Some(i) => self
                .remap
                .get(i as usize)
                .copied()
                .flatten()
                .unwrap_or(hit.geom),
            None => hit.geom,
        }
    }
}

#[derive(Default)]
struct State {
    entries: Vec<Entry>,
    built: Option<Arc<Built>>,
    /// This scene as an instance source (cached so that placing it many times shares one BVH).
    as_source: Option<Arc<Source>>,
    /// Geometry `g` as an instance source, for `add_instance(g, …)`.
    geometry_sources: HashMap<u32, Arc<Source>>,
}

impl State {
    fn push(&mut self, e: Entry) -> PyResult<u32> {
        let id = u32::try_from(self.entries.len())
            .ok()
            .filter(|&id| id != INVALID_ID)
            .ok_or_else(|| PyValueError::new_err("too many geometries"))?;
        self.entries.push(e);
        self.built = None;
        self.as_source = None;
        Ok(id)
    }
}

fn build_rust_scene(entries: &[Entry]) -> PyResult<raypick::Scene> {
    let mut b = SceneBuilder::new();
    for e in entries {
        match e {
            Entry::Mesh(m) => {
                b.add_mesh(m.clone());
            }
            Entry::Spheres(s) => {
                b.add_spheres(s.clone());
            }
            Entry::Instance(i) => {
                let id = b.add_instance(i.source.scene.clone(), i.world_from_object);
                if let Some(name) = &i.name {
                    b.set_name(id, name.clone());
                }
            }
        }
    }
    b.build()
        .map_err(|e| PyValueError::new_err(format!("cannot build the scene: {e}")))
}

fn build(py: Python<'_>, state: &mut State) -> PyResult<Arc<Built>> {
    if let Some(b) = &state.built {
        return Ok(b.clone());
    }
    let entries = &state.entries;
    let scene = py.detach(|| build_rust_scene(entries))?;
    let remap = entries
        .iter()
        .map(|e| match e {
            Entry::Instance(i) => i.source.remap,
            _ => None,
        })
        .collect();
    let built = Arc::new(Built {
        scene: Arc::new(scene),
        remap,
    });
    state.built = Some(built.clone());
    Ok(built)
}

fn check_finite(points: &[f32], name: &str) -> PyResult<()> {
    if let Some(k) = points.iter().position(|x| !x.is_finite()) {
        return Err(PyValueError::new_err(format!(
            "{name}[{}] is not finite: {:?}",
            k / 3,
            &points[k / 3 * 3..k / 3 * 3 + 3]
        )));
    }
    Ok(())
}

fn to_vec3s(data: &[f32]) -> Vec<Vec3> {
    data.chunks_exact(3).map(Vec3::from_slice).collect()
}

/// Reads a 4×4 (row-major, numpy convention: `p_world = M @ [x, y, z, 1]`) affine matrix.
fn read_matrix(obj: Option<&Bound<'_, PyAny>>) -> PyResult<([f32; 16], Affine3A)> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        let mut m = [0.0; 16];
        for i in 0..4 {
            m[i * 5] = 1.0;
        }
        return Ok((m, Affine3A::IDENTITY));
    };
    let f = read_floats(obj, "matrix", 4, Some(2))?;
    if f.lead != [4] {
        return Err(PyValueError::new_err(format!(
            "matrix must have shape (4, 4), got ({}, 4)",
            f.lead[0]
        )));
    }
    let mut m = [0.0f32; 16];
    m.copy_from_slice(&f.data);
    if m.iter().any(|x| !x.is_finite()) {
        return Err(PyValueError::new_err("matrix must be finite"));
    }
    if m[12..] != [0.0, 0.0, 0.0, 1.0] {
        return Err(PyValueError::new_err(format!(
            "matrix must be affine (last row [0, 0, 0, 1]), got last row {:?}",
            &m[12..]
        )));
    }
    // numpy rows are glam columns of the transpose.
    let world_from_object = Affine3A::from_mat4(Mat4::from_cols_array(&m).transpose());
    let det = world_from_object.matrix3.determinant();
    if !(det.is_finite() && det != 0.0) {
        return Err(PyValueError::new_err(
            "matrix is singular (its 3×3 part has determinant 0)",
        ));
    }
    Ok((m, world_from_object))
}

/// Rays from an `(..., 6)` array: origin, direction, `t ∈ [t_min, t_max]`.
fn rays_from(f: &Floats, t_min: f32, t_max: f32) -> Vec<Ray> {
    f.data
        .chunks_exact(6)
        .map(|c| ray_at(c, t_min, t_max))
        .collect()
}

/// The ray of the six floats of `c` (origin, direction; see [`crate::arrays::FloatRows`]) over
/// `[t_min, t_max]`.
fn ray_of(c: &[AtomicU32], t_min: f32, t_max: f32) -> Ray {
    ray_at(&[0, 1, 2, 3, 4, 5].map(|i| value(c, i)), t_min, t_max)
}

/// The ray of six floats (origin, direction) over `[t_min, t_max]`.
#[inline]
fn ray_at(c: &[f32], t_min: f32, t_max: f32) -> Ray {
    Ray::new(Vec3::new(c[0], c[1], c[2]), Vec3::new(c[3], c[4], c[5])).with_range(t_min, t_max)
}

/// Rays per rayon task in the batch queries made here, as in the engine's batches.
const RAY_CHUNK: usize = 256;

/// Rays from trimesh-style `(N, 3)` origins and `(N, 3)` directions.
fn rays_from_pairs(
    origins: &Bound<'_, PyAny>,
    directions: &Bound<'_, PyAny>,
) -> PyResult<Vec<Ray>> {
    let o = read_floats(origins, "ray_origins", 3, Some(2))?;
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

fn nthreads_arg(nthreads: i64) -> PyResult<usize> {
    usize::try_from(nthreads)
        .map_err(|_| PyValueError::new_err("nthreads must be >= 0 (0: all cores)"))
}

/// A mesh's vertices and triangles as numpy arrays.
type MeshArrays<'py> = (Bound<'py, PyArrayDyn<f32>>, Bound<'py, PyArrayDyn<u32>>);

/// The columns of [`PyScene::cast_rays`], filled in Rust.
struct CastColumns {
    t_hit: Vec<f32>,
    geometry_ids: Vec<u32>,
    primitive_ids: Vec<u32>,
    primitive_uvs: Vec<f32>,
    primitive_normals: Vec<f32>,
    instance_ids: Vec<u32>,
}

impl CastColumns {
    fn with_capacity(n: usize) -> Self {
        Self {
            t_hit: Vec::with_capacity(n),
            geometry_ids: Vec::with_capacity(n),
            primitive_ids: Vec::with_capacity(n),
            primitive_uvs: Vec::with_capacity(2 * n),
            primitive_normals: Vec::with_capacity(3 * n),
            instance_ids: Vec::with_capacity(n),
        }
    }

    /// Appends one hit (the all-hits query's rows).
    fn push(&mut self, built: &Built, h: &Hit) {
        self.t_hit.push(h.t);
        self.geometry_ids.push(built.geometry_id(h));
        self.primitive_ids.push(h.prim);
        self.primitive_uvs.extend([h.u, h.v]);
        self.primitive_normals.extend(h.normal.to_array());
        self.instance_ids.push(h.instance.unwrap_or(INVALID_ID));
    }
}

/// The columns of [`PyScene::cast_rays`] as they are filled: the memory of the numpy arrays it
/// returns, written in place. The arrays come from [`crate::arrays::pooled`], which reuses the
/// memory of freed answer arrays: fresh memory (numpy's zeros, or `Vec`s handed over afterwards)
/// was faulted in and zeroed by the kernel on every call, 16 % of a primary-ray cast. Every
/// element is written, misses included.
struct CastOut<'a> {
    t_hit: &'a mut [f32],
    geometry_ids: &'a mut [u32],
    primitive_ids: &'a mut [u32],
    primitive_uvs: &'a mut [f32],
    primitive_normals: &'a mut [f32],
    instance_ids: &'a mut [u32],
}

impl CastOut<'_> {
    /// The closest hit of every ray, on the current rayon pool, written straight into the columns
    /// (no intermediate `Vec<Option<Hit>>`: for a million rays that buffer cost a fifth of the
    /// cast). Rays are independent, so the result does not depend on the number of threads.
    /// `floats` holds 6 per ray (origin, direction); each worker makes a chunk's rays in a buffer it
    /// keeps and casts them with [`raypick::Scene::intersect_into`] (packets of coherent rays).
    fn cast(self, built: &Built, floats: &[AtomicU32]) {
        use rayon::prelude::*;
        const CHUNK: usize = RAY_CHUNK;
        self.t_hit
            .par_chunks_mut(CHUNK)
            .zip(self.geometry_ids.par_chunks_mut(CHUNK))
            .zip(self.primitive_ids.par_chunks_mut(CHUNK))
            .zip(self.primitive_uvs.par_chunks_mut(2 * CHUNK))
            .zip(self.primitive_normals.par_chunks_mut(3 * CHUNK))
            .zip(self.instance_ids.par_chunks_mut(CHUNK))
            .zip(floats.par_chunks(6 * CHUNK))
            .for_each_init(
                || (Vec::with_capacity(CHUNK), vec![None; CHUNK]),
                |(rays, hits), ((((((t, geom), prim), uv), normal), inst), floats)| {
                    // One chunk at a time through the engine's batch walk (packets of coherent rays),
                    // into buffers each worker keeps.
                    rays.clear();
                    rays.extend(
                        floats
                            .chunks_exact(6)
                            .map(|c| ray_of(c, 0.0, f32::INFINITY)),
                    );
                    let hits = &mut hits[..rays.len()];
                    built
                        .scene
                        .intersect_into(rays, &QueryOptions::default(), hits);
                    // The columns zipped row by row: no index, so no bounds check per element.
                    // Every column's chunk holds this chunk's rays (the same `CHUNK` per row).
                    debug_assert!(t.len() == hits.len() && normal.len() == 3 * hits.len());
                    let rows = hits
                        .iter()
                        .zip(t.iter_mut())
                        .zip(geom.iter_mut())
                        .zip(prim.iter_mut())
                        .zip(uv.chunks_exact_mut(2))
                        .zip(normal.chunks_exact_mut(3))
                        .zip(inst.iter_mut());
                    for ((((((hit, t), geom), prim), uv), normal), inst) in rows {
                        match hit {
                            Some(h) => {
                                *t = h.t;
                                *geom = built.geometry_id(h);
                                *prim = h.prim;
                                uv.copy_from_slice(&[h.u, h.v]);
                                normal.copy_from_slice(&h.normal.to_array());
                                *inst = h.instance.unwrap_or(INVALID_ID);
                            }
                            None => {
                                // Every element: the arrays' memory may hold an earlier cast's
                                // answers (`arrays::pooled`).
                                *t = f32::INFINITY;
                                *geom = INVALID_ID;
                                *prim = INVALID_ID;
                                uv.fill(0.0);
                                normal.fill(0.0);
                                *inst = INVALID_ID;
                            }
                        }
                    }
                },
            );
    }
}

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
/// A scene is thread-safe and can be pickled (its geometries are stored and the BVH is rebuilt on
/// the first query after unpickling), so it can be sent to worker processes.
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
        if state
            .entries
            .iter()
            .any(|e| matches!(e, Entry::Instance(_)))
        {
            return Err(PyValueError::new_err(
                "the scene to instance holds instances itself; raypick supports two levels \
                 (a scene of instances of scenes of meshes and spheres)",
            ));
        }
        let built = build(py, state)?;
        let source = Arc::new(Source {
            entries: state.entries.clone(),
            scene: built.scene.clone(),
            remap: None,
        });
        state.as_source = Some(source.clone());
        Ok(source)
    }

    fn add_entry(&self, py: Python<'_>, e: Entry) -> PyResult<u32> {
        self.lock(py).push(e)
    }

    /// A scene with these entries (from a loader or from unpickling).
    fn from_entries(entries: Vec<Entry>) -> Self {
        Self {
            state: Mutex::new(State {
                entries,
                ..State::default()
            }),
        }
    }

    /// A Python scene holding the geometries of a built Rust scene (instances keep their shared
    /// sources).
    pub fn from_rust(scene: &raypick::Scene) -> Self {
        let mut sources: HashMap<*const raypick::Scene, Arc<Source>> = HashMap::new();
        let entries = (0..scene.num_geometries() as u32)
            .filter_map(|id| scene.geometry(id))
            .map(|g| entry_from_geometry(g, &mut sources))
            .collect();
        Self::from_entries(entries)
    }
}

fn entry_from_geometry(
    g: &Geometry,
    sources: &mut HashMap<*const raypick::Scene, Arc<Source>>,
) -> Entry {
    match g {
        Geometry::Mesh(m) => Entry::Mesh(m.clone()),
        Geometry::Spheres(s) => Entry::Spheres(s.clone()),
        Geometry::Instance(i) => {
            let inner = i.scene();
            let source = sources
                .entry(Arc::as_ptr(inner))
                .or_insert_with(|| {
                    let mut none = HashMap::new();
                    Arc::new(Source {
                        entries: (0..inner.num_geometries() as u32)
                            .filter_map(|id| inner.geometry(id))
                            .map(|g| entry_from_geometry(g, &mut none))
                            .collect(),
                        scene: inner.clone(),
                        remap: None,
                    })
                })
                .clone();
            let m = Mat4::from(i.world_from_object())
                .transpose()
                .to_cols_array();
            Entry::Instance(InstanceEntry {
                source,
                matrix: m,
                world_from_object: i.world_from_object(),
                name: i.name().map(str::to_owned),
            })
        }
        // `Geometry` may grow variants; a geometry raypick cannot describe to Python is kept as an
        // empty mesh so that the ids of the others do not shift.
        #[allow(unreachable_patterns)]
        _ => Entry::Mesh(TriMesh::new(Vec::new(), Vec::new())),
    }
}

// ---- pickling ---------------------------------------------------------------------------------

const STATE_VERSION: u32 = 1;

fn entry_to_py<'py>(
    py: Python<'py>,
    e: &Entry,
    sources: &mut Vec<Arc<Source>>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    match e {
        Entry::Mesh(m) => {
            d.set_item("kind", "mesh")?;
            d.set_item("name", m.name())?;
            let v: Vec<f32> = m.vertices().iter().flat_map(|p| p.to_array()).collect();
            let t: Vec<u32> = m.indices().iter().flatten().copied().collect();
            put(&d, "vertices", v, &[m.vertices().len()], &[3])?;
            put(&d, "triangles", t, &[m.indices().len()], &[3])?;
        }
        Entry::Spheres(s) => {
            d.set_item("kind", "spheres")?;
            d.set_item("name", s.name())?;
            let c: Vec<f32> = s.centers().iter().flat_map(|p| p.to_array()).collect();
            put(&d, "centers", c, &[s.centers().len()], &[3])?;
            put(&d, "radii", s.radii().to_vec(), &[s.radii().len()], &[])?;
        }
        Entry::Instance(i) => {
            let k = match sources.iter().position(|s| Arc::ptr_eq(s, &i.source)) {
                Some(k) => k,
                None => {
                    sources.push(i.source.clone());
                    sources.len() - 1
                }
            };
            d.set_item("kind", "instance")?;
            d.set_item("name", i.name.as_deref())?;
            d.set_item("source", k)?;
            put(&d, "matrix", i.matrix.to_vec(), &[4], &[4])?;
        }
    }
    Ok(d)
}

fn get<'py>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Bound<'py, PyAny>> {
    d.get_item(key)?
        .ok_or_else(|| PyValueError::new_err(format!("bad Scene state: no {key:?}")))
}

fn entry_from_py(d: &Bound<'_, PyDict>, sources: &[Arc<Source>]) -> PyResult<Entry> {
    let kind: String = get(d, "kind")?.extract()?;
    let name: Option<String> = get(d, "name")?.extract()?;
    Ok(match kind.as_str() {
        "mesh" => {
            let v = read_floats(&get(d, "vertices")?, "vertices", 3, Some(2))?;
            let t = read_triangles(&get(d, "triangles")?, "triangles", v.rows())?;
            let mut m = TriMesh::new(to_vec3s(&v.data), t);
            if let Some(n) = name {
                m = m.with_name(n);
            }
            Entry::Mesh(m)
        }
        "spheres" => {
            let c = read_floats(&get(d, "centers")?, "centers", 3, Some(2))?;
            let r: Vec<f32> = get(d, "radii")?.extract()?;
            let mut s = Spheres::new(to_vec3s(&c.data), r);
            if let Some(n) = name {
                s = s.with_name(n);
            }
            Entry::Spheres(s)
        }
        "instance" => {
            let k: usize = get(d, "source")?.extract()?;
            let source = sources
                .get(k)
                .ok_or_else(|| PyValueError::new_err("bad Scene state: unknown instance source"))?
                .clone();
            let (matrix, world_from_object) = read_matrix(Some(&get(d, "matrix")?))?;
            Entry::Instance(InstanceEntry {
                source,
                matrix,
                world_from_object,
                name,
            })
        }
        other => {
            return Err(PyValueError::new_err(format!(
                "bad Scene state: unknown geometry kind {other:?}"
            )))
        }
    })
}

// ---- the Python class ------------------------------------------------------------------------

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
    ///     vertices: ``(N, 3)`` float array of positions (or a ``trimesh.Trimesh`` /
    ///         ``open3d.geometry.TriangleMesh``, with ``triangles`` omitted).
    ///     triangles: ``(M, 3)`` integer array of 0-based vertex indices; the front face is the
    ///         side from which they are counter-clockwise. Triangle ``i`` is primitive id ``i``.
    ///     name: optional name (see :meth:`geometry_name`).
    ///
    /// Raises:
    ///     ValueError: wrong shapes or dtypes, an index out of range, a non-finite vertex.
    ///
    /// Example::
    ///
    ///     >>> scene = raypick.Scene()
    ///     >>> scene.add_triangles(np.eye(3), [[0, 1, 2]], name="tri")
    ///     0
    #[pyo3(signature = (vertices, triangles=None, name=None))]
    fn add_triangles(
        &self,
        py: Python<'_>,
        vertices: &Bound<'_, PyAny>,
        triangles: Option<&Bound<'_, PyAny>>,
        name: Option<String>,
    ) -> PyResult<u32> {
        let (vertices, triangles) = match triangles.filter(|t| !t.is_none()) {
            Some(t) => (vertices.clone(), t.clone()),
            None => {
                // trimesh.Trimesh (vertices, faces) or open3d.geometry.TriangleMesh (vertices,
                // triangles).
                let mesh = vertices;
                let faces = if mesh.hasattr("faces")? {
                    mesh.getattr("faces")?
                } else if mesh.hasattr("triangles")? && mesh.hasattr("vertices")? {
                    mesh.getattr("triangles")?
                } else {
                    return Err(PyValueError::new_err(
                        "add_triangles needs (vertices, triangles) arrays, or a mesh object with \
                         .vertices and .faces (trimesh) or .triangles (Open3D)",
                    ));
                };
                (mesh.getattr("vertices")?, faces)
            }
        };
        let v = read_floats(&vertices, "vertices", 3, Some(2))?;
        check_finite(&v.data, "vertices")?;
        let t = read_triangles(&triangles, "triangles", v.rows())?;
        let mut mesh = TriMesh::new(to_vec3s(&v.data), t);
        if let Some(n) = name {
            mesh = mesh.with_name(n);
        }
        self.add_entry(py, Entry::Mesh(mesh))
    }

    /// Adds a set of spheres and returns its geometry id. Sphere ``i`` is primitive id ``i``;
    /// ``primitive_uvs`` of sphere hits are 0 and normals point outwards.
    ///
    /// Args:
    ///     centers: ``(N, 3)`` float array.
    ///     radii: ``(N,)`` float array, or one number for all spheres (finite, ``>= 0``).
    ///     name: optional name.
    ///
    /// Example::
    ///
    ///     >>> scene.add_spheres([[0, 0, -5], [2, 0, -5]], 0.5)
    #[pyo3(signature = (centers, radii, name=None))]
    fn add_spheres(
        &self,
        py: Python<'_>,
        centers: &Bound<'_, PyAny>,
        radii: &Bound<'_, PyAny>,
        name: Option<String>,
    ) -> PyResult<u32> {
        let c = read_floats(centers, "centers", 3, Some(2))?;
        check_finite(&c.data, "centers")?;
        let n = c.rows();
        let r: Vec<f32> = if let Ok(x) = radii.extract::<f64>() {
            vec![x as f32; n]
        } else {
            // A (N,) array: read as (N, 1).
            let np = radii.py().import("numpy")?;
            let col =
                np.call_method1("reshape", (np.call_method1("asarray", (radii,))?, (-1, 1)))?;
            let r = read_floats(&col, "radii", 1, Some(2))?;
            if r.rows() != n {
                return Err(PyValueError::new_err(format!(
                    "radii must be one number or have shape ({n},), got {} values",
                    r.rows()
                )));
            }
            r.data
        };
        if let Some(k) = r.iter().position(|x| !(x.is_finite() && *x >= 0.0)) {
            return Err(PyValueError::new_err(format!(
                "radii[{k}] = {} must be finite and >= 0",
                r[k]
            )));
        }
        let mut s = Spheres::new(to_vec3s(&c.data), r);
        if let Some(name) = name {
            s = s.with_name(name);
        }
        self.add_entry(py, Entry::Spheres(s))
    }

    /// Places a whole scene, or one geometry of this scene, with a 4×4 affine transform and returns
    /// the instance's geometry id.
    ///
    /// Args:
    ///     scene_or_geometry: a :class:`Scene` of meshes and spheres (no instances: two levels) —
    ///         captured as it is now, like Embree's commit; later changes to it do not affect this
    ///         instance — or the geometry id of a mesh or sphere set of this scene (a transformed
    ///         copy; the original stays where it is).
    ///     matrix: ``(4, 4)`` ``world_from_object`` matrix (numpy convention:
    ///         ``p_world = matrix @ [x, y, z, 1]``), last row ``[0, 0, 0, 1]``; default identity.
    ///     name: optional name.
    ///
    /// Hits in an instance report ``instance_ids`` = the instance's id and ``geometry_ids`` = the
    /// geometry id inside the placed scene (for a placed geometry of this scene: its own id).
    /// ``t`` stays in units of the world ray's direction.
    ///
    /// Example::
    ///
    ///     >>> part = raypick.Scene(); part.add_triangles(v, f)
    ///     >>> world = raypick.Scene()
    ///     >>> a = world.add_instance(part, np.eye(4))
    ///     >>> b = world.add_instance(part, translation_matrix)
    #[pyo3(signature = (scene_or_geometry, matrix=None, name=None))]
    fn add_instance(
        &self,
        py: Python<'_>,
        scene_or_geometry: &Bound<'_, PyAny>,
        matrix: Option<&Bound<'_, PyAny>>,
        name: Option<String>,
    ) -> PyResult<u32> {
        let (matrix, world_from_object) = read_matrix(matrix)?;
        let source = if let Ok(other) = scene_or_geometry.cast::<PyScene>() {
            let other = other.get();
            if std::ptr::eq(other, self) {
                return Err(PyValueError::new_err(
                    "a scene cannot be placed inside itself",
                ));
            }
            other.as_source(py)?
        } else if let Ok(g) = scene_or_geometry.extract::<u32>() {
            let mut state = self.lock(py);
            if let Some(s) = state.geometry_sources.get(&g) {
                s.clone()
            } else {
                let entry = match state.entries.get(g as usize) {
                    Some(e @ (Entry::Mesh(_) | Entry::Spheres(_))) => e.clone(),
                    Some(Entry::Instance(_)) => {
                        return Err(PyValueError::new_err(format!(
                        "geometry {g} is an instance; instances cannot be instanced (two levels)"
                    )))
                    }
                    None => {
                        return Err(PyIndexError::new_err(format!(
                            "no geometry {g} (the scene has {})",
                            state.entries.len()
                        )))
                    }
                };
                let entries = vec![entry];
                let scene = py.detach(|| build_rust_scene(&entries))?;
                let s = Arc::new(Source {
                    entries,
                    scene: Arc::new(scene),
                    remap: Some(g),
                });
                state.geometry_sources.insert(g, s.clone());
                s
            }
        } else {
            return Err(PyValueError::new_err(
                "add_instance needs a raypick.Scene or a geometry id (int) of this scene",
            ));
        };
        self.add_entry(
            py,
            Entry::Instance(InstanceEntry {
                source,
                matrix,
                world_from_object,
                name,
            }),
        )
    }

    /// Builds the acceleration structure now (queries otherwise build it on first use after a
    /// change). Releases the GIL while building.
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

    /// Triangles stored in the scene's meshes (instances not counted again).
    #[getter]
    fn num_triangles(&self, py: Python<'_>) -> usize {
        self.lock(py)
            .entries
            .iter()
            .map(|e| match e {
                Entry::Mesh(m) => m.num_triangles(),
                _ => 0,
            })
            .sum()
    }

    /// The name of geometry ``geometry_id`` (``None`` when it has none).
    ///
    /// Raises:
    ///     IndexError: no such geometry.
    fn geometry_name(&self, py: Python<'_>, geometry_id: u32) -> PyResult<Option<String>> {
        let state = self.lock(py);
        match state.entries.get(geometry_id as usize) {
            Some(Entry::Mesh(m)) => Ok(m.name().map(str::to_owned)),
            Some(Entry::Spheres(s)) => Ok(s.name().map(str::to_owned)),
            Some(Entry::Instance(i)) => Ok(i.name.clone()),
            None => Err(PyIndexError::new_err(format!(
                "no geometry {geometry_id} (the scene has {})",
                state.entries.len()
            ))),
        }
    }

    /// The kind of geometry ``geometry_id``: ``"mesh"``, ``"spheres"`` or ``"instance"``.
    fn geometry_kind(&self, py: Python<'_>, geometry_id: u32) -> PyResult<&'static str> {
        let state = self.lock(py);
        match state.entries.get(geometry_id as usize) {
            Some(Entry::Mesh(_)) => Ok("mesh"),
            Some(Entry::Spheres(_)) => Ok("spheres"),
            Some(Entry::Instance(_)) => Ok("instance"),
            None => Err(PyIndexError::new_err(format!("no geometry {geometry_id}"))),
        }
    }

    /// The world-space bounding box as a ``(2, 3)`` float32 array ``[min, max]`` (``min > max``
    /// when the scene is empty). Builds the scene.
    fn bounds<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
        let b = self.built(py)?.scene.bounds();
        let data = [b.min.to_array(), b.max.to_array()].concat();
        to_numpy(py, data, &[2], &[3])
    }

    /// Closest hit of every ray (Open3D ``RaycastingScene.cast_rays``).
    ///
    /// Args:
    ///     rays: ``(..., 6)`` array ``[ox, oy, oz, dx, dy, dz]``, float32 or float64, any leading
    ///         shape and strides. ``t`` runs over ``[0, inf)`` in units of ``d``.
    ///     nthreads: threads to use; 0 (default) uses every core.
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
    #[pyo3(signature = (rays, nthreads=0))]
    fn cast_rays<'py>(
        &self,
        py: Python<'py>,
        rays: &Bound<'py, PyAny>,
        nthreads: i64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let nthreads = nthreads_arg(nthreads)?;
        let built = self.built(py)?;
        let f = read_rows(rays, "rays", 6)?;
        let values = f.values();
        let lead = &f.lead;
        let t_hit = pooled::<f32>(py, lead, &[])?;
        let geometry_ids = pooled::<u32>(py, lead, &[])?;
        let primitive_ids = pooled::<u32>(py, lead, &[])?;
        let primitive_uvs = pooled::<f32>(py, lead, &[2])?;
        let primitive_normals = pooled::<f32>(py, lead, &[3])?;
        let instance_ids = pooled::<u32>(py, lead, &[])?;
        {
            let mut t = t_hit.readwrite();
            let mut g = geometry_ids.readwrite();
            let mut p = primitive_ids.readwrite();
            let mut uv = primitive_uvs.readwrite();
            let mut n = primitive_normals.readwrite();
            let mut i = instance_ids.readwrite();
            let out = CastOut {
                t_hit: t.as_slice_mut()?,
                geometry_ids: g.as_slice_mut()?,
                primitive_ids: p.as_slice_mut()?,
                primitive_uvs: uv.as_slice_mut()?,
                primitive_normals: n.as_slice_mut()?,
                instance_ids: i.as_slice_mut()?,
            };
            py.detach(|| threads::run(nthreads, || out.cast(&built, values)))?;
        }
        let d = PyDict::new(py);
        d.set_item("t_hit", t_hit)?;
        d.set_item("geometry_ids", geometry_ids)?;
        d.set_item("primitive_ids", primitive_ids)?;
        d.set_item("primitive_uvs", primitive_uvs)?;
        d.set_item("primitive_normals", primitive_normals)?;
        d.set_item("instance_ids", instance_ids)?;
        Ok(d)
    }

    /// Whether anything is hit with ``t`` in ``[tnear, tfar]`` (Open3D
    /// ``RaycastingScene.test_occlusions``): a bool array shaped like ``rays.shape[:-1]``.
    ///
    /// Example::
    ///
    ///     >>> # shadow rays from surface points p towards a light at L (t in [eps, 1])
    ///     >>> shadow = scene.test_occlusions(np.hstack([p, L - p]), tnear=1e-4, tfar=1.0)
    #[pyo3(signature = (rays, tnear=0.0, tfar=f32::INFINITY, nthreads=0))]
    fn test_occlusions<'py>(
        &self,
        py: Python<'py>,
        rays: &Bound<'py, PyAny>,
        tnear: f32,
        tfar: f32,
        nthreads: i64,
    ) -> PyResult<Bound<'py, PyArrayDyn<bool>>> {
        let nthreads = nthreads_arg(nthreads)?;
        let built = self.built(py)?;
        let f = read_rows(rays, "rays", 6)?;
        let values = f.values();
        let out = py.detach(|| {
            threads::run(nthreads, || {
                use rayon::prelude::*;
                // Rays are made from the floats as they are cast: a materialized `Vec<Ray>` (32 MB
                // per million rays, written and page-faulted once) cost a sixth of the cast.
                let mut out = vec![false; values.len() / 6];
                out.par_chunks_mut(RAY_CHUNK)
                    .zip(values.par_chunks(6 * RAY_CHUNK))
                    .for_each_init(
                        || Vec::with_capacity(RAY_CHUNK),
                        |rays, (out, floats)| {
                            // One chunk at a time through the engine's batch walk (packets of
                            // coherent rays).
                            rays.clear();
                            rays.extend(floats.chunks_exact(6).map(|c| ray_of(c, tnear, tfar)));
                            built
                                .scene
                                .occluded_into(rays, &QueryOptions::default(), out);
                        },
                    );
                out
            })
        })?;
        to_numpy(py, out, &f.lead, &[])
    }

    /// Number of surface crossings along each ray over ``t`` in ``[0, inf)`` (Open3D
    /// ``RaycastingScene.count_intersections``): an int32 array shaped like ``rays.shape[:-1]``.
    ///
    /// A ray through an edge or vertex shared by consistently wound triangles counts it once, so
    /// the count's parity tells inside (odd) from outside (even) for a closed mesh. A sphere counts
    /// its entry and exit.
    #[pyo3(signature = (rays, nthreads=0))]
    fn count_intersections<'py>(
        &self,
        py: Python<'py>,
        rays: &Bound<'py, PyAny>,
        nthreads: i64,
    ) -> PyResult<Bound<'py, PyArrayDyn<i32>>> {
        let nthreads = nthreads_arg(nthreads)?;
        let built = self.built(py)?;
        let f = read_floats(rays, "rays", 6, None)?;
        let rays = rays_from(&f, 0.0, f32::INFINITY);
        let out: Vec<i32> = py.detach(|| {
            threads::run(nthreads, || {
                rays.par_iter()
                    .with_min_len(64)
                    .map(|r| i32::try_from(built.scene.count_intersections(r)).unwrap_or(i32::MAX))
                    .collect()
            })
        })?;
        to_numpy(py, out, &f.lead, &[])
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
    /// :meth:`count_intersections`).
    #[pyo3(signature = (rays, nthreads=0))]
    fn list_intersections<'py>(
        &self,
        py: Python<'py>,
        rays: &Bound<'py, PyAny>,
        nthreads: i64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let nthreads = nthreads_arg(nthreads)?;
        let built = self.built(py)?;
        let f = read_floats(rays, "rays", 6, None)?;
        let rays = rays_from(&f, 0.0, f32::INFINITY);
        let (splits, ray_ids, cols) = py.detach(|| {
            threads::run(nthreads, || {
                let all: Vec<Vec<Hit>> = rays
                    .par_iter()
                    .with_min_len(64)
                    .map(|r| built.scene.intersect_all(r))
                    .collect();
                let total = all.iter().map(Vec::len).sum();
                let mut splits = Vec::with_capacity(all.len() + 1);
                let mut ray_ids = Vec::with_capacity(total);
                let mut cols = CastColumns::with_capacity(total);
                splits.push(0i64);
                for (i, hits) in all.iter().enumerate() {
                    for h in hits {
                        ray_ids.push(i as i64);
                        cols.push(&built, h);
                    }
                    splits.push(ray_ids.len() as i64);
                }
                (splits, ray_ids, cols)
            })
        })?;
        let k = ray_ids.len();
        let d = PyDict::new(py);
        put(&d, "ray_splits", splits, &[rays.len() + 1], &[])?;
        put(&d, "ray_ids", ray_ids, &[k], &[])?;
        put(&d, "t_hit", cols.t_hit, &[k], &[])?;
        put(&d, "geometry_ids", cols.geometry_ids, &[k], &[])?;
        put(&d, "primitive_ids", cols.primitive_ids, &[k], &[])?;
        put(&d, "primitive_uvs", cols.primitive_uvs, &[k], &[2])?;
        put(&d, "primitive_normals", cols.primitive_normals, &[k], &[3])?;
        put(&d, "instance_ids", cols.instance_ids, &[k], &[])?;
        Ok(d)
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
        let built = self.built(py)?;
        let rays = rays_from_pairs(ray_origins, ray_directions)?;
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

    /// trimesh-style: whether each ray hits anything (bool, one per ray), like
    /// ``trimesh.Trimesh.ray.intersects_any``.
    fn intersects_any<'py>(
        &self,
        py: Python<'py>,
        ray_origins: &Bound<'py, PyAny>,
        ray_directions: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArrayDyn<bool>>> {
        let built = self.built(py)?;
        let rays = rays_from_pairs(ray_origins, ray_directions)?;
        let out = py.detach(|| built.scene.occluded_batch(&rays, &QueryOptions::default()));
        to_numpy(py, out, &[rays.len()], &[])
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
        let built = self.built(py)?;
        let rays = rays_from_pairs(ray_origins, ray_directions)?;
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
                    loc.extend(h.point.to_array().map(f64::from));
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
    ///     >>> hit.geometry_id, hit.primitive_id, hit.point
    #[pyo3(signature = (camera, x, y, tolerance_px=0.0))]
    fn pick(
        &self,
        py: Python<'_>,
        camera: &Bound<'_, PyCamera>,
        x: f32,
        y: f32,
        tolerance_px: f32,
    ) -> PyResult<Option<PyHit>> {
        let built = self.built(py)?;
        let cam = camera.get().rust();
        let pixel = glam::Vec2::new(x, y);
        let picked = if tolerance_px > 0.0 {
            raypick::camera::pick_with_tolerance(
                &built.scene,
                cam,
                pixel,
                tolerance_px,
                &QueryOptions::default(),
            )
        } else {
            raypick::camera::pick(&built.scene, cam, pixel)
        };
        Ok(picked.map(|p| {
            let h = p.hit;
            let geometry_id = built.geometry_id(&h);
            let name = match h.instance {
                Some(i) if built.remap.get(i as usize).copied().flatten().is_none() => built
                    .scene
                    .geometry(i)
                    .and_then(|g| match g {
                        Geometry::Instance(inst) => inst.scene().geometry_name(h.geom),
                        _ => None,
                    })
                    .map(str::to_owned),
                _ => built.scene.geometry_name(geometry_id).map(str::to_owned),
            };
            PyHit::new(&h, geometry_id, name)
        }))
    }

    /// Everything visible or hidden inside the window rectangle with corners ``(x0, y0)`` and
    /// ``(x1, y1)`` of ``camera`` (a marquee selection; exact, every primitive is tested against
    /// the rectangle's frustum): a sorted list of ``(geometry_id, instance_id or None)``
    /// (``raypick::camera::pick_rect``).
    ///
    /// Example::
    ///
    ///     >>> scene.pick_rect(cam, 0, 0, 320, 480)   # the left half of a 640 x 480 view
    ///     [(0, None), (2, 5)]
    fn pick_rect(
        &self,
        py: Python<'_>,
        camera: &Bound<'_, PyCamera>,
        x0: f32,
        y0: f32,
        x1: f32,
        y1: f32,
    ) -> PyResult<Vec<(u32, Option<u32>)>> {
        let built = self.built(py)?;
        let cam = *camera.get().rust();
        let scene = built.scene.clone();
        let rect = raypick::camera::PixelRect::new(x0, y0, x1, y1);
        let found = py.detach(|| raypick::camera::pick_rect(&scene, &cam, rect));
        let mut out: Vec<(u32, Option<u32>)> = found
            .into_iter()
            .map(|(g, i)| match i {
                Some(inst) => (
                    built
                        .remap
                        .get(inst as usize)
                        .copied()
                        .flatten()
                        .unwrap_or(g),
                    Some(inst),
                ),
                None => (g, None),
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// Open3D's ``RaycastingScene.create_rays_pinhole``; see :func:`raypick.create_rays_pinhole`.
    #[staticmethod]
    fn create_rays_pinhole<'py>(
        py: Python<'py>,
        fov_deg: f64,
        center: &Bound<'py, PyAny>,
        eye: &Bound<'py, PyAny>,
        up: &Bound<'py, PyAny>,
        width_px: i64,
        height_px: i64,
    ) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
        crate::camera::create_rays_pinhole(py, fov_deg, center, eye, up, width_px, height_px)
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
        let tris: usize = state
            .entries
            .iter()
            .map(|e| match e {
                Entry::Mesh(m) => m.num_triangles(),
                _ => 0,
            })
            .sum();
        format!(
            "raypick.Scene({meshes} meshes, {tris} triangles, {spheres} sphere sets, {instances} instances{})",
            if state.built.is_some() { ", built" } else { "" }
        )
    }

    /// The scene's geometries as plain Python data (numpy arrays, names, matrices): what pickle
    /// stores. Instanced scenes are stored once however often they are placed.
    fn __getstate__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let state = self.lock(py);
        let mut sources: Vec<Arc<Source>> = Vec::new();
        let geoms = PyList::empty(py);
        for e in &state.entries {
            geoms.append(entry_to_py(py, e, &mut sources)?)?;
        }
        let srcs = PyList::empty(py);
        for s in &sources {
            let d = PyDict::new(py);
            let list = PyList::empty(py);
            let mut none = Vec::new();
            for e in &s.entries {
                list.append(entry_to_py(py, e, &mut none)?)?;
            }
            d.set_item("geometries", list)?;
            d.set_item("remap", s.remap)?;
            srcs.append(d)?;
        }
        let d = PyDict::new(py);
        d.set_item("version", STATE_VERSION)?;
        d.set_item("geometries", geoms)?;
        d.set_item("sources", srcs)?;
        Ok(d)
    }

    /// Restores what :meth:`__getstate__` returned (the BVH is rebuilt on the first query).
    fn __setstate__(&self, py: Python<'_>, state: &Bound<'_, PyDict>) -> PyResult<()> {
        let version: u32 = get(state, "version")?.extract()?;
        if version != STATE_VERSION {
            return Err(PyValueError::new_err(format!(
                "Scene state version {version} is not supported (this raypick reads {STATE_VERSION})"
            )));
        }
        let mut sources = Vec::new();
        for s in get(state, "sources")?.cast::<PyList>()?.iter() {
            let s = s.cast::<PyDict>()?;
            let entries = get(s, "geometries")?
                .cast::<PyList>()?
                .iter()
                .map(|g| entry_from_py(g.cast::<PyDict>()?, &[]))
                .collect::<PyResult<Vec<_>>>()?;
            let remap: Option<u32> = get(s, "remap")?.extract()?;
            let scene = py.detach(|| build_rust_scene(&entries))?;
            sources.push(Arc::new(Source {
                entries,
                scene: Arc::new(scene),
                remap,
            }));
        }
        let entries = get(state, "geometries")?
            .cast::<PyList>()?
            .iter()
            .map(|g| entry_from_py(g.cast::<PyDict>()?, &sources))
            .collect::<PyResult<Vec<_>>>()?;
        let mut st = self.lock(py);
        *st = State {
            entries,
            ..State::default()
        };
        for s in &sources {
            if let Some(g) = s.remap {
                st.geometry_sources.insert(g, s.clone());
            }
        }
        Ok(())
    }

    /// The vertices ``(N, 3)`` float32 and triangles ``(M, 3)`` uint32 of mesh ``geometry_id``.
    fn mesh_arrays<'py>(&self, py: Python<'py>, geometry_id: u32) -> PyResult<MeshArrays<'py>> {
        let state = self.lock(py);
        match state.entries.get(geometry_id as usize) {
            Some(Entry::Mesh(m)) => {
                let v: Vec<f32> = m.vertices().iter().flat_map(|p| p.to_array()).collect();
                let t: Vec<u32> = m.indices().iter().flatten().copied().collect();
                Ok((
                    to_numpy(py, v, &[m.vertices().len()], &[3])?,
                    to_numpy(py, t, &[m.indices().len()], &[3])?,
                ))
            }
            Some(_) => Err(PyValueError::new_err(format!(
                "geometry {geometry_id} is not a mesh"
            ))),
            None => Err(PyIndexError::new_err(format!("no geometry {geometry_id}"))),
        }
    }

    /// The ``(4, 4)`` float32 ``world_from_object`` matrix of instance ``geometry_id``.
    fn instance_matrix<'py>(
        &self,
        py: Python<'py>,
        geometry_id: u32,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let state = self.lock(py);
        match state.entries.get(geometry_id as usize) {
            Some(Entry::Instance(i)) => PyArray2::from_vec2(
                py,
                &i.matrix.chunks(4).map(<[f32]>::to_vec).collect::<Vec<_>>(),
            )
            .map_err(|e| PyValueError::new_err(e.to_string())),
            Some(_) => Err(PyValueError::new_err(format!(
                "geometry {geometry_id} is not an instance"
            ))),
            None => Err(PyIndexError::new_err(format!("no geometry {geometry_id}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_of_a_geometry_report_its_id() {
        let tri = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]);
        let entries = vec![Entry::Mesh(tri.clone())];
        let inner = Arc::new(build_rust_scene(&entries).unwrap());
        let source = Arc::new(Source {
            entries,
            scene: inner,
            remap: Some(0),
        });
        let moved = Affine3A::from_translation(Vec3::new(0.0, 0.0, -2.0));
        let top = vec![
            Entry::Mesh(tri),
            Entry::Instance(InstanceEntry {
                source,
                matrix: Mat4::from(moved).transpose().to_cols_array(),
                world_from_object: moved,
                name: None,
            }),
        ];
        let scene = build_rust_scene(&top).unwrap();
        let built = Built {
            scene: Arc::new(scene),
            remap: vec![None, Some(0)],
        };
        // Through the original (z = 0) first, then the copy at z = -2.
        let ray = Ray::new(Vec3::new(0.2, 0.2, 1.0), Vec3::NEG_Z);
        let all = built.scene.intersect_all(&ray);
        assert_eq!(all.len(), 2);
        assert_eq!((built.geometry_id(&all[0]), all[0].instance), (0, None));
        assert_eq!((built.geometry_id(&all[1]), all[1].instance), (0, Some(1)));
        assert_eq!(all[1].t, 3.0);
    }

    #[test]
    fn from_rust_keeps_geometries_and_shares_sources() {
        let tri = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).with_name("t");
        let mut part = SceneBuilder::new();
        part.add_mesh(tri);
        let part = Arc::new(part.build().unwrap());
        let mut world = SceneBuilder::new();
        world.add_instance(part.clone(), Affine3A::IDENTITY);
        world.add_instance(part, Affine3A::from_translation(Vec3::X));
        let world = world.build().unwrap();
        let py_scene = PyScene::from_rust(&world);
        let state = py_scene.state.lock().unwrap();
        assert_eq!(state.entries.len(), 2);
        let (Entry::Instance(a), Entry::Instance(b)) = (&state.entries[0], &state.entries[1])
        else {
            panic!("expected two instances");
        };
        assert!(Arc::ptr_eq(&a.source, &b.source));
        assert_eq!(b.matrix[3], 1.0); // row 0, column 3: the x translation
        let Entry::Mesh(m) = &a.source.entries[0] else {
            panic!("expected a mesh");
        };
        assert_eq!(m.name(), Some("t"));
    }
}
