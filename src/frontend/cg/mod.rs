//! Cg 3.1 (RetroArch `.cg` shaders): an in-house preprocessor, parser and checker that build a
//! `naga::Module` per stage, lowered to TGSI like every other frontend.
//!
//! ```text
//! .cg ─preprocess─▶ text + line map ─parse─▶ items ─check/build─▶ naga::Module (vertex, fragment)
//! ```
//!
//! **RetroArch conventions.** `main_vertex` and `main_fragment` are the entry points. Every
//! uniform is a member of one uniform block (group 0, binding 0) named in the slang semantic
//! vocabulary, with the Cg member's own type, so the chain runtime binds Cg and slang passes
//! alike: `modelViewProj` → `MVP` (mat4, uploaded column-major as for slang),
//! `IN.video_size`/`IN.texture_size` → `SourceSize`, `IN.output_size` → `OutputSize`,
//! `IN.frame_count` → `FrameCount` (float), `IN.frame_direction` → `FrameDirection`,
//! `ORIG.*_size` → `OriginalSize`, `PREV.*` → `OriginalHistorySize1`, `PREVn.*` →
//! `OriginalHistorySize(n+1)`, `PASSn.*` → `PassOutputSize(n-1)`, `FEEDBACK.*` → `Original`
//! and `OriginalSize` (RetroArch's GL drivers bind the frame input there when the preset names
//! no `feedback_pass`, which softgpu does not read), `IN.mvp_matrix` → `MVP` in the vertex stage
//! (zero in the fragment stage, where RetroArch binds nothing), `#pragma parameter` uniforms by
//! their own name. RetroArch binds its structs by name (`IN.video_size`, `FEEDBACK.texture`):
//! an entry parameter of one of their names, or of a struct holding a sampler, is one of them,
//! with or without `uniform`. A uniform of any other name keeps that name: the chain binds it to
//! a `#pragma parameter` of any pass, as RetroArch does, and leaves it at zero otherwise; one
//! with an initializer that is no parameter of its own file is a private global keeping the
//! initializer. Samplers become a texture (binding 1, 2, … in order of first
//! use) plus a sampler at `binding + SAMPLER_BINDING_OFFSET`, named `Source` (the fragment
//! program's `TEXUNIT0` / first sampler), `Original`, `OriginalHistoryN`, `PassOutputN`, or the
//! sampler's own name (LUTs). `PASSPREVk` has no slang name (it means PassOutput(current − k),
//! which depends on the pass position): its texture is `PassPrevK` and size `PassPrevSizeK`,
//! for the chain to resolve.
//!
//! **Interface.** Vertex inputs: `POSITION` → location 0, `TEXCOORD0` (and every other
//! `TEXCOORDn`, RetroArch's `lut_tex_coord` included) → location 1, both read as vec4;
//! `COLOR` and `IN.color` are opaque white as in RetroArch; `*.tex_coord` is the texcoord input,
//! `IN.vertex_coord` the position input (only `main_vertex` itself reads them). Varyings:
//! `TEXCOORDn` → location n, `COLOR0`/`COLOR1` → 16/17, `POSITION` → the position built-in.
//! Fragment `COLOR` → location 0, `DEPTH` → depth.
//!
//! Derivatives (`ddx`/`ddy`) are naga's unqualified derivatives; the lowering picks the
//! pipeline's coarse/fine setting.

pub mod build;
pub mod parse;
pub mod preprocess;
pub mod types;

use std::path::Path;

use super::lower::{self, LoweredShader};
use super::reflect::{SamplerPair, StageReflection};
use super::retroarch::{LineMap, Parameter};
use super::FrontendError;
use build::{Cx, StageKind};

/// One compiled stage of a Cg shader.
#[derive(Debug)]
pub struct CgStage {
    /// The validated naga module.
    pub module: naga::Module,
    /// naga's validation results for `module`.
    pub info: naga::valid::ModuleInfo,
    /// Index of the entry point in `module.entry_points`.
    pub entry_index: usize,
    /// The stage's interface (uniform block members, textures, inputs, outputs).
    pub reflection: StageReflection,
    /// Textures that are plain sampler uniforms other than the pass input: look-up textures
    /// named by the sampler (every other texture is a pass, history or alias texture).
    pub luts: Vec<String>,
}

/// A compiled `.cg` file: both stages and the parameters.
#[derive(Debug)]
pub struct CgShader {
    /// The file as given (used in messages).
    pub file: String,
    /// The `#pragma parameter`s.
    pub parameters: Vec<Parameter>,
    /// The vertex stage (`main_vertex`).
    pub vertex: CgStage,
    /// The fragment stage (`main_fragment`).
    pub fragment: CgStage,
    /// The preprocessed text (spans of the modules point into it).
    pub source: String,
    /// Preprocessed line → original file and line.
    pub line_map: LineMap,
}

impl CgShader {
    /// Lowers both stages to TGSI programs (vertex, fragment).
    pub fn lower(&self) -> Result<(LoweredShader, LoweredShader), FrontendError> {
        Ok((
            self.lower_stage(&self.vertex, "vertex")?,
            self.lower_stage(&self.fragment, "fragment")?,
        ))
    }

