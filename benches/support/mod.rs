//! Helpers shared by the benches.

use std::path::Path;

/// Mean time per iteration criterion measured for `group/name` in this run, in seconds.
pub fn criterion_mean_seconds(group: &str, name: &str) -> Option<f64> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/criterion")
        .join(group)
        .join(name)
        .join("new/estimates.json");
    let json = std::fs::read_to_string(path).ok()?;
    let mean = json.split("\"mean\"").nth(1)?;
    let value = mean.split("\"point_estimate\":").nth(1)?;
    let number: String = value
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+'))
        .collect();
    number.parse::<f64>().ok().map(|ns| ns / 1e9)
}
