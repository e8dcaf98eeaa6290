//! The walk shared by every query: top-level BVH → geometry → (instance → placed scene) → mesh or
//! sphere BVH → kernel, feeding candidate hits to a [`Collector`]. The same walk without BVHs (every
//! geometry, every primitive, same kernels on the same data) is the brute-force reference.

use std::ops::{ControlFlow, Range};

use glam::Vec3;

use super::hit::{PathRecord, RawHit};
use super::MeshBvh;
use super::{Accel, Geometry, MeshAccel, Scene, Spheres, SpheresAccel, TopItem};
use crate::bvh::wide::{Order, RayRun, Traverse, WideRay, PACKET};
use crate::bvh::BvhRay;
use crate::geom::sphere::sphere_quadratic;
use crate::geom::triangle::{Culling, EdgeRule, TriHit, WatertightRay};
use crate::simd::{
    tri_candidates, tri_hits, tri_hits_rows, tri_rows, HitRay, PacketBoxRay, ShearRay, Tri4,
    TriHits, LANES,
};
use crate::Ray;

/// Whether to use the BVHs or test every primitive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Bvh,
    BruteForce,
}

/// Receives candidate hits.
pub(crate) trait Collector {
    /// What the walk keeps of the instances a hit was reached through ([`PathRecord`]).
    type Path: PathRecord;
    /// Edge rule for triangles.
    const EDGES: EdgeRule;
    /// The order the walk takes hit children in: nearest first for a closest-hit query, whose
    /// `t_max` shrinks with each hit and prunes the rest of the walk; the node's order for the
    /// others (any hit, all hits, counts), which is cheaper ([`Order`]).
    const ORDER: Order;
    /// Hits beyond this `t` cannot matter any more.
    fn t_max(&self) -> f32;
    /// A candidate; `Break` stops the walk.
    fn offer(&mut self, hit: RawHit<Self::Path>) -> ControlFlow<()>;
    /// Nothing more can change the answer (an any-hit query that found one): a walk that
    /// continues the query elsewhere need not start.
    #[inline]
    fn done(&self) -> bool {
        false
    }
}

/// Per-query state that changes when entering an instance; `P` is what the walk keeps of the
/// instances entered ([`Collector::Path`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ctx<P> {
    pub culling: Culling,
    pub mask: u32,
    /// The instances entered so far, outermost first.
    pub path: P,
    /// An odd number of the transforms entered so far mirror.
    pub mirrored: bool,
}

impl Scene {
    /// Walks the scene with `ray` (in this scene's space).
    pub(crate) fn visit<C: Collector>(
        &self,
        ray: &Ray,
        ctx: &Ctx<C::Path>,
        mode: Mode,
        col: &mut C,
    ) -> ControlFlow<()> {
        match mode {
            Mode::BruteForce => {
                if let Some(m) = &self.meshes {
                    m.visit(ray, ctx, mode, col)?;
                }
                for id in 0..self.geometries.len() {
                    self.visit_geometry(id, ray, ctx, mode, col)?;
                }
                ControlFlow::Continue(())
            }
            Mode::Bvh if self.top.nodes().len() == 1 => {
                // A single top-level leaf (e.g. only meshes): skip the box test, each item's own
                // BVH tests its root box anyway.
                if let Some(m) = self.only_meshes(ctx) {
                    // Only meshes, the commonest scene: straight to their BVH, without the
                    // general path and its match on the item's kind.
                    return m.visit(ray, ctx, mode, col);
                }
                for &item in &self.top_items {
                    self.visit_item(item, ray, ctx, mode, col)?;
                }
                ControlFlow::Continue(())
            }
            Mode::Bvh => {
                let t_max = col.t_max();
                self.top.traverse(&BvhRay::new(ray), t_max, |range, t_max| {
                    for i in range {
                        let item = self.top_items[self.top.prim_ids()[i] as usize];
                        self.visit_item(item, ray, ctx, mode, col)?;
                    }
                    *t_max = col.t_max();
                    ControlFlow::Continue(())
                })
            }
        }
    }

