//! What a [`PyScene`] holds: the geometries as added from Python ([`Entry`]), the instance sources
//! they share, and the Rust scene built from them on demand.

use std::collections::HashMap;
use std::sync::Arc;

use glam::{Affine3A, DMat4, DVec3, Mat4};
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use raypick::{Geometry, Hit, InstancePath, SceneBuilder, Spheres, TriMesh};

use super::INVALID_ID;

/// One geometry as added from Python.
#[derive(Clone, Debug)]
pub(super) enum Entry {
    Mesh(TriMesh),
    Spheres(Spheres),
    Instance(InstanceEntry),
}

#[derive(Clone, Debug)]
pub(super) struct InstanceEntry {
    pub(super) source: Arc<Source>,
    /// Row-major 4×4 as given, in `f64` (kept for pickling, `instance_matrix`, and the
    /// transform between the frames of the two scenes).
    pub(super) matrix: [f64; 16],
    /// The matrix in `f32`.
    pub(super) world_from_object: Affine3A,
    pub(super) name: Option<String>,
    /// The instance's geometry mask (see `QueryOptions::mask`).
    pub(super) mask: u32,
}

/// A built scene that instances place: its geometries (none of them instances) and its Rust scene.
#[derive(Debug)]
pub(super) struct Source {
    pub(super) entries: Vec<Entry>,
    pub(super) scene: Arc<raypick::Scene>,
    /// `Some(g)`: the source is geometry `g` of the placing scene itself (`add_instance(g, …)`),
    /// and hits in it report geometry id `g`.
    pub(super) remap: Option<u32>,
    /// The origin of the source's frame ([`State::origin`]).
    pub(super) origin: DVec3,
}

/// What a query runs on: the built scene and the entries it was built from, whose instances name
/// the geometry id that instanced hits report instead of the inner one (see [`Source::remap`]).
pub(super) struct Built {
    pub(super) scene: Arc<raypick::Scene>,
    pub(super) entries: Vec<Entry>,
    /// The origin of the scene's frame in world space ([`State::origin`]).
    pub(super) origin: DVec3,
}

impl Built {
    /// `true` when the scene's instances nest: a hit's geometry id then depends on instances
    /// below the top-level one, and the queries that report ids ask the engine's path queries
    /// for them. Elsewhere a hit's path is its top-level instance (`Hit::instance`).
    #[inline]
    pub(super) fn nests(&self) -> bool {
        self.scene.instance_depth() > 1
    }

    /// The Python geometry id of geometry `geom` reached through instances `path` (outermost
    /// first; the top-level instance alone where instances do not nest): `geom`, unless the
    /// innermost instance places a geometry of the scene that holds it (`add_instance(g)`),
    /// whose id `g` is reported then.
    #[inline]
    pub(super) fn geometry_id_of(&self, geom: u32, path: &[u32]) -> u32 {
        self.innermost(path).and_then(|s| s.remap).unwrap_or(geom)
    }

    /// The source placed by the last instance of `path`, found through the entries (`None` for
    /// an empty path).
    fn innermost(&self, path: &[u32]) -> Option<&Source> {
        let mut entries = &self.entries;
        let mut source = None;
        for &id in path {
            let Entry::Instance(i) = entries.get(id as usize)? else {
                return None;
            };
            source = Some(&*i.source);
            entries = &i.source.entries;
        }
        source
    }

    /// The Python geometry id and the name of a hit's geometry, reached through instances
    /// `path`: the placed geometry's name, or for `add_instance(g)` copies, geometry `g`'s (in
    /// the scene that holds the instance).
    pub(super) fn id_and_name(&self, hit: &Hit, path: &InstancePath) -> (u32, Option<String>) {
        let id = self.geometry_id_of(hit.geom, path.as_slice());
        let ids = path.as_slice();
        let remapped = self.innermost(ids).is_some_and(|s| s.remap.is_some());
        let holder = if remapped {
            // The scene holding the innermost instance: the path without its last id.
            let outer = ids[..ids.len() - 1]
                .iter()
                .fold(InstancePath::EMPTY, |p, &i| p.pushed(i));
            self.scene.placed_scene(&outer)
        } else {
            self.scene.placed_scene(path)
        };
        let name = holder.and_then(|s| s.geometry_name(id)).map(str::to_owned);
        (id, name)
    }
}

