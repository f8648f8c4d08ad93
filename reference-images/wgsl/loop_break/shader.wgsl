// A loop with a data-dependent break, a for loop with continue, and a while loop.
struct VsOut { @builtin(position) pos: vec4<f32>, @location(0) uv: vec2<f32> };
struct U { k0: vec4<f32>, k1: vec4<f32>, k2: vec4<f32>, k3: vec4<f32> };
@group(0) @binding(0) var<uniform> u: U;

@vertex fn vs(@location(0) pos: vec4<f32>, @location(1) uv: vec2<f32>) -> VsOut {
    return VsOut(pos, uv);
}

@fragment fn fs(in: VsOut) -> @location(0) vec4<f32> {
    let p = in.uv;
    var acc = 0.0;
    var i = 0;
    loop {
        if (i >= 20) { break; }
        acc += f32(i) * 0.1 * p.x;
        if (acc > p.y * 4.3 + 0.01) { break; }
        i++;
    }
    var odd = 0.0;
    for (var j = 0; j < 12; j++) {
        if (j % 3 == 1) { continue; }
        odd += sin(f32(j) * p.y) * 0.1;
    }
    var w = p.x + 0.05;
    var n = 0u;
    while (w < u.k0.x) { w *= 1.37; n += 1u; }
    return vec4<f32>(acc * 0.25, f32(i) / 20.0, odd * 0.5 + 0.5, f32(n) / 12.0);
}
