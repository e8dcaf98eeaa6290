//! Validation and shape statistics of a wide tree of any node layout.

use super::node::NodeLayout;
use super::WideTree;
use crate::bvh::stats::Tally;
use crate::bvh::validate::{all_reached, check_permutation, enter};
use crate::bvh::{BvhStats, ValidationError, LEAF_ALIGN, MAX_DEPTH};
use crate::Aabb;

/// One lane of a wide node, classified.
enum Lane {
    /// No child.
    Empty,
    /// A leaf over positions `first..first + count` of the primitive order.
    Leaf { first: usize, count: usize },
    /// Interior child node `child`.
    Interior { child: usize },
}

// `block_leaves` keeps depths (at most `MAX_DEPTH`) in bytes.
const _: () = assert!(MAX_DEPTH < u8::MAX as usize);

/// Which leaf covers each block of [`LEAF_ALIGN`] positions of a wide tree's primitive order
/// ([`WideTree::block_leaves`]).
pub(crate) struct BlockLeaves {
    /// Per block, `node * WIDTH + lane + 1` of the leaf lane covering it, [`Self::NONE`] if none.
    owner: Vec<u64>,
}

impl BlockLeaves {
    const NONE: u64 = 0;

    fn code<N: NodeLayout>(node: usize, lane: usize) -> u64 {
        (node * N::WIDTH + lane) as u64 + 1
    }

    /// The node and lane of the leaf covering `block`, if one does.
    #[inline]
    fn leaf<N: NodeLayout>(&self, block: usize) -> Option<(usize, usize)> {
        let code = self.owner[block].checked_sub(1)? as usize;
        Some((code / N::WIDTH, code % N::WIDTH))
    }
}

impl<N: NodeLayout> WideTree<N> {
    /// `lane` of `node`, classified.
    fn lane(&self, node: usize, lane: usize) -> Lane {
        let n = &self.nodes[node];
        if !n.holds(lane) {
            return Lane::Empty;
        }
        let child = n.child(lane);
        if child.is_leaf() {
            Lane::Leaf {
                first: child.index as usize,
                count: child.count as usize,
            }
        } else {
            Lane::Interior {
                child: child.index as usize,
            }
        }
    }

    /// The invariants of the tree against the primitives' `boxes`, with `ids` the primitive at each
    /// position of the primitive order (the tree's own, or those its owner keeps, see
    /// [`WideTree::take_prim_ids`]): the permutation (padding aside), the node count, depth-first
    /// layout, every node reached once, no deeper than [`MAX_DEPTH`], leaves
    /// non-empty, starting at a multiple of [`LEAF_ALIGN`] and covering each id's position once,
    /// leaf boxes holding their primitives' boxes, and the layout's lane rules
    /// ([`NodeLayout::check_lane`]).
    pub(crate) fn validate_with_ids(
        &self,
        ids: &[u32],
        boxes: &[Aabb],
    ) -> Result<(), ValidationError> {
        self.validate_by(ids, boxes.len(), |prim, _| boxes[prim as usize])
    }

    /// The first checks of [`Self::validate_by`], which look at no node: the tree is over `count`
    /// primitives, its node count fits, and `ids` (padding aside) is a permutation of
    /// `0..count`. After them every id in `ids` is [`Self::PADDING`] or below `count`.
    pub(crate) fn check_counts(&self, ids: &[u32], count: usize) -> Result<(), ValidationError> {
        if count != self.num_prims {
            return Err(ValidationError::BoxCount {
                boxes: count,
                prims: self.num_prims,
            });
        }
        let prims = self.num_prims;
        let nodes = self.nodes.len();
        // A tree that repeats primitives has up to one leaf per position.
        let leaves_max = if self.repeats { ids.len() } else { prims };
        if (prims == 0) != (nodes == 0) || nodes > leaves_max.max(1) {
            return Err(ValidationError::NodeCount { nodes, prims });
        }
        check_permutation(
            ids.iter().copied().filter(|&p| p != Self::PADDING),
            prims,
            self.repeats,
        )
    }

