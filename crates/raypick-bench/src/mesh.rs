//! The benchmark's mesh: a vertex list and an index list, read from a `v`/`f` OBJ.
//!
//! A stop-gap reader until the raypick-io loader lands: it understands `v x y z` and `f` lines with
//! `i`, `i/t`, `i//n` or `i/t/n` corners (1-based, or negative = relative to the end), fan-triangulates
//! polygons (corner 0 with each consecutive pair, the same recipe as `shared/tools/make_rays.py`, so
//! triangle `i` is the same triangle in both), and ignores every other statement.

use std::path::Path;

use anyhow::{bail, Context, Result};
use glam::Vec3;

/// An indexed triangle mesh: triangle `i` is `indices[i]`, in file order after fan triangulation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mesh {
    /// Vertex positions.
    pub vertices: Vec<Vec3>,
    /// Vertex indices of each triangle (`v0, v1, v2`, counter-clockwise seen from the front).
    pub indices: Vec<[u32; 3]>,
}

impl Mesh {
    /// The three corners of triangle `i`.
    #[inline]
    pub fn triangle(&self, i: usize) -> [Vec3; 3] {
        let [a, b, c] = self.indices[i];
        [
            self.vertices[a as usize],
            self.vertices[b as usize],
            self.vertices[c as usize],
        ]
    }

    /// Number of triangles.
    pub fn num_triangles(&self) -> usize {
        self.indices.len()
    }

    /// The bounding box of the vertices as `(min, max)` (both `Vec3::ZERO` for an empty mesh).
    pub fn bounds(&self) -> (Vec3, Vec3) {
        if self.vertices.is_empty() {
            return (Vec3::ZERO, Vec3::ZERO);
        }
        self.vertices
            .iter()
            .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), &p| {
                (lo.min(p), hi.max(p))
            })
    }
}

/// Reads an OBJ file (see the module docs for what is understood).
pub fn load_obj(path: &Path) -> Result<Mesh> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    parse_obj(&text).with_context(|| format!("parsing {}", path.display()))
}

/// Parses OBJ text (see the module docs for what is understood).
///
/// Fails on a malformed `v` or `f` line, an index of 0, or an index outside the vertices declared so
/// far, naming the 1-based line.
pub fn parse_obj(text: &str) -> Result<Mesh> {
    let mut mesh = Mesh::default();
    let mut corners: Vec<u32> = Vec::with_capacity(8);
    for (line_no, line) in text.lines().enumerate() {
        let line_no = line_no + 1;
        let mut tokens = line.split_whitespace();
        match tokens.next() {
            Some("v") => {
                let mut xyz = [0.0f32; 3];
                for c in &mut xyz {
                    let tok = tokens
                        .next()
                        .with_context(|| format!("line {line_no}: `v` needs 3 coordinates"))?;
                    *c = tok
                        .parse()
                        .with_context(|| format!("line {line_no}: bad coordinate `{tok}`"))?;
                }
                mesh.vertices.push(Vec3::from_array(xyz));
            }
            Some("f") => {
                corners.clear();
                for tok in tokens {
                    let first = tok.split('/').next().unwrap_or("");
                    let idx: i64 = first
                        .parse()
                        .with_context(|| format!("line {line_no}: bad vertex index `{tok}`"))?;
                    let n = mesh.vertices.len() as i64;
                    let resolved = match idx {
                        0 => bail!("line {line_no}: vertex index 0 (OBJ indices start at 1)"),
                        i if i > 0 => i - 1,
                        i => n + i,
                    };
                    if !(0..n).contains(&resolved) {
                        bail!("line {line_no}: vertex index {idx} outside the {n} vertices so far");
                    }
                    corners.push(resolved as u32);
                }
                if corners.len() < 3 {
                    bail!("line {line_no}: a face needs at least 3 corners");
                }
                for k in 1..corners.len() - 1 {
                    mesh.indices.push([corners[0], corners[k], corners[k + 1]]);
                }
            }
            _ => {}
        }
    }
    Ok(mesh)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fan_triangulates_polygons_and_resolves_negative_indices() {
        let text = "# a quad and a triangle\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\n\
                    f 1/1 2/1 3/1 4/1\nf -4//1 -2//1 -1//1\ng ignored\n";
        let mesh = parse_obj(text).unwrap();
        assert_eq!(mesh.vertices.len(), 4);
        assert_eq!(mesh.indices, vec![[0, 1, 2], [0, 2, 3], [0, 2, 3]]);
        assert_eq!(mesh.bounds(), (Vec3::ZERO, Vec3::new(1.0, 1.0, 0.0)));
        assert_eq!(mesh.triangle(0)[2], Vec3::new(1.0, 1.0, 0.0));
    }

    #[test]
    fn rejects_bad_indices_with_the_line_number() {
        for (text, needle) in [
            ("v 0 0 0\nf 1 2 3\n", "line 2"),
            ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", "index 0"),
            ("v 0 0 0\nv 1 0 0\nf 1 2\n", "at least 3"),
            ("v 0 zero 0\n", "bad coordinate"),
        ] {
            let err = format!("{:#}", parse_obj(text).unwrap_err());
            assert!(err.contains(needle), "{err:?} lacks {needle:?}");
        }
    }

    #[test]
    fn reads_the_bunny_with_the_documented_counts() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/data/obj/stanford-bunny.obj"
        );
        let mesh = load_obj(Path::new(path)).unwrap();
        assert_eq!(mesh.vertices.len(), 35_947);
        assert_eq!(mesh.num_triangles(), 69_451);
    }
}
