// Uniform arrays and structs, local arrays and structs with constant and dynamic indices.
struct Light {
    color: vec3<f32>,
    power: f32,
}
struct U {
    count: i32,
    bias: f32,
    lights: array<Light, 3>,
    k: array<vec4<f32>, 2>,
}
@group(0) @binding(0) var<uniform> u: U;

struct Pair {
    a: f32,
    b: vec2<f32>,
}

const WEIGHTS = array<f32, 5>(0.1, 0.2, 0.4, 0.2, 0.1);

@fragment
fn main(@location(0) v: vec4<f32>) -> @location(0) vec4<f32> {
    var sum = vec3<f32>(0.0);
    for (var i = 0; i < u.count; i++) {
        sum += u.lights[i].color * u.lights[i].power;
    }
    let j = i32(v.x * 4.99);
    var local: array<Pair, 4>;
    for (var i = 0; i < 4; i++) {
        local[i].a = f32(i) * v.y;
        local[i].b = vec2<f32>(f32(i), WEIGHTS[i + 1]);
    }
    local[j % 4].b.y = 9.0;
    var vec = v;
    vec[j % 4] = 7.0;
    let w = WEIGHTS[j] + u.k[j % 2][j % 4];
    return vec4<f32>(sum.x + sum.y * 10.0 + sum.z * 100.0 + u.bias, local[j % 4].a + local[(j + 1) % 4].b.y, w, vec[0] + vec[1] * 10.0 + vec[2] * 100.0 + vec[3] * 1000.0);
}
