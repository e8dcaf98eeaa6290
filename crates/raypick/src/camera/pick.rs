//! Picking: what is under a pixel ([`pick`]; with the instance path of a hit in nested instances,
//! [`pick_path`]), near it ([`pick_with_tolerance`]) or inside a marquee rectangle ([`pick_rect`]).
//!
//! A pick casts [`Camera::pixel_ray`] (origin on the near plane, unit direction, `t` in world units,
//! ends at the far plane) through the scene's closest-hit query, so it sees exactly what the
//! rasterizer keeps between the near and far planes. [`pick_rect`] is exact, not sampled: every
//! triangle and sphere is tested against the rectangle's sub-frustum (see [`Frustum`]).

use glam::{Vec2, Vec3};

use super::frustum::{Frustum, PixelRect};
use super::view::Camera;
use crate::geom::Ray;
use crate::scene::{Geometry, Hit, InstancePath, QueryOptions, Scene};

/// A pick: the closest hit under a pixel and the ray that found it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pick {
    /// The hit (`t` in world units from the near plane, since the ray's direction is unit length).
    pub hit: Hit,
    /// The pixel ray that was cast.
    pub ray: Ray,
    /// The window position (continuous coordinates) the ray went through.
    pub pixel: Vec2,
}

impl Pick {
    /// Geometry id of the primitive's geometry (in the instanced scene for instances).
    #[inline]
    pub fn geom(&self) -> u32 {
        self.hit.geom
    }

    /// Top-level instance id, `None` when the geometry is not instanced.
    #[inline]
    pub fn instance(&self) -> Option<u32> {
        self.hit.instance
    }

    /// Triangle or sphere index in its geometry.
    #[inline]
    pub fn prim(&self) -> u32 {
        self.hit.prim
    }

    /// The world point hit.
    #[inline]
    pub fn point(&self) -> Vec3 {
        self.hit.point
    }

    /// Distance along the ray from the near plane, in world units.
    #[inline]
    pub fn distance(&self) -> f32 {
        self.hit.t
    }
}

/// The closest thing under continuous window position `pixel` (pixel `(i, j)`'s centre is
/// `(i + 0.5, j + 0.5)`), between the near and far planes.
///
/// ```
/// use raypick::camera::{pick, Camera, ClipSpace, Projection, Viewport};
/// use raypick::glam::{Vec2, Vec3};
/// use raypick::{SceneBuilder, Spheres};
/// let mut b = SceneBuilder::new();
/// let balls = b.add_spheres(Spheres::new(vec![Vec3::ZERO], vec![1.0]));
/// let scene = b.build().unwrap();
/// let vp = Viewport::new(200.0, 100.0);
/// let proj = Projection::perspective(1.0, vp.aspect(), 0.1, 100.0, ClipSpace::Direct3D).unwrap();
/// let cam = Camera::look_at(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO, Vec3::Y, proj, vp).unwrap();
/// let p = pick(&scene, &cam, Vec2::new(100.0, 50.0)).unwrap();
/// assert_eq!((p.geom(), p.prim(), p.instance()), (balls, 0, None));
/// assert!((p.point() - Vec3::Z).length() < 1e-5);
/// assert!(pick(&scene, &cam, Vec2::new(5.0, 5.0)).is_none());
/// ```
pub fn pick(scene: &Scene, camera: &Camera, pixel: Vec2) -> Option<Pick> {
    pick_with(scene, camera, pixel, &QueryOptions::default())
}

/// [`pick`] with query options (mask, culling, filter).
pub fn pick_with(scene: &Scene, camera: &Camera, pixel: Vec2, opts: &QueryOptions) -> Option<Pick> {
    let ray = camera.pixel_ray(pixel.x, pixel.y);
    scene
        .intersect_with(&ray, opts)
        .map(|hit| Pick { hit, ray, pixel })
}

