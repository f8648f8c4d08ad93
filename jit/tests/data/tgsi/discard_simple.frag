#version 330
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  vec4 t = texture(tex0, uv);
  if (t.a < 0.5) discard;
  if (length(uv - 0.5) > 0.45) discard;
  color = t;
}
