//! Writes inside narrowing branches and loops skip their per-lane blend where no skipping lane
//! reads the old value again (`codegen::unmasked`). These tests run random structured programs
//! over a few reused registers — divergent IF/ELSE nests, loops left by different lanes after
//! different trips, values read after the construct, in the next trip, by a texture lookup or a
//! derivative of the whole quad — on both JIT tiers and the interpreter, and compare every output
//! bit: a write wrongly left unblended leaves a lane a value the interpreter does not have.

use softgpu_jit::codegen::JitShader;
use softgpu_jit::exec::{ExecError, QuadShader, QuadVec4};
use softgpu_jit::interp::Interpreter;
use softgpu_jit::ir::text::parse_program;

mod coord_hash;
mod one_quad;
use coord_hash::CoordHash;
use one_quad::run_quad;
mod splitmix;
use splitmix::Rng;

/// Registers the programs compute in; few, so that branches reuse what others still need.
const TEMPS: usize = 4;

struct Gen<'a> {
    rng: &'a mut Rng,
    lines: Vec<String>,
    /// Open loops (their trip-counter registers, TEMP[4 + depth].x).
    loops: usize,
}

impl Gen<'_> {
    fn reg(&mut self) -> String {
        format!("TEMP[{}]", self.rng.below(TEMPS))
    }

    fn src(&mut self) -> String {
        let base = if self.rng.chance(30) {
            format!("IN[{}]", self.rng.below(4))
        } else {
            self.reg()
        };
        let sw: String = (0..4)
            .map(|_| self.rng.pick(&['x', 'y', 'z', 'w']))
            .collect();
        let neg = if self.rng.chance(20) { "-" } else { "" };
        format!("{neg}{base}.{sw}")
    }

    fn dst(&mut self) -> String {
        let r = self.reg();
        let mask = 1 + self.rng.below(15);
        let m: String = "xyzw"
            .chars()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, c)| c)
            .collect();
        format!("{r}.{m}")
    }

    fn alu(&mut self) {
        let line = match self.rng.below(10) {
            0 => format!("MOV {}, {}", self.dst(), self.src()),
            1 => format!("MUL {}, {}, {}", self.dst(), self.src(), self.src()),
            2 => format!("SUB {}, {}, {}", self.dst(), self.src(), self.src()),
            3 => format!("MAX {}, {}, {}", self.dst(), self.src(), self.src()),
            4 => format!("FLR {}, {}", self.dst(), self.src()),
            5 => format!("DDX {}, {}", self.dst(), self.src()),
            6 => format!("TEX {}, {}, SAMP[0], 2D", self.dst(), self.src()),
            7 => format!("SLT {}, {}, {}", self.dst(), self.src(), self.src()),
            8 => format!("DP2 {}, {}, {}", self.dst(), self.src(), self.src()),
            _ => format!("ADD {}, {}, {}", self.dst(), self.src(), self.src()),
        };
        self.lines.push(line);
    }

    fn block(&mut self, depth: usize, len: usize) {
        for _ in 0..len {
            match self.rng.below(8) {
                0 | 1 if depth < 3 => {
                    let cond = self.src();
                    let op = if self.rng.chance(50) { "IF" } else { "UIF" };
                    self.lines.push(format!("{op} {cond}"));
                    let len = 1 + self.rng.below(4);
                    self.block(depth + 1, len);
                    if self.rng.chance(50) {
                        self.lines.push("ELSE".into());
                        let len = 1 + self.rng.below(4);
                        self.block(depth + 1, len);
                    }
                    self.lines.push("ENDIF".into());
                }
                2 if depth < 3 && self.loops < 2 => {
                    // Lanes leave after 1 + (IN[3] lane value) trips: 1 to 3, differing by lane.
                    let counter = format!("TEMP[{}]", TEMPS + self.loops);
                    self.lines.push(format!("MOV {counter}.x, IMM[0].xxxx"));
                    self.lines.push("BGNLOOP".into());
                    self.loops += 1;
                    self.lines
                        .push(format!("ADD {counter}.x, {counter}.xxxx, IMM[0].yyyy"));
                    let len = 1 + self.rng.below(3);
                    self.block(depth + 1, len);
                    self.lines
                        .push(format!("SLT {counter}.y, IN[3].xxxx, {counter}.xxxx"));
                    self.lines.push(format!("UIF {counter}.yyyy"));
                    self.lines.push("BRK".into());
                    self.lines.push("ENDIF".into());
                    let len = self.rng.below(2);
                    self.block(depth + 1, len);
                    self.loops -= 1;
                    self.lines.push("ENDLOOP".into());
                }
                _ => self.alu(),
            }
        }
    }
}

