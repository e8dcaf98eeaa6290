//! [`Bvh::validate`]: every structural invariant, checked, with a typed error.
//!
//! Tests call it after every build and refit. The invariants:
//! - 0 nodes for 0 primitives, otherwise between 1 and `2n - 1` nodes;
//! - the permutation holds every primitive id exactly once;
//! - the layout is depth-first: an interior node's left child is the next node and its right child
//!   comes later, inside the node array;
//! - every node is reached exactly once from the root, no deeper than [`MAX_DEPTH`];
//! - leaves are non-empty, their ranges lie in the permutation and cover each position exactly once;
//! - child boxes lie inside their parent's box, and leaf boxes hold their primitives' boxes.

use super::{Bvh, MAX_DEPTH};
use crate::Aabb;

/// A broken BVH invariant (see the [module docs](self)).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValidationError {
    /// `boxes` passed to validate do not match the primitive count.
    #[error("validate got {boxes} boxes for a BVH over {prims} primitives")]
    BoxCount {
        /// Boxes given.
        boxes: usize,
        /// Primitives in the BVH.
        prims: usize,
    },
    /// Too many or too few nodes.
    #[error("{nodes} nodes for {prims} primitives (expected 0 for 0, else 1..=2n-1)")]
    NodeCount {
        /// Nodes in the BVH.
        nodes: usize,
        /// Primitives in the BVH.
        prims: usize,
    },
    /// A primitive id appears a number of times other than once in the permutation.
    #[error("primitive {prim} appears {count} times in the permutation")]
    Permutation {
        /// The primitive id (or an out-of-range id).
        prim: u32,
        /// How often it appears: 0 (never), 2 (at least twice), or 1 for an id out of range.
        count: usize,
    },
    /// An interior node's children are not laid out depth-first inside the array.
    #[error("node {node}: right child {right} breaks the depth-first layout of {nodes} nodes")]
    Layout {
        /// The interior node.
        node: usize,
        /// Its right child index.
        right: usize,
        /// Number of nodes.
        nodes: usize,
    },
    /// A node is reached twice or never.
    #[error("node {node} is reached {count} times from the root")]
    Reach {
        /// The node.
        node: usize,
        /// How often the walk from the root reached it.
        count: usize,
    },
    /// The tree is deeper than [`MAX_DEPTH`].
    #[error("depth {depth} exceeds the maximum {MAX_DEPTH}")]
    TooDeep {
        /// Depth reached.
        depth: usize,
    },
    /// A leaf range is empty, out of bounds, or overlaps another leaf.
    #[error("leaf {node}: range {first}..{end} is empty, out of bounds or covered twice")]
    LeafRange {
        /// The leaf.
        node: usize,
        /// First position.
        first: usize,
        /// One past the last position.
        end: usize,
    },
    /// A position of the permutation is in no leaf.
    #[error("position {position} of the permutation belongs to no leaf")]
    Uncovered {
        /// The position.
        position: usize,
    },
    /// A child's box is not inside its parent's.
    #[error("node {child}'s box is not inside its parent {parent}'s box")]
    ChildOutside {
        /// The parent.
        parent: usize,
        /// The child.
        child: usize,
    },
    /// A primitive's box is not inside its leaf's box.
    #[error("primitive {prim}'s box is not inside leaf {node}'s box")]
    PrimOutside {
        /// The leaf.
        node: usize,
        /// The primitive id.
        prim: u32,
    },
}

/// Checks that `ids` holds every id in `0..prims` exactly once, or at least once where the tree
/// `repeats` primitives (shared by the binary and the wide BVH, whose callers leave out its
/// padding). One bit per id, so the check stays in cache for millions of primitives: the first id
/// out of range or seen twice is reported (count 1 or 2), else the first id never seen (count 0).
pub(crate) fn check_permutation(
    ids: impl Iterator<Item = u32>,
    prims: usize,
    repeats: bool,
) -> Result<(), ValidationError> {
    let mut seen = vec![0u64; prims.div_ceil(64)];
    for p in ids {
        let i = p as usize;
        if i >= prims {
            return Err(ValidationError::Permutation { prim: p, count: 1 });
        }
        let (word, bit) = (i / 64, 1u64 << (i % 64));
        if seen[word] & bit != 0 && !repeats {
            return Err(ValidationError::Permutation { prim: p, count: 2 });
        }
        seen[word] |= bit;
    }
    // The first id never seen: the first word with a bit clear (a word at a time), the last
    // word's bits past `prims` aside.
    let missing = seen.iter().enumerate().find_map(|(word, &bits)| {
        let bits = if word == prims / 64 {
            bits | !0u64 << (prims % 64)
        } else {
            bits
        };
        (bits != u64::MAX).then(|| word * 64 + bits.trailing_ones() as usize)
    });
    match missing {
        Some(p) => Err(ValidationError::Permutation {
            prim: p as u32,
            count: 0,
        }),
        None => Ok(()),
    }
}

/// The walk from the root enters node `i` at `depth` (shared by the binary and the wide trees): no
/// deeper than [`MAX_DEPTH`], and no node reached twice.
pub(crate) fn enter(reached: &mut [usize], i: usize, depth: usize) -> Result<(), ValidationError> {
    if depth > MAX_DEPTH {
        return Err(ValidationError::TooDeep { depth });
    }
    reached[i] += 1;
    if reached[i] > 1 {
        return Err(ValidationError::Reach {
            node: i,
            count: reached[i],
        });
    }
    Ok(())
}

