#!/usr/bin/env bash
# The WebAssembly module and its JavaScript package (web/raypick), tested in Node: builds the
# module (scripts/build-wasm.sh) and the native `raypick` the tests compare it with, installs
# web/'s pinned devDependencies (three, three-mesh-bvh) when they are missing, runs web/test.
#
#   bash scripts/wasm-test.sh
#
# Needs Node 18 or later and npm (the npm registry, once). RAYPICK_BIN names an already built
# `raypick` to compare with; RAYPICK_DATA the shared data folder (default ../shared/data).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/build-wasm.sh

if [ -z "${RAYPICK_BIN:-}" ]; then
    cargo build -p raypick-cli
    RAYPICK_BIN="${CARGO_TARGET_DIR:-$(pwd)/target}/debug/raypick"
fi
export RAYPICK_BIN

if [ ! -d web/node_modules ]; then
    (cd web && npm ci --no-audit --no-fund)
fi

node --test web/test/*.test.mjs
