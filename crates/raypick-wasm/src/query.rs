//! Ray queries: closest hit, any hit, all hits and crossing counts of one ray, and batches of
//! rays into columns; with the query options every one of them takes.
//!
//! ## Options
//! Every ray query takes `t_min, t_max, mask, cull, ranges` after the ray:
//! - `[t_min, t_max]`: the accepted range of `t` (in units of `dir`); a NaN or an empty range
//!   makes the ray invalid, and an invalid ray (NaN or infinite component, zero direction) is a
//!   miss, never an error.
//! - `mask`: a geometry is considered when `geometry.mask & mask != 0`.
//! - `cull` ([`Cull`]): 0 none, 1 back faces (the engine's culling: those whose winding normal
//!   `(v1-v0)×(v2-v0)` faces along the ray), 2 front faces (the others).
//! - `ranges`: 0, or a u32 buffer of `first, end, side` triples: only primitives whose id lies in
//!   some `[first, end)` are considered, each range with its own [`Side`] (0 both, 1 front only,
//!   2 back only). Primitive ids of every geometry are tested, so ranges are meant for scenes of
//!   one mesh: three.js's groups, draw range and per-group `material.side`.
//!
//! Back-face culling alone runs in the engine's kernel. Front-face culling and ranges are a
//! filter on each candidate hit (its normal against the ray's direction); a batch that needs the
//! filter casts its rays one at a time, with the same answers.

use glam::Vec3;
use raypick::geom::Culling;
use raypick::scene::HitFilter;
use raypick::{Crossing, Hit, InstancePath, QueryOptions, Ray, Scene};

use crate::buffers::check_out_len;
use crate::error::{count, status, AbiError};
use crate::out;
use crate::registry::{with_state, State};

/// Which faces a query skips.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cull {
    /// None (two-sided).
    None,
    /// Back faces (three.js `FrontSide`).
    Back,
    /// Front faces (three.js `BackSide`).
    Front,
}

/// Which faces of a primitive range count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Both (three.js `DoubleSide`).
    Both,
    /// Front faces only (three.js `FrontSide`).
    Front,
    /// Back faces only (three.js `BackSide`).
    Back,
}

/// Primitives `first..end` with the faces that count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    first: u32,
    end: u32,
    side: Side,
}

/// The options of one query, read from the ABI's arguments.
#[derive(Clone, Debug)]
pub struct Opts {
    t_min: f32,
    t_max: f32,
    mask: u32,
    cull: Cull,
    ranges: Option<Vec<Range>>,
}

impl Opts {
    /// Reads the options; `ranges` is 0 or a u32 buffer handle.
    pub fn read(
        s: &State,
        t_min: f32,
        t_max: f32,
        mask: u32,
        cull: u32,
        ranges: u32,
    ) -> Result<Self, AbiError> {
        let cull = match cull {
            0 => Cull::None,
            1 => Cull::Back,
            2 => Cull::Front,
            c => {
                return Err(AbiError::argument(
                    "cull",
                    format!("{c} is not 0 (none), 1 (back faces) or 2 (front faces)"),
                ))
            }
        };
        let ranges = match ranges {
            0 => None,
            h => Some(read_ranges(s.u32.get(h, "ranges")?)?),
        };
        Ok(Self {
            t_min,
            t_max,
            mask,
            cull,
            ranges,
        })
    }

    /// Options that consider everything: no culling, all masks, `[0, ∞)`.
    pub fn all() -> Self {
        Self {
            t_min: 0.0,
            t_max: f32::INFINITY,
            mask: u32::MAX,
            cull: Cull::None,
            ranges: None,
        }
    }

    /// The ray from `origin` along `dir` in these options' range.
    pub fn ray(&self, origin: Vec3, dir: Vec3) -> Ray {
        Ray {
            origin,
            dir,
            t_min: self.t_min,
            t_max: self.t_max,
        }
    }

    /// `true` when a hit must be filtered (front culling or ranges), which the engine's batch
    /// paths cannot do for a filter that depends on each ray's direction.
    fn needs_filter(&self) -> bool {
        self.cull == Cull::Front || self.ranges.is_some()
    }

