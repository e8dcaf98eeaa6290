//! The lane order of a wide node, for walks that stop at the first hit (any hit, occlusion):
//! children by decreasing chance of stopping the ray per unit of expected work, the order that
//! minimizes the expected cost of a search that ends at its first success (Ize and Hansen, "RTSAH
//! Traversal Order for Occlusion Rays", Computer Graphics Forum 30(2), 2011).
//!
//! The model, over the binary tree the wide one is collapsed from, in the SAH's terms: a ray that
//! enters a box of area `A` enters a child box of area `a` with probability `a / A` (random lines,
//! Cauchy's formula). A triangle of area `t` in a box of area `A` is met with probability
//! `2t / A` (its mean projected area is `t / 2`, the convex box's `A / 4`). The builder sees only
//! boxes, so a primitive's area is estimated from its box: half the norm of the box's three face
//! areas, exact for a right triangle whose legs run along two axes (the halves of walls, floors
//! and ceilings, where occlusion matters most) and an over-estimate for a sliver across its box.
//! Per subtree, bottom up:
//! - `stop`: the chance that a ray entering its box stops in it: `1 − Π (1 − p_i)` over a leaf's
//!   primitives, `1 − Π (1 − a_c / A · stop_c)` over a node's two children;
//! - `work`: the expected cost of walking it: a leaf's block tests (the build's costs), a node's
//!   visit plus its children entered in the better order, the second only where the first did not
//!   stop the ray.
//!
//! Two children are best walked in decreasing `stop / work` (an exchange argument: `c` before `d`
//! costs less exactly when `stop_c · work_d > stop_d · work_c`), and so are a wide node's lanes.

use crate::bvh::collapse::CollapseCosts;
use crate::bvh::Bvh;
use crate::Aabb;

/// Per binary node, the lane key `stop / work` (larger first), from each primitive's box
/// (`prim_box`, by primitive id; clipped to the leaf's box), or from the leaf's own box when `prim_box` is `None` (a tree
/// whose primitives' boxes are not at hand).
pub(super) fn stop_per_work(
    bvh: &Bvh,
    costs: CollapseCosts,
    prim_box: Option<&dyn Fn(u32) -> Aabb>,
) -> Vec<f32> {
    let n = bvh.nodes.len();
    let mut stop = vec![0.0f32; n];
    let mut work = vec![0.0f32; n];
    // A wide node replaces about three levels of binary nodes (W = 8), so each binary level costs
    // a third of a wide node's visit.
    let level_cost = costs.node / 3.0;
    // Children are stored after their parents: one pass from the back is bottom up.
    for i in (0..n).rev() {
        let node = &bvh.nodes[i];
        let area = node.bounds().surface_area();
        if node.is_leaf() {
            let range = node.prim_range();
            let mut miss = 1.0f32;
            match prim_box {
                Some(prim_box) => {
                    let leaf_box = node.bounds();
                    for &p in &bvh.prim_ids[range.clone()] {
                        // Clipped to the leaf: a spatial split's leaf holds a piece of the
                        // primitive, inside both boxes.
                        let b = prim_box(p);
                        let piece = Aabb::new(b.min.max(leaf_box.min), b.max.min(leaf_box.max));
                        miss *= 1.0 - hit_chance(estimated_area(&piece), area);
                    }
                }
                None => miss = 1.0 - hit_chance(estimated_area(&node.bounds()), area),
            }
            stop[i] = 1.0 - miss;
            let blocks = range.len().div_ceil(costs.block_size) as f32;
            work[i] = costs.block * blocks.max(1.0);
        } else {
            let (l, r) = (i + 1, node.right_child());
            let enter = |c: usize| {
                if area > 0.0 {
                    (bvh.nodes[c].bounds().surface_area() / area).min(1.0)
                } else {
                    1.0
                }
            };
            let (pl, pr) = (enter(l), enter(r));
            stop[i] = 1.0 - (1.0 - pl * stop[l]) * (1.0 - pr * stop[r]);
            let (first, second, pf, ps) = if key(stop[l], work[l]) >= key(stop[r], work[r]) {
                (l, r, pl, pr)
            } else {
                (r, l, pr, pl)
            };
            work[i] = level_cost + pf * work[first] + (1.0 - pf * stop[first]) * ps * work[second];
        }
    }
    stop.iter().zip(&work).map(|(&s, &w)| key(s, w)).collect()
}

/// The lane key of a subtree: its chance to stop a ray per unit of work.
fn key(stop: f32, work: f32) -> f32 {
    if work > 0.0 {
        stop / work
    } else {
        0.0
    }
}

/// The chance that a ray entering a box of surface area `box_area` meets a triangle of area
/// `tri_area` inside it (`2t / A`, see the module docs), at most 1 (a flat box's triangle).
fn hit_chance(tri_area: f32, box_area: f32) -> f32 {
    if box_area > 0.0 {
        (2.0 * tri_area / box_area).min(1.0)
    } else {
        1.0
    }
}

