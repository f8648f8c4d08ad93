//! Local value numbering: an instruction that recomputes a value the program already holds in a
//! register becomes a `MOV` of that register, bit for bit what recomputing gives.
//!
//! After unrolling ([`super::unroll`]) and if-conversion ([`super::ifconv`]), a multi-tap shader is
//! one long straight run in which taps repeat: crt-lottes reads the texels of its three beam lines
//! again for its five bloom lines, each through the same sRGB curve (three `POW`s per texel). Mesa
//! gets them once through LLVM's value numbering; this pass does it on the IR, so the interpreter
//! and the JIT run the same smaller program.
//!
//! The frontends reuse temporaries as soon as a value is dead, so the register that held a
//! result is usually overwritten before the recomputation comes: heavy results (texture reads,
//! `EX2`, `LG2`, `POW`, `SIN`, `COS`) are computed into a register of their own and copied to
//! their destination, so they stay available.
//!
//! Values are numbered per register component: a plain `MOV` copies its source's numbers, every
//! other write gets the number of its expression — the opcode, `_SAT`, the texture target and
//! offsets, and each source's modifiers and the numbers of the four components its swizzle
//! reads. Two instructions with the same expression compute the same bits (every instruction is
//! a function of its sources; texture instructions of their sources and the bound textures, which
//! do not change during a draw), so the second one reads the first one's result instead.
//!
//! Equal numbers must mean equal values in all four lanes, because derivatives and texture
//! instructions read the other lanes of the quad. The pass therefore numbers only code outside
//! every branch, loop and switch and before any `RET` (where every write reaches all four lanes),
//! steps over branches, loops and switches (what they write gets fresh numbers after them, as
//! some lanes may have written it; values from before them stay known), and never treats an
//! output as holding a value (outputs are written in live lanes only). Instructions with indirectly addressed operands get
//! fresh numbers; an indirect write forgets everything.

use rustc_hash::FxHashMap as HashMap;

use crate::ir::props::{self, shape, Shape};
use crate::ir::structure::Structure;
use crate::ir::{
    DstOperand, Instruction, Opcode, OpcodeClass, Program, Register, RegisterFile, SrcOperand,
    TextureTarget,
};

/// A directly addressed register: file, outer dimension (-1 when none) and index.
type Loc = (RegisterFile, i32, i32);

/// A destination component, the number of the value it receives, and a register component
/// holding that value.
type Holder = (u8, u32, (Loc, u8));

/// What an instruction computes, in value numbers.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Expr {
    opcode: Opcode,
    saturate: bool,
    target: Option<TextureTarget>,
    /// Per source: negate, absolute, and the numbers of the swizzled components.
    sources: Vec<(bool, bool, [u32; 4])>,
    /// Per texel offset operand: the numbers of its three components.
    offsets: Vec<[u32; 3]>,
}

#[derive(Default)]
struct Numbering {
    next: u32,
    /// The number of the value each register component holds.
    numbers: HashMap<(Loc, u8), u32>,
    /// Register components that held a number when it was given (checked against `numbers`
    /// before use).
    holders: HashMap<u32, Vec<(Loc, u8)>>,
    /// Numbers of the components each expression has produced.
    exprs: HashMap<Expr, [Option<u32>; 4]>,
    /// The program's immediates, numbered by their bits: equal constants in different
    /// immediates (unrolled loops write one per iteration) are one value.
    immediates: Vec<[u32; 4]>,
    constants: HashMap<u32, u32>,
    /// The next TEMP index free for a heavy result's own register.
    next_temp: u32,
}

fn direct(reg: &Register) -> Option<Loc> {
    let dim = match reg.dimension {
        None => -1,
        Some(d) if d.indirect.is_none() && d.index >= 0 => d.index,
        Some(_) => return None,
    };
    (reg.indirect.is_none() && reg.index >= 0).then_some((reg.file, dim, reg.index))
}

fn register_at(loc: Loc) -> Register {
    let mut reg = Register::new(loc.0, loc.2);
    if loc.1 >= 0 {
        reg.dimension = Some(crate::ir::Dimension {
            index: loc.1,
            indirect: None,
        });
    }
    reg
}

impl Numbering {
    fn fresh(&mut self) -> u32 {
        self.next += 1;
        self.next
    }

    fn number(&mut self, loc: Loc, comp: u8) -> u32 {
        if let Some(&n) = self.numbers.get(&(loc, comp)) {
            return n;
        }
        let constant = (loc.0 == RegisterFile::Immediate)
            .then(|| self.immediates.get(loc.2 as usize))
            .flatten()
            .map(|imm| imm[comp as usize]);
        let n = match constant {
            Some(bits) => match self.constants.get(&bits) {
                Some(&n) => n,
                None => {
                    let n = self.fresh();
                    self.constants.insert(bits, n);
                    n
                }
            },
            None => self.fresh(),
        };
        self.set(loc, comp, n);
        n
    }

