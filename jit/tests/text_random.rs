//! Randomly generated programs: parse(print(p)) == p for every program the parser can produce,
//! and neither the printer nor the validator panics on arbitrary (even malformed) programs.

use softgpu_jit::ir::text::{parse_program, print_program};
use softgpu_jit::ir::validate::validate;
use softgpu_jit::ir::*;

/// xorshift64*: deterministic, so a failure reproduces.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
    fn small_i32(&mut self) -> i32 {
        match self.below(4) {
            0 => self.next() as i32,
            _ => self.below(40) as i32 - 8,
        }
    }
    fn small_u32(&mut self) -> u32 {
        if self.chance(6) {
            self.next() as u32
        } else {
            self.below(16) as u32
        }
    }
}

fn indirect(r: &mut Rng) -> Indirect {
    Indirect {
        file: r.pick(&[
            RegisterFile::Address,
            RegisterFile::Temporary,
            RegisterFile::Input,
        ]),
        index: r.small_u32(),
        component: r.below(4) as u8,
        array_id: if r.chance(2) {
            Some(r.small_u32())
        } else {
            None
        },
    }
}

fn register(r: &mut Rng) -> Register {
    let mut reg = Register::new(r.pick(RegisterFile::ALL.as_slice()), r.small_i32());
    if r.chance(4) {
        reg.indirect = Some(indirect(r));
    }
    if r.chance(4) {
        reg.dimension = Some(Dimension {
            index: r.small_i32(),
            indirect: if r.chance(3) { Some(indirect(r)) } else { None },
        });
    }
    reg
}

fn declaration(r: &mut Rng, proc: Processor) -> Declaration {
    let file = r.pick(&[
        RegisterFile::Input,
        RegisterFile::Output,
        RegisterFile::Temporary,
        RegisterFile::Constant,
        RegisterFile::Sampler,
        RegisterFile::SamplerView,
        RegisterFile::Address,
        RegisterFile::SystemValue,
    ]);
    let first = r.small_u32();
    let mut d = Declaration::new(file, first, first.saturating_add(r.below(5) as u32));
    d.usage_mask = 1 + r.below(15) as u8;
    let per_vertex = (file == RegisterFile::Input
        && matches!(
            proc,
            Processor::Geometry | Processor::TessCtrl | Processor::TessEval
        ))
        || (file == RegisterFile::Output && proc == Processor::TessCtrl);
    if !per_vertex && r.chance(3) {
        d.dimension = Some(r.small_u32());
    }
    if r.chance(3) {
        d.array_id = Some(r.small_u32());
    }
    d.local = r.chance(4);
    d.invariant = r.chance(4);
    if file == RegisterFile::SamplerView {
        let t = [
            ReturnType::Float,
            ReturnType::Sint,
            ReturnType::Uint,
            ReturnType::Unorm,
        ];
        d.sampler_view = Some(SamplerViewDecl {
            target: r.pick(TextureTarget::ALL),
            return_type: if r.chance(2) {
                [r.pick(&t); 4]
            } else {
                [r.pick(&t), r.pick(&t), r.pick(&t), r.pick(&t)]
            },
        });
    } else if r.chance(2) {
        // Interpolation only follows a semantic: a lone `COLOR` would read as the semantic.
        d.semantic = Some(Semantic {
            name: r.pick(SemanticName::ALL),
            index: r.small_u32(),
        });
        if r.chance(2) {
            d.interpolation = Some(Interpolation {
                mode: r.pick(InterpolateMode::ALL),
                location: r.pick(InterpolateLocation::ALL),
            });
        }
    }
    d
}

fn immediate(r: &mut Rng) -> Immediate {
    let ty = r.pick(ImmediateType::ALL);
    let wide = matches!(
        ty,
        ImmediateType::Float64 | ImmediateType::Uint64 | ImmediateType::Int64
    );
    let n = if wide {
        2 * (1 + r.below(2))
    } else {
        1 + r.below(4)
    };
    let values = (0..n)
        .map(|_| match r.below(3) {
            0 => r.next() as u32,
            1 => (r.below(64) as f32 * 0.25 - 3.0).to_bits(),
            _ => r.below(100) as u32,
        })
        .collect();
    Immediate { ty, values }
}

