"""Queries checked against references: an f64 Möller–Trumbore in numpy, hand-computed values,
closed-mesh parity, and the queries against each other."""

import numpy as np
import pytest

import raypick
from conftest import cube, moller_trumbore, random_rays, random_soup

INVALID = 4294967295


def barycentrics_f64(ray, v0, v1, v2):
    """(t, u, v) of the ray against the triangle's plane in f64 (Cramer's rule)."""
    o, d = np.asarray(ray[:3], np.float64), np.asarray(ray[3:], np.float64)
    m = np.column_stack([-d, v1 - v0, v2 - v0])
    t, u, v = np.linalg.solve(m, o - v0)
    return t, u, v


def check_against_reference(scene, rays, v, f, ans, tol_edge=1e-5, tol_uv=2e-5):
    """`tol_uv`: barycentrics of small triangles far from the origin carry f32 rounding of the
    coordinates divided by the triangle's size (bunny: ~1e-5 of 0.1 over 1e-3 triangles)."""
    t_ref, prim_ref, u_ref, v_ref, margin = moller_trumbore(rays, v, f)
    hit = ans["primitive_ids"] != INVALID
    hit_ref = prim_ref >= 0
    disagree = (hit != hit_ref) | (hit & hit_ref & (ans["primitive_ids"].astype(np.int64) != prim_ref))
    for i in np.flatnonzero(disagree):
        # Only grazing rays may disagree: the reference hit is within rounding of an edge, or the
        # triangle raypick reports is hit in f64 within rounding of its edges at the same t.
        if hit_ref[i] and margin[i] < tol_edge:
            continue
        assert hit[i], f"ray {i}: raypick misses, reference hits triangle {prim_ref[i]} (margin {margin[i]})"
        k = ans["primitive_ids"][i]
        vv = np.asarray(v, np.float64)[f[k]]
        t, bu, bv = barycentrics_f64(rays[i], *vv)
        assert min(bu, bv, 1 - bu - bv) > -tol_edge, f"ray {i}: raypick's triangle {k} is not hit"
        if hit_ref[i]:
            assert abs(t - t_ref[i]) <= 1e-5 * max(1.0, abs(t_ref[i]))
    agree = hit & hit_ref & ~disagree
    assert agree.sum() > 0.5 * hit_ref.sum()
    # t of a ray meeting a plane at angle θ from its normal is conditioned by 1 / |cos θ|: the
    # f32 inputs' rounding (a few ulps) moves t by that much more on grazing rays.
    vf = np.asarray(v, np.float64)
    tri = np.asarray(f, np.int64)[np.maximum(prim_ref, 0)]
    normal = np.cross(vf[tri[:, 1]] - vf[tri[:, 0]], vf[tri[:, 2]] - vf[tri[:, 0]])
    d = np.asarray(rays, np.float64)[:, 3:]
    with np.errstate(divide="ignore", invalid="ignore"):
        cos = np.abs(np.einsum("ij,ij->i", normal, d)) / (
            np.linalg.norm(normal, axis=1) * np.linalg.norm(d, axis=1))
    rtol = 2e-6 / np.maximum(cos, 1e-3)
    t_err = np.abs(ans["t_hit"][agree] - t_ref[agree])
    bad = t_err > 1e-6 + rtol[agree] * np.abs(t_ref[agree])
    assert not bad.any(), (
        f"t off by {t_err[bad]} at t = {t_ref[agree][bad]}, cos = {cos[agree][bad]}")
    np.testing.assert_allclose(ans["primitive_uvs"][agree, 0], u_ref[agree], atol=tol_uv)
    np.testing.assert_allclose(ans["primitive_uvs"][agree, 1], v_ref[agree], atol=tol_uv)
    # Normals: unit, along (v1 - v0) x (v2 - v0).
    vv = np.asarray(v, np.float64)
    ff = ans["primitive_ids"][agree].astype(np.int64)
    n_ref = np.cross(vv[f[ff, 1]] - vv[f[ff, 0]], vv[f[ff, 2]] - vv[f[ff, 0]])
    n_ref /= np.linalg.norm(n_ref, axis=1, keepdims=True)
    np.testing.assert_allclose(ans["primitive_normals"][agree], n_ref, atol=1e-5)
    # Misses: Open3D's miss values.
    miss = ~hit
    assert np.all(np.isinf(ans["t_hit"][miss]))
    assert np.all(ans["geometry_ids"][miss] == INVALID)
    assert np.all(ans["primitive_uvs"][miss] == 0)
    assert np.all(ans["primitive_normals"][miss] == 0)
    return hit.sum()


