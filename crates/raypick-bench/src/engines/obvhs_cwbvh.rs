//! obvhs 0.4: a compressed wide BVH8 (Ylitie et al. 2017) from the PLOC builder, as its crate docs and
//! `cornell_box_cwbvh` example use it.

use std::time::Duration;

use obvhs::{
    cwbvh::{builder::build_cwbvh_from_tris, CwBvh},
    ray::{Ray as ObvhsRay, RayHit},
    triangle::Triangle,
    BvhBuildParams,
};
use raypick::Ray;

use super::{par_map, Engine, EngineKind, HitRec};
use crate::mesh::Mesh;

/// obvhs's CWBVH over the mesh, built with the `medium_build` preset (the crate's recommended
/// trade-off, and the anchor figures' setting).
pub struct ObvhsEngine {
    bvh: CwBvh,
    /// The triangles in the BVH's leaf order (`bvh.primitive_indices[i]` is the mesh index of
    /// `tris[i]`), which saves the traversal an indirection, as obvhs's examples recommend.
    tris: Vec<Triangle>,
}

impl ObvhsEngine {
    /// Builds the CWBVH (on the current rayon pool: the `parallel` feature is on).
    pub fn build(mesh: &Mesh) -> Self {
        let tris: Vec<Triangle> = (0..mesh.num_triangles())
            .map(|i| {
                let [v0, v1, v2] = mesh.triangle(i);
                Triangle {
                    v0: v0.to_array().into(),
                    v1: v1.to_array().into(),
                    v2: v2.to_array().into(),
                }
            })
            .collect();
        let bvh = build_cwbvh_from_tris(
            &tris,
            BvhBuildParams::medium_build(),
            &mut Duration::default(),
        );
        let tris = bvh
            .primitive_indices
            .iter()
            .map(|&i| tris[i as usize])
            .collect();
        Self { bvh, tris }
    }

    #[inline]
    fn ray(ray: &Ray) -> ObvhsRay {
        ObvhsRay::new(
            ray.origin.to_array().into(),
            ray.dir.to_array().into(),
            ray.t_min,
            ray.t_max,
        )
    }

    /// The closest hit of one ray.
    #[inline]
    pub fn closest(&self, ray: &Ray) -> Option<HitRec> {
        let mut hit = RayHit::none();
        self.bvh
            .ray_traverse(Self::ray(ray), &mut hit, |r, id| self.tris[id].intersect(r))
            .then(|| HitRec {
                t: hit.t,
                prim: self.bvh.primitive_indices[hit.primitive_id as usize],
            })
    }

    /// Whether one ray hits anything.
    #[inline]
    pub fn any(&self, ray: &Ray) -> bool {
        !self
            .bvh
            .ray_traverse_miss(Self::ray(ray), |r, id| self.tris[id].intersect(r))
    }
}

impl Engine for ObvhsEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Obvhs
    }

    fn closest_batch(&self, rays: &[Ray], out: &mut [Option<HitRec>]) {
        par_map(rays, out, |ray| self.closest(ray));
    }

    fn any_batch(&self, rays: &[Ray], out: &mut [bool]) {
        par_map(rays, out, |ray| self.any(ray));
    }
}
