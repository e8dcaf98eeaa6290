//! STL, binary and ASCII. Both are read here, a facet at a time.
//!
//! # Binary or ASCII?
//! Decided from the content and the file's size, never from the extension or the first bytes
//! alone: a file whose size is exactly `84 + 50·n` (with `n` the little-endian facet count at byte
//! 80) is binary, even when its 80-byte header starts with `solid` (CAD exporters such as
//! SolidWorks write `solid <part>` there, e.g. `idler_riser.STL`). Otherwise a file whose first
//! word is `solid` is ASCII — unless binary data follows the header (a NUL or control byte in the
//! first `84 + 50` bytes, which no ASCII STL has): then it is a binary STL of the wrong size, and the
//! error says so and gives the size `84 + 50·n` its facet count calls for. Anything else is a binary
//! file of the wrong size too (truncated, or with trailing bytes).
//!
//! # Why not `stl_io`
//! `stl_io` 0.11 picks ASCII whenever the first line (read as UTF-8) starts with `solid `, so it
//! rejects a binary file whose header is such a text line (`idler_riser.STL` escapes only because
//! its bytes are not UTF-8 before the first newline; see `tests/crate_traps.rs`); its ASCII reader
//! stops at the first `endsolid` (a second `solid` block is lost silently), requires a name after
//! `solid`, and its errors carry no line numbers. Its binary reader needs `Seek` over the whole
//! file. A binary facet is twelve little-endian `f32` and a `u16`, so both forms are read here.
//!
//! # Result
//! Each `solid … endsolid` block of an ASCII file is one mesh named by the text after `solid`; a
//! binary file is one mesh named by its header up to the first NUL, trimmed. Triangle `i` is facet
//! `i` of its block. Facet normals are ignored (the geometric normal comes from the winding). With
//! [`StlOptions::weld_vertices`], bitwise-equal positions share one vertex. A binary header's facet
//! count is checked against [`crate::Limits::max_triangles`] before the first facet is read.

use std::collections::HashMap;
use std::io::{BufRead, Cursor, Read};

use glam::Vec3;

use crate::error::{shown, Err, Format, LoadError, Location, Source};
use crate::input::{read_up_to, Lines};
use crate::limits::Limits;
use crate::model::{MeshData, Model};

/// How to read an STL file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StlOptions {
    /// `true` (default): positions that are bitwise equal become one vertex (STL stores three
    /// positions per facet; welding makes the mesh about 6× smaller). `false`: three vertices per
    /// facet, in facet order, so vertex `3i + k` is corner `k` of triangle `i`.
    pub weld_vertices: bool,
}

impl Default for StlOptions {
    fn default() -> Self {
        Self {
            weld_vertices: true,
        }
    }
}

const E: Err = Err {
    format: Format::Stl,
};

/// Size of the binary header (80 bytes of free text, then the u32 triangle count).
const BINARY_HEADER: usize = 84;
/// Size of one binary facet: normal and 3 vertices as 12 f32, then a u16 attribute.
const BINARY_FACET: usize = 50;
/// The bytes [`detect`] looks at: the binary header and the first facet.
const PROBE: usize = BINARY_HEADER + BINARY_FACET;

/// What the content of an STL file says it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StlKind {
    /// Binary, with this many facets, and the size agrees.
    Binary(u32),
    /// Text starting with `solid`.
    Ascii,
}

/// Decides binary or ASCII from the content (see the module docs), or says why it is neither.
pub fn detect(bytes: &[u8]) -> Result<StlKind, LoadError> {
    detect_head(&bytes[..bytes.len().min(PROBE)], bytes.len() as u64)
}

/// The size of a binary STL of `count` facets: `84 + 50·count`.
fn binary_size(count: u32) -> u64 {
    BINARY_HEADER as u64 + BINARY_FACET as u64 * u64::from(count)
}

/// Whether `head` holds a byte no ASCII STL has: NUL, or a control character other than white
/// space. Binary facets (coordinates, a zero normal) practically always do.
fn looks_binary(head: &[u8]) -> bool {
    head.iter()
        .any(|&b| b == 0 || b == 0x7f || (b < 0x20 && !b"\t\n\x0b\x0c\r".contains(&b)))
}

