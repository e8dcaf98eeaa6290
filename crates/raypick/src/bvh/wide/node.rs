//! The float node layout, [`WideNode`], and what the shared wide-tree shell needs of any node
//! layout ([`NodeLayout`]: the float node here, the quantized one in
//! [`crate::bvh::quantized`]).

use std::ops::Range;

use glam::Vec3;

use crate::bvh::ValidationError;
use crate::geom::closest::box_distance_squared;
use crate::Aabb;

/// A lane's reference to its child: a leaf over positions `index..index + count` of the tree's
/// primitive order when `count > 0`, else node `index` (or, in a node, an empty lane, which the
/// node test never reports). The walks keep children in this form on their stacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Child {
    /// Node index, or first position of a leaf.
    pub index: u32,
    /// Primitive count of a leaf; 0 for a node.
    pub count: u32,
}

impl Child {
    /// The root node.
    pub(crate) const NODE_0: Self = Self::node(0);

    /// Node `index`.
    #[inline(always)]
    pub const fn node(index: u32) -> Self {
        Self { index, count: 0 }
    }

    /// Whether this is a leaf.
    #[inline(always)]
    pub fn is_leaf(self) -> bool {
        self.count != 0
    }

    /// A leaf's positions in the primitive order.
    #[inline(always)]
    pub fn range(self) -> Range<usize> {
        self.index as usize..self.index as usize + self.count as usize
    }
}

/// What the wide-tree shell ([`super::WideTree`]: walks, refit, validation, statistics) needs of a
/// node layout. A lane is a leaf (`count > 0`, positions `index..index + count` of the tree's
/// primitive order), an interior child (`count == 0`, node `index`, always after its parent), or
/// empty.
pub trait NodeLayout: Copy + std::fmt::Debug {
    /// Lanes per node.
    const WIDTH: usize;

    /// The child of `lane`. An empty lane reads as node 0 or as some other node: the node test never
    /// reports it.
    fn child(&self, lane: usize) -> Child;

    /// Whether `lane` holds a child (leaf or interior).
    fn holds(&self, lane: usize) -> bool;

    /// The box of `lane` as the traversal tests it (conservative; empty for an empty lane).
    fn child_bounds(&self, lane: usize) -> Aabb;

    /// The box of everything under the node.
    fn bounds(&self) -> Aabb;

    /// The squared distance from `p` to the box of each lane (at most eight), as
    /// [`box_distance_squared`] gives it (infinite for an empty lane and past the node's width):
    /// what a nearest-first point query compares with its radius. A layout may compute the
    /// lanes together; the answers are the same, bit for bit.
    #[inline]
    fn lane_distances_squared(&self, p: Vec3) -> [f32; 8] {
        let mut out = [f32::INFINITY; 8];
        for (lane, d2) in out.iter_mut().enumerate().take(Self::WIDTH) {
            let b = self.child_bounds(lane);
            *d2 = box_distance_squared(p, b.min, b.max);
        }
        out
    }

    /// Stores the exact boxes of the lanes (`lanes[l]` for lane `l`, empty for empty lanes): what
    /// a refit does to each node, bottom-up.
    fn set_lanes(&mut self, lanes: &[Aabb]);

    /// The layout's own rules for `lane` of node number `node` (how an empty lane is stored, that
    /// an interior lane's box holds `child`, the node it refers to); the shell checks the rest.
    fn check_lane(
        &self,
        node: usize,
        lane: usize,
        child: Option<&Self>,
    ) -> Result<(), ValidationError>;
}

/// One node of a [`super::WideBvh`]: `W` child boxes and their references. `128·W/4` bytes: two
/// cache lines at `W = 4`, four at `W = 8`.
///
/// The boxes are structure-of-arrays rows (`min_x, max_x, min_y, max_y, min_z, max_z`, one lane
/// per child) so that one SIMD slab test covers every child. Per child, `index` and `count`
/// follow [`NodeLayout`]; an empty lane has `index == 0, count == 0` and the empty box
/// [`Aabb::EMPTY`], which no ray hits.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(64))]
pub struct WideNode<const W: usize> {
    /// Rows `min_x, max_x, min_y, max_y, min_z, max_z`, one lane per child.
    pub bounds: [[f32; W]; 6],
    /// Per child: node index (interior), first position in `prim_ids` (leaf), or 0 (empty lane).
    pub index: [u32; W],
    /// Per child: primitive count of a leaf, 0 for interior children and empty lanes.
    pub count: [u32; W],
}

const _: () = assert!(std::mem::size_of::<WideNode<4>>() == 128);
const _: () = assert!(std::mem::size_of::<WideNode<8>>() == 256);

// SAFETY: `WideNode<8>` is `repr(C)` with fields of `f32` and `u32` arrays only, for which every
// bit pattern is a value (all zeros too), and it has no padding: its 256 bytes (asserted above)
// are the 48 + 8 + 8 words of its fields. So it is `Zeroable` and `Pod` (a scene file stores its
// nodes as these bytes and a load reads them straight into place). Not derived: the derive
// cannot see through the generic width.
unsafe impl bytemuck::Zeroable for WideNode<8> {}
// SAFETY: as above; also `Copy` and `'static`.
unsafe impl bytemuck::Pod for WideNode<8> {}

