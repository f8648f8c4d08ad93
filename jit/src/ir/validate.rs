//! Program validator: checks what an executor relies on before it runs a [`Program`] — operand
//! counts, declared registers, writable destinations, texture targets, balanced control flow,
//! subroutine labels and per-stage rules — and reports every problem it finds, not just the first.

use std::collections::HashMap;

use super::text::{parse_program_with_lines, ParseError};
use super::*;

/// Register indices of every file are below this (`TEMP[1048575]` is the last temporary):
/// executors allocate each file up to its highest declared index, so a declaration like
/// `DCL TEMP[0..100000000]` is refused before anything is allocated for it.
pub const MAX_REGISTERS: u32 = 1 << 20;

/// Deepest nesting of `IF`/`UIF`, `BGNLOOP`, `SWITCH` and `BGNSUB` blocks: passes and code
/// generators walk nested blocks recursively.
pub const MAX_NESTING: usize = 1024;

/// One problem found by [`validate()`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationError {
    /// Index of the offending instruction, or `None` for header problems.
    pub instruction: Option<usize>,
    /// What is wrong and what was expected.
    pub message: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.instruction {
            Some(i) => write!(f, "instruction {i}: {}", self.message),
            None => write!(f, "header: {}", self.message),
        }
    }
}

impl std::error::Error for ValidationError {}

/// Checks `p`; returns every problem found, in instruction order (header problems first).
pub fn validate(p: &Program) -> Result<(), Vec<ValidationError>> {
    let declarations: Vec<&Declaration> = p.declarations().collect();
    let mut by_file: HashMap<RegisterFile, Vec<(u32, u32)>> = HashMap::new();
    let mut by_dimension: HashMap<(RegisterFile, u32), Vec<(u32, u32)>> = HashMap::new();
    for d in &declarations {
        by_file.entry(d.file).or_default().push((d.first, d.last));
        by_dimension
            .entry((d.file, d.dimension.unwrap_or(0)))
            .or_default()
            .push((d.first, d.last));
    }
    let mut v = Validator {
        p,
        declarations,
        errors: Vec::new(),
        inst: None,
        imm_count: p.immediates().count(),
        by_file: by_file
            .into_iter()
            .map(|(k, r)| (k, Ranges::of(r)))
            .collect(),
        by_dimension: by_dimension
            .into_iter()
            .map(|(k, r)| (k, Ranges::of(r)))
            .collect(),
    };
    v.header();
    v.instructions();
    v.control_flow();
    if v.errors.is_empty() {
        Ok(())
    } else {
        Err(v.errors)
    }
}

/// Parses and validates `src`; messages name the source line (`line 7: …`, or
/// `line 7 (instruction 3): …` for instruction problems).
pub fn parse_and_validate(src: &str) -> Result<Program, Vec<String>> {
    let (p, lines) = parse_program_with_lines(src).map_err(|e: ParseError| vec![e.to_string()])?;
    match validate(&p) {
        Ok(()) => Ok(p),
        Err(errs) => Err(errs
            .iter()
            .map(|e| match e.instruction {
                Some(i) => match lines.get(i) {
                    Some(l) => format!("line {l} (instruction {i}): {}", e.message),
                    None => e.to_string(),
                },
                None => e.to_string(),
            })
            .collect()),
    }
}

struct Validator<'a> {
    p: &'a Program,
    /// The program's declarations, without its immediates (which the header interleaves: a
    /// lookup per operand through hundreds of immediates made validating large shaders slow).
    declarations: Vec<&'a Declaration>,
    errors: Vec<ValidationError>,
    inst: Option<usize>,
    imm_count: usize,
    /// Declared ranges by file, and by file and dimension, for lookups in O(log n).
    by_file: HashMap<RegisterFile, Ranges>,
    by_dimension: HashMap<(RegisterFile, u32), Ranges>,
}

/// Declared ranges `(first, last)` sorted by `first`, with the largest `last` so far at each
/// position: an index is declared when the last range starting at or before it reaches it.
#[derive(Default)]
struct Ranges {
    firsts: Vec<u32>,
    reach: Vec<u32>,
}

