#version 330
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  vec4 a = texture(tex0, uv);
  vec4 b = texture(tex0, uv * 2.0, 1.5);
  vec4 c = textureLod(tex0, uv + 0.1, 2.0);
  color = a * 0.5 + b * 0.25 + c * 0.25;
}
