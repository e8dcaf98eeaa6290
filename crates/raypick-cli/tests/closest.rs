//! `raypick closest`: the arrays it writes equal the library's answers, in input order; the
//! output must not name an input; bad point files are refused with a clear error.

use std::io::Read;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use glam::Vec3;
use predicates::prelude::*;
use raypick::InsideMethod;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data")
        .join(rel)
}

fn raypick() -> Command {
    Command::cargo_bin("raypick").expect("the raypick binary is built")
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

fn npy<T: npyz::Deserialize>(bytes: &[u8]) -> (Vec<u64>, Vec<T>) {
    let f = npyz::NpyFile::new(bytes).unwrap();
    let shape = f.shape().to_vec();
    (shape, f.into_vec::<T>().unwrap())
}

fn write_points(path: &Path, points: &[Vec3]) {
    use npyz::WriterBuilder;
    let mut f = std::fs::File::create(path).unwrap();
    let mut w = npyz::WriteOptions::<f64>::new()
        .default_dtype()
        .shape(&[points.len() as u64, 3])
        .writer(&mut f)
        .begin_nd()
        .unwrap();
    w.extend(points.iter().flat_map(|p| p.to_array().map(f64::from)))
        .unwrap();
    w.finish().unwrap();
}

#[test]
fn closest_equals_the_library_and_refuses_bad_files() {
    let teapot = data("obj/teapot.obj");
    let scene = raypick_io::load(&teapot).unwrap().scene;
    let b = scene.bounds();
    let mut points: Vec<Vec3> = (0..500)
        .map(|i| {
            let f = i as f32 * 0.618_034;
            b.min
                + (b.max - b.min)
                    * Vec3::new((f * 3.1).fract(), (f * 5.7).fract(), (f * 7.3).fract())
        })
        .collect();
    points.push(Vec3::NAN);
    let dir = tempfile::tempdir().unwrap();
    let points_path = dir.path().join("p.npy");
    write_points(&points_path, &points);
    let out = dir.path().join("c.npz");
    raypick()
        .args(["closest"])
        .arg(&teapot)
        .arg("--points")
        .arg(&points_path)
        .arg("--out")
        .arg(&out)
        .args(["--signed", "--inside", "--method", "winding-number"])
        .assert()
        .success()
        .stdout(predicate::str::contains("501 points"));
    let npz = read_npz(&out);
    let (shape, point) = npy::<f32>(&npz["point"]);
    assert_eq!(shape, [501, 3]);
    let (_, distance) = npy::<f32>(&npz["distance"]);
    let (_, prim) = npy::<i64>(&npz["prim"]);
    let (_, signed) = npy::<f32>(&npz["signed_distance"]);
    let (_, inside) = npy::<bool>(&npz["inside"]);
    for (i, &p) in points.iter().enumerate() {
        let want = scene.closest_point(p);
        assert_eq!(prim[i], want.map_or(-1, |c| i64::from(c.prim)), "point {i}");
        match want {
            Some(c) => {
                assert_eq!(distance[i], c.distance);
                assert_eq!(&point[3 * i..3 * i + 3], &c.point.to_array());
            }
            None => assert!(distance[i].is_nan() && point[3 * i].is_nan()),
        }
        assert_eq!(inside[i], scene.contains(p, InsideMethod::WindingNumber));
        let s = scene.signed_distance(p, InsideMethod::WindingNumber);
        assert!(
            s == signed[i] || (s.is_nan() && signed[i].is_nan()),
            "point {i}"
        );
    }
    assert!(inside.iter().any(|&i| i) && inside.iter().any(|&i| !i));

    // `--out` naming an input is refused before any work, and the input stays as it was.
    let before = std::fs::read(&points_path).unwrap();
    raypick()
        .arg("closest")
        .arg(&teapot)
        .arg("--points")
        .arg(&points_path)
        .arg("--out")
        .arg(&points_path)
        .assert()
        .failure()
        .stderr(predicate::str::contains("point file"));
    assert_eq!(std::fs::read(&points_path).unwrap(), before);

    // Points of the wrong shape, or not a .npy at all.
    let bad = dir.path().join("bad.npy");
    {
        use npyz::WriterBuilder;
        let mut f = std::fs::File::create(&bad).unwrap();
        let mut w = npyz::WriteOptions::<f32>::new()
            .default_dtype()
            .shape(&[2, 2])
            .writer(&mut f)
            .begin_nd()
            .unwrap();
        w.extend([0.0f32; 4]).unwrap();
        w.finish().unwrap();
    }
    raypick()
        .arg("closest")
        .arg(&teapot)
        .arg("--points")
        .arg(&bad)
        .arg("--out")
        .arg(dir.path().join("x.npz"))
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "expected an array of shape (N, 3)",
        ));
    std::fs::write(&bad, b"1 2 3\n").unwrap();
    raypick()
        .arg("closest")
        .arg(&teapot)
        .arg("--points")
        .arg(&bad)
        .arg("--out")
        .arg(dir.path().join("x.npz"))
        .assert()
        .failure()
        .stderr(predicate::str::contains("not a .npy file"));
}
