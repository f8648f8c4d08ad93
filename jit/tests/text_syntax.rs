//! Hand-written cases for each element of the TGSI text syntax: what the parser builds, and that
//! the printer writes it back the way Mesa's tgsi_dump does.

use softgpu_jit::ir::text::{parse_program, print_program};
use softgpu_jit::ir::*;

fn parse(src: &str) -> Program {
    parse_program(src).unwrap_or_else(|e| panic!("{e}\n--- source ---\n{src}"))
}

/// Asserts that `src` is in canonical tgsi_dump form: it prints back unchanged.
fn canonical(src: &str) -> Program {
    let p = parse(src);
    assert_eq!(print_program(&p), src);
    assert_eq!(parse(&print_program(&p)), p);
    p
}

/// Parses a one-instruction fragment program body.
fn inst(line: &str) -> Instruction {
    let p = parse(&format!("FRAG\n{line}\n"));
    assert_eq!(p.instructions.len(), 1, "{line}");
    p.instructions[0].clone()
}

#[test]
fn instruction_numbers_are_optional_and_renumbered() {
    let p = parse("FRAG\nMOV TEMP[0], IN[0]\n  7: END\n");
    assert_eq!(p.instructions.len(), 2);
    assert_eq!(
        print_program(&p),
        "FRAG\n  0: MOV TEMP[0], IN[0]\n  1: END\n"
    );
}

#[test]
fn saturate_and_precise_suffixes() {
    let i = inst("MAD_SAT TEMP[0], TEMP[1], TEMP[2], TEMP[3]");
    assert!(i.saturate && !i.precise);
    assert_eq!(i.opcode, Opcode::MAD);
    let i = inst("ADD_PRECISE TEMP[0], TEMP[1], TEMP[2]");
    assert!(!i.saturate && i.precise);
    let i = inst("MUL_SAT_PRECISE TEMP[0], TEMP[1], TEMP[2]");
    assert!(i.saturate && i.precise);
    canonical("FRAG\n  0: MUL_SAT_PRECISE TEMP[0], TEMP[1], TEMP[2]\n  1: END\n");
    // Opcodes whose names contain underscores are not mistaken for suffixes.
    assert_eq!(
        inst("TEX_LZ TEMP[0], IN[0], SAMP[0], 2D").opcode,
        Opcode::TEX_LZ
    );
    assert_eq!(inst("DDX_FINE TEMP[0], IN[0]").opcode, Opcode::DDX_FINE);
}

#[test]
fn source_modifiers() {
    let i = inst("MOV TEMP[0], -|TEMP[1].yxzw|");
    let s = i.src[0];
    assert!(s.negate && s.absolute);
    assert_eq!(s.swizzle, [1, 0, 2, 3]);
    let i = inst("MOV TEMP[0], -TEMP[1]");
    assert!(i.src[0].negate && !i.src[0].absolute);
    let i = inst("MOV TEMP[0], |TEMP[1].x|");
    assert!(!i.src[0].negate && i.src[0].absolute);
    assert_eq!(i.src[0].swizzle, [0; 4]);
    canonical("FRAG\n  0: ADD TEMP[0], -|TEMP[1].yxzw|, |IN[0]|\n  1: END\n");
}

#[test]
fn short_swizzles_replicate_the_last_letter() {
    assert_eq!(inst("MOV TEMP[0], TEMP[1].y").src[0].swizzle, [1, 1, 1, 1]);
    assert_eq!(inst("MOV TEMP[0], TEMP[1].zx").src[0].swizzle, [2, 0, 0, 0]);
    assert_eq!(
        inst("MOV TEMP[0], TEMP[1].xyz").src[0].swizzle,
        [0, 1, 2, 2]
    );
    assert_eq!(
        inst("MOV TEMP[0], TEMP[1].wzyx").src[0].swizzle,
        [3, 2, 1, 0]
    );
    assert_eq!(
        inst("MOV TEMP[0], TEMP[1].xyzw").src[0].swizzle,
        [0, 1, 2, 3]
    );
    // The identity swizzle is not printed.
    let p = parse("FRAG\nMOV TEMP[0], TEMP[1].xyzw\nEND\n");
    assert!(print_program(&p).contains("MOV TEMP[0], TEMP[1]\n"));
}

