//! From a parsed [`Model`] to a [`raypick::Scene`], keeping names so a pick can say "Wheels".
//!
//! # Layout of the built scene
//! - A model without instances (OBJ, PLY, STL): mesh `i` is top-level geometry `i`, named by the
//!   mesh. A hit has `geom` = mesh index and `instance = None`.
//! - A model with instances (glTF): instance `j` (a node with a mesh) is top-level geometry `j`,
//!   named by the node, either
//!   - *baked*: its mesh transformed into world space and added as a top-level mesh. A hit has
//!     `geom = j` and `instance = None`. With [`Instancing::BakeSingleUse`] (the default), this is
//!     every instance whose mesh no other instance uses and whose transform keeps orientation
//!     (determinant > 0): the scene's meshes share one BVH, so a scene of many nodes casts as fast
//!     as its triangles as one mesh, and nothing is duplicated. An instance whose transform
//!     cannot be inverted in f32 (a glTF zero scale, or a scale so large or small that the
//!     determinant leaves f32: [`TransformProblem`]) cannot be traversed through its inverse and
//!     is baked whatever the policy (a note says which problem);
//!   - or *shared*: its mesh becomes a small scene of its own (geometry 0, named by the mesh),
//!     shared through an `Arc` by every instance of it. A hit has `instance = Some(j)` and
//!     `geom = 0`. A mesh used by several nodes stays shared, so its triangles are stored once;
//!     so does a mirrored single use (baking it would flip its winding, and with it the front
//!     face and the order of the barycentrics).
//! - A model with a node tree (glTF) under [`Instancing::Hierarchy`]: the tree becomes nested
//!   instances, a scene per node with children and an instance of its mesh's scene per node
//!   with a mesh, at most [`raypick::MAX_INSTANCE_DEPTH`] deep (the full layout, and what
//!   happens below that depth: [`crate::hierarchy`]). Top-level geometry `j` is the `j`-th root
//!   that shows a mesh, and a hit's instance path (from the path queries,
//!   [`Scene::intersect_path`](raypick::Scene::intersect_path) and its kin) leads from a root to
//!   the node struck; [`Loaded::nodes`] maps it back ([`Loaded::node_of`]). A model without a node tree but with
//!   instances is built as a tree of roots, one per instance.
//!
//! [`Loaded::name_of`] and [`Loaded::mesh_of`] turn any hit and its instance path back into these
//! names and indices, under every policy: for glTF, the node struck and the mesh it shows.

use std::path::PathBuf;
use std::sync::Arc;

use raypick::bvh::BuildConfig;
use raypick::{BuildError, Hit, InstancePath, Scene, SceneBuilder, TriMesh};

use crate::error::{Format, LoadError, Source};
use crate::hierarchy::{self, Nodes};
use crate::model::{Model, NodeData};

/// How a model's instances (glTF nodes) become the scene's geometries (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Instancing {
    /// An instance whose mesh no other instance uses, with a transform of positive determinant,
    /// is baked into world space and joins the scene's one mesh BVH; meshes used several times
    /// stay shared instances. The default: a scene of many nodes casts like one mesh.
    #[default]
    BakeSingleUse,
    /// Every instance with an invertible transform stays an instance of its mesh's own scene (a
    /// hit always names its instance). Costs a top-level BVH over the nodes' boxes.
    Shared,
    /// The node tree stays a tree: nested instances, a scene per node that has children (see
    /// [`crate::hierarchy`]), so a hit's instance path names the nodes from a root down to the
    /// one struck. Meshes are stored once, as with `Shared`; a ray pays a top-level walk per
    /// level it enters.
    Hierarchy,
}

