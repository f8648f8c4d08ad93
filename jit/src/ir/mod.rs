//! The TGSI-style program model: register files, declarations, immediates and instructions.
//!
//! The model mirrors Mesa's `tgsi_text`/`tgsi_dump` vocabulary so that a Mesa dump parses into it and
//! prints back unchanged (see [`text`]). Registers are untyped 32-bit lanes; each opcode decides how
//! it reads them (see [`Opcode::src_type`]).
//!
//! Beside the model: the validator ([`validate`]), the opcode facts the passes and executors rely
//! on ([`props`]), the nesting of structured control flow ([`structure`]) and the math mode
//! ([`MathMode`]). Nothing here imports the executors or the passes built on it.

mod math;
pub mod props;
pub mod structure;
pub mod text;
mod types;
pub mod validate;

pub use math::MathMode;

use std::fmt;

/// Which pipeline stage a program runs in (the first line of a dump: `VERT`, `FRAG`, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Processor {
    /// `VERT`
    Vertex,
    /// `FRAG`
    Fragment,
    /// `GEOM`
    Geometry,
    /// `TESS_CTRL`
    TessCtrl,
    /// `TESS_EVAL`
    TessEval,
    /// `COMP`
    Compute,
}

impl Processor {
    /// All processors, in TGSI enum order.
    pub const ALL: [Processor; 6] = [
        Processor::Fragment,
        Processor::Vertex,
        Processor::Geometry,
        Processor::TessCtrl,
        Processor::TessEval,
        Processor::Compute,
    ];

    /// The header keyword of the text format.
    pub fn name(self) -> &'static str {
        match self {
            Processor::Vertex => "VERT",
            Processor::Fragment => "FRAG",
            Processor::Geometry => "GEOM",
            Processor::TessCtrl => "TESS_CTRL",
            Processor::TessEval => "TESS_EVAL",
            Processor::Compute => "COMP",
        }
    }

    /// Parses a header keyword.
    pub fn from_name(s: &str) -> Option<Processor> {
        Self::ALL.into_iter().find(|p| p.name() == s)
    }
}

/// A TGSI register file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RegisterFile {
    /// `NULL`: writes are discarded.
    Null,
    /// `CONST`: constant buffers, two-dimensional (`CONST[buffer][index]`).
    Constant,
    /// `IN`: shader inputs (vertex attributes, interpolated varyings).
    Input,
    /// `OUT`: shader outputs.
    Output,
    /// `TEMP`: temporaries, including indexable `ARRAY(n)` ranges.
    Temporary,
    /// `SAMP`: sampler states.
    Sampler,
    /// `ADDR`: address registers (integer indices for indirect addressing).
    Address,
    /// `IMM`: immediates.
    Immediate,
    /// `SV`: system values.
    SystemValue,
    /// `IMAGE`: shader images.
    Image,
    /// `SVIEW`: sampler views (textures).
    SamplerView,
    /// `BUFFER`: shader storage buffers.
    Buffer,
    /// `MEMORY`: shared/global memory.
    Memory,
    /// `HWATOMIC`: hardware atomic counters.
    HwAtomic,
}

impl RegisterFile {
    /// All files, in TGSI enum order.
    pub const ALL: [RegisterFile; 14] = [
        RegisterFile::Null,
        RegisterFile::Constant,
        RegisterFile::Input,
        RegisterFile::Output,
        RegisterFile::Temporary,
        RegisterFile::Sampler,
        RegisterFile::Address,
        RegisterFile::Immediate,
        RegisterFile::SystemValue,
        RegisterFile::Image,
        RegisterFile::SamplerView,
        RegisterFile::Buffer,
        RegisterFile::Memory,
        RegisterFile::HwAtomic,
    ];

    /// The name used in the text format.
    pub fn name(self) -> &'static str {
        match self {
            RegisterFile::Null => "NULL",
            RegisterFile::Constant => "CONST",
            RegisterFile::Input => "IN",
            RegisterFile::Output => "OUT",
            RegisterFile::Temporary => "TEMP",
            RegisterFile::Sampler => "SAMP",
            RegisterFile::Address => "ADDR",
            RegisterFile::Immediate => "IMM",
            RegisterFile::SystemValue => "SV",
            RegisterFile::Image => "IMAGE",
            RegisterFile::SamplerView => "SVIEW",
            RegisterFile::Buffer => "BUFFER",
            RegisterFile::Memory => "MEMORY",
            RegisterFile::HwAtomic => "HWATOMIC",
        }
    }

    /// Parses a file name of the text format.
    pub fn from_name(s: &str) -> Option<RegisterFile> {
        Self::ALL.into_iter().find(|f| f.name() == s)
    }
}

macro_rules! name_enum {
    ($(#[$m:meta])* $ty:ident { $($(#[$vm:meta])* $v:ident = $s:literal),* $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $ty { $($(#[$vm])* $v,)* }
        impl $ty {
            /// Every value, in TGSI enum order.
            pub const ALL: &'static [$ty] = &[$($ty::$v,)*];
            /// The name used in the text format.
            pub fn name(self) -> &'static str { match self { $($ty::$v => $s,)* } }
            /// Parses a name of the text format.
            pub fn from_name(s: &str) -> Option<$ty> { Self::ALL.iter().copied().find(|x| x.name() == s) }
        }
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.name()) }
        }
    };
}

