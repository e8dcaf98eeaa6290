//! Instances of scenes that hold instances: every query against the same geometry flattened into
//! world space (each mesh moved by the product of the transforms on its path), the path queries'
//! paths against the path that placed each copy and their hits against the plain queries', BVH
//! walks against brute force, and the depth limit.

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use raypick::camera::{
    pick, pick_path, pick_rect, Camera, ClipSpace, PixelRect, Projection, Viewport,
};
use raypick::geom::Culling;
use raypick::glam::{Affine3A, Quat, Vec2, Vec3};
use raypick::scene::shapes::icosphere;
use raypick::{
    BuildError, Crossing, InstancePath, QueryOptions, Ray, Scene, SceneBuilder, TriMesh,
    MAX_INSTANCE_DEPTH,
};

fn rand_vec(rng: &mut Pcg64) -> Vec3 {
    Vec3::new(
        rng.gen_range(-1.0..1.0),
        rng.gen_range(-1.0..1.0),
        rng.gen_range(-1.0..1.0),
    )
}

fn soup(rng: &mut Pcg64, n: usize, scale: f32) -> TriMesh {
    let mut vertices = Vec::with_capacity(3 * n);
    for _ in 0..n {
        let p = rand_vec(rng) * scale;
        for _ in 0..3 {
            vertices.push(p + rand_vec(rng) * scale * 0.15);
        }
    }
    let indices = (0..n as u32)
        .map(|i| [3 * i, 3 * i + 1, 3 * i + 2])
        .collect();
    TriMesh::new(vertices, indices)
}

fn transform(rng: &mut Pcg64, mirror: bool) -> Affine3A {
    let rot = Quat::from_axis_angle(
        rand_vec(rng).normalize(),
        rng.gen_range(0.0..std::f32::consts::TAU),
    );
    let mut scale = Vec3::new(
        rng.gen_range(0.6..1.6),
        rng.gen_range(0.6..1.6),
        rng.gen_range(0.6..1.6),
    );
    if mirror {
        scale.y = -scale.y;
    }
    Affine3A::from_scale_rotation_translation(scale, rot, rand_vec(rng) * 3.0)
}

/// A mesh of the nested scene as it lies in world space, and where the nested scene holds it.
struct Placed {
    path: Vec<u32>,
    geom: u32,
}

/// Three levels of instances, two per level, mirroring on some, and a mesh of its own at the
/// middle level: the nested scene, the same meshes flattened into world space, and what each
/// flat geometry id is in the nested scene.
fn nested_and_flat(rng: &mut Pcg64) -> (Scene, Scene, Vec<Placed>) {
    let leaf_meshes = [
        soup(rng, 150, 1.0),
        icosphere(2, Vec3::new(0.8, 0.0, 0.0), 0.5),
    ];
    let mut b = SceneBuilder::new();
    for m in &leaf_meshes {
        b.add_mesh(m.clone());
    }
    // (scene, its meshes in its own space with their paths inside it)
    let mut scene = Arc::new(b.build().unwrap());
    let mut contents: Vec<(Vec<u32>, u32, TriMesh)> = leaf_meshes
        .iter()
        .enumerate()
        .map(|(g, m)| (Vec::new(), g as u32, m.clone()))
        .collect();
    for level in 0..3 {
        let mut b = SceneBuilder::new();
        let mut next = Vec::new();
        if level == 1 {
            let own = soup(rng, 60, 2.0);
            let id = b.add_mesh(own.clone());
            next.push((Vec::new(), id, own));
        }
        for k in 0..2 {
            let xf = transform(rng, (level + k) % 2 == 1);
            let id = b.add_instance(scene.clone(), xf);
            for (path, geom, mesh) in &contents {
                let v = mesh
                    .vertices()
                    .iter()
                    .map(|&p| xf.transform_point3(p))
                    .collect();
                let mut p = vec![id];
                p.extend(path);
                next.push((p, *geom, TriMesh::new(v, mesh.indices().to_vec())));
            }
        }
        scene = Arc::new(b.build().unwrap());
        contents = next;
    }
    let mut flat = SceneBuilder::new();
    let mut placed = Vec::new();
    for (path, geom, mesh) in contents {
        flat.add_mesh(mesh);
        placed.push(Placed { path, geom });
    }
    let nested = Arc::try_unwrap(scene).unwrap_or_else(|s| (*s).clone());
    (nested, flat.build().unwrap(), placed)
}

