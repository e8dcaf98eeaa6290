//! glTF 2.0, JSON (`.gltf`, buffers embedded as data URIs or in external files) and binary (`.glb`).
//!
//! The `gltf` crate parses and validates the document (JSON syntax, GLB chunks, every index
//! reference). This module walks the default scene and reads the geometry itself:
//! - **Scene**: the document's `scene`, or the first scene when it has none; a file without any
//!   scene uses every root node (a node that is no other node's child).
//! - **Nodes**: the hierarchy is kept twice. [`Model::nodes`] holds every node reached from the
//!   scene, depth first, with its own transform (`matrix`, or `translation · rotation · scale`),
//!   its mesh and its children ([`NodeData`]): [`crate::Instancing::Hierarchy`] builds nested
//!   instances from it. [`Model::instances`] holds it flattened: every node that references a
//!   mesh becomes one [`InstanceData`] whose `world_from_object` is the product of its
//!   ancestors' and its own transforms, which the other policies build from. A node reached
//!   twice (a cycle, or two parents) is an error, as the specification forbids it.
//! - **Meshes** are shared: a mesh used by several nodes is converted once and instanced. All
//!   triangle primitives of a mesh go into one [`MeshData`], in primitive order, each primitive's
//!   vertices appended after the previous one's.
//! - **Primitives**: modes `TRIANGLES`, `TRIANGLE_STRIP` and `TRIANGLE_FAN` (with the
//!   specification's vertex orders), indexed or not. `POINTS` and `LINES*` primitives are skipped
//!   with a line in [`Model::notes`].
//! - **Skins**: a skinned mesh is placed in its bind pose: the `POSITION` data as stored, placed by
//!   its node's world transform; joints, weights and animations are ignored (a note says so).
//!   Morph targets are ignored too: the base positions are used.
//!
//! # Why the accessors are read here
//! `gltf`'s accessor reader computes `count - 1` and `offset + stride · (count - 1)` without
//! checked arithmetic (a zero or huge count panics or overflows) and slices the buffer without a
//! length check against the declared `byteLength`, so a crafted file can make it panic. Positions
//! (`VEC3` of `f32`) and indices (`u8`/`u16`/`u32` scalars) are simple enough to read here with every
//! bound checked. Sparse accessors and quantized positions (`KHR_mesh_quantization`) are reported
//! as [`LoadError::Unsupported`].
//!
//! # External buffers
//! A buffer `uri` that is not a `data:` URI names a file, resolved against
//! [`GltfOptions::base_dir`] by the rules of the crate's reference policy ([`crate::OutsideRefs`]):
//! inside the model's folder after `..`, percent-decoding and symbolic links, and a regular file.
//! At most the buffer's `byteLength` bytes are read from it, and they count against
//! [`crate::Limits::max_bytes`] before they are read. Every refusal is a
//! [`LoadError::RefusedReference`] that names the URI.

use std::io::Read;
use std::path::PathBuf;

use base64::Engine as _;
use glam::{Affine3A, Mat4, Vec3};
use gltf::accessor::{DataType, Dimensions};
use gltf::mesh::{Mode, Semantic};

use crate::error::{shown, Err, Format, LoadError, Location, Source};
use crate::limits::{Limits, Triangles};
use crate::model::{InstanceData, MeshData, Model, NodeData};
use crate::refs::{self, RefError};

/// How to read a glTF file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GltfOptions {
    /// The folder external buffers (`"uri": "scene.bin"`) are relative to: the `.gltf` file's
    /// folder. [`crate::load`] sets it; when it is `None`, a file with external buffers fails with
    /// [`LoadError::MissingBuffer`].
    pub base_dir: Option<PathBuf>,
}

const E: Err = Err {
    format: Format::Gltf,
};

/// Required extensions that change nothing about positions, indices or transforms.
const GEOMETRY_NEUTRAL_EXTENSIONS: &[&str] = &[
    "KHR_materials_",
    "KHR_texture_",
    "EXT_texture_",
    "KHR_lights_punctual",
];

fn pointer(parts: &[&dyn std::fmt::Display]) -> Location {
    let mut text = String::new();
    for part in parts {
        text.push('/');
        text.push_str(&part.to_string());
    }
    Location::Json(text)
}

