// Math builtins in batches of four; the test decodes them by the selector k.
@group(0) @binding(0) var<uniform> sel: vec4<i32>;

@fragment
fn main(@location(0) v: vec4<f32>) -> @location(0) vec4<f32> {
    let x = v.x;
    let y = v.y;
    switch sel.x {
        case 0: { return vec4<f32>(abs(x - 0.5), min(x, y), max(x, y), clamp(x * 3.0 - 1.0, -0.25, 0.75)); }
        case 1: { return vec4<f32>(floor(x * 7.0 - 3.0), ceil(x * 7.0 - 3.0), round(x * 8.0 - 4.0), fract(x * 7.0 - 3.0)); }
        case 2: { return vec4<f32>(trunc(x * 7.0 - 3.0), sqrt(x), inverseSqrt(y + 0.25), exp(x)); }
        case 3: { return vec4<f32>(exp2(x * 3.0), log(y + 0.5), log2(y + 0.5), pow(x + 0.1, y + 0.2)); }
        case 4: { return vec4<f32>(sin(x * 6.0), cos(x * 6.0), tan(x), saturate(x * 2.0 - 0.5)); }
        case 5: { return vec4<f32>(atan(x * 4.0 - 2.0), atan2(y - 0.5, x - 0.5), mix(x, y, 0.25), step(0.5, x)); }
        case 6: { return vec4<f32>(smoothstep(0.2, 0.8, x), dot(v.xyz, v.wzy), length(v.xy), distance(v.xy, v.zw)); }
        case 7: { let c = cross(v.xyz, v.wzx); let n = normalize(v.xyz + 0.1); return vec4<f32>(c.x + c.y * c.z, n.x + n.z, fma(x, y, 0.5), sign(x - 0.5)); }
        case 8: { return vec4<f32>(radians(x * 90.0), degrees(y), f32(max(i32(x * 10.0), 3)), f32(min(u32(y * 10.0), 4u))); }
        default: { return vec4<f32>(-1.0); }
    }
}
