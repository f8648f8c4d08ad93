// Integer and bit operations: i32/u32 arithmetic, division and remainder of negatives, shifts,
// and/or/xor/not, countOneBits, firstLeadingBit, reverseBits, extractBits, conversions.
struct VsOut { @builtin(position) pos: vec4<f32>, @location(0) uv: vec2<f32> };
struct U { k0: vec4<f32>, k1: vec4<f32>, k2: vec4<f32>, k3: vec4<f32> };
@group(0) @binding(0) var<uniform> u: U;

@vertex fn vs(@location(0) pos: vec4<f32>, @location(1) uv: vec2<f32>) -> VsOut {
    return VsOut(pos, uv);
}

@fragment fn fs(in: VsOut) -> @location(0) vec4<f32> {
    let x = i32(in.uv.x * 64.0) - 20;
    let y = i32(in.uv.y * 64.0);
    let ux = u32(in.uv.x * 64.0);
    let uy = u32(in.uv.y * 64.0);
    let a = (x * 7 + y * 3) / 5 - (x % 7);
    let b = ((ux << 3u) ^ (uy * 5u)) | (ux & 9u);
    let c = countOneBits(b) + firstLeadingBit(b + 1u) + (reverseBits(ux) >> 26u);
    let e = extractBits(b, 2u, 5u) + u32(abs(a) % 11);
    let m = max(min(a, 40), -40) + i32(u.k1.y);
    return vec4<f32>(f32(a & 255) / 255.0, f32(c) / 24.0, f32(e) / 48.0, f32(m + 64) / 128.0);
}
