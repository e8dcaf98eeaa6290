//! `raypick closest`: closest surface points of a batch of query points from a `.npy` file,
//! written as `.npz`; with `--signed` the signed distance, with `--inside` the inside test.

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use raypick::{ClosestPoint, InsideMethod};
use raypick_cli::raysio::{read_points, write_npz, NpzArray};

use super::{load_model, refuse_overwriting_inputs};
use crate::args::LoadArgs;

/// What `raypick closest` writes besides the closest points.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Extras {
    /// `signed_distance` (negative inside).
    pub signed: bool,
    /// `inside` (bool).
    pub inside: bool,
}

/// Loads the model within `load`, answers every point of `points_path` and writes the arrays to
/// `out`, which must be none of the input files (it is replaced only once complete).
pub fn run(
    model_path: &Path,
    load: &LoadArgs,
    points_path: &Path,
    out: &Path,
    extras: Extras,
    method: InsideMethod,
) -> Result<()> {
    // Refused before any work: `--out` naming the model or the points would destroy an input.
    raypick_cli::output::refuse_inputs(
        out,
        [("model file", model_path), ("point file", points_path)],
    )?;
    let model = load_model(Some(model_path), load)?;
    refuse_overwriting_inputs(out, &model, &[])?;
    let points = read_points(points_path)?;
    let scene = &model.scene;
    let start = Instant::now();
    let found: Vec<Option<ClosestPoint>> = scene.closest_points(&points);
    let inside = (extras.signed || extras.inside).then(|| scene.contains_batch(&points, method));
    let secs = start.elapsed().as_secs_f64();

    let point: Vec<f32> = found
        .iter()
        .flat_map(|c| c.map_or([f32::NAN; 3], |c| c.point.to_array()))
        .collect();
    let distance: Vec<f32> = found
        .iter()
        .zip(&points)
        .map(|(c, p)| match c {
            Some(c) => c.distance,
            None if p.is_finite() => f32::INFINITY,
            None => f32::NAN,
        })
        .collect();
    let prim: Vec<i64> = found
        .iter()
        .map(|c| c.map_or(-1, |c| i64::from(c.prim)))
        .collect();
    let geom: Vec<i64> = found
        .iter()
        .map(|c| c.map_or(-1, |c| i64::from(c.geom)))
        .collect();
    let instance: Vec<i64> = found
        .iter()
        .map(|c| c.and_then(|c| c.instance).map_or(-1, i64::from))
        .collect();
    let u: Vec<f32> = found.iter().map(|c| c.map_or(0.0, |c| c.u)).collect();
    let v: Vec<f32> = found.iter().map(|c| c.map_or(0.0, |c| c.v)).collect();
    let normal: Vec<f32> = found
        .iter()
        .flat_map(|c| c.map_or([0.0; 3], |c| c.normal.to_array()))
        .collect();
    let signed: Vec<f32> = match &inside {
        Some(inside) if extras.signed => distance
            .iter()
            .zip(inside)
            .map(|(&d, &i)| if i && d.is_finite() { -d } else { d })
            .collect(),
        _ => Vec::new(),
    };
    let mut arrays = vec![
        ("point", NpzArray::F32x3(&point)),
        ("distance", NpzArray::F32(&distance)),
        ("prim", NpzArray::I64(&prim)),
        ("geom", NpzArray::I64(&geom)),
        ("instance", NpzArray::I64(&instance)),
        ("u", NpzArray::F32(&u)),
        ("v", NpzArray::F32(&v)),
        ("normal", NpzArray::F32x3(&normal)),
    ];
    if extras.signed {
        arrays.push(("signed_distance", NpzArray::F32(&signed)));
    }
    if let (Some(inside), true) = (&inside, extras.inside) {
        arrays.push(("inside", NpzArray::Bool(inside)));
    }
    write_npz(out, &arrays)?;
    println!(
        "{} points, {:.1} ms: {:.2} Mpoints/s -> {}",
        points.len(),
        secs * 1e3,
        points.len() as f64 / secs.max(1e-9) / 1e6,
        out.display()
    );
    Ok(())
}
