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

    /// `program` as this driver runs it: with fine derivatives where the driver takes them.
    pub fn rewrite_program(self, program: &Program) -> Cow<'_, Program> {
        let coarse = |op: Opcode| matches!(op, Opcode::DDX | Opcode::DDY);
        if !self.fine_derivatives() || !program.instructions.iter().any(|i| coarse(i.opcode)) {
            return Cow::Borrowed(program);
        }
        let mut program = program.clone();
        for inst in &mut program.instructions {
            inst.opcode = match inst.opcode {
                Opcode::DDX => Opcode::DDX_FINE,
                Opcode::DDY => Opcode::DDY_FINE,
                op => op,
            };
        }
        Cow::Owned(program)
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