/// [`detect`] from the first [`PROBE`] bytes of a file of `len` bytes.
fn detect_head(head: &[u8], len: u64) -> Result<StlKind, LoadError> {
    if len == head.len() as u64 && head.iter().all(u8::is_ascii_whitespace) {
        return Err(LoadError::Empty {
            source_name: Source::default(),
        });
    }
    let declared = head
        .get(80..84)
        .map(|count| u32::from_le_bytes([count[0], count[1], count[2], count[3]]));
    if let Some(count) = declared {
        if binary_size(count) == len {
            return Ok(StlKind::Binary(count));
        }
    }
    let solid = head.trim_ascii_start().starts_with(b"solid");
    if solid && !looks_binary(head) {
        return Ok(StlKind::Ascii);
    }
    let said = if solid {
        "the header starts with `solid`, but binary data follows it, so this is a binary STL: "
    } else {
        ""
    };
    match declared {
        None => Err(E.truncated(
            Location::Byte(len),
            format!("{said}a binary STL header is {BINARY_HEADER} bytes, the file has {len}"),
        )),
        Some(count) => {
            let expected = binary_size(count);
            if len < expected {
                Err(E.truncated(
                    Location::Byte(len),
                    format!(
                        "{said}{count} facets need 84 + 50·{count} = {expected} bytes, the file has {len}"
                    ),
                ))
            } else {
                Err(E.malformed(
                    Location::Byte(expected),
                    format!(
                        "{said}{} bytes after the {count} facets the header announces (84 + 50·{count} = {expected} bytes)",
                        len - expected
                    ),
                ))
            }
        }
    }
}

/// Parses an STL file (binary or ASCII, detected from the content) into a [`Model`] with one mesh
/// per `solid` block and no instances.
///
/// ```
/// let text = b"solid tri\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid tri\n";
/// let model = raypick_io::stl::parse(text, &Default::default()).unwrap();
/// assert_eq!(model.meshes[0].name, "tri");
/// assert_eq!(model.meshes[0].triangles.len(), 1);
/// ```
pub fn parse(bytes: &[u8], options: &StlOptions) -> Result<Model, LoadError> {
    let limits = Limits::default();
    limits.check_bytes(bytes.len() as u64, Location::File)?;
    read(bytes, bytes.len() as u64, options, &limits)
}

/// [`parse`] from a reader over a file of `len` bytes, a facet (or a line) at a time.
pub(crate) fn read(
    mut reader: impl BufRead,
    len: u64,
    options: &StlOptions,
    limits: &Limits,
) -> Result<Model, LoadError> {
    let head = read_up_to(&mut reader, PROBE, &E)?;
    let meshes = match detect_head(&head, len)? {
        StlKind::Binary(count) => {
            let triangles = limits.triangles(Format::Stl);
            triangles.check_announced(u64::from(count), Location::Byte(80))?;
            vec![read_binary(
                Cursor::new(&head).chain(reader),
                count,
                options,
            )?]
        }
        StlKind::Ascii => read_ascii(Cursor::new(&head).chain(reader), options, limits)?,
    };
    if meshes.iter().all(|mesh| mesh.triangles.is_empty()) {
        return Err(E.no_triangles());
    }
    Ok(Model {
        meshes,
        instances: Vec::new(),
        notes: Vec::new(),
        references: Vec::new(),
        ..Model::default()
    })
}

/// Builds a mesh from facets one at a time, welding if asked.
struct MeshSink {
    mesh: MeshData,
    weld: Option<HashMap<[u32; 3], u32>>,
}

impl MeshSink {
    fn new(name: String, options: &StlOptions) -> Self {
        Self {
            mesh: MeshData {
                name,
                vertices: Vec::new(),
                triangles: Vec::new(),
            },
            weld: options.weld_vertices.then(HashMap::new),
        }
    }

    fn vertex(&mut self, p: Vec3) -> u32 {
        let next = self.mesh.vertices.len() as u32;
        let index = match &mut self.weld {
            // +0.0 and -0.0 are the same point: normalise the sign of zero before hashing bits.
            Some(map) => *map
                .entry((p + Vec3::ZERO).to_array().map(f32::to_bits))
                .or_insert(next),
            None => next,
        };
        if index == next {
            self.mesh.vertices.push(p);
        }
        index
    }

    fn facet(&mut self, corners: [Vec3; 3]) {
        let triangle = corners.map(|p| self.vertex(p));
        self.mesh.triangles.push(triangle);
    }
}

