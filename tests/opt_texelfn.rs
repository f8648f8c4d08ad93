//! Texel functions (`opt::texelfn`): a program rewritten to read its functions of nearest texels
//! from derived textures, rendered after its pre-passes, writes the bits the program writes as
//! compiled — on random textures (special floats included), random uniforms (branch conditions
//! both ways, -0 and NaN among them) and every wrap mode, with coordinates reaching past the
//! edges. Under CLAMP_TO_BORDER the rewrite holds only where the function maps the border
//! (zero) to zero; the chain checks that per draw (a 1x1 pre-pass), and so does this test.

mod texture_support;

use softgpu::driver::Driver;
use softgpu::exec::{QuadShader, ShaderResources};
use softgpu::ir::text::parse_program;
use softgpu::ir::MathMode;
use softgpu::ir::Program;
use softgpu::opt::texelfn::{hoist_texel_functions, TexelFunction};
use softgpu::raster::{self, ClipConvention, DrawState, FragCoordConvention, Vertices};
use softgpu::shader::{build_shader, Executor};
use softgpu::texture::{Filter, Format, SamplerState, Texture, TextureUnits, Wrap};
use std::sync::Arc;
use texture_support::Rng;

const HEADER: &str = "FRAG
PROPERTY FS_COORD_ORIGIN UPPER_LEFT
PROPERTY FS_COORD_PIXEL_CENTER HALF_INTEGER
DCL IN[0], POSITION, LINEAR
DCL OUT[0], COLOR
DCL SAMP[0]
DCL SVIEW[0], 2D, FLOAT
DCL CONST[0][0..3]
DCL TEMP[0..15]
IMM[0] FLT32 {2.4, 0.5, 1.0, 0.0}
IMM[1] FLT32 {0.25, 2.2, 0.0625, -1.5}
";

/// Branches on uniforms: `UIF` with `ELSE`, a nested float `IF` (taken for NaN, not for -0),
/// taps whose curves select by them, weighted and summed (the sum mixes the sites); a tap
/// inside such a branch, whose curve leaves it (its derived lookup runs only with it).
const UNIFORM_BRANCHES: &str = "
MAD TEMP[0].xy, IN[0].xyyy, CONST[0][0].xyyy, CONST[0][0].zwww
TEX TEMP[1], TEMP[0], SAMP[0], 2D
MOV TEMP[2], TEMP[1]
UIF CONST[0][1].xxxx
  POW TEMP[2].x, TEMP[1].xxxx, IMM[0].xxxx
  POW TEMP[2].y, TEMP[1].yyyy, IMM[0].xxxx
ELSE
  MUL TEMP[2].xy, TEMP[1].xyyy, CONST[0][2].xxxx
  IF CONST[0][1].yyyy
    EX2 TEMP[2].z, -TEMP[1].zzzz
  ENDIF
ENDIF
MUL TEMP[3], TEMP[2], IMM[0].yyyy
ADD TEMP[4].xy, TEMP[0].xyyy, CONST[0][0].xyyy
TEX TEMP[5], TEMP[4], SAMP[0], 2D
MOV TEMP[6], TEMP[5]
UIF CONST[0][1].xxxx
  POW TEMP[6].x, TEMP[5].xxxx, IMM[0].xxxx
  POW TEMP[6].y, TEMP[5].yyyy, IMM[0].xxxx
ELSE
  MUL TEMP[6].xy, TEMP[5].xyyy, CONST[0][2].xxxx
  IF CONST[0][1].yyyy
    EX2 TEMP[6].z, -TEMP[5].zzzz
  ENDIF
ENDIF
MAD TEMP[3], TEMP[6], IMM[1].xxxx, TEMP[3]
MOV TEMP[8].x, IMM[1].zzzz
UIF CONST[0][1].xxxx
  TEX TEMP[7], TEMP[0].yxyy, SAMP[0], 2D
  POW TEMP[8].x, TEMP[7].yyyy, IMM[1].yyyy
ENDIF
ADD TEMP[3].x, TEMP[3].xxxx, TEMP[8].xxxx
MOV OUT[0], TEMP[3]
END
";