fn instruction(r: &mut Rng) -> Instruction {
    let op = r.pick(Opcode::ALL);
    let dst = (0..op.num_dst())
        .map(|_| DstOperand {
            reg: register(r),
            write_mask: 1 + r.below(15) as u8,
        })
        .collect();
    let src = (0..op.num_src())
        .map(|_| SrcOperand {
            reg: register(r),
            swizzle: [0; 4].map(|_: u8| r.below(4) as u8),
            negate: r.chance(4),
            absolute: r.chance(4),
        })
        .collect();
    let mut inst = Instruction::new(op, dst, src);
    inst.saturate = r.chance(5);
    inst.precise = r.chance(8);
    if r.chance(4) {
        inst.label = Some(r.small_u32());
    }
    let offsets = |r: &mut Rng, n: usize| -> Vec<TexOffset> {
        (0..n)
            .map(|_| TexOffset {
                reg: register(r),
                swizzle: [0; 3].map(|_: u8| r.below(4) as u8),
            })
            .collect()
    };
    if op.has_texture_target() {
        let n = r.below(3);
        inst.texture = Some(TextureInfo {
            target: r.pick(TextureTarget::ALL),
            offsets: offsets(r, n),
        });
    } else if op.is_sample_family() && r.chance(2) {
        let target = if r.chance(2) {
            TextureTarget::Unknown
        } else {
            r.pick(TextureTarget::ALL)
        };
        // `UNKNOWN` with no offsets prints nothing at all, i.e. reads back as `None`.
        let n = usize::from(target == TextureTarget::Unknown) + r.below(2);
        inst.texture = Some(TextureInfo {
            target,
            offsets: offsets(r, n),
        });
    }
    inst
}

fn program(r: &mut Rng) -> Program {
    let mut p = Program::new(r.pick(&Processor::ALL));
    for _ in 0..r.below(12) {
        let item = match r.below(4) {
            0 => HeaderItem::Property(Property {
                name: r
                    .pick(&["FS_COORD_ORIGIN", "NEXT_SHADER", "GS_MAX_OUTPUT_VERTICES"])
                    .into(),
                values: (0..r.below(3))
                    .map(|_| r.pick(&["1", "LOWER_LEFT", "-3", "FRAG", "4096"]).into())
                    .collect(),
            }),
            1 => HeaderItem::Immediate(immediate(r)),
            _ => HeaderItem::Declaration(declaration(r, p.processor)),
        };
        p.header.push(item);
    }
    for _ in 0..r.below(30) {
        p.instructions.push(instruction(r));
    }
    p
}

#[test]
fn generated_programs_round_trip() {
    let mut r = Rng(0x1234_5678_9abc_def1);
    for n in 0..3000 {
        let p = program(&mut r);
        let text = print_program(&p);
        let back = parse_program(&text).unwrap_or_else(|e| panic!("program {n}: {e}\n{text}"));
        assert_eq!(back, p, "program {n}:\n{text}");
        // Printing is a fixed point.
        assert_eq!(print_program(&back), text);
        let _ = validate(&p);
    }
}

#[test]
fn malformed_programs_do_not_panic_the_printer_or_validator() {
    let mut r = Rng(42);
    for _ in 0..2000 {
        let mut p = program(&mut r);
        for inst in &mut p.instructions {
            // Break every invariant the parser would have enforced.
            match r.below(6) {
                0 => {
                    inst.src.pop();
                }
                1 => inst.dst.push(DstOperand {
                    reg: register(&mut r),
                    write_mask: r.next() as u8,
                }),
                2 => {
                    if let Some(s) = inst.src.first_mut() {
                        s.swizzle = [r.next() as u8; 4];
                    }
                }
                3 => {
                    inst.texture = Some(TextureInfo {
                        target: TextureTarget::Unknown,
                        offsets: vec![TexOffset {
                            reg: register(&mut r),
                            swizzle: [9, 200, 255],
                        }],
                    })
                }
                4 => inst.label = Some(r.next() as u32),
                _ => {}
            }
        }
        if let Some(HeaderItem::Declaration(d)) = p.header.first_mut() {
            d.first = u32::MAX;
            d.last = 0;
            d.usage_mask = 0;
        }
        let text = print_program(&p);
        let _ = parse_program(&text);
        let _ = validate(&p);
    }
}
