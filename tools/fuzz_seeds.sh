#!/usr/bin/env bash
# Fills the fuzz targets' seed corpora (fuzz/corpus/TARGET/) from the repository's own files:
# TGSI programs, presets, slang/Cg/WGSL shaders, images and suites that git tracks (tests/,
# reference-images/, examples/, benches/). A shader's `#include`s and a preset's `#reference`s
# found next to it are appended as `@@file PATH` sections (the fuzz crate's multi-file input).
# Usage: tools/fuzz_seeds.sh [CORPUS_ROOT]   (default fuzz/corpus; existing entries are kept)
set -euo pipefail
cd "$(dirname "$0")/.."
root=${1:-fuzz/corpus}
# Text targets ignore inputs over 64 KiB and the image target over 256 KiB (fuzz/src/lib.rs).
text_limit=$((64 << 10))
image_limit=$((256 << 10))

tracked() {
    if git rev-parse --git-dir >/dev/null 2>&1; then
        git ls-files -- "$@"
    else
        local args=() p
        for p in "$@"; do args+=(-o -name "${p#\*}" ); done
        find . -type f \( -false "${args[@]}" \) -not -path './target/*' -not -path './fuzz/*' | sed 's|^\./||'
    fi
}

# The seed's file name: its repository path with `/` as `__`.
seed_name() { printf '%s' "${1//\//__}"; }

# `file`, then each file its `#include`/`#reference` lines name that exists beside it.
bundle() {
    local file=$1 dir inc
    dir=$(dirname "$file")
    cat "$file"
    { grep -oE '^[[:space:]]*#[[:space:]]*(include|reference)[[:space:]]+"[^"]+"' "$file" || true; } \
        | sed -E 's/.*"([^"]+)"/\1/' | head -n 7 | while read -r inc; do
        if [[ -f "$dir/$inc" && "$inc" != /* ]]; then
            printf '\n@@file %s\n' "$inc"
            cat "$dir/$inc"
        fi
    done
}

# add TARGET LIMIT BUNDLE PATTERN...: copies (or bundles) each tracked file under LIMIT bytes.
add() {
    local target=$1 limit=$2 bundled=$3 file out count=0
    shift 3
    mkdir -p "$root/$target"
    while IFS= read -r file; do
        out="$root/$target/$(seed_name "$file")"
        if [[ $bundled == yes ]]; then bundle "$file" >"$out"; else cp "$file" "$out"; fi
        if (($(wc -c <"$out") > limit)); then rm -f "$out"; else count=$((count + 1)); fi
    done < <(tracked "$@" | grep -v -e '^fuzz/' -e '^\.cargo/' -e 'Cargo\.toml$')
    echo "$target: $count seeds"
}

add tgsi_text "$text_limit" no '*.tgsi'
add preset "$text_limit" yes '*.slangp' '*.cgp'
add vulkan_glsl "$text_limit" yes '*.slang'
add cg "$text_limit" yes '*.cg'
add wgsl "$text_limit" no '*.wgsl'
add image "$image_limit" no '*.png' '*.jpg'
add golden_suite "$text_limit" no '*.toml'

# The video target reads YUV4MPEG2 streams: small ones of each chroma layout, written here.
mkdir -p "$root/video_stream"
for layout in 420jpeg 420mpeg2 422 444 mono; do
    case $layout in
        420*) frame=$((4 * 2 + 2 * 2 * 1)) ;;
        422) frame=$((4 * 2 + 2 * 2 * 2)) ;;
        444) frame=$((3 * 4 * 2)) ;;
        mono) frame=$((4 * 2)) ;;
    esac
    {
        printf 'YUV4MPEG2 W4 H2 F25:1 Ip A1:1 C%s XCOLORRANGE=LIMITED\n' "$layout"
        for i in 1 2; do
            printf 'FRAME\n'
            head -c "$frame" /dev/zero | tr '\0' "\\$((100 + i))"
        done
    } >"$root/video_stream/$layout.y4m"
done
echo "video_stream: 5 seeds"

# The JIT target reads a kind byte (flags and size) and then the generator's choices: seeds are
# fixed byte strings, one for each kind and size class.
mkdir -p "$root/jit_vs_interp"
for kind in $(seq 0 8 255); do
    hex=$(printf 'softgpu fuzz seed %d' "$kind" | sha256sum | cut -c1-64)
    hex="$hex$(printf '%s' "$hex" | sha256sum | cut -c1-64)"
    {
        printf "\\x$(printf '%02x' $((kind | (kind >> 3 & 7))))"
        for ((i = 0; i < ${#hex}; i += 2)); do printf "\\x${hex:i:2}"; done
    } >"$root/jit_vs_interp/kind_$kind"
done
echo "jit_vs_interp: 32 seeds"
