#!/usr/bin/env bash
# The whole test suite, on a fresh machine: sets up what it needs, then runs every check.
# README's test command and .ci/run both call exactly this script. On a fresh machine it creates the
# Python venv (.venv) and installs Chromium and playwright-core for the browser test when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n=== %s ===\n' "$*"; }

# CI builds from scratch once: incremental compilation only adds work there.
if [ -n "${CI:-}" ]; then
    export CARGO_INCREMENTAL=0
fi

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets -- -D warnings
# The kernel benchmarks need the engine's SIMD routines, which the `internals` feature opens.
cargo clippy -p raypick --all-targets --features internals -- -D warnings

step "cargo test --workspace"
cargo test --workspace

step "cargo test -p raypick --features force-scalar (the scalar twins)"
cargo test -p raypick --features force-scalar --lib --test scene_queries --test bvh_structure

step "engine tests on wasm32 with simd128, under Node's WASI (the browser build's kernels)"
bash scripts/wasm-simd-test.sh

# The `raypick` binary that `cargo test --workspace` built: the Python and browser tests use it
# rather than building it again with another feature set (`cargo build -p raypick-cli` alone resolves
# the dependencies' features differently and recompiles them).
RAYPICK_CLI="${CARGO_TARGET_DIR:-$(pwd)/target}/debug/raypick"
export RAYPICK_CLI RAYPICK_BIN="$RAYPICK_CLI"

step "Python bindings: the release wheel, installed in a fresh venv, pytest"
bash scripts/py-wheel-test.sh

step "raypick-wasm and its JS package in Node: against the native CLI and three.js's Raycaster"
bash scripts/wasm-test.sh

step "browser end-to-end: raypick serve in headless Chromium"
bash scripts/e2e.sh

echo
echo "all checks passed"
