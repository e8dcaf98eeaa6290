"""Inputs from other array libraries: anything with DLPack (a CPU tensor of PyTorch, Open3D, JAX),
Open3D's tensor meshes, trimesh meshes — the same answers as from numpy arrays."""

import numpy as np
import pytest

import raypick
from conftest import cube, random_rays

INVALID = 4294967295


class DLPackOnly:
    """A tensor that offers nothing but DLPack (no __array__, no buffer protocol), as a library's
    tensor type does; numpy.asarray would make an array of objects of it."""

    def __init__(self, a):
        self._a = np.ascontiguousarray(a)

    def __dlpack__(self, *args, **kwargs):
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


class OnTheGpu(DLPackOnly):
    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA

    def __dlpack__(self, *args, **kwargs):
        raise BufferError("the tensor is on CUDA device 0")


def test_dlpack_tensors_are_read_like_numpy(rng):
    v, f = cube(half=1.0)
    rays = random_rays(rng, 500, origin_radius=3.0)
    ref = raypick.Scene()
    ref.add_triangles(v, f)
    scene = raypick.Scene()
    scene.add_triangles(DLPackOnly(v), DLPackOnly(f))
    for key in ["t_hit", "primitive_ids"]:
        np.testing.assert_array_equal(scene.cast_rays(DLPackOnly(rays))[key], ref.cast_rays(rays)[key])
    np.testing.assert_array_equal(scene.test_occlusions(DLPackOnly(rays), tfar=DLPackOnly(np.full(500, 2.0))),
                                  ref.test_occlusions(rays, tfar=2.0))
    np.testing.assert_array_equal(scene.compute_distance(DLPackOnly(rays[:, :3])),
                                  ref.compute_distance(rays[:, :3]))
    with pytest.raises(ValueError, match="CPU"):
        scene.cast_rays(OnTheGpu(rays))


def test_open3d_tensors_and_tensor_meshes():
    o3d = pytest.importorskip("open3d")
    v, f = cube(half=1.0)
    mesh = o3d.t.geometry.TriangleMesh()
    mesh.vertex.positions = o3d.core.Tensor(v.astype(np.float32))
    mesh.triangle.indices = o3d.core.Tensor(f.astype(np.int32))
    scene = raypick.Scene()
    scene.add_triangles(mesh)
    rays = o3d.core.Tensor(np.array([[0, 0, 5, 0, 0, -1]], np.float32))
    ans = scene.cast_rays(rays)
    assert ans["t_hit"][0] == pytest.approx(4.0, rel=4e-7)
    ref = o3d.t.geometry.RaycastingScene()
    ref.add_triangles(mesh)
    assert ref.cast_rays(rays)["t_hit"].numpy()[0] == pytest.approx(ans["t_hit"][0], rel=1e-6)


def test_torch_tensors():
    torch = pytest.importorskip("torch")
    v, f = cube(half=1.0)
    scene = raypick.Scene()
    scene.add_triangles(torch.tensor(v), torch.tensor(f))
    ans = scene.cast_rays(torch.tensor([[0.0, 0.0, 5.0, 0.0, 0.0, -1.0]]))
    assert ans["t_hit"][0] == pytest.approx(4.0, rel=4e-7)


def test_trimesh_meshes():
    trimesh = pytest.importorskip("trimesh")
    v, f = cube(half=1.0)
    scene = raypick.Scene()
    scene.add_triangles(trimesh.Trimesh(v, f, process=False))
    assert scene.num_triangles == 12
    assert scene.cast_rays(np.array([[0, 0, 5, 0, 0, -1]], np.float32))["primitive_ids"][0] != INVALID
