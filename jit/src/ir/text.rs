//! Mesa's TGSI text format: a parser for what `tgsi_dump.c` prints (and most of what
//! `tgsi_text.c` accepts) and a printer producing `tgsi_dump.c`'s exact layout.
//!
//! Round trip: for a dump printed by Mesa 22.3, `print_program(&parse_program(t)?) == t`, byte
//! for byte (the printer always ends with a newline). For a program the parser can produce,
//! `parse_program(&print_program(p)) == Ok(p)`.
//!
//! Differences from Mesa, all on inputs Mesa's own dumper never produces:
//! - `FLT32` immediates: Mesa prints `%10.4f`, which loses bits. This printer uses `%10.4f` only
//!   when that text parses back to the same bits; otherwise it prints the shortest decimal that
//!   does (still right-aligned to 10 columns), and NaN/infinity as `0x%08x` raw bits, the
//!   spelling of Mesa's `TGSI_DUMP_FLOAT_AS_HEX` mode. The parser reads all three spellings.
//!   `FLT64` is handled the same way with `%10.8f` and `0x%016x`.
//! - The parser is line oriented (one item per line, as Mesa prints) and accepts swizzles of
//!   1 to 4 letters (the last letter repeats), any-case keywords, `DCL`/`IMM` lines after
//!   instructions (they join the header), and an instruction's `:label` on any opcode.
//! - Operand counts follow the opcode table ([`Opcode::num_dst`], [`Opcode::num_src`]), as in
//!   tgsi_text; texture instructions then take `, TARGET` and optional `, REG.xyz` offsets (the
//!   `SAMPLE*` family takes offsets without a target, as Mesa prints it).
//! - Non-canonical programs do not survive a print/parse trip: a `SAMPLE*` instruction with
//!   `texture: Some(UNKNOWN, [])` comes back as `None`, and a texture target on a non-texture
//!   opcode, a write mask of 0 or a swizzle component above 3 print text that does not parse.
//!   [`validate`](super::validate::validate) reports all of these.

use super::*;
use std::fmt::Write as _;

/// Why a text could not be parsed: where, what was expected there, and what was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// 1-based column (in characters) where the problem starts.
    pub column: usize,
    /// What the parser expected at that position.
    pub expected: String,
    /// What it found, quoted, or `end of line` / `end of input`.
    pub found: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: expected {}, found {}",
            self.line, self.column, self.expected, self.found
        )
    }
}

impl std::error::Error for ParseError {}

/// Parses a Mesa TGSI text dump into a [`Program`].
pub fn parse_program(src: &str) -> Result<Program, ParseError> {
    parse_program_with_lines(src).map(|(p, _)| p)
}

/// Parses like [`parse_program`] and also returns the 1-based source line of every instruction
/// (`lines[i]` is the line of `program.instructions[i]`), for diagnostics.
pub fn parse_program_with_lines(src: &str) -> Result<(Program, Vec<usize>), ParseError> {
    let mut program: Option<Program> = None;
    let mut lines_of = Vec::new();
    let mut last_line = 0;
    for (i, raw) in src.lines().enumerate() {
        let line_no = i + 1;
        last_line = line_no;
        let text = raw.strip_suffix('\r').unwrap_or(raw);
        let mut c = Cursor::new(text, line_no);
        c.skip_ws();
        if c.at_end() {
            continue;
        }
        match program.as_mut() {
            None => {
                let start = c.pos;
                let word = c.word();
                let proc = Processor::from_name(&word.to_ascii_uppercase()).ok_or_else(|| {
                    c.error_at(
                        start,
                        "processor header (`FRAG`, `VERT`, `GEOM`, `TESS_CTRL`, `TESS_EVAL` or `COMP`)",
                    )
                })?;
                c.expect_end("end of line after the processor header")?;
                program = Some(Program::new(proc));
            }
            Some(p) => {
                if let Some(inst) = parse_line(&mut c, p)? {
                    p.instructions.push(inst);
                    lines_of.push(line_no);
                }
            }
        }
    }
    match program {
        Some(p) => Ok((p, lines_of)),
        None => Err(ParseError {
            line: last_line.max(1),
            column: 1,
            expected: "processor header (`FRAG`, `VERT`, ...)".into(),
            found: "end of input".into(),
        }),
    }
}

impl std::str::FromStr for Program {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Program, ParseError> {
        parse_program(s)
    }
}

/// A byte cursor over one line. Positions always sit on character boundaries because it only
/// ever advances over ASCII bytes.
struct Cursor<'a> {
    s: &'a str,
    b: &'a [u8],
    pos: usize,
    line: usize,
}

