//! The `raypick` binary on hostile files and careless calls: outputs that name an input, writes
//! that fail part-way, the loader's budgets and reference policy on the command line.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data")
        .join(rel)
}

fn raypick() -> Command {
    Command::cargo_bin("raypick").expect("the raypick binary is built")
}

/// `n` rays from above the teapot, straight down, as a `.rays` file's bytes.
fn rays_bytes(n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|i| {
            let x = -1.5 + 3.0 * (i % 50) as f32 / 50.0;
            let z = -1.5 + 3.0 * (i / 50) as f32 / (n / 50).max(1) as f32;
            [x, 10.0, z, 0.0, -1.0, 0.0]
        })
        .flat_map(f32::to_le_bytes)
        .collect()
}

fn stderr_of(assert: assert_cmd::assert::Assert) -> String {
    String::from_utf8(assert.get_output().stderr.clone()).unwrap()
}

/// The files of `dir` whose names start with `.raypick-`: temporary outputs left behind.
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".raypick-"))
        .collect()
}

#[test]
fn an_output_that_names_an_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("teapot.obj");
    std::fs::copy(data("obj/teapot.obj"), &model).unwrap();
    let rays = dir.path().join("r.rays");
    std::fs::write(&rays, rays_bytes(100)).unwrap();
    let model_bytes = std::fs::read(&model).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&model, dir.path().join("link.obj")).unwrap();
    let mut outs = vec![
        (model.clone(), "model file"),
        (rays.clone(), "ray file"),
        (dir.path().join("sub/../teapot.obj"), "model file"),
    ];
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    #[cfg(unix)]
    outs.push((dir.path().join("link.obj"), "model file"));
    for (out, what) in outs {
        let err = stderr_of(
            raypick()
                .arg("cast")
                .arg(&model)
                .arg("--rays")
                .arg(&rays)
                .arg("--out")
                .arg(&out)
                .assert()
                .failure()
                .code(1),
        );
        assert!(
            err.contains("refusing to overwrite") && err.contains(what),
            "{}: {err}",
            out.display()
        );
    }
    let err = stderr_of(
        raypick()
            .arg("render")
            .arg(&model)
            .arg("-o")
            .arg(&model)
            .args(["--size", "16x16"])
            .assert()
            .failure(),
    );
    assert!(
        err.contains("refusing to overwrite the model file"),
        "{err}"
    );
    assert_eq!(std::fs::read(&model).unwrap(), model_bytes);

    // A glTF's external buffer is an input too.
    let buffer = dir.path().join("quad.bin");
    let quad: Vec<u8> = [0f32, 0., 0., 1., 0., 0., 1., 1., 0., 0., 1., 0.]
        .iter()
        .flat_map(|c| c.to_le_bytes())
        .collect();
    std::fs::write(&buffer, &quad).unwrap();
    let gltf = dir.path().join("quad.gltf");
    std::fs::write(
        &gltf,
        r#"{"asset":{"version":"2.0"},"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],
        "meshes":[{"primitives":[{"attributes":{"POSITION":0},"mode":6}]}],
        "accessors":[{"bufferView":0,"componentType":5126,"count":4,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}],
        "bufferViews":[{"buffer":0,"byteLength":48}],"buffers":[{"byteLength":48,"uri":"quad.bin"}]}"#,
    )
    .unwrap();
    let err = stderr_of(
        raypick()
            .arg("cast")
            .arg(&gltf)
            .arg("--rays")
            .arg(&rays)
            .arg("--out")
            .arg(&buffer)
            .assert()
            .failure(),
    );
    assert!(err.contains("file the model refers to"), "{err}");
    assert_eq!(std::fs::read(&buffer).unwrap(), quad);
}

/// Under a file-size limit too small for the new output, `cast` fails with a clear error, the
/// previous output is intact, and no temporary file is left behind.
#[cfg(unix)]
#[test]
fn a_failed_write_leaves_the_previous_output_intact() {
    let dir = tempfile::tempdir().unwrap();
    let model = data("obj/teapot.obj");
    let few = dir.path().join("few.rays");
    let many = dir.path().join("many.rays");
    std::fs::write(&few, rays_bytes(20)).unwrap();
    std::fs::write(&many, rays_bytes(5000)).unwrap();
    let out = dir.path().join("hits.npz");
    raypick()
        .arg("cast")
        .arg(&model)
        .arg("--rays")
        .arg(&few)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let before = std::fs::read(&out).unwrap();
    assert!(before.len() < 8 * 1024, "{}", before.len());
    // `ulimit -f 16`: no file over 16 KiB (bash counts in 1024-byte blocks); the new output,
    // 5000 rays of 36 bytes, is ten times that.
    let script = format!(
        "ulimit -f 16 && exec '{}' cast '{}' --rays '{}' --out '{}'",
        assert_cmd::cargo::cargo_bin("raypick").display(),
        model.display(),
        many.display(),
        out.display()
    );
    let assert = Command::new("bash")
        .args(["-c", &script])
        .assert()
        .failure()
        .code(1);
    let err = stderr_of(assert);
    assert!(
        err.contains("hits.npz") && err.contains("nothing was replaced"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&out).unwrap(),
        before,
        "the previous output changed"
    );
    assert_eq!(leftovers(dir.path()), Vec::<String>::new());
}

#[test]
fn load_limits_and_references_on_the_command_line() {
    let teapot = data("obj/teapot.obj");
    let err = stderr_of(
        raypick()
            .arg("info")
            .arg(&teapot)
            .args(["--max-bytes", "100K"])
            .assert()
            .failure()
            .code(1),
    );
    assert!(
        err.contains("over the byte budget of 102400") && err.trim().lines().count() == 1,
        "{err}"
    );
    let err = stderr_of(
        raypick()
            .arg("pick")
            .arg(&teapot)
            .args(["--pixel", "1,1", "--max-triangles", "1000"])
            .assert()
            .failure(),
    );
    assert!(err.contains("more than 1000 triangles"), "{err}");
    raypick()
        .arg("info")
        .arg(&teapot)
        .args(["--max-bytes", "1M", "--max-triangles", "7000"])
        .assert()
        .success();

    // A glTF whose buffer is outside its folder: refused unless allowed.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("models")).unwrap();
    let quad: Vec<u8> = [0f32, 0., 0., 1., 0., 0., 1., 1., 0., 0., 1., 0.]
        .iter()
        .flat_map(|c| c.to_le_bytes())
        .collect();
    std::fs::write(dir.path().join("outside.bin"), quad).unwrap();
    let gltf = dir.path().join("models/quad.gltf");
    std::fs::write(
        &gltf,
        r#"{"asset":{"version":"2.0"},"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],
        "meshes":[{"primitives":[{"attributes":{"POSITION":0},"mode":6}]}],
        "accessors":[{"bufferView":0,"componentType":5126,"count":4,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}],
        "bufferViews":[{"buffer":0,"byteLength":48}],"buffers":[{"byteLength":48,"uri":"../outside.bin"}]}"#,
    )
    .unwrap();
    for sub in [&["info"][..], &["pick", "--pixel", "1,1"][..]] {
        let err = stderr_of(raypick().args(sub).arg(&gltf).assert().failure().code(1));
        assert!(
            err.contains("`../outside.bin` is refused") && err.contains("allow_outside_refs"),
            "{err}"
        );
    }
    let out = String::from_utf8(
        raypick()
            .arg("info")
            .arg(&gltf)
            .args(["--allow-outside-refs", "--json"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone(),
    )
    .unwrap();
    assert!(out.contains("\"triangles_in_world\": 2"), "{out}");
}
