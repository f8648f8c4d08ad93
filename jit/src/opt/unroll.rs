//! Unrolling of loops with a compile-time trip count, and folding of instructions whose sources
//! are all known, as Mesa's NIR does before llvmpipe or lavapipe compile a shader.
//!
//! RetroArch shaders are full of `for (int i = -2; i <= 2; i++)` loops; glslang keeps them as
//! loops and the naga lowering turns each into a `BGNLOOP` with a counter, a compare, an `UIF`
//! and a nested single-trip loop for `continue`. Executed per quad, that control costs as much
//! as the body, and every per-iteration constant (`float(i)`, `exp(-0.25 * float(i * i))`) is
//! recomputed at run time.
//!
//! The pass walks the program once with the set of TEMP components whose value is a known
//! constant (the same in every lane of the quad). A loop whose every `BRK` and `CONT` is reached
//! under known conditions is replaced by its iterations, one after another, with the branches
//! the constants decide dropped; an ALU instruction whose sources are all known is replaced by a
//! `MOV` of its result. Results are computed by running the instruction through the reference
//! interpreter, so they are its bits, flushing and NaN rules included. Everything the pass cannot
//! decide is kept as written, and:
//! - a branch whose condition is not known is kept, and after it only the components both paths
//!   leave equal stay known (the value in the lanes that ran each path);
//! - a loop that cannot be unrolled is kept, with every component it writes forgotten;
//! - inside a kept branch or loop, where lanes of the quad may hold other values, known values
//!   are not substituted into instructions that read other lanes (derivatives, textures);
//! - a write through an indirect TEMP address forgets everything;
//! - a read of a TEMP array element whose ADDR index is known (`UARL` of a known value) and
//!   inside the array becomes a read of that element, so constant arrays indexed by an unrolled
//!   counter fold too; refilling a component with the value it holds is dropped (the naga
//!   lowering refills constant arrays on every trip).
//!
//! Limits: [`MAX_TRIPS`] iterations and [`MAX_LOOP_INSTRUCTIONS`] unrolled instructions per loop,
//! and the whole program may grow by at most [`MAX_GROWTH`] instructions; past them a loop stays a
//! loop. A loop that never ends runs into [`MAX_TRIPS`] and stays a loop, so the instruction
//! budget still stops it at run time. Programs with subroutines are left alone.
//!
//! Work is bounded too: trying to unroll a loop walks its body once per trip, and a loop nested
//! in it is tried again on every trip (and once more when the outer loop stays a loop), so
//! nested loops that do not unroll would cost exponentially in their depth. The instructions
//! walked while some loop is being tried are counted; past [`MAX_TRIAL_STEPS_PER_INSTRUCTION`]
//! per instruction of the program the loop being tried stays a loop and no further loop is
//! tried, so what is left is walked once.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::exec::{NoTextures, QuadIo, QuadShader, ShaderResources};
use crate::interp::Interpreter;
use crate::ir::props::reads_other_lanes;
use crate::ir::structure::{ConstructKind, Structure};
use crate::ir::{
    Declaration, DstOperand, HeaderItem, Immediate, ImmediateType, Instruction, Opcode,
    OpcodeClass, Processor, Program, Register, RegisterFile, SrcOperand,
};

/// Iterations one loop may be unrolled to. Measured: unrolling the `alu_loop` bench's 64-trip
/// ALU-only loop (65 trips with the exit) made it 30% slower — nothing folds there, and the
/// straight code no longer stays in the instruction cache — while 25- and 32-trip loops whose
/// per-trip constants fold run 1.3-2.5x faster.
pub const MAX_TRIPS: usize = 64;

/// Instructions one unrolled loop may produce.
pub const MAX_LOOP_INSTRUCTIONS: usize = 1500;

/// Instructions the whole program may gain from unrolling.
pub const MAX_GROWTH: usize = 4000;

/// Instructions the pass may walk while trying to unroll loops, per instruction of the program
/// plus [`MAX_GROWTH`]: far above what the shaders of the repository and the RetroArch corpora
/// need (a 64-trip loop walks its body 64 times), far below exponential nesting.
pub const MAX_TRIAL_STEPS_PER_INSTRUCTION: usize = 256;

