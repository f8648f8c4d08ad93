#version 330
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  vec2 v = (uv - 0.5) * 9.7;
  vec4 a = vec4(mod(v.x, 2.5), fract(v.y), floor(v.x), ceil(v.y));
  vec4 b = vec4(round(v.x), roundEven(v.y), trunc(v.x), sign(v.y)) + abs(v).xyxy + mod(v, vec2(1.5, -2.0)).xyxy;
  color = (a + b) * 0.05;
}
