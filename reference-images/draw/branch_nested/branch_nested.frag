#version 330
// Nested, per-pixel (non-uniform within quads) if/else chains on data from uv and the texture.
// Conditions read exact texel values (texelFetch) so no filtered value sits on a threshold.
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    vec4 t = texture(tex0, uv);
    vec4 tf = texelFetch(tex0, ivec2(uv * 16.0), 0);
    vec3 c;
    if (uv.x + 0.37 * uv.y > 0.5123) {
        if (tf.r > 0.4922) {
            c = vec3(t.g, uv.y, 0.25);
        } else if (tf.b < 0.3157) {
            c = vec3(0.8, t.r * 0.5, uv.x);
        } else {
            c = vec3(uv.x * uv.y, 0.1, t.b);
        }
    } else {
        float m = fract(uv.x * 7.31 + uv.y * 3.17);
        if (m < 0.3377) {
            c = vec3(m, 0.6, 0.2) * k[0].rgb;
        } else {
            c = vec3(0.15, m * 0.75, t.a);
        }
    }
    color = vec4(c, 1.0);
}
