//! Spatial splits: the split BVH of Stich, Friedrich and Dietrich ("Spatial Splits in Bounding
//! Volume Hierarchies", HPG 2009), binned.
//!
//! Long, thin triangles (walls, floors, columns of architecture) give boxes that overlap whatever
//! plane an object split chooses. A spatial split cuts the node's box by a plane and sends each
//! triangle that straddles it to both sides, each with the box of its part on that side (the
//! triangle clipped to the side, intersected with its reference's box). Each node tries the best
//! binned object split (by centroid, as [`super::build`]) and, where the two sides' boxes overlap
//! by more than [`ALPHA`] of the root's area, the best binned spatial split, and takes the
//! cheaper by the SAH. A triangle may then lie in several leaves: the tree's primitive list holds
//! duplicates.
//!
//! Duplication is bounded: a node may add at most its share of the extra references
//! [`MAX_GROWTH`] allows (split between its children in proportion to their references), so the
//! tree never holds more than `(1 + MAX_GROWTH)·n` of them, and the build does not depend on the
//! number of threads.

use glam::Vec3;

use super::build::BuildConfig;
use super::{Bvh, Node, MAX_DEPTH};
use crate::Aabb;

/// Spatial splits are tried where the best object split's two boxes overlap by more than this
/// fraction of the root's surface area (Stich et al.'s α; 1e-5 is their recommended value).
pub const ALPHA: f32 = 1e-5;

/// At most this many extra references per triangle, in all.
pub const MAX_GROWTH: f32 = 0.5;

/// Bins of a spatial split, per axis.
const SPATIAL_BINS: usize = 32;

/// Below this depth every split is an object median (as in [`super::build`]).
const MEDIAN_DEPTH: usize = MAX_DEPTH - 32;

/// Nodes with at least this many references build their children in parallel.
#[cfg(feature = "parallel")]
const PARALLEL: usize = 4096;

/// A piece of a triangle: its box and the triangle's id.
#[derive(Clone, Copy, Debug)]
struct Ref {
    bounds: Aabb,
    id: u32,
}

impl Ref {
    #[inline]
    fn centroid(&self) -> Vec3 {
        self.bounds.center()
    }
}

/// A subtree: its nodes (interior indices relative to the first, leaf indices relative to the
/// first of `ids`) and its primitive list.
struct Subtree {
    nodes: Vec<Node>,
    ids: Vec<u32>,
}

struct Builder<'t, T> {
    config: BuildConfig,
    tri: &'t T,
    root_area: f32,
    /// Nodes of at most this many references are built by the object-split builder, whose exact
    /// sweep ([`BuildConfig::sweep_threshold`]) finds better planes there than bins do.
    handoff: usize,
}

/// What a node does.
enum Plan {
    Leaf,
    /// References whose centroid lies below `pos` on `axis` go left.
    Object {
        axis: usize,
        pos: f32,
    },
    /// The plane `pos` on `axis` cuts the references; the binned estimate of the two sides.
    Spatial {
        axis: usize,
        pos: f32,
        sides: [(Aabb, usize); 2],
    },
    /// Halves the references sorted by centroid on `axis`.
    Median {
        axis: usize,
    },
}

