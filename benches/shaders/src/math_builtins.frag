#version 330
// Speed peer (c): transcendental and vector builtins (pow, exp, log, sin, cos, sqrt, normalize).
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    vec3 n = normalize(vec3(uv - 0.5, 0.7));
    float a = pow(uv.x + 0.1, 2.4) + exp(-uv.y * 2.0) * 0.3;
    float b = log(1.0 + uv.x * 4.0) * 0.4 + sqrt(uv.y) * 0.5;
    float c = sin(uv.x * 12.0) * cos(uv.y * 9.0) * 0.5 + 0.5;
    color = vec4(clamp(a, 0.0, 1.0), clamp(b, 0.0, 1.0), c, n.z);
}
