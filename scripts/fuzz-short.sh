#!/usr/bin/env bash
# A short fuzz run of every loader target and the scene-file target (fuzz/fuzz_targets):
# FUZZ_SECONDS (default 30) each.
# Each target's corpus (fuzz/corpus/<target>, git-ignored) starts from the hostile inputs and the
# fuzz regressions kept as tests (crates/raypick-io/tests/hostile-inputs, tests/fuzz-regressions)
# and the small files of the shared data set. Needs the nightly toolchain and cargo-fuzz
# (`cargo install cargo-fuzz`). A crash stops the run and lands in fuzz/artifacts/<target>/.
#
#   bash scripts/fuzz-short.sh              # every target, 30 s each
#   FUZZ_SECONDS=120 bash scripts/fuzz-short.sh gltf stl
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-30}"
targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
    targets=(obj gltf ply stl any scene_file)
fi
io=crates/raypick-io/tests
data=../shared/data

# Copies each file into folder $1 unless a file of that name is there already.
seed() {
    local folder="$1" file
    shift
    for file in "$@"; do
        if [ -f "$file" ] && [ ! -e "$folder/$(basename "$file")" ]; then
            cp "$file" "$folder/"
        fi
    done
}

for target in "${targets[@]}"; do
    corpus="fuzz/corpus/$target"
    mkdir -p "$corpus"
    # Seeds: every hostile input and regression (any format: the others exercise detection and
    # the first bytes' checks), and the shared models of this format under 64 KiB.
    seed "$corpus" "$io"/hostile-inputs/* "$io"/fuzz-regressions/*
    case "$target" in
        obj) globs=("$data"/obj/*.obj) ;;
        gltf) globs=("$data"/gltf/*) ;;
        ply) globs=("$data"/ply/*.ply) ;;
        stl) globs=("$data"/stl/*) ;;
        scene_file) globs=() ;;
        *) globs=("$data"/*/*) ;;
    esac
    if [ "$target" = scene_file ]; then
        # Scene files of the small STL models, whole and as bare payloads (the target also seals
        # its input behind a matching header): `raypick build` writes them.
        for model in "$data"/stl/multibody.stl "$data"/stl/20mm-xyz-cube.stl; do
            name="$(basename "$model" .stl)"
            if [ -f "$model" ] && [ ! -e "$corpus/$name.rpk" ]; then
                cargo run -q -p raypick-cli -- build "$model" -o "$corpus/$name.rpk" >/dev/null
                tail -c +33 "$corpus/$name.rpk" >"$corpus/$name.payload"
            fi
        done
    fi
    for file in "${globs[@]}"; do
        if [ -f "$file" ] && [ "$(stat -c %s "$file")" -le 65536 ]; then
            seed "$corpus" "$file"
        fi
    done
    echo "fuzz: $target for ${seconds}s ($(ls "$corpus" | wc -l) inputs to start from)"
    (cd fuzz && cargo +nightly fuzz run "$target" -O -- \
        -max_total_time="$seconds" -max_len=32768 -timeout=10 -print_final_stats=1)
done