name_enum!(
    /// Declaration semantics (`DCL IN[0], GENERIC[9]`).
    SemanticName {
        /// `POSITION`
        Position = "POSITION",
        /// `COLOR`
        Color = "COLOR",
        /// `BCOLOR`
        BackColor = "BCOLOR",
        /// `FOG`
        Fog = "FOG",
        /// `PSIZE`
        PointSize = "PSIZE",
        /// `GENERIC`
        Generic = "GENERIC",
        /// `NORMAL`
        Normal = "NORMAL",
        /// `FACE`
        Face = "FACE",
        /// `EDGEFLAG`
        EdgeFlag = "EDGEFLAG",
        /// `PRIM_ID`
        PrimId = "PRIM_ID",
        /// `INSTANCEID`
        InstanceId = "INSTANCEID",
        /// `VERTEXID`
        VertexId = "VERTEXID",
        /// `STENCIL`
        Stencil = "STENCIL",
        /// `CLIPDIST`
        ClipDist = "CLIPDIST",
        /// `CLIPVERTEX`
        ClipVertex = "CLIPVERTEX",
        /// `GRID_SIZE`
        GridSize = "GRID_SIZE",
        /// `BLOCK_ID`
        BlockId = "BLOCK_ID",
        /// `BLOCK_SIZE`
        BlockSize = "BLOCK_SIZE",
        /// `THREAD_ID`
        ThreadId = "THREAD_ID",
        /// `TEXCOORD`
        Texcoord = "TEXCOORD",
        /// `PCOORD`
        PointCoord = "PCOORD",
        /// `VIEWPORT_INDEX`
        ViewportIndex = "VIEWPORT_INDEX",
        /// `LAYER`
        Layer = "LAYER",
        /// `SAMPLEID`
        SampleId = "SAMPLEID",
        /// `SAMPLEPOS`
        SamplePos = "SAMPLEPOS",
        /// `SAMPLEMASK`
        SampleMask = "SAMPLEMASK",
        /// `INVOCATIONID`
        InvocationId = "INVOCATIONID",
        /// `VERTEXID_NOBASE`
        VertexIdNoBase = "VERTEXID_NOBASE",
        /// `BASEVERTEX`
        BaseVertex = "BASEVERTEX",
        /// `PATCH`
        Patch = "PATCH",
        /// `TESSCOORD`
        TessCoord = "TESSCOORD",
        /// `TESSOUTER`
        TessOuter = "TESSOUTER",
        /// `TESSINNER`
        TessInner = "TESSINNER",
        /// `VERTICESIN`
        VerticesIn = "VERTICESIN",
        /// `HELPER_INVOCATION`
        HelperInvocation = "HELPER_INVOCATION",
        /// `BASEINSTANCE`
        BaseInstance = "BASEINSTANCE",
        /// `DRAWID`
        DrawId = "DRAWID",
        /// `WORK_DIM`
        WorkDim = "WORK_DIM",
        /// `SUBGROUP_SIZE`
        SubgroupSize = "SUBGROUP_SIZE",
        /// `SUBGROUP_INVOCATION`
        SubgroupInvocation = "SUBGROUP_INVOCATION",
        /// `SUBGROUP_EQ_MASK`
        SubgroupEqMask = "SUBGROUP_EQ_MASK",
        /// `SUBGROUP_GE_MASK`
        SubgroupGeMask = "SUBGROUP_GE_MASK",
        /// `SUBGROUP_GT_MASK`
        SubgroupGtMask = "SUBGROUP_GT_MASK",
        /// `SUBGROUP_LE_MASK`
        SubgroupLeMask = "SUBGROUP_LE_MASK",
        /// `SUBGROUP_LT_MASK`
        SubgroupLtMask = "SUBGROUP_LT_MASK",
        /// `CS_USER_DATA_AMD`
        CsUserDataAmd = "CS_USER_DATA_AMD",
        /// `VIEWPORT_MASK`
        ViewportMask = "VIEWPORT_MASK",
        /// `TESS_DEFAULT_OUTER_LEVEL`
        TessDefaultOuterLevel = "TESS_DEFAULT_OUTER_LEVEL",
        /// `TESS_DEFAULT_INNER_LEVEL`
        TessDefaultInnerLevel = "TESS_DEFAULT_INNER_LEVEL",
    }
);

name_enum!(
    /// Interpolation mode of a fragment input.
    InterpolateMode {
        /// `CONSTANT` (flat: the provoking vertex's value)
        Constant = "CONSTANT",
        /// `LINEAR` (screen-space linear, `noperspective`)
        Linear = "LINEAR",
        /// `PERSPECTIVE` (perspective-correct)
        Perspective = "PERSPECTIVE",
        /// `COLOR` (perspective, or flat under flat shading)
        Color = "COLOR",
    }
);

name_enum!(
    /// Where within the pixel an input is interpolated.
    InterpolateLocation {
        /// `CENTER`
        Center = "CENTER",
        /// `CENTROID`
        Centroid = "CENTROID",
        /// `SAMPLE`
        Sample = "SAMPLE",
    }
);

