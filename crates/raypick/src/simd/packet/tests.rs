use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use super::*;
use crate::simd::test_support::*;
use crate::simd::{box_scalar, BoxRay};

/// Eight valid rays in one octant around a random ray, at magnitudes 1e-6..1e6: one origin
/// and spread directions (a perspective camera), one direction and spread origins
/// (orthographic), or both spread; and eight boxes around points on them, some with a plane
/// through the point (grazing), some empty.
#[allow(clippy::needless_range_loop)] // a lane indexes six rows
fn random_packet_case(rng: &mut Pcg64) -> ([crate::Ray; 8], [[f32; 8]; 6], [f32; 8]) {
    use glam::Vec3;
    let m = 10f32.powf(rng.gen_range(-6.0..6.0));
    let mut sign = || if rng.gen_bool(0.5) { 1.0 } else { -1.0 };
    let signs = Vec3::new(sign(), sign(), sign());
    let base_dir = signs * Vec3::from_array([0; 3].map(|_| 10f32.powf(rng.gen_range(-3.0..0.0))));
    let base_origin = Vec3::from_array([0; 3].map(|_| rng.gen_range(-2.0..2.0) * m));
    let kind = rng.gen_range(0..3);
    let dir_spread = 10f32.powf(rng.gen_range(-6.0..-1.0));
    let origin_spread = m * 10f32.powf(rng.gen_range(-6.0..0.0));
    let rays = [0; 8].map(|_| {
        let jitter = |rng: &mut Pcg64| Vec3::from_array([0; 3].map(|_| rng.gen_range(-1.0..1.0)));
        let dir = if kind == 1 {
            base_dir
        } else {
            // Relative jitter per component keeps every sign, so the octant.
            base_dir * (Vec3::ONE + jitter(rng) * dir_spread)
        };
        let origin = if kind == 0 {
            base_origin
        } else {
            base_origin + jitter(rng) * origin_spread
        };
        let t_min = if rng.gen_bool(0.8) {
            0.0
        } else {
            rng.gen_range(0.0..1.0) * m
        };
        crate::Ray::new(origin, dir).with_range(t_min, f32::INFINITY)
    });
    let mut bounds = [[0.0; 8]; 6];
    for lane in 0..8 {
        if rng.gen_bool(0.1) {
            for axis in 0..3 {
                bounds[2 * axis][lane] = f32::INFINITY;
                bounds[2 * axis + 1][lane] = f32::NEG_INFINITY;
            }
            continue;
        }
        let ray = rays[rng.gen_range(0..8)];
        let t = rng.gen_range(0.0..4.0) * m / ray.dir.length();
        let p = ray.at(t);
        let half = Vec3::from_array([0; 3].map(|_| m * 10f32.powf(rng.gen_range(-6.0..0.0))));
        let offset = Vec3::from_array([0; 3].map(|_| rng.gen_range(-1.5..1.5))) * half;
        let (mut lo, mut hi) = (p + offset - half, p + offset + half);
        if rng.gen_bool(0.5) {
            let axis = rng.gen_range(0..3);
            if rng.gen_bool(0.5) {
                lo[axis] = p[axis];
            } else {
                hi[axis] = p[axis];
            }
        }
        for axis in 0..3 {
            bounds[2 * axis][lane] = lo[axis].min(hi[axis]);
            bounds[2 * axis + 1][lane] = lo[axis].max(hi[axis]);
        }
    }
    let t_max = [0; 8].map(|_| {
        if rng.gen_bool(0.5) {
            f32::INFINITY
        } else {
            rng.gen_range(0.0..5.0) * m
        }
    });
    (rays, bounds, t_max)
}

