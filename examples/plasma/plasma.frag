#version 330
// softgpu's bundled example: a plasma warped through a texture, with a loop, a branch and
// derivatives — compiled to TGSI by Mesa (see README.md here).
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    vec2 p = uv * 6.0 - 3.0;
    float v = 0.0;
    for (int i = 1; i <= 4; i++) {
        float fi = float(i);
        v += sin(p.x * fi * k[0].x + p.y * k[1].x / fi) / fi;
        p = vec2(p.y, -p.x) * 0.9 + k[2].xy;
    }
    vec3 base = 0.5 + 0.5 * cos(vec3(0.0, 2.1, 4.2) + v * 3.0);
    vec4 t = texture(tex0, uv * 2.0 + vec2(v * 0.05));
    vec3 c = mix(base, t.rgb, 0.25);
    if (length(uv - 0.5) > 0.45) c *= 0.4;
    float edge = clamp(fwidth(v) * 4.0, 0.0, 1.0);
    color = vec4(c * (1.0 - 0.5 * edge), 1.0);
}
