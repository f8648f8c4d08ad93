#!/usr/bin/env python3
"""Small GL probes that isolate the operations where drivers choose the bits.

  python3 tools/driver_probes.py run OUTDIR [--driver softpipe|llvmpipe|native] [--only NAME ...]
  python3 tools/driver_probes.py run-vulkan OUTDIR [--lavapipe]
  python3 tools/driver_probes.py export OUTDIR NAME ...
  python3 tools/driver_probes.py runs FILE.bin > FILE.runs
  python3 tools/driver_probes.py list

Each probe draws one full-screen quad with a GLSL 330 fragment shader through moderngl on EGL
(`softpipe` and `llvmpipe` select Mesa's drivers through GALLIUM_DRIVER; `native` takes whatever
EGL gives, a GPU's driver) and reads the target back. Most probes compute one 32-bit result per
pixel and write its bits as RGBA8 (so every driver's readback is exact); the target-format probes
write into the format under test (sRGB, float16, UNORM8) and read that back. Pixel index
p = x + W*y counts from GL's bottom-left pixel.

`run-vulkan` draws the store and filtering probes that decide a preset's bytes through Vulkan
(wgpu; the machine's GPU, or Mesa lavapipe with --lavapipe) into OUTDIR/vk_NAME.bin, to show
the GL results hold under Vulkan.

`export` writes what `softgpu draw` needs to run the named probes: the TGSI Mesa softpipe runs
(OUTDIR/NAME/vs.tgsi, fs.tgsi), the texture as tex0.png (RGBA8 textures only) and
vertices.txt; tests/driver_profiles.rs draws them under each `--driver` and compares with the
drivers' readbacks.

`runs` writes a UNORM8 readback whose R, G and B agree (the dense store probes: 4 MB each) as
the run-length lines `FIRST_PIXEL VALUE`, losslessly.

Writes OUTDIR/NAME.bin (the raw readback, row 0 = GL's bottom row) for every probe and
OUTDIR/info.json (the GL renderer and version, each probe's size, format and description).
docs/fidelity.md ("Driver profiles") says what each probe showed on NVIDIA, llvmpipe and
softpipe; tools/driver_probe_report.py turns two or more OUTDIRs into that comparison.
Needs python3 with moderngl, numpy and pillow; for Mesa, libgl1-mesa-dri and libegl-mesa0.
"""
import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np

VS = '''#version 330
in vec2 pos;
void main() { gl_Position = vec4(pos, 0.0, 1.0); }
'''

# A result's 32 bits as four UNORM8 bytes, low byte in red: exact on every driver.
BITS = '''
out vec4 frag;
int pixel_index() { return int(gl_FragCoord.x) + W * int(gl_FragCoord.y); }
void put_bits(uint u) {
    frag = vec4(float(u & 255u), float((u >> 8) & 255u), float((u >> 16) & 255u),
                float(u >> 24)) / 255.0;
}
void put(float r) { put_bits(floatBitsToUint(r)); }
'''


def header(width, extra=''):
    return f'#version 330\n{extra}\nconst int W = {width};\n' + BITS


def filter_probe(tex_format, tex_width, k, linear):
    """Bilinear weights (or nearest's choice) across the edge between texel k and k+1 of a
    1-row texture holding 0 up to texel k and 1 after it (R channel): for pixel p the
    coordinate is texel k + 0.5 + p/4096, so the result is the weight of texel k+1."""
    body = f'''
uniform sampler2D tex;
void main() {{
    int p = pixel_index();
    float t = float(p) / 4096.0;
    float u = (float({k}) + 0.5 + t) / float({tex_width});
    put(texture(tex, vec2(u, 0.5)).r);
}}'''
    return dict(size=(128, 33), fs=header(128) + body,
                texture=dict(kind='step', format=tex_format, width=tex_width, k=k,
                             filter='linear' if linear else 'nearest'))


