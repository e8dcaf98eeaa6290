//! Runs the `raypick` binary: every subcommand, bad paths and bad arguments, golden images of the
//! prim-id render, and `cast` against the library's batch API.

use std::io::Read;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use glam::{Vec2, Vec3};
use predicates::prelude::*;
use raypick::camera::ClipSpace;
use raypick::{QueryOptions, Ray};
use raypick_cli::render::{render, Image, Mode};
use raypick_cli::view::Framing;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data")
        .join(rel)
}

fn raypick() -> Command {
    Command::cargo_bin("raypick").expect("the raypick binary is built")
}

fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.assert().success().get_output().stdout.clone();
    String::from_utf8(out).expect("utf-8 output")
}

#[test]
fn help_shows_examples() {
    raypick()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("Examples:"));
    for sub in ["demo", "pick", "render", "cast", "info", "bench"] {
        raypick()
            .args([sub, "--help"])
            .assert()
            .success()
            .stdout(predicate::str::contains("Example"));
    }
}

#[test]
fn demo_writes_an_image_and_prints_picks() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("demo.png");
    let text = stdout_of(
        raypick()
            .args(["demo", "--size", "240x160", "--out"])
            .arg(&out),
    );
    assert!(text.contains("Mrays/s"), "{text}");
    // Every aimed pick reports the object it was aimed at.
    for object in [
        "torus-knot",
        "icosphere",
        "spheres",
        "torus-standing",
        "ground",
    ] {
        assert!(
            text.contains(&format!("aimed at the {object}:\n  object      {object}")),
            "{object} in\n{text}"
        );
    }
    let img = Image::from_png(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!((img.width, img.height), (240, 160));
}

/// `raypick pick --json` reports the same hit as the library's pick with the same camera.
#[test]
fn pick_matches_the_library() {
    let bunny = data("obj/stanford-bunny.obj");
    let loaded = raypick_io::load(&bunny).unwrap();
    for (convention, clip) in [
        ("gl", ClipSpace::OpenGl),
        ("d3d", ClipSpace::Direct3D),
        ("vulkan", ClipSpace::Vulkan),
    ] {
        let camera =
            raypick_cli::view::make_camera(&loaded.scene, (320, 240), clip, None, Framing::Scene)
                .unwrap();
        for (x, y) in [(160u32, 120u32), (150, 100), (10, 10), (200, 150)] {
            let text = stdout_of(
                raypick()
                    .arg("pick")
                    .arg(&bunny)
                    .args([
                        "--size",
                        "320x240",
                        "--convention",
                        convention,
                        "--json",
                        "--pixel",
                    ])
                    .arg(format!("{x},{y}")),
            );
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            let expect = raypick::camera::pick(
                &loaded.scene,
                &camera,
                Vec2::new(x as f32 + 0.5, y as f32 + 0.5),
            );
            match expect {
                None => assert!(
                    v["hit"].is_null(),
                    "({x}, {y}) {convention}: expected a miss, got {text}"
                ),
                Some(p) => {
                    assert_eq!(v["hit"]["triangle"], p.hit.prim, "({x}, {y}) {convention}");
                    let t = v["hit"]["t"].as_f64().unwrap();
                    assert!((t - p.hit.t as f64).abs() <= 1e-6 * t.abs().max(1.0));
                }
            }
        }
        // The centre pixel of a framed model hits it.
        let text = stdout_of(raypick().arg("pick").arg(&bunny).args([
            "--size",
            "320x240",
            "--pixel",
            "160,120",
            "--convention",
            convention,
        ]));
        assert!(
            text.contains(": hit") && text.contains("primitive"),
            "{text}"
        );
    }
}

