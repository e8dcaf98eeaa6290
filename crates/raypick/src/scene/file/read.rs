//! Reading a scene file: the header, then each scene decoded (every count checked against the
//! bytes left, every tag and index against its range), checked as the builder checks its input,
//! its trees validated against the geometry, and assembled.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use glam::{Affine3A, Mat3A, Vec3, Vec3A};

use super::{
    checksum, kind, tree, FieldSpan, Place, SceneFileError, BYTE_ORDER_MARKER, HEADER_BYTES, MAGIC,
    NODE_BYTES, QUANT_NODE_BYTES, VERSION, WIDE_NODE_BYTES,
};
use crate::bvh::quantized::{QuantNode, QuantizedBvh};
use crate::bvh::wide::{NodeLayout, WideBvh, WideNode, WideTree};
use crate::bvh::{BuildConfig, Bvh, Node};
use crate::scene::builder::{check_geometry, check_total, instance_depth, top_level};
use crate::scene::{
    collect_each, frame_origin, sphere_boxes, Accel, Geometry, Instance, InvalidBvh, MeshAccel,
    MeshBvh, MeshParts, Scene, Spheres, SpheresAccel, TriMesh,
};
use crate::simd::{QuantBoxes8, Tri4, LANES};
use crate::Aabb;

/// A cursor over the file that names each field it reads, and can list them ([`layout`]).
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    scene: Option<u32>,
    geometry: Option<u32>,
    spans: Option<Vec<FieldSpan>>,
}

impl<'a> Reader<'a> {
    fn place(&self, field: &'static str) -> Place {
        Place {
            scene: self.scene,
            geometry: self.geometry,
            field,
        }
    }

