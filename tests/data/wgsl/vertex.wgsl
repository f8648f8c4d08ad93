struct VsOut {
    @builtin(position) pos: vec4<f32>,
    @location(0) uv: vec2<f32>,
    @location(3) tag: f32,
}

struct U {
    mvp: mat4x4<f32>,
}
@group(0) @binding(0) var<uniform> u: U;

@vertex
fn main(@location(0) p: vec3<f32>, @location(1) uv: vec2<f32>, @builtin(vertex_index) vi: u32) -> VsOut {
    var o: VsOut;
    o.pos = u.mvp * vec4<f32>(p, 1.0);
    o.uv = uv * 2.0;
    o.tag = f32(vi);
    return o;
}
