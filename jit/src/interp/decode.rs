//! Pre-decoding of a [`Program`] into the interpreter's compact form: operands resolved to
//! register slots, control flow resolved to jump targets by nesting, texture operands collected.

// Lane- and channel-indexed loops mirror the [channel][lane] layout; iterators would obscure it.
#![allow(clippy::needless_range_loop)]

use crate::exec::{ExecError, QuadVec4};
use crate::ir::structure::{ConstructKind, Structure};
use crate::ir::{
    props, Dimension, ImageDecl, ImageFormat, Indirect, Instruction, Opcode, OpcodeClass, Program,
    Register, RegisterFile, SrcOperand, TextureTarget, ValueType,
};

/// Deepest subroutine nesting before [`ExecError::CallStackOverflow`] (softpipe's
/// `TGSI_EXEC_MAX_CALL_NESTING`).
pub const MAX_CALL_DEPTH: usize = 32;

/// A directly addressed register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    /// Reads as zero, writes are dropped (undeclared or unsupported registers, SAMP/SVIEW values).
    Zero,
    /// A TEMP or ADDR register in the per-quad register array.
    Local(u32),
    /// `IN[i]`.
    Input(u32),
    /// `OUT[i]`.
    Output(u32),
    /// `SV[i]`.
    SystemValue(u32),
    /// `IMM[i]`.
    Imm(u32),
    /// `CONST[buffer][index]`.
    Const(u32, u32),
}

/// Which register file an indirect access indexes, with its bounds where they are static.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IndirectFile {
    /// Local registers `base + i` for `i` in `lo..hi` (a TEMP array, the TEMP file or ADDR).
    Local { base: u32, lo: i64, hi: i64 },
    /// `IN`, bounded by the caller's input count.
    Input,
    /// `OUT`, bounded by the caller's output count.
    Output,
    /// `SV`, bounded by the caller's system value count.
    SystemValue,
    /// `IMM`, bounded by the immediate count.
    Imm,
    /// `CONST[dim][i]`, bounded by the bound buffer's length.
    Const,
}

/// An index register read: slot and component.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IndexReg {
    pub slot: Slot,
    pub component: u8,
}

/// An indirectly addressed register: `FILE[dim][reg.c + index]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IndirectLoc {
    pub file: IndirectFile,
    pub index: i64,
    pub index_reg: Option<IndexReg>,
    pub dim: i64,
    pub dim_reg: Option<IndexReg>,
}

/// Where a source operand reads from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Loc {
    /// A direct register.
    Direct(Slot),
    /// An indirect register (index into [`Decoded::indirects`]).
    Indirect(u32),
}

/// Source modifier, resolved for the operand's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Modifier {
    None,
    /// `|x|`: clear the sign bit (softpipe applies `fabsf` whatever the type).
    Abs,
    /// Float `-x`: flip the sign bit.
    FNeg,
    /// Float `-|x|`: set the sign bit.
    FNegAbs,
    /// Integer `-x` (wrapping).
    INeg,
    /// Integer `-x` of the sign-cleared bits.
    INegAbs,
}

/// A decoded source operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Src {
    pub loc: Loc,
    pub swizzle: [u8; 4],
    pub modifier: Modifier,
}

impl Src {
    const ZERO: Src = Src {
        loc: Loc::Direct(Slot::Zero),
        swizzle: [0, 1, 2, 3],
        modifier: Modifier::None,
    };
}

/// Where a destination writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DstLoc {
    /// Discarded.
    Null,
    /// A TEMP/ADDR register.
    Local(u32),
    /// `OUT[i]` (dropped when the caller provides fewer outputs).
    Output(u32),
    /// An indirect TEMP/OUT register (index into [`Decoded::indirects`]).
    Indirect(u32),
}

/// A texture or sampler unit operand, possibly indexed (`SAMP[ADDR[0].x+1]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Unit {
    pub index: u32,
    pub index_reg: Option<IndexReg>,
}