/// After the walk: every node was reached.
pub(crate) fn all_reached(reached: &[usize]) -> Result<(), ValidationError> {
    match reached.iter().position(|&c| c != 1) {
        Some(node) => Err(ValidationError::Reach { node, count: 0 }),
        None => Ok(()),
    }
}

impl Bvh {
    /// Checks every structural invariant against the primitives' current `boxes` (indexed by
    /// primitive id). See the [module docs](super::validate) for the list.
    pub fn validate(&self, boxes: &[Aabb]) -> Result<(), ValidationError> {
        let prims = self.prim_ids.len();
        let nodes = self.nodes.len();
        if boxes.len() != prims {
            return Err(ValidationError::BoxCount {
                boxes: boxes.len(),
                prims,
            });
        }
        let bad_count = if prims == 0 {
            nodes != 0
        } else {
            nodes == 0 || nodes > 2 * prims - 1
        };
        if bad_count {
            return Err(ValidationError::NodeCount { nodes, prims });
        }
        check_permutation(self.prim_ids.iter().copied(), prims, false)?;
        if nodes == 0 {
            return Ok(());
        }
        let mut reached = vec![0usize; nodes];
        let mut covered = vec![false; prims];
        let mut stack = vec![(0usize, 1usize)];
        while let Some((i, depth)) = stack.pop() {
            enter(&mut reached, i, depth)?;
            let node = &self.nodes[i];
            let bounds = node.bounds();
            if node.is_leaf() {
                let range = node.prim_range();
                let (first, end) = (range.start, range.end);
                if end > prims || covered[first..end].iter().any(|&c| c) {
                    return Err(ValidationError::LeafRange {
                        node: i,
                        first,
                        end,
                    });
                }
                for pos in range {
                    covered[pos] = true;
                    let prim = self.prim_ids[pos];
                    if !bounds.contains(&boxes[prim as usize]) {
                        return Err(ValidationError::PrimOutside { node: i, prim });
                    }
                }
            } else {
                let right = node.right_child();
                if right <= i + 1 || right >= nodes {
                    return Err(ValidationError::Layout {
                        node: i,
                        right,
                        nodes,
                    });
                }
                for child in [i + 1, right] {
                    if !bounds.contains(&self.nodes[child].bounds()) {
                        return Err(ValidationError::ChildOutside { parent: i, child });
                    }
                    stack.push((child, depth + 1));
                }
            }
        }
        all_reached(&reached)?;
        if let Some(position) = covered.iter().position(|&c| !c) {
            return Err(ValidationError::Uncovered { position });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::*;
    use crate::bvh::BuildConfig;

    fn boxes(n: usize) -> Vec<Aabb> {
        (0..n)
            .map(|i| {
                let p = Vec3::new((i * 7 % 13) as f32, (i * 3 % 5) as f32, i as f32 * 0.1);
                Aabb::new(p, p + Vec3::splat(0.5))
            })
            .collect()
    }

    fn built(n: usize) -> (Bvh, Vec<Aabb>) {
        let b = boxes(n);
        let c: Vec<Vec3> = b.iter().map(Aabb::center).collect();
        (Bvh::build(&b, &c, BuildConfig::FAST), b)
    }

    /// The first id missing from an order is the one named, wherever it falls in the words of
    /// the bit set (the last word's bits past the count aside).
    #[test]
    fn the_first_missing_id_is_named() {
        for prims in [1, 5, 63, 64, 65, 128, 130, 1000] {
            let all: Vec<u32> = (0..prims as u32).collect();
            assert_eq!(check_permutation(all.iter().copied(), prims, false), Ok(()));
            for gone in [0, prims / 2, prims - 1] {
                let ids = all.iter().copied().filter(|&p| p as usize != gone);
                assert_eq!(
                    check_permutation(ids, prims, false),
                    Err(ValidationError::Permutation {
                        prim: gone as u32,
                        count: 0
                    }),
                    "{prims} ids, {gone} missing"
                );
            }
        }
    }

    #[test]
    fn a_built_tree_is_valid_and_each_corruption_is_named() {
        let (bvh, b) = built(200);
        assert_eq!(bvh.validate(&b), Ok(()));
        assert!(bvh.nodes.len() > 1);

        let mut dup = bvh.clone();
        dup.prim_ids[0] = dup.prim_ids[1];
        assert!(matches!(
            dup.validate(&b),
            Err(ValidationError::Permutation { .. })
        ));

        let mut shrunk = bvh.clone();
        let leaf = shrunk.nodes.iter().position(|n| n.is_leaf()).unwrap();
        shrunk.nodes[leaf].max = shrunk.nodes[leaf].min;
        assert!(matches!(
            shrunk.validate(&b),
            Err(ValidationError::PrimOutside { .. })
        ));

        let mut grown = bvh.clone();
        grown.nodes[1].max[0] += 100.0;
        assert!(matches!(
            grown.validate(&b),
            Err(ValidationError::ChildOutside {
                parent: 0,
                child: 1
            })
        ));

        let mut layout = bvh.clone();
        layout.nodes[0].index = 1;
        assert!(matches!(
            layout.validate(&b),
            Err(ValidationError::Layout { .. })
        ));

        let mut range = bvh.clone();
        range.nodes[leaf].count += 1;
        assert!(range.validate(&b).is_err());

        assert!(matches!(
            bvh.validate(&b[1..]),
            Err(ValidationError::BoxCount { .. })
        ));
    }

    #[test]
    fn empty_bvh_is_valid() {
        let bvh = Bvh::build(&[], &[], BuildConfig::default());
        assert_eq!(bvh.validate(&[]), Ok(()));
        assert!(bvh.nodes.is_empty());
    }
}