    /// The next `n` bytes, as field `field`.
    fn take(&mut self, n: u64, field: &'static str) -> Result<&'a [u8], SceneFileError> {
        let left = (self.bytes.len() - self.pos) as u64;
        if n > left {
            return Err(SceneFileError::Truncated {
                at: self.place(field),
                offset: self.pos,
                needed: n,
                len: self.bytes.len(),
            });
        }
        let start = self.pos;
        // `n <= left`, so it fits in `usize`.
        self.pos += n as usize;
        let place = self.place(field);
        if let Some(spans) = &mut self.spans {
            spans.push(FieldSpan {
                place,
                bytes: start..self.pos,
            });
        }
        Ok(&self.bytes[start..self.pos])
    }

    fn array<const N: usize>(&mut self, field: &'static str) -> Result<[u8; N], SceneFileError> {
        let b = self.take(N as u64, field)?;
        let mut out = [0; N];
        out.copy_from_slice(b);
        Ok(out)
    }

    fn u8(&mut self, field: &'static str) -> Result<u8, SceneFileError> {
        Ok(self.array::<1>(field)?[0])
    }

    fn u32(&mut self, field: &'static str) -> Result<u32, SceneFileError> {
        Ok(u32::from_le_bytes(self.array(field)?))
    }

    fn u64(&mut self, field: &'static str) -> Result<u64, SceneFileError> {
        Ok(u64::from_le_bytes(self.array(field)?))
    }

    fn f32(&mut self, field: &'static str) -> Result<f32, SceneFileError> {
        Ok(f32::from_bits(self.u32(field)?))
    }

    /// A `u64` that must fit in a `usize` and lie in `min..`.
    fn usize_at_least(&mut self, min: usize, field: &'static str) -> Result<usize, SceneFileError> {
        let v = self.u64(field)?;
        match usize::try_from(v) {
            Ok(v) if v >= min => Ok(v),
            _ => Err(self.bad(field, format!("{v}: must be at least {min}"))),
        }
    }

    fn bad(&self, field: &'static str, problem: String) -> SceneFileError {
        SceneFileError::BadValue {
            at: self.place(field),
            problem,
        }
    }

    /// A `len`-prefixed run of `E`-byte elements (the count is checked against the bytes left
    /// before anything is allocated), each decoded by `decode`, in one pass straight into the
    /// vector.
    fn elements<const E: usize, T>(
        &mut self,
        field: &'static str,
        decode: impl Fn(&[u8; E]) -> T,
    ) -> Result<Vec<T>, SceneFileError> {
        let n = self.u64(field)?;
        let bytes = self.take(n.saturating_mul(E as u64), field)?;
        // `bytes` is `n` whole elements: no remainder.
        Ok(bytes.as_chunks::<E>().0.iter().map(decode).collect())
    }

    fn u32s(&mut self, field: &'static str) -> Result<Vec<u32>, SceneFileError> {
        self.elements(field, |b: &[u8; 4]| u32::from_le_bytes(*b))
    }

    fn f32s(&mut self, field: &'static str) -> Result<Vec<f32>, SceneFileError> {
        self.elements(field, |b: &[u8; 4]| f32::from_le_bytes(*b))
    }

    fn vec3s(&mut self, field: &'static str) -> Result<Vec<Vec3>, SceneFileError> {
        self.elements(field, |b: &[u8; 12]| {
            Vec3::new(f32_at(b, 0), f32_at(b, 1), f32_at(b, 2))
        })
    }

    fn name(&mut self) -> Result<Option<String>, SceneFileError> {
        match self.u8("name tag")? {
            0 => Ok(None),
            1 => {
                let n = self.u64("name")?;
                let bytes = self.take(n, "name")?;
                String::from_utf8(bytes.to_vec())
                    .map(Some)
                    .map_err(|e| self.bad("name", format!("not UTF-8: {e}")))
            }
            t => Err(self.bad("name tag", format!("{t}: expected 0 (no name) or 1"))),
        }
    }
}

/// Word `k` of `b` as a `u32`, little-endian (`b` holds it: the callers' elements are whole).
#[inline(always)]
fn u32_at(b: &[u8], k: usize) -> u32 {
    u32::from_le_bytes([b[4 * k], b[4 * k + 1], b[4 * k + 2], b[4 * k + 3]])
}

#[inline(always)]
fn f32_at(b: &[u8], k: usize) -> f32 {
    f32::from_bits(u32_at(b, k))
}

fn binary_node(b: &[u8; NODE_BYTES]) -> Node {
    Node {
        min: [f32_at(b, 0), f32_at(b, 1), f32_at(b, 2)],
        index: u32_at(b, 3),
        max: [f32_at(b, 4), f32_at(b, 5), f32_at(b, 6)],
        count: u32_at(b, 7),
    }
}

fn wide_node(b: &[u8; WIDE_NODE_BYTES]) -> WideNode<8> {
    WideNode {
        bounds: std::array::from_fn(|row| std::array::from_fn(|lane| f32_at(b, 8 * row + lane))),
        index: std::array::from_fn(|lane| u32_at(b, 48 + lane)),
        count: std::array::from_fn(|lane| u32_at(b, 56 + lane)),
    }
}

fn quant_node(b: &[u8; QUANT_NODE_BYTES]) -> QuantNode {
    // 9 floats, 8 indices (68 bytes), then 48 step counts, 8 counts and the valid mask.
    let q = &b[68..116];
    QuantNode {
        boxes: QuantBoxes8 {
            anchor: std::array::from_fn(|k| f32_at(b, k)),
            scale: std::array::from_fn(|k| f32_at(b, 6 + k)),
            q: std::array::from_fn(|row| std::array::from_fn(|lane| q[8 * row + lane])),
            valid: b[124],
        },
        index: std::array::from_fn(|lane| u32_at(b, 9 + lane)),
        count: std::array::from_fn(|lane| b[116 + lane]),
    }
}

/// A geometry as decoded: an instance names its scene by position until the scene is assembled.
enum RawGeometry {
    Mesh(TriMesh),
    Spheres(Spheres),
    Instance {
        scene: u32,
        world_from_object: Affine3A,
        name: Option<String>,
        mask: u32,
    },
}

/// The meshes' tree as decoded: the tree (without its own ids) and the id at each position.
struct RawMeshTree {
    bvh: MeshBvh,
    ids: Vec<u32>,
}

/// A scene as decoded, before any check.
struct RawScene {
    config: BuildConfig,
    geometries: Vec<RawGeometry>,
    top: Bvh,
    spheres: Vec<Bvh>,
    meshes: Option<RawMeshTree>,
}

impl Reader<'_> {
    fn config(&mut self) -> Result<BuildConfig, SceneFileError> {
        let bins = self.usize_at_least(2, "config bins")?;
        let max_leaf_size = self.usize_at_least(1, "config max_leaf_size")?;
        let traversal_cost = self.cost("config traversal_cost")?;
        let intersection_cost = self.cost("config intersection_cost")?;
        let block_size = self.usize_at_least(1, "config block_size")?;
        let sweep_threshold = self.usize_at_least(0, "config sweep_threshold")?;
        let parallel_threshold = self.usize_at_least(0, "config parallel_threshold")?;
        let compact = match self.u8("config compact")? {
            0 => false,
            1 => true,
            v => return Err(self.bad("config compact", format!("{v}: expected 0 or 1"))),
        };
        let reinsertion_batch = self.cost("config reinsertion_batch")?;
        let reinsertion_passes = self.usize_at_least(0, "config reinsertion_passes")?;
        Ok(BuildConfig {
            bins,
            max_leaf_size,
            traversal_cost,
            intersection_cost,
            block_size,
            sweep_threshold,
            parallel_threshold,
            compact,
            reinsertion_batch,
            reinsertion_passes,
        })
    }

