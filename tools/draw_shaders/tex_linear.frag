#version 330
// Bilinear texture() magnified, with REPEAT wrapping across negative and >1 coordinates, times a constant.
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    vec2 p = uv * 1.37 - vec2(0.213, 0.171);
    color = texture(tex0, p) * k[0] + vec4(0.0, 0.0, 0.1, 0.0);
}