/// [`pick`] and the hit's [`InstancePath`], every instance it was reached through, outermost
/// first ([`Scene::intersect_path`]): what names the part picked in nested instances (a glTF
/// node tree). The pick is the one [`pick`] returns.
pub fn pick_path(scene: &Scene, camera: &Camera, pixel: Vec2) -> Option<(Pick, InstancePath)> {
    pick_path_with(scene, camera, pixel, &QueryOptions::default())
}

/// [`pick_path`] with query options (mask, culling, filter).
pub fn pick_path_with(
    scene: &Scene,
    camera: &Camera,
    pixel: Vec2,
    opts: &QueryOptions,
) -> Option<(Pick, InstancePath)> {
    let ray = camera.pixel_ray(pixel.x, pixel.y);
    scene
        .intersect_path_with(&ray, opts)
        .map(|(hit, path)| (Pick { hit, ray, pixel }, path))
}

/// Spacing of the tolerance samples, in pixels: rings 0.5 px apart with samples at most 0.5 px
/// apart along each ring, so every disc of diameter ≥ 1 px inside the tolerance radius (a point
/// sprite, a thin line's width) contains a sample.
pub const TOLERANCE_STEP_PX: f32 = 0.5;

/// Like [`pick`], but also finds things up to `radius_px` pixels from `pixel` (small spheres,
/// points, thin parts): rays are cast at the centre and on concentric rings
/// [`TOLERANCE_STEP_PX`] apart, and the hit whose ray is closest to `pixel` wins (ties: the
/// smallest `t`). Objects narrower than the sample spacing can still slip between samples.
pub fn pick_with_tolerance(
    scene: &Scene,
    camera: &Camera,
    pixel: Vec2,
    radius_px: f32,
    opts: &QueryOptions,
) -> Option<Pick> {
    if let Some(p) = pick_with(scene, camera, pixel, opts) {
        return Some(p);
    }
    if radius_px.is_nan() || radius_px <= 0.0 || !pixel.is_finite() {
        return None;
    }
    // Past ~4096 px the tolerance covers any screen; this also bounds the work.
    let radius_px = radius_px.min(4096.0);
    let rings = (radius_px / TOLERANCE_STEP_PX).ceil() as u32;
    for k in 1..=rings {
        let r = (k as f32 * TOLERANCE_STEP_PX).min(radius_px);
        let n = ((std::f32::consts::TAU * r / TOLERANCE_STEP_PX).ceil() as u32).max(4);
        let rays: Vec<(Vec2, Ray)> = (0..n)
            .map(|i| {
                let a = std::f32::consts::TAU * i as f32 / n as f32;
                let p = pixel + r * Vec2::new(a.cos(), a.sin());
                (p, camera.pixel_ray(p.x, p.y))
            })
            .collect();
        let only_rays: Vec<Ray> = rays.iter().map(|(_, r)| *r).collect();
        let hits = scene.intersect_batch(&only_rays, opts);
        let best = hits
            .into_iter()
            .zip(rays)
            .filter_map(|(h, (p, ray))| h.map(|hit| Pick { hit, ray, pixel: p }))
            .min_by(|a, b| a.hit.t.total_cmp(&b.hit.t));
        if best.is_some() {
            return best;
        }
    }
    None
}

