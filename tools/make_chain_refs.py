#!/usr/bin/env python3
"""Renders the filter-chain reference images: every case of tests/chain/cases.toml with the
reference peer, librashader-cli's Vulkan runtime on Mesa lavapipe, into reference-images/chain/
<case>.png, and writes the exact commands to reference-images/chain/command.txt.

    python3 tools/librashader_cli_patch.py      # builds /tmp/librashader-cli-patched
    python3 tools/make_chain_refs.py [--only NAME]
    python3 tools/make_chain_refs.py --gpu OUTDIR     # the machine's GPU instead of lavapipe:
                                                      # OUTDIR/<case>.png and command.txt

Frame mapping: `softgpu render --frames N` renders frames 0..N-1 and writes frame N-1;
`librashader-cli render --frame F` renders frames 0..F and writes frame F, so F = N - 1.
"""
import argparse
import os
import shlex
import subprocess
import sys
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHAIN = os.path.join(ROOT, "tests", "chain")
OUT = os.path.join(ROOT, "reference-images", "chain")
LAVAPIPE_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"


def load_cases():
    with open(os.path.join(CHAIN, "cases.toml"), "rb") as f:
        return tomllib.load(f)["case"]


def peer_command(cli, case, out_png):
    """The librashader-cli argument list for a case. Paths are absolute: librashader only defines
    the $PRESET_DIR$ wildcard when the preset path has a parent directory."""
    cmd = [cli, "render", "-r", "vulkan",
           "-p", os.path.join(CHAIN, case["preset"]),
           "-i", os.path.join(CHAIN, case["input"]),
           "-o", out_png,
           "-f", str(int(case.get("frames", 1)) - 1)]
    if "size" in case:
        cmd += ["-d", case["size"]]
    if "params" in case:
        cmd += ["--params", case["params"]]
    if "frame_direction" in case:
        cmd += ["--frame-direction", str(case["frame_direction"])]
    if "rotation" in case:
        cmd += ["--rotation", str(case["rotation"])]
    return cmd


def shown(cmd):
    """A command as written to command.txt: repository paths relative to the repository root."""
    return " ".join(shlex.quote(a) for a in cmd).replace(ROOT + "/", "$REPO/")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default=os.environ.get("LIBRASHADER_CLI",
                                                    "/tmp/librashader-cli-patched"))
    ap.add_argument("--only", help="render just this case (command.txt is still rewritten whole)")
    ap.add_argument("--gpu", metavar="OUTDIR",
                    help="render with the Vulkan loader's default (GPU) driver into OUTDIR")
    args = ap.parse_args()
    out_dir = args.gpu or OUT
    if not os.access(args.cli, os.X_OK):
        sys.exit(f"{args.cli}: not found; build it with tools/librashader_cli_patch.py")

    env = dict(os.environ, RUST_BACKTRACE="0")
    if not args.gpu:
        env["VK_ICD_FILENAMES"] = LAVAPIPE_ICD
    version = subprocess.run([args.cli, "--version"], capture_output=True, text=True,
                             env=env).stdout.strip()
    os.makedirs(out_dir, exist_ok=True)
    driver = "the machine's GPU (the Vulkan loader's default device)" if args.gpu else \
        f"Mesa lavapipe:\n#   VK_ICD_FILENAMES={LAVAPIPE_ICD}" 
    lines = [
        "# Reference images of tests/chain/cases.toml, rendered by tools/make_chain_refs.py.",
        f"# Peer: {version} (crates.io, --no-default-features --features vulkan,wgpu) with the",
        "# harness fixes of tools/librashader_cli_patch.py (honour --dimensions, accept a directory",
        f"# of frames, clear history and feedback before frame 0); Vulkan runtime on {driver}",
        "# $REPO is the repository root. --frame F renders frames 0..F and writes frame F, which is",
        "# `softgpu render --frames F+1`.",
        "",
    ]
    failed = []
    for case in load_cases():
        out_png = os.path.join(args.gpu, case["name"] + ".png") if args.gpu else \
            os.path.join(ROOT, case["expected"])
        cmd = peer_command(args.cli, case, out_png)
        lines.append(f"# {case['name']}: {case.get('covers', '')}")
        lines.append("librashader-cli" + shown(cmd)[len(shlex.quote(args.cli)):])
        if args.only and case["name"] != args.only:
            continue
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            failed.append(case["name"])
            print(f"{case['name']}: FAILED\n{proc.stderr}", file=sys.stderr)
        else:
            print(f"{case['name']}: {os.path.relpath(out_png, ROOT)}")
    with open(os.path.join(out_dir, "command.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
