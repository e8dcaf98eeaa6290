//! [`SceneBuilder`]: collects geometries, checks them and builds the BVHs.

use std::sync::Arc;

use glam::{Affine3A, Vec3};

use super::MeshBvh;
use super::MAX_INSTANCE_DEPTH;
use super::{
    pad_box, sphere_boxes, Accel, BuildError, Geometry, Instance, InstanceAccel, MeshAccel,
    MeshParts, Scene, Spheres, SpheresAccel, TopItem, TriMesh, TriangleList,
};
use crate::bvh::{BuildConfig, Bvh};
use crate::Aabb;

/// Collects geometries (ids 0, 1, 2, … in insertion order) and builds a [`Scene`].
///
/// ```
/// use std::sync::Arc;
/// use raypick::{glam::{Affine3A, Vec3}, Ray, SceneBuilder, TriMesh};
/// let tri = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]);
/// let mut part = SceneBuilder::new();
/// part.add_mesh(tri);
/// let part = Arc::new(part.build().unwrap());
/// let mut world = SceneBuilder::new();
/// let a = world.add_instance(part.clone(), Affine3A::from_translation(Vec3::new(0.0, 0.0, -2.0)));
/// let b = world.add_instance(part, Affine3A::from_translation(Vec3::new(0.0, 0.0, -4.0)));
/// world.set_name(b, "far copy");
/// let scene = world.build().unwrap();
/// let hit = scene.intersect(&Ray::new(Vec3::new(0.2, 0.2, 0.0), Vec3::NEG_Z)).unwrap();
/// assert_eq!((hit.instance, hit.geom, hit.t), (Some(a), 0, 2.0));
/// assert_eq!(scene.geometry_name(b), Some("far copy"));
/// ```
#[derive(Debug, Default)]
pub struct SceneBuilder {
    geometries: Vec<Geometry>,
    config: BuildConfig,
    /// The first `set_name`/`set_mask` call with an unknown id, reported by `build`.
    unknown: Option<u32>,
}

impl SceneBuilder {
    /// An empty builder with the default [`BuildConfig`].
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty builder with the given BVH settings (for every BVH of the scene).
    pub fn with_config(config: BuildConfig) -> Self {
        Self {
            config,
            ..Self::default()
        }
    }

    fn push(&mut self, g: Geometry) -> u32 {
        self.geometries.push(g);
        (self.geometries.len() - 1) as u32
    }

    /// Adds a triangle mesh; returns its geometry id. Checked in [`SceneBuilder::build`].
    pub fn add_mesh(&mut self, mesh: TriMesh) -> u32 {
        self.push(Geometry::Mesh(mesh))
    }

    /// Adds a sphere set; returns its geometry id.
    pub fn add_spheres(&mut self, spheres: Spheres) -> u32 {
        self.push(Geometry::Spheres(spheres))
    }

    /// Places a whole built scene with `world_from_object` (rotation, non-uniform and negative
    /// scale allowed; it must be invertible). Also how one mesh is instanced many times: build a
    /// small scene holding it, wrap it in an `Arc`, add it several times. The placed scene may hold
    /// instances itself, up to [`MAX_INSTANCE_DEPTH`] levels in all. Returns the instance's
    /// geometry id.
    pub fn add_instance(&mut self, scene: Arc<Scene>, world_from_object: Affine3A) -> u32 {
        self.push(Geometry::Instance(Instance {
            scene,
            world_from_object,
            name: None,
            mask: u32::MAX,
        }))
    }

    /// Names geometry `geom` (e.g. the glTF node name of an instance). An unknown id makes
    /// [`SceneBuilder::build`] fail with [`BuildError::UnknownGeometry`].
    pub fn set_name(&mut self, geom: u32, name: impl Into<String>) {
        match self.geometries.get_mut(geom as usize) {
            Some(g) => g.set_name(name.into()),
            None => {
                self.unknown.get_or_insert(geom);
            }
        }
    }

    /// Sets the mask of geometry `geom` (the way to give an instance a mask).
    pub fn set_mask(&mut self, geom: u32, mask: u32) {
        match self.geometries.get_mut(geom as usize) {
            Some(g) => g.set_mask(mask),
            None => {
                self.unknown.get_or_insert(geom);
            }
        }
    }

    /// Number of geometries added so far.
    pub fn num_geometries(&self) -> usize {
        self.geometries.len()
    }

