#!/usr/bin/env python3
"""Regenerate the NVIDIA cgc + Mesa references of the Cg frontend under tests/data/cg/refs/.

  python3 tools/make_cg_refs.py [NAME ...]

For every tests/data/cg/refs/NAME/shader.cg (a RetroArch-style Cg shader of our own) this
  1. compiles both stages with NVIDIA's Cg compiler 3.1 (`cgc -profile glslv -entry main_vertex`
     and `-profile glslf -entry main_fragment`, `-DPARAMETER_UNIFORM` as RetroArch passes it;
     Debian non-free `nvidia-cg-toolkit`),
  2. ports cgc's GLSL 1.10 to GLSL 330 by renaming its fixed-function interface only
     (gl_Vertex / gl_MultiTexCoord0 → attributes, gl_TexCoord[n] / gl_FrontColor → varyings,
     gl_Color → opaque white as RetroArch feeds it, gl_FragColor → an output, texture2D → texture),
  3. sets every uniform by the Cg name cgc reports in its `//var` lines: modelViewProj (RetroArch's
     orthographic [0,1]² → clip matrix), IN.video_size = IN.texture_size = 16x16,
     IN.output_size = 64x64, IN.frame_count = 3, IN.frame_direction = 1, the `#pragma parameter`
     defaults, the TEXUNIT0 / first sampler and ORIG.texture = tex0.png (16x16 random RGBA),
     any other sampler = lut.png (8x8 random RGBA); linear filtering, clamp to edge,
  4. renders a [0,1]² quad (texcoord = position, RetroArch's layout) at 64x64 on **Mesa softpipe**
     with moderngl and writes out.png with row 0 = the top (NDC y = +1),
and writes the cgc outputs (cgc.vert, cgc.frag), the GLSL that softpipe ran (stage.vert,
stage.frag), tex0.png, lut.png and command.txt. tests/frontend_cg_refs.rs renders the same shader
through softgpu's Cg frontend with the same inputs and compares.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFS = os.path.join(ROOT, 'tests', 'data', 'cg', 'refs')
os.environ['GALLIUM_DRIVER'] = 'softpipe'
os.environ.setdefault('XDG_RUNTIME_DIR', '/tmp')

import moderngl  # noqa: E402
import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

SIZE = 64
# The Cg matrix (rows): x' = 2x - 1, y' = 2y - 1.
MVP_ROWS = [[2.0, 0.0, 0.0, -1.0], [0.0, 2.0, 0.0, -1.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
VALUES = {
    'IN.video_size': (16.0, 16.0), 'IN.texture_size': (16.0, 16.0),
    'IN.output_size': (64.0, 64.0), 'IN.frame_count': 3.0, 'IN.frame_direction': 1.0,
    'ORIG.video_size': (16.0, 16.0), 'ORIG.texture_size': (16.0, 16.0),
}
QUAD = [
    (0, 0, 0, 1, 0, 0), (1, 0, 0, 1, 1, 0), (0, 1, 0, 1, 0, 1),
    (1, 0, 0, 1, 1, 0), (1, 1, 0, 1, 1, 1), (0, 1, 0, 1, 0, 1),
]


def cgc(shader_dir, profile, entry, file='shader.cg'):
    out = subprocess.run(['cgc', '-quiet', '-profile', profile, '-entry', entry,
                          '-DPARAMETER_UNIFORM', file],
                         cwd=shader_dir, check=True, capture_output=True, text=True)
    return out.stdout


def port(text, stage):
    """cgc's GLSL 1.10 → GLSL 330 (interface names only)."""
    body = text.replace('#version 110', '')
    # GLSL 330 has the lod/projective/gradient lookups cgc asks extensions for.
    body = re.sub(r'^#extension .*$', '', body, flags=re.M)
    for old, new in [('texture2DLod', 'textureLod'), ('texture2DProjLod', 'textureProjLod'),
                     ('texture2DProj', 'textureProj'), ('texture2DGrad', 'textureGrad'),
                     ('texture1DLod', 'textureLod'), ('texture2DRect', 'texture')]:
        body = re.sub(r'\b' + old + r'(ARB)?\(', new + '(', body)
    if stage == 'vert':
        # cgc declares a uniform struct differently per stage; GLSL would have to link them.
        for name in re.findall(r'^uniform\s+\w+\s+(\w+)', body, re.M):
            body = re.sub(r'\b' + name + r'\b', name + '_vs', body)
    # cgc keeps Cg struct names; GLSL 330 reserves some of them.
    body = re.sub(r'\b(input|output|filter|sample)\b', r'cg_\1', body)
    decls = ['#version 330']
    used = sorted(set(int(n) for n in re.findall(r'gl_TexCoord\[(\d+)\]', body)))
    for n in used:
        body = body.replace(f'gl_TexCoord[{n}]', f'cg_Varying{n}')
        decls.append(f'{"out" if stage == "vert" else "in"} vec4 cg_Varying{n};')
    if stage == 'vert':
        body = body.replace('gl_Vertex', 'cg_Position').replace('gl_MultiTexCoord0', 'cg_TexCoord')
        body = body.replace('gl_MultiTexCoord1', 'cg_TexCoord').replace('gl_Color', 'vec4(1.0)')
        decls += ['in vec4 cg_Position;', 'in vec4 cg_TexCoord;']
        if 'gl_FrontColor' in body:
            body = body.replace('gl_FrontColor', 'cg_Color')
            decls.append('out vec4 cg_Color;')
    else:
        body = body.replace('gl_FragColor', 'cg_FragColor').replace('texture2D(', 'texture(')
        if 'gl_Color' in body:
            body = body.replace('gl_Color', 'cg_Color')
            decls.append('in vec4 cg_Color;')
        decls.append('out vec4 cg_FragColor;')
    return '\n'.join(decls) + '\n' + body


