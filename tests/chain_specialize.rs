//! The filter chain specializes each pass's fragment program for the textures it binds
//! (`opt::specialize`: if-conversion, value numbering). That must not change a pixel: every
//! preset of `tests/chain/` and the bench presets render byte-identically with and without it,
//! including `specialize/mip_branch.slangp`, whose mipmapped pass reads textures inside branches
//! that split quads (converting those branches would change the level of detail). The sampler
//! hints the chain predicts for each pass must match what its frames bind. Specialization also
//! folds the shader parameters into the programs (`opt::fold_known_constants`), which must
//! not change a pixel either.

use softgpu::chain::{ChainOptions, FilterChain, FrameOptions};
use softgpu::texture::Texture;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The last of three frames, the chain's sampler-hint misses, how many units it hints and how
/// many parameter reads it folded.
fn render(
    preset: &Path,
    skip_specialization: bool,
    input: &Arc<Texture>,
) -> (Vec<u8>, u64, usize, usize) {
    let options = ChainOptions {
        skip_specialization,
        ..Default::default()
    };
    let mut chain =
        FilterChain::load(preset, &options).unwrap_or_else(|e| panic!("{}: {e}", preset.display()));
    let mut last = None;
    for frame in 0..3 {
        last = Some(
            chain
                .frame(input, (96, 72), frame, &FrameOptions::default())
                .unwrap_or_else(|e| panic!("{}: {e}", preset.display())),
        );
    }
    let pixels = last.expect("three frames").level_data(0).to_vec();
    (
        pixels,
        chain.sampler_hint_misses(),
        chain.sampler_hint_count(),
        chain.folded_constant_count(),
    )
}

fn presets() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/chain");
    let mut list: Vec<PathBuf> = ["", "bench", "specialize"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(root.join(dir)).expect("tests/chain"))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "slangp"))
        .collect();
    list.sort();
    list
}

#[test]
fn specialized_chains_render_the_same_pixels() {
    let input = Arc::new(
        Texture::load(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/chain/inputs/scene64x48.png"),
        )
        .expect("input"),
    );
    let mut rendered = 0;
    let mut hinted = 0;
    let mut folded = 0;
    for preset in presets() {
        // Presets that need options this test does not give (wildcards, parameters) are
        // covered by the goldens; everything else must load.
        if FilterChain::load(&preset, &ChainOptions::default()).is_err() {
            continue;
        }
        let (specialized, misses, hints, folds) = render(&preset, false, &input);
        let (plain, _, _, plain_folds) = render(&preset, true, &input);
        assert_eq!(
            plain_folds,
            0,
            "{}: folded without specialization",
            preset.display()
        );
        folded += folds;
        // The sampler hints predicted from the preset must be what each frame binds (REPEAT
        // is hinted only where the preset fixes a power-of-two size: wrap's REPEAT pass reads
        // a 64x48 `Source` and is not hinted; luts' 16x16 REPEAT LUT is).
        assert_eq!(
            misses,
            0,
            "{}: draws whose bound sampler states differ from the predicted hints",
            preset.display()
        );
        if preset.ends_with("luts.slangp") {
            assert_eq!(
                hints, 4,
                "luts: four of its five LUTs are hinted (not the mipmapped)"
            );
        }
        hinted += hints;
        assert!(
            specialized == plain,
            "{}: specialization changed the image",
            preset.display()
        );
        rendered += 1;
    }
    assert!(rendered >= 20, "only {rendered} presets rendered");
    assert!(hinted >= 75, "only {hinted} texture units hinted");
    // params, reference, the bench presets and the texel-function passes read parameters.
    assert!(folded >= 150, "only {folded} parameter reads folded");
}

/// The texel functions of `specialize/texel_functions.slangp` (see its comments): the curve
/// passes are hoisted; the pass whose curve lifts black falls back on every draw (its source is
/// sampled through a border the curve changes), and so does the pass that shrinks its source
/// (the pre-pass would not pay); the pixels are those of the program as compiled (checked with
/// every preset above). The bench's crt-lottes-class pass has one.
#[test]
fn texel_functions_are_hoisted_where_their_preconditions_hold() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/chain");
    let input = Arc::new(Texture::load(&root.join("inputs/scene64x48.png")).expect("input"));
    let counts = |preset: &Path| {
        // Every frame draws (a still input would otherwise reuse the passes after frame 0).
        let options = ChainOptions {
            redraw_unchanged: true,
            ..ChainOptions::default()
        };
        let mut chain = FilterChain::load(preset, &options)
            .unwrap_or_else(|e| panic!("{}: {e}", preset.display()));
        for frame in 0..3 {
            chain
                .frame(&input, (96, 72), frame, &FrameOptions::default())
                .unwrap_or_else(|e| panic!("{}: {e}", preset.display()));
        }
        (chain.texel_prepass_count(), chain.texel_prepass_fallbacks())
    };
    let (hoisted, fallbacks) = counts(&root.join("specialize/texel_functions.slangp"));
    assert_eq!(
        hoisted, 5,
        "texel_functions: every pass but 3 (which samples linearly) has a texel function"
    );
    assert_eq!(
        fallbacks, 6,
        "texel_functions: each of the 3 draws of pass 2 (its curve lifts the border) and of \
         pass 4 (its pre-pass would cost more than it saves) falls back"
    );
    let (lottes, lottes_fallbacks) = counts(&root.join("bench/crt-lottes-class.slangp"));
    assert_eq!(
        (lottes, lottes_fallbacks),
        (1, 0),
        "crt-lottes-class: one texel function (its curve keeps the border black)"
    );
}