    /// Whether `hit` of a ray along `dir` passes the front culling and the ranges.
    fn keeps(&self, hit: &Hit, dir: Vec3) -> bool {
        let facing = hit.normal.dot(dir);
        let side_ok = |side: Side| match side {
            Side::Both => true,
            Side::Front => facing < 0.0,
            Side::Back => facing > 0.0,
        };
        if self.cull == Cull::Front && !side_ok(Side::Back) {
            return false;
        }
        match &self.ranges {
            None => true,
            Some(ranges) => ranges
                .iter()
                .any(|r| r.first <= hit.prim && hit.prim < r.end && side_ok(r.side)),
        }
    }

    /// Runs `f` with the engine's options for a ray along `dir`.
    pub fn with_query<R>(&self, dir: Vec3, f: impl FnOnce(&QueryOptions) -> R) -> R {
        self.with_query_and(dir, None, f)
    }

    /// [`Opts::with_query`], also skipping the hits `extra` refuses.
    fn with_query_and<R>(
        &self,
        dir: Vec3,
        extra: Option<&HitFilter>,
        f: impl FnOnce(&QueryOptions) -> R,
    ) -> R {
        let culling = match self.cull {
            Cull::Back => Culling::Back,
            Cull::None | Cull::Front => Culling::None,
        };
        let own = self.needs_filter();
        let filter = |h: &Hit, path: &InstancePath| {
            (!own || self.keeps(h, dir)) && extra.is_none_or(|e| e(h, path))
        };
        let opts = QueryOptions {
            culling,
            mask: self.mask,
            filter: if own || extra.is_some() {
                Some(&filter)
            } else {
                None
            },
        };
        f(&opts)
    }
}

/// `first, end, side` triples.
fn read_ranges(data: &[u32]) -> Result<Vec<Range>, AbiError> {
    if !data.len().is_multiple_of(3) {
        return Err(AbiError::argument(
            "ranges",
            format!(
                "length {} is not a multiple of 3 (first, end, side per range)",
                data.len()
            ),
        ));
    }
    data.chunks_exact(3)
        .enumerate()
        .map(|(i, c)| {
            let side = match c[2] {
                0 => Side::Both,
                1 => Side::Front,
                2 => Side::Back,
                v => {
                    return Err(AbiError::argument(
                        "ranges",
                        format!("range {i}: side {v} is not 0 (both), 1 (front) or 2 (back)"),
                    ))
                }
            };
            Ok(Range {
                first: c[0],
                end: c[1],
                side,
            })
        })
        .collect()
}

/// The scene and options of a single-ray query.
fn single<R>(
    scene: u32,
    opts: (f32, f32, u32, u32, u32),
    f: impl FnOnce(&Scene, &Opts) -> Result<R, AbiError>,
) -> Result<R, AbiError> {
    with_state(|s| {
        let (t_min, t_max, mask, cull, ranges) = opts;
        let o = Opts::read(s, t_min, t_max, mask, cull, ranges)?;
        let scene = s.scenes.get(scene, "scene")?;
        out::clear();
        f(scene, &o)
    })
}

/// `rp_scene_intersect`: 1 and a hit record, or 0 for a miss.
#[allow(clippy::too_many_arguments)]
pub fn intersect(scene: u32, origin: Vec3, dir: Vec3, opts: (f32, f32, u32, u32, u32)) -> i32 {
    status(|| {
        single(scene, opts, |scene, o| {
            let hit = o.with_query(dir, |q| scene.intersect_path_with(&o.ray(origin, dir), q));
            Ok(match hit {
                Some((h, path)) => {
                    out::push_hit(&h, &path);
                    1
                }
                None => 0,
            })
        })
    })
}

/// `rp_scene_occluded`: 1 when anything is hit in range, else 0.
pub fn occluded(scene: u32, origin: Vec3, dir: Vec3, opts: (f32, f32, u32, u32, u32)) -> i32 {
    status(|| {
        single(scene, opts, |scene, o| {
            Ok(o.with_query(dir, |q| scene.occluded_with(&o.ray(origin, dir), q)) as i32)
        })
    })
}

/// `rp_scene_intersect_all`: the number of hits, their records in `t` order.
pub fn intersect_all(scene: u32, origin: Vec3, dir: Vec3, opts: (f32, f32, u32, u32, u32)) -> i32 {
    status(|| {
        single(scene, opts, |scene, o| {
            let hits = o.with_query(dir, |q| {
                scene.intersect_all_paths_with(&o.ray(origin, dir), q)
            });
            hits.iter().for_each(|(h, path)| out::push_hit(h, path));
            count(hits.len(), "hits")
        })
    })
}

