//! Property tests with fixed seeds: random meshes with coordinates over magnitudes 1e-6..1e6 are
//! written in each format by a few lines of plain code here (the reference), parsed back, and must
//! come back exactly: the same positions bit for bit (Rust's `{}` float formatting round-trips)
//! and the same triangles, with polygons fanned in order.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use raypick::glam::Vec3;

/// A coordinate of magnitude 1e-6..1e6 with either sign, or exactly zero.
fn coordinate() -> impl Strategy<Value = f32> {
    prop_oneof![
        Just(0.0f32),
        (-6.0f64..6.0, any::<bool>()).prop_map(|(exponent, negative)| {
            let magnitude = 10f64.powf(exponent) as f32;
            if negative {
                -magnitude
            } else {
                magnitude
            }
        }),
    ]
}

/// Vertices and polygons (3 to 6 corners) over them.
fn mesh() -> impl Strategy<Value = (Vec<Vec3>, Vec<Vec<u32>>)> {
    prop::collection::vec((coordinate(), coordinate(), coordinate()), 3..40).prop_flat_map(|xyz| {
        let n = xyz.len() as u32;
        let vertices: Vec<Vec3> = xyz
            .into_iter()
            .map(|(x, y, z)| Vec3::new(x, y, z))
            .collect();
        let polygons = prop::collection::vec(prop::collection::vec(0..n, 3..7), 1..30);
        (Just(vertices), polygons)
    })
}

fn fan(polygons: &[Vec<u32>]) -> Vec<[u32; 3]> {
    polygons
        .iter()
        .flat_map(|p| p[1..].windows(2).map(move |w| [p[0], w[0], w[1]]))
        .collect()
}

fn runner(seed: u8) -> TestRunner {
    let config = Config {
        cases: 256,
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new_with_rng(
        config,
        TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]),
    )
}

#[test]
fn obj_round_trip() {
    runner(1)
        .run(&mesh(), |(vertices, polygons)| {
            let mut text = String::new();
            for v in &vertices {
                text += &format!("v {} {} {}\n", v.x, v.y, v.z);
            }
            // Mix absolute, relative and slash forms: all name the same vertex.
            let n = vertices.len() as i64;
            for (k, polygon) in polygons.iter().enumerate() {
                text += "f";
                for &i in polygon {
                    text += &match k % 3 {
                        0 => format!(" {}", i + 1),
                        1 => format!(" {}", i64::from(i) - n),
                        _ => format!(" {}/1/{}", i + 1, i + 1),
                    };
                }
                text += "\n";
            }
            let model = raypick_io::obj::parse(text.as_bytes(), &Default::default()).unwrap();
            prop_assert_eq!(&model.meshes[0].vertices, &vertices);
            prop_assert_eq!(&model.meshes[0].triangles, &fan(&polygons));
            Ok(())
        })
        .unwrap();
}

#[test]
fn ply_ascii_and_binary_round_trip() {
    runner(2)
        .run(&(mesh(), any::<bool>()), |((vertices, polygons), big_endian)| {
            let header = |format: &str| {
                format!(
                    "ply\nformat {format} 1.0\nelement vertex {}\nproperty float x\nproperty float y\nproperty float z\nelement face {}\nproperty list uchar int vertex_indices\nend_header\n",
                    vertices.len(),
                    polygons.len()
                )
            };
            let mut ascii = header("ascii");
            for v in &vertices {
                ascii += &format!("{} {} {}\n", v.x, v.y, v.z);
            }
            for polygon in &polygons {
                ascii += &polygon.len().to_string();
                for i in polygon {
                    ascii += &format!(" {i}");
                }
                ascii += "\n";
            }
            let encoding = if big_endian { "binary_big_endian" } else { "binary_little_endian" };
            let mut binary = header(encoding).into_bytes();
            let mut put = |bytes_le: [u8; 4]| {
                let mut b = bytes_le;
                if big_endian {
                    b.reverse();
                }
                binary.extend_from_slice(&b);
            };
            for v in &vertices {
                for c in v.to_array() {
                    put(c.to_le_bytes());
                }
            }
            let mut binary_faces = Vec::new();
            for polygon in &polygons {
                binary_faces.push(polygon.len() as u8);
                for &i in polygon {
                    let mut b = (i as i32).to_le_bytes();
                    if big_endian {
                        b.reverse();
                    }
                    binary_faces.extend_from_slice(&b);
                }
            }
            binary.extend_from_slice(&binary_faces);
            for bytes in [ascii.into_bytes(), binary] {
                let model = raypick_io::ply::parse(&bytes, &Default::default()).unwrap();
                prop_assert_eq!(&model.meshes[0].vertices, &vertices);
                prop_assert_eq!(&model.meshes[0].triangles, &fan(&polygons));
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn stl_ascii_and_binary_round_trip() {
    runner(3)
        .run(&mesh(), |(vertices, polygons)| {
            let triangles = fan(&polygons);
            let corners = |t: &[u32; 3]| t.map(|i| vertices[i as usize]);
            let mut ascii = String::from("solid round trip\n");
            let mut binary = vec![b' '; 80];
            binary.extend_from_slice(&(triangles.len() as u32).to_le_bytes());
            for t in &triangles {
                ascii += " facet normal 0 0 0\n  outer loop\n";
                binary.extend_from_slice(&[0; 12]);
                for p in corners(t) {
                    ascii += &format!("   vertex {} {} {}\n", p.x, p.y, p.z);
                    for c in p.to_array() {
                        binary.extend_from_slice(&c.to_le_bytes());
                    }
                }
                ascii += "  endloop\n endfacet\n";
                binary.extend_from_slice(&[0; 2]);
            }
            ascii += "endsolid round trip\n";
            let options = raypick_io::stl::StlOptions {
                weld_vertices: false,
            };
            for bytes in [ascii.into_bytes(), binary] {
                let model = raypick_io::stl::parse(&bytes, &options).unwrap();
                let mesh = &model.meshes[0];
                prop_assert_eq!(mesh.triangles.len(), triangles.len());
                for (got, want) in mesh.triangles.iter().zip(&triangles) {
                    prop_assert_eq!(got.map(|i| mesh.vertices[i as usize]), corners(want));
                }
            }
            Ok(())
        })
        .unwrap();
}
