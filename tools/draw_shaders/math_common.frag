#version 330
// fract, mod, floor, ceil, round, roundEven, trunc, sign, abs, smoothstep, mix, step, clamp, min, max.
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    vec2 p = uv * 5.3 - 1.7;
    float a = fract(p.x) * 0.5 + mod(p.y, 1.3) * 0.3846;
    float b = (floor(p.x) + ceil(p.y) + 4.0) / 12.0 + round(p.x * 1.5) * 0.01 + roundEven(p.y * 2.0) * 0.01
              + trunc(p.x) * 0.02 + sign(p.y) * 0.03;
    float c = smoothstep(0.1, 0.9, uv.x) * 0.6 + step(0.4567, uv.y) * 0.3 + abs(p.x) * 0.02;
    vec3 m = mix(vec3(0.9, 0.1, 0.3), vec3(0.2, 0.8, 0.6), clamp(uv.y * 1.4 - 0.2, 0.0, 1.0));
    float d = max(min(m.x, uv.x + 0.2), 0.15) * 0.5 + m.z * 0.4;
    color = vec4(a, clamp(b, 0.0, 1.0), c, d);
}
