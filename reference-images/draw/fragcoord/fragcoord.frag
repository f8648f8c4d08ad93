#version 330
// gl_FragCoord (lower-left origin, pixel centres at .5): Mesa adds the window-position
// y transform as a state constant after k[].
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    vec2 fc = gl_FragCoord.xy;
    float checker = mod(floor(fc.x / 4.0) + floor(fc.y / 8.0), 2.0);
    color = vec4(fc.x / 64.0, fc.y / 64.0, 0.25 + 0.5 * checker, k[1].z * 4.0 + uv.y * 0.25);
}
