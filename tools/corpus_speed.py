#!/usr/bin/env python3
"""The speed picture of a preset corpus: softgpu against the preset peer, in the same run.

For every preset of the corpus (or a deterministic sample of it) that both render, measures

* steady state at 1920x1080 from a 320x240 frame: (time of K+N frames - time of K frames) / N,
  each a fresh process (device setup, compiling, the readback and PNG encoding cancel), the
  minimum of REPEATS runs; softgpu with --redraw-unchanged, so that a still input costs it what a
  moving one would (incremental frames are measured apart, see --still);
* the CI job: 3 frames at 640x480 from the same frame, as a shader repository's CI renders a
  golden, with softgpu's defaults (passes whose inputs did not change are reused): softgpu
  cold (an empty shader cache) and warm (the cache of the cold run), the peer best of two runs
  (its own caches warm after the first);

and writes a TSV of every measurement and a Markdown summary: a table sorted by the steady-state
ratio peer / softgpu (above 1: softgpu faster), the geometric mean of the ratios, the worst ten,
and the geometric mean per family (the corpus directory a preset is in).

    tools/corpus_speed.py --corpus /tmp/slang-shaders --sample 40 --out /tmp/speed

On a machine with many cores, `--jobs J --threads T` measures J presets at a time, each job's
processes pinned (taskset) to T cores of their own and told to use T threads (RAYON_NUM_THREADS
for softgpu, LP_NUM_THREADS for lavapipe), so that both sides of a ratio get the same T cores.
`--shard I/N` measures every Nth preset of the sample from the Ith (to split a run across
commands or machines), and `--merge DIR...` writes the summary of the speed.tsv files of
earlier runs without measuring anything.

The peer is librashader-cli 0.12.1 patched by tools/librashader_cli_patch.py, on Mesa lavapipe
(VK_ICD_FILENAMES is set to lavapipe's ICD). softgpu is a release build (`cargo build
--release`). Nothing here needs a GPU. A preset either side fails to render (or that takes longer
than --timeout) is listed with its error and left out of the ratios.
"""
import argparse
import concurrent.futures
import math
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd, env, timeout, cpus=None):
    """Wall seconds of `cmd` (pinned to the CPU list `cpus` when given), or raises RuntimeError
    with its last stderr line."""
    if cpus is not None:
        cmd = ["taskset", "-c", cpus] + cmd
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"timed out after {timeout} s")
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        lines = proc.stderr.decode(errors="replace").strip().splitlines()
        raise RuntimeError(lines[-1][:200] if lines else f"exit {proc.returncode}")
    return elapsed


class Renderer:
    """How one side renders a preset: `command(preset, size, frames, out)`."""

    def __init__(self, name, command, env):
        self.name = name
        self.command = command
        self.env = env

    def best(self, preset, size, frames, out, repeats, timeout, cpus=None, env=None):
        return min(timed(self.command(preset, size, frames, out), env or self.env, timeout, cpus)
                   for _ in range(repeats))


def softgpu(binary, input_png, cache_dir):
    """Steady-state runs draw every pass (--redraw-unchanged); a CI job (`cache` given) runs as
    a user's would, with the defaults (unchanged passes reused)."""
    def command(preset, size, frames, out, cache=None):
        cmd = [binary, "render", "--preset", preset, "--input", input_png, "--output", out,
               "--size", size, "--frames", str(frames), "--quiet"]
        cmd += ["--shader-cache", cache] if cache else ["--shader-cache", cache_dir,
                                                         "--redraw-unchanged"]
        return cmd
    return command


def peer(binary, input_png):
    def command(preset, size, frames, out):
        return [binary, "render", "-r", "vulkan", "-p", preset, "-i", input_png, "-o", out,
                "-d", size, "-f", str(frames - 1)]
    return command


def family(corpus, preset):
    rel = os.path.relpath(preset, corpus).split(os.sep)
    return "/".join(rel[:2]) if len(rel) > 2 else rel[0]


def geomean(values):
    values = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


# Process start-up varies by more than this between runs: a K+N run must take this much longer
# than the K run for the difference to say anything.
RESOLUTION_S = 0.03