def variables(text, used_only=True):
    """Cg name → (type, GLSL name, semantic) from cgc's `//var` lines (used ones only)."""
    out = {}
    for line in text.splitlines():
        if not line.startswith('//var '):
            continue
        fields = [f.strip() for f in line[len('//var '):].split(':')]
        ty_name = fields[0].split()
        if (used_only and fields[-1] != '1') or len(ty_name) != 2:
            continue
        glsl = fields[2].split()[0] if fields[2] else ''
        out[ty_name[1]] = (ty_name[0], glsl, fields[1])
    return out


def parameters(source):
    return {m.group(1): float(m.group(2)) for m in
            re.finditer(r'^\s*#pragma\s+parameter\s+(\w+)\s+"[^"]*"\s+(\S+)', source, re.M)}


def pixels(seed, size):
    return np.random.default_rng(seed).integers(0, 256, (size, size, 4), dtype=np.uint8)


def source_sampler(text):
    """The sampler RetroArch binds the pass input to, as softgpu picks it."""
    samplers = [(n, sem) for n, (ty, _, sem) in variables(text, used_only=False).items()
                if ty.startswith('sampler') and '.' not in n]
    for n, sem in samplers:
        if sem == 'TEXUNIT0':
            return n
    return samplers[0][0] if samplers else None


def set_uniforms(prog, text, params, textures, suffix=''):
    unit_of = {}
    source = source_sampler(text)
    defaults = {}
    for m in re.finditer(r'^//default (\w+)(?:\[(\d+)\])? = (.*)$', text, re.M):
        rows = defaults.setdefault(m.group(1), [])
        rows.append([float(v) for v in m.group(3).split()])
    for cg_name, (ty, glsl, semantic) in variables(text).items():
        if not glsl or cg_name.startswith('$') or '$vin' in semantic or '$vout' in semantic:
            continue
        glsl = re.sub(r'^(\w+)', lambda m: m.group(1) + suffix, glsl)
        if ty.startswith('sampler'):
            # The pass input (TEXUNIT0 or the first sampler) and RetroArch's structs' textures
            # read tex0.png; other samplers are LUTs and read lut.png.
            unit = 0 if (semantic == 'TEXUNIT0' or '.' in cg_name or cg_name == source) else 1
            unit_of[cg_name] = unit
            prog[glsl].value = unit
        elif cg_name == 'modelViewProj':
            base = glsl.split('[')[0]
            prog[base].write(np.array(MVP_ROWS, np.float32).tobytes())
        elif cg_name in VALUES:
            prog[glsl].value = VALUES[cg_name]
        elif cg_name in params:
            prog[glsl].value = params[cg_name]
        elif cg_name in defaults:
            # A global with an initializer: the Cg runtime loads cgc's `//default` values.
            values = [v for row in defaults[cg_name] for v in row]
            base = glsl.split('[')[0]
            if len(values) == 1:
                prog[base].value = values[0]
            elif '[' in glsl or len(values) > 4:
                prog[base].write(np.array(values, np.float32).tobytes())
            else:
                prog[base].value = tuple(values)
        elif CORPUS and cg_name.endswith(('.video_size', '.texture_size', '.output_size')):
            # Every pass/history/alias texture is the 16x16 input in corpus mode.
            prog[glsl].value = (16.0, 16.0)
        elif CORPUS:
            # Anything RetroArch would not set reads zero (what softgpu's runtime leaves).
            pass
        else:
            sys.exit(f'no value for uniform {cg_name} ({glsl})')
    for unit, img in textures.items():
        tex = prog.ctx.texture((img.shape[1], img.shape[0]), 4, img.tobytes())
        tex.filter = (moderngl.LINEAR, moderngl.LINEAR)
        tex.repeat_x = tex.repeat_y = False
        tex.use(unit)
    return unit_of


