//! Meshes made in code for the built-in demo scene: no file needed.
//!
//! Every generator returns shared vertices and counter-clockwise (outward-facing) triangles, so the
//! meshes are closed where the shape is closed.

use std::collections::HashMap;
use std::f32::consts::TAU;

use glam::Vec3;

/// Vertices and triangles of a mesh made in code.
pub struct MeshData {
    /// Vertex positions.
    pub vertices: Vec<Vec3>,
    /// Counter-clockwise triangles (outward normals).
    pub triangles: Vec<[u32; 3]>,
}

/// A unit icosphere (radius 1, centred at the origin): an icosahedron subdivided `levels` times,
/// with vertices pushed onto the sphere. `20 · 4^levels` triangles.
pub fn icosphere(levels: u32) -> MeshData {
    let t = (1.0 + 5f32.sqrt()) / 2.0;
    let mut vertices: Vec<Vec3> = [
        (-1.0, t, 0.0),
        (1.0, t, 0.0),
        (-1.0, -t, 0.0),
        (1.0, -t, 0.0),
        (0.0, -1.0, t),
        (0.0, 1.0, t),
        (0.0, -1.0, -t),
        (0.0, 1.0, -t),
        (t, 0.0, -1.0),
        (t, 0.0, 1.0),
        (-t, 0.0, -1.0),
        (-t, 0.0, 1.0),
    ]
    .iter()
    .map(|&(x, y, z)| Vec3::new(x, y, z).normalize())
    .collect();
    let mut triangles: Vec<[u32; 3]> = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    for _ in 0..levels {
        let mut midpoints: HashMap<(u32, u32), u32> = HashMap::new();
        let mut mid = |a: u32, b: u32, vertices: &mut Vec<Vec3>| -> u32 {
            let key = (a.min(b), a.max(b));
            *midpoints.entry(key).or_insert_with(|| {
                vertices.push(((vertices[a as usize] + vertices[b as usize]) * 0.5).normalize());
                (vertices.len() - 1) as u32
            })
        };
        let mut next = Vec::with_capacity(triangles.len() * 4);
        for [a, b, c] in triangles {
            let ab = mid(a, b, &mut vertices);
            let bc = mid(b, c, &mut vertices);
            let ca = mid(c, a, &mut vertices);
            next.extend([[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]);
        }
        triangles = next;
    }
    MeshData {
        vertices,
        triangles,
    }
}

/// A closed tube of radius `tube` around the curve `center(s)`, `s ∈ [0, 1)` periodic, with `segments`
/// rings of `sides` vertices. The frame follows the curve by parallel transport.
fn tube(center: impl Fn(f32) -> Vec3, tube: f32, segments: u32, sides: u32) -> MeshData {
    let point = |i: u32| center(i as f32 / segments as f32);
    let tangent =
        |i: u32| (point((i + 1) % segments) - point((i + segments - 1) % segments)).normalize();
    // Parallel transport of a normal along the curve, then the closing twist spread evenly.
    let t0 = tangent(0);
    let mut n = t0.any_orthonormal_vector();
    let mut normals = Vec::with_capacity(segments as usize);
    for i in 0..segments {
        let t = tangent(i);
        n = (n - t * n.dot(t)).normalize();
        normals.push(n);
    }
    let n_end = (n - t0 * n.dot(t0)).normalize();
    let twist = normals[0].cross(n_end).dot(t0).atan2(normals[0].dot(n_end));
    let mut vertices = Vec::with_capacity((segments * sides) as usize);
    for i in 0..segments {
        let t = tangent(i);
        let correction = -twist * i as f32 / segments as f32;
        let n = glam::Quat::from_axis_angle(t, correction) * normals[i as usize];
        let b = t.cross(n);
        for j in 0..sides {
            let a = TAU * j as f32 / sides as f32;
            vertices.push(point(i) + tube * (n * a.cos() + b * a.sin()));
        }
    }
    let mut triangles = Vec::with_capacity((2 * segments * sides) as usize);
    for i in 0..segments {
        let i1 = (i + 1) % segments;
        for j in 0..sides {
            let j1 = (j + 1) % sides;
            let (a, b, c, d) = (
                i * sides + j,
                i1 * sides + j,
                i1 * sides + j1,
                i * sides + j1,
            );
            // (b - a) runs along the curve and (d - a) around the tube: their cross product
            // points inward, so a → c → b is the outward winding.
            triangles.push([a, c, b]);
            triangles.push([a, d, c]);
        }
    }
    MeshData {
        vertices,
        triangles,
    }
}

/// A torus around the y axis: ring radius `major`, tube radius `minor`.
pub fn torus(major: f32, minor: f32, segments: u32, sides: u32) -> MeshData {
    tube(
        |s| major * Vec3::new((TAU * s).cos(), 0.0, -(TAU * s).sin()),
        minor,
        segments,
        sides,
    )
}

/// A (p, q) torus knot tube.
pub fn torus_knot(
    p: u32,
    q: u32,
    scale: f32,
    tube_radius: f32,
    segments: u32,
    sides: u32,
) -> MeshData {
    tube(
        |s| {
            let phi = TAU * s;
            let r = 2.0 + (q as f32 * phi).cos();
            scale
                * Vec3::new(
                    r * (p as f32 * phi).cos(),
                    -(q as f32 * phi).sin(),
                    r * (p as f32 * phi).sin(),
                )
        },
        tube_radius,
        segments,
        sides,
    )
}

/// A flat grid in the plane y = 0, `size` wide, `cells × cells` quads, facing +y.
pub fn ground(size: f32, cells: u32) -> MeshData {
    let n = cells + 1;
    let mut vertices = Vec::with_capacity((n * n) as usize);
    for i in 0..n {
        for j in 0..n {
            let x = (j as f32 / cells as f32 - 0.5) * size;
            let z = (i as f32 / cells as f32 - 0.5) * size;
            vertices.push(Vec3::new(x, 0.0, z));
        }
    }
    let mut triangles = Vec::new();
    for i in 0..cells {
        for j in 0..cells {
            let a = i * n + j;
            let (b, c, d) = (a + 1, a + n + 1, a + n);
            // Seen from +y, a → d → c is counter-clockwise.
            triangles.push([a, d, c]);
            triangles.push([a, c, b]);
        }
    }
    MeshData {
        vertices,
        triangles,
    }
}

/// An axis-aligned box from `-half` to `half`.
pub fn cuboid(half: Vec3) -> MeshData {
    let vertices = (0..8)
        .map(|i| {
            Vec3::new(
                if i & 1 == 0 { -1.0 } else { 1.0 },
                if i & 2 == 0 { -1.0 } else { 1.0 },
                if i & 4 == 0 { -1.0 } else { 1.0 },
            ) * half
        })
        .collect();
    let quads = [
        [0, 4, 6, 2],
        [1, 3, 7, 5],
        [0, 1, 5, 4],
        [2, 6, 7, 3],
        [0, 2, 3, 1],
        [4, 5, 7, 6],
    ];
    let triangles = quads
        .iter()
        .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
        .collect();
    MeshData {
        vertices,
        triangles,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f32::consts::PI;

    /// Closed and outward: the signed volume (divergence theorem) is positive and matches the shape.
    fn signed_volume(m: &MeshData) -> f32 {
        m.triangles
            .iter()
            .map(|&[a, b, c]| {
                m.vertices[a as usize].dot(m.vertices[b as usize].cross(m.vertices[c as usize]))
                    / 6.0
            })
            .sum()
    }

    /// Every edge of a closed mesh is used exactly twice, once in each direction.
    fn is_closed(m: &MeshData) -> bool {
        let mut edges = HashMap::new();
        for &[a, b, c] in &m.triangles {
            for (x, y) in [(a, b), (b, c), (c, a)] {
                *edges.entry((x, y)).or_insert(0) += 1;
            }
        }
        edges
            .iter()
            .all(|(&(x, y), &n)| n == 1 && edges.get(&(y, x)) == Some(&1))
    }

    #[test]
    fn icosphere_is_closed_outward_and_near_the_unit_sphere_volume() {
        let m = icosphere(3);
        assert_eq!(m.triangles.len(), 20 * 64);
        assert!(is_closed(&m));
        let v = signed_volume(&m);
        assert!((v - 4.0 / 3.0 * PI).abs() < 0.05, "volume {v}");
    }

    #[test]
    fn torus_is_closed_with_the_pappus_volume() {
        let m = torus(2.0, 0.5, 96, 48);
        assert!(is_closed(&m));
        let expect = 2.0 * PI * PI * 2.0 * 0.25;
        let v = signed_volume(&m);
        assert!((v - expect).abs() / expect < 0.01, "volume {v} vs {expect}");
    }

    #[test]
    fn cuboid_and_knot_are_closed_and_outward() {
        let c = cuboid(Vec3::new(1.0, 2.0, 3.0));
        assert!(is_closed(&c));
        assert!((signed_volume(&c) - 48.0).abs() < 1e-4);
        let k = torus_knot(2, 3, 0.5, 0.2, 128, 12);
        assert!(is_closed(&k));
        assert!(signed_volume(&k) > 0.0);
    }

    #[test]
    fn ground_faces_up() {
        let g = ground(10.0, 4);
        for &[a, b, c] in &g.triangles {
            let n = (g.vertices[b as usize] - g.vertices[a as usize])
                .cross(g.vertices[c as usize] - g.vertices[a as usize]);
            assert!(n.y > 0.0);
        }
    }
}
