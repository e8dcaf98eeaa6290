//! Tree optimization after the build: moving subtrees to where they cost less (reinsertion).
//!
//! Meister and Bittner, "Parallel Reinsertion for Bounding Volume Hierarchy Optimization", Computer
//! Graphics Forum 37(2), 2018 (after Bittner, Hapala, Havran, "Fast Insertion-Based Optimization of
//! Bounding Volume Hierarchies", CGF 32(1), 2013). A top-down builder decides each split once, on
//! centroids: a large triangle lands wherever its centre falls and inflates every box above it (the
//! conference room's walls and floor). Reinsertion takes a node out of the tree (its parent goes, its
//! sibling takes the parent's place) and puts it back as the sibling of the node where the tree's SAH
//! cost drops most, found by a branch-and-bound search.
//!
//! ## Cost
//! The SAH cost of a tree is, up to constants, the sum of the surface areas of its interior nodes
//! (leaves do not change here, so neither do their costs). Removing node `n` with parent `p`, sibling
//! `s` and ancestors `a₂, a₃, …` and inserting it beside `x` changes it by:
//! - `−A(p)`: `p` is gone;
//! - `−(A(aᵢ) − A(aᵢ ∖ n))` for the ancestors that no longer hold `n` (those below the lowest common
//!   ancestor of `n` and `x`);
//! - `+(A(y ∪ n) − A(y))` for every ancestor `y` of `x` that now holds `n` (same bound);
//! - `+A(x ∪ n)` for the new parent of `x` and `n` (the node `p` is reused for it).
//!
//! The search climbs from `n`: at each ancestor it searches the subtree on the other side, where the
//! removal gain is fixed and the growth of the boxes on the way down only adds cost, so a subtree is
//! skipped once `gain − A(n)` cannot beat the best move found (`A(x ∪ n) ≥ A(n)`).
//!
//! ## Passes
//! Each pass takes the nodes with the largest boxes (a fraction of all nodes that shrinks pass after
//! pass, as in the paper), searches their best moves in parallel on the unchanged tree, and applies
//! them best first, skipping a move whose nodes an earlier move of the pass touched. Node boxes are
//! then refitted. Only the topology changes: leaves keep their primitive ranges, so
//! [`Bvh::prim_ids`] is untouched. A pass that leaves the tree costlier, or deeper than
//! [`MAX_DEPTH`] (the traversal stacks are sized for it), is undone. The result does not depend on
//! the number of threads.
//!
//! Reinsertion pays on meshes of mixed triangle sizes (an interior's long walls beside small
//! furniture), where the moved subtrees shrink boxes that many rays enter; a mesh of evenly sized
//! triangles (a scanned model) is already close to where reinsertion would put it.

use super::{Bvh, Node, MAX_DEPTH};
use crate::Aabb;

/// Marks "no node" (the root's parent).
const NONE: u32 = u32::MAX;

/// The tree with explicit links, while it is being rearranged.
#[derive(Clone)]
struct Linked {
    /// The original nodes: leaves keep their ranges; interior nodes' indices are stale (see `kids`).
    nodes: Vec<Node>,
    /// Children of interior nodes.
    kids: Vec<[u32; 2]>,
    parent: Vec<u32>,
    root: u32,
}

/// A move: node `from` goes beside node `to`, lowering the cost by `gain`.
#[derive(Clone, Copy, Debug)]
struct Move {
    gain: f32,
    from: u32,
    to: u32,
}

impl Linked {
    fn new(bvh: &Bvh) -> Self {
        let n = bvh.nodes.len();
        let mut kids = vec![[NONE; 2]; n];
        let mut parent = vec![NONE; n];
        for (i, node) in bvh.nodes.iter().enumerate() {
            if !node.is_leaf() {
                let (l, r) = (i as u32 + 1, node.index);
                kids[i] = [l, r];
                parent[l as usize] = i as u32;
                parent[r as usize] = i as u32;
            }
        }
        Self {
            nodes: bvh.nodes.clone(),
            kids,
            parent,
            root: 0,
        }
    }

