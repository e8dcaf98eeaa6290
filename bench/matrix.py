#!/usr/bin/env python3
"""The benchmark matrix: raypick next to Embree (embreex) and Open3D on every scene and every kind of
ray, in one process, one table out. The measure of all performance work (../shared/BENCHMARKS.md).

    .venv/bin/python bench/matrix.py --build            # build raypick in release, then the full matrix
    .venv/bin/python bench/matrix.py --quick            # bunny and sponza, 100k rays, 3 rounds
    .venv/bin/python bench/matrix.py --scenes conference --kinds diffuse,shadow --out bench/out/m.md

Scenes: every model in ../shared/data/scenes, the bunny, and `conference-4x4`, 5,298,864 triangles:
sixteen copies of the conference room on a 4 x 4 grid (pitch 1.05 x the room's larger horizontal
extent), copy (0, 0) in place and each other one turned about the vertical by a multiple of 90°
drawn with seed 7, the vertices transformed in f64 and rounded to float32, flattened into one mesh
written as a binary PLY (bench/out/, git-ignored; made once). Each is loaded as users load it,
`raypick.load(path)` (its meshes: OBJ groups stay separate geometries), and the same world-space
triangles, geometry by geometry, are given to Embree and Open3D.

Rays (1M of each by default; `--rays N` takes N evenly spaced ones of each set):
- camera: 1024² pinhole rays. Interiors from a viewpoint inside (`VIEWS`: eye, target, vertical
  field of view, chosen by looking at the images); the bunny from outside (the shared primary set of
  make_rays.py); a scene without an entry in `VIEWS` from 85 % along its longest horizontal axis
  looking back along it;
- incoherent: the shared set of ../shared/tools/make_rays.py (seed 7) for the scene's box;
- diffuse: rays leaving the camera rays' hit points, in pixel order (several per pixel when there
  are fewer hits than rays), cosine-weighted about the geometric normal turned towards the viewer,
  origins moved off the surface by the engine's spawn offset (`raypick.offset_ray_origin`);
- shadow: segments from those points to uniform points on a rectangular area light inside the
  scene (`VIEWS`; above the model for the bunny), points whose normal faces away from their light
  point left out (a renderer casts none), any hit only, t in [0, 1] of the segment;
- directional: parallel rays from those points towards a directional light (`SUN`), the points
  shuffled (seed 7) so that rays side by side in the batch start far apart, any hit only.
Hit points are a + u (b - a) + v (c - a) in float32 from raypick's answers, as the engine makes them.
The sets are made once per scene and kept in bench/out/matrix/ (delete them to make them again), so
that every commit is measured on the same rays.

Timing, as bench/compare.py: only each engine's call is timed (rays already in its input format);
a warm-up, then `--repeat` rounds with the engines interleaved (every other round reversed); the
table shows the median Mrays/s and the ratio raypick / engine as the median over the rounds of each
round's ratio. 1 thread and all threads (embreex has no thread setting: its all-threads figures
split the batch over threads by hand). A cell whose warm-up on 1 % of the rays projects more than
`--max-cast-s` seconds for one engine (a cliff) is measured on fewer rays, and the table says so.

Build time: a fresh process per thread count (pinned to one CPU for 1 thread), each engine built
`--build-rounds` times from the same arrays, interleaved, median. Memory per triangle: the resident
memory a fresh process keeps for one engine's scene, measured as compare.py's `probe_memory` does.

Agreement: for closest hit, rays where raypick and an engine differ on hit/miss or on the triangle;
for any hit, on the answer. Each is decided in f64 from the two candidate triangles (each engine's
closest hit): raypick is wrong when its triangle is missed by more than rounding (outside by more
than 1e-4 barycentric and 4 ulps, or behind the ray's origin) or when the other's triangle is hit
clearly and nearer. Diffuse rays whose raypick hit is their own source triangle are checked too
(a ray leaving the offset origin cannot hit its own plane ahead of it), whatever the engines say.

Open3D needs libusb-1.0 (Debian: `apt-get install libusb-1.0-0`); engines are pip-installed when
missing (compare.py's `ensure`), and one that cannot be imported is reported and skipped.
"""

import argparse
import datetime
import importlib
import json
import os
import platform
import site
import statistics
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = REPO.parent / "shared"
DATA = SHARED / "data"
OUT = HERE / "out"
CACHE = OUT / "matrix"
ALL = os.cpu_count() or 1
sys.path.insert(0, str(HERE))
import compare  # noqa: E402  (the same engine set-up, ratio and memory helpers)

log = compare.log

BUNNY = DATA / "obj" / "stanford-bunny.obj"
LARGE = "conference-4x4"
KINDS = ("camera", "incoherent", "diffuse", "shadow", "directional")
# Queries per kind: shadow rays are segments to a light and directional ones toward a sun, which a
# renderer asks only whether anything is in the way.
QUERIES = {"camera": ("closest", "any"), "incoherent": ("closest", "any"), "diffuse": ("closest", "any"),
           "shadow": ("any",), "directional": ("any",)}
SEED = 7
RES = 1024
SUN = np.array([0.3, 1.0, 0.2]) / np.linalg.norm([0.3, 1.0, 0.2])


