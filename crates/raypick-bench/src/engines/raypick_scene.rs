//! raypick itself, through its public scene API: one `TriMesh` in a `Scene` (build config
//! `BuildConfig::BALANCED` unless told otherwise), cast with `intersect_batch` / `occluded_batch`.

use anyhow::{Context, Result};
use raypick::{bvh::BuildConfig, QueryOptions, Ray, Scene, SceneBuilder, TriMesh};

use super::{Engine, EngineKind, HitRec};
use crate::mesh::Mesh;

/// A raypick scene holding the mesh as geometry 0.
pub struct RaypickEngine {
    scene: Scene,
}

impl RaypickEngine {
    /// Builds the scene with `config` (its BVH build runs on the current rayon pool).
    pub fn build(mesh: &Mesh, config: BuildConfig) -> Result<Self> {
        let mut builder = SceneBuilder::with_config(config);
        builder.add_mesh(TriMesh::new(mesh.vertices.clone(), mesh.indices.clone()));
        let scene = builder.build().context("raypick SceneBuilder::build")?;
        Ok(Self { scene })
    }

    /// The closest hit of one ray.
    #[inline]
    pub fn closest(&self, ray: &Ray) -> Option<HitRec> {
        self.scene.intersect(ray).map(|h| HitRec {
            t: h.t,
            prim: h.prim,
        })
    }

    /// Whether one ray hits anything.
    #[inline]
    pub fn any(&self, ray: &Ray) -> bool {
        self.scene.occluded(ray)
    }
}

impl Engine for RaypickEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Raypick
    }

    /// `Scene::intersect_batch` (the API a caller with many rays uses; it returns full `Hit`
    /// records, which are then cut down to `t` and the triangle inside the timed call).
    fn closest_batch(&self, rays: &[Ray], out: &mut [Option<HitRec>]) {
        let hits = self.scene.intersect_batch(rays, &QueryOptions::default());
        for (o, h) in out.iter_mut().zip(hits) {
            *o = h.map(|h| HitRec {
                t: h.t,
                prim: h.prim,
            });
        }
    }

    fn any_batch(&self, rays: &[Ray], out: &mut [bool]) {
        let hits = self.scene.occluded_batch(rays, &QueryOptions::default());
        out.copy_from_slice(&hits);
    }
}