def bilinear_2d_probe(tex_format):
    """Both weights at once: a 2x2 texture that is 1 only in texel (1,1), sampled at
    (0.5 + i/64, 0.5 + j/64) texels for i, j in 0..64: the result is wx * wy as the sampler
    forms it (pixel p = i + 65 j)."""
    body = '''
uniform sampler2D tex;
void main() {
    int p = pixel_index();
    vec2 t = vec2(float(p % 65), float(p / 65)) / 64.0;
    put(texture(tex, (vec2(0.5) + t) / 2.0).r);
}'''
    return dict(size=(65, 65), fs=header(65) + body,
                texture=dict(kind='corner', format=tex_format, width=2, filter='linear'))


def bilinear_values_probe(tex_format='rgba8'):
    """RGBA8 texels 0..255 against 1..256 (texel i of row 0 holds i, of row 1 holds i+1 mod
    256) blended at weights p/16 of a texel in y: how the filtered value of UNORM8 data is
    formed and rounded (texel i = p / 16, weight (p % 16) / 16)."""
    body = '''
uniform sampler2D tex;
void main() {
    int p = pixel_index();
    float i = float(p / 16), wy = float(p % 16) / 16.0;
    put(texture(tex, vec2((i + 0.5) / 256.0, (0.5 + wy) / 2.0)).r);
}'''
    return dict(size=(64, 64), fs=header(64) + body,
                texture=dict(kind='ramp2', format=tex_format, width=256, filter='linear'))


def nearest_index_probe(tex_width, k, step_log2):
    """Which texel `nearest` picks around the edge at texel k: texel i holds i (R32F); pixel p
    samples at texel k + (p - 2048) * 2^-step_log2."""
    body = f'''
uniform sampler2D tex;
void main() {{
    int p = pixel_index();
    float f = float(p - 2048) * exp2(-{float(step_log2)});
    float u = (float({k}) + f) / float({tex_width});
    put(texture(tex, vec2(u, 0.5)).r);
}}'''
    return dict(size=(64, 64), fs=header(64) + body,
                texture=dict(kind='index', format='r32f', width=tex_width, filter='nearest'))


def nearest_computed_probe(tex_width):
    """`nearest` at coordinates computed like a curvature warp (non-representable products),
    the kind of pass where GPUs and CPU drivers were seen to pick different texels."""
    body = f'''
uniform sampler2D tex;
void main() {{
    int p = pixel_index();
    vec2 uv = (gl_FragCoord.xy) / vec2(64.0, 64.0);
    vec2 cc = uv - 0.5;
    float dist = dot(cc, cc) * 0.25;
    vec2 warped = uv + cc * (1.0 + dist) * dist;
    put(texture(tex, vec2(warped.x, 0.5)).r + 4096.0 * texture(tex, vec2(warped.y, 0.5)).r);
}}'''
    return dict(size=(64, 64), fs=header(64) + body,
                texture=dict(kind='index', format='r32f', width=tex_width, filter='nearest'))


def derivative_probe(which):
    """dFdx/dFdy of a function that is not linear in x or y, so every lane rule differs."""
    ext = '#extension GL_ARB_derivative_control : require' if which in ('coarse', 'fine') else ''
    fn = {'default': ('dFdx', 'dFdy'), 'coarse': ('dFdxCoarse', 'dFdyCoarse'),
          'fine': ('dFdxFine', 'dFdyFine')}[which]
    body = f'''
void main() {{
    vec2 c = gl_FragCoord.xy;
    float f = c.x * c.x * 0.25 + c.y * c.y * c.y * 0.0625 + c.x * c.y * 0.5;
    float dx = {fn[0]}(f), dy = {fn[1]}(f);
    int p = pixel_index();
    // Even pixels of a row report dx, odd ones dy of the same quad position.
    put((int(gl_FragCoord.y) & 1) == 0 ? dx : dy);
}}'''
    return dict(size=(64, 64), fs=header(64, ext) + body)


def lod_probe():
    """The level of detail the sampler picks: a mip chain whose level L is filled with L/8
    (R channel, RGBA8), trilinear filtering, texture coordinates scaled per row so the LOD
    sweeps 0..4 in 4096 steps across the picture: the result is the blended level / 8."""
    body = '''
uniform sampler2D tex;
void main() {
    int p = pixel_index();
    float lod = float(p) / 1024.0;
    vec2 uv = gl_FragCoord.xy * exp2(lod) / 256.0;
    put(texture(tex, uv).r);
}'''
    return dict(size=(64, 64), fs=header(64) + body,
                texture=dict(kind='mips', format='rgba8', width=256, filter='trilinear'))


