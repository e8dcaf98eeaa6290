"""Instances of scenes that hold instances: the same answers as the geometry flattened into world
space with the composed transforms, the paths of the hits, pickling, and the depth limit."""

import pickle

import numpy as np
import pytest

import raypick
from conftest import cube, random_rays, random_soup

INVALID = 4294967295


def affine(rng, mirror=False):
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    s = rng.uniform(0.6, 1.5, size=3)
    if mirror:
        s[1] = -s[1]
    m = np.eye(4)
    m[:3, :3] = q @ np.diag(s)
    m[:3, 3] = rng.uniform(-3, 3, size=3)
    return m


def moved(m, v):
    return v @ m[:3, :3].T + m[:3, 3]


def build(rng):
    """part (a soup, a cube) -> mid (two parts and a mesh of its own) -> world (two mids), and the
    flat scene with one mesh per copy, with each copy's (path, geometry id in its scene)."""
    soup_v, soup_f = random_soup(rng, 80)
    cube_v, cube_f = cube(center=(1.5, 0, 0), half=0.4)
    part = raypick.Scene()
    part.add_triangles(soup_v, soup_f, name="soup")
    part.add_triangles(cube_v, cube_f, name="box")
    own_v, own_f = random_soup(rng, 40, scale=2.0)
    mid = raypick.Scene()
    mid.add_triangles(own_v, own_f, name="own")
    a, b = affine(rng), affine(rng, mirror=True)
    mid.add_instance(part, a)
    mid.add_instance(part, b)
    world = raypick.Scene()
    c, d = affine(rng, mirror=True), affine(rng)
    world.add_instance(mid, c, name="left")
    world.add_instance(mid, d, name="right")
    flat = raypick.Scene()
    copies = []
    for top, mt in [(0, c), (1, d)]:
        flat.add_triangles(moved(mt, own_v), own_f)
        copies.append(([top], 0))
        for inner, mi in [(1, a), (2, b)]:
            for g, (v, f) in enumerate([(soup_v, soup_f), (cube_v, cube_f)]):
                flat.add_triangles(moved(mt @ mi, v), f)
                copies.append(([top, inner], g))
    return world, flat, copies


def test_nested_instances_answer_like_the_flattened_scene(rng):
    world, flat, copies = build(rng)
    rays = random_rays(rng, 4000, target_scale=3.0, origin_radius=12.0)
    got = world.cast_rays(rays, instance_paths=True)
    ref = flat.cast_rays(rays)
    hit = ref["primitive_ids"] != INVALID
    assert hit.sum() > 500
    # Near-ties may swap between the two representations' roundings.
    same = got["primitive_ids"] == ref["primitive_ids"]
    assert same.mean() > 0.99
    ok = hit & same
    np.testing.assert_allclose(got["t_hit"][ok], ref["t_hit"][ok], rtol=1e-4)
    np.testing.assert_allclose(got["primitive_normals"][ok], ref["primitive_normals"][ok], atol=2e-3)
    for i in np.flatnonzero(ok)[:400]:
        path, geom = copies[ref["geometry_ids"][i]]
        row = got["instance_paths"][i]
        assert row[:len(path)].tolist() == path and np.all(row[len(path):] == INVALID)
        assert got["instance_ids"][i] == path[0] and got["geometry_ids"][i] == geom
    assert np.all(got["instance_paths"][~hit] == INVALID)
    # Without the paths column: the same answers.
    plain = world.cast_rays(rays)
    assert set(plain) == set(got) - {"instance_paths"}
    for key in plain:
        np.testing.assert_array_equal(plain[key], got[key], err_msg=key)
    # Every hit along the rays, and the counts.
    np.testing.assert_array_equal(world.count_intersections(rays), flat.count_intersections(rays))
    listed = world.list_intersections(rays[:200], instance_paths=True)
    assert listed["instance_paths"].shape == (len(listed["t_hit"]), 8)
    np.testing.assert_array_equal(listed["instance_paths"][:, 0], listed["instance_ids"])


def test_picks_name_the_innermost_geometry_and_pickling_keeps_the_nesting(rng):
    world, flat, copies = build(rng)
    b = world.bounds()
    centre = b.mean(axis=0)
    cam = raypick.Camera(centre + [0, 0, 25], centre, width=64, height=48)
    picks = [world.pick(cam, x + 0.5, y + 0.5) for y in range(0, 48, 4) for x in range(0, 64, 4)]
    picks = [p for p in picks if p is not None]
    assert picks
    names = {"own", "soup", "box"}
    for p in picks:
        assert p.instance_id == p.instance_path[0]
        assert p.geometry_name in names
        assert (p.geometry_name == "own") == (len(p.instance_path) == 1)
    back = pickle.loads(pickle.dumps(world))
    rays = cam.rays()
    for key in ["t_hit", "primitive_ids", "geometry_ids", "instance_ids"]:
        np.testing.assert_array_equal(back.cast_rays(rays)[key], world.cast_rays(rays)[key])
    np.testing.assert_array_equal(back.cast_rays(rays, instance_paths=True)["instance_paths"],
                                  world.cast_rays(rays, instance_paths=True)["instance_paths"])


def test_a_placed_copy_of_an_instance_reports_its_ids():
    part = raypick.Scene()
    part.add_triangles([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    scene = raypick.Scene()
    inst = scene.add_instance(part)
    m = np.eye(4)
    m[2, 3] = -2.0
    copy = scene.add_instance(inst, m)  # a copy of the instance, two units down
    ans = scene.list_intersections([[0.2, 0.2, 1.0, 0, 0, -1]], instance_paths=True)
    assert ans["instance_paths"][:, :2].tolist() == [[inst, INVALID], [copy, 0]]
    # The copy's hit names the placed geometry (the instance) as its geometry id.
    assert ans["geometry_ids"].tolist() == [0, inst]
    # So do the closest hit from below, with or without the paths, and the closest point.
    up = [[0.2, 0.2, -3.0, 0, 0, 1]]
    for got in [scene.cast_rays(up), scene.cast_rays(up, instance_paths=True)]:
        assert (got["geometry_ids"].tolist(), got["instance_ids"].tolist()) == ([inst], [copy])
    near = scene.compute_closest_points([[0.2, 0.2, -2.1]])
    assert near["geometry_ids"].tolist() == [inst]


def test_nesting_stops_at_eight_levels():
    scene = raypick.Scene()
    scene.add_triangles([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    m = np.eye(4)
    m[0, 3] = 1.0
    for _ in range(8):
        outer = raypick.Scene()
        outer.add_instance(scene, m)
        scene = outer
    ans = scene.cast_rays([[8.2, 0.2, 1.0, 0, 0, -1]], instance_paths=True)
    assert ans["instance_paths"][0].tolist() == [0] * 8
    assert ans["t_hit"][0] == pytest.approx(1.0, rel=1e-6)
    with pytest.raises(ValueError, match="nest 9 deep"):
        raypick.Scene().add_instance(scene, m)
