//! The wide tree's tests: the collapse, every walk (single, interleaved, packets, each compiled
//! copy) against the binary tree's and the scalar twin's, refit and validation.

use std::ops::{ControlFlow, Range};

use glam::Vec3;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use super::order::{far_first, far_first4, key_lane, ordered_bits, sort4, sort8};
use super::*;
use crate::bvh::test_support::{random_ray, record_leaf, LeafRecorder};
use crate::bvh::{BuildConfig, Bvh, ValidationError};
use crate::simd::{box_scalar, PacketBoxRay};
use crate::Ray;

/// Both networks sort: every 0/1 input (the 0-1 principle, Knuth 5.3.4, makes this a proof).
#[test]
fn sorting_networks_sort_every_zero_one_input() {
    for bits in 0u32..256 {
        let keys: [u64; 8] = std::array::from_fn(|i| u64::from(bits >> i & 1));
        let sorted = sort8(keys);
        assert!(
            sorted.windows(2).all(|w| w[0] >= w[1]),
            "{keys:?} -> {sorted:?}"
        );
        let keys4 = [keys[0], keys[1], keys[2], keys[3]];
        let sorted4 = sort4(keys4);
        assert!(
            sorted4.windows(2).all(|w| w[0] >= w[1]),
            "{keys4:?} -> {sorted4:?}"
        );
    }
}

/// The hit lanes farthest first, equal distances (drawn from a few values) with the lower lane
/// first, then zeros: for every mask of 8 lanes (`far_first`) and of 3 or 4 (`far_first4`),
/// against a plain sort of the lanes.
#[test]
fn hit_lanes_come_farthest_first() {
    let mut rng = Pcg64::seed_from_u64(4);
    for mask in 1u32..256 {
        for _ in 0..100 {
            let t_near: [f32; 8] = std::array::from_fn(|_| match rng.gen_range(0..3) {
                0 => 0.0,
                1 => rng.gen_range(0..4) as f32,
                _ => rng.gen_range(0.0..1e6),
            });
            let mut lanes: Vec<usize> = (0..8).filter(|l| mask >> l & 1 != 0).collect();
            lanes.sort_by(|&a, &b| t_near[b].total_cmp(&t_near[a]).then(a.cmp(&b)));
            let n = lanes.len();
            let keys = far_first(mask, &t_near);
            let order: Vec<usize> = keys[..n].iter().map(|&k| key_lane::<8>(k)).collect();
            assert_eq!(order, lanes, "mask {mask:#b}, t {t_near:?}");
            assert!(keys[n..].iter().all(|&k| k == 0));
            if (3..=4).contains(&n) {
                let keys4 = far_first4(mask, &t_near);
                assert_eq!(keys4[..n], keys[..n]);
                assert!(keys4[n..].iter().all(|&k| k == 0));
            }
        }
    }
}

fn random_boxes(n: usize, seed: u64) -> (Vec<Aabb>, Vec<Vec3>) {
    crate::bvh::test_support::random_boxes(n, seed, 1.0)
}

#[test]
fn collapsed_trees_are_valid_for_every_size_and_preset() {
    collapsed_trees_are_valid_for_every_size_and_preset_w::<4>();
    collapsed_trees_are_valid_for_every_size_and_preset_w::<8>();
}

fn collapsed_trees_are_valid_for_every_size_and_preset_w<const W: usize>()
where
    WideBvh<W>: Traverse,
{
    for n in [0, 1, 2, 3, 4, 5, 9, 17, 100, 1000] {
        for (name, config) in BuildConfig::PRESETS {
            let (boxes, centroids) = random_boxes(n, n as u64);
            let wide = WideBvh::<W>::build(&boxes, &centroids, config);
            assert_eq!(wide.validate(&boxes), Ok(()), "n={n} {name}");
            assert_eq!(wide.num_prims(), n);
            if n > 0 {
                let stats = wide.stats();
                assert_eq!(
                    stats
                        .leaf_size_histogram
                        .iter()
                        .enumerate()
                        .map(|(k, c)| k * c)
                        .sum::<usize>(),
                    n
                );
            }
        }
    }
}

