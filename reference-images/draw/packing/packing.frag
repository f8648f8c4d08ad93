#version 330
#extension GL_ARB_shading_language_packing : require
// packUnorm4x8/unpackUnorm4x8, packSnorm2x16/unpackSnorm2x16, packHalf2x16/unpackHalf2x16 round trips
// plus bit reinterpretation (floatBitsToUint, uintBitsToFloat).
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    vec4 t = texelFetch(tex0, ivec2(uv * 16.0), 0);  // exact: t.r * 1000 feeds a fract
    uint p = packUnorm4x8(vec4(uv.x, t.g, uv.y * 0.5, 0.9));
    vec4 u = unpackUnorm4x8(p ^ 0x00010300u);
    uint s = packSnorm2x16(vec2(uv.x * 2.0 - 1.0, t.b - 0.3));
    vec2 sn = unpackSnorm2x16(s);
    uint h = packHalf2x16(vec2(uv.y * 3.3 + 0.01, t.r * 1000.0));
    vec2 hv = unpackHalf2x16(h);
    uint fb = floatBitsToUint(uv.x + 1.0);
    float mant = uintBitsToFloat((fb & 0x007FFFFFu) | 0x3F800000u) - 1.0;
    color = vec4(u.x * 0.5 + u.z * 0.5, sn.x * 0.25 + 0.5 + sn.y * 0.2, hv.x / 3.5, fract(hv.y / 64.0) * 0.5 + mant * 0.5);
}
