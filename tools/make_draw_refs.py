#!/usr/bin/env python3
"""Regenerate the real-driver golden references under reference-images/draw/.

  python3 tools/make_draw_refs.py [NAME ...] [--mesa-run PATH] [--src DIR] [--out DIR]

(`--src benches/shaders/src --out benches/shaders` makes the speed-peer shaders' dumps.)

For every GLSL 330 fragment shader tools/draw_shaders/NAME.frag (or only the NAMEs given) this
  1. runs `mesa_run.py NAME.frag reference-images/draw/NAME --driver softpipe --size 64x64
     [--filter nearest]` (a `// filter: nearest` line in the shader selects nearest filtering;
     the default random 16x16 texture is written as tex0.png),
  2. rewrites consts.txt so that it holds exactly what Mesa's state tracker puts in CONST[0]:
     the active rows of the uniform array k[], followed by the state constants Mesa appended
     (only STATE_FB_WPOS_Y_TRANSFORM occurs in these shaders; see reference-images/draw/README.md),
  3. copies the shader source next to the outputs and writes command.txt (the exact command line
     and the Mesa version string).
Needs Mesa 22.3 (softpipe) and python3 with moderngl, numpy and pillow, like mesa_run.py itself.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHADERS = os.path.join(ROOT, 'tools', 'draw_shaders')
DEFAULT_OUT = os.path.join(ROOT, 'reference-images', 'draw')
DEFAULT_MESA_RUN = '/work/shared/peers/mesa_run.py'
SIZE = (64, 64)

# Rows of the uniform array k[] as mesa_run.py uploads them (mesa_run.py's K).
K = [[1.0, 0.5, 0.25, 1.0], [3.0, 7.0, 0.125, -2.0],
     [0.30000001192092896, 0.6000000238418579, 0.8999999761581421, 0.10000000149011612],
     [16.0, 4.0, 2.0, 0.5]]

# Asks the driver itself how many rows of k[] are active (the linker trims unused tail
# elements, and Mesa places its state constants right after the active rows).
PROBE = r'''
import sys, moderngl
ctx = moderngl.create_standalone_context(backend='egl')
VS = """#version 330
in vec4 pos; in vec2 tc; out vec2 uv;
void main(){ uv = tc; gl_Position = pos; }"""
prog = ctx.program(vertex_shader=VS, fragment_shader=open(sys.argv[1]).read())
n = prog['k'].array_length if 'k' in prog else 0
print(n)
print(ctx.info['GL_RENDERER'] + ' | ' + ctx.info['GL_VERSION'])
'''


def _f32(x):
    return float(np.float32(x))


def _indirect_arrays_pal():
    # `pal` is only ever read with a dynamic index and holds compile-time constants, so Mesa's
    # nir_lower_const_arrays_to_uniforms turns it into a uniform placed after k[]: one vec4
    # slot per vec3 element, values folded in float32, the unused w left 0.
    tab = [np.float32(v) for v in (0.11, 0.93, 0.42, 0.27, 0.66, 0.05)]
    rows = []
    for i in range(4):
        fi = np.float32(i)
        rows.append([_f32(fi * np.float32(0.25)), _f32(np.float32(1.0) - fi * np.float32(0.2)),
                     _f32(tab[i + 1]), 0.0])
    return rows


# Constant arrays that Mesa moves into CONST[0] after k[] (see README.md), per shader.
CONST_ARRAYS = {'indirect_arrays': _indirect_arrays_pal}


def probe(frag):
    env = dict(os.environ, GALLIUM_DRIVER='softpipe')
    r = subprocess.run([sys.executable, '-c', PROBE, frag], env=env, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f'probe of {frag} failed:\n{r.stderr[-2000:]}')
    lines = r.stdout.strip().splitlines()
    return int(lines[0]), lines[1]


def const_range(tgsi):
    """Highest CONST[0][i] index the fragment shader declares, or -1."""
    last = -1
    for m in re.finditer(r'^DCL CONST\[0\]\[(\d+)(?:\.\.(\d+))?\]', tgsi, re.M):
        last = max(last, int(m.group(2) or m.group(1)))
    return last


def state_uses(tgsi, idx):
    """Components of CONST[0][idx] read by the instructions (swizzle letters)."""
    comps = set()
    for m in re.finditer(r'CONST\[0\]\[' + str(idx) + r'\]\.([xyzw]{4})', tgsi):
        comps.update(m.group(1))
    return comps


def make(name, mesa_run, src_dir, out_root):
    src = os.path.join(src_dir, name + '.frag')
    text = open(src).read()
    filt = 'nearest' if re.search(r'^//\s*filter:\s*nearest\b', text, re.M) else 'linear'
    out = os.path.join(out_root, name)
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    frag = os.path.join(out, name + '.frag')
    shutil.copyfile(src, frag)
    rel_out = os.path.relpath(out, ROOT)
    args = [os.path.relpath(frag, ROOT), rel_out,
            '--driver', 'softpipe', '--size', f'{SIZE[0]}x{SIZE[1]}']
    if filt == 'nearest':
        args += ['--filter', 'nearest']
    r = subprocess.run([sys.executable, mesa_run, *args], cwd=ROOT, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f'mesa_run failed for {name}:\n{r.stdout}{r.stderr}')

    n_k, version = probe(frag)
    fs = open(os.path.join(out, 'fs.tgsi')).read()
    last = const_range(fs)
    rows = [list(K[i]) for i in range(n_k)]
    notes = []
    if name in CONST_ARRAYS:
        extra = CONST_ARRAYS[name]()
        notes.append(f'CONST[0][{len(rows)}..{len(rows) + len(extra) - 1}] = constant array '
                     'moved out of the shader')
        rows += extra
    base = len(rows)  # first row Mesa's state constants may use
    if last >= base:
        if last != base:
            sys.exit(f'{name}: CONST[0] has {last + 1 - base} rows after k[]; only one state row '
                     '(the window-position y transform) is understood')
        comps = state_uses(fs, base)
        uses_pos = re.search(r'^DCL IN\[\d+\], POSITION', fs, re.M) is not None
        uses_ddy = re.search(r'\bDDY', fs) is not None
        if not (uses_pos or uses_ddy):
            sys.exit(f'{name}: CONST[0][{base}] is neither gl_FragCoord\'s nor dFdy\'s state')
        # Mesa's STATE_FB_WPOS_Y_TRANSFORM for a user FBO (FlipY false):
        # (1, 0, -1, height); gl_FragCoord.y = POSITION.y * z + w, dFdy = DDY(v * x).
        rows.append([1.0, 0.0, -1.0, float(SIZE[1])])
        notes.append(f'CONST[0][{base}] = STATE_FB_WPOS_Y_TRANSFORM (1, 0, -1, {SIZE[1]}), '
                     f'components read: {"".join(sorted(comps))}')
    if last < 0:
        rows = [list(r) for r in K]  # CONST[0] is not read; keep k[] so every file has rows
    else:
        rows = rows[:last + 1]
    with open(os.path.join(out, 'consts.txt'), 'w') as f:
        for row in rows:
            f.write(' '.join(repr(float(v)) for v in row) + '\n')
    cmd = ' '.join(['python3', mesa_run, *args])
    with open(os.path.join(out, 'command.txt'), 'w') as f:
        f.write(f'# regenerate with: python3 tools/make_draw_refs.py {name}\n')
        f.write(f'# (runs from the repository root, then rewrites consts.txt as below)\n')
        f.write(cmd + '\n')
        f.write(f'# driver: {version}\n')
        f.write(f'# active rows of k[]: {n_k}\n')
        for n in notes:
            f.write('# ' + n + '\n')
    print(f'{name}: filter={filt} k rows={n_k} consts.txt rows={len(rows)}'
          + (' ' + '; '.join(notes) if notes else ''))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('names', nargs='*')
    ap.add_argument('--mesa-run', default=DEFAULT_MESA_RUN)
    ap.add_argument('--src', default=SHADERS)
    ap.add_argument('--out', default=DEFAULT_OUT)
    a = ap.parse_args()
    names = a.names or sorted(f[:-5] for f in os.listdir(a.src) if f.endswith('.frag'))
    for name in names:
        make(name, a.mesa_run, os.path.abspath(a.src), os.path.abspath(a.out))


if __name__ == '__main__':
    main()
