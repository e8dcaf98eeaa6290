//! Scenes: triangle meshes, spheres and instances, and the queries on them — closest hit, any hit,
//! all hits, crossing counts, batches; and point queries: primitives near a point
//! ([`Scene::point_query`]), closest point ([`Scene::closest_point`]), distance, inside/outside
//! ([`Scene::contains`], by crossing parity or the generalized winding number of [`winding`]) and
//! signed distance.
//!
//! Build a [`Scene`] with a [`SceneBuilder`] (geometries get ids 0, 1, 2, … in insertion order),
//! then cast [`Ray`]s:
//!
//! ```
//! use raypick::{glam::Vec3, Ray, SceneBuilder, Spheres, TriMesh};
//! let mut builder = SceneBuilder::new();
//! let quad = builder.add_mesh(TriMesh::new(
//!     vec![Vec3::new(-1.0, -1.0, 0.0), Vec3::new(1.0, -1.0, 0.0), Vec3::new(1.0, 1.0, 0.0), Vec3::new(-1.0, 1.0, 0.0)],
//!     vec![[0, 1, 2], [0, 2, 3]],
//! ));
//! let ball = builder.add_spheres(Spheres::new(vec![Vec3::new(0.0, 0.0, -5.0)], vec![1.0]));
//! let scene = builder.build().unwrap();
//! let hit = scene.intersect(&Ray::new(Vec3::new(0.5, -0.5, 3.0), Vec3::NEG_Z)).unwrap();
//! assert_eq!((hit.geom, hit.prim, hit.t), (quad, 0, 3.0));
//! assert_eq!(hit.normal, Vec3::Z);
//! assert_eq!(scene.count_intersections(&Ray::new(Vec3::new(0.0, 0.0, 3.0), Vec3::NEG_Z)), 3);
//! # let _ = ball;
//! ```
//!
//! ## Structure
//! Two BVH levels: a top-level [`Bvh`] over the scene's meshes (as one item), sphere sets and
//! instances, and below it one 8-wide BVH over *every* triangle of the scene's meshes and one BVH
//! per sphere set. The meshes share one tree, as a static scene's geometries do in Embree: a scene
//! of many meshes (OBJ groups, glTF nodes) casts as fast as the same triangles in one mesh, where
//! one tree per mesh under a top level whose boxes overlap (walls, floors and ceilings span an
//! interior) would walk many of them per ray. Each triangle keeps its geometry: the blocks hold a
//! scene-wide triangle number that names the geometry and its triangle, and masks stay per
//! geometry (a triangle of a geometry the ray's mask excludes is skipped at the leaf). An [`Instance`] places a whole built scene with a `world_from_object` affine
//! transform; the ray is moved into object space with the inverse transform *without
//! renormalizing the direction*, so `t` stays in units of the world ray's `dir`. The hit point
//! maps back with `world_from_object`, the normal with the inverse transpose, normalized. Placed
//! scenes may hold instances themselves, up to [`MAX_INSTANCE_DEPTH`] levels.
//!
//! ## Instance paths
//! A [`Hit`] names the top-level instance it is in (`instance`) and the geometry in the
//! innermost placed scene (`geom`). Where instances nest, the instances between them come from
//! the path queries, which return an [`InstancePath`] beside each hit (Embree's `instID` stack):
//! [`Scene::intersect_path`], [`Scene::intersect_all_paths`], [`Scene::intersect_path_batch_into`]
//! and [`Scene::closest_point_path`], each with the same hits as its plain twin. The plain
//! queries carry no path: in a scene whose instances do not nest (nearly every scene) their walks
//! keep only the top-level instance with each candidate hit, which a batch writes and copies for
//! every ray; where instances nest, finishing a hit needs every transform on its path, and the
//! walks keep the whole path for both kinds of query.
//!
//! ## Precision far from the origin
//! The meshes are stored relative to a frame origin `c` ([`frame_origin`]: per axis 0 near the
//! world origin, else the centre of their common box rounded to the ulp of its largest
//! coordinate), for which `v_local = v - c` is exact in `f32` for every point of the box; their BVH
//! is built in that frame. A query subtracts `c` from the ray origin once per ray (exactly, for an
//! origin inside the box); the watertight kernel then works with small coordinates, so a mesh at
//! 1e5..1e6 is hit with the same `t`, triangle and barycentrics as the same mesh at the origin. The
//! hit point is rebuilt as `c + (v0 + u·(v1 - v0) + v·(v2 - v0))` from the local vertices: its
//! error is a few ulps of the coordinates, not of the ray length. Spheres are tested with the
//! quadratic kernel ([`crate::geom::sphere::sphere_quadratic`]), which forms `origin - centre` once and
//! avoids the discriminant's cancellation, with the same property.
//!
//! ## Query rules
//! - The `t` range is the ray's `[t_min, t_max]` (inclusive).
//! - **Closest hit** ([`Scene::intersect`]) and **any hit** ([`Scene::occluded`]) use closed edges
//!   ([`EdgeRule::Closed`]): a ray through a shared edge or vertex hits every triangle that has it, so
//!   a closed mesh is never missed. Ties at equal `t` go to the smallest
//!   `(top-level geometry id, geometry id, primitive id)`, where the top-level id is the instance's for
//!   instanced hits (where instances nest, the instance path is compared after the top-level id, a
//!   path before its extensions): the answer never depends on traversal order or threads.
//! - **All hits** ([`Scene::intersect_all`]) and **counts** ([`Scene::count_intersections`]) use
//!   half-open edges ([`EdgeRule::HalfOpen`]): a point exactly on an edge or vertex shared by
//!   consistently wound triangles belongs to exactly one of them, so a ray crosses a closed mesh's
//!   surface the right number of times and inside/outside parity works (odd from inside, even from
//!   outside). Every sphere crossing in range counts: entry and exit (a tangent ray reports its double
//!   root twice, keeping parity). Hits are sorted by `t`, ties as above.
//! - [`QueryOptions`]: back-face culling (triangles: the side the normal `(v1-v0)×(v2-v0)` faces away
//!   from; spheres: the exit crossing), a ray mask (a geometry is considered when
//!   `geometry.mask & mask != 0`; for instances both the instance's and the inner geometry's masks
//!   must pass), and a filter called with each candidate [`Hit`] and its [`InstancePath`] (return
//!   `false` to skip it).
//! - Rays that are not [`Ray::is_valid`] (NaN or infinite components, zero direction, empty range)
//!   hit nothing.
//! - Mirroring instances (negative determinant) flip the winding: the reported normal is the world
//!   winding normal `(v1-v0)×(v2-v0)` of the transformed vertices (`-M⁻ᵀn`), and culling uses it, so an
//!   instance behaves exactly like a pre-transformed copy of its meshes. Sphere normals point outwards.
//!
//! [`Bvh`]: crate::bvh::Bvh
//! [`Ray`]: crate::Ray
//! [`Ray::is_valid`]: crate::Ray::is_valid
//! [`EdgeRule::Closed`]: crate::geom::triangle::EdgeRule::Closed
//! [`EdgeRule::HalfOpen`]: crate::geom::triangle::EdgeRule::HalfOpen

