//! Driver profiles: the rules where the drivers softgpu reproduces choose different bits, chosen
//! together by one name (`--driver softpipe|llvmpipe|nvidia`). Each rule lives in its own layer
//! (the math in [`crate::ir::MathMode`], filtering in [`crate::texture::FilterRule`], target
//! conversions in [`crate::texture::Format`]); this module says which each driver uses.
//! docs/fidelity.md ("Driver profiles") gives the probe behind every rule.

use crate::ir::{MathMode, Opcode, Program};
use crate::texture::{FilterRule, Format};
use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

/// A driver whose rules softgpu follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Driver {
    /// Mesa 22.3 softpipe (the default): glibc-exact math, float filtering, coarse
    /// derivatives, Mesa's target conversions.
    #[default]
    Softpipe,
    /// Mesa 22.3 llvmpipe/lavapipe: its polynomial math, 8-bit filtering of UNORM8 textures,
    /// fine derivatives, its sRGB curve (the preset peer's driver).
    Llvmpipe,
    /// An NVIDIA GPU (measured on an H200, driver 580.159): 1/256 filtering weights, fine
    /// derivatives, NVIDIA's UNORM8 and sRGB conversions. Its transcendentals, division,
    /// varying interpolation and fused multiply-adds are not reproduced (docs/fidelity.md).
    Nvidia,
}

impl Driver {
    /// Every driver.
    pub const ALL: [Driver; 3] = [Driver::Softpipe, Driver::Llvmpipe, Driver::Nvidia];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Driver::Softpipe => "softpipe",
            Driver::Llvmpipe => "llvmpipe",
            Driver::Nvidia => "nvidia",
        }
    }

    /// How EX2, LG2, POW, SIN and COS compute. NVIDIA's hardware approximations are not
    /// reproduced, so `Nvidia` keeps the exact functions (closest on average).
    pub fn math(self) -> MathMode {
        match self {
            Driver::Llvmpipe => MathMode::Llvmpipe,
            Driver::Softpipe | Driver::Nvidia => MathMode::Exact,
        }
    }

    /// How bilinear filtering forms weights and values.
    pub fn filter_rule(self) -> FilterRule {
        match self {
            Driver::Softpipe => FilterRule::Exact,
            Driver::Llvmpipe => FilterRule::Llvmpipe,
            Driver::Nvidia => FilterRule::Nvidia,
        }
    }

    /// Whether `DDX`/`DDY` (GLSL `dFdx`/`dFdy`) take each pixel's own row and column of its
    /// quad (llvmpipe, NVIDIA) rather than the quad's one pair of differences (softpipe).
    pub fn fine_derivatives(self) -> bool {
        self != Driver::Softpipe
    }

    /// The format a render target of `format` is written and read with under this driver
    /// (NVIDIA converts UNORM8 and sRGB values its own way).
    pub fn target_format(self, format: Format) -> Format {
        format.with_nvidia_conversions(self == Driver::Nvidia)
    }

    /// Whether `a·b + c` rounds once, as a fused multiply-add: NVIDIA's compiler turns `MAD`
    /// and a `MUL` feeding an `ADD` into `FFMA`; softpipe and llvmpipe round after the multiply
    /// and after the add.
    pub fn contracts_multiply_add(self) -> bool {
        self == Driver::Nvidia
    }

    /// `program` as this driver runs it: with fine derivatives and contracted multiply-adds
    /// where the driver takes them.
    pub fn rewrite_program(self, program: &Program) -> Cow<'_, Program> {
        let rewritten = |op: Opcode| match op {
            Opcode::DDX if self.fine_derivatives() => Some(Opcode::DDX_FINE),
            Opcode::DDY if self.fine_derivatives() => Some(Opcode::DDY_FINE),
            Opcode::MAD if self.contracts_multiply_add() => Some(Opcode::FMA),
            _ => None,
        };
        let contract = self.contracts_multiply_add()
            && program.instructions.iter().any(|i| i.opcode == Opcode::MUL);
        if !contract
            && !program
                .instructions
                .iter()
                .any(|i| rewritten(i.opcode).is_some())
        {
            return Cow::Borrowed(program);
        }
        let mut program = program.clone();
        for inst in &mut program.instructions {
            if let Some(op) = rewritten(inst.opcode) {
                inst.opcode = op;
            }
        }
        if contract {
            contract_multiply_adds(&mut program);
        }
        Cow::Owned(program)
    }
}

