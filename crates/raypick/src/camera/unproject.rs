//! [`unproject`] and [`project`]: window coordinates ↔ world points, as `gluUnProject` /
//! `gluProject` and `D3DXVec3Unproject` / `D3DXVec3Project` compute them.
//!
//! `unproject` maps the window point to NDC with the [`Viewport`] (see its module for the pixel
//! conventions), multiplies by `world_from_clip = inverse(clip_from_world)` and divides by w. All the
//! arithmetic is in f64 (the matrix inverse included, and the matrix products of the `glu_*` /
//! `d3dx_*` wrappers, as gluUnProject's doubles do), so the only rounding the caller sees is the
//! final conversion to f32.
//!
//! * `gluUnProject(winx, winy, winz, model, proj, viewport)` is
//!   `unproject((winx, winy, winz), proj * model, viewport, ClipSpace::OpenGl, PixelOrigin::BottomLeft)`
//!   with depth range [0, 1] ([`glu_unproject`]).
//! * `D3DXVec3Unproject(out, v, viewport, proj, view, world)` multiplies row vectors by
//!   `inverse(World · View · Proj)`; the same matrices written for column vectors (glam) are the
//!   transposes, so it is `unproject(v, proj * view * world, viewport, ClipSpace::Direct3D,
//!   PixelOrigin::TopLeft)` ([`d3dx_unproject`]).

use glam::{DMat4, DVec3, DVec4, Mat4, Vec3};

use super::projection::ClipSpace;
use super::viewport::{PixelOrigin, Viewport};

/// `inverse(m)` in f64, or `None` when `m` is singular or not finite.
pub(crate) fn inverse_f64(m: DMat4) -> Option<DMat4> {
    let det = m.determinant();
    if !(det != 0.0 && det.is_finite()) {
        return None;
    }
    let inv = m.inverse();
    inv.is_finite().then_some(inv)
}

/// Homogeneous world point of an NDC point: `world_from_clip · (ndc, 1)`, not divided by w.
#[inline]
pub(crate) fn unproject_homogeneous(world_from_clip: &DMat4, ndc: DVec3) -> DVec4 {
    *world_from_clip * ndc.extend(1.0)
}

/// The f64 core of [`unproject`], with the inverse already computed.
pub(crate) fn unproject_f64(
    window: DVec3,
    world_from_clip: &DMat4,
    viewport: &Viewport,
    clip_space: ClipSpace,
    origin: PixelOrigin,
) -> Option<DVec3> {
    let h = unproject_homogeneous(
        world_from_clip,
        viewport.window_to_ndc(window, clip_space, origin),
    );
    if h.w == 0.0 {
        return None;
    }
    let p = h.truncate() / h.w;
    p.is_finite().then_some(p)
}

/// The world point that lands on window position `window = (x, y, depth)`.
///
/// `x, y` are continuous window coordinates (pixel `(i, j)`'s centre is `(i + 0.5, j + 0.5)`) with
/// the given `origin`; `depth` is window depth in `[viewport.min_depth, viewport.max_depth]`.
/// Returns `None` when `clip_from_world` is singular, the viewport is invalid, an input is not
/// finite, or the point is at infinity (w = 0, e.g. the far plane of an infinite projection).
///
/// ```
/// use raypick::camera::{project, unproject, ClipSpace, PixelOrigin, Viewport};
/// use raypick::glam::{Mat4, Vec3};
/// let clip_from_world = Mat4::perspective_rh_gl(1.0, 1.0, 0.1, 100.0)
///     * Mat4::look_at_rh(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO, Vec3::Y);
/// let vp = Viewport::new(800.0, 800.0);
/// // The centre of the window at the depth of the origin unprojects to the origin.
/// let w = project(Vec3::ZERO, clip_from_world, &vp, ClipSpace::OpenGl, PixelOrigin::TopLeft).unwrap();
/// assert!((w.x - 400.0).abs() < 1e-3 && (w.y - 400.0).abs() < 1e-3);
/// let p = unproject(w, clip_from_world, &vp, ClipSpace::OpenGl, PixelOrigin::TopLeft).unwrap();
/// assert!(p.length() < 1e-4);
/// ```
pub fn unproject(
    window: Vec3,
    clip_from_world: Mat4,
    viewport: &Viewport,
    clip_space: ClipSpace,
    origin: PixelOrigin,
) -> Option<Vec3> {
    unproject_d(
        window,
        clip_from_world.as_dmat4(),
        viewport,
        clip_space,
        origin,
    )
}

/// [`unproject`] with an f64 `clip_from_world` (products of f32 matrices formed in f64).
pub(crate) fn unproject_d(
    window: Vec3,
    clip_from_world: DMat4,
    viewport: &Viewport,
    clip_space: ClipSpace,
    origin: PixelOrigin,
) -> Option<Vec3> {
    if !window.is_finite() || viewport.validate().is_err() {
        return None;
    }
    let world_from_clip = inverse_f64(clip_from_world)?;
    unproject_f64(
        window.as_dvec3(),
        &world_from_clip,
        viewport,
        clip_space,
        origin,
    )
    .map(|p| p.as_vec3())
    .filter(|p| p.is_finite())
}

