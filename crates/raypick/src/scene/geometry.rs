//! The geometries a scene holds: [`TriMesh`], [`Spheres`] and [`Instance`]s of built scenes.

use std::sync::Arc;

use glam::{Affine3A, Vec3, Vec3A};

use super::Scene;
use crate::Aabb;

/// A sphere that holds a geometry (not necessarily the smallest one).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoundingSphere {
    /// Centre.
    pub center: Vec3,
    /// Radius (0 for an empty geometry).
    pub radius: f32,
}

impl BoundingSphere {
    /// The sphere centred on `bounds`' centre through its corners (radius 0, centre 0 when empty).
    pub fn from_box(bounds: &Aabb) -> Self {
        if bounds.is_empty() {
            return Self {
                center: Vec3::ZERO,
                radius: 0.0,
            };
        }
        Self {
            center: bounds.center(),
            radius: bounds.extent().length() * 0.5,
        }
    }
}

/// A triangle mesh: vertices and counter-clockwise-front triangles (see [`crate::geom::triangle`]).
///
/// The arrays are reference-counted: cloning a mesh (to add it to a [`super::SceneBuilder`] while
/// keeping it, or in bindings that keep their own list of geometries) shares them instead of
/// copying; [`Scene::update_mesh_vertices`](super::Scene::update_mesh_vertices) copies on write.
///
/// ```
/// use raypick::{glam::Vec3, TriMesh};
/// let quad = TriMesh::new(
///     vec![Vec3::ZERO, Vec3::X, Vec3::new(1.0, 1.0, 0.0), Vec3::Y],
///     vec![[0, 1, 2], [0, 2, 3]],
/// )
/// .with_name("quad");
/// assert_eq!(quad.num_triangles(), 2);
/// assert_eq!(quad.bounds().max, Vec3::new(1.0, 1.0, 0.0));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TriMesh {
    pub(crate) vertices: Arc<Vec<Vec3>>,
    pub(crate) indices: Arc<Vec<[u32; 3]>>,
    pub(crate) name: Option<String>,
    pub(crate) mask: u32,
}

impl TriMesh {
    /// A mesh from vertices and triangles (indices into `vertices`). Checked by
    /// [`super::SceneBuilder::build`].
    pub fn new(vertices: Vec<Vec3>, indices: Vec<[u32; 3]>) -> Self {
        Self {
            vertices: Arc::new(vertices),
            indices: Arc::new(indices),
            name: None,
            mask: u32::MAX,
        }
    }

    /// Names the mesh (reported in errors and by [`Scene::geometry_name`]).
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets the mask (default `u32::MAX`): queries consider the mesh when `mask & query.mask != 0`.
    #[must_use]
    pub fn with_mask(mut self, mask: u32) -> Self {
        self.mask = mask;
        self
    }

    /// The vertices.
    pub fn vertices(&self) -> &[Vec3] {
        &self.vertices
    }

    /// The triangles.
    pub fn indices(&self) -> &[[u32; 3]] {
        &self.indices
    }

    /// The name, if any.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The mask.
    pub fn mask(&self) -> u32 {
        self.mask
    }

    /// Number of triangles.
    pub fn num_triangles(&self) -> usize {
        self.indices.len()
    }

    /// The vertices of triangle `prim`, or `None` when `prim` or one of its indices is out of range.
    pub fn triangle(&self, prim: u32) -> Option<[Vec3; 3]> {
        let [a, b, c] = *self.indices.get(prim as usize)?;
        Some([
            *self.vertices.get(a as usize)?,
            *self.vertices.get(b as usize)?,
            *self.vertices.get(c as usize)?,
        ])
    }

    /// The box of the referenced vertices (indices out of range and NaN coordinates are
    /// skipped; [`Aabb::EMPTY`] when some axis is left without a coordinate).
    ///
    /// Two passes: a flag per vertex marks the ones the triangles use (plain stores, which do
    /// not wait on each other as read-modify-writes of shared bit words would), then the marked
    /// vertices in order. Much faster than a box grown vertex by vertex in triangle order, whose
    /// reads go at random through the whole vertex array.
    pub fn bounds(&self) -> Aabb {
        let mut used = vec![false; self.vertices.len()];
        for &i in self.indices.as_flattened() {
            if let Some(flag) = used.get_mut(i as usize) {
                *flag = true;
            }
        }
        let (mut min, mut max) = (Vec3A::INFINITY, Vec3A::NEG_INFINITY);
        for (&p, _) in self.vertices.iter().zip(&used).filter(|(_, &u)| u) {
            let p = Vec3A::from(p);
            // A NaN coordinate is skipped by select, not left to `min`/`max`, whose NaN rules
            // differ between SSE (the second operand) and WebAssembly (NaN).
            let number = p.cmpeq(p);
            min = Vec3A::select(number, p.min(min), min);
            max = Vec3A::select(number, p.max(max), max);
        }
        if min.cmpgt(max).any() {
            return Aabb::EMPTY;
        }
        Aabb::new(min.into(), max.into())
    }