/// Where a temporary's component last came from a `MUL`: the instruction and the `MUL`'s own
/// component that wrote it.
#[derive(Clone, Copy)]
struct MulResult {
    inst: usize,
    component: usize,
}

/// Turns each `ADD` one of whose operands is (every component of it) the unmodified result of
/// a `MUL` earlier in the same straight-line code into `FMA` of that `MUL`'s operands and the
/// other addend, as a GPU compiler contracts `a * b + c`. The `MUL` stays (its result may have
/// other readers); an `ADD` is contracted only where the `MUL`'s operands still hold the values
/// it read (nothing written to their registers in between). Operand 0 is preferred when both
/// addends are products.
fn contract_multiply_adds(program: &mut Program) {
    use crate::ir::{OpcodeClass, RegisterFile, SrcOperand};
    use std::collections::HashMap;
    let mut products: HashMap<(i32, usize), MulResult> = HashMap::new();
    let temp_index = |op: &SrcOperand| {
        (op.reg.file == RegisterFile::Temporary
            && op.reg.indirect.is_none()
            && op.reg.dimension.is_none()
            && !op.absolute)
            .then_some(op.reg.index)
    };
    for i in 0..program.instructions.len() {
        let inst = &program.instructions[i];
        if inst.opcode.class() == OpcodeClass::Flow {
            // A join or a branch: what was computed before may not be what reaches here.
            products.clear();
            continue;
        }
        if inst.opcode == Opcode::ADD && inst.dst.len() == 1 && inst.src.len() == 2 {
            let mask = inst.dst[0].write_mask;
            let source = |k: usize| -> Option<(usize, [usize; 4])> {
                let index = temp_index(&inst.src[k])?;
                let mut from = None;
                let mut components = [0usize; 4];
                for (c, component) in components.iter_mut().enumerate() {
                    if mask & (1 << c) == 0 {
                        continue;
                    }
                    let read = usize::from(inst.src[k].swizzle[c]);
                    let product = products.get(&(index, read))?;
                    if from.is_some_and(|m| m != product.inst) {
                        return None;
                    }
                    from = Some(product.inst);
                    *component = product.component;
                }
                Some((from?, components))
            };
            if let Some((k, (mul, components))) = (0..2).find_map(|k| source(k).map(|s| (k, s))) {
                let product = &program.instructions[mul];
                let compose = |operand: &SrcOperand| {
                    let mut out = *operand;
                    for (slot, &from) in out.swizzle.iter_mut().zip(&components) {
                        *slot = operand.swizzle[from];
                    }
                    out
                };
                let mut a = compose(&product.src[0]);
                let b = compose(&product.src[1]);
                a.negate ^= program.instructions[i].src[k].negate;
                let c = program.instructions[i].src[1 - k];
                let add = &mut program.instructions[i];
                add.opcode = Opcode::FMA;
                add.src = vec![a, b, c];
            }
        }
        let inst = &program.instructions[i];
        // Whatever this writes is no longer the product it held, and no product whose operands
        // read it can be recomputed later.
        for dst in &inst.dst {
            let written = dst.reg;
            products.retain(|&(index, component), result| {
                let overwritten = written.file == RegisterFile::Temporary
                    && (written.indirect.is_some()
                        || (written.index == index && dst.write_mask & (1 << component) != 0));
                let reads_it = program.instructions[result.inst].src.iter().any(|s| {
                    s.reg.file == written.file
                        && (s.reg.index == written.index
                            || written.indirect.is_some()
                            || s.reg.indirect.is_some())
                });
                !overwritten && !reads_it
            });
        }
        let inst = &program.instructions[i];
        if inst.opcode == Opcode::MUL
            && !inst.saturate
            && !inst.precise
            && inst.dst.len() == 1
            && inst.dst[0].reg.file == RegisterFile::Temporary
            && inst.dst[0].reg.indirect.is_none()
            && inst.dst[0].reg.dimension.is_none()
        {
            let dst = inst.dst[0];
            let reads_own_result = inst
                .src
                .iter()
                .any(|s| s.reg.file == RegisterFile::Temporary && s.reg.index == dst.reg.index);
            if !reads_own_result {
                for component in 0..4 {
                    if dst.write_mask & (1 << component) != 0 {
                        products
                            .insert((dst.reg.index, component), MulResult { inst: i, component });
                    }
                }
            }
        }
    }
}

