//! Animated meshes: [`Scene::update_mesh_vertices`] moves a mesh's vertices and refits the meshes'
//! BVH and the top level, keeping both topologies.

use glam::Vec3;

use super::builder::check_vertices;
use super::{mesh_local_box_list, pad_box, Accel, BuildError, Geometry, Scene, TopItem};

impl Scene {
    /// Replaces the vertices of mesh `geom` (same count, same triangles) and refits: the meshes are
    /// moved to the frame of their new box centre, their BVH's boxes are recomputed bottom-up with
    /// the topology kept, and so are the top level's. Queries then see the new vertices.
    /// Cheaper than a rebuild; the tree's quality degrades if the mesh deforms a lot (rebuild the
    /// scene then).
    ///
    /// # Errors
    /// [`BuildError::NotAMesh`], [`BuildError::VertexCountMismatch`] or
    /// [`BuildError::NonFiniteVertex`]; the scene is unchanged then.
    pub fn update_mesh_vertices(&mut self, geom: u32, vertices: &[Vec3]) -> Result<(), BuildError> {
        let id = geom as usize;
        let (Some(g @ Geometry::Mesh(mesh)), Some(Accel::Mesh)) =
            (self.geometries.get(id), self.accels.get(id))
        else {
            return Err(BuildError::NotAMesh { geom });
        };
        if vertices.len() != mesh.vertices.len() {
            return Err(BuildError::VertexCountMismatch {
                geom,
                name: g.name().unwrap_or_default().to_string(),
                got: vertices.len(),
                expected: mesh.vertices.len(),
            });
        }
        check_vertices(geom, g, vertices)?;
        let Some(Geometry::Mesh(mesh)) = self.geometries.get_mut(id) else {
            return Err(BuildError::NotAMesh { geom });
        };
        std::sync::Arc::make_mut(&mut mesh.vertices).copy_from_slice(vertices);
        // The meshes share one tree: its frame follows their new common box, and every box is
        // recomputed in it (the other meshes' triangles move in the frame when it moves).
        let bounds = self.meshes_bounds();
        let meshes = self.mesh_parts();
        let Some(accel) = &self.meshes else {
            return Err(BuildError::NotAMesh { geom });
        };
        let offset = super::frame_origin(&bounds);
        let boxes = mesh_local_box_list(&meshes, offset);
        let ids = accel.prim_ids();
        drop(meshes);
        let mut accel = self.meshes.take().expect("checked above");
        accel.offset = offset;
        accel.bvh.refit(&ids, &boxes);
        drop(boxes);
        accel.store(&self.mesh_parts_of(&accel), &ids);
        accel.dipoles = std::sync::OnceLock::new();
        self.meshes = Some(accel);
        // The top level: new world boxes for every listed geometry (only this one changed, but the
        // list is short and the refit is one pass).
        let mut world = crate::Aabb::EMPTY;
        for g in &self.geometries {
            world = world.union(g.bounds());
        }
        self.bounds = world;
        let meshes_bounds = self.meshes_bounds();
        for (slot, &item) in self.top_boxes.iter_mut().zip(&self.top_items) {
            *slot = pad_box(match item {
                TopItem::Meshes => meshes_bounds,
                TopItem::Geometry(g) => self.geometries[g as usize].bounds(),
            });
        }
        self.top.refit(&self.top_boxes);
        Ok(())
    }
}