/// Texture operands of a texture instruction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TexOp {
    pub target: TextureTarget,
    pub view: Unit,
    pub sampler: Unit,
    /// The constant offset register (lane 0 of x, y, z is used), if any.
    pub offset: Option<Src>,
    /// Swizzle of the SVIEW operand (SAMPLE family results are swizzled by it).
    pub result_swizzle: [u8; 4],
}

/// The buffer or image a memory instruction (`LOAD`, `STORE`, `ATOM*`) accesses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MemResource {
    /// `BUFFER[n]`: the address is a byte offset.
    Buffer(u32),
    /// `IMAGE[n]` as declared: the address is `coords` integer texel coordinates.
    Image {
        index: u32,
        coords: usize,
        format: ImageFormat,
    },
}

/// Operands of a memory instruction beyond its registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MemOp {
    pub resource: MemResource,
    /// `STORE`: the channels written (its destination's write mask; the instruction itself
    /// writes no register).
    pub store_mask: u8,
}

/// Maximum number of source operands (SAMPLE_D).
pub(crate) const MAX_SRC: usize = 5;

/// A decoded instruction.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Inst {
    pub op: Opcode,
    pub saturate: bool,
    /// Control flow or kill: executes even when no lane is active.
    pub is_flow: bool,
    pub dst: DstLoc,
    pub write_mask: u8,
    pub src: [Src; MAX_SRC],
    /// Jump target (see [`resolve_flow`]).
    pub target: u32,
    /// BRK/BREAKC: true when breaking out of a SWITCH rather than a loop. SWITCH: index into
    /// [`Decoded::cases`]. Texture instructions: index into [`Decoded::textures`]. Memory
    /// instructions: index into [`Decoded::memory`].
    pub aux: u32,
    /// BRK/BREAKC inside a SWITCH.
    pub breaks_switch: bool,
}

/// A whole decoded program.
#[derive(Clone, Debug)]
pub(crate) struct Decoded {
    pub insts: Vec<Inst>,
    pub indirects: Vec<IndirectLoc>,
    pub textures: Vec<TexOp>,
    pub memory: Vec<MemOp>,
    /// Per SWITCH: the program counters of its CASE instructions.
    pub cases: Vec<Vec<u32>>,
    /// Immediates, each broadcast to all lanes.
    pub imms: Vec<QuadVec4>,
    /// TEMP registers, then ADDR registers.
    pub num_locals: usize,
    /// The program's control-flow nesting, which the jump targets above were resolved from.
    pub structure: Structure,
}

fn unsupported(pc: usize, message: impl Into<String>) -> ExecError {
    ExecError::Unsupported {
        pc,
        message: message.into(),
    }
}

/// Number of coordinate components a target uses (`tgsi_util_get_texture_coord_dim`).
pub(crate) fn coord_dim(target: TextureTarget) -> Option<usize> {
    use TextureTarget::*;
    Some(match target {
        Buffer | Tex1D | Shadow1D => 1,
        Tex2D | Rect | Shadow2D | ShadowRect | Tex1DArray | Shadow1DArray | Tex2DMsaa => 2,
        Tex3D | Cube | Tex2DArray | ShadowCube | Shadow2DArray | Tex2DArrayMsaa => 3,
        CubeArray | ShadowCubeArray => 4,
        Unknown => return None,
    })
}

/// Operand component holding the depth-compare reference (`tgsi_util_get_shadow_ref_src_index`):
/// 0..=3 are src0.xyzw, 4 is src1.x.
pub(crate) fn shadow_ref(target: TextureTarget) -> Option<usize> {
    use TextureTarget::*;
    match target {
        Shadow1D | Shadow2D | ShadowRect | Shadow1DArray => Some(2),
        ShadowCube | Shadow2DArray => Some(3),
        ShadowCubeArray => Some(4),
        _ => None,
    }
}

/// Number of gradient components TXD/SAMPLE_D pass for a target (as `exec_txd`).
pub(crate) fn deriv_dim(target: TextureTarget) -> Option<usize> {
    use TextureTarget::*;
    match target {
        Tex1D | Shadow1D | Tex1DArray | Shadow1DArray => Some(1),
        Tex2D | Rect | Shadow2D | ShadowRect | Tex2DArray | Shadow2DArray => Some(2),
        Tex3D | Cube | CubeArray | ShadowCube => Some(3),
        _ => None,
    }
}

