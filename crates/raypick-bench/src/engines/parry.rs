//! parry3d 0.31: `TriMesh` (which builds its own BVH) and its ray casts.

use anyhow::{Context, Result};
use parry3d::{
    math::Vector,
    partitioning::TraversalAction,
    query::{Ray as ParryRay, RayCast},
    shape::{CompositeShapeRef, TriMesh},
};
use raypick::Ray;

use super::{par_map, Engine, EngineKind, HitRec};
use crate::mesh::Mesh;

/// parry3d's `TriMesh` over the mesh (no flags: no vertex merging or triangle removal, so triangle
/// ids are the mesh's).
pub struct ParryEngine {
    mesh: TriMesh,
}

impl ParryEngine {
    /// Builds the `TriMesh` and its BVH (single-threaded: parry builds serially).
    pub fn build(mesh: &Mesh) -> Result<Self> {
        let vertices = mesh
            .vertices
            .iter()
            .map(|p| Vector::new(p.x, p.y, p.z))
            .collect();
        let mesh = TriMesh::new(vertices, mesh.indices.clone()).context("parry3d TriMesh::new")?;
        Ok(Self { mesh })
    }

    /// parry's ray and its `max_time_of_impact` (parry documents `Real::MAX` for an unbounded ray).
    #[inline]
    fn ray(ray: &Ray) -> (ParryRay, f32) {
        let o = Vector::new(ray.origin.x, ray.origin.y, ray.origin.z);
        let d = Vector::new(ray.dir.x, ray.dir.y, ray.dir.z);
        (ParryRay::new(o, d), ray.t_max.min(f32::MAX))
    }

    /// The closest hit of one ray: `TriMesh::cast_local_ray` is this call minus the triangle id.
    /// `solid = false`: the triangles are surfaces, a ray starting inside the mesh is not a hit at 0.
    #[inline]
    pub fn closest(&self, ray: &Ray) -> Option<HitRec> {
        let (r, max_toi) = Self::ray(ray);
        CompositeShapeRef(&self.mesh)
            .cast_local_ray(&r, max_toi, false)
            .map(|(prim, t)| HitRec { t, prim })
    }

    /// Whether one ray hits anything: a depth-first walk of the mesh's BVH that stops at the first
    /// triangle hit (parry's `intersects_local_ray` on a `TriMesh` computes the closest hit instead).
    #[inline]
    pub fn any(&self, ray: &Ray) -> bool {
        let (r, max_toi) = Self::ray(ray);
        let mut hit = false;
        self.mesh.bvh().traverse(|node| {
            if !node.aabb().intersects_local_ray(&r, max_toi) {
                return TraversalAction::Prune;
            }
            match node.leaf_data() {
                Some(prim) if node.is_leaf() => {
                    if self.mesh.triangle(prim).intersects_local_ray(&r, max_toi) {
                        hit = true;
                        TraversalAction::EarlyExit
                    } else {
                        TraversalAction::Continue
                    }
                }
                _ => TraversalAction::Continue,
            }
        });
        hit
    }
}

impl Engine for ParryEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Parry
    }

    fn closest_batch(&self, rays: &[Ray], out: &mut [Option<HitRec>]) {
        par_map(rays, out, |ray| self.closest(ray));
    }

    fn any_batch(&self, rays: &[Ray], out: &mut [bool]) {
        par_map(rays, out, |ray| self.any(ray));
    }
}
