#!/usr/bin/env python3
"""Regenerate the real-driver references of Slang-language shaders under reference-images/slang_lang/.

  python3 tools/make_slang_lang_refs.py [--softgpu PATH] [NAME ...]

Cases are listed in tests/data/slang_lang/cases.json (the test `tests/slang_lang.rs` draws the
same cases with `softgpu draw`). For each case this asks the real Slang compiler, through
`softgpu compile --emit slang-glsl`, for the GLSL of the vertex and the fragment entry point, and
renders them with Mesa's **softpipe** OpenGL driver (moderngl on EGL, GALLIUM_DRIVER=softpipe),
writing reference-images/slang_lang/NAME.png and NAME.command.txt (the two commands).

Slang writes Vulkan GLSL; the few Vulkan-only spellings are rewritten for OpenGL, each with the
same meaning: separate `texture2D` + `sampler` become one `sampler2D` (GL keeps the sampler state
in the texture unit), `gl_VertexIndex - gl_BaseVertex` becomes `gl_VertexID` (draws start at 0),
descriptor set S binding B becomes binding 8S+B, the push-constant block a uniform buffer at
binding 15 (the cases push only vec4s, laid out alike in std430 and std140),
`#version 460` runs through Mesa's version override (softpipe reports GL 3.3 but compiles the
features used); a texture sampled through a comparison sampler becomes a `sampler2DShadow`
whose texture is a depth texture of the PNG's red channel (cases with `compare`). Cases with
`"convention": "webgpu"` (D3D's clip space, which the Slang repository's render tests use) have
their rows read back reversed. Uniform buffers are filled from Slang's own reflection (`--emit reflection`,
`slang_reflection`: each field's std140 offset), at the binding Slang gave each block.

The picture is read back without flipping rows: the vertex shader's clip space is Vulkan's (as
softgpu's `--convention vulkan` draws it), so NDC y = -1 lands in GL's bottom row, which is read
first, and gl_FragCoord.y and dFdy count from that row as Vulkan's do downwards: row 0 of the PNG
is Vulkan's framebuffer row 0. Only the fill rule's tie-break (a pixel centre exactly on an
edge) follows GL's row order: cases whose triangles carry different flat values keep their
shared edges off pixel centres (skewed_quad.txt). Needs: apt libgl1-mesa-dri libegl-mesa0 libegl1; pip moderngl
numpy pillow; the Slang library (pip install --no-deps slangpy==0.43.1).
"""
import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, 'tests', 'data', 'slang_lang')
REFS = os.path.join(ROOT, 'reference-images', 'slang_lang')


def softgpu_output(softgpu, args):
    r = subprocess.run([softgpu, *args], capture_output=True, text=True)
    if r.returncode:
        sys.exit(f'softgpu {" ".join(args)}: {r.stderr}')
    return r.stdout


def to_gl(glsl):
    """Rewrites the Vulkan-only spellings of Slang's GLSL for OpenGL (see the module doc)."""
    glsl = re.sub(r'#version \d+', '#version 460', glsl)
    glsl = re.sub(r'#extension GL_ARB_shader_draw_parameters : require\n', '', glsl)
    # texelFetch on a texture2D needs this extension; on the sampler2D it becomes, it does not.
    glsl = re.sub(r'#extension GL_EXT_samplerless_texture_functions : require\n', '', glsl)
    glsl = glsl.replace('gl_VertexIndex - gl_BaseVertex', 'gl_VertexID')
    glsl = glsl.replace('gl_InstanceIndex - gl_BaseInstance', 'gl_InstanceID')
    # A texture sampled through a comparison sampler becomes a sampler2DShadow (GL keeps the
    # comparison in the texture unit, as it keeps the filter).
    for shadow in set(re.findall(r'sampler2DShadow\((\w+),', glsl)):
        glsl = glsl.replace(f'uniform texture2D {shadow};', f'uniform sampler2DShadow {shadow};')
    glsl = re.sub(r'uniform texture2D (\w+);', r'uniform sampler2D \1;', glsl)
    glsl = re.sub(r'(layout\(binding = \d+\)\s*)?uniform sampler(Shadow)? (\w+);', '', glsl)
    glsl = re.sub(r'sampler2D(Shadow)?\((\w+),\s*\w+\)', r'\2', glsl)
    glsl = re.sub(r'layout\(binding = (\d+), set = (\d+)\)',
                  lambda m: f'layout(binding = {int(m[2]) * SET_STRIDE + int(m[1])})', glsl)
    # Push constants become a uniform buffer; the cases' push constants are vec4s, laid out
    # alike in std430 and std140.
    glsl = re.sub(r'layout\(push_constant\)\s*layout\(std430\) uniform',
                  f'layout(binding = {PUSH_CONSTANT_BINDING}) layout(std140) uniform', glsl)
    return glsl


def read_vertices(path):
    """softgpu's vertex file: values four at a time into IN[0], IN[1], …, completed from (0,0,0,1)."""
    rows = []
    for line in open(path):
        line = line.split('#', 1)[0].split()
        if not line:
            continue
        values = [float(v) for v in line]
        groups = []
        for i in range(0, len(values), 4):
            g = values[i:i + 4]
            g += [0.0, 0.0, 0.0, 1.0][len(g):]
            groups.append(g)
        rows.append(groups)
    return rows


