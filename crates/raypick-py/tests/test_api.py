"""Array handling (dtypes, strides, leading shapes), errors, pickling, instances, cameras, loading,
and agreement with the Rust CLI and with Open3D where it is installed."""

import os
import pickle
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import raypick
from conftest import REPO, SHARED_DATA, cube, random_rays, random_soup

INVALID = raypick.INVALID_ID
KEYS = ("t_hit", "geometry_ids", "primitive_ids", "primitive_uvs", "primitive_normals", "instance_ids")


@pytest.fixture
def soup_scene(rng):
    v, f = random_soup(rng, n_tris=60)
    scene = raypick.Scene()
    scene.add_triangles(v, f, name="soup")
    scene.add_spheres([[0.3, 0.2, 0.1], [-0.5, 0.0, 0.4]], [0.3, 0.2], name="balls")
    return scene


def import_open3d():
    """open3d, or a skip: it may be missing, or fail to load (its wheel needs system libraries
    such as libusb)."""
    try:
        import open3d
    except ImportError as e:
        pytest.skip(f"open3d not available: {e}")
    return open3d


def assert_same(a, b):
    assert set(a) == set(b)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


# ---- arrays in and out ------------------------------------------------------------------------


@pytest.mark.parametrize("lead", [(), (7,), (3, 5), (2, 3, 4), (0,), (4, 0)])
def test_any_leading_shape(soup_scene, rng, lead):
    n = int(np.prod(lead)) if lead else 1
    rays = random_rays(rng, n).reshape(lead + (6,))
    ans = soup_scene.cast_rays(rays)
    assert ans["t_hit"].shape == lead and ans["t_hit"].dtype == np.float32
    for k in ("geometry_ids", "primitive_ids", "instance_ids"):
        assert ans[k].shape == lead and ans[k].dtype == np.uint32
    assert ans["primitive_uvs"].shape == lead + (2,) and ans["primitive_uvs"].dtype == np.float32
    assert ans["primitive_normals"].shape == lead + (3,)
    assert soup_scene.test_occlusions(rays).shape == lead
    assert soup_scene.count_intersections(rays).shape == lead
    flat = soup_scene.cast_rays(rays.reshape(-1, 6))
    for k in KEYS:
        np.testing.assert_array_equal(ans[k].reshape(flat[k].shape), flat[k])


def test_float64_noncontiguous_and_lists_give_the_same_answers(soup_scene, rng):
    rays = random_rays(rng, 300)
    ref = soup_scene.cast_rays(rays)
    # float64 holding the same float32 values.
    assert_same(soup_scene.cast_rays(rays.astype(np.float64)), ref)
    # Every other row of a bigger array (strided rows).
    big = np.zeros((600, 6), np.float32)
    big[::2] = rays
    assert_same(soup_scene.cast_rays(big[::2]), ref)
    # Fortran order, and a transposed view.
    assert_same(soup_scene.cast_rays(np.asfortranarray(rays)), ref)
    assert_same(soup_scene.cast_rays(np.ascontiguousarray(rays.T).T), ref)
    # Columns of a wider array (non-contiguous last axis).
    wide = np.zeros((300, 12), np.float64)
    wide[:, ::2] = rays
    assert_same(soup_scene.cast_rays(wide[:, ::2]), ref)
    # Nested lists.
    assert_same(soup_scene.cast_rays(rays.tolist()), ref)
    # float32 at an address that is not a multiple of 4 (read through a copy) and a read-only
    # array (lent without a copy, like any C-contiguous float32 array).
    buf = np.zeros(rays.nbytes + 2, np.uint8)
    odd = buf[2:].view(np.float32).reshape(rays.shape)
    odd[...] = rays
    assert not odd.flags.aligned
    assert_same(soup_scene.cast_rays(odd), ref)
    frozen = rays.copy()
    frozen.flags.writeable = False
    assert_same(soup_scene.cast_rays(frozen), ref)
    # Occlusion reads its rays the same ways.
    occ = soup_scene.test_occlusions(rays)
    np.testing.assert_array_equal(occ, np.isfinite(ref["t_hit"]))
    for variant in (rays.astype(np.float64), big[::2], np.asfortranarray(rays), odd, frozen):
        np.testing.assert_array_equal(soup_scene.test_occlusions(variant), occ)
    # Input arrays are not modified.
    copy = rays.copy()
    soup_scene.cast_rays(rays)
    np.testing.assert_array_equal(rays, copy)


