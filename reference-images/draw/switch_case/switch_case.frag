#version 330
// switch on a per-pixel integer with fallthrough, default and a break inside a case.
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    int sel = int(uv.x * 6.0) + 2 * int(uv.y * 2.0);
    vec3 c = vec3(0.1);
    switch (sel) {
    case 0:
        c = vec3(uv, 0.5);
        break;
    case 1:
        c.r = 0.7;
        // fallthrough
    case 2:
        c.g = uv.y * 0.9;
        break;
    case 3:
    case 4:
        c = vec3(0.2, 0.4, uv.x);
        if (uv.y > 0.25) break;
        c.b = 0.95;
        break;
    case 7:
        c = k[2].rgb;
        break;
    default:
        c = vec3(float(sel) / 8.0, 0.3, 1.0 - uv.x);
        break;
    }
    color = vec4(c, 1.0);
}
