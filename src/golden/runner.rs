//! Running suite cases: render, compare with (or bless) the expected image, write the pictures
//! the report shows and keep its timings.

use super::suite::{Case, CaseKind, DrawCase, PresetCase, Suite};
use super::{
    compare_images, diff_image, load_image, save_png, texture_to_image, CompareReport, GoldenError,
};
use crate::chain;
use crate::draw::{self, DrawJob};
use crate::driver::Driver;
use crate::ir::Processor;
use crate::raster::ClipConvention;
use crate::shader::Language;
use crate::texture::Texture;
use anyhow::anyhow;
use image::RgbaImage;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Stack size of the threads of a `--jobs` pool: the kernels of very large shaders (Mega Bezel
/// passes) keep megabytes of spill slots in their stack frame, as in the binary's global pool.
const WORKER_STACK_BYTES: usize = 256 << 20;

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
    /// The expected, actual and diff pictures written for the report, relative to its
    /// directory (see [`RunOptions::report_images`]).
    pub pictures: [Option<PathBuf>; 3],
    /// Wall time of the case: rendering, comparing and writing its files.
    pub elapsed: Duration,
    /// Where a preset case's render spent its time (load, inputs, each pass).
    pub timings: Option<chain::RenderTimings>,
}

/// How [`run_cases`] runs and what it keeps.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Write the expected images from the rendered ones instead of comparing.
    pub bless: bool,
    /// Worker threads (`None`: rayon's global pool).
    pub jobs: Option<usize>,
    /// The on-disk shader cache (`None`: compile every shader).
    pub shader_cache: Option<PathBuf>,
    /// The memory budget of each case (`None`: the machine's default).
    pub memory_budget: Option<u64>,
    /// The report directory: each failed case's expected, actual and diff pictures are written
    /// under its `cases/` folder as it finishes (so a run of thousands of cases never holds
    /// their pixels). `None`: no pictures.
    pub report_images: Option<PathBuf>,
    /// Write the pictures of passed cases too, not only of failures.
    pub report_all: bool,
    /// Print each case's status line to stderr as it finishes, after `[done/total]`, so that a
    /// long run shows where it is (the lines in suite order come from [`status_line`]).
    pub progress: bool,
    /// The driver whose rules every case renders with (all of them, math included).
    pub driver: Driver,
}

/// Folder of the report directory that holds the cases' pictures.
pub const PICTURE_DIR: &str = "cases";

/// The names of the three pictures of a case, in [`CaseResult::pictures`] order.
pub const PICTURE_KINDS: [&str; 3] = ["expected", "actual", "diff"];

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
    driver: Driver,
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
        math: driver.math(),
        driver,
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
    render_timed(case, shader_cache, memory_budget, Driver::default()).map(|(image, _)| image)
}

/// [`render_within`] with `driver`'s rules, also returning where a preset case's render spent
/// its time.
pub fn render_timed(
    case: &Case,
    shader_cache: Option<&Path>,
    memory_budget: Option<u64>,
    driver: Driver,
) -> anyhow::Result<(RgbaImage, Option<chain::RenderTimings>)> {
    match &case.kind {
        CaseKind::Draw(draw) => Ok((
            render_draw(draw, shader_cache, memory_budget, driver)?,
            None,
        )),
        CaseKind::Preset(preset) => render_preset(preset, shader_cache, memory_budget, driver)
            .map(|(image, timings)| (image, Some(timings))),
    }
}

/// Runs a preset case through the filter chain, as `softgpu render` does.
fn render_preset(
    case: &PresetCase,
    shader_cache: Option<&Path>,
    memory_budget: Option<u64>,
    driver: Driver,
) -> anyhow::Result<(RgbaImage, chain::RenderTimings)> {
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
            ..chain::ChainOptions::default().with_driver(driver)
        },
        frame: chain::FrameOptions::default(),
    };
    let (image, timings) = chain::render_timed(&request, |_, _| {})?;
    Ok((texture_to_image(&image), timings))
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
    let options = RunOptions {
        bless,
        shader_cache: shader_cache.map(Path::to_path_buf),
        ..RunOptions::default()
    };
    run_case_with(index, case, &options)
}

/// [`run_case`] as `options` say: within a memory budget, writing the report's pictures.
pub fn run_case_with(index: usize, case: &Case, options: &RunOptions) -> CaseResult {
    let started = Instant::now();
    let mut result = CaseResult {
        index,
        name: case.name.clone(),
        status: CaseStatus::Failed,
        report: None,
        message: None,
        expected_path: case.expected.clone(),
        actual_path: None,
        diff_path: None,
        pictures: [None, None, None],
        elapsed: Duration::ZERO,
        timings: None,
    };
    if let Err(message) = run_case_inner(index, case, options, &mut result) {
        result.status = CaseStatus::Failed;
        result.message = Some(message);
    }
    result.elapsed = started.elapsed();
    result
}

