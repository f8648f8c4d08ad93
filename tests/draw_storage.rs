//! `softgpu draw` with storage memory, from the outside and without the Slang library: a WGSL
//! vertex and fragment shader writing a read-write storage buffer (atomics, stores, a `discard`
//! before a write) and a storage image, and a TGSI program doing the same through `BUFFER[0]` /
//! `IMAGE[0]`, on both executors, the contents read back with `--storage-out`; and the errors
//! of the storage flags.

mod cli_support;

use cli_support::{softgpu, stderr, Scratch};

/// Writes each vertex's position at word 4 * vertex_index and counts, with atomics, the
/// fragments of the left half (discarded ones write nothing), storing each fragment's position
/// into the buffer and its colour into the image.
const WGSL: &str = "
struct Data { covered: atomic<u32>, right: atomic<u32>, max_x: atomic<u32>, pad: u32,
              vertices: array<vec4<f32>, 6>, pixels: array<vec4<f32>> };
@group(0) @binding(0) var<storage, read_write> data: Data;
@group(0) @binding(1) var canvas: texture_storage_2d<rgba8unorm, write>;
struct VOut { @builtin(position) position: vec4<f32> };
@vertex fn vs(@location(0) position: vec4<f32>, @builtin(vertex_index) i: u32) -> VOut {
    data.vertices[i] = position;
    return VOut(position);
}
@fragment fn fs(in: VOut) -> @location(0) vec4<f32> {
    let p = vec2<u32>(in.position.xy);
    atomicAdd(&data.covered, 1u);
    if p.x >= 2u { discard; }
    atomicAdd(&data.right, 1u);
    atomicMax(&data.max_x, p.x);
    data.pixels[p.y * 4u + p.x] = in.position;
    textureStore(canvas, vec2<i32>(p), vec4<f32>(f32(p.x) / 3.0, f32(p.y) / 3.0, 1.0, 0.5));
    return vec4<f32>(1.0);
}
";

const QUAD: &str = "\
-1 -1 0 1
 1 -1 0 1
-1  1 0 1
-1  1 0 1
 1 -1 0 1
 1  1 0 1
";

fn words(text: &str) -> Vec<u32> {
    text.split_whitespace()
        .map(|w| u32::from_str_radix(w.trim_start_matches("0x"), 16).unwrap())
        .collect()
}

fn floats(words: &[u32]) -> Vec<f32> {
    words.iter().map(|&w| f32::from_bits(w)).collect()
}

#[test]
fn wgsl_stages_write_a_storage_buffer_and_image_read_back_with_storage_out() {
    let s = Scratch::new();
    s.write("s.wgsl", WGSL);
    s.write("v.txt", QUAD);
    // 1 + 6 + 16 rows: the counters, the vertices, the pixels.
    s.write("data.txt", &"0 0 0 0\n".repeat(23));
    for exec in ["jit", "interp"] {
        let out = softgpu(&[
            "draw",
            "--vs",
            &s.arg("s.wgsl"),
            "--vs-entry",
            "vs",
            "--fs",
            &s.arg("s.wgsl"),
            "--fs-entry",
            "fs",
            "--vertices",
            &s.arg("v.txt"),
            "--size",
            "4x4",
            "--exec",
            exec,
            "--storage-buffer",
            &format!("data={}", s.arg("data.txt")),
            "--storage-image",
            "canvas=4x4",
            "--storage-out",
            &format!("data={}", s.arg("data_out.txt")),
            "--storage-out",
            &format!("canvas={}", s.arg("canvas_out.txt")),
            "--out",
            &s.arg("out.png"),
        ]);
        assert!(out.status.success(), "{exec}: {}", stderr(&out));
        let data = words(&std::fs::read_to_string(s.path("data_out.txt")).unwrap());
        assert_eq!(data.len(), 23 * 4, "{exec}: the buffer keeps its size");
        assert_eq!(&data[0..3], &[16, 8, 1], "{exec}: counters");
        let vertices = floats(&data[4..28]);
        for (k, line) in QUAD.lines().enumerate() {
            let want: Vec<f32> = line
                .split_whitespace()
                .map(|v| v.parse().unwrap())
                .collect();
            assert_eq!(&vertices[k * 4..k * 4 + 4], &want[..], "{exec}: vertex {k}");
        }
        let pixels = floats(&data[28..]);
        for y in 0..4 {
            for x in 0..4 {
                let p = &pixels[(y * 4 + x) * 4..(y * 4 + x) * 4 + 2];
                if x < 2 {
                    assert_eq!(p, [x as f32 + 0.5, y as f32 + 0.5], "{exec}: pixel {x},{y}");
                } else {
                    assert_eq!(p, [0.0, 0.0], "{exec}: discarded pixel {x},{y} wrote");
                }
            }
        }
        let canvas = floats(&words(
            &std::fs::read_to_string(s.path("canvas_out.txt")).unwrap(),
        ));
        assert_eq!(canvas.len(), 64, "{exec}");
        let unorm = |v: f32| (v * 255.0).round() / 255.0;
        for y in 0..4 {
            for x in 0..4 {
                let texel = &canvas[(y * 4 + x) * 4..(y * 4 + x) * 4 + 4];
                let want = if x < 2 {
                    [
                        unorm(x as f32 / 3.0),
                        unorm(y as f32 / 3.0),
                        1.0,
                        unorm(0.5),
                    ]
                } else {
                    [0.0; 4]
                };
                assert_eq!(texel, want, "{exec}: texel {x},{y}");
            }
        }
    }
}

