//! The binned SAH builder (Wald, "On fast Construction of SAH-based Bounding Volume Hierarchies",
//! IEEE Symposium on Interactive Ray Tracing 2007) and its settings, [`BuildConfig`].
//!
//! Top-down: each node's primitives are binned by centroid into [`BuildConfig::bins`] equal slices of
//! the centroid box along each axis; the surface area heuristic
//! `C_trav + C_isect · (A_L·N_L + A_R·N_R) / A` is evaluated at every bin boundary and the cheapest
//! plane wins, unless making a leaf (`C_isect · N`) is cheaper and the node is small enough. Small nodes
//! may instead be split by an exact sweep over sorted centroids ([`BuildConfig::sweep_threshold`]).
//! Below depth [`MEDIAN_DEPTH`] the builder switches to object-median splits, which halve the node, so
//! no tree is deeper than [`super::MAX_DEPTH`].
//!
//! With the `parallel` feature (on by default), nodes holding at least
//! [`BuildConfig::parallel_threshold`] primitives build their two subtrees with `rayon::join`. The
//! result does not depend on the number of threads: the same splits are chosen and the subtrees are
//! laid out in the same depth-first order.

use glam::{Vec3, Vec3A};

use super::{Bvh, Node, MAX_DEPTH};
use crate::Aabb;

/// From this depth on (root = 1) nodes are split at the object median of their longest centroid axis:
/// `MEDIAN_DEPTH + 32 <= MAX_DEPTH`, and 32 halvings bring any `u32` count down to one primitive.
pub const MEDIAN_DEPTH: usize = MAX_DEPTH - 32;

/// Settings of [`Bvh::build`]. Start from a preset ([`BuildConfig::FAST`], [`BuildConfig::BALANCED`],
/// the default, or [`BuildConfig::HIGH_QUALITY`]) and adjust fields.
///
/// ```
/// use raypick::bvh::BuildConfig;
/// let config = BuildConfig { max_leaf_size: 2, ..BuildConfig::HIGH_QUALITY };
/// assert_eq!(BuildConfig::default(), BuildConfig::BALANCED);
/// # let _ = config;
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BuildConfig {
    /// Bins per axis for the SAH (Wald 2007 finds 16–32 enough for near-sweep quality). More bins
    /// find better planes and cost build time linearly. At least 2.
    pub bins: usize,
    /// Largest leaf: nodes with more primitives are always split. Smaller leaves mean fewer primitive
    /// tests per leaf and more nodes (memory, box tests). At least 1.
    pub max_leaf_size: usize,
    /// SAH cost of visiting an interior node (two box tests), relative to [`Self::intersection_cost`].
    pub traversal_cost: f32,
    /// SAH cost of testing one primitive, or one block of [`Self::block_size`] primitives.
    pub intersection_cost: f32,
    /// Primitives a leaf tests together (1, or 4 for the 4-wide triangle blocks of meshes): the SAH
    /// charges a leaf of `n` primitives `⌈n / block_size⌉` tests, as Embree's builders do for its
    /// 4-wide leaves, so it prefers leaves that fill their blocks. At least 1.
    pub block_size: usize,
    /// Nodes with at most this many primitives are split by a full SAH sweep over the centroids sorted
    /// along each axis (exact, `O(n log n)` per node) instead of binning. 0 turns the sweep off.
    pub sweep_threshold: usize,
    /// Nodes with at least this many primitives build their two subtrees in parallel (feature
    /// `parallel`). Smaller nodes are not worth a task.
    pub parallel_threshold: usize,
    /// Meshes store their BVH with 8-bit child boxes ([`crate::bvh::quantized`]): 128-byte nodes
    /// instead of 256, like Embree's `RTC_SCENE_FLAG_COMPACT`. The smaller tree stays in cache
    /// better, but the node test dequantizes: it pays where the tree misses the caches (large
    /// meshes, incoherent rays) and costs where it does not (coherent camera rays). Off in every
    /// preset. Answers are the same either way.
    pub compact: bool,
    /// Tree optimization after the build ([`crate::bvh::reinsert`]): the first pass moves up to this
    /// fraction of the nodes (those with the largest boxes) to where the SAH cost drops most; each
    /// later pass moves fewer. 0 turns it off.
    pub reinsertion_batch: f32,
    /// Number of reinsertion passes (0 turns it off).
    pub reinsertion_passes: usize,
}

