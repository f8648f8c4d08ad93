#!/usr/bin/env python3
"""Find golden-reference pixels that sit on a threshold (a branch, discard or rounding edge).

  python3 tools/perturb_check.py [NAME ...] [--eps 4e-6]

Re-renders every reference shader on softpipe with its `uv` input nudged by a few float ulps in
each direction (uv * (1 +- eps) +- eps/2) and counts the pixels whose 8-bit output then moves by
more than 1/255 against reference-images/draw/NAME/out.png. Such pixels depend on the last bits of
interpolation or filtering, so softgpu can legitimately land on the other side; a shader with
many of them should be redesigned (or, with a stated reason, given a budget.txt).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFS = os.path.join(ROOT, 'reference-images', 'draw')
MESA_RUN = '/work/shared/peers/mesa_run.py'


def perturbed(src, scale, bias):
    # the vertex stage's output must keep its name, so every other use of uv is redirected
    src = re.sub(r'\buv\b', 'uv_p', src).replace('in vec2 uv_p;', 'in vec2 uv;', 1)
    define = f'#define uv_p (uv * {scale!r} + {bias!r})\n'
    # the macro must follow #version and any #extension lines
    lines = src.splitlines(keepends=True)
    at = max(i for i, l in enumerate(lines) if l.startswith('#')) + 1
    return ''.join(lines[:at] + [define] + lines[at:])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('names', nargs='*')
    ap.add_argument('--eps', type=float, default=4e-6)
    a = ap.parse_args()
    names = a.names or sorted(d for d in os.listdir(REFS) if os.path.isdir(os.path.join(REFS, d)))
    for name in names:
        d = os.path.join(REFS, name)
        src = open(os.path.join(d, name + '.frag')).read()
        ref = np.asarray(Image.open(os.path.join(d, 'out.png')).convert('RGBA')).astype(int)
        filt = ['--filter', 'nearest'] if re.search(r'^//\s*filter:\s*nearest', src, re.M) else []
        worst = []
        for scale, bias in ((1 + a.eps, a.eps / 2), (1 - a.eps, -a.eps / 2)):
            with tempfile.TemporaryDirectory() as tmp:
                frag = os.path.join(tmp, 'p.frag')
                open(frag, 'w').write(perturbed(src, scale, bias))
                r = subprocess.run([sys.executable, MESA_RUN, frag, tmp, '--driver', 'softpipe',
                                    '--size', '64x64', *filt], capture_output=True, text=True)
                if r.returncode:
                    sys.exit(f'{name}: {r.stderr[-2000:]}')
                out = np.asarray(Image.open(os.path.join(tmp, 'out.png')).convert('RGBA')).astype(int)
            diff = np.abs(out - ref).max(axis=2)
            ys, xs = np.nonzero(diff > 1)
            worst.append((int(diff.max()), len(ys), list(zip(xs.tolist(), ys.tolist()))[:6]))
        print(f'{name:24s} ' + '  '.join(f'max {m:3d} >1: {c:4d} {p}' for m, c, p in worst))


if __name__ == '__main__':
    main()
