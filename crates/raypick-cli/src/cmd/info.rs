//! `raypick info`: geometries, triangles, bounds, BVH statistics and build time of a model.

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use raypick::Scene;

use super::{fmt_vec, load_model, Output};
use crate::args::LoadArgs;

/// Loads the model (the demo scene when `model_path` is `None`) within `load`, and prints what it
/// holds.
pub fn run(model_path: Option<&Path>, load: &LoadArgs, output: Output) -> Result<()> {
    let t0 = Instant::now();
    let model = load_model(model_path, load)?;
    let load_ms = t0.elapsed().as_secs_f64() * 1e3;
    let scene = &model.scene;
    let b = scene.bounds();
    let top = scene.top_level_stats();
    let mut geoms = Vec::new();
    for id in 0..scene.num_geometries() as u32 {
        let Some(g) = scene.geometry(id) else {
            continue;
        };
        let (kind, prims) = match g {
            raypick::Geometry::Mesh(m) => ("mesh", m.num_triangles()),
            raypick::Geometry::Spheres(s) => ("spheres", s.len()),
            raypick::Geometry::Instance(i) => ("instance", i.scene().num_triangles()),
        };
        let gb = g.bounds();
        // An instance shows the BVH of the (single-geometry) scene it places, as glTF meshes are.
        let stats = match g {
            raypick::Geometry::Instance(i) if i.scene().num_geometries() == 1 => {
                i.scene().geometry_stats(0)
            }
            _ => scene.geometry_stats(id),
        };
        geoms.push(serde_json::json!({
            "id": id,
            "name": model.names.get(id as usize).cloned().or_else(|| scene.geometry_name(id).map(str::to_string)),
            "kind": kind,
            "primitives": prims,
            "bounds": [[gb.min.x, gb.min.y, gb.min.z], [gb.max.x, gb.max.y, gb.max.z]],
            "bvh": stats.map(|s| serde_json::json!({
                "nodes": s.nodes, "leaves": s.leaves, "depth": s.depth,
                "mean_leaf_size": s.mean_leaf_size, "sah_cost": s.sah_cost, "memory_bytes": s.memory_bytes,
            })),
        }));
    }
    // Rebuild timing: the acceleration structures alone (parsing excluded).
    let rebuild_ms = time_rebuild(scene)?;
    // The preset the scene was built with (a scene file keeps its own), or "custom".
    let preset = raypick::bvh::BuildConfig::PRESETS
        .iter()
        .find(|(_, c)| *c == scene.config())
        .map_or("custom", |(name, _)| name);
    let v = serde_json::json!({
        "model": model_path.map_or_else(|| "<demo>".to_string(), |p| p.display().to_string()),
        "geometries": scene.num_geometries(),
        "triangles_stored": triangles_stored(scene),
        "triangles_in_world": triangles_in_world(scene),
        "bounds": [[b.min.x, b.min.y, b.min.z], [b.max.x, b.max.y, b.max.z]],
        "load_ms": load_ms,
        "bvh_build_ms": rebuild_ms,
        "bvh_preset": preset,
        "accel_memory_bytes": accel_memory(scene),
        "top_level_bvh": {
            "nodes": top.nodes, "leaves": top.leaves, "depth": top.depth,
            "mean_leaf_size": top.mean_leaf_size, "sah_cost": top.sah_cost, "memory_bytes": top.memory_bytes,
        },
        "geometry": geoms,
    });
    if output == Output::Json {
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!("model        {}", v["model"].as_str().unwrap_or_default());
    println!("geometries   {}", scene.num_geometries());
    println!(
        "triangles    {} in the world, {} stored (instanced meshes stored once)",
        triangles_in_world(scene),
        triangles_stored(scene)
    );
    println!("bounds       {} .. {}", fmt_vec(b.min), fmt_vec(b.max));
    println!("load         {load_ms:.1} ms (parse + build; a scene file is read, not built)");
    println!("bvh preset   {preset}");
    println!("BVH build    {rebuild_ms:.1} ms (all geometries, parsing excluded)");
    println!(
        "accel memory {:.2} MiB",
        accel_memory(scene) as f64 / (1024.0 * 1024.0)
    );
    println!();
    println!(
        "{:>4}  {:<24} {:<9} {:>9} {:>8} {:>7} {:>6} {:>6} {:>8} {:>10}",
        "id", "name", "kind", "prims", "nodes", "leaves", "depth", "leaf", "SAH", "memory"
    );
    for g in &geoms {
        let bvh = &g["bvh"];
        let num = |k: &str| bvh.get(k).map_or("-".to_string(), |x| x.to_string());
        println!(
            "{:>4}  {:<24} {:<9} {:>9} {:>8} {:>7} {:>6} {:>6} {:>8} {:>10}",
            g["id"].to_string(),
            truncate(g["name"].as_str().unwrap_or("-"), 24),
            g["kind"].as_str().unwrap_or_default(),
            g["primitives"].to_string(),
            num("nodes"),
            num("leaves"),
            num("depth"),
            bvh.get("mean_leaf_size")
                .and_then(|x| x.as_f64())
                .map_or("-".into(), |x| format!("{x:.2}")),
            bvh.get("sah_cost")
                .and_then(|x| x.as_f64())
                .map_or("-".into(), |x| format!("{x:.1}")),
            num("memory_bytes"),
        );
    }
    println!(
        "top level: {} nodes, depth {}, SAH {:.2}",
        top.nodes, top.depth, top.sah_cost
    );
    Ok(())
}

/// Triangles as placed in the world: every instance counts its scene's triangles again.
fn triangles_in_world(scene: &Scene) -> usize {
    (0..scene.num_geometries() as u32)
        .map(|id| match scene.geometry(id) {
            Some(raypick::Geometry::Mesh(m)) => m.num_triangles(),
            Some(raypick::Geometry::Instance(i)) => triangles_in_world(i.scene()),
            _ => 0,
        })
        .sum()
}

/// Sums `f` over the scene and every scene it instances, each counted once however often placed.
fn sum_unique(scene: &Scene, f: &dyn Fn(&Scene) -> usize) -> usize {
    fn walk(scene: &Scene, f: &dyn Fn(&Scene) -> usize, seen: &mut Vec<*const Scene>) -> usize {
        let mut n = f(scene);
        for id in 0..scene.num_geometries() as u32 {
            if let Some(raypick::Geometry::Instance(i)) = scene.geometry(id) {
                if !seen.contains(&std::sync::Arc::as_ptr(i.scene())) {
                    seen.push(std::sync::Arc::as_ptr(i.scene()));
                    n += walk(i.scene(), f, seen);
                }
            }
        }
        n
    }
    walk(scene, f, &mut Vec::new())
}

/// Triangles in memory: each instanced scene once.
fn triangles_stored(scene: &Scene) -> usize {
    sum_unique(scene, &Scene::num_triangles)
}

/// Acceleration-structure bytes: each instanced scene once.
fn accel_memory(scene: &Scene) -> usize {
    sum_unique(scene, &Scene::accel_memory_bytes)
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).chain(std::iter::once('…')).collect()
    }
}