#[test]
fn write_masks() {
    for (text, mask) in [("x", 1), ("yw", 0b1010), ("xyz", 7), ("w", 8), ("xyzw", 15)] {
        let i = inst(&format!("MOV TEMP[0].{text}, TEMP[1]"));
        assert_eq!(i.dst[0].write_mask, mask, "{text}");
    }
    assert_eq!(inst("MOV TEMP[0], TEMP[1]").dst[0].write_mask, 0xF);
    canonical("FRAG\n  0: MOV TEMP[0].yw, TEMP[1]\n  1: END\n");
}

#[test]
fn indirect_addressing() {
    let i = inst("MOV TEMP[ADDR[0].x+3](1), CONST[0][ADDR[0].y+2]");
    let d = i.dst[0].reg;
    assert_eq!(d.file, RegisterFile::Temporary);
    assert_eq!(d.index, 3);
    assert_eq!(
        d.indirect,
        Some(Indirect {
            file: RegisterFile::Address,
            index: 0,
            component: 0,
            array_id: Some(1)
        })
    );
    let s = i.src[0].reg;
    assert_eq!(s.file, RegisterFile::Constant);
    assert_eq!(
        s.dimension,
        Some(Dimension {
            index: 0,
            indirect: None
        })
    );
    assert_eq!(s.index, 2);
    assert_eq!(s.indirect.map(|x| x.component), Some(1));

    let i = inst("MOV TEMP[0], CONST[1][5]");
    let s = i.src[0].reg;
    assert_eq!((s.dimension.map(|d| d.index), s.index), (Some(1), 5));

    let i = inst("MOV TEMP[0], IN[ADDR[0].x]");
    assert_eq!(i.src[0].reg.index, 0);
    assert!(i.src[0].reg.indirect.is_some());

    let i = inst("MOV TEMP[0], TEMP[ADDR[1].w-2]");
    assert_eq!(i.src[0].reg.index, -2);
    assert_eq!(
        i.src[0].reg.indirect.map(|x| (x.index, x.component)),
        Some((1, 3))
    );

    // Indirect dimension (uniform buffer arrays) with an array id.
    let i = inst("MOV TEMP[0], CONST[ADDR[0].x+1](2)[7]");
    let dim = i.src[0].reg.dimension.expect("dimension");
    assert_eq!(dim.index, 1);
    assert_eq!(dim.indirect.and_then(|x| x.array_id), Some(2));
    assert_eq!(i.src[0].reg.index, 7);

    canonical(
        "FRAG\n  0: MOV TEMP[ADDR[0].x+3](1), CONST[0][ADDR[0].y+2].xxxx\n  1: MOV TEMP[0], TEMP[ADDR[1].w-2]\n  2: MOV TEMP[1], CONST[ADDR[0].x+1](2)[7]\n  3: MOV TEMP[2], IN[TEMP[3].z]\n  4: END\n",
    );
}