#[test]
fn nested_instances_answer_like_the_flattened_scene() {
    let mut rng = Pcg64::seed_from_u64(35);
    let (nested, flat, placed) = nested_and_flat(&mut rng);
    nested.validate().unwrap();
    assert_eq!(nested.instance_depth(), 3);
    let mut compared = 0;
    for k in 0..3000 {
        // Aimed at a random triangle of a random copy.
        let g = rng.gen_range(0..flat.num_geometries() as u32);
        let Some(raypick::Geometry::Mesh(mesh)) = flat.geometry(g) else {
            unreachable!("the flat scene holds meshes only")
        };
        let [a, b, c] = mesh
            .triangle(rng.gen_range(0..mesh.num_triangles() as u32))
            .unwrap();
        let (u, v) = (rng.gen_range(0.1..0.45), rng.gen_range(0.1..0.45));
        let target = (1.0 - u - v) * a + u * b + v * c;
        let origin = target + rand_vec(&mut rng).normalize() * rng.gen_range(2.0..20.0);
        let ray = Ray::new(origin, (target - origin) * rng.gen_range(0.2..5.0));
        let opts = QueryOptions {
            culling: if k % 3 == 0 {
                Culling::Back
            } else {
                Culling::None
            },
            ..Default::default()
        };
        let flat_all = flat.intersect_all_with(&ray, &opts);
        // A near-tie first: rounding in the two representations may pick either.
        if flat_all.len() >= 2 && (flat_all[1].t - flat_all[0].t) <= 1e-3 * flat_all[0].t.abs() {
            continue;
        }
        let got = nested.intersect_with(&ray, &opts);
        assert_eq!(
            got,
            nested.intersect_brute_force(&ray, &opts),
            "BVH == brute force"
        );
        let with_path = nested.intersect_path_with(&ray, &opts);
        assert_eq!(with_path.map(|(h, _)| h), got, "the path query's hit");
        assert_eq!(with_path, nested.intersect_path_brute_force(&ray, &opts));
        assert_eq!(got.is_some(), !flat_all.is_empty(), "{ray:?}");
        assert_eq!(nested.occluded_with(&ray, &opts), !flat_all.is_empty());
        assert_eq!(nested.count_intersections_with(&ray, &opts), flat_all.len());
        let (Some((g, path)), Some(w)) = (with_path, flat_all.first()) else {
            continue;
        };
        let p = &placed[w.geom as usize];
        assert_eq!(path.as_slice(), &p.path[..]);
        assert_eq!(
            (g.instance, g.geom, g.prim),
            (p.path.first().copied(), p.geom, w.prim)
        );
        // Both scenes round each vertex through three f32 transforms (once per level, or once
        // composed): t is conditioned by 1 / |cos| of the ray's angle to the triangle's normal.
        let cos = w.normal.dot(ray.dir.normalize()).abs().max(1e-2);
        let tol = 2e-5 / cos;
        assert!(
            (g.t - w.t).abs() <= tol * w.t.abs(),
            "t {} vs {} (cos {cos})",
            g.t,
            w.t
        );
        assert!(
            (g.normal - w.normal).length() < 1e-3,
            "{} vs {}",
            g.normal,
            w.normal
        );
        let scale = 1.0 + w.point.length() + w.t * ray.dir.length();
        assert!(
            (g.point - w.point).length() < tol * scale,
            "{} vs {}",
            g.point,
            w.point
        );
        // Every hit along the ray, as (path, geometry, primitive), in any order (near-ties
        // further along may swap).
        let all = nested.intersect_all_paths_with(&ray, &opts);
        assert!(all
            .iter()
            .map(|(h, _)| h)
            .eq(&nested.intersect_all_with(&ray, &opts)));
        let mut paths: Vec<(&[u32], u32, u32)> = all
            .iter()
            .map(|(h, path)| (path.as_slice(), h.geom, h.prim))
            .collect();
        let mut want: Vec<(&[u32], u32, u32)> = flat_all
            .iter()
            .map(|h| {
                let p = &placed[h.geom as usize];
                (&p.path[..], p.geom, h.prim)
            })
            .collect();
        paths.sort_unstable();
        want.sort_unstable();
        assert_eq!(paths, want);
        compared += 1;
    }
    assert!(compared > 1500, "compared {compared}");
}