    #[inline]
    fn bounds(&self, i: u32) -> Aabb {
        self.nodes[i as usize].bounds()
    }

    #[inline]
    fn area(&self, i: u32) -> f32 {
        self.bounds(i).surface_area()
    }

    #[inline]
    fn is_leaf(&self, i: u32) -> bool {
        self.nodes[i as usize].is_leaf()
    }

    #[inline]
    fn sibling(&self, i: u32) -> u32 {
        let [l, r] = self.kids[self.parent[i as usize] as usize];
        if l == i {
            r
        } else {
            l
        }
    }

    /// The best move of node `n` (not the root), if any lowers the cost. `stack` is scratch space,
    /// reused from one candidate to the next.
    fn find_move(&self, n: u32, stack: &mut Vec<(u32, f32)>) -> Option<Move> {
        let n_box = self.bounds(n);
        let n_area = n_box.surface_area();
        let p = self.parent[n as usize];
        let mut best = Move {
            gain: 0.0,
            from: n,
            to: NONE,
        };
        stack.clear();
        // Searching the subtree `sub`, a child of `pivot`; `rest` is what `pivot` holds besides `n`.
        let mut pivot = p;
        let mut sub = self.sibling(n);
        let mut rest = self.bounds(sub);
        let mut gain = self.area(p);
        loop {
            stack.push((sub, gain));
            while let Some((y, g)) = stack.pop() {
                // Any target below `y` costs at least A(x ∪ n) >= A(n) on top of what is spent.
                // A NaN bound (non-finite boxes) prunes too, so such input cannot make the search
                // walk the whole tree for every candidate.
                let bound = g - n_area;
                if bound.is_nan() || bound <= best.gain {
                    continue;
                }
                let y_box = self.bounds(y);
                let merged = y_box.union(n_box).surface_area();
                let here = g - merged;
                if here > best.gain {
                    best = Move {
                        gain: here,
                        from: n,
                        to: y,
                    };
                }
                if !self.is_leaf(y) {
                    // Inserting below `y` grows it by A(y ∪ n) − A(y).
                    let below = here + y_box.surface_area();
                    let [l, r] = self.kids[y as usize];
                    stack.push((r, below));
                    stack.push((l, below));
                }
            }
            let up = self.parent[pivot as usize];
            if up == NONE {
                break;
            }
            // Targets from here on lie outside `pivot`, which then no longer holds `n`.
            if pivot != p {
                gain += self.area(pivot) - rest.surface_area();
            }
            sub = self.sibling(pivot);
            rest = rest.union(self.bounds(sub));
            pivot = up;
        }
        // Beside its own sibling is where `n` already is (gain 0, never chosen), so any target is a
        // real move.
        (best.to != NONE).then_some(best)
    }

    /// `true` when `a` is `b` or one of its ancestors.
    fn is_ancestor_or_self(&self, a: u32, mut b: u32) -> bool {
        while b != NONE {
            if b == a {
                return true;
            }
            b = self.parent[b as usize];
        }
        false
    }

    /// Replaces child `old` of `parent` (or the root) by `new`.
    fn replace_child(&mut self, parent: u32, old: u32, new: u32) {
        if parent == NONE {
            self.root = new;
        } else {
            let kids = &mut self.kids[parent as usize];
            let k = usize::from(kids[1] == old);
            kids[k] = new;
        }
        self.parent[new as usize] = parent;
    }

    /// Applies `m` (checked by the caller not to conflict with this pass's earlier moves).
    fn apply(&mut self, m: Move) {
        let (n, x) = (m.from, m.to);
        let p = self.parent[n as usize];
        let s = self.sibling(n);
        // Detach: the sibling takes the parent's place.
        self.replace_child(self.parent[p as usize], p, s);
        // Reuse `p` as the parent of `x` and `n`.
        self.replace_child(self.parent[x as usize], x, p);
        self.kids[p as usize] = [x, n];
        self.parent[x as usize] = p;
        self.parent[n as usize] = p;
    }