#[test]
fn packets_are_neighbouring_pixels_or_one_direction() {
    use crate::Ray;
    use glam::Vec3;
    let packet = |origin: &dyn Fn(usize) -> Vec3, dir: &dyn Fn(usize) -> Vec3| {
        let rays: Vec<Ray> = (0..8).map(|i| Ray::new(origin(i), dir(i))).collect();
        PacketBoxRay::new(&rays).expect("one octant, finite 1/dir")
    };
    // A scene 400 wide.
    const EXTENT: f32 = 400.0;
    let eye = |_| Vec3::new(1.0, 2.0, 3.0);
    // Eight neighbouring pixels of a 1024-pixel-wide camera with a 45° field of view.
    let pixel = 0.83 / 1024.0;
    let neighbours = |i| Vec3::new(0.2 + i as f32 * pixel, 0.1, -1.0).normalize();
    assert!(packet(&eye, &neighbours).is_coherent(EXTENT));
    // The same eye through pixels 52 apart (a sparse sample of the image): not a packet.
    let sparse = |i| Vec3::new(0.05 + 52.0 * i as f32 * pixel, 0.1, -1.0).normalize();
    assert!(!packet(&eye, &sparse).is_coherent(EXTENT));
    // Just inside and just outside the cone: x spreads over `s` times the largest component.
    let spread = |s: f32| move |i: usize| Vec3::new(2.0 + s * 4.0 * i as f32 / 7.0, 1.0, -4.0);
    assert!(packet(&eye, &spread(0.9 * CONE_SPREAD)).is_coherent(EXTENT));
    assert!(!packet(&eye, &spread(1.1 * CONE_SPREAD)).is_coherent(EXTENT));
    // An orthographic camera: one direction, origins apart.
    let grid = |i| Vec3::new(i as f32, 0.0, 5.0);
    assert!(packet(&grid, &|_| Vec3::new(0.3, 0.2, -1.0)).is_coherent(EXTENT));
    // One direction from origins scattered over the scene (a directional light's shadow rays
    // from random points): not a packet, however parallel.
    let scattered = |i| Vec3::new(7.0 * i as f32, (i * i) as f32, 5.0 - 30.0 * i as f32);
    assert!(!packet(&scattered, &|_| Vec3::new(0.3, 0.2, -1.0)).is_coherent(EXTENT));
    // Origins just inside and just outside the spread.
    let row = |s: f32| move |i: usize| Vec3::new(s * EXTENT * i as f32 / 7.0, 0.0, 5.0);
    assert!(packet(&row(0.9 * ORIGIN_SPREAD), &|_| Vec3::new(0.3, 0.2, -1.0)).is_coherent(EXTENT));
    assert!(!packet(&row(1.1 * ORIGIN_SPREAD), &|_| Vec3::new(0.3, 0.2, -1.0)).is_coherent(EXTENT));
    // Different origins and directions: not a packet.
    assert!(!packet(&grid, &neighbours).is_coherent(EXTENT));
}

#[test]
fn packet_box_test_is_conservative_for_every_ray_and_equals_its_scalar_twin() {
    let mut rng = Pcg64::seed_from_u64(31);
    let (mut single_hits, mut partial) = (0, 0);
    for _ in 0..100_000 {
        let (rays, bounds, t_max) = random_packet_case(&mut rng);
        let packet = PacketBoxRay::new(&rays).expect("one octant, finite 1/dir");
        let bound = t_max.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
        let scalar = packet_box_scalar(&bounds, &packet, bound);
        let simd = packet_box8_on(Isa::detected(), &bounds, &packet, bound);
        assert_eq!(simd.mask, scalar.mask, "{bounds:?} {packet:?}");
        assert!(same_bits(&simd.t_near, &scalar.t_near, scalar.mask));
        let mut reached = [0u32; 8];
        for (i, ray) in rays.iter().enumerate() {
            let single = BoxRay::new(ray.origin.to_array(), ray.dir.to_array(), ray.t_min);
            let hits = box_scalar(&bounds, &single, t_max[i]);
            for lane in (0..8).filter(|&l| hits.mask >> l & 1 == 1) {
                single_hits += 1;
                reached[lane] |= 1 << i;
                assert!(
                    scalar.mask >> lane & 1 == 1,
                    "ray {i} reaches lane {lane}, the packet does not: {rays:?} {bounds:?}"
                );
                assert!(scalar.t_near[lane] <= hits.t_near[lane]);
            }
        }
        partial += reached.iter().filter(|&&r| r != 0 && r != 0xff).count();
    }
    assert!(
        single_hits > 100_000 && partial > 10_000,
        "{single_hits} {partial}"
    );
}

