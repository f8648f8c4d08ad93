//! Incremental frames: a pass whose draw would read exactly what it read in the previous frame
//! reuses its previous output instead of drawing.
//!
//! What a draw reads is its [`DrawKey`]: the bytes of both stages' constant buffers (every
//! uniform the pass's programs read — `FrameCount` only if they read it, sizes, `MVP`,
//! parameters), the textures bound to its units, its target size and whether it draws the final
//! quad. Textures are compared by identity: an input frame with the same contents as the
//! previous one is given the previous frame's texture ([`FilterChain::frame`] checks the
//! bytes), and a pass that is reused hands the next passes, its feedback readers and the history
//! the very texture it produced before, so an unchanged chain keeps unchanged identities. The
//! key holds [`Weak`] references: they keep a texture's allocation (not its pixels) alive, so a
//! new texture can never take the address of one the key remembers. The pixels a reused pass
//! returns are the ones its draw produced from the same inputs: exact by construction.
//!
//! [`FilterChain::frame`]: super::FilterChain::frame

use std::sync::{Arc, Weak};

use crate::texture::Texture;

use super::binding::{stage_resources, FrameState};
use super::pass::Pass;

/// What one draw of a pass reads.
pub(super) struct DrawKey {
    textures: Vec<Option<Weak<Texture>>>,
    constants: Vec<Vec<[u32; 4]>>,
    target: (u32, u32, u32),
    output_size: (u32, u32),
    final_quad: bool,
}

impl DrawKey {
    /// The key of drawing `pass` in `frame` into a target of `target` (width, height, levels).
    pub(super) fn new(
        pass: &Pass,
        frame: &FrameState<'_>,
        target: (u32, u32, u32),
        output_size: (u32, u32),
        mvp: &[f32; 16],
        final_quad: bool,
    ) -> DrawKey {
        let mut constants = Vec::new();
        let mut textures = Vec::new();
        for bindings in [&pass.vertex_bindings, &pass.fragment_bindings] {
            constants.extend(stage_resources(bindings, pass, frame, output_size, mvp).0);
            textures.extend(
                bindings
                    .textures
                    .iter()
                    .map(|t| frame.texture(t.semantic).map(Arc::downgrade)),
            );
        }
        DrawKey {
            textures,
            constants,
            target,
            output_size,
            final_quad,
        }
    }

    fn same_draw(&self, other: &DrawKey) -> bool {
        self.constants == other.constants
            && self.target == other.target
            && self.output_size == other.output_size
            && self.final_quad == other.final_quad
            && self.textures.len() == other.textures.len()
            && self
                .textures
                .iter()
                .zip(&other.textures)
                .all(|(a, b)| match (a, b) {
                    (Some(a), Some(b)) => Weak::ptr_eq(a, b),
                    (None, None) => true,
                    _ => false,
                })
    }
}

/// A pass draw remembered from the previous frame: what it read and what it produced.
pub(super) struct Memo<T> {
    key: DrawKey,
    output: T,
}

/// The remembered draws of one pass: into its own target, and into the viewport (the last
/// pass).
#[derive(Default)]
pub(super) struct PassMemo {
    pub(super) target: Option<Memo<Arc<Texture>>>,
    pub(super) viewport: Option<Memo<Texture>>,
}

impl<T> Memo<T> {
    /// `Ok` with the output remembered for `key` when it was drawn from the same inputs; else
    /// `Err` with the previous output, if any (the memo is emptied: the pass draws again).
    pub(super) fn lookup(memo: &mut Option<Memo<T>>, key: &DrawKey) -> Result<T, Option<T>> {
        match memo.take() {
            Some(m) if m.key.same_draw(key) => Ok(m.output),
            other => Err(other.map(|m| m.output)),
        }
    }

    /// Remembers `output` as drawn from `key`.
    pub(super) fn remember(memo: &mut Option<Memo<T>>, key: DrawKey, output: T) {
        *memo = Some(Memo { key, output });
    }
}

/// Whether two textures hold the same level 0 in the same shape (the rest of a texture — mip
/// levels, decoded copies — is made from level 0), so the newer may take the older's identity.
pub(super) fn same_contents(a: &Texture, b: &Texture) -> bool {
    a.format() == b.format()
        && a.width() == b.width()
        && a.height() == b.height()
        && a.level_count() == b.level_count()
        && a.level_data(0) == b.level_data(0)
}
