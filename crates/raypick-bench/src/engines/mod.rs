//! The engines under comparison, behind one small trait.
//!
//! Each engine is built from the same [`Mesh`] and answers the same two batch queries over
//! [`raypick::Ray`]s: the closest hit (`t` in units of the ray's direction, triangle index in the mesh's
//! order) and any hit (occlusion). Rays are converted to each engine's own ray type inside the timed
//! loop, as a caller holding such rays would have to; that costs a few nanoseconds per ray against the
//! hundreds a query takes.
//!
//! The batch methods run on the current rayon pool: call them inside `ThreadPool::install` to choose
//! the number of threads.
//!
//! Every engine here is given valid rays (finite, non-zero direction, `t_min = 0`): the shared ray
//! sets are. parry3d has no `t_min` (it always starts at 0).

#[cfg(feature = "compare")]
mod bvh_svenstaro;
mod moller_trumbore;
#[cfg(feature = "compare")]
mod obvhs_cwbvh;
#[cfg(feature = "compare")]
mod parry;
mod raypick_scene;

use anyhow::{bail, Result};
#[cfg(feature = "compare")]
use rayon::prelude::*;
use raypick::{bvh::BuildConfig, Ray};

use crate::mesh::Mesh;

#[cfg(feature = "compare")]
pub use bvh_svenstaro::BvhEngine;
pub use moller_trumbore::moller_trumbore;
#[cfg(feature = "compare")]
pub use obvhs_cwbvh::ObvhsEngine;
#[cfg(feature = "compare")]
pub use parry::ParryEngine;
pub use raypick_scene::RaypickEngine;

/// A closest hit as every engine can report it: the ray parameter and the triangle's index.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HitRec {
    /// Ray parameter of the hit, in units of the ray's direction.
    pub t: f32,
    /// Index of the hit triangle in [`Mesh::indices`].
    pub prim: u32,
}

/// One engine, built over one mesh.
pub trait Engine: Send + Sync {
    /// Which engine this is.
    fn kind(&self) -> EngineKind;

    /// The closest hit of each ray, into `out` (same length as `rays`), on the current rayon pool.
    fn closest_batch(&self, rays: &[Ray], out: &mut [Option<HitRec>]);

    /// Whether each ray hits anything, into `out` (same length as `rays`), on the current rayon pool.
    fn any_batch(&self, rays: &[Ray], out: &mut [bool]);

    /// Heap bytes the engine keeps for the mesh (acceleration structure and its copies of the
    /// geometry), when it can tell.
    fn memory_bytes(&self) -> Option<usize> {
        None
    }
}

/// The engines this binary knows, in the order the report lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EngineKind {
    /// raypick: its `Scene` (8-wide BVH collapsed from a binned-SAH tree, watertight triangle test).
    Raypick,
    /// obvhs: a compressed 8-wide BVH (CWBVH) from its PLOC builder, `medium_build` preset.
    Obvhs,
    /// parry3d: `TriMesh` and its BVH.
    Parry,
    /// bvh (svenstaro): its binary SAH BVH, Möller–Trumbore over the candidate triangles.
    Bvh,
}