#[test]
fn pick_bottom_left_origin_flips_rows() {
    let top =
        stdout_of(raypick().args(["pick", "--size", "200x100", "--pixel", "100,30", "--json"]));
    let bottom = stdout_of(raypick().args([
        "pick",
        "--size",
        "200x100",
        "--pixel",
        "100,69",
        "--origin",
        "bottom-left",
        "--json",
    ]));
    let a: serde_json::Value = serde_json::from_str(&top).unwrap();
    let b: serde_json::Value = serde_json::from_str(&bottom).unwrap();
    assert_eq!(a["hit"], b["hit"]);
}

fn golden_check(name: &str, image: &Image) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let path = dir.join(format!("{name}.png"));
    if std::env::var_os("RAYPICK_BLESS").is_some() {
        std::fs::write(&path, image.to_png().unwrap()).unwrap();
        return;
    }
    let golden = Image::from_png(&std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with RAYPICK_BLESS=1 to create it",
            path.display()
        )
    }))
    .unwrap();
    if golden == *image {
        return;
    }
    // Write the actual image and a diff (differing pixels white) next to the target dir.
    let out = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let actual = out.join(format!("{name}.actual.png"));
    let diff_path = out.join(format!("{name}.diff.png"));
    std::fs::write(&actual, image.to_png().unwrap()).unwrap();
    let mut diff = Image::new(image.width, image.height);
    let mut differing = 0;
    if golden.width == image.width && golden.height == image.height {
        for y in 0..image.height {
            for x in 0..image.width {
                if golden.get(x, y) != image.get(x, y) {
                    differing += 1;
                    diff.set(x as i64, y as i64, [255, 255, 255]);
                }
            }
        }
        std::fs::write(&diff_path, diff.to_png().unwrap()).unwrap();
    }
    panic!(
        "{name}: {differing} pixels differ from {} (size {}x{} vs {}x{}); actual image {}, diff {}; \
         if the change is intended, regenerate with RAYPICK_BLESS=1",
        path.display(),
        image.width,
        image.height,
        golden.width,
        golden.height,
        actual.display(),
        diff_path.display()
    );
}

/// The prim-id image through the binary equals the stored golden image, exactly.
#[test]
fn golden_prim_id_images() {
    let dir = tempfile::tempdir().unwrap();
    for (name, model) in [
        ("demo-prim-id", None),
        ("teapot-prim-id", Some(data("obj/teapot.obj"))),
    ] {
        let out = dir.path().join(format!("{name}.png"));
        let mut cmd = raypick();
        cmd.arg("render");
        if let Some(m) = &model {
            cmd.arg(m);
        }
        cmd.args(["--mode", "prim-id", "--size", "200x150", "-o"])
            .arg(&out);
        stdout_of(&mut cmd);
        let image = Image::from_png(&std::fs::read(&out).unwrap()).unwrap();
        golden_check(name, &image);
    }
}

#[test]
fn render_modes_and_highlight() {
    let model = raypick_cli::demo::demo_scene().unwrap();
    let camera = raypick_cli::view::make_camera(
        &model.scene,
        (64, 48),
        ClipSpace::OpenGl,
        None,
        Framing::Demo,
    )
    .unwrap();
    let (ids, stats) = render(&model.scene, &camera, Mode::PrimId, None, |_| {});
    assert_eq!(stats.rays, 64 * 48);
    // Every pixel's colour agrees with an independent pick through its centre: black exactly on misses.
    for y in 0..48 {
        for x in 0..64 {
            let pick = raypick::camera::pick(
                &model.scene,
                &camera,
                Vec2::new(x as f32 + 0.5, y as f32 + 0.5),
            );
            assert_eq!(
                pick.is_none(),
                ids.get(x, y) == [0, 0, 0],
                "pixel ({x}, {y})"
            );
        }
    }
    let dir = tempfile::tempdir().unwrap();
    for mode in ["shaded", "normal", "depth"] {
        let out = dir.path().join(format!("{mode}.png"));
        let text = stdout_of(
            raypick()
                .args([
                    "render",
                    "--mode",
                    mode,
                    "--size",
                    "80x60",
                    "--highlight",
                    "40,30",
                    "-o",
                ])
                .arg(&out),
        );
        assert!(text.contains("Mrays/s"));
        let img = Image::from_png(&std::fs::read(&out).unwrap()).unwrap();
        assert_eq!((img.width, img.height), (80, 60));
    }
}