    /// [`Scene::visit`] (BVH mode) over every top-level item but the mesh tree: the second pass
    /// of a batch in a scene of meshes and other geometries, after the mesh tree's own batch walk
    /// has offered its hits to `col` (whose `t_max` then prunes this walk).
    /// Geometries whose `streamed[id]` is set are left out too (the batch walked them already).
    pub(crate) fn visit_others<C: Collector>(
        &self,
        ray: &Ray,
        ctx: &Ctx<C::Path>,
        col: &mut C,
        streamed: &[bool],
    ) -> ControlFlow<()> {
        let other = |item: TopItem| match item {
            TopItem::Meshes => false,
            TopItem::Geometry(id) => !streamed.get(id as usize).copied().unwrap_or(false),
        };
        if self.top.nodes().len() == 1 {
            for &item in &self.top_items {
                if other(item) {
                    self.visit_item(item, ray, ctx, Mode::Bvh, col)?;
                }
            }
            return ControlFlow::Continue(());
        }
        let t_max = col.t_max();
        self.top.traverse(&BvhRay::new(ray), t_max, |range, t_max| {
            for i in range {
                let item = self.top_items[self.top.prim_ids()[i] as usize];
                if other(item) {
                    self.visit_item(item, ray, ctx, Mode::Bvh, col)?;
                }
            }
            *t_max = col.t_max();
            ControlFlow::Continue(())
        })
    }

    /// The scene's mesh tree and other top-level items beside it (instances, spheres), when
    /// `ctx`'s mask lets some mesh through: a batch then walks the mesh tree with its fast walks
    /// (packets, interleaved runs) first and the other items second ([`Scene::visit_others`]).
    #[inline]
    pub(super) fn meshes_among_others<P>(&self, ctx: &Ctx<P>) -> Option<&MeshAccel> {
        let others = self.top_items.iter().any(|&item| item != TopItem::Meshes);
        match &self.meshes {
            Some(m) if others && m.parts.mask_any & ctx.mask != 0 => Some(m),
            _ => None,
        }
    }

    /// The scene's mesh tree when the scene holds nothing else (a loaded model, OBJ groups) and
    /// `ctx`'s mask lets some mesh through. `None` otherwise, and the general walk takes over.
    #[inline]
    pub(super) fn only_meshes<P>(&self, ctx: &Ctx<P>) -> Option<&MeshAccel> {
        match (&self.top_items[..], self.top.nodes().len(), &self.meshes) {
            (&[TopItem::Meshes], 1, Some(m)) if m.parts.mask_any & ctx.mask != 0 => Some(m),
            _ => None,
        }
    }

    fn visit_item<C: Collector>(
        &self,
        item: TopItem,
        ray: &Ray,
        ctx: &Ctx<C::Path>,
        mode: Mode,
        col: &mut C,
    ) -> ControlFlow<()> {
        match (item, &self.meshes) {
            (TopItem::Meshes, Some(m)) => m.visit(ray, ctx, mode, col),
            (TopItem::Geometry(id), _) => self.visit_geometry(id as usize, ray, ctx, mode, col),
            // The builder lists the meshes' item only when there is a tree.
            (TopItem::Meshes, None) => ControlFlow::Continue(()),
        }
    }

    fn visit_geometry<C: Collector>(
        &self,
        id: usize,
        ray: &Ray,
        ctx: &Ctx<C::Path>,
        mode: Mode,
        col: &mut C,
    ) -> ControlFlow<()> {
        let geom = &self.geometries[id];
        if geom.mask() & ctx.mask == 0 {
            return ControlFlow::Continue(());
        }
        match (geom, &self.accels[id]) {
            (Geometry::Spheres(s), Accel::Spheres(a)) => a.visit(s, ray, id as u32, ctx, mode, col),
            (Geometry::Instance(inst), Accel::Instance(a)) => {
                let ray_object = Ray {
                    origin: a.object_from_world.transform_point3(ray.origin),
                    dir: a.object_from_world.transform_vector3(ray.dir),
                    ..*ray
                };
                let inner = Ctx {
                    path: ctx.path.entered(id as u32),
                    mirrored: ctx.mirrored ^ a.mirrored,
                    ..*ctx
                };
                inst.scene.visit(&ray_object, &inner, mode, col)
            }
            // Meshes are walked through the scene's mesh tree; the builder pairs each other
            // geometry with its own kind of accel.
            _ => ControlFlow::Continue(()),
        }
    }
}

