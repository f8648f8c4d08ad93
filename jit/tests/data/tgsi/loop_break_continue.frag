#version 330
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  float acc = 0.0; int i = 0;
  while (true) {
    i++;
    if (i > int(uv.x * 20.0)) break;
    if ((i & 1) == 0) continue;
    acc += float(i) * 0.01;
    for (int j = 0; j < 4; j++) { if (float(j) > uv.y * 4.0) break; acc += k[j].x * 0.001; }
  }
  color = vec4(acc, fract(acc), uv);
}