    /// A finite, non-negative `f32` setting.
    fn cost(&mut self, field: &'static str) -> Result<f32, SceneFileError> {
        let v = self.f32(field)?;
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(self.bad(field, format!("{v}: must be finite and >= 0")))
        }
    }

    /// Geometry `id` of scene `scene` (instances may place scenes `0..scene` only).
    fn geometry(&mut self, scene: u32) -> Result<RawGeometry, SceneFileError> {
        let tag = self.u8("kind")?;
        let mask = self.u32("mask")?;
        let name = self.name()?;
        match tag {
            kind::MESH => {
                let vertices = self.vec3s("vertices")?;
                let indices = self.elements("triangles", |b: &[u8; 12]| {
                    [u32_at(b, 0), u32_at(b, 1), u32_at(b, 2)]
                })?;
                Ok(RawGeometry::Mesh(TriMesh {
                    vertices: Arc::new(vertices),
                    indices: Arc::new(indices),
                    name,
                    mask,
                }))
            }
            kind::SPHERES => {
                let centers = self.vec3s("centers")?;
                let radii = self.f32s("radii")?;
                Ok(RawGeometry::Spheres(Spheres {
                    centers,
                    radii,
                    name,
                    mask,
                }))
            }
            kind::INSTANCE => {
                let placed = self.u32("instance scene")?;
                if placed >= scene {
                    return Err(SceneFileError::OutOfRange {
                        at: self.place("instance scene"),
                        value: u64::from(placed),
                        // An instance places a scene written before its own; scene 0 places none.
                        max: u64::from(scene).saturating_sub(1),
                    });
                }
                let words = self.take(48, "world_from_object")?;
                let col = |k: usize| {
                    Vec3A::new(
                        f32_at(words, 3 * k),
                        f32_at(words, 3 * k + 1),
                        f32_at(words, 3 * k + 2),
                    )
                };
                let world_from_object = Affine3A {
                    matrix3: Mat3A::from_cols(col(0), col(1), col(2)),
                    translation: col(3),
                };
                Ok(RawGeometry::Instance {
                    scene: placed,
                    world_from_object,
                    name,
                    mask,
                })
            }
            t => Err(self.bad(
                "kind",
                format!("{t}: expected 0 (mesh), 1 (spheres) or 2 (instance)"),
            )),
        }
    }

    fn binary_tree(
        &mut self,
        nodes: &'static str,
        ids: &'static str,
    ) -> Result<Bvh, SceneFileError> {
        Ok(Bvh {
            nodes: self.elements::<NODE_BYTES, _>(nodes, binary_node)?,
            prim_ids: self.u32s(ids)?,
        })
    }

    fn mesh_tree(&mut self) -> Result<Option<RawMeshTree>, SceneFileError> {
        let tag = self.u8("mesh tree kind")?;
        if tag == tree::NONE {
            return Ok(None);
        }
        let num_prims = self.usize_at_least(0, "mesh tree primitives")?;
        let bvh = match tag {
            tree::WIDE => MeshBvh::Wide(WideBvh {
                nodes: self.elements::<WIDE_NODE_BYTES, _>("mesh tree nodes", wide_node)?,
                prim_ids: Vec::new(),
                num_prims,
            }),
            tree::QUANTIZED => MeshBvh::Quantized(QuantizedBvh {
                nodes: self.elements::<QUANT_NODE_BYTES, _>("mesh tree nodes", quant_node)?,
                prim_ids: Vec::new(),
                num_prims,
            }),
            t => {
                return Err(self.bad(
                    "mesh tree kind",
                    format!("{t}: expected 0 (none), 1 (wide) or 2 (quantized)"),
                ))
            }
        };
        let ids = self.u32s("mesh tree order")?;
        if ids.len() % LANES != 0 {
            return Err(self.bad(
                "mesh tree order",
                format!("{} positions: must be a multiple of {LANES}", ids.len()),
            ));
        }
        Ok(Some(RawMeshTree { bvh, ids }))
    }

    /// Scene number `scene` of the file.
    fn scene(&mut self, scene: u32) -> Result<RawScene, SceneFileError> {
        self.scene = Some(scene);
        self.geometry = None;
        let config = self.config()?;
        let count = self.u32("geometry count")?;
        // Each geometry takes at least 22 bytes (kind 1, mask 4, name tag 1, then a mesh's or a
        // sphere set's two counts, 16, or an instance's 52): a count the bytes left cannot hold
        // is refused before anything is allocated.
        let left = (self.bytes.len() - self.pos) as u64;
        if u64::from(count) * 22 > left {
            return Err(SceneFileError::Truncated {
                at: self.place("geometry count"),
                offset: self.pos,
                needed: u64::from(count) * 22,
                len: self.bytes.len(),
            });
        }
        let mut geometries = Vec::with_capacity(count as usize);
        for id in 0..count {
            self.geometry = Some(id);
            geometries.push(self.geometry(scene)?);
        }
        self.geometry = None;
        let top = self.binary_tree("top tree nodes", "top tree order")?;
        let mut spheres = Vec::new();
        for (id, g) in geometries.iter().enumerate() {
            if let RawGeometry::Spheres(_) = g {
                self.geometry = Some(id as u32);
                spheres.push(self.binary_tree("sphere tree nodes", "sphere tree order")?);
            }
        }
        self.geometry = None;
        let meshes = self.mesh_tree()?;
        Ok(RawScene {
            config,
            geometries,
            top,
            spheres,
            meshes,
        })
    }
}

