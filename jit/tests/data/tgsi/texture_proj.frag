#version 330
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  vec3 p = vec3(uv * (1.0 + uv.x), 1.0 + uv.x);
  vec4 q = vec4(uv * 2.0, 0.0, 2.0);
  color = textureProj(tex0, p) * 0.5 + textureProj(tex0, q) * 0.25 + textureProjLod(tex0, p, 1.0) * 0.25;
}
