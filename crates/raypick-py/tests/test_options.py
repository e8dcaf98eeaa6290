"""The query options (masks, back-face culling, per-ray t ranges), refit, the cameras' projections
and conventions, Open3D's intrinsic/extrinsic pinhole rays, and the load errors' classes — each
checked against an f64 reference, Open3D's own numbers or a scene built without the option."""

import pickle

import numpy as np
import pytest

import raypick
from conftest import SHARED_DATA, moller_trumbore, random_rays, random_soup

INVALID = 4294967295
ULPS = 4e-7  # the watertight kernel's t: a few ulps of t (Woop et al. 2013, section 4)


def planes(zs, mask_of=lambda k: 0xFFFFFFFF):
    """A scene of unit squares at heights zs, geometry k with mask mask_of(k)."""
    scene = raypick.Scene()
    for k, z in enumerate(zs):
        scene.add_triangles([[-1, -1, z], [1, -1, z], [1, 1, z], [-1, 1, z]], [[0, 1, 2], [0, 2, 3]],
                            mask=mask_of(k))
    return scene


DOWN = np.array([[0.25, 0.1, 10, 0, 0, -1]], np.float32)


# --- masks -------------------------------------------------------------------------------------

def test_ray_masks_select_geometries_by_their_masks():
    scene = planes([0, 1, 2], mask_of=lambda k: 1 << k)  # masks 1, 2, 4
    for mask, expected in [(1, 0), (2, 1), (4, 2), (3, 1), (5, 2), (0xFFFFFFFF, 2)]:
        ans = scene.cast_rays(DOWN, mask=mask)
        assert ans["geometry_ids"][0] == expected, mask
        assert ans["t_hit"][0] == pytest.approx(10 - expected, rel=ULPS)
    assert scene.cast_rays(DOWN, mask=8)["geometry_ids"][0] == INVALID
    assert not scene.test_occlusions(DOWN, mask=8)[0]
    assert scene.test_occlusions(DOWN, mask=2)[0]
    assert scene.count_intersections(DOWN, mask=5)[0] == 2
    listed = scene.list_intersections(DOWN, mask=6)
    assert listed["geometry_ids"].tolist() == [2, 1]


def test_masks_match_a_scene_without_the_masked_geometries(rng):
    v1, f1 = random_soup(rng, 60)
    v2, f2 = random_soup(rng, 60)
    both = raypick.Scene()
    both.add_triangles(v1, f1, mask=0b01)
    both.add_triangles(v2, f2, mask=0b10)
    only_second = raypick.Scene()
    only_second.add_triangles(v2, f2)
    rays = random_rays(rng, 2000)
    got = both.cast_rays(rays, mask=0b10)
    ref = only_second.cast_rays(rays)
    hit = ref["primitive_ids"] != INVALID
    assert hit.sum() > 100
    np.testing.assert_array_equal(got["primitive_ids"], ref["primitive_ids"])
    np.testing.assert_array_equal(got["geometry_ids"][hit], 1)
    np.testing.assert_allclose(got["t_hit"][hit], ref["t_hit"][hit], rtol=1e-5)


def test_sphere_and_instance_masks():
    part = raypick.Scene()
    part.add_spheres([[0, 0, 0]], 1.0)
    scene = raypick.Scene()
    scene.add_spheres([[0, 0, -5]], 1.0, mask=1)
    scene.add_instance(part, mask=2)
    ray = np.array([[0, 0, 10, 0, 0, -1]], np.float32)
    assert scene.cast_rays(ray, mask=1)["geometry_ids"][0] == 0
    assert scene.cast_rays(ray, mask=2)["instance_ids"][0] == 1
    assert scene.cast_rays(ray, mask=2)["t_hit"][0] == pytest.approx(9, rel=ULPS)
    assert scene.count_intersections(ray, mask=3)[0] == 4


def test_masks_survive_pickling():
    scene = planes([0, 1], mask_of=lambda k: 1 << k)
    back = pickle.loads(pickle.dumps(scene))
    assert back.cast_rays(DOWN, mask=1)["geometry_ids"][0] == 0


# --- back faces ---------------------------------------------------------------------------------

