//! Random boxes and rays, and the damaged-tree comparison of the load's checks with the
//! validation walk, shared by the wide and quantized BVH tests.

use std::ops::{ControlFlow, Range};

use glam::Vec3;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use super::wide::{NodeLayout, Order, RayRun, WideRay, WideTree};
use super::LEAF_ALIGN;
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

/// `tree` with the order `ids` over `boxes` damaged `rounds` times (each round one to three
/// faults on a fresh copy: `damage_node` on a random node, or a changed id), and each time the
/// passes a load runs ([`WideTree::check_counts`], [`WideTree::block_leaves`],
/// [`WideTree::check_block`] on every block and each primitive's box inside the box it returns)
/// against the reference walk
/// ([`WideTree::validate_by`]): they must accept exactly the same trees. Returns how many
/// damaged trees both accepted and how many both refused.
pub(crate) fn load_checks_agree_with_the_walk<N: NodeLayout>(
    tree: &WideTree<N>,
    ids: &[u32],
    boxes: &[Aabb],
    rounds: usize,
    seed: u64,
    damage_node: impl Fn(&mut N, &mut Pcg64, usize, usize),
) -> (usize, usize) {
    let padding = WideTree::<N>::PADDING;
    let by_passes = |t: &WideTree<N>, ids: &[u32]| {
        if t.check_counts(ids, boxes.len()).is_err() {
            return false;
        }
        let Some(leaves) = t.block_leaves(ids) else {
            return false;
        };
        (0..ids.len().div_ceil(LEAF_ALIGN)).all(|b| {
            let slots = &ids[b * LEAF_ALIGN..(b * LEAF_ALIGN + LEAF_ALIGN).min(ids.len())];
            t.check_block(&leaves, b, slots).is_some_and(|leaf| {
                slots
                    .iter()
                    .filter(|&&p| p != padding)
                    .all(|&p| leaf.contains(&boxes[p as usize]))
            })
        })
    };
    let by_walk = |t: &WideTree<N>, ids: &[u32]| {
        t.validate_by(ids, boxes.len(), |p, _| boxes[p as usize])
            .is_ok()
    };
    assert!(
        by_walk(tree, ids) && by_passes(tree, ids),
        "the tree is valid"
    );
    let mut rng = Pcg64::seed_from_u64(seed);
    let (nodes, positions) = (tree.nodes.len(), ids.len());
    let (mut accepted, mut refused) = (0, 0);
    for round in 0..rounds {
        let (mut t, mut ids) = (tree.clone(), ids.to_vec());
        for _ in 0..rng.gen_range(1..=3) {
            if rng.gen_bool(0.7) {
                let i = rng.gen_range(0..nodes);
                damage_node(&mut t.nodes[i], &mut rng, nodes, positions);
            } else {
                let p = rng.gen_range(0..positions);
                ids[p] = match rng.gen_range(0..3) {
                    0 => padding,
                    1 => ids[rng.gen_range(0..positions)],
                    _ => rng.gen_range(0..boxes.len() as u32 + 2),
                };
            }
        }
        let walk = by_walk(&t, &ids);
        assert_eq!(by_passes(&t, &ids), walk, "round {round}");
        if walk {
            accepted += 1;
        } else {
            refused += 1;
        }
    }
    (accepted, refused)
}