#[test]
fn moved_rays_equal_their_scalar_twin() {
    use crate::Ray;
    use glam::Vec3;
    let mut rng = Pcg64::seed_from_u64(47);
    let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    for _ in 0..20_000 {
        let mut v = || Vec3::from_array([0; 3].map(|_| float(&mut rng)));
        let rays: [Ray; 8] = std::array::from_fn(|_| Ray {
            origin: v(),
            dir: v(),
            t_min: 0.0,
            t_max: f32::INFINITY,
        });
        let offset = v();
        let (fast, twin) = (moved_rays(&rays, offset), moved_rays_scalar(&rays, offset));
        for (a, b) in fast.iter().zip(&twin) {
            let fields = |r: &Ray| {
                [r.origin.to_array(), r.dir.to_array()]
                    .concat()
                    .into_iter()
                    .chain([r.t_min, r.t_max])
                    .collect::<Vec<_>>()
            };
            assert!(
                fields(a).iter().zip(fields(b)).all(|(&x, y)| same(x, y)),
                "{a:?} {b:?}"
            );
        }
    }
}

#[test]
fn lane_folds_equal_their_scalar_twins() {
    let mut rng = Pcg64::seed_from_u64(43);
    let specials = [
        0.0,
        -0.0,
        1.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        f32::MIN_POSITIVE,
    ];
    let value = |rng: &mut Pcg64| {
        if rng.gen_bool(0.2) {
            specials[rng.gen_range(0..specials.len())]
        } else {
            rng.gen_range(-2.0f32..2.0) * 10f32.powi(rng.gen_range(-6..7))
        }
    };
    let (mut reached, mut partial) = (0, 0);
    for _ in 0..100_000 {
        let values: [f32; 8] = std::array::from_fn(|_| value(&mut rng));
        let t = if rng.gen_bool(0.02) {
            f32::NAN
        } else {
            value(&mut rng)
        };
        let mask = rng.gen_range(0..256u32);
        let lanes = lanes_reaching(t, &values);
        assert_eq!(lanes, lanes_reaching_scalar(t, &values), "{t} {values:?}");
        reached += lanes.count_ones();
        partial += u32::from(lanes != 0 && lanes != 0xff);
        // Equal as numbers (a zero's sign may differ with the pairing).
        let (fast, twin) = (lanes_max(&values, mask), lanes_max_scalar(&values, mask));
        assert!(fast == twin, "{mask:#b} {values:?}: {fast} against {twin}");
    }
    assert!(reached > 100_000 && partial > 10_000, "{reached} {partial}");
}

#[test]
fn a_packet_reaches_every_box_one_of_its_rays_reaches() {
    let mut rng = Pcg64::seed_from_u64(37);
    let (mut reached, mut missed) = (0, 0);
    for _ in 0..20_000 {
        let (rays, bounds, _) = random_packet_case(&mut rng);
        let packet = PacketBoxRay::new(&rays).expect("one octant, finite 1/dir");
        for lane in 0..8 {
            let b = crate::Aabb::new(
                glam::Vec3::new(bounds[0][lane], bounds[2][lane], bounds[4][lane]),
                glam::Vec3::new(bounds[1][lane], bounds[3][lane], bounds[5][lane]),
            );
            let any_ray = rays.iter().any(|ray| {
                let single = BoxRay::new(ray.origin.to_array(), ray.dir.to_array(), ray.t_min);
                box_scalar(&bounds, &single, f32::INFINITY).mask >> lane & 1 == 1
            });
            // The SSE version answers as its scalar twin.
            assert_eq!(
                packet.reaches(&b),
                packet.reaches_scalar(&b),
                "{rays:?} {b:?}"
            );
            if any_ray {
                reached += 1;
                assert!(packet.reaches(&b), "{rays:?} {b:?}");
            } else if !packet.reaches(&b) {
                missed += 1;
            }
        }
        assert!(!packet.reaches(&crate::Aabb::EMPTY));
    }
    // Both answers occur: the test is not vacuous either way.
    assert!(reached > 50_000 && missed > 10_000, "{reached} {missed}");
}

