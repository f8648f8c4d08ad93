#version 330
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  ivec2 sz = textureSize(tex0, 0);
  ivec2 sz1 = textureSize(tex0, 1);
  ivec2 p = ivec2(uv * vec2(sz));
  vec4 a = texelFetch(tex0, p, 0);
  vec4 b = texelFetch(tex0, p / 2, 1);
  color = a + b * 0.5 + vec4(vec2(sz + sz1) * 0.01, 0.0, 0.0);
}
