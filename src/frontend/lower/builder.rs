//! Instruction and register emission: fresh temporaries, deduplicated immediates, operands built
//! from per-component slots (gathering them into one register when they are spread out).

use std::collections::HashMap;

use crate::ir::{
    DstOperand, Immediate, ImmediateType, Indirect, Instruction, Opcode, Register, RegisterFile,
    SrcOperand,
};

/// One 32-bit component of a register: the unit values are made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    pub reg: Register,
    pub comp: u8,
}

/// A source operand under construction: components plus TGSI modifiers.
#[derive(Clone, Debug)]
pub(crate) struct Src {
    pub slots: Vec<Slot>,
    pub negate: bool,
    pub absolute: bool,
}

/// A plain source.
pub(crate) fn s(slots: &[Slot]) -> Src {
    Src {
        slots: slots.to_vec(),
        negate: false,
        absolute: false,
    }
}

/// A negated source.
pub(crate) fn neg(slots: &[Slot]) -> Src {
    Src {
        negate: true,
        ..s(slots)
    }
}

/// An absolute-value source.
pub(crate) fn abs(slots: &[Slot]) -> Src {
    Src {
        absolute: true,
        ..s(slots)
    }
}

/// True for opcodes that compute from src.x only and replicate the result (TGSI `REPL`).
pub(crate) fn is_scalar_op(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::RCP
            | Opcode::RSQ
            | Opcode::SQRT
            | Opcode::EX2
            | Opcode::LG2
            | Opcode::SIN
            | Opcode::COS
            | Opcode::POW
    )
}

/// Program under construction.
#[derive(Default)]
pub(crate) struct Builder {
    pub insts: Vec<Instruction>,
    pub imms: Vec<Vec<u32>>,
    imm_map: HashMap<u32, Slot>,
    pub next_temp: u32,
    /// `(first, last)` of each `TEMP ARRAY`; the array id is the position + 1.
    pub arrays: Vec<(u32, u32)>,
    pub uses_addr: bool,
}

impl Builder {
    /// A fresh temporary register.
    pub fn temp(&mut self) -> Register {
        let r = Register::new(RegisterFile::Temporary, self.next_temp as i32);
        self.next_temp += 1;
        r
    }

    /// A fresh indexable range of `n` temporaries: (first index, array id).
    pub fn temp_array(&mut self, n: u32) -> (u32, u32) {
        let first = self.next_temp;
        self.next_temp += n.max(1);
        self.arrays.push((first, first + n.max(1) - 1));
        (first, self.arrays.len() as u32)
    }

    /// The slot holding the immediate `bits`, sharing IMM registers four values at a time.
    pub fn imm(&mut self, bits: u32) -> Slot {
        if let Some(s) = self.imm_map.get(&bits) {
            return *s;
        }
        if self.imms.last().is_none_or(|v| v.len() == 4) {
            self.imms.push(Vec::new());
        }
        let index = self.imms.len() - 1;
        let comp = self.imms[index].len() as u8;
        self.imms[index].push(bits);
        let slot = Slot {
            reg: Register::new(RegisterFile::Immediate, index as i32),
            comp,
        };
        self.imm_map.insert(bits, slot);
        slot
    }

    /// A float immediate.
    pub fn immf(&mut self, v: f32) -> Slot {
        self.imm(v.to_bits())
    }

    /// A dedicated immediate register holding `values` in x, y, z… (for texel offsets).
    pub fn imm_register(&mut self, values: &[u32]) -> Register {
        let mut v = values.to_vec();
        v.resize(4, 0);
        self.imms.push(v);
        Register::new(RegisterFile::Immediate, self.imms.len() as i32 - 1)
    }

    /// The value of an immediate slot, if `slot` is one.
    pub fn imm_value(&self, slot: Slot) -> Option<u32> {
        if slot.reg.file != RegisterFile::Immediate {
            return None;
        }
        self.imms
            .get(slot.reg.index as usize)
            .and_then(|v| v.get(slot.comp as usize))
            .copied()
    }

    /// The declared immediates.
    pub fn immediates(&self) -> Vec<Immediate> {
        self.imms
            .iter()
            .map(|v| Immediate {
                ty: ImmediateType::Uint32,
                values: v.clone(),
            })
            .collect()
    }

    /// Appends an instruction and returns it for further adjustment.
    pub fn emit(
        &mut self,
        op: Opcode,
        dst: Option<(Register, u8)>,
        src: Vec<SrcOperand>,
    ) -> &mut Instruction {
        let dst = dst
            .map(|(reg, write_mask)| vec![DstOperand { reg, write_mask }])
            .unwrap_or_default();
        self.insts.push(Instruction::new(op, dst, src));
        self.insts.last_mut().expect("just pushed")
    }

    /// A flow instruction without operands.
    pub fn flow(&mut self, op: Opcode) {
        let needs_label = op.has_label();
        let inst = self.emit(op, None, vec![]);
        if needs_label {
            inst.label = Some(0);
        }
    }

    /// `UIF cond.xxxx` (labels are placeholders, as nir_to_tgsi writes them).
    pub fn uif(&mut self, cond: Slot) {
        let src = self.operand(&[cond]);
        self.emit(Opcode::UIF, None, vec![src]).label = Some(0);
    }