    /// [`Self::validate_with_ids`] for an owner of `count` primitives, their boxes given by
    /// `prim_box(prim, position)` for the primitive `prim` at `position` of the order: an owner
    /// that keeps its primitives in the tree's order reads them in order. `prim_box` is called
    /// only after the count and the permutation have been checked, so `prim < count`.
    ///
    /// This is the reference walk: [`Self::block_leaves`] and [`Self::check_block`] accept
    /// exactly the trees it accepts, in passes an owner can run alongside its own, and it names
    /// what they only detect.
    pub(crate) fn validate_by(
        &self,
        ids: &[u32],
        count: usize,
        prim_box: impl Fn(u32, usize) -> Aabb,
    ) -> Result<(), ValidationError> {
        self.check_counts(ids, count)?;
        let nodes = self.nodes.len();
        if nodes == 0 {
            return Ok(());
        }
        let mut reached = vec![0usize; nodes];
        let mut covered = vec![false; ids.len()];
        let mut stack = vec![(0usize, 1usize)];
        while let Some((i, depth)) = stack.pop() {
            enter(&mut reached, i, depth)?;
            for lane in 0..N::WIDTH {
                let mut child_node = None;
                match self.lane(i, lane) {
                    Lane::Empty => {}
                    Lane::Leaf { first, count } => {
                        let end = first + count;
                        let leaf_range = ValidationError::LeafRange {
                            node: i,
                            first,
                            end,
                        };
                        if count == 0
                            || first % LEAF_ALIGN != 0
                            || end > ids.len()
                            || covered[first..end].iter().any(|&c| c)
                        {
                            return Err(leaf_range);
                        }
                        covered[first..end].fill(true);
                        let bounds = self.nodes[i].child_bounds(lane);
                        for (position, &prim) in (first..end).zip(&ids[first..end]) {
                            // A leaf over padding; every other id is below `prims` (checked).
                            if prim == Self::PADDING {
                                return Err(leaf_range);
                            }
                            let prim_box = prim_box(prim, position);
                            let inside = if self.repeats {
                                bounds.overlaps(&prim_box)
                            } else {
                                bounds.contains(&prim_box)
                            };
                            if !inside {
                                return Err(ValidationError::PrimOutside { node: i, prim });
                            }
                        }
                    }
                    Lane::Interior { child } => {
                        if child <= i || child >= nodes {
                            return Err(ValidationError::Layout {
                                node: i,
                                right: child,
                                nodes,
                            });
                        }
                        stack.push((child, depth + 1));
                        child_node = Some(&self.nodes[child]);
                    }
                }
                self.nodes[i].check_lane(i, lane, child_node)?;
            }
        }
        all_reached(&reached)?;
        if let Some(position) = (0..ids.len()).find(|&p| covered[p] != (ids[p] != Self::PADDING)) {
            return Err(ValidationError::Uncovered { position });
        }
        Ok(())
    }

