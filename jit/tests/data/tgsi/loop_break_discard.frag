#version 330
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  vec4 c = texture(tex0, uv);
  int n = int(uv.x*8.0);
  for (int i=0;i<n;i++){ if (i==3) continue; c.x += 0.1; if (c.x>2.0) break; }
  if (uv.y > 0.5) c = c.yxzw * k[n & 3]; else discard;
  color = c;
}
