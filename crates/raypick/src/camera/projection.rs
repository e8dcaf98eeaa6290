//! Projections and clip-space conventions.
//!
//! A [`Projection`] is a `clip_from_view` matrix (column-major, column vectors, as glam and OpenGL
//! use) together with the two facts needed to invert it for picking: which [`ClipSpace`] the
//! matrix targets (the NDC depth range and the direction of NDC y) and whether depth is
//! [reversed](DepthOrder::Reversed). The constructors build right-handed matrices (the view looks
//! down −Z, Y up), exactly the ones glam builds (`perspective_rh_gl`, `perspective_rh`,
//! `perspective_infinite_rh`, `perspective_infinite_reverse_rh`, `orthographic_rh_gl`,
//! `orthographic_rh`), so a pick agrees bit for bit with what an engine using glam renders. Any
//! other matrix (left-handed, oblique, jittered) goes through [`Projection::from_matrix`].

use glam::{Mat4, Vec4};

use super::CameraError;

/// Where clip space puts depth and which way NDC y points: the per-API convention.
///
/// | variant | APIs | NDC z of near → far | NDC y = +1 is |
/// |---|---|---|---|
/// | [`OpenGl`](ClipSpace::OpenGl) | OpenGL, OpenGL ES, WebGL | −1 → +1 | the top of the viewport |
/// | [`Direct3D`](ClipSpace::Direct3D) | Direct3D, Metal, wgpu / WebGPU | 0 → 1 | the top of the viewport |
/// | [`Vulkan`](ClipSpace::Vulkan) | Vulkan (no flipped viewport) | 0 → 1 | the **bottom** of the viewport |
///
/// Vulkan users who flip y in their projection matrix or use a negative viewport height (the
/// `VK_KHR_maintenance1` trick) render with the Direct3D convention and should pick with it too.
/// With [`DepthOrder::Reversed`] the near and far columns swap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClipSpace {
    /// OpenGL: NDC z ∈ [−1, 1], NDC y up.
    OpenGl,
    /// Direct3D, Metal, wgpu / WebGPU: NDC z ∈ [0, 1], NDC y up.
    Direct3D,
    /// Vulkan's native clip space: NDC z ∈ [0, 1], NDC y **down** (y = −1 is the top row).
    Vulkan,
}

impl ClipSpace {
    /// wgpu / WebGPU use Direct3D's clip space.
    pub const WGPU: Self = Self::Direct3D;
    /// Metal uses Direct3D's clip space.
    pub const METAL: Self = Self::Direct3D;

    /// The NDC depth range `(lo, hi)`: `(-1, 1)` for OpenGL, `(0, 1)` otherwise.
    #[inline]
    pub const fn ndc_depth_range(self) -> (f32, f32) {
        match self {
            Self::OpenGl => (-1.0, 1.0),
            Self::Direct3D | Self::Vulkan => (0.0, 1.0),
        }
    }

    /// `true` when NDC y = −1 is the top of the viewport (Vulkan).
    #[inline]
    pub const fn ndc_y_down(self) -> bool {
        matches!(self, Self::Vulkan)
    }
}

/// Which end of the NDC depth range the near plane maps to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DepthOrder {
    /// Near plane → low end of the range (−1 or 0), far plane → 1. The classic mapping.
    #[default]
    Standard,
    /// Reverse-Z: near plane → 1, far plane → the low end (0). Spreads float depth precision evenly.
    Reversed,
}

/// A `clip_from_view` matrix with its clip-space convention and depth order.
///
/// ```
/// use raypick::camera::{ClipSpace, Projection};
/// use raypick::glam::Mat4;
/// let p = Projection::perspective(45f32.to_radians(), 1.5, 0.1, 100.0, ClipSpace::OpenGl).unwrap();
/// assert_eq!(p.clip_from_view(), Mat4::perspective_rh_gl(45f32.to_radians(), 1.5, 0.1, 100.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Projection {
    clip_from_view: Mat4,
    clip_space: ClipSpace,
    depth_order: DepthOrder,
}

/// Negates clip y: turns a y-up projection into one for Vulkan's y-down clip space.
fn flip_y(m: Mat4) -> Mat4 {
    Mat4::from_diagonal(Vec4::new(1.0, -1.0, 1.0, 1.0)) * m
}

