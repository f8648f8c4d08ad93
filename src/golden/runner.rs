//! Running suite cases: render, compare with (or bless) the expected image, keep what the report
//! needs.

use super::suite::{Case, CaseKind, DrawCase, PresetCase, Suite};
use super::{
    compare_images, diff_image, load_image, save_png, texture_to_image, CompareReport, GoldenError,
};
use crate::chain;
use crate::draw::{self, DrawJob};
use crate::ir::MathMode;
use crate::ir::Processor;
use crate::raster::ClipConvention;
use crate::shader::Language;
use crate::texture::Texture;
use anyhow::anyhow;
use image::RgbaImage;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How a case ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseStatus {
    /// Rendered and matched the expected image.
    Passed,
    /// Could not render, or did not match.
    Failed,
    /// `--bless`: the expected image was written (or already held these pixels).
    Blessed,
}

/// The result of one case, with the pictures the HTML report shows.
#[derive(Clone, Debug)]
pub struct CaseResult {
    /// Index of the case in the suite file.
    pub index: usize,
    /// The case name.
    pub name: String,
    /// How it ended.
    pub status: CaseStatus,
    /// The comparison, when the images could be compared.
    pub report: Option<CompareReport>,
    /// Why it failed, or what blessing did.
    pub message: Option<String>,
    /// The expected image file.
    pub expected_path: PathBuf,
    /// Where the actual image was written (failures).
    pub actual_path: Option<PathBuf>,
    /// Where the diff heat map was written (failures with comparable images).
    pub diff_path: Option<PathBuf>,
    /// Expected, actual and diff pixels, kept for failures only.
    pub images: [Option<RgbaImage>; 3],
}

/// `out.png` → `out.actual.png` / `out.diff.png` next to it (ignored by `.gitignore`).
pub fn artifact_path(expected: &Path, kind: &str) -> PathBuf {
    let stem = expected
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "expected".into());
    expected.with_file_name(format!("{stem}.{kind}.png"))
}

/// Draws a draw case, as `softgpu draw` does (through the shader cache when one is given),
/// within `memory_budget` (the machine's default when `None`).
fn render_draw(
    case: &DrawCase,
    shader_cache: Option<&Path>,
    memory_budget: Option<u64>,
) -> anyhow::Result<RgbaImage> {
    let read = |path: &Path, what: &str| {
        crate::input::read_text(path, what, crate::input::MAX_DATA_FILE_BYTES)
    };
    let vertices = draw::parse_vertices(&case.vertices, &read(&case.vertices, "vertex file")?)?;
    let constants = match &case.consts {
        Some(path) => draw::parse_constants(path, &read(path, "constant file")?)?,
        None => Vec::new(),
    };
    let mut textures = Vec::new();
    for (unit, path) in &case.textures {
        let texture = Texture::load(path).map_err(|e| anyhow!("texture {unit}: {e}"))?;
        textures.push((*unit, Arc::new(texture)));
    }
    softgpu_jit::codegen::disk::set_kernel_cache(
        shader_cache.map(Path::to_path_buf),
        crate::shader::BUILD_ID,
    );
    let stage = |path: &Path, processor| {
        draw::compile_stage_cached(path, processor, None, shader_cache).map(|(s, _)| s.program)
    };
    let job = DrawJob {
        vertex_program: stage(&case.vs, Processor::Vertex)?,
        fragment_program: stage(&case.fs, Processor::Fragment)?,
        vertices,
        constants,
        textures,
        sampler: draw::sampler_state(case.filter, case.wrap),
        size: case.size,
        // The same default as `softgpu draw`: the convention of the vertex shader's language.
        convention: case
            .convention
            .unwrap_or(match Language::from_path(&case.vs) {
                Language::Wgsl => ClipConvention::WebGpu,
                Language::VulkanGlsl | Language::Slang => ClipConvention::Vulkan,
                Language::Tgsi => ClipConvention::OpenGl,
            }),
        math: MathMode::Exact,
    };
    let budget = memory_budget.unwrap_or_else(crate::budget::default_budget);
    draw::check_memory(&job, crate::shader::Executor::default(), budget)?;
    let image = draw::run(&job)
        .map_err(|e| draw::name_input_files(e, &case.vs, &case.fs, &case.vertices))?;
    Ok(texture_to_image(&image))
}

/// Renders a case's actual image.
pub fn render(case: &Case, shader_cache: Option<&Path>) -> anyhow::Result<RgbaImage> {
    render_within(case, shader_cache, None)
}

/// [`render`] within a memory budget (see [`crate::budget`]; the machine's default when
/// `None`): a case whose buffers would need more is refused before they are allocated.
pub fn render_within(
    case: &Case,
    shader_cache: Option<&Path>,
    memory_budget: Option<u64>,
) -> anyhow::Result<RgbaImage> {
    match &case.kind {
        CaseKind::Draw(draw) => render_draw(draw, shader_cache, memory_budget),
        CaseKind::Preset(preset) => render_preset(preset, shader_cache, memory_budget),
    }
}

/// Runs a preset case through the filter chain, as `softgpu render` does.
fn render_preset(
    case: &PresetCase,
    shader_cache: Option<&Path>,
    memory_budget: Option<u64>,
) -> anyhow::Result<RgbaImage> {
    let input = case.input.as_ref().ok_or_else(|| {
        anyhow!(
            "{}: a preset case needs `input` (an image or a directory of frames)",
            case.preset.display()
        )
    })?;
    let request = chain::RenderRequest {
        preset: case.preset.clone(),
        inputs: chain::input_frames(input)?,
        size: case.size,
        frames: u64::from(case.frames.max(1)),
        chain: chain::ChainOptions {
            parameters: case
                .params
                .iter()
                .map(|(k, v)| (k.clone(), *v as f32))
                .collect(),
            shader_cache: shader_cache.map(Path::to_path_buf),
            memory_budget,
            // A case's pixel budget is the environment's or the default, as `softgpu render`'s.
            pixel_budget: Some(crate::budget::resolve_pixels(None).map_err(|e| anyhow!(e))?),
            ..Default::default()
        },
        frame: chain::FrameOptions::default(),
    };
    Ok(texture_to_image(&chain::render(&request, |_, _| {})?))
}

