#version 330
#extension GL_ARB_texture_query_lod : require
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  vec2 l = textureQueryLOD(tex0, uv * 3.0);
  color = vec4(l * 0.25, texture(tex0, uv).rg);
}