name_enum!(
    /// Texture targets, as named in instructions and `SVIEW` declarations.
    TextureTarget {
        /// `BUFFER`
        Buffer = "BUFFER",
        /// `1D`
        Tex1D = "1D",
        /// `2D`
        Tex2D = "2D",
        /// `3D`
        Tex3D = "3D",
        /// `CUBE`
        Cube = "CUBE",
        /// `RECT`
        Rect = "RECT",
        /// `SHADOW1D`
        Shadow1D = "SHADOW1D",
        /// `SHADOW2D`
        Shadow2D = "SHADOW2D",
        /// `SHADOWRECT`
        ShadowRect = "SHADOWRECT",
        /// `1D_ARRAY`
        Tex1DArray = "1D_ARRAY",
        /// `2D_ARRAY`
        Tex2DArray = "2D_ARRAY",
        /// `SHADOW1D_ARRAY`
        Shadow1DArray = "SHADOW1D_ARRAY",
        /// `SHADOW2D_ARRAY`
        Shadow2DArray = "SHADOW2D_ARRAY",
        /// `SHADOWCUBE`
        ShadowCube = "SHADOWCUBE",
        /// `2D_MSAA`
        Tex2DMsaa = "2D_MSAA",
        /// `2D_ARRAY_MSAA`
        Tex2DArrayMsaa = "2D_ARRAY_MSAA",
        /// `CUBEARRAY`
        CubeArray = "CUBEARRAY",
        /// `SHADOWCUBEARRAY`
        ShadowCubeArray = "SHADOWCUBEARRAY",
        /// `UNKNOWN`
        Unknown = "UNKNOWN",
    }
);

impl TextureTarget {
    /// How many integer coordinates address a texel of a storage image of this target (x, then
    /// y, then the depth or array layer); `None` for targets images do not have.
    pub fn image_coords(self) -> Option<usize> {
        use TextureTarget::*;
        match self {
            Buffer | Tex1D => Some(1),
            Tex2D | Rect | Tex1DArray => Some(2),
            Tex3D | Tex2DArray => Some(3),
            _ => None,
        }
    }

    /// True for the depth-compare (shadow) targets.
    pub fn is_shadow(self) -> bool {
        matches!(
            self,
            TextureTarget::Shadow1D
                | TextureTarget::Shadow2D
                | TextureTarget::ShadowRect
                | TextureTarget::Shadow1DArray
                | TextureTarget::Shadow2DArray
                | TextureTarget::ShadowCube
                | TextureTarget::ShadowCubeArray
        )
    }
}

name_enum!(
    /// The data type a sampler view returns (`DCL SVIEW[0], 2D, FLOAT`).
    ReturnType {
        /// `UNORM`
        Unorm = "UNORM",
        /// `SNORM`
        Snorm = "SNORM",
        /// `SINT`
        Sint = "SINT",
        /// `UINT`
        Uint = "UINT",
        /// `FLOAT`
        Float = "FLOAT",
    }
);

name_enum!(
    /// The data type of an immediate (`IMM[0] UINT32 {…}`).
    ImmediateType {
        /// `FLT32`
        Float32 = "FLT32",
        /// `UINT32`
        Uint32 = "UINT32",
        /// `INT32`
        Int32 = "INT32",
        /// `FLT64`
        Float64 = "FLT64",
        /// `UINT64`
        Uint64 = "UINT64",
        /// `INT64`
        Int64 = "INT64",
    }
);

/// A `PROPERTY NAME value…` line. Names are kept as text: Mesa adds new ones often and the
/// executor only needs a few (e.g. `FS_COORD_ORIGIN`, `FS_COORD_PIXEL_CENTER`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Property {
    /// The property name, e.g. `FS_COLOR0_WRITES_ALL_CBUFS`.
    pub name: String,
    /// The values as written (numbers, or enum names such as `UPPER_LEFT`).
    pub values: Vec<String>,
}

/// The semantic of a declared register: `GENERIC[9]`, `POSITION`, …
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Semantic {
    /// The semantic name.
    pub name: SemanticName,
    /// The semantic index (`GENERIC[9]` → 9). `POSITION` without brackets is index 0.
    pub index: u32,
}

/// Interpolation qualifiers of a fragment input declaration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Interpolation {
    /// The interpolation mode.
    pub mode: InterpolateMode,
    /// The sampling location.
    pub location: InterpolateLocation,
}

/// The resource part of a `DCL SVIEW[n], TARGET, TYPE[, TYPE…]` declaration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SamplerViewDecl {
    /// The texture target.
    pub target: TextureTarget,
    /// Return types of x, y, z, w.
    pub return_type: [ReturnType; 4],
}

name_enum!(
    /// The texel format of a storage image (`DCL IMAGE[0], 2D, PIPE_FORMAT_R32G32B32A32_FLOAT`):
    /// what a store keeps of each channel and how many channels a load returns.
    ImageFormat {
        /// Four 32-bit floats.
        Rgba32Float = "PIPE_FORMAT_R32G32B32A32_FLOAT",
        /// Two 32-bit floats.
        Rg32Float = "PIPE_FORMAT_R32G32_FLOAT",
        /// One 32-bit float.
        R32Float = "PIPE_FORMAT_R32_FLOAT",
        /// Four 32-bit unsigned integers.
        Rgba32Uint = "PIPE_FORMAT_R32G32B32A32_UINT",
        /// Two 32-bit unsigned integers.
        Rg32Uint = "PIPE_FORMAT_R32G32_UINT",
        /// One 32-bit unsigned integer.
        R32Uint = "PIPE_FORMAT_R32_UINT",
        /// Four 32-bit signed integers.
        Rgba32Sint = "PIPE_FORMAT_R32G32B32A32_SINT",
        /// Two 32-bit signed integers.
        Rg32Sint = "PIPE_FORMAT_R32G32_SINT",
        /// One 32-bit signed integer.
        R32Sint = "PIPE_FORMAT_R32_SINT",
        /// Four 8-bit normalized channels.
        Rgba8Unorm = "PIPE_FORMAT_R8G8B8A8_UNORM",
        /// One 8-bit normalized channel.
        R8Unorm = "PIPE_FORMAT_R8_UNORM",
    }
);

