// dpdx/dpdy (of linear values, where coarse and fine agree), dpdxFine and fwidthFine of
// non-linear ones. Only |dpdy| is used: its sign depends on the framebuffer y direction, which
// frag_position_dpdy covers.
struct VsOut { @builtin(position) pos: vec4<f32>, @location(0) uv: vec2<f32> };
struct U { k0: vec4<f32>, k1: vec4<f32>, k2: vec4<f32>, k3: vec4<f32> };
@group(0) @binding(0) var<uniform> u: U;

@vertex fn vs(@location(0) pos: vec4<f32>, @location(1) uv: vec2<f32>) -> VsOut {
    return VsOut(pos, uv);
}

@fragment fn fs(in: VsOut) -> @location(0) vec4<f32> {
    let p = in.uv;
    let lin = p.x * 3.0 - p.y * 5.0;
    let dl = vec2<f32>(dpdx(lin), abs(dpdy(lin))) * 8.0;
    let f = sin(p.x * 9.0) * cos(p.y * 7.0) + p.x * p.y * 3.0;
    let dfx = dpdxFine(f) * 12.0;
    let w = fwidthFine(p.x * p.x * 20.0 + p.y * p.y * 9.0);
    let h = fwidthFine(f) * 6.0;
    return vec4<f32>(dl.x * 0.5 + 0.5 + dfx * 0.25, dl.y * 0.5, w, h + 0.2);
}