/// Index of the sampler operand of a TEX-family instruction.
pub(crate) fn sampler_operand(op: Opcode) -> usize {
    match op {
        Opcode::TEX2 | Opcode::TXB2 | Opcode::TXL2 | Opcode::TG4 => 2,
        Opcode::TXD => 3,
        Opcode::TXQS => 0,
        _ => 1,
    }
}

struct Layout {
    num_temps: u32,
    num_addrs: u32,
    /// TEMP arrays: (id, first, last).
    arrays: Vec<(u32, u32, u32)>,
    num_imms: u32,
    /// SVIEW declarations: (index, target).
    views: Vec<(u32, TextureTarget)>,
    /// IMAGE declarations: (index, declaration).
    images: Vec<(u32, ImageDecl)>,
}

impl Layout {
    fn new(program: &Program) -> Layout {
        let mut max_temp = program.file_size(RegisterFile::Temporary);
        let mut max_addr = program.file_size(RegisterFile::Address);
        let mut note = |reg: &Register| {
            if reg.indirect.is_none() && reg.index >= 0 {
                let i = reg.index as u32 + 1;
                match reg.file {
                    RegisterFile::Temporary => max_temp = max_temp.max(i),
                    RegisterFile::Address => max_addr = max_addr.max(i),
                    _ => {}
                }
            }
            if let Some(ind) = reg.indirect {
                if ind.file == RegisterFile::Address {
                    max_addr = max_addr.max(ind.index + 1);
                }
            }
        };
        for inst in &program.instructions {
            inst.dst.iter().for_each(|d| note(&d.reg));
            inst.src.iter().for_each(|s| note(&s.reg));
        }
        let mut arrays = Vec::new();
        let mut views = Vec::new();
        let mut images = Vec::new();
        for d in program.declarations() {
            if let Some(image) = d.image.filter(|_| d.file == RegisterFile::Image) {
                for i in d.first..=d.last {
                    images.push((i, image));
                }
            }
            if d.file == RegisterFile::Temporary {
                if let Some(id) = d.array_id {
                    arrays.push((id, d.first, d.last));
                }
            }
            if d.file == RegisterFile::SamplerView {
                if let Some(sv) = d.sampler_view {
                    for i in d.first..=d.last {
                        views.push((i, sv.target));
                    }
                }
            }
        }
        Layout {
            num_temps: max_temp,
            num_addrs: max_addr,
            arrays,
            num_imms: program.immediates().count() as u32,
            views,
            images,
        }
    }

    fn view_target(&self, index: u32) -> Option<TextureTarget> {
        self.views
            .iter()
            .find(|(i, _)| *i == index)
            .map(|(_, t)| *t)
    }
}

struct Decoder {
    layout: Layout,
    indirects: Vec<IndirectLoc>,
}

impl Decoder {
    /// The resource and store mask of memory instruction `inst`.
    fn memory(&self, pc: usize, inst: &Instruction) -> Result<MemOp, ExecError> {
        let (reg, store_mask) = if inst.opcode == Opcode::STORE {
            let d = inst
                .dst
                .first()
                .ok_or_else(|| unsupported(pc, "STORE needs a destination"))?;
            (d.reg, d.write_mask & 0xF)
        } else {
            let s = inst
                .src
                .first()
                .ok_or_else(|| unsupported(pc, "missing resource operand"))?;
            (s.reg, 0)
        };
        if reg.indirect.is_some() || reg.dimension.is_some() || reg.index < 0 {
            return Err(unsupported(
                pc,
                format!("the {} operand must be addressed directly", reg.file.name()),
            ));
        }
        let index = reg.index as u32;
        let resource = match reg.file {
            RegisterFile::Buffer => MemResource::Buffer(index),
            RegisterFile::Image => {
                let image = self
                    .layout
                    .images
                    .iter()
                    .find(|(i, _)| *i == index)
                    .map(|(_, d)| *d)
                    .ok_or_else(|| {
                        unsupported(pc, format!("IMAGE[{index}] is not declared with a format"))
                    })?;
                let coords = image.target.image_coords().ok_or_else(|| {
                    unsupported(pc, format!("{} is not an image target", image.target))
                })?;
                if inst.opcode.is_atomic()
                    && !matches!(image.format, ImageFormat::R32Uint | ImageFormat::R32Sint)
                {
                    return Err(unsupported(
                        pc,
                        format!(
                            "atomics need an R32_UINT or R32_SINT image, not {}",
                            image.format
                        ),
                    ));
                }
                MemResource::Image {
                    index,
                    coords,
                    format: image.format,
                }
            }
            other => {
                return Err(unsupported(
                    pc,
                    format!(
                        "{} needs a BUFFER or IMAGE resource, found {}",
                        inst.opcode.name(),
                        other.name()
                    ),
                ))
            }
        };
        Ok(MemOp {
            resource,
            store_mask,
        })
    }