/// Maps NDC depth `z` to `lo + hi − z` (in clip space: `z' = (lo + hi)·w − z`): reverse-Z for any range.
fn reverse_depth(m: Mat4, clip_space: ClipSpace) -> Mat4 {
    let (lo, hi) = clip_space.ndc_depth_range();
    let r = Mat4::from_cols(
        Vec4::X,
        Vec4::Y,
        Vec4::new(0.0, 0.0, -1.0, 0.0),
        Vec4::new(0.0, 0.0, lo + hi, 1.0),
    );
    r * m
}

fn check_perspective(fov_y: f32, aspect: f32, near: f32) -> Result<(), CameraError> {
    if !(fov_y > 0.0 && fov_y < std::f32::consts::PI) {
        return Err(CameraError::InvalidProjection(
            "fov_y must be in (0, π) radians",
        ));
    }
    if !(aspect > 0.0 && aspect.is_finite()) {
        return Err(CameraError::InvalidProjection(
            "aspect must be finite and > 0",
        ));
    }
    if !(near > 0.0 && near.is_finite()) {
        return Err(CameraError::InvalidProjection(
            "near must be finite and > 0",
        ));
    }
    Ok(())
}

fn check_far(near: f32, far: f32) -> Result<(), CameraError> {
    if !(far > near && far.is_finite()) {
        return Err(CameraError::InvalidProjection(
            "far must be finite and > near (use an infinite projection for far = ∞)",
        ));
    }
    Ok(())
}

/// The y-up base matrix for a clip space: OpenGL's or the [0, 1] one.
fn for_clip_space(clip_space: ClipSpace, gl: Mat4, zero_one: Mat4) -> Mat4 {
    match clip_space {
        ClipSpace::OpenGl => gl,
        ClipSpace::Direct3D => zero_one,
        ClipSpace::Vulkan => flip_y(zero_one),
    }
}

impl Projection {
    /// A right-handed perspective projection: vertical field of view `fov_y` (radians),
    /// `aspect = width / height`, finite `near` and `far` distances (`0 < near < far`).
    ///
    /// OpenGL gets `Mat4::perspective_rh_gl`, Direct3D `Mat4::perspective_rh`, Vulkan the latter
    /// with clip y negated.
    pub fn perspective(
        fov_y: f32,
        aspect: f32,
        near: f32,
        far: f32,
        clip_space: ClipSpace,
    ) -> Result<Self, CameraError> {
        check_perspective(fov_y, aspect, near)?;
        check_far(near, far)?;
        let m = for_clip_space(
            clip_space,
            Mat4::perspective_rh_gl(fov_y, aspect, near, far),
            Mat4::perspective_rh(fov_y, aspect, near, far),
        );
        Ok(Self {
            clip_from_view: m,
            clip_space,
            depth_order: DepthOrder::Standard,
        })
    }

    /// A right-handed perspective projection with the far plane at infinity.
    ///
    /// The [0, 1] conventions get `Mat4::perspective_infinite_rh`; OpenGL gets the limit of
    /// `perspective_rh_gl` as far → ∞ (`z_clip = −z − 2·near`, `w_clip = −z`).
    pub fn perspective_infinite(
        fov_y: f32,
        aspect: f32,
        near: f32,
        clip_space: ClipSpace,
    ) -> Result<Self, CameraError> {
        check_perspective(fov_y, aspect, near)?;
        let gl = {
            let h = 1.0 / (0.5 * fov_y).tan();
            Mat4::from_cols(
                Vec4::new(h / aspect, 0.0, 0.0, 0.0),
                Vec4::new(0.0, h, 0.0, 0.0),
                Vec4::new(0.0, 0.0, -1.0, -1.0),
                Vec4::new(0.0, 0.0, -2.0 * near, 0.0),
            )
        };
        let m = for_clip_space(
            clip_space,
            gl,
            Mat4::perspective_infinite_rh(fov_y, aspect, near),
        );
        Ok(Self {
            clip_from_view: m,
            clip_space,
            depth_order: DepthOrder::Standard,
        })
    }

