"""float64 input far from zero: the scene's frame (``Scene.origin``) keeps a model at 1e8 as exact
as the same model at zero, checked against an f64 Möller–Trumbore, trimesh and the model at zero."""

import pickle

import numpy as np
import pytest

import raypick
from conftest import cube, moller_trumbore, random_rays, random_soup

INVALID = 4294967295
OFFSETS = [1e3, 1e5, 1e6, 1e7, 1e8]


def soup_at(rng, offset):
    v, f = random_soup(rng, 100)
    shift = np.array([offset, -0.5 * offset, 0.25 * offset])
    return v + shift, f, shift


@pytest.mark.parametrize("offset", OFFSETS)
def test_a_model_far_away_is_hit_like_at_zero(rng, offset):
    v, f, shift = soup_at(rng, offset)
    rays = random_rays(rng, 3000).astype(np.float64)
    far_rays = rays.copy()
    far_rays[:, :3] += shift
    far = raypick.Scene()
    far.add_triangles(v, f)
    # The frame's origin: the centre of the first geometry's box, far from zero.
    np.testing.assert_allclose(far.origin, 0.5 * (v.min(axis=0) + v.max(axis=0)), rtol=1e-15)
    near = raypick.Scene()
    near.add_triangles(v - shift, f)
    got, ref = far.cast_rays(far_rays), near.cast_rays(rays)
    # The same f32 problem up to the rounding of coordinates relative to the origin (half an ulp
    # of values below 2), so the same triangles and t to a few ulps.
    same = got["primitive_ids"] == ref["primitive_ids"]
    assert same.mean() > 0.995
    hit = same & (ref["primitive_ids"] != INVALID)
    assert hit.sum() > 300
    np.testing.assert_allclose(got["t_hit"][hit], ref["t_hit"][hit], rtol=2e-5)
    # Against the exact f64 answer of the far model.
    t64, prim64, _, _, margin = moller_trumbore(far_rays, v, f)
    prim = np.where(got["primitive_ids"] == INVALID, -1, got["primitive_ids"].astype(np.int64))
    agree = (prim == prim64) | (margin < 1e-4)
    assert agree.mean() > 0.995
    ok = (prim64 >= 0) & (prim == prim64)
    np.testing.assert_allclose(got["t_hit"][ok], t64[ok], rtol=5e-5, atol=1e-5)
    # Hit points come back in world space, in f64, within float32 precision of the model's size.
    loc, index_ray, index_tri = far.intersects_location(far_rays[:, :3], far_rays[:, 3:], multiple_hits=False)
    expected = far_rays[index_ray, :3] + t64[index_ray, None] * far_rays[index_ray, 3:]
    exact = prim64[index_ray] == index_tri
    assert np.abs(loc[exact] - expected[exact]).max() < 1e-5


def test_float32_alone_would_miss_what_the_frame_hits():
    """The issue's case: one triangle at x = 1e8, smaller than float32's spacing there (8)."""
    v = np.array([[1e8, 0, 0], [1e8 + 1, 0, 0], [1e8, 1, 0]])
    scene = raypick.Scene()
    scene.add_triangles(v, [[0, 1, 2]])
    ray = np.array([[1e8 + 0.25, 0.25, 5, 0, 0, -1]])
    ans = scene.cast_rays(ray)
    assert ans["primitive_ids"][0] == 0 and ans["t_hit"][0] == pytest.approx(5, rel=1e-6)
    np.testing.assert_allclose(ans["primitive_uvs"][0], [0.25, 0.25], atol=1e-6)
    # f32 rounds every vertex to a multiple of 8: the triangle collapses.
    v32 = v.astype(np.float32).astype(np.float64)
    assert np.linalg.norm(np.cross(v32[1] - v32[0], v32[2] - v32[0])) == 0
    loc, _, _ = scene.intersects_location(ray[:, :3], ray[:, 3:])
    np.testing.assert_allclose(loc[0], [1e8 + 0.25, 0.25, 0.0], atol=1e-6)


def test_against_trimesh_at_1e8(rng):
    trimesh = pytest.importorskip("trimesh")
    v, f = cube(center=(1e8, 2e8, -1e8), half=2.0)
    mesh = trimesh.Trimesh(v, f, process=False)
    scene = raypick.Scene()
    scene.add_triangles(mesh)
    d = rng.normal(size=(500, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    origins = np.array([1e8, 2e8, -1e8]) + rng.uniform(-1.5, 1.5, size=(500, 3))  # inside the cube
    ref = trimesh.ray.ray_triangle.RayMeshIntersector(mesh).intersects_first(origins, d)
    got = scene.intersects_first(origins, d)
    np.testing.assert_array_equal(got, ref)
    # Every ray from inside hits exactly one face: the closed cube is watertight at 1e8 too.
    counts = scene.count_intersections(np.hstack([origins, d]))
    assert np.all(counts == 1)
    inside = scene.contains(origins)
    assert inside.all()
    pts, dist, tri = scene.closest_point(origins)
    exact = 2.0 - np.abs(origins - [1e8, 2e8, -1e8]).max(axis=1)
    np.testing.assert_allclose(dist, exact, atol=1e-5)


def test_spheres_instances_cameras_and_pickling_far_away():
    c = np.array([3e7, -4e7, 5e6])
    part = raypick.Scene()
    part.add_spheres([[0, 0, 0]], 1.0)
    scene = raypick.Scene()
    scene.add_spheres([c], 0.5)
    m = np.eye(4)
    m[:3, 3] = c + [3, 0, 0]
    scene.add_instance(part, m)  # a unit sphere 3 units to the side, placed by a far translation
    rays = np.array([[*(c + [0, 0, 10]), 0, 0, -1], [*(c + [3, 0, 10]), 0, 0, -1]])
    ans = scene.cast_rays(rays)
    np.testing.assert_allclose(ans["t_hit"], [9.5, 9.0], rtol=1e-6)
    assert ans["instance_ids"][1] == 1
    bounds = scene.bounds()
    np.testing.assert_allclose(bounds[0], c + [-0.5, -1, -1], rtol=1e-7)
    cam = raypick.Camera(c + [0, 0, 10], c, width=64, height=48)
    hit = scene.pick(cam, 32, 24)
    assert hit is not None and hit.geometry_id == 0
    np.testing.assert_allclose(hit.point, c + [0, 0, 0.5], rtol=1e-7)
    back = pickle.loads(pickle.dumps(scene))
    np.testing.assert_array_equal(back.origin, scene.origin)
    np.testing.assert_array_equal(back.cast_rays(rays)["t_hit"], ans["t_hit"])
    pts = scene.compute_closest_points(c + [[0, 0, 2.0]])["points"]
    np.testing.assert_allclose(pts[0], c + [0, 0, 0.5], rtol=1e-7)


def test_models_near_zero_are_stored_exactly_as_given():
    v, f = cube(half=1.0)
    scene = raypick.Scene()
    scene.add_triangles(v.astype(np.float32), f)
    np.testing.assert_array_equal(scene.origin, [0, 0, 0])
    np.testing.assert_array_equal(scene.mesh_arrays(0)[0], v.astype(np.float32))
