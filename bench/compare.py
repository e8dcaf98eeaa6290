#!/usr/bin/env python3
"""raypick next to Embree (embreex), Open3D and trimesh, in one process, on the shared workload.

    .venv/bin/python bench/compare.py                 # the full 1M-ray sets
    .venv/bin/python bench/compare.py --rays 100000   # an evenly spaced subset (development)
    .venv/bin/python bench/compare.py --build         # first build raypick in release (maturin)

What it does (see ../shared/BENCHMARKS.md for the workload):
- installs embreex, open3d and trimesh into this Python if they are missing (pip); an engine whose
  package has no wheel for this Python, or fails to import, is reported and skipped;
- loads ../shared/data/obj/stanford-bunny.obj with raypick and gives every engine the same float32
  vertices and triangles (so triangle ids agree);
- makes the two shared ray sets with ../shared/tools/make_rays.py (cached in bench/out/);
- times closest hit and occlusion (any hit) per engine: warm-up, then the median of --repeat runs
  (≥ 5), the engines interleaved run by run (every other round in reverse order) so that changes
  of machine load hit all alike, with 1
  thread and with all threads where the engine allows it (embreex has no thread setting: its
  all-threads rows split the batch over threads by hand and join the answers, as in the anchors);
  only the engine's call is timed (the cast alone): the rays are put into each engine's input
  format before (embreex: two (N, 3) arrays; Open3D: a tensor) and its answers converted for the
  agreement check after;
- checks that all engines agree with raypick on hit/miss and on the nearest triangle (rays that
  differ are checked in f64: a ray grazing an edge may go either way);
- prints the Mrays/s table, build times, memory per triangle (the resident memory a fresh process
  keeps for each engine's scene, median of three processes: see `probe_memory`) and the ratios
  raypick / engine, each the median over the rounds of that round's ratio (`round_ratio`).
"""

import argparse
import datetime
import importlib
import os
import platform
import site
import statistics
import subprocess
import sys
import sysconfig
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = REPO.parent / "shared"
MESH = SHARED / "data" / "obj" / "stanford-bunny.obj"
OUT = HERE / "out"
ALL = os.cpu_count() or 1