/// Unrolls constant loops and folds constant instructions in place (see the module
/// documentation); returns whether the program changed.
pub fn unroll_loops(program: &mut Program) -> bool {
    unroll_loops_within(program, MAX_LOOP_INSTRUCTIONS, MAX_GROWTH)
}

/// [`unroll_loops`] with other limits: `loop_instructions` per unrolled loop and `growth` for the
/// whole program.
pub fn unroll_loops_within(program: &mut Program, loop_instructions: usize, growth: usize) -> bool {
    unroll_counting_steps(program, loop_instructions, growth).0
}

/// [`unroll_loops_within`], also returning the instructions walked while trying loops.
fn unroll_counting_steps(
    program: &mut Program,
    loop_instructions: usize,
    growth: usize,
) -> (bool, usize) {
    let insts = &program.instructions;
    if super::has_subroutines(insts) {
        return (false, 0);
    }
    let Ok(structure) = Structure::of(insts) else {
        return (false, 0);
    };
    let continuing_switches = continuing_switches(insts, &structure);
    let immediates: Vec<[u32; 4]> = program.immediates().map(Immediate::components).collect();
    let program_immediates = immediates.len();
    let mut unroller = Unroller {
        insts,
        structure,
        continuing_switches,
        arrays: program
            .declarations()
            .filter(|d| d.file == RegisterFile::Temporary)
            .filter_map(|d| Some((d.array_id?, (d.first, d.last))))
            .collect(),
        imm_index: immediates
            .iter()
            .enumerate()
            .map(|(i, v)| (*v, i as u32))
            .collect(),
        immediates,
        folds: HashMap::default(),
        out: Vec::with_capacity(insts.len()),
        limit: insts.len() + growth,
        loop_instructions,
        unrolling: 0,
        changed: false,
        trial_steps: 0,
        max_trial_steps: (insts.len() + growth).saturating_mul(MAX_TRIAL_STEPS_PER_INSTRUCTION),
    };
    let mut known = Known::default();
    let top = unroller.region(0, insts.len(), &mut known, Scope::Top, false, false);
    let steps = unroller.trial_steps;
    if top.is_err() || !unroller.changed {
        return (false, steps);
    }
    let Unroller {
        out, immediates, ..
    } = unroller;
    program.instructions = out;
    for values in &immediates[program_immediates..] {
        program.header.push(HeaderItem::Immediate(Immediate {
            ty: ImmediateType::Uint32,
            values: values.to_vec(),
        }));
    }
    (true, steps)
}

/// Known components of directly addressed TEMP and ADDR registers: (file, register,
/// component) → bits.
type Known = HashMap<(RegisterFile, u32, u8), u32>;

/// An instruction reading `IMM[0..n]` and the values of those immediates.
type FoldKey = (Instruction, Vec<[u32; 4]>);

/// A register the pass follows: a directly addressed TEMP (arrays included: an indirect write
/// forgets everything) or ADDR.
fn trackable(reg: &Register) -> bool {
    matches!(reg.file, RegisterFile::Temporary | RegisterFile::Address)
        && reg.indirect.is_none()
        && reg.dimension.is_none()
        && reg.index >= 0
}

/// Where `BRK` and `CONT` lead from the code being walked.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Outside every loop.
    Top,
    /// In a loop being unrolled: they must be reached under known conditions.
    Unrolling,
    /// In a loop that stays a loop: they are kept.
    Kept,
}

/// How walking a piece of code ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Exit {
    Normal,
    Break,
    Continue,
}

/// The loop being unrolled cannot be (a `BRK`/`CONT` under an unknown condition, a limit).
struct Abort;

/// The `SWITCH`es holding a `CONT` that continues a loop around them (not one nested in the
/// switch), by their instruction: each `CONT` marks the switches between it and its loop.
fn continuing_switches(insts: &[Instruction], structure: &Structure) -> HashSet<usize> {
    let mut found = HashSet::default();
    for (pc, inst) in insts.iter().enumerate() {
        if inst.opcode != Opcode::CONT {
            continue;
        }
        let target = structure.exit_of(pc).expect("CONT continues a loop");
        let mut at = structure.enclosing(pc);
        while let Some(c) = at.filter(|&c| c != target) {
            let construct = structure.construct(c);
            if construct.kind == ConstructKind::Switch {
                found.insert(construct.begin);
            }
            at = construct.parent;
        }
    }
    found
}

