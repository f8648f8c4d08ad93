//! The rasterizer: runs a vertex shader over a triangle list, clips the triangles against the view
//! volume, sets them up in fixed point and runs the fragment shader on 2x2 quads in 64x64 tiles
//! (in parallel with rayon), writing one fragment output into a render target.
//!
//! The reference is Mesa's Gallium pipeline as softpipe runs it (the `draw` module's vertex
//! stage and clipper, `sp_setup.c`, `tgsi_exec`'s input interpolation), with llvmpipe's
//! fixed-point edge functions for coverage.
//!
//! # Window space
//!
//! Clip-space positions are divided by `w` and mapped by the viewport exactly as the `draw`
//! module does (`x * (1/w) * scale + translate`, in `f32`):
//! `window_x = (ndc_x + 1) / 2 * width + x`, `window_y = (ndc_y + 1) / 2 * height + y`. Window
//! `y` is the memory row: NDC `y = -1` lands on row 0 under OpenGL and Vulkan. This is what
//! Gallium does when OpenGL renders into a framebuffer object; with Vulkan (whose NDC `y` points
//! down) row 0 is the top of the image. Callers that want OpenGL's window-system orientation
//! (row 0 = NDC `y = +1`, the top of a PNG) flip the finished image. WebGPU negates the `y`
//! scale (`window_y = (1 - ndc_y) / 2 * height + y`): NDC `y = +1` is row 0, the top, as wgpu
//! does on Vulkan. Window depth is `z * 0.5 + 0.5` for OpenGL (`-w ≤ z ≤ w`) and `z` for Vulkan
//! and WebGPU (`0 ≤ z ≤ w`).
//!
//! # Coverage
//!
//! Window positions are snapped to 8 sub-pixel bits (round to nearest even) and coverage is
//! decided by exact `i64` edge functions at pixel centres (`x + 0.5`, `y + 0.5`), with the
//! top-left rule where "top" means the smaller row (Gallium's `bottom_edge_rule = 0`, which
//! Mesa uses for framebuffer objects; llvmpipe implements it the same way). Two triangles
//! sharing an edge therefore cover each pixel exactly once. Triangles of zero snapped area are
//! dropped; both windings are drawn unless [`CullMode`] says otherwise. softpipe itself walks
//! unsnapped `f32` scanlines and includes centres exactly on right edges rather than left ones;
//! the two agree everywhere else (and bit for bit on the full-screen golden references).
//!
//! # Interpolation
//!
//! Attribute planes follow `sp_setup.c`: vertices sorted by `y`, `dadx`/`dady` from the
//! unsnapped `f32` window positions, `a0` at the pixel-centre offset, evaluated per quad as
//! `a0 + dadx * x + dady * y` plus `dadx`/`dady` for the other lanes (`tgsi_exec`). Perspective
//! inputs interpolate `a/w` and divide by the interpolated `1/w`; `LINEAR` inputs are
//! screen-linear; `CONSTANT` inputs take the provoking vertex's bits unchanged ([`ProvokingVertex`];
//! clipping keeps them); `COLOR` is perspective unless [`DrawState::flat_shade_colors`]. The
//! `CENTROID` and `SAMPLE` locations are evaluated at the pixel centre (rendering is
//! single-sample). `POSITION` inputs get the fragment coordinate (see [`FragCoordConvention`];
//! `z` is window depth, `w` is the interpolated `1/w`), `FACE` gets `+1.0` (front) or `-1.0`
//! (back) in `x`, `PRIM_ID` the triangle's index in the draw. Fragment inputs no vertex output
//! matches read zero.
//!
//! # Quads and output
//!
//! Every 2x2 quad (aligned to even coordinates) with at least one covered pixel is shaded;
//! uncovered lanes and lanes outside the target are helper lanes (not in [`QuadIo::live`]).
//! Pixels that are live and not killed get the fragment output named by
//! [`DrawState::color_output`], converted by [`Format::encode`]. There is no blending and no depth
//! or stencil test: later triangles overwrite earlier ones, in API order.

mod clip;
mod setup;
mod tile;
mod vertex;

use crate::exec::{ExecError, NoTextures, QuadShader, ShaderResources};
use crate::ir::{Program, Semantic, SemanticName};
use crate::texture::{Format, Texture};
use thiserror::Error;

#[cfg(doc)]
use crate::exec::QuadIo;

/// Largest magnitude of a viewport edge, in pixels: keeps snapped coordinates and edge-function
/// products far inside `i64`.
pub const MAX_VIEWPORT_COORD: f32 = 1_048_576.0;