def scalar_format(scalar_type):
    return {'float32': 'f', 'int32': 'i', 'uint32': 'I', 'bool': 'I'}[scalar_type]


def type_scalars(ty):
    """(struct format character, component count) of a scalar or vector type."""
    if ty['kind'] == 'scalar':
        return scalar_format(ty['scalarType']), 1
    if ty['kind'] == 'vector':
        return scalar_format(ty['elementType']['scalarType']), ty['elementCount']
    if ty['kind'] == 'matrix':
        # Set column by column (memory order of a column-major std140 mat4: 16 floats).
        if ty['rowCount'] != 4:
            raise SystemExit('matrix uniforms: only 4-row matrices are set here')
        return scalar_format(ty['elementType']['scalarType']), ty['rowCount'] * ty['columnCount']
    raise SystemExit(f'uniform of type {ty["kind"]}: only scalars and vectors are set here')


# softgpu's `--compare` names as GL comparison functions (moderngl's spelling).
COMPARE_FUNCS = {'never': '0', 'less': '<', 'equal': '==', 'lequal': '<=', 'greater': '>',
                 'notequal': '!=', 'gequal': '>=', 'always': '1'}

PUSH_CONSTANT_BINDING = 15
SET_STRIDE = 8


def uniform_blocks(reflection):
    """{block name: (GL binding, {field: (offset, type)})} from Slang's reflection JSON: global
    uniforms (`globalParams`), constant buffers, parameter blocks and the entry points' uniform
    parameters (push constants)."""
    blocks = {}
    globals_ = {}

    def fields_of(ty):
        return {f['name']: (f['binding']['offset'], f['type'])
                for f in ty.get('fields', []) if f.get('binding', {}).get('kind') == 'uniform'}

    for p in reflection.get('parameters', []):
        b, ty = p.get('binding', {}), p['type']
        if b.get('kind') == 'uniform':
            globals_[p['name']] = (b['offset'], ty)
        elif ty['kind'] == 'constantBuffer':
            blocks[p['name']] = (b['index'], fields_of(ty['elementType']))
        elif ty['kind'] == 'parameterBlock':
            space = b['index'] if b.get('kind') in ('subElementRegisterSpace', 'registerSpace') else 0
            slot = next((x['index'] for x in ty['containerVarLayout'].get('bindings', [])
                         if x['kind'] == 'descriptorTableSlot'), 0)
            blocks[p['name']] = (space * SET_STRIDE + slot, fields_of(ty['elementType']))
    if globals_:
        blocks['globalParams'] = (0, globals_)
    push = {}
    for e in reflection.get('entryPoints', []):
        for p in e.get('parameters', []):
            if p.get('binding', {}).get('kind') == 'uniform':
                push[p['name']] = (p['binding']['offset'], p['type'])
    if push:
        blocks['entryPointParams'] = (PUSH_CONSTANT_BINDING, push)
    return blocks