def rss_bytes():
    """Resident set size of this process (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---- engines ------------------------------------------------------------------------------------


def ensure(module, package):
    """Imports `module`, pip-installing `package` first if it is missing. Returns (module, why_not)."""
    try:
        return importlib.import_module(module), None
    except ModuleNotFoundError:
        pass
    except ImportError as e:  # installed but cannot load (e.g. a missing system library)
        return None, f"import failed: {e}"
    log(f"installing {package} ...")
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", package], capture_output=True, text=True)
    if r.returncode != 0:
        tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["pip failed"]
        return None, f"pip install {package} failed (no wheel for Python {platform.python_version()}?): {tail[0]}"
    importlib.invalidate_caches()
    try:
        return importlib.import_module(module), None
    except ImportError as e:
        return None, f"import failed after install: {e}"


def version_of(dist):
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "?"


def round_ratio(raypick_times, engine_times):
    """Speed of raypick relative to an engine: the median over the interleaved rounds of each
    round's time ratio (paired, so that drifts of the machine's speed between rounds cancel)."""
    return statistics.median(e / r for r, e in zip(raypick_times, engine_times))


def split_run(fn, o, d, threads):
    """Runs fn(o, d) over `threads` contiguous chunks in threads and concatenates."""
    if threads <= 1:
        return fn(o, d)
    bounds = np.linspace(0, len(o), threads + 1).astype(int)
    with ThreadPoolExecutor(threads) as pool:
        parts = list(pool.map(lambda k: fn(o[bounds[k]:bounds[k + 1]], d[bounds[k]:bounds[k + 1]]), range(threads)))
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]} if isinstance(parts[0], dict) else np.concatenate(parts)


class Engine:
    """What the benchmark asks of an engine. Only `cast` and `occlude` are timed: the rays are
    put into the engine's input format beforehand (`prepare`) and its answers turned into the
    common (t, triangle id or -1) and hit/miss arrays afterwards (`hits`, `occluded_answer`), so
    the figures are those of the cast alone (../shared/BENCHMARKS.md)."""

    def prepare(self, rays):
        return rays

    def occluded_answer(self, raw):
        return np.asarray(raw, bool)

    def closest(self, rays, threads):
        return self.hits(self.cast(self.prepare(rays), threads))

    def occluded(self, rays, threads):
        return self.occluded_answer(self.occlude(self.prepare(rays), threads))


class Raypick(Engine):
    name = "raypick"

    def __init__(self, raypick, v, f):
        self.rp = raypick
        self.version = raypick.__version__
        t0 = time.perf_counter()
        self.scene = raypick.Scene()
        self.scene.add_triangles(v, f)
        self.scene.commit()
        self.build_ms = (time.perf_counter() - t0) * 1e3
        self.threads = [1, ALL]

    def cast(self, rays, threads):
        return self.scene.cast_rays(rays, nthreads=threads)

    def occlude(self, rays, threads):
        return self.scene.test_occlusions(rays, nthreads=threads)

    def hits(self, a):
        prim = a["primitive_ids"].astype(np.int64)
        prim[prim == self.rp.INVALID_ID] = -1
        return a["t_hit"], prim


class Embree(Engine):
    name = "Embree (embreex)"

    def __init__(self, mod, v, f):
        from embreex import rtcore_scene as rtcs
        from embreex.mesh_construction import TriangleMesh

        self.version = version_of("embreex")
        t0 = time.perf_counter()
        self.scene = rtcs.EmbreeScene()
        TriangleMesh(self.scene, v, f.astype(np.int32))
        self.scene.run(np.zeros((1, 3), np.float32), np.ones((1, 3), np.float32))  # commits
        self.build_ms = (time.perf_counter() - t0) * 1e3
        self.threads = [1, ALL]

    def prepare(self, rays):
        # embreex takes origins and directions as two contiguous (N, 3) arrays.
        return np.ascontiguousarray(rays[:, :3]), np.ascontiguousarray(rays[:, 3:])

    def cast(self, od, threads):
        return split_run(lambda o, d: self.scene.run(o, d, output=1), *od, threads)

    def occlude(self, od, threads):
        return split_run(lambda o, d: self.scene.run(o, d, query="OCCLUDED"), *od, threads)

    def hits(self, r):
        prim = r["primID"].astype(np.int64)
        return np.where(prim >= 0, r["tfar"], np.inf).astype(np.float32), prim

    def occluded_answer(self, r):
        return r >= 0


class Open3D(Engine):
    name = "Open3D RaycastingScene"

    def __init__(self, o3d, v, f):
        self.o3d = o3d
        self.version = o3d.__version__
        t0 = time.perf_counter()
        self.scene = o3d.t.geometry.RaycastingScene()
        self.scene.add_triangles(o3d.core.Tensor(v), o3d.core.Tensor(f.astype(np.uint32)))
        self.scene.cast_rays(o3d.core.Tensor(np.array([[0, 0, 0, 1, 1, 1]], np.float32)))  # commits
        self.build_ms = (time.perf_counter() - t0) * 1e3
        self.threads = [1, ALL]

    def prepare(self, rays):
        return self.o3d.core.Tensor(rays)

    def cast(self, rays, threads):
        return self.scene.cast_rays(rays, nthreads=threads)

    def occlude(self, rays, threads):
        return self.scene.test_occlusions(rays, nthreads=threads)

    def hits(self, a):
        prim = a["primitive_ids"].numpy().astype(np.int64)
        prim[prim == 4294967295] = -1
        return a["t_hit"].numpy(), prim

    def occluded_answer(self, a):
        return a.numpy().astype(bool)


class Trimesh(Engine):
    name = "trimesh ray"

    def __init__(self, trimesh, v, f):
        self.version = trimesh.__version__
        t0 = time.perf_counter()
        mesh = trimesh.Trimesh(vertices=v, faces=f, process=False)
        self.ray = mesh.ray
        self.ray.intersects_first(np.zeros((1, 3)), np.ones((1, 3)))  # builds
        self.build_ms = (time.perf_counter() - t0) * 1e3
        self.name = f"trimesh ray ({type(self.ray).__module__.split('.')[-1]})"
        self.threads = [1]
        self.mesh = mesh

    def prepare(self, rays):
        return rays[:, :3], rays[:, 3:]

    def cast(self, od, threads):
        return self.ray.intersects_first(*od)

    def occlude(self, od, threads):
        return self.ray.intersects_any(*od)

    def hits(self, prim):
        return None, prim.astype(np.int64)


# ---- workload ---------------------------------------------------------------------------------


def ray_sets(n, mesh=MESH):
    OUT.mkdir(parents=True, exist_ok=True)
    prefix = OUT / Path(mesh).stem
    files = {k: Path(f"{prefix}.{k}.rays") for k in ("incoherent", "primary")}
    if not all(p.exists() for p in files.values()):
        sys.path.insert(0, str(SHARED / "tools"))
        import make_rays

        make_rays.main(str(mesh), str(prefix))
    sets = {}
    for k, p in files.items():
        rays = np.fromfile(p, "<f4").reshape(-1, 6)
        if n and n < len(rays):
            rays = rays[np.linspace(0, len(rays) - 1, n).astype(np.int64)]
        sets[k] = np.ascontiguousarray(rays)
    return sets


def f64_margin(rays, v, f, prims):
    """Per ray, how close its hit on its triangle is to an edge, in f64: the smallest barycentric
    (negative: outside) and that edge distance in f32 units in the last place of the hit's scale
    (the larger of t and the hit point's largest coordinate). An f32 kernel decides a point a few
    ulps from an edge either way (its inputs and every step round to that scale), however large
    the barycentric margin: on a sliver triangle far from the ray's origin 1e-4 of a barycentric is
    about two ulps (the conference room has one: 440 units long, 4.6 wide, hit at t ≈ 2248)."""
    bary = np.full(len(rays), np.nan)
    ulps = np.full(len(rays), np.nan)
    for i, (r, k) in enumerate(zip(rays, prims)):
        if k < 0:
            continue
        a, b, c = (v[f[k, j]].astype(np.float64) for j in range(3))
        o, d = r[:3].astype(np.float64), r[3:].astype(np.float64)
        m = np.column_stack([-d, b - a, c - a])
        try:
            t, u, w = np.linalg.solve(m, o - a)
        except np.linalg.LinAlgError:
            continue
        weights = np.array([1 - u - w, u, w])
        bary[i] = weights.min()
        # Distance to the edge opposite vertex j: |weight j| times vertex j's height over it.
        twice_area = np.linalg.norm(np.cross(b - a, c - a))
        edges = [np.linalg.norm(c - b), np.linalg.norm(c - a), np.linalg.norm(b - a)]
        dist = min(abs(wj) * twice_area / e for wj, e in zip(weights, edges) if e > 0)
        scale = max(abs(t), np.abs(o + t * d).max())
        ulps[i] = dist / np.spacing(np.float32(scale))
    return bary, ulps


def agreement(ref_prim, prim, ref_t, t, rays, v, f):
    """Counts of disagreements with raypick, and whether all of them are grazing rays."""
    hit_a, hit_b = ref_prim >= 0, prim >= 0
    hit_diff = np.flatnonzero(hit_a != hit_b)
    tri_diff = np.flatnonzero(hit_a & hit_b & (ref_prim != prim))
    rel_t = np.nan
    if t is not None:
        both = hit_a & hit_b & (ref_prim == prim)
        if both.any():
            rel_t = float(np.max(np.abs(ref_t[both] - t[both]) / np.maximum(np.abs(t[both]), 1e-30)))
    # A disagreement is explained when raypick's or the other engine's triangle is within 1e-4
    # (barycentric) or within 4 f32 ulps (distance, see `f64_margin`) of an edge in f64, or the two
    # hits are at the same t (shared edge, overlap).
    diff = np.concatenate([hit_diff, tri_diff])[:2000]
    grazing = 0
    if len(diff):
        close = np.zeros(len(diff), bool)
        for prims in (ref_prim, prim):
            bary, ulps = f64_margin(rays[diff], v, f, prims[diff])
            close |= np.abs(np.nan_to_num(bary, nan=1.0)) < 1e-4
            close |= np.nan_to_num(ulps, nan=np.inf) < 4
        if t is not None:
            close |= np.isclose(ref_t[diff], t[diff], rtol=1e-5)
        grazing = int(close.sum())
    return len(hit_diff), len(tri_diff), grazing, len(diff), rel_t


# ---- memory -------------------------------------------------------------------------------------

MEMORY_PROBES = 3


def builders(raypick, args):
    """Per engine key: how to import its module, and its class."""
    def get(module):
        if args.no_install:
            return importlib.import_module(module), None
        return ensure(module, module)

    return {
        "raypick": (lambda: (raypick, None), Raypick),
        "embree": (lambda: get("embreex"), Embree),
        "open3d": (lambda: get("open3d"), Open3D),
        "trimesh": (lambda: get("trimesh"), Trimesh),
    }


def load_soup(raypick, mesh):
    """All meshes of an OBJ as one float32 vertex array and one int64 triangle array."""
    loaded = raypick.load(mesh)
    parts = [loaded.mesh_arrays(g) for g in range(len(loaded)) if loaded.geometry_kind(g) == "mesh"]
    offsets = np.cumsum([0] + [len(pv) for pv, _ in parts])
    v = np.ascontiguousarray(np.concatenate([pv for pv, _ in parts]))
    f = np.concatenate([pf.astype(np.int64) + o for (_, pf), o in zip(parts, offsets)])
    return v, f


def release_free_memory():
    """Hands the C allocator's free memory back to the system (glibc's malloc_trim), so that the
    resident size counts live memory, not what earlier frees left in the heap."""
    import ctypes
    import gc

    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: the estimate keeps the allocator's slack
        pass


def probe_memory(builder, v, f):
    """Resident memory the engine's scene of (v, f) keeps, per triangle: measured around the build
    with the allocator's free memory released before and after, once a one-triangle build has
    loaded the engine's libraries, lazy imports and thread pools."""
    get, cls = builder
    mod, _ = get()
    cls(mod, v[:3].copy(), np.array([[0, 1, 2]], np.int64))
    release_free_memory()
    rss0 = rss_bytes()
    engine = cls(mod, v, f)
    release_free_memory()
    grown = rss_bytes() - rss0
    del engine
    return grown / len(f)


