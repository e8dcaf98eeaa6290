#!/usr/bin/env bash
# The engine's SIMD tests compiled for WebAssembly with simd128 (the browser build's kernels) and
# run under Node's WASI (scripts/wasi-run.mjs as cargo's runner): each simd128 routine against its
# scalar twin, bit for bit. Adds the wasm32-wasip1 target through rustup when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! rustup target list --installed | grep -qx wasm32-wasip1; then
    echo "wasm-simd: rustup target add wasm32-wasip1"
    rustup target add wasm32-wasip1
fi
export CARGO_TARGET_WASM32_WASIP1_RUNNER="node --no-warnings $(pwd)/scripts/wasi-run.mjs"
export RUSTFLAGS="-C target-feature=+simd128"
# Its own target folder: the RUSTFLAGS would otherwise invalidate the host build's artefacts.
# The unit tests (the SIMD ones among them), then the BVH and scene tests that walk real trees
# through them (also checking
# that nothing assumes a 64-bit usize).
cargo test -p raypick --lib --no-default-features --target wasm32-wasip1 \
    --target-dir "${CARGO_TARGET_DIR:-target}/wasi"
cargo test -p raypick --no-default-features --target wasm32-wasip1 \
    --target-dir "${CARGO_TARGET_DIR:-target}/wasi" \
    --test scene_queries --test bvh_structure --test scene_nested