impl BuildConfig {
    /// Fastest build, slower traversal: 8 bins, no sweep, no reinsertion.
    pub const FAST: Self = Self {
        bins: 8,
        max_leaf_size: 8,
        traversal_cost: 1.0,
        intersection_cost: 1.0,
        block_size: 4,
        sweep_threshold: 0,
        parallel_threshold: 4096,
        compact: false,
        reinsertion_batch: 0.0,
        reinsertion_passes: 0,
    };

    /// The default: 32 bins, a full sweep for nodes of up to 16 primitives, leaves of up to 8, then
    /// two reinsertion passes over 5 % and 1.7 % of the nodes ([`crate::bvh::reinsert`]), which
    /// move the subtrees of large triangles that the top-down build placed too deep. Meshes
    /// collapse this tree into the wide tree of least SAH cost ([`crate::bvh::collapse`]), so a
    /// better binary tree (finer bins, reinsertion) carries over into the tree the rays walk.
    ///
    /// Costs are tuned for meshes, which test the triangles of a leaf in SIMD from contiguous
    /// blocks of four (`simd::tri_hits`, one or two blocks per pass): a block test costs 0.8 of a
    /// node visit (a likely cache miss), and the SAH counts blocks (`block_size` 4), as Embree does
    /// for its 4-wide leaves. Leaves then fill their blocks: fewer padding lanes, fewer bytes per
    /// triangle and fewer leaf passes than when each triangle is charged on its own. Scenes build
    /// their sphere and top-level BVHs with `block_size` 1: those test one primitive at a time.
    pub const BALANCED: Self = Self {
        bins: 32,
        max_leaf_size: 8,
        traversal_cost: 1.0,
        intersection_cost: 0.8,
        block_size: 4,
        sweep_threshold: 16,
        parallel_threshold: 4096,
        compact: false,
        reinsertion_batch: 0.05,
        reinsertion_passes: 2,
    };

    /// Best trees for many rays: 32 bins, a full sweep for nodes of up to 64 primitives, four
    /// reinsertion passes starting at 20 % of the nodes.
    pub const HIGH_QUALITY: Self = Self {
        bins: 32,
        max_leaf_size: 8,
        traversal_cost: 1.0,
        intersection_cost: 0.8,
        block_size: 4,
        sweep_threshold: 64,
        parallel_threshold: 4096,
        compact: false,
        reinsertion_batch: 0.2,
        reinsertion_passes: 4,
    };

    /// The three presets with their names (for tests and benchmarks).
    pub const PRESETS: [(&'static str, Self); 3] = [
        ("fast", Self::FAST),
        ("balanced", Self::BALANCED),
        ("high_quality", Self::HIGH_QUALITY),
    ];
}

impl Default for BuildConfig {
    fn default() -> Self {
        Self::BALANCED
    }
}

/// A split decision: primitives go left when `goes_left` holds for their centroid.
#[derive(Clone, Copy, Debug)]
enum Split {
    /// Binned: bin index `<= bin` on `axis`.
    Binned { axis: usize, bin: usize, cost: f32 },
    /// Sorted sweep: the first `count` primitives in centroid order along `axis`.
    Sweep {
        axis: usize,
        count: usize,
        cost: f32,
    },
    /// Object median (or index median when every centroid is the same) on `axis`.
    Median { axis: usize },
}

struct Builder<'a> {
    boxes: &'a [Aabb],
    centroids: &'a [Vec3],
    config: BuildConfig,
}

