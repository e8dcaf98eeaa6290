//! Reading a scene file: the header, then each scene decoded, every count checked against the
//! bytes left before anything is allocated and every tag and index against its range. The bytes
//! come from a file held whole in memory ([`Scene::from_bytes`]: its checksum is checked before
//! decoding), from a stream read a piece at a time ([`Scene::from_reader`]: each piece decoded
//! straight into the scene's arrays while it is in cache, a long array's pieces read on a second
//! thread one ahead of the decoding), or from a file read at positions ([`Scene::load`] with
//! feature `parallel` on Unix: a long array's pieces read on all cores at once). A stream or a
//! file is checksummed on the way and checked once it is read through, before a decoding error
//! is reported, so a damaged file is reported as damaged whichever way it is read. Then
//! `assemble` checks and assembles the scenes.
//!
//! An array of plain data whose bytes in memory are its bytes in the file (numbers, vertices,
//! triangles, binary and float wide nodes, on a little-endian host) is read straight into its
//! vector with no decoding pass; the element decoders stay its definition (big-endian hosts and
//! the quantized nodes use them, and a test compares the two on random bytes).

use std::io::{BufReader, Read};
use std::sync::Arc;

use glam::{Affine3A, Mat3A, Vec3, Vec3A};

use super::{
    assemble, checksum, kind, tree, FieldSpan, Place, SceneFileError, BYTE_ORDER_MARKER,
    HEADER_BYTES, MAGIC, NODE_BYTES, QUANT_NODE_BYTES, VERSION, WIDE_NODE_BYTES,
};
use crate::bvh::quantized::{QuantNode, QuantizedBvh};
use crate::bvh::wide::{WideBvh, WideNode};
use crate::bvh::{BuildConfig, Bvh, Node};
use crate::scene::{MeshBvh, Scene, Spheres, TriMesh};
use crate::simd::{QuantBoxes8, LANES};

/// Where a [`Reader`]'s bytes come from, in file order.
trait Source {
    /// The most bytes an array is read in at once.
    const PIECE: usize;

    /// The next `n` bytes, valid until the next call (the reader has checked that the file holds
    /// them).
    fn next(&mut self, n: usize) -> std::io::Result<&[u8]>;

    /// The next `n` bytes handed to `each` in order, in pieces of `piece` bytes (the last one
    /// shorter): `n` and `piece` are multiples of an element's size, so every piece is whole
    /// elements. By default one [`Source::next`] per piece.
    fn pieces(
        &mut self,
        n: usize,
        piece: usize,
        mut each: impl FnMut(&[u8]),
    ) -> std::io::Result<()> {
        one_by_one(self, n, piece, &mut each)
    }

    /// The next `dst.len()` bytes, copied into `dst`.
    fn read_into(&mut self, dst: &mut [u8]) -> std::io::Result<()>;
}

/// [`Source::pieces`] one [`Source::next`] after another.
fn one_by_one<S: Source + ?Sized>(
    source: &mut S,
    n: usize,
    piece: usize,
    each: &mut impl FnMut(&[u8]),
) -> std::io::Result<()> {
    let mut left = n;
    while left > 0 {
        let k = left.min(piece);
        each(source.next(k)?);
        left -= k;
    }
    Ok(())
}

/// A file held whole in memory: the bytes not read yet.
struct Whole<'a> {
    rest: &'a [u8],
}

impl Source for Whole<'_> {
    const PIECE: usize = usize::MAX;

    fn next(&mut self, n: usize) -> std::io::Result<&[u8]> {
        let (next, rest) = self
            .rest
            .split_at_checked(n)
            .ok_or(std::io::ErrorKind::UnexpectedEof)?;
        self.rest = rest;
        Ok(next)
    }

    /// The whole run at once: it is in memory already.
    fn pieces(&mut self, n: usize, _: usize, mut each: impl FnMut(&[u8])) -> std::io::Result<()> {
        each(self.next(n)?);
        Ok(())
    }

    fn read_into(&mut self, dst: &mut [u8]) -> std::io::Result<()> {
        dst.copy_from_slice(self.next(dst.len())?);
        Ok(())
    }
}