impl Bvh {
    /// A BVH over `n` triangles (vertices `tri(i)`) with spatial splits ([`crate::bvh::spatial`]):
    /// its [`Bvh::prim_ids`] may hold a triangle more than once.
    pub fn build_spatial(
        n: usize,
        tri: impl Fn(usize) -> [Vec3; 3] + Sync,
        config: BuildConfig,
    ) -> Bvh {
        assert!(u32::try_from(n).is_ok(), "at most u32::MAX primitives");
        let refs: Vec<Ref> = (0..n)
            .map(|i| Ref {
                bounds: Aabb::from_points(tri(i)),
                id: i as u32,
            })
            .collect();
        if refs.is_empty() {
            return Bvh {
                nodes: Vec::new(),
                prim_ids: Vec::new(),
            };
        }
        let bounds = refs.iter().fold(Aabb::EMPTY, |b, r| b.union(r.bounds));
        let builder = Builder {
            config: BuildConfig {
                bins: config.bins.clamp(2, super::build::MAX_BINS),
                max_leaf_size: config.max_leaf_size.max(1),
                block_size: config.block_size.max(1),
                ..config
            },
            tri: &tri,
            root_area: bounds.surface_area(),
            handoff: config.sweep_threshold,
        };
        let budget = (n as f32 * MAX_GROWTH) as usize;
        let sub = builder.build(refs, bounds, 1, budget);
        let mut bvh = Bvh {
            nodes: sub.nodes,
            prim_ids: sub.ids,
        };
        super::reinsert::optimize(
            &mut bvh,
            config.reinsertion_batch,
            config.reinsertion_passes,
        );
        bvh
    }
}