/// A loaded file: the scene to cast rays at, and what each of its geometries is.
#[derive(Debug)]
pub struct Loaded {
    /// The scene, ready for queries.
    pub scene: Scene,
    /// The format the file was read as.
    pub format: Format,
    /// For each top-level geometry id: its name (OBJ group, STL solid, glTF node name).
    pub geometry_names: Vec<String>,
    /// For each top-level geometry id: the index of the mesh it shows, into [`Self::mesh_names`].
    /// Empty under [`Instancing::Hierarchy`] for a model with a node tree, whose top-level
    /// geometries are root nodes that may show many meshes: [`Self::mesh_of`] answers per hit.
    pub geometry_mesh: Vec<usize>,
    /// For each mesh of the model: its name (for glTF, the mesh name, shared by its instances).
    pub mesh_names: Vec<String>,
    /// Things that were deliberately left out while reading (see [`Model::notes`]).
    pub notes: Vec<String>,
    /// The other files the model was read from (see [`Model::references`]).
    pub references: Vec<PathBuf>,
    /// The model's nodes, under [`Instancing::Hierarchy`]: their names, meshes, parents, and
    /// which one a hit struck. Empty under the other policies.
    pub nodes: Nodes,
}

impl Loaded {
    /// The top-level geometry a hit belongs to: its instance for instanced geometry, else its geometry.
    pub fn top_level_of(&self, hit: &Hit) -> u32 {
        hit.instance.unwrap_or(hit.geom)
    }

    /// The name of what the hit struck (an OBJ group, a glTF node, …). `path` is the hit's
    /// instance path, which the path queries ([`Scene::intersect_path`] and its kin) return beside
    /// it: under [`Instancing::Hierarchy`] it names the node struck, however deep; under the other
    /// policies only the hit is read. A scene file (`.rpk`) keeps no node table but keeps every
    /// geometry's name: a hit through nested instances is named by the deepest instance on its
    /// path, which for a scene saved from a hierarchy load is the node struck (its mesh's
    /// instance, named after it).
    ///
    /// ```
    /// use raypick::{glam::Vec3, Ray};
    ///
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/gltf/CesiumMilkTruck.glb");
    /// let truck = raypick_io::load(path)?;
    /// let ray = Ray::new(Vec3::new(0.0, 5.0, 0.0), Vec3::new(0.0, -1.0, 0.0));
    /// let (hit, path) = truck.scene.intersect_path(&ray).expect("a hit");
    /// assert!(truck.name_of(&hit, &path).is_some());
    /// # Ok::<(), raypick_io::LoadError>(())
    /// ```
    pub fn name_of(&self, hit: &Hit, path: &InstancePath) -> Option<&str> {
        if !self.nodes.is_empty() {
            return self
                .node_of(hit, path)
                .and_then(|node| self.nodes.names.get(node))
                .map(String::as_str);
        }
        if let Some(name) = self.deepest_instance_name(path) {
            return Some(name);
        }
        self.geometry_names
            .get(self.top_level_of(hit) as usize)
            .map(String::as_str)
    }

    /// The name of the last instance of a path through nested instances (`None` for a path of
    /// at most one instance, which [`Self::geometry_names`] names, or an unnamed instance).
    fn deepest_instance_name(&self, path: &InstancePath) -> Option<&str> {
        let [outer @ .., last] = path.as_slice() else {
            return None;
        };
        if outer.is_empty() {
            return None;
        }
        let mut scene = &self.scene;
        for &id in outer {
            match scene.geometry(id)? {
                raypick::Geometry::Instance(i) => scene = i.scene(),
                _ => return None,
            }
        }
        scene.geometry(*last)?.name().filter(|n| !n.is_empty())
    }

    /// The index of the model mesh the hit struck (`path` as for [`Self::name_of`]).
    pub fn mesh_of(&self, hit: &Hit, path: &InstancePath) -> Option<usize> {
        if !self.nodes.is_empty() {
            return self
                .node_of(hit, path)
                .and_then(|node| self.nodes.mesh.get(node).copied().flatten());
        }
        self.geometry_mesh
            .get(self.top_level_of(hit) as usize)
            .copied()
    }

