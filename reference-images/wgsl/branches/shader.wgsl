// Nested per-pixel if/else (non-uniform inside quads) and select().
struct VsOut { @builtin(position) pos: vec4<f32>, @location(0) uv: vec2<f32> };
struct U { k0: vec4<f32>, k1: vec4<f32>, k2: vec4<f32>, k3: vec4<f32> };
@group(0) @binding(0) var<uniform> u: U;

@vertex fn vs(@location(0) pos: vec4<f32>, @location(1) uv: vec2<f32>) -> VsOut {
    return VsOut(pos, uv);
}

@fragment fn fs(in: VsOut) -> @location(0) vec4<f32> {
    let p = in.uv;
    var c = vec4<f32>(0.1, 0.2, 0.3, 1.0);
    if (p.x < 0.37) {
        if (p.y < 0.52) {
            c = vec4<f32>(p.x * 2.0, 0.9, p.y, 1.0);
        } else {
            c = vec4<f32>(0.8, p.y * 0.5, 0.2, 0.75);
        }
    } else if (p.x + p.y > 1.13) {
        c = u.k2 + vec4<f32>(p * 0.3, 0.0, 0.5);
    } else {
        let d = distance(p, vec2<f32>(0.6, 0.3));
        if (d < 0.21) { c = vec4<f32>(1.0 - d * 3.0, 0.0, d, 1.0); } else { c.g = fract(d * 5.0); }
    }
    let stripe = (u32(p.x * 20.0) + u32(p.y * 13.0)) % 2u == 0u;
    c.b = select(c.b, 1.0 - c.b, stripe);
    return c;
}