impl<'a> Cursor<'a> {
    fn new(s: &'a str, line: usize) -> Cursor<'a> {
        Cursor {
            s,
            b: s.as_bytes(),
            pos: 0,
            line,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn at_end(&self) -> bool {
        self.pos >= self.b.len()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    /// Skips blanks, then consumes `ch` if it is next.
    fn eat(&mut self, ch: u8) -> bool {
        self.skip_ws();
        if self.peek() == Some(ch) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, ch: u8, what: &str) -> Result<(), ParseError> {
        if self.eat(ch) {
            Ok(())
        } else {
            Err(self.error(what))
        }
    }

    fn expect_end(&mut self, what: &str) -> Result<(), ParseError> {
        self.skip_ws();
        if self.at_end() {
            Ok(())
        } else {
            Err(self.error(what))
        }
    }

    /// Reads `[A-Za-z0-9_]*` (texture targets such as `2D` start with a digit).
    fn word(&mut self) -> &'a str {
        self.skip_ws();
        let start = self.pos;
        while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || c == b'_') {
            self.pos += 1;
        }
        &self.s[start..self.pos]
    }

    fn uint(&mut self, what: &str) -> Result<u32, ParseError> {
        self.skip_ws();
        let start = self.pos;
        let mut v: u32 = 0;
        while let Some(c @ b'0'..=b'9') = self.peek() {
            v = v
                .checked_mul(10)
                .and_then(|v| v.checked_add(u32::from(c - b'0')))
                .ok_or_else(|| self.error_at(start, &format!("{what} below 2^32")))?;
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.error(what));
        }
        Ok(v)
    }

    fn int(&mut self, what: &str) -> Result<i32, ParseError> {
        self.skip_ws();
        let start = self.pos;
        let neg = if self.peek() == Some(b'-') {
            self.pos += 1;
            true
        } else {
            if self.peek() == Some(b'+') {
                self.pos += 1;
            }
            false
        };
        let mag = i64::from(self.uint(what)?);
        let v = if neg { -mag } else { mag };
        i32::try_from(v).map_err(|_| self.error_at(start, &format!("{what} fitting in 32 bits")))
    }

    /// Describes the token at `pos` for error messages.
    fn found_at(&self, pos: usize) -> String {
        let rest = &self.s[pos.min(self.s.len())..];
        let rest = rest.trim_start_matches([' ', '\t']);
        let Some(first) = rest.chars().next() else {
            return "end of line".into();
        };
        if first.is_ascii_alphanumeric() || first == '_' {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            format!("`{}`", &rest[..end])
        } else {
            format!("`{first}`")
        }
    }

    fn error_at(&self, pos: usize, expected: &str) -> ParseError {
        let pos = pos.min(self.s.len());
        // Point at the token itself, not at the blanks before it.
        let skipped = self.s[pos..].len() - self.s[pos..].trim_start_matches([' ', '\t']).len();
        let tok = pos + skipped;
        ParseError {
            line: self.line,
            column: self.s[..tok].chars().count() + 1,
            expected: expected.into(),
            found: self.found_at(pos),
        }
    }

    fn error(&self, expected: &str) -> ParseError {
        self.error_at(self.pos, expected)
    }
}

fn upper(s: &str) -> String {
    s.to_ascii_uppercase()
}

/// Parses one non-blank line after the header: returns the instruction, or `None` for header items.
fn parse_line(c: &mut Cursor<'_>, p: &mut Program) -> Result<Option<Instruction>, ParseError> {
    // An optional instruction number `  12:`, as Mesa prints and tgsi_text skips.
    let save = c.pos;
    let mut numbered = false;
    if matches!(c.peek(), Some(b'0'..=b'9')) {
        c.uint("instruction number")?;
        if c.eat(b':') {
            numbered = true;
        } else {
            c.pos = save;
        }
    }
    let start = c.pos;
    let word = c.word();
    let key = upper(word);
    if !numbered {
        match key.as_str() {
            "DCL" => {
                let d = parse_declaration(c, p.processor)?;
                p.header.push(HeaderItem::Declaration(d));
                return Ok(None);
            }
            "IMM" => {
                let n = p.immediates().count();
                let imm = parse_immediate(c, n)?;
                p.header.push(HeaderItem::Immediate(imm));
                return Ok(None);
            }
            "PROPERTY" => {
                let prop = parse_property(c)?;
                p.header.push(HeaderItem::Property(prop));
                return Ok(None);
            }
            _ => {}
        }
    }
    let (opcode, saturate, precise) = parse_mnemonic(&key).ok_or_else(|| {
        c.error_at(
            start,
            if numbered {
                "opcode"
            } else {
                "opcode, `DCL`, `IMM` or `PROPERTY`"
            },
        )
    })?;
    parse_instruction_rest(c, opcode, saturate, precise).map(Some)
}

fn parse_mnemonic(key: &str) -> Option<(Opcode, bool, bool)> {
    if let Some(op) = Opcode::from_name(key) {
        return Some((op, false, false));
    }
    let (rest, precise) = match key.strip_suffix("_PRECISE") {
        Some(r) => (r, true),
        None => (key, false),
    };
    let (rest, saturate) = match rest.strip_suffix("_SAT") {
        Some(r) => (r, true),
        None => (rest, false),
    };
    if !saturate && !precise {
        return None;
    }
    Opcode::from_name(rest).map(|op| (op, saturate, precise))
}

fn parse_instruction_rest(
    c: &mut Cursor<'_>,
    opcode: Opcode,
    saturate: bool,
    precise: bool,
) -> Result<Instruction, ParseError> {
    let mut inst = Instruction::new(opcode, Vec::new(), Vec::new());
    inst.saturate = saturate;
    inst.precise = precise;
    if !matches!(c.peek(), None | Some(b' ' | b'\t')) {
        return Err(c.error("blank after the opcode"));
    }
    let name = opcode.name();
    let (nd, ns) = (opcode.num_dst(), opcode.num_src());
    // Operand counts are enforced here, as tgsi_text does, so that no executor ever sees an
    // instruction with missing operands.
    for k in 0..nd + ns {
        if k > 0 && !c.eat(b',') {
            return Err(c.error(&format!(
                "`,` and operand {} of {name} ({nd} destination(s) and {ns} source(s))",
                k + 1
            )));
        }
        c.skip_ws();
        if c.at_end() {
            return Err(c.error(&format!(
                "{} operand of {name}",
                if k < nd { "destination" } else { "source" }
            )));
        }
        if k < nd {
            inst.dst.push(parse_dst(c)?);
        } else {
            inst.src.push(parse_src(c)?);
        }
    }
    let texture_like = opcode.class() == OpcodeClass::Texture;
    if texture_like {
        let save = c.pos;
        if c.eat(b',') {
            if let Some(target) = peek_texture_target(c) {
                inst.texture = Some(TextureInfo {
                    target,
                    offsets: Vec::new(),
                });
            } else if opcode.has_texture_target() {
                return Err(c.error(&format!(
                    "texture target (e.g. `2D`) after the operands of {name}"
                )));
            } else {
                // The sample family names no target: registers after its operands are offsets.
                c.pos = save;
                inst.texture = Some(TextureInfo {
                    target: TextureTarget::Unknown,
                    offsets: Vec::new(),
                });
            }
        } else if opcode.has_texture_target() {
            return Err(c.error(&format!(
                "`,` and a texture target (e.g. `2D`) after the operands of {name}"
            )));
        }
        if let Some(tex) = inst.texture.as_mut() {
            while c.eat(b',') {
                tex.offsets.push(parse_tex_offset(c)?);
            }
        }
    }
    if c.eat(b':') {
        inst.label = Some(c.uint("label number after `:`")?);
    }
    if texture_like {
        c.expect_end("`,` and a texture offset, ` :label`, or end of line")?;
    } else {
        c.expect_end(&format!(
            "` :label` or end of line ({name} takes {nd} destination(s) and {ns} source(s))"
        ))?;
    }
    Ok(inst)
}

/// Consumes a texture target name if one is next (and is not a register such as `BUFFER[0]`).
fn peek_texture_target(c: &mut Cursor<'_>) -> Option<TextureTarget> {
    let save = c.pos;
    let w = c.word();
    if let Some(t) = TextureTarget::from_name(&upper(w)) {
        c.skip_ws();
        if c.peek() != Some(b'[') {
            return Some(t);
        }
    }
    c.pos = save;
    None
}

fn parse_file(c: &mut Cursor<'_>) -> Result<RegisterFile, ParseError> {
    c.skip_ws();
    let start = c.pos;
    let w = c.word();
    RegisterFile::from_name(&upper(w)).ok_or_else(|| c.error_at(start, "register file name"))
}

/// The inside of one `[...]`: a static index, or `FILE[n].c+k` with an optional `(array id)`
/// after the closing bracket.
fn parse_bracket(c: &mut Cursor<'_>) -> Result<(i32, Option<Indirect>), ParseError> {
    c.expect(b'[', "`[`")?;
    c.skip_ws();
    let result = if matches!(c.peek(), Some(b'0'..=b'9' | b'-' | b'+')) {
        let idx = c.int("register index")?;
        c.expect(b']', "`]`")?;
        if c.peek() == Some(b'(') {
            return Err(c.error("no array id after a direct index (only `[ADDR[0].x](id)`)"));
        }
        (idx, None)
    } else {
        let file = parse_file(c)?;
        c.expect(b'[', "`[`")?;
        let index = c.uint("address register index")?;
        c.expect(b']', "`]`")?;
        let mut component = 0;
        if c.eat(b'.') {
            c.skip_ws();
            component = match c.peek().map(|b| b.to_ascii_lowercase()) {
                Some(b'x') => 0,
                Some(b'y') => 1,
                Some(b'z') => 2,
                Some(b'w') => 3,
                _ => return Err(c.error("indirect component `x`, `y`, `z` or `w`")),
            };
            c.pos += 1;
        }
        c.skip_ws();
        let offset = match c.peek() {
            Some(b'+' | b'-') => c.int("index offset")?,
            _ => 0,
        };
        c.expect(b']', "`]` or `+offset`")?;
        let mut array_id = None;
        if c.peek() == Some(b'(') {
            c.pos += 1;
            array_id = Some(c.uint("array id")?);
            c.expect(b')', "`)`")?;
        }
        (
            offset,
            Some(Indirect {
                file,
                index,
                component,
                array_id,
            }),
        )
    };
    Ok(result)
}

fn parse_register(c: &mut Cursor<'_>) -> Result<Register, ParseError> {
    let file = parse_file(c)?;
    let (i0, ind0) = parse_bracket(c)?;
    c.skip_ws();
    if c.peek() == Some(b'[') {
        let (i1, ind1) = parse_bracket(c)?;
        Ok(Register {
            file,
            index: i1,
            indirect: ind1,
            dimension: Some(Dimension {
                index: i0,
                indirect: ind0,
            }),
        })
    } else {
        Ok(Register {
            file,
            index: i0,
            indirect: ind0,
            dimension: None,
        })
    }
}

/// Reads `.xyzw`-style letters: 1 to `max` of them.
fn parse_components(c: &mut Cursor<'_>, max: usize) -> Result<Vec<u8>, ParseError> {
    c.skip_ws();
    let mut out = Vec::new();
    while let Some(ch) = c.peek() {
        let v = match ch.to_ascii_lowercase() {
            b'x' => 0,
            b'y' => 1,
            b'z' => 2,
            b'w' => 3,
            _ => break,
        };
        if out.len() == max {
            return Err(c.error(&format!("at most {max} swizzle letters")));
        }
        out.push(v);
        c.pos += 1;
    }
    if matches!(c.peek(), Some(ch) if ch.is_ascii_alphanumeric() || ch == b'_') {
        return Err(c.error("swizzle letters `x`, `y`, `z`, `w`"));
    }
    if out.is_empty() {
        return Err(c.error("swizzle letters `x`, `y`, `z`, `w`"));
    }
    Ok(out)
}

fn parse_dst(c: &mut Cursor<'_>) -> Result<DstOperand, ParseError> {
    let reg = parse_register(c)?;
    let mut write_mask = 0xF;
    if c.eat(b'.') {
        c.skip_ws();
        write_mask = 0;
        for (bit, letter) in [b'x', b'y', b'z', b'w'].into_iter().enumerate() {
            if c.peek().map(|b| b.to_ascii_lowercase()) == Some(letter) {
                write_mask |= 1 << bit;
                c.pos += 1;
            }
        }
        if write_mask == 0 || matches!(c.peek(), Some(ch) if ch.is_ascii_alphanumeric()) {
            return Err(c.error("write mask (letters of `xyzw` in that order)"));
        }
    }
    Ok(DstOperand { reg, write_mask })
}

fn parse_src(c: &mut Cursor<'_>) -> Result<SrcOperand, ParseError> {
    let negate = c.eat(b'-');
    let absolute = c.eat(b'|');
    let reg = parse_register(c)?;
    let mut swizzle = [0, 1, 2, 3];
    if c.eat(b'.') {
        let comps = parse_components(c, 4)?;
        for (i, s) in swizzle.iter_mut().enumerate() {
            *s = comps[i.min(comps.len() - 1)];
        }
    }
    if absolute {
        c.expect(b'|', "closing `|`")?;
    }
    Ok(SrcOperand {
        reg,
        swizzle,
        negate,
        absolute,
    })
}

fn parse_tex_offset(c: &mut Cursor<'_>) -> Result<TexOffset, ParseError> {
    let reg = parse_register(c)?;
    let mut swizzle = [0, 1, 2];
    if c.eat(b'.') {
        // Mesa prints three letters; a fourth (as in a `.xyzw` swizzle) is accepted and ignored.
        let comps = parse_components(c, 4)?;
        for (i, s) in swizzle.iter_mut().enumerate() {
            *s = comps[i.min(comps.len() - 1)];
        }
    }
    Ok(TexOffset { reg, swizzle })
}

/// True when Mesa treats `file` declarations of this program as implicitly two-dimensional
/// (it prints `IN[]` before the range).
fn implicit_2d(proc: Processor, file: RegisterFile, semantic: Option<Semantic>) -> bool {
    let patch = matches!(
        semantic.map(|s| s.name),
        Some(
            SemanticName::Patch
                | SemanticName::TessInner
                | SemanticName::TessOuter
                | SemanticName::PrimId
        )
    );
    (file == RegisterFile::Input
        && (proc == Processor::Geometry
            || (!patch && matches!(proc, Processor::TessCtrl | Processor::TessEval))))
        || (file == RegisterFile::Output && !patch && proc == Processor::TessCtrl)
}

/// `[first]`, `[first..last]` or `[]` (returned as `None`).
fn parse_dcl_range(c: &mut Cursor<'_>) -> Result<Option<(u32, u32)>, ParseError> {
    c.expect(b'[', "`[`")?;
    if c.eat(b']') {
        return Ok(None);
    }
    let first = c.uint("declaration index")?;
    let mut last = first;
    c.skip_ws();
    if c.b[c.pos..].starts_with(b"..") {
        c.pos += 2;
        last = c.uint("last index of the range")?;
    }
    c.expect(b']', "`]` or `..`")?;
    Ok(Some((first, last)))
}

fn parse_declaration(c: &mut Cursor<'_>, proc: Processor) -> Result<Declaration, ParseError> {
    let file = parse_file(c)?;
    let first_pos = c.pos;
    let r0 = parse_dcl_range(c)?;
    c.skip_ws();
    let r1 = if c.peek() == Some(b'[') {
        Some(parse_dcl_range(c)?)
    } else {
        None
    };
    // Like tgsi_text: the first bracket of per-vertex inputs/outputs only repeats the vertex
    // count, so it is dropped.
    let per_vertex = (file == RegisterFile::Input
        && matches!(
            proc,
            Processor::Geometry | Processor::TessCtrl | Processor::TessEval
        ))
        || (file == RegisterFile::Output && proc == Processor::TessCtrl);
    let (dimension, range) = match (r0, r1) {
        (Some(r), None) => (None, r),
        (r0, Some(Some(r))) => match r0 {
            _ if per_vertex => (None, r),
            None => (None, r),
            Some((d, dl)) if d == dl => (Some(d), r),
            Some(_) => return Err(c.error_at(first_pos, "single dimension index, not a range")),
        },
        (_, Some(None)) | (None, None) => {
            return Err(c.error_at(first_pos, "declaration index or range"))
        }
    };
    if range.1 < range.0 {
        return Err(c.error_at(first_pos, "range with last index >= first index"));
    }
    let mut d = Declaration::new(file, range.0, range.1);
    if c.eat(b'.') {
        let mut mask = 0u8;
        c.skip_ws();
        for (bit, letter) in [b'x', b'y', b'z', b'w'].into_iter().enumerate() {
            if c.peek().map(|b| b.to_ascii_lowercase()) == Some(letter) {
                mask |= 1 << bit;
                c.pos += 1;
            }
        }
        if mask == 0 || matches!(c.peek(), Some(ch) if ch.is_ascii_alphanumeric()) {
            return Err(c.error("usage mask (letters of `xyzw` in that order)"));
        }
        d.usage_mask = mask;
    }
    let mut location_seen = false;
    while c.eat(b',') {
        c.skip_ws();
        let start = c.pos;
        let word = upper(c.word());
        match word.as_str() {
            "ARRAY" if d.array_id.is_none() => {
                c.expect(b'(', "`(` after ARRAY")?;
                d.array_id = Some(c.uint("array id")?);
                c.expect(b')', "`)`")?;
            }
            "LOCAL" => d.local = true,
            "INVARIANT" => d.invariant = true,
            _ if file == RegisterFile::SamplerView && d.sampler_view.is_none() => {
                let target = TextureTarget::from_name(&word)
                    .ok_or_else(|| c.error_at(start, "texture target"))?;
                let mut types = Vec::new();
                while types.len() < 4 {
                    let save = c.pos;
                    if !c.eat(b',') {
                        break;
                    }
                    let tpos = c.pos;
                    let tw = upper(c.word());
                    match ReturnType::from_name(&tw) {
                        Some(t) => types.push(t),
                        // After the first type, a non-type word is the next qualifier.
                        None if !types.is_empty() => {
                            c.pos = save;
                            break;
                        }
                        None => {
                            return Err(c.error_at(
                                tpos,
                                "return type (`UNORM`, `SNORM`, `SINT`, `UINT` or `FLOAT`)",
                            ))
                        }
                    }
                }
                let Some(&x) = types.first() else {
                    return Err(c.error("`,` and a return type"));
                };
                let return_type = if types.len() == 4 {
                    [types[0], types[1], types[2], types[3]]
                } else {
                    [x; 4]
                };
                d.sampler_view = Some(SamplerViewDecl {
                    target,
                    return_type,
                });
            }
            _ if file == RegisterFile::Image && d.image.is_none() => {
                let target = TextureTarget::from_name(&word)
                    .ok_or_else(|| c.error_at(start, "image target (e.g. `2D`)"))?;
                c.expect(b',', "`,` and an image format after the image target")?;
                c.skip_ws();
                let fpos = c.pos;
                let format = ImageFormat::from_name(&upper(c.word())).ok_or_else(|| {
                    c.error_at(
                        fpos,
                        "image format (`PIPE_FORMAT_R32G32B32A32_FLOAT`, `PIPE_FORMAT_R32_UINT`, \
                         `PIPE_FORMAT_R8G8B8A8_UNORM`, …)",
                    )
                })?;
                let save = c.pos;
                let mut writable = false;
                if c.eat(b',') {
                    c.skip_ws();
                    if upper(c.word()) == "WR" {
                        writable = true;
                    } else {
                        c.pos = save;
                    }
                }
                d.image = Some(ImageDecl {
                    target,
                    format,
                    writable,
                });
            }
            _ if d.semantic.is_none()
                && d.interpolation.is_none()
                && !location_seen
                && SemanticName::from_name(&word).is_some() =>
            {
                let name = SemanticName::from_name(&word).unwrap_or(SemanticName::Generic);
                let mut index = 0;
                if c.eat(b'[') {
                    index = c.uint("semantic index")?;
                    c.expect(b']', "`]`")?;
                }
                d.semantic = Some(Semantic { name, index });
            }
            _ if d.interpolation.is_none()
                && !location_seen
                && InterpolateMode::from_name(&word).is_some() =>
            {
                let mode = InterpolateMode::from_name(&word).unwrap_or(InterpolateMode::Perspective);
                d.interpolation = Some(Interpolation {
                    mode,
                    location: InterpolateLocation::Center,
                });
            }
            _ if !location_seen && InterpolateLocation::from_name(&word).is_some() => {
                let location =
                    InterpolateLocation::from_name(&word).unwrap_or(InterpolateLocation::Center);
                location_seen = true;
                // A location without a mode has no representation of its own; perspective is
                // what GL uses for an unqualified varying.
                let mode = d
                    .interpolation
                    .map_or(InterpolateMode::Perspective, |i| i.mode);
                d.interpolation = Some(Interpolation { mode, location });
            }
            _ => {
                return Err(c.error_at(
                    start,
                    "declaration qualifier (`ARRAY(n)`, `LOCAL`, a semantic, an interpolation mode or location, or `INVARIANT`)",
                ))
            }
        }
    }
    d.dimension = dimension;
    c.expect_end("`,` and a declaration qualifier, or end of line")?;
    Ok(d)
}

fn parse_immediate(c: &mut Cursor<'_>, count: usize) -> Result<Immediate, ParseError> {
    if c.eat(b'[') {
        let pos = c.pos;
        let n = c.uint("immediate index")?;
        if n as usize != count {
            return Err(c.error_at(
                pos,
                &format!("immediate index {count} (immediates are numbered in order)"),
            ));
        }
        c.expect(b']', "`]`")?;
    }
    c.skip_ws();
    let tpos = c.pos;
    let ty = ImmediateType::from_name(&upper(c.word())).ok_or_else(|| {
        c.error_at(
            tpos,
            "immediate type (`FLT32`, `UINT32`, `INT32`, `FLT64`, `UINT64` or `INT64`)",
        )
    })?;
    c.expect(b'{', "`{`")?;
    let wide = matches!(
        ty,
        ImmediateType::Float64 | ImmediateType::Uint64 | ImmediateType::Int64
    );
    let max_values = if wide { 2 } else { 4 };
    let mut values = Vec::new();
    let mut n = 0;
    loop {
        if n == max_values {
            return Err(c.error(&format!("`}}` (at most {max_values} values)")));
        }
        c.skip_ws();
        match ty {
            ImmediateType::Uint32 => values.push(c.uint("unsigned integer")?),
            ImmediateType::Int32 => values.push(c.int("integer")? as u32),
            ImmediateType::Float32 => values.push(parse_f32(c)?),
            ImmediateType::Float64 => {
                let v = parse_f64(c)?;
                values.extend([v as u32, (v >> 32) as u32]);
            }
            ImmediateType::Uint64 | ImmediateType::Int64 => {
                let v = parse_int64(c, ty == ImmediateType::Int64)?;
                values.extend([v as u32, (v >> 32) as u32]);
            }
        }
        n += 1;
        if !c.eat(b',') {
            break;
        }
    }
    c.expect(b'}', "`,` or `}`")?;
    c.expect_end("end of line after the immediate")?;
    Ok(Immediate { ty, values })
}

/// Takes the text of a number-like token (digits, letters, `.`, signs after `e`).
fn number_token<'a>(c: &mut Cursor<'a>) -> &'a str {
    c.skip_ws();
    let start = c.pos;
    if matches!(c.peek(), Some(b'-' | b'+')) {
        c.pos += 1;
    }
    let mut prev = 0u8;
    while let Some(ch) = c.peek() {
        let exp_sign = matches!(ch, b'-' | b'+') && matches!(prev, b'e' | b'E');
        if !(ch.is_ascii_alphanumeric() || ch == b'_' || ch == b'.' || exp_sign) {
            break;
        }
        prev = ch;
        c.pos += 1;
    }
    &c.s[start..c.pos]
}