TSV_HEADER = "preset\tfamily\tsoftgpu_ms\tpeer_ms\tratio\tci_cold_s\tci_warm_s\tci_peer_s\terror\n"
TSV_COLUMNS = [("softgpu", "%.1f"), ("peer", "%.1f"), ("ratio", "%.3f"), ("ci_cold", "%.2f"),
               ("ci_warm", "%.2f"), ("ci_peer", "%.2f")]


def measure(preset, index, args, ours, theirs, scratch, cpus, env):
    """One preset's row: the CI job (cold, warm, the peer's best of two), then the steady state
    of both sides; a failure on either side becomes the row's error."""
    rel = os.path.relpath(preset, args.corpus)
    row = {"preset": rel, "family": family(args.corpus, preset), "error": ""}
    out_png = os.path.join(scratch, f"out-{index}.png")
    try:
        # The CI job first: its cold run fills the cache the steady-state runs then use.
        cold_cache = os.path.join(scratch, f"cold-{index}")
        row["ci_cold"] = timed(ours.command(preset, "640x480", 3, out_png, cold_cache),
                               env, args.timeout, cpus)
        row["ci_warm"] = timed(ours.command(preset, "640x480", 3, out_png, cold_cache),
                               env, args.timeout, cpus)
        shutil.rmtree(cold_cache, ignore_errors=True)
        row["ci_peer"] = theirs.best(preset, "640x480", 3, out_png, 2, args.timeout, cpus, env)
        steady = {}
        for side in (ours, theirs):
            # One untimed run first: it fills the shader caches the timed runs then read,
            # so that the K-frame run does not pay a compile the K+N one skips.
            side.best(preset, "1920x1080", 1, out_png, 1, args.timeout, cpus, env)
            k = side.best(preset, "1920x1080", args.warm, out_png, args.repeats, args.timeout,
                          cpus, env)
            kn = side.best(preset, "1920x1080", args.warm + args.steady, out_png, args.repeats,
                           args.timeout, cpus, env)
            if kn - k < RESOLUTION_S:
                raise RuntimeError(
                    f"{side.name}: {args.warm + args.steady} frames took {(kn - k) * 1e3:.0f} ms "
                    f"more than {args.warm}, under the {RESOLUTION_S * 1e3:.0f} ms the timing "
                    f"resolves; raise --steady")
            steady[side.name] = (kn - k) / args.steady * 1e3
        row["softgpu"], row["peer"] = steady["softgpu"], steady["peer"]
        row["ratio"] = row["peer"] / row["softgpu"]
    except RuntimeError as e:
        row["error"] = str(e)
    return row


def tsv_line(row):
    cells = [(f % row[k]) if k in row else "" for k, f in TSV_COLUMNS]
    return "\t".join([row["preset"], row["family"]] + cells + [row["error"]]) + "\n"


def read_tsv(path):
    rows = []
    with open(path) as f:
        header = f.readline().rstrip("\n").split("\t")
        if header != TSV_HEADER.rstrip("\n").split("\t"):
            sys.exit(f"{path}:1: not a corpus_speed.py speed.tsv (header {header})")
        for number, line in enumerate(f, start=2):
            cells = line.rstrip("\n").split("\t")
            if len(cells) != len(header):
                sys.exit(f"{path}:{number}: expected {len(header)} tab-separated cells, "
                         f"found {len(cells)}")
            row = {"preset": cells[0], "family": cells[1], "error": cells[-1]}
            for (key, _), cell in zip(TSV_COLUMNS, cells[2:-1]):
                if cell:
                    try:
                        row[key] = float(cell)
                    except ValueError:
                        sys.exit(f"{path}:{number}: {key} is not a number: {cell!r}")
            rows.append(row)
    return rows


