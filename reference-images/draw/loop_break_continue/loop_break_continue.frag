#version 330
// for-loop with a data-dependent trip count, continue and break that differ per pixel.
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    int n = 3 + int(uv.x * 13.0) + int(uv.y * 7.0);
    float acc = 0.0;
    float w = 0.0;
    for (int i = 0; i < n; i++) {
        float v = fract(float(i) * 0.618034 + uv.y * 2.3);
        if (v < 0.2719) continue;
        acc += v * (1.0 - uv.x * 0.5);
        w += 1.0;
        if (acc > 4.1234 + uv.y) break;
    }
    color = vec4(acc / 8.0, w / 24.0, float(n) / 24.0, 1.0);
}
