"""Shared fixtures: small meshes, ray sets and an f64 Möller–Trumbore reference in numpy."""

from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[3]
SHARED_DATA = REPO.parent / "shared" / "data"


def _preload_libusb():
    """Open3D's library links libusb-1.0, which a machine without the system package (CI's)
    lacks: the suite installs the `libusb-package` wheel, whose copy (soname
    `libusb-1.0.so.0`) is loaded here first, so `import open3d` finds it already loaded."""
    try:
        import ctypes

        import libusb_package
    except ImportError:
        return
    path = libusb_package.get_library_path()
    if path is not None:
        ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)


_preload_libusb()


def cube(center=(0.0, 0.0, 0.0), half=1.0):
    """A closed, consistently wound (outward normals) cube: 8 vertices, 12 triangles."""
    c = np.asarray(center, np.float64)
    v = np.array(
        [[x, y, z] for z in (-1, 1) for y in (-1, 1) for x in (-1, 1)], np.float64
    ) * half + c
    f = np.array(
        [
            [0, 2, 1], [1, 2, 3],  # z = -1, normal -z
            [4, 5, 6], [5, 7, 6],  # z = +1, normal +z
            [0, 1, 4], [1, 5, 4],  # y = -1, normal -y
            [2, 6, 3], [3, 6, 7],  # y = +1, normal +y
            [0, 4, 2], [2, 4, 6],  # x = -1, normal -x
            [1, 3, 5], [3, 7, 5],  # x = +1, normal +x
        ],
        np.int64,
    )
    return v, f


def random_soup(rng, n_tris=60, scale=1.0):
    """Random triangles in a box of size `scale` (a soup: no shared vertices)."""
    v = rng.uniform(-scale, scale, size=(n_tris * 3, 3))
    f = np.arange(n_tris * 3).reshape(-1, 3)
    return v, f


def random_rays(rng, n, target_scale=1.0, origin_radius=4.0):
    """Rays from a sphere of radius `origin_radius` towards random points of the box, unit dirs."""
    d = rng.normal(size=(n, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    o = origin_radius * d
    tgt = rng.uniform(-target_scale, target_scale, size=(n, 3))
    dirs = tgt - o
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    return np.hstack([o, dirs]).astype(np.float32)


def moller_trumbore(rays, vertices, triangles):
    """f64 closest hits of `rays` (N, 6) against the mesh: t (inf on a miss), triangle (-1), u, v,
    and a margin per ray: how far the hit point is from the triangle's edges in barycentric terms
    (small margins are hits that rounding may move to a neighbour)."""
    rays = np.asarray(rays, np.float64)
    v = np.asarray(vertices, np.float64)
    tri = np.asarray(triangles, np.int64)
    v0, v1, v2 = v[tri[:, 0]], v[tri[:, 1]], v[tri[:, 2]]
    e1, e2 = v1 - v0, v2 - v0
    n = len(rays)
    t_best = np.full(n, np.inf)
    prim = np.full(n, -1, np.int64)
    uu = np.zeros(n)
    vv = np.zeros(n)
    margin = np.full(n, np.inf)
    for i in range(n):
        o, d = rays[i, :3], rays[i, 3:]
        p = np.cross(d, e2)
        det = np.einsum("ij,ij->i", e1, p)
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = 1.0 / det
            s = o - v0
            u = np.einsum("ij,ij->i", s, p) * inv
            q = np.cross(s, e1)
            w = (q @ d) * inv
            t = np.einsum("ij,ij->i", e2, q) * inv
        ok = (det != 0) & (u >= 0) & (w >= 0) & (u + w <= 1) & (t >= 0)
        if ok.any():
            k = np.flatnonzero(ok)[np.argmin(t[ok])]
            t_best[i], prim[i], uu[i], vv[i] = t[k], k, u[k], w[k]
            margin[i] = min(u[k], w[k], 1 - u[k] - w[k])
    return t_best, prim, uu, vv, margin


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
