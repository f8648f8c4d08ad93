//! The Cg frontend against NVIDIA's Cg compiler: each tests/data/cg/refs/NAME/shader.cg was
//! compiled by cgc 3.1 to GLSL and rendered on Mesa softpipe (`tools/make_cg_refs.py`, the
//! command and driver in command.txt); softgpu renders the same shader through its own Cg
//! frontend with the same uniforms, textures and quad, and must agree on ≥ 99% of the pixels
//! within 4/255 (the bar; the numbers are printed).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use softgpu::draw::{run, sampler_state, DrawJob, VertexData};
use softgpu::frontend::cg::compile_cg;
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

/// Renders `dir/shader.cg` with the reference's inputs; RGBA8 rows, row 0 = top.
fn render(dir: &Path) -> Vec<u8> {
    let shader = compile_cg(&dir.join("shader.cg")).unwrap_or_else(|e| panic!("{e}"));
    let (vs, fs) = shader.lower().unwrap_or_else(|e| panic!("{e}"));
    let mut words = vec![0u32; 64 * 4];
    let mut put = |offset: u32, values: &[f32]| {
        for (i, v) in values.iter().enumerate() {
            words[offset as usize / 4 + i] = v.to_bits();
        }
    };
    let ubo = shader.fragment.reflection.ubo.clone();
    for m in ubo.iter().flat_map(|b| b.members.iter()) {
        match m.name.as_str() {
            // Column-major, as RetroArch uploads it (the frontend transposes for Cg's rows).
            "MVP" => {
                for c in 0..4u32 {
                    let col = MVP_ROWS.map(|row| row[c as usize]);
                    put(m.offset + 16 * c, &col);
                }
            }
            "SourceSize" | "OriginalSize" => put(m.offset, &[16.0, 16.0]),
            "OutputSize" => put(m.offset, &[64.0, 64.0]),
            "FrameCount" => put(m.offset, &[3.0]),
            "FrameDirection" => put(m.offset, &[1.0]),
            name => {
                let p = shader
                    .parameters
                    .iter()
                    .find(|p| p.id == name)
                    .unwrap_or_else(|| panic!("no value for uniform {name}"));
                put(m.offset, &[p.initial]);
            }
        }
    }
    let constants: Vec<[u32; 4]> = words.chunks(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
    let tex0 = Arc::new(Texture::load(&dir.join("tex0.png")).expect("tex0.png"));
    let lut = Arc::new(Texture::load(&dir.join("lut.png")).expect("lut.png"));
    let mut textures = Vec::new();
    for t in &shader.fragment.reflection.textures {
        let img = match t.name.as_deref() {
            Some("Source") | Some("Original") => tex0.clone(),
            _ => lut.clone(),
        };
        textures.push((t.binding, img));
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
    };
    run(&job).unwrap_or_else(|e| panic!("{e}")).to_rgba8()
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
        let got = render(&dir);
        let want = image::open(dir.join("out.png"))
            .expect("out.png")
            .to_rgba8();
        assert_eq!(got.len(), want.as_raw().len());
        let (mut max, mut over) = (0u8, 0usize);
        for (g, w) in got.chunks(4).zip(want.as_raw().chunks(4)) {
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
        let within = 100.0 * (pixels - over) as f64 / pixels as f64;
        println!(
            "{}: max difference {max}/255, {within:.2}% of pixels within 4/255",
            dir.file_name().unwrap_or_default().to_string_lossy()
        );
        if std::env::var("CG_REFS_DUMP").is_ok() {
            image::RgbaImage::from_raw(64, 64, got.clone())
                .expect("64x64")
                .save(std::env::temp_dir().join(format!(
                    "cg-{}.png",
                    dir.file_name().unwrap_or_default().to_string_lossy()
                )))
                .expect("save");
        }
        assert!(
            within >= 99.0,
            "{}: only {within:.2}% within 4/255",
            dir.display()
        );
    }
}
