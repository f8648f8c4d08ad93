#version 330
// pow, exp2, log2, exp, log, sqrt, inversesqrt, sin, cos, tan, atan (1- and 2-argument), asin, acos.
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    float x = uv.x * 0.9 + 0.05;
    float y = uv.y * 0.9 + 0.05;
    float a = pow(x, 2.2) * 0.5 + exp2(-y * 3.0) * 0.5;
    float b = log2(1.0 + x * 7.0) / 3.0 * 0.6 + sqrt(y) * 0.2 + inversesqrt(1.0 + x) * 0.2;
    float c = 0.5 + 0.25 * sin(x * 11.0) * cos(y * 7.0) + 0.2 * atan(y - 0.5, x - 0.45) / 3.14159265;
    float d = 0.5 + 0.12 * atan(tan(x * 1.3)) + 0.1 * asin(y * 2.0 - 1.0) - 0.05 * acos(x)
              + 0.05 * log(1.0 + y) + 0.02 * exp(x);
    color = vec4(a, b, c, clamp(d, 0.0, 1.0));
}