    fn lower_stage(&self, stage: &CgStage, name: &str) -> Result<LoweredShader, FrontendError> {
        lower::lower(
            &stage.module,
            &stage.info,
            stage.entry_index,
            Some(&self.source),
            &self.file,
        )
        .map_err(|e| self.remap(e.line, e.column, format!("{name} stage: {}", e.message)))
    }

    fn remap(&self, line: u32, column: u32, message: String) -> FrontendError {
        remap(&self.line_map, &self.file, line, column, message)
    }
}

fn remap(map: &LineMap, file: &str, line: u32, column: u32, message: String) -> FrontendError {
    match map.resolve(line) {
        Some((f, l)) => FrontendError::new(f, l, column, message),
        None => FrontendError::new(file, 0, 0, message),
    }
}

/// Preprocesses, parses, checks and validates the `.cg` file at `path` (both stages).
pub fn compile_cg(path: &Path) -> Result<CgShader, FrontendError> {
    let pre = preprocess::preprocess_file(path)?;
    compile_preprocessed(pre, &path.display().to_string())
}

/// [`compile_cg`] for source text, as if read from `path` (includes resolve next to it).
pub fn compile_cg_str(source: &str, path: &Path) -> Result<CgShader, FrontendError> {
    let pre = preprocess::preprocess_str(source, path)?;
    compile_preprocessed(pre, &path.display().to_string())
}

/// [`compile_cg`] after the preprocessor: `pre` is what it made of `file` (named in messages).
pub fn compile_preprocessed(
    pre: preprocess::Preprocessed,
    file: &str,
) -> Result<CgShader, FrontendError> {
    super::limits::on_frontend_stack(|| compile_on_this_stack(pre, file))
}

/// [`compile_preprocessed`] on the calling thread's stack.
fn compile_on_this_stack(
    pre: preprocess::Preprocessed,
    file: &str,
) -> Result<CgShader, FrontendError> {
    let items = parse::parse(&pre.text)
        .map_err(|e| remap(&pre.line_map, file, e.pos.line, e.pos.col, e.message))?;
    let params: Vec<String> = pre.parameters.iter().map(|p| p.id.clone()).collect();
    let stage = |kind, seed| compile_stage(&items, &params, kind, seed, &pre, file);
    // Both stages get the same uniform block layout (as a slang shader's shared UBO): the
    // vertex stage is rebuilt when the fragment stage added members.
    let (vertex, vertex_members) = stage(StageKind::Vertex, Vec::new())?;
    let (fragment, members) = stage(StageKind::Fragment, vertex_members.clone())?;
    let vertex = if members != vertex_members {
        stage(StageKind::Vertex, members)?.0
    } else {
        vertex
    };
    Ok(CgShader {
        file: file.to_string(),
        parameters: pre.parameters,
        vertex,
        fragment,
        source: pre.text,
        line_map: pre.line_map,
    })
}

/// Builds, validates and reflects one stage; `seed` are uniform block members to start from.
fn compile_stage(
    items: &[parse::Item],
    params: &[String],
    kind: StageKind,
    seed: Vec<(String, types::Ty)>,
    pre: &preprocess::Preprocessed,
    file: &str,
) -> Result<(CgStage, Vec<(String, types::Ty)>), FrontendError> {
    let (stage_name, entry) = match kind {
        StageKind::Vertex => ("vertex", "main_vertex"),
        StageKind::Fragment => ("fragment", "main_fragment"),
    };
    let built = (|| {
        let mut cx = Cx::new(items, kind, params.to_vec())?;
        cx.ubo_members = seed;
        cx.entry_point(entry)?;
        let luts: Vec<String> = cx
            .luts
            .iter()
            .filter(|l| cx.texture_list.iter().any(|t| &t.0 == *l))
            .cloned()
            .collect();
        Ok::<_, build::BuildError>((cx.module, cx.texture_list, cx.ubo_members, luts))
    })()
    .map_err(|e| {
        if e.pos.line == 0 {
            FrontendError::new(file, 0, 0, format!("{stage_name} stage: {}", e.message))
        } else {
            remap(&pre.line_map, file, e.pos.line, e.pos.col, e.message)
        }
    })?;
    let (module, textures, members, luts) = built;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all() - naga::valid::ValidationFlags::CONTROL_FLOW_UNIFORMITY,
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| {
        let mut message = format!(
            "{stage_name} stage: internal error, naga validation: {}",
            e.as_inner()
        );
        let mut source = std::error::Error::source(e.as_inner());
        while let Some(s) = source {
            message.push_str(&format!(": {s}"));
            source = s.source();
        }
        match e.location(&pre.text) {
            Some(loc) => remap(
                &pre.line_map,
                file,
                loc.line_number,
                loc.line_position,
                message,
            ),
            None => FrontendError::new(file, 0, 0, message),
        }
    })?;
    let pairs: Vec<SamplerPair> = textures
        .iter()
        .map(|(_, texture, sampler)| SamplerPair {
            set: 0,
            texture_binding: *texture,
            sampler_binding: *sampler,
        })
        .collect();
    let reflection = super::reflect::reflect_stage(&module, &info, 0, &pairs)
        .and_then(|r| super::retroarch::check_one_uniform_buffer(&r).map(|()| r))
        .map_err(|m| FrontendError::new(file, 0, 0, format!("{stage_name} stage: {m}")))?;
    Ok((
        CgStage {
            module,
            info,
            entry_index: 0,
            reflection,
            luts,
        },
        members,
    ))
}