impl Scene {
    /// `true` when [`Scene::visit_packet`] answers for this scene: meshes only (no instances, no
    /// spheres), whose one tree the packet walks: the common picking scene.
    pub(crate) fn takes_packets(&self) -> bool {
        self.top_items.iter().all(|&item| item == TopItem::Meshes)
    }

    /// [`Scene::visit`] (BVH mode) over the mesh tree for the rays of `active` together, each with
    /// its own collector: the whole walk in scenes that [`Scene::takes_packets`], the first pass
    /// in scenes of meshes among other items ([`Scene::meshes_among_others`]).
    pub(crate) fn visit_packet<C: Collector>(
        &self,
        rays: &[Ray; PACKET],
        packet: &PacketBoxRay,
        mut active: u32,
        ctx: &Ctx<C::Path>,
        cols: &mut [C; PACKET],
    ) {
        if let Some(m) = &self.meshes {
            if m.parts.mask_any & ctx.mask != 0 {
                active &= !m.visit_packet(rays, packet, active, ctx, cols);
            }
        }
        let _ = active;
    }
}

impl MeshAccel {
    fn visit<C: Collector>(
        &self,
        ray: &Ray,
        ctx: &Ctx<C::Path>,
        mode: Mode,
        col: &mut C,
    ) -> ControlFlow<()> {
        if self.parts.mask_any & ctx.mask == 0 {
            return ControlFlow::Continue(());
        }
        let hits = LeafHits::new(&self.parts, ctx);
        match mode {
            Mode::BruteForce => {
                let wray = WatertightRay::new(&self.local(ray));
                for (slot, global) in self.blocks.iter().flat_map(|b| b.ids).enumerate() {
                    if global == MeshBvh::PADDING || !self.passes(global, &hits) {
                        continue;
                    }
                    if let Some(h) = self.test(&wray, slot, &hits, C::EDGES) {
                        col.offer(self.raw_hit(slot, h, &hits))?;
                    }
                }
                ControlFlow::Continue(())
            }
            Mode::Bvh => {
                let (wray, t_max, mut state) = self.start(ray, col);
                self.bvh.traverse_prefetching(
                    &wray,
                    C::ORDER,
                    t_max,
                    // Inlined into the traversal loop, so it is compiled for the same CPU features
                    // (see `Traverse for WideBvh<8>`).
                    #[inline(always)]
                    |range, t_max| self.leaf_of(&mut state, range, t_max, &hits),
                    |first| self.leaf_data(first),
                )
            }
        }
    }

    /// [`MeshAccel::visit`] (BVH mode) for each ray of `rays` with its own collector, `col(ray)`;
    /// then `answer(&rays[i], collector, &mut out[i])`. The loop over the rays runs inside the
    /// compiled traversal ([`Traverse::traverse_each`]), which saves the calls and set-ups of a
    /// walk per ray.
    pub(super) fn visit_each<'r, C: Collector, T>(
        &self,
        rays: &'r [Ray],
        out: &mut [T],
        ctx: &Ctx<C::Path>,
        col: impl Fn(&'r Ray) -> C,
        answer: impl Fn(&Ray, C, &mut T),
    ) {
        self.visit_each_indexed(rays, out, ctx, |i| col(&rays[i]), answer);
    }

    /// [`MeshAccel::visit_each`] with the collector of ray `i` made by `col(i)`: for rays that
    /// were moved into another space (an instance's), whose collector belongs to the original.
    pub(super) fn visit_each_indexed<C: Collector, T>(
        &self,
        rays: &[Ray],
        out: &mut [T],
        ctx: &Ctx<C::Path>,
        col: impl Fn(usize) -> C,
        answer: impl Fn(&Ray, C, &mut T),
    ) {
        let mut run = MeshRun {
            mesh: self,
            hits: LeafHits::new(&self.parts, ctx),
            rays: &rays[..out.len()],
            out,
            col,
            answer,
        };
        self.bvh.traverse_each(run.rays.len(), &mut run);
    }

