//! Stanford PLY, ASCII and binary (little and big endian): the `vertex` element's `x y z`, and
//! triangles from `face` lists and/or `tristrips`.
//!
//! `ply-rs` reads the header and decodes every element (all scalar and list types, both
//! endiannesses). This module drives it one element at a time, so every error can say which
//! element and where (line for ASCII, byte offset for binary), and adds what it lacks:
//! - the header's element counts are checked against the bytes that follow before reading, so a
//!   corrupt count cannot make `ply-rs` loop for billions of elements (an element with no
//!   properties reads no bytes at all);
//! - `ply-rs` keys elements and properties by name in a map, so a repeated name would silently
//!   drop a declaration and shift every later binary field: repeated names are an error here;
//! - `tristrips`, which `ply-rs` reads as plain lists, are turned into triangles (below).
//!
//! # Triangles
//! - `face` (property `vertex_indices` or `vertex_index`, a list of any integer types): a polygon
//!   of `n ≥ 3` vertices becomes the fan `(a b c) (a c d) …` in order; fewer than 3 is an error.
//! - `tristrips` (the same list property): the list holds strips separated by `-1`. A strip of `k`
//!   indices gives `k − 2` triangles; triangle `j` of a strip is `(s[j], s[j+1], s[j+2])` for even
//!   `j` and `(s[j+1], s[j], s[j+2])` for odd `j`, so all keep the strip's winding. Degenerate
//!   triangles (a repeated index, used by some writers to join strips) are kept, so triangle ids
//!   are positions in the strip sequence; they have zero area and are never hit by a watertight
//!   ray test. Strips shorter than 3 give nothing.
//! - Face triangles come first, then strip triangles, each in file order.
//!
//! Every index is checked against the `vertex` count and every coordinate must be finite.
//! Vertex properties `x y z` may be any scalar type (converted to `f32`).
//!
//! # Reading
//! The header (at most [`MAX_HEADER`] bytes) is read first, and the elements it declares are
//! checked against the bytes that follow before any is read: a binary element takes at least the
//! sum of its properties' sizes (a list at least its count), an ASCII one at least a byte, so a
//! header that promises more than the file holds is a truncation found right after the header.
//! The `face` count is checked against [`crate::Limits::max_triangles`] there too (each face makes
//! at least one triangle). Then the payload is read one element at a time.

use std::io::{BufRead, Cursor, Read};

use glam::Vec3;
use ply_rs::parser::Parser;
use ply_rs::ply::{ElementDef, Encoding, Property, PropertyAccess, PropertyType, ScalarType};

use crate::error::{shown, Err, Format, LoadError, Location, Source};
use crate::input::{Counting, Lines};
use crate::limits::Limits;
use crate::model::{MeshData, Model};

/// The longest header read: 1 MiB up to and including the `end_header` line.
pub const MAX_HEADER: usize = 1 << 20;

/// How to read a PLY file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlyOptions {
    /// The mesh's name; PLY files have none of their own (default: empty, and [`crate::load`] uses
    /// the file's stem).
    pub name: String,
}

const E: Err = Err {
    format: Format::Ply,
};

/// One decoded element, keeping only what a triangle mesh needs.
#[derive(Default)]
struct Element {
    xyz: [Option<f64>; 3],
    list: Option<Vec<i64>>,
}

fn scalar(property: &Property) -> Option<f64> {
    Some(match *property {
        Property::Char(v) => f64::from(v),
        Property::UChar(v) => f64::from(v),
        Property::Short(v) => f64::from(v),
        Property::UShort(v) => f64::from(v),
        Property::Int(v) => f64::from(v),
        Property::UInt(v) => f64::from(v),
        Property::Float(v) => f64::from(v),
        Property::Double(v) => v,
        _ => return None,
    })
}

fn list(property: Property) -> Option<Vec<i64>> {
    fn widen<T: Into<i64>>(values: Vec<T>) -> Vec<i64> {
        values.into_iter().map(Into::into).collect()
    }
    Some(match property {
        Property::ListChar(v) => widen(v),
        Property::ListUChar(v) => widen(v),
        Property::ListShort(v) => widen(v),
        Property::ListUShort(v) => widen(v),
        Property::ListInt(v) => widen(v),
        Property::ListUInt(v) => widen(v),
        _ => return None,
    })
}