impl Bvh {
    /// Builds a BVH over `boxes.len()` primitives from their boxes and centroids (any point that
    /// represents the primitive, usually its box centre) with the binned SAH.
    ///
    /// Boxes and centroids should be finite; non-finite ones give a valid but poor tree (never a
    /// panic).
    ///
    /// # Panics
    /// When `boxes` and `centroids` have different lengths or there are more than `u32::MAX`
    /// primitives (a caller's bug, not bad data).
    ///
    /// ```
    /// use raypick::{bvh::{Bvh, BuildConfig}, glam::Vec3, Aabb};
    /// let boxes: Vec<Aabb> = (0..10)
    ///     .map(|i| Aabb::new(Vec3::splat(i as f32), Vec3::splat(i as f32 + 0.5)))
    ///     .collect();
    /// let centroids: Vec<Vec3> = boxes.iter().map(Aabb::center).collect();
    /// let bvh = Bvh::build(&boxes, &centroids, BuildConfig::default());
    /// bvh.validate(&boxes).unwrap();
    /// assert_eq!(bvh.prim_ids().len(), 10);
    /// ```
    pub fn build(boxes: &[Aabb], centroids: &[Vec3], config: BuildConfig) -> Bvh {
        assert_eq!(
            boxes.len(),
            centroids.len(),
            "Bvh::build: one centroid per box"
        );
        assert!(
            u32::try_from(boxes.len()).is_ok(),
            "Bvh::build: at most u32::MAX primitives"
        );
        let config = BuildConfig {
            bins: config.bins.max(2),
            max_leaf_size: config.max_leaf_size.max(1),
            block_size: config.block_size.max(1),
            ..config
        };
        let mut prim_ids: Vec<u32> = (0..boxes.len() as u32).collect();
        let mut nodes = Vec::new();
        if !boxes.is_empty() {
            nodes.reserve(2 * boxes.len());
            let builder = Builder {
                boxes,
                centroids,
                config,
            };
            builder.build_node(&mut prim_ids, 0, 1, &mut nodes);
        }
        nodes.shrink_to_fit();
        let mut bvh = Bvh { nodes, prim_ids };
        super::reinsert::optimize(
            &mut bvh,
            config.reinsertion_batch,
            config.reinsertion_passes,
        );
        bvh
    }
}