def test_mesh_inputs_accept_dtypes_and_views(rng):
    v, f = random_soup(rng, n_tris=30)
    rays = random_rays(rng, 200)
    a = raypick.Scene()
    a.add_triangles(v.astype(np.float32), f.astype(np.int32))
    b = raypick.Scene()
    vv = np.zeros((len(v), 6))
    vv[:, ::2] = v
    ff = np.asfortranarray(f.astype(np.uint32))
    b.add_triangles(vv[:, ::2], ff)
    assert_same(a.cast_rays(rays), b.cast_rays(rays))
    # float32 vertices and int32 indices at odd addresses (views into byte buffers).
    def odd(x):
        buf = np.zeros(x.nbytes + 1, np.uint8)
        view = buf[1:].view(x.dtype).reshape(x.shape)
        view[...] = x
        assert not view.flags.aligned
        return view

    c = raypick.Scene()
    c.add_triangles(odd(v.astype(np.float32)), odd(f.astype(np.int32)))
    assert_same(a.cast_rays(rays), c.cast_rays(rays))


@pytest.mark.parametrize(
    "rays, message",
    [
        (np.zeros((4, 5), np.float32), r"rays must have shape \(\.\.\., 6\), got \(4, 5\)"),
        (np.zeros((4, 6), np.complex64), "float32 or float64"),
        (np.zeros((4, 6), bool), "float32 or float64"),
        (np.array([["a"] * 6]), "float32 or float64"),
        (np.float32(1.0), r"shape \(\.\.\., 6\)"),
        ([[1, 2, 3]], r"got \(1, 3\)"),
        ([[1, 2, 3, 4, 5, 6], [1, 2]], "rays"),
    ],
)
def test_bad_rays_raise_value_error(soup_scene, rays, message):
    for query in (soup_scene.cast_rays, soup_scene.test_occlusions, soup_scene.count_intersections,
                  soup_scene.list_intersections):
        with pytest.raises(ValueError, match=message):
            query(rays)


def test_bad_geometry_raises_value_error():
    scene = raypick.Scene()
    tri = [[0, 1, 2]]
    pts = [[0, 0, 0], [1, 0, 0], [0, 1, 0]]
    with pytest.raises(ValueError, match=r"vertices must have shape \(N, 3\)"):
        scene.add_triangles([[0, 0], [1, 0], [0, 1]], tri)
    with pytest.raises(ValueError, match="integer"):
        scene.add_triangles(pts, [[0.0, 1.0, 2.0]])
    with pytest.raises(ValueError, match=r"triangles\[0, 2\] = 3 is out of range for 3 vertices"):
        scene.add_triangles(pts, [[0, 1, 3]])
    with pytest.raises(ValueError, match="out of range"):
        scene.add_triangles(pts, [[0, -1, 2]])
    with pytest.raises(ValueError, match=r"triangles must have shape \(M, 3\)"):
        scene.add_triangles(pts, [0, 1, 2])
    with pytest.raises(ValueError, match=r"vertices\[1\] is not finite"):
        scene.add_triangles([[0, 0, 0], [np.nan, 0, 0], [0, 1, 0]], tri)
    with pytest.raises(ValueError, match="radii"):
        scene.add_spheres([[0, 0, 0]], [-1.0])
    with pytest.raises(ValueError, match="radii"):
        scene.add_spheres([[0, 0, 0], [1, 1, 1]], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="mesh object"):
        scene.add_triangles(pts)
    assert scene.num_geometries == 0  # nothing half-added
    g = scene.add_triangles(pts, tri)
    with pytest.raises(ValueError, match="affine"):
        scene.add_instance(g, np.ones((4, 4)))
    with pytest.raises(ValueError, match=r"matrix must have shape"):
        scene.add_instance(g, np.eye(3))
    with pytest.raises(ValueError, match="singular"):
        scene.add_instance(g, np.diag([1.0, 0.0, 1.0, 1.0]))
    with pytest.raises(IndexError):
        scene.add_instance(7)
    with pytest.raises(ValueError, match="itself"):
        scene.add_instance(scene)
    with pytest.raises(ValueError, match="nthreads"):
        scene.cast_rays([0, 0, 1, 0, 0, -1], nthreads=-1)
    with pytest.raises(IndexError):
        scene.geometry_name(5)
    with pytest.raises(ValueError, match="same length"):
        scene.intersects_first(np.zeros((3, 3)), np.ones((2, 3)))


