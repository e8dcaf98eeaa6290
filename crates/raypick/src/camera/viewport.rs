//! [`Viewport`] and [`PixelOrigin`]: window coordinates ↔ normalized device coordinates.
//!
//! ## Pixel coordinates
//! Window coordinates are **continuous**: pixel `(i, j)` covers `[i, i + 1) × [j, j + 1)` and its
//! centre is `(i + 0.5, j + 0.5)`. A mouse event's position is already continuous (browsers and
//! most toolkits report the cursor's position, which the caller may pass as is); an integer pixel
//! index needs the `+ 0.5`, which [`Camera::pixel_center_ray`](super::Camera::pixel_center_ray)
//! adds.
//!
//! [`PixelOrigin::TopLeft`] (the default: window, browser and Direct3D / Vulkan / wgpu / Metal
//! framebuffer coordinates) has y growing downwards; [`PixelOrigin::BottomLeft`] is OpenGL's
//! window coordinates (`glViewport`, `glReadPixels`, `gluUnProject`), y growing upwards. The classic
//! OpenGL picking code converts an integer mouse row with `realy = viewport[3] - y - 1`; in continuous
//! coordinates that is `y_bottom_left = height - y_top_left`, and the pixel centre `j + 0.5` becomes
//! `(height - j - 1) + 0.5`.
//!
//! The viewport's `x` and `y` are measured in the same convention as the pixels: with
//! `BottomLeft` they are `glViewport`'s lower-left corner, with `TopLeft` the upper-left corner of
//! a D3D / Vulkan / wgpu viewport. A viewport covering the whole window has `x = y = 0` in both.

use glam::{DVec3, Vec3};

use super::projection::ClipSpace;
use super::CameraError;

/// Where pixel row 0 is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PixelOrigin {
    /// Row 0 at the top, y down: window systems, browsers, Direct3D, Vulkan, wgpu, Metal.
    #[default]
    TopLeft,
    /// Row 0 at the bottom, y up: OpenGL window coordinates (`gluUnProject`, `glReadPixels`).
    BottomLeft,
}

/// The window-space rectangle the NDC square `[-1, 1]²` maps to, and the depth range NDC depth
/// maps to (`glViewport` + `glDepthRange`, `D3D11_VIEWPORT`, `VkViewport`).
///
/// Window depth `min_depth` is the low end of the NDC depth range (−1 or 0) and `max_depth` the
/// high end (1). With reverse-Z, the near plane is at `max_depth`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Viewport {
    /// Left edge in pixels.
    pub x: f32,
    /// Top edge (with [`PixelOrigin::TopLeft`]) or bottom edge (with [`PixelOrigin::BottomLeft`]) in pixels.
    pub y: f32,
    /// Width in pixels (> 0).
    pub width: f32,
    /// Height in pixels (> 0).
    pub height: f32,
    /// Window depth of the low end of NDC depth (usually 0).
    pub min_depth: f32,
    /// Window depth of the high end of NDC depth (usually 1).
    pub max_depth: f32,
}

impl Viewport {
    /// A `width × height` viewport at the window's origin with depth range [0, 1].
    #[inline]
    pub const fn new(width: f32, height: f32) -> Self {
        Self {
            x: 0.0,
            y: 0.0,
            width,
            height,
            min_depth: 0.0,
            max_depth: 1.0,
        }
    }

    /// `width / height`.
    #[inline]
    pub fn aspect(&self) -> f32 {
        self.width / self.height
    }

    /// Checks that every field is finite, the size is positive and `min_depth != max_depth`.
    pub fn validate(&self) -> Result<(), CameraError> {
        let finite = [
            self.x,
            self.y,
            self.width,
            self.height,
            self.min_depth,
            self.max_depth,
        ]
        .iter()
        .all(|v| v.is_finite());
        if finite && self.width > 0.0 && self.height > 0.0 && self.min_depth != self.max_depth {
            Ok(())
        } else {
            Err(CameraError::InvalidViewport(*self))
        }
    }

