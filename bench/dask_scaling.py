"""raypick.dask on a local cluster: rays per second on 1 and 2 worker processes against the
in-process cast, and the cost of one chunk's round trip, medians of several runs.

    .venv/bin/python bench/dask_scaling.py [--rays 2000000] [--runs 5]

Prints a Markdown table for BENCHMARKS.md. The bunny's incoherent shared ray set (tools/make_rays.py,
seed 7) is tiled to the requested count; each worker has one Dask thread and casts a chunk on all
the cores it is given (nthreads=0).
"""

import argparse
import os
import pathlib
import platform
import statistics
import sys
import tempfile
import time

import numpy as np

import dask.array as da
import distributed

import raypick
import raypick.dask as rdask

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def bunny_rays(n):
    sys.path.insert(0, str(SHARED / "tools"))
    import make_rays

    with tempfile.TemporaryDirectory() as tmp:
        make_rays.main(str(SHARED / "data/obj/stanford-bunny.obj"), f"{tmp}/b", n=1_000_000, res=64)
        rays = np.fromfile(f"{tmp}/b.incoherent.rays", "<f4").reshape(-1, 6)
    return np.resize(rays, (n, 6))


def median_time(f, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rays", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--chunk", type=int, default=250_000)
    args = ap.parse_args()
    if raypick._raypick.__debug_build__:
        print("warning: raypick is a debug build; build with RAYPICK_PY_RELEASE=1", file=sys.stderr)
    scene = raypick.load(SHARED / "data/obj/stanford-bunny.obj")
    scene.commit()
    rays = bunny_rays(args.rays)
    cores = os.cpu_count()
    rows = []
    t_local = median_time(lambda: scene.cast_rays(rays), args.runs)
    rows.append(("in process", "-", args.rays / t_local / 1e6, "-"))
    for workers in (1, 2):
        with distributed.LocalCluster(n_workers=workers, processes=True, threads_per_worker=1,
                                      dashboard_address=None) as cluster, \
                distributed.Client(cluster) as client:
            # The rays live on the workers (as they would, read from storage there): the timing
            # is the casts and the answers' trip back, not the upload of the input.
            d = client.persist(da.from_array(rays, chunks=(args.chunk, 6)))
            distributed.wait(d)
            t_hit = rdask.cast_rays(scene, d)["t_hit"]
            t_hit.compute()  # the scene reaches the workers
            t = median_time(lambda: t_hit.compute(), args.runs)
            # Per-chunk overhead: many tiny chunks, whose casts cost next to nothing.
            tiny = client.persist(da.from_array(rays[:20_000], chunks=(100, 6)))
            distributed.wait(tiny)
            small = rdask.cast_rays(scene, tiny)["t_hit"]
            small.compute()
            t_small = median_time(lambda: small.compute(), args.runs)
            per_chunk = (t_small - 20_000 / (args.rays / t)) / 200
            rows.append((f"{workers} worker{'s' if workers > 1 else ''}", args.chunk,
                         args.rays / t / 1e6, per_chunk * 1e3))
    print(f"host: {cpu_model()}, {cores} cores; raypick {raypick.__version__}; {args.rays:,} bunny "
          f"incoherent rays; median of {args.runs}")
    print()
    print("| where | rays per chunk | Mrays/s | overhead per chunk (ms) |")
    print("|---|---|---|---|")
    for where, chunk, rate, over in rows:
        print(f"| {where} | {chunk if chunk == '-' else f'{chunk:,}'} | {rate:.2f} | "
              f"{over if over == '-' else f'{over:.2f}'} |")


if __name__ == "__main__":
    main()
