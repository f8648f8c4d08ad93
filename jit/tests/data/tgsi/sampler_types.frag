#version 330
#extension GL_ARB_shading_language_420pack : require
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
layout(binding=1) uniform sampler3D t3; layout(binding=2) uniform samplerCube tc;
layout(binding=3) uniform sampler2DArray ta; layout(binding=4) uniform sampler2DShadow ts;
layout(binding=5) uniform isampler2D ti; layout(binding=6) uniform usampler2D tu;
layout(binding=7) uniform sampler1D t1;
void main(){
  vec4 a = texture(t3, vec3(uv, 0.5)) + texture(tc, vec3(uv * 2.0 - 1.0, 1.0));
  vec4 b = texture(ta, vec3(uv, 1.0)) + vec4(texture(ts, vec3(uv, 0.5)));
  vec4 c = vec4(texture(ti, uv)) * 0.001 + vec4(texelFetch(tu, ivec2(uv * 4.0), 0)) * 0.001;
  color = a + b + c + texture(t1, uv.x) + texture(tex0, uv);
}
