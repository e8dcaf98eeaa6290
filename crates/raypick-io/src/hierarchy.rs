//! [`Instancing::Hierarchy`](crate::Instancing::Hierarchy): a model's node tree built as nested
//! instances, and [`Nodes`], which turns a hit back into the node it struck.
//!
//! # Layout of the built scene
//! - Each mesh a node shows is built once as a small scene (geometry 0, named by the mesh), shared
//!   through an `Arc` by every node that shows it.
//! - A node whose subtree shows no mesh (a joint, an empty group) is left out.
//! - A node with a mesh and no child that shows one is an instance of its mesh's scene, placed
//!   with the node's transform: a leaf costs no level of its own.
//! - Any other node is a scene of its own, placed with the node's transform. That scene holds
//!   the node's mesh's scene as an instance with the identity transform (when the node has a
//!   mesh), then the node's children, each placed by these rules with its own transform.
//! - The scene returned holds the roots, placed by these rules.
//!
//! Every geometry is named after its node, so a hit's [`InstancePath`] (from the path queries,
//! [`Scene::intersect_path`](raypick::Scene::intersect_path) and its kin) walks the nodes from a
//! root down to the node struck (named twice when that node has children: once for its scene,
//! once for its mesh's), and [`Nodes::node_of`] reads the node off it.
//!
//! # Depth
//! The engine nests at most [`MAX_INSTANCE_DEPTH`] instances. A node gets a scene of its own only
//! where that leaves room for its mesh's instance inside it; below that level the rest of its
//! subtree is placed flat in the deepest node scene: each node with a mesh an instance of its
//! mesh's scene, with the product of the transforms from that scene down to the node. A line in
//! the notes says how many nodes were placed so. A valid file is never refused for its depth.
//!
//! # Transforms the engine cannot invert
//! A node whose transform (or, when placed flat, whose product of transforms) cannot be inverted
//! in f32 ([`transform_problem`]: a glTF zero scale, for one) cannot be traversed as an instance:
//! its mesh and its subtree's are baked into the scene that would have placed it, with the
//! transforms from that scene down, as plain meshes named after their nodes; a note names the
//! node and the problem. The other policies bake such an instance into world space alike.

use std::sync::Arc;

use glam::Affine3A;
use raypick::bvh::BuildConfig;
use raypick::{BuildError, Hit, InstancePath, Scene, SceneBuilder, TriMesh, MAX_INSTANCE_DEPTH};

use crate::error::{LoadError, Source};
use crate::model::{MeshData, NodeData};
use crate::scene::transform_problem;

/// What one geometry of one scene of the hierarchy shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Placed {
    /// The node, an index into [`Nodes::names`].
    node: usize,
    /// The node's own scene, an index into [`Nodes::scenes`], when the geometry places it;
    /// `None` when the geometry is the node's mesh (an instance of its mesh's scene, or baked).
    scene: Option<usize>,
}

/// A model's nodes as [`Instancing::Hierarchy`](crate::Instancing::Hierarchy) built them, and the
/// map from a hit to the node it struck. Empty for the other policies and for models without a
/// node tree.
///
/// Node `i` is [`Model::nodes`](crate::Model::nodes)`[i]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Nodes {
    /// For each node: its name.
    pub names: Vec<String>,
    /// For each node: the mesh it shows, an index into
    /// [`Loaded::mesh_names`](crate::Loaded::mesh_names).
    pub mesh: Vec<Option<usize>>,
    /// For each node: its parent, `None` for a root.
    pub parent: Vec<Option<usize>>,
    /// For each scene of the hierarchy (0: the scene returned), for each of its geometry ids:
    /// what it shows.
    scenes: Vec<Vec<Placed>>,
}