def render(case, softgpu):
    import moderngl
    import numpy as np
    from PIL import Image
    import struct
    shader = os.path.join(DATA, case['shader'])
    stages = {}
    reflection = None
    for stage, entry in (('vertex', case.get('vs_entry')), ('fragment', case.get('fs_entry'))):
        args = ['compile', shader, '--stage', stage, '--emit', 'slang-glsl']
        if entry:
            args += ['--entry', entry]
        stages[stage] = to_gl(softgpu_output(softgpu, args))
        r = json.loads(softgpu_output(softgpu, [a if a != 'slang-glsl' else 'reflection' for a in args]))
        if reflection is None:
            reflection = r['slang_reflection']
        else:
            reflection['entryPoints'] = reflection.get('entryPoints', []) + \
                r['slang_reflection'].get('entryPoints', [])
    ctx = moderngl.create_standalone_context(backend='egl')
    prog = ctx.program(vertex_shader=stages['vertex'], fragment_shader=stages['fragment'])
    rows = read_vertices(os.path.join(DATA, case['vertices']))
    groups = max(len(r) for r in rows)
    data = np.array([sum((r + [[0.0, 0.0, 0.0, 1.0]] * (groups - len(r))), []) for r in rows], dtype='f4')
    content = []
    for name in prog:
        member = prog[name]
        if isinstance(member, moderngl.Attribute):
            # Location L reads IN[L]: the L-th group of four values of each vertex line.
            n, loc = member.dimension, member.location
            column = np.ascontiguousarray(data[:, 4 * loc:4 * loc + n])
            content.append((ctx.buffer(column.tobytes()), f'{n}f', name))
    vao = ctx.vertex_array(prog, content)
    blocks = uniform_blocks(reflection)
    buffers = {name: bytearray(4096) for name in blocks}
    for setting in case.get('uniforms', []):
        name, values = setting.split('=', 1)
        parts = name.split('.')
        if len(parts) == 2 and parts[0] in blocks:
            block, field = parts
        else:
            block = next((b for b, (_, f) in blocks.items() if parts[-1] in f), None)
            field = parts[-1]
        if block is None or field not in blocks[block][1]:
            sys.exit(f'{case["name"]}: no uniform {name}')
        offset, ty = blocks[block][1][field]
        fmt, count = type_scalars(ty)
        vals = [float(v) if fmt == 'f' else int(v) for v in values.split(',')]
        assert len(vals) == count, setting
        struct.pack_into('<' + fmt * count, buffers[block], offset, *vals)
    keep = []
    for name, (binding, _) in blocks.items():
        ubo = ctx.buffer(bytes(buffers[name]))
        ubo.bind_to_uniform_block(binding)
        keep.append(ubo)
    f = moderngl.LINEAR if case.get('filter', 'linear') == 'linear' else moderngl.NEAREST
    for binding in case.get('textures', []):
        unit, png = binding.split('=', 1)
        img = np.asarray(Image.open(os.path.join(DATA, png)).convert('RGBA'))
        if case.get('compare'):
            # A depth texture of the red channel (as softgpu reads the PNG: byte / 255) that
            # compares as the case says.
            depth = (img[:, :, 0].astype('f4') / np.float32(255)).astype('f4')
            t = ctx.depth_texture((img.shape[1], img.shape[0]), np.ascontiguousarray(depth).tobytes())
            t.compare_func = COMPARE_FUNCS[case['compare']]
        else:
            t = ctx.texture((img.shape[1], img.shape[0]), 4, np.ascontiguousarray(img).tobytes())
        t.filter = (f, f)
        t.repeat_x = t.repeat_y = case.get('wrap', 'repeat') == 'repeat'
        t.use(int(unit))
        keep.append(t)
    w, h = map(int, case.get('size', '64x64').split('x'))
    fbo = ctx.simple_framebuffer((w, h), components=4)
    fbo.use()
    fbo.clear(0, 0, 0, 0)
    if case.get('convention') == 'webgpu':
        # D3D's and Vulkan's provoking vertex (flat varyings) is the first, GL's the last.
        ctx.provoking_vertex = moderngl.FIRST_VERTEX_CONVENTION
    vao.render()
    ctx.finish()
    pixels = np.frombuffer(fbo.read(components=4), np.uint8).reshape(h, w, 4)
    if case.get('convention') == 'webgpu':
        # NDC y up with row 0 at the top (softgpu's webgpu convention, D3D's): GL's first row
        # read is NDC y = -1, so the rows are reversed.
        pixels = np.ascontiguousarray(pixels[::-1])
    return Image.fromarray(pixels, 'RGBA')


def draw_command(case):
    args = ['softgpu', 'draw', '--vs', case['shader'], '--fs', case['shader'], '--vertices', case['vertices']]
    if case.get('vs_entry'):
        args += ['--vs-entry', case['vs_entry']]
    if case.get('fs_entry'):
        args += ['--fs-entry', case['fs_entry']]
    for u in case.get('uniforms', []):
        args += ['--uniform', u]
    for t in case.get('textures', []):
        args += ['--texture', t]
    if case.get('convention'):
        args += ['--convention', case['convention']]
    if case.get('compare'):
        args += ['--compare', case['compare']]
    args += ['--filter', case.get('filter', 'linear'), '--wrap', case.get('wrap', 'repeat'),
             '--size', case.get('size', '64x64'), '--out', case['name'] + '.png']
    return ' '.join(args)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--softgpu', default=os.path.join(ROOT, 'target', 'debug', 'softgpu'))
    ap.add_argument('--child', help=argparse.SUPPRESS)
    ap.add_argument('names', nargs='*')
    a = ap.parse_args()
    cases = json.load(open(os.path.join(DATA, 'cases.json')))
    if a.child:
        case = next(c for c in cases if c['name'] == a.child)
        render(case, a.softgpu).save(os.path.join(REFS, case['name'] + '.png'))
        return
    os.makedirs(REFS, exist_ok=True)
    for case in cases:
        if a.names and case['name'] not in a.names:
            continue
        env = dict(os.environ, GALLIUM_DRIVER=case.get('driver', 'softpipe'),
                   MESA_GL_VERSION_OVERRIDE='4.6', MESA_GLSL_VERSION_OVERRIDE='460')
        # Each case in its own process: a fresh GL context on the forced driver.
        r = subprocess.run([sys.executable, __file__, '--softgpu', a.softgpu, '--child', case['name']],
                           env=env, capture_output=True, text=True)
        if r.returncode:
            sys.exit(f'{case["name"]}: {r.stderr[-3000:]}')
        with open(os.path.join(REFS, case['name'] + '.command.txt'), 'w') as f:
            driver = case.get('driver', 'softpipe')
            f.write(f'reference: GALLIUM_DRIVER={driver} MESA_GL_VERSION_OVERRIDE=4.6 '
                    'MESA_GLSL_VERSION_OVERRIDE=460 python3 tools/make_slang_lang_refs.py '
                    f'{case["name"]}\n(Slang GLSL of both entry points on Mesa {driver})\n'
                    f'softgpu (in tests/data/slang_lang): {draw_command(case)}\n')
        print(case['name'])


if __name__ == '__main__':
    main()