/// Every geometry with a triangle or a sphere inside the sub-frustum of `rect` (clamped to the
/// viewport, between the near and far planes): `(geom, instance)` pairs, as in [`Hit`] — `geom` is
/// the geometry id (in the instanced scene for instances, the innermost one when instances nest)
/// and `instance` the top-level instance id.
///
/// Exact (triangle clipping, sphere–polyhedron distance; see [`Frustum`]), including occluded
/// objects (a marquee selects through things). Results are in scene order: top-level ids
/// ascending, and inner ids ascending within an instance. An empty rectangle (a click) selects
/// nothing: use [`pick`] for clicks.
///
/// ```
/// use raypick::camera::{pick_rect, Camera, ClipSpace, PixelRect, Projection, Viewport};
/// use raypick::glam::Vec3;
/// use raypick::{SceneBuilder, Spheres};
/// let mut b = SceneBuilder::new();
/// let left = b.add_spheres(Spheres::new(vec![Vec3::new(-2.0, 0.0, 0.0)], vec![0.5]));
/// let right = b.add_spheres(Spheres::new(vec![Vec3::new(2.0, 0.0, 0.0)], vec![0.5]));
/// let scene = b.build().unwrap();
/// let vp = Viewport::new(400.0, 200.0);
/// let proj = Projection::perspective(1.0, vp.aspect(), 0.1, 100.0, ClipSpace::OpenGl).unwrap();
/// let cam = Camera::look_at(Vec3::new(0.0, 0.0, 8.0), Vec3::ZERO, Vec3::Y, proj, vp).unwrap();
/// // A marquee over the left half of the window.
/// assert_eq!(pick_rect(&scene, &cam, PixelRect::new(0.0, 0.0, 200.0, 200.0)), vec![(left, None)]);
/// assert_eq!(pick_rect(&scene, &cam, PixelRect::new(0.0, 0.0, 400.0, 200.0)).len(), 2);
/// # let _ = right;
/// ```
pub fn pick_rect(scene: &Scene, camera: &Camera, rect: PixelRect) -> Vec<(u32, Option<u32>)> {
    pick_rect_with(scene, camera, rect, u32::MAX)
}

/// [`pick_rect`] considering only geometries with `geometry.mask & mask != 0` (for instances, both
/// the instance's and the inner geometry's masks).
pub fn pick_rect_with(
    scene: &Scene,
    camera: &Camera,
    rect: PixelRect,
    mask: u32,
) -> Vec<(u32, Option<u32>)> {
    let mut out = Vec::new();
    let Some(frustum) = Frustum::from_rect(camera, rect) else {
        return out;
    };
    if frustum.is_empty() {
        return out;
    }
    select(scene, &frustum, mask, None, &mut out);
    out
}

/// Appends to `out` the geometries of `scene` that meet `frustum` (in `scene`'s space), reached
/// through the top-level instance `top`; instances are entered with the frustum moved into their
/// space, nested ones too.
fn select(
    scene: &Scene,
    frustum: &Frustum,
    mask: u32,
    top: Option<u32>,
    out: &mut Vec<(u32, Option<u32>)>,
) {
    for id in 0..scene.num_geometries() as u32 {
        let Some(g) = scene.geometry(id) else {
            continue;
        };
        if g.mask() & mask == 0 {
            continue;
        }
        match g {
            Geometry::Instance(inst) => {
                let world_from_object = glam::Mat4::from(inst.world_from_object()).as_dmat4();
                let f_object = frustum.to_object(world_from_object);
                select(inst.scene(), &f_object, mask, top.or(Some(id)), out);
            }
            _ => {
                if geometry_overlaps(g, frustum) {
                    out.push((id, top));
                }
            }
        }
    }
}

/// Whether a mesh or sphere set has a primitive in `frustum` (both in the same space).
fn geometry_overlaps(g: &Geometry, frustum: &Frustum) -> bool {
    match frustum.classify_box(&g.bounds()) {
        Some(false) => return false,
        // The whole box is inside: any valid primitive is selected.
        Some(true) if has_valid_primitive(g) => return true,
        _ => {}
    }
    match g {
        Geometry::Mesh(m) => (0..m.num_triangles() as u32).any(|prim| {
            m.triangle(prim)
                .is_some_and(|[a, b, c]| frustum.intersects_triangle(a, b, c))
        }),
        Geometry::Spheres(s) => s
            .centers()
            .iter()
            .zip(s.radii())
            .any(|(&c, &r)| frustum.intersects_sphere(c, r)),
        // `select` enters instances itself.
        Geometry::Instance(_) => false,
    }
}

fn has_valid_primitive(g: &Geometry) -> bool {
    match g {
        Geometry::Mesh(m) => (0..m.num_triangles() as u32).any(|p| m.triangle(p).is_some()),
        Geometry::Spheres(s) => s.radii().iter().any(|r| *r >= 0.0),
        Geometry::Instance(_) => false,
    }
}
