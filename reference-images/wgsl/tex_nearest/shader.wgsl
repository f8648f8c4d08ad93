// filter: nearest
// textureSample with a nearest sampler on rotated coordinates.
struct VsOut { @builtin(position) pos: vec4<f32>, @location(0) uv: vec2<f32> };
struct U { k0: vec4<f32>, k1: vec4<f32>, k2: vec4<f32>, k3: vec4<f32> };
@group(0) @binding(0) var<uniform> u: U;

@vertex fn vs(@location(0) pos: vec4<f32>, @location(1) uv: vec2<f32>) -> VsOut {
    return VsOut(pos, uv);
}
@group(0) @binding(1) var t: texture_2d<f32>;
@group(0) @binding(2) var s: sampler;

@fragment fn fs(in: VsOut) -> @location(0) vec4<f32> {
    let ang = 0.41;
    let m = mat2x2<f32>(cos(ang), sin(ang), -sin(ang), cos(ang));
    let c = m * (in.uv - 0.5) * 1.7 + vec2<f32>(0.013, 0.029);
    return textureSample(t, s, c);
}
