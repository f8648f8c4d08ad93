#version 330
#extension GL_ARB_derivative_control : require
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  float f = uv.x * uv.x + sin(uv.y * 7.0);
  vec2 a = vec2(dFdx(f), dFdy(f));
  vec2 b = vec2(dFdxFine(f), dFdyFine(f));
  vec2 c = vec2(dFdxCoarse(uv.y), dFdyCoarse(uv.x));
  color = vec4(a + b, c.x + fwidth(f), fwidthFine(uv.x) + fwidthCoarse(uv.y));
}
