// Integer arithmetic with WGSL's division rules, shifts, bit ops, conversions, bitcasts.
@fragment
fn main(@location(0) v: vec4<f32>) -> @location(0) vec4<f32> {
    let i = vec4<i32>(v * 10.0);          // truncation toward zero
    let u = vec4<u32>(abs(v) * 10.0);
    let d = (i.x - 5) / i.y;               // i.y may be 0 -> i.x - 5
    let r = i.z % i.y;                     // i.y may be 0 -> 0
    let q = u.x / (u.y & 3u);
    let sh = (i.w << 3u) ^ (i.x >> 1u);
    let bits = countOneBits(u.z) + reverseBits(u.w) % 7u + extractBits(u.x, 1u, 3u);
    let x = i32(-7.9) + i32(bitcast<u32>(1.0) >> 23u);
    let fi = f32(d) + f32(r) * 100.0;
    return vec4<f32>(fi, f32(q) + f32(sh) * 0.001, f32(bits), f32(x) + f32(u32(v.x > v.y)));
}
