//! [`Camera`]: a view matrix, a [`Projection`], a [`Viewport`] and a [`PixelOrigin`]; pixel rays.
//!
//! ## Pixel rays and the unit of `t`
//! [`Camera::pixel_ray`] unprojects the pixel at the near-plane depth and at the far-plane depth of
//! the projection's convention (reverse-Z swaps them) and returns the ray from the near point
//! towards the far point with a **unit** direction: `t` is measured in world units, `t = 0` is the
//! near plane and `t_max` is the distance from the near point to the far point (`∞` for infinite
//! projections, whose far point is the direction of the `w = 0` point). For an orthographic camera
//! the rays are parallel and start on the near plane, not at an eye. For a perspective camera the
//! distance from the eye to a hit is `t` plus the distance from the eye to the ray's origin.

use glam::{DMat4, DVec3, DVec4, Mat4, Vec3};

use super::projection::{ClipSpace, Projection};
use super::unproject::{inverse_f64, project_d, unproject_f64, unproject_homogeneous};
use super::viewport::{PixelOrigin, Viewport};
use super::CameraError;
use crate::geom::{Aabb, Ray};

/// A camera: `view_from_world`, a projection, a viewport and the pixel origin of the window
/// coordinates it is given. Constructed validated (invertible matrices, a valid viewport, a near
/// plane in front of the camera), so pixel rays never fail.
///
/// ```
/// use raypick::camera::{Camera, ClipSpace, Projection, Viewport};
/// use raypick::glam::Vec3;
/// let vp = Viewport::new(640.0, 480.0);
/// let proj = Projection::perspective(60f32.to_radians(), vp.aspect(), 0.1, 100.0, ClipSpace::OpenGl).unwrap();
/// let cam = Camera::look_at(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO, Vec3::Y, proj, vp).unwrap();
/// let ray = cam.pixel_ray(320.0, 240.0); // the window centre
/// assert!((ray.dir - Vec3::NEG_Z).length() < 1e-6);
/// assert!((ray.origin - Vec3::new(0.0, 0.0, 4.9)).length() < 1e-5); // on the near plane
/// assert!((ray.t_max - 99.9).abs() < 1e-3); // world units up to the far plane
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    view_from_world: Mat4,
    projection: Projection,
    viewport: Viewport,
    pixel_origin: PixelOrigin,
    clip_from_world: DMat4,
    world_from_clip: DMat4,
}

impl Camera {
    /// A camera from a view matrix (`view_from_world`, e.g. `Mat4::look_at_rh`), a projection and a
    /// viewport; pixels are [`PixelOrigin::TopLeft`] (see [`Camera::with_pixel_origin`]).
    pub fn new(
        view_from_world: Mat4,
        projection: Projection,
        viewport: Viewport,
    ) -> Result<Self, CameraError> {
        viewport.validate()?;
        let clip_from_world = projection.clip_from_view().as_dmat4() * view_from_world.as_dmat4();
        let world_from_clip = inverse_f64(clip_from_world).ok_or(CameraError::SingularMatrix(
            "clip_from_view · view_from_world",
        ))?;
        // The near plane must be a finite plane in front of the camera over the whole viewport:
        // its homogeneous w is affine in NDC (x, y), so checking the four corners suffices.
        let (zn, _) = projection.ndc_near_far();
        for (x, y) in [(-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)] {
            let h = unproject_homogeneous(&world_from_clip, DVec3::new(x, y, zn as f64));
            if h.w.is_nan() || h.w <= 0.0 {
                return Err(CameraError::NearPlaneNotInFront);
            }
        }
        Ok(Self {
            view_from_world,
            projection,
            viewport,
            pixel_origin: PixelOrigin::TopLeft,
            clip_from_world,
            world_from_clip,
        })
    }

    /// A camera at `eye` looking at `target` with `up` (right-handed, `Mat4::look_at_rh`).
    pub fn look_at(
        eye: Vec3,
        target: Vec3,
        up: Vec3,
        projection: Projection,
        viewport: Viewport,
    ) -> Result<Self, CameraError> {
        let forward = target - eye;
        if !(eye.is_finite() && target.is_finite() && up.is_finite()) {
            return Err(CameraError::DegenerateLookAt(
                "eye, target and up must be finite",
            ));
        }
        if forward.length_squared() == 0.0 {
            return Err(CameraError::DegenerateLookAt("eye == target"));
        }
        // Compare sin² of the angle between forward and up with f32 epsilon: below it the
        // cross product that builds the camera's right axis is pure rounding noise.
        let f = forward.normalize();
        let u = up.normalize_or_zero();
        if f.cross(u).length_squared() <= f32::EPSILON {
            return Err(CameraError::DegenerateLookAt(
                "up is zero or parallel to the view direction",
            ));
        }
        Self::new(Mat4::look_at_rh(eye, target, up), projection, viewport)
    }