/// The window position `(x, y, depth)` of a world point: the inverse of [`unproject`].
///
/// Like `gluProject`, this fails only when clip w is 0 (the point is in the eye's plane) or an input
/// is not finite; points behind the eye (clip w < 0) still get the (mirrored) window position the
/// formula gives, so check `depth` against the viewport's range to know whether a point is visible.
pub fn project(
    p_world: Vec3,
    clip_from_world: Mat4,
    viewport: &Viewport,
    clip_space: ClipSpace,
    origin: PixelOrigin,
) -> Option<Vec3> {
    project_d(
        p_world,
        clip_from_world.as_dmat4(),
        viewport,
        clip_space,
        origin,
    )
}

/// [`project`] with an f64 `clip_from_world`.
pub(crate) fn project_d(
    p_world: Vec3,
    clip_from_world: DMat4,
    viewport: &Viewport,
    clip_space: ClipSpace,
    origin: PixelOrigin,
) -> Option<Vec3> {
    if !p_world.is_finite() || viewport.validate().is_err() {
        return None;
    }
    let c = clip_from_world * p_world.as_dvec3().extend(1.0);
    if c.w == 0.0 {
        return None;
    }
    let w = viewport
        .ndc_to_window(c.truncate() / c.w, clip_space, origin)
        .as_vec3();
    w.is_finite().then_some(w)
}

/// `gluUnProject(winx, winy, winz, model, proj, viewport)`: OpenGL window coordinates (origin
/// bottom-left), depth range [0, 1], NDC z ∈ [−1, 1]. `model_view` is `view_from_object`,
/// `projection` is `clip_from_view`, `viewport` is `glGetIntegerv(GL_VIEWPORT)`.
pub fn glu_unproject(
    win: Vec3,
    model_view: Mat4,
    projection: Mat4,
    viewport: [i32; 4],
) -> Option<Vec3> {
    let vp = gl_viewport(viewport);
    unproject_d(
        win,
        projection.as_dmat4() * model_view.as_dmat4(),
        &vp,
        ClipSpace::OpenGl,
        PixelOrigin::BottomLeft,
    )
}

/// `gluProject(objx, objy, objz, model, proj, viewport)`: the inverse of [`glu_unproject`].
pub fn glu_project(
    obj: Vec3,
    model_view: Mat4,
    projection: Mat4,
    viewport: [i32; 4],
) -> Option<Vec3> {
    let vp = gl_viewport(viewport);
    project_d(
        obj,
        projection.as_dmat4() * model_view.as_dmat4(),
        &vp,
        ClipSpace::OpenGl,
        PixelOrigin::BottomLeft,
    )
}

fn gl_viewport(viewport: [i32; 4]) -> Viewport {
    Viewport {
        x: viewport[0] as f32,
        y: viewport[1] as f32,
        width: viewport[2] as f32,
        height: viewport[3] as f32,
        min_depth: 0.0,
        max_depth: 1.0,
    }
}

/// `D3DXVec3Unproject(out, v, viewport, proj, view, world)` with the matrices written for column
/// vectors (glam): `projection = clip_from_view`, `view = view_from_world`, `world =
/// world_from_object` (D3DX's row-vector matrices are their transposes). Window origin top-left,
/// NDC z ∈ [0, 1], window depth in `[viewport.min_depth, viewport.max_depth]`.
pub fn d3dx_unproject(
    v: Vec3,
    viewport: &Viewport,
    projection: Mat4,
    view: Mat4,
    world: Mat4,
) -> Option<Vec3> {
    unproject_d(
        v,
        projection.as_dmat4() * view.as_dmat4() * world.as_dmat4(),
        viewport,
        ClipSpace::Direct3D,
        PixelOrigin::TopLeft,
    )
}

/// `D3DXVec3Project`: the inverse of [`d3dx_unproject`].
pub fn d3dx_project(
    v: Vec3,
    viewport: &Viewport,
    projection: Mat4,
    view: Mat4,
    world: Mat4,
) -> Option<Vec3> {
    project_d(
        v,
        projection.as_dmat4() * view.as_dmat4() * world.as_dmat4(),
        viewport,
        ClipSpace::Direct3D,
        PixelOrigin::TopLeft,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn singular_matrices_and_bad_inputs_give_none() {
        let vp = Viewport::new(10.0, 10.0);
        let (cs, o) = (ClipSpace::OpenGl, PixelOrigin::TopLeft);
        assert!(unproject(Vec3::splat(0.5), Mat4::ZERO, &vp, cs, o).is_none());
        assert!(unproject(Vec3::splat(f32::NAN), Mat4::IDENTITY, &vp, cs, o).is_none());
        assert!(unproject(
            Vec3::splat(0.5),
            Mat4::IDENTITY,
            &Viewport::new(0.0, 1.0),
            cs,
            o
        )
        .is_none());
        // An orthographic identity camera: the window centre at mid depth is the origin.
        let p = unproject(Vec3::new(5.0, 5.0, 0.5), Mat4::IDENTITY, &vp, cs, o).unwrap();
        assert_eq!(p, Vec3::ZERO);
        // The plane at infinity of an infinite projection has no finite point.
        let inf = Mat4::perspective_infinite_rh(1.0, 1.0, 0.1);
        assert!(unproject(Vec3::new(5.0, 5.0, 1.0), inf, &vp, ClipSpace::Direct3D, o).is_none());
    }
}
