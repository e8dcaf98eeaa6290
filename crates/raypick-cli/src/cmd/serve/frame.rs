//! The viewer's default picture: headlight shading, fused and parallel per row.
//!
//! [`render`](raypick_cli::render::render) is built for files: it collects each band's rays, then
//! shades serially (with `powf` gamma and, when shaded, a shadow ray per pixel). An interactive frame
//! needs less and must come faster: one closest-hit ray per pixel, the very ray a pick casts
//! ([`Camera::pixel_center_ray`], so the highlighted triangle is exactly the picked one under the
//! cursor), and a light at the eye — `albedo · (0.25 + 0.75·|n·d|)`, so every visible face is lit
//! and no shadow ray is needed. Rows are generated, cast and shaded in one parallel pass, and
//! pixels outside the screen rectangle of the scene's bounding box get the sky without a ray.

use glam::Vec3;
use rayon::prelude::*;
use raypick::camera::Camera;
use raypick::{Hit, QueryOptions, Scene};
use raypick_cli::render::{id_color, Highlight, Image};

/// The highlight colour of [`raypick_cli::render`], so every mode marks a pick the same way.
pub const HIGHLIGHT: [u8; 3] = [255, 20, 20];
/// Sky colours at the top and bottom rows (sRGB bytes).
const SKY_TOP: Vec3 = Vec3::new(194.0, 213.0, 237.0);
const SKY_BOTTOM: Vec3 = Vec3::new(245.0, 247.0, 250.0);

/// The colour key of the object a hit belongs to: as the shaded mode of `render`, one colour per
/// (instance, geometry).
fn object_key(hit: &Hit) -> u64 {
    ((hit.instance.map_or(0, |i| i as u64 + 1)) << 32) | hit.geom as u64
}

fn matches(hl: &Highlight, hit: &Hit) -> bool {
    hl.geom == hit.geom && hl.instance == hit.instance && hl.prim == hit.prim
}

/// The pixels `[x0, x1) × [y0, y1)` (viewport-relative) outside which no primary ray can hit the
/// scene, or `None` when that cannot be bounded (the box reaches behind the eye).
///
/// When all eight corners of the bounding box are in front of the eye, the box's perspective image
/// is the convex hull of the corners' images, so their bounding rectangle contains every pixel
/// centre whose ray meets the box. It is widened by one pixel on each side: the corners are
/// projected in f64 and rounded to f32, an error of far less than a pixel.
fn screen_rect(scene: &Scene, camera: &Camera, width: u32, height: u32) -> Option<[u32; 4]> {
    let b = scene.bounds();
    if b.is_empty() {
        return Some([0, 0, 0, 0]);
    }
    let view_from_world = camera.view_from_world();
    let eye = camera.eye();
    let vp = camera.viewport();
    let (mut lo, mut hi) = (
        glam::Vec2::splat(f32::INFINITY),
        glam::Vec2::splat(f32::NEG_INFINITY),
    );
    for i in 0..8 {
        let corner = Vec3::new(
            if i & 1 == 0 { b.min.x } else { b.max.x },
            if i & 2 == 0 { b.min.y } else { b.max.y },
            if i & 4 == 0 { b.min.z } else { b.max.z },
        );
        // In front of the eye by a clear margin (view space looks down −z): at most 89.99° off
        // the view axis, so f32 rounding of `view_from_world` cannot flip the side.
        let z = view_from_world.transform_point3(corner).z;
        let limit = -1e-4 * (corner - eye).length();
        if z.is_nan() || z >= limit {
            return None;
        }
        let w = camera.project(corner)?;
        lo = lo.min(w.truncate());
        hi = hi.max(w.truncate());
    }
    let clamp = |v: f32, origin: f32, n: u32| (v - origin).clamp(0.0, n as f32) as u32;
    Some([
        clamp((lo.x - 1.0).floor(), vp.x, width),
        clamp((hi.x + 1.0).ceil(), vp.x, width),
        clamp((lo.y - 1.0).floor(), vp.y, height),
        clamp((hi.y + 1.0).ceil(), vp.y, height),
    ])
}