impl<T: Fn(usize) -> [Vec3; 3] + Sync> Builder<'_, T> {
    fn blocks(&self, n: usize) -> f32 {
        n.div_ceil(self.config.block_size) as f32
    }

    fn sah(&self, area: f32, left: (f32, usize), right: (f32, usize)) -> f32 {
        let inv = if area > 0.0 { 1.0 / area } else { 0.0 };
        self.config.traversal_cost
            + self.config.intersection_cost
                * (left.0 * self.blocks(left.1) + right.0 * self.blocks(right.1))
                * inv
    }

    fn build(&self, refs: Vec<Ref>, bounds: Aabb, depth: usize, budget: usize) -> Subtree {
        let n = refs.len();
        if n <= self.handoff || budget == 0 {
            return self.object_subtree(&refs);
        }
        let plan = self.plan(&refs, &bounds, depth, budget);
        if let Plan::Leaf = plan {
            return Subtree {
                nodes: vec![Node::leaf(bounds, 0, n as u32)],
                ids: refs.iter().map(|r| r.id).collect(),
            };
        }
        let (left, right) = self.partition(refs, plan);
        let added = (left.len() + right.len()).saturating_sub(n);
        let rest = budget.saturating_sub(added);
        let share =
            |k: usize| (rest as f64 * k as f64 / (left.len() + right.len()) as f64) as usize;
        let (lb, rb) = (share(left.len()), share(right.len()));
        let bound = |r: &[Ref]| r.iter().fold(Aabb::EMPTY, |b, r| b.union(r.bounds));
        let (lbox, rbox) = (bound(&left), bound(&right));
        #[cfg(feature = "parallel")]
        let (l, r) = if n >= PARALLEL {
            rayon::join(
                || self.build(left, lbox, depth + 1, lb),
                || self.build(right, rbox, depth + 1, rb),
            )
        } else {
            (
                self.build(left, lbox, depth + 1, lb),
                self.build(right, rbox, depth + 1, rb),
            )
        };
        #[cfg(not(feature = "parallel"))]
        let (l, r) = (
            self.build(left, lbox, depth + 1, lb),
            self.build(right, rbox, depth + 1, rb),
        );
        let mut nodes = Vec::with_capacity(1 + l.nodes.len() + r.nodes.len());
        nodes.push(Node::interior(bounds, (1 + l.nodes.len()) as u32));
        let shift = |out: &mut Vec<Node>, sub: &[Node], base: u32, first: u32| {
            out.extend(sub.iter().map(|node| {
                let mut node = *node;
                node.index += if node.is_leaf() { first } else { base };
                node
            }));
        };
        shift(&mut nodes, &l.nodes, 1, 0);
        shift(
            &mut nodes,
            &r.nodes,
            (1 + l.nodes.len()) as u32,
            l.ids.len() as u32,
        );
        let mut ids = l.ids;
        ids.extend_from_slice(&r.ids);
        Subtree { nodes, ids }
    }

    /// The subtree over `refs` by the object-split builder ([`Bvh::build_by`]), no reinsertion
    /// (the whole tree's comes after).
    fn object_subtree(&self, refs: &[Ref]) -> Subtree {
        let config = BuildConfig {
            reinsertion_passes: 0,
            parallel_threshold: usize::MAX,
            ..self.config
        };
        let bvh = Bvh::build_by(refs.len(), |i| (refs[i].bounds, refs[i].centroid()), config);
        Subtree {
            nodes: bvh.nodes,
            ids: bvh.prim_ids.iter().map(|&i| refs[i as usize].id).collect(),
        }
    }

    /// The cheapest of a leaf, the best object split and (where the object split's boxes overlap)
    /// the best spatial split.
    fn plan(&self, refs: &[Ref], bounds: &Aabb, depth: usize, budget: usize) -> Plan {
        let n = refs.len();
        let cbounds = refs.iter().fold(Aabb::EMPTY, |b, r| b.grow(r.centroid()));
        if n <= 1 {
            return Plan::Leaf;
        }
        if depth >= MEDIAN_DEPTH {
            return Plan::Median {
                axis: cbounds.longest_axis(),
            };
        }
        let leaf_cost = self.config.intersection_cost * self.blocks(n);
        let area = bounds.surface_area();
        let object = self.object_split(refs, &cbounds, area);
        let mut best = match object {
            Some((cost, axis, pos, _)) => (cost, Plan::Object { axis, pos }),
            None => (
                f32::INFINITY,
                Plan::Median {
                    axis: cbounds.longest_axis(),
                },
            ),
        };
        let overlap = object.map_or(f32::INFINITY, |o| o.3);
        if budget > 0 && overlap > ALPHA * self.root_area {
            if let Some((cost, axis, pos, extra, sides)) = self.spatial_split(refs, bounds, area) {
                if cost < best.0 && extra <= budget {
                    best = (cost, Plan::Spatial { axis, pos, sides });
                }
            }
        }
        if n <= self.config.max_leaf_size && leaf_cost <= best.0 {
            return Plan::Leaf;
        }
        best.1
    }

    /// The best binned object split: (cost, axis, plane, area of the overlap of the two boxes).
    fn object_split(
        &self,
        refs: &[Ref],
        cbounds: &Aabb,
        area: f32,
    ) -> Option<(f32, usize, f32, f32)> {
        let bins = self.config.bins;
        let mut best: Option<(f32, usize, f32, f32)> = None;
        for axis in 0..3 {
            let (lo, ext) = (cbounds.min[axis], cbounds.extent()[axis]);
            // A flat or non-finite extent has no plane to offer.
            if ext.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
                continue;
            }
            let mut boxes = vec![Aabb::EMPTY; bins];
            let mut counts = vec![0usize; bins];
            for r in refs {
                let b = bin_of(r.centroid()[axis], lo, ext, bins);
                boxes[b] = boxes[b].union(r.bounds);
                counts[b] += 1;
            }
            if let Some((cost, k, [(lbox, _), (rbox, _)])) =
                self.sweep(area, &boxes, &counts, &counts)
            {
                if best.is_none_or(|b| cost < b.0) {
                    let pos = lo + ext * (k as f32 / bins as f32);
                    best = Some((cost, axis, pos, overlap_area(&lbox, &rbox)));
                }
            }
        }
        best
    }

    /// The cheapest plane between `boxes` (bin `k`'s box), where `enter[k]` references start
    /// in bin `k` and `exit[k]` end in it (the same counts for an object split): (cost, the
    /// plane's index `k`, between bins `k - 1` and `k`, and the two sides' boxes and counts).
    #[allow(clippy::type_complexity)]
    fn sweep(
        &self,
        area: f32,
        boxes: &[Aabb],
        enter: &[usize],
        exit: &[usize],
    ) -> Option<(f32, usize, [(Aabb, usize); 2])> {
        let (right_boxes, right_counts) = suffixes(boxes, exit);
        let (mut lbox, mut lcount) = (Aabb::EMPTY, 0);
        let mut best: Option<(f32, usize, [(Aabb, usize); 2])> = None;
        for k in 1..boxes.len() {
            lbox = lbox.union(boxes[k - 1]);
            lcount += enter[k - 1];
            let (rbox, rcount) = (right_boxes[k], right_counts[k]);
            if lcount == 0 || rcount == 0 {
                continue;
            }
            let cost = self.sah(
                area,
                (lbox.surface_area(), lcount),
                (rbox.surface_area(), rcount),
            );
            if best.is_none_or(|b| cost < b.0) {
                best = Some((cost, k, [(lbox, lcount), (rbox, rcount)]));
            }
        }
        best
    }

    /// The best binned spatial split: (cost, axis, plane, references added, the sides' boxes
    /// and counts).
    #[allow(clippy::type_complexity)]
    fn spatial_split(
        &self,
        refs: &[Ref],
        bounds: &Aabb,
        area: f32,
    ) -> Option<(f32, usize, f32, usize, [(Aabb, usize); 2])> {
        const B: usize = SPATIAL_BINS;
        let mut best: Option<(f32, usize, f32, usize, [(Aabb, usize); 2])> = None;
        for axis in 0..3 {
            let (lo, ext) = (bounds.min[axis], bounds.extent()[axis]);
            // A flat or non-finite extent has no plane to offer.
            if ext.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
                continue;
            }
            let plane = |k: usize| lo + ext * (k as f32 / B as f32);
            let mut boxes = [Aabb::EMPTY; B];
            let (mut enter, mut exit) = ([0usize; B], [0usize; B]);
            for r in refs {
                let first = bin_of(r.bounds.min[axis], lo, ext, B);
                let last = bin_of(r.bounds.max[axis], lo, ext, B).max(first);
                enter[first] += 1;
                exit[last] += 1;
                if first == last {
                    boxes[first] = boxes[first].union(r.bounds);
                    continue;
                }
                let t = (self.tri)(r.id as usize);
                for (k, bin) in boxes.iter_mut().enumerate().take(last + 1).skip(first) {
                    let (a, b) = (
                        if k == first {
                            f32::NEG_INFINITY
                        } else {
                            plane(k)
                        },
                        if k == last {
                            f32::INFINITY
                        } else {
                            plane(k + 1)
                        },
                    );
                    *bin = bin.union(piece(&t, &r.bounds, axis, a, b));
                }
            }
            if let Some((cost, k, sides)) = self.sweep(area, &boxes, &enter, &exit) {
                if best.is_none_or(|b| cost < b.0) {
                    let extra = (sides[0].1 + sides[1].1).saturating_sub(refs.len());
                    best = Some((cost, axis, plane(k), extra, sides));
                }
            }
        }
        best
    }

    fn partition(&self, mut refs: Vec<Ref>, plan: Plan) -> (Vec<Ref>, Vec<Ref>) {
        match plan {
            Plan::Leaf => unreachable!("a leaf is not partitioned"),
            Plan::Object { axis, pos } => {
                let (l, r): (Vec<Ref>, Vec<Ref>) =
                    refs.iter().partition(|r| r.centroid()[axis] < pos);
                if l.is_empty() || r.is_empty() {
                    return self.partition(refs, Plan::Median { axis });
                }
                (l, r)
            }
            Plan::Median { axis } => {
                refs.sort_by(|a, b| {
                    a.centroid()[axis]
                        .total_cmp(&b.centroid()[axis])
                        .then(a.id.cmp(&b.id))
                });
                let right = refs.split_off(refs.len() / 2);
                (refs, right)
            }
            Plan::Spatial { axis, pos, sides } => {
                let (mut l, mut r) = (Vec::new(), Vec::new());
                let [(lbox, nl), (rbox, nr)] = sides;
                let (al, ar) = (lbox.surface_area(), rbox.surface_area());
                let (nl, nr) = (nl as f32, nr as f32);
                for re in &refs {
                    if re.bounds.max[axis] <= pos {
                        l.push(*re);
                        continue;
                    }
                    if re.bounds.min[axis] >= pos {
                        r.push(*re);
                        continue;
                    }
                    // Reference unsplitting (Stich et al., section 4.5): the whole reference
                    // on one side where that costs less than its two pieces.
                    let split = al * nl + ar * nr;
                    let left = lbox.union(re.bounds).surface_area() * nl + ar * (nr - 1.0);
                    let right = al * (nl - 1.0) + rbox.union(re.bounds).surface_area() * nr;
                    if left < split && left <= right {
                        l.push(*re);
                    } else if right < split {
                        r.push(*re);
                    } else {
                        let t = (self.tri)(re.id as usize);
                        for (side, a, b) in [
                            (&mut l, f32::NEG_INFINITY, pos),
                            (&mut r, pos, f32::INFINITY),
                        ] {
                            let bounds = piece(&t, &re.bounds, axis, a, b);
                            if !bounds.is_empty() {
                                side.push(Ref { bounds, id: re.id });
                            }
                        }
                    }
                }
                if l.is_empty() || r.is_empty() {
                    let axis = refs
                        .iter()
                        .fold(Aabb::EMPTY, |b, r| b.grow(r.centroid()))
                        .longest_axis();
                    return self.partition(refs, Plan::Median { axis });
                }
                (l, r)
            }
        }
    }
}