#[test]
fn collapsing_shortens_the_tree() {
    collapsing_shortens_the_tree_w::<4>();
    collapsing_shortens_the_tree_w::<8>();
}

fn collapsing_shortens_the_tree_w<const W: usize>()
where
    WideBvh<W>: Traverse,
{
    let (boxes, centroids) = random_boxes(5000, 3);
    let binary = Bvh::build(&boxes, &centroids, BuildConfig::BALANCED);
    let wide = WideBvh::<W>::from_binary(&binary);
    let (b, w) = (binary.stats(), wide.stats());
    // Small neighbouring leaves may merge.
    assert!(w.leaves <= b.leaves);
    assert!(
        w.nodes * 2 < b.nodes,
        "{} wide nodes for {} binary",
        w.nodes,
        b.nodes
    );
    assert!(
        w.depth * 3 < b.depth * 2 + 3,
        "depth {} vs {}",
        w.depth,
        b.depth
    );
}

#[test]
fn traversal_reaches_exactly_the_leaves_of_the_binary_bvh() {
    traversal_reaches_exactly_the_leaves_of_the_binary_bvh_w::<4>();
    traversal_reaches_exactly_the_leaves_of_the_binary_bvh_w::<8>();
}

fn traversal_reaches_exactly_the_leaves_of_the_binary_bvh_w<const W: usize>()
where
    WideBvh<W>: Traverse,
{
    // Same boxes, same conservative slab test: both trees must report the same primitives
    // (reached through leaves whose boxes the ray touches) for rays in every direction,
    // including axis-parallel ones (infinite 1/dir).
    let (boxes, centroids) = random_boxes(3000, 4);
    // Leaves of one or two primitives, which the default collapse merges where it pays.
    let small_leaves = BuildConfig {
        max_leaf_size: 2,
        ..BuildConfig::BALANCED
    };
    let binary = Bvh::build(&boxes, &centroids, small_leaves);
    // Binary leaves kept as they are (a merged leaf is reached wherever the union of its
    // parts' boxes is: see below).
    let wide = WideBvh::<W>::from_binary_with(
        &binary,
        BuildConfig {
            max_leaf_size: 1,
            ..BuildConfig::BALANCED
        },
    );
    let merged = WideBvh::<W>::from_binary(&binary);
    assert!(merged.stats().leaves < binary.stats().leaves);
    let mut rng = Pcg64::seed_from_u64(5);
    let mut reordered = 0;
    for k in 0..2000 {
        let ray = random_ray(&mut rng, k, 15.0);
        let mut reached_binary = Vec::new();
        let _ = binary.traverse(&crate::bvh::BvhRay::new(&ray), ray.t_max, |range, _| {
            reached_binary.extend(range.map(|i| binary.prim_ids()[i]));
            ControlFlow::Continue(())
        });
        let mut reached_wide = Vec::new();
        let _ = wide.traverse(&WideRay::new(&ray), ray.t_max, |range, _| {
            reached_wide.extend(range.map(|i| wide.prim_ids()[i]));
            ControlFlow::Continue(())
        });
        // The walk in node order reaches the same leaves, in its own order.
        let mut reached_in_node_order = Vec::new();
        let _ = wide.traverse_prefetching(
            &WideRay::new(&ray),
            Order::NodeOrder,
            ray.t_max,
            |range, _| {
                reached_in_node_order.extend(range.map(|i| wide.prim_ids()[i]));
                ControlFlow::Continue(())
            },
            |_| std::ptr::null(),
        );
        let mut reached_merged = Vec::new();
        let _ = merged.traverse(&WideRay::new(&ray), ray.t_max, |range, _| {
            reached_merged.extend(range.map(|i| merged.prim_ids()[i]));
            ControlFlow::Continue(())
        });
        reordered += usize::from(reached_in_node_order != reached_wide);
        reached_binary.sort_unstable();
        reached_wide.sort_unstable();
        reached_in_node_order.sort_unstable();
        reached_merged.sort_unstable();
        assert_eq!(reached_binary, reached_wide, "{ray:?}");
        // Merged leaves reach everything their parts reach (and more where the ray touches
        // a merged leaf's box but not the part's).
        assert!(
            reached_binary
                .iter()
                .all(|p| reached_merged.binary_search(p).is_ok()),
            "{ray:?}"
        );
        assert!(reached_merged.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(reached_in_node_order, reached_wide, "{ray:?}");
        // No padding ever reaches the closure, and each prim at most once.
        assert!(reached_wide.windows(2).all(|w| w[0] < w[1]));
        assert!(reached_in_node_order.windows(2).all(|w| w[0] < w[1]));
    }
    // The node order is another order for rays that meet three or more children of a node.
    assert!(reordered > 100, "{reordered}");
}

#[test]
fn a_packet_reaches_every_leaf_each_of_its_rays_reaches() {
    // Packets around random rays (one origin, directions spread by up to 2 %), with the same
    // t_max throughout: each ray must meet every primitive its own walk meets, each at most
    // once.
    let (boxes, centroids) = random_boxes(3000, 8);
    let wide = WideBvh::<8>::build(&boxes, &centroids, BuildConfig::BALANCED);
    let mut rng = Pcg64::seed_from_u64(9);
    let (mut partial, mut checked) = (0, 0);
    for k in 0..600 {
        let base = random_ray(&mut rng, k, 15.0);
        let rays: [Ray; PACKET] = std::array::from_fn(|_| {
            let jitter = Vec3::new(
                rng.gen_range(-0.02..0.02),
                rng.gen_range(-0.02..0.02),
                rng.gen_range(-0.02..0.02),
            );
            Ray::new(base.origin, base.dir * (Vec3::ONE + jitter))
        });
        let Some(packet) = PacketBoxRay::new(&rays) else {
            // A zero direction component: batches walk such rays one at a time.
            assert!(k % 4 == 0 || rays.iter().any(|r| r.dir.cmpeq(Vec3::ZERO).any()));
            continue;
        };
        let mut t_max = rays.map(|r| r.t_max);
        let mut reached = vec![Vec::new(); PACKET];
        wide.traverse_packet(
            &packet,
            u32::MAX,
            &mut t_max,
            |range, rs, _| {
                for (i, prims) in reached.iter_mut().enumerate() {
                    if rs >> i & 1 == 1 {
                        prims.extend(range.clone().map(|p| wide.prim_ids()[p]));
                    }
                }
                0
            },
            |_| std::ptr::null(),
        );
        let mut alone_counts = Vec::new();
        for (ray, got) in rays.iter().zip(&mut reached) {
            let mut alone = Vec::new();
            let _ = wide.traverse(&WideRay::new(ray), ray.t_max, |range, _| {
                alone.extend(range.map(|p| wide.prim_ids()[p]));
                ControlFlow::Continue(())
            });
            got.sort_unstable();
            assert!(got.windows(2).all(|w| w[0] < w[1]), "a leaf twice");
            assert!(
                alone.iter().all(|p| got.binary_search(p).is_ok()),
                "{ray:?}"
            );
            alone_counts.push(alone.len());
            checked += alone.len();
        }
        partial += usize::from(alone_counts.iter().any(|&n| n != alone_counts[0]));
    }
    assert!(checked > 10_000 && partial > 50, "{checked} {partial}");
}

#[test]
fn every_compiled_traversal_visits_the_same_leaves_in_the_same_order() {
    // Each copy of the 8-wide walk the CPU can run (x86-64-v3, AVX, SSE2) and the entry point,
    // against the scalar twin: bit-identical box tests, so the same leaves in the same order, and
    // the same shrinking t_max.
    let (boxes, centroids) = random_boxes(3000, 6);
    let wide = WideBvh::<8>::build(&boxes, &centroids, BuildConfig::BALANCED);
    let mut rng = Pcg64::seed_from_u64(7);
    type Visit<'a> = Box<dyn Fn(&WideRay, Order, &mut dyn FnMut(Range<usize>, &mut f32)) + 'a>;
    let mut ways: Vec<(String, Visit)> = vec![
        (
            "scalar".into(),
            Box::new(|r, o, f| {
                let _ = traverse_nodes(
                    &wide.nodes,
                    r,
                    o,
                    f32::INFINITY,
                    leaf_of(f),
                    |_| std::ptr::null(),
                    |n: &WideNode<8>, r, t| box_scalar(&n.bounds, r, t),
                );
            }),
        ),
        (
            "entry".into(),
            Box::new(|r, o, f| {
                let _ = wide
                    .traverse_prefetching(r, o, f32::INFINITY, leaf_of(f), |_| std::ptr::null());
            }),
        ),
    ];
    for isa in Isa::available() {
        let wide = &wide;
        ways.push((
            format!("{isa:?}"),
            Box::new(move |r, o, f| {
                let _ =
                    wide.traverse_on(isa, r, o, f32::INFINITY, leaf_of(f), |_| std::ptr::null());
            }),
        ));
    }
    let mut total = 0;
    for k in 0..2000 {
        // Every second ray walks in node order.
        let ray = WideRay::new(&random_ray(&mut rng, k / 2, 15.0));
        let order = if k % 2 == 1 {
            Order::NodeOrder
        } else {
            Order::NearestFirst
        };
        let mut seen: Vec<(&str, Vec<(usize, usize)>)> = Vec::new();
        for (name, visit) in &ways {
            let mut leaves = Vec::new();
            // Shrink t_max to the entry of every second leaf, as a closest-hit query would.
            visit(&ray, order, &mut |range, t_max| {
                leaves.push((range.start, range.end));
                if leaves.len() % 2 == 0 {
                    *t_max = t_max.min(25.0 - leaves.len() as f32);
                }
            });
            seen.push((name, leaves));
        }
        for (name, leaves) in &seen[1..] {
            assert_eq!(leaves, &seen[0].1, "{name} vs scalar, ray {k}");
        }
        total += seen[0].1.len();
    }
    assert!(
        total > 1000,
        "{total} leaves: the rays should cross the boxes"
    );
}

#[test]
fn runs_of_rays_visit_what_single_walks_visit() {
    // `traverse_each` (each compiled build) against one scalar walk per ray: the same leaves
    // in the same order for every ray of a run, with per-ray bounds, a t_max that shrinks,
    // walks that the leaf closure stops early (any hit) and invalid rays that reach nothing,
    // so that the interleaved walks end at different times; the state starts afresh per ray
    // and each walk is finished once. Runs of rays nearest first, and in node order.
    let (boxes, centroids) = random_boxes(3000, 8);
    let wide = WideBvh::<8>::build(&boxes, &centroids, BuildConfig::BALANCED);
    let mut rng = Pcg64::seed_from_u64(9);
    let rays: Vec<WideRay> = (0..600)
        .map(|k| {
            let mut ray = random_ray(&mut rng, k, 15.0);
            if k % 7 == 3 {
                ray.dir.y = f32::NAN;
            }
            WideRay::new(&ray)
        })
        .collect();
    runs_visit_what_single_walks_visit::<true>(&wide, &boxes, &centroids, &rays);
    runs_visit_what_single_walks_visit::<false>(&wide, &boxes, &centroids, &rays);
}

fn runs_visit_what_single_walks_visit<const NEAREST: bool>(
    wide: &WideBvh<8>,
    boxes: &[Aabb],
    centroids: &[Vec3],
    rays: &[WideRay],
) {
    let t_max_of = |k: usize| {
        if k.is_multiple_of(3) {
            f32::INFINITY
        } else {
            2.0 + k as f32 * 0.05
        }
    };
    let stop = |k: usize| k.is_multiple_of(5);
    let recorder = || LeafRecorder::<NEAREST> {
        rays,
        t_max: t_max_of,
        stop,
        leaves: vec![Vec::new(); rays.len()],
        finished: vec![0; rays.len()],
    };
    let order = LeafRecorder::<NEAREST>::ORDER;
    let single = single_walks(wide, rays, order, t_max_of, stop);
    let stops = (0..rays.len()).filter(|&k| single[k].len() >= 3 && stop(k));
    assert!(stops.count() > 20, "some walks must stop early");
    assert!((0..rays.len()).all(|k| k % 7 != 3 || single[k].is_empty()));
    // Runs shorter than the interleaving, and one of odd length.
    for n in [0, 1, 2, 3, 101] {
        let mut run = recorder();
        wide.traverse_each(n, &mut run);
        assert_eq!(run.leaves[..n], single[..n], "run of {n}");
        assert!(run.finished[..n].iter().all(|&f| f == 1), "run of {n}");
        assert!(run.finished[n..].iter().all(|&f| f == 0), "run of {n}");
    }
    // The 4-wide tree's interleaved walks against its single walks.
    let wide4 = WideBvh::<4>::build(boxes, centroids, BuildConfig::BALANCED);
    let mut run = recorder();
    wide4.traverse_each(rays.len(), &mut run);
    assert_eq!(
        run.leaves,
        single_walks(&wide4, rays, order, t_max_of, stop)
    );
    assert!(run.finished.iter().all(|&f| f == 1));
    let mut ways: Vec<Option<Isa>> = vec![None];
    ways.extend(Isa::available().into_iter().map(Some));
    for way in ways {
        let mut run = recorder();
        let n = rays.len();
        match way {
            None => wide.traverse_each(n, &mut run),
            Some(isa) => wide.traverse_each_on(isa, n, &mut run),
        }
        for (k, (got, want)) in run.leaves.iter().zip(&single).enumerate() {
            assert_eq!(got, want, "{way:?}, ray {k}");
        }
        assert!(run.finished.iter().all(|&f| f == 1), "{way:?}");
    }
}

/// Each ray's leaves in one scalar walk of `tree` ([`record_leaf`], bound `t_max(k)`).
fn single_walks<const W: usize>(
    tree: &WideBvh<W>,
    rays: &[WideRay],
    order: Order,
    t_max: fn(usize) -> f32,
    stop: fn(usize) -> bool,
) -> Vec<Vec<(usize, usize)>> {
    (0..rays.len())
        .map(|k| {
            let mut leaves = Vec::new();
            let _ = traverse_nodes(
                &tree.nodes,
                &rays[k],
                order,
                t_max(k),
                |range, t| record_leaf(k, stop, &mut leaves, range, t),
                |_| std::ptr::null(),
                |n: &WideNode<W>, r, t| box_scalar(&n.bounds, r, t),
            );
            leaves
        })
        .collect()
}

#[test]
fn ordered_bits_sort_like_the_floats() {
    let values = [
        f32::NEG_INFINITY,
        -1e30,
        -1.0,
        -1e-30,
        -f32::MIN_POSITIVE / 2.0,
        -0.0,
        0.0,
        f32::MIN_POSITIVE / 2.0,
        1e-30,
        1.0,
        1.5,
        1e30,
        f32::MAX,
        f32::INFINITY,
    ];
    for pair in values.windows(2) {
        assert!(
            ordered_bits(pair[0]) < ordered_bits(pair[1]),
            "{} < {}",
            pair[0],
            pair[1]
        );
    }
}

fn leaf_of(
    f: &mut dyn FnMut(Range<usize>, &mut f32),
) -> impl FnMut(Range<usize>, &mut f32) -> ControlFlow<()> + '_ {
    move |range, t_max| {
        f(range, t_max);
        ControlFlow::Continue(())
    }
}