MATH_INPUTS = {
    'exp2': ('x', 'float(p - 2048) / 100.0 + 0.001 * float(p & 7)'),
    'log2': ('x', 'exp2(float(p - 2048) / 128.0) * (1.0 + 0.0001 * float(p & 15))'),
    'sin': ('x', 'float(p - 2048) / 40.0 + 0.0007 * float(p & 31)'),
    'cos': ('x', 'float(p - 2048) / 40.0 + 0.0007 * float(p & 31)'),
    'sqrt': ('x', 'exp2(float(p - 2048) / 128.0) * (1.0 + 0.0001 * float(p & 15))'),
    'inversesqrt': ('x', 'exp2(float(p - 2048) / 128.0) * (1.0 + 0.0001 * float(p & 15))'),
    'rcp': ('x', 'exp2(float(p - 2048) / 128.0) * (1.0 + 0.0001 * float(p & 15))'),
    'div': ('x', '1.0 + float(p) / 4096.0'),
    'pow': ('x', '0.001 + float(p) / 2048.0'),
    'exp': ('x', 'float(p - 2048) / 100.0 + 0.001 * float(p & 7)'),
    'log': ('x', 'exp2(float(p - 2048) / 128.0) * (1.0 + 0.0001 * float(p & 15))'),
    'fract': ('x', 'float(p - 2048) / 3.0'),
}

MATH_EXPR = {
    'exp2': 'exp2(x)', 'log2': 'log2(x)', 'sin': 'sin(x)', 'cos': 'cos(x)', 'sqrt': 'sqrt(x)',
    'inversesqrt': 'inversesqrt(x)', 'rcp': '1.0 / x', 'div': 'x / (3.0 + 0.001 * float(p & 63))',
    'pow': 'pow(x, 2.2 + 0.01 * float(p & 15))', 'exp': 'exp(x)', 'log': 'log(x)',
    'fract': 'fract(x)',
}


def math_probe(name):
    """One function over 4096 inputs; the inputs are computed in the shader from p, so each
    driver sees the same values only where that arithmetic is exact: the input's bits are
    written too (probe NAME_in)."""
    var, expr = MATH_INPUTS[name]
    body = f'''
uniform float one;
void main() {{
    int p = pixel_index();
    float {var} = ({expr}) * one;
    put(OUTPUT);
}}'''
    fs = header(64) + body
    return [(name, dict(size=(64, 64), fs=fs.replace('OUTPUT', MATH_EXPR[name]))),
            (name + '_in', dict(size=(64, 64), fs=fs.replace('OUTPUT', var)))]


def contraction_probe():
    """a*b+c where the rounded and the fused results differ: shows whether the compiler fuses."""
    body = '''
uniform float one;
void main() {
    int p = pixel_index();
    float a = (1.0 + float(p) * exp2(-12.0)) * one;
    float b = (1.0 - float(p) * exp2(-13.0) + exp2(-20.0)) * one;
    float c = -a;
    put(a * b + c);
}'''
    return dict(size=(64, 64), fs=header(64) + body)


def denormal_probe():
    """Products that land in the subnormal range, and a subnormal uniform passed through."""
    body = '''
uniform float one;
uniform float tiny;
void main() {
    int p = pixel_index();
    float a = exp2(-120.0) * one;
    float r = (p & 1) == 0 ? a * (float(p) * exp2(-12.0)) : tiny * float(p);
    put(r);
}'''
    return dict(size=(64, 64), fs=header(64) + body)


def interpolation_probe(width):
    """A varying running 0..1 across a quad `width` pixels wide (a filter pass's vTexCoord): the
    bits at each pixel centre, against the exact (x + 0.5) / width."""
    fs = f'''#version 330
in vec2 uv;
out vec4 frag;
void put_bits(uint u) {{
    frag = vec4(float(u & 255u), float((u >> 8) & 255u), float((u >> 16) & 255u),
                float(u >> 24)) / 255.0;
}}
void main() {{ put_bits(floatBitsToUint((int(gl_FragCoord.y) & 1) == 0 ? uv.x : uv.y)); }}'''
    vs = '''#version 330
in vec2 pos;
out vec2 uv;
void main() { uv = pos * 0.5 + 0.5; gl_Position = vec4(pos, 0.0, 1.0); }
'''
    return dict(size=(width, 64), fs=fs, vs=vs)