fn program(rng: &mut Rng) -> String {
    let mut g = Gen {
        rng,
        lines: Vec::new(),
        loops: 0,
    };
    for r in 0..TEMPS {
        g.lines.push(format!("MOV TEMP[{r}], IN[{}].yzwx", r % 4));
    }
    let len = 4 + g.rng.below(6);
    g.block(0, len);
    g.lines.push("ADD TEMP[0], TEMP[0], TEMP[1]".into());
    g.lines.push("ADD TEMP[2], TEMP[2], TEMP[3]".into());
    g.lines.push("MUL OUT[0], TEMP[0], TEMP[2]".into());
    let mut text = format!(
        "FRAG\nDCL IN[0..3], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL SAMP[0]\n\
         DCL SVIEW[0], 2D, FLOAT\nDCL TEMP[0..{}]\nIMM[0] FLT32 {{0.0, 1.0, 2.0, 0.5}}\n",
        TEMPS + 1
    );
    for (i, l) in g
        .lines
        .iter()
        .map(String::as_str)
        .chain(["END"])
        .enumerate()
    {
        text.push_str(&format!("{i:3}: {l}\n"));
    }
    text
}

/// Small values of both signs and zeros, so that conditions differ between lanes; IN[3] holds
/// the loops' trip limits (0, 1 or 2).
fn inputs(rng: &mut Rng) -> Vec<QuadVec4> {
    const VALUES: [f32; 8] = [0.0, 1.0, -1.0, 0.5, 2.0, -0.0, 3.0, -2.5];
    (0..4)
        .map(|reg| {
            std::array::from_fn(|_| {
                std::array::from_fn(|_| {
                    if reg == 3 {
                        (rng.below(3) as f32).to_bits()
                    } else {
                        rng.pick(&VALUES).to_bits()
                    }
                })
            })
        })
        .collect()
}

fn run(shader: &dyn QuadShader, inputs: &[QuadVec4]) -> (Result<u8, ExecError>, QuadVec4) {
    run_quad(
        shader,
        inputs,
        &CoordHash {
            cleared_bits: 0x8000,
        },
    )
}