    /// Places a perspective camera so that the bounding sphere of `bounds` fills the narrower of
    /// the two fields of view, looking along `view_dir` with `up`.
    ///
    /// The sphere (centre `bounds.center()`, radius half the diagonal) touches the frustum's side
    /// planes: the eye is at distance `r / sin(a)` from the centre, `a` the smaller half field of
    /// view (vertical `fov_y / 2`, horizontal `atan(aspect · tan(fov_y / 2))`). Near and far are
    /// `d − r` and `d + r` widened by 1/64 so the sphere's nearest and farthest points stay inside
    /// the depth range despite f32 rounding of the matrices (relative error ≈ 1e-7, margin 1.6 %).
    ///
    /// ```
    /// use raypick::camera::{Camera, ClipSpace, Viewport};
    /// use raypick::glam::Vec3;
    /// use raypick::Aabb;
    /// let bounds = Aabb::new(Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 2.0, 1.0));
    /// let vp = Viewport::new(640.0, 480.0);
    /// let cam = Camera::frame_bounds(bounds, Vec3::new(0.0, -0.5, -1.0), Vec3::Y, 0.8, vp, ClipSpace::WGPU).unwrap();
    /// let centre = cam.project(bounds.center()).unwrap();
    /// assert!((centre.x - 320.0).abs() < 0.01 && (centre.y - 240.0).abs() < 0.01);
    /// ```
    pub fn frame_bounds(
        bounds: Aabb,
        view_dir: Vec3,
        up: Vec3,
        fov_y: f32,
        viewport: Viewport,
        clip_space: ClipSpace,
    ) -> Result<Self, CameraError> {
        viewport.validate()?;
        if bounds.is_empty() || !bounds.min.is_finite() || !bounds.max.is_finite() {
            return Err(CameraError::EmptyBounds);
        }
        if !(fov_y > 0.0 && fov_y < std::f32::consts::PI) {
            return Err(CameraError::InvalidProjection(
                "fov_y must be in (0, π) radians",
            ));
        }
        let dir = view_dir.normalize_or_zero();
        if dir == Vec3::ZERO || !dir.is_finite() {
            return Err(CameraError::DegenerateLookAt(
                "view_dir is zero or not finite",
            ));
        }
        let center = bounds.center();
        // A single point still needs a sphere with distinct near and far planes in f32: 16 ulps
        // of the position's magnitude is the smallest radius that keeps them apart.
        let min_radius = 16.0 * f32::EPSILON * center.abs().max_element().max(1.0);
        let r = (0.5 * bounds.extent().length()).max(min_radius) as f64;
        let half_y = 0.5 * fov_y as f64;
        let half_x = (viewport.aspect() as f64 * half_y.tan()).atan();
        let a = half_y.min(half_x);
        let d = r / a.sin();
        let margin = 1.0 / 64.0;
        let near = ((d - r) * (1.0 - margin)) as f32;
        let far = ((d + r) * (1.0 + margin)) as f32;
        let projection = Projection::perspective(fov_y, viewport.aspect(), near, far, clip_space)?;
        let eye = (center.as_dvec3() - dir.as_dvec3() * d).as_vec3();
        Self::look_at(eye, center, up, projection, viewport)
    }

