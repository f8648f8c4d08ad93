//! What a chain keeps from one frame to the next: the input frames the passes read as
//! `OriginalHistoryN` and the outputs of the passes they read as `PassFeedbackN`.
//!
//! As librashader does, both start as transparent black: history images are 1x1 until a frame
//! is pushed, and a feedback image that is missing or has another size than its pass's target
//! this frame is a transparent black image of that size.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::texture::{Format, Texture};

use crate::chain::semantics::TextureSemantic;
use crate::chain::ChainError;

use super::pass::Pass;

/// A transparent black RGBA8 image.
fn blank(width: u32, height: u32) -> Result<Arc<Texture>, ChainError> {
    Texture::new(Format::R8G8B8A8Unorm, width, height, 1)
        .map(Arc::new)
        .map_err(|e| ChainError::new(e.to_string()))
}

/// The history and feedback of a chain.
pub(super) struct History {
    /// The input frames before this one, the latest first (`OriginalHistory1` onwards).
    inputs: Vec<Arc<Texture>>,
    /// The passes whose previous output some pass reads.
    feedback_passes: BTreeSet<usize>,
    /// The outputs of the previous frame, of the passes in `feedback_passes`.
    previous_outputs: Vec<Option<Arc<Texture>>>,
    /// Whether some pass reads the last pass's feedback (which then also renders into a target
    /// of its own).
    last_pass_feedback: bool,
}

impl History {
    /// What `passes` read: the deepest `OriginalHistoryN`, every `PassFeedbackN`.
    pub(super) fn for_passes(passes: &[Pass]) -> Result<History, ChainError> {
        let mut depth = 0;
        let mut feedback_passes = BTreeSet::new();
        for pass in passes {
            for stage in [&pass.vertex_bindings, &pass.fragment_bindings] {
                for sem in stage.texture_semantics() {
                    match sem {
                        TextureSemantic::OriginalHistory(n) => depth = depth.max(n),
                        TextureSemantic::PassFeedback(n) => {
                            feedback_passes.insert(n);
                        }
                        _ => {}
                    }
                }
            }
        }
        Ok(History {
            inputs: (0..depth)
                .map(|_| blank(1, 1))
                .collect::<Result<Vec<_>, _>>()?,
            last_pass_feedback: feedback_passes.contains(&(passes.len() - 1)),
            feedback_passes,
            previous_outputs: vec![None; passes.len()],
        })
    }

    /// How many previous input frames are kept.
    pub(super) fn depth(&self) -> usize {
        self.inputs.len()
    }

    /// The previous input frames, the latest first.
    pub(super) fn inputs(&self) -> &[Arc<Texture>] {
        &self.inputs
    }

    /// Whether some pass reads the feedback of pass `index` (whose previous output is then
    /// kept).
    pub(super) fn reads_feedback_of(&self, index: usize) -> bool {
        self.feedback_passes.contains(&index)
    }

    /// Whether some pass reads the last pass's feedback.
    pub(super) fn last_pass_feedback(&self) -> bool {
        self.last_pass_feedback
    }

    /// This frame's feedback textures by pass, for passes whose targets have `sizes`: the
    /// previous frame's outputs, transparent black when missing or resized.
    pub(super) fn take_feedback(
        &mut self,
        sizes: &[(u32, u32)],
    ) -> Result<Vec<Option<Arc<Texture>>>, ChainError> {
        let mut feedback: Vec<Option<Arc<Texture>>> = vec![None; sizes.len()];
        for &i in &self.feedback_passes {
            let (w, h) = sizes[i];
            feedback[i] = Some(match self.previous_outputs[i].take() {
                Some(t) if t.width() == w && t.height() == h => t,
                _ => blank(w, h)?,
            });
        }
        Ok(feedback)
    }

    /// Remembers this frame for the next: `input` as `OriginalHistory1`, the pass `outputs`
    /// as feedback.
    pub(super) fn push(&mut self, input: &Arc<Texture>, outputs: &[Option<Arc<Texture>>]) {
        if !self.inputs.is_empty() {
            self.inputs.pop();
            self.inputs.insert(0, input.clone());
        }
        for &i in &self.feedback_passes {
            self.previous_outputs[i] = outputs[i].clone();
        }
    }
}
