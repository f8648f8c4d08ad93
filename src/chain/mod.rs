//! RetroArch filter chains: `.slangp` and `.cgp` presets rendered frame after frame
//! (`softgpu render`).
//!
//! [`preset`] parses presets, [`semantics`] resolves what each uniform and texture of a pass
//! means, [`runtime`] builds the passes (their shaders through [`crate::shader`]) and renders
//! frames with history and feedback.

pub mod preset;
pub mod runtime;
pub mod semantics;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::texture::Texture;

pub use runtime::{
    ChainOptions, ColorSpace, FeatureDefines, FilterChain, FrameOptions, HostUniforms,
    LoadProgress, LoadStep, PassTiming, SrgbCurve, MAX_HISTORY_DEPTH,
};

/// Why a chain could not be built or rendered; the message names the file (and line, where
/// one is known) and what was expected.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ChainError {
    /// The whole message.
    pub message: String,
}

impl ChainError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> ChainError {
        ChainError {
            message: message.into(),
        }
    }
}

/// The most frames one `render` call accepts (bounds the work before it starts).
pub const MAX_FRAMES: u64 = 1 << 20;

/// What `softgpu render` does.
#[derive(Clone, Debug)]
pub struct RenderRequest {
    /// The preset.
    pub preset: PathBuf,
    /// The input frames in order (one image, or a directory's PNGs sorted by name).
    pub inputs: Vec<PathBuf>,
    /// Output size; the first input's size when `None`.
    pub size: Option<(u32, u32)>,
    /// Frames to render (frame `frames - 1` is returned).
    pub frames: u64,
    /// How the chain is built.
    pub chain: ChainOptions,
    /// Per-frame options.
    pub frame: FrameOptions,
}

/// The input frames `--input` names: the file itself, or a directory's `.png` files in name
/// order.
pub fn input_frames(path: &Path) -> Result<Vec<PathBuf>, ChainError> {
    let meta = std::fs::metadata(path)
        .map_err(|e| ChainError::new(format!("--input {}: {e}", path.display())))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let entries = std::fs::read_dir(path)
        .map_err(|e| ChainError::new(format!("--input {}: {e}", path.display())))?;
    let mut frames = Vec::new();
    for entry in entries {
        let entry =
            entry.map_err(|e| ChainError::new(format!("--input {}: {e}", path.display())))?;
        let p = entry.path();
        let is_png = p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("png"));
        if is_png && p.is_file() {
            frames.push(p);
        }
    }
    frames.sort();
    if frames.is_empty() {
        return Err(ChainError::new(format!(
            "--input {}: the directory holds no .png frames",
            path.display()
        )));
    }
    Ok(frames)
}

/// A source of input frames that arrive one at a time (a video stream): frame `i` of a render
/// is the `i`-th frame it gives, and the render ends where it ends.
pub trait FrameStream {
    /// The next frame, or `None` at the end.
    fn next_frame(&mut self) -> Result<Option<Texture>, ChainError>;
    /// The size of its frames.
    fn frame_size(&self) -> (u32, u32);
}

impl<R: std::io::BufRead> FrameStream for crate::video::FrameReader<R> {
    fn next_frame(&mut self) -> Result<Option<Texture>, ChainError> {
        crate::video::FrameReader::next_frame(self).map_err(|e| ChainError::new(e.message))
    }

    fn frame_size(&self) -> (u32, u32) {
        crate::video::FrameReader::frame_size(self)
    }
}

/// Renders frames `0..frames` of a preset and returns the last one. Frame `i` is fed input
/// `min(i, inputs - 1)`: a directory shorter than `--frames` holds its last picture.
/// `progress(done, total)` is called after every frame.
pub fn render(
    request: &RenderRequest,
    progress: impl FnMut(u64, u64),
) -> Result<Texture, ChainError> {
    render_timed(request, progress).map(|(image, _)| image)
}

/// Where a [`render_timed`] spent its time.
#[derive(Clone, Debug, Default)]
pub struct RenderTimings {
    /// Loading the preset: parsing, compiling (or reading the shader cache), LUTs.
    pub load: Duration,
    /// Loading the input frames.
    pub inputs: Duration,
    /// Each pass over all frames ([`FilterChain::pass_timings`]).
    pub passes: Vec<PassTiming>,
}

