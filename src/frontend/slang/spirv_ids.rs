//! Small pieces every SPIR-V rewrite of this frontend needs: reading id and literal operands, and
//! handing out fresh result ids past the module's bound.

use rspirv::dr::{Module, Operand};
use rspirv::spirv::Word;

/// The id of an `IdRef` operand.
pub(crate) fn id(op: Option<&Operand>) -> Option<Word> {
    match op {
        Some(Operand::IdRef(v)) => Some(*v),
        _ => None,
    }
}

/// The value of a 32-bit literal operand.
pub(crate) fn lit(op: Option<&Operand>) -> Option<u32> {
    match op {
        Some(Operand::LiteralBit32(v)) => Some(*v),
        _ => None,
    }
}

/// Fresh result ids, starting at the module's id bound.
pub(crate) struct Ids {
    next: Word,
}

impl Ids {
    /// Ids after every id `module` uses.
    pub(crate) fn after(module: &Module) -> Ids {
        Ids {
            next: module.header.as_ref().map_or(1, |h| h.bound),
        }
    }

    /// A new id.
    pub(crate) fn fresh(&mut self) -> Word {
        self.next += 1;
        self.next - 1
    }

    /// Raises `module`'s id bound past every id handed out.
    pub(crate) fn finish(self, module: &mut Module) {
        if let Some(h) = module.header.as_mut() {
            h.bound = h.bound.max(self.next);
        }
    }
}
