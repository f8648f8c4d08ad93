#!/usr/bin/env python3
"""Renders the libretro/slang-shaders corpus with the reference peer and with softgpu, and compares.

Every `.slangp` of the corpus is rendered at 640x480 from a 320x240 input, 3 frames (frame index 2
is written), once by librashader-cli (Vulkan runtime on Mesa lavapipe) and once by
`target/release/softgpu render`; a preset *matches* when at least 99% of its pixels are within
4/255 on every channel. Each half caches its outputs (`--work`/peer, `--work`/softgpu: one PNG per
preset or a `.err` file with the failure), so the slow peer half runs once and the softgpu half can
be rerun after every change.

    # extract the corpus once (no work tree in the mirror)
    mkdir -p /tmp/slang-shaders && git --git-dir=/work/.mirror/libretro+slang-shaders/repo archive HEAD | tar -x -C /tmp/slang-shaders
    python3 tools/chain_corpus.py --half peer        # librashader-cli outputs (slow; cached)
    python3 tools/chain_corpus.py --half softgpu     # softgpu outputs (cached; --fresh to redo)
    python3 tools/chain_corpus.py --half compare     # summary only

The 660 Mega Bezel presets take minutes each on lavapipe (dozens of large passes); a quick pass
over everything else is `--exclude Mega_Bezel`.

Both halves write the summary (`--work`/summary.json and summary.txt): presets found, rendered by
the peer, rendered by softgpu, matched, and the most common failure reasons grouped by the first
line of stderr. The peer is the patched librashader-cli of tools/librashader_cli_patch.py (upstream
0.12.1 ignores `--dimensions` in its Vulkan runtime); pass `--peer` to use another binary.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time

import numpy as np
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAVAPIPE_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
SIZE = "640x480"
FRAMES = 3
TOLERANCE = 4
MATCH_SHARE = 0.99


def preset_id(corpus, path):
    """A flat file name for a preset: its corpus-relative path with `/` replaced by `__`."""
    return os.path.relpath(path, corpus).replace(os.sep, "__")


def find_presets(corpus, name_filter, excludes=()):
    found = []
    for dirpath, dirnames, filenames in os.walk(corpus):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith(".slangp"):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, corpus)
                if name_filter is not None and name_filter not in rel:
                    continue
                if any(e in rel for e in excludes):
                    continue
                found.append(path)
    return found


def first_line(text):
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line[:300]
    return "(no stderr)"


def run_one(cmd, out_png, err_file, timeout, env):
    """Runs a renderer; leaves either out_png or err_file (first line = reason) behind."""
    for stale in (out_png, err_file):
        if os.path.exists(stale):
            os.remove(stale)
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        with open(err_file, "w") as f:
            f.write(f"timeout after {timeout} s\n")
        return
    elapsed = time.monotonic() - start
    stderr = proc.stderr.decode("utf-8", "replace")
    if proc.returncode != 0 or not os.path.exists(out_png):
        if os.path.exists(out_png):
            os.remove(out_png)
        reason = first_line(stderr) if stderr.strip() else f"exit status {proc.returncode}"
        if proc.returncode < 0:
            reason = f"killed by signal {-proc.returncode}: {reason}"
        with open(err_file, "w") as f:
            f.write(reason + "\n\n" + stderr[-4000:])
        return
    with open(out_png + ".time", "w") as f:
        f.write(f"{elapsed:.3f}\n")


def peer_cmd(args, preset, input_png, out_png):
    return [args.peer, "render", "-r", "vulkan", "-p", preset, "-i", input_png, "-o", out_png,
            "-d", SIZE, "-f", str(FRAMES - 1)]


def softgpu_cmd(args, preset, input_png, out_png):
    return [args.softgpu, "render", "--preset", preset, "--input", input_png, "--output", out_png,
            "--size", SIZE, "--frames", str(FRAMES)]


def render_half(args, presets, half, input_png):
    out_dir = os.path.join(args.work, half)
    os.makedirs(out_dir, exist_ok=True)
    env = dict(os.environ)
    env["VK_ICD_FILENAMES"] = LAVAPIPE_ICD
    # Two renderers run at once; each gets one rasterizer thread so the run stays on 2 cores.
    env.setdefault("LP_NUM_THREADS", "1")
    env.setdefault("RAYON_NUM_THREADS", "1")
    make_cmd = peer_cmd if half == "peer" else softgpu_cmd
    todo = []
    for preset in presets:
        pid = preset_id(args.corpus, preset)
        if half == "softgpu" and args.peer_rendered_only and not os.path.exists(
                os.path.join(args.work, "peer", pid + ".png")):
            continue
        out_png = os.path.join(out_dir, pid + ".png")
        err_file = os.path.join(out_dir, pid + ".err")
        if not args.fresh and (os.path.exists(out_png) or os.path.exists(err_file)):
            continue
        todo.append((make_cmd(args, preset, input_png, out_png), out_png, err_file))
    print(f"{half}: {len(todo)} of {len(presets)} presets to render", file=sys.stderr)
    done = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_one, cmd, o, e, args.timeout, env) for cmd, o, e in todo]
        for _ in concurrent.futures.as_completed(futures):
            done += 1
            if done % 50 == 0 or done == len(todo):
                print(f"{half}: {done}/{len(todo)}", file=sys.stderr, flush=True)


def compare_pngs(a_path, b_path):
    """(matched, share within tolerance, max diff) or an error string."""
    a = np.asarray(Image.open(a_path).convert("RGBA"), dtype=np.int16)
    b = np.asarray(Image.open(b_path).convert("RGBA"), dtype=np.int16)
    if a.shape != b.shape:
        return f"size {b.shape[1]}x{b.shape[0]} differs from the peer's {a.shape[1]}x{a.shape[0]}"
    diff = np.abs(a - b).max(axis=2)
    share = float((diff <= TOLERANCE).mean())
    return share >= MATCH_SHARE, share, int(diff.max())


def read_reason(err_file):
    with open(err_file, encoding="utf-8", errors="replace") as f:
        return f.readline().strip()


PATH_RE = re.compile(r"(?:/[^\s:`'\"(),]+)+")


def reason_shape(reason):
    """The first stderr line with paths, quoted names and numbers blanked, so that one cause
    seen in many presets is counted once (e.g. every "uniform `X` means nothing")."""
    reason = PATH_RE.sub("<path>", reason)
    reason = re.sub(r"`[^`]*`", "`_`", reason)
    reason = re.sub(r"\"[^\"]*\"", '"_"', reason)
    return re.sub(r"\d+", "N", reason)


def summarize(args, presets):
    peer_dir = os.path.join(args.work, "peer")
    ours_dir = os.path.join(args.work, "softgpu")
    counts = collections.Counter()
    peer_reasons = collections.Counter()
    ours_reasons = collections.Counter()
    peer_shapes = collections.Counter()
    ours_shapes = collections.Counter()
    mismatch_examples = []
    rows = []
    for preset in presets:
        pid = preset_id(args.corpus, preset)
        row = {"preset": os.path.relpath(preset, args.corpus)}
        peer_png = os.path.join(peer_dir, pid + ".png")
        ours_png = os.path.join(ours_dir, pid + ".png")
        peer_err = os.path.join(peer_dir, pid + ".err")
        ours_err = os.path.join(ours_dir, pid + ".err")
        counts["presets"] += 1
        if os.path.exists(peer_png):
            counts["peer_rendered"] += 1
            row["peer"] = "ok"
        elif os.path.exists(peer_err):
            row["peer"] = read_reason(peer_err)
            peer_reasons[PATH_RE.sub("<path>", row["peer"])] += 1
            peer_shapes[reason_shape(row["peer"])] += 1
        else:
            row["peer"] = "not run"
            counts["peer_not_run"] += 1
        if os.path.exists(ours_png):
            counts["softgpu_rendered"] += 1
            row["softgpu"] = "ok"
        elif os.path.exists(ours_err):
            row["softgpu"] = read_reason(ours_err)
            ours_reasons[PATH_RE.sub("<path>", row["softgpu"])] += 1
            ours_shapes[reason_shape(row["softgpu"])] += 1
        else:
            row["softgpu"] = "not run"
            counts["softgpu_not_run"] += 1
        if row["peer"] == "ok" and row["softgpu"] == "ok":
            counts["both_rendered"] += 1
            result = compare_pngs(peer_png, ours_png)
            if isinstance(result, str):
                row["compare"] = result
                counts["mismatched"] += 1
                mismatch_examples.append((0.0, row["preset"], result))
            else:
                matched, share, max_diff = result
                row["compare"] = {"matched": matched, "share_within": share, "max_diff": max_diff}
                if matched:
                    counts["matched"] += 1
                else:
                    counts["mismatched"] += 1
                    mismatch_examples.append((share, row["preset"], f"{share * 100:.2f}% within "
                                              f"{TOLERANCE}/255, max diff {max_diff}"))
        elif row["peer"] != "ok" and row["softgpu"] == "ok":
            counts["softgpu_only"] += 1
        rows.append(row)
    mismatch_examples.sort()
    summary = {
        "size": SIZE, "frames": FRAMES, "tolerance": TOLERANCE, "match_share": MATCH_SHARE,
        "counts": dict(counts),
        "peer_failure_reasons": peer_reasons.most_common(),
        "peer_failure_shapes": peer_shapes.most_common(),
        "softgpu_failure_reasons": ours_reasons.most_common(),
        "softgpu_failure_shapes": ours_shapes.most_common(),
        "worst_mismatches": [{"preset": p, "detail": d} for _, p, d in mismatch_examples[:50]],
        "presets": rows,
    }
    os.makedirs(args.work, exist_ok=True)
    with open(os.path.join(args.work, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    lines = [f"corpus: {args.corpus}  ({SIZE} from a 320x240 input, {FRAMES} frames; match = "
             f">= {MATCH_SHARE * 100:.0f}% of pixels within {TOLERANCE}/255)"]
    for key in ("presets", "peer_rendered", "peer_not_run", "softgpu_rendered", "softgpu_not_run",
                "both_rendered", "matched", "mismatched", "softgpu_only"):
        lines.append(f"  {key:18} {counts.get(key, 0)}")
    for title, counter in (("peer failure reasons", peer_reasons),
                           ("peer failure reasons, names blanked", peer_shapes),
                           ("softgpu failure reasons", ours_reasons),
                           ("softgpu failure reasons, names blanked", ours_shapes)):
        lines.append(f"top {title}:")
        for reason, n in counter.most_common(15):
            lines.append(f"  {n:5}  {reason}")
    lines.append("worst mismatches:")
    for _, p, d in mismatch_examples[:15]:
        lines.append(f"  {p}: {d}")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.work, "summary.txt"), "w") as f:
        f.write(text)
    print(text, end="")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default="/tmp/slang-shaders")
    ap.add_argument("--work", default="/tmp/chain_corpus")
    ap.add_argument("--half", choices=["peer", "softgpu", "both", "compare"], default="both")
    ap.add_argument("--peer", default=os.environ.get("LIBRASHADER_CLI",
                                                     "/tmp/librashader-cli-patched"))
    ap.add_argument("--softgpu", default=os.path.join(ROOT, "target", "release", "softgpu"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per preset and renderer")
    ap.add_argument("--filter", help="only presets whose corpus path contains this text")
    ap.add_argument("--exclude", action="append", default=[],
                    help="skip presets whose corpus path contains this text (repeatable)")
    ap.add_argument("--fresh", action="store_true", help="ignore cached outputs of the half run")
    ap.add_argument("--shuffle", type=int, metavar="SEED",
                    help="render in a seeded random order, so a partial run is a fair sample")
    ap.add_argument("--skip", type=int, default=0, metavar="N",
                    help="leave out the first N presets of the (shuffled) order, to continue a sample")
    ap.add_argument("--limit", type=int, metavar="N", help="render at most N presets after --skip")
    ap.add_argument("--peer-rendered-only", action="store_true",
                    help="softgpu half: only presets the peer has rendered already")
    args = ap.parse_args()

    if not os.path.isdir(args.corpus):
        sys.exit(f"{args.corpus}: no corpus (see the extraction command in this script's doc)")
    presets = find_presets(args.corpus, args.filter, args.exclude)
    if args.shuffle is not None:
        random.Random(args.shuffle).shuffle(presets)
    presets = presets[args.skip:]
    if args.limit is not None:
        presets = presets[:args.limit]
    os.makedirs(args.work, exist_ok=True)
    input_png = os.path.join(args.work, "input320x240.png")
    shutil.copyfile(os.path.join(ROOT, "tests", "chain", "inputs", "scene320x240.png"), input_png)
    if args.half in ("peer", "both"):
        if not os.access(args.peer, os.X_OK):
            sys.exit(f"{args.peer}: no librashader-cli (build it with tools/librashader_cli_patch.py)")
        render_half(args, presets, "peer", input_png)
    if args.half in ("softgpu", "both"):
        if not os.access(args.softgpu, os.X_OK):
            sys.exit(f"{args.softgpu}: build it first (cargo build --release)")
        render_half(args, presets, "softgpu", input_png)
    summarize(args, presets)


if __name__ == "__main__":
    main()