    /// The nodes a move reads or rewires.
    fn footprint(&self, m: Move) -> [u32; 6] {
        let p = self.parent[m.from as usize];
        [
            m.from,
            p,
            self.sibling(m.from),
            self.parent[p as usize],
            m.to,
            self.parent[m.to as usize],
        ]
    }

    /// Children before parents, from the root (an explicit stack: no recursion).
    fn post_order(&self) -> Vec<u32> {
        let mut order = Vec::with_capacity(self.nodes.len());
        let mut stack = vec![self.root];
        while let Some(i) = stack.pop() {
            order.push(i);
            if !self.is_leaf(i) {
                stack.extend(self.kids[i as usize]);
            }
        }
        order.reverse();
        order
    }

    /// Recomputes interior boxes; returns the depth (root = 1).
    fn refit(&mut self) -> usize {
        let mut depth = vec![1usize; self.nodes.len()];
        for i in self.post_order() {
            if !self.is_leaf(i) {
                let [l, r] = self.kids[i as usize];
                let b = self.bounds(l).union(self.bounds(r));
                self.nodes[i as usize].set_bounds(b);
                depth[i as usize] = 1 + depth[l as usize].max(depth[r as usize]);
            }
        }
        depth[self.root as usize]
    }

    /// Σ of the interior nodes' areas: the part of the SAH cost that reinsertion changes.
    fn interior_area(&self) -> f64 {
        (0..self.nodes.len() as u32)
            .filter(|&i| !self.is_leaf(i))
            .map(|i| f64::from(self.area(i)))
            .sum()
    }

    /// The depth-first layout of [`Bvh`] (left child next, right child's index stored).
    fn to_nodes(&self) -> Vec<Node> {
        let mut out: Vec<Node> = Vec::with_capacity(self.nodes.len());
        // (node, index of the parent whose right child it is, if any)
        let mut stack = vec![(self.root, NONE)];
        while let Some((i, right_of)) = stack.pop() {
            if right_of != NONE {
                out[right_of as usize].index = out.len() as u32;
            }
            let me = out.len() as u32;
            out.push(self.nodes[i as usize]);
            if !self.is_leaf(i) {
                let [l, r] = self.kids[i as usize];
                stack.push((r, me));
                stack.push((l, NONE));
            }
        }
        out
    }
}

/// Runs `passes` reinsertion passes over `bvh`; pass `k` (from 0) moves up to
/// `batch · nodes / (2k + 1)` nodes. Leaves and [`Bvh::prim_ids`] are unchanged; node boxes stay
/// exact unions of their children.
pub(crate) fn optimize(bvh: &mut Bvh, batch: f32, passes: usize) {
    if bvh.nodes.len() < 3 || passes == 0 || batch.is_nan() || batch <= 0.0 {
        return;
    }
    let mut tree = Linked::new(bvh);
    let total = tree.nodes.len();
    for pass in 0..passes {
        let count = ((batch.min(1.0) * total as f32) / (2 * pass + 1) as f32).ceil() as usize;
        // The `count` largest boxes (ties by index, so the choice is deterministic); never the root.
        let mut candidates: Vec<(f32, u32)> = (0..total as u32)
            .filter(|&i| i != tree.root)
            .map(|i| (tree.area(i), i))
            .collect();
        let count = count.min(candidates.len());
        if count == 0 {
            break;
        }
        let by_area_desc = |a: &(f32, u32), b: &(f32, u32)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        candidates.select_nth_unstable_by(count - 1, by_area_desc);
        candidates.truncate(count);
        let mut moves = find_moves(&tree, &candidates);
        moves.sort_unstable_by(|a, b| b.gain.total_cmp(&a.gain).then(a.from.cmp(&b.from)));
        let before = tree.clone();
        let mut touched = vec![false; total];
        let mut applied = 0;
        for m in moves {
            let footprint = tree.footprint(m);
            if footprint
                .iter()
                .any(|&i| i != NONE && touched[i as usize])
                // An earlier move may have carried the target into `from`'s own subtree.
                || tree.is_ancestor_or_self(m.from, m.to)
            {
                continue;
            }
            for i in footprint.into_iter().filter(|&i| i != NONE) {
                touched[i as usize] = true;
            }
            tree.apply(m);
            applied += 1;
        }
        // The gains were computed on the tree before the pass; moves that share no node are
        // independent, but each may change the boxes another one counted on. A pass that made the
        // tree costlier (or too deep) is undone, so the result is never worse than the build's.
        if tree.refit() > MAX_DEPTH || tree.interior_area() > before.interior_area() {
            tree = before;
            break;
        }
        if applied == 0 {
            break;
        }
    }
    bvh.nodes = tree.to_nodes();
}

