//! `raypick demo`: the built-in scene rendered to a PNG, with a few picks marked and printed.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use glam::{Vec2, Vec3};
use raypick_cli::demo::demo_scene;
use raypick_cli::output::write_replacing;
use raypick_cli::render::{render, Highlight, Mode};
use raypick_cli::view::Framing;

use super::{make_camera, print_hit};
use crate::args::{Convention, ViewArgs};

/// Renders the demo scene to `out` at `size` and prints the picks aimed at its objects.
pub fn run(out: &Path, size: (u32, u32)) -> Result<()> {
    let t0 = Instant::now();
    let model = demo_scene().context("building the demo scene")?;
    let build_ms = t0.elapsed().as_secs_f64() * 1e3;
    let view = ViewArgs {
        size,
        camera: None,
        convention: Convention::Gl,
    };
    let camera = make_camera(&model.scene, &view, Framing::Demo)?;
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
            raypick::camera::pick_path(&model.scene, &camera, pixel),
        ));
    }
    let highlight = picks
        .iter()
        .find_map(|(_, _, p)| p.as_ref())
        .map(|(p, _)| Highlight::of(&p.hit));
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
    write_replacing(out, &image.to_png()?)?;
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
            Some((p, path)) => print_hit(&model, &p.hit, path),
            None => println!("  nothing"),
        }
    }
    Ok(())
}