    /// `ray` (in the scene's space) in the mesh's frame, whose origin is the mesh's centre.
    #[inline(always)]
    fn local(&self, ray: &Ray) -> Ray {
        Ray {
            origin: ray.origin - self.offset,
            ..*ray
        }
    }

    /// The walk of `ray` (in the scene's space) through this mesh: the prepared ray, its bound and
    /// the state its leaves need.
    #[inline(always)]
    fn start<C: Collector>(&self, ray: &Ray, col: C) -> (WideRay, f32, MeshRay<C>) {
        let ray_local = self.local(ray);
        let wray = WideRay::new(&ray_local);
        let t_max = col.t_max();
        (
            wray,
            t_max,
            MeshRay {
                col,
                ray_local,
                hit_ray: None,
            },
        )
    }

    /// The leaf at positions `range` for the walk of `state` ([`MeshAccel::leaf`]), setting up
    /// the kernel's ray at the first leaf.
    #[inline(always)]
    fn leaf_of<C: Collector>(
        &self,
        state: &mut MeshRay<C>,
        range: Range<usize>,
        t_max: &mut f32,
        hits: &LeafHits<C::Path>,
    ) -> ControlFlow<()> {
        let ray_local = &state.ray_local;
        let hray = state.hit_ray.get_or_insert_with(|| {
            // `black_box` keeps the compiler from hoisting the set-up out of the walk's loops,
            // where it would run for every ray, leaf or not, though most rays that miss the
            // mesh's box never reach a leaf.
            HitRay::of(
                &WatertightRay::new(std::hint::black_box(ray_local)),
                hits.kernel_culling,
            )
        });
        self.leaf(range, ray_local, hray, t_max, &mut state.col, hits)
    }

    /// The triangles of the leaf at positions `range` of the BVH order for one ray: a leaf is whole
    /// blocks of four (it starts at a multiple of [`LANES`]); the SIMD test ([`tri_hits`]) decides
    /// every triangle whose edge functions are all non-zero, bit for bit as the scalar kernel
    /// would, and the kernel the rest (an edge function rounded to 0, or a mirroring instance's
    /// culling, whose second look only the kernel's call site has: there the SIMD pass is the
    /// prefilter [`tri_candidates`]); the hits within `t_max` go to `col`.
    /// Always inlined, so that the SIMD test is compiled into the traversal loop with its CPU
    /// features (a call per leaf would also cost a `vzeroupper` and the spill of the loop's vector
    /// registers); the kernel, needed only for undecided lanes, is a call
    /// ([`MeshAccel::test_undecided`]).
    #[inline(always)]
    fn leaf<C: Collector>(
        &self,
        range: Range<usize>,
        ray_local: &Ray,
        hray: &HitRay,
        t_max: &mut f32,
        col: &mut C,
        hits: &LeafHits<C::Path>,
    ) -> ControlFlow<()> {
        // Two blocks per pass (one 8-wide AVX pass where the CPU has it). A leaf is never empty,
        // and with the presets' leaves of at most eight triangles it is one pass: the test is at
        // the bottom (a `step_by` loop would compute a trip count and test it before the first
        // pass, work a one-pass leaf does not need).
        debug_assert!(!range.is_empty());
        let mut base = range.start;
        loop {
            let (blocks, leaf_lanes) = self.pass_blocks(base, range.end);
            self.pass(blocks, leaf_lanes, base, ray_local, hray, t_max, col, hits)?;
            base += 2 * LANES;
            if base >= range.end {
                return ControlFlow::Continue(());
            }
        }
    }

