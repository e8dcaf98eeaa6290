"""The self-contained examples in the docstrings run and print what they say."""

import doctest

import numpy as np

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