impl Builder<'_> {
    /// Builds the subtree over `ids` (which start at position `first` of the permutation) at `depth`,
    /// appending its nodes to `out` depth-first. Interior nodes' child indices are relative to the
    /// start of `out`.
    fn build_node(&self, ids: &mut [u32], first: u32, depth: usize, out: &mut Vec<Node>) {
        let (bounds, cbounds) = self.node_bounds(ids);
        let n = ids.len();
        let split = if n <= 1 {
            None
        } else {
            self.choose_split(ids, &bounds, &cbounds, depth)
        };
        let leaf_cost = self.config.intersection_cost * self.blocks(n);
        let split = match split {
            Some(s) if n > self.config.max_leaf_size => Some(s),
            Some(Split::Binned { cost, .. } | Split::Sweep { cost, .. }) if cost >= leaf_cost => {
                None
            }
            other => other,
        };
        let Some(split) = split else {
            out.push(Node::leaf(bounds, first, n as u32));
            return;
        };
        let left_len = self.partition(ids, &cbounds, split);
        let (left, right) = ids.split_at_mut(left_len);
        let me = out.len();
        out.push(Node::interior(bounds, 0));
        let right_first = first + left_len as u32;
        #[cfg(feature = "parallel")]
        if n >= self.config.parallel_threshold {
            let (mut lnodes, mut rnodes) = (Vec::new(), Vec::new());
            rayon::join(
                || self.build_node(left, first, depth + 1, &mut lnodes),
                || self.build_node(right, right_first, depth + 1, &mut rnodes),
            );
            let base = out.len() as u32;
            append_shifted(out, &lnodes, base);
            out[me].index = out.len() as u32;
            let base = out.len() as u32;
            append_shifted(out, &rnodes, base);
            return;
        }
        self.build_node(left, first, depth + 1, out);
        out[me].index = out.len() as u32;
        self.build_node(right, right_first, depth + 1, out);
    }

    fn node_bounds(&self, ids: &[u32]) -> (Aabb, Aabb) {
        let mut bounds = Aabb::EMPTY;
        let mut cbounds = Aabb::EMPTY;
        for &id in ids {
            bounds = bounds.union(self.boxes[id as usize]);
            cbounds = cbounds.grow(self.centroids[id as usize]);
        }
        (bounds, cbounds)
    }

    fn choose_split(
        &self,
        ids: &[u32],
        bounds: &Aabb,
        cbounds: &Aabb,
        depth: usize,
    ) -> Option<Split> {
        let axis = cbounds.longest_axis();
        if depth >= MEDIAN_DEPTH {
            return Some(Split::Median { axis });
        }
        let best = if ids.len() <= self.config.sweep_threshold {
            self.sweep_split(ids, bounds)
        } else {
            self.binned_split(ids, bounds, cbounds)
        };
        // No plane separates the centroids (all equal, or non-finite): fall back to the median,
        // which the caller uses only when the node is too big for a leaf.
        best.or(Some(Split::Median { axis }))
    }

    /// Tests a leaf of `n` primitives costs: `⌈n / block_size⌉`.
    #[inline]
    fn blocks(&self, n: usize) -> f32 {
        n.div_ceil(self.config.block_size) as f32
    }

    /// `C_trav + C_isect · (A_L·B_L + A_R·B_R) / A`, `B` the blocks of each side ([`Self::blocks`]).
    #[inline]
    fn sah(&self, parent_area: f32, left: (f32, usize), right: (f32, usize)) -> f32 {
        let inv = if parent_area > 0.0 {
            1.0 / parent_area
        } else {
            0.0
        };
        self.config.traversal_cost
            + self.config.intersection_cost
                * (left.0 * self.blocks(left.1) + right.0 * self.blocks(right.1))
                * inv
    }

    fn bin_of(&self, c: f32, cmin: f32, scale: f32) -> usize {
        // `as usize` saturates (NaN gives 0), and the clamp keeps the rightmost centroid in the last
        // bin.
        (((c - cmin) * scale) as usize).min(self.config.bins - 1)
    }

    fn bin_scale(&self, cbounds: &Aabb, axis: usize) -> Option<f32> {
        let extent = cbounds.extent()[axis];
        (extent > 0.0 && extent.is_finite()).then(|| self.config.bins as f32 / extent)
    }

    /// The cheapest binned plane over the three axes. One pass over the primitives bins each
    /// into its bin of every axis (one load of its box and centroid instead of three), the bin
    /// boxes grown four lanes at a time ([`BinBox`]); the costs are then those of the plain
    /// per-axis loop, so the plane chosen is the same.
    fn binned_split(&self, ids: &[u32], bounds: &Aabb, cbounds: &Aabb) -> Option<Split> {
        let bins = self.config.bins;
        let area = bounds.surface_area();
        // An axis without a scale (no extent) is binned with scale 0 (everything in its bin 0)
        // and skipped below.
        let scales: [Option<f32>; 3] = std::array::from_fn(|a| self.bin_scale(cbounds, a));
        let scale = Vec3::from_array(scales.map(|s| s.unwrap_or(0.0)));
        let cmin = cbounds.min;
        let mut bin_boxes = vec![BinBox::EMPTY; 3 * bins];
        let mut bin_counts = vec![0usize; 3 * bins];
        for &id in ids {
            let c = self.centroids[id as usize];
            let b = BinBox::from(self.boxes[id as usize]);
            for axis in 0..3 {
                let k = axis * bins + self.bin_of(c[axis], cmin[axis], scale[axis]);
                bin_boxes[k] = bin_boxes[k].union(b);
                bin_counts[k] += 1;
            }
        }
        let mut best: Option<Split> = None;
        let mut best_cost = f32::INFINITY;
        let mut right_area = vec![0.0f32; bins];
        for axis in 0..3 {
            if scales[axis].is_none() {
                continue;
            }
            let boxes = &bin_boxes[axis * bins..(axis + 1) * bins];
            let counts = &bin_counts[axis * bins..(axis + 1) * bins];
            // right_area[i]: area of bins i+1.. (the right side of the plane after bin i).
            let mut acc = BinBox::EMPTY;
            for i in (1..bins).rev() {
                acc = acc.union(boxes[i]);
                right_area[i - 1] = Aabb::from(acc).surface_area();
            }
            let mut left = BinBox::EMPTY;
            let mut left_n = 0;
            for i in 0..bins - 1 {
                left = left.union(boxes[i]);
                left_n += counts[i];
                let right_n = ids.len() - left_n;
                if left_n == 0 || right_n == 0 {
                    continue;
                }
                let cost = self.sah(
                    area,
                    (Aabb::from(left).surface_area(), left_n),
                    (right_area[i], right_n),
                );
                if cost < best_cost {
                    best_cost = cost;
                    best = Some(Split::Binned { axis, bin: i, cost });
                }
            }
        }
        best
    }

    fn sweep_split(&self, ids: &[u32], bounds: &Aabb) -> Option<Split> {
        let n = ids.len();
        let area = bounds.surface_area();
        let mut sorted = ids.to_vec();
        let mut right_area = vec![0.0f32; n];
        let mut best: Option<Split> = None;
        let mut best_cost = f32::INFINITY;
        for axis in 0..3 {
            self.sort_on_axis(&mut sorted, axis);
            let mut acc = Aabb::EMPTY;
            for i in (1..n).rev() {
                acc = acc.union(self.boxes[sorted[i] as usize]);
                right_area[i] = acc.surface_area();
            }
            let mut left = Aabb::EMPTY;
            for count in 1..n {
                left = left.union(self.boxes[sorted[count - 1] as usize]);
                let cost = self.sah(
                    area,
                    (left.surface_area(), count),
                    (right_area[count], n - count),
                );
                if cost < best_cost {
                    best_cost = cost;
                    best = Some(Split::Sweep { axis, count, cost });
                }
            }
        }
        best
    }

    /// Sorts by centroid along `axis`, ties by id, so the order (and the tree) is deterministic.
    fn sort_on_axis(&self, ids: &mut [u32], axis: usize) {
        ids.sort_unstable_by(|&a, &b| {
            let (ca, cb) = (
                self.centroids[a as usize][axis],
                self.centroids[b as usize][axis],
            );
            ca.total_cmp(&cb).then(a.cmp(&b))
        });
    }

    /// Reorders `ids` so the left child's primitives come first; returns how many they are (always
    /// `1..ids.len()`).
    fn partition(&self, ids: &mut [u32], cbounds: &Aabb, split: Split) -> usize {
        let n = ids.len();
        match split {
            Split::Binned { axis, bin, .. } => {
                let cmin = cbounds.min[axis];
                let scale = self.bin_scale(cbounds, axis).unwrap_or(0.0);
                let mut left = 0;
                for i in 0..n {
                    if self.bin_of(self.centroids[ids[i] as usize][axis], cmin, scale) <= bin {
                        ids.swap(i, left);
                        left += 1;
                    }
                }
                left
            }
            Split::Sweep { axis, count, .. } => {
                self.sort_on_axis(ids, axis);
                count
            }
            Split::Median { axis } => {
                let mid = n / 2;
                ids.select_nth_unstable_by(mid, |&a, &b| {
                    let (ca, cb) = (
                        self.centroids[a as usize][axis],
                        self.centroids[b as usize][axis],
                    );
                    ca.total_cmp(&cb).then(a.cmp(&b))
                });
                mid
            }
        }
    }
}