fn parse_hex_bits(tok: &str) -> Option<u64> {
    let h = tok.strip_prefix("0x").or_else(|| tok.strip_prefix("0X"))?;
    if h.is_empty() || h.len() > 16 {
        return None;
    }
    u64::from_str_radix(h, 16).ok()
}

fn parse_f32(c: &mut Cursor<'_>) -> Result<u32, ParseError> {
    let start = c.pos;
    let tok = number_token(c);
    if let Some(bits) = parse_hex_bits(tok) {
        return u32::try_from(bits).map_err(|_| c.error_at(start, "32-bit hex float bits"));
    }
    let lower = tok.to_ascii_lowercase();
    let body = lower.trim_start_matches(['-', '+']);
    let v = match body {
        "inf" | "infinity" | "nan" => parse_decimal(tok).map(|v| v as f32),
        // Parsed directly as f32 so that decimal rounding happens once, in single precision.
        _ if body.starts_with(|ch: char| ch.is_ascii_digit() || ch == '.') => {
            tok.parse::<f32>().ok()
        }
        _ => None,
    };
    v.map(f32::to_bits)
        .ok_or_else(|| c.error_at(start, "float constant"))
}

fn parse_f64(c: &mut Cursor<'_>) -> Result<u64, ParseError> {
    let start = c.pos;
    let tok = number_token(c);
    if let Some(bits) = parse_hex_bits(tok) {
        return Ok(bits);
    }
    parse_decimal(tok)
        .map(f64::to_bits)
        .ok_or_else(|| c.error_at(start, "double constant"))
}