/// Every lane box equals the union of what is under it (refit leaves no slack).
fn assert_tight<const W: usize>(wide: &WideBvh<W>, boxes: &[Aabb]) {
    for node in &wide.nodes {
        for lane in 0..W {
            let expected = if node.is_leaf(lane) {
                let first = node.index[lane] as usize;
                wide.prim_ids[first..first + node.count[lane] as usize]
                    .iter()
                    .fold(Aabb::EMPTY, |b, &p| b.union(boxes[p as usize]))
            } else if node.is_interior(lane) {
                wide.nodes[node.index[lane] as usize].bounds()
            } else {
                Aabb::EMPTY
            };
            assert_eq!(node.child_bounds(lane), expected);
        }
    }
}

#[test]
fn refit_gives_tight_boxes_and_stays_valid() {
    refit_gives_tight_boxes_and_stays_valid_w::<4>();
    refit_gives_tight_boxes_and_stays_valid_w::<8>();
}

fn refit_gives_tight_boxes_and_stays_valid_w<const W: usize>()
where
    WideBvh<W>: Traverse,
{
    let (boxes, centroids) = random_boxes(2000, 6);
    let mut wide = WideBvh::<W>::build(&boxes, &centroids, BuildConfig::BALANCED);
    assert_tight(&wide, &boxes);
    let built = wide.nodes.clone();
    wide.refit(&boxes);
    assert_eq!(
        wide.nodes, built,
        "refit with unchanged boxes changes nothing"
    );
    let moved: Vec<Aabb> = boxes
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let d = Vec3::new((i % 7) as f32, (i % 3) as f32 * -2.0, 0.5);
            Aabb::new(b.min + d, b.max + d)
        })
        .collect();
    assert!(wide.validate(&moved).is_err());
    wide.refit(&moved);
    assert_eq!(wide.validate(&moved), Ok(()));
    assert_tight(&wide, &moved);
}

