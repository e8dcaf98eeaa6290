//! The `raypick` command-line tool: what is under a pixel, ray-cast images, batch casting for
//! pipelines, scene statistics and kernel timings, on OBJ, glTF, PLY and STL files or on a built-in
//! demo scene.

mod bench;
mod serve;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use glam::{Vec2, Vec3};
use raypick::camera::{ClipSpace, PixelOrigin};
use raypick::{Hit, QueryOptions, Scene};
use raypick_cli::demo::{demo_scene, NamedScene};
use raypick_cli::raysio::{read_rays, write_npz, NpzArray};
use raypick_cli::render::{render, Highlight, Mode};
use raypick_cli::view::CameraSpec;

const EXAMPLES: &str = "\
Examples:
  raypick demo                                   # render the built-in scene to raypick-demo.png
  raypick pick bunny.obj --pixel 400,300         # what is under pixel (400, 300) of an 800x600 view
  raypick pick model.glb --pixel 10,20 --convention d3d --json
  raypick render model.ply -o out.png --mode prim-id --size 640x480
  raypick cast bunny.obj --rays bunny.incoherent.rays --out hits.npz
  raypick info scene.gltf
  raypick bench";

#[derive(Parser)]
#[command(name = "raypick", version, about = "Exact, fast ray casting and picking.", after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Render the built-in demo scene (no file needed), mark and print a few picks.
    #[command(after_help = "Example:\n  raypick demo --out demo.png --size 1024x768")]
    Demo {
        /// Output PNG.
        #[arg(short, long, default_value = "raypick-demo.png")]
        out: PathBuf,
        /// Image size, WIDTHxHEIGHT.
        #[arg(long, default_value = "960x640", value_parser = parse_size)]
        size: (u32, u32),
    },
    /// Print what is under one pixel.
    #[command(
        after_help = "Examples:\n  raypick pick bunny.obj --pixel 400,300\n  raypick pick model.glb --pixel 10,20 --size 640x480 --convention vulkan --json\n  raypick pick bunny.obj --pixel 400,300 --camera 0,0.1,0.3,0,0.1,0,0,1,0,45"
    )]
    Pick {
        /// Model file (OBJ, glTF/GLB, PLY, STL); the built-in demo scene when omitted.
        model: Option<PathBuf>,
        /// Pixel X,Y (integers: the pixel centre is used; decimals: that exact window position).
        #[arg(long, value_parser = parse_pixel)]
        pixel: Vec2,
        #[command(flatten)]
        view: ViewArgs,
        /// Pixel row 0 at the top (window events) or bottom (OpenGL window coordinates).
        #[arg(long, value_enum, default_value = "top-left")]
        origin: Origin,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Ray-cast an image of a model.
    #[command(
        after_help = "Examples:\n  raypick render bunny.obj -o bunny.png\n  raypick render model.glb -o ids.png --mode prim-id --size 320x240"
    )]
    Render {
        /// Model file; the built-in demo scene when omitted.
        model: Option<PathBuf>,
        /// Output PNG.
        #[arg(short, long)]
        out: PathBuf,
        /// What each pixel shows.
        #[arg(long, value_enum, default_value = "shaded")]
        mode: Mode,
        #[command(flatten)]
        view: ViewArgs,
        /// Highlight the triangle under this pixel X,Y.
        #[arg(long, value_parser = parse_pixel)]
        highlight: Option<Vec2>,
    },
    /// Cast a batch of rays from a file and write the hits as numpy arrays.
    #[command(
        after_help = "Examples:\n  raypick cast bunny.obj --rays bunny.incoherent.rays --out hits.npz\n  raypick cast bunny.obj --rays rays.npy --out occ.npz --any-hit\n\nInput: .rays (little-endian float32 rows ox oy oz dx dy dz) or .npy (N x 6, float32/float64).\nOutput .npz arrays, in input order: t (float32, inf on a miss), prim (int64, -1 on a miss), u, v\n(float32), geom and instance (int64, -1 when none). --any-hit writes `occluded` (bool).\n--all-hits writes one row per hit plus `ray` (int64, the ray it belongs to), sorted by ray then t."
    )]
    Cast {
        /// Model file.
        model: PathBuf,
        /// Ray file (.rays or .npy).
        #[arg(long)]
        rays: PathBuf,
        /// Output .npz.
        #[arg(long)]
        out: PathBuf,
        /// Occlusion only: does each ray hit anything?
        #[arg(long, conflicts_with = "all_hits")]
        any_hit: bool,
        /// Every hit of every ray, not only the closest.
        #[arg(long)]
        all_hits: bool,
    },
    /// Geometries, triangles, bounds, BVH statistics and build time.
    #[command(after_help = "Example:\n  raypick info scene.gltf --json")]
    Info {
        /// Model file; the built-in demo scene when omitted.
        model: Option<PathBuf>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Time every intersection kernel and the scene queries on this machine.
    #[command(after_help = "Example:\n  raypick bench --quick")]
    Bench {
        /// Fewer rays and runs (for a smoke test).
        #[arg(long)]
        quick: bool,
    },
    /// Interactive picking in the browser: a local web viewer rendered and picked by raypick.
    #[command(after_help = "Examples:\n  raypick serve\n  raypick serve bunny.obj --port 8080")]
    Serve(serve::ServeArgs),
}