    /// An operand reading `slots` in x, y, z, w order (the last slot repeats to fill four).
    pub fn operand(&mut self, slots: &[Slot]) -> SrcOperand {
        let positions: Vec<u8> = (0..slots.len() as u8).collect();
        self.operand_at(slots, &positions)
    }

    /// An operand whose swizzle position `positions[i]` reads `slots[i]`; slots in different
    /// registers are first gathered into a temporary.
    pub fn operand_at(&mut self, slots: &[Slot], positions: &[u8]) -> SrcOperand {
        let reg = slots[0].reg;
        let slots: Vec<Slot> = if slots.iter().all(|s| s.reg == reg) {
            slots.to_vec()
        } else {
            self.gather(slots)
        };
        let mut swizzle = [slots[0].comp; 4];
        for (s, &p) in slots.iter().zip(positions) {
            swizzle[p as usize] = s.comp;
        }
        // Unwritten positions repeat the last read component (Mesa prints `.xyyy` for a vec2).
        let last = *positions.iter().max().unwrap_or(&0) as usize;
        for p in last + 1..4 {
            swizzle[p] = swizzle[last];
        }
        let mut op = SrcOperand::new(slots[0].reg);
        op.swizzle = swizzle;
        op
    }

    /// Copies `slots` into components 0.. of a fresh temporary.
    pub fn gather(&mut self, slots: &[Slot]) -> Vec<Slot> {
        let t = self.temp();
        let mut done = vec![false; slots.len()];
        for i in 0..slots.len() {
            if done[i] {
                continue;
            }
            let reg = slots[i].reg;
            let mut mask = 0u8;
            let mut swizzle = [slots[i].comp; 4];
            for (j, sl) in slots.iter().enumerate() {
                if !done[j] && sl.reg == reg {
                    done[j] = true;
                    mask |= 1 << j;
                    swizzle[j] = sl.comp;
                }
            }
            let mut op = SrcOperand::new(reg);
            op.swizzle = swizzle;
            self.emit(Opcode::MOV, Some((t, mask)), vec![op]);
        }
        slots_of(t, slots.len())
    }

    fn src_operand(&mut self, src: &Src) -> SrcOperand {
        let mut op = self.operand(&src.slots);
        op.negate = src.negate;
        op.absolute = src.absolute;
        op
    }

    /// `op` over `n` components into a fresh temporary; scalar sources are broadcast.
    pub fn op(&mut self, op: Opcode, n: usize, srcs: &[Src]) -> Vec<Slot> {
        self.op_full(op, n, srcs, false)
    }

    /// Like [`Builder::op`] with `_SAT`.
    pub fn op_sat(&mut self, op: Opcode, n: usize, srcs: &[Src]) -> Vec<Slot> {
        self.op_full(op, n, srcs, true)
    }

    fn op_full(&mut self, op: Opcode, n: usize, srcs: &[Src], sat: bool) -> Vec<Slot> {
        let t = self.temp();
        let srcs: Vec<Src> = srcs
            .iter()
            .map(|src| {
                let mut src = src.clone();
                if src.slots.len() == 1 && n > 1 {
                    src.slots = vec![src.slots[0]; n];
                }
                src
            })
            .collect();
        if is_scalar_op(op) {
            for c in 0..n {
                let ops: Vec<SrcOperand> = srcs
                    .iter()
                    .map(|src| {
                        let one = Src {
                            slots: vec![src.slots[c.min(src.slots.len() - 1)]],
                            ..src.clone()
                        };
                        self.src_operand(&one)
                    })
                    .collect();
                self.emit(op, Some((t, 1 << c)), ops).saturate = sat;
            }
        } else {
            let ops: Vec<SrcOperand> = srcs.iter().map(|src| self.src_operand(src)).collect();
            self.emit(op, Some((t, (1u8 << n) - 1)), ops).saturate = sat;
        }
        slots_of(t, n)
    }

    /// `op` with a scalar result (DP2/DP3/DP4 and similar reductions) into a fresh temporary.
    pub fn reduce(&mut self, op: Opcode, srcs: &[Src]) -> Slot {
        let t = self.temp();
        let ops: Vec<SrcOperand> = srcs.iter().map(|src| self.src_operand(src)).collect();
        self.emit(op, Some((t, 1)), ops);
        Slot { reg: t, comp: 0 }
    }

    /// Writes `slots` to components `first..` of `reg` (which may be indirect).
    pub fn store(&mut self, reg: Register, first: u8, slots: &[Slot]) {
        let positions: Vec<u8> = (first..first + slots.len() as u8).collect();
        let mask = positions.iter().fold(0u8, |m, &p| m | (1 << p));
        let src = self.operand_at(slots, &positions);
        self.emit(Opcode::MOV, Some((reg, mask)), vec![src]);
    }

    /// Loads a scalar integer index into `ADDR[0].x` and returns the indirect reference to it.
    pub fn address(&mut self, index: Slot, array_id: Option<u32>) -> Indirect {
        self.uses_addr = true;
        let src = self.operand(&[index]);
        let addr = Register::new(RegisterFile::Address, 0);
        self.emit(Opcode::UARL, Some((addr, 1)), vec![src]);
        Indirect {
            file: RegisterFile::Address,
            index: 0,
            component: 0,
            array_id,
        }
    }
}

/// Components `0..n` of `reg`.
pub(crate) fn slots_of(reg: Register, n: usize) -> Vec<Slot> {
    (0..n as u8).map(|comp| Slot { reg, comp }).collect()
}