/// What leaves a slice in other ways: a branch on a texel value (per lane), a curve steering a
/// dependent lookup, two sites mixed, modifiers, a scalar result written to two components,
/// and the raw texel next to its curve.
const LANE_BRANCHES: &str = "
MAD TEMP[0].xy, IN[0].xyyy, CONST[0][0].xyyy, CONST[0][0].zwww
TEX TEMP[1], TEMP[0], SAMP[0], 2D
LG2 TEMP[2].x, |TEMP[1].xxxx|
LG2 TEMP[2].y, TEMP[1].yyyy
RSQ TEMP[2].zw, TEMP[1].zzzz
MUL_SAT TEMP[2], TEMP[2], CONST[0][2].yyyy
FSLT TEMP[3].x, IMM[0].yyyy, TEMP[1].wwww
UIF TEMP[3].xxxx
  POW TEMP[2].x, TEMP[2].xxxx, IMM[1].yyyy
ENDIF
ADD TEMP[4].xy, TEMP[0].xyyy, TEMP[2].xyyy
TEX TEMP[5], TEMP[4], SAMP[0], 2D
EX2 TEMP[6].x, -TEMP[5].xxxx
EX2 TEMP[6].y, TEMP[5].yyyy
ADD TEMP[7], TEMP[6].xyxy, TEMP[2]
ADD TEMP[7].w, TEMP[7].wwww, TEMP[1].xxxx
MOV OUT[0], TEMP[7]
END
";

/// Sites with more values leaving than a texture holds: five curves of one texel, one of them
/// weighted per tap, and a second tap whose weighted values fit once the weighting is left to
/// the program.
const WIDE: &str = "
MAD TEMP[0].xy, IN[0].xyyy, CONST[0][0].xyyy, CONST[0][0].zwww
TEX TEMP[1], TEMP[0], SAMP[0], 2D
POW TEMP[2].x, TEMP[1].xxxx, IMM[0].xxxx
POW TEMP[2].y, TEMP[1].yyyy, IMM[0].xxxx
POW TEMP[2].z, TEMP[1].zzzz, IMM[0].xxxx
POW TEMP[2].w, TEMP[1].wwww, IMM[1].yyyy
SQRT TEMP[3].x, TEMP[1].xxxx
MUL TEMP[4], TEMP[2], IMM[1].wwww
ADD TEMP[4].x, TEMP[4].xxxx, TEMP[3].xxxx
ADD TEMP[5].xy, TEMP[0].xyyy, CONST[0][0].xyyy
TEX TEMP[6], TEMP[5], SAMP[0], 2D
POW TEMP[7].x, TEMP[6].xxxx, IMM[0].xxxx
POW TEMP[7].y, TEMP[6].yyyy, IMM[0].xxxx
POW TEMP[7].z, TEMP[6].zzzz, IMM[0].xxxx
POW TEMP[7].w, TEMP[6].wwww, IMM[1].yyyy
MUL TEMP[8], TEMP[7], IMM[1].xxxx
ADD TEMP[9], TEMP[8], IMM[1].zzzz
ADD TEMP[4], TEMP[4], TEMP[9]
MOV OUT[0], TEMP[4]
END
";

/// Branches on a per-lane condition (the left column of each quad takes the first side): the
/// lanes that skip the first side keep the curve computed before it, which its derivative reads
/// there though both sides overwrite it; a site inside the branch, whose curve leaves it.
const QUAD_SPLIT: &str = "
MAD TEMP[0].xy, IN[0].xyyy, CONST[0][0].xyyy, CONST[0][0].zwww
TEX TEMP[1], TEMP[0], SAMP[0], 2D
POW TEMP[2].x, TEMP[1].xxxx, IMM[0].xxxx
POW TEMP[2].y, TEMP[1].yyyy, IMM[0].xxxx
MUL TEMP[3].x, IN[0].xxxx, IMM[0].yyyy
FRC TEMP[3].x, TEMP[3].xxxx
FSLT TEMP[3].x, TEMP[3].xxxx, IMM[0].yyyy
UIF TEMP[3].xxxx
  MOV TEMP[2].x, IN[0].yyyy
  DDX TEMP[4].x, TEMP[2].xxxx
  TEX TEMP[5], TEMP[0].yxyy, SAMP[0], 2D
  POW TEMP[6].x, TEMP[5].xxxx, IMM[1].yyyy
  POW TEMP[6].y, TEMP[5].zzzz, IMM[1].yyyy