/// The geometries of a Python scene, stored in the scene's frame: world coordinates minus
/// `origin`, subtracted in `f64` and rounded to `f32` once (see [`State::place`]).
#[derive(Default)]
pub(super) struct State {
    pub(super) entries: Vec<Entry>,
    /// The world position of the frame's origin: zero, or the centre of the first geometry's box
    /// when that box is far from zero (see [`frame_origin`]). Fixed by the first geometry added.
    pub(super) origin: DVec3,
    pub(super) built: Option<Arc<Built>>,
    /// This scene as an instance source (cached so that placing it many times shares one BVH).
    pub(super) as_source: Option<Arc<Source>>,
    /// Geometry `g` as an instance source, for `add_instance(g, …)`.
    pub(super) geometry_sources: HashMap<u32, Arc<Source>>,
}

impl State {
    /// The frame's origin for positions `points` (rows of three, world space, `f64`) about to be
    /// added: chosen from them when they are the scene's first geometry, else the scene's.
    pub(super) fn place(&mut self, points: &[f64]) -> DVec3 {
        if self.entries.is_empty() {
            self.origin = frame_origin(points);
        }
        self.origin
    }

    pub(super) fn push(&mut self, e: Entry) -> PyResult<u32> {
        let id = u32::try_from(self.entries.len())
            .ok()
            .filter(|&id| id != INVALID_ID)
            .ok_or_else(|| PyValueError::new_err("too many geometries"))?;
        self.entries.push(e);
        self.built = None;
        self.as_source = None;
        Ok(id)
    }

    /// Geometry `geometry_id`, or an `IndexError` that says how many there are.
    pub(super) fn entry(&self, geometry_id: u32) -> PyResult<&Entry> {
        self.entries.get(geometry_id as usize).ok_or_else(|| {
            PyIndexError::new_err(format!(
                "no geometry {geometry_id} (the scene has {})",
                self.entries.len()
            ))
        })
    }

    /// Triangles stored in the meshes: this scene's and those of the scenes its instances place,
    /// each placed scene counted once however often it is placed (as `raypick info`'s "stored").
    pub(super) fn num_triangles(&self) -> usize {
        let mut seen: Vec<*const Source> = Vec::new();
        stored_triangles(&self.entries, &mut seen)
    }
}

/// The origin of a scene's frame for its first geometry's `points` (rows of three): per axis 0
/// when the box's centre is within twice its extent of zero (nothing to gain: the coordinates are
/// no larger than the box), else the centre. The engine chooses its meshes' frame by the same rule
/// (`raypick::Scene`, "Precision far from the origin"), in `f32`; this one works on the `f64`
/// values before they are rounded, so a model at 1e8 keeps the `f32` precision of its size.
fn frame_origin(points: &[f64]) -> DVec3 {
    let mut lo = DVec3::splat(f64::INFINITY);
    let mut hi = DVec3::splat(f64::NEG_INFINITY);
    for p in points.chunks_exact(3) {
        let p = DVec3::from_slice(p);
        lo = lo.min(p);
        hi = hi.max(p);
    }
    let axis = |lo: f64, hi: f64| {
        let (centre, extent) = (0.5 * (lo + hi), hi - lo);
        if centre.is_finite() && centre.abs() >= 2.0 * extent {
            centre
        } else {
            0.0
        }
    };
    DVec3::new(axis(lo.x, hi.x), axis(lo.y, hi.y), axis(lo.z, hi.z))
}

