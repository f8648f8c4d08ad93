//! The nesting of a program's structured control flow, computed once in one walk: which `IF`/
//! `UIF` goes with which `ELSE` and `ENDIF`, `BGNLOOP` with `ENDLOOP`, `SWITCH` with its `CASE`s,
//! `DEFAULT` and `ENDSWITCH`, `BGNSUB` with `ENDSUB`; what `BRK`, `BREAKC` and `CONT` leave;
//! and the tree of regions (branch arms, loop bodies, cases) every instruction lies in, with its
//! depth. The passes and the interpreter read nesting from here instead of scanning for it.
//!
//! Labels on `IF`, `ELSE` and loops are not trusted (Mesa's nir_to_tgsi writes placeholders):
//! nesting alone decides. `CAL`/`CALLNZ` labels are instruction indices and must name a
//! `BGNSUB`. [`Structure::of`] accepts exactly the nesting the interpreter runs and reports the
//! first problem of any other with the interpreter's message; the validator
//! (`validate.rs`) reports every problem of a program, this module only the first.

use super::{Instruction, Opcode};

/// What kind of construct a [`Construct`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConstructKind {
    /// `IF` or `UIF` … [`ELSE` …] `ENDIF`.
    If,
    /// `BGNLOOP` … `ENDLOOP`.
    Loop,
    /// `SWITCH` … `CASE`/`DEFAULT` … `ENDSWITCH`.
    Switch,
    /// `BGNSUB` … `ENDSUB`.
    Subroutine,
}

/// One construct: its delimiting instructions, by instruction index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Construct {
    /// The kind.
    pub kind: ConstructKind,
    /// The opening instruction (`IF`/`UIF`, `BGNLOOP`, `SWITCH`, `BGNSUB`).
    pub begin: usize,
    /// The `ELSE` of an `IF`, if it has one.
    pub else_at: Option<usize>,
    /// The closing instruction (`ENDIF`, `ENDLOOP`, `ENDSWITCH`, `ENDSUB`).
    pub end: usize,
    /// The `CASE` instructions of a `SWITCH`, in program order.
    pub cases: Vec<usize>,
    /// The `DEFAULT` of a `SWITCH`, if it has one.
    pub default: Option<usize>,
    /// The innermost construct this one lies in (an index into [`Structure::constructs`]).
    pub parent: Option<usize>,
}

/// What kind of code a [`Region`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegionKind {
    /// The whole program.
    Program,
    /// The first arm of an `IF`/`UIF`.
    Then,
    /// The arm after an `ELSE`.
    Else,
    /// A loop body: its back edge reaches its first instruction.
    LoopBody,
    /// The code between a `SWITCH` and its first label.
    SwitchHead,
    /// The code after a `CASE` or `DEFAULT` label, up to the next label or the `ENDSWITCH`.
    Case,
    /// A subroutine body.
    Subroutine,
}

/// A stretch of code lanes enter together: the whole program, a branch arm, a loop body, a case
/// or a subroutine body. Within a region (outside the regions nested in it) the lanes that
/// execute can only shrink from its start to its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// The kind.
    pub kind: RegionKind,
    /// The construct it belongs to (`None` for the program).
    pub construct: Option<usize>,
    /// The region its construct lies in (`None` for the program).
    pub parent: Option<usize>,
    /// The instruction that opens it: the construct's opening instruction, its `ELSE`, or the
    /// `CASE`/`DEFAULT` label (0 for the program).
    pub start: usize,
    /// The instruction that ends it: the next `ELSE` or label, or the closing instruction (the
    /// last instruction for the program).
    pub end: usize,
    /// How many regions enclose it (0 for the program).
    pub depth: usize,
}

/// The first nesting problem of a program the interpreter would not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructureError {
    /// The instruction at fault.
    pub pc: usize,
    /// What is wrong.
    pub message: String,
}

/// The nesting of one program's instructions (see the module documentation).
#[derive(Clone, Debug)]
pub struct Structure {
    constructs: Vec<Construct>,
    regions: Vec<Region>,
    /// Per instruction: its region. Delimiters (openers, `ELSE`, labels, closers) lie in the
    /// region around their construct.
    region_of: Vec<u32>,
    /// Per instruction: the construct it opens, divides or closes.
    delimits: Vec<Option<u32>>,
    /// Per `BRK`/`BREAKC`: the loop or `SWITCH` it leaves; per `CONT`: the loop it continues.
    exits: Vec<Option<u32>>,
}

