#version 330
// Dynamically indexed local array and dynamically indexed uniform array k[].
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    float tab[6] = float[6](0.11, 0.93, 0.42, 0.27, 0.66, 0.05);
    vec3 pal[4];
    for (int i = 0; i < 4; i++) pal[i] = vec3(float(i) * 0.25, 1.0 - float(i) * 0.2, tab[i + 1]);
    int i0 = int(uv.x * 5.99);
    int i1 = int(uv.y * 3.99);
    int ik = int(uv.x * 4.0);
    vec4 kk = k[ik];
    tab[i1] = uv.x;
    float a = tab[i0] * 0.5 + tab[5 - i1] * 0.5;
    vec3 p = pal[(i0 + i1) & 3];
    color = vec4(a, p.y * 0.5 + fract(kk.x * 0.13 + kk.y * 0.07) * 0.5, p.z, clamp(abs(kk.z) + kk.w * 0.1, 0.0, 1.0));
}
