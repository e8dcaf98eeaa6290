//! [`BuildError`]: why [`super::SceneBuilder::build`] refused its input.

use glam::Vec3;

/// Why a scene could not be built. Every variant names the geometry by id (insertion order in the
/// builder) and name (empty when unnamed), and the offending element, so the caller can fix the data.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A triangle refers to a vertex that does not exist. Fix the index buffer (0-based indices).
    #[error("geometry {geom} ({name:?}): triangle {triangle} uses vertex {index}, but the mesh has {num_vertices} vertices")]
    IndexOutOfRange {
        /// Geometry id.
        geom: u32,
        /// Geometry name.
        name: String,
        /// Triangle index.
        triangle: usize,
        /// The bad vertex index.
        index: u32,
        /// Number of vertices.
        num_vertices: usize,
    },
    /// A vertex has a NaN or infinite coordinate (referenced or not). Remove or fix it.
    #[error("geometry {geom} ({name:?}): vertex {vertex} is not finite: {value}")]
    NonFiniteVertex {
        /// Geometry id.
        geom: u32,
        /// Geometry name.
        name: String,
        /// Vertex index.
        vertex: usize,
        /// Its value.
        value: Vec3,
    },
    /// A sphere centre has a NaN or infinite coordinate.
    #[error("geometry {geom} ({name:?}): sphere {sphere} has a non-finite centre {value}")]
    NonFiniteCenter {
        /// Geometry id.
        geom: u32,
        /// Geometry name.
        name: String,
        /// Sphere index.
        sphere: usize,
        /// Its centre.
        value: Vec3,
    },
    /// A sphere radius is negative, NaN or infinite.
    #[error(
        "geometry {geom} ({name:?}): sphere {sphere} has radius {radius} (must be finite and >= 0)"
    )]
    InvalidRadius {
        /// Geometry id.
        geom: u32,
        /// Geometry name.
        name: String,
        /// Sphere index.
        sphere: usize,
        /// The radius.
        radius: f32,
    },
    /// A sphere set has different numbers of centres and radii.
    #[error("geometry {geom} ({name:?}): {centers} centres but {radii} radii")]
    SphereCountMismatch {
        /// Geometry id.
        geom: u32,
        /// Geometry name.
        name: String,
        /// Number of centres.
        centers: usize,
        /// Number of radii.
        radii: usize,
    },
    /// A geometry has more primitives than a `u32` id can name.
    #[error("geometry {geom} ({name:?}): {count} primitives exceed u32 ids")]
    TooManyPrimitives {
        /// Geometry id.
        geom: u32,
        /// Geometry name.
        name: String,
        /// The count.
        count: usize,
    },
    /// An instance transform is not invertible in `f32`: a zero scale, a NaN or infinite entry,
    /// or a determinant (or inverse) beyond `f32`'s range (a scale of 1e30, or of 1e-30).
    #[error(
        "geometry {geom} ({name:?}): the instance transform is not invertible in f32: {}",
        why_singular(*.determinant)
    )]
    NonInvertibleTransform {
        /// Geometry id.
        geom: u32,
        /// Geometry name.
        name: String,
        /// Determinant of the linear part, computed in `f64` from the `f32` entries (NaN when an
        /// entry is not finite).
        determinant: f64,
    },
    /// An instance places a scene whose instances nest so deep that a primitive would lie more
    /// than [`MAX_INSTANCE_DEPTH`](crate::scene::MAX_INSTANCE_DEPTH) instances below this scene.
    #[error(
        "geometry {geom} ({name:?}): instances would nest {depth} deep, more than the {} supported",
        crate::scene::MAX_INSTANCE_DEPTH
    )]
    TooDeep {
        /// Geometry id.
        geom: u32,
        /// Geometry name.
        name: String,
        /// The depth this instance would give the scene (1 + the placed scene's depth).
        depth: usize,
    },
    /// `set_name` or `set_mask` named a geometry id that was never added.
    #[error("geometry {geom} does not exist (the builder has {count} geometries)")]
    UnknownGeometry {
        /// The id.
        geom: u32,
        /// Number of geometries added.
        count: usize,
    },
    /// [`crate::Scene::update_mesh_vertices`] got a vertex count different from the mesh's.
    #[error("geometry {geom} ({name:?}): {got} vertices given for a mesh of {expected}")]
    VertexCountMismatch {
        /// Geometry id.
        geom: u32,
        /// Geometry name.
        name: String,
        /// Vertices given.
        got: usize,
        /// Vertices of the mesh.
        expected: usize,
    },
    /// [`crate::Scene::update_mesh_vertices`] was called on a geometry that is not a mesh.
    #[error("geometry {geom}: not a triangle mesh")]
    NotAMesh {
        /// Geometry id.
        geom: u32,
    },
}

/// Why an instance transform with linear-part determinant `det` (in `f64`) cannot be inverted in
/// `f32`.
fn why_singular(det: f64) -> String {
    if det.is_nan() {
        "an entry is NaN or infinite".to_string()
    } else if det == 0.0 {
        "it is singular (determinant 0)".to_string()
    } else if det.abs() > f64::from(f32::MAX) {
        format!("its determinant {det:.3e} overflows f32")
    } else {
        format!("its determinant {det:.3e} or its inverse is beyond f32's range")
    }
}
