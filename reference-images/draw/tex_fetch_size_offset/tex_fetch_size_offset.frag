#version 330
// texelFetch with per-pixel integer coordinates, textureSize, and textureOffset (constant offsets).
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    ivec2 sz = textureSize(tex0, 0);
    ivec2 tc = ivec2(uv * vec2(sz) * 0.9 + vec2(1.0, 0.5));
    vec4 f = texelFetch(tex0, tc, 0);
    vec4 o1 = textureOffset(tex0, uv * 0.83, ivec2(2, -1));
    vec4 o2 = textureOffset(tex0, uv * 1.21 + 0.05, ivec2(-3, 4));
    color = vec4(f.r, o1.g, o2.b, (f.a + o1.a + o2.a) / 3.0) * (float(sz.x + sz.y) / 32.0);
}