/// Every hit of `ray` with closed edges (a point on an edge or vertex is a hit on every
/// triangle that has it, as three.js reports), sorted by `t`, ties by the closest-hit order: one
/// closest-hit walk per hit, each from the last hit's `t` and skipping the hits found so far (a
/// primitive is skipped at or before the `t` it was found at, so a sphere's exit still counts),
/// each with its instance path, which tells apart the copies of a primitive that nested
/// instances place.
pub fn all_closed(scene: &Scene, ray: &Ray, o: &Opts) -> Vec<(Hit, InstancePath)> {
    let mut found: Vec<(Hit, InstancePath)> = Vec::new();
    let mut r = *ray;
    loop {
        let seen = |h: &Hit, path: &InstancePath| {
            !found
                .iter()
                .any(|(f, fp)| (f.geom, f.prim, fp) == (h.geom, h.prim, path) && h.t <= f.t)
        };
        let Some((h, path)) =
            o.with_query_and(r.dir, Some(&seen), |q| scene.intersect_path_with(&r, q))
        else {
            return found;
        };
        r.t_min = h.t;
        found.push((h, path));
    }
}

/// `rp_scene_intersect_all_closed`: [`all_closed`]; the number of hits, their records in order.
pub fn intersect_all_closed(
    scene: u32,
    origin: Vec3,
    dir: Vec3,
    opts: (f32, f32, u32, u32, u32),
) -> i32 {
    status(|| {
        single(scene, opts, |scene, o| {
            let hits = all_closed(scene, &o.ray(origin, dir), o);
            hits.iter().for_each(|(h, path)| out::push_hit(h, path));
            count(hits.len(), "hits")
        })
    })
}

/// `rp_scene_count`: the number of crossings (half-open edges, as all hits).
pub fn count_hits(scene: u32, origin: Vec3, dir: Vec3, opts: (f32, f32, u32, u32, u32)) -> i32 {
    status(|| {
        single(scene, opts, |scene, o| {
            let n = o.with_query(dir, |q| {
                scene.count_intersections_with(&o.ray(origin, dir), q)
            });
            count(n, "hits")
        })
    })
}

/// Rays per chunk of a batch: the rays and answers of a chunk are converted at once, in memory
/// the size of a few pages, whatever the batch's size.
const CHUNK: usize = 1024;

/// The rays of a flat `ox, oy, oz, dx, dy, dz` buffer, `first..first + n`.
fn rays_of(data: &[f32], first: usize, n: usize, o: &Opts) -> Vec<Ray> {
    data[6 * first..6 * (first + n)]
        .chunks_exact(6)
        .map(|c| o.ray(Vec3::new(c[0], c[1], c[2]), Vec3::new(c[3], c[4], c[5])))
        .collect()
}

/// The number of rays in a flat buffer.
fn num_rays(data: &[f32]) -> Result<usize, AbiError> {
    if !data.len().is_multiple_of(6) {
        return Err(AbiError::argument(
            "rays",
            format!(
                "length {} is not a multiple of 6 (ox, oy, oz, dx, dy, dz per ray)",
                data.len()
            ),
        ));
    }
    Ok(data.len() / 6)
}

/// The closest hits of a chunk of rays.
fn closest_chunk(scene: &Scene, rays: &[Ray], o: &Opts, hits: &mut [Option<Hit>]) {
    if o.needs_filter() {
        for (r, h) in rays.iter().zip(hits.iter_mut()) {
            *h = o.with_query(r.dir, |q| scene.intersect_with(r, q));
        }
    } else {
        o.with_query(Vec3::ZERO, |q| scene.intersect_batch_into(rays, q, hits));
    }
}