#[test]
fn declarations() {
    let p = canonical(
        "FRAG\n\
         DCL IN[0], POSITION, LINEAR\n\
         DCL IN[1].xy, GENERIC[0], PERSPECTIVE, CENTROID\n\
         DCL IN[2].x, FACE, CONSTANT\n\
         DCL IN[3], COLOR, COLOR, SAMPLE\n\
         DCL OUT[0], POSITION, INVARIANT\n\
         DCL OUT[1], COLOR\n\
         DCL OUT[2], COLOR[1]\n\
         DCL SAMP[0]\n\
         DCL SVIEW[0], 2D, FLOAT\n\
         DCL SVIEW[1], 2D_ARRAY, SINT\n\
         DCL SVIEW[2], 3D, UNORM, SNORM, UINT, FLOAT\n\
         DCL CONST[0][0..2]\n\
         DCL CONST[1][5]\n\
         DCL TEMP[0..3]\n\
         DCL TEMP[4..7], ARRAY(1), LOCAL\n\
         DCL TEMP[8], LOCAL\n\
         DCL ADDR[0]\n\
         DCL SV[0], SAMPLEID\n",
    );
    let d: Vec<&Declaration> = p.declarations().collect();
    assert_eq!(d[1].usage_mask, 0b0011);
    assert_eq!(
        d[1].semantic,
        Some(Semantic {
            name: SemanticName::Generic,
            index: 0
        })
    );
    assert_eq!(
        d[1].interpolation,
        Some(Interpolation {
            mode: InterpolateMode::Perspective,
            location: InterpolateLocation::Centroid
        })
    );
    // COLOR as a semantic and as an interpolation mode on the same line.
    assert_eq!(d[3].semantic.map(|s| s.name), Some(SemanticName::Color));
    assert_eq!(
        d[3].interpolation.map(|i| i.mode),
        Some(InterpolateMode::Color)
    );
    assert!(d[4].invariant);
    assert_eq!(d[6].semantic.map(|s| s.index), Some(1));
    assert_eq!(
        d[10].sampler_view,
        Some(SamplerViewDecl {
            target: TextureTarget::Tex3D,
            return_type: [
                ReturnType::Unorm,
                ReturnType::Snorm,
                ReturnType::Uint,
                ReturnType::Float
            ]
        })
    );
    assert_eq!((d[11].dimension, d[11].first, d[11].last), (Some(0), 0, 2));
    assert_eq!(
        (d[14].first, d[14].last, d[14].array_id, d[14].local),
        (4, 7, Some(1), true)
    );
    // One return type stands for all four.
    assert_eq!(
        d[8].sampler_view.map(|s| s.return_type),
        Some([ReturnType::Float; 4])
    );
}

#[test]
fn per_vertex_inputs_print_empty_brackets() {
    let p = canonical("GEOM\nDCL IN[][0..2], POSITION\nDCL OUT[0], POSITION\n");
    let d = p.declarations().next().cloned().expect("decl");
    assert_eq!((d.dimension, d.first, d.last), (None, 0, 2));
    // tgsi_text also accepts an explicit vertex count, which the dump does not print.
    let p = parse("GEOM\nDCL IN[3][0..2], POSITION\n");
    assert!(print_program(&p).contains("DCL IN[][0..2], POSITION\n"));
    canonical("TESS_CTRL\nDCL IN[][0], GENERIC[1]\nDCL OUT[][0], GENERIC[1]\nDCL OUT[1], PATCH\n");
}

#[test]
fn properties() {
    let p = canonical(
        "FRAG\nPROPERTY FS_COORD_ORIGIN LOWER_LEFT\nPROPERTY FS_COORD_PIXEL_CENTER HALF_INTEGER\nPROPERTY FS_COLOR0_WRITES_ALL_CBUFS 1\nPROPERTY CS_FIXED_BLOCK_WIDTH 8, 4\n",
    );
    assert_eq!(
        p.property("FS_COORD_ORIGIN"),
        Some(&["LOWER_LEFT".to_string()][..])
    );
    assert_eq!(p.property("CS_FIXED_BLOCK_WIDTH").map(|v| v.len()), Some(2));
}

#[test]
fn immediates() {
    let p = canonical(
        "FRAG\n\
         IMM[0] UINT32 {1056964608, 4294967295, 0, 7}\n\
         IMM[1] INT32 {-1, 2147483647, -2147483648, 0}\n\
         IMM[2] FLT32 {    0.5000,    -1.0000,     0.1000,    -0.0000}\n\
         IMM[3] UINT32 {5}\n\
         IMM[4] FLT32 {    2.0000,     3.0000}\n",
    );
    let imms: Vec<&Immediate> = p.immediates().collect();
    assert_eq!(imms[0].values, vec![1056964608, u32::MAX, 0, 7]);
    assert_eq!(imms[1].values[0], u32::MAX);
    assert_eq!(imms[1].values[2], 0x8000_0000);
    assert_eq!(
        imms[2].values,
        vec![
            0.5f32.to_bits(),
            (-1.0f32).to_bits(),
            0.1f32.to_bits(),
            (-0.0f32).to_bits()
        ]
    );
    assert_eq!(imms[3].values.len(), 1);
    // The index is optional, as in tgsi_text.
    let p = parse("FRAG\nIMM UINT32 {1, 2, 3, 4}\nIMM FLT32 {1.5, 2e3, -.25, 7}\n");
    let v = &p.immediates().nth(1).expect("imm").values;
    assert_eq!(v[1], 2000.0f32.to_bits());
    assert_eq!(v[2], (-0.25f32).to_bits());
    // 64-bit immediates take two words per value.
    let p = canonical("FRAG\nIMM[0] UINT64 {18446744073709551615, 5}\nIMM[1] INT64 {-3}\nIMM[2] FLT64 {1.50000000}\n");
    let imms: Vec<&Immediate> = p.immediates().collect();
    assert_eq!(imms[0].values, vec![u32::MAX, u32::MAX, 5, 0]);
    assert_eq!(imms[1].values, vec![(-3i32) as u32, u32::MAX]);
}

