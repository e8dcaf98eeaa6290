#!/usr/bin/env python3
"""Point queries: raypick next to Open3D and trimesh, in one process, on the shared models.

    .venv/bin/python bench/points.py                    # 1M points per set (the record)
    .venv/bin/python bench/points.py --points 100000    # fewer (development, slow engines)

What it does:
- loads the bunny and the conference room (../shared/data) with raypick and gives every engine
  the same float32 vertices and triangles;
- makes two sets of query points per model, fixed seed: uniform in the bounding box grown by 10 %
  (each side by 5 % of the extent), and near the surface (a random point of a random triangle,
  chosen by area, moved along a random direction by up to 1 % of the box diagonal);
- times closest points (Open3D `compute_closest_points`, raypick `compute_closest_points`) and
  signed distance (`compute_signed_distance`, Open3D with its default 1 sample, raypick with its
  default parity test), with 1 thread and with all: a warm-up, then --repeat rounds, the engines
  interleaved within each round (every other round in reverse order), only the call timed;
  trimesh's `proximity.closest_point` is timed once on --trimesh-points points (it is ~1000×
  slower) for scale;
- checks the answers: the distances of raypick and Open3D agree to 1e-5 of the model's size
  (equidistant triangles may differ in id, not in distance), and the share of points where the
  signs of the signed distances agree;
- prints Mpoints/s per engine and the ratios raypick / Open3D, each the median over the rounds of
  that round's ratio (the engines of a round ran moments apart, so a slower spell cancels).
"""

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATA = REPO.parent / "shared" / "data"
MODELS = {"bunny": DATA / "obj" / "stanford-bunny.obj", "conference": DATA / "scenes" / "conference.obj"}
ALL = os.cpu_count() or 1


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def load_soup(raypick, path):
    """All meshes of an OBJ as one float32 vertex array and one int64 triangle array."""
    loaded = raypick.load(str(path))
    parts = [loaded.mesh_arrays(g) for g in range(len(loaded)) if loaded.geometry_kind(g) == "mesh"]
    offsets = np.cumsum([0] + [len(pv) for pv, _ in parts])
    v = np.ascontiguousarray(np.concatenate([pv for pv, _ in parts]), dtype=np.float32)
    f = np.concatenate([pf.astype(np.int64) + o for (_, pf), o in zip(parts, offsets)])
    return v, f