def test_add_triangles_takes_mesh_objects():
    class TrimeshLike:
        vertices = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float64)
        faces = np.array([[0, 1, 2]])

    class Open3DLike:
        vertices = [[0, 0, 0], [1, 0, 0], [0, 1, 0]]
        triangles = [[0, 1, 2]]

    scene = raypick.Scene()
    assert scene.add_triangles(TrimeshLike()) == 0
    assert scene.add_triangles(Open3DLike()) == 1
    assert scene.num_triangles == 2


# ---- instances ----------------------------------------------------------------------------------


def test_instances_match_pretransformed_copies(rng):
    v, f = cube(half=0.5)
    part = raypick.Scene()
    part.add_triangles(v, f, name="box")
    angle = 0.7
    rot = np.array(
        [[np.cos(angle), 0, np.sin(angle), 0], [0, 1, 0, 0], [-np.sin(angle), 0, np.cos(angle), 0], [0, 0, 0, 1]]
    )
    mats = [np.eye(4), rot @ np.diag([1.0, 2.0, 0.5, 1.0]), np.eye(4)]
    mats[0][:3, 3] = [1.5, 0, 0]
    mats[1][:3, 3] = [-1.5, 0.2, 0]
    mats[2][:3, 3] = [0, 0, 2.0]
    mats[2][0, 0] = -1.0  # a mirror
    world = raypick.Scene()
    copies = raypick.Scene()
    for k, m in enumerate(mats):
        assert world.add_instance(part, m, name=f"copy {k}") == k
        vw = (np.hstack([v, np.ones((len(v), 1))]) @ m.T)[:, :3]
        copies.add_triangles(vw, f)
    rays = random_rays(rng, 2000, target_scale=2.0, origin_radius=8.0)
    a, b = world.cast_rays(rays), copies.cast_rays(rays)
    hit = b["primitive_ids"] != INVALID
    assert hit.sum() > 300
    # Same hits, same triangles, same t; geometry 0 inside the placed scene, the instance's id.
    np.testing.assert_array_equal(a["primitive_ids"] != INVALID, hit)
    np.testing.assert_array_equal(a["primitive_ids"][hit], b["primitive_ids"][hit])
    np.testing.assert_allclose(a["t_hit"][hit], b["t_hit"][hit], rtol=1e-5)
    np.testing.assert_allclose(a["primitive_normals"][hit], b["primitive_normals"][hit], atol=1e-5)
    np.testing.assert_array_equal(a["instance_ids"][hit], b["geometry_ids"][hit])
    np.testing.assert_array_equal(a["geometry_ids"][hit], 0)
    assert world.geometry_name(1) == "copy 1" and world.geometry_kind(1) == "instance"
    np.testing.assert_allclose(world.instance_matrix(1), mats[1], rtol=1e-6)
    # Parity on the mirrored closed box still works (the winding flip is handled).
    centre = np.array([[0, 0, 2.0, 0.3, 0.2, 1.0]], np.float32)
    assert world.count_intersections(centre)[0] == 1


def test_instancing_a_geometry_of_the_same_scene():
    scene = raypick.Scene()
    g = scene.add_triangles([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]], name="tri")
    m = np.eye(4)
    m[2, 3] = -2.0
    inst = scene.add_instance(g, m)
    ans = scene.list_intersections([[0.2, 0.2, 1.0, 0, 0, -1]])
    np.testing.assert_allclose(ans["t_hit"], [1.0, 3.0], rtol=4e-7)  # the kernel's few ulps
    np.testing.assert_array_equal(ans["geometry_ids"], [g, g])
    np.testing.assert_array_equal(ans["instance_ids"], [INVALID, inst])