mod builder;
mod error;
pub mod file;
mod finish;
mod geometry;
mod hit;
mod mesh_bvh;
mod order;
mod pages;
mod passes;
pub mod point;
mod query;
mod refit;
pub mod shapes;
mod traverse;
pub mod winding;

use glam::{Affine3A, Mat3A, Vec3};

pub use builder::SceneBuilder;
pub use error::BuildError;
pub use file::SceneFileError;
pub use geometry::{BoundingSphere, Geometry, Instance, Spheres, TriMesh};
pub use hit::{Crossing, Hit, HitFilter, InstancePath, QueryOptions, MAX_INSTANCE_DEPTH};
pub use point::{ClosestPoint, InsideMethod, PointCandidate, PointPrim};

pub(crate) use mesh_bvh::MeshBvh;

use crate::bvh::{BuildConfig, Bvh, BvhStats, ValidationError};
use crate::geom::triangle::is_degenerate;
use crate::simd::{Tri4, LANES};
use crate::Aabb;

/// A built scene: geometries, their acceleration structures and the top-level BVH. Immutable except
/// for [`Scene::update_mesh_vertices`]; `Send + Sync`, so one scene serves many threads.
#[derive(Clone, Debug)]
pub struct Scene {
    geometries: Vec<Geometry>,
    accels: Vec<Accel>,
    /// Every triangle of the scene's meshes in one BVH (`None` without triangles).
    meshes: Option<MeshAccel>,
    /// Top-level BVH; its primitive `i` is `top_items[i]`.
    top: Bvh,
    top_items: Vec<TopItem>,
    /// World boxes (padded) of `top_items`, as built.
    top_boxes: Vec<Aabb>,
    bounds: Aabb,
    config: BuildConfig,
    /// The most instances between this scene and a primitive (0: no instances; at most
    /// [`MAX_INSTANCE_DEPTH`]).
    instance_depth: u8,
    /// A triangle may be reached through several leaves, here or in an instanced scene
    /// ([`MeshAccel::repeats`]): queries that report every hit keep one per primitive.
    repeats: bool,
}

// One scene serves many threads (batches, instances shared through `Arc`).
const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Scene>();
};

/// Per-geometry acceleration data.
#[derive(Clone, Debug)]
enum Accel {
    /// The mesh is a part of the scene's [`MeshAccel`].
    Mesh,
    Spheres(SpheresAccel),
    Instance(InstanceAccel),
}

/// What the top-level BVH holds: the scene's meshes (one item, their shared tree) or one sphere set
/// or instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TopItem {
    Meshes,
    Geometry(u32),
}