#[test]
fn tgsi_programs_name_their_buffers_and_images_by_register() {
    let s = Scratch::new();
    s.write(
        "vs.tgsi",
        "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\n  0: MOV OUT[0], IN[0]\n  1: END\n",
    );
    s.write(
        "fs.tgsi",
        "FRAG
PROPERTY FS_COORD_ORIGIN UPPER_LEFT
PROPERTY FS_COORD_PIXEL_CENTER HALF_INTEGER
DCL IN[0], POSITION, LINEAR
DCL OUT[0], COLOR
DCL BUFFER[0]
DCL IMAGE[0], 2D, PIPE_FORMAT_R32_UINT, WR
DCL TEMP[0..1]
IMM[0] UINT32 {0, 1, 0, 0}
  0: ATOMUADD TEMP[0].x, BUFFER[0], IMM[0].xxxx, IMM[0].yyyy
  1: F2U TEMP[1].xy, IN[0].xyyy
  2: STORE IMAGE[0].x, TEMP[1].xyyy, TEMP[0].xxxx
  3: MOV OUT[0], IN[0]
  4: END
",
    );
    s.write("v.txt", QUAD);
    s.write("count.txt", "0 0 0 0\n");
    for exec in ["jit", "interp"] {
        let out = softgpu(&[
            "draw",
            "--vs",
            &s.arg("vs.tgsi"),
            "--fs",
            &s.arg("fs.tgsi"),
            "--vertices",
            &s.arg("v.txt"),
            "--size",
            "4x2",
            "--exec",
            exec,
            "--storage-buffer",
            &format!("BUFFER[0]={}", s.arg("count.txt")),
            "--storage-image",
            "IMAGE[0]=4x2",
            "--storage-out",
            &format!("BUFFER[0]={}", s.arg("count_out.txt")),
            "--storage-out",
            &format!("IMAGE[0]={}", s.arg("order.txt")),
            "--out",
            &s.arg("out.png"),
        ]);
        assert!(out.status.success(), "{exec}: {}", stderr(&out));
        let count = words(&std::fs::read_to_string(s.path("count_out.txt")).unwrap());
        assert_eq!(count, [8, 0, 0, 0], "{exec}");
        // Within a tile, fragments run in primitive order, then quad by quad: the first
        // triangle's quads, lanes in order, get the first counts.
        let order = words(&std::fs::read_to_string(s.path("order.txt")).unwrap());
        let mut red: Vec<u32> = order.iter().step_by(4).copied().collect();
        red.sort_unstable();
        assert_eq!(
            red,
            (0..8).collect::<Vec<u32>>(),
            "{exec}: every count once"
        );
    }
}

#[test]
fn storage_flags_name_what_is_wrong() {
    let s = Scratch::new();
    s.write("s.wgsl", WGSL);
    s.write("v.txt", QUAD);
    s.write("data.txt", "0 0 0 0\n");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "draw".to_string(),
            "--vs".into(),
            s.arg("s.wgsl"),
            "--vs-entry".into(),
            "vs".into(),
            "--fs".into(),
            s.arg("s.wgsl"),
            "--fs-entry".into(),
            "fs".into(),
            "--vertices".into(),
            s.arg("v.txt"),
            "--out".into(),
            s.arg("out.png"),
        ];
        args.extend(extra.iter().map(|a| a.to_string()));
        softgpu(&args)
    };
    for (extra, needles) in [
        (
            vec!["--storage-out".to_string(), "data".to_string()],
            vec!["--storage-out", "NAME=FILE.txt"],
        ),
        (
            vec![
                "--storage-out".to_string(),
                format!("data={}", s.arg("x.png")),
            ],
            vec!["--storage-out", "txt"],
        ),
        (
            vec![
                "--storage-out".to_string(),
                format!("data={}", s.arg("x.txt")),
            ],
            vec!["--storage-out data", "--storage-buffer data=DATA.txt"],
        ),
        (
            vec!["--storage-image".to_string(), "canvas=4".to_string()],
            vec!["--storage-image", "NAME=WxH"],
        ),
        (
            vec!["--storage-image".to_string(), "canvas=0x4".to_string()],
            vec!["--storage-image canvas", "texels"],
        ),
        (
            vec!["--storage-image".to_string(), "picture=4x4".to_string()],
            vec!["--storage-image picture", "IMAGE[0], canvas"],
        ),
        (
            vec![
                "--storage-buffer".to_string(),
                format!("dta={}", s.arg("data.txt")),
            ],
            vec!["--storage-buffer dta", "read-write: BUFFER[0], data"],
        ),
    ] {
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let out = run(&extra);
        cli_support::assert_failure(&out, 1, &needles);
    }
}
