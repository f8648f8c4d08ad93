// Float arithmetic, swizzles, splats, negation, division and modulo.
@fragment
fn main(@location(0) v: vec4<f32>) -> @location(0) vec4<f32> {
    let a = v.xy * 2.0 + v.zw;
    let b = -v.wzyx / vec4<f32>(2.0, 4.0, 8.0, 0.5);
    let m = v.x % 0.75;
    let s = vec3<f32>(v.y).xzy - v.xyz;
    return vec4<f32>(a.y - a.x, b.x + b.w, m, s.z * s.x);
}
