//! `raypick pick`: what is under one pixel of a view.

use std::path::Path;

use anyhow::{bail, Result};
use glam::Vec2;
use raypick::camera::PixelOrigin;

use super::{framing_of, hit_json, load_model, make_camera, print_hit, Output};
use crate::args::{LoadArgs, Origin, ViewArgs};

/// Loads the model (the demo scene when `model_path` is `None`) within `load`, and prints what is under `pixel`.
pub fn run(
    model_path: Option<&Path>,
    load: &LoadArgs,
    pixel: Vec2,
    view: &ViewArgs,
    origin: Origin,
    output: Output,
) -> Result<()> {
    let model = load_model(model_path, load)?;
    let mut camera = make_camera(&model.scene, view, framing_of(model_path))?;
    if matches!(origin, Origin::BottomLeft) {
        camera = camera.with_pixel_origin(PixelOrigin::BottomLeft);
    }
    let (w, h) = view.size;
    if !(pixel.x >= 0.0 && pixel.y >= 0.0 && pixel.x <= w as f32 && pixel.y <= h as f32) {
        bail!(
            "pixel ({}, {}) is outside the {}x{} image",
            pixel.x,
            pixel.y,
            w,
            h
        );
    }
    // With the path: under --hierarchy it names the node struck.
    let pick = raypick::camera::pick_path(&model.scene, &camera, pixel);
    match output {
        Output::Json => {
            let v = serde_json::json!({
                "pixel": [pixel.x, pixel.y],
                "ray": pick.as_ref().map(|(p, _)| serde_json::json!({
                    "origin": [p.ray.origin.x, p.ray.origin.y, p.ray.origin.z],
                    "dir": [p.ray.dir.x, p.ray.dir.y, p.ray.dir.z],
                })),
                "hit": pick.as_ref().map(|(p, path)| hit_json(&model, &p.hit, path)),
            });
            println!("{}", serde_json::to_string_pretty(&v)?);
        }
        Output::Text => match &pick {
            Some((p, path)) => {
                println!("pixel ({}, {}): hit", pixel.x, pixel.y);
                print_hit(&model, &p.hit, path);
            }
            None => println!("pixel ({}, {}): nothing", pixel.x, pixel.y),
        },
    }
    Ok(())
}