/// Parses a glTF (JSON) or GLB file into a [`Model`]: the meshes of the default scene and one
/// instance per node that references a mesh.
///
/// ```
/// // One triangle, positions in an embedded buffer (3 × VEC3 f32 = 36 bytes).
/// let json = r#"{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],
///   "nodes":[{"mesh":0,"name":"tri","translation":[0,0,5]}],
///   "meshes":[{"primitives":[{"attributes":{"POSITION":0}}]}],
///   "accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3",
///                 "min":[0,0,0],"max":[1,1,0]}],
///   "bufferViews":[{"buffer":0,"byteLength":36}],
///   "buffers":[{"byteLength":36,"uri":"data:application/octet-stream;base64,AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAA"}]}"#;
/// let model = raypick_io::gltf::parse(json.as_bytes(), &Default::default()).unwrap();
/// assert_eq!(model.instances[0].name, "tri");
/// assert_eq!(model.meshes[0].triangles, vec![[0, 1, 2]]);
/// ```
pub fn parse(bytes: &[u8], options: &GltfOptions) -> Result<Model, LoadError> {
    let limits = Limits::default();
    limits.check_bytes(bytes.len() as u64, Location::File)?;
    parse_within(bytes, options, &limits)
}

/// [`parse`] within `limits`; `bytes` (already read) count against the byte budget.
pub(crate) fn parse_within(
    bytes: &[u8],
    options: &GltfOptions,
    limits: &Limits,
) -> Result<Model, LoadError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(LoadError::Empty {
            source_name: Source::default(),
        });
    }
    check_glb_header(bytes)?;
    let gltf = gltf::Gltf::from_slice_without_validation(bytes).map_err(map_gltf_error)?;
    let document = &gltf.document;
    validate(document)?;

    let mut model = Model::default();
    let buffers = load_buffers(
        document,
        gltf.blob.as_deref(),
        options,
        limits,
        bytes.len(),
        &mut model.references,
    )?;
    let mut triangles = limits.triangles(Format::Gltf);
    // glTF mesh index -> index into model.meshes, filled when a node first uses the mesh.
    let mut mesh_slots: Vec<Option<usize>> = vec![None; document.meshes().len()];
    let mut visited = vec![false; document.nodes().len()];

    let roots: Vec<gltf::Node> = match document
        .default_scene()
        .or_else(|| document.scenes().next())
    {
        Some(scene) => scene.nodes().collect(),
        None => {
            let mut is_child = vec![false; document.nodes().len()];
            for node in document.nodes() {
                for child in node.children() {
                    is_child[child.index()] = true;
                }
            }
            document
                .nodes()
                .filter(|node| !is_child[node.index()])
                .collect()
        }
    };
    // (node, its parent's world transform, its parent's index in `model.nodes`)
    let mut stack: Vec<(gltf::Node, Mat4, Option<usize>)> = roots
        .into_iter()
        .rev()
        .map(|node| (node, Mat4::IDENTITY, None))
        .collect();
    while let Some((node, parent_world, parent)) = stack.pop() {
        let index = node.index();
        if std::mem::replace(&mut visited[index], true) {
            return Err(E.malformed(
                pointer(&[&"nodes", &index]),
                "the node is reached twice in the hierarchy (a cycle, or two parents)",
            ));
        }
        let local = Mat4::from_cols_array_2d(&node.transform().matrix());
        if let Some(bad) = local.to_cols_array().into_iter().find(|v| !v.is_finite()) {
            return Err(E.non_finite(pointer(&[&"nodes", &index]), f64::from(bad)));
        }
        // The bottom row of an affine matrix; exporters write these exactly, and 1e-6 absorbs
        // the rounding of a value printed with 7 significant digits.
        let row = local.row(3);
        if row.truncate().abs().max_element() > 1e-6 || (row.w - 1.0).abs() > 1e-6 {
            return Err(E.malformed(
                pointer(&[&"nodes", &index, &"matrix"]),
                format!("the matrix is not affine: its last row is {row}"),
            ));
        }
        let world = parent_world * local;
        // Finite factors can still multiply to infinity (huge scales nested).
        if let Some(bad) = world.to_cols_array().into_iter().find(|v| !v.is_finite()) {
            return Err(E.non_finite(pointer(&[&"nodes", &index]), f64::from(bad)));
        }
        let name = node
            .name()
            .map_or_else(|| format!("node {index}"), str::to_owned);
        let mut shown = None;
        if let Some(mesh) = node.mesh() {
            let slot = match mesh_slots[mesh.index()] {
                Some(slot) => slot,
                None => {
                    let converted =
                        convert_mesh(&mesh, &buffers, &mut model.notes, &mut triangles)?;
                    model.meshes.push(converted);
                    mesh_slots[mesh.index()] = Some(model.meshes.len() - 1);
                    model.meshes.len() - 1
                }
            };
            if node.skin().is_some() {
                model.notes.push(format!(
                    "node {index}: skin ignored, mesh {} placed in its bind pose by the node transform",
                    mesh.index()
                ));
            }
            model.instances.push(InstanceData {
                name: name.clone(),
                mesh: slot,
                world_from_object: Affine3A::from_mat4(world),
            });
            shown = Some(slot);
        }
        let this = model.nodes.len();
        model.nodes.push(NodeData {
            name,
            mesh: shown,
            parent_from_node: Affine3A::from_mat4(local),
            children: Vec::new(),
        });
        match parent {
            Some(parent) => model.nodes[parent].children.push(this),
            None => model.roots.push(this),
        }
        for child in node.children().collect::<Vec<_>>().into_iter().rev() {
            stack.push((child, world, Some(this)));
        }
    }
    if model.num_triangles_in_world() == 0 {
        return Err(E.no_triangles());
    }
    Ok(model)
}

