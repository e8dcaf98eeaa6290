//! Build time against scene-file load time: the conference room and `conference-4x4`, the
//! matrix's 5.3M-triangle scene (see `shared/conference.rs`).
//!
//! For each scene: the BVH build from geometry in memory (`SceneBuilder::build`), then the scene
//! saved to a temporary `.rpk` and read back (`Scene::load`: read, checksum, decode, check,
//! fill the triangle blocks, validate every tree), each the median of `RUNS` runs (default 5,
//! builds and loads taking turns), and the file's size.
//!
//! With `--fresh`, every build and every load runs in a process of its own (this program started
//! again), as a program that starts and loads a scene once meets it: nothing of the memory a
//! load fills has been touched before, so the load pays the first touch of every page it fills.
//! The build's process has parsed the model first (the meshes must be in memory to build; no
//! scene is built before), so the build reuses what memory the parse has touched and freed.
//!
//! ```text
//! cargo run --release -p raypick-io --example scene_file_timing [RUNS] [--fresh]
//! ```

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use raypick::{Scene, TriMesh};

#[path = "shared/conference.rs"]
mod conference;
use conference::{build, meshes};

fn median(mut ms: Vec<f64>) -> f64 {
    ms.sort_by(f64::total_cmp);
    ms[ms.len() / 2]
}

/// Milliseconds of one step in a process of its own: `build SCENE` or `load PATH`.
fn fresh(step: &str, arg: &str) -> f64 {
    let out = Command::new(std::env::current_exe().expect("this program's path"))
        .args(["--step", step, arg])
        .output()
        .expect("the step runs");
    assert!(out.status.success(), "{step} {arg}: {out:?}");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("the step prints its milliseconds")
}

/// The step's own work, timed: what `fresh` runs in a new process.
fn step(step: &str, arg: &str) {
    let ms = match step {
        "build" => {
            let meshes = meshes(arg);
            let t = Instant::now();
            let scene = build(&meshes);
            let ms = t.elapsed().as_secs_f64() * 1e3;
            drop(std::hint::black_box(scene));
            ms
        }
        "load" => {
            let t = Instant::now();
            let scene = Scene::load(arg).expect("the file loads");
            let ms = t.elapsed().as_secs_f64() * 1e3;
            drop(std::hint::black_box(scene));
            ms
        }
        other => panic!("unknown step {other}: build or load"),
    };
    println!("{ms}");
}

fn time(name: &str, runs: usize, fresh_processes: bool, dir: &Path) {
    let meshes = meshes(name);
    let triangles: usize = meshes.iter().map(TriMesh::num_triangles).sum();
    let scene = build(&meshes);
    let path = dir.join(format!("{name}.rpk"));
    let t = Instant::now();
    scene.save(&path).expect("the scene saves");
    let save_ms = t.elapsed().as_secs_f64() * 1e3;
    drop(scene);
    let bytes = std::fs::metadata(&path).expect("the file exists").len();
    // Builds and loads take turns, so a burst of load from elsewhere on the host falls on both.
    let (mut build_ms, mut load_ms) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        if fresh_processes {
            build_ms.push(fresh("build", name));
            load_ms.push(fresh(
                "load",
                path.to_str().expect("a UTF-8 temporary path"),
            ));
            continue;
        }
        let t = Instant::now();
        let built = build(&meshes);
        build_ms.push(t.elapsed().as_secs_f64() * 1e3);
        drop(built);
        let t = Instant::now();
        let loaded = Scene::load(&path).expect("the file loads");
        load_ms.push(t.elapsed().as_secs_f64() * 1e3);
        drop(loaded);
    }
    let (b, l) = (median(build_ms), median(load_ms));
    println!(
        "{name:<16} {triangles:>9} tris  build {b:>9.1} ms  load {l:>8.1} ms  (1/{:.1})  save {save_ms:>7.1} ms  file {:>6.1} MB",
        b / l,
        bytes as f64 / 1e6
    );
    std::fs::remove_file(&path).expect("the file is removed");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, what, arg] = args.as_slice() {
        if flag == "--step" {
            return step(what, arg);
        }
    }
    let fresh_processes = args.iter().any(|a| a == "--fresh");
    let runs: usize = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map_or(5, |s| s.parse().expect("RUNS is a number"));
    let dir = std::env::temp_dir().join(format!("raypick-scene-timing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    println!(
        "median of {runs} runs, {} threads{}",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        if fresh_processes {
            ", each build and load in a process of its own"
        } else {
            ""
        }
    );
    for name in ["conference", "conference-4x4"] {
        time(name, runs, fresh_processes, &dir);
    }
    std::fs::remove_dir_all(&dir).expect("the folder is removed");
}
