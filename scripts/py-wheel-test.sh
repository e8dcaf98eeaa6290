#!/usr/bin/env bash
# The Python package as users get it: builds the wheel with `maturin build --release`, installs it
# with pip into a venv created afresh for the run (target/wheel-venv), and runs the pytest suite
# there, from outside the source tree so that `import raypick` is the installed wheel.
#
#   bash scripts/py-wheel-test.sh            # what scripts/test.sh (and CI) runs
#   bash scripts/py-wheel-test.sh -k pickle  # extra arguments go to pytest
#
# Under CI the release profile's thin LTO and single codegen unit are turned off through Cargo's
# environment overrides: the same optimization level, a build several minutes shorter on two
# cores. Without CI the wheel is exactly the one `maturin build --release` ships.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

# maturin itself runs from the developer venv (.venv), which scripts/py-test.sh also uses.
if [ ! -x .venv/bin/python ]; then
    echo "creating .venv"
    python3 -m venv .venv
fi
if ! .venv/bin/python -c "import maturin" >/dev/null 2>&1; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet "maturin>=1.7,<2"
fi

if [ -n "${CI:-}" ]; then
    export CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16
fi
WHEELS="$ROOT/target/wheels"
rm -rf "$WHEELS"
.venv/bin/maturin build --quiet --release -m crates/raypick-py/Cargo.toml -o "$WHEELS"
wheel=$(ls "$WHEELS"/raypick-*.whl)

VENV="$ROOT/target/wheel-venv"
rm -rf "$VENV"
python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
# The wheel's own dependencies come from its metadata; the test extra adds pytest, and the
# point-query tests compare with trimesh (whose proximity queries need rtree and scipy). Open3D
# for the tests against its rays and tensors: its library links libusb-1.0, which a machine
# without the system package lacks, so the libusb-package wheel's copy comes too (the tests'
# conftest.py loads it before Open3D). PyTorch is not installed: PyPI's Linux wheels pull in
# about 2.5 GB of CUDA libraries; its test skips, and a DLPack-only tensor covers that path.
"$VENV/bin/python" -m pip install --quiet "$wheel[test,dask]" trimesh rtree scipy open3d libusb-package

# Run from a folder outside the source tree: crates/raypick-py/python must not shadow the wheel.
cd "$ROOT/target"
"$VENV/bin/python" - <<'PY'
import pathlib, raypick
where = pathlib.Path(raypick.__file__).resolve()
assert "wheel-venv" in where.parts, f"raypick imported from {where}, not from the installed wheel"
print(f"testing the installed wheel: raypick {raypick.__version__} at {where.parent}")
PY
exec "$VENV/bin/python" -m pytest -q -p no:dash --rootdir "$ROOT/crates/raypick-py" "$@" \
    "$ROOT/crates/raypick-py/tests"
