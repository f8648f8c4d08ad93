//! Cg presets as RetroArch's Cg runtime (`gfx/drivers_shader/shader_gl_cg.c`) binds them, on
//! the presets of `tests/data/cg/runtime/`: a uniform that names no semantic and no
//! `#pragma parameter` of any pass is bound by nothing and keeps its default (zero, or its
//! initializer; a program may assign it before reading it); a uniform named after another
//! pass's parameter is that parameter; `FEEDBACK` is the frame input (the preset names no
//! feedback pass), and RetroArch's structs, with or without `uniform`, may be passed to
//! functions. A `.slang` pass keeps RetroArch's slang rule: such a uniform is an error.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use softgpu::chain::{ChainOptions, FilterChain, FrameOptions};
use softgpu::texture::{Format, Texture};

const W: u32 = 4;
const H: u32 = 3;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/cg/runtime")
        .join(name)
}

/// A 4x3 input whose every texel differs.
fn input() -> Arc<Texture> {
    let mut tex = Texture::new(Format::R8G8B8A8Unorm, W, H, 1).expect("texture");
    for (i, px) in tex.level_data_mut(0).chunks_exact_mut(4).enumerate() {
        let i = i as u8;
        px.copy_from_slice(&[10 + 20 * i, 200 - 15 * i, 7 * i, 255]);
    }
    Arc::new(tex)
}

/// The third frame of `preset` at the input's size, RGBA8 rows.
fn render(preset: &Path) -> Vec<u8> {
    let mut chain = FilterChain::load(preset, &ChainOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", preset.display()));
    let input = input();
    let mut last = None;
    for frame in 0..3 {
        last = Some(
            chain
                .frame(&input, (W, H), frame, &FrameOptions::default())
                .unwrap_or_else(|e| panic!("{}: {e}", preset.display())),
        );
    }
    last.expect("three frames").level_data(0).to_vec()
}

#[test]
fn unbound_uniforms_keep_their_default_and_parameters_of_every_pass_bind() {
    let pixels = render(&data("unbound.cgp"));
    // r: never bound (0); g: written before read (0.6); b: initializer (0.2); a: SHARED,
    // declared by pass 0 only (0.8).
    let expected = [0u8, 153, 51, 204];
    for (i, px) in pixels.chunks_exact(4).enumerate() {
        assert_eq!(px, expected, "pixel {i}");
    }
}

#[test]
fn feedback_is_the_frame_and_structs_holding_samplers_pass_to_functions() {
    let pixels = render(&data("feedback.cgp"));
    let input = input();
    for (i, (px, orig)) in pixels
        .chunks_exact(4)
        .zip(input.level_data(0).chunks_exact(4))
        .enumerate()
    {
        // r: IN, the output of pass 0 (1 - the frame); g: FEEDBACK, the frame itself.
        assert_eq!(px, [255 - orig[0], orig[1], 0, 255], "pixel {i}");
    }
}

#[test]
fn a_slang_uniform_that_means_nothing_is_still_an_error() {
    let dir = std::env::temp_dir().join(format!("softgpu-chain-cg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let shader = dir.join("unknown.slang");
    std::fs::write(
        &shader,
        "#version 450\n\
         layout(std140, set = 0, binding = 0) uniform UBO { mat4 MVP; float never_bound; } global;\n\
         #pragma stage vertex\n\
         layout(location = 0) in vec4 Position;\n\
         void main() { gl_Position = global.MVP * Position; }\n\
         #pragma stage fragment\n\
         layout(location = 0) out vec4 FragColor;\n\
         void main() { FragColor = vec4(global.never_bound); }\n",
    )
    .expect("write shader");
    let preset = dir.join("unknown.slangp");
    std::fs::write(&preset, "shaders = 1\nshader0 = unknown.slang\n").expect("write preset");
    let error = match FilterChain::load(&preset, &ChainOptions::default()) {
        Ok(_) => panic!("a slang uniform that means nothing must be an error"),
        Err(e) => e.to_string(),
    };
    assert!(
        error.contains("uniform `never_bound` means nothing"),
        "{error}"
    );
}
