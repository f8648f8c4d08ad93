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

The peer is librashader-cli 0.12.1 patched by tools/librashader_cli_patch.py, on Mesa lavapipe
(VK_ICD_FILENAMES is set to lavapipe's ICD). softgpu is a release build (`cargo build
--release`). Nothing here needs a GPU. A preset either side fails to render (or that takes longer
than --timeout) is listed with its error and left out of the ratios.
"""
import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd, env, timeout):
    """Wall seconds of `cmd`, or raises RuntimeError with its last stderr line."""
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

    def best(self, preset, size, frames, out, repeats, timeout):
        return min(timed(self.command(preset, size, frames, out), self.env, timeout)
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", required=True, help="a checkout of libretro/slang-shaders")
    ap.add_argument("--softgpu", default=os.path.join(ROOT, "target/release/softgpu"))
    ap.add_argument("--peer", default=os.environ.get("LIBRASHADER_CLI",
                                                     "/tmp/librashader-cli-patched"))
    ap.add_argument("--input", default=os.path.join(ROOT, "tests/chain/inputs/scene320x240.png"))
    ap.add_argument("--sample", type=int, default=1,
                    help="measure every Nth preset in sorted order (1: all)")
    ap.add_argument("--only", action="append", default=[],
                    help="measure only presets whose path contains this; repeatable")
    ap.add_argument("--steady", type=int, default=10, help="N: frames measured")
    ap.add_argument("--warm", type=int, default=2, help="K: frames run first")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--out", required=True, help="directory for speed.tsv and summary.md")
    args = ap.parse_args()

    for tool in (args.softgpu, args.peer):
        if not os.access(tool, os.X_OK):
            sys.exit(f"{tool}: not found or not executable")
    presets = sorted(
        os.path.join(d, f)
        for d, _, files in os.walk(args.corpus) for f in files if f.endswith(".slangp"))
    if args.only:
        presets = [p for p in presets if any(o in p for o in args.only)]
    presets = presets[::args.sample]
    os.makedirs(args.out, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="corpus-speed-")
    env = dict(os.environ, VK_ICD_FILENAMES="/usr/share/vulkan/icd.d/lvp_icd.x86_64.json",
               RUST_BACKTRACE="0")
    env.pop("SOFTGPU_MEMORY_BUDGET", None)
    warm_cache = os.path.join(scratch, "warm-cache")
    ours = Renderer("softgpu", softgpu(args.softgpu, args.input, warm_cache), env)
    theirs = Renderer("peer", peer(args.peer, args.input), env)
    out_png = os.path.join(scratch, "out.png")
    rows = []
    tsv = open(os.path.join(args.out, "speed.tsv"), "w")
    tsv.write("preset\tfamily\tsoftgpu_ms\tpeer_ms\tratio\tci_cold_s\tci_warm_s\tci_peer_s\terror\n")
    for i, preset in enumerate(presets):
        rel = os.path.relpath(preset, args.corpus)
        row = {"preset": rel, "family": family(args.corpus, preset), "error": ""}
        try:
            # The CI job first: its cold run fills the cache the steady-state runs then use.
            cold_cache = os.path.join(scratch, f"cold-{i}")
            row["ci_cold"] = timed(ours.command(preset, "640x480", 3, out_png, cold_cache),
                                   env, args.timeout)
            row["ci_warm"] = timed(ours.command(preset, "640x480", 3, out_png, cold_cache),
                                   env, args.timeout)
            shutil.rmtree(cold_cache, ignore_errors=True)
            row["ci_peer"] = theirs.best(preset, "640x480", 3, out_png, 2, args.timeout)
            steady = {}
            for side in (ours, theirs):
                # One untimed run first: it fills the shader caches the timed runs then read,
                # so that the K-frame run does not pay a compile the K+N one skips.
                side.best(preset, "1920x1080", 1, out_png, 1, args.timeout)
                k = side.best(preset, "1920x1080", args.warm, out_png, args.repeats, args.timeout)
                kn = side.best(preset, "1920x1080", args.warm + args.steady, out_png,
                               args.repeats, args.timeout)
                steady[side.name] = max(kn - k, 1e-6) / args.steady * 1e3
            row["softgpu"], row["peer"] = steady["softgpu"], steady["peer"]
            row["ratio"] = row["peer"] / row["softgpu"]
        except RuntimeError as e:
            row["error"] = str(e)
        rows.append(row)
        fmt = lambda k, f: (f % row[k]) if k in row else ""
        tsv.write("\t".join([rel, row["family"], fmt("softgpu", "%.1f"), fmt("peer", "%.1f"),
                             fmt("ratio", "%.3f"), fmt("ci_cold", "%.2f"), fmt("ci_warm", "%.2f"),
                             fmt("ci_peer", "%.2f"), row["error"]]) + "\n")
        tsv.flush()
        print(f"[{i + 1}/{len(presets)}] {rel}: "
              + (row["error"] or f"{row['ratio']:.2f}x ({row['softgpu']:.0f} vs "
                 f"{row['peer']:.0f} ms/frame)"), file=sys.stderr)
    tsv.close()
    shutil.rmtree(scratch, ignore_errors=True)

    ok = sorted((r for r in rows if "ratio" in r), key=lambda r: r["ratio"])
    with open(os.path.join(args.out, "summary.md"), "w") as md:
        md.write(f"{len(ok)} of {len(rows)} presets measured "
                 f"(every {args.sample}th of {args.corpus}); steady state 1920x1080 from "
                 f"{os.path.basename(args.input)}, N={args.steady} K={args.warm}, min of "
                 f"{args.repeats}; CI job 3 frames at 640x480.\n\n")
        md.write(f"Geometric mean of peer / softgpu: **{geomean([r['ratio'] for r in ok]):.2f}x**"
                 f" (above 1: softgpu faster); CI job, peer / softgpu warm: "
                 f"{geomean([r['ci_peer'] / r['ci_warm'] for r in ok]):.2f}x, cold: "
                 f"{geomean([r['ci_peer'] / r['ci_cold'] for r in ok]):.2f}x.\n\n")
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
    print(os.path.join(args.out, "summary.md"))


if __name__ == "__main__":
    main()