    /// Under [`Instancing::Hierarchy`], the node the hit struck, an index into
    /// [`Nodes::names`] (and [`Model::nodes`]), read off the hit's instance path `path` (from the
    /// path queries); `None` under the other policies.
    ///
    /// ```
    /// use raypick::{glam::Vec3, Ray};
    /// use raypick_io::{Instancing, LoadOptions};
    ///
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/gltf/CesiumMilkTruck.glb");
    /// let options = LoadOptions { instancing: Instancing::Hierarchy, ..LoadOptions::default() };
    /// let truck = raypick_io::load_with(path, &options)?;
    /// // Down onto the truck: every part hangs below its root node, so the path is nested.
    /// let ray = Ray::new(Vec3::new(0.0, 5.0, 0.0), Vec3::new(0.0, -1.0, 0.0));
    /// let (hit, path) = truck.scene.intersect_path(&ray).expect("a hit");
    /// let node = truck.node_of(&hit, &path).unwrap();
    /// assert_eq!(truck.name_of(&hit, &path), Some(truck.nodes.names[node].as_str()));
    /// assert!(path.len() >= 2);
    /// # Ok::<(), raypick_io::LoadError>(())
    /// ```
    pub fn node_of(&self, hit: &Hit, path: &InstancePath) -> Option<usize> {
        self.nodes.node_of(hit, path)
    }

    /// The name of the model mesh the hit struck (for glTF the mesh name, e.g. `"Wheels"`, shared
    /// by every node that places it; for the other formats the same as [`Self::name_of`]; `path`
    /// as for [`Self::name_of`]).
    pub fn mesh_name_of(&self, hit: &Hit, path: &InstancePath) -> Option<&str> {
        self.mesh_of(hit, path)
            .and_then(|mesh| self.mesh_names.get(mesh))
            .map(String::as_str)
    }

    /// The top-level geometry ids with this name (OBJ groups and glTF nodes need not be unique).
    pub fn geometries_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = u32> + 'a {
        self.geometry_names
            .iter()
            .enumerate()
            .filter(move |(_, n)| *n == name)
            .map(|(id, _)| id as u32)
    }
}

/// Why the scene engine cannot traverse an instance with a transform: it needs the inverse in
/// f32 (the same test as `SceneBuilder::build`, which refuses the others).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum TransformProblem {
    /// The linear part is singular: its determinant is exactly 0 (a zero scale).
    Singular,
    /// The determinant, computed in f64, is this large: beyond f32 (a scale of about 1e13 or
    /// more on each axis).
    Overflows(f64),
    /// The determinant, computed in f64, is this small but not 0: it rounds to 0 in f32, or the
    /// inverse does not fit f32 (a scale of about 1e-13 or less on each axis).
    Underflows(f64),
    /// An entry of the transform, or of its f32 inverse, is NaN or infinite.
    NotFinite,
}

impl std::fmt::Display for TransformProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Singular => f.write_str("singular transform (determinant 0)"),
            Self::Overflows(det) => write!(
                f,
                "transform too large to invert in f32 (determinant {det:.2e} overflows f32)"
            ),
            Self::Underflows(det) => write!(
                f,
                "transform too small to invert in f32 (determinant {det:.2e} underflows f32)"
            ),
            Self::NotFinite => f.write_str("transform or its inverse is not finite in f32"),
        }
    }
}

/// Whether the scene engine can traverse an instance with this transform, and if not, why.
pub fn transform_problem(world_from_object: &glam::Affine3A) -> Option<TransformProblem> {
    if !world_from_object.is_finite() {
        return Some(TransformProblem::NotFinite);
    }
    let det64 = world_from_object.matrix3.as_dmat3().determinant();
    let det = world_from_object.matrix3.determinant();
    if det64 == 0.0 {
        return Some(TransformProblem::Singular);
    }
    if !det.is_finite() {
        return Some(TransformProblem::Overflows(det64));
    }
    if det == 0.0 {
        return Some(TransformProblem::Underflows(det64));
    }
    if !world_from_object.inverse().is_finite() {
        return Some(if det64.abs() < 1.0 {
            TransformProblem::Underflows(det64)
        } else {
            TransformProblem::NotFinite
        });
    }
    None
}

