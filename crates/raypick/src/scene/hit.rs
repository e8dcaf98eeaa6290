//! [`Hit`] records, [`InstancePath`]s and per-query [`QueryOptions`]; inside the crate the raw
//! hit, its tie order, and what a walk keeps of the instances it enters ([`PathRecord`]).

use glam::Vec3;

use crate::geom::triangle::Culling;

/// How deep instances may nest: an instance's scene may hold instances whose scenes hold
/// instances, and so on, up to this many instances between the queried scene and a primitive
/// (Embree's `RTC_MAX_INSTANCE_LEVEL_COUNT`, a build option there).
/// [`SceneBuilder::build`](crate::SceneBuilder::build) refuses deeper nesting
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
    /// Geometry id of the instance in the top-level scene; `None` when not instanced. When
    /// instances nest, the first id of the hit's [`InstancePath`], which the path queries
    /// ([`Scene::intersect_path`](crate::Scene::intersect_path) and its kin) return beside the hit.
    pub instance: Option<u32>,
}

// A batch writes and copies one of these per ray: keep it the size of its fields.
const _: () = assert!(std::mem::size_of::<Hit>() == 52);
const _: () = assert!(std::mem::size_of::<Option<Hit>>() == 52);

/// One crossing of a ray as [`Scene::intersect_all_into`](crate::Scene::intersect_all_into)
/// lists them: a [`Hit`] without its point and normal, which a batch of all hits does not
/// compute (`O + tD` gives the point, the triangle its normal).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Crossing {
    /// [`Hit::t`].
    pub t: f32,
    /// [`Hit::u`].
    pub u: f32,
    /// [`Hit::v`].
    pub v: f32,
    /// [`Hit::prim`].
    pub prim: u32,
    /// [`Hit::geom`].
    pub geom: u32,
    /// [`Hit::instance`].
    pub instance: Option<u32>,
}

impl From<&Hit> for Crossing {
    /// The hit without its point and normal.
    fn from(h: &Hit) -> Self {
        Self {
            t: h.t,
            u: h.u,
            v: h.v,
            prim: h.prim,
            geom: h.geom,
            instance: h.instance,
        }
    }
}

/// A filter of candidate hits ([`QueryOptions::filter`]): called with each candidate hit and its
/// instance path; `false` skips the candidate.
pub type HitFilter<'a> = dyn Fn(&Hit, &InstancePath) -> bool + Sync + 'a;

/// Per-query settings. `QueryOptions::default()`: no culling, all masks, no filter.
///
/// ```
/// use raypick::{geom::Culling, QueryOptions};
/// let only_front = QueryOptions { culling: Culling::Back, ..Default::default() };
/// let not_geom_3 = |h: &raypick::Hit, _path: &raypick::InstancePath| h.geom != 3;
/// let filtered = QueryOptions { filter: Some(&not_geom_3), ..Default::default() };
/// # let _ = (only_front, filtered);
/// ```
#[derive(Clone, Copy)]
pub struct QueryOptions<'a> {
    /// Back-face culling (triangles: back faces; spheres: the exit crossing).
    pub culling: Culling,
    /// A geometry is considered when `geometry.mask & mask != 0`.
    pub mask: u32,
    /// Called with each candidate hit and its instance path (what the path queries would
    /// return with it; the top-level instance alone, or empty, where instances do not nest);
    /// return `false` to skip it. Under [`BuildConfig::spatial_splits`](crate::bvh::BuildConfig)
    /// a triangle sits in several leaves and the filter may be asked about the same hit more
    /// than once (as Embree's filters are under spatial splits): it should answer alike.
    pub filter: Option<&'a HitFilter<'a>>,
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
            .field(
                "filter",
                &self.filter.map(|_| "Fn(&Hit, &InstancePath) -> bool"),
            )
            .finish()
    }
}

