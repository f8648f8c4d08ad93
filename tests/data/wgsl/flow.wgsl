// Control flow: if/else, loops with break/continue/continuing, early returns, switch.
fn first_over(limit: f32, step: f32) -> f32 {
    var x = 0.0;
    loop {
        x += step;
        if (x > limit) {
            return x;
        }
        if (x > 100.0) {
            break;
        }
    }
    return -1.0;
}

fn classify(n: i32) -> i32 {
    var r = 0;
    switch n {
        case 0, 1: { r = 10; }
        case 2: { r = 20; }
        case 3: { r = 30; }
        default: { r = 99; }
    }
    return r;
}

@fragment
fn main(@location(0) v: vec4<f32>) -> @location(0) vec4<f32> {
    var odd_sum = 0;
    for (var i = 0; i < 10; i++) {
        if (i % 2 == 0) {
            continue;
        }
        if (i > i32(v.x * 10.0)) {
            break;
        }
        odd_sum += i;
    }
    var w = 0;
    var n = i32(v.y * 10.0);
    while (n > 0) {
        n -= 3;
        w += 1;
    }
    var branch = 0.0;
    if (v.z < 0.3) {
        branch = 1.0;
    } else if (v.z < 0.6) {
        branch = 2.0;
    } else {
        branch = 3.0;
    }
    let f = first_over(v.w * 3.0, 0.5);
    let c = classify(i32(v.x * 5.0));
    return vec4<f32>(f32(odd_sum) + f32(w) * 100.0, branch, f, f32(c));
}