#[test]
fn validate_names_each_corruption() {
    validate_names_each_corruption_w::<4>();
    validate_names_each_corruption_w::<8>();
}

fn validate_names_each_corruption_w<const W: usize>()
where
    WideBvh<W>: Traverse,
{
    let (boxes, centroids) = random_boxes(300, 7);
    let wide = WideBvh::<W>::build(&boxes, &centroids, BuildConfig::FAST);
    assert_eq!(wide.validate(&boxes), Ok(()));
    let leaf_at = |w: &WideBvh<W>| {
        w.nodes
            .iter()
            .enumerate()
            .find_map(|(i, n)| (0..W).find(|&l| n.is_leaf(l)).map(|l| (i, l)))
            .unwrap()
    };

    let mut shrunk = wide.clone();
    let (i, l) = leaf_at(&shrunk);
    let b = shrunk.nodes[i].child_bounds(l);
    shrunk.nodes[i].set_child_bounds(l, Aabb::new(b.min, b.min));
    assert!(matches!(
        shrunk.validate(&boxes),
        Err(ValidationError::PrimOutside { .. })
    ));

    let mut misaligned = wide.clone();
    let (i, l) = leaf_at(&misaligned);
    misaligned.nodes[i].index[l] += 1;
    assert!(matches!(
        misaligned.validate(&boxes),
        Err(ValidationError::LeafRange { .. })
    ));

    let mut dup = wide.clone();
    let real: Vec<usize> = (0..dup.prim_ids.len())
        .filter(|&p| dup.prim_ids[p] != WideBvh::<W>::PADDING)
        .collect();
    dup.prim_ids[real[0]] = dup.prim_ids[real[1]];
    assert!(matches!(
        dup.validate(&boxes),
        Err(ValidationError::Permutation { .. })
    ));

    let mut backwards = wide.clone();
    let lane = (0..W).find(|&l| backwards.nodes[0].is_interior(l)).unwrap();
    let child = backwards.nodes[0].index[lane] as usize;
    let grand = (0..W).find(|&l| backwards.nodes[child].is_interior(l));
    if let Some(g) = grand {
        backwards.nodes[child].index[g] = child as u32;
        assert!(matches!(
            backwards.validate(&boxes),
            Err(ValidationError::Layout { .. })
        ));
    }

    let mut grown = wide.clone();
    grown.nodes[child].bounds[1][0] += 100.0;
    assert!(matches!(
        grown.validate(&boxes),
        Err(ValidationError::ChildOutside { .. })
    ));

    assert!(matches!(
        wide.validate(&boxes[1..]),
        Err(ValidationError::BoxCount { .. })
    ));
}