    /// The blocks of the pass of [`MeshAccel::leaf`] from position `base` of a leaf ending at
    /// `end`, and the mask of its lanes that belong to the leaf.
    #[inline(always)]
    fn pass_blocks(&self, base: usize, end: usize) -> (&[Tri4], u32) {
        let live = (end - base).min(2 * LANES);
        let first_block = base / LANES;
        let blocks = &self.blocks[first_block..first_block + live.div_ceil(LANES)];
        (blocks, (1 << live) - 1)
    }

    /// One pass of [`MeshAccel::leaf`]: the triangles of `blocks` (from position `base`, lanes
    /// `leaf_lanes`) against one ray.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn pass<C: Collector>(
        &self,
        blocks: &[Tri4],
        leaf_lanes: u32,
        base: usize,
        ray_local: &Ray,
        hray: &HitRay,
        t_max: &mut f32,
        col: &mut C,
        hits: &LeafHits<C::Path>,
    ) -> ControlFlow<()> {
        let decided = self.decide(blocks, leaf_lanes, hray, *t_max, hits);
        self.offer(decided, base, ray_local, t_max, col, hits)
    }

    /// The SIMD part of one pass: [`tri_hits`], or for a mirroring instance that culls back
    /// faces its prefilter (every candidate then goes to the kernel).
    #[inline(always)]
    fn decide<P>(
        &self,
        blocks: &[Tri4],
        leaf_lanes: u32,
        hray: &HitRay,
        t_max: f32,
        hits: &LeafHits<P>,
    ) -> TriHits {
        if hits.cull_object_front {
            TriHits {
                undecided: tri_candidates(blocks, &hray.shear) & leaf_lanes,
                ..TriHits::NONE
            }
        } else {
            tri_hits(blocks, leaf_lanes, hray, t_max)
        }
    }

    /// The hits of one pass that [`tri_hits`] (or its prefilter) left for the ray: each hit lane
    /// within `t_max` goes to `col`, each undecided lane to the kernel first.
    #[inline(always)]
    fn offer<C: Collector>(
        &self,
        decided: TriHits,
        base: usize,
        ray_local: &Ray,
        t_max: &mut f32,
        col: &mut C,
        hits: &LeafHits<C::Path>,
    ) -> ControlFlow<()> {
        let mut lanes = decided.hit | decided.undecided;
        while lanes != 0 {
            let lane = lanes.trailing_zeros() as usize;
            lanes &= lanes - 1;
            let slot = base + lane;
            if !self.passes(self.blocks[slot / LANES].ids[slot % LANES], hits) {
                continue;
            }
            let h = if decided.hit >> lane & 1 != 0 {
                TriHit {
                    t: decided.t[lane],
                    u: decided.u[lane],
                    v: decided.v[lane],
                }
            } else {
                match self.test_undecided(ray_local, slot, hits, C::EDGES) {
                    Some(h) => h,
                    None => continue,
                }
            };
            if h.t <= *t_max {
                col.offer(self.raw_hit(slot, h, hits))?;
                *t_max = col.t_max();
            }
        }
        ControlFlow::Continue(())
    }

    /// [`MeshAccel::visit`] (BVH mode) for the rays of `active` together
    /// ([`WideBvh::traverse_packet`](crate::bvh::wide::WideBvh::traverse_packet); `packet` holds
    /// them all); returns the rays whose collector stopped the walk.
    fn visit_packet<C: Collector>(
        &self,
        rays: &[Ray; PACKET],
        packet: &PacketBoxRay,
        active: u32,
        ctx: &Ctx<C::Path>,
        cols: &mut [C; PACKET],
    ) -> u32 {
        let MeshBvh::Wide(bvh) = &self.bvh else {
            // Quantized nodes have no packet walk: one ray at a time.
            let mut done = 0;
            for (i, (ray, col)) in rays.iter().zip(cols.iter_mut()).enumerate() {
                if active >> i & 1 == 1 && self.visit(ray, ctx, Mode::Bvh, col).is_break() {
                    done |= 1 << i;
                }
            }
            return done;
        };
        // `self.local` of each ray, in SSE.
        let rays_local = crate::simd::moved_rays(rays, self.offset);
        let hits = LeafHits::new(&self.parts, ctx);
        let mut kernel_rays: [Option<HitRay>; PACKET] = [None; PACKET];
        // The rays with a kernel ray, and those whose kernel ray has the origin and axes of the
        // first one made (`frame`).
        let (mut prepared, mut in_frame) = (0u32, 0u32);
        let mut frame: Option<(ShearRay, [u64; 2])> = None;
        let mut t_max: [f32; PACKET] = std::array::from_fn(|i| cols[i].t_max());
        let mut done = 0;
        bvh.traverse_packet(
            &packet.translated(self.offset.to_array()),
            active,
            &mut t_max,
            // Inlined into the packet loop, compiled for its CPU features. Pass by pass, each of
            // the leaf's rays in turn: the pass's blocks are found once for all of them, and for
            // rays from one point the triangles relative to it (`tri_rows`), so that each of
            // those rays skips the rows' loads and subtractions. A ray's passes come in the same
            // order as in a single walk.
            #[inline(always)]
            |range, rays, t_max| {
                let mut finished = 0;
                let mut base = range.start;
                loop {
                    let (blocks, leaf_lanes) = self.pass_blocks(base, range.end);
                    let meeting = rays & !finished;
                    // Kernel rays for the rays at their first leaf; each compared once with the
                    // packet's first (`frame`).
                    let mut fresh = meeting & !prepared;
                    prepared |= fresh;
                    while fresh != 0 {
                        let i = fresh.trailing_zeros() as usize;
                        fresh &= fresh - 1;
                        let hray =
                            HitRay::of(&WatertightRay::new(&rays_local[i]), hits.kernel_culling);
                        let key = hray.shear.frame();
                        if frame.get_or_insert((hray.shear, key)).1 == key {
                            in_frame |= 1 << i;
                        }
                        kernel_rays[i] = Some(hray);
                    }
                    // The pass's triangles relative to the packet's origin, in its axes' order,
                    // made once for the rays that share both (a camera's: all eight, nearly
                    // always) when two or more of them meet the pass.
                    let sharing = meeting & in_frame;
                    let rows = match &frame {
                        Some((f, _))
                            if sharing & sharing.wrapping_sub(1) != 0
                                && !hits.cull_object_front =>
                        {
                            Some(tri_rows(blocks, f))
                        }
                        _ => None,
                    };
                    let mut rs = meeting;
                    while rs != 0 {
                        let i = rs.trailing_zeros() as usize;
                        rs &= rs - 1;
                        let Some(hray) = &kernel_rays[i] else {
                            unreachable!("prepared above");
                        };
                        let decided = match &rows {
                            Some(rows) if sharing >> i & 1 != 0 => {
                                tri_hits_rows(rows, leaf_lanes, hray, t_max[i])
                            }
                            _ => self.decide(blocks, leaf_lanes, hray, t_max[i], &hits),
                        };
                        let pass = self.offer(
                            decided,
                            base,
                            &rays_local[i],
                            &mut t_max[i],
                            &mut cols[i],
                            &hits,
                        );
                        if pass.is_break() {
                            finished |= 1 << i;
                        }
                    }
                    base += 2 * LANES;
                    if base >= range.end {
                        break;
                    }
                }
                done |= finished;
                finished
            },
            |first| self.leaf_data(first),
        );
        done
    }

    /// Where the triangle blocks of the leaf starting at position `first` lie (for prefetching;
    /// any `first`, the address is only computed).
    #[inline(always)]
    fn leaf_data(&self, first: usize) -> *const u8 {
        self.blocks.as_ptr().wrapping_add(first / LANES).cast()
    }

    /// The raw hit of the kernel's hit `h` on the triangle at `slot`.
    #[inline(always)]
    fn raw_hit<P: PathRecord>(&self, slot: usize, h: TriHit, hits: &LeafHits<P>) -> RawHit<P> {
        let (geom, prim) = self
            .parts
            .locate(self.blocks[slot / LANES].ids[slot % LANES]);
        RawHit {
            t: h.t,
            u: h.u,
            v: h.v,
            prim,
            slot: slot as u32,
            geom,
            path: hits.path,
        }
    }

    /// Whether the ray's mask lets scene-wide triangle `global` through: its geometry's mask meets
    /// the ray's. Asked only when some part's mask misses the ray's ([`LeafHits::check_masks`]).
    #[inline(always)]
    fn passes<P>(&self, global: u32, hits: &LeafHits<P>) -> bool {
        !hits.check_masks || self.parts.masks[self.parts.part_of(global)] & hits.mask != 0
    }

    /// [`MeshAccel::test`] out of line, for the lanes the SIMD test left undecided: an edge
    /// function rounded to 0 (rare), or every candidate of a mirroring instance with back-face
    /// culling (rarer still). Out of line, so that this rare path does not make the traversal
    /// loop larger for every ray. The kernel's ray is prepared here, from the ray in the mesh's
    /// frame, rather than kept by every walk beside the SIMD test's [`HitRay`] (the same numbers:
    /// both come from [`WatertightRay::new`]): a walk's set-up at its first leaf then makes only
    /// the SIMD test's ray, and only the rare undecided lane pays for the kernel's.
    #[inline(never)]
    #[cold]
    fn test_undecided<P>(
        &self,
        ray_local: &Ray,
        slot: usize,
        hits: &LeafHits<P>,
        edges: EdgeRule,
    ) -> Option<TriHit> {
        self.test(&WatertightRay::new(ray_local), slot, hits, edges)
    }

    /// The kernel on the triangle at `slot`, with the culling of `hits` (back-face culling inside a
    /// mirroring instance drops the object-space front face). Always inlined into its callers:
    /// the brute-force walk and [`MeshAccel::test_undecided`].
    #[inline(always)]
    fn test<P>(
        &self,
        wray: &WatertightRay,
        slot: usize,
        hits: &LeafHits<P>,
        edges: EdgeRule,
    ) -> Option<TriHit> {
        let [a, b, c] = self.tri(slot);
        // No degeneracy check: `store` collapsed the degenerate triangles.
        let hit = wray.test::<false>(a, b, c, hits.kernel_culling, edges)?;
        if hits.cull_object_front && is_object_front(wray, [a, b, c], edges) {
            return None;
        }
        Some(hit)
    }
}