/// `gltf`'s GLB reader subtracts the 12-byte header size from the declared length unchecked
/// (a panic in debug builds for a length below 12): check the header before handing it over.
fn check_glb_header(bytes: &[u8]) -> Result<(), LoadError> {
    check_glb_head(bytes, bytes.len() as u64)
}

/// [`check_glb_header`] from the first bytes of a file of `len` bytes, so that a file that is
/// neither JSON nor GLB (chosen for its extension), or a GLB file whose header disagrees with its
/// size, is refused before the rest is read.
pub(crate) fn check_glb_head(head: &[u8], len: u64) -> Result<(), LoadError> {
    if !head.starts_with(b"glTF") {
        if !head.trim_ascii_start().is_empty() && !head.trim_ascii_start().starts_with(b"{") {
            return Err(E.malformed(
                Location::Byte(0),
                format!(
                    "neither a GLB header (`glTF`) nor a JSON document (`{{`): starts with `{}`",
                    shown(&head[..head.len().min(16)])
                ),
            ));
        }
        return Ok(());
    }
    if len < 12 || head.len() < 12 {
        return Err(E.truncated(Location::Byte(len), "a GLB header is 12 bytes"));
    }
    let version = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
    if version != 2 {
        return Err(E.unsupported(Location::Byte(4), format!("GLB version {version}")));
    }
    let length = u64::from(u32::from_le_bytes([head[8], head[9], head[10], head[11]]));
    if length < 12 {
        return Err(E.malformed(
            Location::Byte(8),
            format!("the GLB length {length} is shorter than its header"),
        ));
    }
    if length > len {
        return Err(E.truncated(
            Location::Byte(len),
            format!("the GLB header says {length} bytes, the file has {len}"),
        ));
    }
    Ok(())
}

/// `gltf`'s own validation (every index reference, required fields), except that a required
/// extension that changes nothing about geometry (materials, textures, lights) is accepted: `gltf`
/// rejects every required extension it does not implement, and none is enabled here. Any other
/// required extension (Draco, meshopt compression, …) is [`LoadError::Unsupported`].
fn validate(document: &gltf::Document) -> Result<(), LoadError> {
    use gltf::json::validation::{Error as Problem, Validate};
    let root = document.as_json();
    // `gltf-json`'s primitive check indexes `accessors` with the POSITION index before its range is
    // checked (a panic, found by fuzzing): check that range first.
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, primitive) in mesh.primitives.iter().enumerate() {
            let position = primitive
                .attributes
                .get(&gltf::json::validation::Checked::Valid(Semantic::Positions));
            if let Some(index) = position {
                if index.value() >= root.accessors.len() {
                    return Err(E.malformed(
                        pointer(&[&"meshes", &m, &"primitives", &p, &"attributes", &"POSITION"]),
                        format!(
                            "accessor {} does not exist ({} accessors)",
                            index.value(),
                            root.accessors.len()
                        ),
                    ));
                }
            }
        }
    }
    let mut problems = Vec::new();
    root.validate(root, gltf::json::Path::new, &mut |path, problem| {
        problems.push((path(), problem));
    });
    problems.retain(|(path, problem)| {
        let neutral_extension = *problem == Problem::Unsupported
            && path.to_string().starts_with("extensionsRequired")
            && GEOMETRY_NEUTRAL_EXTENSIONS
                .iter()
                .any(|prefix| path.to_string().contains(prefix));
        !neutral_extension
    });
    match problems.first() {
        None => Ok(()),
        Some((path, Problem::Unsupported)) => Err(E.unsupported(
            json_pointer(&path.to_string()),
            "a required extension or value this loader does not implement",
        )),
        Some(_) => Err(map_gltf_error(gltf::Error::Validation(problems))),
    }
}

