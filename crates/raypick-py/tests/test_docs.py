"""The docstrings: every public function has an example, every example runs and prints what it
says, and docs/api.md is generated from them."""

import doctest

import numpy as np
import pytest

import raypick


def run_examples(obj, name):
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(obj, name, globs={"np": np, "raypick": raypick})
    assert tests and tests[0].examples, f"{name} has no examples"
    for t in tests:
        runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} example(s) of {name} failed"


def test_package_docstring_example():
    run_examples(raypick, "raypick")


def test_scene_docstring_example():
    run_examples(raypick.Scene, "raypick.Scene")


def test_offset_ray_origin_docstring_example():
    run_examples(raypick.offset_ray_origin, "raypick.offset_ray_origin")


def test_public_api_has_docstrings():
    for obj in (raypick.Scene, raypick.Camera, raypick.Hit, raypick.load, raypick.create_rays_pinhole,
                raypick.offset_ray_origin):
        assert obj.__doc__ and len(obj.__doc__) > 40, obj
    for name in ("add_triangles", "add_spheres", "add_instance", "cast_rays", "test_occlusions",
                 "count_intersections", "list_intersections", "intersects_first", "intersects_location",
                 "pick", "pick_rect", "commit"):
        assert getattr(raypick.Scene, name).__doc__, name


# --- the API page and every example in it -------------------------------------------------------

import inspect
import pathlib
import subprocess
import sys

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"


def example_namespace():
    """What the docstring examples that do not make their own objects use: a cube scene and the
    arrays their text names (fresh for every docstring, so one example's changes stay its own)."""
    v = np.array([[x, y, z] for z in (-1, 1) for y in (-1, 1) for x in (-1, 1)], np.float64)
    f = np.array([[0, 2, 1], [1, 2, 3], [4, 5, 6], [5, 7, 6], [0, 1, 4], [1, 5, 4],
                  [2, 6, 3], [3, 6, 7], [0, 4, 2], [2, 4, 6], [1, 3, 5], [3, 7, 5]])
    scene = raypick.Scene()
    scene.add_triangles(v, f)
    cam = raypick.Camera(eye=[0, 1, 5], target=[0, 0, 0], width=64, height=48)
    rays = cam.rays()
    origins = rays.reshape(-1, 6)[:, :3].astype(np.float64)
    directions = rays.reshape(-1, 6)[:, 3:].astype(np.float64)
    p = np.array([[0.2, 0.3, 1.0], [-0.5, 0.1, 1.0]])
    part = raypick.Scene()
    part.add_triangles(v * 0.5, f)
    translation_matrix = np.eye(4)
    translation_matrix[0, 3] = 3.0
    return {
        "np": np, "raypick": raypick, "v": v, "f": f, "scene": scene, "cam": cam, "rays": rays,
        "origins": origins, "directions": directions, "p": p, "L": np.array([0.0, 5.0, 0.0]),
        "points": p, "normals": np.tile([0.0, 0.0, 1.0], (2, 1)), "part": part,
        "translation_matrix": translation_matrix, "view": cam.view_matrix,
        "proj": cam.projection_matrix, "K": [[500, 0, 320], [0, 500, 240], [0, 0, 1]],
        "extrinsic": np.eye(4), "per_ray_far": np.full(rays.shape[:-1], 10.0),
        "moved_v": v * 1.1, "eye": [0, 1, 5], "target": [0, 0, 0],
    }


def documented():
    """Every public object of the package with its qualified name."""
    yield "raypick", raypick
    for name, obj in inspect.getmembers(raypick):
        if name.startswith("_") or inspect.ismodule(obj) or isinstance(obj, (int, str)):
            continue
        yield f"raypick.{name}", obj
        if inspect.isclass(obj):
            for mname, member in inspect.getmembers(obj):
                if not mname.startswith("_"):
                    yield f"raypick.{name}.{mname}", member


def test_every_public_function_and_method_has_an_example():
    missing = [name for name, obj in documented()
               if callable(obj) and not inspect.isclass(obj) and "Example" not in (obj.__doc__ or "")]
    assert not missing, f"no example in the docstrings of {missing}"
    undocumented = [name for name, obj in documented() if not (getattr(obj, "__doc__", None) or "").strip()]
    assert not undocumented, f"no docstring: {undocumented}"


def test_every_docstring_example_runs(tmp_path, monkeypatch):
    # raypick.load's examples read files by name: the shared models, linked into a folder.
    from conftest import SHARED_DATA

    for name, rel in [("bunny.obj", "obj/stanford-bunny.obj"), ("truck.glb", "gltf/CesiumMilkTruck.glb")]:
        if not (SHARED_DATA / rel).exists():
            pytest.skip("shared data not present")
        (tmp_path / name).symlink_to(SHARED_DATA / rel)
    monkeypatch.chdir(tmp_path)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    ran = 0
    for name, obj in documented():
        doc = getattr(obj, "__doc__", None) or ""
        if ">>>" not in doc:
            continue
        # Builtins' docstrings are not found by DocTestFinder on every Python: parse them.
        test = doctest.DocTestParser().get_doctest(doc, example_namespace(), name, None, 0)
        runner.run(test)
        ran += 1
    result = runner.summarize(verbose=False)
    assert ran > 30
    assert result.failed == 0, f"{result.failed} docstring example(s) failed (see the output above)"


def test_the_api_page_is_current():
    """docs/api.md is generated from the stubs and docstrings: rerun docs/make_api.py after a change."""
    out = subprocess.run([sys.executable, str(DOCS / "make_api.py"), "--check"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