impl<const W: usize> WideNode<W> {
    /// A node whose `W` lanes are empty.
    pub const EMPTY: Self = Self {
        bounds: [
            [f32::INFINITY; W],
            [f32::NEG_INFINITY; W],
            [f32::INFINITY; W],
            [f32::NEG_INFINITY; W],
            [f32::INFINITY; W],
            [f32::NEG_INFINITY; W],
        ],
        index: [0; W],
        count: [0; W],
    };

    /// The box of child `lane` ([`Aabb::EMPTY`] for an empty lane).
    #[inline]
    pub fn child_bounds(&self, lane: usize) -> Aabb {
        let b = &self.bounds;
        Aabb::new(
            Vec3::new(b[0][lane], b[2][lane], b[4][lane]),
            Vec3::new(b[1][lane], b[3][lane], b[5][lane]),
        )
    }

    /// `true` when every lane's box lies in `outer` ([`Aabb::contains`] on each, empty lanes
    /// included): the same test on all lanes at once, without a branch per lane, so that it
    /// compiles to a few SIMD compares of the rows.
    #[inline]
    pub fn lanes_inside(&self, outer: &Aabb) -> bool {
        let [min_x, max_x, min_y, max_y, min_z, max_z] = &self.bounds;
        let mut all = true;
        for l in 0..W {
            let empty = (min_x[l] > max_x[l]) | (min_y[l] > max_y[l]) | (min_z[l] > max_z[l]);
            let inside = (min_x[l] >= outer.min.x)
                & (min_y[l] >= outer.min.y)
                & (min_z[l] >= outer.min.z)
                & (max_x[l] <= outer.max.x)
                & (max_y[l] <= outer.max.y)
                & (max_z[l] <= outer.max.z);
            all &= empty | inside;
        }
        all
    }

    /// Sets the box of child `lane`.
    #[inline]
    pub fn set_child_bounds(&mut self, lane: usize, bounds: Aabb) {
        for axis in 0..3 {
            self.bounds[2 * axis][lane] = bounds.min[axis];
            self.bounds[2 * axis + 1][lane] = bounds.max[axis];
        }
    }

    /// The union of the child boxes.
    pub fn bounds(&self) -> Aabb {
        (0..W).fold(Aabb::EMPTY, |b, lane| b.union(self.child_bounds(lane)))
    }

    /// `true` when child `lane` is a leaf.
    #[inline]
    pub fn is_leaf(&self, lane: usize) -> bool {
        self.count[lane] != 0
    }

    /// `true` when child `lane` is an interior node.
    #[inline]
    pub fn is_interior(&self, lane: usize) -> bool {
        self.count[lane] == 0 && self.index[lane] != 0
    }
}

impl<const W: usize> NodeLayout for WideNode<W> {
    const WIDTH: usize = W;

    /// All lanes from the rows at once, without a branch per lane (the compiler makes SIMD of
    /// it), each the very operations of [`box_distance_squared`] in its order.
    #[inline]
    fn lane_distances_squared(&self, p: Vec3) -> [f32; 8] {
        // `Vec3::max`'s select, so that the answers match bit for bit.
        let max = |a: f32, b: f32| if a > b { a } else { b };
        let [min_x, max_x, min_y, max_y, min_z, max_z] = &self.bounds;
        let mut out = [f32::INFINITY; 8];
        for l in 0..W.min(8) {
            let empty = (min_x[l] > max_x[l]) | (min_y[l] > max_y[l]) | (min_z[l] > max_z[l]);
            let dx = max(max(min_x[l] - p.x, p.x - max_x[l]), 0.0);
            let dy = max(max(min_y[l] - p.y, p.y - max_y[l]), 0.0);
            let dz = max(max(min_z[l] - p.z, p.z - max_z[l]), 0.0);
            let d2 = dx * dx + dy * dy + dz * dz;
            out[l] = if empty { f32::INFINITY } else { d2 };
        }
        out
    }

    #[inline(always)]
    fn child(&self, lane: usize) -> Child {
        Child {
            index: self.index[lane],
            count: self.count[lane],
        }
    }

    #[inline]
    fn holds(&self, lane: usize) -> bool {
        self.is_leaf(lane) || self.is_interior(lane)
    }

    #[inline]
    fn child_bounds(&self, lane: usize) -> Aabb {
        WideNode::child_bounds(self, lane)
    }

    fn bounds(&self) -> Aabb {
        WideNode::bounds(self)
    }

    /// The exact boxes, as they are (an empty lane keeps [`Aabb::EMPTY`]).
    fn set_lanes(&mut self, lanes: &[Aabb]) {
        for (lane, &bounds) in lanes.iter().enumerate().take(W) {
            if self.holds(lane) {
                self.set_child_bounds(lane, bounds);
            }
        }
    }

    /// An empty lane has an empty box (never hit); an interior lane's box holds its child's boxes.
    fn check_lane(
        &self,
        node: usize,
        lane: usize,
        child: Option<&Self>,
    ) -> Result<(), ValidationError> {
        let bounds = self.child_bounds(lane);
        let holds = match child {
            _ if !self.holds(lane) => bounds.is_empty(),
            Some(child) => child.lanes_inside(&bounds),
            None => true,
        };
        if holds {
            Ok(())
        } else {
            Err(ValidationError::ChildOutside {
                parent: node,
                child: if child.is_some() {
                    self.index[lane] as usize
                } else {
                    0
                },
            })
        }
    }
}