/// Decimal floats as C's printf spells them (`inf`, `-nan` included).
fn parse_decimal(tok: &str) -> Option<f64> {
    let lower = tok.to_ascii_lowercase();
    let (neg, body) = match lower.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, lower.strip_prefix('+').unwrap_or(&lower)),
    };
    let v = match body {
        "inf" | "infinity" => f64::INFINITY,
        "nan" => f64::NAN,
        _ => {
            if !body.starts_with(|ch: char| ch.is_ascii_digit() || ch == '.') {
                return None;
            }
            body.parse::<f64>().ok()?
        }
    };
    Some(if neg { -v } else { v })
}

fn parse_int64(c: &mut Cursor<'_>, signed: bool) -> Result<u64, ParseError> {
    let start = c.pos;
    let tok = number_token(c);
    let v = if signed {
        tok.parse::<i64>().ok().map(|v| v as u64)
    } else {
        tok.parse::<u64>().ok()
    };
    v.ok_or_else(|| c.error_at(start, "64-bit integer constant"))
}

fn parse_property(c: &mut Cursor<'_>) -> Result<Property, ParseError> {
    c.skip_ws();
    let start = c.pos;
    let name = c.word();
    if name.is_empty() || name.starts_with(|ch: char| ch.is_ascii_digit()) {
        return Err(c.error_at(start, "property name"));
    }
    let mut values = Vec::new();
    c.skip_ws();
    if !c.at_end() {
        loop {
            c.skip_ws();
            let vpos = c.pos;
            let v = number_token(c);
            if v.is_empty() || v.contains(['.']) {
                return Err(c.error_at(vpos, "property value (a number or a name)"));
            }
            values.push(v.to_string());
            if !c.eat(b',') {
                break;
            }
        }
    }
    c.expect_end("`,` and another property value, or end of line")?;
    Ok(Property {
        name: name.to_string(),
        values,
    })
}

