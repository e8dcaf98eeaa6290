//! Which binary nodes become the nodes and leaves of a `W`-wide BVH: the collapse that minimizes
//! the wide tree's SAH cost, by dynamic programming over the binary tree (Ylitie, Karras, Laine,
//! "Efficient Incoherent Ray Traversal on GPUs Through Compressed Wide BVHs", HPG 2017, §4.1).
//!
//! A binary subtree can stand in its wide parent as one child (a leaf of all its primitives, or a
//! wide node), or spread over up to `j` of the parent's lanes (its two children's subtrees sharing
//! them). For every binary node `n` and `j = 1..=W`, `cost(n, j)` is the smallest SAH cost of
//! `n`'s subtree given `j` lanes:
//!
//! - `cost(n, 1) = min(leaf(n), A(n)·c_node + split(n, W))`: a leaf (only if it has at most
//!   `max_leaf_size` primitives), or a wide node whose `W` lanes its children share;
//! - `cost(n, j) = min(cost(n, j − 1), split(n, j))`, with
//!   `split(n, j) = min_k cost(left, k) + cost(right, j − k)`;
//! - `leaf(n) = A(n)·c_block·⌈P(n) / block_size⌉`, the leaf cost of the binary builder
//!   ([`super::BuildConfig`]: blocks of four triangles tested together).
//!
//! A greedy collapse (open the child with the largest box until `W` lanes are used) fills the
//! upper levels and leaves the lower ones two or three children wide, so the walk pays a whole
//! node visit for few boxes near the leaves. Here a subtree's lanes go where they save the most,
//! and small leaves next to each other may merge into one (up to `max_leaf_size`): a lane and a
//! node visit saved for a slightly larger leaf. Areas are those of the binary boxes, which are
//! the wide tree's child boxes. The table is `W` costs per binary node and each entry a minimum
//! over at most `W − 1` shares: `O(n·W²)` time.
//!
//! Tests: the tree built costs what a brute force over every way to cover each node's children
//! with at most `W` lanes finds cheapest (small trees, widths 4 and 8, with and without merging).

use super::{BuildConfig, Bvh};

/// The costs the collapse weighs, in the units of [`super::BuildConfig`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct CollapseCosts {
    /// One wide node visit (its `W` box tests together).
    pub node: f32,
    /// One block of `block_size` primitives.
    pub block: f32,
    pub block_size: usize,
    /// Largest leaf the collapse may make by merging binary leaves.
    pub max_leaf_size: usize,
}

impl CollapseCosts {
    /// The costs of a build: its node and block costs and its largest leaf.
    pub(crate) fn of(config: &BuildConfig) -> Self {
        Self {
            node: config.traversal_cost,
            block: config.intersection_cost,
            block_size: config.block_size.max(1),
            max_leaf_size: config.max_leaf_size,
        }
    }
}

/// How a binary subtree fills `j` lanes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Choice {
    /// One lane: a leaf of all the subtree's primitives.
    Leaf,
    /// One lane: a wide node, whose lanes the left subtree fills `k` of and the right `W − k`.
    Node(u8),
    /// The subtree takes fewer lanes (`j − 1`).
    Fewer,
    /// The left subtree takes `k` lanes, the right `j − k`.
    Split(u8),
}

/// A child of a wide node: binary node `node` as a leaf of its subtree's primitives or as a wide
/// node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Lane {
    pub node: usize,
    pub leaf: bool,
}

/// The collapse of one binary tree: per binary node, the choice for each lane budget.
pub(crate) struct Plan<const W: usize> {
    choices: Vec<[Choice; W]>,
    /// The lanes of the root node: one leaf of everything, or `Node(k)`: shared by the root's
    /// two subtrees. (The root is always a node; other nodes are a lane of their parent.)
    root: Choice,
}

