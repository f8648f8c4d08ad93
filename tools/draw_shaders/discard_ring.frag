#version 330
// Non-uniform discard (a ring and a texture-driven hole pattern); discarded pixels stay (0,0,0,0).
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    vec2 d = uv - vec2(0.5123, 0.4871);
    float r2 = dot(d, d);
    if (r2 > 0.1913 || r2 < 0.0311) discard;
    vec4 t = texture(tex0, uv * 2.0);
    // exact texel values decide, so no filtered value sits on the threshold
    if (texelFetch(tex0, ivec2(uv * 32.0) & 15, 0).g < 0.2020 && uv.x > 0.5) discard;
    color = vec4(t.rgb * 0.8 + 0.1, 0.75);
}
