//! `raypick build`: a model loaded and built once, saved as a scene file (`.rpk`) that every
//! subcommand taking a model then loads without a build (see `raypick::scene::file`).

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};

use super::{load_model, refuse_overwriting_inputs};
use crate::args::LoadArgs;

/// Loads and builds `model_path` within `load`, and saves the scene to `out`.
pub fn run(model_path: &Path, load: &LoadArgs, out: &Path) -> Result<()> {
    let t0 = Instant::now();
    let model = load_model(Some(model_path), load)?;
    let build_ms = t0.elapsed().as_secs_f64() * 1e3;
    refuse_overwriting_inputs(out, &model, &[])?;
    let t1 = Instant::now();
    let bytes = model.scene.to_bytes();
    std::fs::write(out, &bytes).with_context(|| format!("writing {}", out.display()))?;
    let save_ms = t1.elapsed().as_secs_f64() * 1e3;
    println!(
        "{}: {} geometries, {} triangles stored",
        model_path.display(),
        model.scene.num_geometries(),
        model.scene.num_triangles()
    );
    println!("load + build {build_ms:.1} ms");
    println!(
        "wrote        {} ({} bytes) in {save_ms:.1} ms",
        out.display(),
        bytes.len()
    );
    Ok(())
}