/// The meshes of a [`MeshAccel`]: part `k` is geometry `geoms[k]`, its triangle `p` the scene-wide
/// triangle `starts[k] + p`.
#[derive(Clone, Debug)]
struct MeshParts {
    geoms: Vec<u32>,
    /// `starts[k]`, then the total (one more entry than parts).
    starts: Vec<u32>,
    /// Each part's geometry mask.
    masks: Vec<u32>,
    /// The AND and the OR of the masks: a ray mask that meets `mask_all` lets every part through,
    /// one that misses `mask_any` none.
    mask_all: u32,
    mask_any: u32,
}

impl MeshParts {
    fn new(parts: &[(u32, &TriMesh, u32)]) -> Self {
        let mut starts = vec![0u32];
        for (_, m, _) in parts {
            starts.push(starts[starts.len() - 1] + m.indices.len() as u32);
        }
        let masks: Vec<u32> = parts.iter().map(|&(_, _, mask)| mask).collect();
        Self {
            geoms: parts.iter().map(|&(g, _, _)| g).collect(),
            starts,
            mask_all: masks.iter().fold(u32::MAX, |a, &m| a & m),
            mask_any: masks.iter().fold(0, |a, &m| a | m),
            masks,
        }
    }

    /// The part of scene-wide triangle `global`.
    #[inline(always)]
    fn part_of(&self, global: u32) -> usize {
        if self.geoms.len() == 1 {
            return 0;
        }
        self.starts.partition_point(|&s| s <= global) - 1
    }

    /// Geometry id and triangle index of scene-wide triangle `global`.
    #[inline(always)]
    fn locate(&self, global: u32) -> (u32, u32) {
        let k = self.part_of(global);
        (self.geoms[k], global - self.starts[k])
    }
}

/// The scene's meshes in their local frame (see "Precision far from the origin"), every triangle
/// in BVH order in blocks of four.
#[derive(Clone, Debug)]
struct MeshAccel {
    /// The frame's origin in the scene's space ([`frame_origin`] of the meshes' box).
    offset: Vec3,
    /// Lane `i % 4` of `blocks[i / 4]` is the triangle at position `i` of the BVH order (its
    /// scene-wide number in `ids`, see [`MeshParts`]; [`MeshBvh::PADDING`] for padding), vertices
    /// minus `offset` (padding positions hold degenerate triangles that no leaf covers). The
    /// blocks are the only copy of the ids: the BVH gives its own up ([`MeshBvh::take_prim_ids`]),
    /// 4 bytes per position.
    blocks: Vec<Tri4>,
    bvh: MeshBvh,
    parts: MeshParts,
    /// The winding-number dipoles of the tree's lanes, computed at the first winding query
    /// ([`winding`]).
    dipoles: std::sync::OnceLock<winding::Dipoles>,
    /// Where the tree [`MeshAccel::repeats`] triangles, a bit per position, set where the triangle has already appeared at an
    /// earlier position ([`winding`] counts each triangle once); computed at first use.
    repeated: std::sync::OnceLock<Vec<u64>>,
}

impl MeshAccel {
    /// The tree has spatial splits ([`crate::bvh::spatial`]): a triangle may sit in several
    /// leaves, so `blocks` may hold it at several positions.
    fn repeats(&self) -> bool {
        self.bvh.repeats()
    }

    /// The local triangle at position `slot` of the BVH order.
    #[inline(always)]
    fn tri(&self, slot: usize) -> [Vec3; 3] {
        let block = &self.blocks[slot / LANES];
        let lane = slot % LANES;
        [0, 1, 2].map(|k| block.vertex(k, lane))
    }

    /// The box of the triangle at position `slot` (scene-wide number `global`, of `meshes`, the
    /// parts' meshes), equal to its box in [`mesh_local_box_list`]: from the block, which holds its
    /// local vertices, or from its mesh when the block holds it collapsed (see [`Self::store`]).
    fn slot_box(&self, meshes: &[&TriMesh], slot: usize, global: u32) -> Aabb {
        let [v0, v1, v2] = self.tri(slot);
        if v1 == v0 && v2 == v0 {
            let k = self.parts.part_of(global);
            let prim = global - self.parts.starts[k];
            return Aabb::from_points(local_triangle(meshes[k], prim, self.offset));
        }
        Aabb::from_points([v0, v1, v2])
    }

    /// The id at every position of the BVH order (padding included), read from the blocks.
    fn prim_ids(&self) -> Vec<u32> {
        self.blocks.iter().flat_map(|b| b.ids).collect()
    }

    /// Stores the triangles of `meshes` (the parts' meshes, in part order) in BVH order (`ids`: the
    /// scene-wide number at each position), in the frame centred at `self.offset`.
    ///
    /// A triangle whose local vertices have zero area is stored collapsed onto its first vertex, so
    /// the traversal's kernel (`WatertightRay::test::<false>`) rejects it without asking
    /// [`is_degenerate`] at every hit. Only hits read these vertices back (the surface of a hit), and
    /// a degenerate triangle is never hit.
    fn store(&mut self, meshes: &[&TriMesh], ids: &[u32]) {
        let (parts, offset) = (&self.parts, self.offset);
        self.blocks = fill_each(ids.len().div_ceil(LANES), |b, block| {
            Self::block(parts, offset, meshes, ids, b, block, |_| {})
        });
    }

