//! One step of the build-against-load comparison per process, for instruction counts
//! (`valgrind --tool=callgrind`) where wall-clock times are too noisy: the scene's meshes made,
//! built, saved, or a saved `.rpk` loaded. A step's own cost is its count less the count of the
//! step it extends (`build` less `meshes`; `load` stands alone).
//!
//! ```text
//! cargo run --release -p raypick-io --example scene_file_steps -- STEP SCENE FILE
//! ```
//! STEP is `meshes` (make SCENE's meshes), `build` (and build them), `save` (and save the scene to
//! FILE) or `load` (`Scene::load(FILE)` alone). SCENE is `conference` or `conference-4x4`, made by
//! `shared/conference.rs`, as for `scene_file_timing`.

use raypick::Scene;

#[path = "shared/conference.rs"]
mod conference;
use conference::{build, meshes};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [step, scene, file] = &args[..] else {
        panic!("usage: scene_file_steps STEP SCENE FILE");
    };
    match step.as_str() {
        "meshes" => {
            let m = meshes(scene);
            println!("{} meshes", m.len());
        }
        "build" => {
            let s = build(&meshes(scene));
            println!("{} triangles", s.num_triangles());
        }
        "save" => {
            let s = build(&meshes(scene));
            s.save(file).expect("the scene saves");
            println!("{} triangles saved", s.num_triangles());
        }
        "load" => {
            let s = Scene::load(file).expect("the file loads");
            println!("{} triangles loaded", s.num_triangles());
        }
        other => panic!("unknown step {other}: meshes, build, save or load"),
    }
}
