#version 330
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  bvec2 a = lessThan(uv, vec2(0.5)); bvec2 b = greaterThanEqual(uv, vec2(0.25, 0.75));
  bvec2 c = equal(ivec2(uv * 4.0), ivec2(1, 2)); bvec2 d = notEqual(uvec2(uv * 8.0), uvec2(3u));
  bool x = any(a) && !all(b) || any(not(c)) ^^ all(d);
  color = vec4(vec2(a) + vec2(b), vec2(c) * 0.5 + vec2(d) * 0.25) * (x ? 1.0 : 0.5);
}
