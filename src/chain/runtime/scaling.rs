//! The size each pass renders at: RetroArch's scale rules (source, viewport, original,
//! absolute), rounded and clamped to the largest target side.

use crate::chain::preset::{PassConfig, ScaleFactor, ScaleType};

/// Largest side of any pass target (RetroArch's and librashader's limit).
pub const MAX_TARGET_SIZE: u32 = 16384;

/// The size a pass renders at, from its scale rules (rounded, clamped to 1..=16384).
pub(super) fn scaled_size(
    config: &PassConfig,
    source: (u32, u32),
    viewport: (u32, u32),
    original: (u32, u32),
) -> (u32, u32) {
    let axis = |scaling: &crate::chain::preset::Scaling, src: u32, vp: u32, orig: u32| -> u32 {
        let factor = |f: ScaleFactor| match f {
            ScaleFactor::Float(f) => f,
            ScaleFactor::Absolute(a) => a as f32,
        };
        let v = match scaling.scale_type {
            ScaleType::Source => src as f32 * factor(scaling.factor),
            ScaleType::Viewport => vp as f32 * factor(scaling.factor),
            ScaleType::Original => orig as f32 * factor(scaling.factor),
            ScaleType::Absolute => match scaling.factor {
                ScaleFactor::Absolute(a) => a as f32,
                ScaleFactor::Float(f) => f,
            },
        };
        let r = v.round();
        if r.is_nan() || r < 1.0 {
            1
        } else if r > MAX_TARGET_SIZE as f32 {
            MAX_TARGET_SIZE
        } else {
            r as u32
        }
    };
    (
        axis(&config.scale.x, source.0, viewport.0, original.0),
        axis(&config.scale.y, source.1, viewport.1, original.1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::preset::{Scale2D, Scaling, WrapMode};
    use std::path::PathBuf;

    fn config(x: Scaling, y: Scaling) -> PassConfig {
        PassConfig {
            index: 0,
            shader: PathBuf::from("x.slang"),
            shader_origin: (PathBuf::from("x.slangp"), 2),
            alias: None,
            filter: None,
            wrap_mode: WrapMode::ClampToBorder,
            frame_count_mod: 0,
            srgb_framebuffer: false,
            float_framebuffer: false,
            mipmap_input: false,
            scale: Scale2D { valid: true, x, y },
        }
    }

    #[test]
    fn scale_rules_round_and_clamp() {
        let s = |t, f| Scaling {
            scale_type: t,
            factor: f,
        };
        let c = config(
            s(ScaleType::Source, ScaleFactor::Float(1.5)),
            s(ScaleType::Viewport, ScaleFactor::Float(0.5)),
        );
        assert_eq!(scaled_size(&c, (101, 7), (640, 481), (1, 1)), (152, 241));
        let c = config(
            s(ScaleType::Absolute, ScaleFactor::Absolute(3)),
            s(ScaleType::Original, ScaleFactor::Float(100000.0)),
        );
        assert_eq!(
            scaled_size(&c, (1, 1), (1, 1), (2, 2)),
            (3, MAX_TARGET_SIZE)
        );
        let c = config(
            s(ScaleType::Source, ScaleFactor::Float(0.0)),
            s(ScaleType::Source, ScaleFactor::Float(f32::NAN)),
        );
        assert_eq!(scaled_size(&c, (10, 10), (1, 1), (1, 1)), (1, 1));
    }
}
