#version 330
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  float grid[9];
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 3; x++)
      grid[y * 3 + x] = texture(tex0, uv + vec2(x - 1, y - 1) / 16.0).r;
  float s = 0.0; int n = int(uv.x * 8.99);
  for (int i = 0; i <= n; i++) { if (grid[i] > 0.9) continue; s += grid[i]; }
  color = vec4(s / 9.0, grid[n], uv);
}