    /// Fills `block` (whatever it held before), block `b` of [`Self::store`], calling
    /// `check(local vertices)` with each of its triangles as it is read (before a degenerate
    /// one is collapsed).
    ///
    /// Everything stays scalar or in registers from the vertex read to the block's lanes: a
    /// value stored piece by piece and read back whole (a `[Vec3; 3]` on the stack read as
    /// `Vec3A`s, the block's lanes read as rows) stalls on store forwarding, which cost a
    /// quarter of the fill.
    #[inline(always)]
    fn block(
        parts: &MeshParts,
        offset: Vec3,
        meshes: &[&TriMesh],
        ids: &[u32],
        b: usize,
        block: &mut Tri4,
        mut check: impl FnMut(&[Vec3; 3]),
    ) {
        for lane in 0..LANES {
            let p = ids
                .get(b * LANES + lane)
                .copied()
                .unwrap_or(MeshBvh::PADDING);
            if p == MeshBvh::PADDING {
                block.set(lane, [Vec3::ZERO; 3]);
                block.ids[lane] = MeshBvh::PADDING;
                continue;
            }
            let k = parts.part_of(p);
            let tri = local_triangle(meshes[k], p - parts.starts[k], offset);
            check(&tri);
            let [v0, v1, v2] = tri;
            block.set(
                lane,
                if is_degenerate(v0, v1, v2) {
                    [v0; 3]
                } else {
                    tri
                },
            );
            block.ids[lane] = p;
        }
    }
}

/// `[f(0), f(1), …, f(n − 1)]`, computed on all cores (feature `parallel`) straight into the
/// vector (no fill first). Each element depends on its index alone, so the result does not
/// depend on the threads.
pub(crate) fn collect_each<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync + Send) -> Vec<T> {
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        (0..n).into_par_iter().map(f).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        (0..n).map(f).collect()
    }
}

/// `n` elements, element `i` filled in place by `f(i, &mut element)` on all cores (feature
/// `parallel`): for elements that `f` fills rather than returns (a returned value of more than
/// a few words is copied twice on its way into the vector). The vector comes zeroed from the
/// allocator (fresh pages need no writing before `f` writes them; each core maps the pages of
/// the 1 MiB pieces it fills in bulk first, [`pages::populate`]), so `f` writes every field it
/// sets. Each element depends on its index alone, so the result does not depend on the threads.
pub(crate) fn fill_each<T: bytemuck::Zeroable + Send>(
    n: usize,
    f: impl Fn(usize, &mut T) + Sync + Send,
) -> Vec<T> {
    let mut out = bytemuck::zeroed_vec::<T>(n);
    let piece = ((1 << 20) / std::mem::size_of::<T>().max(1)).max(1);
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        // The pieces only group the mapping: their elements are shared out element by element
        // as before, so a vector of one or two pieces still fills on every core.
        out.par_chunks_mut(piece)
            .enumerate()
            .for_each(|(k, elements)| {
                pages::populate(elements);
                elements
                    .par_iter_mut()
                    .enumerate()
                    .for_each(|(i, x)| f(k * piece + i, x));
            });
    }
    #[cfg(not(feature = "parallel"))]
    for (k, elements) in out.chunks_mut(piece).enumerate() {
        pages::populate(elements);
        for (i, x) in elements.iter_mut().enumerate() {
            f(k * piece + i, x);
        }
    }
    out
}

/// `(a(), b())`, the two on two cores when one is free (feature `parallel`).
pub(crate) fn join<A: Send, B: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    #[cfg(feature = "parallel")]
    {
        rayon::join(a, b)
    }
    #[cfg(not(feature = "parallel"))]
    {
        (a(), b())
    }
}

#[derive(Clone, Debug)]
struct SpheresAccel {
    bvh: Bvh,
}

#[derive(Clone, Copy, Debug)]
struct InstanceAccel {
    object_from_world: Affine3A,
    /// The inverse transpose of the linear part of `world_from_object`.
    normal_from_object: Mat3A,
    /// The transform mirrors (negative determinant): triangle winding flips.
    mirrored: bool,
}

/// A BVH of a scene failed [`Bvh::validate`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("BVH of {} is broken: {error}", match .geom { Some(g) => format!("geometry {g}"), None => "the top level".to_string() })]
pub struct InvalidBvh {
    /// The geometry whose BVH is broken; `None` for the top level.
    pub geom: Option<u32>,
    /// What is broken (in the message, not a chained source, so a report prints it once).
    pub error: ValidationError,
}

/// Relative margin added to every top-level box (`2⁻²⁰ ≈ 1e-6` of the box's largest coordinate
/// magnitude): covers the rounding of transformed instance corners (a 3-term dot product plus a
/// translation, `γ(4) ≈ 2.4e-7` relative) and of the ray's move into a local or object frame, so the
/// top-level test never rejects a geometry that the exact test in its own frame would hit.
pub(crate) const TOP_BOX_PAD: f32 = 1.0 / (1 << 20) as f32;

