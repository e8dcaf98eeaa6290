//! Meshes made in code: icosphere, torus, torus knot, ground grid and box.
//!
//! Every generator returns a [`TriMesh`] with shared vertices and counter-clockwise (outward-facing)
//! triangles, so the closed shapes are watertight (each edge is used exactly twice, once in each
//! direction). They serve the demo scene, the tests (closed meshes for watertightness and crossing
//! parity) and users who need a quick test object.

use std::collections::HashMap;
use std::f32::consts::TAU;

use glam::{DVec3, Vec3};

use super::TriMesh;

/// An icosphere: an icosahedron subdivided `levels` times (`20 · 4^levels` triangles), its vertices
/// placed on the sphere of `radius` around `center`. Positions are computed in `f64` (unit vectors,
/// then `center + radius · unit`) and rounded to `f32` once, so a sphere far from the origin is as
/// round as one at the origin allows.
///
/// ```
/// use raypick::{glam::Vec3, scene::shapes::icosphere};
/// let m = icosphere(2, Vec3::new(1.0, 2.0, 3.0), 0.5);
/// assert_eq!(m.num_triangles(), 320);
/// ```
pub fn icosphere(levels: u32, center: Vec3, radius: f32) -> TriMesh {
    let g = (1.0 + 5f64.sqrt()) / 2.0;
    let mut unit: Vec<DVec3> = [
        (-1.0, g, 0.0),
        (1.0, g, 0.0),
        (-1.0, -g, 0.0),
        (1.0, -g, 0.0),
        (0.0, -1.0, g),
        (0.0, 1.0, g),
        (0.0, -1.0, -g),
        (0.0, 1.0, -g),
        (g, 0.0, -1.0),
        (g, 0.0, 1.0),
        (-g, 0.0, -1.0),
        (-g, 0.0, 1.0),
    ]
    .iter()
    .map(|&(x, y, z)| DVec3::new(x, y, z).normalize())
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
        let mut mid = |a: u32, b: u32, unit: &mut Vec<DVec3>| -> u32 {
            *midpoints.entry((a.min(b), a.max(b))).or_insert_with(|| {
                unit.push((unit[a as usize] + unit[b as usize]).normalize());
                (unit.len() - 1) as u32
            })
        };
        let mut next = Vec::with_capacity(triangles.len() * 4);
        for [a, b, c] in triangles {
            let ab = mid(a, b, &mut unit);
            let bc = mid(b, c, &mut unit);
            let ca = mid(c, a, &mut unit);
            next.extend([[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]);
        }
        triangles = next;
    }
    let (c, r) = (center.as_dvec3(), radius as f64);
    TriMesh::new(
        unit.iter().map(|u| (c + r * *u).as_vec3()).collect(),
        triangles,
    )
}

/// A closed tube of radius `tube` around the curve `center(s)`, `s ∈ [0, 1)` periodic, with `segments`
/// rings of `sides` vertices. The frame follows the curve by parallel transport.
fn tube(center: impl Fn(f32) -> Vec3, tube: f32, segments: u32, sides: u32) -> TriMesh {
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
    TriMesh::new(vertices, triangles)
}

/// A torus around the y axis: ring radius `major`, tube radius `minor`.
pub fn torus(major: f32, minor: f32, segments: u32, sides: u32) -> TriMesh {
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
) -> TriMesh {
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
pub fn ground(size: f32, cells: u32) -> TriMesh {
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
    TriMesh::new(vertices, triangles)
}

/// An axis-aligned box from `-half` to `half`.
pub fn cuboid(half: Vec3) -> TriMesh {
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
    TriMesh::new(vertices, triangles)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f32::consts::PI;

    /// Closed and outward: the signed volume (divergence theorem) is positive and matches the shape.
    fn signed_volume(m: &TriMesh) -> f32 {
        let v = m.vertices();
        m.indices()
            .iter()
            .map(|&[a, b, c]| v[a as usize].dot(v[b as usize].cross(v[c as usize])) / 6.0)
            .sum()
    }

    /// Every edge of a closed mesh is used exactly twice, once in each direction.
    fn is_closed(m: &TriMesh) -> bool {
        let mut edges = HashMap::new();
        for &[a, b, c] in m.indices() {
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
        let m = icosphere(3, Vec3::ZERO, 1.0);
        assert_eq!(m.num_triangles(), 20 * 64);
        assert!(is_closed(&m));
        let v = signed_volume(&m);
        assert!((v - 4.0 / 3.0 * PI).abs() < 0.05, "volume {v}");
    }

    #[test]
    fn a_far_icosphere_keeps_its_shape() {
        // Rounded once from f64: every vertex within half an ulp of the exact sphere point.
        let center = Vec3::new(148376.0, 1234.0, -223423.0);
        let m = icosphere(3, center, 250.0);
        let ulp = f32::EPSILON * 223423.0;
        for p in m.vertices() {
            let d = (p.as_dvec3() - center.as_dvec3()).length();
            assert!((d - 250.0).abs() <= ulp as f64, "{d}");
        }
        assert!(is_closed(&m));
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
        let v = g.vertices();
        for &[a, b, c] in g.indices() {
            let n = (v[b as usize] - v[a as usize]).cross(v[c as usize] - v[a as usize]);
            assert!(n.y > 0.0);
        }
    }
}