/// Checks the header of `bytes` and returns a reader positioned at the payload, whose checksum
/// has been verified.
fn open(bytes: &[u8], spans: Option<Vec<FieldSpan>>) -> Result<Reader<'_>, SceneFileError> {
    let head = &bytes[..bytes.len().min(MAGIC.len())];
    if head != &MAGIC[..head.len()] {
        return Err(SceneFileError::BadMagic {
            found: head.to_vec(),
        });
    }
    let mut r = Reader {
        bytes,
        pos: 0,
        scene: None,
        geometry: None,
        spans,
    };
    r.take(MAGIC.len() as u64, "magic")?;
    let version = r.u32("version")?;
    if version != VERSION {
        return Err(SceneFileError::UnsupportedVersion {
            found: version,
            supported: VERSION,
        });
    }
    let marker: [u8; 4] = r.array("byte order")?;
    if marker != BYTE_ORDER_MARKER.to_le_bytes() {
        return Err(SceneFileError::ByteOrder { found: marker });
    }
    let expected = r.u64("payload length")?;
    let stored = r.u32("checksum")?;
    let reserved = r.u32("reserved")?;
    if reserved != 0 {
        return Err(r.bad("reserved", format!("{reserved:#x}: must be 0")));
    }
    debug_assert_eq!(r.pos, HEADER_BYTES);
    let found = (bytes.len() - HEADER_BYTES) as u64;
    if found != expected {
        return Err(SceneFileError::PayloadLength { expected, found });
    }
    let computed = checksum(&bytes[HEADER_BYTES..]);
    if computed != stored {
        return Err(SceneFileError::Checksum { stored, computed });
    }
    Ok(r)
}

/// Decodes every scene of the file after the header.
fn decode(r: &mut Reader<'_>) -> Result<Vec<RawScene>, SceneFileError> {
    let count = r.u32("scene count")?;
    if count == 0 {
        return Err(r.bad(
            "scene count",
            "0: a file holds at least the saved scene".into(),
        ));
    }
    // A scene takes at least 82 bytes (settings 61, geometry count 4, the top tree's two counts
    // 16, the mesh tree's kind 1): the capacity is what the bytes can hold, whatever the count.
    let mut scenes = Vec::with_capacity((count as usize).min(r.bytes.len() / 82));
    for s in 0..count {
        scenes.push(r.scene(s)?);
    }
    if r.pos != r.bytes.len() {
        r.scene = None;
        r.geometry = None;
        return Err(r.bad(
            "payload end",
            format!("{} bytes after the last scene", r.bytes.len() - r.pos),
        ));
    }
    Ok(scenes)
}

