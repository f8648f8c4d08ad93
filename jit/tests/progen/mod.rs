//! The random TGSI program generator of the JIT's differential tests: valid fragment programs
//! with arithmetic, texture reads, nested IF/SWITCH, counted loops, subroutines and kills, every
//! choice drawn from `super::splitmix::Rng` (the fuzz target `jit_vs_interp` supplies one that
//! draws from the fuzzer's bytes).
#![allow(dead_code)]

use super::quadinputs::random_value;
use super::splitmix::Rng;

pub const ALU: &[&str] = &[
    "MOV", "ADD", "SUB", "MUL", "DIV", "MAD", "LRP", "FMA", "MIN", "MAX", "CLAMP", "SLT", "SGE",
    "SGT", "SLE", "SEQ", "SNE", "FSLT", "FSGE", "FSEQ", "FSNE", "CMP", "CND", "UCMP", "ABS", "FLR",
    "CEIL", "TRUNC", "ROUND", "FRC", "SSG", "DDX", "DDY", "DDX_FINE", "DDY_FINE", "RCP", "RSQ",
    "SQRT", "EX2", "LG2", "SIN", "COS", "POW", "DP2", "DP3", "DP4", "DPH", "DP2A", "I2F", "U2F",
    "F2I", "F2U", "NOT", "AND", "OR", "XOR", "SHL", "USHR", "ISHR", "UADD", "UMUL", "UMAD", "IMAX",
    "IMIN", "UMAX", "UMIN", "INEG", "IABS", "ISSG", "ISGE", "ISLT", "USEQ", "USNE", "USGE", "USLT",
    "IDIV", "UDIV", "MOD", "UMOD", "LDEXP", "IMUL_HI", "UMUL_HI", "IBFE", "UBFE", "BFI", "BREV",
    "POPC", "LSB", "IMSB", "UMSB", "LIT", "EXP", "LOG", "XPD", "DST", "NRM", "PK2H", "UP2H",
    "PK4UB", "UP4UB", "ARR", "RCC", "SCS", "X2D",
];

/// The most common opcodes, drawn more often.
pub const HOT: &[&str] = &[
    "MOV", "ADD", "MUL", "MAD", "DP3", "DP4", "MIN", "MAX", "FSLT", "FSGE", "UCMP", "CMP", "FRC",
    "FLR", "SUB",
];

pub struct Gen<'a> {
    rng: &'a mut Rng,
    lines: Vec<String>,
    loop_depth: usize,
    depth: usize,
    in_switch: usize,
    in_sub: bool,
    /// The subroutine being generated.
    sub: Option<usize>,
    calls: usize,
    /// No subroutines and no SWITCH: the flow the JIT's flush analysis models (what the
    /// frontends produce), where arithmetic results may stay unflushed.
    plain: bool,
    /// Arithmetic and texture lines emitted so far, which `repeats` programs emit again (so
    /// value numbering finds recomputed values).
    emitted: Vec<String>,
    repeats: bool,
    /// Statements of uniform flow (see [`Gen::uniform_statement`]) and no subroutines.
    uniform: bool,
}