/// `world_from_object` of an instance between two frames: from the placed scene's frame (origin
/// `object_origin`) to the placing scene's (`world_origin`), `T(-world_origin) · M ·
/// T(object_origin)`, composed in `f64` and rounded once, so the large translations cancel
/// before rounding.
pub(super) fn frame_transform(
    matrix: &[f64; 16],
    world_origin: DVec3,
    object_origin: DVec3,
) -> Affine3A {
    // numpy rows are glam columns of the transpose.
    let m = DMat4::from_cols_array(matrix).transpose();
    let local = DMat4::from_translation(-world_origin) * m * DMat4::from_translation(object_origin);
    Affine3A::from_mat4(local.as_mat4())
}

/// Triangles of `entries`' meshes and of the sources their instances place that are not in `seen`
/// yet (which it then holds).
fn stored_triangles(entries: &[Entry], seen: &mut Vec<*const Source>) -> usize {
    entries
        .iter()
        .map(|e| match e {
            Entry::Mesh(m) => m.num_triangles(),
            Entry::Spheres(_) => 0,
            Entry::Instance(i) => {
                let key = Arc::as_ptr(&i.source);
                // A geometry of the scene placed again (`remap`) is counted with its original.
                if i.source.remap.is_some() || seen.contains(&key) {
                    0
                } else {
                    seen.push(key);
                    stored_triangles(&i.source.entries, seen)
                }
            }
        })
        .sum()
}

/// A mesh as flat arrays: `x y z` per vertex, three indices per triangle.
pub(super) fn mesh_flat(m: &TriMesh) -> (Vec<f32>, Vec<u32>) {
    (
        m.vertices().iter().flat_map(|p| p.to_array()).collect(),
        m.indices().iter().flatten().copied().collect(),
    )
}

/// The engine's scene of `entries`, stored in the frame at `origin`.
pub(super) fn build_rust_scene(entries: &[Entry], origin: DVec3) -> PyResult<raypick::Scene> {
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
                let transform = if origin == DVec3::ZERO && i.source.origin == DVec3::ZERO {
                    i.world_from_object
                } else {
                    frame_transform(&i.matrix, origin, i.source.origin)
                };
                let id = b.add_instance(i.source.scene.clone(), transform);
                if let Some(name) = &i.name {
                    b.set_name(id, name.clone());
                }
                b.set_mask(id, i.mask);
            }
        }
    }
    b.build()
        .map_err(|e| PyValueError::new_err(format!("cannot build the scene: {e}")))
}

pub(super) fn build(py: Python<'_>, state: &mut State) -> PyResult<Arc<Built>> {
    if let Some(b) = &state.built {
        return Ok(b.clone());
    }
    let entries = &state.entries;
    let origin = state.origin;
    let scene = py.detach(|| build_rust_scene(entries, origin))?;
    let built = Arc::new(Built {
        scene: Arc::new(scene),
        entries: entries.clone(),
        origin,
    });
    state.built = Some(built.clone());
    Ok(built)
}

/// The state of a scene whose Rust scene is already built (read from a model or a scene file):
/// its geometries as entries (the frame at the world origin, as the file stores them) and the
/// scene itself as the built one, so no query rebuilds it.
pub(super) fn state_from_built(scene: raypick::Scene) -> State {
    let mut sources = HashMap::new();
    let entries: Vec<Entry> = (0..scene.num_geometries() as u32)
        .filter_map(|id| scene.geometry(id))
        .map(|g| entry_from_geometry(g, &mut sources))
        .collect();
    let built = Built {
        scene: Arc::new(scene),
        entries: entries.clone(),
        origin: DVec3::ZERO,
    };
    State {
        entries,
        built: Some(Arc::new(built)),
        ..State::default()
    }
}

