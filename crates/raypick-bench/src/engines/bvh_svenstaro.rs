//! bvh 0.13 (svenstaro): a binary SAH BVH over triangle boxes; the crate finds the candidates, a
//! two-sided Möller–Trumbore test ([`moller_trumbore`]) decides.

use bvh::{
    aabb::{Aabb, Bounded},
    bounding_hierarchy::{BHShape, BoundingHierarchy},
    bvh::Bvh,
    ray::Ray as BvhRay,
};
use glam::Vec3;
use raypick::Ray;

use super::{moller_trumbore, par_map, Engine, EngineKind, HitRec};
use crate::mesh::Mesh;

/// One triangle as a `bvh` shape: its corners inline (the candidates are read straight from the
/// traversal) and the node index the builder records.
struct Tri {
    corners: [Vec3; 3],
    prim: u32,
    node_index: usize,
}

impl Bounded<f32, 3> for Tri {
    fn aabb(&self) -> Aabb<f32, 3> {
        let [a, b, c] = self.corners;
        Aabb::with_bounds(
            a.min(b).min(c).to_array().into(),
            a.max(b).max(c).to_array().into(),
        )
    }
}

impl BHShape<f32, 3> for Tri {
    fn set_bh_node_index(&mut self, index: usize) {
        self.node_index = index;
    }

    fn bh_node_index(&self) -> usize {
        self.node_index
    }
}

/// svenstaro's `bvh` over the mesh's triangles.
pub struct BvhEngine {
    bvh: Bvh<f32, 3>,
    shapes: Vec<Tri>,
}

impl BvhEngine {
    /// Builds the BVH with `build_par` (rayon, on the current pool).
    pub fn build(mesh: &Mesh) -> Self {
        let mut shapes: Vec<Tri> = (0..mesh.num_triangles())
            .map(|i| Tri {
                corners: mesh.triangle(i),
                prim: i as u32,
                node_index: 0,
            })
            .collect();
        let bvh = Bvh::build_par(&mut shapes);
        Self { bvh, shapes }
    }

    /// The crate's ray (it normalizes the direction; only its box tests use it).
    #[inline]
    fn ray(ray: &Ray) -> BvhRay<f32, 3> {
        BvhRay::new(ray.origin.to_array().into(), ray.dir.to_array().into())
    }

    /// The closest hit of one ray: every candidate is tested, the interval shrinks with each hit.
    #[inline]
    pub fn closest(&self, ray: &Ray) -> Option<HitRec> {
        let r = Self::ray(ray);
        let mut best = None;
        let mut t_max = ray.t_max;
        for tri in self.bvh.traverse_iterator(&r, &self.shapes) {
            let [v0, v1, v2] = tri.corners;
            if let Some((t, _, _)) = moller_trumbore(ray, t_max, v0, v1, v2) {
                t_max = t;
                best = Some(HitRec { t, prim: tri.prim });
            }
        }
        best
    }

    /// Whether one ray hits anything: stops at the first candidate hit.
    #[inline]
    pub fn any(&self, ray: &Ray) -> bool {
        let r = Self::ray(ray);
        self.bvh.traverse_iterator(&r, &self.shapes).any(|tri| {
            let [v0, v1, v2] = tri.corners;
            moller_trumbore(ray, ray.t_max, v0, v1, v2).is_some()
        })
    }
}

impl Engine for BvhEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Bvh
    }

    fn closest_batch(&self, rays: &[Ray], out: &mut [Option<HitRec>]) {
        par_map(rays, out, |ray| self.closest(ray));
    }

    fn any_batch(&self, rays: &[Ray], out: &mut [bool]) {
        par_map(rays, out, |ray| self.any(ray));
    }
}