// ---------------------------------------------------------------------------------------------
// Printer
// ---------------------------------------------------------------------------------------------

/// Prints `p` in Mesa's `tgsi_dump` layout (ending with a newline).
pub fn print_program(p: &Program) -> String {
    let mut out = String::new();
    out.push_str(p.processor.name());
    out.push('\n');
    let mut imm_no = 0usize;
    for item in &p.header {
        match item {
            HeaderItem::Property(prop) => {
                out.push_str("PROPERTY ");
                out.push_str(&prop.name);
                if !prop.values.is_empty() {
                    out.push(' ');
                    out.push_str(&prop.values.join(", "));
                }
            }
            HeaderItem::Declaration(d) => print_declaration(&mut out, p.processor, d),
            HeaderItem::Immediate(imm) => {
                let _ = write!(out, "IMM[{imm_no}] {} {{", imm.ty.name());
                imm_no += 1;
                print_imm_values(&mut out, imm);
                out.push('}');
            }
        }
        out.push('\n');
    }
    let mut indent: i64 = 0;
    for (n, inst) in p.instructions.iter().enumerate() {
        let (pre_dedent, post_indent) = indentation(inst.opcode);
        let _ = write!(out, "{n:3}: ");
        indent -= pre_dedent;
        for _ in 0..indent.max(0) {
            out.push_str("  ");
        }
        indent += post_indent;
        print_instruction(&mut out, inst);
        out.push('\n');
    }
    out
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&print_program(self))
    }
}