    /// The checks of [`Self::validate_by`] that read no primitive box, in one pass over the nodes
    /// in array order instead of a walk from the root (after [`Self::check_counts`]), and which
    /// leaf covers each block of [`LEAF_ALIGN`] positions of `ids`: `None` when a check fails
    /// (the walk names the failure). With [`Self::check_block`] on every block, and each
    /// primitive's box inside the box that returns, it accepts exactly the trees the walk
    /// accepts.
    ///
    /// Children come after their parents, so when the pass reaches a node, every link to it has
    /// been read: a node linked from no earlier node is unreachable, one linked twice is reached
    /// twice, and its depth is its parent's plus one. A leaf starts at a multiple of
    /// [`LEAF_ALIGN`], so two leaves overlap exactly when they share a block.
    pub(crate) fn block_leaves(&self, ids: &[u32]) -> Option<BlockLeaves> {
        let nodes = self.nodes.len();
        let mut owner = vec![BlockLeaves::NONE; ids.len().div_ceil(LEAF_ALIGN)];
        // The depth of each node as the walk would enter it, 0 while no link to it was read.
        let mut depth = vec![0u8; nodes];
        if let Some(root) = depth.first_mut() {
            *root = 1;
        }
        for (i, node) in self.nodes.iter().enumerate() {
            let d = depth[i];
            if d == 0 {
                return None;
            }
            for lane in 0..N::WIDTH {
                let mut child_node = None;
                match self.lane(i, lane) {
                    Lane::Empty => {}
                    Lane::Leaf { first, count } => {
                        let end = first.checked_add(count)?;
                        if first % LEAF_ALIGN != 0 || end > ids.len() {
                            return None;
                        }
                        let code = BlockLeaves::code::<N>(i, lane);
                        for o in &mut owner[first / LEAF_ALIGN..end.div_ceil(LEAF_ALIGN)] {
                            if *o != BlockLeaves::NONE {
                                return None;
                            }
                            *o = code;
                        }
                    }
                    Lane::Interior { child } => {
                        if child <= i || child >= nodes || depth[child] != 0 {
                            return None;
                        }
                        if usize::from(d) >= MAX_DEPTH {
                            return None;
                        }
                        depth[child] = d + 1;
                        child_node = Some(&self.nodes[child]);
                    }
                }
                if node.check_lane(i, lane, child_node).is_err() {
                    return None;
                }
            }
        }
        Some(BlockLeaves { owner })
    }

    /// The checks of [`Self::validate_by`] on block `block` of the primitive order that read no
    /// primitive: of its positions (`ids`, the block's ids, fewer than [`LEAF_ALIGN`] at the end
    /// of the order), the ones its leaf covers are exactly those that are not padding. When they
    /// pass, the box the primitive at each of those positions must lie inside for the rest of
    /// the checks (the leaf's; [`Aabb::EMPTY`] when no leaf covers the block, whose positions
    /// are then all padding); `None` when they fail. `leaves` is [`Self::block_leaves`] of this
    /// tree.
    #[inline]
    pub(crate) fn check_block(
        &self,
        leaves: &BlockLeaves,
        block: usize,
        ids: &[u32],
    ) -> Option<Aabb> {
        let Some((node, lane)) = leaves.leaf::<N>(block) else {
            return ids
                .iter()
                .all(|&p| p == Self::PADDING)
                .then_some(Aabb::EMPTY);
        };
        let node = &self.nodes[node];
        // The leaf starts at or before the block (it starts at a multiple of LEAF_ALIGN).
        let end = node.child(lane).range().end;
        let first = block * LEAF_ALIGN;
        ids.iter()
            .enumerate()
            .all(|(k, &p)| (first + k < end) == (p != Self::PADDING))
            .then(|| node.child_bounds(lane))
    }

    /// Shape figures, as for the binary BVH: `nodes` counts wide nodes, `leaves` leaf children,
    /// `sah_cost` charges one node test per node visit and one test per primitive, with the boxes
    /// the traversal tests; `memory_bytes` counts the nodes and the primitive order.
    pub fn stats(&self) -> BvhStats {
        let mut tally = Tally::default();
        let mut stack = Vec::new();
        if !self.nodes.is_empty() {
            stack.push((0usize, 1usize));
        }
        while let Some((i, d)) = stack.pop() {
            tally.interior(self.nodes[i].bounds().surface_area());
            for lane in 0..N::WIDTH {
                match self.lane(i, lane) {
                    Lane::Leaf { count, .. } => {
                        let area = self.nodes[i].child_bounds(lane).surface_area();
                        tally.leaf(count, area, d + 1);
                    }
                    Lane::Interior { child } => stack.push((child, d + 1)),
                    Lane::Empty => {}
                }
            }
        }
        tally.finish(
            self.nodes.len(),
            self.num_prims,
            self.bounds().surface_area(),
            self.nodes.capacity() * std::mem::size_of::<N>()
                + self.prim_ids.capacity() * std::mem::size_of::<u32>(),
        )
    }
}