impl ImageFormat {
    /// The channels a texel of this format holds (1, 2 or 4).
    pub fn channels(self) -> usize {
        use ImageFormat::*;
        match self {
            Rgba32Float | Rgba32Uint | Rgba32Sint | Rgba8Unorm => 4,
            Rg32Float | Rg32Uint | Rg32Sint => 2,
            R32Float | R32Uint | R32Sint | R8Unorm => 1,
        }
    }

    /// True for the float and normalized formats (a missing alpha reads as 1.0, not 1).
    pub fn is_float(self) -> bool {
        use ImageFormat::*;
        matches!(
            self,
            Rgba32Float | Rg32Float | R32Float | Rgba8Unorm | R8Unorm
        )
    }

    /// True for the 8-bit normalized formats (stores round to a multiple of 1/255).
    pub fn is_unorm8(self) -> bool {
        matches!(self, ImageFormat::Rgba8Unorm | ImageFormat::R8Unorm)
    }
}

/// The resource part of a `DCL IMAGE[n], TARGET, FORMAT[, WR]` declaration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ImageDecl {
    /// The image target (`1D`, `2D`, `3D`, `2D_ARRAY`, …): how many coordinates address a texel.
    pub target: TextureTarget,
    /// The texel format.
    pub format: ImageFormat,
    /// `WR`: the program may write the image.
    pub writable: bool,
}

/// One `DCL` line.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Declaration {
    /// The declared register file.
    pub file: RegisterFile,
    /// The first dimension of two-dimensional declarations (`CONST[1][0..3]` → `Some(1)`).
    pub dimension: Option<u32>,
    /// First declared register index.
    pub first: u32,
    /// Last declared register index (inclusive).
    pub last: u32,
    /// Component usage mask (bit 0 = x); 0xF when all four components are declared.
    pub usage_mask: u8,
    /// The semantic, for IN/OUT/SV.
    pub semantic: Option<Semantic>,
    /// Interpolation, for fragment inputs.
    pub interpolation: Option<Interpolation>,
    /// `ARRAY(n)`: the array id used by indirect accesses to this range.
    pub array_id: Option<u32>,
    /// `LOCAL` temporaries (not preserved across subroutine calls).
    pub local: bool,
    /// `INVARIANT` outputs.
    pub invariant: bool,
    /// Resource information of `SVIEW` declarations.
    pub sampler_view: Option<SamplerViewDecl>,
    /// Resource information of `IMAGE` declarations.
    pub image: Option<ImageDecl>,
}

impl Declaration {
    /// A plain declaration of `file[first..=last]` with no qualifiers.
    pub fn new(file: RegisterFile, first: u32, last: u32) -> Declaration {
        Declaration {
            file,
            dimension: None,
            first,
            last,
            usage_mask: 0xF,
            semantic: None,
            interpolation: None,
            array_id: None,
            local: false,
            invariant: false,
            sampler_view: None,
            image: None,
        }
    }
}

/// One `IMM[n] TYPE {a, b, c, d}` line. Values are kept as raw 32-bit patterns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Immediate {
    /// The declared type (decides how the printer writes the values).
    pub ty: ImmediateType,
    /// The raw bits; 1 to 4 of them as written (64-bit types use pairs).
    pub values: Vec<u32>,
}

impl Immediate {
    /// The x, y, z, w bits an operand reads (components not written are zero).
    pub fn components(&self) -> [u32; 4] {
        let mut v = [0u32; 4];
        for (c, bits) in self.values.iter().take(4).enumerate() {
            v[c] = *bits;
        }
        v
    }
}

/// A header item, in the order it appears before the instructions.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum HeaderItem {
    /// `PROPERTY …`
    Property(Property),
    /// `DCL …`
    Declaration(Declaration),
    /// `IMM[n] …`
    Immediate(Immediate),
}

/// An indirect index: `ADDR[0].x` in `TEMP[ADDR[0].x+3]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Indirect {
    /// The file holding the index (usually `ADDR`, sometimes `TEMP`).
    pub file: RegisterFile,
    /// The register index in that file.
    pub index: u32,
    /// The component read (0 = x).
    pub component: u8,
    /// The array id written after the register (`(1)`), when the access targets an `ARRAY`.
    pub array_id: Option<u32>,
}

/// The second dimension of a register reference: `CONST[1][…]` → buffer 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dimension {
    /// The static part of the dimension index.
    pub index: i32,
    /// An optional indirect part.
    pub indirect: Option<Indirect>,
}

/// A register reference shared by sources and destinations.
///
/// For two-dimensional files the text form is `FILE[dimension][index]`, i.e. `CONST[0][5]` has
/// `dimension = Some(0)` and `index = 5`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Register {
    /// The register file.
    pub file: RegisterFile,
    /// The static index (the offset added to the indirect index, if any).
    pub index: i32,
    /// Indirect addressing of the index.
    pub indirect: Option<Indirect>,
    /// The outer dimension, for `CONST[buf][idx]` and per-vertex inputs.
    pub dimension: Option<Dimension>,
}

