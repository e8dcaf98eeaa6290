"""Type stubs for the raypick extension module (see the docstrings at run time for examples)."""

from os import PathLike
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str
INVALID_ID: int
"""4294967295: geometry/primitive/instance id of a miss (Open3D's and Embree's invalid id)."""

ArrayLike = npt.ArrayLike
F32 = npt.NDArray[np.float32]

class Hit:
    """One ray hit, returned by :meth:`Scene.pick`."""

    @property
    def t(self) -> float: ...
    @property
    def point(self) -> Tuple[float, float, float]: ...
    @property
    def normal(self) -> Tuple[float, float, float]: ...
    @property
    def u(self) -> float: ...
    @property
    def v(self) -> float: ...
    @property
    def primitive_id(self) -> int: ...
    @property
    def geometry_id(self) -> int: ...
    @property
    def instance_id(self) -> Optional[int]: ...
    @property
    def geometry_name(self) -> Optional[str]: ...

class Camera:
    """A perspective look-at camera (right-handed, OpenGL conventions) for pixel rays and picking.
    Window coordinates: continuous pixels, origin top-left, pixel (i, j) centred at (i+0.5, j+0.5)."""

    def __init__(
        self,
        eye: ArrayLike,
        target: ArrayLike,
        up: Optional[ArrayLike] = None,
        fov_y_deg: float = 60.0,
        width: int = 640,
        height: int = 480,
        near: float = 0.01,
        far: float = 1000.0,
    ) -> None: ...
    @property
    def width(self) -> int: ...
    @property
    def height(self) -> int: ...
    @property
    def eye(self) -> F32: ...
    def pixel_ray(self, x: float, y: float) -> F32:
        """(6,) float32 [origin on the near plane, unit direction] through window position (x, y)."""
    def rays(self) -> F32:
        """(height, width, 6) float32 rays through every pixel centre, row 0 at the top."""
    def __reduce__(self) -> Tuple[Any, ...]: ...

