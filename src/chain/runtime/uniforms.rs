//! The values of uniform semantics: per frame (sizes, counters, `MVP`), and those every frame
//! fills with the same bits (parameters, the HDR and sensor values of [`HostUniforms`]), which
//! the plan folds into the fragment program.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use crate::opt::KnownConstants;
use crate::shader::PassShader;

use crate::chain::preset::Preset;
use crate::chain::semantics::{
    size_vec4, write_member, StageBindings, UniformSemantic, UniformValue,
};

use crate::chain::ChainError;

use super::binding::FrameState;
use super::pass::Pass;
use super::HostUniforms;

pub(super) fn uniform_value(
    sem: &UniformSemantic,
    pass: &Pass,
    frame: &FrameState<'_>,
    output_size: (u32, u32),
    mvp: &[f32; 16],
) -> UniformValue {
    let options = frame.options;
    let aspect = if options.aspect_ratio == 0.0 {
        frame.original.width() as f32 / frame.original.height() as f32
    } else {
        options.aspect_ratio
    };
    match sem {
        UniformSemantic::Mvp => UniformValue::Floats(mvp.to_vec()),
        UniformSemantic::OutputSize => size_vec4(output_size.0, output_size.1),
        UniformSemantic::FinalViewportSize => size_vec4(frame.viewport.0, frame.viewport.1),
        UniformSemantic::FrameCount => {
            let m = pass.config.frame_count_mod as u64;
            let count = if m > 0 {
                frame.frame_count % m
            } else {
                frame.frame_count
            };
            UniformValue::Uint(count as u32)
        }
        UniformSemantic::FrameDirection => UniformValue::Int(options.frame_direction),
        UniformSemantic::Rotation => UniformValue::Uint(options.rotation),
        UniformSemantic::TotalSubFrames => UniformValue::Uint(options.total_subframes),
        UniformSemantic::CurrentSubFrame => UniformValue::Uint(options.current_subframe),
        UniformSemantic::OriginalAspect => UniformValue::Floats(vec![aspect]),
        UniformSemantic::OriginalAspectRotated => {
            let rotated = if options.rotation == 1 || options.rotation == 3 {
                1.0 / aspect
            } else {
                aspect
            };
            UniformValue::Floats(vec![rotated])
        }
        UniformSemantic::OriginalFps => UniformValue::Floats(vec![options.frames_per_second]),
        UniformSemantic::FrameTimeDelta => UniformValue::Uint(options.frametime_delta),
        UniformSemantic::Fixed(_) | UniformSemantic::Parameter(_) => {
            frame_invariant_value(sem, frame.parameters, frame.host)
                .expect("fixed uniforms and parameters have frame-invariant values")
        }
        UniformSemantic::TextureSize(t) => match frame.texture(*t) {
            Some(tex) => size_vec4(tex.width(), tex.height()),
            None => UniformValue::Floats(vec![0.0; 4]),
        },
    }
}

/// The value of a uniform that is the same in every frame of a chain — a shader parameter (fixed
/// when the chain is built) or one of librashader's HDR and sensor uniforms at its default —
/// or `None` for the uniforms that follow the frame.
fn frame_invariant_value(
    sem: &UniformSemantic,
    parameters: &HashMap<String, f32>,
    host: &HostUniforms,
) -> Option<UniformValue> {
    Some(match sem {
        UniformSemantic::Fixed(name) => match *name {
            "HDRMode" => UniformValue::Uint(host.color_space as u32),
            "BrightnessNits" => UniformValue::Floats(vec![host.brightness_nits]),
            "ExpandGamut" => UniformValue::Uint(host.expand_gamut),
            "Gyroscope" => UniformValue::Floats(host.gyroscope.to_vec()),
            "Accelerometer" => UniformValue::Floats(host.accelerometer.to_vec()),
            "AccelerometerRest" => UniformValue::Floats(host.accelerometer_rest.to_vec()),
            // RetroArch's own HDR composition uniforms, which librashader binds to zero.
            "Scanlines" | "InverseTonemap" | "HDR10" => UniformValue::Floats(vec![0.0]),
            _ => UniformValue::Uint(0),
        },
        UniformSemantic::Parameter(name) => {
            UniformValue::Floats(vec![parameters.get(name).copied().unwrap_or(0.0)])
        }
        _ => return None,
    })
}

/// The constant-buffer components of a stage that every frame fills with the same bits: those
/// [`stage_resources`] writes from members with a [`frame_invariant_value`] (in member order,
/// as it writes them, so a later member over the same bytes wins there too).
pub(super) fn frame_invariant_constants(
    bindings: &StageBindings,
    parameters: &HashMap<String, f32>,
    host: &HostUniforms,
) -> KnownConstants {
    let mut known = KnownConstants::default();
    for buffer in &bindings.buffers {
        let len = (buffer.size as usize).div_ceil(16) * 16;
        let mut data = vec![0u8; len];
        let mut invariant = vec![false; len];
        for member in &buffer.members {
            let value = frame_invariant_value(&member.semantic, parameters, host);
            if let Some(value) = &value {
                write_member(&mut data, member, value);
            }
            let start = (member.offset as usize).min(len);
            let end = (start + 4 * member.ty.components as usize).min(len);
            invariant[start..end].fill(value.is_some());
        }
        for (word, bytes) in data.chunks_exact(4).enumerate() {
            if invariant[word * 4..word * 4 + 4].iter().all(|&k| k) {
                let bits = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
                let entry = known
                    .entry((buffer.buffer, (word / 4) as u32))
                    .or_insert([None; 4]);
                entry[word % 4] = Some(bits);
            }
        }
    }
    known
}

/// The value of every parameter: the shaders' defaults (a later pass's for a name several
/// declare), then the preset's values, then `overrides` (`--param`), each of which must name a
/// declared parameter.
pub(super) fn parameter_values(
    preset: &Preset,
    shaders: &BTreeMap<PathBuf, PassShader>,
    overrides: &[(String, f32)],
) -> Result<HashMap<String, f32>, ChainError> {
    let mut parameters: HashMap<String, f32> = HashMap::new();
    for pass in &preset.passes {
        for p in &shaders[&pass.shader].parameters {
            parameters.insert(p.id.clone(), p.initial);
        }
    }
    for p in &preset.parameters {
        if parameters.contains_key(&p.name) {
            parameters.insert(p.name.clone(), p.value);
        }
    }
    for (name, value) in overrides {
        if !parameters.contains_key(name) {
            let mut known: Vec<&String> = parameters.keys().collect();
            known.sort();
            return Err(ChainError::new(format!(
                "--param {name}: no pass of {} declares `#pragma parameter {name}`; known \
                 parameters: {}",
                preset.path.display(),
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            )));
        }
        parameters.insert(name.clone(), *value);
    }
    Ok(parameters)
}
