//! Opcode properties the passes and executors ask about, each answered once, here: how result
//! components depend on source components, which instructions read other lanes of the quad, how
//! a texture instruction's result depends on the quad, what an instruction costs, which
//! components it really writes, and which instructions tie a program to its instruction indices.
//!
//! The table of the text format (name, operand counts, [`OpcodeClass`]) is [`Opcode`]'s own in
//! the parent module, and operand types are in `types.rs`; this file holds the facts the
//! optimisation passes and the executors rely on for exactness. A fact added for one pass
//! belongs here as soon as a second place needs it.

use super::{Instruction, Opcode, OpcodeClass};

/// How an opcode's result components depend on its sources.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Component `c` of the result is a function of component `c` of each source.
    Componentwise,
    /// Every component is one function of the sources' first components.
    Scalar,
    /// Anything else (dot products, texture instructions, packing, flow, …).
    Vector,
}

/// How `op`'s result components depend on its sources (see [`Shape`]).
pub fn shape(op: Opcode) -> Shape {
    use Opcode::*;
    match op {
        MOV | ADD | SUB | MUL | DIV | MAD | FMA | LRP | MIN | MAX | CLAMP | SLT | SGE | SGT
        | SLE | SEQ | SNE | FSLT | FSGE | FSEQ | FSNE | CMP | CND | UCMP | ABS | FLR | CEIL
        | TRUNC | FRC | ROUND | SSG | LDEXP | I2F | U2F | F2I | F2U | NOT | AND | OR | XOR
        | SHL | USHR | ISHR | UADD | UMUL | UMAD | SAD | UDIV | UMOD | IDIV | MOD | IMAX | IMIN
        | UMAX | UMIN | INEG | IABS | ISSG | ISGE | ISLT | USEQ | USNE | USGE | USLT | IMUL_HI
        | UMUL_HI | IBFE | UBFE | BREV | POPC | LSB | UMSB | IMSB => Shape::Componentwise,
        RCP | RSQ | SQRT | EX2 | LG2 | SIN | COS | RCC | POW => Shape::Scalar,
        _ => Shape::Vector,
    }
}

/// The derivatives: `DDX`, `DDY` and their `_FINE` forms, which subtract lanes of the quad.
pub fn is_derivative(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::DDX | Opcode::DDY | Opcode::DDX_FINE | Opcode::DDY_FINE
    )
}

/// Instructions whose result in a lane may depend on the values other lanes of the quad hold:
/// derivatives, and every texture instruction (an implicit level of detail comes from the quad's
/// coordinates; some take lane 0's level, component or offset for the quad, see
/// [`texture_lanes`]). Where lanes may disagree (inside a branch some lanes skipped), a pass must
/// not change what such an instruction reads in the other lanes.
pub fn reads_other_lanes(op: Opcode) -> bool {
    op.class() == OpcodeClass::Texture || is_derivative(op)
}

/// How a texture instruction's result in one lane depends on the other lanes of its quad.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextureLanes {
    /// Each lane's result depends on its own operands alone, on every unit: an explicit level
    /// (`TXL`, `TXL2`, `SAMPLE_L`), level 0 (`TEX_LZ`, `TXF_LZ`, `SAMPLE_C_LZ`), explicit
    /// gradients (`TXD`, `SAMPLE_D`), `GATHER4`'s fixed component, `TXQS`'s sample count.
    Own,
    /// The level of detail comes from the quad's coordinates (`TEX`, `TXB`, `TXP`, `SAMPLE`, …):
    /// each lane's result depends on its own coordinates only on units sampled with one filter
    /// for minification and magnification, at one level or without a mip filter.
    ImplicitLod,
    /// The quad shares lane 0's value: `TXQ`/`SVIEWINFO` and `TXF`/`SAMPLE_I` take lane 0's
    /// level (as softpipe), `TG4` lane 0's component, and `LODQ` reports the quad's level of
    /// detail itself.
    Quad,
}

/// How `op`'s result in a lane depends on the quad, for texture instructions; `None` for
/// every other opcode. (Texel offsets held in temporaries add a dependence on lane 0 for any
/// opcode: softpipe keeps one offset per instruction.)
pub fn texture_lanes(op: Opcode) -> Option<TextureLanes> {
    use Opcode::*;
    if op.class() != OpcodeClass::Texture {
        return None;
    }
    Some(match op {
        TXL | TXL2 | TEX_LZ | TXD | TXF_LZ | TXQS | SAMPLE_L | SAMPLE_D | SAMPLE_C_LZ | GATHER4 => {
            TextureLanes::Own
        }
        LODQ | TXQ | SVIEWINFO | TG4 | TXF | SAMPLE_I => TextureLanes::Quad,
        _ => TextureLanes::ImplicitLod,
    })
}

/// `EX2`, `LG2`, `POW`, `SIN` and `COS`: computed by a math library (glibc's, or llvmpipe's
/// polynomials in the `llvmpipe` math mode), many times the cost of arithmetic.
pub fn is_transcendental(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::EX2 | Opcode::LG2 | Opcode::POW | Opcode::SIN | Opcode::COS
    )
}

/// The weight of transcendental functions and texture instructions in [`cost`].
pub const HEAVY_COST: u32 = 8;

/// A rough per-lane cost of one instruction, as the passes weigh code: copies 0, arithmetic 1,
/// transcendental functions and texture instructions [`HEAVY_COST`].
pub fn cost(op: Opcode) -> u32 {
    match op {
        Opcode::MOV | Opcode::NOP => 0,
        _ if is_transcendental(op) || op.class() == OpcodeClass::Texture => HEAVY_COST,
        _ => 1,
    }
}

/// Whether [`cost`] counts `op` as heavy: worth keeping a result of its own for, and never
/// recomputed where a copy would do.
pub fn is_heavy(op: Opcode) -> bool {
    cost(op) >= HEAVY_COST
}

/// The components `op` writes of those its write mask names: `LODQ` writes x and y only (the
/// executors leave z and w as they were); every other opcode all of them.
pub fn written_components(op: Opcode) -> u8 {
    if op == Opcode::LODQ {
        0b0011
    } else {
        0b1111
    }
}

/// The components an instruction's destination really receives: its write mask, narrowed by
/// [`written_components`].
pub fn written_mask(inst: &Instruction) -> u8 {
    inst.dst.first().map_or(0, |d| d.write_mask) & written_components(inst.opcode)
}

/// Flow control and kills: they change the execution or kill masks, so executors run them even
/// when no lane of the quad is active.
pub fn acts_on_masks(op: Opcode) -> bool {
    matches!(op.class(), OpcodeClass::Flow | OpcodeClass::Kill)
}

/// Loads, stores and atomics of storage buffers and images ([`OpcodeClass::Memory`]): what they
/// read can change between two executions and what they write is seen by other invocations, so
/// the optimisation passes leave a program that holds one of them alone.
pub fn accesses_memory(op: Opcode) -> bool {
    op.class() == OpcodeClass::Memory
}

/// Subroutines and jumps (`CAL`, `CALLNZ`, `BGNSUB`, `ENDSUB`, `BRA`): their labels are
/// instruction indices, so passes that add, remove or move instructions leave a program that
/// holds one of them alone.
pub fn uses_instruction_indices(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::CAL | Opcode::CALLNZ | Opcode::BGNSUB | Opcode::ENDSUB | Opcode::BRA
    )
}