/// `(pre_dedent, post_indent)` from Mesa's tgsi_info_opcodes.h; SWITCH/CASE do not indent.
fn indentation(op: Opcode) -> (i64, i64) {
    match op {
        Opcode::IF | Opcode::UIF | Opcode::BGNLOOP | Opcode::BGNSUB => (0, 1),
        Opcode::ELSE => (1, 1),
        Opcode::ENDIF | Opcode::ENDLOOP | Opcode::ENDSUB => (1, 0),
        _ => (0, 0),
    }
}

fn mask_letters(out: &mut String, mask: u8) {
    if mask != 0xF {
        out.push('.');
        for (bit, ch) in ['x', 'y', 'z', 'w'].into_iter().enumerate() {
            if mask & (1 << bit) != 0 {
                out.push(ch);
            }
        }
    }
}

fn swizzle_letter(out: &mut String, s: u8) {
    match s {
        0 => out.push('x'),
        1 => out.push('y'),
        2 => out.push('z'),
        3 => out.push('w'),
        // Mesa's dump_enum prints out-of-range values as numbers; so does this printer.
        n => {
            let _ = write!(out, "{n}");
        }
    }
}

fn print_declaration(out: &mut String, proc: Processor, d: &Declaration) {
    out.push_str("DCL ");
    out.push_str(d.file.name());
    if implicit_2d(proc, d.file, d.semantic) {
        out.push_str("[]");
    }
    if let Some(dim) = d.dimension {
        let _ = write!(out, "[{dim}]");
    }
    if d.first == d.last {
        let _ = write!(out, "[{}]", d.first);
    } else {
        let _ = write!(out, "[{}..{}]", d.first, d.last);
    }
    mask_letters(out, d.usage_mask);
    if let Some(id) = d.array_id {
        let _ = write!(out, ", ARRAY({id})");
    }
    if d.local {
        out.push_str(", LOCAL");
    }
    if let Some(s) = d.semantic {
        let _ = write!(out, ", {}", s.name.name());
        if s.index != 0 || matches!(s.name, SemanticName::Texcoord | SemanticName::Generic) {
            let _ = write!(out, "[{}]", s.index);
        }
    }
    if let Some(sv) = d.sampler_view {
        let _ = write!(out, ", {}, ", sv.target.name());
        let [x, y, z, w] = sv.return_type;
        if x == y && x == z && x == w {
            out.push_str(x.name());
        } else {
            let _ = write!(out, "{x}, {y}, {z}, {w}");
        }
    }
    if let Some(image) = d.image {
        let _ = write!(out, ", {}, {}", image.target.name(), image.format.name());
        if image.writable {
            out.push_str(", WR");
        }
    }
    if let Some(i) = d.interpolation {
        let _ = write!(out, ", {}", i.mode.name());
        if i.location != InterpolateLocation::Center {
            let _ = write!(out, ", {}", i.location.name());
        }
    }
    if d.invariant {
        out.push_str(", INVARIANT");
    }
}

