#version 330
// dFdx, dFdy and fwidth of non-linear functions (values differ inside each 2x2 quad).
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    float f = uv.x * uv.x * 20.0 + uv.y * 3.0;
    float g = sin(uv.y * 9.0) + uv.x * uv.y * 40.0;
    float dx = dFdx(f);
    float dy = dFdy(g);
    float fw = fwidth(f + g);
    color = vec4(dx * 0.8, 0.8 + dy * 0.9, fw * 0.4, 1.0);
}