impl Structure {
    /// Analyses `insts` in one walk; the first nesting problem (as the interpreter reports it)
    /// otherwise.
    pub fn of(insts: &[Instruction]) -> Result<Structure, StructureError> {
        let n = insts.len();
        let mut s = Structure {
            constructs: Vec::new(),
            regions: vec![Region {
                kind: RegionKind::Program,
                construct: None,
                parent: None,
                start: 0,
                end: n.saturating_sub(1),
                depth: 0,
            }],
            region_of: vec![0; n],
            delimits: vec![None; n],
            exits: vec![None; n],
        };
        let error = |pc: usize, message: &str| StructureError {
            pc,
            message: message.to_string(),
        };
        // The open constructs, innermost last, and the region being walked.
        let mut open: Vec<usize> = Vec::new();
        let mut current = 0usize;
        for (pc, inst) in insts.iter().enumerate() {
            let op = inst.opcode;
            let top = open.last().copied();
            let top_kind = top.map(|c| s.constructs[c].kind);
            match op {
                Opcode::IF | Opcode::UIF | Opcode::BGNLOOP | Opcode::SWITCH | Opcode::BGNSUB => {
                    let (kind, region) = match op {
                        Opcode::BGNLOOP => (ConstructKind::Loop, RegionKind::LoopBody),
                        Opcode::SWITCH => (ConstructKind::Switch, RegionKind::SwitchHead),
                        Opcode::BGNSUB => {
                            if !open.is_empty() {
                                return Err(error(pc, "BGNSUB inside another construct"));
                            }
                            (ConstructKind::Subroutine, RegionKind::Subroutine)
                        }
                        _ => (ConstructKind::If, RegionKind::Then),
                    };
                    let c = s.constructs.len();
                    s.constructs.push(Construct {
                        kind,
                        begin: pc,
                        else_at: None,
                        end: pc,
                        cases: Vec::new(),
                        default: None,
                        parent: top,
                    });
                    s.region_of[pc] = current as u32;
                    s.delimits[pc] = Some(c as u32);
                    current = s.open_region(region, c, current, pc);
                    open.push(c);
                }
                Opcode::ELSE => match top {
                    Some(c)
                        if top_kind == Some(ConstructKind::If)
                            && s.constructs[c].else_at.is_none() =>
                    {
                        s.constructs[c].else_at = Some(pc);
                        current = s.next_region(RegionKind::Else, c, current, pc);
                    }
                    _ => return Err(error(pc, "ELSE without a matching IF")),
                },
                Opcode::CASE | Opcode::DEFAULT => {
                    let c = match top {
                        Some(c) if top_kind == Some(ConstructKind::Switch) => c,
                        _ if op == Opcode::CASE => {
                            return Err(error(pc, "CASE outside of a SWITCH"));
                        }
                        _ => {
                            return Err(error(
                                pc,
                                "DEFAULT outside of a SWITCH, or a second DEFAULT",
                            ))
                        }
                    };
                    if op == Opcode::CASE {
                        s.constructs[c].cases.push(pc);
                    } else if s.constructs[c].default.is_some() {
                        return Err(error(
                            pc,
                            "DEFAULT outside of a SWITCH, or a second DEFAULT",
                        ));
                    } else {
                        s.constructs[c].default = Some(pc);
                    }
                    // Lanes join at every label, so each case is a region of its own.
                    current = s.next_region(RegionKind::Case, c, current, pc);
                }
                Opcode::ENDIF | Opcode::ENDLOOP | Opcode::ENDSWITCH | Opcode::ENDSUB => {
                    let (kind, message) = match op {
                        Opcode::ENDIF => (ConstructKind::If, "ENDIF without a matching IF"),
                        Opcode::ENDLOOP => {
                            (ConstructKind::Loop, "ENDLOOP without a matching BGNLOOP")
                        }
                        Opcode::ENDSWITCH => {
                            (ConstructKind::Switch, "ENDSWITCH without a matching SWITCH")
                        }
                        _ => (
                            ConstructKind::Subroutine,
                            "ENDSUB without a matching BGNSUB",
                        ),
                    };
                    let c = match top {
                        Some(c) if top_kind == Some(kind) => c,
                        _ => return Err(error(pc, message)),
                    };
                    open.pop();
                    s.constructs[c].end = pc;
                    s.delimits[pc] = Some(c as u32);
                    s.regions[current].end = pc;
                    current = s.regions[current].parent.unwrap_or(0);
                    s.region_of[pc] = current as u32;
                }
                Opcode::BRK | Opcode::BREAKC => {
                    let target = open.iter().rev().copied().find(|&c| {
                        matches!(
                            s.constructs[c].kind,
                            ConstructKind::Loop | ConstructKind::Switch
                        )
                    });
                    match target {
                        Some(c) => s.exits[pc] = Some(c as u32),
                        None => return Err(error(pc, "BRK outside of a loop or SWITCH")),
                    }
                    s.region_of[pc] = current as u32;
                }
                Opcode::CONT => {
                    let target = open
                        .iter()
                        .rev()
                        .copied()
                        .find(|&c| s.constructs[c].kind == ConstructKind::Loop);
                    match target {
                        Some(c) => s.exits[pc] = Some(c as u32),
                        None => return Err(error(pc, "CONT outside of a loop")),
                    }
                    s.region_of[pc] = current as u32;
                }
                Opcode::CAL | Opcode::CALLNZ => {
                    let Some(label) = inst.label else {
                        return Err(error(pc, "CAL without a label"));
                    };
                    if insts.get(label as usize).map(|i| i.opcode) != Some(Opcode::BGNSUB) {
                        return Err(StructureError {
                            pc,
                            message: format!(
                                "CAL label {label} does not name a BGNSUB instruction"
                            ),
                        });
                    }
                    s.region_of[pc] = current as u32;
                }
                _ => s.region_of[pc] = current as u32,
            }
        }
        if let Some(&c) = open.last() {
            let construct = &s.constructs[c];
            let message = match construct.kind {
                ConstructKind::If => "IF without ENDIF",
                ConstructKind::Loop => "BGNLOOP without ENDLOOP",
                ConstructKind::Switch => "SWITCH without ENDSWITCH",
                ConstructKind::Subroutine => "BGNSUB without ENDSUB",
            };
            return Err(error(construct.begin, message));
        }
        Ok(s)
    }