def target_probe(target):
    """Values written into an sRGB, float16 or UNORM8 target and read back in its own format."""
    if target == 'srgb8':
        value = 'float(p) / 4095.0'
    elif target == 'rgba16f':
        value = '1.0 + float(p) * exp2(-20.0) + (p >= 4000 ? 65504.0 : 0.0) + (p >= 4090 ? float(p - 4089) * 4.0 : 0.0)'
    else:
        value = '(floor(float(p) / 16.0) + 0.5 + (float(p & 15) - 7.5) * exp2(-12.0)) / 255.0'
    fs = f'''#version 330
const int W = 64;
uniform float one;
out vec4 frag;
void main() {{
    int p = int(gl_FragCoord.x) + W * int(gl_FragCoord.y);
    float v = ({value}) * one;
    frag = vec4(v, v, v, 1.0);
}}'''
    return dict(size=(64, 64), fs=fs, target=target)


def dense_target_probe(target):
    """Every value p * 2^-20 for p in 0..2^20 (exact in float32) written into an sRGB or UNORM8
    target: the conversion's every threshold to 2^-20."""
    fs = f'''#version 330
uniform float one;
out vec4 frag;
void main() {{
    int p = int(gl_FragCoord.x) + 1024 * int(gl_FragCoord.y);
    float v = float(p) * exp2(-20.0) * one;
    frag = vec4(v, v, v, 1.0);
}}'''
    return dict(size=(1024, 1024), fs=fs, target=target)


def srgb_decode_probe():
    """Every sRGB8 code sampled (nearest) and its decoded float's bits written."""
    body = '''
uniform sampler2D tex;
void main() {
    int p = pixel_index();
    put(texelFetch(tex, ivec2(p & 255, 0), 0).r);
}'''
    return dict(size=(64, 64), fs=header(64) + body,
                texture=dict(kind='codes', format='srgb8', width=256, filter='nearest'))


def probes():
    out = []
    for fmt in ('rgba8', 'rgba16f', 'rgba32f'):
        out.append((f'bilinear_{fmt}_w2', filter_probe(fmt, 2, 0, True)))
        out.append((f'bilinear_{fmt}_w4096', filter_probe(fmt, 4096, 3000, True)))
    out.append(('bilinear_rgba8_w320', filter_probe('rgba8', 320, 100, True)))
    for fmt in ('rgba8', 'rgba32f'):
        out.append((f'bilinear_2d_{fmt}', bilinear_2d_probe(fmt)))
    out.append(('bilinear_values_rgba8', bilinear_values_probe()))
    out.append(('bilinear_values_srgb8', bilinear_values_probe('srgb8')))
    out.append(('nearest_rgba8_w2', filter_probe('rgba8', 2, 0, False)))
    for w, k in ((2, 1), (320, 100), (4096, 3000)):
        out.append((f'nearest_index_w{w}_fine', nearest_index_probe(w, k, 20)))
        out.append((f'nearest_index_w{w}_coarse', nearest_index_probe(w, k, 12)))
    out.append(('nearest_computed_w320', nearest_computed_probe(320)))
    for which in ('default', 'coarse', 'fine'):
        out.append((f'derivative_{which}', derivative_probe(which)))
    out.append(('lod_trilinear', lod_probe()))
    for name in MATH_INPUTS:
        out.extend(math_probe(name))
    out.append(('contraction', contraction_probe()))
    out.append(('denormal', denormal_probe()))
    out.append(('interpolation_w640', interpolation_probe(640)))
    out.append(('interpolation_w320', interpolation_probe(320)))
    for target in ('srgb8', 'rgba16f', 'unorm8'):
        out.append((f'target_{target}', target_probe(target)))
    for target in ('srgb8', 'unorm8'):
        out.append((f'dense_{target}', dense_target_probe(target)))
    out.append(('srgb_decode', srgb_decode_probe()))
    return out


