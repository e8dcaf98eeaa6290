//! Wavefront OBJ: `v` positions and `f` polygons, split into one mesh per `o`/`g` group.
//!
//! # Why this is not `tobj`
//! The brief prefers well-kept crates; `tobj` 4 was read and falls short here, so this module is a
//! small hand parser of the two statements that carry geometry (`v`, `f`):
//! - its errors carry no line or byte offset (`LoadError::FaceParseError` and the like), and an
//!   out-of-range index is only found when the group is closed, far from the line that holds it;
//! - with `triangulate` it turns an `l` polyline of three or more points into triangles and a
//!   one- or two-index `f` into degenerate triangles, which would change triangle ids silently;
//! - it re-indexes every vertex through a hash map per group, which costs time on large files
//!   (conference.obj, 331k triangles) for nothing a ray caster needs.
//!
//! # Rules
//! - Every `o` or `g` statement starts a new mesh named by the rest of its line (a group that gets
//!   no faces before the next `o`/`g` is only renamed, so `o car` + `g body` yields one mesh
//!   `body`). Faces before any `o`/`g` go to a mesh named [`ObjOptions::default_group_name`].
//!   Groups with the same name appearing twice stay two meshes (their triangles keep file order).
//! - A polygon `f a b c d …` becomes the fan `(a b c) (a c d) …` in order, so the triangle ids of a
//!   single-group file are the order of its `f` lines after fan triangulation.
//! - Vertex references may be `v`, `v/vt`, `v//vn` or `v/vt/vn`; only `v` is used, the others must
//!   still be integers. Negative indices count back from the last `v` read so far (`-1` is the
//!   latest); positive ones are 1-based and checked against the final vertex count.
//! - `v x y z [w]`: a fourth value (rational weight) or colours `r g b [a]` after `x y z` are
//!   ignored; anything else after them is an error (a file with bare-CR line ends would otherwise
//!   read as one long line). Every coordinate must be finite.
//! - `l`, `p`, curves, materials, `vt`, `vn` and unknown statements are ignored; `#` starts a comment
//!   anywhere on a line. Line continuations (`\` at the end of a line) are not supported.
//! - The file is read line by line: a NUL byte or a line over 1 MiB (`MAX_LINE`; not
//!   text) is an error at that line, and so is the first triangle over
//!   [`crate::Limits::max_triangles`].
//! - Errors quote an index as the file writes it (1-based, or negative).

use std::io::BufRead;

use glam::Vec3;

use crate::error::{shown, Err, Format, LoadError, Location, Source};
use crate::input::Lines;
use crate::limits::Limits;
use crate::model::{MeshData, Model};

/// How to read an OBJ file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjOptions {
    /// `true` (default): each `o`/`g` group is its own mesh. `false`: the whole file is one mesh
    /// named [`Self::default_group_name`], `o`/`g` statements are ignored.
    pub split_groups: bool,
    /// The name of the mesh that holds faces before any `o`/`g` statement. Default `"default"`,
    /// the OBJ specification's name for the default group.
    pub default_group_name: String,
}

impl Default for ObjOptions {
    fn default() -> Self {
        Self {
            split_groups: true,
            default_group_name: "default".to_owned(),
        }
    }
}

const E: Err = Err {
    format: Format::Obj,
};

struct Group {
    name: String,
    /// Indices into the file-wide vertex array.
    triangles: Vec<[u32; 3]>,
}

/// Parses OBJ text (the bytes of a `.obj` file) into a [`Model`] with one mesh per group and no
/// instances.
///
/// ```
/// let text = b"v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\ng quad\nf 1 2 3 4\n";
/// let model = raypick_io::obj::parse(text, &Default::default()).unwrap();
/// assert_eq!(model.meshes[0].name, "quad");
/// assert_eq!(model.meshes[0].triangles, vec![[0, 1, 2], [0, 2, 3]]);
/// ```
pub fn parse(bytes: &[u8], options: &ObjOptions) -> Result<Model, LoadError> {
    let limits = Limits::default();
    limits.check_bytes(bytes.len() as u64, Location::File)?;
    read(bytes, options, &limits)
}

