//! What a frame of a chain needs in memory — the input and its history, every pass target with
//! its mip chain, the feedback copies, the lookup textures, the decoded copies the JIT samples
//! and the output — summed before the frame allocates anything and checked against the chain's
//! memory budget ([`crate::budget`]), so that a preset whose targets are each legal but together
//! too large is refused by name instead of exhausting the machine.

use crate::budget::MemoryUse;
use crate::texture::{Format, Texture};

use crate::chain::ChainError;

use super::FilterChain;

impl FilterChain {
    /// The buffers a frame with an input of `original` size, pass targets of `sizes` and a
    /// `viewport` keeps at once.
    pub(super) fn frame_memory(
        &self,
        original: (u32, u32),
        sizes: &[(u32, u32)],
        viewport: (u32, u32),
    ) -> MemoryUse {
        let decoded = self.predecode_outputs;
        let mut usage = MemoryUse::new();
        let input =
            Texture::estimated_bytes(Format::R8G8B8A8Unorm, original.0, original.1, 1, decoded);
        usage.add(
            format!("the input frame {}x{}", original.0, original.1),
            input,
        );
        let depth = self.history.depth() as u64;
        if depth > 0 {
            usage.add(
                format!(
                    "{depth} previous input frames (OriginalHistory) of {}x{}",
                    original.0, original.1
                ),
                input.saturating_mul(depth),
            );
        }
        let count = self.passes.len();
        let mut largest_target = (0, "");
        for (index, pass) in self.passes.iter().enumerate() {
            let last = index + 1 == count;
            if last && !self.history.last_pass_feedback() {
                continue;
            }
            let (w, h) = sizes[index];
            let mipmaps = self
                .passes
                .get(index + 1)
                .is_some_and(|next| next.config.mipmap_input);
            let levels = if mipmaps {
                Texture::full_mip_levels(w, h)
            } else {
                1
            };
            let bytes = Texture::estimated_bytes(pass.format, w, h, levels, decoded);
            if bytes > largest_target.0 {
                largest_target = (bytes, pass.label.as_str());
            }
            let mips = if levels > 1 {
                format!(" with {levels} mip levels")
            } else {
                String::new()
            };
            usage.add(
                format!("{}: target {w}x{h} {}{mips}", pass.label, pass.format),
                bytes,
            );
            if self.history.reads_feedback_of(index) {
                usage.add(
                    format!(
                        "{}: previous frame's target (PassFeedback{index})",
                        pass.label
                    ),
                    bytes,
                );
            }
        }
        // The output, and the RGBA8 copy it is encoded from when it is saved; reusing
        // unchanged passes also keeps the previous output, the previous input and, while a pass
        // draws again, its previous target to compare with.
        let reuse = !self.redraw_unchanged;
        usage.add(
            format!("the output {}x{}", viewport.0, viewport.1),
            Texture::estimated_bytes(self.viewport_format(), viewport.0, viewport.1, 1, false)
                .saturating_mul(if reuse { 3 } else { 2 }),
        );
        if reuse {
            usage.add(
                "the previous input frame (for reusing unchanged passes)",
                input,
            );
            if largest_target.0 > 0 {
                usage.add(
                    format!(
                        "{}: previous target, compared with a new draw",
                        largest_target.1
                    ),
                    largest_target.0,
                );
            }
        }
        for lut in &self.luts {
            let t = &lut.texture;
            usage.add(
                format!("LUT `{}` {}x{}", lut.name, t.width(), t.height()),
                Texture::estimated_bytes(t.format(), t.width(), t.height(), t.level_count(), false),
            );
        }
        usage
    }

    /// Refuses a frame whose buffers would not fit in the chain's memory budget, or whose
    /// passes would shade more pixels than its pixel budget.
    pub(super) fn check_frame_memory(
        &self,
        original: (u32, u32),
        sizes: &[(u32, u32)],
        viewport: (u32, u32),
    ) -> Result<(), ChainError> {
        let what = format!(
            "{}: a frame of {}x{} from a {}x{} input",
            self.preset_path.display(),
            viewport.0,
            viewport.1,
            original.0,
            original.1
        );
        self.frame_memory(original, sizes, viewport)
            .check(self.memory_budget, &what)
            .map_err(ChainError::new)?;
        self.check_frame_pixels(sizes, viewport, &what)
    }

    /// Refuses a frame whose passes would shade more pixels together than the pixel budget,
    /// naming the passes with the largest targets.
    fn check_frame_pixels(
        &self,
        sizes: &[(u32, u32)],
        viewport: (u32, u32),
        what: &str,
    ) -> Result<(), ChainError> {
        let count = self.passes.len();
        let mut shaded: Vec<(usize, (u32, u32), u64)> = Vec::with_capacity(count + 1);
        for (index, &(w, h)) in sizes.iter().enumerate() {
            let last = index + 1 == count;
            if !last || self.history.last_pass_feedback() {
                shaded.push((index, (w, h), u64::from(w) * u64::from(h)));
            }
        }
        shaded.push((
            count - 1,
            viewport,
            u64::from(viewport.0) * u64::from(viewport.1),
        ));
        let total: u64 = shaded.iter().map(|s| s.2).sum();
        if total <= self.pixel_budget {
            return Ok(());
        }
        shaded.sort_by_key(|item| std::cmp::Reverse(item.2));
        let largest: Vec<String> = shaded
            .iter()
            .take(3)
            .map(|(index, (w, h), _)| format!("{} at {w}x{h}", self.passes[*index].label))
            .collect();
        Err(ChainError::new(format!(
            "{what} shades {total} pixels in its passes, more than the pixel budget of {}; the \
             largest: {}; raise the budget with --pixel-budget N or {} (see docs/limits.md)",
            self.pixel_budget,
            largest.join("; "),
            crate::budget::PIXEL_BUDGET_ENV
        )))
    }
}

/// The bytes the lookup textures of `sizes` (width, height, mipmapped) will hold once loaded,
/// from their headers, named for an over-budget error.
pub(super) fn lut_memory(luts: &[(String, (u32, u32), bool)]) -> MemoryUse {
    let mut usage = MemoryUse::new();
    for (name, (w, h), mipmap) in luts {
        let levels = if *mipmap {
            Texture::full_mip_levels(*w, *h)
        } else {
            1
        };
        // A mipmapped LUT is made from a loaded copy of level 0, which lives while the chain
        // is built.
        let copy = if *mipmap {
            Texture::estimated_bytes(Format::R8G8B8A8Unorm, *w, *h, 1, false)
        } else {
            0
        };
        usage.add(
            format!("LUT `{name}` {w}x{h}"),
            Texture::estimated_bytes(Format::R8G8B8A8Unorm, *w, *h, levels, false)
                .saturating_add(copy),
        );
    }
    usage
}