pub(crate) fn pad_box(b: Aabb) -> Aabb {
    if b.is_empty() {
        return b;
    }
    let magnitude = b.min.abs().max(b.max.abs()).max_element();
    let pad = Vec3::splat(magnitude * TOP_BOX_PAD);
    Aabb::new(b.min - pad, b.max + pad)
}

impl Scene {
    /// The world box of everything in the scene.
    pub fn bounds(&self) -> Aabb {
        self.bounds
    }

    /// Number of geometries (ids are `0..num_geometries()`).
    pub fn num_geometries(&self) -> usize {
        self.geometries.len()
    }

    /// Geometry `id`, or `None` when there is none.
    pub fn geometry(&self, id: u32) -> Option<&Geometry> {
        self.geometries.get(id as usize)
    }

    /// The name of geometry `id` (`None` when it has none or does not exist).
    pub fn geometry_name(&self, id: u32) -> Option<&str> {
        self.geometry(id)?.name()
    }

    /// Triangles stored in the scene's meshes (instances are not counted again).
    pub fn num_triangles(&self) -> usize {
        self.geometries
            .iter()
            .map(|g| match g {
                Geometry::Mesh(m) => m.num_triangles(),
                _ => 0,
            })
            .sum()
    }

    /// The BVH settings the scene was built with.
    pub fn config(&self) -> BuildConfig {
        self.config
    }

    /// `true` when some geometry is an [`Instance`].
    pub fn has_instances(&self) -> bool {
        self.instance_depth > 0
    }

    /// The most instances between this scene and a primitive: 0 without instances, 1 when the
    /// instances place scenes of meshes and spheres, more when instances nest (at most
    /// [`MAX_INSTANCE_DEPTH`]).
    pub fn instance_depth(&self) -> usize {
        self.instance_depth as usize
    }

    /// The scene that holds the primitive of a hit reached through instances `path` (this
    /// scene for an empty path); `None` when the path does not lead through instances of it.
    pub fn placed_scene(&self, path: &InstancePath) -> Option<&Scene> {
        let mut scene = self;
        for &id in path.as_slice() {
            match scene.geometries.get(id as usize)? {
                Geometry::Instance(inst) => scene = &inst.scene,
                _ => return None,
            }
        }
        Some(scene)
    }

    /// Statistics of the top-level BVH (over geometries).
    pub fn top_level_stats(&self) -> BvhStats {
        self.top.stats()
    }

    /// Statistics of the BVH of mesh or sphere set `id` (`None` for instances and unknown ids).
    /// The scene's meshes share one BVH: for a mesh, its statistics.
    pub fn geometry_stats(&self, id: u32) -> Option<BvhStats> {
        match self.accels.get(id as usize)? {
            Accel::Mesh => self.meshes.as_ref().map(|m| m.bvh.stats()),
            Accel::Spheres(s) => Some(s.bvh.stats()),
            Accel::Instance(_) => None,
        }
    }

    /// Heap bytes of the acceleration data (BVHs and the mesh copies in BVH order), not counting
    /// the geometries' own vertex and index buffers nor instanced scenes.
    pub fn accel_memory_bytes(&self) -> usize {
        let mut bytes = self.top.stats().memory_bytes;
        if let Some(m) = &self.meshes {
            bytes += m.bvh.stats().memory_bytes
                + m.blocks.capacity() * std::mem::size_of::<Tri4>()
                + (m.parts.geoms.len() * 3 + 1) * std::mem::size_of::<u32>();
        }
        for a in &self.accels {
            if let Accel::Spheres(s) = a {
                bytes += s.bvh.stats().memory_bytes;
            }
        }
        bytes
    }

    /// Runs [`Bvh::validate`] on every BVH of the scene (top level, the meshes', sphere sets)
    /// against boxes recomputed from the geometry. A broken mesh BVH is reported for the first
    /// mesh (they share it).
    pub fn validate(&self) -> Result<(), InvalidBvh> {
        self.top
            .validate(&self.top_boxes)
            .map_err(|error| InvalidBvh { geom: None, error })?;
        if let Some(acc) = &self.meshes {
            let meshes = self.mesh_parts();
            acc.bvh
                .validate(&acc.prim_ids(), &mesh_local_box_list(&meshes, acc.offset))
                .map_err(|error| InvalidBvh {
                    geom: Some(acc.parts.geoms[0]),
                    error,
                })?;
        }
        for (id, (g, a)) in self.geometries.iter().zip(&self.accels).enumerate() {
            let result = match (g, a) {
                (Geometry::Spheres(s), Accel::Spheres(acc)) => acc.bvh.validate(&sphere_boxes(s)),
                _ => Ok(()),
            };
            result.map_err(|error| InvalidBvh {
                geom: Some(id as u32),
                error,
            })?;
        }
        Ok(())
    }
}