@dataclass
class View:
    """A viewpoint (world units, y up) and a rectangular area light: corner and two edges."""
    eye: tuple
    target: tuple
    fov: float
    light: tuple


# Interiors: eyes at about standing height, looking down the long axis of the nave or room; lights
# below the vaults or the ceiling, over the middle of the floor. `conference-4x4` keeps copy (0, 0)
# where the conference room is, so its view is the conference room's.
VIEWS = {
    "sponza-dabrovic": View((13, 1.5, 0), (-13, 4, 0), 70, ((-10, 12, -3), (20, 0, 0), (0, 0, 6))),
    "sibenik": View((15, -10, 0), (-15, -8, 0), 70, ((-12, 5, -3), (24, 0, 0), (0, 0, 6))),
    "conference": View((1500, 300, 500), (0, 100, -500), 70,
                       ((-500, 550, -700), (1500, 0, 0), (0, 0, 1000))),
}
VIEWS[LARGE] = VIEWS["conference"]


def scene_paths():
    """Scene name -> file: the bunny, every model in ../shared/data/scenes, the large scene."""
    paths = {"stanford-bunny": BUNNY}
    for p in sorted((DATA / "scenes").iterdir()):
        if p.suffix.lower() in (".obj", ".gltf", ".glb", ".ply", ".stl"):
            paths[p.stem] = p
    paths[LARGE] = OUT / f"{LARGE}.ply"
    return paths


# ---- the scene -----------------------------------------------------------------------------------


def make_large(path):
    """Writes `conference-4x4` (see the module's docstring) as a binary little-endian PLY."""
    import raypick

    room = raypick.load(DATA / "scenes" / "conference.obj")
    v, f = soup_of(room)[:2]
    v = v.astype(np.float64)
    lo, hi = v.min(0), v.max(0)
    centre = (lo + hi) / 2
    pitch = 1.05 * max(hi[0] - lo[0], hi[2] - lo[2])
    turns = np.random.default_rng(SEED).integers(0, 4, 16)
    verts, faces = [], []
    for k in range(16):
        i, j = divmod(k, 4)
        a = 0.0 if k == 0 else np.pi / 2 * turns[k]
        c, s = np.cos(a), np.sin(a)
        rot = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
        moved = (v - centre) @ rot.T + centre + np.array([i * pitch, 0.0, j * pitch])
        faces.append(f + k * len(v))
        verts.append(moved.astype(np.float32))
    verts, faces = np.concatenate(verts), np.concatenate(faces)
    rows = np.empty(len(faces), np.dtype([("n", "u1"), ("i", "<i4", (3,))]))
    rows["n"], rows["i"] = 3, faces
    header = (f"ply\nformat binary_little_endian 1.0\ncomment {LARGE}: bench/matrix.py make_large\n"
              f"element vertex {len(verts)}\nproperty float x\nproperty float y\nproperty float z\n"
              f"element face {len(faces)}\nproperty list uchar int vertex_indices\nend_header\n")
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as fh:
        fh.write(header.encode())
        fh.write(verts.astype("<f4").tobytes())
        fh.write(rows.tobytes())
    tmp.rename(path)
    log(f"wrote {path} ({len(faces):,} triangles)")


def soup_of(scene):
    """The scene's meshes as world-space arrays: float32 vertices, int64 triangles (global ids),
    and per geometry its (vertices, triangles) and the global id of its first triangle."""
    parts = []
    for g in range(len(scene)):
        kind = scene.geometry_kind(g)
        if kind != "mesh":
            raise SystemExit(f"geometry {g} is a {kind}: the matrix flattens meshes only")
        pv, pf = scene.mesh_arrays(g)
        parts.append((np.ascontiguousarray(pv, np.float32), pf.astype(np.int64)))
    voff = np.cumsum([0] + [len(pv) for pv, _ in parts])
    first = np.cumsum([0] + [len(pf) for _, pf in parts])
    v = np.concatenate([pv for pv, _ in parts])
    f = np.concatenate([pf + o for (_, pf), o in zip(parts, voff)])
    return v, f, parts, first


# ---- engines ------------------------------------------------------------------------------------


class Raypick:
    name = "raypick"

    def __init__(self, raypick, parts, scene=None):
        self.rp = raypick
        if scene is None:
            scene = raypick.Scene()
            for pv, pf in parts:
                scene.add_triangles(pv, pf)
        scene.commit()
        self.scene = scene

    def prepare(self, rays):
        return rays

    def closest(self, rays, threads):
        return self.scene.cast_rays(rays, nthreads=threads)

    def any(self, rays, threads, tfar):
        return self.scene.test_occlusions(rays, tfar=tfar, nthreads=threads)

    def hits(self, a, first):
        prim = a["primitive_ids"].astype(np.int64)
        miss = prim == self.rp.INVALID_ID
        g = np.where(miss, 0, a["geometry_ids"]).astype(np.int64)
        return np.where(miss, np.inf, a["t_hit"]), np.where(miss, -1, first[g] + prim)

    def occluded(self, a):
        return np.asarray(a, bool)