impl Ranges {
    fn of(mut ranges: Vec<(u32, u32)>) -> Ranges {
        ranges.sort_unstable();
        let mut reach = Vec::with_capacity(ranges.len());
        let mut furthest = 0;
        for (i, &(_, last)) in ranges.iter().enumerate() {
            furthest = if i == 0 { last } else { furthest.max(last) };
            reach.push(furthest);
        }
        Ranges {
            firsts: ranges.iter().map(|r| r.0).collect(),
            reach,
        }
    }

    fn contains(&self, index: i64) -> bool {
        let at = self.firsts.partition_point(|&f| i64::from(f) <= index);
        at > 0 && i64::from(self.reach[at - 1]) >= index
    }
}

/// Files whose first bracket in instructions is a per-vertex index that declarations omit.
fn per_vertex(proc: Processor, file: RegisterFile) -> bool {
    (file == RegisterFile::Input
        && matches!(
            proc,
            Processor::Geometry | Processor::TessCtrl | Processor::TessEval
        ))
        || (file == RegisterFile::Output && proc == Processor::TessCtrl)
}

impl Validator<'_> {
    fn err(&mut self, message: String) {
        self.errors.push(ValidationError {
            instruction: self.inst,
            message,
        });
    }

    fn header(&mut self) {
        let p = self.p;
        let decls: Vec<&Declaration> = p.declarations().collect();
        for d in &decls {
            let name = d.file.name();
            if d.first > d.last {
                self.err(format!(
                    "DCL {name}[{}..{}]: first index must not exceed last",
                    d.first, d.last
                ));
            }
            if d.usage_mask == 0 || d.usage_mask > 0xF {
                self.err(format!(
                    "DCL {name}[{}]: usage mask must be a non-empty subset of xyzw",
                    d.first
                ));
            }
            if d.file == RegisterFile::SamplerView && d.sampler_view.is_none() {
                self.err(format!(
                    "DCL SVIEW[{}]: expected a texture target and return type",
                    d.first
                ));
            }
            if d.file != RegisterFile::SamplerView && d.sampler_view.is_some() {
                self.err(format!(
                    "DCL {name}[{}]: only SVIEW declarations take a texture target",
                    d.first
                ));
            }
            if d.file == RegisterFile::Image && d.image.is_none() {
                self.err(format!(
                    "DCL IMAGE[{}]: expected an image target and format",
                    d.first
                ));
            }
            if d.file != RegisterFile::Image && d.image.is_some() {
                self.err(format!(
                    "DCL {name}[{}]: only IMAGE declarations take an image format",
                    d.first
                ));
            }
            if let Some(image) = d.image {
                if image.target.image_coords().is_none() {
                    self.err(format!(
                        "DCL IMAGE[{}]: {} is not an image target (1D, 2D, 3D, RECT, \
                         1D_ARRAY, 2D_ARRAY or BUFFER)",
                        d.first, image.target
                    ));
                }
            }
            if d.semantic.is_some()
                && !matches!(
                    d.file,
                    RegisterFile::Input | RegisterFile::Output | RegisterFile::SystemValue
                )
            {
                self.err(format!(
                    "DCL {name}[{}]: only IN, OUT and SV declarations take a semantic",
                    d.first
                ));
            }
            if d.file == RegisterFile::SystemValue && d.semantic.is_none() {
                self.err(format!("DCL SV[{}]: expected a semantic", d.first));
            }
            if d.array_id.is_some() && d.file == RegisterFile::Immediate {
                self.err("IMM cannot be declared as an ARRAY".into());
            }
            if d.last >= MAX_REGISTERS || d.dimension.is_some_and(|dim| dim >= MAX_REGISTERS) {
                self.err(format!(
                    "DCL {name}[{}..{}]: register indices must stay below {MAX_REGISTERS}",
                    d.first, d.last
                ));
            }
        }
        self.overlaps(&decls);
        for (n, imm) in p.immediates().enumerate() {
            let wide = matches!(
                imm.ty,
                ImmediateType::Float64 | ImmediateType::Uint64 | ImmediateType::Int64
            );
            let len = imm.values.len();
            if len == 0 || len > 4 || (wide && len % 2 != 0) {
                self.err(format!(
                    "IMM[{n}]: expected {} 32-bit values, found {len}",
                    if wide { "2 or 4" } else { "1 to 4" }
                ));
            }
        }
    }

    /// Reports declarations overlapping an earlier one of the same file and dimension, and
    /// arrays declared twice, in declaration order; sorted, so a header of many declarations
    /// is checked in n log n.
    fn overlaps(&mut self, decls: &[&Declaration]) {
        let mut found: Vec<(usize, String)> = Vec::new();
        let mut order: Vec<usize> = (0..decls.len()).collect();
        order.sort_by_key(|&i| (decls[i].file, decls[i].dimension, decls[i].first, i));
        // The declaration reaching furthest among those before, in sorted order, of the
        // group (file, dimension) being swept.
        let mut furthest: Option<usize> = None;
        for (k, &i) in order.iter().enumerate() {
            let d = decls[i];
            let same_group =
                |j: usize| decls[j].file == d.file && decls[j].dimension == d.dimension;
            if k == 0 || !same_group(order[k - 1]) {
                furthest = None;
            }
            if let Some(j) = furthest.filter(|&j| decls[j].last >= d.first) {
                let (later, earlier) = if j < i { (d, decls[j]) } else { (decls[j], d) };
                let name = d.file.name();
                found.push((
                    i.max(j),
                    format!(
                        "DCL {name}[{}..{}] overlaps an earlier declaration of {name}[{}..{}]",
                        later.first, later.last, earlier.first, earlier.last
                    ),
                ));
            }
            if furthest.is_none_or(|j| d.last > decls[j].last) {
                furthest = Some(i);
            }
        }
        let mut arrays: HashMap<(RegisterFile, u32), usize> = HashMap::new();
        for (i, d) in decls.iter().enumerate() {
            if let Some(id) = d.array_id {
                if arrays.insert((d.file, id), i).is_some() {
                    found.push((
                        i,
                        format!("ARRAY({id}) of {} is declared twice", d.file.name()),
                    ));
                }
            }
        }
        found.sort_by_key(|f| f.0);
        for (_, message) in found {
            self.err(message);
        }
    }

    fn declared(&self, file: RegisterFile, dim: Option<i32>, index: i64) -> bool {
        let ranges = match dim {
            Some(dd) if !per_vertex(self.p.processor, file) => match u32::try_from(dd) {
                Ok(dd) => self.by_dimension.get(&(file, dd)),
                Err(_) => None,
            },
            _ => self.by_file.get(&file),
        };
        ranges.is_some_and(|r| r.contains(index))
    }

    fn check_indirect(&mut self, what: &str, ind: &Indirect) {
        if !matches!(
            ind.file,
            RegisterFile::Address | RegisterFile::Temporary | RegisterFile::Input
        ) {
            self.err(format!(
                "{what}: an indirect index must come from ADDR or TEMP, not {}",
                ind.file.name()
            ));
        } else if !self.declared(ind.file, None, i64::from(ind.index)) {
            self.err(format!(
                "{what}: address register {}[{}] is not declared",
                ind.file.name(),
                ind.index
            ));
        }
        if ind.component > 3 {
            self.err(format!(
                "{what}: indirect component must be x, y, z or w, found {}",
                ind.component
            ));
        }
    }

    /// Checks that `r` names declared storage.
    fn check_register(&mut self, what: &str, r: &Register) {
        let file = r.file;
        let name = file.name();
        if let Some(dim) = &r.dimension {
            if let Some(ind) = &dim.indirect {
                self.check_indirect(what, ind);
            } else if dim.index < 0 {
                self.err(format!("{what}: negative dimension index {}", dim.index));
            }
            if !matches!(file, RegisterFile::Constant) && !per_vertex(self.p.processor, file) {
                // Only CONST buffers and per-vertex inputs are two-dimensional.
                if !matches!(file, RegisterFile::Buffer | RegisterFile::Image) {
                    self.err(format!("{what}: {name} is not a two-dimensional file"));
                }
            }
        }
        let dim = r
            .dimension
            .as_ref()
            .filter(|d| d.indirect.is_none())
            .map(|d| d.index);
        match &r.indirect {
            Some(ind) => {
                self.check_indirect(what, ind);
                if let Some(id) = ind.array_id {
                    let arr = self
                        .declarations
                        .iter()
                        .find(|d| d.file == file && d.array_id == Some(id));
                    match arr {
                        None => self.err(format!("{what}: ARRAY({id}) is not declared for {name}")),
                        Some(d) => {
                            if i64::from(r.index) < i64::from(d.first)
                                || i64::from(r.index) > i64::from(d.last)
                            {
                                self.err(format!(
                                    "{what}: base index {} lies outside ARRAY({id}) = {name}[{}..{}]",
                                    r.index, d.first, d.last
                                ));
                            }
                        }
                    }
                } else if file != RegisterFile::Immediate
                    && file != RegisterFile::Null
                    && !self.declarations.iter().any(|d| d.file == file)
                {
                    self.err(format!("{what}: no {name} register is declared"));
                }
            }
            None => {
                let idx = i64::from(r.index);
                match file {
                    RegisterFile::Null => {}
                    RegisterFile::Immediate => {
                        if idx < 0 || idx >= self.imm_count as i64 {
                            self.err(format!(
                                "{what}: IMM[{idx}] does not exist (the program has {} immediates)",
                                self.imm_count
                            ));
                        }
                    }
                    _ => {
                        if idx < 0 || !self.declared(file, dim, idx) {
                            let reg = match dim {
                                Some(d) => format!("{name}[{d}][{idx}]"),
                                None => format!("{name}[{idx}]"),
                            };
                            self.err(format!("{what}: {reg} is not declared"));
                        }
                    }
                }
            }
        }
    }

    fn instructions(&mut self) {
        let p = self.p;
        for (i, inst) in p.instructions.iter().enumerate() {
            self.inst = Some(i);
            let op = inst.opcode;
            let opn = op.name();
            if inst.dst.len() != op.num_dst() {
                self.err(format!(
                    "{opn} expects {} destination operand(s), found {}",
                    op.num_dst(),
                    inst.dst.len()
                ));
            }
            if inst.src.len() != op.num_src() {
                self.err(format!(
                    "{opn} expects {} source operand(s), found {}",
                    op.num_src(),
                    inst.src.len()
                ));
            }
            for (k, d) in inst.dst.iter().enumerate() {
                let what = format!("{opn} destination {k}");
                if d.write_mask == 0 || d.write_mask > 0xF {
                    self.err(format!(
                        "{what}: write mask must be a non-empty subset of xyzw"
                    ));
                }
                if matches!(
                    d.reg.file,
                    RegisterFile::Input
                        | RegisterFile::Constant
                        | RegisterFile::Immediate
                        | RegisterFile::SystemValue
                        | RegisterFile::Sampler
                        | RegisterFile::SamplerView
                ) {
                    self.err(format!(
                        "{what}: {} is read-only (write to TEMP, OUT, ADDR or NULL)",
                        d.reg.file.name()
                    ));
                }
                self.check_register(&what, &d.reg);
            }
            for (k, s) in inst.src.iter().enumerate() {
                let what = format!("{opn} source {k}");
                if s.swizzle.iter().any(|&c| c > 3) {
                    self.err(format!("{what}: swizzle components must be x, y, z or w"));
                }
                self.check_register(&what, &s.reg);
            }
            self.texture(i, inst);
            self.memory(inst);
            if op.class() == OpcodeClass::Kill && p.processor != Processor::Fragment {
                self.err(format!(
                    "{opn} is only allowed in fragment programs, not {}",
                    p.processor.name()
                ));
            }
            if super::props::is_derivative(op) && p.processor != Processor::Fragment {
                self.err(format!(
                    "{opn} needs a pixel quad: only allowed in fragment programs, not {}",
                    p.processor.name()
                ));
            }
            // Only these labels are read (instruction indices); executors ignore the labels of
            // IF, ELSE and loops, which passes that move instructions leave as they were.
            if let Some(l) = inst
                .label
                .filter(|_| matches!(op, Opcode::CALLNZ | Opcode::BRA))
            {
                if l as usize >= p.instructions.len() {
                    self.err(format!(
                        "{opn} :{l}: the label must be an instruction index below {}",
                        p.instructions.len()
                    ));
                }
            }
            if op == Opcode::CAL {
                match inst.label {
                    None => self.err("CAL needs a `:label` naming its BGNSUB".into()),
                    Some(l) => {
                        let target = p.instructions.get(l as usize).map(|t| t.opcode);
                        if target != Some(Opcode::BGNSUB) {
                            self.err(format!(
                                "CAL :{l} must point at a BGNSUB instruction, found {}",
                                target.map_or("nothing (past the end)", |o| o.name())
                            ));
                        }
                    }
                }
            }
        }
        self.inst = None;
        self.recursion();
    }

    /// Reports a subroutine that calls itself, directly or through others: a call stack that
    /// can only overflow (executors stop at `MAX_CALL_DEPTH` frames).
    fn recursion(&mut self) {
        let insts = &self.p.instructions;
        // The subroutine (its BGNSUB) each instruction lies in, and the subroutines each calls.
        let mut calls: HashMap<usize, Vec<(usize, usize)>> = HashMap::new();
        let mut current: Option<usize> = None;
        for (i, inst) in insts.iter().enumerate() {
            match inst.opcode {
                Opcode::BGNSUB => current = Some(i),
                Opcode::ENDSUB => current = None,
                Opcode::CAL | Opcode::CALLNZ => {
                    let target = inst.label.map(|l| l as usize);
                    if let (Some(sub), Some(target)) = (current, target) {
                        if insts.get(target).map(|t| t.opcode) == Some(Opcode::BGNSUB) {
                            calls.entry(sub).or_default().push((i, target));
                        }
                    }
                }
                _ => {}
            }
        }
        // Depth-first search with an explicit stack: 0 unvisited, 1 on the path, 2 done.
        let mut state: HashMap<usize, u8> = HashMap::new();
        let mut subs: Vec<usize> = calls.keys().copied().collect();
        subs.sort_unstable();
        for root in subs {
            if state.get(&root).copied().unwrap_or(0) != 0 {
                continue;
            }
            let mut path: Vec<(usize, usize)> = vec![(root, 0)];
            state.insert(root, 1);
            while let Some(&mut (sub, ref mut next)) = path.last_mut() {
                let edges = calls.get(&sub).map_or(&[][..], Vec::as_slice);
                match edges.get(*next) {
                    Some(&(at, target)) => {
                        *next += 1;
                        match state.get(&target).copied().unwrap_or(0) {
                            0 => {
                                state.insert(target, 1);
                                path.push((target, 0));
                            }
                            1 => {
                                self.errors.push(ValidationError {
                                    instruction: Some(at),
                                    message: format!(
                                        "{} :{target} is recursive: the subroutine at \
                                         instruction {target} calls itself (through this call)",
                                        insts[at].opcode.name()
                                    ),
                                });
                            }
                            _ => {}
                        }
                    }
                    None => {
                        state.insert(sub, 2);
                        path.pop();
                    }
                }
            }
        }
    }

    /// Memory instructions name one direct `BUFFER` or `IMAGE` resource (`STORE` as its
    /// destination, the others as source 0), and only there do those files appear.
    fn memory(&mut self, inst: &Instruction) {
        let op = inst.opcode;
        let opn = op.name();
        let is_resource =
            |r: &Register| matches!(r.file, RegisterFile::Buffer | RegisterFile::Image);
        let resource = if op.class() != OpcodeClass::Memory {
            None
        } else if op == Opcode::STORE {
            inst.dst.first().map(|d| d.reg)
        } else {
            inst.src.first().map(|s| s.reg)
        };
        for d in &inst.dst {
            if is_resource(&d.reg) && op != Opcode::STORE {
                self.err(format!(
                    "{opn}: only STORE writes {} registers",
                    d.reg.file.name()
                ));
            }
        }
        for (k, s) in inst.src.iter().enumerate() {
            let is_slot = op.class() == OpcodeClass::Memory && op != Opcode::STORE && k == 0;
            if is_resource(&s.reg) && !is_slot {
                self.err(format!(
                    "{opn} source {k}: {} registers are only read as the resource of LOAD and \
                     the atomics",
                    s.reg.file.name()
                ));
            }
        }
        let Some(res) = resource else {
            return;
        };
        if !is_resource(&res) {
            self.err(format!(
                "{opn}: the resource operand must be a BUFFER or IMAGE register, found {}",
                res.file.name()
            ));
            return;
        }
        if res.indirect.is_some() || res.dimension.is_some() {
            self.err(format!(
                "{opn}: the {} operand must be addressed directly",
                res.file.name()
            ));
        }
        if res.file == RegisterFile::Image {
            let image = self
                .declarations
                .iter()
                .find(|d| {
                    d.file == RegisterFile::Image
                        && (d.first..=d.last).contains(&(res.index.max(0) as u32))
                })
                .and_then(|d| d.image);
            if let Some(image) = image {
                if op != Opcode::LOAD && !image.writable {
                    self.err(format!(
                        "{opn}: IMAGE[{}] is not declared writable (`, WR`)",
                        res.index
                    ));
                }
                if op.is_atomic()
                    && !matches!(image.format, ImageFormat::R32Uint | ImageFormat::R32Sint)
                {
                    self.err(format!(
                        "{opn}: atomics need an R32_UINT or R32_SINT image, IMAGE[{}] is {}",
                        res.index, image.format
                    ));
                }
            }
        }
    }

    fn texture(&mut self, _i: usize, inst: &Instruction) {
        let op = inst.opcode;
        let opn = op.name();
        if op.has_texture_target() {
            match &inst.texture {
                None => self.err(format!(
                    "{opn} needs a texture target after its sampler operand (e.g. `, 2D`)"
                )),
                Some(t) if t.target == TextureTarget::Unknown => self.err(format!(
                    "{opn} needs a concrete texture target, found UNKNOWN"
                )),
                Some(_) => {}
            }
            // The sampler is the last source operand of the TEX family.
            if let Some(last) = inst.src.last() {
                if inst.src.len() == op.num_src() && last.reg.file != RegisterFile::Sampler {
                    self.err(format!(
                        "{opn}: last source operand must be a SAMP register, found {}",
                        last.reg.file.name()
                    ));
                }
            }
        } else if op.class() != OpcodeClass::Texture && inst.texture.is_some() {
            self.err(format!(
                "{opn} is not a texture instruction: it takes no texture target"
            ));
        }
        if let Some(t) = &inst.texture {
            for (k, o) in t.offsets.iter().enumerate() {
                if o.swizzle.iter().any(|&c| c > 3) {
                    self.err(format!(
                        "{opn} texture offset {k}: swizzle components must be x, y, z or w"
                    ));
                }
                self.check_register(&format!("{opn} texture offset {k}"), &o.reg);
            }
        }
    }

    fn control_flow(&mut self) {
        #[derive(Clone, Copy, PartialEq)]
        enum Frame {
            If { has_else: bool },
            Loop,
            Switch,
            Sub,
        }
        let p = self.p;
        let mut stack: Vec<(Frame, usize)> = Vec::new();
        let mut end_at: Option<usize> = None;
        let mut reported_open = 0usize;
        let mut reported_deep = false;
        for (i, inst) in p.instructions.iter().enumerate() {
            self.inst = Some(i);
            let op = inst.opcode;
            if stack.len() > MAX_NESTING && !reported_deep {
                reported_deep = true;
                self.err(format!(
                    "blocks nested more than {MAX_NESTING} deep (IF, BGNLOOP, SWITCH, BGNSUB)"
                ));
            }
            if end_at.is_some() && stack.is_empty() && op != Opcode::BGNSUB {
                self.err(format!(
                    "{} after END: only BGNSUB..ENDSUB subroutines may follow END",
                    op.name()
                ));
                continue;
            }
            match op {
                Opcode::IF | Opcode::UIF => stack.push((Frame::If { has_else: false }, i)),
                Opcode::ELSE => match stack.last_mut() {
                    Some((Frame::If { has_else }, _)) if !*has_else => *has_else = true,
                    Some((Frame::If { .. }, _)) => self.err("second ELSE for the same IF".into()),
                    _ => self.err("ELSE without an open IF/UIF".into()),
                },
                Opcode::ENDIF => self.close(
                    &mut stack,
                    |f| matches!(f, Frame::If { .. }),
                    "ENDIF",
                    "IF/UIF",
                ),
                Opcode::BGNLOOP => stack.push((Frame::Loop, i)),
                Opcode::ENDLOOP => {
                    self.close(&mut stack, |f| f == Frame::Loop, "ENDLOOP", "BGNLOOP")
                }
                Opcode::SWITCH => stack.push((Frame::Switch, i)),
                Opcode::CASE | Opcode::DEFAULT
                    if !matches!(stack.last(), Some((Frame::Switch, _))) =>
                {
                    self.err(format!("{} outside a SWITCH", op.name()));
                }
                Opcode::ENDSWITCH => {
                    self.close(&mut stack, |f| f == Frame::Switch, "ENDSWITCH", "SWITCH")
                }
                Opcode::BGNSUB => {
                    if !stack.is_empty() {
                        self.err("BGNSUB inside another block: subroutines cannot nest".into());
                    }
                    stack.push((Frame::Sub, i));
                }
                Opcode::ENDSUB => self.close(&mut stack, |f| f == Frame::Sub, "ENDSUB", "BGNSUB"),
                Opcode::BRK | Opcode::CONT | Opcode::BREAKC => {
                    let inner = stack
                        .iter()
                        .rev()
                        .map(|(f, _)| *f)
                        .take_while(|f| *f != Frame::Sub)
                        .find(|f| {
                            matches!(f, Frame::Loop)
                                || (op != Opcode::CONT && matches!(f, Frame::Switch))
                        });
                    if inner.is_none() {
                        self.err(format!(
                            "{} outside {}",
                            op.name(),
                            if op == Opcode::CONT {
                                "a loop"
                            } else {
                                "a loop or SWITCH"
                            }
                        ));
                    }
                }
                Opcode::END => {
                    if let Some(&(_, at)) = stack.first() {
                        self.err(format!(
                            "END inside an open block ({} at instruction {at} is not closed)",
                            p.instructions[at].opcode.name()
                        ));
                        // Reported here; not again as "never closed" at the end.
                        reported_open = stack.len();
                    }
                    if end_at.is_none() {
                        end_at = Some(i);
                    }
                }
                _ => {}
            }
        }
        self.inst = None;
        for &(f, at) in stack.iter().skip(reported_open) {
            let (open, close) = match f {
                Frame::If { .. } => (p.instructions[at].opcode.name(), "ENDIF"),
                Frame::Loop => ("BGNLOOP", "ENDLOOP"),
                Frame::Switch => ("SWITCH", "ENDSWITCH"),
                Frame::Sub => ("BGNSUB", "ENDSUB"),
            };
            self.errors.push(ValidationError {
                instruction: Some(at),
                message: format!("{open} is never closed: expected a matching {close}"),
            });
        }
        if end_at.is_none() {
            self.err("the program must end with END".into());
        }
    }

    fn close<T: Copy, F: Fn(T) -> bool>(
        &mut self,
        stack: &mut Vec<(T, usize)>,
        matches_open: F,
        closer: &str,
        opener: &str,
    ) {
        match stack.last() {
            Some((f, _)) if matches_open(*f) => {
                stack.pop();
            }
            _ => self.err(format!("{closer} without an open {opener}")),
        }
    }
}
