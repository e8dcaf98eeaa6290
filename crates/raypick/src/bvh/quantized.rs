//! [`QuantizedBvh`]: the 8-wide BVH with its child boxes stored in 8 bits per plane, half the bytes of
//! a float node (128 instead of 256: two cache lines instead of four).
//!
//! Incoherent rays on big meshes are bound by memory latency: a ray visits a few nodes and triangle
//! blocks and spends most of its time waiting for them. Quantizing the child boxes on a per-node
//! grid (Mahovsky, "Ray Tracing with Reduced-Precision Bounding Volume Hierarchies", 2005; Ylitie,
//! Karras, Laine, "Efficient Incoherent Ray Traversal on GPUs Through Compressed Wide BVHs", HPG
//! 2017) shrinks the tree so more of it stays in cache, at the price of a costlier node test (the
//! planes are dequantized before the slab test). Meshes use it when the scene is built with
//! [`BuildConfig::compact`], which every preset leaves off.
//!
//! ## Grid and exactness
//! Each node stores its exact box (the union of its children's exact boxes) as the anchor, one grid
//! step per axis (a power of two: the smallest with `255·step ≥ extent`), and per child and plane
//! a count of steps ([`QuantBoxes8`]): a min plane is `min + q·step`, counted up from the
//! node's minimum, and a max plane `max − q·step`, counted down from its maximum, each rounded once in
//! f32 (`q·step` is exact). The builder picks the largest `q` whose *rounded* plane still holds the
//! child's exact box, so every stored box is conservative by construction, whatever the rounding,
//! and lies inside the node's exact box. The slab test on the dequantized planes is the float
//! node's (Ize's padded test), so a ray that touches a child's exact box always
//! reaches the child: the tree reaches a superset of what [`WideBvh<8>`] reaches, and the leaf
//! closure decides.
//!
//! ## Layout
//! [`QuantNode`]: the quantized boxes, then per child an index (`u32`) and a count (`u8`): as in
//! [`WideNode`](super::wide::WideNode), `count > 0` is a leaf over positions
//! `index..index + count` of [`QuantizedBvh::prim_ids`] (starting at a multiple of
//! [`LEAF_ALIGN`](super::LEAF_ALIGN)), `count == 0` an interior child at node `index` (after its
//! parent), and a lane whose `valid` bit is clear is empty. Leaves therefore hold at most 255
//! primitives ([`QuantizedBvh::build`] caps `max_leaf_size`).
//!
//! ## Traversal
//! The walks of [`super::wide`] over [`QuantNode`]s through the shared shell
//! ([`WideTree`]), with the quantized node test (bytes widened and scaled in AVX2 registers on
//! x86-64-v3 CPUs, dequantized in scalar code and tested in SSE otherwise; a scalar twin).

use glam::Vec3;

use super::wide::{Child, NodeLayout, NodeTest, WideBvh, WideTree};
use super::{BuildConfig, ValidationError};
use crate::simd::{qbox8_on, BoxHits, BoxRay, Isa, QuantBoxes8};
use crate::Aabb;

/// Lanes of a node.
const W: usize = 8;

/// One node of a [`QuantizedBvh`]: eight quantized child boxes and their references. 128 bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(64))]
pub struct QuantNode {
    /// The child boxes.
    pub boxes: QuantBoxes8,
    /// Per child: node index (interior) or first position in `prim_ids` (leaf); 0 for empty lanes.
    pub index: [u32; W],
    /// Per child: primitive count of a leaf, 0 for interior children and empty lanes.
    pub count: [u8; W],
}

const _: () = assert!(std::mem::size_of::<QuantNode>() == 128);

impl QuantNode {
    /// `true` when `lane` holds a child.
    #[inline]
    pub fn is_valid(&self, lane: usize) -> bool {
        self.boxes.valid & (1 << lane) != 0
    }

    /// `true` when `lane` is a leaf.
    #[inline]
    pub fn is_leaf(&self, lane: usize) -> bool {
        self.is_valid(lane) && self.count[lane] > 0
    }

    /// `true` when `lane` is an interior child.
    #[inline]
    pub fn is_interior(&self, lane: usize) -> bool {
        self.is_valid(lane) && self.count[lane] == 0
    }

    /// The (conservative) box of child `lane`, as the traversal sees it; empty for an empty lane.
    pub fn child_bounds(&self, lane: usize) -> Aabb {
        if !self.is_valid(lane) {
            return Aabb::EMPTY;
        }
        let p = |row| self.boxes.plane(row, lane);
        Aabb::new(Vec3::new(p(0), p(2), p(4)), Vec3::new(p(1), p(3), p(5)))
    }