def test_back_face_culling_against_reference(rng):
    v, f = random_soup(rng, 80)
    scene = raypick.Scene()
    scene.add_triangles(v.astype(np.float32), f)
    rays = random_rays(rng, 1500)
    got = scene.cast_rays(rays, cull_back_faces=True)
    v32 = v.astype(np.float32).astype(np.float64)
    # The reference keeps only the triangles whose front (counter-clockwise side) faces the ray.
    n = np.cross(v32[f[:, 1]] - v32[f[:, 0]], v32[f[:, 2]] - v32[f[:, 0]])
    checked = 0
    for i in range(len(rays)):
        front = np.flatnonzero(n @ rays[i, 3:].astype(np.float64) < 0)
        t_ref, prim_ref, _, _, margin = moller_trumbore(rays[i:i + 1], v32, f[front])
        if margin[0] < 1e-5:
            continue  # within rounding of an edge: either neighbour is right
        if prim_ref[0] < 0:
            assert got["primitive_ids"][i] == INVALID, i
        else:
            assert got["primitive_ids"][i] == front[prim_ref[0]], i
            checked += 1
    assert checked > 100
    # Culling never adds hits, and the front hits are all there without it too.
    plain = scene.cast_rays(rays)
    culled_hit = got["primitive_ids"] != INVALID
    assert np.all(plain["t_hit"][culled_hit] <= got["t_hit"][culled_hit])


def test_culling_a_single_triangle_from_both_sides():
    scene = raypick.Scene()
    scene.add_triangles([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])  # front faces +z
    from_above = np.array([[0.2, 0.2, 1, 0, 0, -1]], np.float32)
    from_below = np.array([[0.2, 0.2, -1, 0, 0, 1]], np.float32)
    assert scene.test_occlusions(from_above, cull_back_faces=True)[0]
    assert not scene.test_occlusions(from_below, cull_back_faces=True)[0]
    assert scene.test_occlusions(from_below)[0]
    assert scene.count_intersections(from_below, cull_back_faces=True)[0] == 0


# --- t ranges ------------------------------------------------------------------------------------

def test_per_ray_t_ranges():
    scene = planes([0, 1, 2, 3, 4])
    rays = np.repeat(DOWN, 6, axis=0)  # from z = 10: the planes at t = 6, 7, 8, 9, 10
    tnear = np.array([0, 6.5, 7.5, 8.5, 9.5, 10.5], np.float32)
    ans = scene.cast_rays(rays, tnear=tnear)
    np.testing.assert_array_equal(ans["geometry_ids"], [4, 3, 2, 1, 0, INVALID])
    tfar = np.array([5, 6.5, 7.5, 8.5, 9.5, 10.5])
    ans = scene.cast_rays(rays, tfar=tfar)
    np.testing.assert_array_equal(ans["geometry_ids"], [INVALID, 4, 4, 4, 4, 4])
    np.testing.assert_array_equal(scene.test_occlusions(rays, tnear, tfar=10.0),
                                  [True, True, True, True, True, False])
    np.testing.assert_array_equal(scene.count_intersections(rays, tnear=tnear), [5, 4, 3, 2, 1, 0])
    listed = scene.list_intersections(rays, tnear=tnear, tfar=tnear + 1.0)
    np.testing.assert_array_equal(np.diff(listed["ray_splits"]), [0, 1, 1, 1, 1, 0])
    # Leading shapes: the ranges follow the rays' shape (or are flat).
    grid = rays.reshape(2, 3, 6)
    ans = scene.cast_rays(grid, tnear=tnear.reshape(2, 3))
    np.testing.assert_array_equal(ans["geometry_ids"].ravel(), [4, 3, 2, 1, 0, INVALID])
    ans = scene.cast_rays(grid, tnear=tnear)
    np.testing.assert_array_equal(ans["geometry_ids"].ravel(), [4, 3, 2, 1, 0, INVALID])