/// `gltf` paths read `meshes[0].primitives[1]` (with `"key"` for map entries); say it as a JSON
/// pointer.
fn json_pointer(path: &str) -> Location {
    Location::Json(format!(
        "/{}",
        path.replace('[', "/")
            .replace(']', "")
            .replace('.', "/")
            .replace('"', "")
    ))
}

fn map_gltf_error(error: gltf::Error) -> LoadError {
    match error {
        gltf::Error::Deserialize(json) => {
            // serde_json ends its message with " at line L column C", which the location says.
            let text = json.to_string();
            let suffix = format!(" at line {} column {}", json.line(), json.column());
            let message = text.strip_suffix(&suffix).unwrap_or(&text).to_owned();
            E.malformed(Location::LineColumn(json.line(), json.column()), message)
        }
        gltf::Error::Validation(errors) => {
            let (path, what) = errors
                .first()
                .map(|(path, what)| (path.to_string(), what.to_string()))
                .unwrap_or_default();
            // `gltf` paths read `meshes[0].primitives[1]`; say it as a JSON pointer.
            let json_pointer = format!(
                "/{}",
                path.replace('[', "/")
                    .replace(']', "")
                    .replace('.', "/")
                    .replace('"', "")
            );
            E.malformed(
                Location::Json(json_pointer),
                format!("{what} ({} problem(s) in all)", errors.len()),
            )
        }
        gltf::Error::Binary(binary) => E.malformed(Location::Byte(0), format!("GLB: {binary}")),
        other => E.malformed(Location::File, other.to_string()),
    }
}

fn load_buffers(
    document: &gltf::Document,
    blob: Option<&[u8]>,
    options: &GltfOptions,
    limits: &Limits,
    already_read: usize,
    references: &mut Vec<PathBuf>,
) -> Result<Vec<Vec<u8>>, LoadError> {
    let mut bytes_read = already_read as u64;
    let mut buffers = Vec::new();
    for buffer in document.buffers() {
        let location = pointer(&[&"buffers", &buffer.index()]);
        let data = match buffer.source() {
            gltf::buffer::Source::Bin => blob
                .ok_or_else(|| {
                    E.malformed(
                        location.clone(),
                        "the buffer refers to a GLB BIN chunk, there is none",
                    )
                })?
                .to_vec(),
            gltf::buffer::Source::Uri(uri) if uri.starts_with("data:") => {
                let (_, encoded) = uri.split_once(";base64,").ok_or_else(|| {
                    E.unsupported(location.clone(), "a data URI that is not base64")
                })?;
                base64::engine::general_purpose::STANDARD
                    .decode(encoded)
                    .map_err(|error| E.malformed(location.clone(), format!("base64: {error}")))?
            }
            gltf::buffer::Source::Uri(uri) => {
                let (path, data) = read_external(
                    uri,
                    buffer.length() as u64,
                    options,
                    limits,
                    bytes_read,
                    &location,
                )?;
                bytes_read += data.len() as u64;
                references.push(path);
                data
            }
        };
        if data.len() < buffer.length() {
            return Err(E.truncated(
                location,
                format!(
                    "byteLength is {}, the data has {} bytes",
                    buffer.length(),
                    data.len()
                ),
            ));
        }
        buffers.push(data);
    }
    Ok(buffers)
}

