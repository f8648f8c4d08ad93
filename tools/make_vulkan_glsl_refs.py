#!/usr/bin/env python3
"""Regenerate the real-driver RetroArch slang references under reference-images/vulkan_glsl/.

  python3 tools/make_vulkan_glsl_refs.py [NAME ...]

For every reference-images/vulkan_glsl/NAME/shader.slang (Vulkan GLSL `#version 450` with
`#pragma stage vertex|fragment`; no #include) this
  1. splits the stages the way RetroArch does: the text before the first `#pragma stage` is
     shared, `#pragma name|format|parameter` lines are removed (parameters are collected: their
     defaults are the values of the UBO members of the same name),
  2. compiles each stage to SPIR-V with glslangValidator (Debian `glslang-tools`) and back to
     GLSL 330 with spirv-cross (Debian `spirv-cross`; `--flip-vert-y` on the vertex stage so the
     Vulkan clip space, y = -1 at the top, lands on the same rows under OpenGL),
  3. renders both stages at 64x64 with moderngl on **Mesa softpipe** and reads the picture back
     top row first (row 0 = Vulkan framebuffer row 0),
and writes vertices.txt, consts.txt, tex0.png (16x16, unit = the binding of `Source`), out.png,
command.txt (the commands, the driver string and the matching `softgpu draw` line) and the
intermediate stage.vert/stage.frag (GLSL 330 that softpipe ran).

Every shader uses one UBO at set 0 binding 0: `mat4 MVP; vec4 SourceSize; vec4 OutputSize;`
then the `#pragma parameter` floats in order (so CONST[0][0..3] = MVP columns, [4] SourceSize,
[5] OutputSize, [6] the parameters). Push constants are not used here (`softgpu draw` sets them with
`--uniform`/`--push-consts`; reference-images/frontends/push_constants covers them). Derivatives and gl_FragCoord are avoided: under OpenGL their y runs the other way.
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFS = os.path.join(ROOT, 'reference-images', 'vulkan_glsl')
os.environ['GALLIUM_DRIVER'] = 'softpipe'
os.environ.setdefault('XDG_RUNTIME_DIR', '/tmp')

import moderngl  # noqa: E402
import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

SIZE = 64
# RetroArch's MVP: an orthographic projection of [0,1]^2 onto clip space (column-major rows).
MVP = [[2.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [-1.0, -1.0, 0.0, 1.0]]
SOURCE_SIZE = [16.0, 16.0, 1.0 / 16.0, 1.0 / 16.0]
OUTPUT_SIZE = [64.0, 64.0, 1.0 / 64.0, 1.0 / 64.0]
# Position x y z w, TexCoord u v: a [0,1] quad, texcoord = position (RetroArch's layout).
QUAD = [
    (0, 0, 0, 1, 0, 0), (1, 0, 0, 1, 1, 0), (0, 1, 0, 1, 0, 1),
    (1, 0, 0, 1, 1, 0), (1, 1, 0, 1, 1, 1), (0, 1, 0, 1, 0, 1),
]


def split_stages(source):
    """(vertex GLSL, fragment GLSL, [(name, default)]) of a slang file."""
    lines = source.splitlines()
    if not lines or not lines[0].startswith('#version 450'):
        sys.exit('a slang shader starts with #version 450')
    shared, stages, params, current = [], {'vertex': [], 'fragment': []}, [], None
    for line in lines[1:]:
        words = line.split()
        if words[:2] == ['#pragma', 'stage']:
            current = words[2]
            continue
        if words[:2] == ['#pragma', 'parameter']:
            m = re.match(r'#pragma\s+parameter\s+(\w+)\s+"[^"]*"\s+(\S+)', line.strip())
            params.append((m.group(1), float(m.group(2))))
            continue
        if words[:2] in (['#pragma', 'name'], ['#pragma', 'format']):
            continue
        (shared if current is None else stages[current]).append(line)
    head = '#version 450\n' + '\n'.join(shared) + '\n'
    return head + '\n'.join(stages['vertex']) + '\n', head + '\n'.join(stages['fragment']) + '\n', params


def to_glsl330(text, stage, tmp):
    src = os.path.join(tmp, 'stage.' + stage)
    spv = src + '.spv'
    open(src, 'w').write(text)
    subprocess.run(['glslangValidator', '-V', src, '-o', spv], check=True, capture_output=True)
    flip = ['--flip-vert-y'] if stage == 'vert' else []
    out = subprocess.run(['spirv-cross', '--version', '330', '--no-es', *flip, spv],
                         check=True, capture_output=True, text=True)
    return out.stdout


def texture_pixels():
    return np.random.default_rng(7).integers(0, 256, (16, 16, 4), dtype=np.uint8)


def make(ctx, name):
    outdir = os.path.join(REFS, name)
    source = open(os.path.join(outdir, 'shader.slang')).read()
    filter_mode = 'nearest' if re.search(r'//\s*filter:\s*nearest', source) else 'linear'
    vert, frag, params = split_stages(source)
    binding = re.search(r'binding\s*=\s*(\d+)\s*\)\s*uniform\s+sampler2D\s+Source', frag)
    unit = int(binding.group(1))
    with tempfile.TemporaryDirectory() as tmp:
        vs330 = to_glsl330(vert, 'vert', tmp)
        fs330 = to_glsl330(frag, 'frag', tmp)
    open(os.path.join(outdir, 'stage.vert'), 'w').write(vs330)
    open(os.path.join(outdir, 'stage.frag'), 'w').write(fs330)

    row6 = [p for _, p in params][:4]
    consts = MVP + [SOURCE_SIZE, OUTPUT_SIZE, row6 + [0.0] * (4 - len(row6))]
    prog = ctx.program(vertex_shader=vs330, fragment_shader=fs330)
    ubo = ctx.buffer(np.array(consts, np.float32).tobytes())
    ubo.bind_to_uniform_block(0)
    prog['UBO'].binding = 0
    vao = ctx.vertex_array(prog, [(ctx.buffer(np.array(QUAD, np.float32).tobytes()), '4f 2f',
                                   'Position', 'TexCoord')])
    pixels = texture_pixels()
    tex = ctx.texture((16, 16), 4, pixels.tobytes())
    f = moderngl.LINEAR if filter_mode == 'linear' else moderngl.NEAREST
    tex.filter = (f, f)
    tex.repeat_x = tex.repeat_y = True
    tex.use(0)
    prog['Source'].value = 0
    fbo = ctx.simple_framebuffer((SIZE, SIZE), components=4)
    fbo.use()
    fbo.clear(0, 0, 0, 0)
    vao.render()
    ctx.finish()
    # GL reads bottom row first; with the flipped y that row is Vulkan's last row.
    img = np.frombuffer(fbo.read(components=4), np.uint8).reshape(SIZE, SIZE, 4)[::-1]
    Image.fromarray(np.ascontiguousarray(img), 'RGBA').save(os.path.join(outdir, 'out.png'))
    Image.fromarray(pixels, 'RGBA').save(os.path.join(outdir, 'tex0.png'))
    with open(os.path.join(outdir, 'vertices.txt'), 'w') as fh:
        fh.write('# Position x y z w, TexCoord u v (IN[0], IN[1]); every 3 lines are one triangle\n')
        for v in QUAD:
            fh.write(' '.join(repr(float(x)) for x in v) + '\n')
    with open(os.path.join(outdir, 'consts.txt'), 'w') as fh:
        for r in consts:
            fh.write(' '.join(repr(float(np.float32(x))) for x in r) + '\n')
    with open(os.path.join(outdir, 'command.txt'), 'w') as fh:
        fh.write(f'python3 tools/make_vulkan_glsl_refs.py {name}\n')
        fh.write('glslangValidator -V stage.{vert,frag}; spirv-cross --version 330 --no-es '
                 '[--flip-vert-y for the vertex stage] → stage.vert, stage.frag\n')
        fh.write(f'driver: {ctx.info["GL_RENDERER"]} | {ctx.info["GL_VERSION"]}\n')
        fh.write(f'parameters: {" ".join(f"{n}={v}" for n, v in params)} (CONST[0][6])\n')
        fh.write(f'filter: {filter_mode}\n')
        fh.write('wrap: repeat\n')
        fh.write(f'texture units: {unit}\n')
        fh.write('softgpu: softgpu draw --vs shader.slang --fs shader.slang --vertices vertices.txt '
                 f'--consts consts.txt --texture {unit}=tex0.png --filter {filter_mode} --wrap repeat '
                 '--size 64x64 --convention vulkan --out OUT.png\n')
    print(f'{name}: {filter_mode}, unit {unit}, params {params}')


def main():
    names = sys.argv[1:] or sorted(d for d in os.listdir(REFS)
                                   if os.path.isfile(os.path.join(REFS, d, 'shader.slang')))
    ctx = moderngl.create_standalone_context(backend='egl')
    if 'softpipe' not in ctx.info['GL_RENDERER']:
        sys.exit('expected Mesa softpipe, got ' + ctx.info['GL_RENDERER'])
    for name in names:
        make(ctx, name)


if __name__ == '__main__':
    main()
