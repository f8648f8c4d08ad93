// textureSample with a linear sampler: magnification, REPEAT across negative and >1 coordinates.
struct VsOut { @builtin(position) pos: vec4<f32>, @location(0) uv: vec2<f32> };
struct U { k0: vec4<f32>, k1: vec4<f32>, k2: vec4<f32>, k3: vec4<f32> };
@group(0) @binding(0) var<uniform> u: U;

@vertex fn vs(@location(0) pos: vec4<f32>, @location(1) uv: vec2<f32>) -> VsOut {
    return VsOut(pos, uv);
}
@group(0) @binding(1) var t: texture_2d<f32>;
@group(0) @binding(2) var s: sampler;

@fragment fn fs(in: VsOut) -> @location(0) vec4<f32> {
    let c = in.uv * 2.5 - vec2<f32>(0.7, 0.45);
    let a = textureSample(t, s, c);
    let b = textureSample(t, s, in.uv * 0.6 + 0.11);
    return a * u.k0 * 0.7 + b * 0.3;
}