ELSE
  MOV TEMP[2].x, IN[0].xxxx
  DDY TEMP[4].x, TEMP[2].yyyy
  MOV TEMP[6].xy, TEMP[2].xyyy
ENDIF
ADD TEMP[7].x, TEMP[4].xxxx, TEMP[6].xxxx
ADD TEMP[7].y, TEMP[6].yyyy, TEMP[2].xxxx
MOV OUT[0], TEMP[7].xyxy
END
";

/// A temporary array: curves written to it directly, read back through a per-lane index (any of
/// them may be read), and an indirect write that may replace one before it is read directly.
const ARRAYS: &str = "
DCL TEMP[16..19], ARRAY(1)
DCL ADDR[0]
MAD TEMP[0].xy, IN[0].xyyy, CONST[0][0].xyyy, CONST[0][0].zwww
TEX TEMP[1], TEMP[0], SAMP[0], 2D
POW TEMP[16].x, TEMP[1].xxxx, IMM[0].xxxx
POW TEMP[17].x, TEMP[1].yyyy, IMM[0].xxxx
MUL TEMP[3].x, IN[0].xxxx, IMM[0].yyyy
FRC TEMP[3].x, TEMP[3].xxxx
ADD TEMP[3].x, TEMP[3].xxxx, TEMP[3].xxxx
ARL ADDR[0].x, TEMP[3].xxxx
MOV TEMP[4].x, TEMP[ADDR[0].x+16](1).xxxx
MOV TEMP[ADDR[0].x+17](1).x, IMM[1].xxxx
ADD TEMP[4].y, TEMP[17].xxxx, IMM[1].zzzz
MOV OUT[0], TEMP[4].xyxy
END
";

/// Components each written on one side only: `.y` by a branch nested in the first side (its
/// merge is a write of that side), `.z` by the first side, `.x` — a curve held before the
/// branch — by the second; all read after the branch.
const ONE_SIDED: &str = "
MAD TEMP[0].xy, IN[0].xyyy, CONST[0][0].xyyy, CONST[0][0].zwww
TEX TEMP[1], TEMP[0], SAMP[0], 2D
POW TEMP[2].x, TEMP[1].xxxx, IMM[0].xxxx
MOV TEMP[2].y, IMM[1].zzzz
MOV TEMP[2].z, IMM[1].xxxx
UIF CONST[0][1].xxxx
  UIF CONST[0][1].yyyy
    POW TEMP[2].y, TEMP[1].yyyy, IMM[1].yyyy
  ENDIF
  MUL TEMP[2].z, TEMP[1].zzzz, CONST[0][2].xxxx
ELSE
  EX2 TEMP[2].x, -TEMP[1].xxxx
ENDIF
ADD TEMP[3], TEMP[2], TEMP[1].wwww
MOV OUT[0], TEMP[3]
END
";

const SIZE: (u32, u32) = (24, 20);

fn program(body: &str) -> Program {
    parse_program(&format!("{HEADER}{body}")).expect("test program parses")
}

fn shader(program: &Program) -> Box<dyn QuadShader> {
    build_shader(
        program,
        Executor::Jit,
        MathMode::default(),
        Driver::Softpipe,
    )
    .expect("compiles")
}

/// Renders `fragment` over a `size` RGBA32F target (raw output bits).
fn render(
    fragment: &Program,
    size: (u32, u32),
    constants: &[&[[u32; 4]]],
    units: &TextureUnits,
) -> Texture {
    let vertex = shader(
        &parse_program("VERT\nDCL IN[0]\nDCL OUT[0], POSITION\nMOV OUT[0], IN[0]\nEND\n")
            .expect("vertex program"),
    );
    let fragment_shader = shader(fragment);
    let mut target = Texture::new(Format::R32G32B32A32Sfloat, size.0, size.1, 1).expect("target");
    let state = DrawState {
        fragment_resources: ShaderResources {
            constants,
            textures: units,
            storage: Default::default(),
        },
        frag_coord: FragCoordConvention::from_program(fragment),
        ..DrawState::new(&*vertex, &*fragment_shader, ClipConvention::Vulkan)
    };
    let corners = [[-1.0f32, -1.0], [1.0, -1.0], [-1.0, 1.0], [1.0, 1.0]];
    let vertices: Vec<[u32; 4]> = [0usize, 1, 2, 2, 1, 3]
        .iter()
        .map(|&v| {
            let [x, y] = corners[v];
            [x.to_bits(), y.to_bits(), 0, 1f32.to_bits()]
        })
        .collect();
    raster::draw_triangles(&state, Vertices::new(&vertices, 1), &mut target).expect("draw");
    target
}

