//! The memory budget of a render, a draw or a suite case: what the large buffers it would
//! allocate (render targets and their mip chains, history, feedback, lookup textures, decoded
//! copies, framebuffers, vertex data) add up to, checked against a limit before any of them is
//! allocated, so that a preset or draw whose every size is legal alone but whose sum is not is
//! refused with a message instead of running the machine out of memory.
//!
//! The budget is `--memory-budget SIZE`, else the environment variable
//! [`MEMORY_BUDGET_ENV`], else [`default_budget`]: half of the memory this process can use (the
//! physical memory, a cgroup's limit and the address-space limit, whichever is least), or
//! [`FALLBACK_BUDGET`] where none of them can be read.

/// The environment variable that sets the pixel budget of a chain's frame when no
/// `--pixel-budget` is given.
pub const PIXEL_BUDGET_ENV: &str = "SOFTGPU_PIXEL_BUDGET";

/// The most pixels the passes of one frame of a chain may shade together (the sum of their
/// target sizes) by default: 2^29, two 16384x16384 targets, or a 3840x2160 viewport through 64
/// passes. It bounds the work of presets whose scales blow every target up to the largest
/// size, which would otherwise run for many minutes per frame.
pub const DEFAULT_PIXEL_BUDGET: u64 = 1 << 29;

/// The environment variable that sets the memory budget when no `--memory-budget` is given.
pub const MEMORY_BUDGET_ENV: &str = "SOFTGPU_MEMORY_BUDGET";

/// The budget when the machine's memory cannot be read: 4 GiB.
pub const FALLBACK_BUDGET: u64 = 4 << 30;

/// The smallest budget accepted (1 MiB): a smaller one is almost certainly a missing unit.
pub const MIN_BUDGET: u64 = 1 << 20;

/// Parses a size: a number of bytes, or a number with a binary unit `K`, `M`, `G` or `T`
/// (optionally followed by `iB` or `B`, any case): `512M`, `4G`, `1.5GiB`, `1073741824`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let lower = trimmed.to_ascii_lowercase();
    let number_end = lower
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(lower.len());
    let (number, unit) = lower.split_at(number_end);
    let shift = match unit.trim() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => {
            return Err(format!(
                "expected a size such as 4G, 512M or 1073741824, found `{text}`"
            ))
        }
    };
    let value: f64 = number
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| format!("expected a size such as 4G, 512M or 1073741824, found `{text}`"))?;
    let bytes = value * (1u64 << shift) as f64;
    if bytes < MIN_BUDGET as f64 {
        return Err(format!(
            "`{text}` is less than the smallest budget, {}",
            format_bytes(MIN_BUDGET)
        ));
    }
    Ok(if bytes >= u64::MAX as f64 {
        u64::MAX
    } else {
        bytes as u64
    })
}

/// `bytes` for people: `1.5 GiB`, `640.0 MiB`, `12 bytes`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [(&str, u32); 4] = [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)];
    for (name, shift) in UNITS {
        if bytes >= 1 << shift {
            return format!("{:.1} {name}", bytes as f64 / (1u64 << shift) as f64);
        }
    }
    format!("{bytes} bytes")
}

/// A `Key: N kB` line of `/proc/meminfo`, in bytes.
fn meminfo_bytes(meminfo: &str, key: &str) -> Option<u64> {
    meminfo.lines().find_map(|line| {
        let rest = line.strip_prefix(key)?.strip_prefix(':')?;
        let kib: u64 = rest.trim().strip_suffix("kB")?.trim().parse().ok()?;
        kib.checked_mul(1024)
    })
}

