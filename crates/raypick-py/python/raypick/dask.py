"""Ray batches and point queries on a Dask cluster: the same answers as the in-process queries,
for arrays of rays larger than one machine.

Install with ``pip install raypick[dask]``. Each function takes a :class:`raypick.Scene` and a
``dask.array`` of rows (``(N, 6)`` rays or ``(N, 3)`` points, chunked by rows) and returns dask
arrays chunked the same way, in input order; nothing runs until they are computed::

    >>> import dask.array as da, raypick, raypick.dask
    >>> rays = da.from_array(np.load("rays.npy"), chunks=(1_000_000, 6))
    >>> ans = raypick.dask.cast_rays(scene, rays)          # dict of dask arrays, like cast_rays
    >>> t_hit = ans["t_hit"].compute()

How the scene travels. With a ``distributed`` client, the scene goes to each worker once: its
bytes (what pickling makes) in a worker plugin (:class:`ScenePlugin`), registered once per client
and scene, which every worker, and every worker that joins later or replaces a lost one, loads
when it starts; tasks carry only the scene's token. ``ScenePlugin.from_path`` loads the scene from
a file every worker sees instead (``raypick.load``). Without a client (dask's local schedulers)
the scene is one node of the graph that the chunks' tasks share.

Each chunk is cast by the engine on the worker's cores (``nthreads=0``) with the GIL released, so
one worker process per machine with one Dask thread is the efficient layout.
"""

from __future__ import annotations

import hashlib
import pickle
import threading
from typing import Any, Dict, Optional

import numpy as np

try:
    import dask
    import dask.array as da
except ImportError as error:  # pragma: no cover - the message is the point
    raise ImportError("raypick.dask needs dask: pip install 'raypick[dask]'") from error

import raypick

__all__ = [
    "ScenePlugin",
    "cast_rays",
    "test_occlusions",
    "count_intersections",
    "compute_closest_points",
    "compute_distance",
    "compute_signed_distance",
    "compute_occupancy",
    "compute",
    "scenes_loaded",
]

# Scenes this process holds, by token (a worker's, loaded by ScenePlugin.setup).
_SCENES: Dict[str, "raypick.Scene"] = {}
_LOADS = 0
_LOCK = threading.Lock()
# (client id, token) pairs whose plugin is registered.
_REGISTERED: set = set()

CAST_COLUMNS = {
    "t_hit": (np.float32, ()),
    "geometry_ids": (np.uint32, ()),
    "primitive_ids": (np.uint32, ()),
    "primitive_uvs": (np.float32, (2,)),
    "primitive_normals": (np.float32, (3,)),
    "instance_ids": (np.uint32, ()),
}
CLOSEST_COLUMNS = {
    "points": (np.float32, (3,)),
    "geometry_ids": (np.uint32, ()),
    "primitive_ids": (np.uint32, ()),
    "primitive_uvs": (np.float32, (2,)),
    "primitive_normals": (np.float32, (3,)),
}


def scenes_loaded() -> int:
    """How many scenes this process has loaded for Dask tasks (a worker's count: 1 per scene)."""
    return _LOADS


def _install(token: str, scene: "raypick.Scene") -> None:
    global _LOADS
    with _LOCK:
        _SCENES[token] = scene
        _LOADS += 1


def _scene(token: str) -> "raypick.Scene":
    try:
        return _SCENES[token]
    except KeyError:
        raise RuntimeError(
            f"raypick.dask: scene {token} is not loaded on this worker (its ScenePlugin was not "
            "registered with the client that runs the tasks)") from None


try:
    from distributed.diagnostics.plugin import WorkerPlugin as _WorkerPlugin
except ImportError:  # pragma: no cover - dask without distributed
    _WorkerPlugin = object