#[test]
fn batches_and_point_queries_see_nested_instances() {
    let mut rng = Pcg64::seed_from_u64(36);
    let (nested, flat, placed) = nested_and_flat(&mut rng);
    let bounds = flat.bounds();
    let rays: Vec<Ray> = (0..2000)
        .map(|_| {
            let target = bounds.center() + rand_vec(&mut rng) * bounds.extent() * 0.5;
            let origin = target + rand_vec(&mut rng).normalize() * 15.0;
            Ray::new(origin, target - origin)
        })
        .collect();
    let batch = nested.intersect_batch(&rays, &QueryOptions::default());
    let mut with_paths = vec![None; rays.len()];
    nested.intersect_path_batch_into(&rays, &QueryOptions::default(), &mut with_paths);
    for ((ray, hit), with_path) in rays.iter().zip(&batch).zip(&with_paths) {
        assert_eq!(*hit, nested.intersect(ray));
        assert_eq!(*with_path, nested.intersect_path(ray));
        assert_eq!(with_path.map(|(h, _)| h), *hit);
    }
    let hits = batch.iter().flatten().count();
    assert!(hits > 200, "{hits}");
    // All hits of the batch, as crossings, in both the nested and the flat scene (the nested
    // one walks paths, the flat one top instances only), against the single-ray query.
    for scene in [&nested, &flat] {
        let (mut crossings, mut ends) = (vec![], vec![]);
        let not_odd = |h: &raypick::Hit, _: &raypick::InstancePath| h.prim % 7 != 3;
        let opts = QueryOptions {
            filter: Some(&not_odd),
            ..QueryOptions::default()
        };
        scene.intersect_all_into(&rays, &opts, &mut crossings, &mut ends);
        assert_eq!(ends.len(), rays.len());
        let mut start = 0;
        for (ray, &end) in rays.iter().zip(&ends) {
            let want: Vec<Crossing> = scene
                .intersect_all_with(ray, &opts)
                .iter()
                .map(Crossing::from)
                .collect();
            assert_eq!(crossings[start..end], want[..]);
            start = end;
        }
        assert!(crossings.len() > 200, "{}", crossings.len());
    }
    for _ in 0..300 {
        let q = bounds.center() + rand_vec(&mut rng) * bounds.extent();
        let (Some((got, path)), Some(want)) = (nested.closest_point_path(q), flat.closest_point(q))
        else {
            panic!("both scenes have triangles");
        };
        assert_eq!(nested.closest_point(q), Some(got));
        assert_eq!(path.top(), got.instance);
        assert!((got.distance - want.distance).abs() <= 1e-4 * (1.0 + want.distance));
        if (got.distance - want.distance).abs() < 1e-6 {
            let p = &placed[want.geom as usize];
            if got.geom == p.geom && got.prim == want.prim {
                assert_eq!(path.as_slice(), &p.path[..]);
            }
        }
    }
}

#[test]
fn placed_scene_follows_a_hit_path() {
    let mut rng = Pcg64::seed_from_u64(37);
    let (nested, _, _) = nested_and_flat(&mut rng);
    let ray = Ray::new(Vec3::new(0.0, 0.0, 40.0), Vec3::NEG_Z);
    let rays: Vec<Ray> = (0..400)
        .map(|i| {
            Ray::new(
                Vec3::new(
                    (i % 20) as f32 * 0.3 - 3.0,
                    (i / 20) as f32 * 0.3 - 3.0,
                    40.0,
                ),
                Vec3::NEG_Z,
            )
        })
        .chain([ray])
        .collect();
    let mut deep = 0;
    for r in &rays {
        if let Some((h, path)) = nested.intersect_path(r) {
            let inner = nested.placed_scene(&path).unwrap();
            assert!(inner.geometry(h.geom).is_some());
            deep += usize::from(path.len() == 3);
        }
    }
    assert!(deep > 0);
    assert!(nested
        .placed_scene(&InstancePath::EMPTY.pushed(99))
        .is_none());
}

/// A chain of `depth` instances, each placing the previous scene moved by 1 along x.
fn chain(depth: usize) -> Result<Scene, BuildError> {
    let mut b = SceneBuilder::new();
    b.add_mesh(TriMesh::new(
        vec![Vec3::ZERO, Vec3::X, Vec3::Y],
        vec![[0, 1, 2]],
    ));
    let mut scene = b.build()?;
    for _ in 0..depth {
        let mut b = SceneBuilder::new();
        b.add_instance(Arc::new(scene), Affine3A::from_translation(Vec3::X));
        scene = b.build()?;
    }
    Ok(scene)
}