def point_sets(v, f, n, seed=34):
    rng = np.random.default_rng(seed)
    lo, hi = v.min(axis=0).astype(np.float64), v.max(axis=0).astype(np.float64)
    ext = hi - lo
    box = rng.uniform(lo - 0.05 * ext, hi + 0.05 * ext, (n, 3))
    tri = v[f].astype(np.float64)
    area = 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
    pick = rng.choice(len(f), n, p=area / area.sum())
    r1, r2 = rng.random(n), rng.random(n)
    s = np.sqrt(r1)
    w = np.stack([1 - s, s * (1 - r2), s * r2], axis=1)
    on = np.einsum("nk,nkd->nd", w, tri[pick])
    d = rng.normal(size=(n, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    near = on + d * rng.uniform(0, 0.01 * np.linalg.norm(ext), (n, 1))
    return {"box+10%": box.astype(np.float32), "near": near.astype(np.float32)}


def round_ratio(mine, theirs):
    return statistics.median(t / m for m, t in zip(mine, theirs))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--points", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5, help="timed rounds per cell (median)")
    ap.add_argument("--trimesh-points", type=int, default=2000)
    ap.add_argument("--models", default="bunny,conference")
    args = ap.parse_args()

    import raypick
    import open3d as o3d

    try:
        import trimesh
    except ImportError:
        trimesh = None

    threads = sorted({1, ALL})
    rows, checks = [], []
    for model in args.models.split(","):
        v, f = load_soup(raypick, MODELS[model])
        scene = raypick.Scene()
        scene.add_triangles(v, f)
        scene.commit()
        o3s = o3d.t.geometry.RaycastingScene()
        o3s.add_triangles(o3d.core.Tensor(v), o3d.core.Tensor(f.astype(np.uint32)))
        size = float(np.linalg.norm(v.max(axis=0) - v.min(axis=0)))
        for sname, pts in point_sets(v, f, args.points).items():
            pts_o3d = o3d.core.Tensor(pts)
            calls = {
                "closest": (
                    lambda th: scene.compute_closest_points(pts, nthreads=th),
                    lambda th: o3s.compute_closest_points(pts_o3d, nthreads=th),
                ),
                "signed": (
                    lambda th: scene.compute_signed_distance(pts, nthreads=th),
                    lambda th: o3s.compute_signed_distance(pts_o3d, nthreads=th),
                ),
            }
            for q, (mine, theirs) in calls.items():
                for th in threads:
                    a, b = mine(th), theirs(th)  # warm-up, and the answers to check
                    if q == "closest":
                        d_mine = np.linalg.norm(a["points"].astype(np.float64) - pts, axis=1)
                        d_theirs = np.linalg.norm(b["points"].numpy().astype(np.float64) - pts, axis=1)
                        bad = int((np.abs(d_mine - d_theirs) > 1e-5 * size).sum())
                        checks.append(f"{model} {sname} closest {th}T: {bad} of {len(pts)} distances differ by > 1e-5 of the size")
                    else:
                        same = float((np.sign(a) == np.sign(b.numpy())).mean())
                        checks.append(f"{model} {sname} signed {th}T: signs agree on {100 * same:.2f} %")
                    tm, tt = [], []
                    for r in range(args.repeat):
                        order = [(mine, tm), (theirs, tt)]
                        for fn, acc in order if r % 2 == 0 else order[::-1]:
                            t0 = time.perf_counter()
                            fn(th)
                            acc.append(time.perf_counter() - t0)
                    n = len(pts)
                    rows.append((model, sname, q, th, n / statistics.median(tm) / 1e6, n / statistics.median(tt) / 1e6, round_ratio(tm, tt)))
                    log(f"{model:10s} {sname:8s} {q:8s} {th}T raypick {rows[-1][4]:8.3f} Open3D {rows[-1][5]:8.3f} Mpts/s  x{rows[-1][6]:.1f}")
        if trimesh is not None:
            mesh = trimesh.Trimesh(vertices=v, faces=f, process=False)
            sub = point_sets(v, f, args.trimesh_points)["box+10%"]
            t0 = time.perf_counter()
            trimesh.proximity.closest_point(mesh, sub)
            rate = len(sub) / (time.perf_counter() - t0) / 1e6
            log(f"{model:10s} trimesh proximity.closest_point: {rate:.5f} Mpts/s ({len(sub)} points)")
            rows.append((model, "box+10%", "trimesh closest", 1, None, rate, None))

    cpu = next((l.split(":", 1)[1].strip() for l in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines() if l.startswith("Model name")), platform.processor())
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"Point queries, {datetime.date.today()}, commit {commit}, {cpu}, {ALL} threads; "
          f"raypick {raypick.__version__ if hasattr(raypick, '__version__') else ''}, Open3D {o3d.__version__}"
          f"{', trimesh ' + trimesh.__version__ if trimesh else ''}; {args.points:,} points per set, "
          f"median of {args.repeat} interleaved rounds.")
    print()
    print("| model | points | query | threads | raypick Mpts/s | Open3D Mpts/s | raypick / Open3D |")
    print("|---|---|---|---:|---:|---:|---:|")
    for model, sname, q, th, mine, theirs, ratio in rows:
        if mine is None:
            print(f"| {model} | {sname} | {q} | {th} | – | {theirs:.5f} (trimesh) | – |")
        else:
            print(f"| {model} | {sname} | {q} | {th} | {mine:.3f} | {theirs:.3f} | {ratio:.1f}× |")
    print()
    for c in checks:
        print(f"- {c}")


if __name__ == "__main__":
    main()
