#version 330
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  vec4 arr[6];
  for (int j = 0; j < 6; j++) arr[j] = vec4(float(j) * 0.1, uv, 1.0);
  int idx = int(uv.x * 5.99);
  arr[int(uv.y * 5.99)] = k[2];
  float f[5] = float[5](0.1, 0.3, 0.5, 0.7, 0.9);
  color = arr[idx] * f[int(uv.y * 4.99)];
}
