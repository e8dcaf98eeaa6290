"""offset_ray_origin: the engine's spawn offset over numpy arrays, checked bit for bit against the
method it implements, and rays spawned with it do not hit their own surface again."""

import numpy as np
import pytest

import raypick


def offset_reference(p, n):
    """Wächter & Binder's offset in numpy: 256 ulps per unit of normal on the float's bits, or
    n / 65536 below 1/32 (the engine's constants)."""
    p = np.asarray(p, np.float32)
    n = np.asarray(n, np.float32)
    of = (n * np.float32(256.0)).astype(np.int32)  # truncates towards zero, like `as i32`
    bits = p.view(np.int32)
    moved = np.where(p < 0, bits - of, bits + of).astype(np.int32).view(np.float32)
    near = np.abs(p) < np.float32(1.0 / 32.0)
    return np.where(near, p + np.float32(1.0 / 65536.0) * n, moved)


def test_matches_the_method_bit_for_bit(rng):
    p = (rng.standard_normal((1000, 3)) * 10.0 ** rng.integers(-3, 4, (1000, 1))).astype(np.float32)
    n = rng.standard_normal((1000, 3)).astype(np.float32)
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    got = raypick.offset_ray_origin(p, n)
    assert got.dtype == np.float32 and got.shape == (1000, 3)
    np.testing.assert_array_equal(got, offset_reference(p, n))


def test_keeps_leading_shape_and_accepts_float64_and_lists():
    p = np.zeros((2, 4, 3))
    n = np.tile([0.0, 0.0, 1.0], (2, 4, 1))
    assert raypick.offset_ray_origin(p, n).shape == (2, 4, 3)
    o = raypick.offset_ray_origin([[1000.0, 0.0, 0.5]], [[0.0, 1.0, 0.0]])
    assert o[0, 0] == 1000.0 and o[0, 1] > 0.0 and o[0, 2] == 0.5


@pytest.mark.parametrize("p, n", [(np.zeros((3, 3)), np.zeros((2, 3))), (np.zeros((3, 2)), np.zeros((3, 2)))])
def test_refuses_mismatched_shapes(p, n):
    with pytest.raises(ValueError):
        raypick.offset_ray_origin(p, n)


def test_spawned_rays_leave_a_floor_far_from_the_origin(rng):
    # A floor at y = 0 spanning a room whose centre is far from the origin: points computed from
    # hits are off its plane by a few ulps of the large x/z coordinates. Rays spawned from the
    # offset points into the upper half-space must never hit the floor again.
    v = np.array([[1000, 0, 1000], [5000, 0, 1000], [1000, 0, 5000], [5000, 0, 5000]], np.float32)
    f = np.array([[0, 2, 1], [1, 2, 3]])
    scene = raypick.Scene()
    scene.add_triangles(v, f)
    n = 20000
    eye = np.array([3000.0, 800.0, 3000.0], np.float32)
    target = np.column_stack([rng.uniform(1100, 4900, n), np.zeros(n), rng.uniform(1100, 4900, n)])
    d = (target - eye).astype(np.float32)
    rays = np.column_stack([np.tile(eye, (n, 1)), d]).astype(np.float32)
    ans = scene.cast_rays(rays)
    assert np.all(np.isfinite(ans["t_hit"]))
    # The hit points as the engine makes them, a + u (b - a) + v (c - a) in float32: a coordinate
    # the triangle's vertices share comes out exact (o + t d would be off by ulps of 800).
    tri = v[f[ans["primitive_ids"].astype(np.int64)]]
    u, w = ans["primitive_uvs"][:, :1], ans["primitive_uvs"][:, 1:]
    points = tri[:, 0] + u * (tri[:, 1] - tri[:, 0]) + w * (tri[:, 2] - tri[:, 0])
    normals = ans["primitive_normals"].copy()
    normals[np.sum(normals * d, axis=1) > 0] *= -1  # facing the viewer
    origins = raypick.offset_ray_origin(points, normals)
    # Directions into the upper half-space, down to grazing ones.
    out = rng.standard_normal((n, 3)).astype(np.float32)
    out[:, 1] = np.abs(out[:, 1]) * 10.0 ** rng.uniform(-4, 0, n)
    spawned = np.column_stack([origins, out]).astype(np.float32)
    assert np.all(origins[:, 1] > 0)
    assert not scene.test_occlusions(spawned).any()