def test_bad_t_ranges_are_value_errors():
    scene = planes([0])
    rays = np.repeat(DOWN, 3, axis=0)
    with pytest.raises(ValueError, match="one value per ray"):
        scene.cast_rays(rays, tnear=[0.0, 1.0])
    with pytest.raises(ValueError, match="not a number"):
        scene.cast_rays(rays, tfar=[1.0, np.nan, 2.0])
    with pytest.raises(ValueError, match="tnear"):
        scene.test_occlusions(rays, tnear=np.array(["a", "b", "c"]))


# --- refit ---------------------------------------------------------------------------------------

def test_update_vertices_matches_a_fresh_scene(rng):
    v, f = random_soup(rng, 100)
    scene = raypick.Scene()
    scene.add_triangles(v, f)
    other = scene.add_spheres([[3, 3, 3]], 0.5)
    rays = random_rays(rng, 2000)
    scene.cast_rays(rays)  # built before the update: the trees are refitted, not rebuilt
    moved = v * 0.5 + np.array([0.1, -0.2, 0.3])
    scene.update_vertices(0, moved)
    fresh = raypick.Scene()
    fresh.add_triangles(moved, f)
    fresh.add_spheres([[3, 3, 3]], 0.5)
    got, ref = scene.cast_rays(rays), fresh.cast_rays(rays)
    np.testing.assert_array_equal(got["primitive_ids"], ref["primitive_ids"])
    hit = ref["primitive_ids"] != INVALID
    assert hit.sum() > 100
    np.testing.assert_allclose(got["t_hit"][hit], ref["t_hit"][hit], rtol=1e-5)
    out_v, _ = scene.mesh_arrays(0)
    np.testing.assert_array_equal(out_v, moved.astype(np.float32))
    with pytest.raises(ValueError, match="not a mesh"):
        scene.update_vertices(other, moved)
    with pytest.raises(ValueError, match="cannot change"):
        scene.update_vertices(0, moved[:-1])
    bad = moved.copy()
    bad[5, 1] = np.inf
    with pytest.raises(ValueError, match="not finite"):
        scene.update_vertices(0, bad)
    with pytest.raises(IndexError):
        scene.update_vertices(7, moved)