/// The load's passes over the nodes and the blocks accept exactly the trees the validation walk
/// accepts: damaged links, counts, boxes and ids, at both widths.
#[test]
fn load_checks_accept_what_the_walk_accepts() {
    load_checks_accept_what_the_walk_accepts_w::<4>();
    load_checks_accept_what_the_walk_accepts_w::<8>();
}

fn load_checks_accept_what_the_walk_accepts_w<const W: usize>()
where
    WideBvh<W>: Traverse,
{
    use crate::bvh::test_support::load_checks_agree_with_the_walk;
    for (n, seed) in [(300, 7), (2000, 8)] {
        let (boxes, centroids) = random_boxes(n, seed);
        let wide = WideBvh::<W>::build(&boxes, &centroids, BuildConfig::FAST);
        let (accepted, refused) = load_checks_agree_with_the_walk(
            &wide,
            &wide.prim_ids,
            &boxes,
            3000,
            seed,
            |node: &mut WideNode<W>, rng, nodes, positions| {
                let lane = rng.gen_range(0..W);
                match rng.gen_range(0..7) {
                    0 => node.index[lane] = rng.gen_range(0..nodes as u32 + 2),
                    1 => node.index[lane] = rng.gen_range(0..positions as u32 + 8),
                    2 => node.count[lane] = rng.gen_range(0..6),
                    3 => {
                        let delta = rng.gen_range(-0.05f32..0.05);
                        node.bounds[rng.gen_range(0..6)][lane] += delta;
                    }
                    4 => (node.index[lane], node.count[lane]) = (0, 0),
                    5 => node.set_child_bounds(lane, Aabb::EMPTY),
                    _ => {
                        let other = rng.gen_range(0..W);
                        node.index.swap(lane, other);
                        node.count.swap(lane, other);
                    }
                }
            },
        );
        assert!(
            accepted > 100 && refused > 1000,
            "n={n}: {accepted} accepted, {refused} refused"
        );
    }
}

