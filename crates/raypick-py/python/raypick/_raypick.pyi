"""Type stubs for the raypick extension module (see the docstrings at run time for examples)."""

from os import PathLike
from typing import Any, Dict, List, Literal, Optional, Tuple, Union, overload

import numpy as np
import numpy.typing as npt

__version__: str
INVALID_ID: int
"""4294967295: geometry/primitive/instance id of a miss (Open3D's and Embree's invalid id)."""

ArrayLike = npt.ArrayLike
F32 = npt.NDArray[np.float32]
TRange = Union[float, ArrayLike]
"""A t bound: one number for every ray, or one value per ray (shaped like rays.shape[:-1], or flat)."""

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
    def instance_path(self) -> List[int]:
        """Every instance the hit was reached through, outermost first."""
    @property
    def geometry_name(self) -> Optional[str]: ...

class Camera:
    """A camera for pixel rays and picking: look-at with a perspective or orthographic projection,
    or a renderer's own matrices (from_matrices), in the OpenGL, Direct3D (wgpu, Metal) or Vulkan
    clip space, standard or reversed depth. Window coordinates: continuous pixels, origin
    top-left (or bottom-left), pixel (i, j) centred at (i+0.5, j+0.5)."""

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
        *,
        projection: str = "perspective",
        ortho_height: Optional[float] = None,
        convention: str = "opengl",
        reverse_z: bool = False,
        pixel_origin: str = "top-left",
    ) -> None:
        """projection: "perspective" or "orthographic" (ortho_height tall; default the
        perspective view's height at target); far=inf for an infinite perspective; convention:
        "opengl", "direct3d" / "wgpu" / "metal", "vulkan"; reverse_z: perspective only."""
    @staticmethod
    def from_matrices(
        view_from_world: ArrayLike,
        clip_from_view: ArrayLike,
        width: int,
        height: int,
        *,
        convention: str = "opengl",
        reverse_z: bool = False,
        pixel_origin: str = "top-left",
    ) -> "Camera":
        """A camera from (4, 4) view and projection matrices in numpy's convention
        (p_clip = clip_from_view @ view_from_world @ [x, y, z, 1])."""
    @property
    def width(self) -> int: ...
    @property
    def height(self) -> int: ...
    @property
    def eye(self) -> F32: ...
    @property
    def convention(self) -> str:
        """'opengl', 'direct3d' or 'vulkan'."""
    @property
    def view_matrix(self) -> F32:
        """(4, 4) float32 view_from_world (numpy convention)."""
    @property
    def projection_matrix(self) -> F32:
        """(4, 4) float32 clip_from_view (numpy convention)."""
    def project(self, point: ArrayLike) -> Optional[Tuple[float, float, float]]:
        """Window (x, y, depth) of a world point, None behind the camera."""
    def pixel_ray(self, x: float, y: float) -> F32:
        """(6,) float32 [origin on the near plane, unit direction] through window position (x, y)."""
    def rays(self) -> F32:
        """(height, width, 6) float32 rays through every pixel centre, row 0 at the top (bottom
        with pixel_origin="bottom-left")."""
    def __reduce__(self) -> Tuple[Any, ...]: ...

