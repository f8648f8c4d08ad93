#version 330
// Minification: implicit LOD > 0 (uv*8 maps 128 texels onto 64 pixels) and explicit textureLod.
// The texture has no mipmaps, so both sample level 0 with the minification filter.
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    vec4 a = texture(tex0, uv * 8.0 + vec2(0.013, 0.029));
    vec4 b = textureLod(tex0, uv * 0.75 + 0.1, 2.5);
    vec4 c = textureLod(tex0, uv * 3.1, -1.0);
    color = mix(a, b, 0.35) * 0.7 + c * 0.3;
}