fn find_moves(tree: &Linked, candidates: &[(f32, u32)]) -> Vec<Move> {
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        candidates
            .par_iter()
            .with_min_len(64)
            .map_init(Vec::new, |stack, &(_, n)| tree.find_move(n, stack))
            .flatten()
            .collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        let mut stack = Vec::new();
        candidates
            .iter()
            .filter_map(|&(_, n)| tree.find_move(n, &mut stack))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::super::test_support::random_boxes;
    use super::super::BuildConfig;
    use super::*;

    const PLAIN: BuildConfig = BuildConfig {
        reinsertion_batch: 0.0,
        reinsertion_passes: 0,
        ..BuildConfig::BALANCED
    };
    const OPTIMIZED: BuildConfig = BuildConfig {
        reinsertion_batch: 0.2,
        reinsertion_passes: 4,
        ..BuildConfig::BALANCED
    };

    /// Random boxes plus a few that span most of the scene (walls, floors).
    fn scene(n: usize, seed: u64, scale: f32) -> (Vec<Aabb>, Vec<Vec3>) {
        let (mut boxes, _) = random_boxes(n, seed, scale);
        for k in 0..n / 50 {
            let axis = k % 3;
            let mut min = Vec3::splat(-10.0 * scale);
            let mut max = Vec3::splat(10.0 * scale);
            let at = (k as f32 / (n / 50) as f32 - 0.5) * 18.0 * scale;
            min[axis] = at;
            max[axis] = at + 0.01 * scale;
            boxes.push(Aabb::new(min, max));
        }
        let centroids = boxes.iter().map(Aabb::center).collect();
        (boxes, centroids)
    }

    /// Depth (root = 1) of the leaf that holds primitive `prim`.
    fn leaf_depth(bvh: &Bvh, prim: u32) -> usize {
        let mut stack = vec![(0usize, 1usize)];
        while let Some((i, depth)) = stack.pop() {
            let node = &bvh.nodes()[i];
            if node.is_leaf() {
                if bvh.prim_ids()[node.prim_range()].contains(&prim) {
                    return depth;
                }
            } else {
                stack.push((i + 1, depth + 1));
                stack.push((node.right_child(), depth + 1));
            }
        }
        panic!("primitive {prim} is in no leaf")
    }

    #[test]
    fn optimized_trees_are_valid_keep_their_leaves_and_never_cost_more() {
        let mut improved = 0;
        for (seed, scale) in [(1, 1e-6), (2, 1e-3), (3, 1.0), (4, 1e3), (5, 1e6)] {
            for n in [3, 10, 257, 3000] {
                let (boxes, centroids) = scene(n, seed, scale);
                let plain = Bvh::build(&boxes, &centroids, PLAIN);
                let optimized = Bvh::build(&boxes, &centroids, OPTIMIZED);
                optimized.validate(&boxes).unwrap();
                assert_eq!(optimized.prim_ids(), plain.prim_ids());
                let leaves = |b: &Bvh| {
                    let mut l: Vec<_> = b
                        .nodes()
                        .iter()
                        .filter(|n| n.is_leaf())
                        .map(|n| (n.index, n.count, n.min, n.max))
                        .collect();
                    l.sort_by_key(|&(first, ..)| first);
                    l
                };
                assert_eq!(leaves(&optimized), leaves(&plain));
                assert_eq!(optimized.nodes().len(), plain.nodes().len());
                let (before, after) = (plain.stats().sah_cost, optimized.stats().sah_cost);
                assert!(
                    after <= before * (1.0 + 1e-6),
                    "n {n} scale {scale}: SAH {before} -> {after}"
                );
                improved += usize::from(after < before * 0.999);
            }
        }
        // Binned SAH leaves something to gain on most of these scenes of mixed sizes.
        assert!(improved >= 10, "only {improved} of 20 trees improved");
    }

    #[test]
    fn a_large_box_buried_by_its_centroid_moves_up() {
        // A row of small boxes and one box spanning the row: its centroid puts it in the middle of
        // the row, deep in the tree, where it inflates every box above it.
        let mut boxes: Vec<Aabb> = (0..64)
            .map(|i| {
                Aabb::new(
                    Vec3::new(i as f32, 0.0, 0.0),
                    Vec3::new(i as f32 + 0.5, 0.5, 0.5),
                )
            })
            .collect();
        boxes.push(Aabb::new(Vec3::ZERO, Vec3::new(64.0, 0.5, 0.5)));
        let centroids: Vec<Vec3> = boxes.iter().map(Aabb::center).collect();
        let one_per_leaf = |c: BuildConfig| BuildConfig {
            max_leaf_size: 1,
            block_size: 1,
            ..c
        };
        let plain = Bvh::build(&boxes, &centroids, one_per_leaf(PLAIN));
        let optimized = Bvh::build(&boxes, &centroids, one_per_leaf(OPTIMIZED));
        optimized.validate(&boxes).unwrap();
        let (before, after) = (leaf_depth(&plain, 64), leaf_depth(&optimized, 64));
        let (sah_before, sah_after) = (plain.stats().sah_cost, optimized.stats().sah_cost);
        assert!(before >= 4, "the test needs a buried box (depth {before})");
        assert!(
            after <= 2 && sah_after < 0.95 * sah_before,
            "depth {before} -> {after}, SAH {sah_before} -> {sah_after}"
        );
    }

    #[test]
    fn non_finite_boxes_give_a_valid_tree() {
        let (mut boxes, mut centroids) = scene(3000, 13, 1.0);
        for i in (0..boxes.len()).step_by(7) {
            // Infinite areas make the gains `∞ − ∞ = NaN`.
            match i % 3 {
                0 => boxes[i] = Aabb::new(Vec3::splat(-1e30), Vec3::splat(f32::INFINITY)),
                1 => boxes[i].max.y = f32::INFINITY,
                _ => centroids[i] = Vec3::NAN,
            }
        }
        let plain = Bvh::build(&boxes, &centroids, PLAIN);
        plain.validate(&boxes).unwrap();
        let optimized = Bvh::build(&boxes, &centroids, OPTIMIZED);
        optimized.validate(&boxes).unwrap();
        assert_eq!(optimized.prim_ids(), plain.prim_ids());
    }

    #[test]
    fn tiny_trees_and_zero_passes_are_left_alone() {
        let (boxes, centroids) = scene(2, 9, 1.0);
        for n in 0..=2 {
            let b = &boxes[..n];
            let c = &centroids[..n];
            let optimized = Bvh::build(b, c, OPTIMIZED);
            assert_eq!(optimized.nodes(), Bvh::build(b, c, PLAIN).nodes());
        }
        let (boxes, centroids) = scene(500, 9, 1.0);
        let mut bvh = Bvh::build(&boxes, &centroids, PLAIN);
        let nodes = bvh.nodes().to_vec();
        optimize(&mut bvh, 0.2, 0);
        optimize(&mut bvh, 0.0, 4);
        optimize(&mut bvh, f32::NAN, 4);
        assert_eq!(bvh.nodes(), &nodes[..]);
    }

    #[cfg(feature = "parallel")]
    #[test]
    fn the_result_does_not_depend_on_the_thread_count() {
        let (boxes, centroids) = scene(5000, 11, 1.0);
        let build = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| Bvh::build(&boxes, &centroids, OPTIMIZED))
        };
        let one = build(1);
        assert_eq!(one.nodes(), build(4).nodes());
        assert_eq!(one.prim_ids(), build(4).prim_ids());
    }
}
