//! Building the [`Preset`] from its files: the root preset's passes, scale rules and LUTs, then
//! the parameters and LUT paths every preset of the reference tree overrides.

use std::collections::{HashMap, HashSet};

use super::lex::{
    parse_bool, parse_float, parse_int, strip_value, strtod_prefix, Entry, Reference,
};
use super::reference::{Loader, PresetFile};
use super::{
    FilterMode, ParameterValue, PassConfig, Preset, Result, Scale2D, ScaleFactor, ScaleType,
    Scaling, TextureConfig, WrapMode, MAX_ABSOLUTE_SCALE, MAX_PASSES, MAX_TEXTURES,
};

/// `key` is `prefix` followed by only decimal digits; returns the index.
fn indexed(key: &str, prefix: &str) -> Option<usize> {
    let digits = key.strip_prefix(prefix)?;
    if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

const PASS_KEY_PREFIXES: &[&str] = &[
    "shader",
    "filter_linear",
    "wrap_mode",
    "repeat_mode",
    "texture_wrap_mode",
    "frame_count_mod",
    "srgb_framebuffer",
    "float_framebuffer",
    "mipmap_input",
    "mipmap",
    "alias",
    "scale_type_x",
    "scale_type_y",
    "scale_type",
    "scale_x",
    "scale_y",
    "scale",
];

const LUT_SUFFIXES: &[&str] = &["_linear", "_mipmap", "_wrap_mode", "_repeat_mode"];

fn bool_key(file: &PresetFile, key: &str) -> Result<Option<bool>> {
    match file.get(key) {
        None => Ok(None),
        Some(e) => parse_bool(&e.value).map(Some).ok_or_else(|| {
            file.err(
                Some(e.line),
                format!("{key}: expected true, false, 1 or 0, found {:?}", e.value),
            )
        }),
    }
}

fn parse_scale_type(file: &PresetFile, e: &Entry) -> Result<ScaleType> {
    match strip_value(&e.value) {
        "source" => Ok(ScaleType::Source),
        "viewport" => Ok(ScaleType::Viewport),
        "absolute" => Ok(ScaleType::Absolute),
        "original" => Ok(ScaleType::Original),
        other => Err(file.err(
            Some(e.line),
            format!(
                "{}: unknown scale type {other:?} (expected source, viewport, absolute or \
                 original)",
                e.key
            ),
        )),
    }
}

fn parse_pass(
    loader: &Loader,
    root: usize,
    i: usize,
    n: usize,
    count_line: usize,
) -> Result<PassConfig> {
    let file = &loader.files[root];
    let shader_key = format!("shader{i}");
    let shader = match file.get(&shader_key) {
        None => {
            return Err(file.err(
                Some(count_line),
                format!(
                    "`shaders = {n}` declares passes 0 to {} but there is no `{shader_key}` line",
                    n - 1
                ),
            ))
        }
        Some(e) if strip_value(&e.value).is_empty() => {
            return Err(file.err(
                Some(e.line),
                format!("{shader_key}: expected a shader path, found an empty value"),
            ))
        }
        Some(e) => (loader.resolve(root, &e.value), e.line),
    };
    let (shader, shader_line) = shader;

    let filter = bool_key(file, &format!("filter_linear{i}"))?.map(|linear| {
        if linear {
            FilterMode::Linear
        } else {
            FilterMode::Nearest
        }
    });
    let wrap_mode = ["wrap_mode", "repeat_mode", "texture_wrap_mode"]
        .iter()
        .find_map(|p| file.get(&format!("{p}{i}")))
        .filter(|e| !e.value.is_empty())
        .map(|e| WrapMode::from_preset_str(&e.value))
        .unwrap_or_default();
    let frame_count_mod = match file.get(&format!("frame_count_mod{i}")) {
        Some(e) if !strip_value(&e.value).is_empty() => match parse_int(&e.value) {
            Some(n) if (0..=i64::from(u32::MAX)).contains(&n) => n as u32,
            _ => {
                return Err(file.err(
                    Some(e.line),
                    format!(
                        "{}: expected an unsigned integer, found {:?}",
                        e.key, e.value
                    ),
                ))
            }
        },
        _ => 0,
    };
    let srgb_framebuffer = bool_key(file, &format!("srgb_framebuffer{i}"))?.unwrap_or(false);
    let float_framebuffer = bool_key(file, &format!("float_framebuffer{i}"))?.unwrap_or(false);
    let mipmap_input = bool_key(file, &format!("mipmap_input{i}"))?.unwrap_or(false);
    let alias = file
        .get(&format!("alias{i}"))
        .map(|e| e.value.trim().to_string())
        .filter(|a| !a.is_empty());

    let scale = parse_scale(file, i)?;
    Ok(PassConfig {
        index: i,
        shader,
        shader_origin: (file.path.clone(), shader_line),
        alias,
        filter,
        wrap_mode,
        frame_count_mod,
        srgb_framebuffer,
        float_framebuffer,
        mipmap_input,
        scale,
    })
}

fn parse_scale(file: &PresetFile, i: usize) -> Result<Scale2D> {
    let ty = |k: &str| -> Result<Option<ScaleType>> {
        match file.get(&format!("{k}{i}")) {
            Some(e) if !strip_value(&e.value).is_empty() => parse_scale_type(file, e).map(Some),
            _ => Ok(None),
        }
    };
    let both = ty("scale_type")?;
    let (tx, ty_) = match both {
        Some(t) => (Some(t), Some(t)),
        None => (ty("scale_type_x")?, ty("scale_type_y")?),
    };
    if tx.is_none() && ty_.is_none() {
        return Ok(Scale2D::default());
    }
    let axis = |t: ScaleType, axis_key: &str| -> Result<Scaling> {
        let e = file
            .get(&format!("scale{i}"))
            .or_else(|| file.get(&format!("{axis_key}{i}")));
        let factor = if t == ScaleType::Absolute {
            let Some(e) = e else {
                return Err(file.err(
                    None,
                    format!(
                        "pass {i}: absolute scale needs `scale{i}` or `{axis_key}{i}` (pixels)"
                    ),
                ));
            };
            match parse_int(&e.value) {
                Some(n) if (0..=i64::from(MAX_ABSOLUTE_SCALE)).contains(&n) => {
                    ScaleFactor::Absolute(n as u32)
                }
                _ => {
                    return Err(file.err(
                        Some(e.line),
                        format!(
                            "{}: expected a pixel count 0..={MAX_ABSOLUTE_SCALE} for an absolute \
                             scale, found {:?}",
                            e.key, e.value
                        ),
                    ))
                }
            }
        } else {
            match e {
                None => ScaleFactor::Float(1.0),
                Some(e) => match parse_float(&e.value) {
                    Some(f) if f.is_finite() && f >= 0.0 => ScaleFactor::Float(f),
                    _ => {
                        return Err(file.err(
                            Some(e.line),
                            format!(
                                "{}: expected a non-negative number, found {:?}",
                                e.key, e.value
                            ),
                        ))
                    }
                },
            }
        };
        Ok(Scaling {
            scale_type: t,
            factor,
        })
    };
    Ok(Scale2D {
        valid: true,
        x: axis(tx.unwrap_or_default(), "scale_x")?,
        y: axis(ty_.unwrap_or_default(), "scale_y")?,
    })
}

fn parse_textures(loader: &Loader, root: usize) -> Result<Vec<TextureConfig>> {
    let file = &loader.files[root];
    let Some(list) = file.get("textures") else {
        return Ok(Vec::new());
    };
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for name in list
        .value
        .split(';')
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        if !seen.insert(name) {
            continue;
        }
        if out.len() >= MAX_TEXTURES {
            return Err(file.err(
                Some(list.line),
                format!("textures: more than {MAX_TEXTURES} lookup textures"),
            ));
        }
        let (path, line) = match file.get(name) {
            Some(e) if !e.value.trim().is_empty() => (loader.resolve(root, &e.value), e.line),
            Some(e) => {
                return Err(file.err(
                    Some(e.line),
                    format!("texture {name:?}: expected an image path, found an empty value"),
                ))
            }
            None => {
                return Err(file.err(
                    Some(list.line),
                    format!(
                        "texture {name:?} is listed in `textures` but there is no `{name} = \
                         path` line"
                    ),
                ))
            }
        };
        let filter = match bool_key(file, &format!("{name}_linear"))? {
            Some(false) => FilterMode::Nearest,
            _ => FilterMode::Linear,
        };
        let mipmap = bool_key(file, &format!("{name}_mipmap"))?.unwrap_or(false);
        let wrap_mode = ["_wrap_mode", "_repeat_mode"]
            .iter()
            .find_map(|s| file.get(&format!("{name}{s}")))
            .filter(|e| !e.value.is_empty())
            .map(|e| WrapMode::from_preset_str(&e.value))
            .unwrap_or_default();
        out.push(TextureConfig {
            name: name.to_string(),
            path,
            path_origin: (file.path.clone(), line),
            filter,
            wrap_mode,
            mipmap,
        });
    }
    Ok(out)
}