    /// The node's exact box (its anchor).
    pub fn bounds(&self) -> Aabb {
        let a = &self.boxes.anchor;
        Aabb::new(Vec3::new(a[0], a[2], a[4]), Vec3::new(a[1], a[3], a[5]))
    }
}

/// The grid step of an axis spanning `lo..=hi`: the smallest power of two with `255·step ≥ hi − lo`,
/// within f32's range; 1 when the extent is zero or not finite (any step is then exact and the
/// planes stay at the anchors).
fn grid_step(lo: f32, hi: f32) -> f32 {
    let extent = f64::from(hi) - f64::from(lo);
    if !(extent > 0.0 && extent.is_finite() && lo.is_finite() && hi.is_finite()) {
        return 1.0;
    }
    let e = (extent / 255.0).log2().ceil() as i32;
    // 2^e is exact in f64 and, within f32's exponent range (subnormals included), in f32.
    2f64.powi(e.clamp(-149, 127)) as f32
}

/// The largest `q` in `0..=255` whose rounded plane `anchor + q·step` satisfies `holds` (`q = 0`, the
/// anchor itself, always does: the caller's anchors bound the target). `estimate` is a first guess.
fn steps(anchor: f32, step: f32, estimate: f64, holds: impl Fn(f32) -> bool) -> u8 {
    let plane = |q: u8| anchor + f32::from(q) * step;
    // `as u8` saturates, and NaN gives 0.
    let mut q = estimate.floor().clamp(0.0, 255.0) as u8;
    while q > 0 && !holds(plane(q)) {
        q -= 1;
    }
    while q < 255 && holds(plane(q + 1)) {
        q += 1;
    }
    q
}

/// Quantizes the exact child boxes `lanes` (those whose bit is set in `valid`) on the grid of their
/// union.
pub fn quantize(lanes: &[Aabb; W], valid: u8) -> QuantBoxes8 {
    let node = (0..W)
        .filter(|&l| valid & (1 << l) != 0)
        .fold(Aabb::EMPTY, |b, l| b.union(lanes[l]));
    let mut boxes = QuantBoxes8 {
        anchor: [
            node.min.x, node.max.x, node.min.y, node.max.y, node.min.z, node.max.z,
        ],
        scale: [0, 1, 2].map(|a| grid_step(node.min[a], node.max[a])),
        q: [[0; W]; 6],
        valid,
    };
    for (lane, child) in lanes.iter().enumerate() {
        if valid & (1 << lane) == 0 {
            continue;
        }
        for axis in 0..3 {
            let (lo, hi, step) = (node.min[axis], node.max[axis], boxes.scale[axis]);
            let (min, max) = (child.min[axis], child.max[axis]);
            boxes.q[2 * axis][lane] = steps(
                lo,
                step,
                (f64::from(min) - f64::from(lo)) / f64::from(step),
                |plane| plane <= min,
            );
            boxes.q[2 * axis + 1][lane] = steps(
                hi,
                -step,
                (f64::from(hi) - f64::from(max)) / f64::from(step),
                |plane| plane >= max,
            );
        }
    }
    boxes
}

/// An 8-wide BVH with quantized child boxes (see the [module docs](self)): the wide-tree shell over
/// [`QuantNode`]s.
pub type QuantizedBvh = WideTree<QuantNode>;

impl NodeLayout for QuantNode {
    const WIDTH: usize = W;

    #[inline(always)]
    fn child(&self, lane: usize) -> Child {
        Child {
            index: self.index[lane],
            count: u32::from(self.count[lane]),
        }
    }

    #[inline]
    fn holds(&self, lane: usize) -> bool {
        self.is_valid(lane)
    }

    #[inline]
    fn child_bounds(&self, lane: usize) -> Aabb {
        QuantNode::child_bounds(self, lane)
    }

    /// The node's exact box (its anchor).
    fn bounds(&self) -> Aabb {
        QuantNode::bounds(self)
    }

    /// The lanes quantized on the grid of their union (the new anchor).
    fn set_lanes(&mut self, lanes: &[Aabb]) {
        let lanes: [Aabb; W] = std::array::from_fn(|l| lanes[l]);
        self.boxes = quantize(&lanes, self.boxes.valid);
    }

