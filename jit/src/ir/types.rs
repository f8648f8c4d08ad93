//! Operand types per opcode, after Mesa's `tgsi_opcode_infer_type`/`tgsi_opcode_infer_src_type`.
//! They decide whether `-`/`|…|` source modifiers are float or integer operations and whether
//! `_SAT` applies.

use super::{Opcode, ValueType};

impl Opcode {
    /// The type of the destination value.
    pub fn dst_type(self) -> ValueType {
        use Opcode::*;
        match self {
            MOV | UCMP => ValueType::Untyped,
            NOT | SHL | AND | OR | XOR | TXQ | TXQS | F2U | UDIV | UMAD | UMAX | UMIN | UMOD
            | UMUL | USEQ | USGE | USLT | USNE | USHR | UARL | UADD | FSEQ | FSGE | FSLT
            | FSNE | POPC | LSB | UMSB | BREV | UBFE | BFI | UMUL_HI | SVIEWINFO | PK2H
            | PK2US | PK4B | PK4UB => ValueType::Unsigned,
            ARL | ARR | MOD | F2I | IDIV | IMAX | IMIN | INEG | ISGE | ISHR | ISLT | IABS
            | ISSG | IMUL_HI | IBFE | IMSB => ValueType::Signed,
            _ => ValueType::Float,
        }
    }

    /// The type source operand `index` is read as.
    pub fn src_type(self, index: usize) -> ValueType {
        use Opcode::*;
        if index == 1 && self == LDEXP {
            return ValueType::Signed;
        }
        match self {
            UIF | TXF | TXF_LZ | BREAKC | U2F | UADD | SWITCH | CASE | SAMPLE_I | UMUL_HI
            | UP2H | UP2US | UP4B | UP4UB => ValueType::Unsigned,
            IMUL_HI | I2F => ValueType::Signed,
            ARL | ARR | F2I | F2U | FSEQ | FSGE | FSLT | FSNE | PK2H | PK2US | PK4B | PK4UB => {
                ValueType::Float
            }
            _ => self.dst_type(),
        }
    }
}