def make_texture(ctx, moderngl, spec):
    kind, fmt, width = spec['kind'], spec['format'], spec['width']
    if kind in ('step', 'corner'):
        # 0 and 1 only: the same texels in every format.
        row = texture_bytes(spec).astype(np.float32) / 255.0
    elif kind == 'index':
        row = np.zeros((1, width, 4), np.float32)
        row[0, :, 0] = np.arange(width, dtype=np.float32)
    elif kind == 'ramp2':
        data = texture_bytes(spec)
        srgb = dict(internal_format=0x8C43) if fmt == 'srgb8' else {}  # GL_SRGB8_ALPHA8
        return ctx.texture((width, 2), 4, data.tobytes(), **srgb)
    elif kind == 'codes':
        data = np.zeros((1, width, 4), np.uint8)
        data[0, :, 0] = np.arange(256)
        data[..., 3] = 255
        tex = ctx.texture((width, 1), 4, data.tobytes(), internal_format=0x8C43)  # GL_SRGB8_ALPHA8
        return tex
    elif kind == 'mips':
        tex = ctx.texture((width, width), 4, np.zeros((width, width, 4), np.uint8).tobytes())
        tex.build_mipmaps()
        level, size = 0, width
        while size >= 1:
            data = np.full((size, size, 4), 255, np.uint8)
            data[..., 0] = level * 255 // 8
            tex.write(data.tobytes(), level=level)
            level, size = level + 1, size // 2
        return tex
    size = (row.shape[1], row.shape[0])
    if fmt == 'rgba8':
        tex = ctx.texture(size, 4, np.round(row * 255).astype(np.uint8).tobytes())
    elif fmt == 'rgba16f':
        tex = ctx.texture(size, 4, row.astype(np.float16).tobytes(), dtype='f2')
    elif fmt == 'rgba32f':
        tex = ctx.texture(size, 4, row.tobytes(), dtype='f4')
    elif fmt == 'r32f':
        tex = ctx.texture(size, 1, np.ascontiguousarray(row[..., 0]).tobytes(), dtype='f4')
    else:
        raise ValueError(fmt)
    return tex


def run_child(outdir, only):
    import moderngl
    ctx = moderngl.create_standalone_context(backend='egl', require=330)
    info_path = os.path.join(outdir, 'info.json')
    old = json.load(open(info_path)).get('probes', {}) if only and os.path.exists(info_path) else {}
    info = dict(renderer=ctx.info['GL_RENDERER'], version=ctx.info['GL_VERSION'],
                vendor=ctx.info['GL_VENDOR'], probes=old)
    quad = np.array([-1, -1, 1, -1, -1, 1, -1, 1, 1, -1, 1, 1], dtype='f4')
    vbo = ctx.buffer(quad.tobytes())
    for name, spec in probes():
        if only and name not in only:
            continue
        w, h = spec['size']
        try:
            prog = ctx.program(vertex_shader=spec.get('vs', VS), fragment_shader=spec['fs'])
        except Exception as e:  # a driver without the extension a probe needs
            info['probes'][name] = dict(error=str(e).splitlines()[0][:200])
            continue
        for uname, value in (('one', 1.0), ('tiny', float(np.float32(2.0 ** -140)))):
            if uname in prog:
                prog[uname].value = value
        tex_spec = spec.get('texture')
        if tex_spec:
            tex = make_texture(ctx, moderngl, tex_spec)
            mode = {'linear': moderngl.LINEAR, 'nearest': moderngl.NEAREST}
            if tex_spec['filter'] == 'trilinear':
                tex.filter = (moderngl.LINEAR_MIPMAP_LINEAR, moderngl.LINEAR)
            else:
                f = mode[tex_spec['filter']]
                tex.filter = (f, f)
            tex.repeat_x = tex.repeat_y = tex_spec['kind'] == 'mips'
            tex.use(0)
            if 'tex' in prog:
                prog['tex'].value = 0
        target = spec.get('target', 'bits')
        if target == 'srgb8':
            rb = ctx.texture((w, h), 4, internal_format=0x8C43)
            ctx.enable_direct(0x8DB9)  # GL_FRAMEBUFFER_SRGB
        elif target == 'rgba16f':
            rb = ctx.texture((w, h), 4, dtype='f2')
        else:
            rb = ctx.texture((w, h), 4)
        fbo = ctx.framebuffer(color_attachments=[rb])
        fbo.use()
        fbo.clear(0, 0, 0, 0)
        vao = ctx.vertex_array(prog, [(vbo, '2f', 'pos')])
        vao.render()
        ctx.finish()
        dtype = 'f2' if target == 'rgba16f' else 'f1'
        data = fbo.read(components=4, dtype=dtype)
        if target == 'srgb8':
            ctx.disable_direct(0x8DB9)
        with open(os.path.join(outdir, name + '.bin'), 'wb') as f:
            f.write(data)
        info['probes'][name] = dict(size=[w, h], target=target, texture=tex_spec,
                                    doc=(spec.get('doc') or ''))
    with open(info_path, 'w') as f:
        json.dump(info, f, indent=1)
    print(f"{info['renderer']} | {info['version']}: {len(info['probes'])} probes")