fn print_imm_values(out: &mut String, imm: &Immediate) {
    let v = &imm.values;
    let mut items: Vec<String> = Vec::new();
    match imm.ty {
        ImmediateType::Uint32 => items.extend(v.iter().map(|x| x.to_string())),
        ImmediateType::Int32 => items.extend(v.iter().map(|&x| (x as i32).to_string())),
        ImmediateType::Float32 => items.extend(v.iter().map(|&x| format_f32(x))),
        ImmediateType::Float64 | ImmediateType::Uint64 | ImmediateType::Int64 => {
            for pair in v.chunks(2) {
                let lo = u64::from(pair[0]);
                let hi = u64::from(pair.get(1).copied().unwrap_or(0));
                let bits = lo | (hi << 32);
                items.push(match imm.ty {
                    ImmediateType::Float64 => format_f64(bits),
                    ImmediateType::Int64 => (bits as i64).to_string(),
                    _ => bits.to_string(),
                });
            }
        }
    }
    out.push_str(&items.join(", "));
}

/// `%10.4f` when it is exact, else the shortest exact decimal, else raw bits (NaN, infinities).
fn format_f32(bits: u32) -> String {
    let f = f32::from_bits(bits);
    if !f.is_finite() {
        return format!("0x{bits:08x}");
    }
    let mesa = format!("{:10.4}", f64::from(f));
    if mesa.trim().parse::<f32>().map(f32::to_bits) == Ok(bits) {
        return mesa;
    }
    format!("{:>10}", format!("{f:?}"))
}

