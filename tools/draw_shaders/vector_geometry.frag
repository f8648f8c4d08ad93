#version 330
// normalize, length, distance, dot, cross, reflect, refract, faceforward on per-pixel vectors.
in vec2 uv; uniform sampler2D tex0; uniform vec4 k[4]; out vec4 color;
void main() {
    vec3 n = normalize(vec3(uv.x - 0.5, uv.y - 0.5, 0.6));
    vec3 l = normalize(vec3(0.3, 0.7, 1.0) + k[2].xyz * 0.1);
    vec3 v = vec3(0.0, 0.0, 1.0);
    float diff = max(dot(n, l), 0.0);
    vec3 r = reflect(-l, n);
    float spec = pow(max(dot(r, v), 0.0), 12.0);
    vec3 c = cross(n, l);
    vec3 t = refract(-v, n, 0.75);
    vec3 ff = faceforward(n, vec3(uv.x - 0.3, 0.2, -0.5), v);
    color = vec4(diff * 0.8 + spec * 0.2,
                 length(c) * 0.9 + distance(uv, vec2(0.3)) * 0.1,
                 0.5 + t.x * 0.25 + ff.y * 0.2,
                 1.0);
}
