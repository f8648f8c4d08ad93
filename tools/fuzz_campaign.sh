#!/usr/bin/env bash
# A long fuzzing campaign: runs each fuzz target for a share of HOURS (one after another, or
# PARALLEL at a time) in libFuzzer's fork mode, which carries on past crashes, timeouts and
# out-of-memory inputs and keeps each as an artifact, then writes a summary table of
# executions, exec/s, final coverage (cov, ft), corpus size and crashes per target.
# Usage: tools/fuzz_campaign.sh HOURS [TARGET...]
#   JOBS=N      fuzzing processes per target (libFuzzer -fork=N; default 1)
#   PARALLEL=N  targets at a time (default 1); HOURS is then split over the batches
#   OUT=DIR     logs and summary (default fuzz/campaign-YYYYmmdd-HHMM)
# Seed the corpora first (tools/fuzz_seeds.sh); the corpora grow in fuzz/corpus/TARGET,
# artifacts land in fuzz/artifacts/TARGET.
set -euo pipefail
cd "$(dirname "$0")/.."
if (($# < 1)); then
    echo "usage: tools/fuzz_campaign.sh HOURS [TARGET...]" >&2
    exit 2
fi
hours=$1
shift
all=(tgsi_text preset vulkan_glsl cg wgsl image golden_suite jit_vs_interp)
targets=("$@")
((${#targets[@]})) || targets=("${all[@]}")
jobs=${JOBS:-1}
parallel=${PARALLEL:-1}
out=${OUT:-fuzz/campaign-$(date -u +%Y%m%d-%H%M)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
batches=$(((${#targets[@]} + parallel - 1) / parallel))
seconds=$(awk -v h="$hours" -v b="$batches" 'BEGIN { printf "%d", h * 3600 / b }')
echo "campaign: ${#targets[@]} targets, $seconds s each, $parallel at a time, $jobs jobs each; logs in $out"

[[ -d fuzz/corpus ]] || tools/fuzz_seeds.sh
(cd fuzz && cargo fuzz build -s none --release)

run_target() {
    local target=$1
    mkdir -p "fuzz/corpus/$target" "fuzz/artifacts/$target"
    (cd fuzz && cargo fuzz run -s none --release "$target" "corpus/$target" -- \
        -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
        -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
        >"$out/$target.log" 2>&1) || true
}

for ((i = 0; i < ${#targets[@]}; i += parallel)); do
    for target in "${targets[@]:i:parallel}"; do
        run_target "$target" &
    done
    wait
done

# The fork-mode status lines read `#EXECS: cov: C ft: F corp: N exec/s: E oom/timeout/crash:
# O/T/C time: Ss ...`; the last one holds the run's totals (its exec/s is the last interval's,
# so the table gives executions over seconds instead).
summary="$out/summary.md"
{
    echo "| target | seconds | executions | exec/s | cov | ft | corpus | crashes | timeouts | ooms |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    for target in "${targets[@]}"; do
        corpus=$(find "fuzz/corpus/$target" -type f | wc -l)
        grep -E '^#[0-9]+: cov:' "$out/$target.log" | tail -n 1 | awk -v t="$target" -v c="$corpus" '
            { for (i = 1; i <= NF; i++) v[$i] = $(i + 1)
              split(v["oom/timeout/crash:"], o, "/"); sub(/s$/, "", v["time:"])
              execs = substr($1, 2, length($1) - 2)
              printf "| %s | %s | %s | %.0f | %s | %s | %s | %s | %s | %s |\n", t, v["time:"], execs,
                  execs / (v["time:"] > 0 ? v["time:"] : 1), v["cov:"], v["ft:"], c, o[3], o[2], o[1]
              found = 1 }
            END { if (!found) printf "| %s | no status line: see %s.log |||||||||\n", t, t }'
    done
} >"$summary"
cat "$summary"