fn format_f64(bits: u64) -> String {
    let f = f64::from_bits(bits);
    if !f.is_finite() {
        return format!("0x{bits:016x}");
    }
    let mesa = format!("{f:10.8}");
    if mesa.trim().parse::<f64>().map(f64::to_bits) == Ok(bits) {
        return mesa;
    }
    format!("{:>10}", format!("{f:?}"))
}

fn print_bracket(out: &mut String, index: i32, indirect: &Option<Indirect>) {
    match indirect {
        None => {
            let _ = write!(out, "[{index}]");
        }
        Some(ind) => {
            let _ = write!(out, "[{}[{}].", ind.file.name(), ind.index);
            swizzle_letter(out, ind.component);
            if index > 0 {
                let _ = write!(out, "+{index}");
            } else if index < 0 {
                let _ = write!(out, "{index}");
            }
            out.push(']');
            if let Some(id) = ind.array_id {
                let _ = write!(out, "({id})");
            }
        }
    }
}

fn print_register(out: &mut String, r: &Register) {
    out.push_str(r.file.name());
    if let Some(dim) = &r.dimension {
        print_bracket(out, dim.index, &dim.indirect);
    }
    print_bracket(out, r.index, &r.indirect);
}

fn print_instruction(out: &mut String, inst: &Instruction) {
    out.push_str(inst.opcode.name());
    if inst.saturate {
        out.push_str("_SAT");
    }
    if inst.precise {
        out.push_str("_PRECISE");
    }
    let mut first = true;
    let mut sep = |out: &mut String| {
        if !first {
            out.push(',');
        }
        out.push(' ');
        first = false;
    };
    for d in &inst.dst {
        sep(out);
        print_register(out, &d.reg);
        mask_letters(out, d.write_mask);
    }
    for s in &inst.src {
        sep(out);
        if s.negate {
            out.push('-');
        }
        if s.absolute {
            out.push('|');
        }
        print_register(out, &s.reg);
        if s.swizzle != [0, 1, 2, 3] {
            out.push('.');
            for &c in &s.swizzle {
                swizzle_letter(out, c);
            }
        }
        if s.absolute {
            out.push('|');
        }
    }
    if let Some(tex) = &inst.texture {
        if !(inst.opcode.is_sample_family() && tex.target == TextureTarget::Unknown) {
            out.push_str(", ");
            out.push_str(tex.target.name());
        }
        for o in &tex.offsets {
            out.push_str(", ");
            print_register(out, &o.reg);
            out.push('.');
            for &c in &o.swizzle {
                swizzle_letter(out, c);
            }
        }
    }
    if let Some(l) = inst.label {
        let _ = write!(out, " :{l}");
    }
}