fn random_texture(rng: &mut Rng) -> Arc<Texture> {
    let (w, h) = (1 + rng.below(13) as u32, 1 + rng.below(11) as u32);
    let mut texture = if rng.below(2) == 0 {
        Texture::new(Format::R8G8B8A8Unorm, w, h, 1).expect("texture")
    } else {
        Texture::new(Format::R32G32B32A32Sfloat, w, h, 1).expect("texture")
    };
    let float = texture.format() == Format::R32G32B32A32Sfloat;
    for y in 0..h {
        for x in 0..w {
            let texel = std::array::from_fn(|_| {
                if !float {
                    return rng.range(0.0, 1.0).to_bits();
                }
                match rng.below(12) {
                    0 => f32::NAN.to_bits(),
                    1 => (-0.0f32).to_bits(),
                    2 => f32::INFINITY.to_bits(),
                    3 => 1.0e-40f32.to_bits(),
                    4 => rng.range(-2.0, 0.0).to_bits(),
                    _ => rng.range(0.0, 1.5).to_bits(),
                }
            });
            texture.write_texel(0, x, y, texel);
        }
    }
    Arc::new(texture)
}

fn random_constants(rng: &mut Rng) -> Vec<[u32; 4]> {
    let scale = |rng: &mut Rng, size: u32| rng.range(1.0, 1.4) / size as f32;
    let condition = |rng: &mut Rng| match rng.below(5) {
        0 => f32::NAN.to_bits(),
        1 => (-0.0f32).to_bits(),
        2 => 0,
        _ => 1.0f32.to_bits(),
    };
    vec![
        [
            scale(rng, SIZE.0).to_bits(),
            scale(rng, SIZE.1).to_bits(),
            rng.range(-0.2, 0.0).to_bits(),
            rng.range(-0.2, 0.0).to_bits(),
        ],
        [condition(rng), condition(rng), 0, 0],
        [
            rng.range(0.5, 2.0).to_bits(),
            rng.range(0.5, 4.0).to_bits(),
            0,
            0,
        ],
        [0; 4],
    ]
}

/// Binds the derived textures (false when a border breaks a function, as the chain checks).
fn bind_derived(
    functions: &[TexelFunction],
    constants: &[&[[u32; 4]]],
    units: &mut TextureUnits,
) -> bool {
    let mut derived = Vec::new();
    for f in functions {
        let (source, sampler) = units.get(f.source_unit).cloned().expect("source bound");
        if sampler.wrap_s == Wrap::ClampToBorder {
            let mut zero_units = units.clone();
            let zero = Arc::new(Texture::new(Format::R32G32B32A32Sfloat, 1, 1, 1).expect("1x1"));
            zero_units.bind(f.source_unit, zero, sampler);
            let border = render(&f.program, (1, 1), constants, &zero_units);
            if border.level_data(0).iter().any(|&b| b != 0) {
                return false;
            }
        }
        let values = render(
            &f.program,
            (source.width(), source.height()),
            constants,
            units,
        );
        derived.push((f.derived_unit, Arc::new(values), sampler));
    }
    for (unit, texture, sampler) in derived {
        units.bind(unit, texture, sampler);
    }
    true
}

