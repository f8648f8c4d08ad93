// Matrices from a uniform buffer (mat2x2 columns are 8 bytes apart) and built locally.
struct U {
    m2: mat2x2<f32>,
    m3: mat3x3<f32>,
    m4: mat4x4<f32>,
}
@group(0) @binding(0) var<uniform> u: U;

@fragment
fn main(@location(0) v: vec4<f32>) -> @location(0) vec4<f32> {
    let a = u.m2 * v.xy;
    let b = v.xyz * u.m3;
    let c = (u.m4 * transpose(u.m4)) * v;
    let local = mat2x2<f32>(v.x, v.y, v.z, v.w) * 2.0;
    let d = (local * u.m2)[1];
    return vec4<f32>(a.x + a.y * 10.0, b.x - b.z, c.w + c.y, d.x + d.y * 0.5);
}