class ScenePlugin(_WorkerPlugin):
    """A worker plugin that loads one scene on every worker when the worker starts (or when the
    plugin is registered): from the scene's pickled bytes, sent once per worker, or from a path
    that every worker sees (:meth:`from_path`). Tasks find it by :attr:`token`."""

    def __init__(self, token: str, data: Optional[bytes] = None, path: Optional[str] = None):
        if (data is None) == (path is None):
            raise ValueError("ScenePlugin needs the scene's bytes or a path, not both")
        self.token = token
        self.data = data
        self.path = path
        self.name = f"raypick-scene-{token}"

    @classmethod
    def from_scene(cls, scene: "raypick.Scene") -> "ScenePlugin":
        data = pickle.dumps(scene, protocol=pickle.HIGHEST_PROTOCOL)
        return cls(_token(data), data=data)

    @classmethod
    def from_path(cls, path: str, **load_options: Any) -> "ScenePlugin":
        """A plugin that loads ``raypick.load(path, **load_options)`` on each worker."""
        token = hashlib.blake2b(f"{path}|{sorted(load_options.items())}".encode(), digest_size=16).hexdigest()
        plugin = cls(token, path=str(path))
        plugin.load_options = load_options
        return plugin

    def setup(self, worker=None):
        if self.token in _SCENES:
            return
        if self.data is not None:
            scene = pickle.loads(self.data)
        else:
            scene = raypick.load(self.path, **getattr(self, "load_options", {}))
        scene.commit()  # build once, before the first task (a no-op for a scene loaded whole)
        _install(self.token, scene)

    def teardown(self, worker=None):
        with _LOCK:
            _SCENES.pop(self.token, None)