    /// An empty lane has no index and no count; a lane's box lies inside its node's anchor, and an
    /// interior lane's box holds its child's anchor (which holds the child's lanes: by induction
    /// every box holds everything below it).
    fn check_lane(
        &self,
        node: usize,
        lane: usize,
        child: Option<&Self>,
    ) -> Result<(), ValidationError> {
        let (index, count) = (self.index[lane] as usize, usize::from(self.count[lane]));
        if !self.is_valid(lane) {
            return if index != 0 || count != 0 {
                Err(ValidationError::LeafRange {
                    node,
                    first: index,
                    end: index + count,
                })
            } else {
                Ok(())
            };
        }
        let bounds = self.child_bounds(lane);
        let inside = self.bounds().contains(&bounds);
        let holds_child = child.is_none_or(|c| bounds.contains(&c.bounds()));
        if inside && holds_child {
            Ok(())
        } else {
            Err(ValidationError::ChildOutside {
                parent: node,
                child: index,
            })
        }
    }
}

impl QuantizedBvh {
    /// Builds the binary SAH tree ([`super::Bvh::build`], with `max_leaf_size` capped at 255),
    /// collapses it ([`WideBvh::from_binary`]) and quantizes it.
    pub fn build(boxes: &[Aabb], centroids: &[Vec3], config: BuildConfig) -> Self {
        assert_eq!(boxes.len(), centroids.len(), "one centroid per box");
        Self::build_by(boxes.len(), |i| (boxes[i], centroids[i]), config)
    }

    /// [`QuantizedBvh::build`] from each primitive's box and centroid
    /// ([`super::Bvh::build_by`]).
    pub fn build_by(
        n: usize,
        prim: impl Fn(usize) -> (Aabb, Vec3) + Sync + Send,
        config: BuildConfig,
    ) -> Self {
        let config = BuildConfig {
            max_leaf_size: config.max_leaf_size.min(255),
            ..config
        };
        Self::from_wide(WideBvh::<8>::build_by(n, prim, config))
    }

    /// Quantizes `wide` (same topology and permutation).
    ///
    /// # Panics
    /// When a leaf holds more than 255 primitives.
    pub fn from_wide(wide: WideBvh<8>) -> Self {
        let nodes = wide
            .nodes()
            .iter()
            .map(|node| {
                let valid = (0..W)
                    .filter(|&l| node.holds(l))
                    .fold(0u8, |v, l| v | 1 << l);
                let lanes = std::array::from_fn(|l| node.child_bounds(l));
                QuantNode {
                    boxes: quantize(&lanes, valid),
                    index: node.index,
                    count: node.count.map(|c| {
                        u8::try_from(c).expect("QuantizedBvh: leaves of at most 255 primitives")
                    }),
                }
            })
            .collect();
        Self {
            nodes,
            prim_ids: wide.prim_ids,
            num_prims: wide.num_prims,
            repeats: wide.repeats,
        }
    }
}