def test_a_placed_scene_is_captured_at_add_time():
    part = raypick.Scene()
    part.add_triangles([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    world = raypick.Scene()
    world.add_instance(part)
    part.add_triangles([[0, 0, 5], [1, 0, 5], [0, 1, 5]], [[0, 1, 2]])
    ray = [0.2, 0.2, 10, 0, 0, -1]
    # The later triangle at z = 5 is not in the instance (t within the kernel's few ulps of 10).
    assert world.cast_rays(ray)["t_hit"] == pytest.approx(10, rel=4e-7)
    assert part.cast_rays(ray)["t_hit"] == pytest.approx(5, rel=4e-7)
    nested = raypick.Scene()
    nested.add_instance(world)  # instances nest (tests/test_nested.py)
    assert nested.cast_rays(ray, instance_paths=True)["instance_paths"][:2].tolist() == [0, 0]


# ---- pickling -----------------------------------------------------------------------------------


def test_pickle_round_trip(soup_scene, rng):
    part = raypick.Scene()
    part.add_triangles(*cube(half=0.25), name="small box")
    m = np.eye(4)
    m[:3, 3] = [0, 0, -1]
    soup_scene.add_instance(part, m, name="placed")
    m2 = m.copy()
    m2[:3, 3] = [0, 0.6, -1]
    soup_scene.add_instance(part, m2)
    soup_scene.add_instance(0, m2, name="soup copy")
    rays = random_rays(rng, 1000, target_scale=1.2)
    ref = soup_scene.cast_rays(rays)
    for proto in (2, pickle.HIGHEST_PROTOCOL):
        clone = pickle.loads(pickle.dumps(soup_scene, protocol=proto))
        assert isinstance(clone, raypick.Scene)
        assert clone.num_geometries == soup_scene.num_geometries == 5
        assert [clone.geometry_name(i) for i in range(5)] == ["soup", "balls", "placed", None, "soup copy"]
        assert_same(clone.cast_rays(rays), ref)
        np.testing.assert_array_equal(clone.count_intersections(rays), soup_scene.count_intersections(rays))
    # The state holds the built scene as a scene file (every BVH as built) beside the geometries'
    # arrays; the clone is built when it arrives, no query rebuilds it.
    state = soup_scene.__getstate__()
    assert state["version"] == 3 and state["scene"][:8] == b"RAYPICK\0"
    assert [s["remap"] for s in state["sources"]] == [None, 0]
    clone = pickle.loads(pickle.dumps(soup_scene))
    assert repr(clone).endswith(", built)")
    # The placed scene is stored once, however often it is placed.
    assert state["scene"].count(b"small box") == 1


def test_plain_pickle_states_of_version_1_still_load():
    v, f = cube()
    state = {
        "version": 1,
        "geometries": [
            {"kind": "mesh", "name": "box", "vertices": v.astype(np.float32), "triangles": f.astype(np.uint32)}
        ],
        "sources": [],
    }
    scene = raypick.Scene.__new__(raypick.Scene)
    scene.__setstate__(state)
    assert scene.geometry_name(0) == "box" and scene.num_triangles == 12
    ans = scene.cast_rays(np.array([[0, 0, 5, 0, 0, -1]], np.float32))
    assert ans["t_hit"].tolist() == [4.0]


def test_bad_pickle_states_raise():
    scene = raypick.Scene()
    scene.add_triangles(*cube())
    state = scene.__getstate__()
    broken = dict(state, scene=state["scene"][:-7])
    with pytest.raises(ValueError, match="bad Scene state"):
        raypick.Scene.__new__(raypick.Scene).__setstate__(broken)
    with pytest.raises(ValueError, match="disagree"):
        raypick.Scene.__new__(raypick.Scene).__setstate__(dict(state, geometries=[]))
    with pytest.raises(ValueError, match="version"):
        raypick.Scene.__new__(raypick.Scene).__setstate__(dict(state, version=9))


# ---- scene files --------------------------------------------------------------------------------


def test_save_and_load_a_scene_file(soup_scene, rng, tmp_path):
    part = raypick.Scene()
    part.add_triangles(*cube(half=0.25), name="small box")
    m = np.eye(4)
    m[:3, 3] = [0, 0, -1]
    soup_scene.add_instance(part, m, name="placed")
    path = tmp_path / "soup.rpk"
    soup_scene.save(path)
    assert path.read_bytes()[:8] == b"RAYPICK\0"
    loaded = raypick.load(str(path))
    # Read with every BVH: built as it arrives.
    assert repr(loaded).endswith(", built)")
    assert loaded.num_geometries == soup_scene.num_geometries
    assert [loaded.geometry_name(i) for i in range(3)] == ["soup", "balls", "placed"]
    assert [loaded.geometry_kind(i) for i in range(3)] == ["mesh", "spheres", "instance"]
    np.testing.assert_array_equal(loaded.instance_matrix(2), soup_scene.instance_matrix(2))
    rays = random_rays(rng, 2000, target_scale=1.2)
    assert_same(loaded.cast_rays(rays), soup_scene.cast_rays(rays))
    np.testing.assert_array_equal(loaded.count_intersections(rays), soup_scene.count_intersections(rays))
    np.testing.assert_array_equal(loaded.test_occlusions(rays), soup_scene.test_occlusions(rays))
    # The loaded scene is a scene like any other: it pickles, grows and is rebuilt.
    assert_same(pickle.loads(pickle.dumps(loaded)).cast_rays(rays), soup_scene.cast_rays(rays))
    loaded.add_spheres([[0, 0, 9]], 0.5)
    assert loaded.num_geometries == 4
    assert loaded.cast_rays(np.array([[0, 0, 20, 0, 0, -1]], np.float32))["geometry_ids"].tolist() == [3]
    # A loaded part is placed like a built one.
    part_path = tmp_path / "part.rpk"
    part.save(part_path)
    world = raypick.Scene()
    world.add_instance(raypick.load(part_path), m)
    reference = raypick.Scene()
    reference.add_instance(part, m)
    assert_same(world.cast_rays(rays), reference.cast_rays(rays))
    # Damaged files raise ValueError naming the file and the problem.
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="soup.rpk.*truncated"):
        raypick.load(path)
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0x10
    path.write_bytes(bytes(flipped))
    with pytest.raises(ValueError, match="checksum"):
        raypick.load(path)
    with pytest.raises(OSError):
        soup_scene.save(tmp_path / "no-such-folder" / "x.rpk")


def test_a_real_model_saved_and_loaded(tmp_path):
    conference = SHARED_DATA / "scenes" / "conference.obj"
    if not conference.exists():
        pytest.skip("shared data not found")
    scene = raypick.load(conference)
    scene.save(tmp_path / "conference.rpk")
    loaded = raypick.load(tmp_path / "conference.rpk")
    assert loaded.num_geometries == scene.num_geometries and loaded.num_triangles == scene.num_triangles
    assert [loaded.geometry_name(i) for i in range(scene.num_geometries)] == [
        scene.geometry_name(i) for i in range(scene.num_geometries)
    ]
    rays = raypick.create_rays_pinhole(70, [0, 0, 0], [-10, 5, 0], [0, 1, 0], 128, 96)
    ans = loaded.cast_rays(rays)
    assert_same(ans, scene.cast_rays(rays))
    assert np.isfinite(ans["t_hit"]).sum() > 1000


def test_a_spatially_split_build_answers_as_the_default(tmp_path, rng):
    sponza = SHARED_DATA / "scenes" / "sponza-dabrovic.obj"
    if not sponza.exists():
        pytest.skip("shared data not found")
    plain = raypick.load(sponza)
    split = raypick.load(sponza, bvh="spatial")
    split.save(tmp_path / "sponza.rpk")
    saved = raypick.load(tmp_path / "sponza.rpk")
    lo, hi = plain.bounds()
    origins = lo + rng.random((20000, 3), dtype=np.float32) * (hi - lo)
    dirs = rng.normal(size=(20000, 3)).astype(np.float32)
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    rays = np.hstack([origins, dirs]).astype(np.float32)
    want = plain.cast_rays(rays)
    assert np.isfinite(want["t_hit"]).sum() > 15000
    for scene in (split, saved):
        assert_same(scene.cast_rays(rays), want)
        np.testing.assert_array_equal(scene.count_intersections(rays), plain.count_intersections(rays))
    with pytest.raises(ValueError, match="unknown bvh"):
        raypick.load(sponza, bvh="best")


def _cast_in_worker(args):
    scene, rays = args
    return scene.cast_rays(rays)["t_hit"]


def test_scene_ships_to_worker_processes(soup_scene, rng):
    import multiprocessing as mp

    rays = random_rays(rng, 500)
    ref = soup_scene.cast_rays(rays)["t_hit"]
    with mp.get_context("spawn").Pool(2) as pool:
        outs = pool.map(_cast_in_worker, [(soup_scene, rays[:250]), (soup_scene, rays[250:])])
    np.testing.assert_array_equal(np.concatenate(outs), ref)


def test_camera_pickles():
    cam = raypick.Camera(eye=[1, 2, 3], target=[0, 0, 0], fov_y_deg=45, width=64, height=48)
    clone = pickle.loads(pickle.dumps(cam))
    np.testing.assert_array_equal(clone.rays(), cam.rays())


# ---- cameras ------------------------------------------------------------------------------------


def open3d_pinhole_reference(fov_deg, center, eye, up, w, h):
    """Open3D's create_rays_pinhole, transcribed in numpy (f64)."""
    center, eye, up = (np.asarray(x, np.float64) for x in (center, eye, up))
    f = 0.5 * w / np.tan(0.5 * np.radians(fov_deg))
    r1 = up / np.linalg.norm(up)
    r2 = (center - eye) / np.linalg.norm(center - eye)
    r0 = np.cross(r1, r2)
    r0 /= np.linalg.norm(r0)
    r1 = np.cross(r2, r0)
    ys, xs = np.mgrid[0:h, 0:w]
    a = (xs + 0.5 - 0.5 * w) / f
    b = (ys + 0.5 - 0.5 * h) / f
    d = a[..., None] * r0 + b[..., None] * r1 + r2
    o = np.broadcast_to(eye, d.shape)
    return np.concatenate([o, d], axis=-1)


def test_create_rays_pinhole_matches_open3ds_formula():
    args = (70.0, [0.1, 0.2, -0.3], [1.0, 2.0, 3.0], [0.0, 1.0, 0.2], 33, 17)
    rays = raypick.create_rays_pinhole(*args)
    assert rays.shape == (17, 33, 6) and rays.dtype == np.float32
    np.testing.assert_allclose(rays, open3d_pinhole_reference(*args), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(raypick.Scene.create_rays_pinhole(*args), rays)
    with pytest.raises(ValueError):
        raypick.create_rays_pinhole(60, [0, 0, 0], [0, 0, 0], [0, 1, 0], 4, 4)
    with pytest.raises(ValueError):
        raypick.create_rays_pinhole(60, [0, 0, 0], [0, 0, 1], [0, 0, 1], 4, 4)


def test_create_rays_pinhole_matches_open3d_itself():
    o3d = import_open3d()
    args = dict(fov_deg=60, center=[0.5, 0.5, 0.5], eye=[-1, -1, -1], up=[0, 0, 1], width_px=32, height_px=24)
    ours = raypick.create_rays_pinhole(**args)
    theirs = o3d.t.geometry.RaycastingScene.create_rays_pinhole(**args).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)


def test_cast_rays_matches_open3d_on_a_box():
    o3d = import_open3d()
    v, f = cube(half=0.5)
    ours = raypick.Scene()
    ours.add_triangles(v, f)
    theirs = o3d.t.geometry.RaycastingScene()
    theirs.add_triangles(o3d.core.Tensor(v.astype(np.float32)), o3d.core.Tensor(f.astype(np.uint32)))
    rays = raypick.create_rays_pinhole(60, [0.1, 0.05, 0], [2, 1.5, 3], [0, 1, 0], 40, 30)
    a = ours.cast_rays(rays)
    b = {k: t.numpy() for k, t in theirs.cast_rays(o3d.core.Tensor(rays)).items()}
    hit = (a["geometry_ids"] != INVALID) & (b["geometry_ids"] != INVALID)
    assert hit.sum() > 100
    assert (a["geometry_ids"] != b["geometry_ids"]).sum() <= 2  # grazing edge rays at most
    np.testing.assert_allclose(a["t_hit"][hit], b["t_hit"][hit], rtol=1e-5)
    np.testing.assert_allclose(a["primitive_normals"][hit], b["primitive_normals"][hit], atol=1e-5)
    same_tri = hit & (a["primitive_ids"] == b["primitive_ids"])
    np.testing.assert_allclose(a["primitive_uvs"][same_tri], b["primitive_uvs"][same_tri], atol=1e-4)
    assert set(a) - {"instance_ids"} == set(b)


def test_pick_matches_the_pixel_ray_cast():
    scene = raypick.Scene()
    scene.add_triangles(*cube(half=1.0), name="box")
    cam = raypick.Camera(eye=[3, 2, 4], target=[0, 0, 0], up=[0, 1, 0], fov_y_deg=50, width=80, height=60)
    rays = cam.rays()
    assert rays.shape == (60, 80, 6)
    np.testing.assert_allclose(np.linalg.norm(rays[..., 3:], axis=-1), 1, atol=1e-6)
    ans = scene.cast_rays(rays)
    for (i, j) in [(40, 30), (10, 10), (79, 59), (55, 20)]:
        np.testing.assert_array_equal(cam.pixel_ray(i + 0.5, j + 0.5), rays[j, i])
        hit = scene.pick(cam, i + 0.5, j + 0.5)
        if ans["primitive_ids"][j, i] == INVALID:
            assert hit is None
            continue
        assert hit.geometry_id == 0 and hit.geometry_name == "box" and hit.instance_id is None
        assert hit.primitive_id == ans["primitive_ids"][j, i]
        assert hit.t == ans["t_hit"][j, i]
        o, d = rays[j, i, :3].astype(np.float64), rays[j, i, 3:].astype(np.float64)
        np.testing.assert_allclose(hit.point, o + hit.t * d, atol=1e-5)
        assert np.max(np.abs(hit.point)) == pytest.approx(1.0, abs=1e-5)  # on the box
    # The centre pixel looks at the box; the image's top-left corner is above it.
    assert scene.pick(cam, 40, 30) is not None
    assert "raypick.Hit(" in repr(scene.pick(cam, 40, 30))


# ---- loading, and the Rust CLI as the reference ------------------------------------------------


def test_load_names_and_counts():
    bunny = SHARED_DATA / "obj" / "stanford-bunny.obj"
    gltf = SHARED_DATA / "gltf" / "SimpleMeshes.gltf"
    if not bunny.exists():
        pytest.skip("shared data not found")
    scene = raypick.load(bunny)
    assert scene.num_triangles == 69451 and scene.num_geometries == 1
    simple = raypick.load(str(gltf))
    assert simple.num_geometries == 2
    assert all(simple.geometry_kind(i) == "instance" for i in range(2))
    # The second node is translated +1 on x: the same triangle, one unit apart.
    np.testing.assert_allclose(simple.instance_matrix(1)[:3, 3] - simple.instance_matrix(0)[:3, 3], [1, 0, 0])
    clone = pickle.loads(pickle.dumps(simple))
    rays = raypick.create_rays_pinhole(60, [1, 0.5, 0], [1, 0.5, 4], [0, 1, 0], 16, 16)
    assert_same(clone.cast_rays(rays), simple.cast_rays(rays))
    with pytest.raises(FileNotFoundError, match="no-such-file.obj"):
        raypick.load(SHARED_DATA / "no-such-file.obj")


def test_load_bakes_single_use_nodes_unless_told_to_keep_instances():
    truck = SHARED_DATA / "gltf" / "CesiumMilkTruck.glb"
    if not truck.exists():
        pytest.skip("shared data not found")
    baked = raypick.load(truck)
    kept = raypick.load(truck, keep_instances=True)
    n = kept.num_geometries
    assert baked.num_geometries == n
    kinds = [baked.geometry_kind(i) for i in range(n)]
    assert all(kept.geometry_kind(i) == "instance" for i in range(n))
    # The two wheel nodes share a mesh and stay instances; the nodes used once are baked.
    assert kinds.count("instance") == 2 and kinds.count("mesh") == n - 2, kinds
    lo, hi = baked.bounds()
    rays = random_rays(np.random.default_rng(5), 4000, 0.5, 2.0)
    # Around the truck: scale the unit setup to its box.
    rays[:, :3] = rays[:, :3] * (hi - lo).max() + (lo + hi) / 2
    a, b = baked.cast_rays(rays), kept.cast_rays(rays)
    hit = np.isfinite(b["t_hit"])
    np.testing.assert_array_equal(np.isfinite(a["t_hit"]), hit)
    np.testing.assert_allclose(a["t_hit"][hit], b["t_hit"][hit], rtol=1e-4)
    # The node a hit names: its instance where kept, its geometry where baked.
    node_a = np.where(a["instance_ids"] == INVALID, a["geometry_ids"], a["instance_ids"])
    assert (node_a[hit] == b["instance_ids"][hit]).mean() > 0.99
    baked_hits = hit & (a["instance_ids"] == INVALID)
    assert baked_hits.sum() > 100 and (hit & (a["instance_ids"] != INVALID)).sum() > 10


def test_load_hierarchy_keeps_the_node_tree_as_nested_instances():
    truck = SHARED_DATA / "gltf" / "CesiumMilkTruck.glb"
    if not truck.exists():
        pytest.skip("shared data not found")
    kept = raypick.load(truck, keep_instances=True)
    tree = raypick.load(truck, hierarchy=True)
    # One root node at the top, the wheels' mesh stored once.
    assert tree.num_geometries == 1 and tree.geometry_kind(0) == "instance"
    assert tree.num_triangles == kept.num_triangles == 2856
    lo, hi = kept.bounds()
    np.testing.assert_allclose(tree.bounds(), kept.bounds(), rtol=1e-5, atol=1e-5)
    rays = random_rays(np.random.default_rng(6), 4000, 0.5, 2.0)
    rays[:, :3] = rays[:, :3] * (hi - lo).max() + (lo + hi) / 2
    a, b = tree.cast_rays(rays), kept.cast_rays(rays)
    hit = np.isfinite(b["t_hit"])
    np.testing.assert_array_equal(np.isfinite(a["t_hit"]), hit)
    assert hit.sum() > 500
    np.testing.assert_allclose(a["t_hit"][hit], b["t_hit"][hit], rtol=1e-5)
    assert (a["primitive_ids"][hit] == b["primitive_ids"][hit]).mean() > 0.99
    # Every hit goes through the root node: an instance path of two nodes (the root's own
    # mesh) or three (a wheel, under its group node).
    origins, dirs = rays[:, :3], rays[:, 3:]
    depth = {}
    for i in np.flatnonzero(hit)[:200]:
        h = tree.pick(raypick.Camera(origins[i], origins[i] + dirs[i]), 320, 240)
        if h is not None:
            assert h.instance_id == 0
            depth[len(h.instance_path)] = depth.get(len(h.instance_path), 0) + 1
    assert set(depth) <= {2, 3} and depth.get(3, 0) > 0, depth
    # A pickle keeps the wheels' mesh shared under its two nodes, and the answers.
    clone = pickle.loads(pickle.dumps(tree))
    assert clone.num_triangles == 2856
    assert_same(clone.cast_rays(rays), a)
    with pytest.raises(ValueError, match="keep_instances and hierarchy"):
        raypick.load(truck, keep_instances=True, hierarchy=True)


def _raypick_cli():
    exe = os.environ.get("RAYPICK_CLI")
    if exe:
        return exe
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.skip("cargo not found (set RAYPICK_CLI to a raypick binary)")
    subprocess.run(
        [cargo, "build", "-q", "-p", "raypick-cli", "--bin", "raypick"], cwd=REPO, check=True, timeout=1800
    )
    return str(REPO / "target" / "debug" / "raypick")


def test_same_answers_as_the_rust_cli(tmp_path, rng):
    bunny = SHARED_DATA / "obj" / "stanford-bunny.obj"
    if not bunny.exists():
        pytest.skip("shared data not found")
    exe = _raypick_cli()
    scene = raypick.load(bunny)
    lo, hi = scene.bounds()
    c, r = (lo + hi) / 2, float(np.linalg.norm(hi - lo) / 2)
    d = rng.normal(size=(3000, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    tgt = lo + rng.random((3000, 3)) * (hi - lo)
    dirs = tgt - (c + 2 * r * d)
    rays = np.hstack([c + 2 * r * d, dirs / np.linalg.norm(dirs, axis=1, keepdims=True)]).astype("<f4")
    rays_path, out = tmp_path / "r.rays", tmp_path / "hits.npz"
    rays.tofile(rays_path)
    subprocess.run([exe, "cast", str(bunny), "--rays", str(rays_path), "--out", str(out)], check=True, timeout=600)
    cli = np.load(out)
    ans = scene.cast_rays(rays)
    hit = ans["primitive_ids"] != INVALID
    assert hit.sum() > 1000
    np.testing.assert_array_equal(cli["t"], ans["t_hit"])
    np.testing.assert_array_equal(cli["prim"], np.where(hit, ans["primitive_ids"].astype(np.int64), -1))
    np.testing.assert_array_equal(cli["u"][hit], ans["primitive_uvs"][hit, 0])
    np.testing.assert_array_equal(cli["v"][hit], ans["primitive_uvs"][hit, 1])
    np.testing.assert_array_equal(cli["geom"], np.where(hit, 0, -1))


def test_pick_rect_and_tolerance():
    scene = raypick.Scene()
    left = scene.add_spheres([[-2, 0, 0]], 0.5, name="left")
    right = scene.add_spheres([[2, 0, 0]], 0.5, name="right")
    part = raypick.Scene()
    part.add_triangles(*cube(half=0.25))
    m = np.eye(4)
    m[:3, 3] = [2, 0, 0]  # a small box inside the right sphere
    inst = scene.add_instance(part, m)
    tiny = scene.add_spheres([[0, 1.5, 0]], 0.01, name="tiny")
    cam = raypick.Camera(eye=[0, 0, 8], target=[0, 0, 0], fov_y_deg=57.3, width=400, height=200)
    # The tiny sphere straddles the middle column (x = 200): halves that stop short of it.
    assert scene.pick_rect(cam, 0, 0, 190, 200) == [(left, None)]
    assert scene.pick_rect(cam, 400, 200, 210, 0) == [(0, inst), (right, None)]  # corners in any order
    assert set(scene.pick_rect(cam, 0, 0, 400, 200)) == {(left, None), (right, None), (0, inst), (tiny, None)}
    # The tiny sphere is sub-pixel: a pick next to it misses, a pick with tolerance finds it.
    # The tiny sphere (0.02 wide, about half a pixel, at x = 0) is between the pixel centres of
    # column 200 (x = 200.5 is 0.02 right of it): exact picks miss it, picks with a tolerance find it.
    exact = [scene.pick(cam, 200.5, y + 0.5) for y in range(0, 100)]
    assert all(h is None for h in exact)
    found = [scene.pick(cam, 200.5, y + 0.5, tolerance_px=3.0) for y in range(0, 100)]
    assert {h.geometry_name for h in found if h is not None} == {"tiny"}