    /// Places an orthographic camera looking along `view_dir` whose view volume holds the bounding
    /// sphere of `bounds`: the view is `2r` across in its narrower dimension, the eye sits `2r`
    /// from the centre, and near / far are `r` and `3r` widened by 1/64 (as
    /// [`Camera::frame_bounds`]).
    pub fn frame_bounds_orthographic(
        bounds: Aabb,
        view_dir: Vec3,
        up: Vec3,
        viewport: Viewport,
        clip_space: ClipSpace,
    ) -> Result<Self, CameraError> {
        viewport.validate()?;
        if bounds.is_empty() || !bounds.min.is_finite() || !bounds.max.is_finite() {
            return Err(CameraError::EmptyBounds);
        }
        let dir = view_dir.normalize_or_zero();
        if dir == Vec3::ZERO || !dir.is_finite() {
            return Err(CameraError::DegenerateLookAt(
                "view_dir is zero or not finite",
            ));
        }
        let center = bounds.center();
        // As in frame_bounds: 16 ulps of the position keep a point's near and far planes apart.
        let min_radius = 16.0 * f32::EPSILON * center.abs().max_element().max(1.0);
        let r = (0.5 * bounds.extent().length()).max(min_radius);
        let margin = 1.0 / 64.0;
        let aspect = viewport.aspect();
        let height = if aspect >= 1.0 {
            2.0 * r
        } else {
            2.0 * r / aspect
        } * (1.0 + margin);
        let projection = Projection::orthographic_symmetric(
            height,
            aspect,
            r * (1.0 - margin),
            3.0 * r * (1.0 + margin),
            clip_space,
        )?;
        let eye = center - dir * (2.0 * r);
        Self::look_at(eye, center, up, projection, viewport)
    }

    /// The same camera reading window coordinates with another pixel origin.
    #[must_use]
    pub fn with_pixel_origin(mut self, pixel_origin: PixelOrigin) -> Self {
        self.pixel_origin = pixel_origin;
        self
    }

    /// The same camera with another viewport (a window resize). The projection's aspect ratio is
    /// not changed.
    pub fn with_viewport(self, viewport: Viewport) -> Result<Self, CameraError> {
        Ok(Self::new(self.view_from_world, self.projection, viewport)?
            .with_pixel_origin(self.pixel_origin))
    }

    /// `view_from_world` (the view matrix).
    #[inline]
    pub fn view_from_world(&self) -> Mat4 {
        self.view_from_world
    }

    /// The projection.
    #[inline]
    pub fn projection(&self) -> &Projection {
        &self.projection
    }

    /// The viewport.
    #[inline]
    pub fn viewport(&self) -> &Viewport {
        &self.viewport
    }

    /// The pixel origin of the window coordinates this camera takes.
    #[inline]
    pub fn pixel_origin(&self) -> PixelOrigin {
        self.pixel_origin
    }

    /// The clip space of the projection.
    #[inline]
    pub fn clip_space(&self) -> ClipSpace {
        self.projection.clip_space()
    }

    /// `clip_from_world = clip_from_view · view_from_world` (the f32 product, as a GPU forms it).
    #[inline]
    pub fn clip_from_world(&self) -> Mat4 {
        self.projection.clip_from_view() * self.view_from_world
    }

    /// `clip_from_world` formed in f64 from the two f32 matrices: what projection and picking use.
    #[inline]
    pub fn clip_from_world_f64(&self) -> DMat4 {
        self.clip_from_world
    }

    /// `inverse(clip_from_world_f64)`, computed in f64 once at construction.
    #[inline]
    pub fn world_from_clip(&self) -> DMat4 {
        self.world_from_clip
    }

    /// The origin of view space in world coordinates: the eye of a perspective camera.
    pub fn eye(&self) -> Vec3 {
        inverse_f64(self.view_from_world.as_dmat4())
            .map(|m| m.w_axis.truncate().as_vec3())
            .unwrap_or(Vec3::NAN)
    }

    /// World point at window position `(x, y, depth)` (see [`unproject`](fn@super::unproject)).
    pub fn unproject(&self, window: Vec3) -> Option<Vec3> {
        if !window.is_finite() {
            return None;
        }
        unproject_f64(
            window.as_dvec3(),
            &self.world_from_clip,
            &self.viewport,
            self.clip_space(),
            self.pixel_origin,
        )
        .map(|p| p.as_vec3())
        .filter(|p| p.is_finite())
    }

    /// Window position `(x, y, depth)` of a world point (see [`project`](fn@super::project)).
    pub fn project(&self, p_world: Vec3) -> Option<Vec3> {
        project_d(
            p_world,
            self.clip_from_world,
            &self.viewport,
            self.clip_space(),
            self.pixel_origin,
        )
    }