impl Register {
    /// A direct reference `file[index]`.
    pub fn new(file: RegisterFile, index: i32) -> Register {
        Register {
            file,
            index,
            indirect: None,
            dimension: None,
        }
    }
}

/// An instruction source operand: register, swizzle and modifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SrcOperand {
    /// The register read.
    pub reg: Register,
    /// Component selected for x, y, z, w (0..=3).
    pub swizzle: [u8; 4],
    /// `-` modifier (float or integer negation depending on the opcode's source type).
    pub negate: bool,
    /// `|…|` modifier (absolute value, applied before negation).
    pub absolute: bool,
}

impl SrcOperand {
    /// `reg.xyzw` without modifiers.
    pub fn new(reg: Register) -> SrcOperand {
        SrcOperand {
            reg,
            swizzle: [0, 1, 2, 3],
            negate: false,
            absolute: false,
        }
    }
}

/// An instruction destination operand: register and write mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DstOperand {
    /// The register written.
    pub reg: Register,
    /// Components written (bit 0 = x).
    pub write_mask: u8,
}

/// A texture offset operand (`IMM[1].xyz` after the target in `TEX …, 2D, IMM[1].xyz`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TexOffset {
    /// The register holding the offsets (an immediate in practice).
    pub reg: Register,
    /// Components used for x, y and z.
    pub swizzle: [u8; 3],
}

/// Texture information attached to texture instructions.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TextureInfo {
    /// The target named after the sampler operand.
    pub target: TextureTarget,
    /// Constant texel offsets, if any.
    pub offsets: Vec<TexOffset>,
}

/// One instruction.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Instruction {
    /// The operation.
    pub opcode: Opcode,
    /// `_SAT`: clamp float results to [0, 1].
    pub saturate: bool,
    /// `PRECISE` (no reassociation); recorded for round-tripping.
    pub precise: bool,
    /// Destination operands.
    pub dst: Vec<DstOperand>,
    /// Source operands.
    pub src: Vec<SrcOperand>,
    /// Texture target and offsets of texture instructions.
    pub texture: Option<TextureInfo>,
    /// Branch label (`:N`) of flow-control instructions, as written. Mesa's nir_to_tgsi writes
    /// placeholder labels, so executors derive structure from nesting, except `CAL`, whose label
    /// is the instruction index of the called `BGNSUB`.
    pub label: Option<u32>,
}

impl Instruction {
    /// An instruction with the given operands and no modifiers.
    pub fn new(opcode: Opcode, dst: Vec<DstOperand>, src: Vec<SrcOperand>) -> Instruction {
        Instruction {
            opcode,
            saturate: false,
            precise: false,
            dst,
            src,
            texture: None,
            label: None,
        }
    }
}

/// A whole program: processor, header (properties, declarations, immediates) and instructions.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Program {
    /// The pipeline stage.
    pub processor: Processor,
    /// Properties, declarations and immediates in source order.
    pub header: Vec<HeaderItem>,
    /// The instructions; the last one is `END`.
    pub instructions: Vec<Instruction>,
    /// How the units this program samples are expected to be sampled (not TGSI: set by whoever
    /// binds the textures, never printed). The JIT compiles inline texture sites for exactly
    /// that and checks it when the kernel runs, so a wrong hint costs speed, never bits; the
    /// interpreter ignores hints.
    pub sampler_hints: Vec<SamplerHint>,
}

/// An expectation about one sampler unit: see [`Program::sampler_hints`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SamplerHint {
    /// The `SAMP[n]` index.
    pub unit: u32,
    /// How its 2D lookups filter and wrap.
    pub shape: InlineShape,
}

/// The sampling state inline texture code can be compiled for: one filter for minification
/// and magnification, one wrap mode on both axes, and a mip filter or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InlineShape {
    /// Bilinear (else nearest) filtering.
    pub linear: bool,
    /// The wrap mode of both axes.
    pub wrap: InlineWrap,
    /// The texture has mipmaps and the sampler a mip filter: inline code samples level 0 only
    /// for quads whose every lane magnifies (level of detail at most 0), which softpipe
    /// samples there with the magnification filter; other quads take the general path.
    pub mipmapped: bool,
}

/// Wrap modes of an [`InlineShape`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InlineWrap {
    /// `REPEAT` on a texture whose sizes are powers of two.
    RepeatPot,
    /// `CLAMP_TO_EDGE`.
    ClampToEdge,
    /// `CLAMP_TO_BORDER` with a transparent black border.
    ClampToBorder,
}

impl InlineShape {
    /// A nonzero number naming the shape, as texture descriptors carry it for compiled code
    /// to compare.
    pub fn code(self) -> u32 {
        let wrap = match self.wrap {
            InlineWrap::RepeatPot => 0,
            InlineWrap::ClampToEdge => 1,
            InlineWrap::ClampToBorder => 2,
        };
        1 + u32::from(self.linear) + 2 * wrap + 6 * u32::from(self.mipmapped)
    }
}

impl Program {
    /// An empty program for `processor`.
    pub fn new(processor: Processor) -> Program {
        Program {
            processor,
            header: Vec::new(),
            instructions: Vec::new(),
            sampler_hints: Vec::new(),
        }
    }

