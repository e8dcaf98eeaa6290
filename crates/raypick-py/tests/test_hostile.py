"""Careless calls and files from strangers: nthreads bounds and the thread pools it creates, the
loader's budgets and reference policy, and instance transforms that f32 cannot invert."""

import os
import struct
import sys
import time

import numpy as np
import pytest

import raypick

# raypick's bounds (crates/raypick-py/src/threads.rs).
MAX_THREADS = 1024
MAX_CACHED_THREADS = 256


def tiny_scene():
    scene = raypick.Scene()
    scene.add_triangles([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    return scene


RAY = np.array([[0.2, 0.2, 1.0, 0.0, 0.0, -1.0]], np.float32)


@pytest.mark.parametrize("bad", [-1, MAX_THREADS + 1, 2**40, 2**70, -(2**70)])
def test_nthreads_out_of_range_is_a_value_error(bad):
    scene = tiny_scene()
    start = time.monotonic()
    for call in (
        lambda: scene.cast_rays(RAY, nthreads=bad),
        lambda: scene.test_occlusions(RAY, nthreads=bad),
        lambda: scene.count_intersections(RAY, nthreads=bad),
        lambda: scene.list_intersections(RAY, nthreads=bad),
    ):
        with pytest.raises(ValueError, match="nthreads"):
            call()
    assert time.monotonic() - start < 5
    with pytest.raises(TypeError):
        scene.cast_rays(RAY, nthreads="4")


def threads_now():
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc")
def test_many_nthreads_values_leave_a_bounded_number_of_threads():
    scene = tiny_scene()
    scene.cast_rays(RAY)  # the global pool (one thread per core) exists from here on
    before = threads_now()
    expected = scene.cast_rays(RAY)["t_hit"]
    for n in range(1, 101):
        assert scene.cast_rays(RAY, nthreads=n)["t_hit"] == expected
        assert scene.test_occlusions(RAY, nthreads=n)[0]
    # Pools dropped from the cache end their threads shortly after.
    deadline = time.monotonic() + 20
    while threads_now() > before + MAX_CACHED_THREADS and time.monotonic() < deadline:
        time.sleep(0.1)
    after = threads_now()
    assert after <= before + MAX_CACHED_THREADS, (before, after)
    # The largest counts are the ones kept: using them again starts no thread.
    scene.cast_rays(RAY, nthreads=100)
    assert threads_now() <= after
    assert scene.cast_rays(RAY, nthreads=MAX_THREADS)["t_hit"] == expected


QUAD = struct.pack("<12f", 0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0)


def gltf_with_buffer(uri):
    return (
        '{"asset":{"version":"2.0"},"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0,"name":"n"}],'
        '"meshes":[{"primitives":[{"attributes":{"POSITION":0},"mode":6}]}],'
        '"accessors":[{"bufferView":0,"componentType":5126,"count":4,"type":"VEC3",'
        '"min":[0,0,0],"max":[1,1,0]}],"bufferViews":[{"buffer":0,"byteLength":48}],'
        '"buffers":[{"byteLength":48,"uri":"%s"}]}' % uri
    )


def test_load_refuses_references_outside_the_model_folder(tmp_path):
    (tmp_path / "models").mkdir()
    (tmp_path / "secret.bin").write_bytes(QUAD)
    (tmp_path / "models" / "inside.bin").write_bytes(QUAD)
    for uri in ("../secret.bin", "%2e%2e/secret.bin"):
        path = tmp_path / "models" / "scene.gltf"
        path.write_text(gltf_with_buffer(uri))
        with pytest.raises(ValueError, match="refused") as error:
            raypick.load(path)
        assert uri in str(error.value) and "allow_outside_refs" in str(error.value)
        scene = raypick.load(path, allow_outside_refs=True)
        assert scene.pick(raypick.Camera(eye=[0.3, 0.3, 2], target=[0.3, 0.3, 0]), 320, 240)
    if sys.platform != "win32":
        os.symlink(tmp_path / "secret.bin", tmp_path / "models" / "link.bin")
        path.write_text(gltf_with_buffer("link.bin"))
        with pytest.raises(ValueError, match="outside the model's folder"):
            raypick.load(path)
    path.write_text(gltf_with_buffer("inside.bin"))
    assert raypick.load(path).num_geometries == 1


def test_load_budgets(tmp_path):
    obj = tmp_path / "quads.obj"
    obj.write_text("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n" + "f 1 2 3 4\n" * 10)
    assert raypick.load(obj, max_triangles=20, max_bytes=1000).num_triangles == 20
    with pytest.raises(ValueError, match="more than 19 triangles"):
        raypick.load(obj, max_triangles=19)
    with pytest.raises(ValueError, match="byte budget of 50"):
        raypick.load(obj, max_bytes=50)
    for bad in (0, -5):
        with pytest.raises(ValueError, match="at least 1"):
            raypick.load(obj, max_bytes=bad)
        with pytest.raises(ValueError, match="at least 1"):
            raypick.load(obj, max_triangles=bad)
    # The budgets are keyword-only, so that a position cannot be mistaken for one.
    with pytest.raises(TypeError):
        raypick.load(obj, True)


def test_a_huge_instance_scale_is_not_called_singular():
    part = tiny_scene()
    world = raypick.Scene()
    with pytest.raises(ValueError, match="overflows") as error:
        world.add_instance(part, np.diag([1e30, 1e30, 1e30, 1.0]))
    assert "singular" not in str(error.value)
    with pytest.raises(ValueError, match="underflows"):
        world.add_instance(part, np.diag([1e-30, 1e-30, 1e-30, 1.0]))
    with pytest.raises(ValueError, match="singular"):
        world.add_instance(part, np.diag([1.0, 1.0, 0.0, 1.0]))
    assert world.num_geometries == 0
