#version 330
// textureGrad with explicit gradients, textureProj with a varying q, and textureLod at a fractional LOD.
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    vec4 g = textureGrad(tex0, uv * 1.3, vec2(0.02, 0.001), vec2(0.0, 0.05) * (1.0 + uv.x));
    float q = 1.0 + uv.x * 0.75 + uv.y * 0.25;
    vec4 p = textureProj(tex0, vec3(uv * 2.1 * q, q));
    vec4 l = textureLod(tex0, uv.yx + 0.3, 0.37);
    color = vec4(g.r, p.g, l.b, (g.a + p.a + l.a) / 3.0);
}