    /// Sets the sampler hints (see [`Program::sampler_hints`]), one per unit, in unit order.
    pub fn set_sampler_hints(&mut self, hints: impl IntoIterator<Item = SamplerHint>) {
        let mut hints: Vec<SamplerHint> = hints.into_iter().collect();
        hints.sort_by_key(|h| h.unit);
        hints.dedup_by_key(|h| h.unit);
        self.sampler_hints = hints;
    }

    /// The declarations, in order.
    pub fn declarations(&self) -> impl Iterator<Item = &Declaration> {
        self.header.iter().filter_map(|h| match h {
            HeaderItem::Declaration(d) => Some(d),
            _ => None,
        })
    }

    /// The immediates, in order (`IMM[n]` is the n-th).
    pub fn immediates(&self) -> impl Iterator<Item = &Immediate> {
        self.header.iter().filter_map(|h| match h {
            HeaderItem::Immediate(i) => Some(i),
            _ => None,
        })
    }

    /// The properties, in order.
    pub fn properties(&self) -> impl Iterator<Item = &Property> {
        self.header.iter().filter_map(|h| match h {
            HeaderItem::Property(p) => Some(p),
            _ => None,
        })
    }

    /// The values of property `name`, if declared.
    pub fn property(&self, name: &str) -> Option<&[String]> {
        self.properties()
            .find(|p| p.name == name)
            .map(|p| p.values.as_slice())
    }

    /// One past the highest declared index of `file` (0 when nothing is declared).
    pub fn file_size(&self, file: RegisterFile) -> u32 {
        match file {
            RegisterFile::Immediate => self.immediates().count() as u32,
            _ => self
                .declarations()
                .filter(|d| d.file == file)
                .map(|d| d.last + 1)
                .max()
                .unwrap_or(0),
        }
    }
}

/// How an opcode interprets its source operands, which decides what `-` and `|…|` mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueType {
    /// IEEE single precision.
    Float,
    /// Two's-complement signed integer.
    Signed,
    /// Unsigned integer.
    Unsigned,
    /// Raw bits (MOV, UCMP): modifiers are applied as float.
    Untyped,
}

/// The broad class of an opcode, for executors and the validator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpcodeClass {
    /// Arithmetic and logic producing a destination.
    Alu,
    /// Texture instructions (sampler/view operands, texture target).
    Texture,
    /// Control flow (IF, loops, SWITCH, calls, END).
    Flow,
    /// Fragment kill.
    Kill,
    /// Address register loads and stacks (ARL, ARR, UARL, ARA, PUSHA, POPA).
    Address,
    /// Loads, stores and atomic operations on storage buffers (`BUFFER`) and images (`IMAGE`):
    /// memory every invocation of a draw shares, so executors run them only in lanes that are
    /// live and not killed, and passes neither drop, repeat nor reorder them.
    Memory,
}

macro_rules! opcodes {
    ($( $v:ident = $name:literal, $dst:literal, $src:literal, $class:ident; )*) => {
        /// A TGSI opcode.
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Opcode { $(
            #[doc = $name]
            $v,
        )* }

        impl Opcode {
            /// Every opcode.
            pub const ALL: &'static [Opcode] = &[$(Opcode::$v,)*];

            /// The mnemonic used in the text format.
            pub fn name(self) -> &'static str { match self { $(Opcode::$v => $name,)* } }

            /// Number of destination operands.
            pub fn num_dst(self) -> usize { match self { $(Opcode::$v => $dst,)* } }

            /// Number of source operands (texture instructions count their sampler operands).
            pub fn num_src(self) -> usize { match self { $(Opcode::$v => $src,)* } }

            /// The opcode's class.
            pub fn class(self) -> OpcodeClass { match self { $(Opcode::$v => OpcodeClass::$class,)* } }
        }
    };
}

