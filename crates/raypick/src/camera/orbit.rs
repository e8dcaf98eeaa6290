//! [`Orbit`]: a camera that turns around a target (yaw, pitch, distance), for interactive viewers.

use glam::{Mat4, Vec3};

use super::projection::Projection;
use super::view::Camera;
use super::viewport::Viewport;
use super::CameraError;
use crate::geom::Aabb;

/// How close `|pitch|` may get to π/2: 1e-3 rad keeps the view direction at least 0.057° away
/// from the world up axis, so the look-at basis (a cross product with +Y) stays well conditioned.
pub const PITCH_LIMIT: f32 = std::f32::consts::FRAC_PI_2 - 1e-3;

/// An orbit around `target` in the right-handed, Y-up world: the eye is at
/// `target + distance · (cos(pitch)·sin(yaw), sin(pitch), cos(pitch)·cos(yaw))`.
///
/// `yaw = pitch = 0` looks down −Z; positive `pitch` looks down on the target from above.
///
/// ```
/// use raypick::camera::Orbit;
/// use raypick::glam::Vec3;
/// let mut orbit = Orbit::new(Vec3::ZERO, 10.0);
/// assert!((orbit.eye() - Vec3::new(0.0, 0.0, 10.0)).length() < 1e-6);
/// orbit.rotate(std::f32::consts::FRAC_PI_2, 0.0);
/// assert!((orbit.eye() - Vec3::new(10.0, 0.0, 0.0)).length() < 1e-5);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Orbit {
    /// The point looked at and turned around.
    pub target: Vec3,
    /// Angle around +Y in radians (0: the eye is on +Z of the target).
    pub yaw: f32,
    /// Elevation in radians, kept within ±[`PITCH_LIMIT`] by [`Orbit::rotate`].
    pub pitch: f32,
    /// Distance from the eye to the target (> 0).
    pub distance: f32,
}

impl Orbit {
    /// An orbit at `distance` from `target`, with `yaw = pitch = 0`.
    pub fn new(target: Vec3, distance: f32) -> Self {
        Self {
            target,
            yaw: 0.0,
            pitch: 0.0,
            distance,
        }
    }

    /// An orbit around the centre of `bounds` whose distance fits the bounding sphere in a
    /// perspective view with vertical field of view `fov_y` and `aspect` (as
    /// [`Camera::frame_bounds`]). Empty bounds give the unit orbit around the origin.
    pub fn framing(bounds: Aabb, fov_y: f32, aspect: f32) -> Self {
        if bounds.is_empty() {
            return Self::new(Vec3::ZERO, 1.0);
        }
        let r = 0.5 * bounds.extent().length();
        let half_y = 0.5 * fov_y;
        let a = half_y.min((aspect * half_y.tan()).atan());
        let distance = if r > 0.0 { r / a.sin() } else { 1.0 };
        Self::new(bounds.center(), distance)
    }

    /// The eye position.
    pub fn eye(&self) -> Vec3 {
        let (sy, cy) = self.yaw.sin_cos();
        let (sp, cp) = self.pitch.sin_cos();
        self.target + self.distance * Vec3::new(cp * sy, sp, cp * cy)
    }

    /// Turns by `d_yaw` and `d_pitch` radians; pitch is clamped to ±[`PITCH_LIMIT`].
    pub fn rotate(&mut self, d_yaw: f32, d_pitch: f32) {
        self.yaw = (self.yaw + d_yaw).rem_euclid(std::f32::consts::TAU);
        self.pitch = (self.pitch + d_pitch).clamp(-PITCH_LIMIT, PITCH_LIMIT);
    }

    /// Multiplies the distance by `factor` (< 1 moves closer); non-positive or non-finite factors
    /// are ignored.
    pub fn zoom(&mut self, factor: f32) {
        if factor > 0.0 && factor.is_finite() {
            self.distance *= factor;
        }
    }

    /// `view_from_world` for this orbit (`Mat4::look_at_rh(eye, target, +Y)`).
    pub fn view_from_world(&self) -> Mat4 {
        Mat4::look_at_rh(self.eye(), self.target, Vec3::Y)
    }

    /// A camera for this orbit.
    pub fn camera(
        &self,
        projection: Projection,
        viewport: Viewport,
    ) -> Result<Camera, CameraError> {
        Camera::look_at(self.eye(), self.target, Vec3::Y, projection, viewport)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::camera::ClipSpace;

    #[test]
    fn the_target_stays_in_the_window_centre() {
        let vp = Viewport::new(400.0, 300.0);
        let p = Projection::perspective(0.8, vp.aspect(), 0.1, 100.0, ClipSpace::OpenGl).unwrap();
        let mut o = Orbit::new(Vec3::new(1.0, -2.0, 0.5), 7.0);
        for step in 0..20 {
            o.rotate(0.7, if step < 10 { 0.4 } else { -0.4 });
            assert!(o.pitch.abs() <= PITCH_LIMIT);
            assert!(((o.eye() - o.target).length() - 7.0).abs() < 1e-4);
            let cam = o.camera(p, vp).unwrap();
            let w = cam.project(o.target).unwrap();
            assert!(
                (w.x - 200.0).abs() < 1e-2 && (w.y - 150.0).abs() < 1e-2,
                "{w}"
            );
        }
        o.zoom(0.5);
        assert_eq!(o.distance, 3.5);
        o.zoom(-1.0);
        assert_eq!(o.distance, 3.5);
    }
}
