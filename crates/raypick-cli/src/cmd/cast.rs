//! `raypick cast`: a batch of rays from a `.rays` or `.npy` file, the hits written as `.npz`.

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use raypick::{Hit, QueryOptions, Scene};
use raypick_cli::raysio::{read_rays, write_npz, NpzArray};

use super::{load_model, refuse_overwriting_inputs};
use crate::args::LoadArgs;

/// Which query `raypick cast` runs for every ray.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CastQuery {
    /// The closest hit (`t`, `prim`, `u`, `v`, `geom`, `instance`).
    Closest,
    /// Whether anything is hit (`occluded`).
    Any,
    /// Every hit, one row each, plus the `ray` it belongs to.
    All,
}

impl CastQuery {
    /// The query the `--any-hit` and `--all-hits` flags ask for (clap makes them exclusive).
    pub fn from_flags(any_hit: bool, all_hits: bool) -> Self {
        if any_hit {
            Self::Any
        } else if all_hits {
            Self::All
        } else {
            Self::Closest
        }
    }
}

/// Loads the model within `load`, casts the rays of `rays_path` with `query` and writes the arrays
/// to `out`, which must be none of the input files (it is replaced only once complete).
pub fn run(
    model_path: &Path,
    load: &LoadArgs,
    rays_path: &Path,
    out: &Path,
    query: CastQuery,
) -> Result<()> {
    // Refused before any work: `--out` naming the model or the rays would destroy an input.
    raypick_cli::output::refuse_inputs(out, [("model file", model_path), ("ray file", rays_path)])?;
    let model = load_model(Some(model_path), load)?;
    refuse_overwriting_inputs(out, &model, &[])?;
    let rays = read_rays(rays_path)?;
    let opts = QueryOptions::default();
    let start = Instant::now();
    let (hits, summary) = match query {
        CastQuery::Any => {
            let occluded = model.scene.occluded_batch(&rays, &opts);
            let secs = start.elapsed().as_secs_f64();
            let n = occluded.iter().filter(|&&o| o).count();
            write_npz(out, &[("occluded", NpzArray::Bool(&occluded))])?;
            (n, secs)
        }
        CastQuery::All => {
            let lists: Vec<Vec<Hit>> = cast_all(&model.scene, &rays, &opts);
            let secs = start.elapsed().as_secs_f64();
            let ray_ids: Vec<i64> = lists
                .iter()
                .enumerate()
                .flat_map(|(i, l)| std::iter::repeat_n(i as i64, l.len()))
                .collect();
            let flat: Vec<&Hit> = lists.iter().flatten().collect();
            write_hits_npz(
                out,
                &flat.iter().map(|h| Some(**h)).collect::<Vec<_>>(),
                Some(&ray_ids),
            )?;
            (flat.len(), secs)
        }
        CastQuery::Closest => {
            let hits = model.scene.intersect_batch(&rays, &opts);
            let secs = start.elapsed().as_secs_f64();
            write_hits_npz(out, &hits, None)?;
            (hits.iter().filter(|h| h.is_some()).count(), secs)
        }
    };
    let what = match query {
        CastQuery::Any => "occluded",
        CastQuery::All => "hits (all)",
        CastQuery::Closest => "hits",
    };
    println!(
        "{} rays, {hits} {what}, {:.1} ms: {:.2} Mrays/s -> {}",
        rays.len(),
        summary * 1e3,
        rays.len() as f64 / summary.max(1e-9) / 1e6,
        out.display()
    );
    Ok(())
}

/// All hits of every ray, on all cores (the per-ray query is sequential; rays are independent).
fn cast_all(scene: &Scene, rays: &[raypick::Ray], opts: &QueryOptions) -> Vec<Vec<Hit>> {
    use rayon::prelude::*;
    rays.par_iter()
        .map(|r| scene.intersect_all_with(r, opts))
        .collect()
}

/// The hit columns (`t`, `prim`, `u`, `v`, `geom`, `instance`, and `ray` when given) to `out`.
fn write_hits_npz(out: &Path, hits: &[Option<Hit>], ray_ids: Option<&[i64]>) -> Result<()> {
    let t: Vec<f32> = hits
        .iter()
        .map(|h| h.map_or(f32::INFINITY, |h| h.t))
        .collect();
    let prim: Vec<i64> = hits
        .iter()
        .map(|h| h.map_or(-1, |h| h.prim as i64))
        .collect();
    let u: Vec<f32> = hits.iter().map(|h| h.map_or(0.0, |h| h.u)).collect();
    let v: Vec<f32> = hits.iter().map(|h| h.map_or(0.0, |h| h.v)).collect();
    let geom: Vec<i64> = hits
        .iter()
        .map(|h| h.map_or(-1, |h| h.geom as i64))
        .collect();
    let instance: Vec<i64> = hits
        .iter()
        .map(|h| h.and_then(|h| h.instance).map_or(-1, |i| i as i64))
        .collect();
    let mut arrays = vec![
        ("t", NpzArray::F32(&t)),
        ("prim", NpzArray::I64(&prim)),
        ("u", NpzArray::F32(&u)),
        ("v", NpzArray::F32(&v)),
        ("geom", NpzArray::I64(&geom)),
        ("instance", NpzArray::I64(&instance)),
    ];
    if let Some(r) = ray_ids {
        arrays.push(("ray", NpzArray::I64(r)));
    }
    write_npz(out, &arrays)?;
    Ok(())
}
