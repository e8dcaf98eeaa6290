#!/usr/bin/env bash
# The whole test suite, on a fresh machine: sets up what it needs, then runs every check.
# README's test command and .ci/run both call exactly this script.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n=== %s ===\n' "$*"; }

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets -- -D warnings

step "cargo test --workspace"
cargo test --workspace

step "cargo test -p raypick --features force-scalar (the scalar twins)"
cargo test -p raypick --features force-scalar --lib

echo
echo "all checks passed"
