//! Random boxes and rays shared by the wide and quantized BVH tests.

use std::ops::{ControlFlow, Range};

use glam::Vec3;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use super::wide::{Order, RayRun, WideRay};
use crate::{Aabb, Ray};

/// `n` boxes of size 0.01–1 (times `scale`) in a cube of side 20 (times `scale`), and their centres.
pub(crate) fn random_boxes(n: usize, seed: u64, scale: f32) -> (Vec<Aabb>, Vec<Vec3>) {
    let mut rng = Pcg64::seed_from_u64(seed);
    let boxes: Vec<Aabb> = (0..n)
        .map(|_| {
            let p = Vec3::new(
                rng.gen_range(-10.0..10.0),
                rng.gen_range(-10.0..10.0),
                rng.gen_range(-10.0..10.0),
            ) * scale;
            Aabb::new(p, p + Vec3::splat(rng.gen_range(0.01..1.0) * scale))
        })
        .collect();
    let centroids = boxes.iter().map(Aabb::center).collect();
    (boxes, centroids)
}

/// Ray `k` of a test: origin in a cube of half-side `reach`, random direction; every fourth ray is
/// parallel to an axis plane and every eighth to an axis (infinite `1/dir` components).
pub(crate) fn random_ray(rng: &mut Pcg64, k: usize, reach: f32) -> Ray {
    let origin = Vec3::new(
        rng.gen_range(-reach..reach),
        rng.gen_range(-reach..reach),
        rng.gen_range(-reach..reach),
    );
    let mut dir = Vec3::new(
        rng.gen_range(-1.0..1.0),
        rng.gen_range(-1.0..1.0),
        rng.gen_range(-1.0..1.0),
    );
    if k.is_multiple_of(4) {
        dir[k / 4 % 3] = 0.0;
    }
    if k.is_multiple_of(8) {
        dir[(k / 8 + 1) % 3] = 0.0;
    }
    Ray::new(origin, dir)
}

/// The leaf closure of the traversal tests for ray `k`: records the leaf, shrinks `t_max` at every
/// second leaf (as a closest-hit query would), and stops the walk after the third leaf when
/// `stop(k)` (as an any-hit query would).
pub(crate) fn record_leaf(
    k: usize,
    stop: fn(usize) -> bool,
    leaves: &mut Vec<(usize, usize)>,
    range: Range<usize>,
    t_max: &mut f32,
) -> ControlFlow<()> {
    leaves.push((range.start, range.end));
    if leaves.len().is_multiple_of(2) {
        *t_max = t_max.min(25.0 - leaves.len() as f32);
    }
    if stop(k) && leaves.len() == 3 {
        ControlFlow::Break(())
    } else {
        ControlFlow::Continue(())
    }
}

/// A run of `rays` ([`RayRun`]) whose walks [`record_leaf`]: ray `k` starts with bound `t_max(k)`,
/// and its leaves end up in `leaves[k]`. `NEAREST`: walks in [`Order::NearestFirst`], else in
/// [`Order::NodeOrder`] (a bool: enums are not const parameters).
pub(crate) struct LeafRecorder<'a, const NEAREST: bool> {
    pub rays: &'a [WideRay],
    pub t_max: fn(usize) -> f32,
    pub stop: fn(usize) -> bool,
    pub leaves: Vec<Vec<(usize, usize)>>,
    /// How many times each ray's walk was finished (once, for a correct loop).
    pub finished: Vec<u32>,
}

impl<const NEAREST: bool> RayRun for LeafRecorder<'_, NEAREST> {
    const ORDER: Order = if NEAREST {
        Order::NearestFirst
    } else {
        Order::NodeOrder
    };
    type State = (usize, Vec<(usize, usize)>);

    fn start(&self, k: usize) -> (WideRay, f32, Self::State) {
        (self.rays[k], (self.t_max)(k), (k, Vec::new()))
    }

    fn leaf(
        &self,
        state: &mut Self::State,
        range: Range<usize>,
        t_max: &mut f32,
    ) -> ControlFlow<()> {
        record_leaf(state.0, self.stop, &mut state.1, range, t_max)
    }

    fn leaf_data(&self, _: usize) -> *const u8 {
        std::ptr::null()
    }

    fn finish(&mut self, k: usize, (_, leaves): Self::State) {
        self.leaves[k] = leaves;
        self.finished[k] += 1;
    }
}
