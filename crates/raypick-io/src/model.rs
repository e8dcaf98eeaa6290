//! The intermediate form every parser produces: plain meshes and their placements, independent of
//! the scene engine. [`crate::load`] turns a [`Model`] into a [`raypick::Scene`].

use std::path::PathBuf;

use glam::{Affine3A, Vec3};

/// One triangle mesh as read from a file: an OBJ `o`/`g` group, a glTF mesh (all its triangle
/// primitives, in order), the whole of a PLY or STL file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshData {
    /// The name in the file (OBJ group name, glTF mesh name); formats without names use the file's
    /// own naming (STL `solid` name) or an empty string.
    pub name: String,
    /// Vertex positions in the mesh's own (object) space. All finite.
    pub vertices: Vec<Vec3>,
    /// Triangles as indices into `vertices`, all in range. The order is the file's order after fan
    /// triangulation of each polygon (so triangle `i` of a triangle-only OBJ is its `i`-th `f` line).
    pub triangles: Vec<[u32; 3]>,
}

/// One placement of a mesh in the world (a glTF node that references a mesh).
#[derive(Clone, Debug, PartialEq)]
pub struct InstanceData {
    /// The name in the file (glTF node name, or `node <index>` when it has none).
    pub name: String,
    /// Index into [`Model::meshes`].
    pub mesh: usize,
    /// Maps the mesh's object space into world space (the product of the node's ancestors' and its
    /// own transforms). All entries finite.
    pub world_from_object: Affine3A,
}

/// One node of a file's node tree (a glTF node), as [`Model::nodes`] keeps it.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeData {
    /// The name in the file (glTF node name, or `node <index>` when it has none).
    pub name: String,
    /// The mesh the node shows, an index into [`Model::meshes`]; `None` for a node that only
    /// groups or places its children (or a joint).
    pub mesh: Option<usize>,
    /// Maps the node's space into its parent's (into the world for a root): the node's own
    /// transform. All entries finite.
    pub parent_from_node: Affine3A,
    /// The node's children, indices into [`Model::nodes`].
    pub children: Vec<usize>,
}

/// A parsed file: meshes, and where they are placed.
///
/// When `instances` is empty, every mesh stands once in world space as it is (OBJ, PLY, STL). When
/// it is not (glTF), only the instances are in the world, and a mesh may be placed several times.
///
/// A file with a node tree (glTF) keeps it too, in `nodes` and `roots`: `instances` is that tree
/// flattened (one instance per node with a mesh, in the order of `nodes`, with the product of
/// its ancestors' transforms and its own), which [`crate::Instancing::Hierarchy`] does not use;
/// the other policies use `instances` only.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Model {
    /// The meshes, in file order.
    pub meshes: Vec<MeshData>,
    /// The placements of meshes; empty means "each mesh once, untransformed".
    pub instances: Vec<InstanceData>,
    /// The node tree the instances come from, in depth-first order from the roots (a node
    /// before its children); empty for formats without one. Each node has at most one parent
    /// and is reached from `roots`.
    pub nodes: Vec<NodeData>,
    /// The root nodes of the tree (the glTF scene's nodes), indices into `nodes`.
    pub roots: Vec<usize>,
    /// Things that were read but deliberately left out (e.g. glTF point or line primitives), one
    /// human-readable line each.
    pub notes: Vec<String>,
    /// The other files this model was read from (glTF external buffers), canonicalized: what a
    /// tool that writes files must not overwrite.
    pub references: Vec<PathBuf>,
}

impl Model {
    /// Triangles in the world, counting each instance of a mesh once per placement.
    pub fn num_triangles_in_world(&self) -> usize {
        if self.instances.is_empty() {
            self.num_triangles_stored()
        } else {
            self.instances
                .iter()
                .map(|instance| {
                    self.meshes
                        .get(instance.mesh)
                        .map_or(0, |m| m.triangles.len())
                })
                .sum()
        }
    }

    /// Triangles stored, each mesh counted once however often it is placed.
    pub fn num_triangles_stored(&self) -> usize {
        self.meshes.iter().map(|mesh| mesh.triangles.len()).sum()
    }
}