/// One ray's walk through a mesh: its collector, the ray in the mesh's frame, and the SIMD
/// triangle test's set-up of that ray (its shear), made at the first leaf (most rays that miss
/// the mesh reach none, and so never pay for it).
struct MeshRay<C> {
    col: C,
    ray_local: Ray,
    hit_ray: Option<HitRay>,
}

/// The rays of [`MeshAccel::visit_each_indexed`] as a run for the traversal: collector `col(i)`
/// per ray, `answer(ray, collector, &mut out[i])` at the end of each walk.
struct MeshRun<'a, P, T, Col, Ans> {
    mesh: &'a MeshAccel,
    hits: LeafHits<P>,
    rays: &'a [Ray],
    out: &'a mut [T],
    col: Col,
    answer: Ans,
}

impl<C, T, Col, Ans> RayRun for MeshRun<'_, C::Path, T, Col, Ans>
where
    C: Collector,
    Col: Fn(usize) -> C,
    Ans: Fn(&Ray, C, &mut T),
{
    const ORDER: Order = C::ORDER;
    type State = MeshRay<C>;

    #[inline(always)]
    fn start(&self, i: usize) -> (WideRay, f32, MeshRay<C>) {
        self.mesh.start(&self.rays[i], (self.col)(i))
    }

    #[inline(always)]
    fn leaf(
        &self,
        state: &mut MeshRay<C>,
        range: Range<usize>,
        t_max: &mut f32,
    ) -> ControlFlow<()> {
        self.mesh.leaf_of(state, range, t_max, &self.hits)
    }

    #[inline(always)]
    fn leaf_data(&self, first: usize) -> *const u8 {
        self.mesh.leaf_data(first)
    }

    #[inline(always)]
    fn finish(&mut self, i: usize, state: MeshRay<C>) {
        (self.answer)(&self.rays[i], state.col, &mut self.out[i]);
    }
}