#[test]
fn float_immediates_round_trip_exactly() {
    let values = [
        0.5f32,
        0.1,
        1.0 / 3.0,
        1e-7,
        3.4028235e38,
        -f32::MIN_POSITIVE,
        1e-45,
        123456.79,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ];
    let mut bits: Vec<u32> = values.iter().map(|f| f.to_bits()).collect();
    bits.push(0x7fc0_0001); // a NaN with payload
    bits.push(0xffff_ffff);
    for chunk in bits.chunks(4) {
        let mut p = Program::new(Processor::Fragment);
        p.header.push(HeaderItem::Immediate(Immediate {
            ty: ImmediateType::Float32,
            values: chunk.to_vec(),
        }));
        let text = print_program(&p);
        assert_eq!(parse(&text), p, "{text}");
    }
    // Mesa's %10.4f is kept wherever it is exact; otherwise the shortest exact decimal.
    let mut p = Program::new(Processor::Fragment);
    p.header.push(HeaderItem::Immediate(Immediate {
        ty: ImmediateType::Float32,
        values: vec![
            0.5f32.to_bits(),
            (1.0f32 / 3.0).to_bits(),
            f32::NAN.to_bits(),
        ],
    }));
    assert_eq!(
        print_program(&p),
        "FRAG\nIMM[0] FLT32 {    0.5000, 0.33333334, 0x7fc00000}\n"
    );
}

#[test]
fn labels_on_flow_control() {
    let p = canonical(
        "FRAG\n\
         DCL TEMP[0]\n\
         \x20 0: BGNLOOP :0\n\
         \x20 1:   UIF TEMP[0].xxxx :3\n\
         \x20 2:     BRK\n\
         \x20 3:   ELSE :5\n\
         \x20 4:     CAL :8\n\
         \x20 5:   ENDIF\n\
         \x20 6: ENDLOOP :0\n\
         \x20 7: END\n\
         \x20 8: BGNSUB :0\n\
         \x20 9:   IF TEMP[0].xxxx :0\n\
         \x2010:     RET\n\
         \x2011:   ENDIF\n\
         \x2012: ENDSUB\n",
    );
    let labels: Vec<Option<u32>> = p.instructions.iter().map(|i| i.label).collect();
    assert_eq!(labels[1], Some(3));
    assert_eq!(labels[4], Some(8));
    assert_eq!(labels[2], None);
}

#[test]
fn switch_does_not_indent_like_mesa() {
    canonical(
        "FRAG\nDCL TEMP[0]\n  0: SWITCH TEMP[0].xxxx\n  1: CASE TEMP[0].yyyy\n  2: BRK\n  3: DEFAULT\n  4: ENDSWITCH\n  5: END\n",
    );
}

#[test]
fn unbalanced_blocks_indent_like_mesa() {
    // Mesa's indent counter goes negative and prints no indentation while it is.
    canonical("FRAG\n  0: ENDIF\n  1: MOV TEMP[0], TEMP[1]\n  2: IF TEMP[0].xxxx\n  3: MOV TEMP[0], TEMP[1]\n  4: END\n");
}