# ---- main ---------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rays", type=int, default=0, help="use N evenly spaced rays of each set (default: all)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per cell (median; >= 5 for the record)")
    ap.add_argument("--build", action="store_true", help="build and install raypick in release first (maturin)")
    ap.add_argument("--no-install", action="store_true", help="do not pip-install missing engines")
    ap.add_argument("--engines", default="raypick,embree,open3d,trimesh")
    ap.add_argument("--mesh", type=Path, default=MESH, help="OBJ to cast against (all its meshes as one soup; default: the bunny)")
    ap.add_argument("--probe-memory", metavar="ENGINE", help=argparse.SUPPRESS)  # internal: one memory probe
    args = ap.parse_args()

    if args.build:
        subprocess.run(
            [str(Path(sys.executable).parent / "maturin"), "develop", "--release", "-m", str(REPO / "crates/raypick-py/Cargo.toml")],
            check=True,
        )
        # `maturin develop` installs an editable package through a .pth file, which Python reads
        # only at start-up: read it now, or a first install cannot be imported by this process.
        site.addsitedir(sysconfig.get_paths()["purelib"])
        importlib.invalidate_caches()
    import raypick

    if getattr(raypick._raypick, "__debug_build__", False):
        log("WARNING: raypick is a debug build; figures are not representative (use --build)")

    v, f = load_soup(raypick, args.mesh)
    if args.probe_memory:
        print(f"{probe_memory(builders(raypick, args)[args.probe_memory], v, f):.1f}")
        return
    sets = ray_sets(args.rays, args.mesh)
    log(f"{args.mesh.name}: {len(v)} vertices, {len(f)} triangles; " + ", ".join(f"{len(r)} {k}" for k, r in sets.items()))

    wanted = args.engines.split(",")
    engines, skipped = [], []
    for key in wanted:
        get, cls = builders(raypick, args)[key]
        try:
            mod, why = get()
        except ImportError as e:
            mod, why = None, str(e)
        if mod is None:
            skipped.append((key, why))
            log(f"skipping {key}: {why}")
            continue
        try:
            engine = cls(mod, v, f)
            engine.key = key
            engines.append(engine)
        except Exception as e:  # an engine that cannot build this mesh is reported, not fatal
            skipped.append((key, f"{type(e).__name__}: {e}"))

    # Interleaved: for each cell (query, set, threads) every engine runs once per round, so a change
    # of machine load during the run hits all engines alike and the ratios stay meaningful.
    results = {}  # (engine, query, set, threads) -> the rounds' times in seconds
    answers = {}  # (engine, set) -> (closest-hit (t, prim), occlusion)
    for sname, rays in sets.items():
        inputs = {e.name: e.prepare(rays) for e in engines}
        for e in engines:
            answers[(e.name, sname)] = (e.closest(rays, ALL if ALL in e.threads else 1), e.occluded(rays, e.threads[-1]))
        for th in sorted({t for e in engines for t in e.threads}):
            for q in ("closest", "occluded"):
                cell = [e for e in engines if th in e.threads]
                times = {e.name: [] for e in cell}
                call = {e.name: getattr(e, "cast" if q == "closest" else "occlude") for e in cell}
                for e in cell:  # warm-up
                    call[e.name](inputs[e.name], th)
                for r in range(args.repeat):
                    # Every other round in reverse order, so that no engine always runs first.
                    for e in cell if r % 2 == 0 else cell[::-1]:
                        t0 = time.perf_counter()
                        call[e.name](inputs[e.name], th)
                        times[e.name].append(time.perf_counter() - t0)
                for e in cell:
                    ts = times[e.name]
                    results[(e.name, q, sname, th)] = ts
                    log(f"{e.name:34s} {q:8s} {sname:10s} {th}T: {len(rays) / statistics.median(ts) / 1e6:7.2f} Mrays/s")

    # Memory: each engine in fresh processes (one engine's freed memory would serve the next).
    memory = {}
    for e in engines:
        probes = []
        for _ in range(MEMORY_PROBES):
            cmd = [sys.executable, __file__, "--probe-memory", e.key, "--mesh", str(args.mesh), "--no-install"]
            out = subprocess.run(cmd, capture_output=True, text=True)
            try:
                probes.append(float(out.stdout.split()[-1]))
            except (IndexError, ValueError):
                log(f"memory probe of {e.name} failed: {out.stderr.strip()[-200:]}")
        memory[e.name] = f"{statistics.median(probes):.0f}" if probes else "?"
        log(f"{e.name:34s} memory growth per triangle: {' '.join(f'{x:.1f}' for x in probes)}")

    # ---- report ----
    lines = []
    p = lines.append
    p(f"Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC on {platform.machine()}, "
      f"{ALL} cores ({platform.processor() or platform.platform()}), Python {platform.python_version()}, numpy {np.__version__}; "
      f"{len(f)} triangles; {', '.join(f'{len(r):,} {k}' for k, r in sets.items())} rays; median of {args.repeat} interleaved runs after a warm-up.")
    p("")
    cols = [(q, s, t) for q in ("closest", "occluded") for t in (1, ALL) for s in sets]
    head = "| engine | version | " + " | ".join(f"{'closest' if q == 'closest' else 'any-hit'} {s} {t}T" for q, s, t in cols) + " | build ms | memory B/tri |"
    p(head)
    p("|" + "---|" * 2 + "---:|" * (len(cols) + 2))
    for e in engines:
        cells = []
        for q, s, t in cols:
            r = results.get((e.name, q, s, t))
            cells.append("–" if r is None else f"{len(sets[s]) / statistics.median(r) / 1e6:.2f}")
        p(f"| {e.name} | {e.version} | " + " | ".join(cells) + f" | {e.build_ms:.0f} | {memory[e.name]} |")
    p("")
    p("memory B/tri: resident memory a fresh Python process keeps for the engine's scene (its copy of the mesh")
    p(f"and the BVH), per triangle, median of {MEMORY_PROBES} processes: each builds a one-triangle scene first")
    p("(libraries, lazy imports, thread pools), and the C allocator's free memory is handed back before and")
    p("after the build (malloc_trim), so that the figure counts live memory, not the allocator's slack.")
    p("")
    p("Ratios raypick / engine (> 1: raypick is faster), the median over the rounds of each round's")
    p("ratio (the engines of a round ran moments apart, so a slower spell of the machine cancels):")
    p("")
    p("| engine | " + " | ".join(f"{'closest' if q == 'closest' else 'any-hit'} {s} {t}T" for q, s, t in cols) + " |")
    p("|---|" + "---:|" * len(cols))
    rp = next((e for e in engines if e.name == "raypick"), None)
    for e in engines:
        if rp is None or e is rp:
            continue
        cells = []
        for q, s, t in cols:
            a, b = results.get(("raypick", q, s, t)), results.get((e.name, q, s, t))
            cells.append("–" if a is None or b is None else f"{round_ratio(a, b):.2f}")
        p(f"| {e.name} | " + " | ".join(cells) + " |")
    p("")
    p("Agreement with raypick (closest hit: hit/miss differences, different nearest triangle; occlusion differences):")
    p("")
    for e in engines:
        if rp is None or e is rp:
            continue
        for s, rays in sets.items():
            (rt, rprim), rocc = answers[("raypick", s)]
            (et, eprim), eocc = answers[(e.name, s)]
            nh, nt, grazing, checked, rel_t = agreement(rprim, eprim, rt, et, rays, v, f)
            occ_diff = int((rocc != eocc).sum())
            tinfo = "" if np.isnan(rel_t) else f", max relative t difference {rel_t:.1e}"
            p(f"- {e.name}, {s}: {nh} hit/miss, {nt} triangle differences of {len(rays):,} rays "
              f"({grazing} of {checked} checked are grazing/tied in f64){tinfo}; {occ_diff} occlusion differences.")
    hits = {s: int((answers[("raypick", s)][0][1] >= 0).sum()) for s in sets} if rp else {}
    if hits:
        p("- raypick hits: " + ", ".join(f"{s} {n:,}" for s, n in hits.items()) + ".")
    for key, why in skipped:
        p(f"- skipped {key}: {why}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