/// The origin of the meshes' local frame for their common box `bounds`: per axis, 0 when the box
/// lies within twice its extent of the world origin on that axis, else the box's centre rounded
/// to a multiple of `q`, the ulp of the box's largest coordinate on that axis. Then every point
/// `x` of the box moves into the frame exactly: `x − c` is a multiple of `ulp(x)` (`c` is a
/// multiple of `q ≥ ulp(x)`, both powers of two) no larger than the box (at most
/// `extent/2 + q/2 < |x|`, which `f32` holds at the granularity `ulp(x)`). So the vertices
/// stored in the frame are the vertices, and a ray that starts inside the box (a bounce leaving a
/// surface) keeps its origin bit for bit: with the box's centre itself, moving an origin next to
/// a wall far from the centre rounded it by up to half an ulp of the centre's magnitude (`3e-5` at
/// a few hundred units), as much as the spawn offset of a small coordinate, and could put it on
/// the wrong side of the wall. Far from the world origin the frame still keeps the coordinates
/// small (a mesh at `1e6` is walked in coordinates the size of the mesh).
fn frame_origin(bounds: &Aabb) -> Vec3 {
    if bounds.is_empty() {
        return Vec3::ZERO;
    }
    let axis = |lo: f32, hi: f32| -> f32 {
        let (centre, extent) = (lo * 0.5 + hi * 0.5, hi - lo);
        // NaN compares false: such a box gets the world origin too.
        if !centre.is_finite() || centre.abs() < 2.0 * extent || extent.is_nan() {
            return 0.0;
        }
        let top = lo.abs().max(hi.abs());
        // ulp(top): the distance to the next float up, a power of two.
        let q = f32::from_bits(top.to_bits() + 1) - top;
        (centre / q).round() * q
    };
    Vec3::new(
        axis(bounds.min.x, bounds.max.x),
        axis(bounds.min.y, bounds.max.y),
        axis(bounds.min.z, bounds.max.z),
    )
}

/// Triangle `prim` of `mesh` in the frame centred at `offset` (indices must have been checked).
#[inline]
fn local_triangle(mesh: &TriMesh, prim: u32, offset: Vec3) -> [Vec3; 3] {
    mesh.indices[prim as usize].map(|i| mesh.vertices[i as usize] - offset)
}

/// The triangles of meshes in scene-wide order (part by part; indices must have been checked).
struct TriangleList<'a> {
    meshes: &'a [&'a TriMesh],
    /// `starts[k]`: the scene-wide index of part `k`'s first triangle; the last entry is the count.
    starts: Vec<usize>,
}

impl<'a> TriangleList<'a> {
    fn new(meshes: &'a [&'a TriMesh]) -> Self {
        let mut starts = vec![0usize];
        for m in meshes {
            starts.push(starts[starts.len() - 1] + m.indices.len());
        }
        Self { meshes, starts }
    }

    fn len(&self) -> usize {
        self.starts[self.meshes.len()]
    }

    /// The box of triangle `i` in the frame centred at `offset`.
    #[inline]
    fn local_box(&self, i: usize, offset: Vec3) -> Aabb {
        Aabb::from_points(self.local_triangle(i, offset))
    }

    /// Triangle `i` in the frame centred at `offset`.
    #[inline]
    fn local_triangle(&self, i: usize, offset: Vec3) -> [Vec3; 3] {
        let k = self.starts.partition_point(|&s| s <= i) - 1;
        local_triangle(self.meshes[k], (i - self.starts[k]) as u32, offset)
    }
}

/// The boxes of the meshes' triangles, in scene-wide order (part by part), in the frame centred at
/// `offset` (indices must have been checked), on all cores (feature `parallel`): what validation
/// and refit need. The build asks for each box as it makes its references ([`TriangleList`]).
fn mesh_local_box_list(meshes: &[&TriMesh], offset: Vec3) -> Vec<Aabb> {
    let triangles = TriangleList::new(meshes);
    collect_each(triangles.len(), |i| triangles.local_box(i, offset))
}

impl Scene {
    /// The meshes of [`Scene::meshes`], in part order.
    fn mesh_parts(&self) -> Vec<&TriMesh> {
        match &self.meshes {
            Some(acc) => self.mesh_parts_of(acc),
            None => Vec::new(),
        }
    }

    /// The meshes of `accel`'s parts (the scene's mesh tree, held apart while it is rebuilt).
    fn mesh_parts_of(&self, accel: &MeshAccel) -> Vec<&TriMesh> {
        accel
            .parts
            .geoms
            .iter()
            .map(|&g| match &self.geometries[g as usize] {
                Geometry::Mesh(m) => m,
                _ => unreachable!("parts are meshes"),
            })
            .collect()
    }

    /// The world box of the scene's meshes.
    fn meshes_bounds(&self) -> Aabb {
        self.mesh_parts()
            .iter()
            .fold(Aabb::EMPTY, |b, m| b.union(m.bounds()))
    }
}