    fn direct_slot(
        &self,
        pc: usize,
        file: RegisterFile,
        index: i64,
        dim: i64,
    ) -> Result<Slot, ExecError> {
        if index < 0 {
            return Ok(Slot::Zero);
        }
        let i = index as u32;
        Ok(match file {
            RegisterFile::Temporary if i < self.layout.num_temps => Slot::Local(i),
            RegisterFile::Address if i < self.layout.num_addrs => {
                Slot::Local(self.layout.num_temps + i)
            }
            RegisterFile::Input => Slot::Input(i),
            RegisterFile::Output => Slot::Output(i),
            RegisterFile::SystemValue => Slot::SystemValue(i),
            RegisterFile::Immediate if i < self.layout.num_imms => Slot::Imm(i),
            RegisterFile::Constant if dim >= 0 => Slot::Const(dim as u32, i),
            RegisterFile::Temporary
            | RegisterFile::Address
            | RegisterFile::Immediate
            | RegisterFile::Constant
            | RegisterFile::Sampler
            | RegisterFile::SamplerView
            | RegisterFile::Null => Slot::Zero,
            RegisterFile::Image
            | RegisterFile::Buffer
            | RegisterFile::Memory
            | RegisterFile::HwAtomic => {
                return Err(unsupported(
                    pc,
                    format!(
                        "{} operands are not supported by the interpreter",
                        file.name()
                    ),
                ))
            }
        })
    }

    fn index_reg(&self, pc: usize, ind: &Indirect) -> Result<IndexReg, ExecError> {
        if ind.component > 3 {
            return Err(unsupported(
                pc,
                "indirect index component must be x, y, z or w",
            ));
        }
        Ok(IndexReg {
            slot: self.direct_slot(pc, ind.file, ind.index as i64, 0)?,
            component: ind.component,
        })
    }

    fn dimension(
        &self,
        pc: usize,
        dim: Option<&Dimension>,
    ) -> Result<(i64, Option<IndexReg>), ExecError> {
        match dim {
            None => Ok((0, None)),
            Some(d) => Ok((
                d.index as i64,
                match &d.indirect {
                    Some(ind) => Some(self.index_reg(pc, ind)?),
                    None => None,
                },
            )),
        }
    }