/// A collector lent to one walk ([`MeshAccel::visit`]).
impl<C: Collector> Collector for &mut C {
    type Path = C::Path;
    const EDGES: EdgeRule = C::EDGES;
    const ORDER: Order = C::ORDER;
    #[inline(always)]
    fn t_max(&self) -> f32 {
        (**self).t_max()
    }
    #[inline(always)]
    fn offer(&mut self, hit: RawHit<C::Path>) -> ControlFlow<()> {
        (**self).offer(hit)
    }
}

/// What the mesh tree's leaves need of the query to test triangles and name their hits.
#[derive(Clone, Copy, Debug)]
struct LeafHits<P> {
    /// The ray's mask.
    mask: u32,
    /// Whether some mesh's mask misses the ray's, so that each candidate's mesh must be asked.
    check_masks: bool,
    /// The instances entered, as the collector keeps them.
    path: P,
    /// The culling the kernel applies.
    kernel_culling: Culling,
    /// Whether hits on the object-space front face must be dropped after the kernel. A mirroring
    /// instance flips the winding: what the kernel calls a front face in object space is a back face
    /// of the world-space copy. One call site of the kernel on the hot path (so it can be inlined);
    /// the mirrored-culling check is a cold second call.
    cull_object_front: bool,
}

impl<P: Copy> LeafHits<P> {
    #[inline(always)]
    fn new(parts: &super::MeshParts, ctx: &Ctx<P>) -> Self {
        let cull_object_front = ctx.culling == Culling::Back && ctx.mirrored;
        Self {
            mask: ctx.mask,
            check_masks: parts.mask_all & ctx.mask == 0,
            path: ctx.path,
            kernel_culling: if cull_object_front {
                Culling::None
            } else {
                ctx.culling
            },
            cull_object_front,
        }
    }
}