fn remove_if_present(path: &Path) -> Result<(), String> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!(
            "{}: cannot remove stale artifact: {e}",
            path.display()
        )),
    }
}

/// Runs one case: renders it, then blesses or compares. Never panics on bad input; every
/// problem becomes a failed result with a message.
pub fn run_case(index: usize, case: &Case, bless: bool, shader_cache: Option<&Path>) -> CaseResult {
    run_case_within(index, case, bless, shader_cache, None)
}

/// [`run_case`] within a memory budget (see [`render_within`]).
pub fn run_case_within(
    index: usize,
    case: &Case,
    bless: bool,
    shader_cache: Option<&Path>,
    memory_budget: Option<u64>,
) -> CaseResult {
    let mut result = CaseResult {
        index,
        name: case.name.clone(),
        status: CaseStatus::Failed,
        report: None,
        message: None,
        expected_path: case.expected.clone(),
        actual_path: None,
        diff_path: None,
        images: [None, None, None],
    };
    if let Err(message) = run_case_inner(case, bless, shader_cache, memory_budget, &mut result) {
        result.status = CaseStatus::Failed;
        result.message = Some(message);
    }
    result
}

fn run_case_inner(
    case: &Case,
    bless: bool,
    shader_cache: Option<&Path>,
    memory_budget: Option<u64>,
    result: &mut CaseResult,
) -> Result<(), String> {
    let actual_path = artifact_path(&case.expected, "actual");
    let diff_path = artifact_path(&case.expected, "diff");
    remove_if_present(&actual_path)?;
    remove_if_present(&diff_path)?;
    let actual = render_within(case, shader_cache, memory_budget).map_err(|e| format!("{e:#}"))?;

    if bless {
        let unchanged = load_image(&case.expected)
            .map(|e| e.image == actual)
            .unwrap_or(false);
        if !unchanged {
            save_png(&actual, &case.expected).map_err(|e| e.to_string())?;
        }
        result.status = CaseStatus::Blessed;
        result.message = Some(if unchanged {
            format!("{} unchanged", case.expected.display())
        } else {
            format!("wrote {}", case.expected.display())
        });
        return Ok(());
    }

    let write_actual = |result: &mut CaseResult| -> Result<(), String> {
        save_png(&actual, &actual_path).map_err(|e| e.to_string())?;
        result.actual_path = Some(actual_path.clone());
        Ok(())
    };
    if !case.expected.exists() {
        write_actual(result)?;
        result.images[1] = Some(actual);
        return Err(format!(
            "expected image {} does not exist (run with --bless to create it)",
            case.expected.display()
        ));
    }
    let expected = load_image(&case.expected).map_err(|e| e.to_string())?.image;
    match compare_images(&expected, &actual, &case.options) {
        Ok(report) if report.matches() => {
            result.status = CaseStatus::Passed;
            result.report = Some(report);
            Ok(())
        }
        Ok(report) => {
            write_actual(result)?;
            let diff = diff_image(&expected, &actual, &case.options).map_err(|e| e.to_string())?;
            save_png(&diff, &diff_path).map_err(|e| e.to_string())?;
            result.diff_path = Some(diff_path);
            result.report = Some(report);
            result.images = [Some(expected), Some(actual), Some(diff)];
            Err("image differs from the expected one".into())
        }
        Err(GoldenError::SizeMismatch { first, second }) => {
            write_actual(result)?;
            result.images = [Some(expected), Some(actual), None];
            Err(format!(
                "size mismatch: expected {} is {}x{}, the rendered image is {}x{}",
                case.expected.display(),
                first.0,
                first.1,
                second.0,
                second.1
            ))
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Runs the cases at `indices` in parallel (on a pool of `jobs` threads when given, else rayon's
/// global pool), each within `memory_budget` (see [`render_within`]), and returns their results
/// in the order of `indices`.
pub fn run_cases(
    suite: &Suite,
    indices: &[usize],
    bless: bool,
    jobs: Option<usize>,
    shader_cache: Option<&Path>,
    memory_budget: Option<u64>,
) -> Result<Vec<CaseResult>, GoldenError> {
    let work = || {
        indices
            .par_iter()
            .map(|&i| run_case_within(i, &suite.cases[i], bless, shader_cache, memory_budget))
            .collect::<Vec<_>>()
    };
    match jobs {
        None => Ok(work()),
        Some(jobs) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(jobs)
                .build()
                .map_err(|e| GoldenError::Options(format!("--jobs {jobs}: {e}")))?;
            Ok(pool.install(work))
        }
    }
}

/// The one-line status of a result: `ok`, `FAILED` or `blessed`, the name, and its numbers.
pub fn status_line(result: &CaseResult) -> String {
    let word = match result.status {
        CaseStatus::Passed => "ok",
        CaseStatus::Failed => "FAILED",
        CaseStatus::Blessed => "blessed",
    };
    let mut details = Vec::new();
    if let Some(report) = &result.report {
        details.push(report.summary());
    }
    if let Some(message) = &result.message {
        details.push(message.clone());
    }
    if details.is_empty() {
        format!("{word:<8} {}", result.name)
    } else {
        format!("{word:<8} {}  ({})", result.name, details.join("; "))
    }
}