/// `rp_scene_cast`: the closest hit of every ray of `rays` (f32, six per ray) into columns:
/// `out_f32` gets `t` (∞ for a miss), `u`, `v` (n each, in that order), `out_u32` gets `geom`,
/// `prim`, `instance` ([`out::NONE`] for a miss or no instance). Answers the number of hits.
pub fn cast(
    scene: u32,
    rays: u32,
    opts: (f32, f32, u32, u32, u32),
    out_f32: u32,
    out_u32: u32,
) -> i32 {
    status(|| {
        with_state(|s| {
            let (t_min, t_max, mask, cull, ranges) = opts;
            let o = Opts::read(s, t_min, t_max, mask, cull, ranges)?;
            let State {
                f32: floats,
                u32: ints,
                scenes,
                ..
            } = s;
            let scene = scenes.get(scene, "scene")?;
            let cols = ints.get_mut(out_u32, "outU32")?;
            floats.lend(out_f32, "outF32", |fcols, floats| {
                let data = floats.get(rays, "rays")?;
                let n = num_rays(data)?;
                check_out_len(fcols, 3 * n, "outF32")?;
                check_out_len(cols, 3 * n, "outU32")?;
                let mut hits = vec![None; CHUNK.min(n)];
                let mut found = 0;
                for first in (0..n).step_by(CHUNK) {
                    let m = CHUNK.min(n - first);
                    let chunk = rays_of(data, first, m, &o);
                    closest_chunk(scene, &chunk, &o, &mut hits[..m]);
                    for (k, h) in hits[..m].iter().enumerate() {
                        let i = first + k;
                        let (t, u, v, g, p, inst) = match h {
                            Some(h) => {
                                found += 1;
                                (
                                    h.t,
                                    h.u,
                                    h.v,
                                    h.geom,
                                    h.prim,
                                    h.instance.unwrap_or(out::NONE),
                                )
                            }
                            None => (f32::INFINITY, 0.0, 0.0, out::NONE, out::NONE, out::NONE),
                        };
                        (fcols[i], fcols[n + i], fcols[2 * n + i]) = (t, u, v);
                        (cols[i], cols[n + i], cols[2 * n + i]) = (g, p, inst);
                    }
                }
                count(found, "hits")
            })?
        })
    })
}

/// `rp_scene_occluded_rays`: for every ray of `rays`, 1 in byte buffer `out` when anything is
/// hit in range, else 0. Answers the number of occluded rays.
pub fn occluded_rays(scene: u32, rays: u32, opts: (f32, f32, u32, u32, u32), out_u8: u32) -> i32 {
    status(|| {
        with_state(|s| {
            let (t_min, t_max, mask, cull, ranges) = opts;
            let o = Opts::read(s, t_min, t_max, mask, cull, ranges)?;
            let State {
                f32: floats,
                u8: bytes,
                scenes,
                ..
            } = s;
            let scene = scenes.get(scene, "scene")?;
            let data = floats.get(rays, "rays")?;
            let n = num_rays(data)?;
            let flags = bytes.get_mut(out_u8, "out")?;
            check_out_len(flags, n, "out")?;
            let mut answers = vec![false; CHUNK.min(n)];
            for first in (0..n).step_by(CHUNK) {
                let m = CHUNK.min(n - first);
                let chunk = rays_of(data, first, m, &o);
                if o.needs_filter() {
                    for (r, a) in chunk.iter().zip(answers.iter_mut()) {
                        *a = o.with_query(r.dir, |q| scene.occluded_with(r, q));
                    }
                } else {
                    o.with_query(Vec3::ZERO, |q| {
                        scene.occluded_batch_into(&chunk, q, &mut answers[..m])
                    });
                }
                for (k, a) in answers[..m].iter().enumerate() {
                    flags[first + k] = u8::from(*a);
                }
            }
            count(flags[..n].iter().filter(|&&f| f != 0).count(), "hits")
        })
    })
}

/// Every hit of every ray of a chunk, appended to `hits` in ray order; `ends[k]` gets the end of
/// ray `k`'s hits in `hits`. Half-open edges take the engine's batch of crossings (no point or
/// normal computed); closed edges re-cast after each hit ([`all_closed`]).
fn all_chunk(
    scene: &Scene,
    rays: &[Ray],
    o: &Opts,
    closed: bool,
    hits: &mut Vec<Crossing>,
    ends: &mut Vec<usize>,
) {
    if closed {
        for r in rays {
            // The batch's records carry the top instance only, not the path.
            hits.extend(
                all_closed(scene, r, o)
                    .iter()
                    .map(|(h, _)| Crossing::from(h)),
            );
            ends.push(hits.len());
        }
    } else if o.needs_filter() {
        // Ranges filter per ray direction (see `Opts::with_query`).
        for r in rays {
            o.with_query(r.dir, |q| {
                scene.intersect_all_into(std::slice::from_ref(r), q, hits, ends)
            });
        }
    } else {
        o.with_query(Vec3::ZERO, |q| {
            scene.intersect_all_into(rays, q, hits, ends)
        });
    }
}