/// Camera and image options shared by pick and render.
#[derive(Args, Clone)]
struct ViewArgs {
    /// Image size, WIDTHxHEIGHT.
    #[arg(long, default_value = "800x600", value_parser = parse_size)]
    size: (u32, u32),
    /// Camera as eye,target,up,fov: 10 numbers (fov vertical, degrees); default frames the model.
    #[arg(long, value_parser = parse_camera)]
    camera: Option<CameraSpec>,
    /// Clip-space convention of the projection.
    #[arg(long, value_enum, default_value = "gl")]
    convention: Convention,
}

#[derive(Clone, Copy, ValueEnum)]
enum Convention {
    /// OpenGL: NDC z in [-1, 1].
    Gl,
    /// Direct3D / wgpu / Metal: NDC z in [0, 1].
    D3d,
    /// Vulkan: NDC z in [0, 1], y down.
    Vulkan,
}

impl Convention {
    fn clip_space(self) -> ClipSpace {
        match self {
            Self::Gl => ClipSpace::OpenGl,
            Self::D3d => ClipSpace::Direct3D,
            Self::Vulkan => ClipSpace::Vulkan,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum Origin {
    /// Row 0 at the top.
    TopLeft,
    /// Row 0 at the bottom.
    BottomLeft,
}

fn parse_numbers(s: &str, n: usize, what: &str) -> Result<Vec<f32>, String> {
    let v: Vec<f32> = s
        .split(',')
        .map(|x| {
            x.trim()
                .parse::<f32>()
                .map_err(|_| format!("{what}: {x:?} is not a number"))
        })
        .collect::<Result<_, _>>()?;
    if v.len() != n {
        return Err(format!(
            "{what}: expected {n} comma-separated numbers, found {}",
            v.len()
        ));
    }
    if v.iter().any(|x| !x.is_finite()) {
        return Err(format!("{what}: numbers must be finite"));
    }
    Ok(v)
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("size {s:?}: expected WIDTHxHEIGHT, e.g. 800x600"))?;
    let w: u32 = w
        .trim()
        .parse()
        .map_err(|_| format!("size {s:?}: width {w:?} is not a positive integer"))?;
    let h: u32 = h
        .trim()
        .parse()
        .map_err(|_| format!("size {s:?}: height {h:?} is not a positive integer"))?;
    if w == 0 || h == 0 || w > 16384 || h > 16384 {
        return Err(format!("size {s:?}: width and height must be in 1..=16384"));
    }
    Ok((w, h))
}

fn parse_pixel(s: &str) -> Result<Vec2, String> {
    let v = parse_numbers(s, 2, "pixel X,Y")?;
    // Integers name a pixel: cast through its centre. Decimals are exact window positions.
    let is_int = |t: &str| t.trim().parse::<i64>().is_ok();
    let parts: Vec<&str> = s.split(',').collect();
    let x = if is_int(parts[0]) { v[0] + 0.5 } else { v[0] };
    let y = if is_int(parts[1]) { v[1] + 0.5 } else { v[1] };
    Ok(Vec2::new(x, y))
}

fn parse_camera(s: &str) -> Result<CameraSpec, String> {
    let v = parse_numbers(s, 10, "camera eye,target,up,fov")?;
    let spec = CameraSpec {
        eye: Vec3::new(v[0], v[1], v[2]),
        target: Vec3::new(v[3], v[4], v[5]),
        up: Vec3::new(v[6], v[7], v[8]),
        fov_deg: v[9],
    };
    if !(spec.fov_deg > 0.0 && spec.fov_deg < 180.0) {
        return Err(format!(
            "camera: fov {} must be in (0, 180) degrees",
            spec.fov_deg
        ));
    }
    Ok(spec)
}

/// Loads a model file, or the demo scene when `path` is `None`.
fn load_model(path: Option<&Path>) -> Result<NamedScene> {
    match path {
        None => demo_scene().context("building the demo scene"),
        Some(path) => {
            let loaded = raypick_io::load(path).map_err(|e| anyhow!("{e}"))?;
            Ok(NamedScene {
                scene: loaded.scene,
                names: loaded.geometry_names,
            })
        }
    }
}

fn make_camera(scene: &Scene, view: &ViewArgs, demo: bool) -> Result<raypick::camera::Camera> {
    Ok(raypick_cli::view::make_camera(
        scene,
        view.size,
        view.convention.clip_space(),
        view.camera,
        demo,
    )?)
}

fn fmt_vec(v: Vec3) -> String {
    format!("({:.6}, {:.6}, {:.6})", v.x, v.y, v.z)
}

fn hit_json(model: &NamedScene, hit: &Hit) -> serde_json::Value {
    serde_json::json!({
        "object": model.name_of(hit),
        "geometry": hit.geom,
        "instance": hit.instance,
        "triangle": hit.prim,
        "t": hit.t,
        "point": [hit.point.x, hit.point.y, hit.point.z],
        "normal": [hit.normal.x, hit.normal.y, hit.normal.z],
        "u": hit.u,
        "v": hit.v,
    })
}

fn print_hit(model: &NamedScene, hit: &Hit) {
    let instance = hit
        .instance
        .map_or_else(|| "-".to_string(), |i| i.to_string());
    println!("  object      {}", model.name_of(hit));
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

fn cmd_demo(out: &Path, size: (u32, u32)) -> Result<()> {
    let t0 = Instant::now();
    let model = demo_scene().context("building the demo scene")?;
    let build_ms = t0.elapsed().as_secs_f64() * 1e3;
    let view = ViewArgs {
        size,
        camera: None,
        convention: Convention::Gl,
    };
    let camera = make_camera(&model.scene, &view, true)?;
    // Picks: the window position of a few objects' centres, plus a ground point.
    let targets = [
        ("torus-knot", Vec3::new(3.0, 1.75, -0.5)),
        ("icosphere", Vec3::new(-3.2, 1.3, 0.5)),
        ("spheres", Vec3::new(0.0, 0.45, 3.6)),
        ("torus-standing", Vec3::new(0.2, 1.3 + 0.8 * 1.2, -3.5)),
        ("ground", Vec3::new(2.5, 0.0, 2.0)),
    ];
    let mut picks = Vec::new();
    for (label, p_world) in targets {
        let Some(window) = camera.project(p_world) else {
            continue;
        };
        let pixel = Vec2::new(window.x.floor() + 0.5, window.y.floor() + 0.5);
        picks.push((
            label,
            pixel,
            raypick::camera::pick(&model.scene, &camera, pixel),
        ));
    }
    let highlight = picks
        .iter()
        .find_map(|(_, _, p)| p.as_ref())
        .map(|p| Highlight::of(&p.hit));
    let (mut image, stats) = render(&model.scene, &camera, Mode::Shaded, highlight, |_| {});
    for (_, pixel, pick) in &picks {
        image.mark(
            pixel.x,
            pixel.y,
            if pick.is_some() {
                [255, 230, 0]
            } else {
                [255, 0, 0]
            },
        );
    }
    std::fs::write(out, image.to_png()?).with_context(|| format!("writing {}", out.display()))?;
    println!(
        "demo scene: {} geometries, {} triangles stored, built in {:.1} ms",
        model.scene.num_geometries(),
        model.scene.num_triangles(),
        build_ms
    );
    println!(
        "rendered {}x{} ({} rays incl. shadows) in {:.1} ms: {:.2} Mrays/s -> {}",
        size.0,
        size.1,
        stats.rays,
        stats.seconds * 1e3,
        stats.mrays_per_s(),
        out.display()
    );
    for (label, pixel, pick) in &picks {
        println!(
            "\npick at pixel ({:.0}, {:.0}), aimed at the {label}:",
            pixel.x - 0.5,
            pixel.y - 0.5
        );
        match pick {
            Some(p) => print_hit(&model, &p.hit),
            None => println!("  nothing"),
        }
    }
    Ok(())
}

fn cmd_pick(
    model_path: Option<&Path>,
    pixel: Vec2,
    view: &ViewArgs,
    origin: Origin,
    json: bool,
) -> Result<()> {
    let model = load_model(model_path)?;
    let mut camera = make_camera(&model.scene, view, model_path.is_none())?;
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
    let pick = raypick::camera::pick(&model.scene, &camera, pixel);
    if json {
        let v = serde_json::json!({
            "pixel": [pixel.x, pixel.y],
            "ray": pick.as_ref().map(|p| serde_json::json!({
                "origin": [p.ray.origin.x, p.ray.origin.y, p.ray.origin.z],
                "dir": [p.ray.dir.x, p.ray.dir.y, p.ray.dir.z],
            })),
            "hit": pick.as_ref().map(|p| hit_json(&model, &p.hit)),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        match &pick {
            Some(p) => {
                println!("pixel ({}, {}): hit", pixel.x, pixel.y);
                print_hit(&model, &p.hit);
            }
            None => println!("pixel ({}, {}): nothing", pixel.x, pixel.y),
        }
    }
    Ok(())
}

fn cmd_render(
    model_path: Option<&Path>,
    out: &Path,
    mode: Mode,
    view: &ViewArgs,
    highlight: Option<Vec2>,
) -> Result<()> {
    let model = load_model(model_path)?;
    let camera = make_camera(&model.scene, view, model_path.is_none())?;
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
    std::fs::write(out, image.to_png()?).with_context(|| format!("writing {}", out.display()))?;
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

fn cmd_cast(
    model_path: &Path,
    rays_path: &Path,
    out: &Path,
    any_hit: bool,
    all_hits: bool,
) -> Result<()> {
    let model = load_model(Some(model_path))?;
    let rays = read_rays(rays_path)?;
    let opts = QueryOptions::default();
    let start = Instant::now();
    let (hits, summary) = if any_hit {
        let occluded = model.scene.occluded_batch(&rays, &opts);
        let secs = start.elapsed().as_secs_f64();
        let n = occluded.iter().filter(|&&o| o).count();
        write_npz(out, &[("occluded", NpzArray::Bool(&occluded))])?;
        (n, secs)
    } else if all_hits {
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
    } else {
        let hits = model.scene.intersect_batch(&rays, &opts);
        let secs = start.elapsed().as_secs_f64();
        write_hits_npz(out, &hits, None)?;
        (hits.iter().filter(|h| h.is_some()).count(), secs)
    };
    let what = if any_hit {
        "occluded"
    } else if all_hits {
        "hits (all)"
    } else {
        "hits"
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

fn cmd_info(model_path: Option<&Path>, json: bool) -> Result<()> {
    let t0 = Instant::now();
    let model = load_model(model_path)?;
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
    let v = serde_json::json!({
        "model": model_path.map_or_else(|| "<demo>".to_string(), |p| p.display().to_string()),
        "geometries": scene.num_geometries(),
        "triangles_stored": triangles_stored(scene),
        "triangles_in_world": triangles_in_world(scene),
        "bounds": [[b.min.x, b.min.y, b.min.z], [b.max.x, b.max.y, b.max.z]],
        "load_ms": load_ms,
        "bvh_build_ms": rebuild_ms,
        "accel_memory_bytes": accel_memory(scene),
        "top_level_bvh": {
            "nodes": top.nodes, "leaves": top.leaves, "depth": top.depth,
            "mean_leaf_size": top.mean_leaf_size, "sah_cost": top.sah_cost, "memory_bytes": top.memory_bytes,
        },
        "geometry": geoms,
    });
    if json {
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
    println!("load         {load_ms:.1} ms (parse + build)");
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

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Demo { out, size } => cmd_demo(&out, size),
        Command::Pick {
            model,
            pixel,
            view,
            origin,
            json,
        } => cmd_pick(model.as_deref(), pixel, &view, origin, json),
        Command::Render {
            model,
            out,
            mode,
            view,
            highlight,
        } => cmd_render(model.as_deref(), &out, mode, &view, highlight),
        Command::Cast {
            model,
            rays,
            out,
            any_hit,
            all_hits,
        } => cmd_cast(&model, &rays, &out, any_hit, all_hits),
        Command::Info { model, json } => cmd_info(model.as_deref(), json),
        Command::Bench { quick } => bench::run(quick),
        Command::Serve(args) => serve::run(args),
    }
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = run(cli) {
        // One line: the error and its causes joined by ": ".
        eprintln!("raypick: error: {e:#}");
        std::process::exit(1);
    }
}
