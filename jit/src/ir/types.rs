//! Operand types per opcode, after Mesa's `tgsi_opcode_infer_type`/`tgsi_opcode_infer_src_type`
//! (src/gallium/auxiliary/tgsi/tgsi_info.c). They decide whether a `-` source modifier is a float
//! or an integer negation. Opcodes Mesa has dropped keep their historical types (BREAKC reads an
//! unsigned condition).

use super::{Opcode, ValueType};

impl Opcode {
    /// The type of the destination value (`tgsi_opcode_infer_dst_type`).
    pub fn dst_type(self) -> ValueType {
        use Opcode::*;
        match self {
            MOV | UCMP | LOAD | STORE | ATOMXCHG | ATOMCAS => ValueType::Untyped,
            ATOMIMIN | ATOMIMAX => ValueType::Signed,
            ATOMUADD | ATOMAND | ATOMOR | ATOMXOR | ATOMUMIN | ATOMUMAX => ValueType::Unsigned,
            NOT | SHL | AND | OR | XOR | TXQ | TXQS | F2U | UDIV | UMAD | UMAX | UMIN | UMOD
            | UMUL | USEQ | USGE | USHR | USLT | USNE | SVIEWINFO | UMUL_HI | UBFE | BFI | BREV => {
                ValueType::Unsigned
            }
            ARL | ARR | MOD | F2I | FSEQ | FSGE | FSLT | FSNE | IDIV | IMAX | IMIN | INEG
            | ISGE | ISHR | ISLT | UADD | UARL | IABS | ISSG | IMUL_HI | IBFE | IMSB | LSB
            | POPC | UMSB => ValueType::Signed,
            _ => ValueType::Float,
        }
    }

    /// The type source operand `index` is read as (`tgsi_opcode_infer_src_type`).
    pub fn src_type(self, index: usize) -> ValueType {
        use Opcode::*;
        if index == 1 && self == LDEXP {
            return ValueType::Signed;
        }
        // Memory addresses (a byte offset, or texel coordinates) are integers.
        let address = match self {
            STORE => Some(0),
            op if op.class() == super::OpcodeClass::Memory => Some(1),
            _ => None,
        };
        if address == Some(index) {
            return ValueType::Signed;
        }
        match self {
            UIF | TXF | TXF_LZ | U2F | UADD | SWITCH | CASE | SAMPLE_I | UMUL_HI | UP2H | UMSB
            | BREAKC => ValueType::Unsigned,
            IMUL_HI | I2F => ValueType::Signed,
            ARL | ARR | F2I | F2U | FSEQ | FSGE | FSLT | FSNE | UCMP => ValueType::Float,
            _ => self.dst_type(),
        }
    }
}