    /// Resolves a register reference to a direct slot or an indirect descriptor.
    fn loc(&mut self, pc: usize, reg: &Register) -> Result<Loc, ExecError> {
        let (dim, dim_reg) = self.dimension(pc, reg.dimension.as_ref())?;
        match (&reg.indirect, dim_reg) {
            (None, None) => Ok(Loc::Direct(self.direct_slot(
                pc,
                reg.file,
                reg.index as i64,
                dim,
            )?)),
            (indirect, dim_reg) => {
                let index_reg = match indirect {
                    Some(ind) => Some(self.index_reg(pc, ind)?),
                    None => None,
                };
                let file = match reg.file {
                    RegisterFile::Temporary => {
                        let array = indirect
                            .and_then(|i| i.array_id)
                            .and_then(|id| self.layout.arrays.iter().find(|a| a.0 == id).copied());
                        match array {
                            Some((_, first, last)) => IndirectFile::Local {
                                base: 0,
                                lo: first as i64,
                                hi: last as i64 + 1,
                            },
                            None => IndirectFile::Local {
                                base: 0,
                                lo: 0,
                                hi: self.layout.num_temps as i64,
                            },
                        }
                    }
                    RegisterFile::Address => IndirectFile::Local {
                        base: self.layout.num_temps,
                        lo: 0,
                        hi: self.layout.num_addrs as i64,
                    },
                    RegisterFile::Input => IndirectFile::Input,
                    RegisterFile::Output => IndirectFile::Output,
                    RegisterFile::SystemValue => IndirectFile::SystemValue,
                    RegisterFile::Immediate => IndirectFile::Imm,
                    RegisterFile::Constant => IndirectFile::Const,
                    RegisterFile::Sampler | RegisterFile::SamplerView | RegisterFile::Null => {
                        return Ok(Loc::Direct(Slot::Zero))
                    }
                    other => {
                        return Err(unsupported(
                            pc,
                            format!("indirect {} operands are not supported", other.name()),
                        ))
                    }
                };
                self.indirects.push(IndirectLoc {
                    file,
                    index: reg.index as i64,
                    index_reg,
                    dim,
                    dim_reg,
                });
                Ok(Loc::Indirect(self.indirects.len() as u32 - 1))
            }
        }
    }

    fn src(
        &mut self,
        pc: usize,
        op: Opcode,
        index: usize,
        s: &SrcOperand,
    ) -> Result<Src, ExecError> {
        if s.swizzle.iter().any(|&c| c > 3) {
            return Err(unsupported(
                pc,
                format!("source {index}: swizzle components must be 0..=3"),
            ));
        }
        let integer = matches!(op.src_type(index), ValueType::Signed | ValueType::Unsigned);
        let modifier = match (s.absolute, s.negate, integer) {
            (false, false, _) => Modifier::None,
            (true, false, _) => Modifier::Abs,
            (false, true, false) => Modifier::FNeg,
            (true, true, false) => Modifier::FNegAbs,
            (false, true, true) => Modifier::INeg,
            (true, true, true) => Modifier::INegAbs,
        };
        Ok(Src {
            loc: self.loc(pc, &s.reg)?,
            swizzle: s.swizzle,
            modifier,
        })
    }

    fn dst(&mut self, pc: usize, reg: &Register) -> Result<DstLoc, ExecError> {
        match reg.file {
            RegisterFile::Null => Ok(DstLoc::Null),
            RegisterFile::Temporary | RegisterFile::Address | RegisterFile::Output => {
                match self.loc(pc, reg)? {
                    Loc::Direct(Slot::Local(i)) => Ok(DstLoc::Local(i)),
                    Loc::Direct(Slot::Output(i)) => Ok(DstLoc::Output(i)),
                    Loc::Direct(_) => Ok(DstLoc::Null),
                    Loc::Indirect(i) => Ok(DstLoc::Indirect(i)),
                }
            }
            other => Err(unsupported(
                pc,
                format!(
                    "cannot write to {} (expected TEMP, OUT, ADDR or NULL)",
                    other.name()
                ),
            )),
        }
    }

    fn unit(
        &self,
        pc: usize,
        s: Option<&SrcOperand>,
        what: &str,
        file: RegisterFile,
    ) -> Result<Unit, ExecError> {
        let s = s.ok_or_else(|| unsupported(pc, format!("missing {what} operand")))?;
        if s.reg.file != file {
            return Err(unsupported(
                pc,
                format!(
                    "expected a {} operand for the {what}, found {}",
                    file.name(),
                    s.reg.file.name()
                ),
            ));
        }
        Ok(Unit {
            index: s.reg.index.max(0) as u32,
            index_reg: match &s.reg.indirect {
                Some(ind) => Some(self.index_reg(pc, ind)?),
                None => None,
            },
        })
    }

