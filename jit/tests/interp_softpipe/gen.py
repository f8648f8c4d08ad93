#!/usr/bin/env python3
"""Regenerates the softpipe cross-check data for jit/tests/interp_softpipe.rs.

Each case is a GLSL fragment shader run on Mesa's softpipe through /work/shared/peers/mesa_run.py
at 16x16. Column x and row y pick inputs from the tables below (Mesa uploads the constant table
to CONST[0][i].x), the result's 32 bits are written as the four 8-bit color channels, so the PNG
holds the exact bits softpipe computed. Stored per case: NAME.tgsi (the TGSI softpipe ran),
NAME.expect (16 lines of 16 hex words) and NAME.consts (the table, one hex word per line).
Usage: python3 gen.py [CASE...]"""
import os, subprocess, sys, struct
import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
F = lambda x: struct.unpack('<I', struct.pack('<f', x))[0]
FLOATS = [F(0.0), 0x80000000, F(1.0), F(-1.0), F(0.5), F(1.5), F(2.5), F(-2.5), F(3.0e9), F(-3.0e9),
          0x7f800000, 0xff800000, 0x7fc00000, 0x00000400, F(100.7), F(-0.3)]
INTS = [0, 1, 0xffffffff, 2, 0xfffffffe, 7, 0xfffffff9, 31, 32, 33, 0x80000000, 0x7fffffff,
        0x12345678, 0xdeadbeef, 5, 0xfffffffb]
# No INT_MIN here: softpipe traps on INT_MIN / -1.
DIVS = [0, 1, 0xffffffff, 2, 0xfffffffe, 7, 0xfffffff9, 31, 32, 33, 0x40000000, 0x7fffffff,
        0x12345678, 0x9eadbeef, 5, 0xfffffffb]

HEAD = '''#version 330
#extension GL_ARB_gpu_shader5 : require
in vec2 uv; out vec4 o;
const uint T[16] = uint[16](%s);
void main() {
  ivec2 p = ivec2(uv * 16.0);
  uint ua = T[p.x], ub = T[p.y];
  float a = uintBitsToFloat(ua), b = uintBitsToFloat(ub);
  int ia = int(ua), ib = int(ub);
  uint r;
  %s
  o = vec4(uvec4(r, r >> 8u, r >> 16u, r >> 24u) & 0xffu) / 255.0;
}
'''
UNARY = ' '.join('%sif (p.y == %d) r = %s;' % ('else ' if i else '', i, e) for i, e in enumerate([
    'floatBitsToUint(sin(a))', 'floatBitsToUint(cos(a))', 'floatBitsToUint(exp2(a))',
    'floatBitsToUint(log2(a))', 'floatBitsToUint(inversesqrt(a))', 'floatBitsToUint(sqrt(a))',
    'floatBitsToUint(1.0 / a)', 'floatBitsToUint(floor(a))', 'floatBitsToUint(ceil(a))',
    'floatBitsToUint(roundEven(a))', 'floatBitsToUint(trunc(a))', 'floatBitsToUint(fract(a))',
    'floatBitsToUint(sign(a))', 'uint(int(a))', 'uint(a)', 'floatBitsToUint(clamp(a, 0.0, 1.0))']))
CASES = {
    'float_unary': (FLOATS, UNARY),
    'pow': (FLOATS, 'r = floatBitsToUint(pow(a, b));'),
    'minmax': (FLOATS, 'r = floatBitsToUint(p.x < 8 ? min(a, b) : max(a, b));'),
    'fdiv': (FLOATS, 'r = floatBitsToUint(a / b);'),
    'fmod': (FLOATS, 'r = floatBitsToUint(mod(a, b));'),
    'compare': (FLOATS, 'r = uint(a < b) | uint(a >= b) << 1u | uint(a == b) << 2u | uint(a != b) << 3u | floatBitsToUint(a * b + a) & 0xfffffff0u;'),
    'ldexp': (FLOATS, 'r = floatBitsToUint(ldexp(a, int(ub & 0xffu) - 128));'),
    'idiv': (DIVS, 'r = uint(ia / ib) ^ (ua / ub) << 1u ^ (ua % ub) << 2u;'),
    'shifts': (INTS, 'r = (ua << ub) ^ (ua >> ub) ^ uint(ia >> ib) << 1u;'),
    'bitfield': (INTS, 'r = uint(bitfieldExtract(ia, int(ub & 31u), int(ub >> 27u))) ^ bitfieldExtract(ua, int(ub & 15u), int(ub >> 28u)) << 3u ^ bitfieldInsert(ua, ub, int(ub & 7u), int(ub & 15u)) << 1u;'),
    'bits': (INTS, 'r = uint(findMSB(ia)) ^ uint(findMSB(ub)) << 8u ^ uint(findLSB(ua)) << 16u ^ uint(bitCount(ua)) << 24u ^ bitfieldReverse(ub);'),
    'mulhi': (INTS, 'uint hi, lo; umulExtended(ua, ub, hi, lo); int ihi, ilo; imulExtended(ia, ib, ihi, ilo); r = hi ^ uint(ihi) << 1u ^ lo;'),
}

def run(name):
    table, body = CASES[name]
    frag = HEAD % (', '.join('0x%08xu' % v for v in table), body)
    tmp = os.path.join('/tmp', 'interp_softpipe_' + name)
    os.makedirs(tmp, exist_ok=True)
    open(os.path.join(tmp, 'case.frag'), 'w').write(frag)
    subprocess.run([sys.executable, '/work/shared/peers/mesa_run.py', os.path.join(tmp, 'case.frag'), tmp,
                    '--size', '16x16'], check=True, capture_output=True)
    tgsi = open(os.path.join(tmp, 'fs.tgsi')).read()
    tgsi = tgsi[tgsi.rfind('\nFRAG\n') + 1:]
    img = np.asarray(Image.open(os.path.join(tmp, 'out.png')).convert('RGBA')).astype(np.uint32)
    words = img[:, :, 0] | img[:, :, 1] << 8 | img[:, :, 2] << 16 | img[:, :, 3] << 24
    open(os.path.join(HERE, name + '.tgsi'), 'w').write(tgsi)
    open(os.path.join(HERE, name + '.expect'), 'w').write(
        ''.join(' '.join('%08x' % w for w in row) + '\n' for row in words))
    open(os.path.join(HERE, name + '.consts'), 'w').write(''.join('%08x\n' % v for v in table))
    print(name, 'ok')

if __name__ == '__main__':
    for n in sys.argv[1:] or CASES:
        run(n)