VK_SHADERS = {
    'dense_unorm8': ('rgba8unorm', 1024, '''
@fragment fn fs(@builtin(position) c: vec4<f32>) -> @location(0) vec4<f32> {
    let p = u32(c.x) + 1024u * u32(c.y);
    let v = f32(p) * exp2(-20.0) * one.x;
    return vec4<f32>(v, v, v, 1.0);
}'''),
    'dense_srgb8': ('rgba8unorm-srgb', 1024, None),
    'bilinear_rgba8_w2': ('rgba8unorm', 128, '''
@group(0) @binding(1) var tex: texture_2d<f32>;
@group(0) @binding(2) var samp: sampler;
@fragment fn fs(@builtin(position) c: vec4<f32>) -> @location(0) vec4<f32> {
    let p = u32(c.x) + 128u * u32(c.y);
    let t = f32(p) / 4096.0;
    let u = (0.5 + t) / 2.0;
    let r = bitcast<u32>(textureSample(tex, samp, vec2<f32>(u, 0.5)).r * one.x);
    return vec4<f32>(f32(r & 255u), f32((r >> 8u) & 255u), f32((r >> 16u) & 255u),
                     f32(r >> 24u)) / 255.0;
}'''),
}
VK_SHADERS['dense_srgb8'] = ('rgba8unorm-srgb', 1024, VK_SHADERS['dense_unorm8'][2])
VK_VS = '''
@group(0) @binding(0) var<uniform> one: vec4<f32>;
@vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let xy = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u)) * 2.0 - 1.0;
    return vec4<f32>(xy, 0.0, 1.0);
}'''