/// Renders `body` as compiled and rewritten on `rounds` random inputs; returns how many rounds
/// ran the rewritten program (the rest had a border the functions change).
fn check(name: &str, body: &str, rounds: usize, seed: u64) -> (usize, Vec<TexelFunction>) {
    let original = program(body);
    let mut rewritten = original.clone();
    let functions = hoist_texel_functions(&mut rewritten, 1);
    softgpu::ir::validate::validate(&rewritten)
        .unwrap_or_else(|e| panic!("{name}: rewritten program invalid: {e:?}"));
    for f in &functions {
        softgpu::ir::validate::validate(&f.program)
            .unwrap_or_else(|e| panic!("{name}: pre-pass invalid: {e:?}"));
    }
    let mut rng = Rng(seed);
    let mut compared = 0;
    for round in 0..rounds {
        let texture = random_texture(&mut rng);
        let wrap = rng.pick(&[
            Wrap::ClampToEdge,
            Wrap::ClampToBorder,
            Wrap::Repeat,
            Wrap::MirroredRepeat,
        ]);
        let mut units = TextureUnits::new();
        units.bind(0, texture, SamplerState::new(Filter::Nearest, wrap));
        let constants = random_constants(&mut rng);
        let refs = [constants.as_slice()];
        let expected = render(&original, SIZE, &refs, &units);
        if !bind_derived(&functions, &refs, &mut units) {
            continue;
        }
        let got = render(&rewritten, SIZE, &refs, &units);
        assert!(
            expected.level_data(0) == got.level_data(0),
            "{name}, round {round} ({wrap:?}, constants {constants:x?}): the rewritten program \
             wrote other bits\n{rewritten}"
        );
        compared += 1;
    }
    (compared, functions)
}

#[test]
fn components_written_on_one_side_merge_with_their_old_values() {
    let (compared, functions) = check("one-sided writes", ONE_SIDED, 60, 0x0e51);
    assert_eq!(
        functions.len(),
        1,
        "the curves select by the branches in the pre-pass"
    );
    assert!(compared >= 30, "only {compared} rounds compared");
}

#[test]
fn uniform_branches_select_in_the_prepass() {
    let (compared, functions) = check("uniform branches", UNIFORM_BRANCHES, 60, 0x7e11);
    assert_eq!(functions.len(), 1, "the taps share one derived texture");
    assert!(compared >= 30, "only {compared} rounds compared");
}

#[test]
fn values_leaving_by_lane_branches_and_lookups_are_copied() {
    let (compared, functions) = check("lane branches", LANE_BRANCHES, 60, 0xb4a9);
    assert!(!functions.is_empty(), "the first tap's curves are hoisted");
    assert!(compared >= 30, "only {compared} rounds compared");
}

#[test]
fn lanes_outside_a_branch_keep_their_values() {
    let (compared, functions) = check("quad split", QUAD_SPLIT, 60, 0x5a17);
    assert!(!functions.is_empty(), "the curves are hoisted");
    assert!(compared >= 30, "only {compared} rounds compared");
}

#[test]
fn indirectly_addressed_arrays_hold_any_value() {
    let (compared, functions) = check("arrays", ARRAYS, 60, 0xa77a);
    assert!(!functions.is_empty(), "the curves are hoisted");
    assert!(compared >= 30, "only {compared} rounds compared");
}

#[test]
fn wide_sites_keep_what_they_recompute() {
    let (compared, functions) = check("wide", WIDE, 60, 0x91de);
    assert!(!functions.is_empty(), "the second tap is hoisted");
    assert!(compared >= 30, "only {compared} rounds compared");
}

#[test]
fn programs_with_loops_or_nothing_worth_hoisting_stay() {
    for body in [
        // A loop.
        "MAD TEMP[0].xy, IN[0].xyyy, CONST[0][0].xyyy, CONST[0][0].zwww
BGNLOOP
  TEX TEMP[1], TEMP[0], SAMP[0], 2D
  POW TEMP[2].x, TEMP[1].xxxx, IMM[0].xxxx
  BRK
ENDLOOP
MOV OUT[0], TEMP[2]
END
",
        // A slice of two cheap instructions.
        "MAD TEMP[0].xy, IN[0].xyyy, CONST[0][0].xyyy, CONST[0][0].zwww
TEX TEMP[1], TEMP[0], SAMP[0], 2D
MUL TEMP[2], TEMP[1], IMM[0].yyyy
ADD TEMP[2], TEMP[2], IMM[0].yyyy
MOV OUT[0], TEMP[2]
END
",
    ] {
        let original = program(body);
        let mut rewritten = original.clone();
        assert!(hoist_texel_functions(&mut rewritten, 1).is_empty());
        assert_eq!(rewritten, original);
    }
    // A unit not sampled nearest.
    let original = program(UNIFORM_BRANCHES);
    let mut rewritten = original.clone();
    assert!(hoist_texel_functions(&mut rewritten, 0b10).is_empty());
    assert_eq!(rewritten, original);
}
