"""raypick: exact, fast ray casting and picking (Rust), for numpy users.

The API follows Open3D's ``RaycastingScene`` (``cast_rays``, ``test_occlusions``,
``count_intersections``, ``list_intersections``, ``create_rays_pinhole``: same names, result keys,
dtypes, shapes and miss values) and trimesh's ray helpers (``intersects_first``,
``intersects_any``, ``intersects_location``).

Example::

    >>> import numpy as np, raypick
    >>> scene = raypick.Scene()
    >>> scene.add_triangles([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    0
    >>> ans = scene.cast_rays([[0.2, 0.2, 1.0, 0.0, 0.0, -1.0]])
    >>> float(ans["t_hit"][0]), int(ans["primitive_ids"][0])
    (1.0, 0)

A :class:`Scene` collects geometries and builds its BVH on the first query after a change (or on
:meth:`Scene.commit`), like Embree's and Open3D's commit. Queries release the GIL and use every
core unless ``nthreads`` says otherwise. Scenes pickle (geometries are stored, the BVH is rebuilt),
so they can be shipped to worker processes.
"""

from ._raypick import (
    INVALID_ID,
    Camera,
    Hit,
    Scene,
    __version__,
    create_rays_pinhole,
    load,
    offset_ray_origin,
)

__all__ = [
    "INVALID_ID",
    "Camera",
    "Hit",
    "Scene",
    "__version__",
    "create_rays_pinhole",
    "load",
    "offset_ray_origin",
]