    fn set(&mut self, loc: Loc, comp: u8, n: u32) {
        self.numbers.insert((loc, comp), n);
        self.holders.entry(n).or_default().push((loc, comp));
    }

    /// A register component other than an output that holds `n` now.
    fn holder(&self, n: u32) -> Option<(Loc, u8)> {
        self.holders.get(&n)?.iter().copied().find(|&(loc, c)| {
            loc.0 != RegisterFile::Output && self.numbers.get(&(loc, c)) == Some(&n)
        })
    }

    fn clear(&mut self) {
        self.numbers.clear();
        self.holders.clear();
        self.exprs.clear();
        self.constants.clear();
    }

    fn source_numbers(&mut self, src: &SrcOperand, loc: Loc) -> [u32; 4] {
        src.swizzle.map(|c| self.number(loc, c))
    }

    /// The expression each written component of `inst` computes, with the slot of the
    /// expression's results it is (one slot per component for vector operations, slot 0 for
    /// the per-component expressions of componentwise and scalar operations); None when an
    /// operand is addressed indirectly.
    fn exprs_of(&mut self, inst: &Instruction, mask: u8) -> Option<Vec<(u8, Expr, usize)>> {
        let mut operands = Vec::with_capacity(inst.src.len());
        for s in &inst.src {
            operands.push((s, direct(&s.reg)?));
        }
        let mut offsets = Vec::new();
        if let Some(t) = &inst.texture {
            for o in &t.offsets {
                let loc = direct(&o.reg)?;
                offsets.push(o.swizzle.map(|c| self.number(loc, c)));
            }
        }
        let shape = shape(inst.opcode);
        let mut out = Vec::new();
        for c in (0..4u8).filter(|c| mask & (1 << c) != 0) {
            let lane = match shape {
                Shape::Componentwise => Some(c as usize),
                Shape::Scalar => Some(0),
                Shape::Vector => None,
            };
            let sources = operands
                .iter()
                .map(|&(s, loc)| {
                    let numbers = match lane {
                        Some(l) => [self.number(loc, s.swizzle[l]), 0, 0, 0],
                        None => self.source_numbers(s, loc),
                    };
                    (s.negate, s.absolute, numbers)
                })
                .collect();
            let expr = Expr {
                opcode: inst.opcode,
                saturate: inst.saturate,
                target: inst.texture.as_ref().map(|t| t.target),
                sources,
                offsets: offsets.clone(),
            };
            out.push((c, expr, if lane.is_some() { 0 } else { c as usize }));
        }
        Some(out)
    }

    /// Numbers `inst` (outside all flow); returns the instructions that replace it.
    fn visit(&mut self, inst: Instruction) -> Vec<Instruction> {
        let op = inst.opcode;
        if !matches!(
            op.class(),
            OpcodeClass::Alu | OpcodeClass::Texture | OpcodeClass::Address
        ) || op == Opcode::NOP
        {
            return vec![inst];
        }
        let [dst] = inst.dst.as_slice() else {
            return vec![inst];
        };
        let dst = *dst;
        let Some(dst_loc) = direct(&dst.reg) else {
            // An indirect write may change any register of its file.
            self.clear();
            return vec![inst];
        };
        let mask = props::written_mask(&inst);
        let comps = || (0..4u8).filter(move |c| mask & (1 << c) != 0);
        let numbering = dst_loc.0 == RegisterFile::Temporary && op.class() != OpcodeClass::Address;
        let plain_mov =
            op == Opcode::MOV && !inst.saturate && !inst.src[0].negate && !inst.src[0].absolute;
        if numbering && plain_mov {
            if let Some(loc) = direct(&inst.src[0].reg) {
                let numbers = self.source_numbers(&inst.src[0], loc);
                for c in comps() {
                    self.set(dst_loc, c, numbers[c as usize]);
                }
                return vec![inst];
            }
        }
        let exprs = if numbering {
            self.exprs_of(&inst, mask)
        } else {
            None
        };
        let Some(exprs) = exprs else {
            for c in comps() {
                let n = self.fresh();
                self.set(dst_loc, c, n);
            }
            return vec![inst];
        };
        let known: Vec<Option<u32>> = exprs
            .iter()
            .map(|(_, e, slot)| self.exprs.get(e).and_then(|r| r[*slot]))
            .collect();
        let holders: Option<Vec<Holder>> = exprs
            .iter()
            .zip(&known)
            .map(|((c, _, _), n)| {
                let n = (*n)?;
                Some((*c, n, self.holder(n)?))
            })
            .collect();
        if let Some(holders) = holders {
            let replacement = copies(dst, &holders);
            for &(c, n, _) in &holders {
                self.set(dst_loc, c, n);
            }
            return replacement;
        }
        // The value of one scalar operation is the same in every component it writes.
        let mut scalar_result = None;
        // A heavy result is computed into a register of its own, which nothing else writes,
        // so a recomputation later finds it even after the frontend's temporaries are reused.
        let keep = props::is_heavy(inst.opcode);
        let kept = keep.then(|| {
            let reg = Register::new(RegisterFile::Temporary, self.next_temp as i32);
            self.next_temp += 1;
            reg
        });
        for ((c, expr, slot), n) in exprs.into_iter().zip(known) {
            let n = match (n, shape(inst.opcode)) {
                (Some(n), _) => n,
                (None, Shape::Scalar) => *scalar_result.get_or_insert_with(|| self.fresh()),
                (None, _) => self.fresh(),
            };
            self.exprs.entry(expr).or_insert([None; 4])[slot] = Some(n);
            if let Some(reg) = kept {
                self.set(direct(&reg).expect("direct"), c, n);
            }
            self.set(dst_loc, c, n);
        }
        match kept {
            None => vec![inst],
            Some(reg) => {
                let mut compute = inst;
                compute.dst[0].reg = reg;
                let copy = Instruction::new(
                    Opcode::MOV,
                    vec![DstOperand {
                        write_mask: mask,
                        ..dst
                    }],
                    vec![SrcOperand::new(reg)],
                );
                vec![compute, copy]
            }
        }
    }
}

