#version 330
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  int i = int(uv.x * 4.0) & 3;
  vec4 c = k[i] + k[3 - i] * k[int(uv.y * 3.99)].y;
  color = c * 0.25;
}