    /// A sphere holding every referenced vertex: centred on the box centre, through the farthest one.
    pub fn bounding_sphere(&self) -> BoundingSphere {
        let bounds = self.bounds();
        if bounds.is_empty() {
            return BoundingSphere::from_box(&bounds);
        }
        let center = bounds.center();
        let radius = self
            .indices
            .iter()
            .flatten()
            .filter_map(|&i| self.vertices.get(i as usize))
            .fold(0.0f32, |r, p| r.max(p.distance(center)));
        BoundingSphere { center, radius }
    }
}

/// A set of spheres (centre and radius each).
///
/// ```
/// use raypick::{glam::Vec3, Spheres};
/// let s = Spheres::new(vec![Vec3::ZERO, Vec3::X * 4.0], vec![1.0, 0.5]);
/// assert_eq!(s.bounds().max, Vec3::new(4.5, 1.0, 1.0));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Spheres {
    pub(crate) centers: Vec<Vec3>,
    pub(crate) radii: Vec<f32>,
    pub(crate) name: Option<String>,
    pub(crate) mask: u32,
}

impl Spheres {
    /// Spheres from centres and radii (same length, radii `>= 0`; checked by
    /// [`super::SceneBuilder::build`]).
    pub fn new(centers: Vec<Vec3>, radii: Vec<f32>) -> Self {
        Self {
            centers,
            radii,
            name: None,
            mask: u32::MAX,
        }
    }

    /// Names the set.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets the mask (default `u32::MAX`).
    #[must_use]
    pub fn with_mask(mut self, mask: u32) -> Self {
        self.mask = mask;
        self
    }

    /// The centres.
    pub fn centers(&self) -> &[Vec3] {
        &self.centers
    }

    /// The radii.
    pub fn radii(&self) -> &[f32] {
        &self.radii
    }

    /// The name, if any.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The mask.
    pub fn mask(&self) -> u32 {
        self.mask
    }

    /// Number of spheres (the shorter of the two lists).
    pub fn len(&self) -> usize {
        self.centers.len().min(self.radii.len())
    }

    /// `true` when there is no sphere.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The box of sphere `i` (`None` out of range).
    pub fn sphere_bounds(&self, i: usize) -> Option<Aabb> {
        let (c, r) = (*self.centers.get(i)?, *self.radii.get(i)?);
        Some(Aabb::new(c - Vec3::splat(r), c + Vec3::splat(r)))
    }

    /// The box of all spheres.
    pub fn bounds(&self) -> Aabb {
        (0..self.len())
            .filter_map(|i| self.sphere_bounds(i))
            .fold(Aabb::EMPTY, Aabb::union)
    }

    /// A sphere holding all spheres: centred on the box centre.
    pub fn bounding_sphere(&self) -> BoundingSphere {
        let bounds = self.bounds();
        if bounds.is_empty() {
            return BoundingSphere::from_box(&bounds);
        }
        let center = bounds.center();
        let radius = (0..self.len()).fold(0.0f32, |r, i| {
            r.max(self.centers[i].distance(center) + self.radii[i])
        });
        BoundingSphere { center, radius }
    }
}

/// A built scene placed in the world by an affine transform. The placed scene may hold instances
/// itself, up to [`MAX_INSTANCE_DEPTH`](crate::scene::MAX_INSTANCE_DEPTH) levels in all.
#[derive(Clone, Debug)]
pub struct Instance {
    pub(crate) scene: Arc<Scene>,
    pub(crate) world_from_object: Affine3A,
    pub(crate) name: Option<String>,
    pub(crate) mask: u32,
}

impl Instance {
    /// The placed scene.
    pub fn scene(&self) -> &Arc<Scene> {
        &self.scene
    }

    /// The transform from the placed scene's space to the world.
    pub fn world_from_object(&self) -> Affine3A {
        self.world_from_object
    }

    /// The name, if any.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The mask (default `u32::MAX`); the placed scene's own geometry masks apply too.
    pub fn mask(&self) -> u32 {
        self.mask
    }

