#version 330
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  vec4 c = vec4(uv, 0.0, 1.0);
  if (uv.x > 0.5) {
    if (uv.y > 0.25) c.r = k[0].x; else c.g = k[1].y;
  } else if (uv.y < 0.75) {
    c.b = uv.x * uv.y;
    if (c.b > 0.1) c = c.wzyx;
  } else {
    c *= 0.5;
  }
  color = c;
}