/// The most pixels the bounding boxes of one draw's triangles may cover together (2^31: eight
/// full-screen triangles at 16384x16384). It bounds the work of a vertex file of many large,
/// overlapping triangles, refused before anything is binned or shaded.
pub const MAX_DRAW_COVERAGE: u64 = 1 << 31;

/// Clip-space conventions of the API whose shaders are drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ClipConvention {
    /// OpenGL: `-w ≤ z ≤ w`, NDC `y` up, counter-clockwise measured with `y` up.
    #[default]
    OpenGl,
    /// Vulkan: `0 ≤ z ≤ w`, NDC `y` down, counter-clockwise measured with `y` down.
    Vulkan,
    /// WebGPU: `0 ≤ z ≤ w`, NDC `y` up but framebuffer rows (and `@builtin(position).y`)
    /// counted from the top: NDC `y = +1` lands on row 0. Counter-clockwise with `y` up.
    WebGpu,
}

/// The viewport rectangle in window (pixel) coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Viewport {
    /// Left edge.
    pub x: f32,
    /// Edge that NDC `y = -1` maps to (row 0 side).
    pub y: f32,
    /// Width in pixels.
    pub width: f32,
    /// Height in pixels.
    pub height: f32,
}

impl Viewport {
    /// The viewport covering a whole `width` x `height` target.
    pub fn full(width: u32, height: u32) -> Viewport {
        Viewport {
            x: 0.0,
            y: 0.0,
            width: width as f32,
            height: height as f32,
        }
    }
}

/// Which faces are discarded before rasterization.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CullMode {
    /// Draw both faces.
    #[default]
    None,
    /// Discard front faces.
    Front,
    /// Discard back faces.
    Back,
    /// Discard everything (triangles still run the vertex shader).
    FrontAndBack,
}

/// The winding of front faces, measured in the convention's own NDC orientation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FrontFace {
    /// Counter-clockwise triangles are front faces (the OpenGL and Vulkan default).
    #[default]
    CounterClockwise,
    /// Clockwise triangles are front faces.
    Clockwise,
}

/// Which vertex of a triangle supplies `CONSTANT` (flat) inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProvokingVertex {
    /// The first vertex (Vulkan's default, `GL_FIRST_VERTEX_CONVENTION`).
    First,
    /// The last vertex (OpenGL's default).
    Last,
}

/// Where fragment-coordinate `y = 0` is (`PROPERTY FS_COORD_ORIGIN`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FragCoordOrigin {
    /// `y` grows with the memory row (TGSI's default).
    #[default]
    UpperLeft,
    /// `y` is `height - 1 - row` (plus the centre offset), as softpipe computes it.
    LowerLeft,
}

/// Where the fragment coordinate of a pixel centre is (`PROPERTY FS_COORD_PIXEL_CENTER`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PixelCenter {
    /// Centres at `n + 0.5` (TGSI's default).
    #[default]
    HalfInteger,
    /// Centres at integers.
    Integer,
}

/// The fragment-coordinate convention of a fragment program.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FragCoordConvention {
    /// `FS_COORD_ORIGIN`.
    pub origin: FragCoordOrigin,
    /// `FS_COORD_PIXEL_CENTER`.
    pub pixel_center: PixelCenter,
}

impl FragCoordConvention {
    /// Reads `FS_COORD_ORIGIN` and `FS_COORD_PIXEL_CENTER` from a program's properties (by name
    /// or by TGSI number); absent or unknown values give the TGSI defaults.
    pub fn from_program(program: &Program) -> FragCoordConvention {
        let first = |name: &str| {
            program
                .property(name)
                .and_then(|v| v.first())
                .map(|s| s.as_str())
        };
        let origin = match first("FS_COORD_ORIGIN") {
            Some("LOWER_LEFT") | Some("1") => FragCoordOrigin::LowerLeft,
            _ => FragCoordOrigin::UpperLeft,
        };
        let pixel_center = match first("FS_COORD_PIXEL_CENTER") {
            Some("INTEGER") | Some("1") => PixelCenter::Integer,
            _ => PixelCenter::HalfInteger,
        };
        FragCoordConvention {
            origin,
            pixel_center,
        }
    }
}

/// Vertex attributes: vertex `i` has attributes `data[i * attributes ..][.. attributes]`, which
/// the vertex shader reads as `IN[0]`, `IN[1]`, … (raw 32-bit lanes).
#[derive(Clone, Copy, Debug)]
pub struct Vertices<'a> {
    /// All attributes of all vertices, vertex-major.
    pub data: &'a [[u32; 4]],
    /// Attributes per vertex.
    pub attributes: usize,
}