fn sphere_boxes(s: &Spheres) -> Vec<Aabb> {
    (0..s.len()).filter_map(|i| s.sphere_bounds(i)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every point of a box moves into the meshes' frame exactly ([`frame_origin`]), for boxes
    /// near and far from the world origin at magnitudes 1e-6..1e6, flat boxes included: the f32
    /// difference equals the f64 one. The box centre itself (the frame before) fails this.
    #[test]
    fn points_of_the_box_move_into_the_frame_exactly() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(0xF4A3E);
        let (mut checked, mut centre_inexact) = (0, 0);
        for _ in 0..4000 {
            let magnitude = 10f32.powf(rng.gen_range(-6.0..6.0));
            let extent = magnitude * 10f32.powf(rng.gen_range(-4.0..0.5)) * rng.gen_range(0.0..1.0);
            let lo = Vec3::new(
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
            ) * magnitude;
            let size = Vec3::new(rng.gen(), rng.gen(), rng.gen()) * extent;
            let bounds = Aabb::new(lo, lo + size);
            let c = frame_origin(&bounds);
            for _ in 0..8 {
                let t = Vec3::new(rng.gen(), rng.gen(), rng.gen());
                let x = (bounds.min + (bounds.max - bounds.min) * t).clamp(bounds.min, bounds.max);
                let exact = x.as_dvec3() - c.as_dvec3();
                assert_eq!((x - c).as_dvec3(), exact, "{x} in {bounds:?}, frame at {c}");
                let centre = bounds.center();
                centre_inexact +=
                    usize::from((x - centre).as_dvec3() != x.as_dvec3() - centre.as_dvec3());
                checked += 1;
            }
        }
        // The control: the old frame (the box centre) rounds hundreds of these points.
        assert!(centre_inexact > 100, "{centre_inexact} of {checked}");
    }

    /// A wavy grid of `2·n²` triangles, listed in a scrambled order.
    fn grid(n: u32) -> TriMesh {
        let vertices = (0..=n)
            .flat_map(|j| {
                (0..=n).map(move |i| {
                    let (x, y) = (i as f32, j as f32);
                    Vec3::new(x, y, (0.7 * x).sin() + (0.3 * y).cos())
                })
            })
            .collect();
        let mut indices = Vec::new();
        for j in 0..n {
            for i in 0..n {
                let v = j * (n + 1) + i;
                indices.push([v, v + 1, v + n + 2]);
                indices.push([v, v + n + 2, v + n + 1]);
            }
        }
        // A fixed scramble: the BVH order must not follow the input order.
        let len = indices.len();
        for k in 0..len {
            indices.swap(k, (k * 7919 + 13) % len);
        }
        TriMesh::new(vertices, indices)
    }

    /// No cliffs: a batch does no more node tests than casting its rays one at a time, whatever
    /// their arrangement. Parallel rays from origins scattered over the scene (a directional
    /// light's shadow rays from random points) are not walked as packets, whose bounds would span
    /// the scene; rays whose direction is so small that every reciprocal overflows reach no box.
    /// Counted in node visits, not time; the answers are the single walks'.
    #[test]
    fn batches_do_no_more_work_than_single_rays() {
        use crate::bvh::wide::visits;
        use crate::Ray;
        let mut builder = SceneBuilder::new();
        builder.add_mesh(grid(64));
        let scene = builder.build().expect("a valid mesh");
        let opts = QueryOptions::default();
        let light = Vec3::new(0.3, 0.2, 1.0).normalize();
        // Origins on a lattice over the scene in a scrambled order, so that neighbours in the
        // batch are far apart.
        let n = 4096usize;
        let origin = |k: usize| {
            let s = (k as u64 * 2_654_435_761 % n as u64) as usize;
            Vec3::new((s % 64) as f32, (s / 64) as f32, -3.0)
        };
        let shadow: Vec<Ray> = (0..n).map(|k| Ray::new(origin(k), light)).collect();
        // The same rays in lattice order: neighbours in the batch are neighbours in the scene,
        // which a packet walk serves well.
        let ordered: Vec<Ray> = (0..n)
            .map(|s| Ray::new(Vec3::new((s % 64) as f32, (s / 64) as f32, -3.0), light))
            .collect();
        // Directions with every component denormal: `t` of any hit overflows, so all miss.
        let tiny: Vec<Ray> = (0..n).map(|k| Ray::new(origin(k), light * 1e-40)).collect();
        for (name, rays, at_most) in [
            ("scattered", &shadow, 1.0),
            ("ordered", &ordered, 1.25),
            ("denormal", &tiny, 1.0),
        ] {
            visits::take();
            let singles: Vec<Option<Hit>> = rays
                .iter()
                .map(|r| scene.intersect_with(r, &opts))
                .collect();
            let single_visits = visits::take();
            let mut batch = vec![None; rays.len()];
            scene.intersect_into(rays, &opts, &mut batch);
            let batch_visits = visits::take();
            assert_eq!(batch, singles, "{name}");
            assert!(
                batch_visits as f64 <= at_most * single_visits as f64,
                "{name}: {batch_visits} node visits in a batch, {single_visits} one by one"
            );
            if name == "denormal" {
                assert!(singles.iter().all(Option::is_none));
                assert!(
                    single_visits <= 2 * n as u64,
                    "{single_visits} visits for {n} rays"
                );
            } else {
                assert!(
                    singles.iter().filter(|h| h.is_some()).count() > n / 2,
                    "{name}"
                );
            }
        }
    }

    /// A scene of many meshes walks one tree over all their triangles: the same tree, node for
    /// node, as the same triangles given as one mesh, so it does the same work per ray, and each
    /// hit names its own geometry and triangle. A mask that hides some of the meshes hides their
    /// triangles inside the shared tree.
    #[test]
    fn many_meshes_walk_one_tree_like_one_mesh() {
        use crate::bvh::wide::visits;
        use crate::Ray;
        let whole = grid(40);
        // The grid's triangles cut into 7 meshes of uneven sizes, each with all the vertices.
        let cuts = [0, 100, 101, 900, 1500, 2000, 3100, whole.indices().len()];
        let mut many = SceneBuilder::new();
        for (k, w) in cuts.windows(2).enumerate() {
            let part = TriMesh::new(
                whole.vertices().to_vec(),
                whole.indices()[w[0]..w[1]].to_vec(),
            );
            let id = many.add_mesh(part);
            many.set_mask(id, 1 << (k % 3));
        }
        let many = many.build().expect("valid meshes");
        let mut one = SceneBuilder::new();
        one.add_mesh(whole.clone());
        let one = one.build().expect("a valid mesh");
        assert_eq!(many.geometry_stats(0), one.geometry_stats(0));
        assert_eq!(many.geometry_stats(6), one.geometry_stats(0));
        let rays: Vec<Ray> = (0..2000)
            .map(|k| {
                let (x, y) = ((k % 50) as f32 * 0.8 + 0.1, (k / 50) as f32 + 0.3);
                Ray::new(Vec3::new(x, y, 5.0), Vec3::new(0.05, -0.02, -1.0))
            })
            .collect();
        let opts = QueryOptions::default();
        visits::take();
        let hits_one: Vec<Option<Hit>> =
            rays.iter().map(|r| one.intersect_with(r, &opts)).collect();
        let visits_one = visits::take();
        let hits_many: Vec<Option<Hit>> =
            rays.iter().map(|r| many.intersect_with(r, &opts)).collect();
        let visits_many = visits::take();
        assert_eq!(visits_many, visits_one);
        let mut hit = 0;
        for (a, b) in hits_one.iter().zip(&hits_many) {
            let (Some(a), Some(b)) = (a, b) else {
                assert_eq!(a.is_some(), b.is_some());
                continue;
            };
            hit += 1;
            let k = cuts.partition_point(|&c| c as u32 <= a.prim) - 1;
            assert_eq!((b.geom, b.prim), (k as u32, a.prim - cuts[k] as u32));
            assert_eq!((b.t, b.point, b.normal), (a.t, a.point, a.normal));
        }
        assert!(hit > 1500, "{hit} hits");
        // Mask 0b001: only meshes 0, 3 and 6; the answers are brute force's.
        let masked = QueryOptions {
            mask: 0b001,
            ..QueryOptions::default()
        };
        let mut shown = 0;
        for r in &rays {
            let h = many.intersect_with(r, &masked);
            assert_eq!(h, many.intersect_brute_force(r, &masked));
            if let Some(h) = h {
                assert_eq!(h.geom % 3, 0);
                shown += 1;
            }
        }
        assert!(shown > 100, "{shown} hits on the shown meshes");
    }

    /// A mesh keeps one copy of its triangles' ids, in its blocks: the BVH gives its own up, every
    /// triangle's id sits once beside its own vertices, and the memory count is the tree's nodes
    /// and the blocks, nothing else.
    #[test]
    fn mesh_ids_live_in_the_blocks_only() {
        let mesh = grid(17);
        for config in [
            BuildConfig::BALANCED,
            BuildConfig {
                compact: true,
                ..BuildConfig::BALANCED
            },
        ] {
            let accel = builder::build_mesh_accel(&[(0, &mesh, u32::MAX)], config);
            let node_bytes = match &accel.bvh {
                MeshBvh::Wide(b) => {
                    assert!(b.prim_ids().is_empty());
                    std::mem::size_of_val(b.nodes())
                }
                MeshBvh::Quantized(b) => {
                    assert!(b.prim_ids().is_empty());
                    std::mem::size_of_val(b.nodes())
                }
            };
            assert_eq!(accel.bvh.stats().memory_bytes, node_bytes);
            let ids = accel.prim_ids();
            let mut seen = vec![false; mesh.indices().len()];
            for (slot, &id) in ids.iter().enumerate() {
                if id == MeshBvh::PADDING {
                    assert_eq!(accel.tri(slot), [Vec3::ZERO; 3]);
                    continue;
                }
                assert!(
                    !std::mem::replace(&mut seen[id as usize], true),
                    "id {id} twice"
                );
                assert_eq!(accel.tri(slot), local_triangle(&mesh, id, accel.offset));
            }
            assert!(seen.iter().all(|&s| s), "every triangle stored");
            let boxes = mesh_local_box_list(&[&mesh], accel.offset);
            accel.bvh.validate(&ids, &boxes).unwrap();
        }
    }
}