impl PropertyAccess for Element {
    fn new() -> Self {
        Self::default()
    }

    fn set_property(&mut self, name: String, property: Property) {
        match name.as_str() {
            "x" => self.xyz[0] = scalar(&property),
            "y" => self.xyz[1] = scalar(&property),
            "z" => self.xyz[2] = scalar(&property),
            "vertex_indices" | "vertex_index" => self.list = list(property),
            _ => {}
        }
    }
}

/// Which list property of an element holds vertex indices, if any.
fn index_list_property(element: &ElementDef) -> Option<&str> {
    ["vertex_indices", "vertex_index"]
        .into_iter()
        .find(|name| element.properties.contains_key(*name))
}

/// Parses a PLY file into a [`Model`] with one mesh and no instances.
///
/// ```
/// let text = b"ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n4 0 1 2 3\n";
/// let model = raypick_io::ply::parse(text, &Default::default()).unwrap();
/// assert_eq!(model.meshes[0].triangles, vec![[0, 1, 2], [0, 2, 3]]);
/// ```
pub fn parse(bytes: &[u8], options: &PlyOptions) -> Result<Model, LoadError> {
    let limits = Limits::default();
    limits.check_bytes(bytes.len() as u64, Location::File)?;
    read(bytes, bytes.len() as u64, options, &limits)
}

/// The header's lines, up to and including `end_header` (or to the end of the file, or
/// [`MAX_HEADER`] bytes, whichever comes first).
fn read_header_bytes(reader: &mut impl BufRead) -> Result<Vec<u8>, LoadError> {
    let mut header = Vec::new();
    loop {
        let start = header.len();
        let room = (MAX_HEADER + 1 - start) as u64;
        let n = reader
            .take(room)
            .read_until(b'\n', &mut header)
            .map_err(|error| E.io(error))?;
        if n == 0 {
            return Ok(header);
        }
        let line = &header[start..];
        if start == 0 && !(line == b"ply\n" || line == b"ply\r\n") {
            return Err(E.malformed(
                Location::Byte(0),
                "a PLY file starts with `ply` on its own line",
            ));
        }
        if header.len() > MAX_HEADER {
            return Err(E.malformed(
                Location::Line(header.iter().filter(|&&b| b == b'\n').count() + 1),
                format!("no `end_header` in the first {MAX_HEADER} bytes"),
            ));
        }
        let first = line
            .split(|b| b.is_ascii_whitespace())
            .find(|t| !t.is_empty());
        if first == Some(b"end_header") {
            return Ok(header);
        }
    }
}

fn scalar_size(t: &ScalarType) -> u64 {
    match t {
        ScalarType::Char | ScalarType::UChar => 1,
        ScalarType::Short | ScalarType::UShort => 2,
        ScalarType::Int | ScalarType::UInt | ScalarType::Float => 4,
        ScalarType::Double => 8,
    }
}

/// The fewest bytes one element can take: its scalars and list counts (binary), one (a line, for
/// ASCII, whose missing lines are found where they should be); at least one even without
/// properties.
fn min_element_size(element: &ElementDef, encoding: Encoding) -> u64 {
    if encoding == Encoding::Ascii {
        return 1;
    }
    let size: u64 = element
        .properties
        .values()
        .map(|p| match &p.data_type {
            PropertyType::Scalar(t) => scalar_size(t),
            PropertyType::List(count, _) => scalar_size(count),
        })
        .sum();
    size.max(1)
}

