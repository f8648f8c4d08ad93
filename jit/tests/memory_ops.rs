//! Loads, stores and atomics of storage buffers and images in both executors: which lanes write
//! (helper and killed lanes never do), robust bounds, atomics from every lane of a quad, image
//! formats, the text form and its errors, and the JIT against the interpreter on random
//! addresses and values.

// Lane-indexed loops mirror the [channel][lane] layout.
#![allow(clippy::needless_range_loop)]

mod splitmix;

use softgpu_jit::codegen::JitShader;
use softgpu_jit::exec::{
    NoTextures, QuadBatch, QuadIo, QuadShader, QuadVec4, ShaderResources, StorageBindings,
    StorageBuffer, StorageImage,
};
use softgpu_jit::interp::Interpreter;
use softgpu_jit::ir::text::{parse_program, print_program};
use softgpu_jit::ir::validate::{parse_and_validate, validate};
use softgpu_jit::ir::Program;
use splitmix::Rng;

fn program(text: &str) -> Program {
    let p = parse_program(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    if let Err(errors) = validate(&p) {
        panic!("{errors:?}\n{text}");
    }
    p
}

/// Both executors of `text`.
fn executors(text: &str) -> Vec<(&'static str, Box<dyn QuadShader>)> {
    let p = program(text);
    vec![
        (
            "interpreter",
            Box::new(Interpreter::new(&p).expect("decodes")),
        ),
        ("jit", Box::new(JitShader::compile(&p).expect("compiles"))),
    ]
}

/// Per-lane input: lane l holds `x[l]`, `y[l]`, `z[l]`, `w[l]` (raw bits).
fn lanes(x: [u32; 4], y: [u32; 4], z: [u32; 4], w: [u32; 4]) -> QuadVec4 {
    [x, y, z, w]
}

/// Runs one quad with `input` as IN[0] and the given storage; returns OUT[0] and the kill mask.
fn shade(
    shader: &dyn QuadShader,
    input: QuadVec4,
    live: u8,
    buffers: &[StorageBuffer],
    images: &[StorageImage],
) -> (QuadVec4, u8) {
    let buffers: Vec<&StorageBuffer> = buffers.iter().collect();
    let images: Vec<&StorageImage> = images.iter().collect();
    let mut outs = vec![[[0u32; 4]; 4]; 1];
    let res = ShaderResources {
        constants: &[],
        textures: &NoTextures,
        storage: StorageBindings {
            buffers: &buffers,
            images: &images,
        },
    };
    let mut io = QuadIo {
        inputs: &[input],
        system_values: &[],
        outputs: &mut outs,
        live,
    };
    let killed = shader.shade_quad(&res, &mut io).expect("runs");
    (outs[0], killed)
}

const STORE_LANE: &str = "FRAG
DCL IN[0], GENERIC[0], CONSTANT
DCL OUT[0], COLOR
DCL BUFFER[0]
0: STORE BUFFER[0].xy, IN[0].xxxx, IN[0].yzzz
1: MOV OUT[0], IN[0]
2: END
";

#[test]
fn helper_lanes_do_not_store() {
    for (name, shader) in executors(STORE_LANE) {
        let buffer = [StorageBuffer::new(&[0; 8])];
        // Lane l writes (10 + l, 20 + l) at words 2l, 2l + 1; lane 2 is a helper.
        let input = lanes([0, 8, 16, 24], [10, 11, 12, 13], [20, 21, 22, 23], [0; 4]);
        shade(&*shader, input, 0b1011, &buffer, &[]);
        assert_eq!(
            buffer[0].to_words(),
            [10, 20, 11, 21, 0, 0, 13, 23],
            "{name}"
        );
    }
}

#[test]
fn killed_lanes_do_not_store_and_their_loads_still_run() {
    let text = "FRAG
DCL IN[0], GENERIC[0], CONSTANT
DCL OUT[0], COLOR
DCL BUFFER[0]
DCL TEMP[0]
0: KILL_IF IN[0].wwww
1: STORE BUFFER[0].x, IN[0].xxxx, IN[0].yyyy
2: LOAD TEMP[0].x, BUFFER[0], IN[0].zzzz
3: MOV OUT[0], TEMP[0].xxxx
4: END
";
    for (name, shader) in executors(text) {
        let buffer = [StorageBuffer::new(&[0, 0, 0, 0, 77])];
        let minus = (-1.0f32).to_bits();
        let input = lanes([0, 4, 8, 12], [1, 2, 3, 4], [16; 4], [0, minus, 0, 0]);
        let (out, killed) = shade(&*shader, input, 0xF, &buffer, &[]);
        assert_eq!(killed, 0b0010, "{name}");
        assert_eq!(buffer[0].to_words(), [1, 0, 3, 4, 77], "{name}");
        assert_eq!(out[0], [77; 4], "{name}: every lane loads");
    }
}

#[test]
fn accesses_past_the_end_read_zero_and_write_nothing() {
    let text = "FRAG
DCL IN[0], GENERIC[0], CONSTANT
DCL OUT[0], COLOR
DCL BUFFER[0]
DCL BUFFER[1]
DCL TEMP[0]
0: STORE BUFFER[0].xyzw, IN[0].xxxx, IN[0].yyyy
1: LOAD TEMP[0], BUFFER[0], IN[0].xxxx
2: STORE BUFFER[1].x, IN[0].xxxx, IN[0].yyyy
3: MOV OUT[0], TEMP[0]
4: END
";
    for (name, shader) in executors(text) {
        let buffer = [StorageBuffer::new(&[5, 6, 7])];
        // Lane 0: words 1..=4 (4 is past the end); lane 1: a huge offset; lane 2: unaligned
        // offset 9 is word 2; lane 3: not live.
        let input = lanes([4, 0xFFFF_FFFC, 9, 0], [9; 4], [0; 4], [0; 4]);
        let (out, _) = shade(&*shader, input, 0b0111, &buffer, &[]);
        assert_eq!(buffer[0].to_words(), [5, 9, 9], "{name}");
        assert_eq!(
            [out[0][0], out[1][0], out[2][0], out[3][0]],
            [9, 9, 0, 0],
            "{name}: lane 0 reads words 1..=4"
        );
        assert_eq!(
            [out[0][1], out[1][1], out[2][1], out[3][1]],
            [0; 4],
            "{name}"
        );
    }
}

#[test]
fn atomics_from_every_lane_combine_in_lane_order() {
    let text = "FRAG
DCL IN[0], GENERIC[0], CONSTANT
DCL OUT[0], COLOR
DCL BUFFER[0]
DCL TEMP[0..3]
IMM[0] UINT32 {0, 4, 8, 12}
0: ATOMUADD TEMP[0].x, BUFFER[0], IMM[0].xxxx, IN[0].xxxx
1: ATOMIMIN TEMP[1].x, BUFFER[0], IMM[0].yyyy, IN[0].yyyy
2: ATOMCAS TEMP[2].x, BUFFER[0], IMM[0].zzzz, IN[0].zzzz, IN[0].wwww
3: ATOMXCHG TEMP[3].x, BUFFER[0], IMM[0].wwww, IN[0].xxxx
4: MOV OUT[0].x, TEMP[0].xxxx
5: MOV OUT[0].y, TEMP[1].xxxx
6: MOV OUT[0].z, TEMP[2].xxxx
7: MOV OUT[0].w, TEMP[3].xxxx
8: END
";
    for (name, shader) in executors(text) {
        let buffer = [StorageBuffer::new(&[100, 5, 7, 0])];
        let neg = |x: i32| x as u32;
        let input = lanes(
            [1, 2, 3, 4],
            [neg(3), neg(-2), 9, neg(-8)],
            [7, 7, 50, 50],
            [50, 60, 70, 80],
        );
        let (out, _) = shade(&*shader, input, 0b1111, &buffer, &[]);
        // Add: 100 + 1 + 2 + 3 + 4; the lanes see the running sums.
        assert_eq!(out[0], [100, 101, 103, 106], "{name}");
        // Signed min: 5, then 3, then -2, -2, then -8.
        assert_eq!(out[1], [5, 3, neg(-2), neg(-2)], "{name}");
        // CAS: lane 0 swaps 7 for 50; lane 1 compares 7 with 50 and fails; lanes 2 and 3
        // compare 50: lane 2 swaps in 70, lane 3 sees 70.
        assert_eq!(out[2], [7, 50, 50, 70], "{name}");
        assert_eq!(out[3], [0, 1, 2, 3], "{name}");
        assert_eq!(buffer[0].to_words(), [110, neg(-8), 70, 4], "{name}");
    }
}

#[test]
fn atomics_skip_helper_lanes() {
    let text = "FRAG
DCL IN[0], GENERIC[0], CONSTANT
DCL OUT[0], COLOR
DCL BUFFER[0]
IMM[0] UINT32 {0, 1, 0, 0}
0: ATOMUADD OUT[0].x, BUFFER[0], IMM[0].xxxx, IMM[0].yyyy
1: END
";
    for (name, shader) in executors(text) {
        let buffer = [StorageBuffer::new(&[0])];
        shade(&*shader, [[0; 4]; 4], 0b0101, &buffer, &[]);
        assert_eq!(buffer[0].to_words(), [2], "{name}");
    }
}

#[test]
fn images_keep_what_their_format_holds() {
    let text = "FRAG
DCL IN[0], GENERIC[0], CONSTANT
DCL OUT[0], COLOR
DCL IMAGE[0], 2D, PIPE_FORMAT_R8G8B8A8_UNORM, WR
DCL IMAGE[1], 2D, PIPE_FORMAT_R32_UINT, WR
DCL TEMP[0..1]
IMM[0] FLT32 {0.5, -1.0, 2.0, 0.1}
IMM[1] UINT32 {0, 1, 0, 0}
0: STORE IMAGE[0], IN[0], IMM[0]
1: LOAD TEMP[0], IMAGE[0], IN[0]
2: STORE IMAGE[1], IN[0], IMM[1].yyyy
3: ATOMUADD TEMP[1].x, IMAGE[1], IN[0], IMM[1].yyyy
4: LOAD TEMP[1].yzw, IMAGE[1], IN[0]
5: MOV OUT[0], TEMP[0]
6: MOV OUT[0].xw, TEMP[1].xxxw
7: END
";
    for (name, shader) in executors(text) {
        let images = [
            StorageImage::new(2, 2, 1, &[]),
            StorageImage::new(2, 2, 1, &[9; 16]),
        ];
        // Lanes 0..=2 address texels (0,0), (1,0), (0,1); lane 3 is outside (x = -1).
        let input = lanes([0, 1, 0, u32::MAX], [0, 0, 1, 0], [0; 4], [0; 4]);
        let (out, _) = shade(&*shader, input, 0xF, &[], &images);
        let half = (128.0f32 / 255.0).to_bits();
        let tenth = (26.0f32 / 255.0).to_bits();
        let texel = [half, 0, 1.0f32.to_bits(), tenth];
        let words = images[0].texels.to_words();
        assert_eq!(&words[0..4], &texel, "{name}: rounded to 1/255");
        assert_eq!(&words[12..16], &[0; 4], "{name}: texel (1,1) untouched");
        assert_eq!(out[1][0], 0, "{name}");
        assert_eq!(out[2][2], 1.0f32.to_bits(), "{name}");
        assert_eq!(
            [out[0][3], out[1][3], out[2][3], out[3][3]],
            [0, 0, 0, 0],
            "{name}: a lane outside reads zero"
        );
        // R32_UINT keeps only red: the store wrote 1, the atomic returned it and left 2.
        assert_eq!(out[0][..3], [1, 1, 1], "{name}");
        let r32 = images[1].texels.to_words();
        assert_eq!(&r32[0..4], &[2, 9, 9, 9], "{name}");
        assert_eq!(out[3][0], 1, "{name}: a missing alpha loads as 1");
    }
}

#[test]
fn memory_instructions_print_and_parse_back() {
    let text = "FRAG
DCL IMAGE[0], 2D_ARRAY, PIPE_FORMAT_R32G32B32A32_FLOAT, WR
DCL IMAGE[1], 1D, PIPE_FORMAT_R32_SINT
DCL BUFFER[0]
DCL TEMP[0]
IMM[0] UINT32 {0, 1, 0, 0}
  0: STORE BUFFER[0].xy, IMM[0].xxxx, TEMP[0]
  1: LOAD TEMP[0], IMAGE[1], IMM[0].xxxx
  2: ATOMCAS TEMP[0].x, BUFFER[0], IMM[0].xxxx, IMM[0].yyyy, TEMP[0].xxxx
  3: STORE IMAGE[0], IMM[0], TEMP[0]
  4: END
";
    let p = program(text);
    let printed = print_program(&p);
    assert_eq!(parse_program(&printed).expect("parses back"), p);
    assert!(printed.contains("DCL IMAGE[0], 2D_ARRAY, PIPE_FORMAT_R32G32B32A32_FLOAT, WR"));
    assert!(printed.contains("DCL IMAGE[1], 1D, PIPE_FORMAT_R32_SINT\n"));
}

#[test]
fn malformed_memory_instructions_are_errors() {
    let header = "FRAG\nDCL BUFFER[0]\nDCL IMAGE[0], 2D, PIPE_FORMAT_R32G32B32A32_FLOAT\n\
                  DCL TEMP[0]\nDCL OUT[0], COLOR\n";
    for (body, expected) in [
        ("STORE TEMP[0], TEMP[0], TEMP[0]", "resource operand"),
        ("MOV TEMP[0], BUFFER[0]", "only read as the resource"),
        ("ADD BUFFER[0], TEMP[0], TEMP[0]", "only STORE writes"),
        ("STORE IMAGE[0], TEMP[0], TEMP[0]", "not declared writable"),
        ("ATOMUADD TEMP[0], IMAGE[0], TEMP[0], TEMP[0]", "R32_UINT"),
        (
            "LOAD TEMP[0], BUFFER[TEMP[0].x], TEMP[0]",
            "addressed directly",
        ),
        (
            "LOAD TEMP[0], BUFFER[3], TEMP[0]",
            "BUFFER[3] is not declared",
        ),
    ] {
        let text = format!("{header}0: {body}\n1: END\n");
        let errors = parse_and_validate(&text).expect_err(body).join("\n");
        assert!(errors.contains(expected), "{body}: {errors}");
    }
    for bad in [
        "FRAG\nDCL IMAGE[0], 2D\n0: END\n",
        "FRAG\nDCL IMAGE[0], 2D, RGBA8\n0: END\n",
        "FRAG\nDCL IMAGE[0], CUBE, PIPE_FORMAT_R32_UINT\n0: END\n",
        "FRAG\nDCL IMAGE[0]\n0: END\n",
        "FRAG\nDCL BUFFER[0]\n0: STORE BUFFER[0], TEMP[0]\n1: END\n",
        "FRAG\nDCL BUFFER[0]\n0: ATOMCAS TEMP[0], BUFFER[0], TEMP[0], TEMP[0]\n1: END\n",
    ] {
        assert!(parse_and_validate(bad).is_err(), "{bad}");
    }
}

/// A program of random stores, loads and atomics at addresses from the inputs, under a branch
/// and a kill, run over many quads by both executors on their own copies of the memory.
#[test]
fn the_jit_matches_the_interpreter_on_random_memory_programs() {
    let mut rng = Rng(0x5eed_0032);
    let ops = [
        "STORE BUFFER[0].xy, {a}, {v}",
        "STORE BUFFER[0].x, {a}, {v}",
        "LOAD TEMP[1], BUFFER[0], {a}",
        "ATOMUADD TEMP[2].x, BUFFER[0], {a}, {v}",
        "ATOMUMAX TEMP[2].y, BUFFER[0], {a}, {v}",
        "ATOMCAS TEMP[2].z, BUFFER[0], {a}, {v}, TEMP[1].xxxx",
        "ATOMXOR TEMP[2].w, BUFFER[0], {a}, {v}",
        "STORE IMAGE[0].xyzw, {c}, {v}",
        "LOAD TEMP[3], IMAGE[0], {c}",
        "ADD TEMP[0], TEMP[0], IN[0].yzwx",
    ];
    for round in 0..12 {
        let mut body = Vec::new();
        let mut depth = 0;
        for _ in 0..12 {
            let op = rng.pick(&ops);
            let line = op
                .replace(
                    "{a}",
                    rng.pick(&["IN[0].xxxx", "TEMP[0].xxxx", "IN[0].zzzz"]),
                )
                .replace("{v}", rng.pick(&["IN[0].yyyy", "TEMP[1]", "TEMP[2].xyxy"]))
                .replace("{c}", rng.pick(&["IN[0].zwzw", "TEMP[0].yxyx"]));
            body.push(line);
            if depth == 0 && rng.chance(20) {
                body.push("UIF IN[0].wwww".into());
                depth += 1;
            } else if depth == 1 && rng.chance(30) {
                body.push("ENDIF".into());
                depth -= 1;
            }
            if rng.chance(10) {
                body.push("KILL_IF IN[0].wwww".into());
            }
        }
        if depth == 1 {
            body.push("ENDIF".into());
        }
        body.push("MOV OUT[0], TEMP[1]".into());
        body.push("ADD OUT[0], TEMP[2], TEMP[3]".into());
        body.push("END".into());
        let text = format!(
            "FRAG\nDCL IN[0], GENERIC[0], CONSTANT\nDCL OUT[0], COLOR\nDCL BUFFER[0]\n\
             DCL IMAGE[0], 2D, PIPE_FORMAT_R8G8B8A8_UNORM, WR\nDCL TEMP[0..3]\n{}\n",
            body.iter()
                .enumerate()
                .map(|(i, l)| format!("{i}: {l}"))
                .collect::<Vec<_>>()
                .join("\n")
        );
        let quads = 64;
        let inputs: Vec<QuadVec4> = (0..quads)
            .map(|_| {
                let mut v = [[0u32; 4]; 4];
                for l in 0..4 {
                    v[0][l] = (rng.below(80) as u32) & !3;
                    v[1][l] = rng.next() as u32;
                    v[2][l] = rng.below(6) as u32;
                    v[3][l] = if rng.chance(30) {
                        (-1.0f32).to_bits()
                    } else {
                        rng.below(3) as u32
                    };
                }
                v
            })
            .collect();
        let live: Vec<u8> = (0..quads).map(|_| rng.below(16) as u8).collect();
        let initial: Vec<u32> = (0..16).map(|_| rng.next() as u32).collect();
        let mut results = Vec::new();
        for (_, shader) in executors(&text) {
            let buffers = [StorageBuffer::new(&initial)];
            let images = [StorageImage::new(4, 4, 1, &initial)];
            let res = ShaderResources {
                constants: &[],
                textures: &NoTextures,
                storage: StorageBindings {
                    buffers: &[&buffers[0]],
                    images: &[&images[0]],
                },
            };
            let mut outputs = vec![[[0u32; 4]; 4]; quads];
            let mut killed = vec![0u8; quads];
            let mut batch = QuadBatch {
                count: quads,
                inputs: &inputs,
                inputs_stride: 1,
                system_values: &[],
                system_values_stride: 0,
                outputs: &mut outputs,
                outputs_stride: 1,
                live: &live,
                killed: &mut killed,
            };
            shader.shade_quads(&res, &mut batch).expect("runs");
            results.push((
                outputs,
                killed,
                buffers[0].to_words(),
                images[0].texels.to_words(),
            ));
        }
        assert!(results[0] == results[1], "round {round}:\n{text}");
    }
}

#[test]
fn the_passes_leave_programs_with_memory_instructions_alone() {
    // Copy propagation would otherwise forward TEMP[0] past the store, and value numbering merge
    // the two loads around it.
    let text = "FRAG
DCL IN[0], GENERIC[0], CONSTANT
DCL OUT[0], COLOR
DCL BUFFER[0]
DCL TEMP[0..2]
  0: LOAD TEMP[0].x, BUFFER[0], IN[0].xxxx
  1: STORE BUFFER[0].x, IN[0].xxxx, IN[0].yyyy
  2: LOAD TEMP[1].x, BUFFER[0], IN[0].xxxx
  3: MOV TEMP[2].x, TEMP[0].xxxx
  4: ADD OUT[0].x, TEMP[2].xxxx, TEMP[1].xxxx
  5: END
";
    let p = program(text);
    let mut cleaned = p.clone();
    softgpu_jit::opt::cleanup(&mut cleaned);
    assert_eq!(cleaned, p);
    let options = softgpu_jit::opt::SpecializeOptions::new(8);
    assert_eq!(softgpu_jit::opt::specialize(&p, &options).program, p);
}
