// textureLoad with integer coordinates and textureDimensions.
struct VsOut { @builtin(position) pos: vec4<f32>, @location(0) uv: vec2<f32> };
struct U { k0: vec4<f32>, k1: vec4<f32>, k2: vec4<f32>, k3: vec4<f32> };
@group(0) @binding(0) var<uniform> u: U;

@vertex fn vs(@location(0) pos: vec4<f32>, @location(1) uv: vec2<f32>) -> VsOut {
    return VsOut(pos, uv);
}

@group(0) @binding(1) var t: texture_2d<f32>;

@fragment fn fs(in: VsOut) -> @location(0) vec4<f32> {
    let dims = vec2<i32>(textureDimensions(t));
    let xy = vec2<i32>(in.uv * vec2<f32>(dims) * 1.5) - vec2<i32>(3, 5);
    let wrapped = ((xy % dims) + dims) % dims;
    let a = textureLoad(t, wrapped, 0);
    let b = textureLoad(t, vec2<i32>(dims.x - 1 - wrapped.y, wrapped.x), 0);
    return mix(a, b.gbra, 0.25) + vec4<f32>(f32(dims.x) / 256.0, 0.0, 0.0, 0.0);
}