/// A stream read a piece at a time: small fields through a buffer, an array a piece of at most
/// [`Stream::PIECE`] bytes at a time into one reused buffer that stays in cache while the piece
/// is decoded; the payload's checksum computed as it is read.
struct Stream<R> {
    inner: BufReader<R>,
    piece: Vec<u8>,
    /// The buffers of the pieces read ahead, kept from one long array to the next (feature
    /// `parallel`: without it nothing is read ahead).
    #[cfg(feature = "parallel")]
    ahead: Vec<Vec<u8>>,
    /// The payload's checksum so far, once the header has been read.
    crc: Option<crc32fast::Hasher>,
}

impl<R: Read + Send> Source for Stream<R> {
    /// 1 MiB: a piece fits in the second-level cache of current cores, and the reads are few.
    const PIECE: usize = 1 << 20;

    fn next(&mut self, n: usize) -> std::io::Result<&[u8]> {
        if self.piece.len() < n {
            self.piece.resize(n, 0);
        }
        let piece = &mut self.piece[..n];
        self.inner.read_exact(piece)?;
        if let Some(crc) = &mut self.crc {
            crc.update(piece);
        }
        Ok(piece)
    }

    /// The first piece through the buffer (which may hold bytes read ahead of the run); the
    /// rest, when it is at least two pieces, read ahead on another thread (feature `parallel`)
    /// while `each` decodes the piece before.
    fn pieces(
        &mut self,
        n: usize,
        piece: usize,
        mut each: impl FnMut(&[u8]),
    ) -> std::io::Result<()> {
        let first = n.min(piece);
        each(self.next(first)?);
        let left = n - first;
        #[cfg(feature = "parallel")]
        if left >= 2 * piece && self.inner.buffer().is_empty() {
            return self.read_ahead(left, piece, each);
        }
        one_by_one(self, left, piece, &mut each)
    }

    /// Straight from the stream into `dst` (no copy through a buffer but the bytes the buffer
    /// holds already), a piece at a time, each added to the checksum while it is in cache.
    fn read_into(&mut self, dst: &mut [u8]) -> std::io::Result<()> {
        for piece in dst.chunks_mut(Self::PIECE) {
            self.inner.read_exact(piece)?;
            if let Some(crc) = &mut self.crc {
                crc.update(piece);
            }
        }
        Ok(())
    }
}

#[cfg(feature = "parallel")]
impl<R: Read + Send> Stream<R> {
    /// Pieces in flight between the thread that reads and the one that decodes: one being read,
    /// one waiting, one being decoded.
    const IN_FLIGHT: usize = 3;

    /// [`Source::pieces`] for `n` bytes the buffer does not hold: a scoped thread reads them from
    /// the stream a piece at a time (and adds each to the checksum) while this one hands the
    /// piece before to `each`. The two overlap the stream's copies with the decoding's writes
    /// into fresh memory.
    fn read_ahead(
        &mut self,
        n: usize,
        piece: usize,
        mut each: impl FnMut(&[u8]),
    ) -> std::io::Result<()> {
        use std::sync::mpsc;
        let (stream, crc) = (self.inner.get_mut(), &mut self.crc);
        let ahead = &mut self.ahead;
        ahead.resize_with(Self::IN_FLIGHT, Vec::new);
        std::thread::scope(|scope| {
            // A piece read (or the read's error), and a buffer free to read the next one into.
            let (full, read) = mpsc::sync_channel::<std::io::Result<(Vec<u8>, usize)>>(1);
            let (free, spare) = mpsc::channel::<Vec<u8>>();
            for buf in ahead.drain(..) {
                // Never fails: `spare` is alive.
                let _ = free.send(buf);
            }
            let reading = scope.spawn(move || {
                let mut left = n;
                while left > 0 {
                    // The decoding side has stopped when the channels are closed.
                    let Ok(mut buf) = spare.recv() else { break };
                    let k = left.min(piece);
                    if buf.len() < k {
                        buf.resize(k, 0);
                    }
                    let result = stream.read_exact(&mut buf[..k]).map(|()| {
                        if let Some(crc) = crc.as_mut() {
                            crc.update(&buf[..k]);
                        }
                        (buf, k)
                    });
                    let failed = result.is_err();
                    if full.send(result).is_err() || failed {
                        break;
                    }
                    left -= k;
                }
                spare
            });
            let mut left = n;
            while left > 0 {
                let (buf, k) = read
                    .recv()
                    .map_err(|_| std::io::Error::other("the reading thread stopped"))??;
                each(&buf[..k]);
                left -= k;
                // Never fails: the reading side keeps `spare` until it is joined below.
                let _ = free.send(buf);
            }
            // Every piece has been read: the buffers are back, for the next long array.
            if let Ok(spare) = reading.join() {
                ahead.extend(spare.try_iter());
            }
            Ok(())
        })
    }
}

