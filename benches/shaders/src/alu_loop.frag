#version 330
// Speed peer (b): ALU-heavy loop, 64 iterations of mul/add/mad on values that depend on the pixel.
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    vec4 v = vec4(uv, uv.x * uv.y, 0.5);
    vec4 acc = vec4(0.0);
    for (int i = 0; i < 64; i++) {
        v = v * vec4(0.97, 1.01, 0.99, 1.003) + v.yzwx * vec4(0.011, -0.007, 0.013, 0.005);
        acc += v * v.wxyz;
    }
    color = clamp(acc * 0.02 + v * 0.1, 0.0, 1.0);
}