def make(ctx, name):
    d = os.path.join(REFS, name)
    source = open(os.path.join(d, 'shader.cg')).read()
    vert, frag = cgc(d, 'glslv', 'main_vertex'), cgc(d, 'glslf', 'main_fragment')
    open(os.path.join(d, 'cgc.vert'), 'w').write(vert)
    open(os.path.join(d, 'cgc.frag'), 'w').write(frag)
    vs, fs = port(vert, 'vert'), port(frag, 'frag')
    open(os.path.join(d, 'stage.vert'), 'w').write(vs)
    open(os.path.join(d, 'stage.frag'), 'w').write(fs)
    params = parameters(source)
    render(ctx, d, vert, frag, params)
    write_command(ctx, d, name, params)
    print(f'{name}: wrote out.png')


def render(ctx, d, vert, frag, params):
    vs, fs = port(vert, 'vert'), port(frag, 'frag')
    prog = ctx.program(vertex_shader=vs, fragment_shader=fs)
    tex0, lut = pixels(7, 16), pixels(11, 8)
    Image.fromarray(tex0, 'RGBA').save(os.path.join(d, 'tex0.png'))
    Image.fromarray(lut, 'RGBA').save(os.path.join(d, 'lut.png'))
    set_uniforms(prog, vert, params, {}, '_vs')
    set_uniforms(prog, frag, params, {0: tex0, 1: lut})
    attrs = [('cg_Position', '4f'), ('cg_TexCoord', '2f')]
    data = np.array(QUAD, np.float32)
    names = [n for n, _ in attrs if n in prog]
    layout = ' '.join(f if n in names else ('16x' if f == '4f' else '8x') for n, f in attrs)
    vao = ctx.vertex_array(prog, [(ctx.buffer(data.tobytes()), layout, *names)])
    fbo = ctx.simple_framebuffer((SIZE, SIZE), components=4)
    fbo.use()
    fbo.clear(0, 0, 0, 0)
    vao.render()
    ctx.finish()
    img = np.frombuffer(fbo.read(components=4), np.uint8).reshape(SIZE, SIZE, 4)[::-1]
    Image.fromarray(img, 'RGBA').save(os.path.join(d, 'out.png'))


def write_command(ctx, d, name, params):
    with open(os.path.join(d, 'command.txt'), 'w') as f:
        f.write(f'python3 tools/make_cg_refs.py {name}\n')
        f.write('cgc -quiet -profile glslv -entry main_vertex -DPARAMETER_UNIFORM shader.cg > cgc.vert\n')
        f.write('cgc -quiet -profile glslf -entry main_fragment -DPARAMETER_UNIFORM shader.cg > cgc.frag\n')
        version = subprocess.run(['cgc', '-v'], capture_output=True, text=True)
        f.write(f'cgc: {(version.stdout + version.stderr).strip().splitlines()[0]}\n')
        f.write(f'driver: {ctx.info["GL_RENDERER"]} | {ctx.info["GL_VERSION"]}\n')
        f.write(f'parameters: {" ".join(f"{k}={v}" for k, v in params.items())}\n')
        f.write('size: 64x64; filter: linear; wrap: clamp to edge; tex0.png = TEXUNIT0 and ORIG, lut.png = other samplers\n')


CORPUS = False


def corpus(src_root, out_root):
    """Renders every .cg under src_root the same way into out_root/<path>/ (not committed)."""
    global CORPUS
    CORPUS = True
    ctx = moderngl.create_standalone_context(backend='egl')
    counts = {'rendered': 0, 'cgc failed': 0, 'tex_coord': 0, 'mesa failed': 0}
    for dirpath, _, files in os.walk(src_root):
        for f in sorted(files):
            if not f.endswith('.cg'):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), src_root)
            out = os.path.join(out_root, rel)
            os.makedirs(out, exist_ok=True)
            try:
                vert = cgc(dirpath, 'glslv', 'main_vertex', f)
                frag = cgc(dirpath, 'glslf', 'main_fragment', f)
            except subprocess.CalledProcessError:
                counts['cgc failed'] += 1
                continue
            if re.search(r'//var float2 \w+\.(lut_)?tex_coord\b.*: 1$', vert, re.M):
                counts['tex_coord'] += 1  # a per-vertex attribute cgc turns into a uniform
                continue
            try:
                render(ctx, out, vert, frag, parameters(open(os.path.join(dirpath, f), errors='replace').read()))
                counts['rendered'] += 1
            except Exception as e:  # noqa: BLE001 (a report of what Mesa rejected)
                counts['mesa failed'] += 1
                open(os.path.join(out, 'error.txt'), 'w').write(str(e))
    print(counts)


def main():
    if sys.argv[1:2] == ['--corpus']:
        corpus(sys.argv[2], sys.argv[3])
        return
    names = sys.argv[1:] or sorted(n for n in os.listdir(REFS)
                                   if os.path.exists(os.path.join(REFS, n, 'shader.cg')))
    ctx = moderngl.create_standalone_context(backend='egl')
    for n in names:
        make(ctx, n)


if __name__ == '__main__':
    main()