/// What a walk keeps of the instances it entered, in its context and in each raw hit: the
/// plain queries keep [`TopInstance`] in scenes whose instances do not nest, so that their raw
/// hits carry no more than a [`Hit`] needs; the path queries, and every query in a scene whose
/// instances nest (finishing a hit there needs each transform on its path), keep the whole
/// [`InstancePath`]. Both order the hits of a scene whose instances do not nest alike
/// ([`PathRecord::key`]), so a query answers the same whichever it keeps.
pub(crate) trait PathRecord: Copy + std::fmt::Debug {
    /// The tie-break key of [`PathRecord::key`].
    type Key: Copy + Ord;
    /// No instance entered: the queried scene itself.
    const ROOT: Self;
    /// The tie-break key of a hit (or closest-point candidate) on primitive `prim` of geometry
    /// `geom` reached through these instances: (top-level geometry id, the instance path,
    /// geometry id, primitive id). Where instances do not nest, two hits with the same
    /// top-level id have the same path (both empty, or both that one instance), so the key
    /// without the path, (top-level id, geometry id, primitive id), orders them alike.
    fn key(&self, geom: u32, prim: u32) -> Self::Key;
    /// The record one level deeper, into instance `id`.
    fn entered(self, id: u32) -> Self;
    /// The instance of the queried scene, if any.
    fn top(&self) -> Option<u32>;
    /// The instances entered, outermost first.
    fn ids(&self) -> &[u32];
    /// The path as the path queries return it.
    fn path(&self) -> InstancePath;
}

impl PathRecord for InstancePath {
    type Key = (u32, InstancePath, u32, u32);
    const ROOT: Self = Self::EMPTY;
    #[inline(always)]
    fn key(&self, geom: u32, prim: u32) -> Self::Key {
        (InstancePath::top(self).unwrap_or(geom), *self, geom, prim)
    }
    #[inline(always)]
    fn entered(self, id: u32) -> Self {
        self.pushed(id)
    }
    #[inline(always)]
    fn top(&self) -> Option<u32> {
        InstancePath::top(self)
    }
    #[inline(always)]
    fn ids(&self) -> &[u32] {
        self.as_slice()
    }
    #[inline(always)]
    fn path(&self) -> InstancePath {
        *self
    }
}

/// The instance of the queried scene a hit is in, and nothing below it: all a walk needs in a
/// scene whose instances do not nest (its hits' paths are this one id), in 8 bytes where an
/// [`InstancePath`] takes 36.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TopInstance(Option<u32>);

impl PathRecord for TopInstance {
    type Key = (u32, u32, u32);
    const ROOT: Self = Self(None);
    #[inline(always)]
    fn key(&self, geom: u32, prim: u32) -> Self::Key {
        (self.0.unwrap_or(geom), geom, prim)
    }
    /// Keeps the outermost instance: the walks keep this record only where nothing nests.
    #[inline(always)]
    fn entered(self, id: u32) -> Self {
        Self(self.0.or(Some(id)))
    }
    #[inline(always)]
    fn top(&self) -> Option<u32> {
        self.0
    }
    #[inline(always)]
    fn ids(&self) -> &[u32] {
        self.0.as_slice()
    }
    #[inline(always)]
    fn path(&self) -> InstancePath {
        self.0
            .map_or(InstancePath::EMPTY, |id| InstancePath::EMPTY.pushed(id))
    }
}

/// A hit before its point and normal are computed, with what its walk kept of the instances
/// it entered (`P`, see [`PathRecord`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RawHit<P> {
    pub t: f32,
    pub u: f32,
    pub v: f32,
    pub prim: u32,
    /// Where the primitive's data sits in its geometry's acceleration data (BVH order for
    /// triangles), so finishing the hit reads memory the test just touched.
    pub slot: u32,
    pub geom: u32,
    pub path: P,
}

impl<P: PathRecord> RawHit<P> {
    /// The tie-break key ([`PathRecord::key`]).
    #[inline]
    pub fn key(&self) -> P::Key {
        self.path.key(self.geom, self.prim)
    }

    /// The hit with world-space `point` and `normal`.
    #[inline(always)]
    pub fn hit(&self, point: Vec3, normal: Vec3) -> Hit {
        Hit {
            t: self.t,
            point,
            normal,
            u: self.u,
            v: self.v,
            prim: self.prim,
            geom: self.geom,
            instance: self.path.top(),
        }
    }

    /// The hit as a [`Crossing`].
    #[inline(always)]
    pub fn crossing(&self) -> Crossing {
        Crossing {
            t: self.t,
            u: self.u,
            v: self.v,
            prim: self.prim,
            geom: self.geom,
            instance: self.path.top(),
        }
    }

    /// `true` when `self` comes before `other`: smaller `t`, then smaller key.
    #[inline]
    pub fn before(&self, other: &Self) -> bool {
        self.t < other.t || (self.t == other.t && self.key() < other.key())
    }
}
