@group(0) @binding(0) var<uniform> sel: vec4<i32>;
@group(0) @binding(3) var t: texture_2d<f32>;
@group(0) @binding(4) var s: sampler;

@fragment
fn main(@location(0) v: vec4<f32>) -> @location(0) vec4<f32> {
    switch sel.x {
        case 0: { return textureSample(t, s, v.xy); }
        case 1: { return textureSampleLevel(t, s, v.xy, 2.5); }
        case 2: { return textureSampleBias(t, s, v.xy, 1.5); }
        case 3: { return textureSampleGrad(t, s, v.xy, vec2<f32>(0.25, 0.0), vec2<f32>(0.0, 0.5)); }
        case 4: { return textureSample(t, s, v.xy, vec2<i32>(2, -3)); }
        case 5: { return textureLoad(t, vec2<i32>(v.xy * 8.0), 1); }
        case 6: { let d = textureDimensions(t); let l = textureNumLevels(t); return vec4<f32>(f32(d.x), f32(d.y), f32(l), 0.0); }
        default: { return vec4<f32>(-1.0); }
    }
}
