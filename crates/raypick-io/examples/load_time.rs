//! Load time of a model file: read + parse, then scene (BVH) build, then the first pick; the
//! median of several runs of each.
//!
//! ```sh
//! cargo run --release -p raypick-io --example load_time -- [FILE] [RUNS]
//! ```
//! FILE defaults to the shared `scenes/conference.obj` (331k triangles), RUNS to 7. For an OBJ
//! file it also times `tobj` (triangulate + single index) on the same bytes, for comparison with
//! the hand parser (see `obj`'s module docs).

use std::time::{Duration, Instant};

use raypick::glam::Vec3;
use raypick::Ray;
use raypick_io::{parse_file, LoadOptions};

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/data/scenes/conference.obj"
        )
        .to_owned()
    });
    let runs: usize = args
        .next()
        .map(|n| n.parse())
        .transpose()?
        .unwrap_or(7)
        .max(1);

    let (mut read, mut parse, mut build, mut pick) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut triangles = 0;
    for _ in 0..runs {
        let start = Instant::now();
        let bytes = std::fs::read(&path)?;
        read.push(start.elapsed());

        let start = Instant::now();
        let extension = std::path::Path::new(&path)
            .extension()
            .and_then(|e| e.to_str());
        let (format, model) = raypick_io::parse_bytes(&bytes, extension, &LoadOptions::default())?;
        parse.push(start.elapsed());
        triangles = model.num_triangles_in_world();

        let start = Instant::now();
        let loaded = model.into_loaded(format)?;
        build.push(start.elapsed());

        let start = Instant::now();
        let bounds = loaded.scene.bounds();
        let origin = bounds.center() + Vec3::new(0.0, 0.0, (bounds.max - bounds.min).z);
        let hit = loaded
            .scene
            .intersect(&Ray::new(origin, bounds.center() - origin));
        pick.push(start.elapsed());
        std::hint::black_box(hit);
    }
    // The one-call path, to check it costs what the parts add up to.
    let start = Instant::now();
    let _ = parse_file(&path, &LoadOptions::default())?;
    let one_call = start.elapsed();

    let is_obj = path.to_ascii_lowercase().ends_with(".obj");
    let tobj_time = is_obj.then(|| {
        let bytes = std::fs::read(&path).expect("read above");
        let options = tobj::LoadOptions {
            triangulate: true,
            single_index: true,
            ..Default::default()
        };
        let samples = (0..runs)
            .map(|_| {
                let start = Instant::now();
                let loaded =
                    tobj::load_obj_buf(&mut std::io::Cursor::new(&bytes), &options, |_| {
                        Ok(Default::default())
                    });
                let elapsed = start.elapsed();
                let (models, _) = loaded.expect("tobj reads the file");
                let tobj_triangles: usize = models.iter().map(|m| m.mesh.indices.len() / 3).sum();
                assert_eq!(
                    tobj_triangles, triangles,
                    "tobj and raypick-io agree on the count"
                );
                elapsed
            })
            .collect();
        median(samples)
    });

    let (read, parse, build, pick) = (median(read), median(parse), median(build), median(pick));
    println!("file: {path}");
    println!("triangles: {triangles}, runs: {runs} (medians)");
    println!("read  {:>9.1} ms", read.as_secs_f64() * 1e3);
    println!("parse {:>9.1} ms", parse.as_secs_f64() * 1e3);
    println!("build {:>9.1} ms (scene + BVH)", build.as_secs_f64() * 1e3);
    println!("pick  {:>9.3} ms (first ray)", pick.as_secs_f64() * 1e3);
    println!(
        "first pick after {:.1} ms; read + parse is {:.0}% of it",
        (read + parse + build + pick).as_secs_f64() * 1e3,
        100.0 * (read + parse).as_secs_f64() / (read + parse + build + pick).as_secs_f64()
    );
    println!(
        "parse_file (read + parse, one call, one run): {:.1} ms",
        one_call.as_secs_f64() * 1e3
    );
    if let Some(tobj_time) = tobj_time {
        println!(
            "tobj parse of the same bytes: {:.1} ms",
            tobj_time.as_secs_f64() * 1e3
        );
    }
    Ok(())
}