def summarize(rows, out, description):
    ok = sorted((r for r in rows if "ratio" in r), key=lambda r: r["ratio"])
    with open(os.path.join(out, "summary.md"), "w") as md:
        md.write(f"{len(ok)} of {len(rows)} presets measured ({description}); CI job 3 frames "
                 f"at 640x480.\n\n")
        md.write(f"Geometric mean of peer / softgpu: **{geomean([r['ratio'] for r in ok]):.2f}x**"
                 f" (above 1: softgpu faster); CI job, peer / softgpu warm: "
                 f"{geomean([r['ci_peer'] / r['ci_warm'] for r in ok]):.2f}x, cold: "
                 f"{geomean([r['ci_peer'] / r['ci_cold'] for r in ok]):.2f}x. "
                 f"softgpu faster in the steady state on {sum(r['ratio'] >= 1 for r in ok)}, "
                 f"cold CI job on {sum(r['ci_cold'] <= r['ci_peer'] for r in ok)}, warm CI job "
                 f"at most half the peer's on {sum(2 * r['ci_warm'] <= r['ci_peer'] for r in ok)}"
                 f".\n\n")
        md.write("| preset | family | softgpu ms/frame | peer ms/frame | peer ÷ softgpu "
                 "| CI s: softgpu cold / warm | peer |\n| --- | --- | --- | --- | --- | --- | --- |\n")
        for r in ok:
            md.write(f"| {r['preset']} | {r['family']} | {r['softgpu']:.0f} | {r['peer']:.0f} "
                     f"| {r['ratio']:.2f}x | {r['ci_cold']:.2f} / {r['ci_warm']:.2f} "
                     f"| {r['ci_peer']:.2f} |\n")
        md.write("\nWorst ten: " + ", ".join(f"{r['preset']} {r['ratio']:.2f}x" for r in ok[:10])
                 + "\n\nBy family (geometric mean, presets):\n\n")
        families = {}
        for r in ok:
            families.setdefault(r["family"], []).append(r["ratio"])
        for fam, ratios in sorted(families.items(), key=lambda kv: geomean(kv[1])):
            md.write(f"- {fam}: {geomean(ratios):.2f}x ({len(ratios)})\n")
        failed = [r for r in rows if r["error"]]
        if failed:
            md.write("\nNot measured:\n\n")
            for r in failed:
                md.write(f"- {r['preset']}: {r['error']}\n")
    print(os.path.join(out, "summary.md"))