class Embree:
    name = "Embree"

    def __init__(self, mod, parts, scene=None):
        from embreex import rtcore_scene as rtcs
        from embreex.mesh_construction import TriangleMesh

        self.scene = rtcs.EmbreeScene()
        for pv, pf in parts:
            TriangleMesh(self.scene, pv, pf.astype(np.int32))
        self.scene.run(np.zeros((1, 3), np.float32), np.ones((1, 3), np.float32))  # commits

    def prepare(self, rays):
        return np.ascontiguousarray(rays[:, :3]), np.ascontiguousarray(rays[:, 3:])

    def closest(self, od, threads, tfar=None):
        run = (lambda o, d: self.scene.run(o, d, output=1)) if tfar is None else \
            (lambda o, d: self.scene.run(o, d, dists=float(tfar), output=1))
        return compare.split_run(run, *od, threads)

    def any(self, od, threads, tfar):
        dists = None if np.isinf(tfar) else float(tfar)
        return compare.split_run(lambda o, d: self.scene.run(o, d, dists=dists, query="OCCLUDED"), *od, threads)

    def hits(self, r, first):
        prim = r["primID"].astype(np.int64)
        miss = prim < 0
        g = np.where(miss, 0, r["geomID"]).astype(np.int64)
        return np.where(miss, np.inf, r["tfar"]), np.where(miss, -1, first[g] + prim)

    def occluded(self, r):
        return np.asarray(r) >= 0


class Open3D:
    name = "Open3D"

    def __init__(self, o3d, parts, scene=None, threads=0):
        self.o3d = o3d
        self.scene = o3d.t.geometry.RaycastingScene(nthreads=threads)
        for pv, pf in parts:
            self.scene.add_triangles(o3d.core.Tensor(pv), o3d.core.Tensor(pf.astype(np.uint32)))
        self.scene.cast_rays(o3d.core.Tensor(np.array([[0, 0, 0, 1, 1, 1]], np.float32)))  # commits

    def prepare(self, rays):
        return self.o3d.core.Tensor(rays)

    def closest(self, rays, threads):
        return self.scene.cast_rays(rays, nthreads=threads)

    def any(self, rays, threads, tfar):
        return self.scene.test_occlusions(rays, tfar=tfar, nthreads=threads)

    def hits(self, a, first):
        prim = a["primitive_ids"].numpy().astype(np.int64)
        miss = prim == 4294967295
        g = np.where(miss, 0, a["geometry_ids"].numpy()).astype(np.int64)
        return np.where(miss, np.inf, a["t_hit"].numpy()), np.where(miss, -1, first[g] + prim)

    def occluded(self, a):
        return a.numpy().astype(bool)


ENGINES = {"raypick": (None, Raypick), "embree": ("embreex", Embree), "open3d": ("open3d", Open3D)}


def modules(keys, install):
    """Engine key -> imported module (raypick for raypick), and the skipped ones with why."""
    import raypick

    mods, skipped = {}, {}
    for key in keys:
        module, _ = ENGINES[key]
        if module is None:
            mods[key] = raypick
            continue
        try:
            mod, why = compare.ensure(module, module) if install else (importlib.import_module(module), None)
        except ImportError as e:
            mod, why = None, str(e)
        if mod is None:
            skipped[key] = why
            log(f"skipping {key}: {why}")
        else:
            mods[key] = mod
    return mods, skipped


# ---- rays ---------------------------------------------------------------------------------------


