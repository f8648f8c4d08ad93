//! RetroArch's `$NAME$` path wildcards: the tokens in the order RetroArch replaces them, and
//! the values an unrotated core on the Vulkan driver gets.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// RetroArch's wildcard tokens in the order it replaces them.
const WILDCARD_ORDER: &[&str] = &[
    "CONTENT-DIR",
    "CORE",
    "GAME",
    "VID-DRV",
    "VID-DRV-PRESET-EXT",
    "VID-DRV-SHADER-EXT",
    "CORE-REQ-ROT",
    "VID-ALLOW-CORE-ROT",
    "VID-USER-ROT",
    "VID-FINAL-ROT",
    "SCREEN-ORIENT",
    "VIEW-ASPECT-ORIENT",
    "CORE-ASPECT-ORIENT",
    "PRESET-DIR",
    "PRESET_DIR",
    "PRESET",
];

/// Keys whose RetroArch replacement text repeats the key as a prefix (`CORE-REQ-ROT-90`).
const PREFIXED_KEYS: &[&str] = &[
    "CORE-REQ-ROT",
    "VID-ALLOW-CORE-ROT",
    "VID-USER-ROT",
    "VID-FINAL-ROT",
    "SCREEN-ORIENT",
    "VIEW-ASPECT-ORIENT",
    "CORE-ASPECT-ORIENT",
];

/// Values for `$NAME$` path wildcards.
///
/// [`WildcardContext::new`] starts from what RetroArch substitutes for an unrotated core on the
/// Vulkan driver: `VID-DRV` = `vulkan`, rotations 0, rotation allowed, horizontal aspect. The
/// shader/preset extensions default from the loaded preset's extension (`.cgp` → `cg`/`cgp`,
/// `.glslp` → `glsl`/`glslp`, else `slang`/`slangp`); `PRESET`/`PRESET-DIR` default to the stem
/// and directory name of the preset file naming the path; `VID-FINAL-ROT` defaults to user +
/// (allowed) core rotation. `CORE`, `GAME` and `CONTENT-DIR` have no default (left unreplaced).
#[derive(Debug, Clone, PartialEq)]
pub struct WildcardContext {
    values: HashMap<String, String>,
    /// Derive the shader/preset extensions from the loaded preset (`new`, not `empty`).
    driver_defaults: bool,
}

impl Default for WildcardContext {
    fn default() -> Self {
        Self::new()
    }
}

impl WildcardContext {
    /// A context with RetroArch's defaults for an unrotated core on Vulkan.
    pub fn new() -> Self {
        let mut values = HashMap::new();
        for (k, v) in [
            ("VID-DRV", "vulkan"),
            ("CORE-REQ-ROT", "CORE-REQ-ROT-0"),
            ("VID-ALLOW-CORE-ROT", "VID-ALLOW-CORE-ROT-ON"),
            ("VID-USER-ROT", "VID-USER-ROT-0"),
            ("SCREEN-ORIENT", "SCREEN-ORIENT-0"),
            ("VIEW-ASPECT-ORIENT", "VIEW-ASPECT-ORIENT-HORZ"),
            ("CORE-ASPECT-ORIENT", "CORE-ASPECT-ORIENT-HORZ"),
        ] {
            values.insert(k.to_string(), v.to_string());
        }
        WildcardContext {
            values,
            driver_defaults: true,
        }
    }

    /// A context with no values (like librashader's path-defaults-only context): only
    /// `PRESET`/`PRESET-DIR` are derived, and `VID-FINAL-ROT` once a rotation is set.
    pub fn empty() -> Self {
        WildcardContext {
            values: HashMap::new(),
            driver_defaults: false,
        }
    }

    /// Sets `$key$`'s replacement. For the rotation/orientation keys a bare value is prefixed the
    /// way RetroArch writes it (`set("CORE-REQ-ROT", "90")` → `CORE-REQ-ROT-90`). Any other key is
    /// replaced verbatim too (librashader's external context items).
    pub fn set(&mut self, key: &str, value: &str) {
        let key = key.trim_matches('$');
        let value = if PREFIXED_KEYS.contains(&key) && !value.starts_with(key) {
            format!("{key}-{value}")
        } else {
            value.to_string()
        };
        self.values.insert(key.to_string(), value);
    }

    /// The value set for `key` (defaults included, per-file derived ones not).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    fn rotation(&self, key: &str) -> u32 {
        self.get(key)
            .and_then(|v| v.rsplit('-').next())
            .and_then(|d| d.parse::<u32>().ok())
            .unwrap_or(0)
    }

    /// The replacement for `key` when the path was named by `preset_file` and the loaded preset is
    /// `top`.
    fn value_for(&self, key: &str, preset_file: &Path, top: &Path) -> Option<String> {
        if let Some(v) = self.values.get(key) {
            return Some(v.clone());
        }
        let ext = top
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match key {
            "PRESET" => preset_file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned()),
            "PRESET-DIR" | "PRESET_DIR" => self
                .values
                .get("PRESET-DIR")
                .or_else(|| self.values.get("PRESET_DIR"))
                .cloned()
                .or_else(|| {
                    preset_file
                        .parent()
                        .and_then(Path::file_name)
                        .map(|s| s.to_string_lossy().into_owned())
                }),
            "VID-DRV-SHADER-EXT" if self.driver_defaults => Some(
                match ext.as_deref() {
                    Some("cgp") => "cg",
                    Some("glslp") => "glsl",
                    _ => "slang",
                }
                .to_string(),
            ),
            "VID-DRV-PRESET-EXT" if self.driver_defaults => Some(
                match ext.as_deref() {
                    Some("cgp") => "cgp",
                    Some("glslp") => "glslp",
                    _ => "slangp",
                }
                .to_string(),
            ),
            "VID-FINAL-ROT"
                if self.values.contains_key("VID-USER-ROT")
                    || self.values.contains_key("CORE-REQ-ROT") =>
            {
                let allow = self
                    .get("VID-ALLOW-CORE-ROT")
                    .is_none_or(|v| v.ends_with("ON"));
                let core = if allow {
                    self.rotation("CORE-REQ-ROT")
                } else {
                    0
                };
                let total = (self.rotation("VID-USER-ROT") + core) % 360;
                Some(format!("VID-FINAL-ROT-{total}"))
            }
            _ => None,
        }
    }

    /// RetroArch's `video_shader_replace_wildcards`: replace the first occurrence of each token;
    /// keep the result only if a file exists there.
    pub(super) fn apply(&self, path: PathBuf, preset_file: &Path, top: &Path) -> PathBuf {
        let Some(s) = path.to_str() else {
            return path;
        };
        if !s.contains('$') {
            return path;
        }
        let mut cur = s.to_string();
        let mut replaced = false;
        let mut extra: Vec<&str> = self
            .values
            .keys()
            .map(String::as_str)
            .filter(|k| !WILDCARD_ORDER.contains(k))
            .collect();
        extra.sort_unstable();
        for key in WILDCARD_ORDER.iter().copied().chain(extra) {
            if !cur.contains('$') {
                break;
            }
            let token = format!("${key}$");
            let Some(pos) = cur.find(&token) else {
                continue;
            };
            match self.value_for(key, preset_file, top) {
                Some(v) if !v.is_empty() => {
                    cur.replace_range(pos..pos + token.len(), &v);
                    replaced = true;
                }
                _ => {}
            }
        }
        if replaced && Path::new(&cur).exists() {
            PathBuf::from(cur)
        } else {
            path
        }
    }
}
