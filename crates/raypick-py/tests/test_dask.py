"""raypick.dask on a local cluster of two worker processes: the same answers as one process on the
bunny's shared ray sets, the scene sent once per worker, a killed worker recovered, bad input
refused before any work."""

import os
import sys
import time

import numpy as np
import pytest

import raypick

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
import raypick.dask as rdask  # noqa: E402

from conftest import SHARED_DATA  # noqa: E402

BUNNY = SHARED_DATA / "obj" / "stanford-bunny.obj"
TOOLS = SHARED_DATA.parent / "tools"


@pytest.fixture(scope="module")
def bunny_rays(tmp_path_factory):
    """The shared ray sets of tools/make_rays.py for the bunny (fewer rays, same recipe)."""
    if not BUNNY.exists():
        pytest.skip("shared data not present")
    sys.path.insert(0, str(TOOLS))
    try:
        import make_rays
    finally:
        sys.path.pop(0)
    prefix = str(tmp_path_factory.mktemp("rays") / "bunny")
    make_rays.main(str(BUNNY), prefix, n=200_000, res=256)
    load = lambda name: np.fromfile(f"{prefix}.{name}.rays", "<f4").reshape(-1, 6)
    return {"incoherent": load("incoherent"), "primary": load("primary")}


@pytest.fixture(scope="module")
def bunny():
    if not BUNNY.exists():
        pytest.skip("shared data not present")
    return raypick.load(BUNNY)


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        yield cluster


def test_without_a_cluster_the_local_scheduler_answers(bunny, bunny_rays):
    rays = bunny_rays["incoherent"][:50_000]
    got = rdask.compute(rdask.cast_rays(bunny, da.from_array(rays, chunks=(7_000, 6))))
    ref = bunny.cast_rays(rays)
    for key in ref:
        np.testing.assert_array_equal(got[key], ref[key], err_msg=key)


def test_a_cluster_answers_like_one_process(bunny, bunny_rays, cluster):
    with distributed.Client(cluster) as client:
        for name, rays in bunny_rays.items():
            d = da.from_array(rays, chunks=(25_000, 6))
            got = rdask.compute(rdask.cast_rays(bunny, d))
            ref = bunny.cast_rays(rays)
            assert got["t_hit"].shape == ref["t_hit"].shape
            for key in ref:
                np.testing.assert_array_equal(got[key], ref[key], err_msg=f"{name} {key}")
            np.testing.assert_array_equal(rdask.test_occlusions(bunny, d, tfar=0.1).compute(),
                                          bunny.test_occlusions(rays, tfar=0.1))
            np.testing.assert_array_equal(rdask.count_intersections(bunny, d).compute(),
                                          bunny.count_intersections(rays))
        points = bunny_rays["incoherent"][:20_000, :3] * 0.5
        p = da.from_array(points, chunks=(5_000, 3))
        np.testing.assert_array_equal(rdask.compute_distance(bunny, p).compute(),
                                      bunny.compute_distance(points))
        closest = rdask.compute(rdask.compute_closest_points(bunny, p))
        np.testing.assert_array_equal(closest["points"], bunny.compute_closest_points(points)["points"])
        # The scene reached each worker once, for all those chunks and queries.
        loads = client.run(rdask.scenes_loaded)
        assert sorted(loads.values()) == [1, 1], loads


def test_a_killed_worker_is_replaced_and_the_answers_are_complete(bunny, bunny_rays, cluster):
    rays = np.tile(bunny_rays["incoherent"], (5, 1))
    ref = bunny.cast_rays(rays)["t_hit"]
    with distributed.Client(cluster) as client:
        # Small chunks, one thread each: the job lasts long enough to lose a worker in the middle.
        t_hit = rdask.cast_rays(bunny, da.from_array(rays, chunks=(2_000, 6)), nthreads=1)["t_hit"]
        future = client.compute(t_hit)
        # Wait until some chunks are done, then kill one worker process mid-job: its nanny starts
        # a new one, which loads the scene through the plugin, and Dask reruns the lost tasks.
        deadline = time.time() + 60
        while time.time() < deadline:
            processing = client.processing()
            if any(processing.values()):
                break
            time.sleep(0.01)
        loads_before = client.run(rdask.scenes_loaded)
        victim = sorted(loads_before)[0]
        assert not future.done(), "the job must still be running when the worker dies"
        client.run(os._exit, 1, workers=[victim], on_error="ignore")
        got = future.result(timeout=300)
        np.testing.assert_array_equal(got, ref)
        # The nanny replaced the worker, and the new one loaded the scene through the plugin.
        client.wait_for_workers(2, timeout=60)
        workers = client.scheduler_info()["workers"]
        assert victim not in workers
        loads = client.run(rdask.scenes_loaded)
        (survivor,) = set(loads_before) - {victim}
        (newcomer,) = set(loads) - set(loads_before)
        assert loads[survivor] == loads_before[survivor]  # nothing sent again to the survivor
        assert loads[newcomer] == 1  # the replacement loaded the scene once


def test_workers_can_load_the_scene_from_a_shared_path(bunny, bunny_rays, cluster, tmp_path):
    path = tmp_path / "bunny.rpk"
    bunny.save(path)
    rays = bunny_rays["primary"][:40_000]
    with distributed.Client(cluster) as client:
        plugin = rdask.ScenePlugin.from_path(str(path))
        assert plugin.data is None  # nothing but the path travels
        got = rdask.compute(rdask.cast_rays(plugin, da.from_array(rays, chunks=(10_000, 6))))
        ref = bunny.cast_rays(rays)
        for key in ref:
            np.testing.assert_array_equal(got[key], ref[key], err_msg=key)
        loads = client.run(rdask.scenes_loaded)
        assert len(loads) == 2
    with pytest.raises(ValueError, match="distributed client"):
        rdask.cast_rays(plugin, da.from_array(rays, chunks=(10_000, 6)))


def test_bad_input_fails_before_any_work(bunny):
    with pytest.raises(ValueError, match=r"\(N, 6\)"):
        rdask.cast_rays(bunny, da.zeros((10, 5), chunks=5))
    with pytest.raises(ValueError, match="dtype"):
        rdask.cast_rays(bunny, da.from_array(np.array([["a"] * 6]), chunks=1))
    with pytest.raises(TypeError, match="dask"):
        rdask.cast_rays(bunny, np.zeros((10, 6)))
    with pytest.raises(TypeError, match="Scene"):
        rdask.cast_rays("bunny.obj", da.zeros((10, 6), chunks=5))
    with pytest.raises(ValueError, match=r"\(N, 3\)"):
        rdask.compute_distance(bunny, da.zeros((10, 6), chunks=5))
