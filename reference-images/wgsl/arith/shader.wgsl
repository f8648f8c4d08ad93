// Float arithmetic and math builtins on the interpolated uv and the uniform buffer.
struct VsOut { @builtin(position) pos: vec4<f32>, @location(0) uv: vec2<f32> };
struct U { k0: vec4<f32>, k1: vec4<f32>, k2: vec4<f32>, k3: vec4<f32> };
@group(0) @binding(0) var<uniform> u: U;

@vertex fn vs(@location(0) pos: vec4<f32>, @location(1) uv: vec2<f32>) -> VsOut {
    return VsOut(pos, uv);
}

@fragment fn fs(in: VsOut) -> @location(0) vec4<f32> {
    let p = in.uv;
    let r = fract(p.x * 3.7 + 0.13) * u.k0.x;
    let g = smoothstep(0.2, 0.8, p.y) * u.k0.y + pow(p.x + 0.1, 2.2) * 0.5;
    let b = clamp(sqrt(p.x * p.y) * 1.3, 0.0, 1.0) * 0.5 + exp2(-p.x * 3.0) * 0.25 + log2(1.0 + p.y) * 0.25;
    let q = normalize(vec3<f32>(p - 0.45, 0.3));
    let a = mix(0.25, 1.0, abs(sin(p.x * 6.0) * cos(p.y * 5.0)));
    let d = dot(q, u.k2.xyz) * 0.5 + length(p - vec2<f32>(0.3, 0.7)) * 0.25;
    return vec4<f32>(r, g * 0.8, b * 0.5 + d * 0.5, a * max(floor(p.y * 4.0) * 0.25 + 0.1, 0.3));
}