/// [`parse`] from a reader, line by line, within `limits`.
pub(crate) fn read(
    reader: impl BufRead,
    options: &ObjOptions,
    limits: &Limits,
) -> Result<Model, LoadError> {
    let mut lines = Lines::new(reader, E, 0);
    let mut triangles = limits.triangles(Format::Obj);
    let mut any_content = false;
    let mut positions: Vec<Vec3> = Vec::new();
    let mut groups: Vec<Group> = Vec::new();
    let mut current = Group {
        name: options.default_group_name.clone(),
        triangles: Vec::new(),
    };
    // The largest positive (1-based) index seen and its line, checked against the final count.
    let mut max_positive: Option<(u64, usize)> = None;
    let mut polygon: Vec<u32> = Vec::with_capacity(8);

    while let Some((line_number, raw_line)) = lines.next_line()? {
        any_content |= !raw_line.trim_ascii().is_empty();
        let line = match raw_line.iter().position(|&b| b == b'#') {
            Some(hash) => &raw_line[..hash],
            None => raw_line,
        };
        let mut tokens = line
            .split(|b| b.is_ascii_whitespace())
            .filter(|token| !token.is_empty());
        let Some(keyword) = tokens.next() else {
            continue;
        };
        match keyword {
            b"v" => {
                let mut xyz = [0.0f32; 3];
                for (axis, value) in xyz.iter_mut().enumerate() {
                    let token = tokens.next().ok_or_else(|| {
                        E.malformed(
                            Location::Line(line_number),
                            format!("`v` needs 3 coordinates, found {axis}"),
                        )
                    })?;
                    *value = parse_f32(token).ok_or_else(|| {
                        E.malformed(
                            Location::Line(line_number),
                            format!("`{}` is not a number", shown(token)),
                        )
                    })?;
                    if !value.is_finite() {
                        return Err(E.non_finite(Location::Line(line_number), f64::from(*value)));
                    }
                }
                // After x y z only a weight `w` or a colour `r g b [a]` may follow; anything else
                // (e.g. a second `v` on a line ended by a bare CR) would be dropped silently.
                let extra: Vec<&[u8]> = tokens.collect();
                if extra.len() > 4 || extra.iter().any(|token| parse_f32(token).is_none()) {
                    return Err(E.malformed(
                        Location::Line(line_number),
                        "`v` takes x y z and optionally w or r g b [a]; found more",
                    ));
                }
                positions.push(Vec3::from_array(xyz));
            }
            b"f" | b"fo" => {
                polygon.clear();
                for token in tokens {
                    let index =
                        parse_vertex_ref(token, positions.len(), line_number, &mut max_positive)?;
                    polygon.push(index);
                }
                if polygon.len() < 3 {
                    return Err(E.malformed(
                        Location::Line(line_number),
                        format!("a face needs at least 3 vertices, found {}", polygon.len()),
                    ));
                }
                triangles.add(polygon.len() as u64 - 2, || Location::Line(line_number))?;
                let first = polygon[0];
                for pair in polygon[1..].windows(2) {
                    current.triangles.push([first, pair[0], pair[1]]);
                }
            }
            b"o" | b"g" if options.split_groups => {
                // The keyword is the line's first token, so the name is what follows it.
                let name = line.trim_ascii()[keyword.len()..].trim_ascii();
                let name = if name.is_empty() {
                    options.default_group_name.clone()
                } else {
                    String::from_utf8_lossy(name).into_owned()
                };
                if current.triangles.is_empty() {
                    current.name = name;
                } else {
                    groups.push(std::mem::replace(
                        &mut current,
                        Group {
                            name,
                            triangles: Vec::new(),
                        },
                    ));
                }
            }
            _ => {}
        }
    }
    if !any_content {
        return Err(LoadError::Empty {
            source_name: Source::default(),
        });
    }
    if !current.triangles.is_empty() {
        groups.push(current);
    }
    if let Some((index, line_number)) = max_positive {
        if index > positions.len() as u64 {
            return Err(E.index(Location::Line(line_number), index as i64, positions.len()));
        }
    }
    if groups.is_empty() {
        return Err(E.no_triangles());
    }
    Ok(Model {
        meshes: split_vertices(positions, groups),
        instances: Vec::new(),
        notes: Vec::new(),
        references: Vec::new(),
        ..Model::default()
    })
}

