#version 330
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  vec4 a = textureOffset(tex0, uv, ivec2(1, -1));
  vec4 b = textureLodOffset(tex0, uv, 1.0, ivec2(-2, 3));
  vec4 c = texelFetchOffset(tex0, ivec2(uv * 16.0), 0, ivec2(2, 0));
  color = (a + b + c) / 3.0;
}