impl<'a> Vertices<'a> {
    /// Wraps vertex-major attribute data.
    pub fn new(data: &'a [[u32; 4]], attributes: usize) -> Vertices<'a> {
        Vertices { data, attributes }
    }

    /// Number of vertices, or an error when the data is not a whole number of vertices.
    pub fn count(&self) -> Result<usize, RasterError> {
        if self.attributes == 0 {
            return Err(RasterError::Vertices(
                "vertices need at least one attribute (the position input)".into(),
            ));
        }
        if !self.data.len().is_multiple_of(self.attributes) {
            return Err(RasterError::Vertices(format!(
                "{} attribute vectors are not a whole number of vertices of {} attributes",
                self.data.len(),
                self.attributes
            )));
        }
        Ok(self.data.len() / self.attributes)
    }
}

/// A borrowed render target: row-major, tightly packed texels, row 0 first.
pub struct RenderTarget<'a> {
    format: Format,
    width: u32,
    height: u32,
    data: &'a mut [u8],
    /// Window row 0 is the last row of `data` (see [`RenderTarget::bottom_up`]).
    bottom_up: bool,
}

impl<'a> RenderTarget<'a> {
    /// Wraps `data`, which must hold at least `width * height` texels of `format`.
    pub fn new(
        format: Format,
        width: u32,
        height: u32,
        data: &'a mut [u8],
    ) -> Result<RenderTarget<'a>, RasterError> {
        let needed = (width as usize)
            .checked_mul(height as usize)
            .and_then(|n| n.checked_mul(format.bytes_per_texel()));
        match needed {
            Some(n) if width > 0 && height > 0 && data.len() >= n => Ok(RenderTarget {
                format,
                width,
                height,
                data: &mut data[..n],
                bottom_up: false,
            }),
            _ => Err(RasterError::Target(format!(
                "a {width}x{height} {} target needs {} bytes, got {}",
                format.name(),
                needed.map_or("too many".to_string(), |n| n.to_string()),
                data.len()
            ))),
        }
    }

    /// Level 0 of `texture` as a render target.
    pub fn of(texture: &'a mut Texture) -> Result<RenderTarget<'a>, RasterError> {
        let (format, width, height) = (texture.format(), texture.width(), texture.height());
        RenderTarget::new(format, width, height, texture.level_data_mut(0))
    }

    /// Stores window row 0 in the last row of the data and so on up: an OpenGL draw (window
    /// rows counted from the bottom) lands in a top-down image without a flip afterwards.
    pub fn bottom_up(self) -> RenderTarget<'a> {
        RenderTarget {
            bottom_up: true,
            ..self
        }
    }

    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The texel format.
    pub fn format(&self) -> Format {
        self.format
    }
}

static NO_TEXTURES: NoTextures = NoTextures;

/// Everything a draw needs besides the vertices and the target.
#[derive(Clone, Copy)]
pub struct DrawState<'a> {
    /// The vertex shader; its `POSITION` output is the clip-space position.
    pub vertex_shader: &'a dyn QuadShader,
    /// The fragment shader.
    pub fragment_shader: &'a dyn QuadShader,
    /// Constants and textures of the vertex shader.
    pub vertex_resources: ShaderResources<'a>,
    /// Constants and textures of the fragment shader.
    pub fragment_resources: ShaderResources<'a>,
    /// Clip-space conventions.
    pub convention: ClipConvention,
    /// The viewport; `None` covers the whole target.
    pub viewport: Option<Viewport>,
    /// Face culling.
    pub cull: CullMode,
    /// Which winding is front-facing.
    pub front_face: FrontFace,
    /// Which vertex supplies flat inputs.
    pub provoking_vertex: ProvokingVertex,
    /// Whether `COLOR`-interpolated inputs are flat (`glShadeModel(GL_FLAT)`).
    pub flat_shade_colors: bool,
    /// The fragment program's `FS_COORD_*` properties.
    pub frag_coord: FragCoordConvention,
    /// The fragment output written to the target (`COLOR[0]` by default).
    pub color_output: Semantic,
}

impl<'a> DrawState<'a> {
    /// A draw with no constants or textures bound, the whole target as viewport, no culling,
    /// counter-clockwise front faces, the convention's default provoking vertex (OpenGL: last,
    /// Vulkan: first), TGSI's default fragment-coordinate convention and `COLOR[0]` as output.
    pub fn new(
        vertex_shader: &'a dyn QuadShader,
        fragment_shader: &'a dyn QuadShader,
        convention: ClipConvention,
    ) -> DrawState<'a> {
        let none = ShaderResources {
            constants: &[],
            textures: &NO_TEXTURES,
            storage: Default::default(),
        };
        DrawState {
            vertex_shader,
            fragment_shader,
            vertex_resources: none,
            fragment_resources: none,
            convention,
            viewport: None,
            cull: CullMode::None,
            front_face: FrontFace::CounterClockwise,
            provoking_vertex: match convention {
                ClipConvention::OpenGl => ProvokingVertex::Last,
                ClipConvention::Vulkan | ClipConvention::WebGpu => ProvokingVertex::First,
            },
            flat_shade_colors: false,
            frag_coord: FragCoordConvention::default(),
            color_output: Semantic {
                name: SemanticName::Color,
                index: 0,
            },
        }
    }
}

