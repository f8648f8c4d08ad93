//! Incremental frames: a pass whose inputs did not change since the previous frame reuses its
//! output. Every frame must be byte-identical to drawing every pass (`redraw_unchanged`), and
//! the reuse must happen exactly where nothing a pass reads changed: a still input, `FrameCount`
//! only when read, history once it holds the same frame, feedback once it stops changing.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use softgpu::chain::{ChainOptions, FilterChain, FrameOptions};
use softgpu::texture::Texture;

fn chain_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/chain")
}

fn input(name: &str) -> Arc<Texture> {
    Arc::new(Texture::load(&chain_dir().join("inputs").join(name)).expect("test input"))
}

/// The 4-frame input sequence of `inputs/frames`.
fn frame_sequence() -> Vec<Arc<Texture>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(chain_dir().join("inputs/frames"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| Arc::new(Texture::load(f).unwrap()))
        .collect()
}

/// Renders `inputs` (frame i gets `inputs[min(i, len-1)]`, a fresh copy every frame, as a video
/// stream gives them) and returns every frame's RGBA8 bytes and each pass's reuse count.
fn render(
    preset: &Path,
    inputs: &[Arc<Texture>],
    frames: usize,
    redraw_unchanged: bool,
    size: (u32, u32),
) -> (Vec<Vec<u8>>, Vec<u64>) {
    let options = ChainOptions {
        redraw_unchanged,
        ..Default::default()
    };
    let mut chain = FilterChain::load(preset, &options).expect("preset loads");
    let mut out = Vec::new();
    for frame in 0..frames {
        let source = &inputs[frame.min(inputs.len() - 1)];
        let copy = Arc::new((**source).clone());
        let image = chain
            .frame(&copy, size, frame as u64, &FrameOptions::default())
            .expect("frame renders");
        out.push(image.to_rgba8());
    }
    let reused = chain.pass_timings().iter().map(|t| t.reused).collect();
    (out, reused)
}

#[test]
fn every_test_preset_renders_the_same_bytes_with_and_without_reuse() {
    let still = [input("scene64x48.png")];
    let moving = frame_sequence();
    let mut presets: Vec<PathBuf> = std::fs::read_dir(chain_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "slangp"))
        .collect();
    presets.sort();
    assert!(presets.len() >= 15, "the test presets: {presets:?}");
    let mut reused_somewhere = 0;
    for preset in &presets {
        for inputs in [&still[..], &moving[..]] {
            let size = (inputs[0].width() * 3 / 2, inputs[0].height() * 3 / 2);
            let (reused, counts) = render(preset, inputs, 6, false, size);
            let (redrawn, none) = render(preset, inputs, 6, true, size);
            assert!(
                none.iter().all(|&n| n == 0),
                "{}: redraw_unchanged",
                preset.display()
            );
            for (frame, (a, b)) in reused.iter().zip(&redrawn).enumerate() {
                assert!(
                    a == b,
                    "{}: frame {frame} differs with reuse",
                    preset.display()
                );
            }
            reused_somewhere += counts.iter().sum::<u64>();
        }
    }
    assert!(
        reused_somewhere > 0,
        "no pass of any preset was ever reused"
    );
}

#[test]
fn a_still_input_reuses_every_pass_after_the_first_frame() {
    let (_, reused) = render(
        &chain_dir().join("stock.slangp"),
        &[input("scene64x48.png")],
        5,
        false,
        (64, 48),
    );
    assert_eq!(reused, vec![4; reused.len()]);
}

#[test]
fn frame_count_is_a_changed_input_only_for_passes_that_read_it() {
    // semantics.slangp: pass 0 reads FrameCount with frame_count_mod 3, pass 1 without a mod.
    // Pass 0 repeats its FrameCount every 3 frames, never two frames in a row; neither pass
    // can be reused.
    let (_, reused) = render(
        &chain_dir().join("semantics.slangp"),
        &[input("scene64x48.png")],
        6,
        false,
        (96, 72),
    );
    assert_eq!(reused, vec![0, 0]);
}

#[test]
fn history_is_unchanged_once_it_holds_the_same_frame() {
    // history.slangp reads OriginalHistory0..3 of a still input: frames 0..3 see history fill
    // up (blank, then the input), from frame 4 on nothing changes.
    let (_, reused) = render(
        &chain_dir().join("history.slangp"),
        &[input("scene64x48.png")],
        7,
        false,
        (64, 48),
    );
    assert_eq!(reused, vec![7 - 4]);
    // A moving input changes the history every frame.
    let (_, moving) = render(
        &chain_dir().join("history.slangp"),
        &frame_sequence(),
        4,
        false,
        (64, 48),
    );
    assert_eq!(moving, vec![0]);
}

