#version 330
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  float x = uv.x * 3.0 + 0.01; float y = uv.y * 2.0;
  color = vec4(pow(x, y) * 0.1, exp(y) * 0.1 + log(x), exp2(y) * 0.1 + log2(x), sqrt(x) + inversesqrt(x));
}
