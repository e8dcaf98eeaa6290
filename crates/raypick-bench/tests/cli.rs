//! The binary end to end on a small mesh: tables printed, every engine agrees.

use std::process::Command;

#[test]
fn runs_all_engines_on_the_teapot_and_reports_agreement() {
    let mesh = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/obj/teapot.obj"
    );
    // Every engine compiled in (all four with the `compare` feature, else raypick alone).
    let engines: Vec<&str> = raypick_bench::engines::EngineKind::available()
        .iter()
        .map(|k| k.name())
        .collect();
    let out = Command::new(env!("CARGO_BIN_EXE_raypick-bench"))
        .args(["--engines", &engines.join(",")])
        .args([
            "--mesh",
            mesh,
            "--rays",
            "300",
            "--runs",
            "1",
            "--threads",
            "2",
            "--raypick-config",
            "fast",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("6320 triangles"), "{stdout}");
    for needle in [
        "## BVH build, ms (median)",
        "## incoherent rays: Mrays/s (median)",
        "## primary rays: Mrays/s (median)",
        "### primary rays: agreement",
        "| raypick | 0.1.0 |",
        "`--raypick-config fast`",
    ] {
        assert!(stdout.contains(needle), "no {needle:?} in\n{stdout}");
    }
    for other in &engines[1..] {
        let needle = format!("| {other} | 300 |");
        assert!(stdout.contains(&needle), "no {needle:?} in\n{stdout}");
    }
    assert!(!stderr.contains("wrong answer"), "{stderr}");
}

#[test]
fn rejects_unknown_engines_and_missing_files() {
    let bin = env!("CARGO_BIN_EXE_raypick-bench");
    let out = Command::new(bin)
        .args(["--engines", "embree"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown engine `embree`"));
    let out = Command::new(bin)
        .args(["--mesh", "/nonexistent.obj"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let out = Command::new(bin)
        .args(["--raypick-config", "best"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("known: fast, balanced, high_quality, spatial"));
    let out = Command::new(bin)
        .args(["--rays-dir", "/nonexistent-dir"])
        .output()
        .unwrap();
    assert!(!out.status.success());
}
