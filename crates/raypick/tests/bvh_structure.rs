//! The BVH on its own: every build passes `validate()`, for every preset and awkward input; depth
//! and leaf-size bounds hold; traversal reaches every primitive whose box the ray touches (against a
//! brute-force loop over the boxes); refit equals a rebuild's boxes; the tree does not depend on the
//! number of threads.

use std::ops::ControlFlow;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use raypick::bvh::{BuildConfig, Bvh, BvhRay, MAX_DEPTH};
use raypick::glam::Vec3;
use raypick::{Aabb, Ray};

fn random_boxes(rng: &mut Pcg64, n: usize, scale: f32) -> Vec<Aabb> {
    (0..n)
        .map(|_| {
            let c = Vec3::new(rng.gen(), rng.gen(), rng.gen()) * scale;
            let h = Vec3::new(rng.gen(), rng.gen(), rng.gen()) * scale * 0.02;
            Aabb::new(c - h, c + h)
        })
        .collect()
}

fn centroids(boxes: &[Aabb]) -> Vec<Vec3> {
    boxes.iter().map(Aabb::center).collect()
}

fn reached(bvh: &Bvh, ray: &Ray) -> Vec<u32> {
    let mut out = Vec::new();
    let _ = bvh.traverse(&BvhRay::new(ray), ray.t_max, |range, _| {
        out.extend(range.map(|i| bvh.prim_ids()[i]));
        ControlFlow::Continue(())
    });
    out.sort_unstable();
    out
}

fn check_shape(bvh: &Bvh, boxes: &[Aabb], config: &BuildConfig) {
    bvh.validate(boxes).expect("valid BVH");
    let stats = bvh.stats();
    assert!(stats.depth <= MAX_DEPTH);
    assert_eq!(stats.prims, boxes.len());
    assert_eq!(
        stats.leaf_size_histogram.iter().sum::<usize>(),
        stats.leaves
    );
    assert_eq!(
        stats
            .leaf_size_histogram
            .iter()
            .enumerate()
            .map(|(k, n)| k * n)
            .sum::<usize>(),
        boxes.len()
    );
    if !boxes.is_empty() {
        // A binary tree: interior nodes = leaves - 1.
        assert_eq!(stats.nodes, 2 * stats.leaves - 1);
        assert!(
            stats.leaf_size_histogram.len() <= config.max_leaf_size + 1,
            "leaf larger than max_leaf_size: {:?}",
            stats.leaf_size_histogram
        );
    }
}

#[test]
fn every_preset_and_size_builds_a_valid_tree() {
    let mut rng = Pcg64::seed_from_u64(1);
    for (name, config) in BuildConfig::PRESETS {
        for n in [0, 1, 2, 3, 7, 100, 1000, 20_000] {
            let boxes = random_boxes(&mut rng, n, 10.0);
            let bvh = Bvh::build(&boxes, &centroids(&boxes), config);
            check_shape(&bvh, &boxes, &config);
            if n == 20_000 {
                // The SAH must do better than a degenerate tree: the expected number of tests per ray
                // is far below n.
                let stats = bvh.stats();
                assert!(
                    stats.sah_cost < 200.0,
                    "{name}: SAH cost {}",
                    stats.sah_cost
                );
            }
        }
    }
}

#[test]
fn identical_centroids_and_exponential_spacing_keep_the_depth_bound() {
    // All centroids equal: no SAH plane separates them; median splits by index.
    let same = vec![Aabb::new(Vec3::ZERO, Vec3::ONE); 5000];
    for (_, config) in BuildConfig::PRESETS {
        let bvh = Bvh::build(&same, &centroids(&same), config);
        check_shape(&bvh, &same, &config);
    }
    // Exponentially spaced boxes make the SAH peel one primitive at a time; the median fallback
    // bounds the depth.
    let expo: Vec<Aabb> = (0..3000)
        .map(|i| {
            let x = 1.01f32.powi(i);
            Aabb::new(Vec3::new(x, 0.0, 0.0), Vec3::new(x * 1.001, 1.0, 1.0))
        })
        .collect();
    for (_, config) in BuildConfig::PRESETS {
        let bvh = Bvh::build(
            &expo,
            &centroids(&expo),
            BuildConfig {
                max_leaf_size: 1,
                ..config
            },
        );
        check_shape(
            &bvh,
            &expo,
            &BuildConfig {
                max_leaf_size: 1,
                ..config
            },
        );
    }
    // Non-finite input does not panic and still gives a valid tree over its boxes.
    let mut bad = random_boxes(&mut Pcg64::seed_from_u64(2), 50, 1.0);
    let mut c = centroids(&bad);
    c[3] = Vec3::NAN;
    c[7] = Vec3::INFINITY;
    bad[9] = Aabb::new(Vec3::splat(-1e30), Vec3::splat(1e30));
    let bvh = Bvh::build(&bad, &c, BuildConfig::default());
    bvh.validate(&bad).unwrap();
}