/// The fields of the scene file `bytes` and where each lies, in file order, as far as the file
/// decodes (the header checked, every field read; no geometry check or tree validation): for
/// tools that inspect or repair files, and tests that damage one field.
///
/// # Errors
/// What [`Scene::from_bytes`] reports for the header and the decoding.
pub fn layout(bytes: &[u8]) -> Result<Vec<FieldSpan>, SceneFileError> {
    let mut r = open(bytes, Some(Vec::new()))?;
    decode(&mut r)?;
    Ok(r.spans.unwrap_or_default())
}

/// Scene number `index` from its decoded form, the scenes before it assembled (`placed`): every
/// geometry checked, every tree validated, the rest computed as the build computes it.
fn assemble(raw: RawScene, index: u32, placed: &[Arc<Scene>]) -> Result<Scene, SceneFileError> {
    let geometry_error = |error| SceneFileError::Geometry {
        scene: index,
        error,
    };
    let invalid = |geom, error| SceneFileError::InvalidBvh {
        scene: index,
        error: InvalidBvh { geom, error },
    };
    let geometries: Vec<Geometry> = raw
        .geometries
        .into_iter()
        .map(|g| match g {
            RawGeometry::Mesh(m) => Geometry::Mesh(m),
            RawGeometry::Spheres(s) => Geometry::Spheres(s),
            RawGeometry::Instance {
                scene,
                world_from_object,
                name,
                mask,
            } => Geometry::Instance(Instance {
                // `decode` checked `scene < index`, and `placed` holds scenes `0..index`.
                scene: placed[scene as usize].clone(),
                world_from_object,
                name,
                mask,
            }),
        })
        .collect();
    let mut sphere_trees = raw.spheres.into_iter();
    let mut accels = Vec::with_capacity(geometries.len());
    let mut parts = Vec::new();
    for (id, g) in geometries.iter().enumerate() {
        let id = id as u32;
        let instance = check_geometry(id, g).map_err(geometry_error)?;
        accels.push(match g {
            Geometry::Mesh(m) => {
                parts.push((id, m, m.mask));
                Accel::Mesh
            }
            Geometry::Spheres(s) => {
                // `decode` read one tree per sphere set.
                let bvh = sphere_trees.next().unwrap_or_default();
                bvh.validate(&sphere_boxes(s))
                    .map_err(|e| invalid(Some(id), e))?;
                Accel::Spheres(SpheresAccel { bvh })
            }
            Geometry::Instance(_) => match instance {
                Some(accel) => Accel::Instance(accel),
                None => unreachable!("check_geometry returns an instance's accel"),
            },
        });
    }
    check_total(&geometries, &parts).map_err(geometry_error)?;
    let meshes_bounds = parts
        .iter()
        .fold(Aabb::EMPTY, |b, (_, m, _)| b.union(m.bounds()));
    let meshes = match (parts.first(), raw.meshes) {
        (None, None) => None,
        (Some(&(first, _, _)), Some(tree)) => {
            let tree_kind_ok = matches!(
                (&tree.bvh, raw.config.compact),
                (MeshBvh::Wide(_), false) | (MeshBvh::Quantized(_), true)
            );
            if !tree_kind_ok {
                return Err(SceneFileError::BadValue {
                    at: Place {
                        scene: Some(index),
                        geometry: None,
                        field: "mesh tree kind",
                    },
                    problem: format!(
                        "the tree's kind does not match the setting compact = {}",
                        raw.config.compact
                    ),
                });
            }
            let meshes: Vec<&TriMesh> = parts.iter().map(|&(_, m, _)| m).collect();
            let total = meshes.iter().map(|m| m.indices.len()).sum::<usize>();
            let mut accel = MeshAccel {
                offset: frame_origin(&meshes_bounds),
                blocks: Vec::new(),
                bvh: tree.bvh,
                parts: MeshParts::new(&parts),
                dipoles: OnceLock::new(),
            };
            // The order must name each triangle once before the blocks are filled from it; the
            // rest of the tree is checked as they are filled, and when that finds a fault the
            // reference walk names it, against each triangle's box read back from its block.
            accel
                .bvh
                .check_counts(&tree.ids, total)
                .map_err(|e| invalid(Some(first), e))?;
            if !store_checked(&mut accel, &meshes, &tree.ids) {
                accel
                    .bvh
                    .validate_by(&tree.ids, total, |prim, slot| {
                        accel.slot_box(&meshes, slot, prim)
                    })
                    .map_err(|e| invalid(Some(first), e))?;
            }
            Some(accel)
        }
        (first, _) => {
            return Err(SceneFileError::BadValue {
                at: Place {
                    scene: Some(index),
                    geometry: None,
                    field: "mesh tree kind",
                },
                problem: if first.is_some() {
                    "the scene has meshes but no mesh tree".into()
                } else {
                    "the scene has no mesh but a mesh tree".into()
                },
            })
        }
    };
    drop(parts);
    let (top_items, top_boxes, bounds) = top_level(&geometries, meshes_bounds);
    raw.top.validate(&top_boxes).map_err(|e| invalid(None, e))?;
    let instance_depth = instance_depth(&geometries);
    Ok(Scene {
        geometries,
        accels,
        meshes,
        top: raw.top,
        top_items,
        top_boxes,
        bounds,
        config: raw.config,
        instance_depth,
    })
}