fn read_npz(path: &Path) -> std::collections::HashMap<String, Vec<u8>> {
    let mut zip = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut out = std::collections::HashMap::new();
    for i in 0..zip.len() {
        let mut f = zip.by_index(i).unwrap();
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).unwrap();
        out.insert(f.name().trim_end_matches(".npy").to_string(), bytes);
    }
    out
}

fn npy_f32(bytes: &[u8]) -> Vec<f32> {
    npyz::NpyFile::new(bytes)
        .unwrap()
        .into_vec::<f32>()
        .unwrap()
}

fn npy_i64(bytes: &[u8]) -> Vec<i64> {
    npyz::NpyFile::new(bytes)
        .unwrap()
        .into_vec::<i64>()
        .unwrap()
}

fn test_rays(scene: &raypick::Scene, n: usize) -> Vec<Ray> {
    // Deterministic rays from a sphere around the model towards points in its box.
    let b = scene.bounds();
    let (c, r) = (b.center(), 0.5 * b.extent().length());
    (0..n)
        .map(|i| {
            let f = i as f32 * 0.618_034;
            let (theta, z) = (
                f * std::f32::consts::TAU,
                1.0 - 2.0 * ((i as f32 + 0.5) / n as f32),
            );
            let s = (1.0 - z * z).sqrt();
            let o = c + 2.0 * r * Vec3::new(s * theta.cos(), z, s * theta.sin());
            let target = b.min
                + b.extent() * Vec3::new((f * 3.1).fract(), (f * 5.7).fract(), (f * 7.3).fract());
            Ray::new(o, target - o)
        })
        .collect()
}

/// The floats of a `.rays` file: `ox oy oz dx dy dz` per ray.
fn ray_rows(rays: &[Ray]) -> impl Iterator<Item = f32> + '_ {
    rays.iter().flat_map(|r| {
        [
            r.origin.x, r.origin.y, r.origin.z, r.dir.x, r.dir.y, r.dir.z,
        ]
    })
}