impl Gen<'_> {
    fn swz(&mut self) -> String {
        let c = ['x', 'y', 'z', 'w'];
        if self.rng.chance(40) {
            return "xyzw".into();
        }
        (0..4).map(|_| c[self.rng.below(4)]).collect()
    }

    fn reg_src(&mut self) -> String {
        let k = self.rng.below(4);
        match self.rng.below(24) {
            0..=7 => format!("TEMP[{}]", self.rng.below(6)),
            8..=10 => format!("IN[{}]", self.rng.below(3)),
            11..=12 => format!("CONST[0][{}]", self.rng.below(10)),
            13..=15 => format!("IMM[{}]", self.rng.below(6)),
            16 => format!("TEMP[{}]", 8 + self.rng.below(4)),
            17 => format!("OUT[{}]", self.rng.below(2)),
            18 => format!("TEMP[{}]", 6 + self.rng.below(2)),
            19 => format!("TEMP[ADDR[0].x+{}](1)", k),
            20 => format!("CONST[0][ADDR[0].x+{k}]"),
            21 => "IN[ADDR[0].x]".into(),
            22 => "SV[0]".into(),
            _ => format!("CONST[1][{}]", self.rng.below(4)),
        }
    }

    fn src(&mut self) -> String {
        let reg = self.reg_src();
        let sw = self.swz();
        let body = format!("{reg}.{sw}");
        match self.rng.below(10) {
            0 => format!("-{body}"),
            1 => format!("|{body}|"),
            2 => format!("-|{body}|"),
            _ => body,
        }
    }

    fn scalar_src(&mut self) -> String {
        let reg = self.reg_src();
        let c = ['x', 'y', 'z', 'w'][self.rng.below(4)];
        format!("{reg}.{c}{c}{c}{c}")
    }

    fn dst(&mut self) -> String {
        let reg = match self.rng.below(12) {
            0..=6 => format!("TEMP[{}]", self.rng.below(6)),
            7..=8 => format!("OUT[{}]", self.rng.below(2)),
            9 => format!("TEMP[{}]", 8 + self.rng.below(4)),
            10 => format!("TEMP[ADDR[0].x+{}](1)", self.rng.below(4)),
            _ => "OUT[ADDR[0].x]".into(),
        };
        let mut mask = String::new();
        while mask.is_empty() {
            for c in ['x', 'y', 'z', 'w'] {
                if self.rng.chance(55) {
                    mask.push(c);
                }
            }
        }
        if mask == "xyzw" {
            reg
        } else {
            format!("{reg}.{mask}")
        }
    }

    fn emit(&mut self, s: String) {
        self.lines.push(s);
    }

    fn alu(&mut self) {
        let op = if self.rng.chance(40) {
            self.rng.pick(HOT)
        } else {
            self.rng.pick(ALU)
        };
        let n = softgpu_jit::ir::Opcode::from_name(op)
            .map(|o| o.num_src())
            .unwrap_or(1);
        let sat = if self.rng.chance(12) { "_SAT" } else { "" };
        let dst = self.dst();
        let srcs: Vec<String> = (0..n).map(|_| self.src()).collect();
        let line = format!("{op}{sat} {dst}, {}", srcs.join(", "));
        self.emitted.push(line.clone());
        self.emit(line);
    }

    fn tex(&mut self) {
        let d = format!("TEMP[{}]", self.rng.below(6));
        let c = self.src();
        // Texel offsets: immediates (what GLSL's constant offsets become, sampled natively) or
        // a register (through the interpreter); `IMM[0]` holds 0..=3.
        let offset = match self.rng.below(8) {
            0 => format!(", IMM[{}].{}", self.rng.below(6), &self.swz()[..3]),
            1 => format!(", IMM[0].{}", &self.swz()[..3]),
            2 => format!(", TEMP[{}].xyz", self.rng.below(6)),
            _ => String::new(),
        };
        let line = match self.rng.below(14) {
            11 => format!("TEX {d}, {c}, SAMP[0], 2D{offset}"),
            12 => format!("TXL {d}, {c}, SAMP[1], 2D{offset}"),
            13 => format!("TXF {d}, {c}, SAMP[0], 2D{offset}"),
            0 => format!("TEX {d}, {c}, SAMP[0], 2D"),
            1 => format!("TXB {d}, {c}, SAMP[0], 2D"),
            2 => format!("TXL {d}, {c}, SAMP[1], 2D"),
            3 => format!("TXP {d}, {c}, SAMP[0], 2D"),
            4 => format!("TXF {d}, {c}, SAMP[0], 2D"),
            5 => format!("TXQ {d}, {c}, SAMP[0], 2D"),
            6 => {
                let (x, y) = (self.src(), self.src());
                format!("TXD {d}, {c}, {x}, {y}, SAMP[0], 2D")
            }
            7 => format!("LODQ {d}, {c}, SAMP[0], 2D"),
            8 => {
                let k = self.scalar_src();
                format!("TG4 {d}, {c}, {k}, SAMP[0], 2D")
            }
            9 => format!("TEX {d}, {c}, SAMP[0], SHADOW2D"),
            _ => format!("SAMPLE {d}, {c}, SVIEW[0].yxzw, SAMP[1]"),
        };
        self.emitted.push(line.clone());
        self.emit(line);
    }

    /// `head` (an IF/UIF line), a block of statements, sometimes an ELSE block, and ENDIF.
    fn if_block(&mut self, head: String) {
        self.emit(head);
        self.depth += 1;
        let n = 1 + self.rng.below(4);
        self.block(n);
        if self.rng.chance(50) {
            self.emit("ELSE".into());
            let n = 1 + self.rng.below(4);
            self.block(n);
        }
        self.depth -= 1;
        self.emit("ENDIF".into());
    }

    /// A counted loop's start: `ctr.x` from 0, and `ctr.y` set once it reaches `IMM[0].bound`
    /// (the caller emits the exit on it).
    fn loop_head(&mut self, ctr: &str, bound: &str) {
        self.emit(format!("MOV {ctr}.x, IMM[0].xxxx"));
        self.emit("BGNLOOP".into());
        self.emit(format!("USGE {ctr}.y, {ctr}.xxxx, IMM[0].{bound}"));
    }

    /// Runs `body` as the statements of a loop body (one loop deeper, outside any SWITCH).
    fn in_loop(&mut self, body: impl FnOnce(&mut Self)) {
        self.loop_depth += 1;
        self.depth += 1;
        let saved = self.in_switch;
        self.in_switch = 0;
        body(self);
        self.in_switch = saved;
        self.depth -= 1;
        self.loop_depth -= 1;
    }

    fn block(&mut self, len: usize) {
        for _ in 0..len {
            self.statement();
        }
    }

    /// A scalar the same in every lane, as far as the JIT's uniformity analysis can tell when
    /// nothing spoiled `TEMP[13..15]` (loop counters, constants, immediates, those registers).
    fn uniform_src(&mut self) -> String {
        let c = ['x', 'y', 'z', 'w'][self.rng.below(4)];
        let reg = match self.rng.below(9) {
            0..=3 => format!("TEMP[{}]", 13 + self.rng.below(3)),
            // Elements of the array indirect writes reach: never uniform.
            8 => format!("TEMP[{}]", 8 + self.rng.below(4)),
            4 if self.loop_depth > 0 => format!("TEMP[{}]", 6 + self.rng.below(self.loop_depth)),
            4 | 5 => format!("CONST[0][{}]", self.rng.below(10)),
            6 => format!("IMM[{}]", self.rng.below(6)),
            _ => format!("CONST[0][ADDR[0].x+{}]", self.rng.below(3)),
        };
        format!("{reg}.{c}{c}{c}{c}")
    }

    /// Flow the JIT may find uniform: registers `TEMP[13..15]` computed from uniform values
    /// (now and then spoiled by an input, a derivative or a divergent branch), IFs on them, and
    /// counted loops left by `BRK`/`BREAKC` and continued by `CONT` under such conditions.
    fn uniform_statement(&mut self) {
        let nested = self.depth < 3;
        match self.rng.below(10) {
            0..=3 => {
                let op = self.rng.pick(&[
                    "ADD", "MUL", "MAD", "FSLT", "FSGE", "USGE", "USLT", "AND", "UADD", "FRC",
                    "MOV", "I2F", "F2U", "UCMP", "MAX", "SEQ",
                ]);
                let n = softgpu_jit::ir::Opcode::from_name(op)
                    .map(|o| o.num_src())
                    .unwrap_or(1);
                let mut srcs: Vec<String> = (0..n).map(|_| self.uniform_src()).collect();
                if self.rng.chance(8) {
                    srcs[0] = self.src();
                }
                let r = if self.rng.chance(15) {
                    8 + self.rng.below(4)
                } else {
                    13 + self.rng.below(3)
                };
                let mask = ["x", "y", "xy", "xyzw", "zw"][self.rng.below(5)];
                let op = if self.rng.chance(4) { "DDX" } else { op };
                let srcs = if op == "DDX" { &srcs[..1] } else { &srcs[..] };
                self.emit(format!("{op} TEMP[{r}].{mask}, {}", srcs.join(", ")));
            }
            4 if self.rng.chance(30) => {
                // A write under a divergent condition spoils the register.
                let s = self.scalar_src();
                let u = self.uniform_src();
                let r = 13 + self.rng.below(3);
                self.emit(format!("IF {s}"));
                self.emit(format!("MOV TEMP[{r}].x, {u}"));
                if self.rng.chance(50) {
                    // The ELSE lanes run after the THEN lanes wrote: the register differs by
                    // then, though the ELSE lanes never wrote it.
                    self.emit("ELSE".into());
                    self.emit(format!("UIF TEMP[{r}].xxxx"));
                    self.alu();
                    self.emit("ENDIF".into());
                }
                self.emit("ENDIF".into());
            }
            4 => {
                // An indirect write into the array with a uniform index: it reaches a register
                // `uniform_src` reads, with a per-lane value.
                let c = ['x', 'y', 'z', 'w'][self.rng.below(4)];
                let v = self.src();
                let (j, u) = (self.rng.below(4), self.uniform_src());
                self.emit(format!("MOV TEMP[{}], {u}", 8 + j));
                self.emit(format!("UARL ADDR[0].x, IMM[0].{c}{c}{c}{c}"));
                self.emit(format!("MOV TEMP[ADDR[0].x+8](1), {v}"));
            }
            5..=6 if nested => {
                let op = if self.rng.chance(50) { "IF" } else { "UIF" };
                let s = self.uniform_src();
                self.if_block(format!("{op} {s}"));
            }
            7..=8 if nested && self.loop_depth < 2 => {
                let ctr = format!("TEMP[{}]", 6 + self.loop_depth);
                let n = ["xxxx", "yyyy", "zzzz", "wwww"][self.rng.below(4)];
                self.loop_head(&ctr, n);
                if self.rng.chance(50) {
                    self.emit(format!("BREAKC {ctr}.yyyy"));
                } else {
                    self.emit(format!("UIF {ctr}.yyyy"));
                    self.emit("BRK".into());
                    self.emit("ENDIF".into());
                }
                self.emit(format!("UADD {ctr}.x, {ctr}.xxxx, IMM[0].yyyy"));
                self.in_loop(|g| {
                    let n = 1 + g.rng.below(5);
                    g.block(n);
                    if g.rng.chance(50) {
                        // Another exit: on a uniform condition, or (a near miss) a divergent one.
                        let s = if g.rng.chance(75) {
                            g.uniform_src()
                        } else {
                            g.scalar_src()
                        };
                        match g.rng.below(3) {
                            0 => g.emit(format!("BREAKC {s}")),
                            k => {
                                g.emit(format!("UIF {s}"));
                                g.emit(if k == 1 { "BRK" } else { "CONT" }.into());
                                g.emit("ENDIF".into());
                            }
                        }
                        let n = g.rng.below(3);
                        g.block(n);
                    }
                });
                self.emit("ENDLOOP".into());
            }
            _ => self.alu(),
        }
    }

    fn statement(&mut self) {
        let nested = self.depth < 3;
        if self.uniform && self.rng.chance(35) {
            self.uniform_statement();
            return;
        }
        if self.repeats && !self.emitted.is_empty() && self.rng.chance(25) {
            let mut line = self.emitted[self.rng.below(self.emitted.len())].clone();
            // Now and then a near repeat: the same operation with `_SAT` toggled.
            if self.rng.chance(30) {
                let (op, rest) = line.split_once(' ').unwrap_or((&line, ""));
                let toggled = match op.strip_suffix("_SAT") {
                    Some(plain) => plain.to_string(),
                    None => format!("{op}_SAT"),
                };
                line = format!("{toggled} {rest}");
            }
            self.emit(line);
            return;
        }
        if self.repeats && self.rng.chance(6) {
            // A branch whose last instruction reads other lanes of a register written inside it:
            // if-conversion must keep it (derivatives, implicit-LOD reads of a unit that is not
            // level-independent, size queries and gathers that take lane 0's operand) or may
            // convert it (implicit-LOD reads of unit 0, explicit-LOD reads anywhere).
            let (a, b) = (self.rng.below(6), self.rng.below(6));
            let cond = self.scalar_src();
            let (x, y) = (self.src(), self.src());
            let reader = match self.rng.below(9) {
                0 => format!("DDX TEMP[{b}], TEMP[{a}].xyxy"),
                1 => format!("DDY_FINE TEMP[{b}].xz, TEMP[{a}].yxyx"),
                2 => format!("TEX TEMP[{b}], TEMP[{a}].xyxy, SAMP[1], 2D"),
                3 => format!("TXB TEMP[{b}], TEMP[{a}].xyxy, SAMP[1], 2D"),
                // Lane 0's level and lane 0's component stand for the quad.
                4 => format!("TXQ TEMP[{b}], TEMP[{a}].xyxy, SAMP[0], 2D"),
                5 => format!("TG4 TEMP[{b}], IN[0], TEMP[{a}].yyyy, SAMP[0], 2D"),
                6 => format!("TXL TEMP[{b}], TEMP[{a}].xyxy, SAMP[1], 2D"),
                7 => format!("TXF TEMP[{b}], TEMP[{a}].xyxy, SAMP[0], 2D"),
                _ => format!("TEX TEMP[{b}], TEMP[{a}].xyxy, SAMP[0], 2D"),
            };
            // A per-lane comparison, so the branch splits quads (random bits are rarely zero).
            let other = self.scalar_src();
            self.emit(format!("FSLT TEMP[12].x, {cond}, {other}"));
            self.emit("UIF TEMP[12].xxxx".into());
            self.emit(format!("ADD TEMP[{a}].xy, {x}, {y}"));
            self.emit(reader);
            self.emit("ENDIF".into());
            return;
        }
        match self.rng.below(100) {
            0..=54 => self.alu(),
            55..=58 => {
                let s = self.scalar_src();
                let op = if self.rng.chance(50) { "ARL" } else { "UARL" };
                self.emit(format!("{op} ADDR[0].x, {s}"));
            }
            59..=62 => self.tex(),
            63..=64 => {
                let s = self.src();
                self.emit(format!("KILL_IF {s}"));
            }
            65..=72 if nested => {
                let op = if self.rng.chance(60) { "IF" } else { "UIF" };
                let s = self.scalar_src();
                self.if_block(format!("{op} {s}"));
            }
            73..=77 if nested && self.loop_depth < 2 => {
                // Subroutines count with their own registers, so a call inside a loop cannot
                // reset the caller's counter.
                let first = match self.sub {
                    Some(k) => 12 + 2 * k,
                    None => 6,
                };
                let ctr = format!("TEMP[{}]", first + self.loop_depth);
                let n = self.rng.below(5);
                self.loop_head(&ctr, ["xxxx", "yyyy", "zzzz", "wwww"][n % 4]);
                self.emit(format!("UIF {ctr}.yyyy"));
                self.emit("BRK".into());
                self.emit("ENDIF".into());
                self.emit(format!("UADD {ctr}.x, {ctr}.xxxx, IMM[0].yyyy"));
                self.in_loop(|g| {
                    let n = 1 + g.rng.below(6);
                    g.block(n);
                });
                self.emit("ENDLOOP".into());
            }
            78..=81 if self.loop_depth > 0 || self.in_switch > 0 => {
                // BRK/CONT, usually under a divergent condition.
                let s = self.scalar_src();
                let op = if self.in_switch > 0 || self.rng.chance(50) {
                    "BRK"
                } else {
                    "CONT"
                };
                if self.rng.chance(75) {
                    self.emit(format!("IF {s}"));
                    self.emit(op.into());
                    self.emit("ENDIF".into());
                } else {
                    self.emit(op.into());
                }
            }
            82..=84 if nested && !self.plain => {
                let s = self.scalar_src();
                self.emit(format!("AND TEMP[5].x, {s}, IMM[0].wwww"));
                self.emit("SWITCH TEMP[5].xxxx".into());
                self.depth += 1;
                self.in_switch += 1;
                for case in ["xxxx", "yyyy", "zzzz"] {
                    if self.rng.chance(70) {
                        self.emit(format!("CASE IMM[0].{case}"));
                        let n = self.rng.below(3);
                        self.block(n);
                        if self.rng.chance(70) {
                            self.emit("BRK".into());
                        }
                    }
                }
                if self.rng.chance(60) {
                    self.emit("DEFAULT".into());
                    let n = self.rng.below(3);
                    self.block(n);
                    self.emit("BRK".into());
                }
                self.in_switch -= 1;
                self.depth -= 1;
                self.emit("ENDSWITCH".into());
            }
            85..=86 if self.sub != Some(1) && self.calls < 4 && !self.plain && !self.uniform => {
                self.calls += 1;
                // Subroutine 0 may call subroutine 1, never the reverse: no recursion.
                let sub = if self.sub == Some(0) {
                    1
                } else {
                    self.rng.below(2)
                };
                if self.rng.chance(50) {
                    self.emit(format!("CAL :SUB{sub}"));
                } else {
                    let s = self.scalar_src();
                    self.emit(format!("CALLNZ {s} :SUB{sub}"));
                }
            }
            87 if self.in_sub || self.depth > 0 => {
                let s = self.scalar_src();
                self.emit(format!("IF {s}"));
                self.emit("RET".into());
                self.emit("ENDIF".into());
            }
            88 if self.depth > 0 => self.emit("KILL".into()),
            _ => self.alu(),
        }
    }
}