/// A pass that moves its own previous output halfway towards Source every frame (it does not
/// read `FrameCount`), then a pass-through.
const SETTLING: &str = r#"#version 450
layout(std140, set = 0, binding = 0) uniform UBO { mat4 MVP; } global;
#pragma stage vertex
layout(location = 0) in vec4 Position;
layout(location = 1) in vec2 TexCoord;
layout(location = 0) out vec2 vTexCoord;
void main() { gl_Position = global.MVP * Position; vTexCoord = TexCoord; }
#pragma stage fragment
layout(location = 0) in vec2 vTexCoord;
layout(location = 0) out vec4 FragColor;
layout(set = 0, binding = 2) uniform sampler2D Source;
layout(set = 0, binding = 3) uniform sampler2D PassFeedback0;
void main()
{
    FragColor = vec4(0.5 * texture(Source, vTexCoord).rgb
                     + 0.5 * texture(PassFeedback0, vTexCoord).rgb, 1.0);
}
"#;

#[test]
fn feedback_passes_are_reused_once_their_output_stops_changing() {
    // With a still input the settling pass's 8-bit output reaches a fixed point; from then on
    // it keeps its texture, and it and the pass after it are reused.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("settle.slang"), SETTLING).unwrap();
    std::fs::copy(
        chain_dir().join("shaders/stock.slang"),
        dir.path().join("stock.slang"),
    )
    .unwrap();
    let preset = dir.path().join("settle.slangp");
    std::fs::write(
        &preset,
        "shaders = 2\nshader0 = settle.slang\nfilter_linear0 = false\nshader1 = stock.slang\n",
    )
    .unwrap();
    let frames = 30;
    let still = [input("scene64x48.png")];
    let (images, reused) = render(&preset, &still, frames, false, (64, 48));
    let (redrawn, _) = render(&preset, &still, frames, true, (64, 48));
    assert!(images == redrawn, "the same frames with and without reuse");
    let settled = (1..frames)
        .find(|&f| images[f] == images[f - 1])
        .expect("the output settles");
    assert!(reused[0] > 0 && reused[1] > 0, "{reused:?}");
    // A pass is reused from the second frame after its output stopped changing: the first
    // unchanged draw keeps the old texture, the next sees unchanged feedback.
    assert!(
        reused[0] as usize <= frames - settled,
        "settled at frame {settled}, reused {reused:?}"
    );
}

#[test]
fn set_parameters_renders_as_a_chain_built_with_them_and_keeps_history() {
    let preset = chain_dir().join("params.slangp");
    let still = input("scene64x48.png");
    let values = vec![("P_B".to_string(), 0.75f32), ("P_E".to_string(), 0.1)];
    let mut updated = FilterChain::load(&preset, &ChainOptions::default()).unwrap();
    updated
        .frame(&still, (64, 48), 0, &FrameOptions::default())
        .unwrap();
    updated.set_parameters(&values).unwrap();
    assert_eq!(updated.parameters()["P_B"], 0.75);
    let after = updated
        .frame(&still, (64, 48), 1, &FrameOptions::default())
        .unwrap();
    let mut built = FilterChain::load(
        &preset,
        &ChainOptions {
            parameters: values.clone(),
            ..Default::default()
        },
    )
    .unwrap();
    built
        .frame(&still, (64, 48), 0, &FrameOptions::default())
        .unwrap();
    let expected = built
        .frame(&still, (64, 48), 1, &FrameOptions::default())
        .unwrap();
    assert!(
        after.to_rgba8() == expected.to_rgba8(),
        "the new values reach the passes"
    );

    // Feedback survives the update: a pass mixing its previous output into Source renders
    // brighter after the update than a fresh chain's first frame with the same value.
    let dir = tempfile::tempdir().unwrap();
    let shader = SETTLING
        .replace(
            "#version 450\n",
            "#version 450\n#pragma parameter GAIN \"Gain\" 1.0 0.0 1.0 0.1\n\
             layout(push_constant) uniform Push { float GAIN; } params;\n",
        )
        .replace("0.5 * texture(Source", "0.5 * params.GAIN * texture(Source");
    std::fs::write(dir.path().join("gain.slang"), shader).unwrap();
    let gain = dir.path().join("gain.slangp");
    std::fs::write(&gain, "shaders = 1\nshader0 = gain.slang\n").unwrap();
    let mut kept = FilterChain::load(&gain, &ChainOptions::default()).unwrap();
    for frame in 0..4 {
        kept.frame(&still, (64, 48), frame, &FrameOptions::default())
            .unwrap();
    }
    let dim = vec![("GAIN".to_string(), 0.2f32)];
    kept.set_parameters(&dim).unwrap();
    let with_feedback = kept
        .frame(&still, (64, 48), 4, &FrameOptions::default())
        .unwrap()
        .to_rgba8();
    let mut fresh = FilterChain::load(
        &gain,
        &ChainOptions {
            parameters: dim,
            ..Default::default()
        },
    )
    .unwrap();
    let without = fresh
        .frame(&still, (64, 48), 0, &FrameOptions::default())
        .unwrap()
        .to_rgba8();
    let sum = |v: &[u8]| v.iter().map(|&b| b as u64).sum::<u64>();
    assert!(
        sum(&with_feedback) > sum(&without),
        "the feedback of the frames before the update is still read"
    );

    let err = updated
        .set_parameters(&[("NOPE".to_string(), 1.0)])
        .unwrap_err();
    assert!(err.message.contains("NOPE"), "{}", err.message);
    let err = updated
        .set_parameters(&[("P_A".to_string(), f32::NAN)])
        .unwrap_err();
    assert!(err.message.contains("finite"), "{}", err.message);
}