def run_vulkan(outdir, lavapipe):
    if lavapipe:
        os.environ['VK_ICD_FILENAMES'] = '/usr/share/vulkan/icd.d/lvp_icd.x86_64.json'
    import wgpu
    adapters = [a for a in wgpu.gpu.enumerate_adapters_sync()
                if a.info['backend_type'] == 'Vulkan'
                and (a.info['adapter_type'] == 'CPU') == lavapipe]
    if not adapters:
        sys.exit('no matching Vulkan adapter')
    adapter = adapters[0]
    device = adapter.request_device_sync()
    info = dict(adapter=f"{adapter.info['device']} | {adapter.info['description']}", probes={})
    one = device.create_buffer_with_data(data=np.array([1, 1, 1, 1], np.float32).tobytes(),
                                         usage=wgpu.BufferUsage.UNIFORM)
    step = np.zeros((1, 2, 4), np.uint8)
    step[0, 1, :] = 255
    tex = device.create_texture(size=(2, 1, 1), format='rgba8unorm',
                                usage=wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_DST)
    device.queue.write_texture({'texture': tex}, step.tobytes(),
                               {'bytes_per_row': 8, 'rows_per_image': 1}, (2, 1, 1))
    samp = device.create_sampler(mag_filter='linear', min_filter='linear')
    for name, (fmt, width, fs) in VK_SHADERS.items():
        height = width if width == 1024 else 33
        module = device.create_shader_module(code=VK_VS + fs)
        pipeline = device.create_render_pipeline(
            layout='auto', vertex={'module': module, 'entry_point': 'vs'},
            primitive={'topology': 'triangle-list'},
            fragment={'module': module, 'entry_point': 'fs', 'targets': [{'format': fmt}]})
        entries = [{'binding': 0, 'resource': {'buffer': one, 'offset': 0, 'size': 16}}]
        if 'tex' in fs:
            entries += [{'binding': 1, 'resource': tex.create_view()},
                        {'binding': 2, 'resource': samp}]
        group = device.create_bind_group(layout=pipeline.get_bind_group_layout(0),
                                         entries=entries)
        target = device.create_texture(
            size=(width, height, 1), format=fmt,
            usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC)
        enc = device.create_command_encoder()
        rp = enc.begin_render_pass(color_attachments=[{
            'view': target.create_view(), 'clear_value': (0, 0, 0, 0),
            'load_op': 'clear', 'store_op': 'store'}])
        rp.set_pipeline(pipeline)
        rp.set_bind_group(0, group)
        rp.draw(3)
        rp.end()
        device.queue.submit([enc.finish()])
        data = device.queue.read_texture({'texture': target}, {'bytes_per_row': width * 4},
                                         (width, height, 1))
        # Row 0 is Vulkan's top row, where the shader's own pixel index starts, as GL's
        # probes start at GL's bottom row: both files are in pixel-index order.
        with open(os.path.join(outdir, 'vk_' + name + '.bin'), 'wb') as f:
            f.write(bytes(data))
        info['probes'][name] = dict(size=[width, height], format=fmt)
    with open(os.path.join(outdir, 'vk_info.json'), 'w') as f:
        json.dump(info, f, indent=1)
    print(f"{info['adapter']}: {len(info['probes'])} Vulkan probes")


def tgsi_block(text, stage):
    """The last TGSI program of `stage` ('VERT' or 'FRAG') in softpipe's debug output."""
    lines, found, block = text.splitlines(), [], None
    for line in lines:
        if block is None and line.strip() == stage:
            block = [line]
        elif block is not None:
            block.append(line)
            if line.strip().split(':')[-1].strip() == 'END':
                found.append('\n'.join(block) + '\n')
                block = None
    return found[-1] if found else None


def export(outdir, names):
    from PIL import Image
    table = dict(probes())
    for name in names:
        spec = table.get(name)
        if spec is None:
            sys.exit(f'unknown probe {name}')
        tex = spec.get('texture')
        if tex and tex['format'] != 'rgba8':
            sys.exit(f'{name}: only RGBA8 textures can be exported (softgpu draw reads PNG)')
        d = os.path.join(outdir, name)
        os.makedirs(d, exist_ok=True)
        env = dict(os.environ, GALLIUM_DRIVER='softpipe', SOFTPIPE_DEBUG='vs,fs')
        r = subprocess.run([sys.executable, os.path.abspath(__file__), 'run', '/tmp/probe-export',
                            '--child', '--only', name], env=env, capture_output=True, text=True)
        if r.returncode:
            sys.exit(r.stderr[-2000:])
        both = r.stdout + r.stderr
        for stage, file in (('VERT', 'vs.tgsi'), ('FRAG', 'fs.tgsi')):
            block = tgsi_block(both, stage)
            if block is None:
                sys.exit(f'{name}: no {stage} program in softpipe\'s output')
            open(os.path.join(d, file), 'w').write(block)
        # CONST[0]: the probe's float uniforms in declaration order, then the state row Mesa
        # appends for gl_FragCoord and dFdy (STATE_FB_WPOS_Y_TRANSFORM of a user FBO).
        fs = open(os.path.join(d, 'fs.tgsi')).read()
        declared = re.search(r'^DCL CONST\[0\]\[(\d+)(?:\.\.(\d+))?\]', fs, re.M)
        rows = [[1.0, 0.0, 0.0, 0.0] if u == 'one' else [float(np.float32(2.0 ** -140)), 0, 0, 0]
                for u in re.findall(r'^uniform float (\w+);', spec['fs'], re.M)]
        last = int(declared.group(2) or declared.group(1)) if declared else -1
        rows = rows[:last + 1]
        while len(rows) <= last:
            rows.append([1.0, 0.0, -1.0, float(spec['size'][1])])
        with open(os.path.join(d, 'consts.txt'), 'w') as f:
            for row in rows or [[0.0, 0.0, 0.0, 0.0]]:
                f.write(' '.join(repr(float(v)) for v in row) + '\n')
        with open(os.path.join(d, 'vertices.txt'), 'w') as f:
            f.write('# the full-screen quad, clip x y (IN[0])\n')
            for x, y in ((-1, -1), (1, -1), (-1, 1), (-1, 1), (1, -1), (1, 1)):
                f.write(f'{x} {y}\n')
        if tex:
            data = texture_bytes(tex)
            Image.fromarray(data, 'RGBA').save(os.path.join(d, 'tex0.png'))
        print(name, *spec['size'])