struct Unroller<'p> {
    insts: &'p [Instruction],
    structure: Structure,
    /// The `SWITCH`es (by their instruction) holding a `CONT` of a loop around them.
    continuing_switches: HashSet<usize>,
    /// TEMP arrays by id: (first, last) register.
    arrays: HashMap<u32, (u32, u32)>,
    /// Values of every immediate: the program's, then the ones the pass adds.
    immediates: Vec<[u32; 4]>,
    imm_index: HashMap<[u32; 4], u32>,
    /// Folded results by (instruction with immediate sources, immediate values).
    folds: HashMap<FoldKey, Option<[u32; 4]>>,
    out: Vec<Instruction>,
    /// The most instructions `out` may hold while a loop is being unrolled.
    limit: usize,
    /// The most instructions one unrolled loop may produce.
    loop_instructions: usize,
    /// Loops being unrolled around the code being walked.
    unrolling: usize,
    changed: bool,
    /// Instructions walked while some loop was being tried.
    trial_steps: usize,
    /// Past this many trial steps no loop is tried any more.
    max_trial_steps: usize,
}

impl Unroller<'_> {
    /// Walks `insts[start..end]`, emitting into `out`. `divergent`: inside a kept branch of
    /// the innermost loop being unrolled (its `BRK`/`CONT` there abort); `lanes_vary`: inside
    /// any kept branch or loop (lanes may hold different values).
    fn region(
        &mut self,
        start: usize,
        end: usize,
        known: &mut Known,
        scope: Scope,
        divergent: bool,
        lanes_vary: bool,
    ) -> Result<Exit, Abort> {
        let mut i = start;
        while i < end {
            if self.unrolling > 0 {
                self.trial_steps += 1;
                if self.trial_steps > self.max_trial_steps {
                    return Err(Abort);
                }
            }
            let inst = &self.insts[i];
            match inst.opcode {
                Opcode::IF | Opcode::UIF => {
                    let block = self.structure.delimited_by(i).expect("IF opens a block");
                    let block = self.structure.construct(block);
                    let (middle, endif) = (block.else_at, block.end);
                    let then_end = middle.unwrap_or(endif);
                    match self.condition(inst, known) {
                        Some(taken) => {
                            self.changed = true;
                            let (a, b) = match (taken, middle) {
                                (true, _) => (i + 1, then_end),
                                (false, Some(e)) => (e + 1, endif),
                                (false, None) => (endif, endif),
                            };
                            let exit = self.region(a, b, known, scope, divergent, lanes_vary)?;
                            if exit != Exit::Normal {
                                return Ok(exit);
                            }
                        }
                        None => {
                            self.emit(inst.clone())?;
                            let mut else_known = known.clone();
                            self.region(i + 1, then_end, known, scope, true, true)?;
                            if let Some(e) = middle {
                                self.emit(self.insts[e].clone())?;
                                self.region(e + 1, endif, &mut else_known, scope, true, true)?;
                            }
                            self.emit(self.insts[endif].clone())?;
                            self.keep_agreed(i, endif, known, &else_known);
                        }
                    }
                    i = endif + 1;
                    continue;
                }
                Opcode::BGNLOOP => {
                    let endloop = self.end_of(i);
                    self.find_loop(i, endloop, known, lanes_vary)?;
                    i = endloop + 1;
                    continue;
                }
                Opcode::SWITCH => {
                    let endswitch = self.end_of(i);
                    // A CONT in a switch continues the enclosing loop: too much to follow.
                    if scope == Scope::Unrolling && self.continuing_switches.contains(&i) {
                        return Err(Abort);
                    }
                    self.forget_writes(i, endswitch, known);
                    for k in i..=endswitch {
                        self.emit(self.insts[k].clone())?;
                    }
                    i = endswitch + 1;
                    continue;
                }
                Opcode::BRK | Opcode::CONT if scope == Scope::Unrolling => {
                    if divergent {
                        return Err(Abort);
                    }
                    self.changed = true;
                    return Ok(if inst.opcode == Opcode::BRK {
                        Exit::Break
                    } else {
                        Exit::Continue
                    });
                }
                Opcode::BREAKC | Opcode::RET | Opcode::END if scope == Scope::Unrolling => {
                    return Err(Abort);
                }
                _ if inst.opcode.class() == OpcodeClass::Flow => self.emit(inst.clone())?,
                _ => self.instruction(inst, known, lanes_vary)?,
            }
            i += 1;
        }
        Ok(Exit::Normal)
    }

    /// Unrolls the loop `insts[begin..=end]` if it can, else emits it as a loop.
    fn find_loop(
        &mut self,
        begin: usize,
        end: usize,
        known: &mut Known,
        lanes_vary: bool,
    ) -> Result<(), Abort> {
        let mark = (self.out.len(), self.immediates.len(), self.changed);
        let mut trips = known.clone();
        let mut unrolled = false;
        self.unrolling += 1;
        let trips_allowed = if self.trial_steps < self.max_trial_steps {
            MAX_TRIPS
        } else {
            0
        };
        for _ in 0..trips_allowed {
            let exit = self.region(
                begin + 1,
                end,
                &mut trips,
                Scope::Unrolling,
                false,
                lanes_vary,
            );
            if self.out.len() - mark.0 > self.loop_instructions {
                break;
            }
            match exit {
                Ok(Exit::Break) => {
                    unrolled = true;
                    break;
                }
                Ok(_) => {}
                Err(Abort) => break,
            }
        }
        self.unrolling -= 1;
        if unrolled {
            self.changed = true;
            *known = trips;
            return Ok(());
        }
        self.out.truncate(mark.0);
        for values in self.immediates.drain(mark.1..) {
            self.imm_index.remove(&values);
        }
        self.changed = mark.2;
        self.forget_writes(begin, end, known);
        self.emit(self.insts[begin].clone())?;
        let mut inside = known.clone();
        self.region(begin + 1, end, &mut inside, Scope::Kept, false, true)?;
        self.emit(self.insts[end].clone())
    }

    fn emit(&mut self, inst: Instruction) -> Result<(), Abort> {
        // Only unrolled code counts against the limit: kept code is the program's own.
        if self.unrolling > 0 && self.out.len() >= self.limit {
            return Err(Abort);
        }
        self.out.push(inst);
        Ok(())
    }

    /// The closing instruction of the construct instruction `begin` opens.
    fn end_of(&self, begin: usize) -> usize {
        let c = self
            .structure
            .delimited_by(begin)
            .expect("opens a construct");
        self.structure.construct(c).end
    }

    /// Keeps in `then_known` (what the known values were after the `then` arm of the `IF` at
    /// `start`, whose `ENDIF` is `end`) only what `else_known` (after the other arm) agrees on.
    /// Both started equal, and only the arms' writes changed them: when every write is direct,
    /// only the written components are compared, instead of every known one (the walk then stays
    /// linear in the code, not in code times known constants: Mega Bezel's text pass, 29,000
    /// instructions of table lookups, spent 0.3 s here).
    fn keep_agreed(&self, start: usize, end: usize, then_known: &mut Known, else_known: &Known) {
        let arms = &self.insts[start + 1..end];
        let mut written = Vec::new();
        for dst in arms.iter().flat_map(|inst| &inst.dst) {
            if !matches!(
                dst.reg.file,
                RegisterFile::Temporary | RegisterFile::Address
            ) {
                continue;
            }
            if !trackable(&dst.reg) {
                then_known.retain(|k, v| else_known.get(k) == Some(v));
                return;
            }
            for c in (0..4u8).filter(|c| dst.write_mask & (1 << c) != 0) {
                written.push((dst.reg.file, dst.reg.index as u32, c));
            }
        }
        for key in written {
            if then_known.get(&key) != else_known.get(&key) {
                then_known.remove(&key);
            }
        }
    }

    /// Forgets every component `insts[start..=end]` may write.
    fn forget_writes(&self, start: usize, end: usize, known: &mut Known) {
        for inst in &self.insts[start..=end] {
            for dst in &inst.dst {
                self.forget(dst, known);
            }
        }
    }

    fn forget(&self, dst: &DstOperand, known: &mut Known) {
        if !matches!(
            dst.reg.file,
            RegisterFile::Temporary | RegisterFile::Address
        ) {
            return;
        }
        if !trackable(&dst.reg) {
            // An indirect write may land on any register.
            known.clear();
            return;
        }
        for c in 0..4u8 {
            if dst.write_mask & (1 << c) != 0 {
                known.remove(&(dst.reg.file, dst.reg.index as u32, c));
            }
        }
    }

    /// Records the values a write leaves in `dst`'s components.
    fn learn(dst: &DstOperand, values: [u32; 4], known: &mut Known) {
        for c in 0..4u8 {
            if dst.write_mask & (1 << c) != 0 {
                known.insert((dst.reg.file, dst.reg.index as u32, c), values[c as usize]);
            }
        }
    }

    /// Whether `dst`'s components already hold `values` (writing them again changes nothing).
    fn holds(dst: &DstOperand, values: [u32; 4], known: &Known) -> bool {
        (0..4u8).all(|c| {
            dst.write_mask & (1 << c) == 0
                || known.get(&(dst.reg.file, dst.reg.index as u32, c)) == Some(&values[c as usize])
        })
    }

    /// `TEMP[ADDR[a].c + i]` of an array, when the address is known and inside the array, as
    /// the direct register the interpreter would read.
    fn resolve_indirect(&self, reg: &Register, known: &Known) -> Option<Register> {
        let ind = reg.indirect?;
        if reg.file != RegisterFile::Temporary
            || reg.dimension.is_some()
            || ind.file != RegisterFile::Address
        {
            return None;
        }
        let (first, last) = self.arrays.get(&ind.array_id?).copied()?;
        let addr = *known.get(&(RegisterFile::Address, ind.index, ind.component))?;
        let index = i64::from(reg.index) + i64::from(addr as i32);
        (i64::from(first)..=i64::from(last))
            .contains(&index)
            .then(|| Register::new(RegisterFile::Temporary, index as i32))
    }

    /// The values a source reads (after its swizzle, before modifiers), when known.
    fn source_values(&self, src: &SrcOperand, known: &Known) -> Option<[u32; 4]> {
        let reg = &src.reg;
        if reg.indirect.is_some() || reg.dimension.is_some() {
            return None;
        }
        let values = match reg.file {
            RegisterFile::Immediate => *self.immediates.get(usize::try_from(reg.index).ok()?)?,
            RegisterFile::Temporary if trackable(reg) => {
                let index = reg.index as u32;
                let mut v = [0u32; 4];
                for c in 0..4u8 {
                    if src.swizzle.contains(&c) {
                        v[c as usize] = *known.get(&(reg.file, index, c))?;
                    }
                }
                v
            }
            _ => return None,
        };
        Some(src.swizzle.map(|c| values[c as usize]))
    }

    /// An immediate register holding `values`.
    fn immediate(&mut self, values: [u32; 4]) -> Register {
        let index = match self.imm_index.get(&values) {
            Some(&i) => i,
            None => {
                let i = self.immediates.len() as u32;
                self.immediates.push(values);
                self.imm_index.insert(values, i);
                i
            }
        };
        Register::new(RegisterFile::Immediate, index as i32)
    }

    /// The taken direction of an `IF`/`UIF` whose condition is known.
    fn condition(&mut self, inst: &Instruction, known: &Known) -> Option<bool> {
        let src = inst.src.first()?;
        let values = self.source_values(src, known)?;
        // Evaluated by the interpreter itself: IF compares as float (after modifiers and
        // denormal flushing), UIF as integer bits.
        let mut branch = inst.clone();
        branch.src[0] = SrcOperand {
            reg: Register::new(RegisterFile::Immediate, 0),
            swizzle: [0, 1, 2, 3],
            ..*src
        };
        let one = SrcOperand::new(Register::new(RegisterFile::Immediate, 1));
        let out = DstOperand {
            reg: Register::new(RegisterFile::Output, 0),
            write_mask: 1,
        };
        let mov = Instruction::new(Opcode::MOV, vec![out], vec![one]);
        let body = vec![branch, mov, Instruction::new(Opcode::ENDIF, vec![], vec![])];
        let result = run(body, &[values, [1, 1, 1, 1]])?;
        Some(result[0] == 1)
    }

    /// Emits `inst` with known sources substituted, or a `MOV` of its result when every source
    /// is known.
    fn instruction(
        &mut self,
        inst: &Instruction,
        known: &mut Known,
        lanes_vary: bool,
    ) -> Result<(), Abort> {
        let lane_reader = reads_other_lanes(inst.opcode);
        // Known values hold in the lanes running this code; an instruction that reads other
        // lanes inside a kept branch or loop must read their registers (and addresses) as is.
        let substitute = !(lane_reader && lanes_vary);
        let mut inst = inst.clone();
        if substitute {
            for src in &mut inst.src {
                if let Some(direct) = self.resolve_indirect(&src.reg, known) {
                    src.reg = direct;
                    self.changed = true;
                }
            }
        }
        if inst.opcode == Opcode::UARL && inst.dst.len() == 1 && trackable(&inst.dst[0].reg) {
            let src = inst.src[0];
            let values = (!src.negate && !src.absolute)
                .then(|| self.source_values(&src, known))
                .flatten();
            let dst = inst.dst[0];
            if let Some(values) = values {
                if Self::holds(&dst, values, known) {
                    self.changed = true;
                    return Ok(());
                }
                Self::learn(&dst, values, known);
            } else {
                self.forget(&dst, known);
            }
            return self.emit(inst);
        }
        if substitute {
            for s in 0..inst.src.len() {
                let src = inst.src[s];
                if src.reg.file != RegisterFile::Temporary {
                    continue;
                }
                if let Some(values) = self.source_values(&src, known) {
                    inst.src[s].reg = self.immediate(values);
                    inst.src[s].swizzle = [0, 1, 2, 3];
                    self.changed = true;
                }
            }
        }
        if let Some((dst, values)) = self.fold(&inst, lane_reader) {
            if Self::holds(&dst, values, known) {
                // The components already hold these bits (a constant array initialised on
                // every trip): the write is a no-op.
                self.changed = true;
                return Ok(());
            }
            Self::learn(&dst, values, known);
            let plain_copy = inst.opcode == Opcode::MOV
                && !inst.saturate
                && !inst.src[0].negate
                && !inst.src[0].absolute;
            if plain_copy {
                return self.emit(inst);
            }
            // Unwritten components repeat a written one, so `.xxxx` reads of the same value
            // share the immediate.
            let first = (0..4).find(|c| dst.write_mask & (1 << c) != 0).unwrap_or(0);
            let fill = values[first];
            let values: [u32; 4] = std::array::from_fn(|c| {
                if dst.write_mask & (1 << c) != 0 {
                    values[c]
                } else {
                    fill
                }
            });
            let imm = self.immediate(values);
            self.changed = true;
            return self.emit(Instruction::new(
                Opcode::MOV,
                vec![dst],
                vec![SrcOperand::new(imm)],
            ));
        }
        for dst in &inst.dst {
            self.forget(dst, known);
        }
        self.emit(inst)
    }

    /// The result of an ALU instruction with only immediate sources writing one tracked TEMP.
    fn fold(&mut self, inst: &Instruction, lane_reader: bool) -> Option<(DstOperand, [u32; 4])> {
        if inst.opcode.class() != OpcodeClass::Alu
            || lane_reader
            || inst.dst.len() != 1
            || inst.src.is_empty()
            || inst.texture.is_some()
        {
            return None;
        }
        let dst = inst.dst[0];
        if dst.reg.file != RegisterFile::Temporary || !trackable(&dst.reg) {
            return None;
        }
        let mut values = Vec::with_capacity(inst.src.len());
        let mut probe = inst.clone();
        probe.dst[0] = DstOperand {
            reg: Register::new(RegisterFile::Output, 0),
            write_mask: dst.write_mask,
        };
        for (s, src) in inst.src.iter().enumerate() {
            if src.reg.file != RegisterFile::Immediate
                || src.reg.indirect.is_some()
                || src.reg.dimension.is_some()
            {
                return None;
            }
            values.push(*self.immediates.get(usize::try_from(src.reg.index).ok()?)?);
            probe.src[s].reg = Register::new(RegisterFile::Immediate, s as i32);
        }
        let key = (probe, values);
        if let Some(result) = self.folds.get(&key) {
            return result.map(|v| (dst, v));
        }
        let result = run(vec![key.0.clone()], &key.1);
        self.folds.insert(key, result);
        result.map(|v| (dst, v))
    }
}

