@fragment
fn main(@location(0) v: vec4<f32>) -> @location(0) vec4<f32> {
    let p = v.x * v.y;
    return vec4<f32>(dpdx(p), dpdy(p), dpdxFine(p) + 10.0 * dpdyFine(p), fwidth(p));
}
