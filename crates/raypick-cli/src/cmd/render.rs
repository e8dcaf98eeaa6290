//! `raypick render`: a ray-cast image of a model, with a progress bar on long renders.

use std::path::Path;

use anyhow::{anyhow, Result};
use glam::Vec2;
use raypick_cli::output::write_replacing;
use raypick_cli::render::{render, Highlight, Mode};

use super::{framing_of, load_model, make_camera, refuse_overwriting_inputs};
use crate::args::{LoadArgs, ViewArgs};

/// Loads the model (the demo scene when `model_path` is `None`) within `load`, renders it in
/// `mode` and writes the PNG to `out` (never an input; replaced only once complete); `highlight`
/// marks the triangle under that pixel.
pub fn run(
    model_path: Option<&Path>,
    load: &LoadArgs,
    out: &Path,
    mode: Mode,
    view: &ViewArgs,
    highlight: Option<Vec2>,
) -> Result<()> {
    let model = load_model(model_path, load)?;
    refuse_overwriting_inputs(out, &model, &[])?;
    let camera = make_camera(&model.scene, view, framing_of(model_path))?;
    let highlight = highlight
        .and_then(|px| raypick::camera::pick(&model.scene, &camera, px))
        .map(|p| Highlight::of(&p.hit));
    let (w, h) = view.size;
    let bar = indicatif::ProgressBar::new(h as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} rendering [{bar:30}] {pos}/{len} rows ({eta})",
        )
        .map_err(|e| anyhow!("{e}"))?
        .progress_chars("=> "),
    );
    // Only show the bar on long renders (indicatif hides it on non-terminals).
    if (w as u64) * (h as u64) < 2_000_000 {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let (image, stats) = render(&model.scene, &camera, mode, highlight, |f| {
        bar.set_position((f * h as f32) as u64)
    });
    bar.finish_and_clear();
    write_replacing(out, &image.to_png()?)?;
    println!(
        "rendered {w}x{h} in {:.1} ms ({} rays, {} hits): {:.2} Mrays/s -> {}",
        stats.seconds * 1e3,
        stats.rays,
        stats.hits,
        stats.mrays_per_s(),
        out.display()
    );
    Ok(())
}