/// Runs `body` (then `END`) on one quad through the interpreter with `immediates` as
/// `IMM[0..]`; returns `OUT[0]` when all four lanes agree.
fn run(body: Vec<Instruction>, immediates: &[[u32; 4]]) -> Option<[u32; 4]> {
    let mut program = Program::new(Processor::Fragment);
    program
        .header
        .push(HeaderItem::Declaration(Declaration::new(
            RegisterFile::Output,
            0,
            0,
        )));
    for values in immediates {
        program.header.push(HeaderItem::Immediate(Immediate {
            ty: ImmediateType::Uint32,
            values: values.to_vec(),
        }));
    }
    program.instructions = body;
    program
        .instructions
        .push(Instruction::new(Opcode::END, vec![], vec![]));
    let interpreter = Interpreter::new(&program).ok()?;
    let mut outputs = [[[0u32; 4]; 4]];
    let mut io = QuadIo {
        inputs: &[],
        system_values: &[],
        outputs: &mut outputs,
        live: 0xF,
    };
    let resources = ShaderResources {
        constants: &[],
        textures: &NoTextures,
        storage: Default::default(),
    };
    interpreter.shade_quad(&resources, &mut io).ok()?;
    let out = outputs[0];
    let uniform = out.iter().all(|lanes| lanes.iter().all(|&v| v == lanes[0]));
    uniform.then(|| out.map(|lanes| lanes[0]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::text::parse_program;
    use crate::ir::validate::validate;

    /// `depth` loops inside each other, each bounded by a constant buffer value (so none
    /// unrolls), shaped as the naga lowering writes a `for` loop: an outer loop around a
    /// single-trip loop whose unknown `UIF` holds the next loop.
    fn nested_loops(depth: usize) -> Program {
        let mut body = vec!["MOV TEMP[0].x, IMM[0].xxxx".to_string()];
        for _ in 0..depth {
            body.extend(
                [
                    "BGNLOOP :0",
                    "MOV TEMP[3].x, IMM[0].xxxx",
                    "BGNLOOP :0",
                    "ISLT TEMP[1].x, TEMP[0].xxxx, CONST[0][0].xxxx",
                    "UIF TEMP[1].xxxx :0",
                ]
                .map(String::from),
            );
        }
        body.push("ADD TEMP[2].x, TEMP[2].xxxx, IMM[0].yyyy".into());
        for _ in 0..depth {
            body.extend(
                [
                    "BRK",
                    "ELSE :0",
                    "MOV TEMP[3].x, IMM[0].zzzz",
                    "BRK",
                    "ENDIF",
                    "BRK",
                    "ENDLOOP :0",
                    "UIF TEMP[3].xxxx :0",
                    "BRK",
                    "ENDIF",
                    "UADD TEMP[0].x, TEMP[0].xxxx, IMM[0].wwww",
                    "ENDLOOP :0",
                ]
                .map(String::from),
            );
        }
        body.push("MOV OUT[0], TEMP[2].xxxx".into());
        body.push("END".into());
        let mut text = String::from(
            "FRAG\nDCL OUT[0], COLOR\nDCL CONST[0][0]\nDCL TEMP[0..3]\n\
             IMM[0] UINT32 {0, 1065353216, 4294967295, 1}\n",
        );
        for (i, inst) in body.iter().enumerate() {
            text.push_str(&format!("{i}: {inst}\n"));
        }
        let program = parse_program(&text).expect("the test program parses");
        validate(&program).expect("the test program is valid");
        program
    }

    #[test]
    fn trying_nested_loops_walks_a_bounded_number_of_instructions() {
        for depth in [1, 3, 10, 50] {
            let mut program = nested_loops(depth);
            let before = program.clone();
            // Past the bound, each loop being tried stops at its next instruction.
            let slack = program.instructions.len();
            let bound = (program.instructions.len() + MAX_GROWTH) * MAX_TRIAL_STEPS_PER_INSTRUCTION;
            let (changed, steps) =
                unroll_counting_steps(&mut program, MAX_LOOP_INSTRUCTIONS, MAX_GROWTH);
            assert!(
                steps <= bound + slack,
                "depth {depth}: {steps} steps, bound {bound}"
            );
            if !changed {
                assert_eq!(program, before);
            }
            validate(&program).expect("valid after the pass");
        }
        // Three levels try each loop a few times: far below the bound, so small programs
        // never meet it.
        let (_, steps) = unroll_counting_steps(&mut nested_loops(3), MAX_LOOP_INSTRUCTIONS, 0);
        assert!(steps < 2000, "{steps}");
    }
}
