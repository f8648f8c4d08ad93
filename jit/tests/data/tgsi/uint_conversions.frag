#version 330
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  uint u = uint(uv.x * 300.0); int i = int(uv.y * -300.0);
  uint m = max(u, 7u) + min(u, 100u) * 3u; int n = abs(i) + max(i, -5) + min(i, 9) + sign(i);
  float f = float(u) + float(i) * 0.5 + float(uint(i)) * 1e-9;
  uint fromf = uint(uv.y * 77.7); int fromfi = int(-uv.x * 55.5);
  bool lt = u < 50u; bool ge = i >= -100; bool eq = u == uint(n);
  color = vec4(f * 0.001, float(m) * 0.001, float(fromf + uint(fromfi)) * 0.01, float(lt) + float(ge) + float(eq) + float(u != 3u));
}