    /// A right-handed reverse-Z perspective projection: near → NDC z = 1, far → the low end of the
    /// range (0, or −1 for OpenGL, where reverse-Z only helps with `glClipControl(…, GL_ZERO_TO_ONE)`,
    /// i.e. the [`ClipSpace::Direct3D`] convention).
    pub fn perspective_reverse_z(
        fov_y: f32,
        aspect: f32,
        near: f32,
        far: f32,
        clip_space: ClipSpace,
    ) -> Result<Self, CameraError> {
        let standard = Self::perspective(fov_y, aspect, near, far, clip_space)?;
        Ok(Self {
            clip_from_view: reverse_depth(standard.clip_from_view, clip_space),
            clip_space,
            depth_order: DepthOrder::Reversed,
        })
    }

    /// A right-handed reverse-Z perspective projection with the far plane at infinity (NDC z → 0).
    ///
    /// The [0, 1] conventions get glam's `Mat4::perspective_infinite_reverse_rh`, the usual choice
    /// of modern engines.
    pub fn perspective_infinite_reverse_z(
        fov_y: f32,
        aspect: f32,
        near: f32,
        clip_space: ClipSpace,
    ) -> Result<Self, CameraError> {
        check_perspective(fov_y, aspect, near)?;
        let m = match clip_space {
            ClipSpace::OpenGl => reverse_depth(
                Self::perspective_infinite(fov_y, aspect, near, clip_space)?.clip_from_view,
                clip_space,
            ),
            ClipSpace::Direct3D => Mat4::perspective_infinite_reverse_rh(fov_y, aspect, near),
            ClipSpace::Vulkan => flip_y(Mat4::perspective_infinite_reverse_rh(fov_y, aspect, near)),
        };
        Ok(Self {
            clip_from_view: m,
            clip_space,
            depth_order: DepthOrder::Reversed,
        })
    }

    /// A right-handed orthographic projection of the view-space box `[left, right] × [bottom, top]`
    /// between the distances `near` and `far` (`near < far`; `near` may be zero or negative).
    pub fn orthographic(
        left: f32,
        right: f32,
        bottom: f32,
        top: f32,
        near: f32,
        far: f32,
        clip_space: ClipSpace,
    ) -> Result<Self, CameraError> {
        let all_finite = [left, right, bottom, top, near, far]
            .iter()
            .all(|v| v.is_finite());
        if !(all_finite && left < right && bottom < top && near < far) {
            return Err(CameraError::InvalidProjection(
                "orthographic bounds must be finite with left < right, bottom < top, near < far",
            ));
        }
        let m = for_clip_space(
            clip_space,
            Mat4::orthographic_rh_gl(left, right, bottom, top, near, far),
            Mat4::orthographic_rh(left, right, bottom, top, near, far),
        );
        Ok(Self {
            clip_from_view: m,
            clip_space,
            depth_order: DepthOrder::Standard,
        })
    }

    /// A symmetric orthographic projection `height` view units tall with `aspect = width / height`.
    pub fn orthographic_symmetric(
        height: f32,
        aspect: f32,
        near: f32,
        far: f32,
        clip_space: ClipSpace,
    ) -> Result<Self, CameraError> {
        let half_h = 0.5 * height;
        let half_w = half_h * aspect;
        Self::orthographic(-half_w, half_w, -half_h, half_h, near, far, clip_space)
    }

    /// The projection an engine already has: any invertible `clip_from_view` matrix (column-major,
    /// column vectors), the clip space it targets and its depth order. Nothing is assumed about
    /// handedness, symmetry or finiteness of the far plane; visible points must have clip w > 0,
    /// as the rasterizer requires.
    pub fn from_matrix(
        clip_from_view: Mat4,
        clip_space: ClipSpace,
        depth_order: DepthOrder,
    ) -> Result<Self, CameraError> {
        let det = clip_from_view.as_dmat4().determinant();
        if !(det != 0.0 && det.is_finite()) {
            return Err(CameraError::SingularMatrix("clip_from_view"));
        }
        Ok(Self {
            clip_from_view,
            clip_space,
            depth_order,
        })
    }

    /// The `clip_from_view` matrix.
    #[inline]
    pub fn clip_from_view(&self) -> Mat4 {
        self.clip_from_view
    }

    /// The clip-space convention the matrix targets.
    #[inline]
    pub fn clip_space(&self) -> ClipSpace {
        self.clip_space
    }

