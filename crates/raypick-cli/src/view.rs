//! The camera the CLI and the viewer use: an explicit `eye, target, up, fov`, or one that frames the
//! model automatically.

use glam::Vec3;
use raypick::camera::{Camera, CameraError, ClipSpace, Projection, Viewport};
use raypick::Scene;

/// An explicit camera: eye, target, up and vertical field of view in degrees.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraSpec {
    /// Eye position.
    pub eye: Vec3,
    /// Point looked at.
    pub target: Vec3,
    /// Up direction.
    pub up: Vec3,
    /// Vertical field of view, degrees.
    pub fov_deg: f32,
}

/// The view direction the default camera frames a model from: from +z and a little above, like the
/// shared benchmark's primary-ray camera.
pub const DEFAULT_VIEW_DIR: Vec3 = Vec3::new(0.0, -0.6, -2.2);
/// The demo scene's view direction.
pub const DEMO_VIEW_DIR: Vec3 = Vec3::new(-0.35, -0.5, -1.0);
/// Vertical field of view of the automatic camera, degrees.
pub const DEFAULT_FOV_DEG: f32 = 45.0;

/// Why no camera could be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ViewError {
    /// The scene has no geometry to frame.
    #[error("the scene is empty: nothing to frame")]
    EmptyScene,
    /// The camera parameters are degenerate.
    #[error("camera: {0}")]
    Camera(CameraError),
}

// Not `#[from]`: that would also make the camera error the source, and a caller printing the
// chain would repeat it after the message that already holds it.
impl From<CameraError> for ViewError {
    fn from(error: CameraError) -> Self {
        ViewError::Camera(error)
    }
}

/// What the automatic camera frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// The scene's bounds, seen along [`DEFAULT_VIEW_DIR`].
    Scene,
    /// The demo scene's objects ([`crate::demo::DEMO_FRAME`], not the whole ground plane), seen
    /// along [`DEMO_VIEW_DIR`].
    Demo,
}

/// The camera for a `width × height` image: `spec` when given, else one that frames `scene` as
/// `framing` says.
pub fn make_camera(
    scene: &Scene,
    (width, height): (u32, u32),
    clip: ClipSpace,
    spec: Option<CameraSpec>,
    framing: Framing,
) -> Result<Camera, ViewError> {
    let viewport = Viewport::new(width as f32, height as f32);
    match spec {
        Some(spec) => {
            let b = scene.bounds();
            let dist = (spec.target - spec.eye).length();
            let radius = if b.is_empty() {
                1.0
            } else {
                0.5 * b.extent().length()
            };
            // Near: 1e-4 of the working distance, so close geometry is not clipped; depth precision
            // is irrelevant to ray casting (no z-buffer), and the far plane is at infinity.
            let near = 1e-4 * (dist + radius).max(1e-3);
            let projection = Projection::perspective_infinite(
                spec.fov_deg.to_radians(),
                viewport.aspect(),
                near,
                clip,
            )?;
            Ok(Camera::look_at(
                spec.eye,
                spec.target,
                spec.up,
                projection,
                viewport,
            )?)
        }
        None => {
            let (dir, bounds) = match framing {
                Framing::Demo => (DEMO_VIEW_DIR, crate::demo::DEMO_FRAME),
                Framing::Scene => (DEFAULT_VIEW_DIR, scene.bounds()),
            };
            if bounds.is_empty() {
                return Err(ViewError::EmptyScene);
            }
            Ok(Camera::frame_bounds(
                bounds,
                dir,
                Vec3::Y,
                DEFAULT_FOV_DEG.to_radians(),
                viewport,
                clip,
            )?)
        }
    }
}