impl<const W: usize> Plan<W> {
    /// The collapse of `bvh` that minimizes the wide tree's SAH cost.
    pub(crate) fn new(bvh: &Bvh, costs: CollapseCosts) -> Self {
        let n = bvh.nodes.len();
        let mut cost = vec![[0.0f64; W]; n];
        let mut choices = vec![[Choice::Fewer; W]; n];
        let mut root = Choice::Leaf;
        // Primitives per subtree.
        let mut counts = vec![0u32; n];
        // Children come after their parent: in reverse, a node's children are done before it.
        for i in (0..n).rev() {
            let node = &bvh.nodes[i];
            let area = f64::from(node.bounds().surface_area());
            let leaf_cost = |count: u32| {
                area * f64::from(costs.block) * (count as usize).div_ceil(costs.block_size) as f64
            };
            if node.is_leaf() {
                counts[i] = node.count;
                cost[i] = [leaf_cost(node.count); W];
                choices[i][0] = Choice::Leaf;
                continue;
            }
            let (left, right) = (i + 1, node.right_child());
            counts[i] = counts[left] + counts[right];
            // split(j) for j = 2..=W: the best share of j lanes between the two subtrees.
            let (l_cost, r_cost) = (cost[left], cost[right]);
            let split = |j: usize| {
                (1..j)
                    .map(|k| (l_cost[k - 1] + r_cost[j - k - 1], k))
                    .min_by(|a, b| a.0.total_cmp(&b.0))
                    .expect("j >= 2")
            };
            // Each budget's best share once (entry j - 1; entry 0 is unused).
            let splits: [(f64, usize); W] =
                std::array::from_fn(|i| if i == 0 { (0.0, 0) } else { split(i + 1) });
            let (shared, k) = splits[W - 1];
            let mut best = (area * f64::from(costs.node) + shared, Choice::Node(k as u8));
            let count = counts[i];
            let small = count as usize <= costs.max_leaf_size;
            if small && leaf_cost(count) <= best.0 {
                best = (leaf_cost(count), Choice::Leaf);
            }
            (cost[i][0], choices[i][0]) = best;
            // The root's lanes (the last node done): one leaf, or its children's share of W.
            root = if small && leaf_cost(count) <= shared {
                Choice::Leaf
            } else {
                Choice::Node(k as u8)
            };
            for j in 2..=W {
                let (c, k) = splits[j - 1];
                (cost[i][j - 1], choices[i][j - 1]) = if c < cost[i][j - 2] {
                    (c, Choice::Split(k as u8))
                } else {
                    (cost[i][j - 2], Choice::Fewer)
                };
            }
        }
        Self { choices, root }
    }

    /// The lanes of the wide node made of binary node `node` (the root, or a lane that
    /// [`Plan::lanes`] gave as a node), in the binary tree's left-to-right order (the wide tree
    /// orders them for any-hit walks, [`crate::bvh::wide`]'s `occlusion`).
    pub(crate) fn children(&self, bvh: &Bvh, node: usize) -> Vec<Lane> {
        let mut out = Vec::with_capacity(W);
        if bvh.nodes[node].is_leaf() {
            out.push(Lane { node, leaf: true });
            return out;
        }
        let choice = if node == 0 {
            self.root
        } else {
            self.choices[node][0]
        };
        match choice {
            // A root small enough to be one leaf: a node with one lane.
            Choice::Leaf => out.push(Lane { node, leaf: true }),
            Choice::Node(k) => {
                self.lanes(bvh, node + 1, k as usize, &mut out);
                self.lanes(bvh, bvh.nodes[node].right_child(), W - k as usize, &mut out);
            }
            Choice::Fewer | Choice::Split(_) => unreachable!("one lane is a leaf or a node"),
        }
        out
    }

    /// Appends the lanes that binary node `node`'s subtree takes with a budget of `j`.
    fn lanes(&self, bvh: &Bvh, node: usize, j: usize, out: &mut Vec<Lane>) {
        match self.choices[node][j - 1] {
            Choice::Leaf => out.push(Lane { node, leaf: true }),
            Choice::Node(_) => out.push(Lane { node, leaf: false }),
            Choice::Fewer => self.lanes(bvh, node, j - 1, out),
            Choice::Split(k) => {
                self.lanes(bvh, node + 1, k as usize, out);
                self.lanes(bvh, bvh.nodes[node].right_child(), j - k as usize, out);
            }
        }
    }
}