/// A chain of nodes as deep as [`MAX_DEPTH`](crate::bvh::MAX_DEPTH) passes both the walk and the
/// load's passes; one node deeper fails both.
#[test]
fn load_checks_refuse_a_tree_deeper_than_the_walk_allows() {
    use crate::bvh::MAX_DEPTH;
    for depth in [MAX_DEPTH, MAX_DEPTH + 1] {
        let prims = 2 * depth;
        let boxes = vec![Aabb::new(Vec3::ZERO, Vec3::ONE); prims];
        let mut nodes = vec![WideNode::<4>::EMPTY; depth];
        for (i, node) in nodes.iter_mut().enumerate() {
            if i + 1 < depth {
                node.index[0] = i as u32 + 1;
            } else {
                node.count[0] = prims as u32;
            }
            node.set_child_bounds(0, boxes[0]);
        }
        let tree = WideBvh::<4> {
            nodes,
            prim_ids: (0..prims as u32).collect(),
            num_prims: prims,
            repeats: false,
        };
        let walk = tree.validate(&boxes);
        assert_eq!(walk.is_ok(), depth == MAX_DEPTH, "{walk:?}");
        let ids = &tree.prim_ids;
        let passes = tree.check_counts(ids, prims).is_ok()
            && tree.block_leaves(ids).is_some_and(|leaves| {
                (0..prims / 4).all(|b| {
                    tree.check_block(&leaves, b, &ids[4 * b..4 * b + 4])
                        .is_some_and(|leaf| leaf.contains(&boxes[0]))
                })
            });
        assert_eq!(passes, depth == MAX_DEPTH);
    }
}

