//! The public queries: closest hit, any hit, all hits, counts, and their batches (their hits are
//! finished in `finish.rs`).

use std::ops::ControlFlow;

use super::hit::{InstancePath, PathRecord, RawHit, TopInstance};
use super::traverse::{Collector, Ctx, Mode};
use super::{Crossing, Hit, HitFilter, QueryOptions, Scene};
use crate::bvh::wide::{Order, PACKET};
use crate::geom::triangle::EdgeRule;
use crate::simd::{prefetch, PacketBoxRay};
use crate::Ray;

/// Rays per rayon task in the batch queries: large enough to amortize the task, small enough to
/// balance two cores when some rays are much costlier than others.
#[cfg(feature = "parallel")]
const BATCH_CHUNK: usize = 256;

/// A filter and what it needs to build the [`Hit`] and [`InstancePath`] it looks at.
pub(super) struct Filter<'a> {
    scene: &'a Scene,
    ray: &'a Ray,
    f: &'a HitFilter<'a>,
}

impl Filter<'_> {
    /// Whether `filter`, if any, accepts the hit. `raw` by value, and the filter's call out of
    /// line: the collectors' hits then stay in registers (a hit whose address goes to the filter
    /// lives on the stack and is copied into the collector with wide loads right after its
    /// narrower stores, which the CPU cannot forward, so the loads wait for the stores).
    #[inline(always)]
    fn accepts<P: PathRecord>(filter: &Option<Self>, raw: RawHit<P>) -> bool {
        let RawHit {
            t,
            u,
            v,
            prim,
            slot,
            geom,
            path,
        } = raw;
        filter
            .as_ref()
            .is_none_or(|f| f.accepts_hit([t, u, v], [prim, slot, geom], path))
    }

    /// [`Filter::accepts`] with a filter. The hit comes as its fields, in registers: passed
    /// whole (indirectly, by the calling convention) it would be built on the stack for every hit,
    /// filter or not, and copied into the collector from there.
    #[cold]
    #[inline(never)]
    fn accepts_hit<P: PathRecord>(
        &self,
        [t, u, v]: [f32; 3],
        [prim, slot, geom]: [u32; 3],
        path: P,
    ) -> bool {
        let raw = RawHit {
            t,
            u,
            v,
            prim,
            slot,
            geom,
            path,
        };
        (self.f)(&self.scene.finish(self.ray, &raw), &path.path())
    }
}

pub(super) struct Closest<'a, P> {
    pub(super) best: Option<RawHit<P>>,
    pub(super) t_max: f32,
    filter: Option<Filter<'a>>,
}

impl<P: PathRecord> Collector for Closest<'_, P> {
    type Path = P;
    const EDGES: EdgeRule = EdgeRule::Closed;
    const ORDER: Order = Order::NearestFirst;
    #[inline]
    fn t_max(&self) -> f32 {
        self.t_max
    }
    #[inline]
    fn offer(&mut self, hit: RawHit<P>) -> ControlFlow<()> {
        let better = match &self.best {
            Some(best) => hit.before(best),
            None => hit.t <= self.t_max,
        };
        if better && Filter::accepts(&self.filter, hit) {
            self.best = Some(hit);
            self.t_max = hit.t;
        }
        ControlFlow::Continue(())
    }
}

pub(super) struct Any<'a, P> {
    pub(super) found: bool,
    pub(super) t_max: f32,
    filter: Option<Filter<'a>>,
    path: std::marker::PhantomData<P>,
}

impl<P: PathRecord> Collector for Any<'_, P> {
    type Path = P;
    const EDGES: EdgeRule = EdgeRule::Closed;
    const ORDER: Order = Order::NodeOrder;
    #[inline]
    fn t_max(&self) -> f32 {
        self.t_max
    }
    #[inline]
    fn offer(&mut self, hit: RawHit<P>) -> ControlFlow<()> {
        if Filter::accepts(&self.filter, hit) {
            self.found = true;
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }
    #[inline]
    fn done(&self) -> bool {
        self.found
    }
}

struct All<'a, P> {
    hits: Vec<RawHit<P>>,
    t_max: f32,
    filter: Option<Filter<'a>>,
}

impl<P: PathRecord> Collector for All<'_, P> {
    type Path = P;
    const EDGES: EdgeRule = EdgeRule::HalfOpen;
    const ORDER: Order = Order::NodeOrder;
    #[inline]
    fn t_max(&self) -> f32 {
        self.t_max
    }
    #[inline]
    fn offer(&mut self, hit: RawHit<P>) -> ControlFlow<()> {
        if Filter::accepts(&self.filter, hit) {
            self.hits.push(hit);
        }
        ControlFlow::Continue(())
    }
}

struct Count<'a, P: PathRecord> {
    count: usize,
    t_max: f32,
    filter: Option<Filter<'a>>,
    /// Where the scene [`Scene::repeats`] triangles: the key of every hit, kept once at the end.
    keys: Option<Keys<P::Key>>,
}