/// Whether the scene engine can traverse an instance with this transform.
fn invertible(world_from_object: &glam::Affine3A) -> bool {
    transform_problem(world_from_object).is_none()
}

impl Model {
    /// The triangles [`Self::into_loaded`] makes: every mesh once, plus a copy of its mesh for
    /// each instance whose transform cannot be inverted (baked into world space).
    pub fn triangles_to_build(&self) -> u128 {
        let baked: u128 = self
            .instances
            .iter()
            .filter(|instance| !invertible(&instance.world_from_object))
            .map(|instance| {
                self.meshes
                    .get(instance.mesh)
                    .map_or(0, |mesh| mesh.triangles.len() as u128)
            })
            .sum();
        self.num_triangles_stored() as u128 + baked
    }

    /// Builds the scene (see the module docs for its layout), consuming the model.
    pub fn into_loaded(self, format: Format) -> Result<Loaded, LoadError> {
        self.into_loaded_with(format, Instancing::default())
    }

    /// [`Self::into_loaded`] with an instancing policy.
    pub fn into_loaded_with(
        self,
        format: Format,
        instancing: Instancing,
    ) -> Result<Loaded, LoadError> {
        self.into_loaded_built(format, instancing, BuildConfig::default())
    }

    /// [`Self::into_loaded_with`] with the BVH settings of every scene built (for example
    /// [`BuildConfig::SPATIAL`] for a scene built once and cast many times).
    pub fn into_loaded_built(
        self,
        format: Format,
        instancing: Instancing,
        config: BuildConfig,
    ) -> Result<Loaded, LoadError> {
        let has_tree = !(self.nodes.is_empty() && self.instances.is_empty());
        if instancing == Instancing::Hierarchy && has_tree {
            return self.into_hierarchy(format, config);
        }
        let wrap = |error: BuildError| LoadError::Scene {
            source_name: Source::default(),
            error,
        };
        let mesh_names: Vec<String> = self.meshes.iter().map(|m| m.name.clone()).collect();
        let mut builder = SceneBuilder::with_config(config);
        let mut extra_notes = Vec::new();
        let (geometry_names, geometry_mesh) = if self.instances.is_empty() {
            for mesh in self.meshes {
                let id = builder
                    .add_mesh(TriMesh::new(mesh.vertices, mesh.triangles).with_name(mesh.name));
                debug_assert_eq!(id as usize + 1, builder.num_geometries());
            }
            (mesh_names.clone(), (0..mesh_names.len()).collect())
        } else {
            let mut notes = Vec::new();
            let mut used = vec![false; self.meshes.len()];
            // Instances that can be traversed, per mesh: a mesh used by one of them only is baked
            // under `BakeSingleUse`.
            let mut uses = vec![0usize; self.meshes.len()];
            for instance in &self.instances {
                if invertible(&instance.world_from_object) {
                    if let Some(n) = uses.get_mut(instance.mesh) {
                        *n += 1;
                    }
                }
            }
            // An instance whose transform cannot be inverted in f32 (e.g. a glTF zero scale,
            // which the specification allows) cannot be traversed as an instance: its mesh is
            // baked into world space instead, as a plain top-level mesh.
            let mut baked: Vec<Option<TriMesh>> = Vec::with_capacity(self.instances.len());
            for (index, instance) in self.instances.iter().enumerate() {
                let Some(mesh) = self.meshes.get(instance.mesh) else {
                    return Err(LoadError::InvalidModel {
                        message: format!(
                            "instance {index} ({:?}) uses mesh {}, the model has {}",
                            instance.name,
                            instance.mesh,
                            mesh_names.len()
                        ),
                    });
                };
                let problem = transform_problem(&instance.world_from_object);
                let single_use = instancing == Instancing::BakeSingleUse
                    && uses[instance.mesh] == 1
                    && instance.world_from_object.matrix3.determinant() > 0.0;
                if let Some(problem) = &problem {
                    notes.push(format!(
                        "instance {index} ({:?}): {problem}, mesh baked into world space",
                        instance.name
                    ));
                }
                if problem.is_some() || single_use {
                    let vertices = mesh
                        .vertices
                        .iter()
                        .map(|&v| instance.world_from_object.transform_point3(v))
                        .collect();
                    baked.push(Some(
                        TriMesh::new(vertices, mesh.triangles.clone())
                            .with_name(instance.name.clone()),
                    ));
                } else {
                    used[instance.mesh] = true;
                    baked.push(None);
                }
            }
            let mut sub_scenes: Vec<Option<Arc<Scene>>> = Vec::with_capacity(self.meshes.len());
            for (mesh, used) in self.meshes.into_iter().zip(used) {
                sub_scenes.push(if used {
                    let mut sub = SceneBuilder::with_config(config);
                    sub.add_mesh(TriMesh::new(mesh.vertices, mesh.triangles).with_name(mesh.name));
                    Some(Arc::new(sub.build().map_err(wrap)?))
                } else {
                    None
                });
            }
            let mut names = Vec::with_capacity(self.instances.len());
            let mut meshes = Vec::with_capacity(self.instances.len());
            for (instance, baked) in self.instances.into_iter().zip(baked) {
                let id = match (baked, sub_scenes.get(instance.mesh)) {
                    (Some(mesh), _) => builder.add_mesh(mesh),
                    (None, Some(Some(sub))) => {
                        builder.add_instance(Arc::clone(sub), instance.world_from_object)
                    }
                    // Every non-baked instance's mesh was checked and built above.
                    (None, _) => continue,
                };
                builder.set_name(id, instance.name.clone());
                names.push(instance.name);
                meshes.push(instance.mesh);
            }
            extra_notes = notes;
            (names, meshes)
        };
        Ok(Loaded {
            scene: builder.build().map_err(wrap)?,
            format,
            geometry_names,
            geometry_mesh,
            mesh_names,
            notes: self.notes.into_iter().chain(extra_notes).collect(),
            references: self.references,
            nodes: Nodes::default(),
        })
    }

