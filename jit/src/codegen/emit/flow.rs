//! Execution masks and structured control flow (gallivm's `lp_bld_flow` and the mask stack of
//! `lp_bld_tgsi_soa`): the interpreter's CondMask, LoopMask, ContMask, Switch.mask and FuncMask
//! as SSA variables whose AND is the execution mask, the open IF/loop/SWITCH constructs of the
//! instruction sequence being emitted ([`Open`]: the interpreter's mask stacks become
//! compile-time nesting), and the block helpers every construct uses. Constructs `uniform`
//! proves taken by all lanes together branch without touching the masks.

use cranelift_codegen::ir::types::{I32, I32X4, I64};
use cranelift_codegen::ir::{Block, InstBuilder, Value};
use cranelift_frontend::Variable;

use super::Emitter;

/// Mask variables: the interpreter's CondMask, LoopMask, ContMask, Switch.mask and FuncMask.
pub(super) const COND: usize = 0;
pub(super) const LOOP: usize = 1;
pub(super) const CONT: usize = 2;
pub(super) const SWITCH: usize = 3;
pub(super) const FUNC: usize = 4;

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
pub(super) fn innermost_loop(stack: &[Open]) -> Option<(bool, Block, Block)> {
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

    pub(super) fn set_mask(&mut self, m: usize, v: Value) {
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

    pub(super) fn save(&mut self, v: Value) -> Variable {
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
    pub(super) fn fresh_block(&mut self) {
        let blk = self.b.create_block();
        self.enter(blk);
    }

    pub(super) fn error_return(&mut self, pc: usize, status: u32) {
        let pcv = self.b.ins().iconst(I64, pc as i64);
        self.b
            .ins()
            .store(self.mf, pcv, self.ctx, self.offsets.err_pc);
        let s = self.b.ins().iconst(I32, (status << 8) as i64);
        self.b.ins().return_(&[s]);
    }
}