class Scene:
    """Triangle meshes, spheres and instances; Open3D RaycastingScene-style batch queries over
    (..., 6) ray arrays and trimesh-style helpers. Builds its BVH lazily on the first query after a
    change (or on commit()). Thread-safe and picklable."""

    def __init__(self) -> None: ...
    def add_triangles(
        self,
        vertices: Any,
        triangles: Optional[ArrayLike] = None,
        name: Optional[str] = None,
        *,
        mask: int = 0xFFFFFFFF,
    ) -> int:
        """Adds a mesh ((N, 3) float vertices, (M, 3) integer triangles, or a trimesh / Open3D
        mesh object); returns its geometry id. A query with ray mask m considers it when
        mask & m != 0."""
    def add_spheres(
        self,
        centers: ArrayLike,
        radii: Union[float, ArrayLike],
        name: Optional[str] = None,
        *,
        mask: int = 0xFFFFFFFF,
    ) -> int:
        """Adds (N, 3) centres with (N,) or scalar radii; returns the geometry id."""
    def add_instance(
        self,
        scene_or_geometry: Union["Scene", int],
        matrix: Optional[ArrayLike] = None,
        name: Optional[str] = None,
        *,
        mask: int = 0xFFFFFFFF,
    ) -> int:
        """Places a Scene (which may hold instances, up to 8 levels) or a geometry id of this scene
        with a 4x4 affine world_from_object matrix (numpy convention); returns the instance's id."""
    def update_vertices(self, geometry_id: int, vertices: ArrayLike) -> None:
        """Moves mesh geometry_id's vertices (same count) and refits the trees."""
    def commit(self) -> None:
        """Builds the acceleration structure now (releases the GIL)."""
    @property
    def origin(self) -> npt.NDArray[np.float64]:
        """(3,) world position of the frame the scene stores float32 coordinates in (zero unless the
        first geometry is far from zero): float64 input at 1e8 keeps the precision of its size."""
    @property
    def num_geometries(self) -> int: ...
    @property
    def num_triangles(self) -> int:
        """Triangles stored: the scene's meshes and those of the scenes its instances place, each
        placed scene counted once."""
    def __len__(self) -> int: ...
    def geometry_name(self, geometry_id: int) -> Optional[str]: ...
    def geometry_kind(self, geometry_id: int) -> str:
        """'mesh', 'spheres' or 'instance'."""
    def bounds(self) -> F32:
        """(2, 3) float32 [min, max] world box."""
    def mesh_arrays(self, geometry_id: int) -> Tuple[F32, npt.NDArray[np.uint32]]: ...
    def instance_matrix(self, geometry_id: int) -> F32: ...
    def cast_rays(
        self,
        rays: ArrayLike,
        nthreads: int = 0,
        *,
        tnear: TRange = 0.0,
        tfar: TRange = float("inf"),
        mask: int = 0xFFFFFFFF,
        cull_back_faces: bool = False,
        instance_paths: bool = False,
    ) -> Dict[str, np.ndarray]:
        """Closest hits: t_hit (inf on a miss), geometry_ids, primitive_ids, instance_ids (uint32,
        INVALID_ID on a miss), primitive_uvs (..., 2), primitive_normals (..., 3).

        nthreads (every batch query): 0 uses every core; 1..1024 that many threads (a few pools of
        the counts used are kept for reuse); anything else raises ValueError. tnear/tfar: the
        t range searched; mask: the ray mask; cull_back_faces: skip back faces (and the exit
        crossing of spheres). The same options apply to every batch ray query. instance_paths: also
        return instance_paths (..., 8) uint32, every instance on the way (nested instances)."""
    def test_occlusions(
        self,
        rays: ArrayLike,
        tnear: TRange = 0.0,
        tfar: TRange = float("inf"),
        nthreads: int = 0,
        *,
        mask: int = 0xFFFFFFFF,
        cull_back_faces: bool = False,
    ) -> npt.NDArray[np.bool_]: ...
    def count_intersections(
        self,
        rays: ArrayLike,
        nthreads: int = 0,
        *,
        tnear: TRange = 0.0,
        tfar: TRange = float("inf"),
        mask: int = 0xFFFFFFFF,
        cull_back_faces: bool = False,
    ) -> npt.NDArray[np.int32]: ...
    def list_intersections(
        self,
        rays: ArrayLike,
        nthreads: int = 0,
        *,
        tnear: TRange = 0.0,
        tfar: TRange = float("inf"),
        mask: int = 0xFFFFFFFF,
        cull_back_faces: bool = False,
        instance_paths: bool = False,
    ) -> Dict[str, np.ndarray]:
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
    @overload
    @staticmethod
    def create_rays_pinhole(
        fov_deg: float,
        center: ArrayLike,
        eye: ArrayLike,
        up: ArrayLike,
        width_px: int,
        height_px: int,
    ) -> F32: ...
    @overload
    @staticmethod
    def create_rays_pinhole(
        intrinsic_matrix: ArrayLike, extrinsic_matrix: ArrayLike, width_px: int, height_px: int
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

@overload
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
@overload
def create_rays_pinhole(
    intrinsic_matrix: ArrayLike, extrinsic_matrix: ArrayLike, width_px: int, height_px: int
) -> F32:
    """Open3D's intrinsic form: rays from the camera centre -R^T t with directions
    R^T K^-1 (x + 0.5, y + 0.5, 1), K the (3, 3) intrinsic matrix, [R | t] the (4, 4)
    camera_from_world extrinsic matrix."""

def load(
    path: Union[str, "PathLike[str]"],
    *,
    allow_outside_refs: bool = False,
    max_bytes: Optional[int] = None,
    max_triangles: Optional[int] = None,
    keep_instances: bool = False,
    hierarchy: bool = False,
    bvh: Literal["fast", "balanced", "high_quality", "spatial"] = "balanced",
) -> Scene:
    """Loads an OBJ, glTF/GLB, PLY or STL file, or a scene file (.rpk, from Scene.save or
    `raypick build`, read with every BVH and no build), into a built Scene.

    A glTF buffer uri must resolve (after percent-decoding, ``..`` and symbolic links) to a regular
    file inside the model's folder unless ``allow_outside_refs`` (for trusted files); at most
    ``byteLength`` bytes are read from it. ``max_bytes`` (default 1 GiB: the model and the files it
    refers to) and ``max_triangles`` (default 67,108,864) bound the load. Raises FileNotFoundError,
    PermissionError or OSError when the file system fails, ValueError for bad content (naming
    the file, the place and the reason). A glTF node whose mesh no other node uses is baked into
    world space (faster to cast; its hits carry the node's id in ``geometry_ids`` and no
    instance) unless ``keep_instances``. With ``hierarchy`` the glTF node tree stays nested
    instances: a hit's ``instance_path`` leads from a root node down to the node it struck (nodes
    deeper than 8 levels are placed flat in their deepest allowed ancestor); ``keep_instances`` and
    ``hierarchy`` together raise ValueError. ``bvh`` picks the build: ``"spatial"`` cuts long
    triangles (walls, floors) for faster casts in architecture at four to ten times the build
    time, for a scene built once and saved; a scene file keeps the setting it was built with."""

def offset_ray_origin(points: ArrayLike, normals: ArrayLike) -> F32:
    """(..., 3) float32 origins for rays leaving the surface at points (..., 3) on the side of the
    unit geometric normals (..., 3): the engine's spawn offset (a few hundred ulps of each
    coordinate along the normal). Cast the new rays with tnear = 0."""