/// `true` when the kernel sees the triangle's front face (what back-face culling keeps).
#[cold]
#[inline(never)]
fn is_object_front(wray: &WatertightRay, [a, b, c]: [Vec3; 3], edges: EdgeRule) -> bool {
    wray.intersect(a, b, c, Culling::Back, edges).is_some()
}

impl SpheresAccel {
    fn visit<C: Collector>(
        &self,
        spheres: &Spheres,
        ray: &Ray,
        geom: u32,
        ctx: &Ctx<C::Path>,
        mode: Mode,
        col: &mut C,
    ) -> ControlFlow<()> {
        let test = |prim: u32, col: &mut C| -> ControlFlow<()> {
            let (center, radius): (Vec3, f32) =
                (spheres.centers[prim as usize], spheres.radii[prim as usize]);
            // Both crossings of the ray's line (the geom kernel clips to the range we give it); a
            // tangent line's single root counts as a double root, keeping crossing parity.
            let line = Ray::line(ray.origin, ray.dir);
            let hits = sphere_quadratic(&line, center, radius);
            let (Some(t0), Some(t1)) = (hits.first(), hits.last()) else {
                return ControlFlow::Continue(());
            };
            // t0 is where the ray enters (front), t1 where it leaves (back).
            let roots: &[f32] = if ctx.culling == Culling::Back {
                &[t0]
            } else {
                &[t0, t1]
            };
            for &t in roots {
                if t >= ray.t_min && t <= ray.t_max {
                    col.offer(RawHit {
                        t,
                        u: 0.0,
                        v: 0.0,
                        prim,
                        slot: prim,
                        geom,
                        path: ctx.path,
                    })?;
                }
            }
            ControlFlow::Continue(())
        };
        match mode {
            Mode::BruteForce => {
                for prim in 0..spheres.len() as u32 {
                    test(prim, col)?;
                }
                ControlFlow::Continue(())
            }
            Mode::Bvh => {
                let t_max = col.t_max();
                let prim_ids = self.bvh.prim_ids();
                self.bvh.traverse(&BvhRay::new(ray), t_max, |range, t_max| {
                    for i in range {
                        test(prim_ids[i], col)?;
                    }
                    *t_max = col.t_max();
                    ControlFlow::Continue(())
                })
            }
        }
    }
}