    /// Checks every geometry and builds the BVHs.
    ///
    /// # Errors
    /// A [`BuildError`] naming the first offending geometry (id and name) and element: an index out
    /// of range, a NaN or infinite vertex or centre, a negative, NaN or infinite radius, mismatched
    /// centre and radius counts, a non-invertible instance transform, a nested instance, or an
    /// unknown id given to `set_name`/`set_mask`.
    pub fn build(self) -> Result<Scene, BuildError> {
        if let Some(geom) = self.unknown {
            return Err(BuildError::UnknownGeometry {
                geom,
                count: self.geometries.len(),
            });
        }
        let config = self.config;
        let mut accels = Vec::with_capacity(self.geometries.len());
        let mut parts = Vec::new();
        for (id, g) in self.geometries.iter().enumerate() {
            accels.push(prepare(id as u32, g, config, &mut parts)?);
        }
        check_total(&self.geometries, &parts)?;
        // Every mesh in one tree; the top level holds it as one item.
        let meshes = (!parts.is_empty()).then(|| build_mesh_accel(&parts, config));
        let meshes_bounds = parts
            .iter()
            .fold(Aabb::EMPTY, |b, (_, m, _)| b.union(m.bounds()));
        let (top_items, top_boxes, bounds) = top_level(&self.geometries, meshes_bounds);
        let centroids: Vec<Vec3> = top_boxes.iter().map(Aabb::center).collect();
        let top = Bvh::build(&top_boxes, &centroids, one_at_a_time(config));
        let instance_depth = instance_depth(&self.geometries);
        let repeats = repeats(meshes.as_ref(), &self.geometries);
        drop(parts);
        Ok(Scene {
            geometries: self.geometries,
            accels,
            meshes,
            top,
            top_items,
            top_boxes,
            bounds,
            config,
            instance_depth,
            repeats,
        })
    }
}

fn name_of(g: &Geometry) -> String {
    g.name().unwrap_or_default().to_string()
}

/// `config` for a BVH whose leaves test one primitive at a time (spheres, the top level): only
/// meshes test blocks of four ([`BuildConfig::block_size`]).
fn one_at_a_time(config: BuildConfig) -> BuildConfig {
    BuildConfig {
        block_size: 1,
        ..config
    }
}

/// Checks one geometry and builds its acceleration data; a mesh joins `parts` (its id, the mesh
/// and its mask), whose shared tree the caller builds.
fn prepare<'g>(
    id: u32,
    g: &'g Geometry,
    config: BuildConfig,
    parts: &mut Vec<(u32, &'g TriMesh, u32)>,
) -> Result<Accel, BuildError> {
    let instance = check_geometry(id, g)?;
    match g {
        Geometry::Mesh(m) => {
            parts.push((id, m, g.mask()));
            Ok(Accel::Mesh)
        }
        Geometry::Spheres(s) => {
            let boxes = sphere_boxes(s);
            let bvh = Bvh::build(&boxes, &s.centers, one_at_a_time(config));
            Ok(Accel::Spheres(SpheresAccel { bvh }))
        }
        Geometry::Instance(_) => Ok(Accel::Instance(instance.expect("checked instance"))),
    }
}

/// Checks geometry `id` as [`SceneBuilder::build`] does (indices, finite values, radii, an
/// instance's transform and nesting); for an instance, the data its walk needs, computed from
/// its transform.
pub(super) fn check_geometry(id: u32, g: &Geometry) -> Result<Option<InstanceAccel>, BuildError> {
    match g {
        Geometry::Mesh(m) => check_mesh(id, g, m).map(|()| None),
        Geometry::Spheres(s) => check_spheres(id, g, s).map(|()| None),
        Geometry::Instance(inst) => {
            let depth = 1 + inst.scene.instance_depth();
            if depth > MAX_INSTANCE_DEPTH {
                return Err(BuildError::TooDeep {
                    geom: id,
                    name: name_of(g),
                    depth,
                });
            }
            instance_accel(&inst.world_from_object)
                .ok_or_else(|| BuildError::NonInvertibleTransform {
                    geom: id,
                    name: name_of(g),
                    determinant: determinant_f64(&inst.world_from_object),
                })
                .map(Some)
        }
    }
}