/// Counters of one draw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrawStats {
    /// Triangles in the input.
    pub triangles: u64,
    /// Triangles dropped by culling (after clipping, counted per clipped piece).
    pub culled: u64,
    /// Triangles (or clipped pieces) entirely outside the view volume or the target, or with
    /// non-finite positions.
    pub clipped_away: u64,
    /// Triangles (or clipped pieces) of zero area after snapping.
    pub degenerate: u64,
    /// Triangles (or clipped pieces) handed to the tiles.
    pub rasterized: u64,
    /// Quads shaded (including their helper lanes).
    pub quads: u64,
    /// Pixels written to the target.
    pub pixels_written: u64,
}

/// Why a draw failed.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum RasterError {
    /// The vertex data does not fit the draw.
    #[error("bad vertex data: {0}")]
    Vertices(String),
    /// The render target is unusable.
    #[error("bad render target: {0}")]
    Target(String),
    /// The viewport is empty, not finite or too large.
    #[error("bad viewport: {0}")]
    Viewport(String),
    /// The shaders do not fit together or lack a required output.
    #[error("shader interface: {0}")]
    Interface(String),
    /// The triangles cover more pixels together than [`MAX_DRAW_COVERAGE`].
    #[error("too much work: {0}")]
    Coverage(String),
    /// The vertex shader failed.
    #[error("vertex shader failed on vertices {first_vertex}..{}: {source}", first_vertex + 4)]
    VertexShader {
        /// The first vertex of the failing group of four.
        first_vertex: usize,
        /// The executor's error.
        source: ExecError,
    },
    /// The fragment shader failed.
    #[error("fragment shader failed on the quad at ({x}, {y}): {source}")]
    FragmentShader {
        /// Left column of the quad.
        x: u32,
        /// Top row of the quad.
        y: u32,
        /// The executor's error.
        source: ExecError,
    },
}

/// Draws a triangle list (three vertices per triangle) into mip level 0 of `target`.
pub fn draw_triangles(
    state: &DrawState<'_>,
    vertices: Vertices<'_>,
    target: &mut Texture,
) -> Result<DrawStats, RasterError> {
    draw_triangles_into(state, vertices, RenderTarget::of(target)?)
}

/// Draws a triangle list (three vertices per triangle) into a borrowed render target.
pub fn draw_triangles_into(
    state: &DrawState<'_>,
    vertices: Vertices<'_>,
    target: RenderTarget<'_>,
) -> Result<DrawStats, RasterError> {
    let count = vertices.count()?;
    if count % 3 != 0 {
        return Err(RasterError::Vertices(format!(
            "a triangle list needs a multiple of 3 vertices, got {count}"
        )));
    }
    let viewport = state
        .viewport
        .unwrap_or_else(|| Viewport::full(target.width, target.height));
    check_viewport(&viewport)?;
    let plan = setup::Plan::new(state, target.height)?;
    let shaded = vertex::run(state, vertices, count, &plan)?;
    let mut stats = DrawStats {
        triangles: (count / 3) as u64,
        ..DrawStats::default()
    };
    let prepared = setup::prepare(
        state,
        &plan,
        &shaded,
        &viewport,
        target.width,
        target.height,
        &mut stats,
    );
    let (quads, pixels) = tile::shade(state, &plan, &prepared, target)?;
    stats.quads = quads;
    stats.pixels_written = pixels;
    Ok(stats)
}

fn check_viewport(vp: &Viewport) -> Result<(), RasterError> {
    let edges = [vp.x, vp.y, vp.x + vp.width, vp.y + vp.height];
    if !(vp.width > 0.0 && vp.height > 0.0) {
        return Err(RasterError::Viewport(format!(
            "width and height must be positive, got {}x{}",
            vp.width, vp.height
        )));
    }
    if edges
        .iter()
        .any(|e| !e.is_finite() || e.abs() > MAX_VIEWPORT_COORD)
    {
        return Err(RasterError::Viewport(format!(
            "edges must be finite and within ±{MAX_VIEWPORT_COORD}, got {vp:?}"
        )));
    }
    Ok(())
}