/// An immediate of random values; `tiny`: half of them tiny normals, whose products underflow.
pub fn imm_line(rng: &mut Rng, k: usize, tiny: bool) -> String {
    let vals: Vec<String> = (0..4)
        .map(|_| {
            if tiny && rng.chance(50) {
                let exp = 60 + rng.below(10) as u32;
                ((rng.next() as u32 & 0x807f_ffff) | (exp << 23)).to_string()
            } else {
                random_value(rng).to_string()
            }
        })
        .collect();
    format!("IMM[{k}] UINT32 {{{}}}", vals.join(", "))
}

/// A random valid fragment program of the given kind (see [`Gen`]'s flags), its choices drawn
/// from `rng`.
pub fn generate(
    rng: &mut Rng,
    statements: usize,
    plain: bool,
    repeats: bool,
    uniform: bool,
) -> String {
    let mut g = Gen {
        emitted: Vec::new(),
        repeats,
        uniform,
        rng,
        lines: Vec::new(),
        loop_depth: 0,
        depth: 0,
        in_switch: 0,
        in_sub: false,
        sub: None,
        calls: 0,
        plain,
    };
    let n = statements / 2 + g.rng.below(statements);
    g.block(n);
    if plain {
        // Temporaries are otherwise seen only through what reaches an output: copy and select
        // some, bit for bit.
        for _ in 0..3 {
            let (a, b, c) = (g.rng.below(6), g.rng.below(6), g.rng.below(6));
            let line = match g.rng.below(3) {
                0 => format!("MOV OUT[{}], TEMP[{a}]", g.rng.below(2)),
                1 => format!(
                    "UCMP OUT[{}], TEMP[{a}], TEMP[{b}], TEMP[{c}]",
                    g.rng.below(2)
                ),
                _ => format!("XOR OUT[{}], TEMP[{a}], TEMP[{b}]", g.rng.below(2)),
            };
            g.emit(line);
        }
    }
    g.emit("END".into());
    let mut subs = [0usize; 2];
    g.in_sub = true;
    for (k, s) in subs.iter_mut().enumerate().filter(|_| !plain && !uniform) {
        g.sub = Some(k);
        *s = g.lines.len();
        g.emit("BGNSUB".into());
        let n = 1 + g.rng.below(5);
        g.block(n);
        g.emit("ENDSUB".into());
    }
    let mut text = String::from(
        "FRAG\n\
         DCL IN[0..2], GENERIC[0], PERSPECTIVE\n\
         DCL SV[0], FACE\n\
         DCL OUT[0], COLOR\n\
         DCL OUT[1], GENERIC[1]\n\
         DCL SAMP[0]\n\
         DCL SAMP[1]\n\
         DCL SVIEW[0], 2D, FLOAT\n\
         DCL CONST[0][0..9]\n\
         DCL CONST[1][0..3]\n\
         DCL TEMP[0..7]\n\
         DCL TEMP[8..11], ARRAY(1)\n\
         DCL TEMP[12..15]\n\
         DCL ADDR[0]\n\
         IMM[0] UINT32 {0, 1, 2, 3}\n\
         IMM[1] UINT32 {0, 1065353216, 1056964608, 3212836864}\n",
    );
    for k in 2..6 {
        text.push_str(&imm_line(g.rng, k, plain));
        text.push('\n');
    }
    for (i, l) in g.lines.iter().enumerate() {
        let l = l
            .replace(":SUB0", &format!(":{}", subs[0]))
            .replace(":SUB1", &format!(":{}", subs[1]));
        text.push_str(&format!("{i:3}: {l}\n"));
    }
    text
}