    fn texture(&mut self, pc: usize, inst: &Instruction) -> Result<TexOp, ExecError> {
        let op = inst.opcode;
        let (target, view, sampler, result_swizzle) = if op.is_sample_family() {
            let view = self.unit(
                pc,
                inst.src.get(1),
                "sampler view",
                RegisterFile::SamplerView,
            )?;
            let target = self.layout.view_target(view.index).ok_or_else(|| {
                unsupported(
                    pc,
                    format!("SVIEW[{}] is not declared with a target", view.index),
                )
            })?;
            let sampler = match op {
                Opcode::SAMPLE_I | Opcode::SVIEWINFO => view,
                _ => self.unit(pc, inst.src.get(2), "sampler", RegisterFile::Sampler)?,
            };
            (target, view, sampler, inst.src[1].swizzle)
        } else {
            let target =
                inst.texture.as_ref().map(|t| t.target).ok_or_else(|| {
                    unsupported(pc, "texture instruction without a texture target")
                })?;
            let s = inst.src.get(sampler_operand(op));
            // Sampler operands may name SAMP or (for TXQ/TXF in newer dumps) SVIEW.
            let file = s.map(|s| s.reg.file).unwrap_or(RegisterFile::Sampler);
            let file = if file == RegisterFile::SamplerView {
                file
            } else {
                RegisterFile::Sampler
            };
            let unit = self.unit(pc, s, "sampler", file)?;
            (target, unit, unit, [0, 1, 2, 3])
        };
        let offset = match inst.texture.as_ref().and_then(|t| t.offsets.first()) {
            Some(o) => Some(Src {
                loc: self.loc(pc, &o.reg)?,
                swizzle: [o.swizzle[0], o.swizzle[1], o.swizzle[2], o.swizzle[2]],
                modifier: Modifier::None,
            }),
            None => None,
        };
        if offset.is_some_and(|o| o.swizzle.iter().any(|&c| c > 3)) {
            return Err(unsupported(
                pc,
                "texture offset swizzle components must be 0..=3",
            ));
        }
        let dim = coord_dim(target)
            .ok_or_else(|| unsupported(pc, format!("texture target {target} cannot be sampled")))?;
        let bad = |why: &str| {
            Err(unsupported(
                pc,
                format!("{} with target {target}: {why}", op.name()),
            ))
        };
        match op {
            Opcode::TXF | Opcode::TXF_LZ | Opcode::SAMPLE_I
                if dim > 3 || target == TextureTarget::Cube =>
            {
                return bad("texel fetches need a 1D, 2D, 3D or array target");
            }
            Opcode::TXD | Opcode::SAMPLE_D if deriv_dim(target).is_none() => {
                return bad("no gradient layout for this target");
            }
            Opcode::TXP | Opcode::TXB | Opcode::TXL
                if dim == 4 || shadow_ref(target) == Some(3) =>
            {
                return bad("the .w component is needed for coordinates");
            }
            _ => {}
        }
        Ok(TexOp {
            target,
            view,
            sampler,
            offset,
            result_swizzle,
        })
    }
}