#[test]
fn traversal_reaches_every_box_the_ray_touches() {
    let mut rng = Pcg64::seed_from_u64(3);
    for (_, config) in BuildConfig::PRESETS {
        let boxes = random_boxes(&mut rng, 3000, 10.0);
        let bvh = Bvh::build(&boxes, &centroids(&boxes), config);
        for k in 0..300 {
            let origin = Vec3::new(rng.gen(), rng.gen(), rng.gen()) * 14.0 - Vec3::splat(2.0);
            let mut dir = Vec3::new(
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
                rng.gen_range(-1.0..1.0),
            );
            // Axis-aligned directions (zero components) exercise the scalar slab twin.
            if k % 5 == 0 {
                dir.y = 0.0;
            }
            if k % 7 == 0 {
                dir.z = 0.0;
            }
            if dir == Vec3::ZERO {
                continue;
            }
            let ray = if k % 3 == 0 {
                Ray::line(origin, dir)
            } else {
                Ray::new(origin, dir)
            };
            let want: Vec<u32> = (0..boxes.len() as u32)
                .filter(|&i| boxes[i as usize].intersect_ray(&ray).is_some())
                .collect();
            let got = reached(&bvh, &ray);
            // Conservative: a superset of the touched boxes; every reached leaf's box is touched.
            for w in &want {
                assert!(got.binary_search(w).is_ok(), "box {w} missed by traversal");
            }
        }
    }
    // A ray lying in the face plane of a box, parallel to it (0·∞ in the slab test), reaches it.
    let flat = vec![
        Aabb::new(Vec3::ZERO, Vec3::ONE),
        Aabb::new(Vec3::splat(5.0), Vec3::splat(6.0)),
    ];
    let one_per_leaf = BuildConfig {
        max_leaf_size: 1,
        ..BuildConfig::default()
    };
    let bvh = Bvh::build(&flat, &centroids(&flat), one_per_leaf);
    assert_eq!(
        reached(&bvh, &Ray::new(Vec3::new(-1.0, 0.0, 1.0), Vec3::X)),
        vec![0]
    );
    // Invalid rays reach nothing.
    assert!(reached(&bvh, &Ray::new(Vec3::NAN, Vec3::X)).is_empty());
    assert!(reached(&bvh, &Ray::new(Vec3::ZERO, Vec3::ZERO)).is_empty());
}

#[test]
fn break_stops_and_shrinking_t_max_prunes() {
    let boxes: Vec<Aabb> = (0..64)
        .map(|i| {
            Aabb::new(
                Vec3::new(i as f32, 0.0, 0.0),
                Vec3::new(i as f32 + 0.5, 1.0, 1.0),
            )
        })
        .collect();
    let bvh = Bvh::build(
        &boxes,
        &centroids(&boxes),
        BuildConfig {
            max_leaf_size: 1,
            ..BuildConfig::default()
        },
    );
    let ray = Ray::new(Vec3::new(-1.0, 0.5, 0.5), Vec3::X);
    let mut calls = 0;
    let flow = bvh.traverse(&BvhRay::new(&ray), ray.t_max, |_, _| {
        calls += 1;
        ControlFlow::Break(())
    });
    assert_eq!((flow, calls), (ControlFlow::Break(()), 1));
    // Ordered traversal: the first leaf is the nearest box; cutting t_max there visits no other.
    let mut seen = Vec::new();
    let _ = bvh.traverse(&BvhRay::new(&ray), ray.t_max, |range, t_max| {
        for i in range {
            seen.push(bvh.prim_ids()[i]);
        }
        *t_max = 1.0;
        ControlFlow::Continue(())
    });
    assert_eq!(seen, vec![0]);
}