/// [`parse`] from a reader over a file of `len` bytes: the header, then one element at a time.
pub(crate) fn read(
    mut reader: impl BufRead,
    len: u64,
    options: &PlyOptions,
    limits: &Limits,
) -> Result<Model, LoadError> {
    let bytes = read_header_bytes(&mut reader)?;
    if bytes.len() as u64 == len && bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(LoadError::Empty {
            source_name: Source::default(),
        });
    }
    check_header_numbers(&bytes)?;
    let parser = Parser::<Element>::new();
    let mut cursor = Cursor::new(&bytes[..]);
    let header = parser.read_header(&mut cursor).map_err(|error| {
        let consumed = &bytes[..cursor.position() as usize];
        let line = consumed.iter().filter(|&&b| b == b'\n').count().max(1);
        E.malformed(Location::Line(line), first_line(&error.to_string()))
    })?;
    let payload_start = cursor.position() as usize;
    check_unique_names(&bytes[..payload_start], &header.elements)?;

    let header_line =
        |name: &str| Location::Line(header_line_of(&bytes[..payload_start], name).unwrap_or(1));
    let vertex_def = header
        .elements
        .get("vertex")
        .ok_or_else(|| E.malformed(Location::Line(1), "no `vertex` element in the header"))?;
    for axis in ["x", "y", "z"] {
        match vertex_def.properties.get(axis).map(|p| &p.data_type) {
            Some(PropertyType::Scalar(_)) => {}
            _ => {
                return Err(E.malformed(
                    header_line("vertex"),
                    format!("the `vertex` element needs a scalar property `{axis}`"),
                ))
            }
        }
    }
    let vertex_count = vertex_def.count;
    for name in ["face", "tristrips"] {
        if let Some(element) = header.elements.get(name) {
            let ok = index_list_property(element).is_some_and(|property| {
                matches!(
                    element.properties[property].data_type,
                    PropertyType::List(..)
                )
            });
            if !ok {
                return Err(E.malformed(
                    header_line(name),
                    format!("the `{name}` element needs a list property `vertex_indices`"),
                ));
            }
        }
    }
    // Every element takes at least its minimum size, so a header that declares more than the
    // bytes left can hold is a truncated file or a corrupt count: say so before reading any.
    let payload_len = u128::from(len.saturating_sub(payload_start as u64));
    let needed: u128 = header
        .elements
        .values()
        .map(|e| e.count as u128 * u128::from(min_element_size(e, header.encoding)))
        .sum();
    if needed > payload_len {
        let declared: u128 = header.elements.values().map(|e| e.count as u128).sum();
        return Err(E.truncated(
            Location::Byte(payload_start as u64),
            format!(
                "the header declares {declared} elements, which take at least {needed} bytes; only {payload_len} bytes follow it"
            ),
        ));
    }
    let mut triangles = limits.triangles(Format::Ply);
    if let Some(face) = header.elements.get("face") {
        triangles.check_announced(face.count as u64, header_line("face"))?;
    }

    let mut mesh = MeshData {
        name: options.name.clone(),
        // The count is bounded by the payload's size (checked above), but a crafted header can
        // still announce far more vertices than the file's bytes make: grow past 1 Mi as they come.
        vertices: Vec::with_capacity(vertex_count.min(1 << 20)),
        triangles: Vec::new(),
    };
    let mut strip_triangles = Vec::new();
    // ply-rs stops at the `end_header` line, so nothing of the header is left over; the payload
    // is what follows in the file.
    let payload = Cursor::new(&bytes[payload_start..]).chain(reader);
    let header_lines = bytes[..payload_start]
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    let mut payload = match header.encoding {
        Encoding::Ascii => Payload::Ascii(Lines::new(payload, E, header_lines)),
        Encoding::BinaryLittleEndian | Encoding::BinaryBigEndian => Payload::Binary {
            reader: Counting {
                inner: payload,
                position: payload_start as u64,
            },
            len,
            big_endian: header.encoding == Encoding::BinaryBigEndian,
        },
    };
    for element_def in header.elements.values() {
        let kind = element_def.name.as_str();
        for i in 0..element_def.count {
            let (element, location) = payload.next_element(&parser, element_def, i)?;
            match kind {
                "vertex" => {
                    let mut p = [0.0f32; 3];
                    for (axis, value) in element.xyz.iter().enumerate() {
                        // Declared scalar in the header (checked above), so it was decoded.
                        let value = value.unwrap_or(f64::NAN);
                        let narrowed = value as f32;
                        if !narrowed.is_finite() {
                            return Err(E.non_finite(location, value));
                        }
                        p[axis] = narrowed;
                    }
                    mesh.vertices.push(Vec3::from_array(p));
                }
                "face" => {
                    let indices = element.list.unwrap_or_default();
                    if indices.len() < 3 {
                        return Err(E.malformed(
                            location,
                            format!(
                                "face {i} has {} vertices, at least 3 are needed",
                                indices.len()
                            ),
                        ));
                    }
                    let checked = |index: i64| {
                        check_index(index, vertex_count)
                            .ok_or_else(|| E.index(location.clone(), index, vertex_count))
                    };
                    triangles.add(indices.len() as u64 - 2, || location.clone())?;
                    let first = checked(indices[0])?;
                    for pair in indices[1..].windows(2) {
                        mesh.triangles
                            .push([first, checked(pair[0])?, checked(pair[1])?]);
                    }
                }
                "tristrips" => {
                    let indices = element.list.unwrap_or_default();
                    for strip in indices.split(|&index| index == -1) {
                        let mut resolved = Vec::with_capacity(strip.len());
                        for &index in strip {
                            resolved.push(
                                check_index(index, vertex_count).ok_or_else(|| {
                                    E.index(location.clone(), index, vertex_count)
                                })?,
                            );
                        }
                        triangles
                            .add(resolved.len().saturating_sub(2) as u64, || location.clone())?;
                        for (j, w) in resolved.windows(3).enumerate() {
                            strip_triangles.push(if j % 2 == 0 {
                                [w[0], w[1], w[2]]
                            } else {
                                [w[1], w[0], w[2]]
                            });
                        }
                    }
                }
                _ => {}
            }
        }
    }
    mesh.triangles.extend(strip_triangles);
    if mesh.triangles.is_empty() {
        return Err(E.no_triangles());
    }
    Ok(Model {
        meshes: vec![mesh],
        instances: Vec::new(),
        notes: Vec::new(),
        references: Vec::new(),
        ..Model::default()
    })
}