class Scene:
    """Triangle meshes, spheres and instances; Open3D RaycastingScene-style batch queries over
    (..., 6) ray arrays and trimesh-style helpers. Builds its BVH lazily on the first query after a
    change (or on commit()). Thread-safe and picklable."""

    def __init__(self) -> None: ...
    def add_triangles(
        self, vertices: Any, triangles: Optional[ArrayLike] = None, name: Optional[str] = None
    ) -> int:
        """Adds a mesh ((N, 3) float vertices, (M, 3) integer triangles, or a trimesh / Open3D
        mesh object); returns its geometry id."""
    def add_spheres(
        self, centers: ArrayLike, radii: Union[float, ArrayLike], name: Optional[str] = None
    ) -> int:
        """Adds (N, 3) centres with (N,) or scalar radii; returns the geometry id."""
    def add_instance(
        self,
        scene_or_geometry: Union["Scene", int],
        matrix: Optional[ArrayLike] = None,
        name: Optional[str] = None,
    ) -> int:
        """Places a Scene (of meshes and spheres) or a geometry id of this scene with a 4x4
        affine world_from_object matrix (numpy convention); returns the instance's id."""
    def commit(self) -> None:
        """Builds the acceleration structure now (releases the GIL)."""
    @property
    def num_geometries(self) -> int: ...
    @property
    def num_triangles(self) -> int: ...
    def __len__(self) -> int: ...
    def geometry_name(self, geometry_id: int) -> Optional[str]: ...
    def geometry_kind(self, geometry_id: int) -> str:
        """'mesh', 'spheres' or 'instance'."""
    def bounds(self) -> F32:
        """(2, 3) float32 [min, max] world box."""
    def mesh_arrays(self, geometry_id: int) -> Tuple[F32, npt.NDArray[np.uint32]]: ...
    def instance_matrix(self, geometry_id: int) -> F32: ...
    def cast_rays(self, rays: ArrayLike, nthreads: int = 0) -> Dict[str, np.ndarray]:
        """Closest hits: t_hit (inf on a miss), geometry_ids, primitive_ids, instance_ids (uint32,
        INVALID_ID on a miss), primitive_uvs (..., 2), primitive_normals (..., 3).

        nthreads (every batch query): 0 uses every core; 1..1024 that many threads (a few pools of
        the counts used are kept for reuse); anything else raises ValueError."""
    def test_occlusions(
        self, rays: ArrayLike, tnear: float = 0.0, tfar: float = float("inf"), nthreads: int = 0
    ) -> npt.NDArray[np.bool_]: ...
    def count_intersections(self, rays: ArrayLike, nthreads: int = 0) -> npt.NDArray[np.int32]: ...
    def list_intersections(self, rays: ArrayLike, nthreads: int = 0) -> Dict[str, np.ndarray]:
        """All hits: ray_splits (num_rays + 1,), ray_ids, t_hit, geometry_ids, primitive_ids,
        instance_ids, primitive_uvs, primitive_normals; sorted by ray then t."""
    def compute_closest_points(
        self, query_points: ArrayLike, nthreads: int = 0
    ) -> Dict[str, np.ndarray]:
        """Closest surface points: points (..., 3), geometry_ids, primitive_ids (uint32,
        INVALID_ID for a non-finite point or an empty scene), primitive_uvs (..., 2),
        primitive_normals (..., 3)."""
    def compute_distance(
        self, query_points: ArrayLike, nthreads: int = 0
    ) -> npt.NDArray[np.float32]: ...
    def compute_signed_distance(
        self, query_points: ArrayLike, nthreads: int = 0, method: str = "parity"
    ) -> npt.NDArray[np.float32]:
        """Distance, negative inside; method is "parity" or "winding_number"."""
    def compute_occupancy(
        self, query_points: ArrayLike, nthreads: int = 0, method: str = "parity"
    ) -> npt.NDArray[np.float32]:
        """1.0 inside, 0.0 outside."""
    def contains(self, points: ArrayLike, method: str = "parity") -> npt.NDArray[np.bool_]:
        """trimesh-style: inside test for (N, 3) points."""
    def closest_point(
        self, points: ArrayLike
    ) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.int64]]:
        """trimesh-style: (closest points, distances, triangle ids) for (N, 3) points."""
    def intersects_first(
        self, ray_origins: ArrayLike, ray_directions: ArrayLike
    ) -> npt.NDArray[np.int64]:
        """trimesh-style: first triangle index per ray, -1 on a miss."""
    def intersects_any(
        self, ray_origins: ArrayLike, ray_directions: ArrayLike
    ) -> npt.NDArray[np.bool_]: ...
    def intersects_location(
        self, ray_origins: ArrayLike, ray_directions: ArrayLike, multiple_hits: bool = True
    ) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """trimesh-style: (locations, index_ray, index_tri)."""
    def pick(self, camera: Camera, x: float, y: float, tolerance_px: float = 0.0) -> Optional[Hit]:
        """The closest hit under window position (x, y), or None; with tolerance_px > 0, also
        what is up to that many pixels away when nothing is exactly under it."""
    def pick_rect(
        self, camera: Camera, x0: float, y0: float, x1: float, y1: float
    ) -> List[Tuple[int, Optional[int]]]:
        """(geometry_id, instance_id) of everything inside the window rectangle (marquee)."""
    @staticmethod
    def create_rays_pinhole(
        fov_deg: float,
        center: ArrayLike,
        eye: ArrayLike,
        up: ArrayLike,
        width_px: int,
        height_px: int,
    ) -> F32: ...
    def save(self, path: Union[str, "PathLike[str]"]) -> None:
        """Saves the scene, built, to a scene file (.rpk): every geometry, name and mask and every
        BVH as built, so raypick.load reads it back without a build. Instances made with
        add_instance(geometry_id, ...) load as instances of a one-geometry scene (hits report
        geometry id 0); pickling keeps the id. Raises ValueError if the scene cannot be built,
        OSError if the file cannot be written."""
    def __getstate__(self) -> Dict[str, Any]:
        """A scene file's bytes (every BVH as built) and the ids instanced hits report: the
        unpickled scene does no build."""
    def __setstate__(self, state: Dict[str, Any]) -> None: ...

def create_rays_pinhole(
    fov_deg: float,
    center: ArrayLike,
    eye: ArrayLike,
    up: ArrayLike,
    width_px: int,
    height_px: int,
) -> F32:
    """Open3D's create_rays_pinhole: (height_px, width_px, 6) float32 rays from eye; horizontal
    field of view; directions with unit component along the view (t_hit is depth)."""

def load(
    path: Union[str, "PathLike[str]"],
    *,
    allow_outside_refs: bool = False,
    max_bytes: Optional[int] = None,
    max_triangles: Optional[int] = None,
    keep_instances: bool = False,
) -> Scene:
    """Loads an OBJ, glTF/GLB, PLY or STL file, or a scene file (.rpk, from Scene.save or
    `raypick build`, read with every BVH and no build), into a built Scene.

    A glTF buffer uri must resolve (after percent-decoding, ``..`` and symbolic links) to a regular
    file inside the model's folder unless ``allow_outside_refs`` (for trusted files); at most
    ``byteLength`` bytes are read from it. ``max_bytes`` (default 1 GiB: the model and the files it
    refers to) and ``max_triangles`` (default 67,108,864) bound the load. Raises ValueError naming
    the file, the place and the reason. A glTF node whose mesh no other node uses is baked into
    world space (faster to cast; its hits carry the node's id in ``geometry_ids`` and no
    instance) unless ``keep_instances``."""

def offset_ray_origin(points: ArrayLike, normals: ArrayLike) -> F32:
    """(..., 3) float32 origins for rays leaving the surface at points (..., 3) on the side of the
    unit geometric normals (..., 3): the engine's spawn offset (a few hundred ulps of each
    coordinate along the normal). Cast the new rays with tnear = 0."""