/// `raypick cast` writes exactly what the library's batch API returns, in input order.
#[test]
fn cast_equals_the_batch_api() {
    let bunny = data("obj/stanford-bunny.obj");
    let loaded = raypick_io::load(&bunny).unwrap();
    let rays = test_rays(&loaded.scene, 2000);
    let dir = tempfile::tempdir().unwrap();
    let rays_path = dir.path().join("r.rays");
    let bytes: Vec<u8> = ray_rows(&rays).flat_map(f32::to_le_bytes).collect();
    std::fs::write(&rays_path, bytes).unwrap();
    let expect = loaded
        .scene
        .intersect_batch(&rays, &QueryOptions::default());

    let out = dir.path().join("hits.npz");
    let text = stdout_of(
        raypick()
            .arg("cast")
            .arg(&bunny)
            .arg("--rays")
            .arg(&rays_path)
            .arg("--out")
            .arg(&out),
    );
    assert!(text.contains("2000 rays"), "{text}");
    let npz = read_npz(&out);
    let (t, prim, u, v) = (
        npy_f32(&npz["t"]),
        npy_i64(&npz["prim"]),
        npy_f32(&npz["u"]),
        npy_f32(&npz["v"]),
    );
    let (geom, instance) = (npy_i64(&npz["geom"]), npy_i64(&npz["instance"]));
    assert_eq!(t.len(), rays.len());
    let mut hits = 0;
    for (i, h) in expect.iter().enumerate() {
        match h {
            None => {
                assert_eq!(
                    (t[i], prim[i], geom[i], instance[i]),
                    (f32::INFINITY, -1, -1, -1)
                );
            }
            Some(h) => {
                hits += 1;
                assert_eq!((t[i], prim[i], u[i], v[i]), (h.t, h.prim as i64, h.u, h.v));
                assert_eq!((geom[i], instance[i]), (h.geom as i64, -1));
            }
        }
    }
    assert!(
        hits > 100 && hits < 2000,
        "a mix of hits and misses: {hits}"
    );

    // Any-hit agrees with closest-hit on hit/miss; all-hits lists each ray's hits sorted by t.
    let occ_path = dir.path().join("occ.npz");
    stdout_of(
        raypick()
            .arg("cast")
            .arg(&bunny)
            .arg("--rays")
            .arg(&rays_path)
            .arg("--out")
            .arg(&occ_path)
            .arg("--any-hit"),
    );
    let occ = npyz::NpyFile::new(&read_npz(&occ_path)["occluded"][..])
        .unwrap()
        .into_vec::<bool>()
        .unwrap();
    assert_eq!(occ, expect.iter().map(Option::is_some).collect::<Vec<_>>());

    let all_path = dir.path().join("all.npz");
    stdout_of(
        raypick()
            .arg("cast")
            .arg(&bunny)
            .arg("--rays")
            .arg(&rays_path)
            .arg("--out")
            .arg(&all_path)
            .arg("--all-hits"),
    );
    let all = read_npz(&all_path);
    let (ray_ids, t_all) = (npy_i64(&all["ray"]), npy_f32(&all["t"]));
    for (i, r) in rays.iter().enumerate() {
        let want: Vec<f32> = loaded.scene.intersect_all(r).iter().map(|h| h.t).collect();
        let got: Vec<f32> = ray_ids
            .iter()
            .zip(&t_all)
            .filter(|(&id, _)| id == i as i64)
            .map(|(_, &t)| t)
            .collect();
        assert_eq!(got, want, "ray {i}");
    }

    // .npy input (float64, N×6) gives the same answer.
    let npy_path = dir.path().join("r.npy");
    let flat: Vec<f64> = ray_rows(&rays).map(f64::from).collect();
    {
        use npyz::WriterBuilder;
        let mut f = std::fs::File::create(&npy_path).unwrap();
        let mut w = npyz::WriteOptions::<f64>::new()
            .default_dtype()
            .shape(&[rays.len() as u64, 6])
            .writer(&mut f)
            .begin_nd()
            .unwrap();
        w.extend(flat).unwrap();
        w.finish().unwrap();
    }
    let out2 = dir.path().join("hits2.npz");
    stdout_of(
        raypick()
            .arg("cast")
            .arg(&bunny)
            .arg("--rays")
            .arg(&npy_path)
            .arg("--out")
            .arg(&out2),
    );
    assert_eq!(npy_i64(&read_npz(&out2)["prim"]), prim);
}

#[test]
fn info_reports_counts_and_bvh_statistics() {
    let text = stdout_of(
        raypick()
            .arg("info")
            .arg(data("obj/teapot.obj"))
            .arg("--json"),
    );
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["triangles_stored"], 6320);
    assert!(v["geometry"][0]["bvh"]["nodes"].as_u64().unwrap() > 1);
    // glTF instancing: the engine's 2 uses of the Wheels mesh count twice in the world, once stored
    // (counts from shared/data/README.md).
    let text = stdout_of(
        raypick()
            .arg("info")
            .arg(data("gltf/CesiumMilkTruck.glb"))
            .arg("--json"),
    );
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        (
            v["triangles_in_world"].as_u64(),
            v["triangles_stored"].as_u64()
        ),
        (Some(3624), Some(2856))
    );
    assert!(
        v["geometry"][0]["bvh"]["nodes"].as_u64().is_some(),
        "instances show their mesh's BVH"
    );
    let text = stdout_of(raypick().arg("info"));
    assert!(
        text.contains("torus-mirrored") && text.contains("BVH build"),
        "{text}"
    );
}