#[test]
fn unblended_writes_in_divergent_flow_leave_every_output_bit_as_the_interpreters() {
    let mut rng = Rng(2611);
    for _ in 0..400 {
        let text = program(&mut rng);
        let program = parse_program(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let interp = Interpreter::new(&program).expect("the interpreter runs it");
        let tiers = [
            JitShader::compile_optimized(&program).expect("compiles"),
            JitShader::compile_fast_tier(&program).expect("compiles"),
        ];
        for _ in 0..6 {
            let inp = inputs(&mut rng);
            let want = run(&interp, &inp);
            for (t, jit) in tiers.iter().enumerate() {
                let got = run(jit, &inp);
                assert_eq!(
                    got, want,
                    "tier {t} differs from the interpreter\ninputs {inp:x?}\n{text}"
                );
            }
        }
    }
}

/// The hand-made cases: a register the THEN arm reuses as scratch while the lanes of the ELSE
/// arm still need it, one the ELSE arm reuses while the THEN lanes read it after the ENDIF, and
/// one a loop body reuses while the lanes that left read it after the loop.
#[test]
fn registers_the_skipping_lanes_still_read_keep_their_values() {
    let head = "FRAG\nDCL IN[0..3], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL SAMP[0]\n\
                DCL SVIEW[0], 2D, FLOAT\nDCL TEMP[0..3]\nIMM[0] FLT32 {0.0, 1.0, 2.0, 0.5}\n";
    let bodies = [
        // THEN reuses TEMP[1], ELSE reads it.
        "0: MOV TEMP[1], IN[1]\n1: IF IN[0].xxxx\n2: MUL TEMP[1], IN[2], IN[2]\n\
         3: ADD TEMP[0], TEMP[1], IN[3]\n4: ELSE\n5: MOV TEMP[0], TEMP[1]\n6: ENDIF\n\
         7: MOV OUT[0], TEMP[0]\n8: END\n",
        // ELSE reuses TEMP[1], the THEN lanes read it after the ENDIF.
        "0: MOV TEMP[1], IN[1]\n1: IF IN[0].xxxx\n2: MOV TEMP[0], IN[2]\n3: ELSE\n\
         4: MUL TEMP[1], IN[2], IN[3]\n5: MOV TEMP[0], TEMP[1]\n6: ENDIF\n\
         7: ADD OUT[0], TEMP[0], TEMP[1]\n8: END\n",
        // Dead after the ENDIF in every lane: may skip the blend.
        "0: MOV TEMP[1], IN[1]\n1: IF IN[0].xxxx\n2: MUL TEMP[1], IN[2], IN[2]\n\
         3: ADD TEMP[0], TEMP[1], IN[3]\n4: ELSE\n5: MOV TEMP[0], IN[1]\n6: ENDIF\n\
         7: MOV OUT[0], TEMP[0]\n8: END\n",
        // The loop body reuses TEMP[1]; lanes that left earlier read it after the loop.
        "0: MOV TEMP[1], IN[1]\n1: MOV TEMP[2].x, IMM[0].xxxx\n2: BGNLOOP\n\
         3: ADD TEMP[2].x, TEMP[2].xxxx, IMM[0].yyyy\n4: SLT TEMP[2].y, IN[3].xxxx, TEMP[2].xxxx\n\
         5: UIF TEMP[2].yyyy\n6: BRK\n7: ENDIF\n8: MUL TEMP[1], TEMP[1], IMM[0].zzzz\n\
         9: ENDLOOP\n10: MOV OUT[0], TEMP[1]\n11: END\n",
        // A derivative reads TEMP[1] in the lanes that skipped its write.
        "0: MOV TEMP[1], IN[1]\n1: IF IN[0].xxxx\n2: MUL TEMP[1], IN[2], IN[2]\n\
         3: DDX TEMP[0], TEMP[1]\n4: ELSE\n5: MOV TEMP[0], IN[1]\n6: ENDIF\n\
         7: MOV OUT[0], TEMP[0]\n8: END\n",
        // A texture lookup's coordinates in the lanes that skipped their write.
        "0: MOV TEMP[1], IN[1]\n1: IF IN[0].xxxx\n2: MUL TEMP[1], IN[2], IN[2]\n\
         3: TEX TEMP[0], TEMP[1], SAMP[0], 2D\n4: ELSE\n5: MOV TEMP[0], IN[1]\n6: ENDIF\n\
         7: MOV OUT[0], TEMP[0]\n8: END\n",
    ];
    let mut rng = Rng(5);
    for body in bodies {
        let text = format!("{head}{body}");
        let program = parse_program(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let interp = Interpreter::new(&program).expect("the interpreter runs it");
        let jit = JitShader::compile_optimized(&program).expect("compiles");
        for _ in 0..32 {
            let inp = inputs(&mut rng);
            assert_eq!(run(&jit, &inp), run(&interp, &inp), "{text}");
        }
    }
}