def _token(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _client():
    try:
        from distributed import get_client
    except ImportError:
        return None
    try:
        return get_client()
    except ValueError:
        return None


def _scene_ref(scene):
    """What tasks take to find the scene: a token registered with the client's workers, or a
    delayed scene shared by the graph's tasks (no client)."""
    if isinstance(scene, ScenePlugin):
        plugin = scene
    elif isinstance(scene, raypick.Scene):
        client = _client()
        if client is None:
            return dask.delayed(scene, pure=True), False
        plugin = ScenePlugin.from_scene(scene)
    else:
        raise TypeError(f"scene must be a raypick.Scene or a ScenePlugin, got {type(scene).__name__}")
    client = _client()
    if client is None:
        raise ValueError("a ScenePlugin needs a distributed client (distributed.Client)")
    key = (client.id, plugin.token)
    if key not in _REGISTERED:
        client.register_plugin(plugin, name=plugin.name)
        _REGISTERED.add(key)
    return plugin.token, True


def _rows(array, name: str, width: int):
    """Checks a dask array of rows of `width` reals before any work, one chunk across."""
    if not isinstance(array, da.Array):
        raise TypeError(f"{name} must be a dask.array.Array, got {type(array).__name__} (use "
                        "dask.array.from_array)")
    if array.ndim != 2 or array.shape[1] != width:
        raise ValueError(f"{name} must have shape (N, {width}), got {array.shape}")
    if array.dtype.kind not in "fiu":
        raise ValueError(f"{name} must be a float32 or float64 array, got dtype {array.dtype}")
    if len(array.chunks[1]) != 1:
        array = array.rechunk({1: width})
    return array


def _run(scene_ref, by_token: bool, method: str, block, kwargs):
    scene = _scene(scene_ref) if by_token else scene_ref
    return getattr(scene, method)(np.ascontiguousarray(block), **kwargs)


def _columns(scene, array, method: str, columns, kwargs):
    scene_ref, by_token = _scene_ref(scene)
    blocks = array.to_delayed().ravel()
    out = {name: [] for name in columns}
    for block, n in zip(blocks, array.chunks[0]):
        result = dask.delayed(_run, pure=True)(scene_ref, by_token, method, block, kwargs)
        for name, (dtype, tail) in columns.items():
            out[name].append(da.from_delayed(result[name], shape=(n, *tail), dtype=dtype))
    return {name: da.concatenate(parts) if parts else da.empty((0, *columns[name][1]), dtype=columns[name][0])
            for name, parts in out.items()}


def _map(scene, array, method, dtype, kwargs):
    # map_blocks passes the block first: reorder through a small wrapper.
    scene_ref, by_token = _scene_ref(scene)

    def task(block, scene_ref=scene_ref, by_token=by_token):
        return _run(scene_ref, by_token, method, block, kwargs)

    if by_token:
        return array.map_blocks(task, dtype=dtype, drop_axis=1, meta=np.empty((0,), dtype))
    # A delayed scene must be an argument for dask to make it a dependency.
    return array.map_blocks(lambda block, s: _run(s, False, method, block, kwargs), scene_ref,
                            dtype=dtype, drop_axis=1, meta=np.empty((0,), dtype))


def cast_rays(scene, rays, *, tnear=0.0, tfar=float("inf"), mask=0xFFFFFFFF, cull_back_faces=False,
              nthreads=0) -> Dict[str, "da.Array"]:
    """:meth:`raypick.Scene.cast_rays` over a dask array of ``(N, 6)`` rays: a dict of dask arrays
    (``t_hit``, ``geometry_ids``, ``primitive_ids``, ``primitive_uvs``, ``primitive_normals``,
    ``instance_ids``) chunked like ``rays``. ``tnear``/``tfar`` are numbers here."""
    rays = _rows(rays, "rays", 6)
    kwargs = dict(tnear=tnear, tfar=tfar, mask=mask, cull_back_faces=cull_back_faces, nthreads=nthreads)
    return _columns(scene, rays, "cast_rays", CAST_COLUMNS, kwargs)


def test_occlusions(scene, rays, *, tnear=0.0, tfar=float("inf"), mask=0xFFFFFFFF,
                    cull_back_faces=False, nthreads=0) -> "da.Array":
    """:meth:`raypick.Scene.test_occlusions` over a dask array of ``(N, 6)`` rays (bool)."""
    rays = _rows(rays, "rays", 6)
    kwargs = dict(tnear=tnear, tfar=tfar, mask=mask, cull_back_faces=cull_back_faces, nthreads=nthreads)
    return _map(scene, rays, "test_occlusions", np.bool_, kwargs)


test_occlusions.__test__ = False  # not a pytest test


def count_intersections(scene, rays, *, mask=0xFFFFFFFF, cull_back_faces=False, nthreads=0) -> "da.Array":
    """:meth:`raypick.Scene.count_intersections` over a dask array of ``(N, 6)`` rays (int32)."""
    rays = _rows(rays, "rays", 6)
    return _map(scene, rays, "count_intersections", np.int32,
                dict(mask=mask, cull_back_faces=cull_back_faces, nthreads=nthreads))


def compute_closest_points(scene, points, *, nthreads=0) -> Dict[str, "da.Array"]:
    """:meth:`raypick.Scene.compute_closest_points` over a dask array of ``(N, 3)`` points."""
    points = _rows(points, "points", 3)
    return _columns(scene, points, "compute_closest_points", CLOSEST_COLUMNS, dict(nthreads=nthreads))


def compute_distance(scene, points, *, nthreads=0) -> "da.Array":
    """:meth:`raypick.Scene.compute_distance` over a dask array of ``(N, 3)`` points (float32)."""
    return _map(scene, _rows(points, "points", 3), "compute_distance", np.float32, dict(nthreads=nthreads))


def compute_signed_distance(scene, points, *, method="parity", nthreads=0) -> "da.Array":
    """:meth:`raypick.Scene.compute_signed_distance` over a dask array of ``(N, 3)`` points."""
    return _map(scene, _rows(points, "points", 3), "compute_signed_distance", np.float32,
                dict(method=method, nthreads=nthreads))


def compute_occupancy(scene, points, *, method="parity", nthreads=0) -> "da.Array":
    """:meth:`raypick.Scene.compute_occupancy` over a dask array of ``(N, 3)`` points."""
    return _map(scene, _rows(points, "points", 3), "compute_occupancy", np.float32,
                dict(method=method, nthreads=nthreads))


def compute(result, progress: bool = False):
    """Computes a result of this module (a dask array or a dict of them) in one pass, so that the
    columns of a cast share their chunks' work, with Dask's own progress bar when asked: the
    distributed dashboard's ``distributed.progress`` with a client, ``dask.diagnostics.ProgressBar``
    otherwise."""
    if isinstance(result, dict):
        keys = list(result)
        values = compute(tuple(result[k] for k in keys), progress)
        return dict(zip(keys, values))
    if not isinstance(result, tuple):
        return compute((result,), progress)[0]
    client = _client()
    if client is None:
        if progress:
            from dask.diagnostics import ProgressBar

            with ProgressBar():
                return dask.compute(*result)
        return dask.compute(*result)
    futures = client.compute(list(result))
    if progress:
        from distributed import progress as show

        show(futures)
    return tuple(client.gather(futures))
