#version 330
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  int a = int(uv.x * 1000.0) - 300; int b = int(uv.y * 17.0) + 1;
  uint ua = uint(uv.x * 4000.0); uint ub = uint(uv.y * 13.0) + 1u;
  int q = a / b; int r = a % b;
  uint uq = ua / ub; uint ur = ua % ub;
  int s = (a << 3) >> (b & 7); uint us = (ua << 2u) >> (ub & 3u);
  color = vec4(float(q) * 0.01, float(r) * 0.1, float(uq + ur) * 0.001, float(s) + float(us) * 0.0001);
}