fn check_index(index: i64, vertex_count: usize) -> Option<u32> {
    u32::try_from(index)
        .ok()
        .filter(|&i| (i as usize) < vertex_count)
}

/// `ply-rs`'s header grammar parses the digits of `element` counts and `format` versions with
/// `unwrap()`, so a number beyond `u64` panics inside it (found by fuzzing). Check those lines first.
fn check_header_numbers(bytes: &[u8]) -> Result<(), LoadError> {
    for (index, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let mut tokens = line
            .split(|b| b.is_ascii_whitespace())
            .filter(|t| !t.is_empty());
        match tokens.next() {
            Some(b"end_header") => return Ok(()),
            Some(b"element" | b"format") => {
                for run in line
                    .split(|b| !b.is_ascii_digit())
                    .filter(|r| !r.is_empty())
                {
                    let fits =
                        std::str::from_utf8(run).is_ok_and(|digits| digits.parse::<u64>().is_ok());
                    if !fits {
                        return Err(E.malformed(
                            Location::Line(index + 1),
                            format!("the number {} is too large", shown(run)),
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The first line of a `ply-rs` error message (the rest repeats the input line), without the
/// `Line N: ` it may start with: the error's location already says which line.
fn first_line(message: &str) -> String {
    let first = message.lines().next().unwrap_or_default().trim();
    let without_line = first
        .strip_prefix("Line ")
        .and_then(|rest| rest.split_once(": "))
        .filter(|(number, _)| number.bytes().all(|b| b.is_ascii_digit()))
        .map_or(first, |(_, rest)| rest);
    without_line.to_owned()
}

/// The 1-based header line declaring element `name`.
fn header_line_of(header: &[u8], name: &str) -> Option<usize> {
    header
        .split(|&b| b == b'\n')
        .position(|line| {
            let mut tokens = line
                .split(|b| b.is_ascii_whitespace())
                .filter(|t| !t.is_empty());
            tokens.next() == Some(b"element") && tokens.next() == Some(name.as_bytes())
        })
        .map(|index| index + 1)
}

/// `ply-rs` stores elements and properties in maps keyed by name, so a repeated name silently
/// replaces the earlier declaration (and shifts every later binary field). Count the declarations
/// in the header text and compare.
fn check_unique_names(
    header: &[u8],
    elements: &ply_rs::ply::KeyMap<ElementDef>,
) -> Result<(), LoadError> {
    let mut declared: Vec<(usize, usize)> = Vec::new(); // (line, property count) per element
    for (index, line) in header.split(|&b| b == b'\n').enumerate() {
        match line
            .split(|b| b.is_ascii_whitespace())
            .find(|t| !t.is_empty())
        {
            Some(b"element") => declared.push((index + 1, 0)),
            Some(b"property") => {
                if let Some(last) = declared.last_mut() {
                    last.1 += 1;
                }
            }
            _ => {}
        }
    }
    if declared.len() != elements.len() {
        return Err(E.malformed(Location::Line(1), "an element name is declared twice"));
    }
    for ((line, properties), element) in declared.iter().zip(elements.values()) {
        if *properties != element.properties.len() {
            return Err(E.malformed(
                Location::Line(*line),
                format!("element `{}` declares a property name twice", element.name),
            ));
        }
    }
    Ok(())
}

/// The elements after the header: lines of text, or binary records read through a byte counter.
enum Payload<R> {
    Ascii(Lines<R>),
    Binary {
        reader: Counting<R>,
        /// The file's size: a record that fails at its end is cut off, not malformed.
        len: u64,
        big_endian: bool,
    },
}

impl<R: BufRead> Payload<R> {
    /// Element `i` of `element_def`, and where it is.
    fn next_element(
        &mut self,
        parser: &Parser<Element>,
        element_def: &ElementDef,
        i: usize,
    ) -> Result<(Element, Location), LoadError> {
        let kind = element_def.name.as_str();
        match self {
            Payload::Ascii(lines) => {
                let Some((line_number, line)) = lines.next_nonblank()? else {
                    return Err(E.truncated(
                        Location::Line(lines.number() + 1),
                        format!("element `{kind}` {i} of {} is missing", element_def.count),
                    ));
                };
                let location = Location::Line(line_number);
                let text = std::str::from_utf8(line).map_err(|_| {
                    E.malformed(
                        location.clone(),
                        format!("the line is not UTF-8: `{}`", shown(line)),
                    )
                })?;
                let element = parser
                    .read_ascii_element(text, element_def)
                    .map_err(|error| {
                        E.malformed(
                            location.clone(),
                            format!("element `{kind}` {i}: {}", first_line(&error.to_string())),
                        )
                    })?;
                Ok((element, location))
            }
            Payload::Binary {
                reader,
                len,
                big_endian,
            } => {
                let location = Location::Byte(reader.position);
                let read = if *big_endian {
                    parser.read_big_endian_element(reader, element_def)
                } else {
                    parser.read_little_endian_element(reader, element_def)
                };
                let element = read.map_err(|error| {
                    if reader.position >= *len {
                        E.truncated(
                            location.clone(),
                            format!("element `{kind}` {i} of {} is cut off", element_def.count),
                        )
                    } else {
                        E.malformed(
                            location.clone(),
                            format!("element `{kind}` {i}: {}", first_line(&error.to_string())),
                        )
                    }
                })?;
                Ok((element, location))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\n";

    fn ascii(tail: &str) -> String {
        format!("{HEADER}{tail}0 0 0\n1 0 0\n1 1 0\n0 1 0\n")
    }

    #[test]
    fn ascii_faces_of_any_size() {
        let text = format!(
            "{}3 0 1 2\n4 0 1 2 3\n",
            ascii("element face 2\nproperty list uchar uint vertex_indices\nend_header\n")
        );
        let model = parse(text.as_bytes(), &PlyOptions::default()).unwrap();
        assert_eq!(
            model.meshes[0].triangles,
            vec![[0, 1, 2], [0, 1, 2], [0, 2, 3]]
        );
        assert_eq!(model.meshes[0].vertices[2], Vec3::new(1.0, 1.0, 0.0));
    }

    #[test]
    fn tristrips_alternate_winding_and_restart() {
        let text = format!(
            "{}9 0 1 2 3 -1 3 2 1 -1\n",
            ascii("element tristrips 1\nproperty list int int vertex_indices\nend_header\n")
        );
        let model = parse(text.as_bytes(), &PlyOptions::default()).unwrap();
        assert_eq!(
            model.meshes[0].triangles,
            vec![[0, 1, 2], [2, 1, 3], [3, 2, 1]]
        );
    }

    fn binary(big_endian: bool) -> Vec<u8> {
        let encoding = if big_endian {
            "binary_big_endian"
        } else {
            "binary_little_endian"
        };
        let mut bytes = format!(
            "ply\nformat {encoding} 1.0\nelement vertex 3\nproperty double x\nproperty float y\nproperty short z\nelement face 1\nproperty list ushort short vertex_indices\nend_header\n"
        )
        .into_bytes();
        for (x, y, z) in [(0.0f64, 0.0f32, 0i16), (1.0, 0.0, 0), (0.0, 1.0, 7)] {
            if big_endian {
                bytes.extend(x.to_be_bytes());
                bytes.extend(y.to_be_bytes());
                bytes.extend(z.to_be_bytes());
            } else {
                bytes.extend(x.to_le_bytes());
                bytes.extend(y.to_le_bytes());
                bytes.extend(z.to_le_bytes());
            }
        }
        for v in [3u16, 0, 1, 2] {
            bytes.extend(if big_endian {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            });
        }
        bytes
    }

    #[test]
    fn binary_both_endiannesses() {
        for big_endian in [false, true] {
            let model = parse(&binary(big_endian), &PlyOptions::default()).unwrap();
            assert_eq!(model.meshes[0].triangles, vec![[0, 1, 2]]);
            assert_eq!(model.meshes[0].vertices[2], Vec3::new(0.0, 1.0, 7.0));
        }
    }

    #[test]
    fn bad_input_is_a_located_error() {
        let good = binary(false);
        let error = parse(&good[..good.len() - 1], &PlyOptions::default()).unwrap_err();
        assert!(matches!(error, LoadError::Truncated { .. }), "{error}");
        let mut bad_index = good.clone();
        let n = bad_index.len();
        bad_index[n - 2..].copy_from_slice(&9u16.to_le_bytes());
        let error = parse(&bad_index, &PlyOptions::default()).unwrap_err();
        assert!(
            matches!(error, LoadError::IndexOutOfRange { index: 9, .. }),
            "{error}"
        );
        let face = "element face 1\nproperty list uchar int vertex_indices\nend_header\n";
        let cases: &[(String, usize)] = &[
            (format!("{}3 0 1 4\n", ascii(face)), 14),
            (format!("{}2 0 1\n", ascii(face)), 14),
            (format!("{}3 0 1\n", ascii(face)), 14),
            (ascii(face).replace("1 1 0", "1 nan 0") + "3 0 1 2\n", 12),
            (ascii(face).replace("1 1 0", "1 1e39 0") + "3 0 1 2\n", 12),
            (ascii(face).replace("1 1 0", "1 x 0") + "3 0 1 2\n", 12),
            (ascii(face), 14),
            (
                ascii(face).replace("property float y\n", "property float x\n"),
                3,
            ),
        ];
        for (text, line) in cases {
            let error = parse(text.as_bytes(), &PlyOptions::default()).expect_err(text);
            assert_eq!(
                error.location(),
                Some(&Location::Line(*line)),
                "{text}: {error}"
            );
        }
        assert!(matches!(
            parse(b"", &PlyOptions::default()),
            Err(LoadError::Empty { .. })
        ));
        assert!(parse(b"plyx\n", &PlyOptions::default()).is_err());
        // Fuzz find: a count beyond u64 panicked inside ply-rs's header grammar.
        let huge = HEADER.replace("element vertex 4", "element vertex 99999999999999999999");
        let error = parse(huge.as_bytes(), &PlyOptions::default()).unwrap_err();
        assert_eq!(error.location(), Some(&Location::Line(3)), "{error}");
        // A corrupt count must not make the parser spin: an element without properties.
        let spin = "ply\nformat binary_little_endian 1.0\nelement vertex 0\nproperty float x\nproperty float y\nproperty float z\nelement nothing 4000000000\nend_header\n";
        let error = parse(spin.as_bytes(), &PlyOptions::default()).unwrap_err();
        assert!(matches!(error, LoadError::Truncated { .. }), "{error}");
    }
}
