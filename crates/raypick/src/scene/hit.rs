//! [`Hit`] records and per-query [`QueryOptions`].

use glam::Vec3;

use crate::geom::triangle::Culling;

/// How deep instances may nest: an instance's scene may hold instances whose scenes hold
/// instances, and so on, up to this many instances between the queried scene and a primitive
/// (Embree's `RTC_MAX_INSTANCE_LEVEL_COUNT`, a build option there). [`SceneBuilder::build`]
/// (crate::SceneBuilder::build) refuses deeper nesting
/// ([`BuildError::TooDeep`](crate::BuildError::TooDeep)).
pub const MAX_INSTANCE_DEPTH: usize = 8;

/// The instances a hit was reached through, outermost first: the geometry id of an instance in
/// the queried scene, then the id of an instance in that instance's scene, and so on (Embree's
/// `instID[]` stack). Empty for a primitive of the queried scene itself.
///
/// ```
/// use raypick::scene::InstancePath;
/// let path = InstancePath::EMPTY.pushed(3).pushed(0);
/// assert_eq!((path.as_slice(), path.top(), path.len()), (&[3, 0][..], Some(3), 2));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstancePath {
    /// `ids[..len]`; the rest is 0, so that derived comparisons see only the path.
    ids: [u32; MAX_INSTANCE_DEPTH],
    len: u8,
}

impl InstancePath {
    /// No instance: a primitive of the queried scene.
    pub const EMPTY: Self = Self {
        ids: [0; MAX_INSTANCE_DEPTH],
        len: 0,
    };

    /// The path, outermost instance first.
    #[inline]
    pub fn as_slice(&self) -> &[u32] {
        &self.ids[..self.len as usize]
    }

    /// The instance of the queried scene the hit is in (the first id), if any.
    #[inline]
    pub fn top(&self) -> Option<u32> {
        (self.len > 0).then_some(self.ids[0])
    }

    /// Number of instances on the path.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// `true` for a primitive of the queried scene itself.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The path one level deeper, into instance `id`. The builder keeps nesting within
    /// [`MAX_INSTANCE_DEPTH`]; past it (a path built by hand) the id is dropped.
    #[inline]
    #[must_use]
    pub fn pushed(mut self, id: u32) -> Self {
        if let Some(slot) = self.ids.get_mut(self.len as usize) {
            *slot = id;
            self.len += 1;
        }
        self
    }
}

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
    /// Geometry id in the scene that holds the primitive (the placed scene for instances: the
    /// innermost one when instances nest).
    pub geom: u32,
    /// Geometry id of the instance in the top-level scene; `None` when not instanced. The first
    /// id of [`Hit::instance_path`].
    pub instance: Option<u32>,
    /// Every instance the hit was reached through, outermost first (one id when instances do
    /// not nest).
    pub instance_path: InstancePath,
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
    pub path: InstancePath,
}

impl RawHit {
    /// The tie-break key: (top-level geometry id, the instance path, geometry id, primitive id).
    #[inline]
    pub fn key(&self) -> (u32, InstancePath, u32, u32) {
        (
            self.path.top().unwrap_or(self.geom),
            self.path,
            self.geom,
            self.prim,
        )
    }

    /// `true` when `self` comes before `other`: smaller `t`, then smaller key.
    #[inline]
    pub fn before(&self, other: &Self) -> bool {
        self.t < other.t || (self.t == other.t && self.key() < other.key())
    }
}
