#version 330
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  vec4 a = textureGrad(tex0, uv, vec2(0.01, 0.0), vec2(0.0, 0.02));
  vec4 b = textureGradOffset(tex0, uv, dFdx(uv) * 2.0, dFdy(uv), ivec2(1, 1));
  color = mix(a, b, 0.5);
}