#[test]
fn eight_rays_make_the_same_packet_with_avx_and_with_the_scalar_twin() {
    use crate::Ray;
    use glam::Vec3;
    let bits = |p: &PacketBoxRay| {
        let f = |a: [f32; 3]| a.map(f32::to_bits);
        (
            [p.origin_lo, p.origin_hi, p.inv_lo, p.inv_hi].map(f),
            p.near_row,
            p.far_row,
            p.t_min.to_bits(),
        )
    };
    let mut rng = Pcg64::seed_from_u64(41);
    let (mut packets, mut partial) = (0, 0);
    for k in 0..50_000 {
        // Camera-like groups (one origin or one direction, one octant) with special values
        // and invalid rays mixed in at random, and fully random groups.
        let (mut rays, _, _) = random_packet_case(&mut rng);
        if k % 4 == 0 {
            for ray in &mut rays {
                *ray = Ray::new(
                    Vec3::from_array([0; 3].map(|_| float(&mut rng))),
                    Vec3::from_array([0; 3].map(|_| float(&mut rng))),
                );
            }
        }
        for ray in &mut rays {
            if rng.gen_bool(0.05) {
                let i = rng.gen_range(0..8);
                let value = float(&mut rng);
                match i {
                    0..3 => ray.origin[i] = value,
                    3..6 => ray.dir[i - 3] = value,
                    6 => ray.t_min = value,
                    _ => ray.t_max = value,
                }
            }
        }
        if rng.gen_bool(0.2) {
            // Zeros of both signs on one axis: their minimum and maximum depend on the order
            // of the reduction unless made positive.
            let axis = rng.gen_range(0..3);
            for ray in &mut rays {
                ray.origin[axis] = if rng.gen_bool(0.5) { 0.0 } else { -0.0 };
            }
        }
        let (valid, packet) = PacketBoxRay::of_eight_scalar(&rays);
        let (valid_fast, packet_fast) = PacketBoxRay::of_eight(&rays);
        assert_eq!(valid_fast, valid, "{rays:?}");
        assert_eq!(
            packet_fast.as_ref().map(bits),
            packet.as_ref().map(bits),
            "{rays:?}"
        );
        packets += usize::from(packet.is_some());
        partial += usize::from(packet.is_some() && valid != 0xff);
    }
    assert!(packets > 20_000 && partial > 1_000, "{packets} {partial}");
}

#[test]
fn packets_need_one_octant_and_finite_reciprocals() {
    use crate::Ray;
    use glam::Vec3;
    let a = Ray::new(Vec3::ZERO, Vec3::new(1.0, 2.0, 3.0));
    assert!(PacketBoxRay::new(&[a, a]).is_some());
    assert!(PacketBoxRay::new(&[a, Ray::new(Vec3::ZERO, Vec3::new(1.0, -2.0, 3.0))]).is_none());
    assert!(PacketBoxRay::new(&[a, Ray::new(Vec3::ZERO, Vec3::new(1.0, 0.0, 3.0))]).is_none());
    assert!(PacketBoxRay::new(&[a, Ray::new(Vec3::ZERO, Vec3::new(1e-40, 1.0, 3.0))]).is_none());
    assert!(PacketBoxRay::new(&[] as &[Ray]).is_none());
}