    /// Window coordinates → NDC, in f64 (the inverse of [`Viewport::ndc_to_window`]).
    ///
    /// `x_ndc = 2(x − X)/W − 1`; `y` likewise, negated when exactly one of "pixel y down" and
    /// "NDC y down" holds; `z_ndc` maps `[min_depth, max_depth]` linearly onto the clip space's
    /// depth range.
    pub fn window_to_ndc(
        &self,
        window: DVec3,
        clip_space: ClipSpace,
        origin: PixelOrigin,
    ) -> DVec3 {
        let x = 2.0 * (window.x - self.x as f64) / self.width as f64 - 1.0;
        let s = 2.0 * (window.y - self.y as f64) / self.height as f64 - 1.0;
        let flip = (origin == PixelOrigin::TopLeft) != clip_space.ndc_y_down();
        let y = if flip { -s } else { s };
        let (lo, hi) = clip_space.ndc_depth_range();
        let d =
            (window.z - self.min_depth as f64) / (self.max_depth as f64 - self.min_depth as f64);
        DVec3::new(x, y, lo as f64 + d * (hi - lo) as f64)
    }

    /// NDC → window coordinates, in f64 (the viewport transform of the rasterizer).
    pub fn ndc_to_window(&self, ndc: DVec3, clip_space: ClipSpace, origin: PixelOrigin) -> DVec3 {
        let flip = (origin == PixelOrigin::TopLeft) != clip_space.ndc_y_down();
        let s = if flip { -ndc.y } else { ndc.y };
        let (lo, hi) = clip_space.ndc_depth_range();
        let d = (ndc.z - lo as f64) / (hi - lo) as f64;
        DVec3::new(
            self.x as f64 + (ndc.x + 1.0) * 0.5 * self.width as f64,
            self.y as f64 + (s + 1.0) * 0.5 * self.height as f64,
            self.min_depth as f64 + d * (self.max_depth as f64 - self.min_depth as f64),
        )
    }

    /// Converts a continuous window position between the two pixel origins, for a window
    /// `window_height` pixels tall: `y' = window_height − y` (x and depth unchanged). The map is its
    /// own inverse.
    #[inline]
    pub fn flip_origin(window: Vec3, window_height: f32) -> Vec3 {
        Vec3::new(window.x, window_height - window.y, window.z)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_ndc_round_trip_and_corners() {
        let vp = Viewport {
            x: 10.0,
            y: 20.0,
            width: 640.0,
            height: 480.0,
            min_depth: 0.25,
            max_depth: 0.75,
        };
        for cs in [ClipSpace::OpenGl, ClipSpace::Direct3D, ClipSpace::Vulkan] {
            for o in [PixelOrigin::TopLeft, PixelOrigin::BottomLeft] {
                let w = DVec3::new(100.25, 300.5, 0.4);
                let back = vp.ndc_to_window(vp.window_to_ndc(w, cs, o), cs, o);
                assert!((back - w).abs().max_element() < 1e-12);
                // The viewport's first row (y = vp.y) is NDC y = +1 exactly when the rows and NDC
                // agree about up: top row & y-up NDC, or bottom row & Vulkan… per the table.
                let first_row = vp.window_to_ndc(DVec3::new(10.0, 20.0, 0.25), cs, o);
                let top = o == PixelOrigin::TopLeft;
                let expect_y = if top != cs.ndc_y_down() { 1.0 } else { -1.0 };
                assert_eq!(first_row.x, -1.0);
                assert_eq!(first_row.y, expect_y, "{cs:?} {o:?}");
                assert_eq!(first_row.z, cs.ndc_depth_range().0 as f64);
            }
        }
    }

    #[test]
    fn validation() {
        assert!(Viewport::new(640.0, 480.0).validate().is_ok());
        assert!(Viewport::new(0.0, 480.0).validate().is_err());
        assert!(Viewport::new(f32::NAN, 480.0).validate().is_err());
        let mut vp = Viewport::new(4.0, 4.0);
        vp.max_depth = 0.0;
        assert!(vp.validate().is_err());
    }

    #[test]
    fn flipping_the_origin_matches_the_classic_realy() {
        // Integer row j from the top is row viewport[3] - j - 1 from the bottom.
        let h = 480.0;
        for j in [0u32, 1, 239, 479] {
            let c = Viewport::flip_origin(Vec3::new(0.0, j as f32 + 0.5, 0.0), h);
            assert_eq!(c.y, (480 - j - 1) as f32 + 0.5);
        }
    }
}
