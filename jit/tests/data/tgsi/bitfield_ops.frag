#version 330
#extension GL_ARB_gpu_shader5 : require
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  int a = int(uv.x * 65535.0); uint u = uint(uv.y * 65535.0);
  int e = bitfieldExtract(a, 3, 5); uint eu = bitfieldExtract(u, 2, 7);
  int ins = bitfieldInsert(a, int(u), 4, 6); uint insu = bitfieldInsert(u, uint(a), 1, 3);
  int bc = bitCount(a) + bitCount(u);
  int lsb = findLSB(a) + findLSB(u); int msb = findMSB(a) + findMSB(int(u) - 30000) + findMSB(u);
  uint rev = bitfieldReverse(u); int revi = bitfieldReverse(a);
  color = vec4(float(e + ins) * 0.001, float(eu + insu) * 0.001, float(bc + lsb + msb), float(rev >> 20u) + float(revi & 255));
}
