#version 330
// Helper functions with out/inout parameters, early return and a loop, called from several places.
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
float hash(vec2 p) {
    return fract(sin(dot(p, vec2(12.9898, 78.233))) * 437.585);
}
float shape(vec2 p, float r, out float edge) {
    float d = length(p) - r;
    edge = clamp(1.0 - abs(d) * 12.0, 0.0, 1.0);
    if (d > 0.0) return 0.0;
    return -d / r;
}
void accumulate(inout vec3 acc, vec3 c, float w) {
    for (int i = 0; i < 3; i++) {
        if (w <= 0.0) return;
        acc[i] += c[i] * w;
    }
}
void main() {
    vec3 acc = vec3(0.05);
    float e1, e2;
    float s1 = shape(uv - vec2(0.35, 0.4), 0.27, e1);
    float s2 = shape(uv - vec2(0.7, 0.65), 0.2, e2);
    accumulate(acc, vec3(0.9, 0.3, 0.1), s1);
    accumulate(acc, vec3(0.1, 0.5, 0.8), s2);
    accumulate(acc, vec3(0.3), max(e1, e2) * 0.5);
    float n = hash(floor(uv * 8.0));
    color = vec4(clamp(acc, 0.0, 1.0), 0.5 + 0.4 * n);
}