#[test]
fn bench_prints_a_table() {
    let text = stdout_of(raypick().args(["bench", "--quick"]));
    for row in [
        "triangle: watertight",
        "triangle: Möller–Trumbore",
        "sphere: geometric, intersects only",
        "box: robust slab test",
        "closest hit, 1 thread",
    ] {
        assert!(text.contains(row), "{row} in\n{text}");
    }
}

#[test]
fn errors_are_one_line_with_context_and_fail() {
    // A missing model names the path.
    let a = raypick()
        .args(["info", "/no/such/model.obj"])
        .assert()
        .failure()
        .code(1);
    let err = String::from_utf8(a.get_output().stderr.clone()).unwrap();
    assert!(
        err.contains("/no/such/model.obj") && err.trim().lines().count() == 1,
        "{err}"
    );
    // A file that is not a model.
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.stl");
    std::fs::write(
        &junk,
        b"solid x\n facet normal 0 0 1\n outer loop\n vertex 0 0 nan\n",
    )
    .unwrap();
    let a = raypick().arg("info").arg(&junk).assert().failure().code(1);
    let err = String::from_utf8(a.get_output().stderr.clone()).unwrap();
    assert!(err.contains("junk.stl"), "{err}");
    // A ray file of the wrong size.
    let bad_rays = dir.path().join("bad.rays");
    std::fs::write(&bad_rays, [0u8; 30]).unwrap();
    let a = raypick()
        .arg("cast")
        .arg(data("obj/teapot.obj"))
        .arg("--rays")
        .arg(&bad_rays)
        .arg("--out")
        .arg(dir.path().join("o.npz"))
        .assert()
        .failure()
        .code(1);
    let err = String::from_utf8(a.get_output().stderr.clone()).unwrap();
    assert!(
        err.contains("bad.rays") && err.contains("multiple of 24"),
        "{err}"
    );
    // Out-of-image pixels and malformed arguments.
    raypick()
        .args(["pick", "--pixel", "5000,1", "--size", "100x100"])
        .assert()
        .failure()
        .code(1)
        .stderr(predicate::str::contains("outside"));
    raypick()
        .args(["pick", "--pixel", "abc"])
        .assert()
        .failure()
        .code(2);
    raypick()
        .args(["render", "-o", "x.png", "--size", "0x10"])
        .assert()
        .failure()
        .code(2);
    raypick()
        .args(["pick", "--pixel", "1,1", "--camera", "0,0,0,0,0,0,0,1,0,45"])
        .assert()
        .failure()
        .code(1)
        .stderr(predicate::str::contains("camera"));
    raypick().args(["frobnicate"]).assert().failure().code(2);
}

/// `--keep-instances` keeps every glTF node an instance; by default the truck's nodes used once are
/// baked (their hits name no instance) and its two wheels stay instances of one mesh.
#[test]
fn keep_instances_keeps_every_node_an_instance() {
    let truck = data("gltf/CesiumMilkTruck.glb");
    let loaded = raypick_io::load(&truck).unwrap();
    let rays = test_rays(&loaded.scene, 3000);
    let dir = tempfile::tempdir().unwrap();
    let rays_path = dir.path().join("r.rays");
    let bytes: Vec<u8> = ray_rows(&rays).flat_map(f32::to_le_bytes).collect();
    std::fs::write(&rays_path, bytes).unwrap();
    let instances = |keep: bool, name: &str| {
        let out = dir.path().join(name);
        let mut cmd = raypick();
        cmd.arg("cast").arg(&truck).arg("--rays").arg(&rays_path);
        if keep {
            cmd.arg("--keep-instances");
        }
        stdout_of(cmd.arg("--out").arg(&out));
        let npz = read_npz(&out);
        (npy_f32(&npz["t"]), npy_i64(&npz["instance"]))
    };
    let (t_baked, baked) = instances(false, "baked.npz");
    let (t_kept, kept) = instances(true, "kept.npz");
    let hits: Vec<usize> = (0..rays.len()).filter(|&i| t_kept[i].is_finite()).collect();
    assert!(hits.len() > 500, "{}", hits.len());
    assert!(
        hits.iter().all(|&i| kept[i] >= 0),
        "kept: every hit names its node"
    );
    let named = hits.iter().filter(|&&i| baked[i] >= 0).count();
    assert!(
        named > 10 && named < hits.len() / 2,
        "baked: {named} of {}",
        hits.len()
    );
    assert!(hits.iter().all(|&i| t_baked[i].is_finite()));
}

