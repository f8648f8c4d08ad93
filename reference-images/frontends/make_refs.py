#!/usr/bin/env python3
"""Regenerate the real-driver references under reference-images/frontends/ (Mesa softpipe).

  python3 reference-images/frontends/make_refs.py [NAME ...]

Each CASES entry names a directory holding shader.slang (Vulkan GLSL 450 with `#pragma stage`,
no #include). This script
  1. splits the stages as RetroArch does (text before the first `#pragma stage` is shared),
  2. compiles each stage with glslangValidator -V and translates it back to GLSL 330 with
     spirv-cross (`--flip-vert-y` on the vertex stage: Vulkan clip space, y = -1 at the top,
     lands on the same rows under OpenGL) — push-constant blocks become a plain uniform struct,
     std140 blocks stay std140 (mat2 columns 16 bytes apart),
  3. renders 64x64 with moderngl on **Mesa softpipe**: the UBO at binding 0 gets the rows of
     the case's `consts` (raw std140 bytes), push-constant members are set by name from the
     case's `uniforms`, a 16x16 random texture (seed 7) is bound to `Source`,
and writes stage.vert/stage.frag (what softpipe ran), vertices.txt, consts.txt, tex0.png,
out.png and command.txt (these commands, the driver string and the `softgpu draw` line, which
sets the same values with --consts and --uniform; tests/draw_frontend_refs.rs runs it).
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
os.environ['GALLIUM_DRIVER'] = 'softpipe'
os.environ.setdefault('XDG_RUNTIME_DIR', '/tmp')

import moderngl  # noqa: E402
import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

SIZE = 64
MVP = [[2.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [-1.0, -1.0, 0.0, 1.0]]
SOURCE_SIZE = [16.0, 16.0, 1.0 / 16.0, 1.0 / 16.0]
QUAD = [
    (0, 0, 0, 1, 0, 0), (1, 0, 0, 1, 1, 0), (0, 1, 0, 1, 0, 1),
    (1, 0, 0, 1, 1, 0), (1, 1, 0, 1, 1, 1), (0, 1, 0, 1, 0, 1),
]

CASES = {
    # Push constants in both stages next to a UBO (buffer numbers differ per stage in softgpu).
    'push_constants': {
        'consts': MVP + [SOURCE_SIZE],
        'uniforms': [('params.Tint', [0.9, 0.3, 0.1, 1.0]), ('params.Shift', [0.125, -0.0625]),
                     ('params.Mix', [0.6]), ('params.Bands', [5]), ('params.Center', [0.4, 0.55])],
        'filter': 'linear',
    },
    # std140 mat2 (in a struct) and mat3x2 in the UBO: columns padded to 16 bytes.
    'std140_mat2': {
        # MVP, SourceSize, warp.ROT (2 padded columns), warp.PIVOT, SKEW (3 padded columns), BIAS
        'consts': MVP + [SOURCE_SIZE,
                         [0.8, 0.6, 0.0, 0.0], [-0.6, 0.8, 0.0, 0.0],
                         [0.5, 0.5, 0.0, 0.0],
                         [1.0, 0.25, 0.0, 0.0], [-0.5, 1.0, 0.0, 0.0], [0.1, 0.2, 0.0, 0.0],
                         [0.75, 0.9, 1.1, 0.0]],
        'uniforms': [],
        'filter': 'linear',
    },
}


def split_stages(source):
    lines = source.splitlines()
    if not lines or not lines[0].startswith('#version 450'):
        sys.exit('a slang shader starts with #version 450')
    shared, stages, current = [], {'vertex': [], 'fragment': []}, None
    for line in lines[1:]:
        words = line.split()
        if words[:2] == ['#pragma', 'stage']:
            current = words[2]
            continue
        if words[:2] in (['#pragma', 'name'], ['#pragma', 'format'], ['#pragma', 'parameter']):
            continue
        (shared if current is None else stages[current]).append(line)
    head = '#version 450\n' + '\n'.join(shared) + '\n'
    return head + '\n'.join(stages['vertex']) + '\n', head + '\n'.join(stages['fragment']) + '\n'


def to_glsl330(text, stage, tmp):
    src = os.path.join(tmp, 'stage.' + stage)
    spv = src + '.spv'
    open(src, 'w').write(text)
    subprocess.run(['glslangValidator', '-V', src, '-o', spv], check=True, capture_output=True)
    flip = ['--flip-vert-y'] if stage == 'vert' else []
    out = subprocess.run(['spirv-cross', '--version', '330', '--no-es', *flip, spv],
                         check=True, capture_output=True, text=True)
    return out.stdout


def fmt(x):
    return repr(float(np.float32(x))) if isinstance(x, float) else str(x)


def make(ctx, name):
    case = CASES[name]
    outdir = os.path.join(HERE, name)
    source = open(os.path.join(outdir, 'shader.slang')).read()
    vert, frag = split_stages(source)
    binding = re.search(r'binding\s*=\s*(\d+)\s*\)\s*uniform\s+sampler2D\s+Source', frag)
    unit = int(binding.group(1))
    with tempfile.TemporaryDirectory() as tmp:
        vs330 = to_glsl330(vert, 'vert', tmp)
        fs330 = to_glsl330(frag, 'frag', tmp)
    open(os.path.join(outdir, 'stage.vert'), 'w').write(vs330)
    open(os.path.join(outdir, 'stage.frag'), 'w').write(fs330)

    prog = ctx.program(vertex_shader=vs330, fragment_shader=fs330)
    ubo = ctx.buffer(np.array(case['consts'], np.float32).tobytes())
    ubo.bind_to_uniform_block(0)
    prog['UBO'].binding = 0
    for uname, values in case['uniforms']:
        prog[uname].value = values[0] if len(values) == 1 else tuple(values)
    vao = ctx.vertex_array(prog, [(ctx.buffer(np.array(QUAD, np.float32).tobytes()), '4f 2f',
                                   'Position', 'TexCoord')])
    pixels = np.random.default_rng(7).integers(0, 256, (16, 16, 4), dtype=np.uint8)
    tex = ctx.texture((16, 16), 4, pixels.tobytes())
    f = moderngl.LINEAR if case['filter'] == 'linear' else moderngl.NEAREST
    tex.filter = (f, f)
    tex.repeat_x = tex.repeat_y = True
    tex.use(0)
    prog['Source'].value = 0
    fbo = ctx.simple_framebuffer((SIZE, SIZE), components=4)
    fbo.use()
    fbo.clear(0, 0, 0, 0)
    vao.render()
    ctx.finish()
    img = np.frombuffer(fbo.read(components=4), np.uint8).reshape(SIZE, SIZE, 4)[::-1]
    Image.fromarray(np.ascontiguousarray(img), 'RGBA').save(os.path.join(outdir, 'out.png'))
    Image.fromarray(pixels, 'RGBA').save(os.path.join(outdir, 'tex0.png'))
    with open(os.path.join(outdir, 'vertices.txt'), 'w') as fh:
        fh.write('# Position x y z w, TexCoord u v (IN[0], IN[1]); every 3 lines are one triangle\n')
        for v in QUAD:
            fh.write(' '.join(repr(float(x)) for x in v) + '\n')
    with open(os.path.join(outdir, 'consts.txt'), 'w') as fh:
        fh.write('# the std140 UBO at binding 0, 16 bytes a line\n')
        for r in case['consts']:
            fh.write(' '.join(fmt(float(x)) for x in r) + '\n')
    uniforms = ''.join(f' --uniform {n}={",".join(fmt(v) for v in vals)}'
                       for n, vals in case['uniforms'])
    with open(os.path.join(outdir, 'command.txt'), 'w') as fh:
        fh.write(f'python3 reference-images/frontends/make_refs.py {name}\n')
        fh.write('glslangValidator -V stage.{vert,frag}; spirv-cross --version 330 --no-es '
                 '[--flip-vert-y for the vertex stage] → stage.vert, stage.frag\n')
        fh.write(f'driver: {ctx.info["GL_RENDERER"]} | {ctx.info["GL_VERSION"]}\n')
        fh.write(f'filter: {case["filter"]}\n')
        fh.write('softgpu: softgpu draw --vs shader.slang --fs shader.slang --vertices vertices.txt '
                 f'--consts consts.txt{uniforms} --texture {unit}=tex0.png --filter {case["filter"]} '
                 '--wrap repeat --size 64x64 --convention vulkan --out OUT.png\n')
    print(f'{name}: unit {unit}')


def main():
    names = sys.argv[1:] or sorted(CASES)
    ctx = moderngl.create_standalone_context(backend='egl')
    if 'softpipe' not in ctx.info['GL_RENDERER']:
        sys.exit('expected Mesa softpipe, got ' + ctx.info['GL_RENDERER'])
    for name in names:
        make(ctx, name)


if __name__ == '__main__':
    main()