def test_update_vertices_before_any_query_and_instances_keep_their_copy():
    part = raypick.Scene()
    part.add_triangles([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    world = raypick.Scene()
    world.add_instance(part)
    part.update_vertices(0, [[0, 0, 2], [1, 0, 2], [0, 1, 2]])
    ray = np.array([[0.2, 0.2, 5, 0, 0, -1]], np.float32)
    assert part.cast_rays(ray)["t_hit"][0] == pytest.approx(3, rel=ULPS)
    assert world.cast_rays(ray)["t_hit"][0] == pytest.approx(5, rel=ULPS)


# --- cameras -------------------------------------------------------------------------------------

def gl_perspective(fov_y, aspect, near, far):
    f = 1 / np.tan(fov_y / 2)
    return np.array([[f / aspect, 0, 0, 0], [0, f, 0, 0],
                     [0, 0, (far + near) / (near - far), 2 * far * near / (near - far)],
                     [0, 0, -1, 0]])


def look_at(eye, target, up):
    eye, target, up = (np.asarray(x, np.float64) for x in (eye, target, up))
    f = (target - eye) / np.linalg.norm(target - eye)
    s = np.cross(f, up)
    s /= np.linalg.norm(s)
    u = np.cross(s, f)
    m = np.eye(4)
    m[0, :3], m[1, :3], m[2, :3] = s, u, -f
    m[:3, 3] = -m[:3, :3] @ eye
    return m


def reference_pixel_ray(view, proj, w, h, x, y, ndc_near, y_down=False):
    """The world ray through window (x, y) (top-left origin) from the f64 inverse of proj @ view."""
    inv = np.linalg.inv(proj @ view)
    nx, ny = 2 * x / w - 1, 1 - 2 * y / h
    if y_down:
        ny = -ny
    pts = []
    for z in (ndc_near, 0.5):
        p = inv @ np.array([nx, ny, z, 1.0])
        pts.append(p[:3] / p[3])
    d = pts[1] - pts[0]
    return pts[0], d / np.linalg.norm(d)


EYE, TARGET, UP = [1.0, 2.0, 6.0], [0.0, 0.5, 0.0], [0.0, 1.0, 0.0]


def test_perspective_pixel_rays_match_the_f64_unprojection():
    cam = raypick.Camera(EYE, TARGET, UP, fov_y_deg=50, width=64, height=48, near=0.1, far=100)
    view = look_at(EYE, TARGET, UP)
    proj = gl_perspective(np.radians(50), 64 / 48, 0.1, 100)
    np.testing.assert_allclose(cam.view_matrix, view, atol=1e-6)
    np.testing.assert_allclose(cam.projection_matrix, proj, rtol=1e-6, atol=1e-6)
    for x, y in [(0.0, 0.0), (31.5, 20.25), (64, 48), (10.5, 40.5)]:
        o, d = reference_pixel_ray(view, proj, 64, 48, x, y, ndc_near=-1)
        r = cam.pixel_ray(x, y)
        np.testing.assert_allclose(r[:3], o, atol=2e-5)
        np.testing.assert_allclose(r[3:], d, atol=2e-6)


def test_every_convention_and_depth_order_casts_the_same_rays():
    base = raypick.Camera(EYE, TARGET, UP, width=40, height=30).rays()
    for convention in ["opengl", "direct3d", "wgpu", "vulkan"]:
        for reverse_z in [False, True]:
            for far in [1000.0, np.inf]:
                cam = raypick.Camera(EYE, TARGET, UP, width=40, height=30, far=far,
                                     convention=convention, reverse_z=reverse_z)
                np.testing.assert_allclose(cam.rays(), base, atol=5e-5,
                                           err_msg=f"{convention} reverse_z={reverse_z} far={far}")
    assert raypick.Camera(EYE, TARGET, convention="wgpu").convention == "direct3d"


def test_vulkan_matrices_flip_clip_y():
    gl = raypick.Camera(EYE, TARGET, UP, width=40, height=30, convention="direct3d")
    vk = raypick.Camera(EYE, TARGET, UP, width=40, height=30, convention="vulkan")
    flipped = np.diag([1.0, -1.0, 1.0, 1.0]) @ gl.projection_matrix
    np.testing.assert_allclose(vk.projection_matrix, flipped, atol=1e-7)
    # The renderer's matrices, handed over as they are, pick what the renderer draws.
    again = raypick.Camera.from_matrices(vk.view_matrix, vk.projection_matrix, 40, 30, convention="vulkan")
    np.testing.assert_allclose(again.rays(), vk.rays(), atol=1e-6)


def test_orthographic_rays_are_parallel_and_span_the_height():
    cam = raypick.Camera([0, 0, 10], [0, 0, 0], projection="orthographic", ortho_height=4.0,
                         width=80, height=40, near=0.0, far=50.0)
    rays = cam.rays()
    np.testing.assert_allclose(rays[..., 3:], np.broadcast_to([0, 0, -1], rays[..., 3:].shape), atol=1e-6)
    top, bottom = cam.pixel_ray(40, 0), cam.pixel_ray(40, 40)
    np.testing.assert_allclose([top[1], bottom[1]], [2.0, -2.0], atol=1e-5)
    left = cam.pixel_ray(0, 20)
    assert left[0] == pytest.approx(-4.0, abs=1e-5)  # aspect 2
    # Default height: the perspective view's at the target.
    default = raypick.Camera([0, 0, 10], [0, 0, 0], fov_y_deg=90, projection="orthographic", width=10, height=10)
    assert default.pixel_ray(5, 0)[1] == pytest.approx(10.0, rel=1e-5)
    scene = raypick.Scene()
    scene.add_spheres([[1.5, 0, 0]], 0.25)
    hit = scene.pick(cam, *cam.project([1.5, 0, 0])[:2])
    assert hit is not None and hit.geometry_id == 0
    with pytest.raises(ValueError, match="reverse_z"):
        raypick.Camera([0, 0, 10], [0, 0, 0], projection="orthographic", reverse_z=True)
    with pytest.raises(ValueError, match="projection"):
        raypick.Camera([0, 0, 10], [0, 0, 0], projection="fisheye")


def test_from_matrices_and_pixel_origin():
    view = look_at(EYE, TARGET, UP)
    proj = gl_perspective(np.radians(60), 40 / 30, 0.01, 1000.0)
    cam = raypick.Camera.from_matrices(view, proj, 40, 30)
    np.testing.assert_allclose(cam.rays(), raypick.Camera(EYE, TARGET, UP, width=40, height=30).rays(), atol=5e-5)
    np.testing.assert_allclose(cam.eye, EYE, atol=1e-5)
    up = raypick.Camera(EYE, TARGET, UP, width=40, height=30, pixel_origin="bottom-left")
    np.testing.assert_allclose(up.rays(), cam.rays()[::-1], atol=5e-5)
    with pytest.raises(ValueError, match="convention"):
        raypick.Camera(EYE, TARGET, convention="glide")
    with pytest.raises(ValueError):
        raypick.Camera.from_matrices(view, np.zeros((4, 4)), 40, 30)
    with pytest.raises(ValueError, match=r"\(4, 4\)"):
        raypick.Camera.from_matrices(view[:3], proj, 40, 30)


def test_cameras_pickle_as_made():
    cams = [
        raypick.Camera(EYE, TARGET, UP, width=40, height=30, convention="vulkan", reverse_z=True),
        raypick.Camera(EYE, TARGET, projection="orthographic", ortho_height=3.0, pixel_origin="bottom-left"),
        raypick.Camera.from_matrices(look_at(EYE, TARGET, UP), gl_perspective(1.0, 1.5, 0.1, 10), 30, 20),
    ]
    for cam in cams:
        back = pickle.loads(pickle.dumps(cam))
        assert repr(back) == repr(cam)
        np.testing.assert_array_equal(back.rays(), cam.rays())


# --- Open3D's intrinsic / extrinsic pinhole -----------------------------------------------------

K = [[100.0, 0, 31.7], [0, 90.0, 22.3], [0, 0, 1]]
EXTRINSIC = [[0.975170327201816, -0.09784339500725571, -0.19866933079506122, 0.5],
             [0.03695701352462508, 0.9564250858492325, -0.28962947762551555, -1.0],
             [0.21835066314633444, 0.2750958473182437, 0.9362933635841992, 2.0], [0.0, 0.0, 0.0, 1.0]]
# open3d 0.20.0: o3d.t.geometry.RaycastingScene.create_rays_pinhole(K, EXTRINSIC, 4, 3).
OPEN3D_ORIGIN = [-0.8873294591903687, 0.45515507459640503, -2.0628814697265625]
OPEN3D_DIRS = [
    [-0.09485428780317307, 0.07395557314157486, 1.0684328079223633],
    [-0.08510258793830872, 0.07297714054584503, 1.0664461851119995],
    [-0.07535088062286377, 0.0719987079501152, 1.0644594430923462],
    [-0.06559918075799942, 0.07102027535438538, 1.0624727010726929],
    [-0.0944436565041542, 0.08458252251148224, 1.06521475315094],
    [-0.08469195663928986, 0.08360408991575241, 1.0632281303405762],
    [-0.07494024932384491, 0.08262565732002258, 1.0612413883209229],
    [-0.06518854945898056, 0.08164722472429276, 1.0592546463012695],
    [-0.09403301775455475, 0.09520946443080902, 1.061996579170227],
    [-0.0842813178896904, 0.0942310318350792, 1.0600099563598633],
    [-0.07452961057424545, 0.09325259923934937, 1.05802321434021],
    [-0.0647779107093811, 0.09227416664361954, 1.0560364723205566],
]


def test_intrinsic_pinhole_rays_are_open3ds():
    rays = raypick.create_rays_pinhole(K, EXTRINSIC, 4, 3)
    assert rays.shape == (3, 4, 6) and rays.dtype == np.float32
    # Open3D rounds in f32 along the way; raypick rounds the f64 result once.
    np.testing.assert_allclose(rays[..., :3].reshape(-1, 3), np.tile(OPEN3D_ORIGIN, (12, 1)), atol=1e-6)
    np.testing.assert_allclose(rays[..., 3:].reshape(-1, 3), OPEN3D_DIRS, atol=2e-7)
    # The documented formula in f64.
    E = np.array(EXTRINSIC)
    R, t = E[:3, :3], E[:3, 3]
    xs, ys = np.meshgrid(np.arange(4) + 0.5, np.arange(3) + 0.5)
    pix = np.stack([xs, ys, np.ones_like(xs)], -1)
    dirs = pix @ (R.T @ np.linalg.inv(K)).T
    np.testing.assert_allclose(rays[..., 3:], dirs, rtol=1e-7, atol=1e-7)
    same = raypick.Scene.create_rays_pinhole(intrinsic_matrix=K, extrinsic_matrix=EXTRINSIC,
                                             width_px=4, height_px=3)
    np.testing.assert_array_equal(same, rays)


def test_intrinsic_pinhole_against_live_open3d():
    o3d = pytest.importorskip("open3d")
    rng = np.random.default_rng(5)
    K2 = np.array([[320.0, 0, 160.2], [0, 310.0, 119.7], [0, 0, 1]])
    R, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    R *= np.sign(np.linalg.det(R))
    E = np.eye(4)
    E[:3, :3], E[:3, 3] = R, rng.normal(size=3)
    ref = o3d.t.geometry.RaycastingScene.create_rays_pinhole(K2, E, 32, 24).numpy()
    np.testing.assert_allclose(raypick.create_rays_pinhole(K2, E, 32, 24), ref, atol=2e-6)


def test_pinhole_argument_errors():
    with pytest.raises(ValueError, match=r"\(3, 3\)"):
        raypick.create_rays_pinhole(np.eye(4), np.eye(4), 4, 3)
    with pytest.raises(ValueError, match="invertible"):
        raypick.create_rays_pinhole(np.zeros((3, 3)), np.eye(4), 4, 3)
    with pytest.raises(ValueError, match="> 0"):
        raypick.create_rays_pinhole(K, np.eye(4), 0, 3)
    with pytest.raises(TypeError, match="missing"):
        raypick.create_rays_pinhole(K, np.eye(4), 4)
    with pytest.raises(TypeError, match="unexpected keyword"):
        raypick.create_rays_pinhole(60, [0, 0, 0], [0, 0, 5], [0, 1, 0], 4, 3, focal=2)
    # The field-of-view form still works by keyword.
    a = raypick.create_rays_pinhole(fov_deg=60, center=[0, 0, 0], eye=[0, 0, 5], up=[0, 1, 0],
                                    width_px=4, height_px=3)
    np.testing.assert_array_equal(a, raypick.create_rays_pinhole(60, [0, 0, 0], [0, 0, 5], [0, 1, 0], 4, 3))


# --- counts and errors -----------------------------------------------------------------------------

def test_num_triangles_counts_placed_scenes_once():
    truck = SHARED_DATA / "gltf" / "CesiumMilkTruck.glb"
    if not truck.exists():
        pytest.skip("shared data not present")
    # raypick info: 3,624 in the world, 2,856 stored (the two wheels share a mesh).
    assert raypick.load(truck, keep_instances=True).num_triangles == 2856
    assert raypick.load(truck).num_triangles == 2856
    part = raypick.Scene()
    part.add_triangles([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    world = raypick.Scene()
    world.add_instance(part)
    world.add_instance(part)
    g = world.add_triangles([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    world.add_instance(g)
    assert world.num_triangles == 2


def test_load_errors_are_os_errors_or_value_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.obj"):
        raypick.load(tmp_path / "missing.obj")
    with pytest.raises(OSError):
        raypick.load(tmp_path)  # a folder
    bad = tmp_path / "bad.obj"
    bad.write_text("v 0 0 0\nv 1 0 0\nf 1 2 9\n")
    with pytest.raises(ValueError, match="line 3"):
        raypick.load(bad)
    gltf = tmp_path / "m.gltf"
    gltf.write_text('{"asset": {"version": "2.0"}, "buffers": [{"uri": "gone.bin", "byteLength": 36}],'
                    '"meshes": [], "scenes": [], "nodes": []}')
    with pytest.raises((FileNotFoundError, ValueError)):
        raypick.load(gltf)
