//! The Cg frontend against NVIDIA's Cg compiler: each tests/data/cg/refs/NAME/shader.cg was
//! compiled by cgc 3.1 to GLSL and rendered on Mesa softpipe (`tools/make_cg_refs.py`, the
//! command and driver in command.txt); softgpu renders the same shader through its own Cg
//! frontend with the same uniforms, textures and quad, and must agree on ≥ 99% of the pixels
//! within 4/255 (the bar; the numbers are printed).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use softgpu::draw::{run, sampler_state, DrawJob, VertexData};
use softgpu::frontend::cg::compile_cg;
use softgpu::ir::MathMode;
use softgpu::raster::ClipConvention;
use softgpu::texture::{Filter, Texture, Wrap};

/// The Cg `modelViewProj` of the reference (rows): [0,1]² → clip space.
const MVP_ROWS: [[f32; 4]; 4] = [
    [2.0, 0.0, 0.0, -1.0],
    [0.0, 2.0, 0.0, -1.0],
    [0.0, 0.0, 1.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
];

fn refs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cg/refs")
}

/// Renders `shader` with the inputs of the reference in `dir` (tex0.png, lut.png); RGBA8 rows,
/// row 0 = top. `strict`: every uniform must be one the references set.
fn render(shader: &Path, dir: &Path, strict: bool) -> Result<Vec<u8>, String> {
    let shader = compile_cg(shader).map_err(|e| e.to_string())?;
    let (vs, fs) = shader.lower().map_err(|e| e.to_string())?;
    let mut words = vec![0u32; 4096];
    let mut put = |offset: u32, values: &[f32]| {
        for (i, v) in values.iter().enumerate() {
            if let Some(w) = words.get_mut(offset as usize / 4 + i) {
                *w = v.to_bits();
            }
        }
    };
    // Both stages share one layout; a stage that reads no uniform has no block.
    let ubo = (shader.fragment.reflection.uniform_buffers.first()).or(shader
        .vertex
        .reflection
        .uniform_buffers
        .first());
    for m in ubo.iter().flat_map(|b| b.members.iter()) {
        match m.name.as_str() {
            // Column-major, as RetroArch uploads it (the frontend transposes for Cg's rows).
            "MVP" => {
                for c in 0..4u32 {
                    let col = MVP_ROWS.map(|row| row[c as usize]);
                    put(m.offset + 16 * c, &col);
                }
            }
            "OutputSize" => put(m.offset, &[64.0, 64.0]),
            // Every pass, history and alias texture is the 16x16 input.
            n if n.contains("Size") => put(m.offset, &[16.0, 16.0]),
            "FrameCount" => put(m.offset, &[3.0]),
            "FrameDirection" => put(m.offset, &[1.0]),
            name => match shader.parameters.iter().find(|p| p.id == name) {
                Some(p) => put(m.offset, &[p.initial]),
                None if strict => return Err(format!("no value for uniform {name}")),
                // What RetroArch does not set reads zero, as in the references.
                None => {}
            },
        }
    }
    let used = ubo
        .as_ref()
        .map_or(0, |b| b.size as usize)
        .div_ceil(16)
        .max(1);
    let constants: Vec<[u32; 4]> = words
        .chunks(4)
        .take(used)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect();
    let tex0 = Arc::new(Texture::load(&dir.join("tex0.png")).map_err(|e| e.to_string())?);
    let lut = Arc::new(Texture::load(&dir.join("lut.png")).map_err(|e| e.to_string())?);
    let mut textures: Vec<(u32, Arc<Texture>)> = Vec::new();
    for stage in [&shader.fragment, &shader.vertex] {
        for t in &stage.reflection.textures {
            let name = t.name.clone().unwrap_or_default();
            let img = if stage.luts.contains(&name) {
                lut.clone()
            } else {
                tex0.clone()
            };
            if textures.iter().all(|(b, _)| *b != t.binding) {
                textures.push((t.binding, img));
            }
        }
    }
    let quad = [
        [0.0, 0.0],
        [1.0, 0.0],
        [0.0, 1.0],
        [1.0, 0.0],
        [1.0, 1.0],
        [0.0, 1.0],
    ];
    let mut registers = Vec::new();
    for [x, y] in quad {
        registers.push([x, y, 0.0f32, 1.0].map(f32::to_bits));
        registers.push([x, y, 0.0f32, 1.0].map(f32::to_bits));
    }
    let job = DrawJob {
        vertex_program: vs.program,
        fragment_program: fs.program,
        vertices: VertexData {
            registers,
            attributes: 2,
        },
        constants,
        textures,
        sampler: sampler_state(Filter::Linear, Wrap::ClampToEdge),
        size: (64, 64),
        convention: ClipConvention::OpenGl,
        math: MathMode::Exact,
        driver: softgpu::driver::Driver::Softpipe,
    };
    Ok(run(&job).map_err(|e| e.to_string())?.to_rgba8())
}