/// `MOV`s that write each component of `dst` from its holder, one per holding register.
fn copies(dst: DstOperand, holders: &[Holder]) -> Vec<Instruction> {
    let mut out: Vec<Instruction> = Vec::new();
    let mut done = 0u8;
    for &(_, _, (loc, _)) in holders {
        let mut mask = 0u8;
        let mut swizzle = [0u8; 4];
        for &(c, _, (l, hc)) in holders {
            if l == loc && done & (1 << c) == 0 {
                mask |= 1 << c;
                swizzle[c as usize] = hc;
            }
        }
        if mask == 0 {
            continue;
        }
        done |= mask;
        // Unwritten lanes of the swizzle repeat a written one, as the printer expects.
        let first = swizzle[mask.trailing_zeros() as usize];
        for (c, s) in swizzle.iter_mut().enumerate() {
            if mask & (1 << c) == 0 {
                *s = first;
            }
        }
        out.push(Instruction::new(
            Opcode::MOV,
            vec![DstOperand {
                reg: dst.reg,
                write_mask: mask,
            }],
            vec![SrcOperand {
                reg: register_at(loc),
                swizzle,
                negate: false,
                absolute: false,
            }],
        ));
    }
    out
}

/// Replaces recomputed values by copies (see the module documentation); returns whether the
/// program changed.
pub fn number_values(program: &mut Program) -> bool {
    if super::has_subroutines(&program.instructions) {
        return false;
    }
    let Ok(structure) = Structure::of(&program.instructions) else {
        return false;
    };
    let first_temp = program.file_size(RegisterFile::Temporary);
    let mut state = Numbering {
        next_temp: first_temp,
        immediates: program
            .immediates()
            .map(crate::ir::Immediate::components)
            .collect(),
        ..Numbering::default()
    };
    let mut returned = false;
    let mut changed = false;
    // Register components written inside the branch, loop or switch being skipped; an indirect
    // write there forgets everything.
    let mut written_inside: Vec<(Loc, u8)> = Vec::new();
    let mut forget_all = false;
    let mut out = Vec::with_capacity(program.instructions.len());
    for (pc, inst) in std::mem::take(&mut program.instructions)
        .into_iter()
        .enumerate()
    {
        let depth = structure.depth(pc);
        if inst.opcode.class() == OpcodeClass::Flow {
            match inst.opcode {
                // Leaving the outermost construct: what it wrote gets fresh numbers.
                Opcode::ENDIF | Opcode::ENDLOOP | Opcode::ENDSWITCH if depth == 0 => {
                    if forget_all {
                        state.clear();
                    }
                    for (loc, c) in written_inside.drain(..) {
                        let n = state.fresh();
                        state.set(loc, c, n);
                    }
                    forget_all = false;
                }
                Opcode::RET => returned = true,
                _ => {}
            }
            out.push(inst);
            continue;
        }
        if returned {
            out.push(inst);
            continue;
        }
        if depth > 0 {
            for d in &inst.dst {
                match direct(&d.reg) {
                    Some(loc) => written_inside.extend(
                        (0..4u8)
                            .filter(|c| d.write_mask & (1 << c) != 0)
                            .map(|c| (loc, c)),
                    ),
                    None => forget_all = true,
                }
            }
            out.push(inst);
            continue;
        }
        let original = inst.clone();
        let replaced = state.visit(inst);
        changed |= replaced.len() != 1 || replaced[0] != original;
        out.extend(replaced);
    }
    program.instructions = out;
    if state.next_temp > first_temp {
        program.header.push(crate::ir::HeaderItem::Declaration(
            crate::ir::Declaration::new(RegisterFile::Temporary, first_temp, state.next_temp - 1),
        ));
    }
    changed
}
