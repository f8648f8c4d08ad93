#!/usr/bin/env bash
# Speed of the real-driver peers (Mesa 22.3 softpipe and llvmpipe) on the four bench shaders in
# benches/shaders/src/, the numbers the README compares softgpu against.
#
#   tools/peer_speed.sh [RUNS] [SOFTPIPE_FRAMES] [LLVMPIPE_FRAMES]     (defaults 3, 2, 60)
#
# Each measurement is `mesa_run.py SHADER OUT --driver D --size 1920x1080 --frames N`, which draws
# one warm-up frame, then N frames and a read-back, and reports Mpixels/s; every (shader, driver)
# pair is measured RUNS times and the median is printed. llvmpipe uses LP_NUM_THREADS threads
# (default: one per core); set it in the environment to pin the thread count.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
SP_FRAMES=${2:-2}
LP_FRAMES=${3:-60}
MESA_RUN=${MESA_RUN:-/work/shared/peers/mesa_run.py}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

echo "# $(python3 -c 'import moderngl; c = moderngl.create_standalone_context(backend="egl"); print("Mesa " + c.info["GL_VERSION"].split("Mesa ")[-1])' 2>/dev/null || echo 'Mesa version unknown'); $(nproc) cores; 1920x1080; median of $RUNS runs"
printf '%-16s %-9s %8s  %s\n' shader driver Mpix/s runs
for shader in tex_mul alu_loop math_builtins const_color; do
  for driver in softpipe llvmpipe; do
    frames=$SP_FRAMES
    [ "$driver" = llvmpipe ] && frames=$LP_FRAMES
    rates=()
    for _ in $(seq "$RUNS"); do
      line=$(python3 "$MESA_RUN" "benches/shaders/src/$shader.frag" "$OUT/$shader-$driver" \
               --driver "$driver" --size 1920x1080 --frames "$frames" | grep 'Mpix/s')
      # recompute from the frame count and time: mesa_run.py rounds to 0.1 Mpix/s
      rates+=("$(awk -v f="$frames" '{for (i = 1; i <= NF; i++) if ($i == "in") t = $(i + 1); sub(/s$/, "", t); printf "%.3f", 1920 * 1080 * f / t / 1e6}' <<<"$line")")
    done
    median=$(printf '%s\n' "${rates[@]}" | sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}')
    printf '%-16s %-9s %8s  %s\n' "$shader" "$driver" "$median" "${rates[*]} ($frames frames each)"
  done
done
