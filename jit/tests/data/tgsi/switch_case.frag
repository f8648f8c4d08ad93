#version 330
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  int sel = int(uv.x * 6.0);
  vec4 c = vec4(0.0);
  switch (sel) {
    case 0: c = vec4(1.0, 0.0, 0.0, 1.0); break;
    case 1: case 2: c = k[1]; break;
    case 3: c.g = uv.y; // fallthrough
    case 4: c.b = 0.5; break;
    default: c = vec4(uv, 1.0, 1.0);
  }
  color = c;
}