/// Fills `accel`'s blocks from `meshes` in the order `ids` (checked to name each triangle once)
/// and checks its tree on the way: `true` when the tree passes every check of its validation
/// ([`WideTree::block_leaves`], then [`WideTree::check_block`] on each block with the boxes of
/// the triangles just read), `false` when one fails. The blocks are filled either way.
fn store_checked(accel: &mut MeshAccel, meshes: &[&TriMesh], ids: &[u32]) -> bool {
    let (blocks, valid) = match &accel.bvh {
        MeshBvh::Wide(tree) => fill_checked(tree, &accel.parts, accel.offset, meshes, ids),
        MeshBvh::Quantized(tree) => fill_checked(tree, &accel.parts, accel.offset, meshes, ids),
    };
    accel.blocks = blocks;
    valid
}

fn fill_checked<N: NodeLayout + Sync>(
    tree: &WideTree<N>,
    parts: &MeshParts,
    offset: Vec3,
    meshes: &[&TriMesh],
    ids: &[u32],
) -> (Vec<Tri4>, bool) {
    let leaves = tree.block_leaves(ids);
    let failed = AtomicBool::new(leaves.is_none());
    let blocks = collect_each(ids.len().div_ceil(LANES), |b| {
        let mut boxes = [Aabb::EMPTY; LANES];
        let block = MeshAccel::block(parts, offset, meshes, ids, b, |lane, tri| {
            boxes[lane] = Aabb::from_points(*tri);
        });
        if let Some(leaves) = &leaves {
            let slots = &ids[b * LANES..(b * LANES + LANES).min(ids.len())];
            if !tree.check_block(leaves, b, slots, &boxes) {
                failed.store(true, Ordering::Relaxed);
            }
        }
        block
    });
    (blocks, !failed.into_inner())
}

impl Scene {
    /// Reads a scene from the bytes of a scene file ([`Scene::to_bytes`]); no BVH is built.
    ///
    /// Safe on any bytes: see the [module docs](super), "Loading files from strangers".
    ///
    /// # Errors
    /// A [`SceneFileError`] naming the first problem and where it is: wrong magic, another
    /// version, a damaged header, a length or checksum mismatch, a truncated field, a tag, index
    /// or setting out of range, a geometry the builder would refuse, or a tree that fails its
    /// validation.
    pub fn from_bytes(bytes: &[u8]) -> Result<Scene, SceneFileError> {
        let mut r = open(bytes, None)?;
        let raw = decode(&mut r)?;
        let last = raw.len() - 1;
        let mut placed: Vec<Arc<Scene>> = Vec::with_capacity(last);
        for (index, scene) in raw.into_iter().enumerate() {
            let scene = assemble(scene, index as u32, &placed)?;
            if index == last {
                return Ok(scene);
            }
            placed.push(Arc::new(scene));
        }
        unreachable!("decode returns at least one scene")
    }
}
