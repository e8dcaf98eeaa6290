//! Validation and shape statistics of a wide tree of any node layout.

use super::node::NodeLayout;
use super::WideTree;
use crate::bvh::stats::Tally;
use crate::bvh::validate::{all_reached, check_permutation, enter};
use crate::bvh::{BvhStats, ValidationError, LEAF_ALIGN};
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
    /// layout, every node reached once, no deeper than [`MAX_DEPTH`](crate::bvh::MAX_DEPTH), leaves
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

    /// [`Self::validate_with_ids`] for an owner of `count` primitives, their boxes given by
    /// `prim_box(prim, position)` for the primitive `prim` at `position` of the order: an owner
    /// that keeps its primitives in the tree's order reads them in order. Called only after the
    /// count and the permutation have been checked, so `prim < count`.
    pub(crate) fn validate_by(
        &self,
        ids: &[u32],
        count: usize,
        prim_box: impl Fn(u32, usize) -> Aabb,
    ) -> Result<(), ValidationError> {
        if count != self.num_prims {
            return Err(ValidationError::BoxCount {
                boxes: count,
                prims: self.num_prims,
            });
        }
        let prims = self.num_prims;
        let nodes = self.nodes.len();
        if (prims == 0) != (nodes == 0) || nodes > prims.max(1) {
            return Err(ValidationError::NodeCount { nodes, prims });
        }
        check_permutation(ids.iter().copied().filter(|&p| p != Self::PADDING), prims)?;
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
                            if !bounds.contains(&prim_box(prim, position)) {
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