    /// Opens the first region of construct `c` inside region `outer` at `pc`; returns it.
    fn open_region(&mut self, kind: RegionKind, c: usize, outer: usize, pc: usize) -> usize {
        self.regions.push(Region {
            kind,
            construct: Some(c),
            parent: Some(outer),
            start: pc,
            end: pc,
            depth: self.regions[outer].depth + 1,
        });
        self.regions.len() - 1
    }

    /// Ends region `current` of construct `c` at the divider `pc` (an `ELSE` or a label) and
    /// opens the next one; returns it.
    fn next_region(&mut self, kind: RegionKind, c: usize, current: usize, pc: usize) -> usize {
        self.regions[current].end = pc;
        let outer = self.regions[current].parent.unwrap_or(0);
        self.region_of[pc] = outer as u32;
        self.delimits[pc] = Some(c as u32);
        self.open_region(kind, c, outer, pc)
    }

    /// Every construct, in the order of their opening instructions (so a construct comes after
    /// the one it lies in); a construct's index here is its id.
    pub fn constructs(&self) -> &[Construct] {
        &self.constructs
    }

    /// The construct with id `c`.
    pub fn construct(&self, c: usize) -> &Construct {
        &self.constructs[c]
    }

    /// The construct instruction `pc` opens, divides (`ELSE`, `CASE`, `DEFAULT`) or closes.
    pub fn delimited_by(&self, pc: usize) -> Option<usize> {
        self.delimits[pc].map(|c| c as usize)
    }

    /// For `BRK`/`BREAKC`: the loop or `SWITCH` it leaves; for `CONT`: the loop it continues.
    pub fn exit_of(&self, pc: usize) -> Option<usize> {
        self.exits[pc].map(|c| c as usize)
    }

    /// Every region; the program is region 0, and a region comes after the region it lies in.
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }

    /// The region instruction `pc` lies in (an index into [`Structure::regions`]).
    pub fn region_of(&self, pc: usize) -> usize {
        self.region_of[pc] as usize
    }

    /// How many constructs enclose instruction `pc`: 0 outside every branch, loop, switch and
    /// subroutine. A construct's own delimiters count as outside it.
    pub fn depth(&self, pc: usize) -> usize {
        self.regions[self.region_of(pc)].depth
    }

    /// The innermost construct whose body holds instruction `pc` (a construct's delimiters lie
    /// outside it).
    pub fn enclosing(&self, pc: usize) -> Option<usize> {
        self.regions[self.region_of(pc)].construct
    }
}
