//! The vertex and constant data-file formats of `softgpu draw` and the golden suites' draw cases.
//!
//! - vertices: one vertex per line, whitespace-separated floats taken four at a time into
//!   `IN[0]`, `IN[1]`, …; a last group shorter than four is completed from (0, 0, 0, 1). Every
//!   three vertices make a triangle. Blank lines and `#` comments are ignored.
//! - constants: one `x y z w` line per `CONST[0][i]` (or per 16 bytes of the push-constant
//!   block, for `--push-consts`). Values are floats, or raw bits written as `0x…` hexadecimal.

use super::{VertexData, MAX_CONSTANTS, MAX_VERTICES};
use anyhow::{anyhow, bail, Result};
use std::path::Path;

fn parse_number_bits(token: &str) -> Option<u32> {
    if let Some(hex) = token
        .strip_prefix("0x")
        .or_else(|| token.strip_prefix("0X"))
    {
        return u32::from_str_radix(hex, 16).ok();
    }
    token.parse::<f32>().ok().map(f32::to_bits)
}

/// Lines of a text file that carry data: (1-based line number, tokens), comments removed.
fn data_lines(source: &str) -> impl Iterator<Item = (usize, Vec<&str>)> {
    source.lines().enumerate().filter_map(|(i, line)| {
        let line = line.split('#').next().unwrap_or("");
        let tokens: Vec<&str> = line.split_whitespace().collect();
        (!tokens.is_empty()).then_some((i + 1, tokens))
    })
}

fn parse_bits(path: &Path, line: usize, token: &str) -> Result<u32> {
    parse_number_bits(token).ok_or_else(|| {
        anyhow!(
            "{}:{line}: expected a number (float or 0x hex bits), found `{token}`",
            path.display()
        )
    })
}

/// Parses a vertex file (see the module docs).
pub fn parse_vertices(path: &Path, source: &str) -> Result<VertexData> {
    let mut registers = Vec::new();
    let mut count = 0usize;
    let mut width = None;
    for (line, tokens) in data_lines(source) {
        if count >= MAX_VERTICES {
            bail!(
                "{}:{line}: more than {MAX_VERTICES} vertices",
                path.display()
            );
        }
        if *width.get_or_insert(tokens.len()) != tokens.len() {
            bail!(
                "{}:{line}: expected {} values like the first vertex, found {}",
                path.display(),
                width.unwrap_or(0),
                tokens.len()
            );
        }
        for chunk in tokens.chunks(4) {
            let mut reg = [0, 0, 0, 1.0f32.to_bits()];
            for (slot, token) in reg.iter_mut().zip(chunk) {
                *slot = parse_bits(path, line, token)?;
            }
            registers.push(reg);
        }
        count += 1;
    }
    if count == 0 {
        bail!(
            "{}: expected at least one triangle (3 vertex lines), found none",
            path.display()
        );
    }
    if !count.is_multiple_of(3) {
        bail!(
            "{}: expected a multiple of 3 vertices (every 3 lines are one triangle), found {count}",
            path.display()
        );
    }
    Ok(VertexData {
        attributes: registers.len() / count,
        registers,
    })
}

/// Parses a constant file (see the module docs).
pub fn parse_constants(path: &Path, source: &str) -> Result<Vec<[u32; 4]>> {
    let mut constants = Vec::new();
    for (line, tokens) in data_lines(source) {
        if constants.len() >= MAX_CONSTANTS {
            bail!(
                "{}:{line}: more than {MAX_CONSTANTS} constants",
                path.display()
            );
        }
        if tokens.len() != 4 {
            bail!(
                "{}:{line}: expected 4 values `x y z w`, found {}",
                path.display(),
                tokens.len()
            );
        }
        let mut reg = [0u32; 4];
        for (slot, token) in reg.iter_mut().zip(&tokens) {
            *slot = parse_bits(path, line, token)?;
        }
        constants.push(reg);
    }
    Ok(constants)
}
