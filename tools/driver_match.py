#!/usr/bin/env python3
"""How closely softgpu's driver profiles match a driver's pictures.

  python3 tools/driver_match.py draw    REFDIR [--softgpu BIN]   # reference-images/draw shaders
  python3 tools/driver_match.py wgsl    REFDIR [--softgpu BIN]   # reference-images/wgsl shaders
  python3 tools/driver_match.py chain   REFDIR [--softgpu BIN]   # tests/chain/cases.toml
  python3 tools/driver_match.py presets REFDIR LIST [--softgpu BIN] [--other NAME=DIR ...]

REFDIR holds one driver's pictures: `NAME/out.png` or `NAME.png` (draw, wgsl), `CASE.png` (chain), and for `presets` one PNG per preset of LIST (a file of preset
paths), named as `softgpu render` runs of a corpus name them (the path after /tmp/ with `/`
turned into `_`, then `.png`: tools/driver_probes.py's GPU run writes them so). Every picture is
rendered by softgpu under each `--driver` (softpipe, llvmpipe, nvidia) and compared: the table
gives, per profile, how many pictures are identical, how many are within 1/255, and how many
"match" (at least 99% of pixels within 4/255, the corpus bar), and the per-picture numbers go
to stderr. `--other NAME=DIR` adds another renderer's pictures of the same presets (lavapipe's,
say) as a row. Renders are kept under $TMPDIR/softgpu-driver-match/.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import tomllib

import numpy as np
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DRIVERS = ('softpipe', 'llvmpipe', 'nvidia')
WORK = os.path.join(tempfile.gettempdir(), 'softgpu-driver-match')


def load(path):
    return np.asarray(Image.open(path).convert('RGBA')).astype(np.int16)


def compare(a_path, b_path):
    """(identical, within 1/255, share of pixels within 4/255) or None when either is missing
    or the sizes differ."""
    if not (os.path.exists(a_path) and os.path.exists(b_path)):
        return None
    a, b = load(a_path), load(b_path)
    if a.shape != b.shape:
        return None
    d = np.abs(a - b).max(axis=-1)
    return bool((d == 0).all()), bool((d <= 1).all()), float((d <= 4).mean())


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        print(f'failed: {" ".join(cmd)}\n{r.stderr[-500:]}', file=sys.stderr)
    return r.returncode == 0


def draw_jobs(refdir, softgpu, kind):
    """(name, reference png, softgpu argument list without --driver/--out) per shader."""
    jobs = []
    if kind == 'draw':
        base = os.path.join(ROOT, 'reference-images', 'draw')
        for name in sorted(os.listdir(base)):
            d = os.path.join(base, name)
            if not os.path.isfile(os.path.join(d, 'fs.tgsi')):
                continue
            ref = os.path.join(refdir, name, 'out.png')
            if not os.path.exists(ref):
                ref = os.path.join(refdir, name + '.png')
            command = open(os.path.join(d, 'command.txt')).read()
            filt = 'nearest' if '--filter nearest' in command else 'linear'
            args = [softgpu, 'draw', '--vs', f'{d}/vs.tgsi', '--fs', f'{d}/fs.tgsi',
                    '--vertices', f'{d}/vertices.txt', '--consts', f'{d}/consts.txt',
                    '--filter', filt, '--size', '64x64', '--no-shader-cache']
            for unit in re.findall(r'DCL SAMP\[(\d+)\]', open(f'{d}/fs.tgsi').read()):
                args += ['--texture', f'{unit}={d}/tex0.png']
            jobs.append((name, ref, args))
    else:
        base = os.path.join(ROOT, 'reference-images', 'wgsl')
        for name in sorted(os.listdir(base)):
            d = os.path.join(base, name)
            command = os.path.join(d, 'command.txt')
            if not os.path.isfile(command):
                continue
            line = next(l for l in open(command) if l.startswith('softgpu: '))
            words = line.split(': ', 1)[1].split()[1:]  # without the program name
            args = [softgpu]
            for w in words:
                if w in ('--out', 'OUT.png'):
                    continue
                unit, eq, file = w.rpartition('=')
                if eq and os.path.exists(os.path.join(d, file)):
                    w = f'{unit}={d}/{file}'
                elif os.path.exists(os.path.join(d, w)):
                    w = os.path.join(d, w)
                args.append(w)
            ref = os.path.join(refdir, name, 'out.png')
            if not os.path.exists(ref):
                ref = os.path.join(refdir, name + '.png')
            jobs.append((name, ref, args + ['--no-shader-cache']))
    return jobs


def chain_jobs(refdir, softgpu):
    with open(os.path.join(ROOT, 'tests', 'chain', 'cases.toml'), 'rb') as f:
        cases = tomllib.load(f)['case']
    jobs = []
    chain = os.path.join(ROOT, 'tests', 'chain')
    for c in cases:
        args = [softgpu, 'render', '--preset', os.path.join(chain, c['preset']),
                '--input', os.path.join(chain, c['input']), '--frames', str(c.get('frames', 1)),
                '--quiet', '--no-shader-cache']
        if 'size' in c:
            args += ['--size', c['size']]
        if 'params' in c:
            args += ['--param', c['params']]
        if 'frame_direction' in c:
            args += ['--frame-direction', str(c['frame_direction'])]
        if 'rotation' in c:
            args += ['--rotation', str(c['rotation'])]
        jobs.append((c['name'], os.path.join(refdir, c['name'] + '.png'), args))
    return jobs


def preset_jobs(refdir, listfile, softgpu):
    jobs = []
    for line in open(listfile):
        path = line.strip()
        if not path:
            continue
        name = path.removeprefix('/tmp/').replace('/', '_')
        ref = os.path.join(refdir, name + '.png')
        if not os.path.exists(ref):
            continue
        args = [softgpu, 'render', '--preset', path, '--input',
                os.path.join(ROOT, 'examples', 'crt', 'frame.png'), '--size', '640x480',
                '--frames', '3', '--quiet']
        jobs.append((name, ref, args))
    return jobs


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('kind', choices=['draw', 'wgsl', 'chain', 'presets'])
    ap.add_argument('refdir')
    ap.add_argument('list', nargs='?')
    ap.add_argument('--softgpu', default=os.path.join(ROOT, 'target', 'release', 'softgpu'))
    ap.add_argument('--other', action='append', default=[], metavar='NAME=DIR')
    a = ap.parse_args()
    if a.kind == 'presets' and not a.list:
        sys.exit('presets: give the file of preset paths')
    jobs = {'draw': lambda: draw_jobs(a.refdir, a.softgpu, 'draw'),
            'wgsl': lambda: draw_jobs(a.refdir, a.softgpu, 'wgsl'),
            'chain': lambda: chain_jobs(a.refdir, a.softgpu),
            'presets': lambda: preset_jobs(a.refdir, a.list, a.softgpu)}[a.kind]()
    rows = {}
    for driver in DRIVERS:
        out = os.path.join(WORK, a.kind, driver)
        os.makedirs(out, exist_ok=True)
        results = []
        for name, ref, args in jobs:
            png = os.path.join(out, name + '.png')
            if not os.path.exists(png):
                run(args + ['--driver', driver, '--out' if a.kind in ('draw', 'wgsl')
                            else '--output', png])
            r = compare(ref, png)
            print(f'{a.kind} {driver} {name}: {r}', file=sys.stderr)
            results.append(r)
        rows[f'softgpu --driver {driver}'] = results
    for other in a.other:
        name, directory = other.split('=', 1)
        rows[name] = [compare(ref, os.path.join(directory, os.path.basename(ref)))
                      for _, ref, _ in jobs]
    print(f'| {a.kind} ({len(jobs)}) vs {os.path.basename(os.path.normpath(a.refdir))} '
          '| identical | within 1/255 | ≥ 99% within 4/255 | rendered |')
    print('| --- | --- | --- | --- | --- |')
    for label, results in rows.items():
        ok = [r for r in results if r is not None]
        print(f'| {label} | {sum(r[0] for r in ok)} | {sum(r[1] for r in ok)} | '
              f'{sum(r[2] >= 0.99 for r in ok)} | {len(ok)} |')


if __name__ == '__main__':
    main()