/// The file an external buffer's `uri` names, canonicalized, and its first `byte_length` bytes
/// (see the module docs), after `bytes_read` bytes of the load.
fn read_external(
    uri: &str,
    byte_length: u64,
    options: &GltfOptions,
    limits: &Limits,
    bytes_read: u64,
    location: &Location,
) -> Result<(PathBuf, Vec<u8>), LoadError> {
    let fail = |error: RefError| match error {
        RefError::Refused(reason) => LoadError::RefusedReference {
            source_name: Source::default(),
            location: location.clone(),
            uri: uri.to_owned(),
            reason,
        },
        RefError::Io(error) => LoadError::MissingBuffer {
            source_name: Source::default(),
            location: location.clone(),
            uri: uri.to_owned(),
            error,
        },
    };
    // The URI's own rules first, so a bad one is named even when parsed from memory.
    refs::decode(uri).map_err(|reason| fail(RefError::Refused(reason)))?;
    let Some(base_dir) = &options.base_dir else {
        return Err(fail(RefError::Io(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no base folder to resolve it against (parsed from memory)",
        ))));
    };
    let path = refs::resolve(uri, base_dir, limits.outside_refs).map_err(fail)?;
    let (file, file_len) = refs::open_regular(&path).map_err(fail)?;
    let to_read = byte_length.min(file_len);
    if bytes_read.saturating_add(to_read) > limits.max_bytes {
        return Err(LoadError::TooManyBytes {
            source_name: Source::default(),
            location: location.clone(),
            size: Some(bytes_read.saturating_add(to_read)),
            limit: limits.max_bytes,
        });
    }
    // Never more than byteLength (nor than the budget allowed for), whatever the file holds.
    let mut data = Vec::new();
    file.take(to_read)
        .read_to_end(&mut data)
        .map_err(|error| fail(RefError::Io(error)))?;
    let path = path.canonicalize().unwrap_or(path);
    Ok((path, data))
}

/// The bytes of an accessor's elements: `(data, stride, count)` with every range checked, where
/// element `i` starts at `data[i * stride]` and is `element_size` bytes long.
fn accessor_bytes<'b>(
    accessor: &gltf::Accessor,
    element_size: usize,
    buffers: &'b [Vec<u8>],
) -> Result<(&'b [u8], usize, usize), LoadError> {
    let location = pointer(&[&"accessors", &accessor.index()]);
    if accessor.sparse().is_some() {
        return Err(E.unsupported(location, "sparse accessors"));
    }
    let count = accessor.count();
    let Some(view) = accessor.view() else {
        return Err(E.unsupported(location, "an accessor without a bufferView"));
    };
    if count == 0 {
        return Ok((&[], element_size, 0));
    }
    let stride = view.stride().unwrap_or(element_size);
    if stride < element_size {
        return Err(E.malformed(
            pointer(&[&"bufferViews", &view.index(), &"byteStride"]),
            format!("byteStride {stride} is smaller than the element size {element_size}"),
        ));
    }
    let buffer = &buffers[view.buffer().index()];
    let view_end = view.offset().checked_add(view.length());
    let view_bytes = view_end
        .and_then(|end| buffer.get(view.offset()..end))
        .ok_or_else(|| {
            E.truncated(
                pointer(&[&"bufferViews", &view.index()]),
                format!("the view ends past its buffer ({} bytes)", buffer.len()),
            )
        })?;
    let needed = stride
        .checked_mul(count - 1)
        .and_then(|n| n.checked_add(element_size))
        .and_then(|n| n.checked_add(accessor.offset()));
    match needed {
        Some(end) if end <= view_bytes.len() => {
            Ok((&view_bytes[accessor.offset()..end], stride, count))
        }
        _ => Err(E.truncated(
            location,
            format!(
                "{count} elements at offset {} with stride {stride} do not fit the {}-byte view",
                accessor.offset(),
                view_bytes.len()
            ),
        )),
    }
}

fn read_positions(accessor: &gltf::Accessor, buffers: &[Vec<u8>]) -> Result<Vec<Vec3>, LoadError> {
    let location = pointer(&[&"accessors", &accessor.index()]);
    if accessor.data_type() != DataType::F32 || accessor.dimensions() != Dimensions::Vec3 {
        return Err(E.unsupported(
            location,
            format!(
                "POSITION as {:?} {:?} (only VEC3 of f32 is read)",
                accessor.dimensions(),
                accessor.data_type()
            ),
        ));
    }
    let (data, stride, count) = accessor_bytes(accessor, 12, buffers)?;
    let mut positions = Vec::with_capacity(count);
    for i in 0..count {
        let element = &data[i * stride..i * stride + 12];
        let mut p = [0.0f32; 3];
        for (axis, value) in p.iter_mut().enumerate() {
            let b = &element[axis * 4..axis * 4 + 4];
            *value = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            if !value.is_finite() {
                return Err(E.non_finite(location, f64::from(*value)));
            }
        }
        positions.push(Vec3::from_array(p));
    }
    Ok(positions)
}

