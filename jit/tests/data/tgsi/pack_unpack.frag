#version 330
#extension GL_ARB_shading_language_packing : require
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  uint h = packHalf2x16(uv * 3.3);
  vec2 back = unpackHalf2x16(h ^ 0x00010001u);
  uint u8 = packUnorm4x8(vec4(uv, 0.25, 0.75));
  vec4 u8b = unpackUnorm4x8(u8 + 1u);
  uint s8 = packSnorm4x8(vec4(uv * 2.0 - 1.0, -0.5, 0.5));
  vec4 s8b = unpackSnorm4x8(s8);
  uint u16 = packUnorm2x16(uv); vec2 u16b = unpackUnorm2x16(u16 >> 1u);
  uint s16 = packSnorm2x16(uv - 0.5); vec2 s16b = unpackSnorm2x16(s16);
  color = vec4(back, u16b + s16b) + u8b * 0.1 + s8b * 0.1;
}