#[test]
fn refit_matches_a_rebuild_and_stays_valid() {
    let mut rng = Pcg64::seed_from_u64(4);
    let boxes = random_boxes(&mut rng, 2000, 10.0);
    let mut bvh = Bvh::build(&boxes, &centroids(&boxes), BuildConfig::default());
    let moved: Vec<Aabb> = boxes
        .iter()
        .map(|b| {
            let d = Vec3::new(b.min.y.sin(), b.min.z.cos(), 0.3) * 2.0;
            Aabb::new(b.min + d, b.max + d + d.abs() * 0.5)
        })
        .collect();
    bvh.refit(&moved);
    bvh.validate(&moved).expect("valid after refit");
    // The root box equals the union of the moved boxes, as a rebuild's does.
    let rebuilt = Bvh::build(&moved, &centroids(&moved), BuildConfig::default());
    assert_eq!(bvh.bounds(), rebuilt.bounds());
    for _ in 0..200 {
        let o = Vec3::new(rng.gen(), rng.gen(), rng.gen()) * 14.0 - Vec3::splat(2.0);
        let d = Vec3::new(
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
        );
        let ray = Ray::new(o, d);
        let want: Vec<u32> = (0..moved.len() as u32)
            .filter(|&i| moved[i as usize].intersect_ray(&ray).is_some())
            .collect();
        let got = reached(&bvh, &ray);
        for w in &want {
            assert!(got.binary_search(w).is_ok());
        }
    }
}

#[cfg(feature = "parallel")]
#[test]
fn the_tree_does_not_depend_on_the_thread_count() {
    let boxes = random_boxes(&mut Pcg64::seed_from_u64(5), 30_000, 10.0);
    let c = centroids(&boxes);
    let config = BuildConfig {
        parallel_threshold: 512,
        ..BuildConfig::default()
    };
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let a = one.install(|| Bvh::build(&boxes, &c, config));
    let b = Bvh::build(&boxes, &c, config);
    let serial = Bvh::build(
        &boxes,
        &c,
        BuildConfig {
            parallel_threshold: usize::MAX,
            ..config
        },
    );
    assert_eq!(a.nodes(), b.nodes());
    assert_eq!(a.prim_ids(), b.prim_ids());
    assert_eq!(a.nodes(), serial.nodes());
    a.validate(&boxes).unwrap();
}

#[test]
fn the_sah_charges_whole_blocks() {
    // Eight boxes in a row. Charged per primitive (block 1), a leaf of 8 costs 8 tests and two
    // leaves of 4 cost 1 + about 4: split. Charged per block of 8, the leaf costs one test and any
    // split at least one visit plus one test per side: keep the leaf.
    let boxes: Vec<Aabb> = (0..8)
        .map(|i| {
            Aabb::new(
                Vec3::new(i as f32, 0.0, 0.0),
                Vec3::new(i as f32 + 0.5, 1.0, 1.0),
            )
        })
        .collect();
    let build = |block_size| {
        Bvh::build(
            &boxes,
            &centroids(&boxes),
            BuildConfig {
                block_size,
                intersection_cost: 1.0,
                traversal_cost: 1.0,
                ..BuildConfig::default()
            },
        )
    };
    assert!(build(1).nodes().len() > 1);
    assert_eq!(build(8).nodes().len(), 1);
    // Rounding up: 5 primitives in blocks of 4 cost two tests, as 8 do.
    let five = &boxes[..5];
    let leaf_of_five = Bvh::build(
        five,
        &centroids(five),
        BuildConfig {
            block_size: 4,
            intersection_cost: 1.0,
            traversal_cost: 0.01,
            ..BuildConfig::default()
        },
    );
    assert!(
        leaf_of_five.nodes().len() > 1,
        "a split 4 + 1 costs 0.01 + about 1 < 2"
    );
}
