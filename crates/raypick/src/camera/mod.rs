//! Camera: from a pixel to a world-space ray and to what is under it, in every graphics API's
//! conventions.
//!
//! | file | what |
//! |---|---|
//! | [`projection`] | [`Projection`] (perspective, infinite, reverse-Z, orthographic, raw matrices), [`ClipSpace`], [`DepthOrder`] |
//! | [`viewport`] | [`Viewport`], [`PixelOrigin`]: window coordinates ↔ NDC |
//! | [`unproject`](mod@unproject) | [`unproject`](fn@unproject) / [`project`] (= `gluUnProject`, `D3DXVec3Unproject`) |
//! | [`view`] | [`Camera`]: look-at, framing of bounds, pixel rays |
//! | [`orbit`] | [`Orbit`]: yaw / pitch / distance around a target |
//! | [`pick`](mod@pick) | [`pick`](fn@pick), [`pick_path`] (with the instance path), [`pick_with_tolerance`], [`pick_rect`] (marquee selection) |
//! | [`frustum`] | [`Frustum`], [`PixelRect`]: exact triangle / sphere vs sub-frustum tests |
//!
//! ## Conventions
//! - Matrices are glam's: column-major, column vectors, named `b_from_a` (`clip_from_view`,
//!   `view_from_world`). The constructors are right-handed (view looks down −Z, Y up);
//!   anything else enters through [`Projection::from_matrix`].
//! - Window coordinates are continuous: pixel `(i, j)` covers `[i, i + 1) × [j, j + 1)` and its centre
//!   is `(i + 0.5, j + 0.5)`. The origin is top-left with y down unless [`PixelOrigin::BottomLeft`]
//!   (OpenGL window coordinates) is chosen.
//! - Pixel rays start on the near plane (`t = 0`), have a unit direction (`t` in world units) and
//!   end at the far plane (`t_max`, `∞` for infinite projections).
//! - Unprojection is computed in f64 and rounded once to f32.

pub mod frustum;
pub mod orbit;
pub mod pick;
pub mod projection;
pub mod unproject;
pub mod view;
pub mod viewport;

pub use frustum::{Frustum, PixelRect};
pub use orbit::Orbit;
pub use pick::{
    pick, pick_path, pick_path_with, pick_rect, pick_rect_with, pick_with, pick_with_tolerance,
    Pick,
};
pub use projection::{ClipSpace, DepthOrder, Projection};
pub use unproject::{d3dx_project, d3dx_unproject, glu_project, glu_unproject, project, unproject};
pub use view::Camera;
pub use viewport::{PixelOrigin, Viewport};

/// What can go wrong when building a camera. Pixel rays, projection and picking never fail once a
/// [`Camera`] exists.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CameraError {
    /// A projection parameter is out of range; the message names it and the valid range.
    #[error("invalid projection: {0}")]
    InvalidProjection(&'static str),
    /// The viewport needs finite fields, a positive width and height and `min_depth != max_depth`.
    #[error("invalid viewport {0:?}: fields must be finite, width and height > 0, min_depth != max_depth")]
    InvalidViewport(Viewport),
    /// A matrix that must be inverted is singular or not finite; the message names it.
    #[error("the {0} matrix is singular or not finite")]
    SingularMatrix(&'static str),
    /// `look_at` cannot build a basis; the message says why (eye on the target, up parallel to the view).
    #[error("degenerate look-at: {0}")]
    DegenerateLookAt(&'static str),
    /// The near plane is not a finite plane in front of the camera (homogeneous w ≤ 0 somewhere in
    /// the viewport): usually a reverse-Z matrix passed with [`DepthOrder::Standard`] or vice versa.
    #[error("the near plane is not in front of the camera: check the projection's DepthOrder and ClipSpace")]
    NearPlaneNotInFront,
    /// `frame_bounds` was given empty or non-finite bounds.
    #[error("cannot frame empty or non-finite bounds")]
    EmptyBounds,
}
