//! One module per subcommand, and what several of them share (loading a model, the camera, how a
//! hit is printed).
//!
//! | module | subcommand |
//! |---|---|
//! | [`build`] | `raypick build`: a model built once and saved as a scene file (`.rpk`) |
//! | [`demo`] | `raypick demo`: the built-in scene rendered, a few picks printed |
//! | [`pick`] | `raypick pick`: what is under one pixel |
//! | [`render`] | `raypick render`: a ray-cast image |
//! | [`cast`] | `raypick cast`: a batch of rays from a file, hits to `.npz` |
//! | [`closest`] | `raypick closest`: closest points, signed distance, inside, for points from a file |
//! | [`info`] | `raypick info`: geometries, bounds, BVH statistics |
//! | [`bench`] | `raypick bench`: kernel and query timings |
//! | [`serve`] | `raypick serve`: the browser viewer |

pub mod bench;
pub mod build;
pub mod cast;
pub mod closest;
pub mod demo;
pub mod info;
pub mod pick;
pub mod render;
pub mod serve;

use std::path::Path;

use anyhow::{Context, Result};
use glam::Vec3;
use raypick::{Hit, InstancePath, Scene};
use raypick_cli::demo::{demo_scene, NamedScene};
use raypick_cli::view::Framing;

use crate::args::{LoadArgs, ViewArgs};

/// How a subcommand prints its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// Lines for a person.
    Text,
    /// One pretty-printed JSON document.
    Json,
}

impl Output {
    /// The `--json` flag as an output kind.
    pub fn from_json_flag(json: bool) -> Self {
        if json {
            Self::Json
        } else {
            Self::Text
        }
    }
}

/// A model file loaded within the limits of `load`, or the demo scene when `path` is `None`.
pub fn load_model(path: Option<&Path>, load: &LoadArgs) -> Result<NamedScene> {
    match path {
        None => demo_scene().context("building the demo scene"),
        Some(path) => {
            let loaded = raypick_io::load_with(path, &load.options())?;
            Ok(NamedScene {
                scene: loaded.scene,
                names: loaded.geometry_names,
                nodes: loaded.nodes,
                files: std::iter::once(path.to_path_buf())
                    .chain(loaded.references)
                    .collect(),
            })
        }
    }
}

/// Refuses `out` when it names the model file or a file the model refers to (and `others`, e.g.
/// the ray file).
pub fn refuse_overwriting_inputs(
    out: &Path,
    model: &NamedScene,
    others: &[(&str, &Path)],
) -> Result<()> {
    let model_files = model.files.iter().enumerate().map(|(i, f)| {
        let what = if i == 0 {
            "model file"
        } else {
            "file the model refers to"
        };
        (what, f.as_path())
    });
    raypick_cli::output::refuse_inputs(out, model_files.chain(others.iter().copied()))?;
    Ok(())
}

/// How the automatic camera frames a model loaded from `path` (`None`: the demo scene).
pub fn framing_of(path: Option<&Path>) -> Framing {
    match path {
        None => Framing::Demo,
        Some(_) => Framing::Scene,
    }
}

/// The camera of `view` for `scene` (framed as `framing` says when `view` has no explicit camera).
pub fn make_camera(
    scene: &Scene,
    view: &ViewArgs,
    framing: Framing,
) -> Result<raypick::camera::Camera> {
    Ok(raypick_cli::view::make_camera(
        scene,
        view.size,
        view.convention.clip_space(),
        view.camera,
        framing,
    )?)
}

/// A vector as `(x, y, z)` with six decimals.
pub fn fmt_vec(v: Vec3) -> String {
    format!("({:.6}, {:.6}, {:.6})", v.x, v.y, v.z)
}

/// A vector as a JSON array `[x, y, z]`.
pub fn vec3_json(v: Vec3) -> serde_json::Value {
    serde_json::json!([v.x, v.y, v.z])
}

/// A hit and its instance path (from the path queries) as JSON, as `pick --json` and the
/// viewer's `/api/pick` print them.
pub fn hit_json(model: &NamedScene, hit: &Hit, path: &InstancePath) -> serde_json::Value {
    serde_json::json!({
        "object": model.name_of(hit, path),
        "geometry": hit.geom,
        "instance": hit.instance,
        "instance_path": path.as_slice(),
        "triangle": hit.prim,
        "t": hit.t,
        "point": vec3_json(hit.point),
        "normal": vec3_json(hit.normal),
        "u": hit.u,
        "v": hit.v,
    })
}

/// A hit (with its instance path, from the path queries) as indented lines.
pub fn print_hit(model: &NamedScene, hit: &Hit, path: &InstancePath) {
    let instance = hit
        .instance
        .map_or_else(|| "-".to_string(), |i| i.to_string());
    println!("  object      {}", model.name_of(hit, path));
    println!(
        "  geometry    {}   instance {}   primitive {}",
        hit.geom, instance, hit.prim
    );
    println!("  distance    {:.6}", hit.t);
    println!("  point       {}", fmt_vec(hit.point));
    println!("  normal      {}", fmt_vec(hit.normal));
    println!(
        "  barycentric u = {:.6}, v = {:.6} (weights of v1, v2)",
        hit.u, hit.v
    );
}