/// `lanes_inside` (all lanes at once) answers as `Aabb::contains` lane by lane, on random rows
/// with empty lanes, inverted axes, NaN and coordinates equal to the outer box's.
#[test]
fn lanes_inside_equals_contains_lane_by_lane() {
    let mut rng = Pcg64::seed_from_u64(36);
    let outer = Aabb::new(Vec3::new(-1.0, -2.0, -3.0), Vec3::new(1.0, 2.0, 3.0));
    let pick = |rng: &mut Pcg64| match rng.gen_range(0..10) {
        0 => f32::NAN,
        1 => f32::INFINITY,
        2 => f32::NEG_INFINITY,
        3 => [-1.0, 1.0, -2.0, 2.0, -3.0, 3.0][rng.gen_range(0..6)],
        _ => rng.gen_range(-4.0..4.0),
    };
    let (mut inside, mut outside) = (0, 0);
    for _ in 0..20_000 {
        let mut node = WideNode::<8>::EMPTY;
        // Most lanes inside, so that whole nodes inside occur too.
        for lane in 0..rng.gen_range(0..=8) {
            let lo = Vec3::new(rng.gen_range(-1.0..0.0), rng.gen_range(-2.0..0.0), -3.0);
            let mut b = Aabb::new(lo, lo + Vec3::splat(0.5));
            if rng.gen_range(0..4) == 0 {
                let (row, corner) = (rng.gen_range(0..3), rng.gen_range(0..2));
                let v = pick(&mut rng);
                if corner == 0 {
                    b.min[row] = v;
                } else {
                    b.max[row] = v;
                }
            }
            node.set_child_bounds(lane, b);
        }
        let reference = (0..8).all(|l| outer.contains(&node.child_bounds(l)));
        assert_eq!(node.lanes_inside(&outer), reference, "{node:?}");
        if reference {
            inside += 1;
        } else {
            outside += 1;
        }
    }
    assert!(inside > 1_000 && outside > 1_000, "{inside} / {outside}");
}