/// The text of a panic's payload (`panic!` with a literal or a formatted message).
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "(no message)".into()
    }
}

/// Writes the given pictures of case `index` into the report's picture folder and records
/// their paths; nothing when the run keeps no pictures.
fn write_pictures(
    index: usize,
    options: &RunOptions,
    result: &mut CaseResult,
    pictures: [Option<&RgbaImage>; 3],
) -> Result<(), String> {
    let Some(dir) = &options.report_images else {
        return Ok(());
    };
    for ((slot, kind), picture) in result.pictures.iter_mut().zip(PICTURE_KINDS).zip(pictures) {
        if let Some(picture) = picture {
            let relative = Path::new(PICTURE_DIR).join(format!("{index:05}-{kind}.png"));
            save_png(picture, &dir.join(&relative)).map_err(|e| e.to_string())?;
            *slot = Some(relative);
        }
    }
    Ok(())
}

fn run_case_inner(
    index: usize,
    case: &Case,
    options: &RunOptions,
    result: &mut CaseResult,
) -> Result<(), String> {
    let actual_path = artifact_path(&case.expected, "actual");
    let diff_path = artifact_path(&case.expected, "diff");
    remove_if_present(&actual_path)?;
    remove_if_present(&diff_path)?;
    // A panic is a bug of softgpu, but one case of a corpus of thousands must not take the
    // others down with it: it becomes this case's failure.
    let rendered = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        render_timed(
            case,
            options.shader_cache.as_deref(),
            options.memory_budget,
            options.driver,
        )
    }));
    let (actual, timings) = match rendered {
        Ok(rendered) => rendered.map_err(|e| format!("{e:#}"))?,
        Err(payload) => {
            return Err(format!(
                "softgpu panicked rendering this case (a bug; please report it): {}",
                panic_text(payload.as_ref())
            ))
        }
    };
    result.timings = timings;

    if options.bless {
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
        if options.report_all {
            write_pictures(index, options, result, [Some(&actual), None, None])?;
        }
        return Ok(());
    }

    let write_actual = |result: &mut CaseResult| -> Result<(), String> {
        save_png(&actual, &actual_path).map_err(|e| e.to_string())?;
        result.actual_path = Some(actual_path.clone());
        Ok(())
    };
    if !case.expected.exists() {
        write_actual(result)?;
        write_pictures(index, options, result, [None, Some(&actual), None])?;
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
            if options.report_all {
                let diff =
                    diff_image(&expected, &actual, &case.options).map_err(|e| e.to_string())?;
                write_pictures(
                    index,
                    options,
                    result,
                    [Some(&expected), Some(&actual), Some(&diff)],
                )?;
            }
            Ok(())
        }
        Ok(report) => {
            write_actual(result)?;
            let diff = diff_image(&expected, &actual, &case.options).map_err(|e| e.to_string())?;
            save_png(&diff, &diff_path).map_err(|e| e.to_string())?;
            result.diff_path = Some(diff_path);
            result.report = Some(report);
            write_pictures(
                index,
                options,
                result,
                [Some(&expected), Some(&actual), Some(&diff)],
            )?;
            Err("image differs from the expected one".into())
        }
        Err(GoldenError::SizeMismatch { first, second }) => {
            write_actual(result)?;
            write_pictures(
                index,
                options,
                result,
                [Some(&expected), Some(&actual), None],
            )?;
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

/// Runs the cases at `indices` in parallel (on a pool of `options.jobs` threads when given,
/// else rayon's global pool) and returns their results in the order of `indices`.
pub fn run_cases(
    suite: &Suite,
    indices: &[usize],
    options: &RunOptions,
) -> Result<Vec<CaseResult>, GoldenError> {
    let done = AtomicUsize::new(0);
    let work = || {
        indices
            .par_iter()
            .map(|&i| {
                let result = run_case_with(i, &suite.cases[i], options);
                if options.progress {
                    let done = done.fetch_add(1, Ordering::Relaxed) + 1;
                    eprintln!("[{done}/{}] {}", indices.len(), status_line(&result));
                }
                result
            })
            .collect::<Vec<_>>()
    };
    match options.jobs {
        None => Ok(work()),
        Some(jobs) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(jobs)
                .stack_size(WORKER_STACK_BYTES)
                .build()
                .map_err(|e| GoldenError::Options(format!("--jobs {jobs}: {e}")))?;
            Ok(pool.install(work))
        }
    }
}

/// The one-line status of a result: `ok`, `FAILED` or `blessed`, the name, its numbers and its
/// wall time.
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
    details.push(format!("{:.2} s", result.elapsed.as_secs_f64()));
    // One line per case, whatever an error message holds (a compiler's log is several lines).
    let details = details.join("; ").replace(['\r', '\n'], " ");
    format!("{word:<8} {}  ({details})", result.name)
}
