#version 330
// Signed and unsigned integer arithmetic: mul, div, mod, negative division, min/max/abs, conversions.
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    int x = int(uv.x * 64.0);
    int y = int(uv.y * 64.0);
    int a = x * 37 - y * 11;
    int q = a / 7;
    int r = (x * 13 + y * 5) % 9;
    int s = -(y + 3) / 4 + abs(a) / 50;
    uint ux = uint(x) * 2654435761u;
    uint h = (ux / 3u) % 251u;
    int m = max(min(q, 150), -100) + clamp(s, -20, 20);
    color = vec4(float(q + 100) / 400.0, float(r) / 8.0, float(h) / 250.0, float(m + 130) / 320.0);
}