/// Rebuilds the scene's acceleration structures from its geometries (each instanced sub-scene once,
/// however often it is placed) and returns the milliseconds spent in `build`.
fn time_rebuild(scene: &Scene) -> Result<f64> {
    fn rebuild(scene: &Scene, seen: &mut Vec<*const Scene>) -> Result<(Scene, f64)> {
        let mut b = raypick::SceneBuilder::with_config(scene.config());
        let mut sub_ms = 0.0;
        for id in 0..scene.num_geometries() as u32 {
            match scene.geometry(id) {
                Some(raypick::Geometry::Mesh(m)) => {
                    b.add_mesh(m.clone());
                }
                Some(raypick::Geometry::Spheres(s)) => {
                    b.add_spheres(s.clone());
                }
                Some(raypick::Geometry::Instance(i)) => {
                    let sub = i.scene();
                    if !seen.contains(&std::sync::Arc::as_ptr(sub)) {
                        seen.push(std::sync::Arc::as_ptr(sub));
                        sub_ms += rebuild(sub, seen)?.1;
                    }
                    b.add_instance(std::sync::Arc::clone(sub), i.world_from_object());
                }
                None => {}
            }
        }
        let t0 = Instant::now();
        let rebuilt = b.build()?;
        Ok((rebuilt, sub_ms + t0.elapsed().as_secs_f64() * 1e3))
    }
    Ok(rebuild(scene, &mut Vec::new())?.1)
}