/// (max channel difference, % of pixels within 4/255).
fn compare(got: &[u8], want: &[u8]) -> (u8, f64) {
    let (mut max, mut over) = (0u8, 0usize);
    for (g, w) in got.chunks(4).zip(want.chunks(4)) {
        let d = g
            .iter()
            .zip(w)
            .map(|(a, b)| a.abs_diff(*b))
            .max()
            .unwrap_or(0);
        max = max.max(d);
        over += usize::from(d > 4);
    }
    let pixels = got.len() / 4;
    (max, 100.0 * (pixels - over) as f64 / pixels.max(1) as f64)
}

#[test]
fn cg_shaders_match_cgc_on_mesa() {
    let mut names: Vec<PathBuf> = std::fs::read_dir(refs())
        .expect("refs dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("out.png").exists())
        .collect();
    names.sort();
    assert!(names.len() >= 3, "references missing");
    for dir in names {
        let got = render(&dir.join("shader.cg"), &dir, true).unwrap_or_else(|e| panic!("{e}"));
        let want = image::open(dir.join("out.png"))
            .expect("out.png")
            .to_rgba8();
        assert_eq!(got.len(), want.as_raw().len());
        let (max, within) = compare(&got, want.as_raw());
        println!(
            "{}: max difference {max}/255, {within:.2}% of pixels within 4/255",
            dir.file_name().unwrap_or_default().to_string_lossy()
        );
        assert!(
            within >= 99.0,
            "{}: only {within:.2}% within 4/255",
            dir.display()
        );
    }
}

/// The real corpus against cgc: `tools/make_cg_refs.py --corpus $CG_SHADERS_DIR $CG_REFS_DIR`
/// renders every `.cg` file through cgc on Mesa softpipe (single pass, every pass/history
/// texture = the input); this renders each through softgpu and counts the agreeing passes.
#[test]
#[ignore = "needs CG_SHADERS_DIR (libretro/common-shaders) and CG_REFS_DIR (make_cg_refs.py --corpus)"]
fn cg_corpus_matches_cgc_on_mesa() {
    let src = PathBuf::from(std::env::var("CG_SHADERS_DIR").expect("set CG_SHADERS_DIR"));
    let refs = PathBuf::from(std::env::var("CG_REFS_DIR").expect("set CG_REFS_DIR"));
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.join("out.png").exists() {
                out.push(p.clone());
            }
            if p.is_dir() {
                walk(&p, out);
            }
        }
    }
    let mut dirs = Vec::new();
    walk(&refs, &mut dirs);
    dirs.sort();
    let (mut agree, mut exact) = (0, 0);
    let mut bad = Vec::new();
    let mut failed = Vec::new();
    for d in &dirs {
        let rel = d.strip_prefix(&refs).expect("under refs");
        let want = image::open(d.join("out.png")).expect("out.png").to_rgba8();
        match std::panic::catch_unwind(|| render(&src.join(rel), d, false)) {
            Ok(Ok(got)) => {
                if std::env::var("CG_REFS_DUMP").is_ok() {
                    if let Some(img) = image::RgbaImage::from_raw(64, 64, got.clone()) {
                        let _ = img.save(d.join("softgpu.png"));
                    }
                }
                let (max, within) = compare(&got, want.as_raw());
                if within >= 99.0 {
                    agree += 1;
                    exact += usize::from(max == 0);
                } else {
                    bad.push((within, max, rel.display().to_string()));
                }
            }
            Ok(Err(e)) => failed.push(format!("{}: {e}", rel.display())),
            Err(_) => failed.push(format!("{}: panic", rel.display())),
        }
    }
    println!(
        "{} passes rendered by cgc+Mesa: {agree} agree with softgpu (>= 99% of pixels within 4/255; {exact} byte-identical), {} differ, {} fail in softgpu",
        dirs.len(),
        bad.len(),
        failed.len()
    );
    bad.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (within, max, name) in &bad {
        println!("  differ: {name}: {within:.2}% within 4/255, max {max}/255");
    }
    for f in &failed {
        println!("  fail: {f}");
    }
    assert!(agree > 0);
}
