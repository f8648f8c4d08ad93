#version 330
#extension GL_ARB_gpu_shader5 : require
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  float x = uv.x * 2.0 - 0.5;
  int e; float m = frexp(uv.y * 100.0 + 1.0, e);
  color = vec4(clamp(x, 0.1, 0.9) + min(x, uv.y) + max(x, 0.2),
               mix(uv.x, uv.y, 0.3) + step(0.5, uv.x),
               smoothstep(0.2, 0.8, uv.y) + fma(uv.x, uv.y, 0.25),
               ldexp(m, e - 7) + float(e) * 0.01);
}