/// The keys of a count's hits: on the stack up to [`INLINE_KEYS`] (a parity ray's few
/// crossings, with no allocation per ray), then on the heap.
type Keys<K> = smallvec::SmallVec<[K; INLINE_KEYS]>;

/// Keys a count keeps on the stack.
const INLINE_KEYS: usize = 16;

/// How many distinct keys.
fn distinct<K: Ord>(mut keys: Keys<K>) -> usize {
    keys.sort_unstable();
    keys.dedup();
    keys.len()
}

impl<P: PathRecord> Collector for Count<'_, P> {
    type Path = P;
    const EDGES: EdgeRule = EdgeRule::HalfOpen;
    const ORDER: Order = Order::NodeOrder;
    #[inline]
    fn t_max(&self) -> f32 {
        self.t_max
    }
    #[inline]
    fn offer(&mut self, hit: RawHit<P>) -> ControlFlow<()> {
        if Filter::accepts(&self.filter, hit) {
            match &mut self.keys {
                Some(keys) => keys.push(hit.key()),
                None => self.count += 1,
            }
        }
        ControlFlow::Continue(())
    }
}

/// The context of a query's walk in the queried scene, keeping `P` of the instances it enters.
pub(super) fn ctx<P: PathRecord>(opts: &QueryOptions) -> Ctx<P> {
    Ctx {
        culling: opts.culling,
        mask: opts.mask,
        path: P::ROOT,
        mirrored: false,
    }
}

/// What a closest-hit query answers for a ray: a [`Hit`], or a hit and its [`InstancePath`] (the
/// path queries).
pub(super) trait ClosestAnswer: Copy {
    /// The answer of `raw` for the world ray `ray`, written into `out` in place (see
    /// [`Scene::finish_into`]).
    fn write<P: PathRecord>(scene: &Scene, ray: &Ray, raw: &RawHit<P>, out: &mut Option<Self>);
}

impl ClosestAnswer for Hit {
    #[inline(always)]
    fn write<P: PathRecord>(scene: &Scene, ray: &Ray, raw: &RawHit<P>, out: &mut Option<Self>) {
        scene.finish_into(ray, raw, out);
    }
}

impl ClosestAnswer for (Hit, InstancePath) {
    #[inline(always)]
    fn write<P: PathRecord>(scene: &Scene, ray: &Ray, raw: &RawHit<P>, out: &mut Option<Self>) {
        scene.finish_path_into(ray, raw, out);
    }
}

impl Scene {
    /// `true` when instances nest in this scene (an instance's scene holds instances), so that
    /// finishing a hit needs every instance on its path: the walks then keep the whole
    /// [`InstancePath`] for every query; otherwise the plain queries keep the [`TopInstance`]
    /// alone (see [`PathRecord`]).
    #[inline]
    fn nests(&self) -> bool {
        self.instance_depth > 1
    }

