//! Execution masks and structured control flow (gallivm's `lp_bld_flow` and the mask stack of
//! `lp_bld_tgsi_soa`): the interpreter's CondMask, LoopMask, ContMask, Switch.mask and FuncMask
//! as SSA variables whose AND is the execution mask, the open IF/loop/SWITCH constructs of the
//! instruction sequence being emitted ([`Open`]: the interpreter's mask stacks become
//! compile-time nesting), the block helpers every construct uses, and the lowering of every flow
//! instruction ([`Emitter::flow_instruction`]): IF/UIF/ELSE/ENDIF, loops with BRK/BREAKC/CONT
//! and the instruction budget counted at ENDLOOP, SWITCH/CASE/DEFAULT, CAL/CALLNZ (the
//! subroutine is inlined through [`Emitter::walk`], up to `MAX_CALL_DEPTH` deep), RET, KILL and
//! END. Every construct is branched over when no lane runs it; constructs `uniform` proves taken
//! by all lanes together branch without touching the masks.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{I32, I32X4, I64};
use cranelift_codegen::ir::{Block, InstBuilder, Value};
use cranelift_frontend::Variable;

use super::{unsupported, Emitter};
use crate::codegen::abi::{STATUS_BUDGET, STATUS_CALL_OVERFLOW};
use crate::codegen::MAX_CALL_DEPTH;
use crate::exec::ExecError;
use crate::interp::decode::Inst;
use crate::ir::Opcode;

/// Mask variables: the interpreter's CondMask, LoopMask, ContMask, Switch.mask and FuncMask.
const COND: usize = 0;
const LOOP: usize = 1;
const CONT: usize = 2;
const SWITCH: usize = 3;
const FUNC: usize = 4;

/// An open flow construct of the current instruction sequence.
pub(super) enum Open {
    /// An IF/UIF; `saved` (the COND mask before it) is `None` for a uniform one, which branches
    /// without touching the masks.
    If {
        saved: Option<Variable>,
        else_block: Option<Block>,
        end: Block,
    },
    /// A loop; `saved` (the LOOP and CONT masks before it) is `None` for a uniform one, whose
    /// `BRK` jumps to `after` and `CONT` to `latch` instead of narrowing the masks.
    Loop {
        saved: Option<(Variable, Variable)>,
        header: Block,
        latch: Block,
        after: Block,
        count: i64,
    },
    Switch {
        prev: Variable,
        selector: Variable,
        matched: Variable,
        after: Block,
    },
}

impl Open {
    /// Whether every lane executes inside this construct that executes at its start.
    pub(super) fn is_uniform(&self) -> bool {
        match self {
            Open::If { saved, .. } => saved.is_none(),
            Open::Loop { saved, .. } => saved.is_none(),
            Open::Switch { .. } => false,
        }
    }
}

/// The innermost open loop on `stack`: whether it is uniform, its latch and its exit.
fn innermost_loop(stack: &[Open]) -> Option<(bool, Block, Block)> {
    stack.iter().rev().find_map(|o| match *o {
        Open::Loop {
            saved,
            latch,
            after,
            ..
        } => Some((saved.is_none(), latch, after)),
        _ => None,
    })
}

impl Emitter<'_, '_> {
    pub(super) fn mask(&mut self, m: usize) -> Value {
        self.b.use_var(self.masks[m])
    }

    fn set_mask(&mut self, m: usize, v: Value) {
        self.b.def_var(self.masks[m], v);
        let mut e = self.mask(0);
        for k in 1..5 {
            let x = self.mask(k);
            e = self.b.ins().band(e, x);
        }
        self.b.def_var(self.exec, e);
    }

    pub(super) fn exec(&mut self) -> Value {
        self.b.use_var(self.exec)
    }

    pub(super) fn any(&mut self, v: Value) -> Value {
        self.b.ins().vany_true(v)
    }

    fn save(&mut self, v: Value) -> Variable {
        let var = self.declare(I32X4);
        self.b.def_var(var, v);
        var
    }

    /// Continues emission in `block`, all of whose predecessors have been emitted: sealing it
    /// now lets Cranelift's SSA construction look variables up in the predecessors instead of
    /// adding a block parameter for each (which it removed again at the end, at a tenth of
    /// the compile time, and which left moves to allocate).
    pub(super) fn enter(&mut self, block: Block) {
        self.b.seal_block(block);
        self.b.switch_to_block(block);
    }

    /// Continues emission in a fresh block (after an unconditional jump or return).
    fn fresh_block(&mut self) {
        let blk = self.b.create_block();
        self.enter(blk);
    }

