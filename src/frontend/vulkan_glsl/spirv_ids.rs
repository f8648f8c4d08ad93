//! Small pieces every SPIR-V rewrite of this frontend needs: reading id and literal operands,
//! looking up result types and the GLSL.std.450 import, and handing out fresh result ids past
//! the module's bound.

use std::collections::HashMap;

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

/// The result type of every id that has one (globals, function parameters and instructions).
pub(crate) fn result_types(module: &Module) -> HashMap<Word, Word> {
    module
        .types_global_values
        .iter()
        .chain(module.functions.iter().flat_map(|f| {
            f.parameters
                .iter()
                .chain(f.blocks.iter().flat_map(|b| &b.instructions))
        }))
        .filter_map(|i| Some((i.result_id?, i.result_type?)))
        .collect()
}

/// The id of the module's `GLSL.std.450` extended instruction set import, if any.
pub(crate) fn glsl_std_450(module: &Module) -> Option<Word> {
    module.ext_inst_imports.iter().find_map(|i| {
        matches!(i.operands.first(), Some(Operand::LiteralString(s)) if s == "GLSL.std.450")
            .then_some(i.result_id)
            .flatten()
    })
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