#[test]
fn wide_instruction_numbers() {
    let mut src = String::from("FRAG\n");
    for n in 0..1001 {
        src.push_str(&format!("{n:3}: NOP\n"));
    }
    src.push_str("1001: END\n");
    let p = canonical(&src);
    assert_eq!(p.instructions.len(), 1002);
}

#[test]
fn texture_instructions() {
    let i = inst("TEX TEMP[0], IN[0].xyyy, SAMP[0], 2D");
    assert_eq!(
        i.texture,
        Some(TextureInfo {
            target: TextureTarget::Tex2D,
            offsets: vec![]
        })
    );
    assert_eq!(i.src.len(), 2);
    let i = inst("TXF TEMP[1], TEMP[1], SAMP[0], 2D, IMM[1].wzw");
    let t = i.texture.expect("texture");
    assert_eq!(t.offsets.len(), 1);
    assert_eq!(t.offsets[0].swizzle, [3, 2, 3]);
    assert_eq!(t.offsets[0].reg, Register::new(RegisterFile::Immediate, 1));
    // A four-letter offset swizzle is accepted (its fourth letter has no meaning).
    let i = inst("TEX TEMP[0], IN[0], SAMP[0], 2D, IMM[1].xyzz");
    assert_eq!(i.texture.expect("texture").offsets[0].swizzle, [0, 1, 2]);
    let i = inst("TG4 TEMP[1], IN[0].xyyy, IMM[0].zzzz, SAMP[0], SHADOW2D_ARRAY, IMM[0].ywy");
    assert_eq!(i.src.len(), 3);
    assert_eq!(
        i.texture.as_ref().map(|t| t.target),
        Some(TextureTarget::Shadow2DArray)
    );
    // BUFFER is both a register file and a target name.
    let i = inst("TXF TEMP[0], TEMP[1], SAMP[0], BUFFER");
    assert_eq!(i.texture.map(|t| t.target), Some(TextureTarget::Buffer));
    let i = inst("MOV TEMP[0], BUFFER[0]");
    assert_eq!(i.src[0].reg.file, RegisterFile::Buffer);
    // The SAMPLE family names no target; registers after its operands are offsets.
    let i = inst("SAMPLE TEMP[0], IN[0], SVIEW[0], SAMP[0], IMM[0].xyz");
    assert_eq!(i.src.len(), 3);
    let t = i.texture.expect("offsets");
    assert_eq!(t.target, TextureTarget::Unknown);
    assert_eq!(t.offsets.len(), 1);
    canonical(
        "FRAG\n  0: TEX TEMP[0], IN[0].xyyy, SAMP[0], 2D, IMM[1].xyx\n  1: TXD TEMP[0], IN[0], TEMP[1], TEMP[2], SAMP[3], CUBE\n  2: SAMPLE TEMP[0], IN[0], SVIEW[0], SAMP[0], IMM[0].xyz\n  3: SAMPLE_L TEMP[0], IN[0], SVIEW[0], SAMP[0], IN[1].xxxx\n  4: TXQ TEMP[0], IMM[0].xxxx, SAMP[0], 2D\n  5: END\n",
    );
}

#[test]
fn keywords_are_case_insensitive_and_blanks_flexible() {
    let p = parse("frag\n dcl temp[0..1]\n\tmov_sat  temp[0].xy ,  -| in[ 0 ].YX |\n  3 :  end\n");
    assert_eq!(
        print_program(&p),
        "FRAG\nDCL TEMP[0..1]\n  0: MOV_SAT TEMP[0].xy, -|IN[0].yxxx|\n  1: END\n"
    );
}

#[test]
fn crlf_and_blank_lines() {
    let p = parse("FRAG\r\n\r\nDCL TEMP[0]\r\n  0: END\r\n\r\n");
    assert_eq!(print_program(&p), "FRAG\nDCL TEMP[0]\n  0: END\n");
}

#[test]
fn display_matches_print_program() {
    let p = parse("VERT\nDCL IN[0]\nDCL OUT[0], POSITION\n  0: MOV OUT[0], IN[0]\n  1: END\n");
    assert_eq!(p.to_string(), print_program(&p));
    let q: Program = p.to_string().parse().expect("FromStr");
    assert_eq!(q, p);
}
