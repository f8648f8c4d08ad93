#version 330
// filter: nearest
// Nearest-filtered texture() with REPEAT wrapping, rotated coordinates.
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    vec2 c = uv - 0.5;
    vec2 p = vec2(c.x * 0.866 - c.y * 0.5, c.x * 0.5 + c.y * 0.866) * 1.9 + 0.5;
    color = texture(tex0, p);
}