/// `--hierarchy` keeps the glTF node tree as nested instances: a pick names the node it struck
/// (as `--keep-instances` does) and carries the path of instances down to it; the two flags
/// exclude each other.
#[test]
fn hierarchy_picks_name_the_node_struck_with_its_path() {
    let truck = data("gltf/CesiumMilkTruck.glb");
    let pick = |flag: &str, x: u32, y: u32| -> serde_json::Value {
        let text = stdout_of(raypick().arg("pick").arg(&truck).arg(flag).args([
            "--pixel",
            &format!("{x},{y}"),
            "--json",
        ]));
        serde_json::from_str(&text).unwrap()
    };
    let (mut hits, mut nested) = (0, 0);
    for y in (150..=450).step_by(60) {
        for x in (100..=700).step_by(75) {
            let (tree, flat) = (pick("--hierarchy", x, y), pick("--keep-instances", x, y));
            let (tree, flat) = (&tree["hit"], &flat["hit"]);
            assert_eq!(tree.is_null(), flat.is_null(), "pixel {x},{y}");
            if tree.is_null() {
                continue;
            }
            hits += 1;
            assert_eq!(tree["object"], flat["object"], "pixel {x},{y}");
            assert_eq!(tree["triangle"], flat["triangle"], "pixel {x},{y}");
            let (a, b) = (tree["t"].as_f64().unwrap(), flat["t"].as_f64().unwrap());
            assert!(
                (a - b).abs() <= 1e-5 * b.abs().max(1.0),
                "pixel {x},{y}: {a} vs {b}"
            );
            let path = tree["instance_path"].as_array().unwrap();
            assert_eq!(path.first(), Some(&tree["instance"]));
            assert_eq!(flat["instance_path"].as_array().unwrap().len(), 1);
            if path.len() >= 2 {
                nested += 1;
            }
        }
    }
    assert!(
        hits > 20 && nested == hits,
        "{nested} nested of {hits} hits"
    );
    raypick()
        .arg("pick")
        .arg(&truck)
        .args(["--hierarchy", "--keep-instances", "--pixel", "400,300"])
        .assert()
        .failure()
        .code(2);
}

/// The README's `raypick pick` example is what the binary prints for that command.
#[test]
fn readme_pick_example_is_what_the_binary_prints() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .expect("README.md");
    let command = "$ raypick pick ../shared/data/obj/stanford-bunny.obj --pixel 400,300";
    let start = readme
        .find(command)
        .expect("the README shows the pick example")
        + command.len();
    let shown: Vec<&str> = readme[start..]
        .lines()
        .skip(1)
        .map(str::trim)
        .take_while(|l| !l.starts_with("```"))
        .collect();
    let text = stdout_of(
        raypick()
            .arg("pick")
            .arg(data("obj/stanford-bunny.obj"))
            .args(["--pixel", "400,300"]),
    );
    let printed: Vec<&str> = text.lines().map(str::trim).collect();
    assert_eq!(shown, printed);
}