impl NodeTest for QuantNode {
    #[inline(always)]
    fn test(&self, isa: Isa, ray: &BoxRay, t_max: f32) -> BoxHits<8> {
        qbox8_on(isa, &self.boxes, ray, t_max)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    use std::ops::{ControlFlow, Range};

    use super::*;
    use crate::bvh::test_support::{random_boxes, random_ray, record_leaf, LeafRecorder};
    use crate::bvh::wide::{traverse_nodes, Order, Traverse, WideRay};

    proptest! {
        /// Every quantized box holds its exact box, lies inside the node's exact box, and is tight:
        /// one more step on any plane would cut into the exact box (or the count is at its limit).
        #[test]
        fn quantized_boxes_are_conservative_tight_and_inside_the_node(
            exp in -6i32..6,
            seeds in proptest::collection::vec(any::<u64>(), 1..=8),
        ) {
            let scale = 10f32.powi(exp);
            let lanes: Vec<Aabb> = seeds.iter().map(|&s| {
                let mut rng = Pcg64::seed_from_u64(s);
                let p = Vec3::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0)) * scale;
                let e = Vec3::new(rng.gen_range(0.0..0.5), rng.gen_range(0.0..0.5), rng.gen_range(0.0..0.5)) * scale;
                Aabb::new(p, p + e)
            }).collect();
            let mut all = [Aabb::EMPTY; W];
            all[..lanes.len()].copy_from_slice(&lanes);
            let valid = ((1u16 << lanes.len()) - 1) as u8;
            let boxes = quantize(&all, valid);
            let node = QuantNode { boxes, index: [0; W], count: [0; W] };
            let exact_node = lanes.iter().fold(Aabb::EMPTY, |b, &l| b.union(l));
            prop_assert_eq!(node.bounds(), exact_node);
            for (lane, exact) in lanes.iter().enumerate() {
                let q = node.child_bounds(lane);
                prop_assert!(q.contains(exact), "lane {} {:?} does not hold {:?}", lane, q, exact);
                prop_assert!(exact_node.contains(&q), "lane {} {:?} outside the node", lane, q);
                for row in 0..6 {
                    let steps = boxes.q[row][lane];
                    if steps < 255 {
                        let next = boxes.anchor[row] + f32::from(steps + 1) * boxes.signed_scale(row);
                        let axis = row / 2;
                        let cuts = if row % 2 == 0 { next > exact.min[axis] } else { next < exact.max[axis] };
                        prop_assert!(cuts, "row {} of lane {} could move in", row, lane);
                    }
                }
            }
            for lane in lanes.len()..W {
                prop_assert!(node.child_bounds(lane).is_empty());
            }
        }
    }

    #[test]
    fn quantized_trees_are_valid_for_every_size_preset_and_scale() {
        for n in [0, 1, 2, 3, 5, 9, 17, 100, 1000] {
            for (name, config) in BuildConfig::PRESETS {
                for scale in [1e-6, 1.0, 1e6] {
                    let (boxes, centroids) = random_boxes(n, n as u64, scale);
                    let q = QuantizedBvh::build(&boxes, &centroids, config);
                    assert_eq!(q.validate(&boxes), Ok(()), "n={n} {name} scale {scale}");
                    assert_eq!(q.num_prims(), n);
                    let wide = WideBvh::<8>::build(&boxes, &centroids, config);
                    assert_eq!(q.nodes().len(), wide.nodes().len());
                    assert_eq!(q.prim_ids(), wide.prim_ids());
                    if n > 0 {
                        assert_eq!(q.stats().leaves, wide.stats().leaves);
                    }
                }
            }
        }
    }

    /// What a traversal reaches: the primitives of every leaf, in order.
    fn reached(visit: impl FnOnce(&mut dyn FnMut(Range<usize>, &mut f32))) -> Vec<(usize, usize)> {
        let mut leaves = Vec::new();
        visit(&mut |range, _| leaves.push((range.start, range.end)));
        leaves
    }

    #[test]
    fn traversal_reaches_every_leaf_the_float_tree_reaches() {
        // Conservative boxes: the quantized tree reaches a superset of the float tree's leaves (same
        // topology, same positions), and not many more.
        for scale in [1e-4, 1.0, 1e4] {
            let (boxes, centroids) = random_boxes(3000, 4, scale);
            let wide = WideBvh::<8>::build(&boxes, &centroids, BuildConfig::BALANCED);
            let q = QuantizedBvh::from_wide(wide.clone());
            let mut rng = Pcg64::seed_from_u64(5);
            let (mut exact_total, mut quantized_total) = (0, 0);
            for k in 0..1000 {
                let ray = WideRay::new(&random_ray(&mut rng, k, 15.0 * scale));
                let exact = reached(|f| {
                    let _ = wide.traverse(&ray, f32::INFINITY, |r, t| {
                        f(r, t);
                        ControlFlow::Continue(())
                    });
                });
                let quantized = reached(|f| {
                    let _ = q.traverse(&ray, f32::INFINITY, |r, t| {
                        f(r, t);
                        ControlFlow::Continue(())
                    });
                });
                let mut missing = exact.clone();
                missing.retain(|leaf| !quantized.contains(leaf));
                assert!(
                    missing.is_empty(),
                    "ray {k}: quantized tree misses {missing:?}"
                );
                exact_total += exact.len();
                quantized_total += quantized.len();
            }
            assert!(
                exact_total > 1000,
                "{exact_total}: the rays should cross the boxes"
            );
            assert!(
                quantized_total * 10 < exact_total * 13,
                "quantized boxes reach {quantized_total} leaves, float {exact_total}"
            );
        }
    }

    #[test]
    fn every_compiled_traversal_visits_the_same_leaves_in_the_same_order() {
        let (boxes, centroids) = random_boxes(3000, 6, 1.0);
        let q = QuantizedBvh::build(&boxes, &centroids, BuildConfig::BALANCED);
        let mut rng = Pcg64::seed_from_u64(7);
        // Shrink t_max at every second leaf, as a closest-hit query would.
        let shrink = |leaves: &mut Vec<(usize, usize)>, range: Range<usize>, t_max: &mut f32| {
            record_leaf(0, |_| false, leaves, range, t_max)
        };
        let mut rays = Vec::new();
        let mut twins = Vec::new();
        for k in 0..1000 {
            let ray = WideRay::new(&random_ray(&mut rng, k, 15.0));
            let mut twin = Vec::new();
            let _ = traverse_nodes(
                &q.nodes,
                &ray,
                Order::NearestFirst,
                f32::INFINITY,
                |r, t| shrink(&mut twin, r, t),
                |_| std::ptr::null(),
                |node: &QuantNode, r, t| crate::simd::qbox8_scalar(&node.boxes, r, t),
            );
            for isa in Isa::available() {
                let mut copy = Vec::new();
                let _ = q.traverse_on(
                    isa,
                    &ray,
                    Order::NearestFirst,
                    f32::INFINITY,
                    |r, t| shrink(&mut copy, r, t),
                    |_| std::ptr::null(),
                );
                assert_eq!(copy, twin, "{isa:?}, ray {k}");
            }
            let mut entry = Vec::new();
            let _ = q.traverse_prefetching(
                &ray,
                Order::NearestFirst,
                f32::INFINITY,
                |r, t| shrink(&mut entry, r, t),
                |_| std::ptr::null(),
            );
            assert_eq!(entry, twin, "ray {k}");
            rays.push(ray);
            twins.push(twin);
        }
        // All the rays in one run (`traverse_each`): each ray's own leaves.
        let mut run = LeafRecorder::<true> {
            rays: &rays,
            t_max: |_| f32::INFINITY,
            stop: |_| false,
            leaves: vec![Vec::new(); rays.len()],
            finished: vec![0; rays.len()],
        };
        q.traverse_each(rays.len(), &mut run);
        assert!(
            run.finished.iter().all(|&f| f == 1),
            "each walk finished once"
        );
        assert_eq!(run.leaves, twins);
        assert!(twins.iter().map(Vec::len).sum::<usize>() > 500);
    }

    /// The load's passes over the nodes and the blocks accept exactly the trees the validation
    /// walk accepts: damaged links, counts, valid masks, quantized planes and ids.
    #[test]
    fn load_checks_accept_what_the_walk_accepts() {
        use crate::bvh::test_support::load_checks_agree_with_the_walk;
        for (n, seed) in [(300, 7), (2000, 8)] {
            let (boxes, centroids) = random_boxes(n, seed, 1.0);
            let q = QuantizedBvh::build(&boxes, &centroids, BuildConfig::FAST);
            let (accepted, refused) = load_checks_agree_with_the_walk(
                &q,
                &q.prim_ids,
                &boxes,
                3000,
                seed,
                |node: &mut QuantNode, rng, nodes, positions| {
                    let lane = rng.gen_range(0..W);
                    match rng.gen_range(0..7) {
                        0 => node.index[lane] = rng.gen_range(0..nodes as u32 + 2),
                        1 => node.index[lane] = rng.gen_range(0..positions as u32 + 8),
                        2 => node.count[lane] = rng.gen_range(0..6),
                        3 => node.boxes.valid ^= 1 << lane,
                        4 => {
                            let row = rng.gen_range(0..6);
                            node.boxes.q[row][lane] = node.boxes.q[row][lane]
                                .wrapping_add(rng.gen_range(0..3))
                                .wrapping_sub(1);
                        }
                        5 => node.boxes.anchor[rng.gen_range(0..6)] += rng.gen_range(-0.05..0.05),
                        _ => {
                            let other = rng.gen_range(0..W);
                            node.index.swap(lane, other);
                            node.count.swap(lane, other);
                        }
                    }
                },
            );
            assert!(
                accepted > 100 && refused > 1000,
                "n={n}: {accepted} accepted, {refused} refused"
            );
        }
    }

    #[test]
    fn refit_keeps_the_tree_valid_and_conservative() {
        let (boxes, centroids) = random_boxes(2000, 8, 1.0);
        let mut q = QuantizedBvh::build(&boxes, &centroids, BuildConfig::BALANCED);
        let moved: Vec<Aabb> = boxes
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let d = Vec3::new((i as f32).sin(), (i as f32 * 0.7).cos(), 0.3) * 4.0;
                Aabb::new(b.min * 1.5 + d, b.max * 1.5 + d + Vec3::splat(0.1))
            })
            .collect();
        q.refit(&moved);
        assert_eq!(q.validate(&moved), Ok(()));
        // Refit from scratch equals a quantization of the same topology built from the new boxes:
        // the root's anchor is the exact union.
        let union = moved.iter().fold(Aabb::EMPTY, |b, &m| b.union(m));
        assert_eq!(q.nodes()[0].bounds(), union);
        // The old boxes no longer fit (the test can fail).
        assert!(q.validate(&boxes).is_err());
    }
}