opcodes! {
    ARL = "ARL", 1, 1, Address;
    MOV = "MOV", 1, 1, Alu;
    LIT = "LIT", 1, 1, Alu;
    RCP = "RCP", 1, 1, Alu;
    RSQ = "RSQ", 1, 1, Alu;
    EXP = "EXP", 1, 1, Alu;
    LOG = "LOG", 1, 1, Alu;
    MUL = "MUL", 1, 2, Alu;
    ADD = "ADD", 1, 2, Alu;
    DP3 = "DP3", 1, 2, Alu;
    DP4 = "DP4", 1, 2, Alu;
    DST = "DST", 1, 2, Alu;
    MIN = "MIN", 1, 2, Alu;
    MAX = "MAX", 1, 2, Alu;
    SLT = "SLT", 1, 2, Alu;
    SGE = "SGE", 1, 2, Alu;
    MAD = "MAD", 1, 3, Alu;
    SUB = "SUB", 1, 2, Alu;
    LRP = "LRP", 1, 3, Alu;
    FMA = "FMA", 1, 3, Alu;
    SQRT = "SQRT", 1, 1, Alu;
    CND = "CND", 1, 3, Alu;
    DP2A = "DP2A", 1, 3, Alu;
    LDEXP = "LDEXP", 1, 2, Alu;
    FRC = "FRC", 1, 1, Alu;
    CLAMP = "CLAMP", 1, 3, Alu;
    FLR = "FLR", 1, 1, Alu;
    ROUND = "ROUND", 1, 1, Alu;
    EX2 = "EX2", 1, 1, Alu;
    LG2 = "LG2", 1, 1, Alu;
    POW = "POW", 1, 2, Alu;
    XPD = "XPD", 1, 2, Alu;
    ABS = "ABS", 1, 1, Alu;
    RCC = "RCC", 1, 1, Alu;
    DPH = "DPH", 1, 2, Alu;
    COS = "COS", 1, 1, Alu;
    DDX = "DDX", 1, 1, Alu;
    DDY = "DDY", 1, 1, Alu;
    DDX_FINE = "DDX_FINE", 1, 1, Alu;
    DDY_FINE = "DDY_FINE", 1, 1, Alu;
    KILP = "KILP", 0, 0, Kill;
    KILL = "KILL", 0, 0, Kill;
    KIL = "KIL", 0, 1, Kill;
    KILL_IF = "KILL_IF", 0, 1, Kill;
    PK2H = "PK2H", 1, 1, Alu;
    PK2US = "PK2US", 1, 1, Alu;
    PK4B = "PK4B", 1, 1, Alu;
    PK4UB = "PK4UB", 1, 1, Alu;
    UP2H = "UP2H", 1, 1, Alu;
    UP2US = "UP2US", 1, 1, Alu;
    UP4B = "UP4B", 1, 1, Alu;
    UP4UB = "UP4UB", 1, 1, Alu;
    RFL = "RFL", 1, 2, Alu;
    SEQ = "SEQ", 1, 2, Alu;
    SFL = "SFL", 1, 2, Alu;
    SGT = "SGT", 1, 2, Alu;
    SIN = "SIN", 1, 1, Alu;
    SLE = "SLE", 1, 2, Alu;
    SNE = "SNE", 1, 2, Alu;
    STR = "STR", 1, 2, Alu;
    X2D = "X2D", 1, 3, Alu;
    ARA = "ARA", 1, 1, Address;
    ARR = "ARR", 1, 1, Address;
    BRA = "BRA", 0, 0, Flow;
    CAL = "CAL", 0, 0, Flow;
    RET = "RET", 0, 0, Flow;
    SSG = "SSG", 1, 1, Alu;
    CMP = "CMP", 1, 3, Alu;
    SCS = "SCS", 1, 1, Alu;
    NRM = "NRM", 1, 1, Alu;
    NRM4 = "NRM4", 1, 1, Alu;
    DIV = "DIV", 1, 2, Alu;
    DP2 = "DP2", 1, 2, Alu;
    BRK = "BRK", 0, 0, Flow;
    IF = "IF", 0, 1, Flow;
    UIF = "UIF", 0, 1, Flow;
    ELSE = "ELSE", 0, 0, Flow;
    ENDIF = "ENDIF", 0, 0, Flow;
    PUSHA = "PUSHA", 0, 1, Address;
    POPA = "POPA", 1, 0, Address;
    CEIL = "CEIL", 1, 1, Alu;
    I2F = "I2F", 1, 1, Alu;
    NOT = "NOT", 1, 1, Alu;
    TRUNC = "TRUNC", 1, 1, Alu;
    SHL = "SHL", 1, 2, Alu;
    AND = "AND", 1, 2, Alu;
    OR = "OR", 1, 2, Alu;
    MOD = "MOD", 1, 2, Alu;
    XOR = "XOR", 1, 2, Alu;
    SAD = "SAD", 1, 3, Alu;
    CONT = "CONT", 0, 0, Flow;
    BGNLOOP = "BGNLOOP", 0, 0, Flow;
    BGNSUB = "BGNSUB", 0, 0, Flow;
    ENDLOOP = "ENDLOOP", 0, 0, Flow;
    ENDSUB = "ENDSUB", 0, 0, Flow;
    NOP = "NOP", 0, 0, Alu;
    CALLNZ = "CALLNZ", 0, 1, Flow;
    BREAKC = "BREAKC", 0, 1, Flow;
    END = "END", 0, 0, Flow;
    F2I = "F2I", 1, 1, Alu;
    F2U = "F2U", 1, 1, Alu;
    U2F = "U2F", 1, 1, Alu;
    IDIV = "IDIV", 1, 2, Alu;
    UDIV = "UDIV", 1, 2, Alu;
    UMOD = "UMOD", 1, 2, Alu;
    IMAX = "IMAX", 1, 2, Alu;
    IMIN = "IMIN", 1, 2, Alu;
    UMAX = "UMAX", 1, 2, Alu;
    UMIN = "UMIN", 1, 2, Alu;
    INEG = "INEG", 1, 1, Alu;
    IABS = "IABS", 1, 1, Alu;
    ISSG = "ISSG", 1, 1, Alu;
    ISGE = "ISGE", 1, 2, Alu;
    ISLT = "ISLT", 1, 2, Alu;
    ISHR = "ISHR", 1, 2, Alu;
    USHR = "USHR", 1, 2, Alu;
    USEQ = "USEQ", 1, 2, Alu;
    USGE = "USGE", 1, 2, Alu;
    USLT = "USLT", 1, 2, Alu;
    USNE = "USNE", 1, 2, Alu;
    UADD = "UADD", 1, 2, Alu;
    UMUL = "UMUL", 1, 2, Alu;
    UMAD = "UMAD", 1, 3, Alu;
    IMUL_HI = "IMUL_HI", 1, 2, Alu;
    UMUL_HI = "UMUL_HI", 1, 2, Alu;
    UARL = "UARL", 1, 1, Address;
    UCMP = "UCMP", 1, 3, Alu;
    FSEQ = "FSEQ", 1, 2, Alu;
    FSGE = "FSGE", 1, 2, Alu;
    FSLT = "FSLT", 1, 2, Alu;
    FSNE = "FSNE", 1, 2, Alu;
    IBFE = "IBFE", 1, 3, Alu;
    UBFE = "UBFE", 1, 3, Alu;
    BFI = "BFI", 1, 4, Alu;
    BREV = "BREV", 1, 1, Alu;
    POPC = "POPC", 1, 1, Alu;
    LSB = "LSB", 1, 1, Alu;
    IMSB = "IMSB", 1, 1, Alu;
    UMSB = "UMSB", 1, 1, Alu;
    SWITCH = "SWITCH", 0, 1, Flow;
    CASE = "CASE", 0, 1, Flow;
    DEFAULT = "DEFAULT", 0, 0, Flow;
    ENDSWITCH = "ENDSWITCH", 0, 0, Flow;
    TEX = "TEX", 1, 2, Texture;
    TEX_LZ = "TEX_LZ", 1, 2, Texture;
    TXB = "TXB", 1, 2, Texture;
    TXB2 = "TXB2", 1, 3, Texture;
    TXL = "TXL", 1, 2, Texture;
    TXL2 = "TXL2", 1, 3, Texture;
    TXD = "TXD", 1, 4, Texture;
    TXP = "TXP", 1, 2, Texture;
    TXF = "TXF", 1, 2, Texture;
    TXF_LZ = "TXF_LZ", 1, 2, Texture;
    TXQ = "TXQ", 1, 2, Texture;
    TXQS = "TXQS", 1, 1, Texture;
    TG4 = "TG4", 1, 3, Texture;
    LODQ = "LODQ", 1, 2, Texture;
    TEX2 = "TEX2", 1, 3, Texture;
    SAMPLE = "SAMPLE", 1, 3, Texture;
    SAMPLE_B = "SAMPLE_B", 1, 4, Texture;
    SAMPLE_C = "SAMPLE_C", 1, 4, Texture;
    SAMPLE_C_LZ = "SAMPLE_C_LZ", 1, 4, Texture;
    SAMPLE_D = "SAMPLE_D", 1, 5, Texture;
    SAMPLE_L = "SAMPLE_L", 1, 4, Texture;
    SAMPLE_I = "SAMPLE_I", 1, 2, Texture;
    GATHER4 = "GATHER4", 1, 4, Texture;
    SVIEWINFO = "SVIEWINFO", 1, 2, Texture;
    LOAD = "LOAD", 1, 2, Memory;
    STORE = "STORE", 1, 2, Memory;
    ATOMUADD = "ATOMUADD", 1, 3, Memory;
    ATOMXCHG = "ATOMXCHG", 1, 3, Memory;
    ATOMCAS = "ATOMCAS", 1, 4, Memory;
    ATOMAND = "ATOMAND", 1, 3, Memory;
    ATOMOR = "ATOMOR", 1, 3, Memory;
    ATOMXOR = "ATOMXOR", 1, 3, Memory;
    ATOMUMIN = "ATOMUMIN", 1, 3, Memory;
    ATOMUMAX = "ATOMUMAX", 1, 3, Memory;
    ATOMIMIN = "ATOMIMIN", 1, 3, Memory;
    ATOMIMAX = "ATOMIMAX", 1, 3, Memory;
}

