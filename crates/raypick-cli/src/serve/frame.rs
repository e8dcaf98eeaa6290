//! The viewer's default picture: headlight shading, fused and parallel per row.
//!
//! [`render`](raypick_cli::render::render) is built for files: it collects each band's rays, then
//! shades serially (with `powf` gamma and, when shaded, a shadow ray per pixel). An interactive frame
//! needs less and must come faster: one closest-hit ray per pixel, the very ray a pick casts
//! ([`Camera::pixel_center_ray`], so the highlighted triangle is exactly the picked one under the
//! cursor), and a light at the eye — `albedo · (0.25 + 0.75·|n·d|)`, so every visible face is lit
//! and no shadow ray is needed. Rows are generated, cast and shaded in one parallel pass.

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

/// Renders `camera`'s whole viewport with headlight shading; `highlight` paints one triangle.
pub fn render_headlight(scene: &Scene, camera: &Camera, highlight: Option<Highlight>) -> Image {
    let vp = camera.viewport();
    let (width, height) = (vp.width.round() as u32, vp.height.round() as u32);
    let (x0, y0) = (vp.x as u32, vp.y as u32);
    let mut image = Image::new(width, height);
    let opts = QueryOptions::default();
    let row_bytes = width as usize * 3;
    image
        .rgb
        .par_chunks_mut(row_bytes.max(1))
        .enumerate()
        .for_each(|(y, row)| {
            let s = y as f32 / height.max(1) as f32;
            let sky = SKY_TOP.lerp(SKY_BOTTOM, s);
            let sky = [sky.x as u8, sky.y as u8, sky.z as u8];
            for (x, px) in row.chunks_exact_mut(3).enumerate() {
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
