#!/usr/bin/env bash
# Python bindings: creates the venv at .venv if missing (python3 + pip only), installs maturin,
# numpy and pytest into it when they are missing, builds crates/raypick-py into it with maturin, and
# runs its pytest suite. Idempotent; re-runs rebuild only what changed.
#
#   bash scripts/py-test.sh            # dev profile, editable install (quick to rebuild while working)
#   RAYPICK_PY_RELEASE=1 bash scripts/py-test.sh   # release build (what bench/compare.py measures)
#   bash scripts/py-test.sh -k pickle  # extra arguments go to pytest
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv
if [ ! -x "$VENV/bin/python" ]; then
    echo "creating $VENV"
    python3 -m venv "$VENV"
fi
PY="$VENV/bin/python"

if ! "$PY" -c "import maturin, numpy, pytest" >/dev/null 2>&1; then
    "$PY" -m pip install --quiet --upgrade pip
    "$PY" -m pip install --quiet "maturin>=1.7,<2" "numpy>=1.21" "pytest>=7"
fi
# The point-query tests compare with trimesh (its proximity queries need rtree and scipy).
if ! "$PY" -c "import trimesh, rtree, scipy" >/dev/null 2>&1; then
    "$PY" -m pip install --quiet trimesh rtree scipy
fi

# `maturin develop` installs the package in editable mode: the extension lands in
# crates/raypick-py/python/raypick/ (git-ignored) next to the Python sources.
profile=()
if [ "${RAYPICK_PY_RELEASE:-0}" = "1" ]; then
    profile=(--release)
fi
"$VENV/bin/maturin" develop --quiet "${profile[@]}" -m crates/raypick-py/Cargo.toml

# -p no:dash: open3d (installed by bench/compare.py) pulls in dash, whose pytest plugin warns.
cd crates/raypick-py
exec "../../$PY" -m pytest -q -p no:dash "$@" tests
