#!/usr/bin/env bash
# Instructions per ray (or per point) of revisions of the engine, counted by callgrind (what and
# why: bench/ab/ir.rs).
#
#   RAYS=bench/out/stanford-bunny.primary.rays FIRST=450000 COUNT=100000 bench/ab/ir.sh REV...
#
# REV: git revisions, or WORKTREE for the working tree's crates/raypick. MESH (an OBJ, default the
# shared bunny), RAYS, FIRST (default 0), COUNT (default 100000), MODE (closest, any, points;
# default closest). One thread. Builds under target/ab/ir/COMMIT (once per commit; the working
# tree's copy every time); nothing here runs in CI.
set -euo pipefail
[ $# -ge 1 ] || { sed -n 2,10p "$0"; exit 2; }
repo=$(git rev-parse --show-toplevel)
mesh=$(realpath "${MESH:-$repo/../shared/data/obj/stanford-bunny.obj}")
rays=$(realpath "${RAYS:?RAYS: a file of rays (six f32 per ray)}")
first=${FIRST:-0} count=${COUNT:-100000} mode=${MODE:-closest}
for rev in "$@"; do
    commit=WORKTREE
    [ "$rev" = WORKTREE ] || commit=$(git -C "$repo" rev-parse --verify "$rev^{commit}")
    work="$repo/target/ab/ir/$commit"
    dst="$work/raypick_rev"
    mkdir -p "$work/src"
    # A commit's copy is made once; the working tree's every time.
    if [ "$commit" = WORKTREE ] || [ ! -f "$dst/Cargo.toml" ]; then
        rm -rf "$dst" && mkdir -p "$dst"
        if [ "$commit" = WORKTREE ]; then
            cp -r "$repo/crates/raypick/." "$dst/"
        else
            git -C "$repo" archive "$commit" crates/raypick | tar -x -C "$dst" --strip-components=2
        fi
        rm -rf "$dst/benches" "$dst/tests"
        # Fresh times: cargo would keep an earlier build of an older copy (see run.sh).
        find "$dst" -type f -exec touch {} +
        python3 "$repo/bench/ab/crate_manifest.py" "$repo/Cargo.toml" "$dst/Cargo.toml" raypick_rev
    fi
    cmp -s "$repo/bench/ab/ir.rs" "$work/src/main.rs" || cp "$repo/bench/ab/ir.rs" "$work/src/main.rs"
    cat > "$work/Cargo.toml.new" <<TOML
[package]
name = "raypick-ir"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
raypick_rev = { path = "raypick_rev" }
raypick-bench = { path = "$repo/crates/raypick-bench" }
glam = "0.30"

# As the workspace's release profile.
[profile.release]
lto = "thin"
codegen-units = 1
debug = "line-tables-only"

[workspace]
TOML
    cmp -s "$work/Cargo.toml.new" "$work/Cargo.toml" || mv "$work/Cargo.toml.new" "$work/Cargo.toml"
    rm -f "$work/Cargo.toml.new"
    (cd "$work" && CARGO_TARGET_DIR="$work/target" cargo build --release --quiet)
    out="$work/callgrind.out"
    answers=$(RAYON_NUM_THREADS=1 valgrind --tool=callgrind --collect-atstart=no \
        --toggle-collect='*measured*' --callgrind-out-file="$out" \
        "$work/target/release/raypick-ir" "$mesh" "$rays" "$first" "$count" "$mode" 2>/dev/null)
    ir=$(awk '/^summary:/ {print $2}' "$out")
    python3 -c "import sys; n = int(sys.argv[2].split()[0]); print(f'{sys.argv[1]}: {int(sys.argv[3]) / n:.1f} Ir per query ({sys.argv[2]})')" "$rev" "$answers" "$ir"
done