/// A file read at positions (`pread`, feature `parallel` on Unix; [`Scene::load`]): small
/// fields through a buffer, and a long run of plain data ([`Source::read_into`]) cut into pieces
/// that the thread pool reads at once, each straight into its place and checksummed there, the
/// pieces' checksums then combined in file order. The stream reads on one thread; this one
/// spreads the copy out of the page cache, and the mapping of the arrays' fresh pages (in bulk,
/// [`pages::populate`](crate::scene::pages::populate)), over every core.
#[cfg(all(unix, feature = "parallel"))]
struct Positioned<'f> {
    file: &'f std::fs::File,
    /// Bytes read and not handed out yet: `buf[start..end]`, the file's bytes just before
    /// offset `at`.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    at: u64,
    crc: Option<crc32fast::Hasher>,
}

#[cfg(all(unix, feature = "parallel"))]
impl<'f> Positioned<'f> {
    /// Bytes read at once for small fields.
    const BUFFER: usize = 64 << 10;

    fn new(file: &'f std::fs::File) -> Self {
        Self {
            file,
            buf: Vec::new(),
            start: 0,
            end: 0,
            at: 0,
            crc: None,
        }
    }

    /// Reads until the buffer holds at least `n` bytes (more when the file has them).
    fn fill(&mut self, n: usize) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        if self.end - self.start >= n {
            return Ok(());
        }
        self.buf.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        let want = n.max(Self::BUFFER);
        if self.buf.len() < want {
            self.buf.resize(want, 0);
        }
        while self.end < n {
            match self.file.read_at(&mut self.buf[self.end..want], self.at) {
                Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                Ok(k) => {
                    self.end += k;
                    self.at += k as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

#[cfg(all(unix, feature = "parallel"))]
impl Source for Positioned<'_> {
    /// 1 MiB, as for a stream: a piece is checksummed while it is in cache.
    const PIECE: usize = 1 << 20;

    fn next(&mut self, n: usize) -> std::io::Result<&[u8]> {
        self.fill(n)?;
        let piece = &self.buf[self.start..self.start + n];
        self.start += n;
        if let Some(crc) = &mut self.crc {
            crc.update(piece);
        }
        Ok(piece)
    }

    /// What the buffer holds, then the rest in pieces read on all cores.
    fn read_into(&mut self, dst: &mut [u8]) -> std::io::Result<()> {
        use rayon::prelude::*;
        use std::os::unix::fs::FileExt;
        let held = (self.end - self.start).min(dst.len());
        let (head, rest) = dst.split_at_mut(held);
        head.copy_from_slice(&self.buf[self.start..self.start + held]);
        self.start += held;
        let at = self.at;
        let read = |(k, piece): (usize, &mut [u8])| {
            crate::scene::pages::populate(piece);
            self.file
                .read_exact_at(piece, at + (k * Self::PIECE) as u64)
                .map(|()| {
                    let mut crc = crc32fast::Hasher::new();
                    crc.update(piece);
                    crc
                })
        };
        let crcs: Vec<crc32fast::Hasher> = rest
            .par_chunks_mut(Self::PIECE)
            .enumerate()
            .map(read)
            .collect::<std::io::Result<_>>()?;
        self.at += rest.len() as u64;
        if let Some(crc) = &mut self.crc {
            crc.update(head);
            for piece in &crcs {
                crc.combine(piece);
            }
        }
        Ok(())
    }
}

/// A cursor over a file of `len` bytes that names each field it reads, and can list them
/// ([`layout`]).
struct Reader<S> {
    source: S,
    len: usize,
    pos: usize,
    scene: Option<u32>,
    geometry: Option<u32>,
    spans: Option<Vec<FieldSpan>>,
}

impl<S: Source> Reader<S> {
    fn place(&self, field: &'static str) -> Place {
        Place {
            scene: self.scene,
            geometry: self.geometry,
            field,
        }
    }

    /// Claims the next `n` bytes as field `field` (refused when the file does not hold them),
    /// without reading them.
    fn claim(&mut self, n: u64, field: &'static str) -> Result<usize, SceneFileError> {
        let left = (self.len - self.pos) as u64;
        if n > left {
            return Err(SceneFileError::Truncated {
                at: self.place(field),
                offset: self.pos,
                needed: n,
                len: self.len,
            });
        }
        let start = self.pos;
        // `n <= left`, so it fits in `usize`.
        let n = n as usize;
        self.pos += n;
        let place = self.place(field);
        if let Some(spans) = &mut self.spans {
            spans.push(FieldSpan {
                place,
                bytes: start..self.pos,
            });
        }
        Ok(n)
    }

    /// The next `n` bytes, as field `field`.
    fn take(&mut self, n: u64, field: &'static str) -> Result<&[u8], SceneFileError> {
        let n = self.claim(n, field)?;
        Ok(self.source.next(n)?)
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
    /// before anything is allocated), each decoded by `decode` straight into the vector, a piece
    /// of the source at a time.
    fn elements<const E: usize, T>(
        &mut self,
        field: &'static str,
        decode: impl Fn(&[u8; E]) -> T,
    ) -> Result<Vec<T>, SceneFileError> {
        let n = self.u64(field)?;
        // The file holds `n` elements, so `n` fits in `usize`.
        let bytes = self.claim(n.saturating_mul(E as u64), field)?;
        let mut out = Vec::with_capacity(bytes / E);
        let piece = (S::PIECE / E).max(1) * E;
        self.source.pieces(bytes, piece, |piece| {
            // Each piece is whole elements: no remainder.
            out.extend(piece.as_chunks::<E>().0.iter().map(&decode));
        })?;
        Ok(out)
    }

    /// [`Reader::elements`] for plain-data elements whose bytes in memory are their bytes in the
    /// file (`T` is `E` bytes, without padding, and the host is little-endian): read straight
    /// into a zeroed vector, with no decoding pass. `decode` is the element's definition, used
    /// on big-endian hosts (and compared with this path by the tests).
    fn pods<const E: usize, T: bytemuck::Pod>(
        &mut self,
        field: &'static str,
        decode: impl Fn(&[u8; E]) -> T,
    ) -> Result<Vec<T>, SceneFileError> {
        const { assert!(std::mem::size_of::<T>() == E) };
        if cfg!(target_endian = "big") {
            return self.elements(field, decode);
        }
        let n = self.u64(field)?;
        let bytes = self.claim(n.saturating_mul(E as u64), field)?;
        // Zeroed memory straight from the allocator: pages are touched once, by the read.
        let mut out = bytemuck::zeroed_vec::<T>(bytes / E);
        self.source.read_into(bytemuck::cast_slice_mut(&mut out))?;
        Ok(out)
    }

    fn u32s(&mut self, field: &'static str) -> Result<Vec<u32>, SceneFileError> {
        self.pods(field, u32_le)
    }

    fn f32s(&mut self, field: &'static str) -> Result<Vec<f32>, SceneFileError> {
        self.pods(field, f32_le)
    }

    fn vec3s(&mut self, field: &'static str) -> Result<Vec<Vec3>, SceneFileError> {
        self.pods(field, vec3_le)
    }

    fn name(&mut self) -> Result<Option<String>, SceneFileError> {
        match self.u8("name tag")? {
            0 => Ok(None),
            1 => {
                let n = self.u64("name")?;
                let bytes = self.take(n, "name")?.to_vec();
                String::from_utf8(bytes)
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

fn u32_le(b: &[u8; 4]) -> u32 {
    u32::from_le_bytes(*b)
}

fn f32_le(b: &[u8; 4]) -> f32 {
    f32::from_le_bytes(*b)
}

fn vec3_le(b: &[u8; 12]) -> Vec3 {
    Vec3::new(f32_at(b, 0), f32_at(b, 1), f32_at(b, 2))
}

fn triangle_le(b: &[u8; 12]) -> [u32; 3] {
    [u32_at(b, 0), u32_at(b, 1), u32_at(b, 2)]
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
pub(super) enum RawGeometry {
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
pub(super) struct RawMeshTree {
    pub(super) bvh: MeshBvh,
    pub(super) ids: Vec<u32>,
}

/// A scene as decoded, before any check.
pub(super) struct RawScene {
    pub(super) config: BuildConfig,
    pub(super) geometries: Vec<RawGeometry>,
    pub(super) top: Bvh,
    pub(super) spheres: Vec<Bvh>,
    pub(super) meshes: Option<RawMeshTree>,
}

impl<S: Source> Reader<S> {
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
        let longest_axis_only = match self.u8("config longest_axis_only")? {
            0 => false,
            1 => true,
            v => return Err(self.bad("config longest_axis_only", format!("{v}: expected 0 or 1"))),
        };
        let spatial_splits = match self.u8("config spatial_splits")? {
            0 => false,
            1 => true,
            v => return Err(self.bad("config spatial_splits", format!("{v}: expected 0 or 1"))),
        };
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
            longest_axis_only,
            spatial_splits,
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
                let indices = self.pods("triangles", triangle_le)?;
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
            nodes: self.pods::<NODE_BYTES, _>(nodes, binary_node)?,
            prim_ids: self.u32s(ids)?,
        })
    }

    fn mesh_tree(&mut self) -> Result<Option<RawMeshTree>, SceneFileError> {
        let tag = self.u8("mesh tree kind")?;
        if tag == tree::NONE {
            return Ok(None);
        }
        // Built with spatial splits: the order may name a triangle more than once.
        let repeats = match self.u8("mesh tree repeats")? {
            0 => false,
            1 => true,
            v => return Err(self.bad("mesh tree repeats", format!("{v}: expected 0 or 1"))),
        };
        let num_prims = self.usize_at_least(0, "mesh tree primitives")?;
        let bvh = match tag {
            tree::WIDE => MeshBvh::Wide(WideBvh {
                nodes: self.pods::<WIDE_NODE_BYTES, _>("mesh tree nodes", wide_node)?,
                prim_ids: Vec::new(),
                num_prims,
                repeats,
            }),
            tree::QUANTIZED => MeshBvh::Quantized(QuantizedBvh {
                nodes: self.elements::<QUANT_NODE_BYTES, _>("mesh tree nodes", quant_node)?,
                prim_ids: Vec::new(),
                num_prims,
                repeats,
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
        let left = (self.len - self.pos) as u64;
        if u64::from(count) * 22 > left {
            return Err(SceneFileError::Truncated {
                at: self.place("geometry count"),
                offset: self.pos,
                needed: u64::from(count) * 22,
                len: self.len,
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

/// Reads and checks the header of a file of `len` bytes from `source`: a reader positioned at
/// the payload, and the checksum the header holds.
fn open<S: Source>(
    source: S,
    len: usize,
    spans: Option<Vec<FieldSpan>>,
) -> Result<(Reader<S>, u32), SceneFileError> {
    let mut r = Reader {
        source,
        len,
        pos: 0,
        scene: None,
        geometry: None,
        spans,
    };
    let n = len.min(MAGIC.len());
    let head = r.take(n as u64, "magic")?;
    if head != &MAGIC[..n] {
        return Err(SceneFileError::BadMagic {
            found: head.to_vec(),
        });
    }
    if n < MAGIC.len() {
        return Err(SceneFileError::Truncated {
            at: r.place("magic"),
            offset: 0,
            needed: MAGIC.len() as u64,
            len,
        });
    }
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
    let found = (len - HEADER_BYTES) as u64;
    if found != expected {
        return Err(SceneFileError::PayloadLength { expected, found });
    }
    Ok((r, stored))
}

/// Decodes every scene of the file after the header.
fn decode<S: Source>(r: &mut Reader<S>) -> Result<Vec<RawScene>, SceneFileError> {
    let count = r.u32("scene count")?;
    if count == 0 {
        return Err(r.bad(
            "scene count",
            "0: a file holds at least the saved scene".into(),
        ));
    }
    // A scene takes at least 82 bytes (settings 61, geometry count 4, the top tree's two counts
    // 16, the mesh tree's kind 1): the capacity is what the bytes can hold, whatever the count.
    let mut scenes = Vec::with_capacity((count as usize).min(r.len / 82));
    for s in 0..count {
        scenes.push(r.scene(s)?);
    }
    if r.pos != r.len {
        r.scene = None;
        r.geometry = None;
        return Err(r.bad(
            "payload end",
            format!("{} bytes after the last scene", r.len - r.pos),
        ));
    }
    Ok(scenes)
}

/// The scenes of the file `bytes`, held whole: the header, then the payload's checksum, then the
/// decoding; with the fields' spans when `spans` is given.
fn decode_whole(
    bytes: &[u8],
    spans: Option<Vec<FieldSpan>>,
) -> Result<(Vec<RawScene>, Option<Vec<FieldSpan>>), SceneFileError> {
    let (mut r, stored) = open(Whole { rest: bytes }, bytes.len(), spans)?;
    let computed = checksum(&bytes[HEADER_BYTES..]);
    if computed != stored {
        return Err(SceneFileError::Checksum { stored, computed });
    }
    let scenes = decode(&mut r)?;
    Ok((scenes, r.spans))
}

/// A source read through once, with the payload's checksum computed on the way.
trait Checksummed: Source {
    /// The checksum so far, `None` before the payload.
    fn crc(&mut self) -> &mut Option<crc32fast::Hasher>;
}

impl<R: Read + Send> Checksummed for Stream<R> {
    fn crc(&mut self) -> &mut Option<crc32fast::Hasher> {
        &mut self.crc
    }
}

#[cfg(all(unix, feature = "parallel"))]
impl Checksummed for Positioned<'_> {
    fn crc(&mut self) -> &mut Option<crc32fast::Hasher> {
        &mut self.crc
    }
}

/// The scenes of the file of `len` bytes that `source` reads: the header, then the decoding with
/// the checksum computed on the way. When the decoding stops early (a damaged count, a bad tag),
/// the rest of the file is read through the checksum first, so that a damaged file is reported
/// as [`SceneFileError::Checksum`], as [`decode_whole`] reports it.
fn decode_checked<S: Checksummed>(source: S, len: usize) -> Result<Vec<RawScene>, SceneFileError> {
    let (mut r, stored) = open(source, len, None)?;
    *r.source.crc() = Some(crc32fast::Hasher::new());
    let decoded = decode(&mut r);
    if let Err(SceneFileError::Io(e)) = decoded {
        return Err(SceneFileError::Io(e));
    }
    let mut left = r.len - r.pos;
    while left > 0 {
        let n = left.min(S::PIECE);
        r.source.next(n)?;
        left -= n;
    }
    let computed = r.source.crc().take().map_or(0, crc32fast::Hasher::finalize);
    if computed != stored {
        return Err(SceneFileError::Checksum { stored, computed });
    }
    decoded
}

/// [`decode_checked`] on a stream.
fn decode_stream<R: Read + Send>(reader: R, len: usize) -> Result<Vec<RawScene>, SceneFileError> {
    decode_checked(
        Stream {
            inner: BufReader::with_capacity(64 << 10, reader),
            piece: Vec::new(),
            #[cfg(feature = "parallel")]
            ahead: Vec::new(),
            crc: None,
        },
        len,
    )
}

/// `len` as a `usize`: a file that cannot fit in memory is refused before any read.
fn in_memory(len: u64) -> Result<usize, SceneFileError> {
    usize::try_from(len).map_err(|_| {
        SceneFileError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("a scene file of {len} bytes does not fit in memory"),
        ))
    })
}

/// The fields of the scene file `bytes` and where each lies, in file order, as far as the file
/// decodes (the header checked, every field read; no geometry check or tree validation): for
/// tools that inspect or repair files, and tests that damage one field.
///
/// # Errors
/// What [`Scene::from_bytes`] reports for the header and the decoding.
pub fn layout(bytes: &[u8]) -> Result<Vec<FieldSpan>, SceneFileError> {
    let (_, spans) = decode_whole(bytes, Some(Vec::new()))?;
    Ok(spans.unwrap_or_default())
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
        let (raw, _) = decode_whole(bytes, None)?;
        assemble::scene(raw)
    }

    /// Reads a scene from a scene file of `len` bytes that `reader` holds (a file's size), a
    /// piece at a time: the file is never held whole in memory, and each piece is decoded
    /// straight into the scene's arrays (with feature `parallel`, a long array is read on a
    /// second thread a piece ahead of its decoding, hence `Send`). Accepts and refuses exactly
    /// the files [`Scene::from_bytes`] does, with the same errors; `reader` is read no further
    /// than `len` bytes.
    ///
    /// `len` bounds every count in the file before anything is allocated, so it must be the
    /// stream's true length, not one the stream announces.
    ///
    /// # Errors
    /// What [`Scene::from_bytes`] reports, and [`SceneFileError::Io`] when `reader` fails or
    /// ends before `len` bytes.
    pub fn from_reader(reader: impl Read + Send, len: u64) -> Result<Scene, SceneFileError> {
        assemble::scene(decode_stream(reader, in_memory(len)?)?)
    }

    /// [`Scene::load`]'s reading: with feature `parallel` on Unix, at positions, a long array's
    /// pieces read on all cores; elsewhere as a stream ([`Scene::from_reader`]).
    pub(super) fn from_file(file: std::fs::File, len: u64) -> Result<Scene, SceneFileError> {
        #[cfg(all(unix, feature = "parallel"))]
        {
            assemble::scene(decode_checked(Positioned::new(&file), in_memory(len)?)?)
        }
        #[cfg(not(all(unix, feature = "parallel")))]
        {
            Scene::from_reader(file, len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn reader(bytes: &[u8]) -> Reader<Whole<'_>> {
        Reader {
            source: Whole { rest: bytes },
            len: bytes.len(),
            pos: 0,
            scene: None,
            geometry: None,
            spans: None,
        }
    }

    /// An array of `n` elements of `E` random bytes (every float bit pattern, NaNs included),
    /// read both ways: straight into place, and decoded element by element (the definition,
    /// which big-endian hosts use). Both give the file's bytes, bit for bit.
    fn read_both_ways<const E: usize, T: bytemuck::Pod>(decode: fn(&[u8; E]) -> T) {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(E as u64);
        for n in [0usize, 1, 3, 1000] {
            let mut bytes = (n as u64).to_le_bytes().to_vec();
            bytes.extend((0..n * E).map(|_| rng.gen::<u8>()));
            let placed = reader(&bytes).pods::<E, T>("array", decode).unwrap();
            let decoded = reader(&bytes).elements::<E, T>("array", decode).unwrap();
            let placed: &[u8] = bytemuck::cast_slice(&placed);
            let decoded: &[u8] = bytemuck::cast_slice(&decoded);
            assert_eq!(placed, decoded, "{n} elements of {E} bytes");
            assert_eq!(placed, &bytes[8..]);
            // One byte short: refused either way.
            let short = &bytes[..bytes.len().max(9) - 1];
            if n > 0 {
                assert!(reader(short).pods::<E, T>("array", decode).is_err());
                assert!(reader(short).elements::<E, T>("array", decode).is_err());
            }
        }
    }

    /// A file read at positions that ends before the length it was opened with (a file cut
    /// while it is read) is an I/O error, inside a small field or inside a long array's pieces,
    /// never a panic or a short array.
    #[cfg(all(unix, feature = "parallel"))]
    #[test]
    fn a_file_shorter_than_its_length_is_an_io_error() {
        let vertices: Vec<Vec3> = (0..300_000).map(|i| Vec3::splat(i as f32)).collect();
        let mut builder = crate::SceneBuilder::new();
        builder.add_mesh(TriMesh::new(vertices, vec![[0, 1, 2]]));
        let bytes = builder.build().unwrap().to_bytes();
        let path = std::env::temp_dir().join(format!("raypick-short-{}.rpk", std::process::id()));
        for keep in [100, bytes.len() / 2, bytes.len() - 1] {
            std::fs::write(&path, &bytes[..keep]).unwrap();
            let file = std::fs::File::open(&path).unwrap();
            let err = decode_checked(Positioned::new(&file), bytes.len()).err();
            assert!(
                matches!(&err, Some(SceneFileError::Io(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof),
                "{keep} of {} bytes: {err:?}",
                bytes.len()
            );
        }
        std::fs::write(&path, &bytes).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        assert!(decode_checked(Positioned::new(&file), bytes.len()).is_ok());
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn plain_data_arrays_read_into_place_equal_their_decoding() {
        read_both_ways(u32_le);
        read_both_ways(f32_le);
        read_both_ways(vec3_le);
        read_both_ways(triangle_le);
        read_both_ways(binary_node);
        read_both_ways(wide_node);
    }
}