impl EngineKind {
    /// The engines compiled into this binary: all of them with the `compare` feature, else raypick
    /// alone.
    pub fn available() -> &'static [EngineKind] {
        if cfg!(feature = "compare") {
            &Self::ALL
        } else {
            &Self::ALL[..1]
        }
    }

    /// Every engine, in report order.
    pub const ALL: [EngineKind; 4] = [
        EngineKind::Raypick,
        EngineKind::Obvhs,
        EngineKind::Parry,
        EngineKind::Bvh,
    ];

    /// The name used on the command line and in the report.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Raypick => "raypick",
            EngineKind::Obvhs => "obvhs",
            EngineKind::Parry => "parry3d",
            EngineKind::Bvh => "bvh",
        }
    }

    /// The crate version this binary is built against (as locked in the workspace's `Cargo.lock`;
    /// a unit test keeps the two in step).
    pub fn version(self) -> &'static str {
        match self {
            EngineKind::Raypick => env!("CARGO_PKG_VERSION"),
            EngineKind::Obvhs => "0.4.0",
            EngineKind::Parry => "0.31.1",
            EngineKind::Bvh => "0.13.0",
        }
    }

    /// How the engine is used, for the report.
    pub fn method(self) -> &'static str {
        match self {
            EngineKind::Raypick => {
                "`SceneBuilder::with_config` (`BuildConfig::BALANCED`, the default, unless \
                 `--raypick-config` says otherwise) with one `TriMesh`; \
                 `Scene::intersect_batch_into` / `Scene::occluded_batch_into` into buffers kept between runs"
            }
            EngineKind::Obvhs => {
                "CWBVH, `BvhBuildParams::medium_build()`, triangles reordered to the BVH's order; \
                 `ray_traverse` / `ray_traverse_miss` with `Triangle::intersect`"
            }
            EngineKind::Parry => {
                "`TriMesh::new`; closest: `CompositeShapeRef::cast_local_ray` (what \
                 `TriMesh::cast_local_ray` calls, keeping the triangle id); any: `Bvh::traverse` \
                 with an early exit on the first triangle hit"
            }
            EngineKind::Bvh => {
                "`Bvh::build_par`; `traverse_iterator` candidates, two-sided Möller–Trumbore \
                 (the crate's own `intersects_triangle` culls back faces)"
            }
        }
    }

    /// Parses a name as printed by [`EngineKind::name`] (`parry` is accepted for `parry3d`).
    pub fn parse(name: &str) -> Result<Self> {
        Ok(match name.trim() {
            "raypick" => EngineKind::Raypick,
            "obvhs" => EngineKind::Obvhs,
            "parry3d" | "parry" => EngineKind::Parry,
            "bvh" => EngineKind::Bvh,
            other => bail!(
                "unknown engine `{other}` (known: {})",
                EngineKind::ALL.map(EngineKind::name).join(", ")
            ),
        })
    }

    /// Builds this engine over `mesh`, on the current rayon pool (raypick with its default config).
    pub fn build(self, mesh: &Mesh) -> Result<Box<dyn Engine>> {
        self.build_with(mesh, BuildConfig::default())
    }

    /// [`EngineKind::build`], with raypick's BVH built with `raypick_config` (the other engines
    /// ignore it).
    pub fn build_with(self, mesh: &Mesh, raypick_config: BuildConfig) -> Result<Box<dyn Engine>> {
        if mesh.indices.is_empty() {
            bail!("the mesh has no triangles");
        }
        Ok(match self {
            EngineKind::Raypick => Box::new(RaypickEngine::build(mesh, raypick_config)?),
            #[cfg(feature = "compare")]
            EngineKind::Obvhs => Box::new(ObvhsEngine::build(mesh)),
            #[cfg(feature = "compare")]
            EngineKind::Parry => Box::new(ParryEngine::build(mesh)?),
            #[cfg(feature = "compare")]
            EngineKind::Bvh => Box::new(BvhEngine::build(mesh)),
            #[cfg(not(feature = "compare"))]
            other => bail!(
                "{}: this binary was built without the other engines; rebuild with `--features compare`",
                other.name()
            ),
        })
    }
}

/// Smallest number of rays a rayon task handles: splitting finer costs more in scheduling than the
/// load balance gains (a ray takes ~1 µs).
#[cfg(feature = "compare")]
const MIN_RAYS_PER_TASK: usize = 256;

/// Runs `query` over `rays` into `out` on the current rayon pool.
#[cfg(feature = "compare")]
pub(crate) fn par_map<T: Send>(rays: &[Ray], out: &mut [T], query: impl Fn(&Ray) -> T + Sync) {
    assert_eq!(rays.len(), out.len(), "one output per ray");
    out.par_iter_mut()
        .zip(rays.par_iter())
        .with_min_len(MIN_RAYS_PER_TASK)
        .for_each(|(o, ray)| *o = query(ray));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for kind in EngineKind::ALL {
            assert_eq!(EngineKind::parse(kind.name()).unwrap(), kind);
        }
        assert!(EngineKind::parse("embree").is_err());
    }

    #[test]
    fn versions_match_the_lock_file() {
        let lock = include_str!("../../../../Cargo.lock");
        for kind in EngineKind::ALL {
            let crate_name = match kind {
                EngineKind::Parry => "parry3d",
                other => other.name(),
            };
            let entry = format!("name = \"{crate_name}\"\nversion = \"{}\"", kind.version());
            assert!(lock.contains(&entry), "Cargo.lock has no `{entry}`");
        }
    }
}
