//! Narrowing of fragment input declarations to the components the program reads.

use rustc_hash::FxHashMap as HashMap;

use crate::ir::{HeaderItem, Processor, Program, Register, RegisterFile};

/// Narrows the usage mask of each fragment input declaration to the components the program
/// reads (every component a source swizzle names), so the rasterizer interpolates no plane
/// nobody reads; the values the program sees are the same. Left alone when an input is
/// addressed indirectly. An input read nowhere keeps its lowest declared component (a usage
/// mask is never empty).
pub fn narrow_input_usage(program: &mut Program) {
    if program.processor != Processor::Fragment {
        return;
    }
    let mut read: HashMap<i32, u8> = HashMap::default();
    let mut indirect = false;
    let mut note = |reg: &Register, swizzle: &[u8]| {
        if reg.file == RegisterFile::Input {
            indirect |= reg.indirect.is_some();
            *read.entry(reg.index).or_default() |= swizzle.iter().fold(0, |m, &c| m | 1 << c);
        }
    };
    for inst in &program.instructions {
        for src in &inst.src {
            note(&src.reg, &src.swizzle);
        }
        if let Some(tex) = &inst.texture {
            for off in &tex.offsets {
                note(&off.reg, &off.swizzle);
            }
        }
    }
    if indirect {
        return;
    }
    for item in &mut program.header {
        let HeaderItem::Declaration(decl) = item else {
            continue;
        };
        if decl.file != RegisterFile::Input || decl.usage_mask == 0 {
            continue;
        }
        let used = (decl.first..=decl.last)
            .map(|r| read.get(&(r as i32)).copied().unwrap_or(0))
            .fold(0, |m, r| m | r);
        let narrowed = decl.usage_mask & used;
        decl.usage_mask = if narrowed != 0 {
            narrowed
        } else {
            decl.usage_mask & decl.usage_mask.wrapping_neg()
        };
    }
}
