//! raypick itself, through its public scene API: one `TriMesh` in a `Scene` (build config
//! `BuildConfig::BALANCED` unless told otherwise), cast with `intersect_batch_into` / `occluded_batch_into`.

use anyhow::{Context, Result};
use std::sync::Mutex;

use raypick::{bvh::BuildConfig, Hit, QueryOptions, Ray, Scene, SceneBuilder, TriMesh};

use super::{Engine, EngineKind, HitRec};
use crate::mesh::Mesh;

/// A raypick scene holding the mesh as geometry 0.
pub struct RaypickEngine {
    scene: Scene,
    /// The batch's result buffer, kept between runs (as the other engines write into `out`).
    hits: Mutex<Vec<Option<Hit>>>,
}

impl RaypickEngine {
    /// Builds the scene with `config` (its BVH build runs on the current rayon pool).
    pub fn build(mesh: &Mesh, config: BuildConfig) -> Result<Self> {
        let mut builder = SceneBuilder::with_config(config);
        builder.add_mesh(TriMesh::new(mesh.vertices.clone(), mesh.indices.clone()));
        let scene = builder.build().context("raypick SceneBuilder::build")?;
        Ok(Self {
            scene,
            hits: Mutex::new(Vec::new()),
        })
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

    /// `Scene::intersect_batch_into` (the API a caller with many rays uses) into a buffer kept
    /// between runs, as the other engines write into `out`; the full `Hit` records are cut down to
    /// `t` and the triangle inside the timed call.
    fn closest_batch(&self, rays: &[Ray], out: &mut [Option<HitRec>]) {
        let mut hits = self.hits.lock().unwrap_or_else(|e| e.into_inner());
        hits.resize(rays.len(), None);
        self.scene
            .intersect_batch_into(rays, &QueryOptions::default(), &mut hits);
        for (o, h) in out.iter_mut().zip(hits.iter()) {
            *o = h.map(|h| HitRec {
                t: h.t,
                prim: h.prim,
            });
        }
    }

    fn memory_bytes(&self) -> Option<usize> {
        let mesh = match self.scene.geometry(0)? {
            raypick::Geometry::Mesh(m) => {
                std::mem::size_of_val(m.vertices()) + std::mem::size_of_val(m.indices())
            }
            _ => 0,
        };
        Some(self.scene.accel_memory_bytes() + mesh)
    }

    fn any_batch(&self, rays: &[Ray], out: &mut [bool]) {
        self.scene
            .occluded_batch_into(rays, &QueryOptions::default(), out);
    }
}
