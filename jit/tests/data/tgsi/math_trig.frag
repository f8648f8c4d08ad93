#version 330
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main(){
  float a = uv.x * 6.28318 - 3.14159; float b = uv.y * 2.0 - 1.0;
  color = vec4(sin(a) + cos(a), tan(a * 0.4), atan(b) + atan(a, b), asin(b * 0.9) + acos(b * 0.9) + sinh(b) + cosh(b) + tanh(b));
}
