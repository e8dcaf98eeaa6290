#!/usr/bin/env bash
# Browser end-to-end test of `raypick serve`: headless Chromium (Debian's `chromium` package, never
# a browser downloaded by a tool) driven by playwright-core from npm. Installs what is missing
# (as root, or through sudo), builds the binary and the WebAssembly package, runs
# e2e/viewer.test.mjs (the ray-cast view) and e2e/webgl.test.mjs (the three.js view, picking in
# the page) with node's test runner. Screenshots: target/e2e/. RAYPICK_BIN=path overrides the
# binary under test.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
apt_updated=0
apt_install() {
  if [ "$apt_updated" -eq 0 ]; then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    apt_updated=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

if [ ! -x /usr/bin/chromium ]; then
  echo "e2e: installing chromium (Debian package)"
  apt_install chromium
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "e2e: installing nodejs and npm (Debian packages)"
  apt_install nodejs npm
fi
if [ ! -f e2e/node_modules/playwright-core/package.json ]; then
  echo "e2e: npm ci (playwright-core, no browser download)"
  (cd e2e && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --silent)
fi

if [ ! -f web/node_modules/three/package.json ]; then
  echo "e2e: npm ci in web/ (three.js for the in-page viewer)"
  (cd web && npm ci --no-audit --no-fund --silent)
fi
# The in-page viewer's WebAssembly build (web/raypick/raypick.wasm).
bash scripts/build-wasm.sh

if [ -z "${RAYPICK_BIN:-}" ]; then
  cargo build -q -p raypick-cli --bin raypick
  RAYPICK_BIN="$(cargo metadata --format-version 1 --no-deps |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))')/debug/raypick"
fi
export RAYPICK_BIN
echo "e2e: testing $RAYPICK_BIN"
timeout 600 node --test --test-concurrency=1 e2e/viewer.test.mjs e2e/webgl.test.mjs
