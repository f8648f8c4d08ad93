// Comparisons, select, boolean logic, any/all.
@fragment
fn main(@location(0) v: vec4<f32>) -> @location(0) vec4<f32> {
    let lt = v < vec4<f32>(0.5);
    let c0 = select(1.0, 2.0, v.x >= v.y && !(v.z == v.w));
    let c1 = select(vec2<f32>(3.0, 4.0), vec2<f32>(5.0, 6.0), lt.xy);
    let c2 = f32(any(lt)) + 2.0 * f32(all(lt)) + 4.0 * f32(v.x != v.y || v.z <= v.w);
    let i = i32(v.x * 4.0);
    let c3 = select(-1.0, 1.0, i > 1 && u32(i) < 3u);
    return vec4<f32>(c0, c1.x * 10.0 + c1.y, c2, c3);
}