/// Appends the primitive ids of binary node `node`'s leaves, left to right (a merged leaf's
/// primitives: after reinsertion a subtree's leaves need not be contiguous in
/// [`Bvh::prim_ids`]).
pub(crate) fn subtree_prims(bvh: &Bvh, node: usize, out: &mut Vec<u32>) {
    let n = &bvh.nodes[node];
    if n.is_leaf() {
        out.extend_from_slice(&bvh.prim_ids[n.prim_range()]);
    } else {
        subtree_prims(bvh, node + 1, out);
        subtree_prims(bvh, n.right_child(), out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bvh::wide::WideBvh;

    /// The costs `WideBvh::from_binary_with` takes from the default preset.
    fn costs(max_leaf_size: usize) -> CollapseCosts {
        CollapseCosts {
            max_leaf_size,
            ..CollapseCosts::of(&BuildConfig::BALANCED)
        }
    }

    fn leaves_under(bvh: &Bvh, node: usize) -> usize {
        let mut prims = Vec::new();
        subtree_prims(bvh, node, &mut prims);
        prims.len()
    }

    /// The reference: every way to cover binary node `node`'s subtree with at most `cap` lanes
    /// (the node itself, or a cover of its left subtree next to one of its right subtree),
    /// enumerated, not planned.
    fn covers(bvh: &Bvh, node: usize, cap: usize) -> Vec<Vec<usize>> {
        let mut out = vec![vec![node]];
        let n = &bvh.nodes[node];
        if n.is_leaf() || cap < 2 {
            return out;
        }
        for left in covers(bvh, node + 1, cap - 1) {
            for right in covers(bvh, n.right_child(), cap - left.len()) {
                out.push([left.clone(), right].concat());
            }
        }
        out
    }

    /// The cheapest way for binary node `node` to fill one lane, by brute force: a leaf of its
    /// primitives (when few enough), or a node over the cheapest cover of its children.
    fn best_lane<const W: usize>(bvh: &Bvh, node: usize, costs: CollapseCosts) -> f64 {
        let n = &bvh.nodes[node];
        let area = f64::from(n.bounds().surface_area());
        let count = leaves_under(bvh, node);
        let leaf = area * f64::from(costs.block) * count.div_ceil(costs.block_size) as f64;
        if n.is_leaf() {
            return leaf;
        }
        let as_node = area * f64::from(costs.node) + best_cover::<W>(bvh, node, costs);
        if count <= costs.max_leaf_size {
            as_node.min(leaf)
        } else {
            as_node
        }
    }

    /// The cheapest cover of interior node `node`'s children with at most `W` lanes.
    fn best_cover<const W: usize>(bvh: &Bvh, node: usize, costs: CollapseCosts) -> f64 {
        let n = &bvh.nodes[node];
        covers(bvh, node + 1, W - 1)
            .into_iter()
            .flat_map(|left| {
                covers(bvh, n.right_child(), W - left.len())
                    .into_iter()
                    .map(move |right| [left.clone(), right].concat())
            })
            .map(|cover| {
                cover
                    .iter()
                    .map(|&c| best_lane::<W>(bvh, c, costs))
                    .sum::<f64>()
            })
            .fold(f64::INFINITY, f64::min)
    }

    /// The SAH cost of a built wide tree, from its own nodes and lanes.
    fn wide_cost<const W: usize>(wide: &WideBvh<W>, costs: CollapseCosts) -> f64 {
        let mut total = 0.0;
        for node in wide.nodes() {
            total += f64::from(node.bounds().surface_area()) * f64::from(costs.node);
            for lane in 0..W {
                if node.is_leaf(lane) {
                    let blocks = (node.count[lane] as usize).div_ceil(costs.block_size);
                    total += f64::from(node.child_bounds(lane).surface_area())
                        * f64::from(costs.block)
                        * blocks as f64;
                }
            }
        }
        total
    }

    fn check_small_trees<const W: usize>() {
        for seed in 0..12 {
            let (boxes, centroids) =
                crate::bvh::test_support::random_boxes(10 + seed as usize * 2, seed, 1.0);
            // Leaves of one or two, so that merging them (up to four) is a real choice.
            let bvh = Bvh::build(
                &boxes,
                &centroids,
                BuildConfig {
                    max_leaf_size: 2,
                    ..BuildConfig::BALANCED
                },
            );
            for max_leaf_size in [1, 4] {
                let costs = costs(max_leaf_size);
                let wide = WideBvh::<W>::from_binary_with(
                    &bvh,
                    BuildConfig {
                        max_leaf_size,
                        ..BuildConfig::BALANCED
                    },
                );
                wide.validate(&boxes).unwrap();
                let built = wide_cost(&wide, costs);
                // The root is a node, over the cheapest cover of its children or one leaf.
                let root = &bvh.nodes[0];
                let mut lanes = best_cover::<W>(&bvh, 0, costs);
                let count = leaves_under(&bvh, 0);
                if count <= max_leaf_size {
                    lanes = lanes.min(
                        f64::from(root.bounds().surface_area())
                            * f64::from(costs.block)
                            * count.div_ceil(costs.block_size) as f64,
                    );
                }
                let brute = f64::from(root.bounds().surface_area()) * f64::from(costs.node) + lanes;
                let rel = (built - brute).abs() / brute;
                assert!(
                    rel < 1e-6,
                    "W {W} seed {seed}: built {built}, brute force {brute}"
                );
            }
        }
    }

    #[test]
    fn the_collapse_is_the_cheapest_one_brute_force_finds() {
        check_small_trees::<4>();
        check_small_trees::<8>();
    }

    #[test]
    fn merged_leaves_hold_their_parts_and_no_more_than_allowed() {
        let (boxes, centroids) = crate::bvh::test_support::random_boxes(3000, 9, 1.0);
        for (name, config) in BuildConfig::PRESETS {
            let small_leaves = BuildConfig {
                max_leaf_size: 2,
                ..config
            };
            let bvh = Bvh::build(&boxes, &centroids, small_leaves);
            let wide = WideBvh::<8>::from_binary_with(&bvh, config);
            // Each primitive once, leaf boxes holding their primitives' boxes.
            wide.validate(&boxes).unwrap();
            // Merged leaves: fewer leaves than the binary tree, none larger than allowed.
            let (b, w) = (bvh.stats(), wide.stats());
            assert!(w.leaves < b.leaves, "{name}: {} of {}", w.leaves, b.leaves);
            assert!(
                w.leaf_size_histogram.len() <= config.max_leaf_size + 1,
                "{name}"
            );
        }
    }
}