/// Scene-wide triangle numbers are `u32`, `u32::MAX` the padding: the meshes `parts` together
/// must have fewer than `u32::MAX` triangles.
pub(super) fn check_total(
    geometries: &[Geometry],
    parts: &[(u32, &TriMesh, u32)],
) -> Result<(), BuildError> {
    let mut total = 0usize;
    for &(id, m, _) in parts {
        total += m.indices.len();
        if total >= u32::MAX as usize {
            return Err(BuildError::TooManyPrimitives {
                geom: id,
                name: name_of(&geometries[id as usize]),
                count: total,
            });
        }
    }
    Ok(())
}

/// What the top level of a scene of `geometries` holds (the meshes as one item, then each sphere
/// set and instance with a non-empty box, in id order), their padded world boxes, and the
/// scene's box, given the meshes' common box `meshes_bounds`. A function of the geometries
/// alone, so a loaded scene recomputes what its build computed.
pub(super) fn top_level(
    geometries: &[Geometry],
    meshes_bounds: Aabb,
) -> (Vec<TopItem>, Vec<Aabb>, Aabb) {
    let mut top_items = Vec::new();
    let mut top_boxes = Vec::new();
    let mut bounds = Aabb::EMPTY;
    if !meshes_bounds.is_empty() {
        bounds = meshes_bounds;
        top_items.push(TopItem::Meshes);
        top_boxes.push(pad_box(meshes_bounds));
    }
    for (id, g) in geometries.iter().enumerate() {
        if matches!(g, Geometry::Mesh(_)) {
            continue;
        }
        let b = g.bounds();
        if b.is_empty() {
            continue;
        }
        bounds = bounds.union(b);
        top_items.push(TopItem::Geometry(id as u32));
        top_boxes.push(pad_box(b));
    }
    (top_items, top_boxes, bounds)
}

/// `true` when some geometry is an instance.
/// The most instances between a scene of `geometries` and a primitive (checked instances: each
/// placed scene's depth is below [`MAX_INSTANCE_DEPTH`]).
/// Whether a triangle of the scene (its meshes', or an instanced scene's) may sit in several
/// leaves ([`Scene::repeats`]).
pub(super) fn repeats(meshes: Option<&MeshAccel>, geometries: &[Geometry]) -> bool {
    meshes.is_some_and(MeshAccel::repeats)
        || geometries
            .iter()
            .any(|g| matches!(g, Geometry::Instance(inst) if inst.scene.repeats))
}

pub(super) fn instance_depth(geometries: &[Geometry]) -> u8 {
    geometries
        .iter()
        .filter_map(|g| match g {
            Geometry::Instance(inst) => Some(1 + inst.scene.instance_depth()),
            _ => None,
        })
        .max()
        .unwrap_or(0) as u8
}

pub(super) fn check_vertices(id: u32, g: &Geometry, vertices: &[Vec3]) -> Result<(), BuildError> {
    // Every coordinate's exponent below the all-ones one (not infinite, not NaN), in one pass
    // without an early exit, which the compiler vectorises; the search below only names a fault.
    let finite = |x: f32| x.to_bits() & 0x7fff_ffff < 0x7f80_0000;
    if vertices
        .iter()
        .fold(true, |ok, v| ok & finite(v.x) & finite(v.y) & finite(v.z))
    {
        return Ok(());
    }
    if let Some((vertex, &value)) = vertices.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(BuildError::NonFiniteVertex {
            geom: id,
            name: name_of(g),
            vertex,
            value,
        });
    }
    Ok(())
}

fn check_mesh(id: u32, g: &Geometry, m: &TriMesh) -> Result<(), BuildError> {
    check_vertices(id, g, &m.vertices)?;
    if u32::try_from(m.indices.len()).is_err() {
        return Err(BuildError::TooManyPrimitives {
            geom: id,
            name: name_of(g),
            count: m.indices.len(),
        });
    }
    let n = m.vertices.len();
    // The largest index, in one pass without an early exit (vectorised); the search below only
    // names a fault.
    let largest = m.indices.as_flattened().iter().fold(0, |a, &i| a.max(i));
    if (largest as usize) < n {
        return Ok(());
    }
    for (triangle, t) in m.indices.iter().enumerate() {
        if let Some(&index) = t.iter().find(|&&i| i as usize >= n) {
            return Err(BuildError::IndexOutOfRange {
                geom: id,
                name: name_of(g),
                triangle,
                index,
                num_vertices: n,
            });
        }
    }
    Ok(())
}