impl Nodes {
    /// `true` when no node tree was built (a policy other than `Hierarchy`, or a model without
    /// instances).
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The node a hit struck (the deepest node on its instance path `path`, which the path
    /// queries return beside the hit), an index into [`Self::names`]; `None` when the hit is not
    /// from the scene these nodes were built with.
    pub fn node_of(&self, hit: &Hit, path: &InstancePath) -> Option<usize> {
        let mut scene = self.scenes.first()?;
        let ids = path.as_slice().iter();
        for &id in ids.chain(std::iter::once(&hit.geom)) {
            let placed = scene.get(id as usize)?;
            match placed.scene {
                Some(next) => scene = self.scenes.get(next)?,
                // The node's mesh: either the mesh's scene (whose geometry 0 the hit's `geom`
                // names) or the node's mesh baked into this scene.
                None => return Some(placed.node),
            }
        }
        None
    }

    /// The ancestors of `node` from its root down, then `node` itself.
    pub fn chain(&self, node: usize) -> Vec<usize> {
        let mut chain = vec![node];
        let mut at = node;
        // The tree was checked acyclic when it was built; the length bound keeps a hand-edited
        // table from looping.
        while let Some(&Some(parent)) = self.parent.get(at) {
            if chain.len() > self.parent.len() {
                break;
            }
            chain.push(parent);
            at = parent;
        }
        chain.reverse();
        chain
    }
}

/// The scene of a node tree (see the module docs) and its [`Nodes`], with the notes the build
/// made. `meshes` are the model's meshes; `nodes` and `roots` its tree.
pub(crate) fn build(
    meshes: Vec<MeshData>,
    nodes: &[NodeData],
    roots: &[usize],
    config: BuildConfig,
) -> Result<(Scene, Nodes, Vec<String>), LoadError> {
    let parent = check_tree(nodes, roots, meshes.len())?;
    // Whether each node's subtree shows a mesh: children come after their parent in a
    // depth-first order, so one pass from the end sees every child before its parent.
    let order = depth_first(nodes, roots);
    let mut shows = vec![false; nodes.len()];
    for &node in order.iter().rev() {
        shows[node] = nodes[node].mesh.is_some() || nodes[node].children.iter().any(|&c| shows[c]);
    }
    let mut build = Build {
        config,
        nodes,
        shows,
        meshes: meshes
            .into_iter()
            .map(|m| TriMesh::new(m.vertices, m.triangles).with_name(m.name))
            .collect(),
        mesh_scenes: Vec::new(),
        scenes: vec![Vec::new()],
        notes: Vec::new(),
        flat: Vec::new(),
    };
    build.mesh_scenes = vec![None; build.meshes.len()];
    let mut top = SceneBuilder::with_config(config);
    let mut table = Vec::new();
    for &root in roots {
        build.place(
            &mut top,
            &mut table,
            root,
            nodes[root].parent_from_node,
            MAX_INSTANCE_DEPTH,
        )?;
    }
    build.scenes[0] = table;
    let scene = top.build().map_err(wrap)?;
    if let Some(&first) = build.flat.first() {
        build.notes.push(format!(
            "the node tree is deeper than {MAX_INSTANCE_DEPTH} nested instances: {} node(s) with \
             a mesh placed flat in their deepest allowed ancestor's scene (the first: {:?})",
            build.flat.len(),
            nodes[first].name
        ));
    }
    let names = nodes.iter().map(|n| n.name.clone()).collect();
    let mesh = nodes.iter().map(|n| n.mesh).collect();
    Ok((
        scene,
        Nodes {
            names,
            mesh,
            parent,
            scenes: build.scenes,
        },
        build.notes,
    ))
}

fn wrap(error: BuildError) -> LoadError {
    LoadError::Scene {
        source_name: Source::default(),
        error,
    }
}

fn invalid(message: String) -> LoadError {
    LoadError::InvalidModel { message }
}

/// Checks that `nodes` and `roots` form a forest (every index in range, every node reached at
/// most once) whose meshes exist; returns each node's parent.
fn check_tree(
    nodes: &[NodeData],
    roots: &[usize],
    num_meshes: usize,
) -> Result<Vec<Option<usize>>, LoadError> {
    let mut parent = vec![None; nodes.len()];
    let mut reached = vec![false; nodes.len()];
    let mut stack: Vec<(usize, Option<usize>)> = roots.iter().map(|&r| (r, None)).collect();
    while let Some((node, from)) = stack.pop() {
        let Some(data) = nodes.get(node) else {
            return Err(invalid(format!(
                "node {node} does not exist (the model has {})",
                nodes.len()
            )));
        };
        if std::mem::replace(&mut reached[node], true) {
            return Err(invalid(format!(
                "node {node} ({:?}) is reached twice (a cycle, or two parents)",
                data.name
            )));
        }
        if let Some(mesh) = data.mesh.filter(|&m| m >= num_meshes) {
            return Err(invalid(format!(
                "node {node} ({:?}) uses mesh {mesh}, the model has {num_meshes}",
                data.name
            )));
        }
        parent[node] = from;
        stack.extend(data.children.iter().map(|&c| (c, Some(node))));
    }
    Ok(parent)
}

/// The nodes reached from `roots`, each before its children (the tree is checked).
fn depth_first(nodes: &[NodeData], roots: &[usize]) -> Vec<usize> {
    let mut order = Vec::with_capacity(nodes.len());
    let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
    while let Some(node) = stack.pop() {
        order.push(node);
        stack.extend(nodes[node].children.iter().rev());
    }
    order
}

struct Build<'m> {
    /// The BVH settings of every scene built.
    config: BuildConfig,
    nodes: &'m [NodeData],
    /// Whether each node's subtree shows a mesh.
    shows: Vec<bool>,
    /// The model's meshes.
    meshes: Vec<TriMesh>,
    /// Each mesh's scene, built when a node first places it.
    mesh_scenes: Vec<Option<Arc<Scene>>>,
    /// See [`Nodes::scenes`]; entry 0 is filled last.
    scenes: Vec<Vec<Placed>>,
    notes: Vec<String>,
    /// The nodes with a mesh placed flat below the depth limit.
    flat: Vec<usize>,
}

