@fragment
fn main(@builtin(position) pos: vec4<f32>, @builtin(front_facing) front: bool, @location(2) @interpolate(flat) id: u32) -> @location(0) vec4<f32> {
    return vec4<f32>(pos.x, pos.y, select(-1.0, 1.0, front), f32(id));
}