/// [`render`], also returning where the time went.
pub fn render_timed(
    request: &RenderRequest,
    mut progress: impl FnMut(u64, u64),
) -> Result<(Texture, RenderTimings), ChainError> {
    let mut last = None;
    let timings = render_each(
        request,
        None,
        |_, frame| {
            last = Some(frame);
            Ok(())
        },
        |done, total| progress(done, total.unwrap_or(done)),
    )?;
    let image = last.ok_or_else(|| ChainError::new("no frame was rendered"))?;
    Ok((image, timings))
}

/// Renders a preset frame after frame and hands every frame to `on_frame(index, image)` as soon
/// as it is rendered, so a caller can write each one out and memory stays bounded by the chain.
///
/// The input frames come from `stream` when one is given (then at most `request.frames` frames
/// are rendered, fewer when the stream ends first, and `request.inputs` is not read), else
/// from `request.inputs` as [`render`] feeds them. `progress(done, total)` is called after
/// every frame (`total` is `None` for a stream). The chain is built with
/// `request.chain` (its [`ChainOptions::progress`] reports the load).
pub fn render_each(
    request: &RenderRequest,
    mut stream: Option<&mut dyn FrameStream>,
    mut on_frame: impl FnMut(u64, Texture) -> Result<(), ChainError>,
    mut progress: impl FnMut(u64, Option<u64>),
) -> Result<RenderTimings, ChainError> {
    if request.frames == 0 || request.frames > MAX_FRAMES {
        return Err(ChainError::new(format!(
            "--frames {}: expected 1..={MAX_FRAMES}",
            request.frames
        )));
    }
    if stream.is_none() && request.inputs.is_empty() {
        return Err(ChainError::new("no input frames"));
    }
    let started = Instant::now();
    let mut chain = FilterChain::load(&request.preset, &request.chain)?;
    let mut timings = RenderTimings {
        load: started.elapsed(),
        ..RenderTimings::default()
    };
    if let Some(stream) = &stream {
        let size = stream.frame_size();
        chain.check_memory(size, request.size.unwrap_or(size))?;
    }
    let total = stream.is_none().then_some(request.frames);
    let mut loaded: Option<(usize, Arc<Texture>)> = None;
    for frame in 0..request.frames {
        let started = Instant::now();
        let input = match stream.as_deref_mut() {
            Some(stream) => match stream.next_frame()? {
                Some(t) => Arc::new(t),
                None => break,
            },
            None => {
                let which = (frame as usize).min(request.inputs.len() - 1);
                match &loaded {
                    Some((i, t)) if *i == which => t.clone(),
                    _ => {
                        let t = load_input_frame(&chain, &request.inputs[which], request.size)?;
                        loaded = Some((which, t.clone()));
                        t
                    }
                }
            }
        };
        timings.inputs += started.elapsed();
        let size = request.size.unwrap_or((input.width(), input.height()));
        let image = chain.frame(&input, size, frame, &request.frame)?;
        on_frame(frame, image)?;
        progress(frame + 1, total);
    }
    timings.passes = chain.pass_timings().to_vec();
    Ok(timings)
}

/// Loads an input image file, its memory checked from the image header before it is decoded.
fn load_input_frame(
    chain: &FilterChain,
    path: &Path,
    size: Option<(u32, u32)>,
) -> Result<Arc<Texture>, ChainError> {
    let header = crate::input::image_reader(path, "input frame", u32::MAX)
        .ok()
        .and_then(|r| r.into_dimensions().ok());
    if let Some((w, h)) = header.filter(|&(w, h)| {
        (1..=Texture::MAX_DIMENSION).contains(&w) && (1..=Texture::MAX_DIMENSION).contains(&h)
    }) {
        chain.check_memory((w, h), size.unwrap_or((w, h)))?;
    }
    Texture::load(path)
        .map(Arc::new)
        .map_err(|e| ChainError::new(format!("--input {}: {e}", path.display())))
}