#[test]
fn instances_nest_to_the_limit_and_no_deeper() {
    let deepest = chain(MAX_INSTANCE_DEPTH).unwrap();
    assert_eq!(deepest.instance_depth(), MAX_INSTANCE_DEPTH);
    let x = MAX_INSTANCE_DEPTH as f32 + 0.2;
    let (hit, path) = deepest
        .intersect_path(&Ray::new(Vec3::new(x, 0.2, 1.0), Vec3::NEG_Z))
        .unwrap();
    assert_eq!(path.as_slice(), &[0; MAX_INSTANCE_DEPTH][..]);
    assert!((hit.point - Vec3::new(x, 0.2, 0.0)).length() < 1e-5);
    match chain(MAX_INSTANCE_DEPTH + 1) {
        Err(BuildError::TooDeep { depth, .. }) => assert_eq!(depth, MAX_INSTANCE_DEPTH + 1),
        other => panic!(
            "expected TooDeep, got {:?}",
            other.map(|s| s.instance_depth())
        ),
    }
}

#[test]
fn marquee_selection_enters_nested_instances() {
    let mut rng = Pcg64::seed_from_u64(38);
    let (nested, _, _) = nested_and_flat(&mut rng);
    let b = nested.bounds();
    let eye = b.center() + Vec3::new(0.0, 0.0, 3.0 * b.extent().length());
    let projection =
        Projection::perspective(0.9, 4.0 / 3.0, 0.1, 1000.0, ClipSpace::OpenGl).unwrap();
    let cam = Camera::look_at(
        eye,
        b.center(),
        Vec3::Y,
        projection,
        Viewport::new(400.0, 300.0),
    )
    .unwrap();
    let found = pick_rect(&nested, &cam, PixelRect::new(0.0, 0.0, 400.0, 300.0));
    // Everything is in view: the own mesh (geometry 0 of instance-level scenes is reported with
    // its top-level instance) and the leaf meshes 0 and 1 through both top-level instances.
    for want in [(0, Some(0)), (1, Some(0)), (0, Some(1)), (1, Some(1))] {
        assert!(found.contains(&want), "{want:?} not in {found:?}");
    }
}

#[test]
fn a_pick_with_its_path_is_the_pick_and_the_path_query() {
    let mut rng = Pcg64::seed_from_u64(39);
    let (nested, _, _) = nested_and_flat(&mut rng);
    let b = nested.bounds();
    let eye = b.center() + Vec3::new(0.0, 0.0, b.extent().length());
    let projection =
        Projection::perspective(0.9, 4.0 / 3.0, 0.1, 1000.0, ClipSpace::OpenGl).unwrap();
    let cam = Camera::look_at(
        eye,
        b.center(),
        Vec3::Y,
        projection,
        Viewport::new(400.0, 300.0),
    )
    .unwrap();
    let (mut hits, mut deep) = (0, 0);
    for y in (0..300).step_by(4) {
        for x in (0..400).step_by(4) {
            let pixel = Vec2::new(x as f32 + 0.5, y as f32 + 0.5);
            let with_path = pick_path(&nested, &cam, pixel);
            assert_eq!(with_path.map(|(p, _)| p), pick(&nested, &cam, pixel));
            if let Some((p, path)) = with_path {
                assert_eq!(nested.intersect_path(&p.ray), Some((p.hit, path)));
                hits += 1;
                deep += usize::from(path.len() == 3);
            }
        }
    }
    assert!(
        hits > 50 && deep > 20,
        "{deep} of {hits} picks three instances deep"
    );
}

#[test]
fn filters_see_the_instance_path() {
    let mut rng = Pcg64::seed_from_u64(40);
    let (nested, flat, placed) = nested_and_flat(&mut rng);
    // Only the copies placed through the second instance of the middle level.
    let second = |_: &raypick::Hit, path: &InstancePath| path.as_slice().get(1) == Some(&1);
    let opts = QueryOptions {
        filter: Some(&second),
        ..Default::default()
    };
    let flat_second =
        |h: &raypick::Hit, _: &InstancePath| placed[h.geom as usize].path.get(1) == Some(&1);
    let flat_opts = QueryOptions {
        filter: Some(&flat_second),
        ..Default::default()
    };
    let bounds = flat.bounds();
    let mut hits = 0;
    for _ in 0..1000 {
        let target = bounds.center() + rand_vec(&mut rng) * bounds.extent() * 0.5;
        let origin = target + rand_vec(&mut rng).normalize() * 15.0;
        let ray = Ray::new(origin, target - origin);
        let got = nested.intersect_path_with(&ray, &opts);
        assert_eq!(got, nested.intersect_path_brute_force(&ray, &opts));
        assert_eq!(got.map(|(h, _)| h), nested.intersect_with(&ray, &opts));
        assert_eq!(
            nested.count_intersections_with(&ray, &opts),
            flat.count_intersections_with(&ray, &flat_opts)
        );
        if let Some((_, path)) = got {
            assert_eq!(path.as_slice().get(1), Some(&1));
            hits += 1;
        }
    }
    assert!(hits > 50, "{hits}");
}