def test_random_soup_matches_moller_trumbore(rng):
    v, f = random_soup(rng, n_tris=80)
    scene = raypick.Scene()
    assert scene.add_triangles(v.astype(np.float32), f) == 0
    rays = random_rays(rng, 400)
    ans = scene.cast_rays(rays)
    v32 = v.astype(np.float32).astype(np.float64)  # the mesh raypick holds
    hits = check_against_reference(scene, rays, v32, f, ans)
    assert hits > 50  # the set is not all misses
    assert np.all(ans["geometry_ids"][ans["primitive_ids"] != INVALID] == 0)
    assert np.all(ans["instance_ids"] == INVALID)


def test_bunny_subset_matches_moller_trumbore(rng):
    from conftest import SHARED_DATA

    path = SHARED_DATA / "obj" / "stanford-bunny.obj"
    if not path.exists():
        pytest.skip(f"{path} not found")
    scene = raypick.load(str(path))
    assert scene.num_triangles == 69451
    v, f = scene.mesh_arrays(0)
    lo, hi = v.min(0), v.max(0)
    c, r = (lo + hi) / 2, float(np.linalg.norm(hi - lo) / 2)
    d = rng.normal(size=(150, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    o = c + 2 * r * d
    tgt = lo + rng.random((150, 3)) * (hi - lo)
    dirs = tgt - o
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    rays = np.hstack([o, dirs]).astype(np.float32)
    ans = scene.cast_rays(rays)
    hits = check_against_reference(
        scene, rays, v.astype(np.float64), f.astype(np.int64), ans, tol_uv=3e-4
    )
    assert hits > 30


def test_hand_checked_quad_and_sphere():
    scene = raypick.Scene()
    quad = scene.add_triangles(
        [[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], [[0, 1, 2], [0, 2, 3]], name="quad"
    )
    ball = scene.add_spheres([[0, 0, -5]], [1.0], name="ball")
    assert (quad, ball) == (0, 1)
    rays = np.array(
        [
            [0.5, -0.5, 3, 0, 0, -1],  # quad, triangle 0 at t = 3
            [-0.5, 0.5, 3, 0, 0, -2],  # quad, triangle 1; t in units of |d| = 2
            [3, 3, 3, 0, 0, -1],  # nothing
            [0, 0, -2, 0, 0, -1],  # between quad and ball: the ball at z = -4, t = 2
        ],
        np.float32,
    )
    ans = scene.cast_rays(rays)
    np.testing.assert_array_equal(ans["t_hit"], np.array([3, 1.5, np.inf, 2], np.float32))
    np.testing.assert_array_equal(ans["geometry_ids"], [0, 0, INVALID, 1])
    np.testing.assert_array_equal(ans["primitive_ids"], [0, 1, INVALID, 0])
    np.testing.assert_allclose(ans["primitive_normals"], [[0, 0, 1], [0, 0, 1], [0, 0, 0], [0, 0, 1]])
    # Triangle 0 = (v0, v1, v2) = (-1,-1), (1,-1), (1,1): (0.5, -0.5) = 0.25 v0 + 0.5 v1 + 0.25 v2.
    np.testing.assert_allclose(ans["primitive_uvs"][0], [0.5, 0.25])
    assert scene.geometry_name(quad) == "quad" and scene.geometry_name(ball) == "ball"
    assert scene.num_geometries == 2 and len(scene) == 2 and scene.num_triangles == 2
    np.testing.assert_array_equal(scene.bounds(), [[-1, -1, -6], [1, 1, 0]])


def test_occlusion_equals_finite_t_and_respects_range(rng):
    v, f = random_soup(rng, n_tris=40)
    scene = raypick.Scene()
    scene.add_triangles(v, f)
    rays = random_rays(rng, 300)
    t = scene.cast_rays(rays)["t_hit"]
    occ = scene.test_occlusions(rays)
    assert occ.dtype == np.bool_
    np.testing.assert_array_equal(occ, np.isfinite(t))
    # A window that ends before the closest hit sees nothing; one that contains it sees it.
    hit = np.isfinite(t)
    mid = float(np.median(t[hit]))
    occ_short = scene.test_occlusions(rays, tnear=0.0, tfar=mid)
    assert np.all(occ_short[t <= mid * 0.999])
    assert not np.any(occ_short[~hit])
    assert np.all(scene.test_occlusions(rays, tnear=0.0, tfar=0.0) == False)  # noqa: E712


def test_camera_rows_answer_like_single_rays(rng):
    # Neighbouring pixels of one eye are cast as packets by the engine: each answer must be the
    # one the ray gets when cast alone, for closest hits and for occlusion with a range.
    v, f = random_soup(rng, n_tris=400)
    scene = raypick.Scene()
    scene.add_triangles(v, f)
    w, h = 45, 30
    xs, ys = np.meshgrid(np.linspace(-0.35, 0.35, w), np.linspace(-0.3, 0.3, h))
    dirs = np.stack([xs, ys, -np.ones_like(xs)], -1).reshape(-1, 3)
    rays = np.hstack([np.broadcast_to([0.1, 0.2, 4.0], dirs.shape), dirs]).astype(np.float32)
    batch = scene.cast_rays(rays)
    alone = [scene.cast_rays(rays[i : i + 1]) for i in range(len(rays))]
    for key in ("t_hit", "primitive_ids", "primitive_uvs", "primitive_normals"):
        np.testing.assert_array_equal(batch[key], np.concatenate([a[key] for a in alone]))
    assert np.isfinite(batch["t_hit"]).sum() > len(rays) // 10
    tfar = float(np.median(batch["t_hit"][np.isfinite(batch["t_hit"])]))
    occ = scene.test_occlusions(rays, tnear=0.5, tfar=tfar)
    occ_alone = [scene.test_occlusions(rays[i : i + 1], tnear=0.5, tfar=tfar)[0] for i in range(len(rays))]
    np.testing.assert_array_equal(occ, occ_alone)


def test_count_intersections_parity_on_a_closed_cube(rng):
    v, f = cube(half=1.0)
    scene = raypick.Scene()
    scene.add_triangles(v, f)
    # From inside: one crossing in every direction, including exactly through edges and corners.
    dirs = np.vstack([rng.normal(size=(200, 3)), [[1, 1, 0], [1, 1, 1], [0, 1, 0], [-1, 0, -1]]])
    inside = np.hstack([np.zeros_like(dirs), dirs]).astype(np.float32)
    np.testing.assert_array_equal(scene.count_intersections(inside), 1)
    # From outside towards the centre: two crossings, through faces, edges and corners alike.
    o = 5 * dirs / np.linalg.norm(dirs, axis=1, keepdims=True)
    outside = np.hstack([o, -o]).astype(np.float32)
    counts = scene.count_intersections(outside)
    assert counts.dtype == np.int32
    np.testing.assert_array_equal(counts, 2)


def test_list_intersections_agrees_with_count_and_cast(rng):
    v, f = random_soup(rng, n_tris=50)
    scene = raypick.Scene()
    scene.add_triangles(v, f)
    scene.add_spheres([[0, 0, 0]], [0.5])
    rays = random_rays(rng, 200)
    lst = scene.list_intersections(rays)
    counts = scene.count_intersections(rays)
    splits = lst["ray_splits"]
    assert splits.shape == (len(rays) + 1,) and splits[0] == 0
    np.testing.assert_array_equal(np.diff(splits), counts)
    np.testing.assert_array_equal(lst["ray_ids"], np.repeat(np.arange(len(rays)), counts))
    first = scene.cast_rays(rays)
    for i in range(len(rays)):
        a, b = splits[i], splits[i + 1]
        ts = lst["t_hit"][a:b]
        assert np.all(np.diff(ts) >= 0)
        if b > a:
            # The first listed hit is the closest; edge rules may differ only on exact edge hits.
            assert ts[0] == first["t_hit"][i]
        else:
            assert np.isinf(first["t_hit"][i])
    for key, tail in [("primitive_uvs", (2,)), ("primitive_normals", (3,))]:
        assert lst[key].shape == (splits[-1],) + tail


def test_trimesh_helpers(rng):
    v, f = random_soup(rng, n_tris=50)
    scene = raypick.Scene()
    scene.add_triangles(v, f)
    rays = random_rays(rng, 200)
    o, d = rays[:, :3], rays[:, 3:]
    ans = scene.cast_rays(rays)
    first = scene.intersects_first(o, d)
    assert first.dtype == np.int64
    expected = np.where(ans["primitive_ids"] == INVALID, -1, ans["primitive_ids"].astype(np.int64))
    np.testing.assert_array_equal(first, expected)
    np.testing.assert_array_equal(scene.intersects_any(o, d), first >= 0)
    loc, index_ray, index_tri = scene.intersects_location(o, d, multiple_hits=False)
    hit = np.flatnonzero(first >= 0)
    np.testing.assert_array_equal(index_ray, hit)
    np.testing.assert_array_equal(index_tri, first[hit])
    np.testing.assert_allclose(loc, o[hit] + ans["t_hit"][hit, None] * d[hit], atol=1e-5)
    loc_all, ray_all, tri_all = scene.intersects_location(o, d)
    assert loc.dtype == np.float64 and loc_all.shape == (len(ray_all), 3)
    np.testing.assert_array_equal(np.bincount(ray_all, minlength=len(rays)), scene.count_intersections(rays))
    # Every listed location is on its triangle's plane.
    vv = v.astype(np.float32).astype(np.float64)
    n = np.cross(vv[f[tri_all, 1]] - vv[f[tri_all, 0]], vv[f[tri_all, 2]] - vv[f[tri_all, 0]])
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    dist = np.einsum("ij,ij->i", loc_all - vv[f[tri_all, 0]], n)
    assert np.abs(dist).max() < 1e-5


def test_nthreads_do_not_change_results(rng):
    v, f = random_soup(rng, n_tris=100)
    scene = raypick.Scene()
    scene.add_triangles(v, f)
    rays = random_rays(rng, 3000)
    a = scene.cast_rays(rays, nthreads=0)
    b = scene.cast_rays(rays, nthreads=1)
    c = scene.cast_rays(rays, nthreads=3)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
        np.testing.assert_array_equal(a[key], c[key])
    np.testing.assert_array_equal(scene.test_occlusions(rays, nthreads=1), scene.test_occlusions(rays))
    np.testing.assert_array_equal(
        scene.count_intersections(rays, nthreads=2), scene.count_intersections(rays)
    )


def test_threads_share_a_scene(rng):
    from concurrent.futures import ThreadPoolExecutor

    v, f = random_soup(rng, n_tris=200)
    scene = raypick.Scene()
    scene.add_triangles(v, f)
    rays = random_rays(rng, 20000)
    ref = scene.cast_rays(rays)["t_hit"]
    with ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(lambda _: scene.cast_rays(rays, nthreads=1)["t_hit"], range(8)))
    for out in outs:
        np.testing.assert_array_equal(out, ref)


def test_scene_rebuilds_after_a_change():
    scene = raypick.Scene()
    scene.add_triangles([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    ray = [0.2, 0.2, 5, 0, 0, -1]
    # The watertight kernel's t is within a few ulps (Woop et al. 2013, section 4).
    assert scene.cast_rays(ray)["t_hit"] == pytest.approx(5, rel=4e-7)
    scene.add_triangles([[0, 0, 2], [1, 0, 2], [0, 1, 2]], [[0, 1, 2]])
    ans = scene.cast_rays(ray)
    assert ans["t_hit"] == pytest.approx(3, rel=4e-7) and ans["geometry_ids"] == 1
    scene.commit()
    assert scene.cast_rays(ray)["t_hit"] == pytest.approx(3, rel=4e-7)


def test_answer_arrays_reused_from_freed_ones_hold_only_new_answers():
    """cast_rays takes its arrays' memory from arrays of the same size that numpy freed: a miss must
    still read t = inf, ids INVALID and zero uvs and normals, and arrays still alive must not
    change when a later cast runs."""
    scene = raypick.Scene()
    scene.add_triangles([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], [[0, 1, 2], [0, 2, 3]])
    n = 4096
    hits = np.tile(np.array([0.5, -0.5, 3, 0, 0, -1], np.float32), (n, 1))
    misses = hits.copy()
    misses[:, 0] += 10
    kept = scene.cast_rays(hits)
    for _ in range(3):
        del_me = scene.cast_rays(hits)  # freed at once: its memory goes back for reuse
        np.testing.assert_allclose(del_me["t_hit"], 3, rtol=4e-7)
        del del_me
        ans = scene.cast_rays(misses)
        assert np.all(np.isinf(ans["t_hit"]))
        assert np.all(ans["geometry_ids"] == INVALID) and np.all(ans["primitive_ids"] == INVALID)
        assert np.all(ans["instance_ids"] == INVALID)
        assert not ans["primitive_uvs"].any() and not ans["primitive_normals"].any()
        del ans
    np.testing.assert_array_equal(kept["t_hit"], np.full(n, 3, np.float32))
    np.testing.assert_allclose(kept["primitive_normals"], np.tile([0, 0, 1], (n, 1)))
    np.testing.assert_allclose(kept["primitive_uvs"], np.tile([0.5, 0.25], (n, 1)))
    # The arrays own their memory for as long as numpy needs it (views outlive the dict).
    view = scene.cast_rays(hits)["t_hit"][::2]
    scene.cast_rays(misses)
    assert np.all(view == 3) and view.base is not None


def test_empty_scene_misses_everything():
    scene = raypick.Scene()
    ans = scene.cast_rays(np.zeros((3, 6), np.float32) + [0, 0, 0, 0, 0, 1])
    assert np.all(np.isinf(ans["t_hit"])) and np.all(ans["geometry_ids"] == INVALID)
    assert scene.count_intersections([0, 0, 0, 1, 0, 0]) == 0


def test_nan_and_zero_direction_rays_miss():
    scene = raypick.Scene()
    scene.add_triangles([[-1, -1, 0], [1, -1, 0], [0, 1, 0]], [[0, 1, 2]])
    rays = np.array([[np.nan, 0, 1, 0, 0, -1], [0, 0, 1, 0, 0, 0], [0, 0, 1, np.inf, 0, -1]], np.float32)
    ans = scene.cast_rays(rays)
    assert np.all(np.isinf(ans["t_hit"]))
    assert not scene.test_occlusions(rays).any()


def test_casting_releases_the_gil(rng):
    """While one thread casts a long batch, another keeps running Python code: the largest pause
    of the second thread is a small part of the cast (with the GIL held it would be all of it)."""
    import threading
    import time

    v, f = random_soup(rng, n_tris=2000)
    scene = raypick.Scene()
    scene.add_triangles(v, f)
    scene.commit()
    rays = random_rays(rng, 20000)
    t0 = time.perf_counter()
    scene.cast_rays(rays, nthreads=1)
    once = time.perf_counter() - t0
    reps = max(1, int(np.ceil(0.4 / max(once, 1e-4))))
    big = np.tile(rays, (reps, 1))  # a cast of about 0.4 s
    span = {}

    def cast():
        span["start"] = time.perf_counter()
        scene.cast_rays(big, nthreads=1)
        span["end"] = time.perf_counter()

    stamps = []
    worker = threading.Thread(target=cast)
    worker.start()
    while worker.is_alive():
        stamps.append(time.perf_counter())
        time.sleep(0.001)
    worker.join()
    duration = span["end"] - span["start"]
    inside = np.array([s for s in stamps if span["start"] <= s <= span["end"]])
    assert len(inside) > 10, (len(inside), duration)
    gaps = np.diff(np.concatenate([[span["start"]], inside, [span["end"]]]))
    assert gaps.max() < 0.5 * duration, (gaps.max(), duration)


def test_rays_rewritten_during_a_cast_give_answers_of_some_ray(rng):
    """A C-contiguous float32 ray array is read in place while the GIL is released, so another
    Python thread can rewrite it during the cast. Each answer is then that of some ray made of old
    and new values: here the two versions differ only in origin x, between two values that both
    miss or both hit the same triangle, so every answer is still exact."""
    import threading

    scene = raypick.Scene()
    scene.add_triangles([[-10, -10, 0], [10, -10, 0], [0, 10, 0]], [[0, 1, 2]])
    n = 200_000
    rays = np.zeros((n, 6), np.float32)
    rays[:, 0] = rng.uniform(-1, 1, n)
    rays[:, 1] = rng.uniform(-1, 1, n)
    rays[:, 2] = 5.0
    rays[:, 5] = -1.0
    rays[1::2, 0] += 50.0  # odd rays pass beside the triangle whatever their x
    stop = threading.Event()

    def rewrite():
        flip = np.float32(0.5)
        while not stop.is_set():
            rays[::2, 0] += flip  # even rays stay over the triangle
            flip = -flip

    writer = threading.Thread(target=rewrite)
    writer.start()
    try:
        for _ in range(5):
            ans = scene.cast_rays(rays, nthreads=2)
            occ = scene.test_occlusions(rays, nthreads=2)
            np.testing.assert_allclose(ans["t_hit"][::2], 5.0, rtol=1e-6)
            assert np.all(np.isinf(ans["t_hit"][1::2]))
            assert occ[::2].all() and not occ[1::2].any()
    finally:
        stop.set()
        writer.join()


def test_threads_racing_on_the_first_build_do_not_deadlock(rng):
    """Several threads query a scene that is not built yet: one builds (detached from Python,
    holding the scene's lock) while the others wait for the lock without holding the GIL."""
    import threading

    for attempt in range(3):
        v, f = random_soup(rng, n_tris=30000)
        scene = raypick.Scene()
        scene.add_triangles(v, f)
        rays = random_rays(rng, 2000)
        results = [None] * 6

        def query(k):
            if k % 3 == 2:
                results[k] = (len(scene), scene.num_triangles)
            else:
                results[k] = scene.cast_rays(rays, nthreads=1)["t_hit"]

        workers = [threading.Thread(target=query, args=(k,), daemon=True) for k in range(6)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(timeout=120)
        assert not any(w.is_alive() for w in workers), "threads deadlocked"
        ref = scene.cast_rays(rays)["t_hit"]
        for k, r in enumerate(results):
            if k % 3 == 2:
                assert r == (1, 30000)
            else:
                np.testing.assert_array_equal(r, ref)
