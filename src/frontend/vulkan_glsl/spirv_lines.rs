//! Source lines for errors naga reports on glslang's SPIR-V.
//!
//! naga's SPIR-V reader gives every expression the byte range of the SPIR-V instruction it came
//! from, so a validation error's span names an instruction. glslang would tag instructions with
//! `OpLine` only when asked for debug info, which the `glslang` crate's C API wrapper does not
//! expose; so the instruction is mapped back through what SPIR-V keeps: the enclosing
//! function's `OpName` (GLSL's `name(` signature) and the `OpName`s of the variables the
//! instruction reads or writes. The source line is the first line of that function's body in the
//! preprocessed stage text that mentions one of those variables (or the function's definition
//! line when none does); the stage's line map then gives the original file and line. Errors
//! about an entry point's interface name no instruction; they land on the first use of the
//! builtin they name in the entry function.

use std::collections::HashMap;

use super::preprocess::StageSource;

/// Where in the SPIR-V an error was detected.
#[derive(Clone, Debug, Default)]
pub struct ErrorSite {
    /// The SPIR-V naga read.
    pub words: Vec<u32>,
    /// A byte offset into `words` (from a naga span).
    pub byte: Option<usize>,
    /// An id the error names (spv-in errors print `%N`).
    pub id: Option<u32>,
    /// With neither: the function the error is about (an entry point's interface), and GLSL
    /// names whose use in it marks the line.
    pub function: Option<String>,
    /// See `function`.
    pub names: Vec<String>,
}

/// GLSL names of the builtins naga's messages mention by their naga names, for errors about an
/// entry point's interface.
pub fn builtin_names(message: &str) -> Vec<String> {
    const BUILTINS: [(&str, &[&str]); 13] = [
        ("SampleMask", &["gl_SampleMaskIn", "gl_SampleMask"]),
        ("SampleIndex", &["gl_SampleID"]),
        ("FragDepth", &["gl_FragDepth"]),
        ("Position", &["gl_FragCoord", "gl_Position"]),
        ("FrontFacing", &["gl_FrontFacing"]),
        ("PointSize", &["gl_PointSize"]),
        ("PointCoord", &["gl_PointCoord"]),
        ("VertexIndex", &["gl_VertexIndex"]),
        ("InstanceIndex", &["gl_InstanceIndex"]),
        ("PrimitiveIndex", &["gl_PrimitiveID"]),
        ("ClipDistance", &["gl_ClipDistance"]),
        ("CullDistance", &["gl_CullDistance"]),
        ("ViewIndex", &["gl_ViewIndex"]),
    ];
    BUILTINS
        .iter()
        .filter(|(naga, _)| message.contains(&format!("for {naga} ")))
        .flat_map(|(_, glsl)| glsl.iter().map(|g| g.to_string()))
        .collect()
}

/// What an error site maps to in the preprocessed stage source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// The GLSL function (without its parameter signature).
    pub function: String,
    /// 1-based line in the preprocessed stage text.
    pub line: u32,
    /// The variable whose use gave the line, if one did.
    pub variable: Option<String>,
}

const OP_NAME: u32 = 5;
const OP_FUNCTION: u32 = 54;
const OP_FUNCTION_END: u32 = 56;

struct Inst {
    /// Where naga's spans put the instruction: its byte offset minus the words naga's reader
    /// consumes without counting them (entry-point interface ids, execution-mode operands,
    /// function-type parameters, all earlier in the module).
    naga_byte: usize,
    opcode: u32,
    operands: Vec<u32>,
}

const OP_ENTRY_POINT: u32 = 15;
const OP_STORE: u32 = 62;
const OP_ACCESS_CHAIN: u32 = 65;
const OP_IN_BOUNDS_ACCESS_CHAIN: u32 = 66;
const OP_EXECUTION_MODE: u32 = 16;
const OP_TYPE_FUNCTION: u32 = 33;