fn read_indices(accessor: &gltf::Accessor, buffers: &[Vec<u8>]) -> Result<Vec<u32>, LoadError> {
    let location = pointer(&[&"accessors", &accessor.index()]);
    let size = match accessor.data_type() {
        DataType::U8 => 1,
        DataType::U16 => 2,
        DataType::U32 => 4,
        other => {
            return Err(E.malformed(location, format!("indices of type {other:?}")));
        }
    };
    if accessor.dimensions() != Dimensions::Scalar {
        return Err(E.malformed(location, "indices must be SCALAR"));
    }
    let (data, stride, count) = accessor_bytes(accessor, size, buffers)?;
    Ok((0..count)
        .map(|i| {
            let b = &data[i * stride..i * stride + size];
            match size {
                1 => u32::from(b[0]),
                2 => u32::from(u16::from_le_bytes([b[0], b[1]])),
                _ => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            }
        })
        .collect())
}

fn convert_mesh(
    mesh: &gltf::Mesh,
    buffers: &[Vec<u8>],
    notes: &mut Vec<String>,
    triangles: &mut Triangles,
) -> Result<MeshData, LoadError> {
    let mut out = MeshData {
        name: mesh
            .name()
            .map_or_else(|| format!("mesh {}", mesh.index()), str::to_owned),
        vertices: Vec::new(),
        triangles: Vec::new(),
    };
    for primitive in mesh.primitives() {
        let location = || pointer(&[&"meshes", &mesh.index(), &"primitives", &primitive.index()]);
        let mode = primitive.mode();
        if !matches!(
            mode,
            Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan
        ) {
            notes.push(format!(
                "mesh {} primitive {}: {mode:?} skipped (not triangles)",
                mesh.index(),
                primitive.index()
            ));
            continue;
        }
        if primitive.morph_targets().next().is_some() {
            notes.push(format!(
                "mesh {} primitive {}: morph targets ignored (base positions used)",
                mesh.index(),
                primitive.index()
            ));
        }
        let positions = primitive
            .get(&Semantic::Positions)
            .ok_or_else(|| E.malformed(location(), "the primitive has no POSITION attribute"))?;
        let positions = read_positions(&positions, buffers)?;
        let indices = match primitive.indices() {
            Some(accessor) => {
                let indices = read_indices(&accessor, buffers)?;
                if let Some(&bad) = indices.iter().find(|&&i| i as usize >= positions.len()) {
                    return Err(E.index(
                        pointer(&[&"accessors", &accessor.index()]),
                        i64::from(bad),
                        positions.len(),
                    ));
                }
                indices
            }
            None => (0..positions.len() as u32).collect(),
        };
        let made = match mode {
            Mode::Triangles => indices.len() / 3,
            _ => indices.len().saturating_sub(2),
        };
        triangles.add(made as u64, location)?;
        let base = out.vertices.len() as u32;
        let triangle = |a: u32, b: u32, c: u32| [base + a, base + b, base + c];
        match mode {
            Mode::Triangles => {
                if indices.len() % 3 != 0 {
                    return Err(E.malformed(
                        location(),
                        format!("{} indices is not a multiple of 3", indices.len()),
                    ));
                }
                out.triangles
                    .extend(indices.chunks_exact(3).map(|t| triangle(t[0], t[1], t[2])));
            }
            // glTF 2.0 §3.7.2.1: strip triangle i is (v_i, v_{i+1+i%2}, v_{i+2-i%2}).
            Mode::TriangleStrip => {
                out.triangles
                    .extend(indices.windows(3).enumerate().map(|(i, w)| {
                        if i % 2 == 0 {
                            triangle(w[0], w[1], w[2])
                        } else {
                            triangle(w[0], w[2], w[1])
                        }
                    }))
            }
            // glTF 2.0 §3.7.2.1: fan triangle i is (v_{i+1}, v_{i+2}, v_0).
            _ => {
                if let Some(&first) = indices.first() {
                    out.triangles
                        .extend(indices[1..].windows(2).map(|w| triangle(w[0], w[1], first)));
                }
            }
        }
        out.vertices.extend(positions);
    }
    Ok(out)
}