/// `raypick build` saves a scene file that the other subcommands load as they load the model:
/// the same picks, the same prim-id image, the same counts.
#[test]
fn build_writes_a_scene_file_the_other_subcommands_load() {
    let dir = tempfile::tempdir().unwrap();
    for model in ["obj/teapot.obj", "gltf/CesiumMilkTruck.glb"] {
        let rpk = dir.path().join("model.rpk");
        let text = stdout_of(
            raypick()
                .arg("build")
                .arg(data(model))
                .arg("--keep-instances")
                .arg("-o")
                .arg(&rpk),
        );
        assert!(text.contains("wrote"), "{text}");
        let bytes = std::fs::read(&rpk).unwrap();
        assert!(bytes.starts_with(b"RAYPICK\0"));
        let pick = |m: &Path| {
            stdout_of(
                raypick()
                    .arg("pick")
                    .arg(m)
                    .arg("--keep-instances")
                    .args(["--pixel", "400,300", "--json"]),
            )
        };
        assert_eq!(
            pick(&data(model)),
            pick(&rpk).replace(
                &rpk.display().to_string(),
                &data(model).display().to_string()
            )
        );
        let render = |m: &Path, out: &Path| {
            raypick()
                .arg("render")
                .arg(m)
                .arg("--keep-instances")
                .args(["--mode", "prim-id", "--size", "160x120", "-o"])
                .arg(out)
                .assert()
                .success();
            std::fs::read(out).unwrap()
        };
        assert!(
            render(&data(model), &dir.path().join("a.png"))
                == render(&rpk, &dir.path().join("b.png")),
            "{model}: the images differ"
        );
        let info: serde_json::Value =
            serde_json::from_str(&stdout_of(raypick().arg("info").arg(&rpk).arg("--json")))
                .unwrap();
        let original: serde_json::Value = serde_json::from_str(&stdout_of(
            raypick()
                .arg("info")
                .arg(data(model))
                .arg("--keep-instances")
                .arg("--json"),
        ))
        .unwrap();
        assert_eq!(info["triangles_in_world"], original["triangles_in_world"]);
        assert_eq!(
            info["geometry"].as_array().map(Vec::len),
            original["geometry"].as_array().map(Vec::len)
        );
    }
    // `--bvh spatial`: the file keeps the preset and answers as the default build.
    let rpk = dir.path().join("spatial.rpk");
    raypick()
        .arg("build")
        .arg(data("obj/teapot.obj"))
        .args(["--bvh", "spatial", "-o"])
        .arg(&rpk)
        .assert()
        .success();
    let preset = |m: &Path, extra: &[&str]| {
        let info: serde_json::Value = serde_json::from_str(&stdout_of(
            raypick().arg("info").arg(m).args(extra).arg("--json"),
        ))
        .unwrap();
        info["bvh_preset"].as_str().unwrap().to_string()
    };
    assert_eq!(preset(&rpk, &[]), "spatial");
    assert_eq!(preset(&data("obj/teapot.obj"), &[]), "balanced");
    assert_eq!(preset(&data("obj/teapot.obj"), &["--bvh", "fast"]), "fast");
    let pick = |m: &Path| {
        stdout_of(
            raypick()
                .arg("pick")
                .arg(m)
                .args(["--pixel", "400,300", "--json"]),
        )
    };
    assert_eq!(
        pick(&data("obj/teapot.obj")),
        pick(&rpk).replace(
            &rpk.display().to_string(),
            &data("obj/teapot.obj").display().to_string()
        )
    );
    // The output must not be the model itself.
    let copy = dir.path().join("teapot.obj");
    std::fs::copy(data("obj/teapot.obj"), &copy).unwrap();
    raypick()
        .arg("build")
        .arg(&copy)
        .arg("-o")
        .arg(&copy)
        .assert()
        .failure();
    // A damaged scene file is refused with the field it breaks.
    let rpk = dir.path().join("bad.rpk");
    std::fs::write(&rpk, b"RAYPICK\0\x07\0\0\0").unwrap();
    raypick()
        .arg("info")
        .arg(&rpk)
        .assert()
        .failure()
        .stderr(predicate::str::contains("bad.rpk").and(predicate::str::contains("version 7")));
}