/// Gives each group its own compact vertex array (in order of first use). A single group keeps the
/// file's vertex array as it is, so its indices are the file's.
fn split_vertices(positions: Vec<Vec3>, groups: Vec<Group>) -> Vec<MeshData> {
    if groups.len() == 1 {
        let group = groups.into_iter().next().expect("one group");
        return vec![MeshData {
            name: group.name,
            vertices: positions,
            triangles: group.triangles,
        }];
    }
    // `local[i]` is the group-local index of file vertex `i`, or u32::MAX when the current group
    // has not used it yet; only the entries a group touched are reset afterwards.
    let mut local = vec![u32::MAX; positions.len()];
    groups
        .into_iter()
        .map(|group| {
            let mut vertices = Vec::new();
            let mut used = Vec::new();
            let triangles = group
                .triangles
                .iter()
                .map(|triangle| {
                    triangle.map(|global| {
                        let slot = &mut local[global as usize];
                        if *slot == u32::MAX {
                            *slot = vertices.len() as u32;
                            vertices.push(positions[global as usize]);
                            used.push(global);
                        }
                        *slot
                    })
                })
                .collect();
            for global in used {
                local[global as usize] = u32::MAX;
            }
            MeshData {
                name: group.name,
                vertices,
                triangles,
            }
        })
        .collect()
}

/// Resolves one `v`, `v/vt`, `v//vn` or `v/vt/vn` reference to a 0-based vertex index. Positive
/// indices are range-checked at the end of the file (the largest is remembered with its line).
fn parse_vertex_ref(
    token: &[u8],
    vertices_so_far: usize,
    line_number: usize,
    max_positive: &mut Option<(u64, usize)>,
) -> Result<u32, LoadError> {
    let location = || Location::Line(line_number);
    let mut parts = token.split(|&b| b == b'/');
    let vertex = parts.next().unwrap_or_default();
    let mut count = 1;
    for part in parts {
        count += 1;
        if count > 3 || (!part.is_empty() && parse_i64(part).is_none()) {
            return Err(E.malformed(
                location(),
                format!(
                    "`{}` is not a vertex reference (v, v/vt, v//vn or v/vt/vn)",
                    shown(token)
                ),
            ));
        }
    }
    let Some(index) = parse_i64(vertex) else {
        return Err(E.malformed(
            location(),
            format!(
                "`{}` is not a vertex reference (v, v/vt, v//vn or v/vt/vn)",
                shown(token)
            ),
        ));
    };
    match index {
        0 => Err(E.malformed(location(), "vertex index 0 (OBJ indices start at 1)")),
        i if i < 0 => {
            let resolved = vertices_so_far as i64 + i;
            if resolved < 0 {
                Err(E.index(location(), i, vertices_so_far))
            } else {
                Ok(resolved as u32)
            }
        }
        i => {
            if i > i64::from(u32::MAX) {
                return Err(E.index(location(), i, vertices_so_far));
            }
            let i = i as u64;
            if max_positive.is_none_or(|(max, _)| i > max) {
                *max_positive = Some((i, line_number));
            }
            Ok((i - 1) as u32)
        }
    }
}

fn parse_f32(token: &[u8]) -> Option<f32> {
    std::str::from_utf8(token).ok()?.parse().ok()
}

