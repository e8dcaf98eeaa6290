//! [`Hit`] records and per-query [`QueryOptions`].

use glam::Vec3;

use crate::geom::triangle::Culling;

/// What a ray hit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// Ray parameter, in units of the *world* ray's `dir`.
    pub t: f32,
    /// World-space hit point (for triangles rebuilt from the barycentrics, for spheres projected on
    /// the sphere).
    pub point: Vec3,
    /// Unit geometric normal in world space: the direction of `(v1-v0)×(v2-v0)` of the world-space
    /// triangle, or the outward sphere normal.
    pub normal: Vec3,
    /// Barycentric weight of the triangle's `v1` (0 for spheres).
    pub u: f32,
    /// Barycentric weight of the triangle's `v2` (0 for spheres).
    pub v: f32,
    /// Triangle index (order of the mesh's indices) or sphere index.
    pub prim: u32,
    /// Geometry id in the scene that holds the primitive (the placed scene for instances).
    pub geom: u32,
    /// Geometry id of the instance in the top-level scene; `None` when not instanced.
    pub instance: Option<u32>,
}

/// Per-query settings. `QueryOptions::default()`: no culling, all masks, no filter.
///
/// ```
/// use raypick::{geom::Culling, QueryOptions};
/// let only_front = QueryOptions { culling: Culling::Back, ..Default::default() };
/// let not_geom_3 = |h: &raypick::Hit| h.geom != 3;
/// let filtered = QueryOptions { filter: Some(&not_geom_3), ..Default::default() };
/// # let _ = (only_front, filtered);
/// ```
#[derive(Clone, Copy)]
pub struct QueryOptions<'a> {
    /// Back-face culling (triangles: back faces; spheres: the exit crossing).
    pub culling: Culling,
    /// A geometry is considered when `geometry.mask & mask != 0`.
    pub mask: u32,
    /// Called with each candidate hit; return `false` to skip it.
    pub filter: Option<&'a (dyn Fn(&Hit) -> bool + Sync)>,
}

impl Default for QueryOptions<'_> {
    fn default() -> Self {
        Self {
            culling: Culling::None,
            mask: u32::MAX,
            filter: None,
        }
    }
}

impl std::fmt::Debug for QueryOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueryOptions")
            .field("culling", &self.culling)
            .field("mask", &self.mask)
            .field("filter", &self.filter.map(|_| "Fn(&Hit) -> bool"))
            .finish()
    }
}

/// A hit before its point and normal are computed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RawHit {
    pub t: f32,
    pub u: f32,
    pub v: f32,
    pub prim: u32,
    /// Where the primitive's data sits in its geometry's acceleration data (BVH order for
    /// triangles), so finishing the hit reads memory the test just touched.
    pub slot: u32,
    pub geom: u32,
    pub instance: Option<u32>,
}

impl RawHit {
    /// The tie-break key: (top-level geometry id, geometry id, primitive id).
    #[inline]
    pub fn key(&self) -> (u32, u32, u32) {
        (self.instance.unwrap_or(self.geom), self.geom, self.prim)
    }

    /// `true` when `self` comes before `other`: smaller `t`, then smaller key.
    #[inline]
    pub fn before(&self, other: &Self) -> bool {
        self.t < other.t || (self.t == other.t && self.key() < other.key())
    }
}
