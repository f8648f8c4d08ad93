// Non-uniform discard: a ring and texel-driven holes; discarded pixels keep the clear colour.
struct VsOut { @builtin(position) pos: vec4<f32>, @location(0) uv: vec2<f32> };
struct U { k0: vec4<f32>, k1: vec4<f32>, k2: vec4<f32>, k3: vec4<f32> };
@group(0) @binding(0) var<uniform> u: U;

@vertex fn vs(@location(0) pos: vec4<f32>, @location(1) uv: vec2<f32>) -> VsOut {
    return VsOut(pos, uv);
}

@group(0) @binding(1) var t: texture_2d<f32>;

@fragment fn fs(in: VsOut) -> @location(0) vec4<f32> {
    let d = distance(in.uv, vec2<f32>(0.47, 0.53));
    if (d > 0.213 && d < 0.311) { discard; }
    let texel = textureLoad(t, vec2<i32>(in.uv * 16.0), 0);
    if (texel.r > 0.8) { discard; }
    return vec4<f32>(texel.gb, d, 1.0);
}