/// Renders `camera`'s whole viewport with headlight shading; `highlight` paints one triangle.
pub fn render_headlight(scene: &Scene, camera: &Camera, highlight: Option<Highlight>) -> Image {
    let vp = camera.viewport();
    let (width, height) = (vp.width.round() as u32, vp.height.round() as u32);
    let (x0, y0) = (vp.x as u32, vp.y as u32);
    let mut image = Image::new(width, height);
    let opts = QueryOptions::default();
    let row_bytes = width as usize * 3;
    let [rx0, rx1, ry0, ry1] =
        screen_rect(scene, camera, width, height).unwrap_or([0, width, 0, height]);
    image
        .rgb
        .par_chunks_mut(row_bytes.max(1))
        .enumerate()
        .for_each(|(y, row)| {
            let s = y as f32 / height.max(1) as f32;
            let sky = SKY_TOP.lerp(SKY_BOTTOM, s);
            let sky = [sky.x as u8, sky.y as u8, sky.z as u8];
            for (x, px) in row.chunks_exact_mut(3).enumerate() {
                if !((rx0..rx1).contains(&(x as u32)) && (ry0..ry1).contains(&(y as u32))) {
                    px.copy_from_slice(&sky);
                    continue;
                }
                let ray = camera.pixel_center_ray(x0 + x as u32, y0 + y as u32);
                let color = match scene.intersect_with(&ray, &opts) {
                    None => sky,
                    Some(h) if highlight.is_some_and(|hl| matches(&hl, &h)) => HIGHLIGHT,
                    Some(h) => {
                        let albedo = id_color(object_key(&h));
                        // |n·d| with both unit vectors (the pick ray's direction is unit length).
                        let facing = h.normal.normalize_or_zero().dot(ray.dir).abs();
                        let k = 0.25 + 0.75 * facing;
                        albedo.map(|c| (c as f32 * k + 0.5) as u8)
                    }
                };
                px.copy_from_slice(&color);
            }
        });
    image
}

#[cfg(test)]
mod tests {
    use super::*;
    use raypick::camera::{ClipSpace, Orbit};
    use raypick_cli::view::{make_camera, CameraSpec, Framing};

    fn camera_at(scene: &Scene, target: Vec3, distance: f32) -> Camera {
        let mut orbit = Orbit::new(target, distance);
        orbit.rotate(0.6, 0.4);
        let spec = CameraSpec {
            eye: orbit.eye(),
            target,
            up: Vec3::Y,
            fov_deg: 45.0,
        };
        make_camera(
            scene,
            (200, 100),
            ClipSpace::OpenGl,
            Some(spec),
            Framing::Scene,
        )
        .unwrap()
    }

    #[test]
    fn the_screen_rectangle_holds_every_hit_and_is_tight_from_afar() {
        let model = raypick_cli::demo::demo_scene().unwrap();
        let scene = &model.scene;
        // From afar the scene covers a small part of the frame.
        let far = camera_at(scene, Vec3::ZERO, 60.0);
        let [x0, x1, y0, y1] = screen_rect(scene, &far, 200, 100).unwrap();
        assert!(
            (x1 - x0) * (y1 - y0) < 200 * 100 / 4,
            "{:?}",
            [x0, x1, y0, y1]
        );
        let mut hits = 0;
        for y in 0..100 {
            for x in 0..200 {
                let inside = (x0..x1).contains(&x) && (y0..y1).contains(&y);
                if scene.intersect(&far.pixel_center_ray(x, y)).is_some() {
                    hits += 1;
                    assert!(inside, "hit at ({x}, {y}) outside {:?}", [x0, x1, y0, y1]);
                }
            }
        }
        assert!(hits > 200, "{hits} hits");
        // From inside the box nothing bounds the rays.
        assert_eq!(
            screen_rect(scene, &camera_at(scene, Vec3::Y, 1.0), 200, 100),
            None
        );
    }
}