fn instructions(words: &[u32]) -> Vec<Inst> {
    let mut out = Vec::new();
    let mut i = 5;
    let mut uncounted = 0;
    while i < words.len() {
        let count = (words[i] >> 16) as usize;
        if count == 0 || i + count > words.len() {
            break;
        }
        let opcode = words[i] & 0xFFFF;
        let operands = words[i + 1..i + count].to_vec();
        out.push(Inst {
            naga_byte: 4 * (i - uncounted),
            opcode,
            operands,
        });
        uncounted += match opcode {
            OP_ENTRY_POINT => {
                // Execution model, function id, the name string, then the interface ids.
                let name_words = words[i + 3..i + count]
                    .iter()
                    .position(|w| w.to_le_bytes().contains(&0))
                    .map_or(count - 3, |p| p + 1);
                count.saturating_sub(3 + name_words)
            }
            OP_EXECUTION_MODE | OP_TYPE_FUNCTION => count.saturating_sub(3),
            _ => 0,
        };
        i += count;
    }
    out
}

fn string(words: &[u32]) -> String {
    let bytes: Vec<u8> = words
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .take_while(|&b| b != 0)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Finds the function and source line of `site` (its instruction's, else its `function`'s);
/// `None` when neither leads to a function found in `source`.
pub fn locate(site: &ErrorSite, source: &StageSource) -> Option<Located> {
    locate_instruction(site, source).or_else(|| locate_in_function(site, source))
}

/// The line of the first use of one of `site.names` in `site.function`'s body (or the
/// function's definition line).
fn locate_in_function(site: &ErrorSite, source: &StageSource) -> Option<Located> {
    let function = site.function.clone()?;
    let (def_line, body) = function_body(&source.text, &function)?;
    let found = body.iter().enumerate().find_map(|(offset, line)| {
        let name = site.names.iter().find(|n| mentions(line, n))?;
        Some((offset, name.clone()))
    });
    Some(match found {
        Some((offset, name)) => Located {
            function,
            line: def_line + offset as u32,
            variable: Some(name),
        },
        None => Located {
            function,
            line: def_line,
            variable: None,
        },
    })
}

fn locate_instruction(site: &ErrorSite, source: &StageSource) -> Option<Located> {
    let insts = instructions(&site.words);
    let names: HashMap<u32, String> = insts
        .iter()
        .filter(|i| i.opcode == OP_NAME && !i.operands.is_empty())
        .map(|i| (i.operands[0], string(&i.operands[1..])))
        .collect();
    let index = match (site.byte, site.id) {
        (Some(byte), _) => insts.iter().rposition(|i| i.naga_byte <= byte)?,
        (None, Some(id)) => {
            let mut in_function = false;
            insts.iter().position(|i| {
                if i.opcode == OP_FUNCTION {
                    in_function = true;
                }
                in_function && i.operands.contains(&id)
            })?
        }
        (None, None) => return None,
    };
    let function_start = insts[..=index]
        .iter()
        .rposition(|i| i.opcode == OP_FUNCTION)?;
    if insts[function_start..index]
        .iter()
        .any(|i| i.opcode == OP_FUNCTION_END)
    {
        return None;
    }
    let function_id = *insts[function_start].operands.get(1)?;
    let signature = names.get(&function_id)?;
    let function = signature.split('(').next().unwrap_or(signature).to_string();

    // Names the instruction touches: its operands, directly or through the access chains and
    // loads that produced them, and the variable its result is stored to.
    let function_end = insts[index..]
        .iter()
        .position(|i| i.opcode == OP_FUNCTION_END)
        .map_or(insts.len(), |p| index + p);
    let body_insts = &insts[function_start..function_end];
    let defs: HashMap<u32, &Inst> = body_insts
        .iter()
        .filter_map(|i| Some((result_id(i)?, i)))
        .collect();
    let name_of = |id: u32| {
        // Through access chains (`base` is the first id after the result) to a named variable.
        let mut id = id;
        for _ in 0..8 {
            if let Some(n) = names.get(&id) {
                return Some(n.clone());
            }
            let d = defs.get(&id)?;
            if !matches!(d.opcode, OP_ACCESS_CHAIN | OP_IN_BOUNDS_ACCESS_CHAIN) {
                return None;
            }
            id = *d.operands.get(2)?;
        }
        None
    };
    let mut candidates: Vec<String> = Vec::new();
    let mut frontier: Vec<u32> = insts[index].operands.clone();
    for _ in 0..4 {
        let mut next = Vec::new();
        for id in frontier {
            if let Some(n) = names.get(&id) {
                if !candidates.contains(n) && !n.contains('(') {
                    candidates.push(n.clone());
                }
            }
            if let Some(d) = defs.get(&id) {
                next.extend(d.operands.iter().skip(2).copied());
            }
        }
        frontier = next;
    }
    if let Some(result) = result_id(&insts[index]) {
        let stored_to = insts[index..function_end]
            .iter()
            .find(|i| i.opcode == OP_STORE && i.operands.get(1) == Some(&result))
            .and_then(|store| name_of(*store.operands.first()?));
        if let Some(n) = stored_to.filter(|n| !candidates.contains(n)) {
            candidates.push(n);
        }
    }

    // The body line mentioning most of them (the first of equals).
    let (def_line, body) = function_body(&source.text, &function)?;
    let mut best: Option<(usize, usize)> = None;
    for (offset, line) in body.iter().enumerate() {
        let count = candidates.iter().filter(|n| mentions(line, n)).count();
        if count > 0 && best.is_none_or(|(c, _)| count > c) {
            best = Some((count, offset));
        }
    }
    match best {
        Some((_, offset)) => {
            let variable = candidates
                .iter()
                .find(|n| mentions(body[offset], n))
                .cloned();
            Some(Located {
                function,
                line: def_line + offset as u32,
                variable,
            })
        }
        None => Some(Located {
            function,
            line: def_line,
            variable: None,
        }),
    }
}

/// The result id of an instruction that has one (per the SPIR-V grammar).
fn result_id(inst: &Inst) -> Option<u32> {
    use rspirv::grammar::{OperandKind, INSTRUCTION_TABLE};
    let grammar = INSTRUCTION_TABLE.lookup_opcode(inst.opcode)?;
    let at = grammar
        .operands
        .iter()
        .position(|o| o.kind == OperandKind::IdResult)?;
    inst.operands.get(at).copied()
}

/// Whether `line` contains `name` as a whole identifier.
fn mentions(line: &str, name: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    line.match_indices(name).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + name.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// The 1-based line of `function`'s definition and the lines from there to its closing brace.
fn function_body<'a>(text: &'a str, function: &str) -> Option<(u32, Vec<&'a str>)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut depth = 0i32;
    for (i, line) in lines.iter().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        // The return type may stand on the line before (`vec3\nshade(vec2 p)`).
        let type_before = i > 0
            && lines[i - 1]
                .split("//")
                .next()
                .unwrap_or("")
                .trim_end()
                .ends_with(|c: char| c.is_alphanumeric() || c == '_');
        if depth == 0 && is_definition(code, function, type_before) {
            // A prototype ends with `;` before any `{`.
            let rest: String = lines[i..].iter().take(8).copied().collect();
            let brace = rest.find('{');
            let semi = rest.find(';');
            if matches!((brace, semi), (Some(b), Some(s)) if s < b) || brace.is_none() {
                depth += brace_delta(code);
                continue;
            }
            let mut d = 0i32;
            let mut end = i;
            let mut opened = false;
            for (j, l) in lines.iter().enumerate().skip(i) {
                let c = l.split("//").next().unwrap_or("");
                d += brace_delta(c);
                opened |= c.contains('{');
                end = j;
                if opened && d <= 0 {
                    break;
                }
            }
            return Some((i as u32 + 1, lines[i..=end].to_vec()));
        }
        depth += brace_delta(code);
    }
    None
}

/// Whether `code` declares `function`: its name, then `(`, after a return type (on this line,
/// or on the line before when `type_before`).
fn is_definition(code: &str, function: &str, type_before: bool) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    code.match_indices(function).any(|(at, _)| {
        let before = code[..at].trim_end().chars().next_back();
        let rest = code[at + function.len()..].trim_start();
        let typed = match before {
            Some(c) => ident(c),
            None => type_before,
        };
        !code[..at].chars().next_back().is_some_and(ident) && rest.starts_with('(') && typed
    })
}

fn brace_delta(code: &str) -> i32 {
    code.chars()
        .map(|c| match c {
            '{' => 1,
            '}' => -1,
            _ => 0,
        })
        .sum()
}