/// The bin of coordinate `x` among `bins` equal slices of `[lo, lo + ext]`.
#[inline]
fn bin_of(x: f32, lo: f32, ext: f32, bins: usize) -> usize {
    let b = ((x - lo) * (bins as f32 / ext)) as isize;
    b.clamp(0, bins as isize - 1) as usize
}

/// Unions and sums from each bin to the last.
fn suffixes(boxes: &[Aabb], counts: &[usize]) -> (Vec<Aabb>, Vec<usize>) {
    let mut rb = vec![Aabb::EMPTY; boxes.len() + 1];
    let mut rc = vec![0; boxes.len() + 1];
    for k in (0..boxes.len()).rev() {
        rb[k] = rb[k + 1].union(boxes[k]);
        rc[k] = rc[k + 1] + counts[k];
    }
    (rb, rc)
}

fn overlap_area(a: &Aabb, b: &Aabb) -> f32 {
    let i = Aabb::new(a.min.max(b.min), a.max.min(b.max));
    if i.min.cmple(i.max).all() {
        i.surface_area()
    } else {
        0.0
    }
}

/// The box of the part of triangle `t` between the planes `a ≤ x[axis] ≤ b`, within `within`
/// (the box of the reference being cut). The crossing points are computed by interpolation,
/// which rounds by a few ulps off the axis; the box is grown by `2⁻²⁰` of its coordinates'
/// magnitude, far above that, so the pieces' boxes together always cover the triangle.
fn piece(t: &[Vec3; 3], within: &Aabb, axis: usize, a: f32, b: f32) -> Aabb {
    let mut bx = Aabb::EMPTY;
    for i in 0..3 {
        let (p, q) = (t[i], t[(i + 1) % 3]);
        let (pa, qa) = (p[axis], q[axis]);
        if pa >= a && pa <= b {
            bx = bx.grow(p);
        }
        for plane in [a, b] {
            if plane.is_finite() && ((pa < plane && qa > plane) || (pa > plane && qa < plane)) {
                let s = (plane - pa) / (qa - pa);
                let mut x = p + (q - p) * s;
                x[axis] = plane;
                bx = bx.grow(x);
            }
        }
    }
    if bx.is_empty() {
        return bx;
    }
    let pad = bx.min.abs().max(bx.max.abs()) * (1.0 / (1 << 20) as f32);
    let grown = Aabb::new(bx.min - pad, bx.max + pad);
    let clipped = Aabb::new(grown.min.max(within.min), grown.max.min(within.max));
    if clipped.min.cmple(clipped.max).all() {
        clipped
    } else {
        Aabb::EMPTY
    }
}
