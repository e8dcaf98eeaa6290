//! Batches in scenes whose mesh tree shares the top level with other items (instances, spheres),
//! or of a few instances: the rays of a group keep their collectors across passes, so that each
//! structure is walked with the fast batch walks ([`Scene::two_passes`]).

use glam::Affine3A;

use super::hit::PathRecord;
use super::query::{ctx, Any, Closest};
use super::traverse::{Collector, Ctx};
use super::{Accel, Geometry, MeshAccel, QueryOptions, Scene, TopItem};
use crate::{Aabb, Ray};

/// The most instances a two-pass batch walks as streams ([`Scene::streams`]); a scene with more
/// walks each ray through its top-level tree instead. Streams are walked in the scene's order,
/// not nearest first: a ray walks each instance it reaches before the nearest hit can prune the
/// others, which the per-ray walk of the top-level tree avoids. That loss grows with the number
/// of instances a ray passes through; up to eight, the interleaved walk's gain outweighs it (a
/// truck with two instanced wheels casts 1.4 times as fast streamed), while a glTF engine of
/// 52 instanced, interpenetrating parts casts at under half the speed streamed.
const MAX_STREAMS: usize = 8;

/// An instance of a scene of meshes, walked by a two-pass batch as a stream of rays moved into
/// its space ([`Scene::two_passes`]).
struct Stream<'a, P> {
    /// Its geometry id.
    id: u32,
    /// Its (padded) box in the scene's space.
    bounds: Aabb,
    object_from_world: Affine3A,
    /// The placed scene's mesh tree.
    meshes: &'a MeshAccel,
    /// The query's context inside the instance.
    ctx: Ctx<P>,
}

/// What a two-pass batch walks before the per-ray pass ([`Scene::passes`]).
pub(super) struct Passes<'a, P> {
    /// The mesh tree, when it shares the top level with other items.
    meshes: Option<&'a MeshAccel>,
    /// The instances walked as streams.
    streams: Vec<Stream<'a, P>>,
}

/// Rays per group of a two-pass batch ([`Scene::two_passes`]): their collectors, kept between the
/// passes, stay in the L1 cache.
const TWO_PASS_GROUP: usize = 256;

/// What a two-pass batch ([`Scene::two_passes`]) needs of a collector beyond [`Collector`]: to
/// start a walk bounded by another collector's `t_max`, and to take over that walk's answer.
pub(super) trait BatchCollector: Collector {
    /// Hits beyond `t_max` no longer matter.
    fn limit(&mut self, t_max: f32);
    /// Takes `other`'s answer where it is better (its hits passed the filter already).
    fn merge(&mut self, other: Self);
}

impl<P: PathRecord> BatchCollector for Closest<'_, P> {
    #[inline]
    fn limit(&mut self, t_max: f32) {
        self.t_max = self.t_max.min(t_max);
    }
    #[inline]
    fn merge(&mut self, other: Self) {
        if let Some(hit) = other.best {
            let better = match &self.best {
                Some(best) => hit.before(best),
                None => hit.t <= self.t_max,
            };
            if better {
                self.best = Some(hit);
                self.t_max = hit.t;
            }
        }
    }
}

impl<P: PathRecord> BatchCollector for Any<'_, P> {
    #[inline]
    fn limit(&mut self, t_max: f32) {
        self.t_max = self.t_max.min(t_max);
    }
    #[inline]
    fn merge(&mut self, other: Self) {
        self.found |= other.found;
    }
}