fn is_structural_key(key: &str, luts: &HashSet<&str>) -> bool {
    if matches!(key, "shaders" | "feedback_pass" | "textures" | "parameters") {
        return true;
    }
    if PASS_KEY_PREFIXES.iter().any(|p| indexed(key, p).is_some()) {
        return true;
    }
    if luts.contains(key) {
        return true;
    }
    LUT_SUFFIXES
        .iter()
        .any(|s| key.strip_suffix(s).is_some_and(|name| luts.contains(name)))
}

pub(super) fn build(loader: &mut Loader, top: usize) -> Result<Preset> {
    let root = loader.root_of(top)?;

    // RetroArch: additional references of the loaded preset may only carry overrides.
    let extra: Vec<Reference> = loader.files[top]
        .references
        .iter()
        .skip(1)
        .cloned()
        .collect();
    for r in &extra {
        let f = loader.load_reference(top, r)?;
        let sub_root = loader.root_of(f)?;
        if loader.files[sub_root].get("shaders").is_some() {
            return Err(loader.files[top].err(
                Some(r.line),
                format!(
                    "only the first #reference may lead to a preset with passes; {} (via {}) \
                     has `shaders`",
                    loader.files[sub_root].path.display(),
                    r.path
                ),
            ));
        }
    }

    let root_file = &loader.files[root];
    let Some(count) = root_file.get("shaders") else {
        let via = if root == top {
            String::new()
        } else {
            format!(
                " (root preset reached by #reference from {})",
                loader.files[top].path.display()
            )
        };
        return Err(root_file.err(
            None,
            format!("no `shaders = N` line: a preset must declare its pass count{via}"),
        ));
    };
    // A pass count is a whole number: `shaders = 1.5` is a mistake, not one pass.
    let count_text = strip_value(&count.value);
    let hex = count_text.starts_with("0x") || count_text.starts_with("0X");
    if !hex && count_text.contains(['.', 'e', 'E']) {
        return Err(root_file.err(
            Some(count.line),
            format!(
                "shaders: expected a whole pass count 1..={MAX_PASSES}, found {:?}",
                count.value
            ),
        ));
    }
    let n = match parse_int(&count.value) {
        Some(n) if (1..=MAX_PASSES as i64).contains(&n) => n as usize,
        Some(n) => {
            return Err(root_file.err(
                Some(count.line),
                format!("shaders: expected a pass count 1..={MAX_PASSES}, found {n}"),
            ))
        }
        None => {
            return Err(root_file.err(
                Some(count.line),
                format!("shaders: expected a pass count, found {:?}", count.value),
            ))
        }
    };
    let count_line = count.line;
    let passes = (0..n)
        .map(|i| parse_pass(loader, root, i, n, count_line))
        .collect::<Result<Vec<_>>>()?;
    let mut textures = parse_textures(loader, root)?;

    let mut order = Vec::new();
    loader.gather(top, &mut Vec::new(), &mut order)?;
    if !order.contains(&root) {
        order.insert(0, root);
    }

    let lut_names: Vec<String> = textures.iter().map(|t| t.name.clone()).collect();
    let lut_set: HashSet<&str> = lut_names.iter().map(String::as_str).collect();
    let mut declared: HashSet<String> = HashSet::new();
    for &f in &order {
        if let Some(e) = loader.files[f].get("parameters") {
            declared.extend(
                e.value
                    .split(';')
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(str::to_string),
            );
        }
    }

    let mut parameters: Vec<ParameterValue> = Vec::new();
    let mut param_index: HashMap<String, usize> = HashMap::new();
    for &f in &order {
        let file = &loader.files[f];
        for (k, &ei) in sorted_first(file) {
            let e = &file.entries[ei];
            if is_structural_key(k, &lut_set) {
                continue;
            }
            let value = match parse_float(&e.value) {
                Some(v) => v,
                None if declared.contains(k) => strtod_prefix(&e.value),
                None => continue,
            };
            match param_index.get(k) {
                Some(&pi) => parameters[pi].value = value,
                None => {
                    param_index.insert(k.to_string(), parameters.len());
                    parameters.push(ParameterValue {
                        name: k.to_string(),
                        value,
                    });
                }
            }
        }
        if f != root {
            for t in textures.iter_mut() {
                if let Some(e) = file.get(&t.name) {
                    if e.value.trim().is_empty() {
                        return Err(file.err(
                            Some(e.line),
                            format!(
                                "texture {:?}: expected an image path, found an empty value",
                                t.name
                            ),
                        ));
                    }
                    t.path = loader.resolve(f, &e.value);
                    t.path_origin = (file.path.clone(), e.line);
                }
            }
        }
    }

    Ok(Preset {
        path: loader.files[top].path.clone(),
        root: loader.files[root].path.clone(),
        passes,
        textures,
        parameters,
    })
}

/// The first entry of each key, in file order.
fn sorted_first(file: &PresetFile) -> Vec<(&str, &usize)> {
    let mut v: Vec<(&str, &usize)> = file.first.iter().map(|(k, i)| (k.as_str(), i)).collect();
    v.sort_by_key(|&(_, &i)| i);
    v
}
