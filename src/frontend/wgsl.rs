//! WGSL: parse and validate with naga, then reflect and lower one vertex or fragment entry point.

use super::limits;
use super::lower::{self, LoweredShader};
use super::reflect::{self, StageReflection};
use super::FrontendError;

/// The pipeline stage to pick an entry point from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// `@vertex`
    Vertex,
    /// `@fragment`
    Fragment,
}

impl Stage {
    fn naga(self) -> naga::ShaderStage {
        match self {
            Stage::Vertex => naga::ShaderStage::Vertex,
            Stage::Fragment => naga::ShaderStage::Fragment,
        }
    }
}

/// A parsed and validated WGSL module.
pub struct Parsed {
    /// The naga module.
    pub module: naga::Module,
    /// naga's validation results (expression types, uniformity).
    pub info: naga::valid::ModuleInfo,
}

/// Parses and validates `source`; errors carry `file:line:column` from naga's spans.
pub fn parse(source: &str, file: &str) -> Result<Parsed, FrontendError> {
    limits::check_nesting(source, |line, message| {
        FrontendError::new(file, line, 0, message)
    })?;
    limits::on_frontend_stack(|| parse_on_this_stack(source, file))
}

/// [`parse`] on the calling thread's stack.
fn parse_on_this_stack(source: &str, file: &str) -> Result<Parsed, FrontendError> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| {
        let (line, column) = e
            .location(source)
            .map(|l| (l.line_number, l.line_position))
            .unwrap_or((0, 0));
        let mut message = e.message().to_string();
        for (_, label) in e.labels() {
            if !label.is_empty() && !message.contains(label) {
                message.push_str(&format!(" ({label})"));
            }
        }
        FrontendError::new(file, line, column, message)
    })?;
    lower::check_stage_rules(&module, Some(source), file)?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| {
        let (line, column) = e
            .location(source)
            .map(|l| (l.line_number, l.line_position))
            .unwrap_or((0, 0));
        let mut message = format!("validation error: {}", e.as_inner());
        let mut source_err = std::error::Error::source(e.as_inner());
        while let Some(s) = source_err {
            message.push_str(&format!(": {s}"));
            source_err = s.source();
        }
        FrontendError::new(file, line, column, message)
    })?;
    Ok(Parsed { module, info })
}

/// Finds the entry point of `stage` (named `entry`, or the only one of that stage).
pub fn select_entry_point(
    module: &naga::Module,
    stage: Stage,
    entry: Option<&str>,
    file: &str,
) -> Result<usize, FrontendError> {
    let candidates: Vec<usize> = module
        .entry_points
        .iter()
        .enumerate()
        .filter(|(_, ep)| ep.stage == stage.naga() && entry.is_none_or(|n| ep.name == n))
        .map(|(i, _)| i)
        .collect();
    let what = match stage {
        Stage::Vertex => "@vertex",
        Stage::Fragment => "@fragment",
    };
    match (candidates.as_slice(), entry) {
        ([one], _) => Ok(*one),
        ([], Some(name)) => Err(FrontendError::new(
            file,
            0,
            0,
            format!("no {what} entry point named `{name}`"),
        )),
        ([], None) => Err(FrontendError::new(
            file,
            0,
            0,
            format!("no {what} entry point"),
        )),
        (many, _) => Err(FrontendError::new(
            file,
            0,
            0,
            format!(
                "{} {what} entry points ({}); name one",
                many.len(),
                many.iter()
                    .map(|&i| module.entry_points[i].name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// The reflection of entry point `entry` of `parsed` (WGSL pairs no sampler with a texture);
/// errors name `file`.
pub fn reflect(
    parsed: &Parsed,
    entry: usize,
    file: &str,
) -> Result<StageReflection, FrontendError> {
    reflect::reflect_stage(&parsed.module, &parsed.info, entry, &[])
        .map_err(|m| FrontendError::new(file, 0, 0, m))
}

/// Parses, validates and lowers the `stage` entry point (named `entry`, or the only one).
pub fn compile(
    source: &str,
    file: &str,
    stage: Stage,
    entry: Option<&str>,
) -> Result<LoweredShader, FrontendError> {
    let parsed = parse(source, file)?;
    let index = select_entry_point(&parsed.module, stage, entry, file)?;
    lower::lower(&parsed.module, &parsed.info, index, Some(source), file)
}
