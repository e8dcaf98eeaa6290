//! Rays, boxes and exact intersection kernels.
//!
//! Everything here is a free function on plain data (`Vec3`, [`Ray`], [`Aabb`]): the kernels know
//! nothing about meshes, BVHs or scenes, so they can be tested one by one against references and reused
//! by any acceleration structure.
//!
//! | file | what |
//! |---|---|
//! | [`ray`] | [`Ray`]: origin, direction, `[t_min, t_max]`; ray, segment and line constructors |
//! | [`aabb`] | [`Aabb`] and the robust slab test (Ize 2013) |
//! | [`triangle`] | ray/triangle: watertight (default), Möller–Trumbore, plane + barycentric |
//! | [`sphere`] | ray/sphere: quadratic (all crossings) and geometric (first crossing, intersects-only) |
//! | [`closest`] | closest points: point–triangle (projection on the plane, else the closest edge: stable on slivers), point–sphere, point–box distance |
//! | [`circle`] | the same two methods in 2-D, with [`circle::Ray2`] |
//! | [`offset`] | spawning secondary rays without self-intersection (Wächter & Binder 2019) |
//!
//! ## Conventions
//! - `t` is measured in units of `ray.dir`, which need not be unit length: the point is
//!   `ray.origin + t * ray.dir`. A hit is reported only for `t_min <= t <= t_max`.
//! - Rays with a NaN or infinite component, or a zero direction, miss everything; no kernel panics.

pub mod aabb;
pub mod circle;
pub mod closest;
pub mod offset;
pub mod ray;
pub mod sphere;
pub mod triangle;

pub use aabb::Aabb;
pub use ray::Ray;
pub use sphere::SphereHits;
pub use triangle::{Culling, TriHit};