    fn filter<'a>(&'a self, ray: &'a Ray, opts: &QueryOptions<'a>) -> Option<Filter<'a>> {
        opts.filter.map(|f| Filter {
            scene: self,
            ray,
            f,
        })
    }

    /// The collector of a closest-hit query.
    #[inline(always)]
    fn closest_col<'a, P: PathRecord>(
        &'a self,
        ray: &'a Ray,
        opts: &QueryOptions<'a>,
    ) -> Closest<'a, P> {
        Closest {
            best: None,
            t_max: ray.t_max,
            filter: self.filter(ray, opts),
        }
    }

    /// The answer of a closest-hit query from its collector, written into `out` in place
    /// (batches: see [`Scene::finish_into`]).
    #[inline(always)]
    fn closest_answer_into<P: PathRecord, A: ClosestAnswer>(
        &self,
        ray: &Ray,
        col: &Closest<P>,
        out: &mut Option<A>,
    ) {
        match &col.best {
            Some(raw) => A::write(self, ray, raw, out),
            None => *out = None,
        }
    }

    /// The collector of an any-hit query.
    #[inline(always)]
    fn any_col<'a, P: PathRecord>(&'a self, ray: &'a Ray, opts: &QueryOptions<'a>) -> Any<'a, P> {
        Any {
            found: false,
            t_max: ray.t_max,
            filter: self.filter(ray, opts),
            path: std::marker::PhantomData,
        }
    }

    /// The closest hit of one ray, the walk keeping `P` of the instances it enters.
    fn closest<P: PathRecord, A: ClosestAnswer>(
        &self,
        ray: &Ray,
        opts: &QueryOptions,
        mode: Mode,
    ) -> Option<A> {
        if !ray.is_valid() {
            return None;
        }
        let mut col = self.closest_col::<P>(ray, opts);
        let _ = self.visit(ray, &ctx(opts), mode, &mut col);
        let mut answer = None;
        self.closest_answer_into(ray, &col, &mut answer);
        answer
    }

    /// [`Scene::closest`] answering a [`Hit`], with the record this scene needs.
    fn closest_hit(&self, ray: &Ray, opts: &QueryOptions, mode: Mode) -> Option<Hit> {
        if self.nests() {
            self.closest::<InstancePath, Hit>(ray, opts, mode)
        } else {
            self.closest::<TopInstance, Hit>(ray, opts, mode)
        }
    }

    fn any<P: PathRecord>(&self, ray: &Ray, opts: &QueryOptions, mode: Mode) -> bool {
        if !ray.is_valid() {
            return false;
        }
        let mut col = self.any_col::<P>(ray, opts);
        let _ = self.visit(ray, &ctx(opts), mode, &mut col);
        col.found
    }

    /// [`Scene::any`] with the record this scene needs (a filter looks at finished hits).
    fn any_hit(&self, ray: &Ray, opts: &QueryOptions, mode: Mode) -> bool {
        if self.nests() {
            self.any::<InstancePath>(ray, opts, mode)
        } else {
            self.any::<TopInstance>(ray, opts, mode)
        }
    }

    /// Each ray of `rays` on its own, with its own collector `col(ray)`: `answer(ray, collector,
    /// &mut out[i])` (an invalid ray leaves its collector empty). In a scene of one mesh the loop
    /// runs inside that mesh's traversal ([`MeshAccel::visit_each`](super::MeshAccel)).
    #[inline(always)]
    fn visit_each<'a, C: Collector + 'a, T>(
        &'a self,
        rays: &'a [Ray],
        out: &mut [T],
        opts: &QueryOptions<'a>,
        col: impl Fn(&'a Ray) -> C,
        answer: impl Fn(&Ray, C, &mut T),
    ) {
        let ctx = ctx::<C::Path>(opts);
        if let Some(meshes) = self.only_meshes(&ctx) {
            meshes.visit_each(rays, out, &ctx, col, answer);
            return;
        }
        for (o, ray) in out.iter_mut().zip(rays) {
            let mut c = col(ray);
            if ray.is_valid() {
                let _ = self.visit(ray, &ctx, Mode::Bvh, &mut c);
            }
            answer(ray, c, o);
        }
    }

    /// Every crossing of one ray as raw hits sorted by `t` (ties by [`RawHit::key`]), the walk
    /// keeping `P` of the instances it enters.
    fn all<P: PathRecord>(&self, ray: &Ray, opts: &QueryOptions, mode: Mode) -> Vec<RawHit<P>> {
        let mut raws = Vec::new();
        self.all_into(ray, opts, mode, &mut raws);
        raws
    }

    /// [`Scene::all`] into `raws` (cleared first), whose memory the caller keeps for the next ray.
    fn all_into<P: PathRecord>(
        &self,
        ray: &Ray,
        opts: &QueryOptions,
        mode: Mode,
        raws: &mut Vec<RawHit<P>>,
    ) {
        raws.clear();
        if !ray.is_valid() {
            return;
        }
        let mut col = All {
            hits: std::mem::take(raws),
            t_max: ray.t_max,
            filter: self.filter(ray, opts),
        };
        let _ = self.visit(ray, &ctx(opts), mode, &mut col);
        *raws = col.hits;
        raws.sort_by(|a: &RawHit<P>, b| a.t.total_cmp(&b.t).then(a.key().cmp(&b.key())));
        // A triangle reached through two leaves of a spatially split tree gives the same hit
        // twice (the same kernel on the same vertices): now side by side.
        if self.repeats {
            raws.dedup_by(|a, b| a.key() == b.key());
        }
    }

    /// [`Scene::intersect_all_into`] with the record this scene needs.
    fn crossings_into<P: PathRecord>(
        &self,
        rays: &[Ray],
        opts: &QueryOptions,
        out: &mut Vec<Crossing>,
        ends: &mut Vec<usize>,
    ) {
        let mut raws: Vec<RawHit<P>> = Vec::new();
        for ray in rays {
            self.all_into(ray, opts, Mode::Bvh, &mut raws);
            out.extend(raws.iter().map(RawHit::crossing));
            ends.push(out.len());
        }
    }

    /// [`Scene::all`] as [`Hit`]s, with the record this scene needs.
    fn all_hits(&self, ray: &Ray, opts: &QueryOptions, mode: Mode) -> Vec<Hit> {
        if self.nests() {
            let raws = self.all::<InstancePath>(ray, opts, mode);
            raws.iter().map(|raw| self.finish(ray, raw)).collect()
        } else {
            let raws = self.all::<TopInstance>(ray, opts, mode);
            raws.iter().map(|raw| self.finish(ray, raw)).collect()
        }
    }

    fn count<P: PathRecord>(&self, ray: &Ray, opts: &QueryOptions, mode: Mode) -> usize {
        if !ray.is_valid() {
            return 0;
        }
        let mut col = Count::<P> {
            count: 0,
            t_max: ray.t_max,
            filter: self.filter(ray, opts),
            keys: self.repeats.then(Keys::new),
        };
        let _ = self.visit(ray, &ctx(opts), mode, &mut col);
        match col.keys {
            Some(keys) => distinct(keys),
            None => col.count,
        }
    }

    /// [`Scene::count`] with the record this scene needs (a filter looks at finished hits).
    fn count_hits(&self, ray: &Ray, opts: &QueryOptions, mode: Mode) -> usize {
        if self.nests() {
            self.count::<InstancePath>(ray, opts, mode)
        } else {
            self.count::<TopInstance>(ray, opts, mode)
        }
    }

    /// The closest hit in `[ray.t_min, ray.t_max]` (closed edges; ties to the smallest ids).
    ///
    /// ```
    /// use raypick::{glam::Vec3, Ray, SceneBuilder, Spheres};
    /// let mut b = SceneBuilder::new();
    /// b.add_spheres(Spheres::new(vec![Vec3::ZERO], vec![1.0]));
    /// let scene = b.build().unwrap();
    /// let hit = scene.intersect(&Ray::new(Vec3::new(0.0, 0.0, 4.0), Vec3::NEG_Z)).unwrap();
    /// assert_eq!((hit.t, hit.point, hit.normal), (3.0, Vec3::Z, Vec3::Z));
    /// ```
    pub fn intersect(&self, ray: &Ray) -> Option<Hit> {
        self.intersect_with(ray, &QueryOptions::default())
    }

    /// [`Scene::intersect`] with culling, mask and filter.
    pub fn intersect_with(&self, ray: &Ray, opts: &QueryOptions) -> Option<Hit> {
        self.closest_hit(ray, opts, Mode::Bvh)
    }

    /// [`Scene::intersect`] and the hit's [`InstancePath`]: every instance it was reached through,
    /// outermost first (Embree's `instID` stack), for scenes whose instances nest. The hit is the
    /// one [`Scene::intersect`] returns, which names only the top-level instance.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use raypick::{glam::{Affine3A, Vec3}, Ray, SceneBuilder, Spheres};
    /// let mut b = SceneBuilder::new();
    /// b.add_spheres(Spheres::new(vec![Vec3::ZERO], vec![1.0]));
    /// let ball = Arc::new(b.build().unwrap());
    /// // A scene placing the ball twice, placed in the world.
    /// let mut b = SceneBuilder::new();
    /// b.add_instance(ball.clone(), Affine3A::from_translation(Vec3::X * -3.0));
    /// let right = b.add_instance(ball, Affine3A::from_translation(Vec3::X * 3.0));
    /// let pair = Arc::new(b.build().unwrap());
    /// let mut b = SceneBuilder::new();
    /// let placed = b.add_instance(pair, Affine3A::from_translation(Vec3::Y));
    /// let world = b.build().unwrap();
    ///
    /// let ray = Ray::new(Vec3::new(3.0, 1.0, 5.0), Vec3::NEG_Z);
    /// let (hit, path) = world.intersect_path(&ray).unwrap();
    /// assert_eq!(path.as_slice(), &[placed, right][..]);
    /// assert_eq!((hit.t, hit.instance), (4.0, Some(placed)));
    /// assert_eq!(world.intersect(&ray), Some(hit));
    /// ```
    pub fn intersect_path(&self, ray: &Ray) -> Option<(Hit, InstancePath)> {
        self.intersect_path_with(ray, &QueryOptions::default())
    }

    /// [`Scene::intersect_path`] with culling, mask and filter.
    pub fn intersect_path_with(
        &self,
        ray: &Ray,
        opts: &QueryOptions,
    ) -> Option<(Hit, InstancePath)> {
        self.closest::<InstancePath, _>(ray, opts, Mode::Bvh)
    }

    /// `true` when anything lies in `[ray.t_min, ray.t_max]` (shadow rays: use a segment).
    pub fn occluded(&self, ray: &Ray) -> bool {
        self.occluded_with(ray, &QueryOptions::default())
    }

    /// [`Scene::occluded`] with culling, mask and filter.
    pub fn occluded_with(&self, ray: &Ray, opts: &QueryOptions) -> bool {
        self.any_hit(ray, opts, Mode::Bvh)
    }

    /// Every crossing in `[ray.t_min, ray.t_max]`, sorted by `t` (half-open edges: a shared edge or
    /// vertex is crossed once; see the module docs).
    pub fn intersect_all(&self, ray: &Ray) -> Vec<Hit> {
        self.intersect_all_with(ray, &QueryOptions::default())
    }

    /// [`Scene::intersect_all`] with culling, mask and filter.
    pub fn intersect_all_with(&self, ray: &Ray, opts: &QueryOptions) -> Vec<Hit> {
        self.all_hits(ray, opts, Mode::Bvh)
    }

    /// Every crossing of every ray of `rays`, on the calling thread: ray `i`'s are
    /// [`Scene::intersect_all_with`]'s hits in the same order, as [`Crossing`]s (no point or
    /// normal), appended to `out`, and `ends` gets the end of ray `i`'s in `out`. Meant for
    /// callers that lay all hits out in columns (the WebAssembly build): one buffer for every
    /// ray's hits and no point or normal computed; split the rays across threads for more cores.
    ///
    /// ```
    /// use raypick::{glam::Vec3, QueryOptions, Ray, SceneBuilder, Spheres};
    /// let mut b = SceneBuilder::new();
    /// b.add_spheres(Spheres::new(vec![Vec3::ZERO], vec![1.0]));
    /// let scene = b.build().unwrap();
    /// let rays = [Ray::new(Vec3::new(0.0, 0.0, 4.0), Vec3::NEG_Z), Ray::new(Vec3::splat(4.0), Vec3::X)];
    /// let (mut out, mut ends) = (Vec::new(), Vec::new());
    /// scene.intersect_all_into(&rays, &QueryOptions::default(), &mut out, &mut ends);
    /// assert_eq!(ends, [2, 2]); // in and out of the sphere; the second ray misses
    /// assert_eq!((out[0].t, out[1].t), (3.0, 5.0));
    /// ```
    pub fn intersect_all_into(
        &self,
        rays: &[Ray],
        opts: &QueryOptions,
        out: &mut Vec<Crossing>,
        ends: &mut Vec<usize>,
    ) {
        if self.nests() {
            self.crossings_into::<InstancePath>(rays, opts, out, ends);
        } else {
            self.crossings_into::<TopInstance>(rays, opts, out, ends);
        }
    }

    /// [`Scene::intersect_all`] with each hit's [`InstancePath`] (see [`Scene::intersect_path`]):
    /// the same hits in the same order.
    pub fn intersect_all_paths(&self, ray: &Ray) -> Vec<(Hit, InstancePath)> {
        self.intersect_all_paths_with(ray, &QueryOptions::default())
    }

    /// [`Scene::intersect_all_paths`] with culling, mask and filter.
    pub fn intersect_all_paths_with(
        &self,
        ray: &Ray,
        opts: &QueryOptions,
    ) -> Vec<(Hit, InstancePath)> {
        let raws = self.all::<InstancePath>(ray, opts, Mode::Bvh);
        raws.iter()
            .map(|raw| (self.finish(ray, raw), raw.path))
            .collect()
    }

    /// The number of crossings [`Scene::intersect_all`] would report, without building the hits:
    /// from a point inside a closed mesh it is odd, from outside even.
    pub fn count_intersections(&self, ray: &Ray) -> usize {
        self.count_intersections_with(ray, &QueryOptions::default())
    }

    /// [`Scene::count_intersections`] with culling, mask and filter.
    pub fn count_intersections_with(&self, ray: &Ray, opts: &QueryOptions) -> usize {
        self.count_hits(ray, opts, Mode::Bvh)
    }

    /// [`Scene::intersect_with`] for every ray, on all cores (feature `parallel`); the result is the
    /// same for any number of threads. In a scene of a few meshes, groups of neighbouring rays that
    /// share an origin or a direction (a camera's pixels, in order) are walked together as packets
    /// ([`crate::bvh::wide::WideBvh::traverse_packet`]), with the same answers: pass camera rays in
    /// pixel order to benefit.
    pub fn intersect_batch(&self, rays: &[Ray], opts: &QueryOptions) -> Vec<Option<Hit>> {
        let mut out = vec![None; rays.len()];
        self.intersect_batch_into(rays, opts, &mut out);
        out
    }

    /// [`Scene::intersect_batch`] into a buffer the caller keeps (`out[i]` answers `rays[i]`):
    /// casting a million rays then allocates and zeroes no 56 MB result, a cost that is not small
    /// beside the cast itself.
    ///
    /// # Panics
    /// When `out.len() != rays.len()` (a caller's bug).
    ///
    /// ```
    /// use raypick::{glam::Vec3, QueryOptions, Ray, SceneBuilder, Spheres};
    /// let mut b = SceneBuilder::new();
    /// b.add_spheres(Spheres::new(vec![Vec3::ZERO], vec![1.0]));
    /// let scene = b.build().unwrap();
    /// let rays = [Ray::new(Vec3::new(0.0, 0.0, 5.0), -Vec3::Z), Ray::new(Vec3::splat(5.0), Vec3::X)];
    /// let mut out = vec![None; rays.len()];
    /// scene.intersect_batch_into(&rays, &QueryOptions::default(), &mut out);
    /// assert_eq!(out[0].map(|h| h.t), Some(4.0));
    /// assert!(out[1].is_none());
    /// ```
    pub fn intersect_batch_into(&self, rays: &[Ray], opts: &QueryOptions, out: &mut [Option<Hit>]) {
        assert_eq!(
            out.len(),
            rays.len(),
            "intersect_batch_into: one output per ray"
        );
        self.for_each_chunk(rays, out, |rays, out| self.intersect_into(rays, opts, out));
    }

    /// [`Scene::intersect_batch_into`] with each hit's [`InstancePath`] (see
    /// [`Scene::intersect_path`]): the same hits, walked as that batch walks them.
    ///
    /// # Panics
    /// When `out.len() != rays.len()` (a caller's bug).
    pub fn intersect_path_batch_into(
        &self,
        rays: &[Ray],
        opts: &QueryOptions,
        out: &mut [Option<(Hit, InstancePath)>],
    ) {
        assert_eq!(
            out.len(),
            rays.len(),
            "intersect_path_batch_into: one output per ray"
        );
        self.for_each_chunk(rays, out, |rays, out| {
            self.intersect_path_into(rays, opts, out)
        });
    }

    /// [`Scene::occluded_batch`] into a buffer the caller keeps (`out[i]` answers `rays[i]`).
    ///
    /// # Panics
    /// When `out.len() != rays.len()` (a caller's bug).
    pub fn occluded_batch_into(&self, rays: &[Ray], opts: &QueryOptions, out: &mut [bool]) {
        assert_eq!(
            out.len(),
            rays.len(),
            "occluded_batch_into: one output per ray"
        );
        self.for_each_chunk(rays, out, |rays, out| self.occluded_into(rays, opts, out));
    }

    /// [`Scene::occluded_with`] for every ray, on all cores (feature `parallel`).
    pub fn occluded_batch(&self, rays: &[Ray], opts: &QueryOptions) -> Vec<bool> {
        let mut out = vec![false; rays.len()];
        self.occluded_batch_into(rays, opts, &mut out);
        out
    }

    /// [`Scene::intersect_batch_into`] on the calling thread only, for callers that split the work
    /// themselves (the Python bindings write each chunk's answers straight into their columns).
    /// Neighbouring coherent rays are walked as packets here too.
    ///
    /// # Panics
    /// When `out.len() != rays.len()` (a caller's bug).
    pub fn intersect_into(&self, rays: &[Ray], opts: &QueryOptions, out: &mut [Option<Hit>]) {
        assert_eq!(out.len(), rays.len(), "intersect_into: one output per ray");
        if self.nests() {
            self.closest_into::<InstancePath, _>(rays, opts, out);
        } else {
            self.closest_into::<TopInstance, _>(rays, opts, out);
        }
    }

    /// [`Scene::intersect_path_batch_into`] on the calling thread only (see
    /// [`Scene::intersect_into`]).
    ///
    /// # Panics
    /// When `out.len() != rays.len()` (a caller's bug).
    pub fn intersect_path_into(
        &self,
        rays: &[Ray],
        opts: &QueryOptions,
        out: &mut [Option<(Hit, InstancePath)>],
    ) {
        assert_eq!(
            out.len(),
            rays.len(),
            "intersect_path_into: one output per ray"
        );
        self.closest_into::<InstancePath, _>(rays, opts, out);
    }

    /// The closest hits of a chunk of rays on the calling thread, the walks keeping `P` of the
    /// instances they enter, each answer an `A`.
    fn closest_into<P: PathRecord, A: ClosestAnswer>(
        &self,
        rays: &[Ray],
        opts: &QueryOptions,
        out: &mut [Option<A>],
    ) {
        if let Some(passes) = self.passes(&ctx::<P>(opts)) {
            self.two_passes(
                passes,
                rays,
                out,
                opts,
                |ray| self.closest_col::<P>(ray, opts),
                |ray, col, out| self.closest_answer_into(ray, col, out),
            );
            return;
        }
        self.each_ray(
            rays,
            out,
            self.takes_packets(),
            &|out| out.fill(None),
            &|rays, out| {
                self.visit_each(
                    rays,
                    out,
                    opts,
                    |ray| self.closest_col::<P>(ray, opts),
                    |ray, col, out| self.closest_answer_into(ray, &col, out),
                )
            },
            &|rays, p, active, out| self.closest_packet::<P, A>(rays, p, active, opts, out),
        );
    }

    /// [`Scene::occluded_batch_into`] on the calling thread only (see [`Scene::intersect_into`]).
    ///
    /// # Panics
    /// When `out.len() != rays.len()` (a caller's bug).
    pub fn occluded_into(&self, rays: &[Ray], opts: &QueryOptions, out: &mut [bool]) {
        assert_eq!(out.len(), rays.len(), "occluded_into: one output per ray");
        if self.nests() {
            self.any_into::<InstancePath>(rays, opts, out);
        } else {
            self.any_into::<TopInstance>(rays, opts, out);
        }
    }

    /// [`Scene::occluded_into`], the walks keeping `P` of the instances they enter.
    fn any_into<P: PathRecord>(&self, rays: &[Ray], opts: &QueryOptions, out: &mut [bool]) {
        if let Some(passes) = self.passes(&ctx::<P>(opts)) {
            self.two_passes(
                passes,
                rays,
                out,
                opts,
                |ray| self.any_col::<P>(ray, opts),
                |_, col, out| *out = col.found,
            );
            return;
        }
        self.each_ray(
            rays,
            out,
            self.takes_packets(),
            &|out| out.fill(false),
            &|rays, out| {
                self.visit_each(
                    rays,
                    out,
                    opts,
                    |ray| self.any_col::<P>(ray, opts),
                    |_, col, out| *out = col.found,
                )
            },
            &|rays, p, active, out| self.any_packet::<P>(rays, p, active, opts, out),
        );
    }
    /// Splits a batch into chunks for rayon (feature `parallel`), each answered by `run(rays, out)`
    /// (the single-threaded batch entry, [`Scene::intersect_into`] or [`Scene::occluded_into`]).
    fn for_each_chunk<T: Send>(
        &self,
        rays: &[Ray],
        out: &mut [T],
        run: impl Fn(&[Ray], &mut [T]) + Sync,
    ) {
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            out.par_chunks_mut(BATCH_CHUNK)
                .zip(rays.par_chunks(BATCH_CHUNK))
                .for_each(|(out, rays)| run(rays, out));
        }
        #[cfg(not(feature = "parallel"))]
        run(rays, out);
    }

    /// Answers every ray: `packet` for groups of [`PACKET`] neighbouring rays that look coherent
    /// ([`coherent_packet`]) when `packets` (the scene's mesh tree is what they walk), `singles`
    /// for the runs of rays between them (one ray at a time), `miss` for a group whose packet
    /// misses the scene's box. `packet(rays, packet, active, out)` must answer exactly as
    /// `singles` would for each ray (the tests hold it to that).
    pub(super) fn each_ray<'r, T>(
        &self,
        rays: &'r [Ray],
        out: &mut [T],
        packets: bool,
        miss: &impl Fn(&mut [T; PACKET]),
        singles: &impl Fn(&'r [Ray], &mut [T]),
        packet: &impl Fn(&'r [Ray; PACKET], &PacketBoxRay, u32, &mut [T; PACKET]),
    ) {
        if !packets || !PACKETS_PAY {
            singles(rays, out);
            return;
        }
        // The scale that tells near origins from scattered ones (`is_coherent`).
        let extent = self.bounds.extent().max_element();
        // Rays from `run` up to the current group are answered one by one when the run ends.
        let mut run = 0;
        let groups = rays.len() / PACKET * PACKET;
        for start in (0..groups).step_by(PACKET) {
            // The rays of the group after next and their answers, asked for now: a batch reads
            // its rays and writes its answers once, in order, and a group would otherwise wait
            // for both.
            let ahead = (start + 2 * PACKET).min(rays.len());
            let ahead = ahead..(ahead + PACKET).min(rays.len());
            prefetch(&rays[ahead.clone()]);
            prefetch(&out[ahead]);
            let group = start..start + PACKET;
            let (Ok(group_rays), Ok(group_out)) = (
                <&'r [Ray; PACKET]>::try_from(&rays[group.clone()]),
                <&mut [T; PACKET]>::try_from(&mut out[group.clone()]),
            ) else {
                unreachable!("groups of PACKET")
            };
            // Read in place (see `coherent_packet`).
            if let &(active, Some(ref p)) = &coherent_packet(group_rays, extent) {
                if p.reaches(&self.bounds) {
                    packet(group_rays, p, active, group_out);
                } else {
                    // Every ray misses the scene's box, so the scene: the answers of a miss
                    // (`None`, `false`) without collectors, walk or answer conversions (a camera
                    // that sees the background around a model casts many such packets).
                    miss(group_out);
                }
                if run < start {
                    singles(&rays[run..start], &mut out[run..start]);
                }
                run = group.end;
            }
        }
        singles(&rays[run..], &mut out[run..]);
    }

    /// [`Scene::intersect_with`] for the rays of `active` (the others answer `None`), walked as a
    /// packet: the same answers (ties go to the smallest ids whatever the order of the walk).
    fn closest_packet<P: PathRecord, A: ClosestAnswer>(
        &self,
        rays: &[Ray; PACKET],
        packet: &PacketBoxRay,
        active: u32,
        opts: &QueryOptions,
        out: &mut [Option<A>; PACKET],
    ) {
        let mut cols: [Closest<P>; PACKET] =
            std::array::from_fn(|i| self.closest_col(&rays[i], opts));
        self.visit_packet(rays, packet, active, &ctx(opts), &mut cols);
        // By reference: moving the eight collectors out of the array would copy each of them.
        for ((col, out), ray) in cols.iter().zip(out).zip(rays) {
            self.closest_answer_into(ray, col, out);
        }
    }

    /// [`Scene::occluded_with`] for the rays of `active` (the others answer `false`), walked as a
    /// packet.
    fn any_packet<P: PathRecord>(
        &self,
        rays: &[Ray; PACKET],
        packet: &PacketBoxRay,
        active: u32,
        opts: &QueryOptions,
        out: &mut [bool; PACKET],
    ) {
        let mut cols: [Any<P>; PACKET] = std::array::from_fn(|i| self.any_col(&rays[i], opts));
        self.visit_packet(rays, packet, active, &ctx(opts), &mut cols);
        for (col, out) in cols.iter().zip(out) {
            *out = col.found;
        }
    }

    /// The brute-force twin of [`Scene::intersect_with`]: every geometry and primitive, the same
    /// kernels on the same data, no BVH. The reference the tests hold the BVH to.
    #[doc(hidden)]
    pub fn intersect_brute_force(&self, ray: &Ray, opts: &QueryOptions) -> Option<Hit> {
        self.closest_hit(ray, opts, Mode::BruteForce)
    }

    /// The brute-force twin of [`Scene::intersect_path_with`].
    #[doc(hidden)]
    pub fn intersect_path_brute_force(
        &self,
        ray: &Ray,
        opts: &QueryOptions,
    ) -> Option<(Hit, InstancePath)> {
        self.closest::<InstancePath, _>(ray, opts, Mode::BruteForce)
    }

    /// The brute-force twin of [`Scene::occluded_with`].
    #[doc(hidden)]
    pub fn occluded_brute_force(&self, ray: &Ray, opts: &QueryOptions) -> bool {
        self.any_hit(ray, opts, Mode::BruteForce)
    }

    /// The brute-force twin of [`Scene::intersect_all_with`].
    #[doc(hidden)]
    pub fn intersect_all_brute_force(&self, ray: &Ray, opts: &QueryOptions) -> Vec<Hit> {
        self.all_hits(ray, opts, Mode::BruteForce)
    }

    /// The brute-force twin of [`Scene::count_intersections_with`].
    #[doc(hidden)]
    pub fn count_intersections_brute_force(&self, ray: &Ray, opts: &QueryOptions) -> usize {
        self.count_hits(ray, opts, Mode::BruteForce)
    }
}

