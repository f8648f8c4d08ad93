// WebGPU's framebuffer y points down: @builtin(position).y counts rows from the top of the
// picture and dpdy differentiates along increasing row. (softgpu --convention gl disagrees:
// see reference-images/wgsl/README.md.)
struct VsOut { @builtin(position) pos: vec4<f32>, @location(0) uv: vec2<f32> };
struct U { k0: vec4<f32>, k1: vec4<f32>, k2: vec4<f32>, k3: vec4<f32> };
@group(0) @binding(0) var<uniform> u: U;

@vertex fn vs(@location(0) pos: vec4<f32>, @location(1) uv: vec2<f32>) -> VsOut {
    return VsOut(pos, uv);
}

@fragment fn fs(in: VsOut) -> @location(0) vec4<f32> {
    let p = in.uv;
    let lin = p.x * 3.0 - p.y * 5.0;
    let f = sin(p.x * 9.0) * cos(p.y * 7.0) + p.x * p.y * 3.0;
    let fc = in.pos.xy / 64.0;
    return vec4<f32>(dpdy(lin) * 4.0 + 0.5, dpdyFine(f) * 6.0 + 0.5, fc.y, fc.x);
}
