#version 330
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  vec4 t = texture(tex0, uv);
  color = clamp(t * k[1].x - 0.5, 0.0, 1.0);
  gl_FragDepth = clamp(uv.x * 1.5, 0.0, 1.0);
}