    /// The ray through continuous window position `(x, y)` (pixel `(i, j)` spans `[i, i + 1)`, its
    /// centre is `i + 0.5`): origin on the near plane, unit direction, `t` in world units from the
    /// near plane, `t_max` at the far plane (`∞` for infinite projections). See the module docs.
    ///
    /// Positions outside the viewport extrapolate the frustum. Non-finite positions give a ray
    /// that fails [`Ray::is_valid`] and so misses everything.
    pub fn pixel_ray(&self, x: f32, y: f32) -> Ray {
        let (zn, zf) = self.projection.ndc_near_far();
        let ndc = self.viewport.window_to_ndc(
            DVec3::new(x as f64, y as f64, 0.0),
            self.clip_space(),
            self.pixel_origin,
        );
        let n = unproject_homogeneous(&self.world_from_clip, DVec3::new(ndc.x, ndc.y, zn as f64));
        let f = unproject_homogeneous(&self.world_from_clip, DVec3::new(ndc.x, ndc.y, zf as f64));
        ray_from_homogeneous(n, f)
    }

    /// The ray through the centre of integer pixel `(i, j)`: `pixel_ray(i + 0.5, j + 0.5)`.
    #[inline]
    pub fn pixel_center_ray(&self, i: u32, j: u32) -> Ray {
        self.pixel_ray(i as f32 + 0.5, j as f32 + 0.5)
    }
}