/// The soft `Max address space` of `/proc/self/limits`, in bytes (`None` when unlimited).
fn address_space_limit(limits: &str) -> Option<u64> {
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// Reads a small system file whole (`/proc` files report a size of 0 and are read to their
/// end, bounded all the same); `None` when it cannot be read.
fn read_system_file(path: &str) -> Option<String> {
    crate::input::read_text(std::path::Path::new(path), "system file", 1 << 20).ok()
}

/// Half of the memory this process can use: the least of the physical memory
/// (`/proc/meminfo`), the cgroup v2 limit (`/sys/fs/cgroup/memory.max`) and the address-space
/// limit (`ulimit -v`); [`FALLBACK_BUDGET`] when none can be read.
pub fn default_budget() -> u64 {
    let physical = read_system_file("/proc/meminfo").and_then(|m| meminfo_bytes(&m, "MemTotal"));
    let cgroup =
        read_system_file("/sys/fs/cgroup/memory.max").and_then(|t| t.trim().parse::<u64>().ok());
    let address_space = read_system_file("/proc/self/limits").and_then(|l| address_space_limit(&l));
    [physical, cgroup, address_space]
        .into_iter()
        .flatten()
        .min()
        .map(|bytes| (bytes / 2).max(MIN_BUDGET))
        .unwrap_or(FALLBACK_BUDGET)
}

/// The budget in force: `flag` (the value of `--memory-budget`) if given, else
/// [`MEMORY_BUDGET_ENV`] if set, else [`default_budget`]. Errors name the flag or variable.
pub fn resolve(flag: Option<&str>) -> Result<u64, String> {
    if let Some(text) = flag {
        return parse_size(text).map_err(|e| format!("--memory-budget: {e}"));
    }
    match std::env::var(MEMORY_BUDGET_ENV) {
        Ok(text) if !text.trim().is_empty() => {
            parse_size(&text).map_err(|e| format!("{MEMORY_BUDGET_ENV}: {e}"))
        }
        _ => Ok(default_budget()),
    }
}

/// The pixel budget in force: `flag` (the value of `--pixel-budget`: a count, optionally with a
/// binary unit `K`, `M` or `G`) if given, else [`PIXEL_BUDGET_ENV`] if set, else
/// [`DEFAULT_PIXEL_BUDGET`]. Errors name the flag or variable.
pub fn resolve_pixels(flag: Option<&str>) -> Result<u64, String> {
    let parse = |text: &str| {
        parse_size(text.trim().trim_end_matches(['b', 'B'])).map_err(|_| {
            format!(
                "expected a pixel count such as 512M or 1073741824 (at least 1M), found `{text}`"
            )
        })
    };
    if let Some(text) = flag {
        return parse(text).map_err(|e| format!("--pixel-budget: {e}"));
    }
    match std::env::var(PIXEL_BUDGET_ENV) {
        Ok(text) if !text.trim().is_empty() => {
            parse(&text).map_err(|e| format!("{PIXEL_BUDGET_ENV}: {e}"))
        }
        _ => Ok(DEFAULT_PIXEL_BUDGET),
    }
}

/// The large buffers some work would allocate, each named, to be checked against a budget
/// before any of them is.
#[derive(Clone, Debug, Default)]
pub struct MemoryUse {
    items: Vec<(String, u64)>,
}

impl MemoryUse {
    /// No buffers yet.
    pub fn new() -> MemoryUse {
        MemoryUse::default()
    }

    /// Counts a buffer of `bytes`, described by `name` (`pass 3 (x.slang): target 640x480 …`).
    pub fn add(&mut self, name: impl Into<String>, bytes: u64) {
        if bytes > 0 {
            self.items.push((name.into(), bytes));
        }
    }

    /// All the bytes counted.
    pub fn total(&self) -> u64 {
        self.items
            .iter()
            .fold(0u64, |sum, (_, bytes)| sum.saturating_add(*bytes))
    }

    /// Ok when the total fits in `budget`; otherwise an error saying that `what` needs more,
    /// naming the largest buffers and how to raise the budget.
    pub fn check(&self, budget: u64, what: &str) -> Result<(), String> {
        let total = self.total();
        if total <= budget {
            return Ok(());
        }
        let mut largest: Vec<&(String, u64)> = self.items.iter().collect();
        largest.sort_by_key(|item| std::cmp::Reverse(item.1));
        let named: Vec<String> = largest
            .iter()
            .take(3)
            .map(|(name, bytes)| format!("{name}: {}", format_bytes(*bytes)))
            .collect();
        Err(format!(
            "{what} needs about {} of memory, more than the memory budget of {}; the largest \
             parts: {}{}; raise the budget with --memory-budget SIZE or {MEMORY_BUDGET_ENV} \
             (see docs/limits.md)",
            format_bytes(total),
            format_bytes(budget),
            named.join("; "),
            if largest.len() > 3 {
                format!(" (and {} more)", largest.len() - 3)
            } else {
                String::new()
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("512m"), Ok(512 << 20));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size(" 2 TB "), Ok(2 << 40));
        assert_eq!(parse_size("1073741824"), Ok(1 << 30));
        for bad in ["", "G", "-1G", "4X", "1e9", "nan", "4G4"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        assert!(parse_size("12K").unwrap_err().contains("smallest budget"));
    }

    #[test]
    fn machine_files_are_read() {
        let meminfo = "MemTotal:       16318480 kB\nMemFree:  1 kB\n";
        assert_eq!(meminfo_bytes(meminfo, "MemTotal"), Some(16318480 * 1024));
        assert_eq!(meminfo_bytes(meminfo, "MemAvailable"), None);
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max address space         8192000000           unlimited            bytes\n";
        assert_eq!(address_space_limit(limits), Some(8_192_000_000));
        let unlimited =
            "Max address space         unlimited            unlimited            bytes\n";
        assert_eq!(address_space_limit(unlimited), None);
        assert!(default_budget() >= MIN_BUDGET);
    }

    #[test]
    fn an_over_budget_error_names_the_largest_parts() {
        let mut usage = MemoryUse::new();
        usage.add("pass 0: target", 3 << 30);
        usage.add("pass 1: target", 1 << 30);
        usage.add("LUT `mask`", 1 << 20);
        usage.add("empty", 0);
        assert_eq!(usage.total(), (4 << 30) + (1 << 20));
        assert!(usage.check(5 << 30, "the preset").is_ok());
        let e = usage.check(2 << 30, "the preset").unwrap_err();
        assert!(e.starts_with("the preset needs about 4.0 GiB"), "{e}");
        assert!(e.contains("budget of 2.0 GiB"), "{e}");
        assert!(e.contains("pass 0: target: 3.0 GiB; pass 1"), "{e}");
        assert!(e.contains("--memory-budget"), "{e}");
    }
}