/// Whether batches walk coherent groups of rays as packets on this target. On x86-64 a packet's
/// node test is one 8-lane AVX test (two SSE halves without AVX) and camera rays gain about 1.6×
/// over single walks; under WebAssembly's 128-bit SIMD the packet's set-up, its two-half node
/// tests and its per-lane folds cost more than eight single walks (bunny camera rays in Node:
/// 3.9 Mrays/s as packets, 5.6 one by one), so wasm32 walks every ray on its own. The answers
/// are the same either way.
const PACKETS_PAY: bool = !cfg!(target_arch = "wasm32");

/// The packet of a group of rays and the mask of its valid ones, when it is worth a packet walk:
/// valid rays in one octant with finite `1/dir`, from one origin within a narrow cone (a camera's
/// neighbouring pixels) or along nearly one direction from nearby origins, in a scene `extent`
/// wide ([`PacketBoxRay::is_coherent`]). Only a matter of speed: a packet answers every ray
/// exactly as a single walk does.
///
/// Returned as [`PacketBoxRay::of_eight`] returns it (the packet `None` when not worth it) and
/// read in place by the caller: `of_eight` (an AVX function, a call) writes its answer field by
/// field, and moving it into another layout right after would read it back with wide loads across
/// those narrower stores, which the CPU cannot forward. Always inlined, for the same reason:
/// returned from a call of its own, the answer would be copied again.
#[inline(always)]
fn coherent_packet(rays: &[Ray; PACKET], extent: f32) -> (u32, Option<PacketBoxRay>) {
    // Random rays leave here (the last or the second ray in another octant, 7 times in 8 each):
    // `of_eight` checks every ray, in one pass, only for groups that may be coherent.
    let octant = |r: &Ray| r.dir.is_negative_bitmask();
    if octant(&rays[PACKET - 1]) != octant(&rays[0]) || octant(&rays[1]) != octant(&rays[0]) {
        return (0, None);
    }
    const _: () = assert!(PACKET == 8, "PacketBoxRay::of_eight");
    let mut group = PacketBoxRay::of_eight(rays);
    if !group.1.as_ref().is_some_and(|p| p.is_coherent(extent)) {
        group.1 = None;
    }
    group
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distinct keys are counted the same on the stack and past it, repeats anywhere.
    #[test]
    fn count_keys_are_distinct_inline_and_spilled() {
        for n in [0, 1, 5, INLINE_KEYS, INLINE_KEYS + 1, 3 * INLINE_KEYS + 2] {
            let mut keys = Keys::new();
            // Every key twice, the repeat far from the first (across the inline / spill border).
            for k in (0..n).chain((0..n).rev()) {
                keys.push((k as u32 % 7, k as u32));
            }
            assert_eq!(distinct(keys), n, "{n} keys");
        }
    }
}
