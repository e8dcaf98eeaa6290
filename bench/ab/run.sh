#!/usr/bin/env bash
# A/B timing of two revisions of the engine in one process (what and why: bench/ab/main.rs).
#
#   RAYS=/path/to/rays.bin bench/ab/run.sh REV_A REV_B
#
# REV_A, REV_B: git revisions, or WORKTREE for the working tree's crates/raypick. The other
# settings are main.rs's environment variables (MESH, MODE, ROUNDS, EPOCHS, CHUNK, THREADS, SAME,
# A_* / B_*). Builds under target/ab (a crate outside the workspace); nothing here runs in CI.
#
# Where each version's code lands in the binary moves its speed by a few per cent (the same
# change measured 1.04 with B = new and 1.03 the other way round with B = old), so it builds the
# driver twice, B after A and A after B, runs both, and reports the geometric mean of B/A and
# 1 / (A/B) as the estimate.
set -euo pipefail
[ $# -eq 2 ] || { sed -n 2,13p "$0"; exit 2; }
repo=$(git rev-parse --show-toplevel)

# build WORK REV_FOR_raypick_a REV_FOR_raypick_b: the driver in WORK (incremental between calls).
build() {
work="$1"
mkdir -p "$work/src"
for x in a b; do
    rev=$([ $x = a ] && echo "$2" || echo "$3")
    dst="$work/raypick_$x"
    rm -rf "$dst" && mkdir -p "$dst"
    if [ "$rev" = WORKTREE ]; then
        cp -r "$repo/crates/raypick/." "$dst/"
    else
        git -C "$repo" archive "$rev" crates/raypick | tar -x -C "$dst" --strip-components=2
    fi
    rm -rf "$dst/benches" "$dst/tests"
    # `git archive` gives the files their commit's time, which can be older than the last build
    # in this directory: cargo would then keep the other revision's library. Fresh times force
    # the rebuild.
    find "$dst" -type f -exec touch {} +
    # The crate's manifest outside the workspace: renamed, and every `workspace = true` resolved
    # from the root manifest.
    python3 "$repo/bench/ab/crate_manifest.py" "$repo/Cargo.toml" "$dst/Cargo.toml" "raypick_$x"
done
cp "$repo/bench/ab/main.rs" "$work/src/main.rs"
cat > "$work/Cargo.toml" <<TOML
[package]
name = "raypick-ab"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
raypick_a = { path = "raypick_a" }
raypick_b = { path = "raypick_b" }
raypick-bench = { path = "$repo/crates/raypick-bench" }
glam = "0.30"
rayon = "1.10"

# As the workspace's release profile.
[profile.release]
lto = "thin"
codegen-units = 1
debug = "line-tables-only"

[workspace]
TOML
(cd "$work" && CARGO_TARGET_DIR="$work/target" cargo build --release --quiet)
}

if [ -z "${AB_NO_BUILD:-}" ]; then  # AB_NO_BUILD=1: run the drivers the last call built
    build "$repo/target/ab/forward" "$1" "$2"
    build "$repo/target/ab/reverse" "$2" "$1"
fi
cd "$repo"
forward=$("$repo/target/ab/forward/target/release/raypick-ab" 2>/dev/null)
echo "B after A: $forward"
reverse=$("$repo/target/ab/reverse/target/release/raypick-ab" 2>/dev/null)
# With SAME both scenes come from the first revision and `B_*` settings name the second scene in
# both builds, so the reverse build's ratio is B/A too.
if [ -n "${SAME:-}" ]; then
    echo "A after B: $reverse (SAME: the ratio is B/A here too)"
else
    echo "A after B: $reverse (the ratio is A/B here)"
fi
python3 - "$forward" "$reverse" "${SAME:+same}" <<'PY'
import re, sys, math
median = lambda s: float(re.search(r"median ([0-9.]+)", s).group(1))
per_pass = lambda s: float(re.search(r"per pass ([0-9.]+)", s).group(1))
same = len(sys.argv) > 3 and sys.argv[3] == "same"
for name, f in (("median pair", median), ("per pass", per_pass)):
    a, b = f(sys.argv[1]), f(sys.argv[2])
    print(f"estimate of B/A, {name}: {math.sqrt(a * b if same else a / b):.3f}")
PY