def parse_shard(text):
    try:
        index, count = (int(v) for v in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected I/N (two integers), found {text!r}")
    if not 0 <= index < count:
        raise argparse.ArgumentTypeError(f"expected 0 <= I < N, found {text!r}")
    return index, count


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", help="a checkout of libretro/slang-shaders")
    ap.add_argument("--softgpu", default=os.path.join(ROOT, "target/release/softgpu"))
    ap.add_argument("--peer", default=os.environ.get("LIBRASHADER_CLI",
                                                     "/tmp/librashader-cli-patched"))
    ap.add_argument("--icd", default="/usr/share/vulkan/icd.d/lvp_icd.x86_64.json",
                    help="the Vulkan ICD the peer runs on (lavapipe's)")
    ap.add_argument("--input", default=os.path.join(ROOT, "tests/chain/inputs/scene320x240.png"))
    ap.add_argument("--sample", type=int, default=1,
                    help="measure every Nth preset in sorted order (1: all)")
    ap.add_argument("--shard", type=parse_shard, default=(0, 1), metavar="I/N",
                    help="of the sample, measure only every Nth preset from the Ith")
    ap.add_argument("--presets", metavar="FILE",
                    help="measure the presets listed in FILE (a path a line, absolute or relative "
                         "to --corpus) instead of every preset of the corpus")
    ap.add_argument("--only", action="append", default=[],
                    help="measure only presets whose path contains this; repeatable")
    ap.add_argument("--steady", type=int, default=10, help="N: frames measured")
    ap.add_argument("--warm", type=int, default=2, help="K: frames run first")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--jobs", type=int, default=1, help="presets measured at a time")
    ap.add_argument("--threads", type=int, default=0,
                    help="with --jobs: cores (and threads) of each job [default: all cores / jobs]")
    ap.add_argument("--deadline", type=float, default=0,
                    help="start no preset after this many seconds (0: no limit)")
    ap.add_argument("--merge", nargs="+", metavar="DIR",
                    help="summarize the speed.tsv of these earlier runs into --out; measure nothing")
    ap.add_argument("--out", required=True, help="directory for speed.tsv and summary.md")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    if args.merge:
        rows = [r for d in args.merge for r in read_tsv(os.path.join(d, "speed.tsv"))]
        summarize(rows, args.out, "merged from " + ", ".join(args.merge))
        return
    if not args.corpus:
        ap.error("--corpus is required unless --merge is given")
    for tool in (args.softgpu, args.peer):
        if not os.access(tool, os.X_OK):
            sys.exit(f"{tool}: not found or not executable")
    if args.jobs < 1 or args.threads < 0:
        ap.error("--jobs must be at least 1 and --threads at least 0")
    if args.presets:
        with open(args.presets) as f:
            presets = [os.path.join(args.corpus, line.strip()) for line in f if line.strip()]
        missing = [p for p in presets if not os.path.isfile(p)]
        if missing:
            sys.exit(f"{args.presets}: {len(missing)} presets not found, first {missing[0]}")
    else:
        presets = sorted(
            os.path.join(d, f)
            for d, _, files in os.walk(args.corpus) for f in files if f.endswith(".slangp"))
    if args.only:
        presets = [p for p in presets if any(o in p for o in args.only)]
    presets = presets[::args.sample][args.shard[0]::args.shard[1]]
    scratch = tempfile.mkdtemp(prefix="corpus-speed-")
    env = dict(os.environ, VK_ICD_FILENAMES=args.icd, VK_DRIVER_FILES=args.icd,
               RUST_BACKTRACE="0")
    env.pop("SOFTGPU_MEMORY_BUDGET", None)
    # Each job gets its own cores, so that the two sides of a ratio run on the same ones.
    slots = [(None, env)]
    if args.jobs > 1 or args.threads:
        if shutil.which("taskset") is None:
            sys.exit("--jobs/--threads need taskset (util-linux)")
        cores = sorted(os.sched_getaffinity(0))
        threads = args.threads or max(1, len(cores) // args.jobs)
        if threads * args.jobs > len(cores):
            sys.exit(f"--jobs {args.jobs} x --threads {threads} needs {threads * args.jobs} "
                     f"cores; this process has {len(cores)}")
        slots = []
        for j in range(args.jobs):
            mine = cores[j * threads:(j + 1) * threads]
            slot_env = dict(env, RAYON_NUM_THREADS=str(threads), LP_NUM_THREADS=str(threads))
            slots.append((",".join(map(str, mine)), slot_env))
    warm_cache = os.path.join(scratch, "warm-cache")
    ours = Renderer("softgpu", softgpu(args.softgpu, args.input, warm_cache), env)
    theirs = Renderer("peer", peer(args.peer, args.input), env)
    tsv = open(os.path.join(args.out, "speed.tsv"), "w")
    tsv.write(TSV_HEADER)
    rows = []
    started = time.monotonic()
    free = queue.Queue()
    for slot in slots:
        free.put(slot)
    lock = threading.Lock()

    def run(index, preset):
        if args.deadline and time.monotonic() - started > args.deadline:
            return
        cpus, slot_env = free.get()
        try:
            row = measure(preset, index, args, ours, theirs, scratch, cpus, slot_env)
        finally:
            free.put((cpus, slot_env))
        with lock:
            rows.append(row)
            tsv.write(tsv_line(row))
            tsv.flush()
            print(f"[{len(rows)}/{len(presets)}] {row['preset']}: "
                  + (row["error"] or f"{row['ratio']:.2f}x ({row['softgpu']:.0f} vs "
                     f"{row['peer']:.0f} ms/frame)"), file=sys.stderr)

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(slots)) as pool:
        for future in [pool.submit(run, i, p) for i, p in enumerate(presets)]:
            future.result()
    tsv.close()
    shutil.rmtree(scratch, ignore_errors=True)
    shard = f", shard {args.shard[0]}/{args.shard[1]}" if args.shard[1] > 1 else ""
    summarize(rows, args.out,
              f"every {args.sample}th of {args.corpus}{shard}; steady state 1920x1080 from "
              f"{os.path.basename(args.input)}, N={args.steady} K={args.warm}, min of "
              f"{args.repeats}; {len(slots)} at a time")


if __name__ == "__main__":
    main()