impl Build<'_> {
    fn mesh_scene(&mut self, mesh: usize) -> Result<Arc<Scene>, LoadError> {
        if let Some(scene) = &self.mesh_scenes[mesh] {
            return Ok(Arc::clone(scene));
        }
        let mut builder = SceneBuilder::with_config(self.config);
        builder.add_mesh(self.meshes[mesh].clone());
        let scene = Arc::new(builder.build().map_err(wrap)?);
        self.mesh_scenes[mesh] = Some(Arc::clone(&scene));
        Ok(scene)
    }

    /// Adds node `node` and its subtree to `builder` (whose geometries `table` describes), placed
    /// by `frame_from_node`, with `levels` instance levels left below `builder`'s scene.
    fn place(
        &mut self,
        builder: &mut SceneBuilder,
        table: &mut Vec<Placed>,
        node: usize,
        frame_from_node: Affine3A,
        levels: usize,
    ) -> Result<(), LoadError> {
        if !self.shows[node] {
            return Ok(());
        }
        if let Some(problem) = transform_problem(&frame_from_node) {
            self.notes.push(format!(
                "node {node} ({:?}): {problem}, its subtree's meshes baked into its parent's frame",
                self.nodes[node].name
            ));
            self.bake(builder, table, node, frame_from_node);
            return Ok(());
        }
        let nodes = self.nodes;
        let data = &nodes[node];
        let children_show = data.children.iter().any(|&c| self.shows[c]);
        match (data.mesh, children_show) {
            (Some(mesh), false) => {
                let scene = self.mesh_scene(mesh)?;
                let id = builder.add_instance(scene, frame_from_node);
                builder.set_name(id, data.name.clone());
                table.push(Placed { node, scene: None });
            }
            // Room for the node's scene and an instance inside it.
            _ if levels >= 2 => {
                let mut inner = SceneBuilder::with_config(self.config);
                let mut inner_table = Vec::new();
                if let Some(mesh) = data.mesh {
                    let scene = self.mesh_scene(mesh)?;
                    let id = inner.add_instance(scene, Affine3A::IDENTITY);
                    inner.set_name(id, data.name.clone());
                    inner_table.push(Placed { node, scene: None });
                }
                for &child in &data.children {
                    let node_from_child = nodes[child].parent_from_node;
                    self.place(
                        &mut inner,
                        &mut inner_table,
                        child,
                        node_from_child,
                        levels - 1,
                    )?;
                }
                let scene = Arc::new(inner.build().map_err(wrap)?);
                self.scenes.push(inner_table);
                let id = builder.add_instance(scene, frame_from_node);
                builder.set_name(id, data.name.clone());
                table.push(Placed {
                    node,
                    scene: Some(self.scenes.len() - 1),
                });
            }
            _ => self.place_flat(builder, table, node, frame_from_node)?,
        }
        Ok(())
    }

    /// Adds node `node` and its subtree to `builder` without scenes of their own: each node with
    /// a mesh an instance of its mesh's scene, placed by the product of the transforms from
    /// `builder`'s frame down to it (or baked, when that product cannot be inverted).
    fn place_flat(
        &mut self,
        builder: &mut SceneBuilder,
        table: &mut Vec<Placed>,
        node: usize,
        frame_from_node: Affine3A,
    ) -> Result<(), LoadError> {
        let mut stack = vec![(node, frame_from_node)];
        while let Some((node, frame_from_node)) = stack.pop() {
            if !self.shows[node] {
                continue;
            }
            if let Some(problem) = transform_problem(&frame_from_node) {
                self.notes.push(format!(
                    "node {node} ({:?}): {problem}, its subtree's meshes baked",
                    self.nodes[node].name
                ));
                self.bake(builder, table, node, frame_from_node);
                continue;
            }
            let nodes = self.nodes;
            let data = &nodes[node];
            if let Some(mesh) = data.mesh {
                let scene = self.mesh_scene(mesh)?;
                let id = builder.add_instance(scene, frame_from_node);
                builder.set_name(id, data.name.clone());
                table.push(Placed { node, scene: None });
                self.flat.push(node);
            }
            for &child in data.children.iter().rev() {
                stack.push((child, frame_from_node * self.nodes[child].parent_from_node));
            }
        }
        Ok(())
    }

    /// Adds the meshes of node `node`'s subtree to `builder` as plain meshes, their vertices
    /// moved by the product of the transforms from `builder`'s frame down to each node.
    fn bake(
        &mut self,
        builder: &mut SceneBuilder,
        table: &mut Vec<Placed>,
        node: usize,
        frame_from_node: Affine3A,
    ) {
        let mut stack = vec![(node, frame_from_node)];
        while let Some((node, frame_from_node)) = stack.pop() {
            let data = &self.nodes[node];
            if let Some(mesh) = data.mesh {
                let mesh = &self.meshes[mesh];
                let vertices = mesh
                    .vertices()
                    .iter()
                    .map(|&v| frame_from_node.transform_point3(v))
                    .collect();
                builder.add_mesh(
                    TriMesh::new(vertices, mesh.indices().to_vec()).with_name(data.name.clone()),
                );
                table.push(Placed { node, scene: None });
            }
            for &child in data.children.iter().rev() {
                stack.push((child, frame_from_node * self.nodes[child].parent_from_node));
            }
        }
    }
}
