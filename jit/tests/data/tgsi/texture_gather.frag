#version 330
#extension GL_ARB_texture_gather : require
#extension GL_ARB_gpu_shader5 : require
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  vec4 r = textureGather(tex0, uv);
  vec4 g = textureGather(tex0, uv, 1);
  vec4 o = textureGatherOffset(tex0, uv, ivec2(1, -1), 3);
  color = (r + g + o) / 3.0;
}