/// A triangle's area estimated from its box: the norm of its projections' areas, each taken as
/// half the box face it lies in.
fn estimated_area(b: &Aabb) -> f32 {
    if b.is_empty() {
        return 0.0;
    }
    let e = b.extent();
    0.5 * (e.x * e.y).hypot(e.y * e.z).hypot(e.z * e.x)
}

#[cfg(test)]
mod tests {
    use std::ops::ControlFlow;

    use glam::{DVec3, Vec3};
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    use super::estimated_area;
    use crate::bvh::wide::{Order, WideBvh, WideRay};
    use crate::bvh::BuildConfig;
    use crate::simd::Isa;
    use crate::{Aabb, Ray};

    /// The estimate bounds a triangle's area from above (each projection is a triangle inside its
    /// box face, at most half of it) and is exact for a right triangle along two axes, at every
    /// magnitude from 1e-6 to 1e6; the true area in f64.
    #[test]
    fn estimated_area_bounds_the_triangle_from_above() {
        let mut rng = Pcg64::seed_from_u64(11);
        for _ in 0..20_000 {
            let scale = 10f64.powi(rng.gen_range(-6..=6));
            let v: [DVec3; 3] = std::array::from_fn(|_| {
                DVec3::new(rng.gen(), rng.gen(), rng.gen()) * scale - scale / 2.0
            });
            let area = 0.5 * (v[1] - v[0]).cross(v[2] - v[0]).length();
            let b = Aabb::from_points(v.map(|p| p.as_vec3()));
            let estimate = f64::from(estimated_area(&b));
            assert!(
                estimate >= area * (1.0 - 1e-5),
                "{estimate} < {area} for {v:?}"
            );
        }
        for s in [1e-6f32, 1.0, 1e6] {
            let right = [
                Vec3::ZERO,
                Vec3::new(3.0 * s, 0.0, 0.0),
                Vec3::new(0.0, 0.0, 2.0 * s),
            ];
            let estimate = estimated_area(&Aabb::from_points(right));
            assert!(
                (estimate / (3.0 * s * s) - 1.0).abs() < 1e-6,
                "{estimate} at {s}"
            );
        }
    }

    /// A wall (two triangles) behind a cloud of small triangles that fills a larger box: rays from
    /// inside the cloud toward the wall, walked in node order (any hit), reach the wall's leaf
    /// first. The cloud's subtree has the larger box, which the walk would take first by area
    /// alone, and a ray crossing it meets several of its leaves on the way (1.64 leaves per ray
    /// in that order, one in this).
    #[test]
    fn walks_that_stop_at_the_first_hit_reach_the_occluder_first() {
        let mut rng = Pcg64::seed_from_u64(5);
        let mut tris = vec![
            [
                Vec3::new(-10.0, -10.0, 10.0),
                Vec3::new(10.0, -10.0, 10.0),
                Vec3::new(10.0, 10.0, 10.0),
            ],
            [
                Vec3::new(-10.0, -10.0, 10.0),
                Vec3::new(10.0, 10.0, 10.0),
                Vec3::new(-10.0, 10.0, 10.0),
            ],
        ];
        for _ in 0..4000 {
            let c = Vec3::new(
                rng.gen_range(-20.0..20.0),
                rng.gen_range(-20.0..20.0),
                rng.gen_range(-20.0..0.0),
            );
            tris.push(std::array::from_fn(|_| {
                c + Vec3::new(rng.gen(), rng.gen(), rng.gen()) * 0.05
            }));
        }
        let boxes: Vec<Aabb> = tris.iter().map(|t| Aabb::from_points(*t)).collect();
        let centroids: Vec<Vec3> = boxes.iter().map(Aabb::center).collect();
        let bvh = WideBvh::<8>::build(&boxes, &centroids, BuildConfig::BALANCED);
        let (rays, mut leaves) = (1000, 0usize);
        for _ in 0..rays {
            let origin = Vec3::new(
                rng.gen_range(-5.0..5.0),
                rng.gen_range(-5.0..5.0),
                rng.gen_range(-15.0..-1.0),
            );
            let ray = Ray::new(origin, Vec3::Z);
            let walked = bvh.traverse_on(
                Isa::detected(),
                &WideRay::new(&ray),
                Order::NodeOrder,
                f32::INFINITY,
                |range, _| {
                    leaves += 1;
                    if bvh.prim_ids()[range].iter().any(|&p| p < 2) {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    }
                },
                |_| std::ptr::null(),
            );
            assert!(walked.is_break(), "the wall is behind every ray");
        }
        let per_ray = leaves as f64 / rays as f64;
        assert!(per_ray < 1.1, "{per_ray} leaves per ray before the wall");
    }
}