fn check_spheres(id: u32, g: &Geometry, s: &Spheres) -> Result<(), BuildError> {
    if s.centers.len() != s.radii.len() {
        return Err(BuildError::SphereCountMismatch {
            geom: id,
            name: name_of(g),
            centers: s.centers.len(),
            radii: s.radii.len(),
        });
    }
    if u32::try_from(s.centers.len()).is_err() {
        return Err(BuildError::TooManyPrimitives {
            geom: id,
            name: name_of(g),
            count: s.centers.len(),
        });
    }
    if let Some((sphere, &value)) = s.centers.iter().enumerate().find(|(_, c)| !c.is_finite()) {
        return Err(BuildError::NonFiniteCenter {
            geom: id,
            name: name_of(g),
            sphere,
            value,
        });
    }
    if let Some((sphere, &radius)) = s
        .radii
        .iter()
        .enumerate()
        .find(|(_, &r)| r.is_nan() || r < 0.0 || r.is_infinite())
    {
        return Err(BuildError::InvalidRadius {
            geom: id,
            name: name_of(g),
            sphere,
            radius,
        });
    }
    Ok(())
}

/// The meshes `parts` (geometry id, mesh, mask; checked) in the frame centred on their common box
/// (see the module docs), with one BVH over all their triangles, in BVH order.
pub(super) fn build_mesh_accel(parts: &[(u32, &TriMesh, u32)], config: BuildConfig) -> MeshAccel {
    let meshes: Vec<&TriMesh> = parts.iter().map(|&(_, m, _)| m).collect();
    let bounds = meshes.iter().fold(Aabb::EMPTY, |b, m| b.union(m.bounds()));
    let offset = super::frame_origin(&bounds);
    let triangles = TriangleList::new(&meshes);
    let plain = || {
        MeshBvh::build_by(
            triangles.len(),
            |i| {
                let b = triangles.local_box(i, offset);
                (b, b.center())
            },
            config,
        )
    };
    let mut bvh = if config.spatial_splits && !config.compact {
        // Spatial splits pay where long triangles overlap (architecture) and cost where a
        // room's large walls, floor and ceiling, whole near the root of the plain tree, end up
        // cut into deep pieces that every ray leaving them must walk: measured on the shared
        // scenes, the tree of lower SAH cost was the faster in every case, so both are built
        // and the cheaper kept.
        let binary = crate::bvh::Bvh::build_spatial(
            triangles.len(),
            |i| triangles.local_triangle(i, offset),
            config,
        );
        let split = MeshBvh::Wide(crate::bvh::wide::WideBvh::from_spatial(
            &binary,
            triangles.len(),
            config,
            &|i| triangles.local_box(i as usize, offset),
        ));
        drop(binary);
        let plain = plain();
        if split.stats().sah_cost < plain.stats().sah_cost {
            split
        } else {
            plain
        }
    } else {
        plain()
    };
    let ids = bvh.take_prim_ids();
    let mut accel = MeshAccel {
        offset,
        blocks: Vec::new(),
        bvh,
        parts: MeshParts::new(parts),
        dipoles: std::sync::OnceLock::new(),
        repeated: std::sync::OnceLock::new(),
    };
    accel.store(&meshes, &ids);
    accel
}

/// The determinant of the linear part in `f64` (NaN when an entry or the translation is not
/// finite), for a message that says why the transform cannot be inverted in `f32`.
fn determinant_f64(world_from_object: &Affine3A) -> f64 {
    if !world_from_object.is_finite() {
        return f64::NAN;
    }
    glam::DMat3::from_cols_array(&world_from_object.matrix3.to_cols_array().map(f64::from))
        .determinant()
}

fn instance_accel(world_from_object: &Affine3A) -> Option<InstanceAccel> {
    let det = world_from_object.matrix3.determinant();
    if det == 0.0 || !det.is_finite() || !world_from_object.translation.is_finite() {
        return None;
    }
    let object_from_world = world_from_object.inverse();
    if !object_from_world.matrix3.is_finite() || !object_from_world.translation.is_finite() {
        return None;
    }
    Some(InstanceAccel {
        object_from_world,
        normal_from_object: object_from_world.matrix3.transpose(),
        mirrored: det < 0.0,
    })
}