impl Scene {
    /// A batch in a scene of meshes and other top-level items (instances, spheres), or of a few
    /// instances, in passes over groups of [`TWO_PASS_GROUP`] rays, each ray with its own
    /// collector `col(ray)` kept between them:
    /// 1. the mesh tree (when there is one), with the batch's fast walks (packets for coherent groups, the
    ///    interleaved walk for the others), as in a scene of meshes alone;
    /// 2. each instance of a scene of meshes ([`Stream`], when there are at most
    ///    [`MAX_STREAMS`]): the group's rays that reach its box within their current `t_max`,
    ///    moved into its space together and walked with the interleaved walk, each bounded by
    ///    its collector's `t_max` and merged into it;
    /// 3. every other item, one ray at a time ([`Scene::visit_others`]), pruned by what the
    ///    passes before found (an any-hit ray that found one skips it).
    ///
    /// Then `answer(ray, collector, &mut out[i])`. The same answers as one walk over everything:
    /// a collector keeps the best hit whatever the order of its offers (ties go to the smallest
    /// ids), and a ray that misses an instance's box misses everything inside it.
    pub(super) fn two_passes<'a, C: BatchCollector + 'a, T>(
        &'a self,
        Passes { meshes, streams }: Passes<'a, C::Path>,
        rays: &'a [Ray],
        out: &mut [T],
        opts: &QueryOptions<'a>,
        col: impl Fn(&'a Ray) -> C,
        answer: impl Fn(&Ray, &C, &mut T),
    ) {
        let ctx = ctx::<C::Path>(opts);
        let mut streamed = vec![
            false;
            if streams.is_empty() {
                0
            } else {
                self.geometries.len()
            }
        ];
        for stream in &streams {
            streamed[stream.id as usize] = true;
        }
        let group = TWO_PASS_GROUP.min(rays.len());
        let mut cols: Vec<C> = Vec::with_capacity(group);
        let (mut picked, mut rays_object) = (Vec::with_capacity(group), Vec::with_capacity(group));
        let mut found: Vec<Option<C>> = Vec::with_capacity(group);
        for (rays, out) in rays
            .chunks(TWO_PASS_GROUP)
            .zip(out.chunks_mut(TWO_PASS_GROUP))
        {
            cols.clear();
            cols.extend(rays.iter().map(&col));
            if let Some(meshes) = meshes {
                self.each_ray(
                    rays,
                    &mut cols,
                    true,
                    // A group that misses the scene's box keeps its fresh collectors.
                    &|_| {},
                    &|rays, cols| meshes.visit_each(rays, cols, &ctx, &col, |_, c, slot| *slot = c),
                    &|rays, p, active, cols| self.visit_packet(rays, p, active, &ctx, cols),
                );
            }
            for stream in &streams {
                picked.clear();
                rays_object.clear();
                for (i, (ray, c)) in rays.iter().zip(&cols).enumerate() {
                    let reaches = ray.is_valid()
                        && !c.done()
                        && stream
                            .bounds
                            .intersect_slabs(ray.origin, ray.dir.recip(), ray.t_min, c.t_max())
                            .is_some();
                    if reaches {
                        picked.push(i);
                        // As `visit_geometry` moves a ray into an instance, bit for bit.
                        rays_object.push(Ray {
                            origin: stream.object_from_world.transform_point3(ray.origin),
                            dir: stream.object_from_world.transform_vector3(ray.dir),
                            ..*ray
                        });
                    }
                }
                if picked.is_empty() {
                    continue;
                }
                found.clear();
                found.resize_with(picked.len(), || None);
                stream.meshes.visit_each_indexed(
                    &rays_object,
                    &mut found,
                    &stream.ctx,
                    |k| {
                        let i = picked[k];
                        let mut c = col(&rays[i]);
                        c.limit(cols[i].t_max());
                        c
                    },
                    |_, c, slot| *slot = Some(c),
                );
                for (&i, f) in picked.iter().zip(found.drain(..)) {
                    if let Some(f) = f {
                        cols[i].merge(f);
                    }
                }
            }
            for ((ray, c), o) in rays.iter().zip(&mut cols).zip(out) {
                if ray.is_valid() && !c.done() {
                    let _ = self.visit_others(ray, &ctx, c, &streamed);
                }
                answer(ray, c, o);
            }
        }
    }

    /// How a batch walks this scene in passes ([`Scene::two_passes`]): the mesh tree when it
    /// shares the top level with other items, and the instances to stream; `None` when neither
    /// applies (a scene of meshes alone, or of many instances) and the batch takes the plain walk.
    pub(super) fn passes<P: PathRecord>(&self, ctx: &Ctx<P>) -> Option<Passes<'_, P>> {
        let meshes = self.meshes_among_others(ctx);
        let streams = if self.has_instances() {
            self.streams(ctx)
        } else {
            Vec::new()
        };
        (meshes.is_some() || !streams.is_empty()).then_some(Passes { meshes, streams })
    }

    /// The instances a two-pass batch walks as streams: those of a scene of meshes alone that
    /// `ctx`'s mask lets through, when there are at most [`MAX_STREAMS`] of them (each costs
    /// every ray of a group a box test).
    fn streams<P: PathRecord>(&self, ctx: &Ctx<P>) -> Vec<Stream<'_, P>> {
        let mut streams = Vec::new();
        for (&item, &bounds) in self.top_items.iter().zip(&self.top_boxes) {
            let TopItem::Geometry(id) = item else {
                continue;
            };
            let (Geometry::Instance(inst), Accel::Instance(a)) =
                (&self.geometries[id as usize], &self.accels[id as usize])
            else {
                continue;
            };
            if inst.mask & ctx.mask == 0 {
                continue;
            }
            let inner = Ctx {
                path: ctx.path.entered(id),
                mirrored: ctx.mirrored ^ a.mirrored,
                ..*ctx
            };
            if let Some(meshes) = inst.scene.only_meshes(&inner) {
                if streams.len() == MAX_STREAMS {
                    return Vec::new();
                }
                streams.push(Stream {
                    id,
                    bounds,
                    object_from_world: a.object_from_world,
                    meshes,
                    ctx: inner,
                });
            }
        }
        streams
    }
}