/// A bin's box during binning: [`Aabb`] in four-lane vectors, so growing it is one min and one
/// max (`Vec3A`: SIMD on x86, aarch64 and wasm32 with simd128). Its corners equal those of the
/// same boxes joined as [`Aabb`]s (up to the sign of a zero, which no extent or area sees), so
/// every cost computed from it is the one the [`Aabb`]s give.
#[derive(Clone, Copy)]
struct BinBox {
    min: Vec3A,
    max: Vec3A,
}

impl BinBox {
    const EMPTY: Self = Self {
        min: Vec3A::INFINITY,
        max: Vec3A::NEG_INFINITY,
    };

    #[inline]
    fn union(self, other: Self) -> Self {
        Self {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }
}

impl From<Aabb> for BinBox {
    #[inline]
    fn from(b: Aabb) -> Self {
        Self {
            min: b.min.into(),
            max: b.max.into(),
        }
    }
}

impl From<BinBox> for Aabb {
    #[inline]
    fn from(b: BinBox) -> Self {
        Aabb::new(b.min.into(), b.max.into())
    }
}

/// Appends `nodes` (child indices relative to their own start) at `base`, shifting child indices.
#[cfg(feature = "parallel")]
fn append_shifted(out: &mut Vec<Node>, nodes: &[Node], base: u32) {
    out.extend(nodes.iter().map(|n| {
        let mut n = *n;
        if !n.is_leaf() {
            n.index += base;
        }
        n
    }));
}