impl fmt::Display for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Driver {
    type Err = String;

    fn from_str(s: &str) -> Result<Driver, String> {
        Driver::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| {
                format!("unknown driver `{s}` (expected `softpipe`, `llvmpipe` or `nvidia`)")
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in Driver::ALL {
            assert_eq!(d.name().parse::<Driver>(), Ok(d));
        }
        assert!("radeon".parse::<Driver>().unwrap_err().contains("softpipe"));
    }

    fn opcodes(program: &Program) -> Vec<Opcode> {
        program.instructions.iter().map(|i| i.opcode).collect()
    }

    #[test]
    fn products_feeding_adds_are_contracted_where_their_operands_hold() {
        let program = crate::ir::text::parse_program(
            "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL TEMP[0..2]\n\
             0: MUL TEMP[0].xy, IN[0].xyyy, IN[0].zwww\n\
             1: ADD TEMP[1].xy, -TEMP[0].yxxx, IN[0].xxxx\n\
             2: MUL TEMP[2].x, TEMP[1].xxxx, IN[0].yyyy\n\
             3: MOV TEMP[1].x, IN[0].wwww\n\
             4: ADD TEMP[1].y, TEMP[2].xxxx, IN[0].xxxx\n\
             5: MAD OUT[0], TEMP[1], IN[0], IN[0]\n6: END\n",
        )
        .unwrap();
        let nvidia = Driver::Nvidia.rewrite_program(&program);
        let ops = opcodes(&nvidia);
        assert_eq!(
            ops,
            [
                Opcode::MUL,
                Opcode::FMA,
                Opcode::MUL,
                Opcode::MOV,
                // TEMP[1].x, read by instruction 2, was overwritten: no contraction.
                Opcode::ADD,
                Opcode::FMA,
                Opcode::END
            ]
        );
        // -TEMP[0].yx = -(IN.y·IN.w, IN.x·IN.z): the swizzles compose, the negation moves.
        let fma = &nvidia.instructions[1];
        assert!(fma.src[0].negate && !fma.src[1].negate);
        assert_eq!(&fma.src[0].swizzle[..2], &[1, 0]);
        assert_eq!(&fma.src[1].swizzle[..2], &[3, 2]);
        assert_eq!(
            opcodes(&Driver::Llvmpipe.rewrite_program(&program))[1],
            Opcode::ADD
        );
    }

    #[test]
    fn fine_derivatives_replace_coarse_ones() {
        let program = crate::ir::text::parse_program(
            "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL TEMP[0]\n\
             0: DDX TEMP[0], IN[0]\n1: DDY OUT[0], TEMP[0]\n2: END\n",
        )
        .unwrap();
        assert!(matches!(
            Driver::Softpipe.rewrite_program(&program),
            Cow::Borrowed(_)
        ));
        let fine = Driver::Nvidia.rewrite_program(&program);
        let ops: Vec<Opcode> = fine.instructions.iter().map(|i| i.opcode).collect();
        assert_eq!(ops, [Opcode::DDX_FINE, Opcode::DDY_FINE, Opcode::END]);
    }
}
