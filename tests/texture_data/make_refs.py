#!/usr/bin/env python3
"""Regenerates the softpipe sampling references used by tests/texture_sampler_mesa.rs.

Run with Mesa 22.3 installed (GALLIUM_DRIVER=softpipe is set here) and moderngl/numpy/pillow:
    python3 tests/texture_data/make_refs.py
Each case draws a 64x64 RGBA8 target with `o = texture(tex0, gl_FragCoord.xy * k.xy + k.zw)`
(exact dyadic coordinates, so no interpolation rounding is involved) and saves
  CASE.png      the render target, row 0 = bottom (gl_FragCoord.y = 0.5)
  CASE_tex.png  the texture levels side by side (level i at x offset sum of previous widths)
Texture levels are random bytes uploaded per level (not generated), so mip selection and
filtering are tested independently of mipmap generation; `genmip_*` cases instead let the
driver generate the chain and store its levels.
"""
import os, sys
os.environ['GALLIUM_DRIVER'] = 'softpipe'
import moderngl, numpy as np
from PIL import Image

OUT = os.path.dirname(os.path.abspath(__file__))
VS = '#version 330\nin vec2 pos; void main(){ gl_Position = vec4(pos, 0, 1); }'
FS = {
    'tex':  'o = texture(tex0, gl_FragCoord.xy * k.xy + k.zw);',
    'bias': 'o = texture(tex0, gl_FragCoord.xy * k.xy + k.zw, b);',
    'lod':  'o = textureLod(tex0, gl_FragCoord.xy * k.xy + k.zw, b);',
    'gather': 'o = textureGather(tex0, gl_FragCoord.xy * k.xy + k.zw, 1);',
    'offset': 'o = textureOffset(tex0, gl_FragCoord.xy * k.xy + k.zw, ivec2(1, -2));',
    'fetch': 'o = texelFetch(tex0, ivec2(gl_FragCoord.xy * k.xy + k.zw), int(b));',
}
WRAP = {'repeat': moderngl.REPEAT if hasattr(moderngl, 'REPEAT') else 0x2901,
        'mirror': 0x8370, 'edge': 0x812F, 'border': 0x812D}
FILT = {('nearest', None): moderngl.NEAREST, ('linear', None): moderngl.LINEAR,
        ('nearest', 'nearest'): moderngl.NEAREST_MIPMAP_NEAREST,
        ('linear', 'nearest'): moderngl.LINEAR_MIPMAP_NEAREST,
        ('nearest', 'linear'): moderngl.NEAREST_MIPMAP_LINEAR,
        ('linear', 'linear'): moderngl.LINEAR_MIPMAP_LINEAR}

# name, mode, tex w, h, explicit levels (0 = none, -1 = generate), min, mag, mip, wrap, k, b
CASES = [
    ('mag_linear_repeat_pot', 'tex', 16, 16, 0, 'linear', 'linear', None, 'repeat', (3/256, 3/256, -0.125, 0.0625), 0),
    ('mag_linear_repeat_npot', 'tex', 13, 7, 0, 'linear', 'linear', None, 'repeat', (3/256, 5/256, -0.375, 0.25), 0),
    ('mag_nearest_repeat_pot', 'tex', 16, 8, 0, 'nearest', 'nearest', None, 'repeat', (3/256, 3/256, -0.125, 0.0625), 0),
    ('min_linear_repeat_npot', 'tex', 13, 7, 0, 'linear', 'linear', None, 'repeat', (5/64, 3/32, -0.375, 0.25), 0),
    ('linear_edge', 'tex', 12, 10, 0, 'linear', 'linear', None, 'edge', (1/32, 3/128, -0.5, -0.25), 0),
    ('linear_border', 'tex', 12, 10, 0, 'linear', 'linear', None, 'border', (1/32, 3/128, -0.5, -0.25), 0),
    ('linear_mirror', 'tex', 12, 10, 0, 'linear', 'linear', None, 'mirror', (1/16, 3/64, -1.5, -0.75), 0),
    ('nearest_edge', 'tex', 12, 10, 0, 'nearest', 'nearest', None, 'edge', (1/32, 3/128, -0.5, -0.25), 0),
    ('nearest_border', 'tex', 12, 10, 0, 'nearest', 'nearest', None, 'border', (1/32, 3/128, -0.5, -0.25), 0),
    ('nearest_mirror', 'tex', 12, 10, 0, 'nearest', 'nearest', None, 'mirror', (1/16, 3/64, -1.5, -0.75), 0),
    ('mip_linear_linear_pot', 'tex', 32, 32, 6, 'linear', 'linear', 'linear', 'repeat', (3/64, 5/64, 0.125, -0.25), 0),
    ('mip_linear_linear_npot_edge', 'tex', 40, 24, 6, 'linear', 'linear', 'linear', 'edge', (3/128, 5/128, 0.125, -0.25), 0),
    ('mip_nearest_nearest', 'tex', 32, 32, 6, 'nearest', 'nearest', 'nearest', 'repeat', (3/64, 5/64, 0.125, -0.25), 0),
    ('mip_linear_nearest_bias', 'bias', 32, 32, 6, 'linear', 'linear', 'nearest', 'repeat', (1/64, 1/64, 0.125, -0.25), 1.25),
    ('mip_lod_explicit', 'lod', 32, 32, 6, 'linear', 'linear', 'linear', 'edge', (1/64, 1/64, 0.125, -0.25), 2.375),
    ('min_nearest_mag_linear', 'tex', 16, 16, 0, 'nearest', 'linear', None, 'repeat', (1/32, 1/32, 0.0, 0.0), 0),
    ('gather_green', 'gather', 12, 10, 0, 'linear', 'linear', None, 'repeat', (1/32, 3/128, -0.5, -0.25), 0),
    ('offset_linear', 'offset', 16, 16, 0, 'linear', 'linear', None, 'repeat', (3/256, 3/256, -0.125, 0.0625), 0),
    ('fetch_clamped', 'fetch', 12, 10, 3, 'nearest', 'nearest', 'nearest', 'repeat', (0.25, 0.25, -2.0, -3.0), 1),
    ('genmip_npot', 'tex', 13, 7, -1, 'linear', 'linear', 'nearest', 'repeat', (1/4, 1/4, 0.0, 0.0), 0),
    ('genmip_pot', 'tex', 16, 8, -1, 'linear', 'linear', 'nearest', 'repeat', (1/4, 1/4, 0.0, 0.0), 0),
]

