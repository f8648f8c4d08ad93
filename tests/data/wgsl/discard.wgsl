@fragment
fn main(@location(0) v: vec4<f32>) -> @location(0) vec4<f32> {
    if (v.x < 0.5) {
        discard;
    }
    return v;
}