/// The facets of a binary file whose size agrees with its `count` (checked by [`detect_head`]).
fn read_binary(
    mut reader: impl Read,
    count: u32,
    options: &StlOptions,
) -> Result<MeshData, LoadError> {
    let mut header = [0u8; BINARY_HEADER];
    reader
        .read_exact(&mut header)
        .map_err(|error| E.io(error))?;
    let name_end = header[..80].iter().position(|&b| b == 0).unwrap_or(80);
    let name = String::from_utf8_lossy(&header[..name_end])
        .trim()
        .to_owned();
    let mut sink = MeshSink::new(name, options);
    let mut facet = [0u8; BINARY_FACET];
    for i in 0..count as usize {
        let offset = (BINARY_HEADER + BINARY_FACET * i) as u64;
        // The size was checked against the count, so a short read means the file shrank while
        // it was read.
        reader
            .read_exact(&mut facet)
            .map_err(|error| E.truncated(Location::Byte(offset), format!("facet {i}: {error}")))?;
        let mut corners = [Vec3::ZERO; 3];
        for (k, corner) in corners.iter_mut().enumerate() {
            let mut p = [0.0f32; 3];
            for (axis, value) in p.iter_mut().enumerate() {
                // Bytes 0..12 are the normal; corner k's axis follows.
                let at = 12 + 12 * k + 4 * axis;
                *value =
                    f32::from_le_bytes([facet[at], facet[at + 1], facet[at + 2], facet[at + 3]]);
                if !value.is_finite() {
                    return Err(E.non_finite(Location::Byte(offset + at as u64), f64::from(*value)));
                }
            }
            *corner = Vec3::from_array(p);
        }
        sink.facet(corners);
    }
    Ok(sink.mesh)
}