def main():
    ctx = moderngl.create_standalone_context(backend='egl')
    assert 'softpipe' in ctx.info['GL_RENDERER'], ctx.info['GL_RENDERER']
    vbo = ctx.buffer(np.array([-1, -1, 3, -1, -1, 3], dtype='f4').tobytes())
    rng = np.random.default_rng(1234)
    for name, mode, w, h, levels, fmin, fmag, fmip, wrap, k, b in CASES:
        prog = ctx.program(vertex_shader=VS, fragment_shader='#version 330\n'
                           '#extension GL_ARB_gpu_shader5 : enable\nuniform sampler2D tex0;'
                           'uniform vec4 k; uniform float b; out vec4 o;\nvoid main(){ ' + FS[mode] + ' }')
        vao = ctx.vertex_array(prog, [(vbo, '2f', 'pos')])
        prog['k'].value = k
        if 'b' in prog: prog['b'].value = b
        data = [rng.integers(0, 256, (h, w, 4), dtype=np.uint8)]
        t = ctx.texture((w, h), 4, data[0].tobytes())
        if levels != 0:
            t.build_mipmaps()
            n = 1 + int(np.floor(np.log2(max(w, h))))
            for lvl in range(1, n):
                lw, lh = max(1, w >> lvl), max(1, h >> lvl)
                if levels > 0:
                    data.append(rng.integers(0, 256, (lh, lw, 4), dtype=np.uint8))
                    t.write(data[-1].tobytes(), level=lvl)
                else:
                    data.append(np.frombuffer(t.read(level=lvl), np.uint8).reshape(lh, lw, 4))
        t.filter = (FILT[(fmin, fmip)], FILT[(fmag, None)])
        t.repeat_x = t.repeat_y = True
        t.use(0)
        prog['tex0'].value = 0
        # moderngl has no wrap setter for mirror/border: use a sampler object.
        s = ctx.sampler(texture=t, filter=t.filter, repeat_x=True, repeat_y=True)
        if wrap != 'repeat':
            s.repeat_x = s.repeat_y = False  # CLAMP_TO_EDGE
            if wrap == 'border':
                # moderngl switches the wrap to CLAMP_TO_BORDER when a border colour is set.
                s.border_color = (0.0, 0.0, 0.0, 0.0)
        s.use(0)
        if wrap == 'mirror':
            # No moderngl knob for GL_MIRRORED_REPEAT: set it through the raw GL entry point.
            set_wrap_mirror(s._glo)
        fbo = ctx.simple_framebuffer((64, 64), components=4)
        fbo.use(); fbo.clear(0, 0, 0, 0); vao.render(); ctx.finish()
        img = np.frombuffer(fbo.read(components=4), np.uint8).reshape(64, 64, 4)
        Image.fromarray(img, 'RGBA').save(os.path.join(OUT, name + '.png'))
        strip = np.zeros((h, sum(d.shape[1] for d in data), 4), np.uint8)
        x = 0
        for d in data:
            strip[:d.shape[0], x:x + d.shape[1]] = d
            x += d.shape[1]
        Image.fromarray(strip, 'RGBA').save(os.path.join(OUT, name + '_tex.png'))
        print(name, file=sys.stderr)

def set_wrap_mirror(sampler_id):
    import ctypes, ctypes.util
    gl = ctypes.CDLL(ctypes.util.find_library('GL') or 'libGL.so.1')
    egl = ctypes.CDLL(ctypes.util.find_library('EGL') or 'libEGL.so.1')
    egl.eglGetProcAddress.restype = ctypes.c_void_p
    fn = ctypes.CFUNCTYPE(None, ctypes.c_uint, ctypes.c_uint, ctypes.c_int)(
        egl.eglGetProcAddress(b'glSamplerParameteri'))
    fn(sampler_id, 0x2802, 0x8370)  # GL_TEXTURE_WRAP_S
    fn(sampler_id, 0x2803, 0x8370)  # GL_TEXTURE_WRAP_T

if __name__ == '__main__':
    main()

# srgb_encode.png (made separately, same setup): a 4096x1 GL_SRGB8_ALPHA8 target with
# GL_FRAMEBUFFER_SRGB enabled, drawn with x = gl_FragCoord.x / 4096 and
#   o = vec4(x, x * 0.0625, x * 0.375 + 0.5, x);