/// The ray from homogeneous near point `n` towards homogeneous far point `f` (see the module docs).
///
/// The direction `f.xyz·n.w − n.xyz·f.w` is `n.w·f.w·(far − near)` for finite points and tends to
/// `n.w·f.xyz` as `f.w → 0`, so one formula serves finite and infinite far planes with the right
/// sign (points unprojected from NDC have clip w = +1, i.e. they are in front of the camera).
fn ray_from_homogeneous(n: DVec4, f: DVec4) -> Ray {
    let invalid = Ray::new(Vec3::NAN, Vec3::NAN);
    if !n.is_finite() || !f.is_finite() || n.w <= 0.0 {
        return invalid;
    }
    let near = n.truncate() / n.w;
    let d = f.truncate() * n.w - n.truncate() * f.w;
    let len = d.length();
    if !(len > 0.0 && len.is_finite()) {
        return invalid;
    }
    let dir = d / len;
    let t_max = if f.w > 0.0 {
        let far = f.truncate() / f.w;
        let t = (far - near).length() as f32;
        if t.is_finite() {
            t
        } else {
            f32::INFINITY
        }
    } else {
        f32::INFINITY
    };
    Ray {
        origin: near.as_vec3(),
        dir: dir.as_vec3(),
        t_min: 0.0,
        t_max,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::camera::DepthOrder;

    fn cams() -> Vec<Camera> {
        let vp = Viewport::new(320.0, 200.0);
        let a = vp.aspect();
        let eye = Vec3::new(1.0, 2.0, 3.0);
        let target = Vec3::new(-0.5, 0.25, -1.0);
        let mut out = Vec::new();
        for cs in [ClipSpace::OpenGl, ClipSpace::Direct3D, ClipSpace::Vulkan] {
            for p in [
                Projection::perspective(0.9, a, 0.1, 50.0, cs).unwrap(),
                Projection::perspective_infinite(0.9, a, 0.1, cs).unwrap(),
                Projection::perspective_reverse_z(0.9, a, 0.1, 50.0, cs).unwrap(),
                Projection::perspective_infinite_reverse_z(0.9, a, 0.1, cs).unwrap(),
                Projection::orthographic_symmetric(4.0, a, 0.5, 20.0, cs).unwrap(),
            ] {
                out.push(Camera::look_at(eye, target, Vec3::Y, p, vp).unwrap());
                out.push(
                    Camera::look_at(eye, target, Vec3::Y, p, vp)
                        .unwrap()
                        .with_pixel_origin(PixelOrigin::BottomLeft),
                );
            }
        }
        out
    }

    #[test]
    fn pixel_rays_start_on_the_near_plane_and_pass_through_the_pixel() {
        for cam in cams() {
            let (zn, _) = cam.projection().ndc_near_far();
            let vp = *cam.viewport();
            let zn_window = vp
                .ndc_to_window(
                    DVec3::new(0.0, 0.0, zn as f64),
                    cam.clip_space(),
                    cam.pixel_origin(),
                )
                .z as f32;
            for (x, y) in [(0.0, 0.0), (10.5, 190.25), (160.0, 100.0), (319.9, 0.1)] {
                let ray = cam.pixel_ray(x, y);
                assert!(ray.is_valid());
                assert!((ray.dir.length() - 1.0).abs() < 1e-6);
                // The origin projects back onto (x, y) at the near depth.
                let w = cam.project(ray.origin).unwrap();
                assert!(
                    (w.x - x).abs() < 1e-3 && (w.y - y).abs() < 1e-3,
                    "{cam:?} {w}"
                );
                assert!((w.z - zn_window).abs() < 1e-4, "{w} {zn_window}");
                // A point further along projects onto the same pixel, deeper.
                let t = if ray.t_max.is_finite() {
                    0.5 * ray.t_max
                } else {
                    7.0
                };
                let w2 = cam.project(ray.at(t)).unwrap();
                assert!(
                    (w2.x - x).abs() < 1e-2 && (w2.y - y).abs() < 1e-2,
                    "{cam:?} {w2}"
                );
                let deeper = match cam.projection().depth_order() {
                    DepthOrder::Standard => w2.z > w.z,
                    DepthOrder::Reversed => w2.z < w.z,
                };
                assert!(deeper, "{cam:?}");
            }
        }
    }

    #[test]
    fn pixel_center_ray_adds_half_a_pixel() {
        for cam in cams() {
            assert_eq!(cam.pixel_center_ray(3, 7), cam.pixel_ray(3.5, 7.5));
        }
    }

    #[test]
    fn non_finite_pixels_give_invalid_rays() {
        let cam = cams()[0];
        assert!(!cam.pixel_ray(f32::NAN, 1.0).is_valid());
        assert!(!cam.pixel_ray(1.0, f32::INFINITY).is_valid());
    }

    #[test]
    fn degenerate_cameras_are_errors() {
        let vp = Viewport::new(10.0, 10.0);
        let p = Projection::perspective(1.0, 1.0, 0.1, 10.0, ClipSpace::OpenGl).unwrap();
        assert!(Camera::look_at(Vec3::ONE, Vec3::ONE, Vec3::Y, p, vp).is_err());
        assert!(Camera::look_at(Vec3::ZERO, Vec3::Y, Vec3::Y, p, vp).is_err());
        assert!(Camera::new(Mat4::ZERO, p, vp).is_err());
        assert!(Camera::new(Mat4::IDENTITY, p, Viewport::new(-1.0, 1.0)).is_err());
        // A projection declared standard whose near plane is at infinity.
        let bad = Projection::from_matrix(
            Mat4::perspective_infinite_reverse_rh(1.0, 1.0, 0.1),
            ClipSpace::Direct3D,
            DepthOrder::Standard,
        )
        .unwrap();
        assert!(Camera::new(Mat4::IDENTITY, bad, vp).is_err());
    }

    #[test]
    fn frame_bounds_fits_the_sphere() {
        let b = Aabb::new(Vec3::new(-1.0, 0.0, 2.0), Vec3::new(3.0, 1.0, 4.0));
        for vp in [Viewport::new(800.0, 600.0), Viewport::new(300.0, 900.0)] {
            let cam = Camera::frame_bounds(
                b,
                Vec3::new(-1.0, -0.5, -1.0),
                Vec3::Y,
                0.8,
                vp,
                ClipSpace::Direct3D,
            )
            .unwrap();
            // Every box corner projects inside the viewport and the depth range.
            for i in 0..8 {
                let c = Vec3::new(
                    if i & 1 == 0 { b.min.x } else { b.max.x },
                    if i & 2 == 0 { b.min.y } else { b.max.y },
                    if i & 4 == 0 { b.min.z } else { b.max.z },
                );
                let w = cam.project(c).unwrap();
                assert!(
                    w.x >= 0.0 && w.x <= vp.width && w.y >= 0.0 && w.y <= vp.height,
                    "{w}"
                );
                assert!(w.z > 0.0 && w.z < 1.0, "{w}");
            }
            // The centre is in the middle of the window.
            let w = cam.project(b.center()).unwrap();
            assert!((w.x - 0.5 * vp.width).abs() < 1e-2 && (w.y - 0.5 * vp.height).abs() < 1e-2);
        }
        assert!(Camera::frame_bounds(
            Aabb::EMPTY,
            Vec3::NEG_Z,
            Vec3::Y,
            0.8,
            Viewport::new(1.0, 1.0),
            ClipSpace::OpenGl
        )
        .is_err());
    }
}
