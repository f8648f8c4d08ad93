#version 330
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
float hash(vec2 p){ return fract(sin(dot(p, vec2(12.9898, 78.233))) * 43758.5453); }
vec3 palette(float t, vec3 a, vec3 b){ return a + b * cos(6.28318 * (t + vec3(0.0, 0.33, 0.67))); }
float recurse_free(float x, int n){ float r = x; for (int i = 0; i < n; i++) r = r * r + 0.1; return r; }
void main(){
  float h = hash(floor(uv * 8.0));
  color = vec4(palette(h, vec3(0.5), vec3(0.5)), recurse_free(uv.x, 3));
}