/// Decodes `program`.
pub(crate) fn decode(program: &Program) -> Result<Decoded, ExecError> {
    let layout = Layout::new(program);
    let imms = program
        .immediates()
        .map(|imm| imm.components().map(|bits| [bits; 4]))
        .collect();
    let mut d = Decoder {
        layout,
        indirects: Vec::new(),
    };
    let mut insts = Vec::with_capacity(program.instructions.len());
    let mut textures = Vec::new();
    let mut memory = Vec::new();
    for (pc, inst) in program.instructions.iter().enumerate() {
        let op = inst.opcode;
        match op {
            Opcode::PUSHA | Opcode::POPA | Opcode::ARA | Opcode::BRA => {
                return Err(unsupported(
                    pc,
                    format!(
                        "{} (address stacks and jumps of the NV/ARB era) is not supported",
                        op.name()
                    ),
                ))
            }
            _ => {}
        }
        if inst.src.len() < op.num_src() || inst.dst.len() < op.num_dst() {
            return Err(unsupported(
                pc,
                format!(
                    "{} expects {} destination(s) and {} source(s), found {} and {}",
                    op.name(),
                    op.num_dst(),
                    op.num_src(),
                    inst.dst.len(),
                    inst.src.len()
                ),
            ));
        }
        if inst.src.len() > MAX_SRC {
            return Err(unsupported(
                pc,
                format!("at most {MAX_SRC} sources are supported"),
            ));
        }
        let class = op.class();
        let mut aux = 0;
        // A memory instruction's BUFFER/IMAGE operand is its resource, not a register: it
        // reads as zero (LOAD, ATOM*) or writes nothing (STORE).
        let resource_src = class == OpcodeClass::Memory && op != Opcode::STORE;
        let mut src = [Src::ZERO; MAX_SRC];
        for (i, s) in inst.src.iter().enumerate() {
            if !(resource_src && i == 0) {
                src[i] = d.src(pc, op, i, s)?;
            }
        }
        let (dst, write_mask) = match inst.dst.first() {
            Some(_) if op == Opcode::STORE => (DstLoc::Null, 0),
            Some(dst) => (d.dst(pc, &dst.reg)?, dst.write_mask & 0xF),
            None => (DstLoc::Null, 0),
        };
        if class == OpcodeClass::Memory {
            memory.push(d.memory(pc, inst)?);
            aux = memory.len() as u32 - 1;
        }
        if class == OpcodeClass::Texture {
            textures.push(d.texture(pc, inst)?);
            aux = textures.len() as u32 - 1;
        }
        let is_flow = props::acts_on_masks(op);
        insts.push(Inst {
            op,
            saturate: inst.saturate,
            is_flow,
            dst,
            write_mask,
            src,
            target: 0,
            aux,
            breaks_switch: false,
        });
    }
    let (structure, cases) = resolve_flow(program, &mut insts)?;
    let num_locals = (d.layout.num_temps + d.layout.num_addrs) as usize;
    Ok(Decoded {
        insts,
        indirects: d.indirects,
        textures,
        memory,
        cases,
        imms,
        num_locals,
        structure,
    })
}

/// Resolves control flow by nesting ([`Structure`]; labels of IF/ELSE/loops are not trusted:
/// Mesa's nir_to_tgsi writes placeholders). Targets:
/// - IF/UIF: the matching ELSE, or ENDIF (the target instruction is executed).
/// - ELSE: the matching ENDIF.
/// - BGNLOOP: the matching ENDLOOP; ENDLOOP: the matching BGNLOOP.
/// - SWITCH: the matching ENDSWITCH (`aux` indexes the CASE list, in the order the SWITCHes
///   close).
/// - CAL/CALLNZ: the BGNSUB named by the label; BGNSUB: the matching ENDSUB.
fn resolve_flow(
    program: &Program,
    insts: &mut [Inst],
) -> Result<(Structure, Vec<Vec<u32>>), ExecError> {
    let structure =
        Structure::of(&program.instructions).map_err(|e| unsupported(e.pc, e.message))?;
    // The construct a closing instruction closes (nesting was checked above).
    let closed = |pc: usize| structure.construct(structure.delimited_by(pc).expect("closes"));
    let mut cases = Vec::new();
    for pc in 0..insts.len() {
        match insts[pc].op {
            Opcode::ENDIF => {
                let c = closed(pc);
                insts[c.begin].target = c.else_at.unwrap_or(pc) as u32;
                if let Some(e) = c.else_at {
                    insts[e].target = pc as u32;
                }
            }
            Opcode::ENDLOOP => {
                let begin = closed(pc).begin;
                insts[begin].target = pc as u32;
                insts[pc].target = begin as u32;
            }
            Opcode::BRK | Opcode::BREAKC => {
                let exit = structure.exit_of(pc).expect("BRK leaves a loop or SWITCH");
                insts[pc].breaks_switch = structure.construct(exit).kind == ConstructKind::Switch;
            }
            Opcode::ENDSWITCH => {
                let c = closed(pc);
                insts[c.begin].target = pc as u32;
                insts[c.begin].aux = cases.len() as u32;
                cases.push(c.cases.iter().map(|&p| p as u32).collect());
            }
            Opcode::ENDSUB => insts[closed(pc).begin].target = pc as u32,
            Opcode::CAL | Opcode::CALLNZ => {
                // Structure checked that the label names a BGNSUB.
                insts[pc].target = program.instructions[pc].label.unwrap_or(0);
            }
            _ => {}
        }
    }
    Ok((structure, cases))
}
