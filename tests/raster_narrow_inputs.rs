//! `opt::narrow_input_usage`: the JIT's fragment programs declare only the input components
//! they read, so the rasterizer interpolates no plane nobody reads. The narrowed masks are
//! checked directly, and draws through the JIT (narrowed programs) must give the same bytes as
//! the interpreter (programs as written, every declared component interpolated).

use std::path::Path;

use softgpu::draw::{self, DrawJob};
use softgpu::ir::text::parse_program;
use softgpu::ir::MathMode;
use softgpu::ir::{HeaderItem, Processor, Program, RegisterFile};
use softgpu::opt::narrow_input_usage;
use softgpu::raster::ClipConvention;
use softgpu::shader::Executor;
use softgpu::texture::{Filter, Wrap};

const VERTEX: &str = "VERT
DCL IN[0]
DCL IN[1]
DCL IN[2]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
DCL OUT[2], GENERIC[1]
  0: MOV OUT[0], IN[0]
  1: MOV OUT[1], IN[1]
  2: MOV OUT[2], IN[2]
  3: END
";

/// Per vertex: position, then two varyings whose four components all differ.
const VERTICES: &str = "-1.0 -1.0 0.0 1.0  0.1 0.9 0.3 0.7  0.5 0.25 0.75 0.125
1.0 -1.0 0.0 2.0  0.8 0.2 0.6 0.4  0.0 1.0 0.5 0.5
-0.5 1.0 0.0 1.0  0.4 0.5 0.9 0.1  1.0 0.0 0.25 0.75
";

fn input_masks(program: &Program) -> Vec<u8> {
    program
        .declarations()
        .filter(|d| d.file == RegisterFile::Input)
        .map(|d| d.usage_mask)
        .collect()
}

fn fragment(source: &str) -> Program {
    parse_program(source).expect("test program parses")
}

/// Reads IN[0] through a swizzle naming y and w only, IN[1] not at all.
const SWIZZLED: &str = "FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL IN[1], GENERIC[1], LINEAR
DCL OUT[0], COLOR
DCL TEMP[0]
  0: ADD TEMP[0], IN[0].ywyw, IN[0].wwyy
  1: MOV OUT[0], TEMP[0]
  2: END
";

/// Reads IN[1] through an indirect index: nothing may be narrowed.
const INDIRECT: &str = "FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL IN[1], GENERIC[1], PERSPECTIVE
DCL OUT[0], COLOR
DCL ADDR[0]
DCL TEMP[0]
IMM[0] FLT32 {1.0, 0.0, 0.0, 0.0}
  0: ARL ADDR[0].x, IMM[0].xxxx
  1: MOV TEMP[0], IN[ADDR[0].x].zxyw
  2: MUL OUT[0], TEMP[0], IN[0].xxxx
  3: END
";

/// Reads one component of each input, through a texture coordinate and a scalar op.
const TEXTURED: &str = "FRAG
DCL IN[0].xyz, GENERIC[0], PERSPECTIVE
DCL IN[1], GENERIC[1], LINEAR
DCL OUT[0], COLOR
DCL SAMP[0]
DCL SVIEW[0], 2D, FLOAT
DCL TEMP[0..1]
  0: TEX TEMP[0], IN[0].zxxx, SAMP[0], 2D
  1: RCP TEMP[1].x, IN[1].wwww
  2: MUL OUT[0], TEMP[0], TEMP[1].xxxx
  3: END
";

#[test]
fn narrowed_masks_are_the_components_read() {
    let mut p = fragment(SWIZZLED);
    narrow_input_usage(&mut p);
    // IN[0]: y and w; IN[1], read nowhere, keeps one component (a mask is never empty).
    assert_eq!(input_masks(&p), vec![0b1010, 0b0001]);

    let mut p = fragment(INDIRECT);
    narrow_input_usage(&mut p);
    assert_eq!(input_masks(&p), vec![0xF, 0xF]);

    let mut p = fragment(TEXTURED);
    narrow_input_usage(&mut p);
    // IN[0] is declared .xyz: z and x of those; IN[1]: w.
    assert_eq!(input_masks(&p), vec![0b0101, 0b1000]);

    // Vertex programs are left alone (their inputs are vertex attributes).
    let mut v = parse_program(VERTEX).unwrap();
    let before = v.clone();
    narrow_input_usage(&mut v);
    assert_eq!(v, before);
}

#[test]
fn narrowed_draws_match_the_interpreter() {
    let texture = softgpu::texture::Texture::from_rgba8(
        4,
        4,
        (0..64).map(|i| (i * 53 % 256) as u8).collect(),
    )
    .unwrap();
    let vertices = draw::parse_vertices(Path::new("vertices.txt"), VERTICES).unwrap();
    for (name, source) in [
        ("swizzled", SWIZZLED),
        ("indirect", INDIRECT),
        ("textured", TEXTURED),
    ] {
        let program = fragment(source);
        assert!(program
            .header
            .iter()
            .any(|h| matches!(h, HeaderItem::Declaration(d) if d.file == RegisterFile::Input)));
        let job = DrawJob {
            vertex_program: parse_program(VERTEX).unwrap(),
            fragment_program: program,
            vertices: vertices.clone(),
            constants: Vec::new(),
            textures: vec![(0, std::sync::Arc::new(texture.clone()))],
            sampler: draw::sampler_state(Filter::Linear, Wrap::Repeat),
            size: (37, 29),
            convention: ClipConvention::OpenGl,
            math: MathMode::Exact,
            driver: softgpu::driver::Driver::Softpipe,
        };
        assert_eq!(job.fragment_program.processor, Processor::Fragment);
        let jit = draw::run_with(&job, Executor::Jit).unwrap();
        let interp = draw::run_with(&job, Executor::Interp).unwrap();
        assert_eq!(jit.level_data(0), interp.level_data(0), "{name}");
        assert!(
            jit.level_data(0).iter().any(|&b| b != 0),
            "{name}: the draw covers pixels"
        );
    }
}