fn parse_i64(token: &[u8]) -> Option<i64> {
    std::str::from_utf8(token).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<Model, LoadError> {
        parse(text.as_bytes(), &ObjOptions::default())
    }

    #[test]
    fn polygons_are_fans_in_order() {
        let model = parse_str(
            "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv -1 1 0\n\
             f 1 2 3\nf 1 2 3 4\nf 1 2 3 4 5\n",
        )
        .unwrap();
        assert_eq!(
            model.meshes[0].triangles,
            vec![
                [0, 1, 2],
                [0, 1, 2],
                [0, 2, 3],
                [0, 1, 2],
                [0, 2, 3],
                [0, 3, 4]
            ]
        );
    }

    #[test]
    fn relative_indices_and_slash_forms() {
        let model = parse_str("v 0 0 0\nv 1 0 0\nv 1 1 0\nvt 0 0\nvn 0 0 1\nf -3/1/1 -2//1 -1/1\n")
            .unwrap();
        assert_eq!(model.meshes[0].triangles, vec![[0, 1, 2]]);
        // Relative to the vertices read so far, not to the end of the file.
        let model =
            parse_str("v 0 0 0\nv 1 0 0\nv 1 1 0\nf -3 -2 -1\nv 5 5 5\nf -4 -3 -1\n").unwrap();
        assert_eq!(model.meshes[0].triangles, vec![[0, 1, 2], [0, 1, 3]]);
    }

    #[test]
    fn groups_split_and_keep_names() {
        let model = parse_str(
            "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3\no car\ng body\nf 2 3 4\ng  Wheels \nf 4 3 1\n",
        )
        .unwrap();
        let names: Vec<_> = model.meshes.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["default", "body", "Wheels"]);
        // Compact per-group vertices in order of first use, positions preserved.
        assert_eq!(
            model.meshes[1].vertices,
            vec![Vec3::X, Vec3::new(1.0, 1.0, 0.0), Vec3::Y]
        );
        assert_eq!(model.meshes[1].triangles, vec![[0, 1, 2]]);
        for mesh in &model.meshes {
            for t in &mesh.triangles {
                assert!(t.iter().all(|&i| (i as usize) < mesh.vertices.len()));
            }
        }
        let single = parse(
            b"v 0 0 0\nv 1 0 0\nv 1 1 0\ng a\nf 1 2 3\ng b\nf 1 2 3\n",
            &ObjOptions {
                split_groups: false,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(single.meshes.len(), 1);
        assert_eq!(single.meshes[0].triangles.len(), 2);
    }

    #[test]
    fn crlf_comments_and_ignored_statements() {
        let model = parse_str(
            "# hi\r\nmtllib x.mtl\r\nv 0 0 0 1\r\nv 1 0 0 # inline\r\nv 1 1 0 0.5 0.5 0.5\r\nusemtl m\r\ns off\r\nl 1 2 3\r\np 1\r\nf 1 2 3\r\n",
        )
        .unwrap();
        assert_eq!(model.meshes.len(), 1);
        assert_eq!(model.meshes[0].triangles, vec![[0, 1, 2]]);
    }

    #[test]
    fn bad_input_is_a_located_error() {
        let cases: &[(&str, usize)] = &[
            ("v 0 0 0\nv 1 0 0\nv 1 1 0\nf 1 2 4\n", 4),
            ("v 0 0 0\nv 1 0 0\nv 1 1 0\nf 1 2 3\nf 1 2 99\nv 0 0 0\n", 5),
            ("v 0 0 0\nv 1 0 0\nf -3 1 2\n", 3),
            ("v 0 0 0\nv 1 0 0\nv 1 1 0\nf 0 1 2\n", 4),
            ("v 0 0\n", 1),
            ("v 0 0 x\n", 1),
            ("v 0 0 nan\n", 1),
            ("v 0 0 1e39\n", 1),
            ("v 0 0 0\nv 1 0 0\nf 1 2\n", 3),
            ("v 0 0 0\nv 1 0 0\nv 1 1 0\nf 1/2/3/4 2 3\n", 4),
            ("v 0 0 0\nv 1 0 0\nv 1 1 0\nf 1/a 2 3\n", 4),
            ("v 0 0 0\nv 1 0 0\nv 1 1 0\nf 1 2 99999999999\n", 4),
            ("v 0 0 0\rv 1 0 0\rv 1 1 0\rf 1 2 3\r", 1),
        ];
        for (text, line) in cases {
            let error = parse_str(text).expect_err(text);
            assert_eq!(
                error.location(),
                Some(&Location::Line(*line)),
                "{text}: {error}"
            );
        }
        assert!(matches!(parse_str(" \n\t"), Err(LoadError::Empty { .. })));
        assert!(matches!(
            parse_str("v 0 0 0\nl 1 1\n"),
            Err(LoadError::NoTriangles { .. })
        ));
    }
}