    /// [`Self::into_loaded_with`] under [`Instancing::Hierarchy`], for a model with a node tree
    /// or instances (the latter built as a tree of roots).
    fn into_hierarchy(self, format: Format, config: BuildConfig) -> Result<Loaded, LoadError> {
        let mesh_names: Vec<String> = self.meshes.iter().map(|m| m.name.clone()).collect();
        let (tree, roots) = if self.nodes.is_empty() {
            let roots = (0..self.instances.len()).collect();
            let tree = self
                .instances
                .into_iter()
                .map(|instance| NodeData {
                    name: instance.name,
                    mesh: Some(instance.mesh),
                    parent_from_node: instance.world_from_object,
                    children: Vec::new(),
                })
                .collect();
            (tree, roots)
        } else {
            (self.nodes, self.roots)
        };
        let (scene, nodes, notes) = hierarchy::build(self.meshes, &tree, &roots, config)?;
        let geometry_names = (0..scene.num_geometries() as u32)
            .map(|id| scene.geometry_name(id).unwrap_or_default().to_string())
            .collect();
        Ok(Loaded {
            scene,
            format,
            geometry_names,
            geometry_mesh: Vec::new(),
            mesh_names,
            notes: self.notes.into_iter().chain(notes).collect(),
            references: self.references,
            nodes,
        })
    }

    /// Builds the scene from a copy of the model (see [`Model::into_loaded`]).
    pub fn to_scene(&self) -> Result<Scene, LoadError> {
        self.clone()
            .into_loaded(Format::Obj)
            .map(|loaded| loaded.scene)
    }
}
