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
use crate::simd::bins3;
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
    /// find better planes and cost build time linearly. Clamped to `2..=`[`MAX_BINS`].
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
    /// Bin only the longest axis of each node's centroid box instead of all three (as the
    /// fastest builders do, three-mesh-bvh's and Embree's morton-less fast path among them): a
    /// third of the binning for trees a little worse where the best plane lies across a shorter
    /// axis. On in [`BuildConfig::FAST`] only.
    pub longest_axis_only: bool,
    /// Meshes' trees try spatial splits ([`crate::bvh::spatial`]): tighter boxes where long
    /// triangles overlap (architecture), and a triangle may sit in several leaves (queries still
    /// report it once). A scene builds its meshes' tree both ways and keeps the one of lower SAH
    /// cost, so the build takes four to ten times the balanced one. On in
    /// [`BuildConfig::SPATIAL`] only; a [`Self::compact`] tree is built without them.
    pub spatial_splits: bool,
}

impl BuildConfig {
    /// Fastest build, slower traversal: 8 bins on the longest axis only, no sweep, no
    /// reinsertion.
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
        longest_axis_only: true,
        spatial_splits: false,
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
        longest_axis_only: false,
        spatial_splits: false,
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
        longest_axis_only: false,
        spatial_splits: false,
    };

    /// [`BuildConfig::HIGH_QUALITY`] with spatial splits ([`crate::bvh::spatial`]): meshes'
    /// trees cut long triangles where the SAH finds it pays, so boxes overlap less in
    /// architecture (walls, floors, columns), and the tree is kept only where its SAH cost is
    /// below the tree without cuts (a room whose walls and floor are whole near the root casts
    /// faster that way). Four to ten times the balanced build: for scenes built once and cast many
    /// times (scene files).
    pub const SPATIAL: Self = Self {
        spatial_splits: true,
        ..Self::HIGH_QUALITY
    };

    /// The presets with their names (for tests and benchmarks).
    pub const PRESETS: [(&'static str, Self); 4] = [
        ("fast", Self::FAST),
        ("balanced", Self::BALANCED),
        ("high_quality", Self::HIGH_QUALITY),
        ("spatial", Self::SPATIAL),
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
    /// Binned: bin index `<= bin` on `axis`; `left` and `right` are the two sides' boxes (the
    /// unions of their bins' boxes, so the partition need not gather them).
    Binned {
        axis: usize,
        bin: usize,
        cost: f32,
        left: BinBox,
        right: BinBox,
    },
    /// Sorted sweep: the first `count` primitives in centroid order along `axis`.
    Sweep {
        axis: usize,
        count: usize,
        cost: f32,
    },
    /// Object median (or index median when every centroid is the same) on `axis`.
    Median { axis: usize },
}

/// Most bins per axis: [`BuildConfig::bins`] is clamped to `2..=MAX_BINS`, so the bins of a node
/// live on the stack (at most 3 × 64 boxes and counts, about 7 KiB, only while a split is chosen).
pub const MAX_BINS: usize = 64;

/// A primitive during the build: its box, centroid and id side by side in 48 bytes, moved
/// together when a node is partitioned, so every pass over a node reads one contiguous run of
/// memory instead of gathering boxes and centroids through ids (Wald 2007's "primitive
/// references", as Embree's `PrimRef`).
#[derive(Clone, Copy, Debug)]
struct Ref {
    min: Vec3A,
    max: Vec3A,
    centroid: Vec3,
    id: u32,
}

const _: () = assert!(std::mem::size_of::<Ref>() == 48);

impl Ref {
    #[inline]
    fn bin_box(&self) -> BinBox {
        BinBox {
            min: self.min,
            max: self.max,
        }
    }
}

/// A node's box and the box of its primitives' centroids, in the lanes of [`BinBox`].
#[derive(Clone, Copy)]
struct NodeBounds {
    bounds: BinBox,
    centroids: BinBox,
}

impl NodeBounds {
    const EMPTY: Self = Self {
        bounds: BinBox::EMPTY,
        centroids: BinBox::EMPTY,
    };

    #[inline]
    fn add(&mut self, r: &Ref) {
        self.bounds = self.bounds.union(r.bin_box());
        self.centroids = self.centroids.grow(r.centroid);
    }

    fn of(refs: &[Ref]) -> Self {
        let mut b = Self::EMPTY;
        refs.iter().for_each(|r| b.add(r));
        b
    }
}

struct Builder {
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
        Self::build_by(boxes.len(), |i| (boxes[i], centroids[i]), config)
    }

    /// [`Bvh::build`] over `n` primitives whose box and centroid `prim(i)` gives, asked once
    /// each (on all cores with the `parallel` feature): for callers that make boxes on the fly
    /// (a mesh's triangles), so no box and centroid arrays are kept beside the builder's own.
    ///
    /// # Panics
    /// When `n > u32::MAX` (a caller's bug, not bad data).
    pub fn build_by(
        n: usize,
        prim: impl Fn(usize) -> (Aabb, Vec3) + Sync + Send,
        config: BuildConfig,
    ) -> Bvh {
        assert!(
            u32::try_from(n).is_ok(),
            "Bvh::build: at most u32::MAX primitives"
        );
        let config = BuildConfig {
            bins: config.bins.clamp(2, MAX_BINS),
            max_leaf_size: config.max_leaf_size.max(1),
            block_size: config.block_size.max(1),
            ..config
        };
        let make = |id: usize| {
            let (b, centroid) = prim(id);
            Ref {
                min: b.min.into(),
                max: b.max.into(),
                centroid,
                id: id as u32,
            }
        };
        #[cfg(feature = "parallel")]
        let mut refs: Vec<Ref> = {
            use rayon::prelude::*;
            (0..n).into_par_iter().map(make).collect()
        };
        #[cfg(not(feature = "parallel"))]
        let mut refs: Vec<Ref> = (0..n).map(make).collect();
        let mut nodes = Vec::new();
        if !refs.is_empty() {
            nodes.reserve(2 * refs.len());
            let root = NodeBounds::of(&refs);
            Builder { config }.build_node(&mut refs, root, 0, 1, &mut nodes);
        }
        nodes.shrink_to_fit();
        let prim_ids = refs.iter().map(|r| r.id).collect();
        drop(refs);
        let mut bvh = Bvh { nodes, prim_ids };
        super::reinsert::optimize(
            &mut bvh,
            config.reinsertion_batch,
            config.reinsertion_passes,
        );
        bvh
    }
}