impl Opcode {
    /// Parses a mnemonic of the text format (without `_SAT`).
    pub fn from_name(s: &str) -> Option<Opcode> {
        Self::ALL.iter().copied().find(|o| o.name() == s)
    }

    /// True for texture instructions (which carry a [`TextureInfo`]). The D3D10-style
    /// `SAMPLE*`/`GATHER4`/`SVIEWINFO` family takes its target from the `SVIEW` declaration instead.
    pub fn has_texture_target(self) -> bool {
        self.class() == OpcodeClass::Texture && !self.is_sample_family()
    }

    /// True for the D3D10-style sample family (separate `SVIEW` and `SAMP` operands).
    pub fn is_sample_family(self) -> bool {
        matches!(
            self,
            Opcode::SAMPLE
                | Opcode::SAMPLE_B
                | Opcode::SAMPLE_C
                | Opcode::SAMPLE_C_LZ
                | Opcode::SAMPLE_D
                | Opcode::SAMPLE_L
                | Opcode::SAMPLE_I
                | Opcode::GATHER4
                | Opcode::SVIEWINFO
        )
    }

    /// True for the atomic read-modify-write operations (`ATOM*`).
    pub fn is_atomic(self) -> bool {
        self.class() == OpcodeClass::Memory && !matches!(self, Opcode::LOAD | Opcode::STORE)
    }

    /// True for opcodes whose text form may carry a `:label`.
    pub fn has_label(self) -> bool {
        matches!(
            self,
            Opcode::IF
                | Opcode::UIF
                | Opcode::ELSE
                | Opcode::BGNLOOP
                | Opcode::ENDLOOP
                | Opcode::CAL
                | Opcode::CALLNZ
                | Opcode::BRA
                | Opcode::BGNSUB
        )
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