/// The ASCII grammar, one statement per line:
/// `solid [name]` { `facet normal x y z` `outer loop` 3×`vertex x y z` `endloop` `endfacet` }
/// `endsolid [name]`, repeated for several solids. Blank lines are skipped, CRLF is accepted.
fn read_ascii(
    reader: impl BufRead,
    options: &StlOptions,
    limits: &Limits,
) -> Result<Vec<MeshData>, LoadError> {
    #[derive(PartialEq)]
    enum State {
        /// Between solids: expect `solid` or the end of the file.
        Outside,
        /// Inside a solid: expect `facet` or `endsolid`.
        Solid,
        /// After `facet`: expect `outer loop`.
        Facet,
        /// Inside `outer loop` with this many vertices read.
        Loop(usize),
        /// After 3 vertices: expect `endloop`.
        EndLoop,
        /// After `endloop`: expect `endfacet`.
        EndFacet,
    }
    let mut meshes = Vec::new();
    let mut state = State::Outside;
    let mut sink: Option<MeshSink> = None;
    let mut corners = [Vec3::ZERO; 3];
    let mut last_line = 0;
    let mut triangles = limits.triangles(Format::Stl);
    let mut lines = Lines::new(reader, E, 0);
    while let Some((line_number, line)) = lines.next_line()? {
        let location = || Location::Line(line_number);
        let mut tokens = line
            .split(|b| b.is_ascii_whitespace())
            .filter(|token| !token.is_empty());
        let Some(keyword) = tokens.next() else {
            continue;
        };
        last_line = line_number;
        let expected = |what: &str| {
            E.malformed(
                location(),
                format!("expected {what}, found `{}`", shown(keyword)),
            )
        };
        state = match state {
            State::Outside => {
                if keyword != b"solid" {
                    return Err(expected("`solid`"));
                }
                let name = line.trim_ascii()[b"solid".len()..].trim_ascii();
                sink = Some(MeshSink::new(
                    String::from_utf8_lossy(name).into_owned(),
                    options,
                ));
                State::Solid
            }
            State::Solid => match keyword {
                b"facet" => State::Facet,
                b"endsolid" => {
                    meshes.extend(sink.take().map(|sink| sink.mesh));
                    State::Outside
                }
                _ => return Err(expected("`facet` or `endsolid`")),
            },
            State::Facet => {
                if keyword != b"outer" || tokens.next() != Some(b"loop") {
                    return Err(expected("`outer loop`"));
                }
                State::Loop(0)
            }
            State::Loop(k) => {
                if keyword != b"vertex" {
                    return Err(expected("`vertex`"));
                }
                let mut xyz = [0.0f32; 3];
                for value in &mut xyz {
                    let token = tokens
                        .next()
                        .ok_or_else(|| E.malformed(location(), "`vertex` needs 3 coordinates"))?;
                    *value = std::str::from_utf8(token)
                        .ok()
                        .and_then(|text| text.parse().ok())
                        .ok_or_else(|| {
                            E.malformed(location(), format!("`{}` is not a number", shown(token)))
                        })?;
                    if !value.is_finite() {
                        return Err(E.non_finite(location(), f64::from(*value)));
                    }
                }
                corners[k] = Vec3::from_array(xyz);
                if k == 2 {
                    State::EndLoop
                } else {
                    State::Loop(k + 1)
                }
            }
            State::EndLoop => {
                if keyword != b"endloop" {
                    return Err(expected("`endloop` after 3 vertices"));
                }
                State::EndFacet
            }
            State::EndFacet => {
                if keyword != b"endfacet" {
                    return Err(expected("`endfacet`"));
                }
                triangles.add(1, location)?;
                if let Some(sink) = &mut sink {
                    sink.facet(corners);
                }
                State::Solid
            }
        };
    }
    if state != State::Outside {
        return Err(E.truncated(
            Location::Line(last_line + 1),
            "the file ends inside a `solid` block",
        ));
    }
    Ok(meshes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRI: &str = "solid a\n facet normal 0 0 1\n  outer loop\n   vertex 0 0 0\n   vertex 1 0 0\n   vertex 0 1 0\n  endloop\n endfacet\nendsolid a\n";

    fn binary(header: &[u8], facets: &[[Vec3; 3]]) -> Vec<u8> {
        let mut bytes = vec![0u8; 80];
        bytes[..header.len()].copy_from_slice(header);
        bytes.extend_from_slice(&(facets.len() as u32).to_le_bytes());
        for facet in facets {
            bytes.extend_from_slice(&[0u8; 12]);
            for p in facet {
                for c in p.to_array() {
                    bytes.extend_from_slice(&c.to_le_bytes());
                }
            }
            bytes.extend_from_slice(&[0u8; 2]);
        }
        bytes
    }

    #[test]
    fn ascii_several_solids_crlf() {
        let text = format!("{TRI}{}", TRI.replace("solid a", "solid b")).replace('\n', "\r\n");
        let model = parse(text.as_bytes(), &StlOptions::default()).unwrap();
        let names: Vec<_> = model.meshes.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(model.meshes[1].vertices[1], Vec3::X);
    }

    #[test]
    fn an_empty_solid_next_to_a_full_one_still_builds() {
        let text = format!("solid empty\nendsolid empty\n{TRI}");
        let model = parse(text.as_bytes(), &StlOptions::default()).unwrap();
        assert_eq!(model.meshes.len(), 2);
        let loaded = model.into_loaded(Format::Stl).unwrap();
        assert_eq!(loaded.geometry_names, ["empty", "a"]);
    }

    #[test]
    fn binary_with_solid_header_is_binary() {
        let facets = [
            [Vec3::ZERO, Vec3::X, Vec3::Y],
            [Vec3::X, Vec3::Y, Vec3::ONE],
        ];
        let bytes = binary(b"solid part", &facets);
        assert_eq!(detect(&bytes).unwrap(), StlKind::Binary(2));
        let model = parse(&bytes, &StlOptions::default()).unwrap();
        assert_eq!(model.meshes[0].name, "solid part");
        assert_eq!(model.meshes[0].vertices.len(), 4, "welded");
        assert_eq!(model.meshes[0].triangles, vec![[0, 1, 2], [1, 2, 3]]);
        let soup = parse(
            &bytes,
            &StlOptions {
                weld_vertices: false,
            },
        )
        .unwrap();
        assert_eq!(soup.meshes[0].triangles, vec![[0, 1, 2], [3, 4, 5]]);
    }

    #[test]
    fn bad_input_is_a_located_error() {
        let facets = [[Vec3::ZERO, Vec3::X, Vec3::Y]];
        let good = binary(b"x", &facets);
        let error = parse(&good[..good.len() - 1], &StlOptions::default()).unwrap_err();
        assert!(matches!(error, LoadError::Truncated { .. }), "{error}");
        let mut nan = good.clone();
        nan[84 + 12 + 12 + 4..84 + 12 + 12 + 8].copy_from_slice(&f32::NAN.to_le_bytes());
        let error = parse(&nan, &StlOptions::default()).unwrap_err();
        assert_eq!(error.location(), Some(&Location::Byte(84 + 28)), "{error}");
        let cases: &[(&str, usize)] = &[
            (&TRI.replace("   vertex 0 1 0\n", ""), 6),
            (&TRI.replace("vertex 1 0 0", "vertex 1 0"), 5),
            (&TRI.replace("vertex 1 0 0", "vertex 1 0 inf"), 5),
            (&TRI.replace("outer loop", "outer"), 3),
            (&TRI.replace("endsolid a\n", ""), 9),
            (&TRI.replace("endfacet", "endfacit"), 8),
        ];
        for (text, line) in cases {
            let error = parse(text.as_bytes(), &StlOptions::default()).expect_err(text);
            assert_eq!(
                error.location(),
                Some(&Location::Line(*line)),
                "{text}: {error}"
            );
        }
        assert!(matches!(
            parse(b"", &StlOptions::default()),
            Err(LoadError::Empty { .. })
        ));
        assert!(matches!(
            parse(b"solid empty\nendsolid empty\n", &StlOptions::default()),
            Err(LoadError::NoTriangles { .. })
        ));
    }
}