    fn error_return(&mut self, pc: usize, status: u32) {
        let pcv = self.b.ins().iconst(I64, pc as i64);
        self.b
            .ins()
            .store(self.mf, pcv, self.ctx, self.offsets.err_pc);
        let s = self.b.ins().iconst(I32, (status << 8) as i64);
        self.b.ins().return_(&[s]);
    }

    /// Emits flow instruction `inst` (at `pc`) of the sequence [`Self::walk`] is emitting, whose
    /// open constructs are `stack`; `sub_ret` and `depth` are the walk's. Returns the program
    /// counter of the next instruction to emit.
    pub(super) fn flow_instruction(
        &mut self,
        inst: Inst,
        pc: usize,
        stack: &mut Vec<Open>,
        sub_ret: Option<Block>,
        depth: usize,
    ) -> Result<usize, ExecError> {
        match inst.op {
            Opcode::END => {
                self.b.ins().jump(self.exit, &[]);
                self.fresh_block();
            }
            Opcode::BGNSUB => return Ok(inst.target as usize + 1),
            Opcode::ENDSUB => {
                let to = sub_ret.unwrap_or(self.exit);
                self.b.ins().jump(to, &[]);
                self.fresh_block();
            }
            Opcode::NOP => {}
            Opcode::KILL | Opcode::KILP => {
                let k = self.b.use_var(self.kill);
                let e = self.exec();
                let k = self.b.ins().bor(k, e);
                self.b.def_var(self.kill, k);
            }
            Opcode::KILL_IF | Opcode::KIL => {
                let zero = Self::flushed(self.splat(0));
                let mut any = None;
                for c in 0..4 {
                    let v = self.fetch(&inst.src[0], c, pc)?;
                    let lt = self.fcmp(FloatCC::LessThan, v, zero);
                    any = Some(match any {
                        None => lt,
                        Some(a) => self.b.ins().bor(a, lt),
                    });
                }
                let any = any.unwrap_or(zero.v);
                let e = self.exec();
                let m = self.b.ins().band(any, e);
                let k = self.b.use_var(self.kill);
                let k = self.b.ins().bor(k, m);
                self.b.def_var(self.kill, k);
            }
            Opcode::IF | Opcode::UIF => {
                let x = self.fetch(&inst.src[0], 0, pc)?;
                let t = if inst.op == Opcode::IF {
                    self.float_true(x.v)
                } else {
                    let zero = self.splat(0);
                    let x = self.i(x.v);
                    self.b.ins().icmp(IntCC::NotEqual, x, zero)
                };
                let has_else = self.d.insts[inst.target as usize].op == Opcode::ELSE;
                let body = self.b.create_block();
                let skip = self.b.create_block();
                let end = if has_else {
                    self.b.create_block()
                } else {
                    skip
                };
                let saved = if self.uniform.get(pc).copied().unwrap_or(false) {
                    // Every lane holds the same condition: branch on it.
                    let any = self.any(t);
                    self.b.ins().brif(any, body, &[], skip, &[]);
                    None
                } else {
                    let cond = self.mask(COND);
                    let saved = self.save(cond);
                    let c = self.b.ins().band(cond, t);
                    self.set_mask(COND, c);
                    let e = self.exec();
                    let any = self.any(e);
                    self.b.ins().brif(any, body, &[], skip, &[]);
                    Some(saved)
                };
                self.enter(body);
                stack.push(Open::If {
                    saved,
                    else_block: has_else.then_some(skip),
                    end,
                });
            }
            Opcode::ELSE => {
                let Some(Open::If {
                    saved,
                    else_block,
                    end,
                }) = stack.last_mut()
                else {
                    return Err(unsupported(pc, "ELSE without IF"));
                };
                let (saved, end) = (*saved, *end);
                let Some(eb) = else_block.take() else {
                    return Err(unsupported(pc, "ELSE without IF"));
                };
                if saved.is_none() {
                    self.b.ins().jump(end, &[]);
                } else {
                    // The lanes of the ELSE part run next, through `eb`'s mask update.
                    self.b.ins().jump(eb, &[]);
                }
                self.enter(eb);
                if let Some(saved) = saved {
                    let prev = self.b.use_var(saved);
                    let cond = self.mask(COND);
                    let c = self.b.ins().band_not(prev, cond);
                    self.set_mask(COND, c);
                    let body = self.b.create_block();
                    let e = self.exec();
                    let any = self.any(e);
                    self.b.ins().brif(any, body, &[], end, &[]);
                    self.enter(body);
                }
            }
            Opcode::ENDIF => {
                let Some(Open::If { saved, end, .. }) = stack.pop() else {
                    return Err(unsupported(pc, "ENDIF without IF"));
                };
                self.b.ins().jump(end, &[]);
                self.enter(end);
                if let Some(saved) = saved {
                    let v = self.b.use_var(saved);
                    self.set_mask(COND, v);
                }
            }
            Opcode::BGNLOOP => {
                let header = self.b.create_block();
                let latch = self.b.create_block();
                let after = self.b.create_block();
                let pre = self.b.create_block();
                let e = self.exec();
                let any = self.any(e);
                self.b.ins().brif(any, pre, &[], after, &[]);
                self.enter(pre);
                let saved = if self.uniform.get(pc).copied().unwrap_or(false) {
                    // All lanes leave together: the body runs on the lanes that entered.
                    self.b.ins().jump(header, &[]);
                    None
                } else {
                    let l = self.mask(LOOP);
                    let saved_loop = self.save(l);
                    let c = self.mask(CONT);
                    let saved_cont = self.save(c);
                    self.b.ins().jump(header, &[]);
                    Some((saved_loop, saved_cont))
                };
                self.b.switch_to_block(header);
                stack.push(Open::Loop {
                    saved,
                    header,
                    latch,
                    after,
                    count: 0,
                });
            }
            Opcode::ENDLOOP => {
                let Some(Open::Loop {
                    saved,
                    header,
                    latch,
                    after,
                    count,
                }) = stack.pop()
                else {
                    return Err(unsupported(pc, "ENDLOOP without BGNLOOP"));
                };
                self.b.ins().jump(latch, &[]);
                self.enter(latch);
                if let Some((_, saved_cont)) = saved {
                    let c = self.b.use_var(saved_cont);
                    self.set_mask(CONT, c);
                }
                // Budget: a lower bound of the instructions this iteration executed.
                let n = self.b.use_var(self.counter);
                let n = self.b.ins().iadd_imm_s(n, count.max(1));
                self.b.def_var(self.counter, n);
                let over = self
                    .b
                    .ins()
                    .icmp(IntCC::UnsignedGreaterThan, n, self.budget);
                let bad = self.b.create_block();
                let ok = self.b.create_block();
                self.b.ins().brif(over, bad, &[], ok, &[]);
                self.enter(bad);
                self.error_return(pc, STATUS_BUDGET);
                self.enter(ok);
                match saved {
                    None => {
                        self.b.ins().jump(header, &[]);
                        self.b.seal_block(header);
                    }
                    Some((saved_loop, saved_cont)) => {
                        let exit = self.b.create_block();
                        let e = self.exec();
                        let any = self.any(e);
                        self.b.ins().brif(any, header, &[], exit, &[]);
                        self.b.seal_block(header);
                        self.enter(exit);
                        let l = self.b.use_var(saved_loop);
                        self.b.def_var(self.masks[LOOP], l);
                        let c = self.b.use_var(saved_cont);
                        self.set_mask(CONT, c);
                        self.b.ins().jump(after, &[]);
                    }
                }
                self.enter(after);
            }
            Opcode::BRK | Opcode::BREAKC | Opcode::CONT
                if !(inst.breaks_switch && inst.op != Opcode::CONT)
                    && innermost_loop(stack).is_some_and(|l| l.0) =>
            {
                // A uniform loop's exits: every lane takes them together.
                let (_, latch, after) = innermost_loop(stack).expect("checked above");
                let to = if inst.op == Opcode::CONT {
                    latch
                } else {
                    after
                };
                let next = self.b.create_block();
                if inst.op == Opcode::BREAKC {
                    let x = self.fetch(&inst.src[0], 0, pc)?;
                    let zero = self.splat(0);
                    let x = self.i(x.v);
                    let t = self.b.ins().icmp(IntCC::NotEqual, x, zero);
                    let any = self.any(t);
                    self.b.ins().brif(any, to, &[], next, &[]);
                } else {
                    self.b.ins().jump(to, &[]);
                }
                self.enter(next);
            }
            Opcode::BRK | Opcode::BREAKC => {
                let mut lanes = self.exec();
                if inst.op == Opcode::BREAKC {
                    let x = self.fetch(&inst.src[0], 0, pc)?;
                    let zero = self.splat(0);
                    let x = self.i(x.v);
                    let t = self.b.ins().icmp(IntCC::NotEqual, x, zero);
                    lanes = self.b.ins().band(lanes, t);
                }
                let m = if inst.breaks_switch { SWITCH } else { LOOP };
                let cur = self.mask(m);
                let v = self.b.ins().band_not(cur, lanes);
                self.set_mask(m, v);
            }
            Opcode::CONT => {
                let e = self.exec();
                let cur = self.mask(CONT);
                let v = self.b.ins().band_not(cur, e);
                self.set_mask(CONT, v);
            }
            Opcode::SWITCH => {
                let body = self.b.create_block();
                let after = self.b.create_block();
                let e = self.exec();
                let any = self.any(e);
                self.b.ins().brif(any, body, &[], after, &[]);
                self.enter(body);
                let sel = self.fetch(&inst.src[0], 0, pc)?.v;
                let sel = self.i(sel);
                let mut matched = self.splat(0);
                for k in 0..self.d.cases[inst.aux as usize].len() {
                    let case_pc = self.d.cases[inst.aux as usize][k] as usize;
                    let case = self.d.insts[case_pc];
                    let v = self.fetch(&case.src[0], 0, case_pc)?.v;
                    let v = self.i(v);
                    let eq = self.b.ins().icmp(IntCC::Equal, sel, v);
                    matched = self.b.ins().bor(matched, eq);
                }
                let cur = self.mask(SWITCH);
                let prev = self.save(cur);
                let selector = self.save(sel);
                let matched = self.save(matched);
                let zero = self.splat(0);
                self.set_mask(SWITCH, zero);
                stack.push(Open::Switch {
                    prev,
                    selector,
                    matched,
                    after,
                });
            }
            Opcode::CASE | Opcode::DEFAULT => {
                let Some(&Open::Switch {
                    prev,
                    selector,
                    matched,
                    ..
                }) = stack
                    .iter()
                    .rev()
                    .find(|o| matches!(o, Open::Switch { .. }))
                else {
                    return Err(unsupported(pc, "CASE outside of a SWITCH"));
                };
                let prev = self.b.use_var(prev);
                let add = if inst.op == Opcode::CASE {
                    let sel = self.b.use_var(selector);
                    let v = self.fetch(&inst.src[0], 0, pc)?.v;
                    let v = self.i(v);
                    let eq = self.b.ins().icmp(IntCC::Equal, sel, v);
                    self.b.ins().band(eq, prev)
                } else {
                    let m = self.b.use_var(matched);
                    self.b.ins().band_not(prev, m)
                };
                let cur = self.mask(SWITCH);
                let v = self.b.ins().bor(cur, add);
                self.set_mask(SWITCH, v);
            }
            Opcode::ENDSWITCH => {
                let Some(Open::Switch { prev, after, .. }) = stack.pop() else {
                    return Err(unsupported(pc, "ENDSWITCH without SWITCH"));
                };
                let p = self.b.use_var(prev);
                self.set_mask(SWITCH, p);
                self.b.ins().jump(after, &[]);
                self.enter(after);
            }
            Opcode::CAL | Opcode::CALLNZ => {
                let e = self.exec();
                let lanes = if inst.op == Opcode::CALLNZ {
                    let x = self.fetch(&inst.src[0], 0, pc)?;
                    let t = self.float_true(x.v);
                    self.b.ins().band(e, t)
                } else {
                    e
                };
                let call = self.b.create_block();
                let after = self.b.create_block();
                let any = self.any(lanes);
                self.b.ins().brif(any, call, &[], after, &[]);
                self.enter(call);
                if depth >= MAX_CALL_DEPTH {
                    self.error_return(pc, STATUS_CALL_OVERFLOW);
                } else {
                    let saved: Vec<Variable> = (0..5)
                        .map(|m| {
                            let v = self.mask(m);
                            self.save(v)
                        })
                        .collect();
                    let func = self.mask(FUNC);
                    let not_exec = self.b.ins().bnot(e);
                    let keep = self.b.ins().bor(lanes, not_exec);
                    let f = self.b.ins().band(func, keep);
                    self.set_mask(FUNC, f);
                    let ret = self.b.create_block();
                    let sub = inst.target as usize;
                    let endsub = self.d.insts[sub].target as usize;
                    self.walk(sub + 1, endsub, Some(ret), depth + 1)?;
                    self.b.ins().jump(ret, &[]);
                    self.enter(ret);
                    for (m, var) in saved.into_iter().enumerate() {
                        let v = self.b.use_var(var);
                        self.b.def_var(self.masks[m], v);
                    }
                    let c = self.mask(COND);
                    self.set_mask(COND, c);
                    self.b.ins().jump(after, &[]);
                }
                self.enter(after);
            }
            Opcode::RET => {
                let e = self.exec();
                let func = self.mask(FUNC);
                let f = self.b.ins().band_not(func, e);
                self.set_mask(FUNC, f);
                let cont = self.b.create_block();
                let any = self.any(f);
                let to = match sub_ret {
                    Some(r) => r,
                    None => {
                        self.ret_in_main = true;
                        self.exit
                    }
                };
                self.b.ins().brif(any, cont, &[], to, &[]);
                self.enter(cont);
            }
            other => {
                return Err(unsupported(
                    pc,
                    format!("{} is not a flow instruction", other.name()),
                ))
            }
        }
        Ok(pc + 1)
    }
}
