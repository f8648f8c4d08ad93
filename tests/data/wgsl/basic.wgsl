struct Params {
    tint: vec4<f32>,
    scale: f32,
    offset: vec2<f32>,
    m: mat2x2<f32>,
    weights: array<vec4<f32>, 3>,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var tex: texture_2d<f32>;
@group(0) @binding(2) var samp: sampler;

fn helper(x: f32) -> f32 {
    if (x > 0.5) {
        return x * 2.0;
    }
    return x;
}

@fragment
fn main(@location(0) uv: vec2<f32>) -> @location(0) vec4<f32> {
    var acc = vec4<f32>(0.0);
    for (var i = 0; i < 3; i++) {
        acc += params.weights[i];
    }
    let c = textureSample(tex, samp, uv);
    return acc * params.scale + c * helper(uv.x) + vec4<f32>(params.m * uv, 0.0, 1.0);
}