    /// World box: the transformed corners of the placed scene's box.
    pub fn bounds(&self) -> Aabb {
        transform_box(&self.world_from_object, &self.scene.bounds())
    }

    /// A sphere holding the world box.
    pub fn bounding_sphere(&self) -> BoundingSphere {
        BoundingSphere::from_box(&self.bounds())
    }
}

/// The box of the 8 transformed corners of `b` (empty stays empty).
pub(crate) fn transform_box(world_from_object: &Affine3A, b: &Aabb) -> Aabb {
    if b.is_empty() {
        return Aabb::EMPTY;
    }
    (0..8)
        .map(|i| {
            Vec3::new(
                if i & 1 == 0 { b.min.x } else { b.max.x },
                if i & 2 == 0 { b.min.y } else { b.max.y },
                if i & 4 == 0 { b.min.z } else { b.max.z },
            )
        })
        .fold(Aabb::EMPTY, |acc, p| {
            acc.grow(world_from_object.transform_point3(p))
        })
}

/// One geometry of a scene.
#[derive(Clone, Debug)]
pub enum Geometry {
    /// A triangle mesh.
    Mesh(TriMesh),
    /// A set of spheres.
    Spheres(Spheres),
    /// A placed scene.
    Instance(Instance),
}

impl Geometry {
    /// World-space box (of the scene the geometry belongs to).
    pub fn bounds(&self) -> Aabb {
        match self {
            Self::Mesh(m) => m.bounds(),
            Self::Spheres(s) => s.bounds(),
            Self::Instance(i) => i.bounds(),
        }
    }

    /// A sphere holding the geometry.
    pub fn bounding_sphere(&self) -> BoundingSphere {
        match self {
            Self::Mesh(m) => m.bounding_sphere(),
            Self::Spheres(s) => s.bounding_sphere(),
            Self::Instance(i) => i.bounding_sphere(),
        }
    }

    /// The name, if any.
    pub fn name(&self) -> Option<&str> {
        match self {
            Self::Mesh(m) => m.name(),
            Self::Spheres(s) => s.name(),
            Self::Instance(i) => i.name(),
        }
    }

    /// The mask.
    pub fn mask(&self) -> u32 {
        match self {
            Self::Mesh(m) => m.mask,
            Self::Spheres(s) => s.mask,
            Self::Instance(i) => i.mask,
        }
    }

    pub(crate) fn set_name(&mut self, name: String) {
        match self {
            Self::Mesh(m) => m.name = Some(name),
            Self::Spheres(s) => s.name = Some(name),
            Self::Instance(i) => i.name = Some(name),
        }
    }

    pub(crate) fn set_mask(&mut self, mask: u32) {
        match self {
            Self::Mesh(m) => m.mask = mask,
            Self::Spheres(s) => s.mask = mask,
            Self::Instance(i) => i.mask = mask,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reference: the box grown vertex by vertex in triangle order, coordinate by coordinate
    /// with `f32::min`/`max` (which skip a NaN).
    fn bounds_by_triangles(mesh: &TriMesh) -> Aabb {
        let (mut min, mut max) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
        for &i in mesh.indices.as_flattened() {
            if let Some(p) = mesh.vertices.get(i as usize) {
                for axis in 0..3 {
                    min[axis] = min[axis].min(p[axis]);
                    max[axis] = max[axis].max(p[axis]);
                }
            }
        }
        // A box with no coordinate on some axis is the empty box.
        if (0..3).any(|axis| min[axis] > max[axis]) {
            return Aabb::EMPTY;
        }
        Aabb::new(min.into(), max.into())
    }

    proptest! {
        /// Meshes whose triangles skip vertices (some far out), name indices past the end
        /// (beyond the last word of the marks too) and use vertices with a NaN coordinate: the
        /// box of the referenced vertices' coordinates that are not NaN.
        #[test]
        fn bounds_equal_the_box_grown_in_triangle_order(
            vertices in prop::collection::vec(
                prop_oneof![
                    8 => prop::array::uniform3(-1e6f32..1e6),
                    1 => Just([f32::NAN, 0.0, 1.0]),
                ],
                0..300,
            ),
            indices in prop::collection::vec(prop::array::uniform3(0u32..400), 0..200),
        ) {
            let mesh = TriMesh::new(vertices.into_iter().map(Vec3::from).collect(), indices);
            // Equal as values (a zero's sign may differ with the order of the comparisons).
            prop_assert_eq!(mesh.bounds(), bounds_by_triangles(&mesh));
        }
    }
}