pub(super) fn entry_from_geometry(
    g: &Geometry,
    sources: &mut HashMap<*const raypick::Scene, Arc<Source>>,
) -> Entry {
    match g {
        Geometry::Mesh(m) => Entry::Mesh(m.clone()),
        Geometry::Spheres(s) => Entry::Spheres(s.clone()),
        Geometry::Instance(i) => {
            let inner = i.scene();
            // One source per placed scene at every depth, so that a scene placed from two
            // places (a glTF mesh under two nodes of a node tree) stays shared.
            let source = match sources.get(&Arc::as_ptr(inner)) {
                Some(source) => Arc::clone(source),
                None => {
                    let entries = (0..inner.num_geometries() as u32)
                        .filter_map(|id| inner.geometry(id))
                        .map(|g| entry_from_geometry(g, sources))
                        .collect();
                    let source = Arc::new(Source {
                        entries,
                        scene: inner.clone(),
                        remap: None,
                        origin: DVec3::ZERO,
                    });
                    sources.insert(Arc::as_ptr(inner), Arc::clone(&source));
                    source
                }
            };
            let m = Mat4::from(i.world_from_object())
                .transpose()
                .to_cols_array()
                .map(f64::from);
            Entry::Instance(InstanceEntry {
                source,
                matrix: m,
                world_from_object: i.world_from_object(),
                name: i.name().map(str::to_owned),
                mask: i.mask(),
            })
        }
        // `Geometry` may grow variants; a geometry raypick cannot describe to Python is kept as an
        // empty mesh so that the ids of the others do not shift.
        #[allow(unreachable_patterns)]
        _ => Entry::Mesh(TriMesh::new(Vec::new(), Vec::new())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::PyScene;
    use glam::Vec3;
    use raypick::Ray;

    #[test]
    fn instances_of_a_geometry_report_its_id() {
        let tri = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]);
        let entries = vec![Entry::Mesh(tri.clone())];
        let inner = Arc::new(build_rust_scene(&entries, DVec3::ZERO).unwrap());
        let source = Arc::new(Source {
            entries,
            scene: inner,
            remap: Some(0),
            origin: DVec3::ZERO,
        });
        let moved = Affine3A::from_translation(Vec3::new(0.0, 0.0, -2.0));
        let top = vec![
            Entry::Mesh(tri),
            Entry::Instance(InstanceEntry {
                source,
                matrix: Mat4::from(moved).transpose().to_cols_array().map(f64::from),
                world_from_object: moved,
                name: None,
                mask: u32::MAX,
            }),
        ];
        let scene = build_rust_scene(&top, DVec3::ZERO).unwrap();
        let built = Built {
            scene: Arc::new(scene),
            entries: top,
            origin: DVec3::ZERO,
        };
        // Through the original (z = 0) first, then the copy at z = -2.
        let ray = Ray::new(Vec3::new(0.2, 0.2, 1.0), Vec3::NEG_Z);
        let all = built.scene.intersect_all(&ray);
        assert_eq!(all.len(), 2);
        let id = |h: &Hit| built.geometry_id_of(h.geom, h.instance.as_slice());
        assert_eq!((id(&all[0]), all[0].instance), (0, None));
        assert_eq!((id(&all[1]), all[1].instance), (0, Some(1)));
        // The watertight kernel's t is within a few ulps of the exact 3 (its error bound scales
        // with the distance, Woop et al. 2013, section 4).
        assert!(
            (all[1].t - 3.0).abs() <= 4.0 * f32::EPSILON * 3.0,
            "t = {}",
            all[1].t
        );
    }

    #[test]
    fn from_built_keeps_geometries_and_shares_sources() {
        let tri = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).with_name("t");
        let mut part = SceneBuilder::new();
        part.add_mesh(tri);
        let part = Arc::new(part.build().unwrap());
        let mut world = SceneBuilder::new();
        world.add_instance(part.clone(), Affine3A::IDENTITY);
        world.add_instance(part, Affine3A::from_translation(Vec3::X));
        let world = world.build().unwrap();
        let py_scene = PyScene::from_built(world);
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
