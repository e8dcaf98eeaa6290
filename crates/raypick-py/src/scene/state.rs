//! What a [`PyScene`] holds: the geometries as added from Python ([`Entry`]), the instance sources
//! they share, and the Rust scene built from them on demand.

use std::collections::HashMap;
use std::sync::Arc;

use glam::{Affine3A, Mat4};
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use raypick::{Geometry, Hit, SceneBuilder, Spheres, TriMesh};

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
    /// Row-major 4×4 as given (kept for pickling and `geometry()`).
    pub(super) matrix: [f32; 16],
    pub(super) world_from_object: Affine3A,
    pub(super) name: Option<String>,
}

/// A built scene that instances place: its geometries (none of them instances) and its Rust scene.
#[derive(Debug)]
pub(super) struct Source {
    pub(super) entries: Vec<Entry>,
    pub(super) scene: Arc<raypick::Scene>,
    /// `Some(g)`: the source is geometry `g` of the placing scene itself (`add_instance(g, …)`),
    /// and hits in it report geometry id `g`.
    pub(super) remap: Option<u32>,
}

/// What a query runs on: the built scene and, per top-level geometry id, the geometry id that
/// instanced hits report instead of the inner one (see [`Source::remap`]).
pub(super) struct Built {
    pub(super) scene: Arc<raypick::Scene>,
    pub(super) remap: Vec<Option<u32>>,
}

impl Built {
    #[inline]
    pub(super) fn geometry_id(&self, hit: &Hit) -> u32 {
        self.geometry_id_of(hit.geom, hit.instance)
    }

    /// The Python geometry id of geometry `geom` reached through `instance`.
    #[inline]
    pub(super) fn geometry_id_of(&self, geom: u32, instance: Option<u32>) -> u32 {
        match instance {
            Some(i) => self
                .remap
                .get(i as usize)
                .copied()
                .flatten()
                .unwrap_or(geom),
            None => geom,
        }
    }
}

#[derive(Default)]
pub(super) struct State {
    pub(super) entries: Vec<Entry>,
    pub(super) built: Option<Arc<Built>>,
    /// This scene as an instance source (cached so that placing it many times shares one BVH).
    pub(super) as_source: Option<Arc<Source>>,
    /// Geometry `g` as an instance source, for `add_instance(g, …)`.
    pub(super) geometry_sources: HashMap<u32, Arc<Source>>,
}

impl State {
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

    /// Triangles stored in the meshes (instances not counted again).
    pub(super) fn num_triangles(&self) -> usize {
        self.entries
            .iter()
            .map(|e| match e {
                Entry::Mesh(m) => m.num_triangles(),
                _ => 0,
            })
            .sum()
    }
}

/// A mesh as flat arrays: `x y z` per vertex, three indices per triangle.
pub(super) fn mesh_flat(m: &TriMesh) -> (Vec<f32>, Vec<u32>) {
    (
        m.vertices().iter().flat_map(|p| p.to_array()).collect(),
        m.indices().iter().flatten().copied().collect(),
    )
}

pub(super) fn build_rust_scene(entries: &[Entry]) -> PyResult<raypick::Scene> {
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

pub(super) fn build(py: Python<'_>, state: &mut State) -> PyResult<Arc<Built>> {
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

/// The state of a scene whose Rust scene is already built (read from a scene file or unpickled):
/// its geometries as entries, the instance sources that `remap` names (per geometry id: the id
/// its instanced hits report, see [`Source::remap`]), and the scene itself as the built one, so
/// no query rebuilds it.
pub(super) fn state_from_built(scene: raypick::Scene, remap: Vec<Option<u32>>) -> PyResult<State> {
    let n = scene.num_geometries();
    if remap.len() != n {
        return Err(PyValueError::new_err(format!(
            "bad Scene state: {} remap entries for {n} geometries",
            remap.len()
        )));
    }
    let mut sources = HashMap::new();
    let mut entries: Vec<Entry> = (0..n as u32)
        .filter_map(|id| scene.geometry(id))
        .map(|g| entry_from_geometry(g, &mut sources))
        .collect();
    let mut geometry_sources: HashMap<u32, Arc<Source>> = HashMap::new();
    for (entry, &remap) in entries.iter_mut().zip(&remap) {
        let Some(g) = remap else { continue };
        let Entry::Instance(inst) = entry else {
            return Err(PyValueError::new_err(
                "bad Scene state: a remap entry for a geometry that is not an instance",
            ));
        };
        if g as usize >= n {
            return Err(PyValueError::new_err(format!(
                "bad Scene state: remap to geometry {g} of {n}"
            )));
        }
        let source = geometry_sources
            .entry(g)
            .or_insert_with(|| {
                Arc::new(Source {
                    entries: inst.source.entries.clone(),
                    scene: inst.source.scene.clone(),
                    remap: Some(g),
                })
            })
            .clone();
        inst.source = source;
    }
    Ok(State {
        entries,
        built: Some(Arc::new(Built {
            scene: Arc::new(scene),
            remap,
        })),
        as_source: None,
        geometry_sources,
    })
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