/// `rp_scene_intersect_all_rays`: every hit of every ray of `rays` (f32, six per ray), sorted by
/// `t` ray by ray, as `rp_scene_intersect_all` (`edges` 0) or `rp_scene_intersect_all_closed`
/// (`edges` 1) gives them one ray at a time, into the out area as columns: u32 `offsets` (n + 1:
/// ray `i`'s hits are `offsets[i]..offsets[i + 1]`), then `geom`, `prim`, `instance`
/// ([`out::NONE`] for none), m each; f32 `t`, `u`, `v`, m each. Answers the number of hits m.
pub fn intersect_all_rays(
    scene: u32,
    rays: u32,
    opts: (f32, f32, u32, u32, u32),
    edges: u32,
) -> i32 {
    status(|| {
        with_state(|s| {
            let (t_min, t_max, mask, cull, ranges) = opts;
            let o = Opts::read(s, t_min, t_max, mask, cull, ranges)?;
            let closed = match edges {
                0 => false,
                1 => true,
                e => {
                    return Err(AbiError::argument(
                        "edges",
                        format!("{e} is not 0 (half-open) or 1 (closed)"),
                    ))
                }
            };
            let scene = s.scenes.get(scene, "scene")?;
            let data = s.f32.get(rays, "rays")?;
            let n = num_rays(data)?;
            let mut hits = Vec::new();
            let mut ends = Vec::with_capacity(n);
            for first in (0..n).step_by(CHUNK) {
                let m = CHUNK.min(n - first);
                let chunk = rays_of(data, first, m, &o);
                all_chunk(scene, &chunk, &o, closed, &mut hits, &mut ends);
            }
            let total = count(hits.len(), "hits")?;
            u32::try_from(hits.len())
                .map_err(|_| AbiError::argument("hits", "more than 2^32 hits"))?;
            out::clear();
            let m = hits.len();
            // The columns filled in one pass over the hits.
            let mut ids = vec![0u32; n + 1 + 3 * m];
            let mut values = vec![0f32; 3 * m];
            for (slot, &e) in ids[1..=n].iter_mut().zip(&ends) {
                *slot = e as u32;
            }
            let (geom, rest) = ids[n + 1..].split_at_mut(m);
            let (prim, instance) = rest.split_at_mut(m);
            let (t, rest) = values.split_at_mut(m);
            let (u, v) = rest.split_at_mut(m);
            for (k, h) in hits.iter().enumerate() {
                geom[k] = h.geom;
                prim[k] = h.prim;
                instance[k] = h.instance.unwrap_or(out::NONE);
                t[k] = h.t;
                u[k] = h.u;
                v[k] = h.v;
            }
            drop(hits);
            out::push_u32(&ids);
            drop(ids);
            out::push_f32(&values);
            Ok(total)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use raypick::{SceneBuilder, TriMesh};

    /// Two unit quads facing +z at z = 0 (prims 0, 1) and z = -1 (prims 2, 3).
    fn two_quads() -> Scene {
        let mut v = Vec::new();
        let mut t = Vec::new();
        for z in [0.0, -1.0] {
            let b = v.len() as u32;
            v.extend([
                Vec3::new(-1.0, -1.0, z),
                Vec3::new(1.0, -1.0, z),
                Vec3::new(1.0, 1.0, z),
                Vec3::new(-1.0, 1.0, z),
            ]);
            t.extend([[b, b + 1, b + 2], [b, b + 2, b + 3]]);
        }
        let mut builder = SceneBuilder::new();
        builder.add_mesh(TriMesh::new(v, t));
        builder.build().unwrap()
    }

    fn closest(scene: &Scene, o: &Opts, origin: Vec3, dir: Vec3) -> Option<u32> {
        o.with_query(dir, |q| scene.intersect_with(&o.ray(origin, dir), q))
            .map(|h| h.prim)
    }

    #[test]
    fn culling_picks_the_faces_three_js_would() {
        let scene = two_quads();
        let p = Vec3::new(0.5, -0.5, 1.0);
        let (down, up) = (Vec3::NEG_Z, Vec3::Z);
        let cull = |c| Opts {
            cull: c,
            ..Opts::all()
        };
        // From +z the quads are front faces.
        assert_eq!(closest(&scene, &cull(Cull::None), p, down), Some(0));
        assert_eq!(closest(&scene, &cull(Cull::Back), p, down), Some(0));
        assert_eq!(closest(&scene, &cull(Cull::Front), p, down), None);
        // From below they are back faces.
        let q = Vec3::new(0.5, -0.5, -2.0);
        assert_eq!(closest(&scene, &cull(Cull::Back), q, up), None);
        assert_eq!(closest(&scene, &cull(Cull::Front), q, up), Some(2));
    }

    #[test]
    fn ranges_keep_their_primitives_and_sides() {
        let scene = two_quads();
        let p = Vec3::new(0.5, -0.5, 1.0);
        let with = |ranges: Vec<Range>| Opts {
            ranges: Some(ranges),
            ..Opts::all()
        };
        let r = |first, end, side| Range { first, end, side };
        assert_eq!(
            closest(&scene, &with(vec![r(2, 4, Side::Both)]), p, Vec3::NEG_Z),
            Some(2)
        );
        assert_eq!(
            closest(
                &scene,
                &with(vec![r(0, 2, Side::Back), r(2, 4, Side::Front)]),
                p,
                Vec3::NEG_Z
            ),
            Some(2)
        );
        assert_eq!(closest(&scene, &with(vec![]), p, Vec3::NEG_Z), None);
        assert!(read_ranges(&[0, 1, 3]).is_err());
        assert!(read_ranges(&[0, 1]).is_err());
    }

    #[test]
    fn closed_edges_report_every_triangle_at_a_vertex() {
        let scene = two_quads();
        // Down through the middle of the diagonal each quad's triangles share: both triangles.
        let ray = Ray::new(Vec3::new(0.0, 0.0, 1.0), Vec3::NEG_Z);
        let closed: Vec<(u32, f32)> = all_closed(&scene, &ray, &Opts::all())
            .iter()
            .map(|(h, _)| (h.prim, h.t))
            .collect();
        assert_eq!(closed, [(0, 1.0), (1, 1.0), (2, 2.0), (3, 2.0)]);
        // Half-open edges give one crossing per surface.
        assert_eq!(scene.intersect_all(&ray).len(), 2);
        // A sphere's two crossings are both reported.
        let mut b = SceneBuilder::new();
        b.add_spheres(raypick::Spheres::new(vec![Vec3::ZERO], vec![1.0]));
        let ball = b.build().unwrap();
        let r = Ray::new(Vec3::new(0.0, 0.0, 5.0), Vec3::NEG_Z);
        let ts: Vec<f32> = all_closed(&ball, &r, &Opts::all())
            .iter()
            .map(|(h, _)| h.t)
            .collect();
        assert_eq!(ts, [4.0, 6.0]);
        let front = Opts {
            cull: Cull::Front,
            ..Opts::all()
        };
        let ts: Vec<f32> = all_closed(&ball, &r, &front)
            .iter()
            .map(|(h, _)| h.t)
            .collect();
        assert_eq!(ts, [6.0]);
    }

    #[test]
    fn batches_equal_single_rays() {
        let scene = two_quads();
        let rays: Vec<Ray> = (0..50)
            .map(|i| {
                let x = -1.5 + 0.06 * i as f32;
                Ray::new(Vec3::new(x, 0.3, 2.0), Vec3::new(0.1, -0.05, -1.0))
            })
            .collect();
        for o in [
            Opts::all(),
            Opts {
                cull: Cull::Front,
                ..Opts::all()
            },
        ] {
            let mut hits = vec![None; rays.len()];
            closest_chunk(&scene, &rays, &o, &mut hits);
            for (r, h) in rays.iter().zip(&hits) {
                let single = o.with_query(r.dir, |q| scene.intersect_with(r, q));
                assert_eq!(*h, single);
            }
        }
    }

    #[test]
    fn all_hit_batches_equal_single_rays() {
        let scene = two_quads();
        let rays: Vec<Ray> = (0..40)
            .map(|i| {
                let x = -1.5 + 0.075 * i as f32;
                Ray::new(Vec3::new(x, 0.0, 2.0), Vec3::new(0.05, 0.0, -1.0))
            })
            .collect();
        for closed in [false, true] {
            let (mut hits, mut ends) = (Vec::new(), Vec::new());
            all_chunk(&scene, &rays, &Opts::all(), closed, &mut hits, &mut ends);
            let mut start = 0;
            for (r, &end) in rays.iter().zip(&ends) {
                let single: Vec<Crossing> = if closed {
                    all_closed(&scene, r, &Opts::all())
                        .iter()
                        .map(|(h, _)| Crossing::from(h))
                        .collect()
                } else {
                    scene.intersect_all(r).iter().map(Crossing::from).collect()
                };
                assert_eq!(hits[start..end], single[..]);
                start = end;
            }
            assert!(hits.len() > rays.len(), "most rays cross both quads");
        }
    }
}