def camera_rays(eye, target, fov, res=RES):
    """res² pinhole rays (vertical field of view `fov`, y up, row 0 at the top), unit directions,
    row-major: make_rays.py's construction with another eye."""
    eye, target = np.asarray(eye, np.float64), np.asarray(target, np.float64)
    fwd = (target - eye) / np.linalg.norm(target - eye)
    right = np.cross(fwd, [0.0, 1.0, 0.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, fwd)
    tanh = np.tan(np.radians(fov) / 2)
    ys, xs = np.mgrid[0:res, 0:res]
    px = ((xs + 0.5) / res * 2 - 1) * tanh
    py = (1 - (ys + 0.5) / res * 2) * tanh
    d = (fwd + px[..., None] * right + py[..., None] * up).reshape(-1, 3)
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    return np.hstack([np.broadcast_to(eye, d.shape), d]).astype(np.float32)


def shared_sets(name, path, v, f):
    """make_rays.py's incoherent and primary sets for this scene (its box; cached in bench/out)."""
    OUT.mkdir(parents=True, exist_ok=True)
    prefix = OUT / name
    files = {k: Path(f"{prefix}.{k}.rays") for k in ("incoherent", "primary")}
    if not all(p.exists() for p in files.values()):
        sys.path.insert(0, str(SHARED / "tools"))
        import make_rays

        if path.suffix.lower() != ".obj":  # make_rays reads OBJ; the same box from the loaded arrays
            make_rays.load_obj = lambda _path: (v, f)
        make_rays.main(str(path), str(prefix))
    return {k: np.fromfile(p, "<f4").reshape(-1, 6) for k, p in files.items()}


def onb_cosine(n, rng):
    """Cosine-weighted unit directions about unit normals n (Duff et al.'s branchless basis)."""
    sign = np.where(n[:, 2] >= 0, 1.0, -1.0)
    a = -1.0 / (sign + n[:, 2])
    b = n[:, 0] * n[:, 1] * a
    t = np.column_stack([1 + sign * n[:, 0] ** 2 * a, sign * b, -sign * n[:, 0]])
    s = np.column_stack([b, sign + n[:, 1] ** 2 * a, -n[:, 1]])
    r1, r2 = rng.random(len(n)), rng.random(len(n))
    phi, sin_t = 2 * np.pi * r1, np.sqrt(r2)
    d = (np.cos(phi) * sin_t)[:, None] * t + (np.sin(phi) * sin_t)[:, None] * s + np.sqrt(1 - r2)[:, None] * n
    return d / np.linalg.norm(d, axis=1, keepdims=True)


def ray_sets(raypick, name, path, scene, v, f, first, n=1_000_000):
    """All kinds of rays of a scene (see the docstring), and for the secondary ones the global id of
    the triangle each leaves. Made once, kept in bench/out/matrix/NAME.npz."""
    CACHE.mkdir(parents=True, exist_ok=True)
    cached = CACHE / f"{name}.npz"
    if cached.exists():
        z = np.load(cached)
        return {k: z[k] for k in z.files}
    log(f"{name}: making the ray sets")
    shared = shared_sets(name, path, v, f)
    view = VIEWS.get(name)
    lo, hi = v.min(0).astype(np.float64), v.max(0).astype(np.float64)
    size = hi - lo
    if name == "stanford-bunny":
        camera = shared["primary"]
        r = np.linalg.norm(size) / 2
        light = (lo + np.array([0, size[1] + 0.5 * r, 0]), np.array([size[0], 0, 0]), np.array([0, 0, size[2]]))
    else:
        if view is None:  # another scene: along its longest horizontal axis, light under the top
            ax = np.zeros(3)
            ax[0 if size[0] >= size[2] else 2] = 1.0
            centre = (lo + hi) / 2
            view = View(tuple(centre + 0.35 * size * ax - 0.2 * size[1] * np.array([0, 1, 0])),
                        tuple(centre - 0.4 * size * ax), 70,
                        (tuple(lo + size * [0.25, 0.8, 0.25]), (size[0] / 2, 0, 0), (0, 0, size[2] / 2)))
        camera = camera_rays(view.eye, view.target, view.fov)
        light = tuple(np.asarray(x, np.float64) for x in view.light)
    rng = np.random.default_rng(SEED)
    a = scene.cast_rays(camera)
    hit = np.flatnonzero(np.isfinite(a["t_hit"]))
    if len(hit) == 0:
        raise SystemExit(f"{name}: no camera ray hits the scene")
    tri = first[a["geometry_ids"][hit].astype(np.int64)] + a["primitive_ids"][hit].astype(np.int64)
    t0, t1, t2 = (v[f[tri, k]] for k in range(3))
    uv = a["primitive_uvs"][hit]
    point = t0 + uv[:, :1] * (t1 - t0) + uv[:, 1:] * (t2 - t0)  # float32, as the engine's hit points
    normal = a["primitive_normals"][hit].astype(np.float64)
    normal[np.sum(normal * camera[hit, 3:], axis=1) > 0] *= -1  # towards the viewer
    origin = raypick.offset_ray_origin(point, normal.astype(np.float32))

    def spread(m):
        """m indices into the hit points in pixel order (repeated when there are fewer)."""
        return np.repeat(np.arange(len(hit)), -(-m // len(hit)))[np.linspace(0, -(-m // len(hit)) * len(hit) - 1, m).astype(np.int64)]

    k = spread(n)
    diffuse = np.hstack([origin[k], onb_cosine(normal[k], rng)]).astype(np.float32)

    # Shadow segments: candidates from twice as many points, those whose light point lies on the
    # normal's side kept, in pixel order.
    k = spread(2 * n)
    corner, e1, e2 = light
    lp = corner + rng.random((len(k), 1)) * e1 + rng.random((len(k), 1)) * e2
    seg = lp - origin[k].astype(np.float64)
    keep = np.flatnonzero(np.sum(seg * normal[k], axis=1) > 0)
    keep = keep[np.linspace(0, len(keep) - 1, min(n, len(keep))).astype(np.int64)]
    shadow = np.hstack([origin[k[keep]], seg[keep]]).astype(np.float32)
    shadow_src = tri[k[keep]]

    # Directional: points facing the sun, shuffled.
    k = spread(2 * n)
    k = k[np.sum(normal[k] * SUN, axis=1) > 0]
    k = k[rng.permutation(len(k))[:n]]
    directional = np.hstack([origin[k], np.broadcast_to(SUN, (len(k), 3))]).astype(np.float32)
    sets = {"camera": camera, "incoherent": shared["incoherent"], "diffuse": diffuse,
            "diffuse_src": tri[spread(n)], "shadow": shadow, "shadow_src": shadow_src,
            "directional": directional, "directional_src": tri[k]}
    np.savez(cached, **sets)
    return sets


def subset(a, n):
    return a if not n or n >= len(a) else a[np.linspace(0, len(a) - 1, n).astype(np.int64)]


# ---- f64 checks ---------------------------------------------------------------------------------


def f64_hits(rays, v, f, tri):
    """Per ray, its hit on triangle `tri` in f64 (Möller–Trumbore on the float32 data, exact
    inputs): t, the smallest barycentric, and the distance of the point to the nearest edge in
    float32 ulps of the hit's scale (as compare.py's `f64_margin`). NaN where tri < 0."""
    n = len(rays)
    t, bmin, ulps = (np.full(n, np.nan) for _ in range(3))
    ok = tri >= 0
    if not ok.any():
        return t, bmin, ulps
    r = rays[ok].astype(np.float64)
    o, d = r[:, :3], r[:, 3:]
    a, b, c = (v[f[tri[ok], k]].astype(np.float64) for k in range(3))
    e1, e2 = b - a, c - a
    p = np.cross(d, e2)
    det = np.sum(e1 * p, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / det
        s = o - a
        u = np.sum(s * p, axis=1) * inv
        q = np.cross(s, e1)
        w = np.sum(d * q, axis=1) * inv
        tt = np.sum(e2 * q, axis=1) * inv
        weights = np.column_stack([1 - u - w, u, w])
        twice = np.linalg.norm(np.cross(e1, e2), axis=1)
        edges = np.column_stack([np.linalg.norm(c - b, axis=1), np.linalg.norm(c - a, axis=1), np.linalg.norm(e1, axis=1)])
        dist = np.min(np.abs(weights) * twice[:, None] / edges, axis=1)
        scale = np.maximum(np.abs(tt), np.max(np.abs(o + tt[:, None] * d), axis=1))
        sp = np.spacing(scale.astype(np.float32)).astype(np.float64)
    t[ok], bmin[ok], ulps[ok] = tt, weights.min(axis=1), dist / sp
    return t, bmin, ulps


def judge(rays, v, f, k1, k2, tfar=np.inf):
    """For rays with candidate triangles k1 (raypick's closest hit) and k2 (the other engine's), in
    f64: whether each candidate is hit clearly (inside by more than rounding, ahead of the origin,
    before tfar), clearly not hit, or within rounding (grazing); and t of each."""
    out = []
    for k in (k1, k2):
        t, bmin, ulps = f64_hits(rays, v, f, k)
        grazing = (np.abs(bmin) < 1e-4) | (ulps < 4)
        inside = (bmin >= 0) & (t > 0) & (t < tfar)
        clear_hit = (k >= 0) & inside & ~grazing
        clear_miss = (k >= 0) & ((t <= 0) | (t >= tfar) | ((bmin < 0) & ~grazing))
        out.append((clear_hit, clear_miss, t))
    return out


def check_closest(rays, v, f, rp, other, src=None, limit=20000):
    """Closest hit: counts of hit/miss and triangle differences with the other engine, and how many
    of them raypick has wrong in f64; with `src`, rays that raypick answers with their own source
    triangle are judged too. Returns a dict."""
    (rt, rk), (et, ek) = rp, other
    hit_diff = (rk >= 0) != (ek >= 0)
    tri_diff = (rk >= 0) & (ek >= 0) & (rk != ek)
    suspect = hit_diff | tri_diff
    self_hits = np.zeros(len(rk), bool) if src is None else (rk == src)
    idx = np.flatnonzero(suspect | self_hits)[:limit]
    (r_hit, r_miss, r_t), (e_hit, _, e_t) = judge(rays[idx], v, f, rk[idx], ek[idx])
    nearer = e_hit & ((rk[idx] < 0) | (e_t < r_t * (1 - 1e-6)))
    wrong = r_miss | nearer
    return {"hit_miss": int(hit_diff.sum()), "triangle": int(tri_diff.sum()), "checked": len(idx),
            "raypick_wrong": int(wrong.sum()), "not_hit": int(r_miss.sum()), "nearer_missed": int((nearer & ~r_miss).sum()),
            "self_hits": int(self_hits.sum()),
            "self_hits_wrong": int((wrong & self_hits[idx]).sum())}


def check_any(rays, v, f, rp_occ, other_occ, candidates, tfar, limit=20000):
    """Any hit: answers that differ, decided in f64 from each engine's closest hit on those rays
    (`candidates(idx)` gives raypick's and the other's triangles)."""
    idx = np.flatnonzero(rp_occ != other_occ)[:limit]
    wrong = 0
    if len(idx):
        k1, k2 = candidates(idx)
        (r_hit, r_miss, _), (e_hit, e_miss, _) = judge(rays[idx], v, f, k1, k2, tfar)
        says = rp_occ[idx]
        # Occluded by raypick: wrong when no candidate blocks and none is within rounding.
        none_blocks = (r_miss | (k1 < 0)) & (e_miss | (k2 < 0))
        wrong = int((says & none_blocks).sum() + (~says & (r_hit | e_hit)).sum())
    return {"differ": int((rp_occ != other_occ).sum()), "checked": len(idx), "raypick_wrong": wrong}


# ---- builds and memory (fresh processes) ----------------------------------------------------------


def probe(args):
    """In a fresh process: build times (interleaved engines) or one engine's memory per triangle,
    printed as JSON."""
    if args.probe_threads == 1 and hasattr(os, "sched_setaffinity"):
        # One CPU: TBB (Embree, Open3D) and rayon (raypick) size their pools by the affinity mask.
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
        os.environ["RAYON_NUM_THREADS"] = "1"
    import raypick

    # The arrays the main process saved (a large scene's file takes seconds to parse).
    z = np.load(CACHE / f"{args.probe}.soup.npz")
    bounds = np.cumsum(np.column_stack([z["nverts"], z["ntris"]]), axis=0)
    bounds = np.vstack([[0, 0], bounds])
    f = z["f"]
    parts = [(z["v"][v0:v1], f[t0:t1] - v0) for (v0, t0), (v1, t1) in zip(bounds[:-1], bounds[1:])]
    keys = args.engines.split(",")
    mods, _ = modules(keys, install=False)
    o3d_threads = 1 if args.probe_threads == 1 else 0
    make = {k: (lambda k=k: ENGINES[k][1](mods[k], parts, **({"threads": o3d_threads} if k == "open3d" else {})))
            for k in mods}
    if args.probe_memory:
        key = args.probe_memory
        tiny = [(parts[0][0][:3].copy(), np.array([[0, 1, 2]]))]
        ENGINES[key][1](mods[key], tiny)  # libraries, lazy imports, thread pools
        compare.release_free_memory()
        rss0 = compare.rss_bytes()
        engine = make[key]()
        compare.release_free_memory()
        print(json.dumps({"bytes_per_tri": (compare.rss_bytes() - rss0) / len(f)}))
        del engine
        return
    times = {k: [] for k in make}
    for k in make:  # warm-up: libraries and thread pools
        make[k]()
    order = list(make)
    for r in range(args.build_rounds):
        for k in order if r % 2 == 0 else order[::-1]:
            t0 = time.perf_counter()
            e = make[k]()
            times[k].append(time.perf_counter() - t0)
            del e
    print(json.dumps(times))


def run_probe(scene, extra, args):
    cmd = [sys.executable, __file__, "--probe", scene, "--engines", ",".join(args.engine_keys),
           "--build-rounds", str(args.build_rounds)] + extra
    out = subprocess.run(cmd, capture_output=True, text=True)
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        log(f"probe {' '.join(extra)} of {scene} failed: {out.stderr.strip()[-300:]}")
        return None


# ---- timing -------------------------------------------------------------------------------------


def time_cell(engines, inputs, query, threads, tfar, repeat, budget):
    """Times one cell: warm-up, then `repeat` interleaved rounds. Returns per engine the rounds'
    seconds and the number of rays used (fewer than given when the 1 % warm-up projects a cast
    longer than `budget` seconds)."""
    def call(e, x):
        return e.closest(x, threads) if query == "closest" else e.any(x, threads, tfar)

    n = len(next(iter(inputs.values()))[0])
    m = n
    for e in engines:  # projected from 1 % of the rays
        small = max(1, n // 100)
        x = inputs[e.name][1](small)
        t0 = time.perf_counter()
        call(e, x)
        projected = (time.perf_counter() - t0) * n / small
        if projected > budget:
            m = min(m, max(1000, int(n * budget / projected)))
    data = {e.name: (inputs[e.name][0] if m == n else inputs[e.name][1](m)) for e in engines}
    for e in engines:
        call(e, data[e.name])
    times = {e.name: [] for e in engines}
    for r in range(repeat):
        for e in engines if r % 2 == 0 else engines[::-1]:
            t0 = time.perf_counter()
            call(e, data[e.name])
            times[e.name].append(time.perf_counter() - t0)
    return times, m


# ---- main ---------------------------------------------------------------------------------------


def git_commit():
    try:
        out = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return out.stdout.strip() + (" (modified)" if dirty else "")
    except OSError:
        return "?"


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", action="store_true", help="build and install raypick in release first (maturin)")
    ap.add_argument("--quick", action="store_true",
                    help="development subset: bunny and sponza, 100k rays, 3 rounds, 1 memory probe")
    ap.add_argument("--scenes", help="comma-separated scene names (default: all; see the docstring)")
    ap.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated ray kinds ({','.join(KINDS)})")
    ap.add_argument("--threads", default=f"1,{ALL}", help="comma-separated thread counts (default 1 and all)")
    ap.add_argument("--repeat", type=int, help="timed rounds per cell (default 5; --quick 3)")
    ap.add_argument("--rays", type=int, help="rays of each set, evenly spaced (default all: 1M)")
    ap.add_argument("--build-rounds", type=int, default=3, help="builds per engine and thread count (median)")
    ap.add_argument("--memory-probes", type=int, help="fresh processes per engine for memory (default 3; --quick 1)")
    ap.add_argument("--max-cast-s", type=float, default=20.0,
                    help="a cell whose one cast would take longer for some engine runs on fewer rays")
    ap.add_argument("--engines", default="raypick,embree,open3d")
    ap.add_argument("--bvh", default="balanced",
                    help="raypick's build preset for the cast cells (fast, balanced, high_quality, spatial);"
                         " the build-time and memory columns always build the default")
    ap.add_argument("--no-install", action="store_true", help="do not pip-install missing engines")
    ap.add_argument("--out", type=Path, help="also write the report here (.json: the raw figures; else markdown)")
    ap.add_argument("--probe", help=argparse.SUPPRESS)
    ap.add_argument("--probe-threads", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--probe-memory", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.probe:
        return probe(args)

    names = list(scene_paths())
    if args.quick:
        names = ["stanford-bunny", "sponza-dabrovic"]
    if args.scenes:
        names = args.scenes.split(",")
    unknown = [s for s in names if s not in scene_paths()]
    if unknown:
        raise SystemExit(f"unknown scenes {unknown}; known: {', '.join(scene_paths())}")
    kinds = args.kinds.split(",")
    repeat = args.repeat or (3 if args.quick else 5)
    nrays = args.rays if args.rays is not None else (100_000 if args.quick else 0)
    probes = args.memory_probes or (1 if args.quick else 3)
    thread_counts = list(dict.fromkeys(int(t) for t in args.threads.split(",")))  # "1,1" on one core

    if args.build:
        subprocess.run([str(Path(sys.executable).parent / "maturin"), "develop", "--release", "-m",
                        str(REPO / "crates/raypick-py/Cargo.toml")], check=True)
        site.addsitedir(sysconfig.get_paths()["purelib"])  # maturin's .pth, for a first install
        importlib.invalidate_caches()
    import raypick

    if getattr(raypick._raypick, "__debug_build__", False):
        log("WARNING: raypick is a debug build; figures are not representative (use --build)")
    mods, skipped = modules(args.engines.split(","), install=not args.no_install)
    args.engine_keys = list(mods)
    started = time.perf_counter()
    report = {"date": f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC", "commit": git_commit(),
              "bvh": args.bvh,
              "cpu": cpu_model(), "threads": ALL, "repeat": repeat, "skipped": skipped,
              "versions": {"raypick": raypick.__version__, "embreex": compare.version_of("embreex"),
                           "open3d": compare.version_of("open3d")},
              "scenes": {}, "cells": []}

    for name in names:
        path = scene_paths()[name]
        if name == LARGE and not path.exists():
            OUT.mkdir(parents=True, exist_ok=True)
            make_large(path)
        t0 = time.perf_counter()
        loaded = raypick.load(path, bvh=args.bvh)
        load_s = time.perf_counter() - t0
        v, f, parts, first = soup_of(loaded)
        log(f"{name}: {len(f):,} triangles in {len(parts)} meshes (loaded in {load_s:.2f} s)")
        CACHE.mkdir(parents=True, exist_ok=True)
        np.savez(CACHE / f"{name}.soup.npz", v=v, f=f, nverts=[len(pv) for pv, _ in parts],
                 ntris=[len(pf) for _, pf in parts])
        sets = ray_sets(raypick, name, path, loaded, v, f, first)
        engines = []
        for key, mod in mods.items():
            cls = ENGINES[key][1]
            engines.append(cls(mod, parts, scene=loaded) if key == "raypick" else cls(mod, parts))
        rp = engines[0] if engines and engines[0].name == "raypick" else None

        info = {"triangles": len(f), "meshes": len(parts), "build_s": {}, "bytes_per_tri": {}}
        for th in thread_counts:
            b = run_probe(name, ["--probe-threads", str(th)], args)
            if b:
                info["build_s"][th] = b
        for key in mods:
            vals = [r["bytes_per_tri"] for r in (run_probe(name, ["--probe-memory", key], args) for _ in range(probes)) if r]
            info["bytes_per_tri"][ENGINES[key][1].name] = statistics.median(vals) if vals else None
        report["scenes"][name] = info

        for kind in kinds:
            rays = np.ascontiguousarray(subset(sets[kind], nrays))
            src = subset(sets[f"{kind}_src"], nrays) if f"{kind}_src" in sets else None
            tfar = 1.0 if kind == "shadow" else np.inf
            inputs = {e.name: (e.prepare(rays), lambda m, e=e: e.prepare(np.ascontiguousarray(subset(rays, m))))
                      for e in engines}
            for query in QUERIES[kind]:
                answers = {}
                for e in engines:  # the answers checked, on all threads
                    x = inputs[e.name][0]
                    answers[e.name] = e.hits(e.closest(x, ALL), first) if query == "closest" else e.occluded(e.any(x, ALL, tfar))
                for th in thread_counts:
                    times, m = time_cell(engines, inputs, query, th, tfar, repeat, args.max_cast_s)
                    cell = {"scene": name, "kind": kind, "query": query, "threads": th, "rays": m,
                            "mrays": {k: m / statistics.median(ts) / 1e6 for k, ts in times.items()}, "ratio": {}}
                    if rp:
                        cell["ratio"] = {k: compare.round_ratio(times[rp.name], ts) for k, ts in times.items() if k != rp.name}
                    report["cells"].append(cell)
                    log(f"{name:16s} {kind:11s} {query:7s} {th}T {m:>9,} rays: " +
                        "  ".join(f"{k} {x:6.2f}" for k, x in cell["mrays"].items()) +
                        "  " + "  ".join(f"/{k} {x:4.2f}" for k, x in cell["ratio"].items()))
                if rp:
                    agree = {}
                    for e in engines[1:]:
                        if query == "closest":
                            agree[e.name] = check_closest(rays, v, f, answers[rp.name], answers[e.name],
                                                          src if kind == "diffuse" else None)
                        else:
                            def candidates(idx, e=e):
                                sub = np.ascontiguousarray(rays[idx])
                                k1 = rp.hits(rp.closest(sub, ALL), first)[1]
                                k2 = e.hits(e.closest(e.prepare(sub), ALL), first)[1] if e.name != "Embree" else \
                                    e.hits(e.closest(e.prepare(sub), ALL, None if np.isinf(tfar) else tfar), first)[1]
                                return k1, k2
                            agree[e.name] = check_any(rays, v, f, answers[rp.name], answers[e.name], candidates, tfar)
                    for cell in report["cells"]:
                        if cell["scene"] == name and cell["kind"] == kind and cell["query"] == query:
                            cell["agreement"] = agree
        del engines, loaded
    report["seconds"] = time.perf_counter() - started
    text = render(report, thread_counts, nrays)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1, default=str) if args.out.suffix == ".json" else text + "\n")


def render(report, thread_counts, nrays):
    lines = []
    p = lines.append
    p(f"Benchmark matrix, {report['date']}, commit {report['commit']}, {report['cpu']}, {report['threads']} threads; "
      f"raypick {report['versions']['raypick']}, embreex {report['versions']['embreex']}, "
      f"Open3D {report['versions']['open3d']}; median of {report['repeat']} interleaved rounds after a warm-up"
      f"{'' if not nrays else f'; {nrays:,} rays of each set'}; raypick's BVH preset {report.get('bvh', 'balanced')}"
      f"; {report['seconds'] / 60:.1f} min.")
    p("")
    names = [e for e in ("raypick", "Embree", "Open3D")]
    others = [e for e in names[1:] if any(e in c["mrays"] for c in report["cells"])]
    head = "| scene | rays | query | n |"
    for th in thread_counts:
        head += "".join(f" {e} {th}T |" for e in names) + "".join(f" ÷{e} {th}T |" for e in others)
    head += " raypick wrong (f64) | differ from Embree |"
    p(head)
    p("|---|---|---|---:|" + "---:|" * (len(thread_counts) * (len(names) + len(others))) + "---:|---|")
    rows = {}
    for c in report["cells"]:
        rows.setdefault((c["scene"], c["kind"], c["query"]), {})[c["threads"]] = c
    for (scene, kind, query), by_t in rows.items():
        first = by_t[thread_counts[0]]
        ns = sorted({c["rays"] for c in by_t.values()})
        line = f"| {scene} | {kind} | {query} | {'/'.join(f'{x:,}' for x in ns)} |"
        for th in thread_counts:
            c = by_t.get(th)
            line += "".join(" – |" if c is None or e not in c["mrays"] else f" {c['mrays'][e]:.2f} |" for e in names)
            line += "".join(" – |" if c is None or e not in c["ratio"] else f" {c['ratio'][e]:.2f} |" for e in others)
        ag = first.get("agreement", {})
        worst = max(ag.values(), key=lambda a: a["raypick_wrong"], default=None)
        wrong = "–" if worst is None else str(worst["raypick_wrong"])
        if worst and worst["raypick_wrong"] and "not_hit" in worst:
            wrong += f" ({worst['not_hit']} not hit, {worst['nearer_missed']} nearer hit missed)"
        emb = ag.get("Embree")
        if emb is None:
            diff = "–"
        elif query == "closest":
            diff = f"{emb['hit_miss']} hit/miss, {emb['triangle']} triangle"
            if emb.get("self_hits"):
                diff += f", {emb['self_hits']} own triangle"
        else:
            diff = f"{emb['differ']} answers"
        line += f" {wrong} | {diff} |"
        p(line)
    p("")
    p("÷Engine: raypick / engine, median of per-round ratios (> 1: raypick faster). n: rays of the cell (fewer than the")
    p("set when an engine's cast of the whole set would pass --max-cast-s). raypick wrong: rays whose raypick answer")
    p("the f64 check of the candidate triangles finds wrong (largest over the engines compared; closest hit: its triangle")
    p("is not hit, outside or behind the origin, or the other engine's triangle is hit clearly and nearer). Camera rays: 1024²;")
    p("diffuse, shadow and directional rays leave the camera rays' hit points (see bench/matrix.py).")
    p("")
    p("| scene | triangles | meshes |" + "".join(f" build ms {e} {th}T |" for th in thread_counts for e in names)
      + "".join(f" B/tri {e} |" for e in names))
    p("|---|---:|---:|" + "---:|" * (len(thread_counts) * len(names) + len(names)))
    for scene, info in report["scenes"].items():
        line = f"| {scene} | {info['triangles']:,} | {info['meshes']} |"
        for th in thread_counts:
            b = info["build_s"].get(th, {})
            line += "".join(f" {statistics.median(b[e.lower()] if e.lower() in b else b.get(e, [])) * 1e3:.0f} |"
                            if (e.lower() in b or e in b) else " – |" for e in names)
        line += "".join(" – |" if info["bytes_per_tri"].get(e) is None else f" {info['bytes_per_tri'][e]:.0f} |" for e in names)
        p(line)
    p("")
    p("Build: median of fresh-process builds from the same arrays (1T: the process pinned to one CPU). B/tri: resident")
    p("memory a fresh process keeps for the engine's scene (its copy of the triangles and its BVH), per triangle.")
    for key, why in report["skipped"].items():
        p(f"- skipped {key}: {why}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