def texture_bytes(spec):
    """An 8-bit probe texture's texels, row 0 first (GL's t = 0 row, and PNG's top row)."""
    kind, width = spec['kind'], spec['width']
    if kind == 'step':
        data = np.zeros((1, width, 4), np.uint8)
        data[0, spec['k'] + 1:, :3] = 255
        data[..., 3] = 255
    elif kind == 'corner':
        data = np.zeros((2, 2, 4), np.uint8)
        data[1, 1, 0] = 255
        data[..., 3] = 255
    elif kind == 'ramp2':
        data = np.zeros((2, width, 4), np.uint8)
        data[0, :, 0] = np.arange(256)
        data[1, :, 0] = (np.arange(256) + 1) % 256
        data[..., 3] = 255
    else:
        raise ValueError(kind)
    return data


def runs(path):
    data = np.fromfile(path, np.uint8).reshape(-1, 4)
    if not ((data[:, 0] == data[:, 1]).all() and (data[:, 0] == data[:, 2]).all()
            and (data[:, 3] == 255).all()):
        sys.exit(f'{path}: R, G and B differ or alpha is not 255: not a store probe')
    r = data[:, 0]
    starts = np.concatenate([[0], np.nonzero(np.diff(r.astype(np.int16)))[0] + 1])
    print(f'# {os.path.basename(path)}: {len(r)} pixels, R = G = B, A = 255; FIRST_PIXEL VALUE')
    for p in starts:
        print(int(p), int(r[p]))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    r = sub.add_parser('run')
    r.add_argument('outdir')
    r.add_argument('--driver', default='native', choices=['softpipe', 'llvmpipe', 'native'])
    r.add_argument('--only', nargs='*', default=[])
    r.add_argument('--child', action='store_true', help=argparse.SUPPRESS)
    v = sub.add_parser('run-vulkan')
    v.add_argument('outdir')
    v.add_argument('--lavapipe', action='store_true')
    e = sub.add_parser('export')
    e.add_argument('outdir')
    e.add_argument('names', nargs='+')
    rr = sub.add_parser('runs')
    rr.add_argument('file')
    sub.add_parser('list')
    a = ap.parse_args()
    if a.cmd == 'list':
        for name, spec in probes():
            print(name, *spec['size'])
        return
    if a.cmd == 'runs':
        return runs(a.file)
    os.makedirs(a.outdir, exist_ok=True)
    if a.cmd == 'export':
        return export(a.outdir, a.names)
    if a.cmd == 'run-vulkan':
        return run_vulkan(a.outdir, a.lavapipe)
    if a.child:
        return run_child(a.outdir, set(a.only))
    env = dict(os.environ)
    if a.driver != 'native':
        env['GALLIUM_DRIVER'] = a.driver
        env.setdefault('MESA_GL_VERSION_OVERRIDE', '4.5')
        env.setdefault('MESA_GLSL_VERSION_OVERRIDE', '450')
    cmd = [sys.executable, os.path.abspath(__file__), 'run', a.outdir, '--child']
    if a.only:
        cmd += ['--only', *a.only]
    sys.exit(subprocess.run(cmd, env=env).returncode)


if __name__ == '__main__':
    main()
