#!/usr/bin/env bash
# Peer speed for the filter-chain benchmarks: librashader-cli (Vulkan runtime) on Mesa lavapipe
# renders each bench preset of tests/chain/bench/ at 1920x1080 from the 320x240 test input.
#
#   per-frame time = (time for N+K frames - time for K frames) / N
#
# Each run is a fresh process (device setup, shader compilation, the final readback and PNG
# encoding are in both terms and cancel); every timing is the minimum of REPEATS runs.
#
#   tools/chain_peer_speed.sh [N=30] [K=5] [REPEATS=3]
#
# Prints one line per preset: `name ms_per_frame fps`. The peer is the patched CLI of
# tools/librashader_cli_patch.py (upstream 0.12.1 ignores --dimensions in its Vulkan runtime);
# set LIBRASHADER_CLI to use another build.
set -euo pipefail

N=${1:-30}
K=${2:-5}
REPEATS=${3:-3}
CLI=${LIBRASHADER_CLI:-/tmp/librashader-cli-patched}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
INPUT="$ROOT/tests/chain/inputs/scene320x240.png"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
export VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
export RUST_BACKTRACE=0

if [ ! -x "$CLI" ]; then
    echo "$CLI: not found (build it with tools/librashader_cli_patch.py)" >&2
    exit 1
fi

# Seconds (fractional) for one render of FRAMES frames, the minimum over REPEATS runs.
time_frames() {
    local preset=$1 frames=$2 best="" start end t
    for _ in $(seq "$REPEATS"); do
        start=$(date +%s.%N)
        "$CLI" render -r vulkan -p "$preset" -i "$INPUT" -o "$OUT/out.png" \
            -d 1920x1080 -f $((frames - 1)) > /dev/null
        end=$(date +%s.%N)
        t=$(echo "$end - $start" | bc -l)
        if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
    done
    echo "$best"
}

echo "# librashader-cli $("$CLI" --version | awk '{print $2}') vulkan on lavapipe, 1920x1080 from 320x240, N=$N K=$K, min of $REPEATS"
for preset in "$ROOT"/tests/chain/bench/*.slangp; do
    name=$(basename "$preset" .slangp)
    tk=$(time_frames "$preset" "$K")
    tnk=$(time_frames "$preset" $((N + K)))
    per=$(echo "($tnk - $tk) / $N" | bc -l)
    printf '%s %.2f %.2f\n' "$name" "$(echo "$per * 1000" | bc -l)" "$(echo "1 / $per" | bc -l)"
done
