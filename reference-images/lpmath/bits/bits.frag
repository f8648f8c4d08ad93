#version 330
in vec2 uv;
out vec4 color;
uint hash(uint i) { i ^= i >> 16; i *= 0x7feb352du; i ^= i >> 15; i *= 0x846ca68bu; i ^= i >> 16; return i; }
// A float chosen to hit special encodings often: zero/denormal/inf/NaN exponents, 1.0-ish, random.
float special(uint h) {
  uint sel = h & 15u;
  uint sgn = (h >> 4) & 1u;
  uint m = (h >> 5) & 0x7fffffu;
  uint mm = (h >> 28) & 3u;
  m = mm == 0u ? 0u : (mm == 1u ? 1u : (mm == 2u ? 0x400000u : m));
  uint e = sel == 0u ? 0u : (sel == 1u ? 255u : (sel == 2u ? 127u : (sel == 3u ? 128u : (sel == 4u ? 126u : (sel == 5u ? 1u : (sel == 6u ? 254u : ((h >> 7) % 254u) + 1u))))));
  return uintBitsToFloat((sgn << 31) | (e << 23) | m);
}
vec4 bytes(float r) {
  uint b = floatBitsToUint(r);
  return vec4(uvec4(b, b >> 8, b >> 16, b >> 24) & 0xffu) / 255.0;
}
// Band f = row % 6: pow, exp2, log2, sin, cos, and pow of a vec3 (its three results' bits mixed).
void main() {
  uvec2 p = uvec2(gl_FragCoord.xy); uint i = p.y * 256u + p.x; uint h = hash(i); uint h2 = hash(i ^ 0x9e3779b9u);
  uint f = p.y % 6u;
  bool sp = (h2 & 7u) == 0u;
  float r;
  if (f == 0u) {
    float x = sp ? special(h) : uintBitsToFloat(0x30000000u + h % 0x10800000u);
    float y = (h2 & 8u) == 0u ? special(h2 >> 4) : float(h2 >> 8) / 16777216.0 * 8.0 - 4.0;
    if (!sp) y = float(h2 >> 8) / 16777216.0 * 8.0 - 4.0;
    r = pow(x, y);
  } else if (f == 1u) {
    r = exp2(sp ? special(h) : float(int(h)) / 8388608.0);
  } else if (f == 2u) {
    r = log2(sp ? special(h) : uintBitsToFloat(h & 0x7fffffffu));
  } else if (f == 3u) {
    r = sin(sp ? special(h) : float(int(h)) / 16777216.0);
  } else if (f == 4u) {
    r = cos(sp ? special(h) : float(int(h)) / 16777216.0);
  } else {
    vec3 x = uintBitsToFloat(uvec3(h, h >> 3, h >> 5) % 0x10800000u + 0x30000000u);
    vec3 c = pow(x, vec3(2.4, 1.0 / 2.2, float(h2 >> 8) / 16777216.0 * 4.0));
    uvec3 b = floatBitsToUint(c);
    r = uintBitsToFloat(b.x ^ (b.y * 3u) ^ (b.z * 7u));
  }
  color = bytes(r);
  if (uv.x < -1.0) color = vec4(1.0);
}