/// `lane_distances_squared` of the 8-wide node (all lanes at once) equals the trait's default,
/// `box_distance_squared` lane by lane, bit for bit, empty lanes included.
#[test]
fn lane_distances_equal_box_distance_lane_by_lane() {
    let mut rng = Pcg64::seed_from_u64(34);
    for _ in 0..20_000 {
        let mut node = WideNode::<8>::EMPTY;
        for lane in 0..rng.gen_range(0..=8) {
            let scale = 10f32.powi(rng.gen_range(-6..=6));
            let lo = Vec3::new(rng.gen(), rng.gen(), rng.gen()) * scale - scale / 2.0;
            let b = Aabb::new(lo, lo + Vec3::new(rng.gen(), rng.gen(), rng.gen()) * scale);
            node.set_child_bounds(lane, b);
        }
        let scale = 10f32.powi(rng.gen_range(-6..=6));
        let p = (Vec3::new(rng.gen(), rng.gen(), rng.gen()) - 0.5) * scale;
        let reference: [f32; 8] = std::array::from_fn(|l| {
            let b = node.child_bounds(l);
            crate::geom::closest::box_distance_squared(p, b.min, b.max)
        });
        assert_eq!(
            node.lane_distances_squared(p).map(f32::to_bits),
            reference.map(f32::to_bits),
            "{node:?} {p}"
        );
    }
}
