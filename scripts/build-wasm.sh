#!/usr/bin/env bash
# Builds the WebAssembly module (crates/raypick-wasm) with simd128 and copies it to
# web/raypick/raypick.wasm, where web/raypick/index.js looks for it; prints its size.
#
#   bash scripts/build-wasm.sh
#
# Needs cargo and the wasm32-unknown-unknown target only (added with rustup when missing).
set -euo pipefail
cd "$(dirname "$0")/.."

target=wasm32-unknown-unknown
if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx "$target"; then
    rustup target add "$target"
fi

# simd128: every current browser and Node have it, and the engine's wasm kernels are written for it.
RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+simd128" \
    cargo build -p raypick-wasm --target "$target" --profile wasm

cp "${CARGO_TARGET_DIR:-target}/$target/wasm/raypick_wasm.wasm" web/raypick/raypick.wasm
bytes=$(wc -c < web/raypick/raypick.wasm)
gz=$(gzip -9 -c web/raypick/raypick.wasm | wc -c)
echo "web/raypick/raypick.wasm: $bytes bytes ($gz gzipped)"