impl Builder {
    /// Builds the subtree over `refs` (which start at position `first` of the permutation, and
    /// whose box and centroid box are `nb`) at `depth`, appending its nodes to `out` depth-first.
    /// Interior nodes' child indices are relative to the start of `out`.
    fn build_node(
        &self,
        refs: &mut [Ref],
        nb: NodeBounds,
        first: u32,
        depth: usize,
        out: &mut Vec<Node>,
    ) {
        let bounds = Aabb::from(nb.bounds);
        let cbounds = Aabb::from(nb.centroids);
        let n = refs.len();
        // A split costs at least `traversal_cost` (the SAH's second term is not negative), so a
        // node small enough to be a leaf whose leaf cost is no more than that is a leaf whatever
        // its planes: no binning needed.
        let leaf_anyway = n <= self.config.max_leaf_size
            && self.config.intersection_cost * self.blocks(n) <= self.config.traversal_cost;
        let split = if n <= 1 || leaf_anyway {
            None
        } else {
            self.choose_split(refs, &bounds, &cbounds, depth)
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
        let (left_len, lb, rb) = self.partition(refs, &cbounds, split);
        let (left, right) = refs.split_at_mut(left_len);
        let me = out.len();
        out.push(Node::interior(bounds, 0));
        let right_first = first + left_len as u32;
        #[cfg(feature = "parallel")]
        if n >= self.config.parallel_threshold {
            let (mut lnodes, mut rnodes) = (Vec::new(), Vec::new());
            rayon::join(
                || self.build_node(left, lb, first, depth + 1, &mut lnodes),
                || self.build_node(right, rb, right_first, depth + 1, &mut rnodes),
            );
            let base = out.len() as u32;
            append_shifted(out, &lnodes, base);
            out[me].index = out.len() as u32;
            let base = out.len() as u32;
            append_shifted(out, &rnodes, base);
            return;
        }
        self.build_node(left, lb, first, depth + 1, out);
        out[me].index = out.len() as u32;
        self.build_node(right, rb, right_first, depth + 1, out);
    }

    fn choose_split(
        &self,
        refs: &[Ref],
        bounds: &Aabb,
        cbounds: &Aabb,
        depth: usize,
    ) -> Option<Split> {
        let axis = cbounds.longest_axis();
        if depth >= MEDIAN_DEPTH {
            return Some(Split::Median { axis });
        }
        let best = if refs.len() <= self.config.sweep_threshold {
            self.sweep_split(refs, bounds)
        } else {
            self.binned_split(refs, bounds, cbounds)
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

    /// The bin of coordinate `c` given the node's smallest centroid coordinate and bins per unit
    /// length on that axis.
    #[inline]
    fn bin_of(&self, c: f32, cmin: f32, scale: f32) -> usize {
        // `as usize` saturates (NaN gives 0), and the clamp keeps the rightmost centroid in the last
        // bin.
        (((c - cmin) * scale) as usize).min(self.config.bins - 1)
    }

    fn bin_scale(&self, cbounds: &Aabb, axis: usize) -> Option<f32> {
        let extent = cbounds.extent()[axis];
        (extent > 0.0 && extent.is_finite()).then(|| self.config.bins as f32 / extent)
    }

    /// The cheapest binned plane over the three axes, with bin arrays sized for the configured
    /// bins (so a small node does not clear 64 bins it never uses).
    fn binned_split(&self, refs: &[Ref], bounds: &Aabb, cbounds: &Aabb) -> Option<Split> {
        match (self.config.bins, self.config.longest_axis_only) {
            (0..=8, true) => self.binned_split_in::<8, 1>(refs, bounds, cbounds),
            (0..=8, false) => self.binned_split_in::<8, 3>(refs, bounds, cbounds),
            (9..=16, true) => self.binned_split_in::<16, 1>(refs, bounds, cbounds),
            (9..=16, false) => self.binned_split_in::<16, 3>(refs, bounds, cbounds),
            (17..=32, true) => self.binned_split_in::<32, 1>(refs, bounds, cbounds),
            (17..=32, false) => self.binned_split_in::<32, 3>(refs, bounds, cbounds),
            (_, true) => self.binned_split_in::<MAX_BINS, 1>(refs, bounds, cbounds),
            (_, false) => self.binned_split_in::<MAX_BINS, 3>(refs, bounds, cbounds),
        }
    }

    /// [`Self::binned_split`] with room for `B >= bins` bins per axis, on `AXES` axes: 3, or 1
    /// (the longest of the centroid box, [`BuildConfig::longest_axis_only`]). One pass over the
    /// node's references bins each into its bin of every axis binned (the three offsets `(c - cmin) · scale`
    /// in one vector operation, each the same `f32` operations as [`Self::bin_of`], and the bins
    /// of all three in one clamp and conversion, [`bins3`]), the bin boxes grown four lanes at a
    /// time ([`BinBox`]); the costs are those of the plain per-axis loop. Not inlined: the bins
    /// stay on the stack only while a split is chosen, not in every frame of the recursion.
    #[inline(never)]
    fn binned_split_in<const B: usize, const AXES: usize>(
        &self,
        refs: &[Ref],
        bounds: &Aabb,
        cbounds: &Aabb,
    ) -> Option<Split> {
        let bins = self.config.bins;
        debug_assert!(bins <= B && B.is_power_of_two());
        // The axes binned, in order: slot `j` holds axis `axes[j]`.
        let axes: [usize; AXES] = match AXES {
            1 => std::array::from_fn(|_| cbounds.longest_axis()),
            _ => std::array::from_fn(|a| a),
        };
        let area = bounds.surface_area();
        // An axis without a scale (no extent) is binned with scale 0 (everything in its bin 0)
        // and skipped below.
        let scales: [Option<f32>; 3] = std::array::from_fn(|a| self.bin_scale(cbounds, a));
        let scale = Vec3A::from_array(scales.map(|s| s.unwrap_or(0.0)));
        let cmin = Vec3A::from(cbounds.min);
        let mut bin_boxes = [[BinBox::EMPTY; B]; AXES];
        let mut bin_counts = [[0u32; B]; AXES];
        let last = (bins - 1) as u32;
        for r in refs {
            let k = bins3((Vec3A::from(r.centroid) - cmin) * scale, last);
            let b = r.bin_box();
            for (slot, &axis) in axes.iter().enumerate() {
                // `k <= last < B`: the mask changes nothing and spares the bounds checks (B is
                // a power of two).
                let k = k[axis] as usize & (B - 1);
                bin_boxes[slot][k] = bin_boxes[slot][k].union(b);
                bin_counts[slot][k] += 1;
            }
        }
        let mut best: Option<Split> = None;
        let mut best_cost = f32::INFINITY;
        let mut right_area = [0.0f32; B];
        let mut right_box = [BinBox::EMPTY; B];
        for (slot, &axis) in axes.iter().enumerate() {
            if scales[axis].is_none() {
                continue;
            }
            let boxes = &bin_boxes[slot][..bins];
            let counts = &bin_counts[slot][..bins];
            // right_box[i], right_area[i]: box and area of bins i+1.. (the right side of the
            // plane after bin i).
            let mut acc = BinBox::EMPTY;
            for i in (1..bins).rev() {
                acc = acc.union(boxes[i]);
                right_box[i - 1] = acc;
                right_area[i - 1] = Aabb::from(acc).surface_area();
            }
            let mut left = BinBox::EMPTY;
            let mut left_n = 0;
            for i in 0..bins - 1 {
                // An empty bin's plane costs what the plane before it costs (same sides), which
                // cannot be strictly cheaper.
                if counts[i] == 0 {
                    continue;
                }
                left = left.union(boxes[i]);
                left_n += counts[i] as usize;
                let right_n = refs.len() - left_n;
                if right_n == 0 {
                    continue;
                }
                let cost = self.sah(
                    area,
                    (Aabb::from(left).surface_area(), left_n),
                    (right_area[i], right_n),
                );
                if cost < best_cost {
                    best_cost = cost;
                    best = Some(Split::Binned {
                        axis,
                        bin: i,
                        cost,
                        left,
                        right: right_box[i],
                    });
                }
            }
        }
        best
    }

    fn sweep_split(&self, refs: &[Ref], bounds: &Aabb) -> Option<Split> {
        let n = refs.len();
        let area = bounds.surface_area();
        let mut sorted: Vec<u32> = (0..n as u32).collect();
        let mut right_area = vec![0.0f32; n];
        let mut best: Option<Split> = None;
        let mut best_cost = f32::INFINITY;
        let box_at = |k: u32| Aabb::from(refs[k as usize].bin_box());
        for axis in 0..3 {
            sorted.sort_unstable_by(|&a, &b| {
                order_on_axis(&refs[a as usize], &refs[b as usize], axis)
            });
            let mut acc = Aabb::EMPTY;
            for i in (1..n).rev() {
                acc = acc.union(box_at(sorted[i]));
                right_area[i] = acc.surface_area();
            }
            let mut left = Aabb::EMPTY;
            for count in 1..n {
                left = left.union(box_at(sorted[count - 1]));
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

    /// Reorders `refs` so the left child's primitives come first; returns how many they are
    /// (always `1..refs.len()`) and the two children's bounds, gathered in the same pass.
    fn partition(
        &self,
        refs: &mut [Ref],
        cbounds: &Aabb,
        split: Split,
    ) -> (usize, NodeBounds, NodeBounds) {
        let n = refs.len();
        let left_len = match split {
            Split::Binned {
                axis,
                bin,
                left,
                right,
                ..
            } => {
                let cmin = cbounds.min[axis];
                let scale = self.bin_scale(cbounds, axis).unwrap_or(0.0);
                let goes_left = |r: &Ref| self.bin_of(r.centroid[axis], cmin, scale) <= bin;
                // Hoare's partition: scans from both ends and swaps only the pairs on the wrong
                // sides. The children's boxes come from the bins; their centroid boxes are
                // gathered here.
                let (mut lc, mut rc) = (BinBox::EMPTY, BinBox::EMPTY);
                let (mut i, mut j) = (0, n);
                loop {
                    while i < j && goes_left(&refs[i]) {
                        lc = lc.grow(refs[i].centroid);
                        i += 1;
                    }
                    while i < j && !goes_left(&refs[j - 1]) {
                        rc = rc.grow(refs[j - 1].centroid);
                        j -= 1;
                    }
                    if i >= j {
                        break;
                    }
                    refs.swap(i, j - 1);
                    lc = lc.grow(refs[i].centroid);
                    rc = rc.grow(refs[j - 1].centroid);
                    i += 1;
                    j -= 1;
                }
                let side = |bounds, centroids| NodeBounds { bounds, centroids };
                return (i, side(left, lc), side(right, rc));
            }
            Split::Sweep { axis, count, .. } => {
                refs.sort_unstable_by(|a, b| order_on_axis(a, b, axis));
                count
            }
            Split::Median { axis } => {
                let mid = n / 2;
                refs.select_nth_unstable_by(mid, |a, b| order_on_axis(a, b, axis));
                mid
            }
        };
        let (l, r) = refs.split_at(left_len);
        (left_len, NodeBounds::of(l), NodeBounds::of(r))
    }
}

/// Centroid order along `axis`, ties by id, so the order (and the tree) is deterministic.
#[inline]
fn order_on_axis(a: &Ref, b: &Ref, axis: usize) -> std::cmp::Ordering {
    a.centroid[axis]
        .total_cmp(&b.centroid[axis])
        .then(a.id.cmp(&b.id))
}

/// A bin's box during binning: [`Aabb`] in four-lane vectors, so growing it is one min and one
/// max (`Vec3A`: SIMD on x86, aarch64 and wasm32 with simd128). Its corners equal those of the
/// same boxes joined as [`Aabb`]s (up to the sign of a zero, which no extent or area sees), so
/// every cost computed from it is the one the [`Aabb`]s give.
#[derive(Clone, Copy, Debug)]
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

    #[inline]
    fn grow(self, p: Vec3) -> Self {
        let p = Vec3A::from(p);
        Self {
            min: self.min.min(p),
            max: self.max.max(p),
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

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    use super::*;

    /// The binned split written plainly, one axis at a time with [`Aabb`]s and
    /// [`Builder::bin_of`]: the reference the one-pass, SIMD binning must match.
    fn reference_split(
        b: &Builder,
        refs: &[Ref],
        bounds: &Aabb,
        cbounds: &Aabb,
    ) -> Option<(usize, usize)> {
        let bins = b.config.bins;
        let axes: Vec<usize> = if b.config.longest_axis_only {
            vec![cbounds.longest_axis()]
        } else {
            vec![0, 1, 2]
        };
        let mut best = None;
        let mut best_cost = f32::INFINITY;
        for axis in axes {
            let Some(scale) = b.bin_scale(cbounds, axis) else {
                continue;
            };
            let bin = |r: &Ref| b.bin_of(r.centroid[axis], cbounds.min[axis], scale);
            for plane in 0..bins - 1 {
                let (mut left, mut right) = (Aabb::EMPTY, Aabb::EMPTY);
                let (mut nl, mut nr) = (0, 0);
                for r in refs {
                    let bx = Aabb::from(r.bin_box());
                    if bin(r) <= plane {
                        left = left.union(bx);
                        nl += 1;
                    } else {
                        right = right.union(bx);
                        nr += 1;
                    }
                }
                if nl == 0 || nr == 0 {
                    continue;
                }
                let cost = b.sah(
                    bounds.surface_area(),
                    (left.surface_area(), nl),
                    (right.surface_area(), nr),
                );
                if cost < best_cost {
                    best_cost = cost;
                    best = Some((axis, plane));
                }
            }
        }
        best
    }

    /// Random nodes of 2..200 primitives over magnitudes 1e-6..1e6, for every bin count class
    /// and both axis settings: the chosen plane is the reference's, and the partition's sides
    /// hold exactly the primitives of its bins, with the bins' boxes.
    #[test]
    fn binned_splits_equal_the_plain_per_axis_reference() {
        let mut rng = Pcg64::seed_from_u64(5);
        for case in 0..3000 {
            let bins = [2, 5, 8, 13, 16, 32, 64][case % 7];
            let config = BuildConfig {
                bins,
                longest_axis_only: case % 2 == 0,
                ..BuildConfig::BALANCED
            };
            let b = Builder { config };
            let scale = 10f32.powf(rng.gen_range(-6.0..6.0));
            let stretch = Vec3::new(rng.gen_range(0.1..4.0), 1.0, rng.gen_range(0.1..4.0));
            let n = rng.gen_range(2..200);
            let mut refs: Vec<Ref> = (0..n)
                .map(|id| {
                    let c = Vec3::new(rng.gen(), rng.gen(), rng.gen()) * stretch * scale;
                    // Some primitives share a centroid; boxes of mixed sizes.
                    let c = if rng.gen_bool(0.1) { Vec3::ZERO } else { c };
                    let h = Vec3::new(rng.gen(), rng.gen(), rng.gen()) * scale * 0.1;
                    Ref {
                        min: (c - h).into(),
                        max: (c + h).into(),
                        centroid: c,
                        id,
                    }
                })
                .collect();
            let nb = NodeBounds::of(&refs);
            let (bounds, cbounds) = (Aabb::from(nb.bounds), Aabb::from(nb.centroids));
            let expected = reference_split(&b, &refs, &bounds, &cbounds);
            let split = b.binned_split(&refs, &bounds, &cbounds);
            let got = match split {
                Some(Split::Binned { axis, bin, .. }) => Some((axis, bin)),
                None => None,
                other => panic!("a binned split or none, not {other:?}"),
            };
            assert_eq!(got, expected, "case {case}: {n} primitives, {bins} bins");
            let Some(split) = split else { continue };
            let Split::Binned { axis, bin, .. } = split else {
                unreachable!()
            };
            let scale = b.bin_scale(&cbounds, axis).unwrap();
            let (k, lb, rb) = b.partition(&mut refs, &cbounds, split);
            let goes_left = |r: &Ref| b.bin_of(r.centroid[axis], cbounds.min[axis], scale) <= bin;
            assert!(refs[..k].iter().all(goes_left) && !refs[k..].iter().any(goes_left));
            for (side, nb) in [(&refs[..k], lb), (&refs[k..], rb)] {
                let whole = NodeBounds::of(side);
                for (got, want) in [(nb.bounds, whole.bounds), (nb.centroids, whole.centroids)] {
                    assert_eq!(Aabb::from(got), Aabb::from(want), "case {case}");
                }
            }
        }
    }
}