    /// Whether depth is reversed.
    #[inline]
    pub fn depth_order(&self) -> DepthOrder {
        self.depth_order
    }

    /// NDC z of the near and the far plane: `(near, far)`, e.g. `(-1, 1)` for OpenGL, `(1, 0)` for
    /// reverse-Z in [0, 1]. For infinite projections the far value is the plane at infinity.
    #[inline]
    pub fn ndc_near_far(&self) -> (f32, f32) {
        let (lo, hi) = self.clip_space.ndc_depth_range();
        match self.depth_order {
            DepthOrder::Standard => (lo, hi),
            DepthOrder::Reversed => (hi, lo),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    fn ndc(m: Mat4, p_view: Vec3) -> Vec3 {
        let c = m * p_view.extend(1.0);
        c.truncate() / c.w
    }

    #[test]
    fn near_and_far_land_on_the_documented_ndc_depths() {
        let (fov, a, n, f) = (1.0, 1.3, 0.5, 40.0);
        for cs in [ClipSpace::OpenGl, ClipSpace::Direct3D, ClipSpace::Vulkan] {
            for p in [
                Projection::perspective(fov, a, n, f, cs).unwrap(),
                Projection::perspective_reverse_z(fov, a, n, f, cs).unwrap(),
                Projection::orthographic(-2.0, 3.0, -1.0, 2.0, n, f, cs).unwrap(),
            ] {
                let (zn, zf) = p.ndc_near_far();
                let near = ndc(p.clip_from_view(), Vec3::new(0.1, 0.2, -n));
                let far = ndc(p.clip_from_view(), Vec3::new(0.1, 0.2, -f));
                assert!((near.z - zn).abs() < 1e-5, "{cs:?} {near}");
                assert!((far.z - zf).abs() < 1e-5, "{cs:?} {far}");
                // View-space up is NDC up, unless Vulkan.
                let up = ndc(p.clip_from_view(), Vec3::new(0.0, 0.3, -1.0));
                let down = ndc(p.clip_from_view(), Vec3::new(0.0, -0.3, -1.0));
                assert_eq!(up.y > down.y, !cs.ndc_y_down(), "{cs:?}");
            }
            for p in [
                Projection::perspective_infinite(fov, a, n, cs).unwrap(),
                Projection::perspective_infinite_reverse_z(fov, a, n, cs).unwrap(),
            ] {
                let (zn, zf) = p.ndc_near_far();
                let near = ndc(p.clip_from_view(), Vec3::new(0.1, 0.2, -n));
                let far = ndc(p.clip_from_view(), Vec3::new(0.1, 0.2, -1e7));
                assert!((near.z - zn).abs() < 1e-5, "{cs:?} {near}");
                assert!((far.z - zf).abs() < 1e-5, "{cs:?} {far}");
            }
        }
    }

    #[test]
    fn glam_matrices_are_used_verbatim() {
        let (fov, a, n, f) = (0.8, 1.7, 0.01, 1000.0);
        let d3d = Projection::perspective(fov, a, n, f, ClipSpace::Direct3D).unwrap();
        assert_eq!(d3d.clip_from_view(), Mat4::perspective_rh(fov, a, n, f));
        let rev = Projection::perspective_infinite_reverse_z(fov, a, n, ClipSpace::WGPU).unwrap();
        assert_eq!(
            rev.clip_from_view(),
            Mat4::perspective_infinite_reverse_rh(fov, a, n)
        );
    }

    #[test]
    fn bad_parameters_are_errors() {
        let cs = ClipSpace::OpenGl;
        assert!(Projection::perspective(0.0, 1.0, 0.1, 10.0, cs).is_err());
        assert!(Projection::perspective(1.0, f32::NAN, 0.1, 10.0, cs).is_err());
        assert!(Projection::perspective(1.0, 1.0, 0.0, 10.0, cs).is_err());
        assert!(Projection::perspective(1.0, 1.0, 1.0, 1.0, cs).is_err());
        assert!(Projection::perspective(1.0, 1.0, 1.0, f32::INFINITY, cs).is_err());
        assert!(Projection::orthographic(1.0, 1.0, 0.0, 1.0, 0.0, 1.0, cs).is_err());
        assert!(Projection::from_matrix(Mat4::ZERO, cs, DepthOrder::Standard).is_err());
    }
}
