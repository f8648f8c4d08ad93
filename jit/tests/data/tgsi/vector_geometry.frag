#version 330
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  vec3 n = normalize(vec3(uv - 0.5, 1.0));
  vec3 l = normalize(k[2].xyz);
  vec3 r = reflect(-l, n); vec3 t = refract(-l, n, 0.66);
  mat3 m = mat3(k[0].xyz, k[1].xyz, k[2].xyz);
  vec3 mv = m * n + n * m;
  float d = dot(n, l) + length(uv) + distance(uv, vec2(0.3)) ;
  color = vec4(cross(n, l) + r * 0.1 + t * 0.1 + mv * 0.01, d);
}
