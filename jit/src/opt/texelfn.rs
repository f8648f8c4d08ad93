//! Texel functions: values a fragment program computes from one nearest-filtered texel and
//! uniforms alone, hoisted into a pre-pass that computes them once per texel.
//!
//! crt-lottes linearises every tap, `pow(texture(Source, p).rgb, 2.4)` behind the sRGB curve's
//! branches: at 1080p from a 320x240 frame each texel goes through the curve more than a
//! thousand times per frame, a few hundred thousand times would do. Where a program reads a unit
//! that is sampled with nearest filtering at one level, the texel a lane receives depends on its
//! coordinates only, so a function of that texel and of uniforms (immediates, constant buffers)
//! can be tabulated: a pre-pass renders, for every texel of the source texture, the function's
//! values into a float texture of the same size (the *derived* texture), and the program samples
//! that texture with the same instruction, coordinates and sampler state instead. The same
//! coordinates select the same texel index in a texture of the same size and wrap mode, and the
//! pre-pass runs the same instructions on the same bits, so every value is bit for bit what the
//! program computed — with one exception the caller must check each frame: a lookup outside a
//! `CLAMP_TO_BORDER` texture reads the border (transparent black) from the derived texture too,
//! which is right only when the function maps a zero texel to zero.
//!
//! The analysis numbers values as [`super::lvn`] does, per register component, with numbers
//! that do not depend on where a value was computed: a value is *uniform* (a function of
//! immediates and constants), *of site s* (a function of texture instruction s's result and
//! uniforms), or anything else. A component-wise or scalar ALU instruction whose sources are
//! all uniform or of one site s computes a value of site s; it is part of s's *slice*, which the
//! pre-pass takes over. The values of s's slice that anything else reads — another site's
//! slice, an output, a texture coordinate, a branch condition — *escape*: the pre-pass writes
//! them (at most four per derived texture) and the program copies them from the derived lookup
//! where it computed them; the rest of the slice is removed.
//!
//! The program must be straight code outside `IF`/`UIF` branches. After a branch on a uniform
//! value (every lane takes the same side) a register holds a select on the condition, which the
//! pre-pass computes as `UCMP`, unless a site inside the branch is involved (its derived lookup
//! may not have run); after a branch on anything else, either side's value lane by lane, which
//! escapes. Inside a branch on anything else, the lanes that do not take it keep the values they
//! held, and derivatives and implicit levels of detail read them there: the site values held
//! when such a branch begins, in the registers its first side's derivatives and texture
//! instructions read, escape (on the `ELSE` side, what the other lanes hold differs from what
//! that side leaves, so it escapes at the `ENDIF`). An indirect read of a
//! temporary array reads any value in it, an indirect write may change any. Programs with
//! loops, subroutines, or indirect access to temporaries outside declared arrays are left
//! alone.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::ir::props::{self, shape, Shape};
use crate::ir::structure::Structure;
use crate::ir::{
    Declaration, DstOperand, HeaderItem, Immediate, ImmediateType, Instruction, Opcode,
    OpcodeClass, Processor, Program, Register, RegisterFile, SamplerViewDecl, SrcOperand,
    TextureTarget,
};

/// A function of one texel hoisted out of a program by [`hoist_texel_functions`].
#[derive(Clone, Debug)]
pub struct TexelFunction {
    /// The unit whose texels the function reads (sampled with nearest filtering, one level).
    pub source_unit: u32,
    /// The unit the program now reads the function's values from: a float texture of the
    /// source's size, sampled with the source's sampler state.
    pub derived_unit: u32,
    /// How many channels of the derived texture the program reads (1 to 4).
    pub channels: usize,
    /// How many texture instructions of the program read the derived texture: the pre-pass
    /// pays when the source has fewer texels than that many times the pixels drawn.
    pub lookups: usize,
    /// The pre-pass: a fragment program that writes to `COLOR0` the function's values for the
    /// texel of the source unit at its pixel (`TXF` at the integer fragment coordinate), so a
    /// full-screen draw into a target of the source's size renders the derived texture. It
    /// reads the program's constant buffers, bound as for the program.
    pub program: Program,
}

/// Least cost ([`props::cost`]) a site's slice must have to be hoisted: one
/// transcendental function or eight simple instructions per lookup.
pub const MIN_SLICE_COST: u32 = props::HEAVY_COST;

/// Most derived textures one program gets.
pub const MAX_DERIVED_TEXTURES: usize = 4;

/// Most instructions a pre-pass program may have.
const MAX_PREPASS_NODES: usize = 4096;

/// A value, independent of the register and instruction that hold or compute it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Node {
    /// Channel `c` of the texel a site reads.
    Texel(u8),
    /// Immediate bits.
    Imm(u32),
    /// `CONST[dimension][index]` component (dimension -1 when none).
    Const(i32, i32, u8),
    /// An instruction applied to one component of each source: opcode, saturate, and per
    /// source negate, absolute and the source's node.
    Op(Opcode, bool, Vec<(bool, bool, u32)>),
}

/// What a register component holds, as far as the analysis tells. A temporary nothing has
/// written holds zero (executors clear the register file for every quad).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Value {
    /// A function of immediates and constants: node.
    Uniform(u32),
    /// A function of one site's texel and uniforms: definition index.
    Site(usize),
    /// Anything else.
    Other,
}

/// Where a value of a site's slice is defined, and what it is.
#[derive(Clone, Debug)]
struct Def {
    site: usize,
    node: u32,
    /// The register component it is written to.
    reg: i32,
    comp: u8,
    /// The definitions of the site's values its instruction reads.
    operands: Vec<usize>,
    /// Whether the program may keep computing it from its operands (a cheap instruction:
    /// not a texture lookup, a branch merge or a transcendental function).
    recomputable: bool,
}

/// A texture instruction whose texel a slice may start from.
#[derive(Clone, Copy, Debug)]
struct Site {
    inst: usize,
    unit: u32,
    /// How many branches enclose it.
    depth: usize,
    /// Sum of the costs of the slice's instructions.
    cost: u32,
}

/// What some register components held (absent: never written, i.e. zero).
type Held = HashMap<(i32, u8), Option<Value>>;

/// A branch being walked: its condition (None when it differs between lanes), what the
/// components written in its current side held before the branch, and after its `ELSE` the
/// first side's (the components it wrote: their values at the `ELSE`, and before the branch).
/// Only written components are kept, so that a branch costs what it writes, not the size of the
/// whole state (Mega Bezel's text pass has 3,265 branches and thousands of live components).
#[derive(Default)]
struct OpenBranch {
    cond: Option<u32>,
    undo: Held,
    first_side: Option<(Held, Held)>,
}

#[derive(Default)]
struct Analysis {
    /// The TEMP range of each declared array.
    arrays: HashMap<u32, (u32, u32)>,
    /// The node of zero bits (what unwritten temporaries hold).
    zero: u32,
    nodes: Vec<Node>,
    node_ids: HashMap<Node, u32>,
    immediates: Vec<[u32; 4]>,
    state: HashMap<(i32, u8), Value>,
    defs: Vec<Def>,
    sites: Vec<Site>,
    /// Instruction index → slice definitions it makes (component, def).
    inst_defs: BTreeMap<usize, Vec<(u8, usize)>>,
    /// `ENDIF` index → definitions made by merging the branch's sides.
    merge_defs: BTreeMap<usize, Vec<usize>>,
    escaping: HashSet<usize>,
    /// The branches enclosing the instruction being visited, innermost last.
    open: Vec<OpenBranch>,
}

impl Analysis {
    /// Sets what a component holds, remembering for the innermost open branch what it held
    /// before.
    fn set(&mut self, key: (i32, u8), value: Value) {
        let previous = self.state.get(&key).copied();
        if let Some(branch) = self.open.last_mut() {
            branch.undo.entry(key).or_insert(previous);
        }
        self.state.insert(key, value);
    }

    /// Puts back what `held` says the components held (absent: unwritten).
    fn restore(&mut self, held: &Held) {
        for (&key, &value) in held {
            match value {
                Some(v) => self.state.insert(key, v),
                None => self.state.remove(&key),
            };
        }
    }

    /// The components `keys` as `state` holds them now (absent: unwritten).
    fn current(&self, keys: impl Iterator<Item = (i32, u8)>) -> Held {
        keys.map(|k| (k, self.state.get(&k).copied())).collect()
    }

    fn intern(&mut self, node: Node) -> u32 {
        if let Some(&id) = self.node_ids.get(&node) {
            return id;
        }
        let id = self.nodes.len() as u32;
        self.nodes.push(node.clone());
        self.node_ids.insert(node, id);
        id
    }

    fn define(&mut self, site: usize, node: u32, reg: i32, comp: u8) -> usize {
        self.defs.push(Def {
            site,
            node,
            reg,
            comp,
            operands: Vec::new(),
            recomputable: false,
        });
        self.defs.len() - 1
    }

    /// The value a source component reads; None for anything that is neither uniform nor of a
    /// site (inputs, system values, unknown temporaries).
    fn read(&mut self, src: &SrcOperand, comp: u8) -> Option<Value> {
        let reg = &src.reg;
        let c = src.swizzle[comp as usize];
        if reg.indirect.is_some() {
            return None;
        }
        match reg.file {
            RegisterFile::Temporary => match self.held(&self.state, (reg.index, c)) {
                Value::Other => None,
                v => Some(v),
            },
            RegisterFile::Immediate => {
                let bits = self.immediates.get(reg.index as usize)?[c as usize];
                Some(Value::Uniform(self.intern(Node::Imm(bits))))
            }
            RegisterFile::Constant => {
                let dim = match reg.dimension {
                    None => -1,
                    Some(d) if d.indirect.is_none() => d.index,
                    Some(_) => return None,
                };
                Some(Value::Uniform(self.intern(Node::Const(dim, reg.index, c))))
            }
            _ => None,
        }
    }

    /// Marks the site values an instruction outside every slice reads as escaping.
    fn escape_reads(&mut self, inst: &Instruction) {
        let comps: Vec<u8> = match shape(inst.opcode) {
            Shape::Componentwise => (0..4u8)
                .filter(|c| props::written_mask(inst) & (1 << c) != 0)
                .collect(),
            Shape::Scalar => vec![0],
            Shape::Vector => (0..4).collect(),
        };
        for src in &inst.src {
            if src.reg.file != RegisterFile::Temporary {
                continue;
            }
            if src.reg.indirect.is_some() {
                // Any component of any register of the array.
                for index in self.temps_reached(&src.reg) {
                    for c in 0..4 {
                        if let Some(Value::Site(def)) = self.state.get(&(index, c)) {
                            self.escaping.insert(*def);
                        }
                    }
                }
                continue;
            }
            for &c in &comps {
                let key = (src.reg.index, src.swizzle[c as usize]);
                if let Some(Value::Site(def)) = self.state.get(&key) {
                    self.escaping.insert(*def);
                }
            }
        }
        if let Some(t) = &inst.texture {
            for o in t
                .offsets
                .iter()
                .filter(|o| o.reg.file == RegisterFile::Temporary)
            {
                for c in o.swizzle {
                    if let Some(Value::Site(def)) = self.state.get(&(o.reg.index, c)) {
                        self.escaping.insert(*def);
                    }
                }
            }
        }
    }

    /// The node of a uniform or site value.
    fn node_of(&self, value: Value) -> Option<u32> {
        match value {
            Value::Uniform(n) => Some(n),
            Value::Site(d) => Some(self.defs[d].node),
            Value::Other => None,
        }
    }

    /// What a register component holds in `state`.
    fn held(&self, state: &HashMap<(i32, u8), Value>, key: (i32, u8)) -> Value {
        state
            .get(&key)
            .copied()
            .unwrap_or(Value::Uniform(self.zero))
    }

    fn forget_writes(&mut self, inst: &Instruction) {
        for d in inst
            .dst
            .iter()
            .filter(|d| d.reg.file == RegisterFile::Temporary)
        {
            for index in self.temps_reached(&d.reg) {
                for c in (0..4u8).filter(|c| d.write_mask & (1 << c) != 0) {
                    self.set((index, c), Value::Other);
                }
            }
        }
    }

    /// The temporaries an operand may reach: its own, or every register of the array an
    /// indirect access names (programs with other indirect accesses are not analysed).
    fn temps_reached(&self, reg: &Register) -> Vec<i32> {
        match reg.indirect {
            None => vec![reg.index],
            Some(ind) => {
                let range = ind.array_id.and_then(|id| self.arrays.get(&id));
                range.map_or_else(Vec::new, |&(first, last)| {
                    (first as i32..=last as i32).collect()
                })
            }
        }
    }

    /// A texture instruction that may start a slice: its unit when it qualifies.
    fn site_unit(inst: &Instruction, nearest_units: u64) -> Option<u32> {
        use Opcode::*;
        if !matches!(
            inst.opcode,
            TEX | TXB | TXL | TXP | TXD | TEX2 | TXB2 | TXL2
        ) || inst.saturate
            || inst.texture.as_ref()?.target != TextureTarget::Tex2D
        {
            return None;
        }
        let [dst] = inst.dst.as_slice() else {
            return None;
        };
        if dst.reg.file != RegisterFile::Temporary {
            return None;
        }
        let sampler = inst
            .src
            .iter()
            .find(|s| s.reg.file == RegisterFile::Sampler)?;
        let unit = sampler.reg.index;
        (sampler.reg.indirect.is_none()
            && (0..64).contains(&unit)
            && nearest_units & (1 << unit) != 0)
            .then_some(unit as u32)
    }

    fn visit(&mut self, index: usize, inst: &Instruction, nearest_units: u64, depth: usize) {
        if let Some(unit) = Self::site_unit(inst, nearest_units) {
            self.escape_reads(inst);
            let site = self.sites.len();
            self.sites.push(Site {
                inst: index,
                unit,
                depth,
                cost: 0,
            });
            let dst = inst.dst[0];
            let mut made = Vec::new();
            for c in (0..4u8).filter(|c| dst.write_mask & (1 << c) != 0) {
                let node = self.intern(Node::Texel(c));
                let def = self.define(site, node, dst.reg.index, c);
                made.push((c, def));
                self.set((dst.reg.index, c), Value::Site(def));
            }
            self.inst_defs.insert(index, made);
            return;
        }
        let sliceable = inst.opcode.class() == OpcodeClass::Alu
            && matches!(shape(inst.opcode), Shape::Componentwise | Shape::Scalar)
            && inst.texture.is_none()
            && inst.dst.len() == 1
            && inst.dst[0].reg.file == RegisterFile::Temporary
            && inst.dst[0].reg.indirect.is_none()
            && inst.src.iter().all(|s| s.reg.indirect.is_none());
        if !sliceable {
            self.escape_reads(inst);
            self.forget_writes(inst);
            return;
        }
        let dst = inst.dst[0];
        let plain_mov = inst.opcode == Opcode::MOV
            && !inst.saturate
            && !inst.src[0].negate
            && !inst.src[0].absolute;
        let mut results = Vec::new();
        let mut made = Vec::new();
        let mut costed = false;
        for c in (0..4u8).filter(|c| dst.write_mask & (1 << c) != 0) {
            let lane = if shape(inst.opcode) == Shape::Scalar {
                0
            } else {
                c
            };
            let values: Vec<Option<Value>> = inst.src.iter().map(|s| self.read(s, lane)).collect();
            let sites: HashSet<usize> = values
                .iter()
                .filter_map(|v| match v {
                    Some(Value::Site(d)) => Some(self.defs[*d].site),
                    _ => None,
                })
                .collect();
            if values.iter().any(Option::is_none) || sites.len() > 1 {
                for v in values.iter().flatten() {
                    if let Value::Site(d) = v {
                        self.escaping.insert(*d);
                    }
                }
                results.push((c, None));
                continue;
            }
            let nodes: Vec<u32> = values
                .iter()
                .flatten()
                .filter_map(|&v| self.node_of(v))
                .collect();
            let node = if plain_mov {
                nodes[0]
            } else {
                let sources = inst
                    .src
                    .iter()
                    .zip(nodes)
                    .map(|(s, n)| (s.negate, s.absolute, n))
                    .collect();
                self.intern(Node::Op(inst.opcode, inst.saturate, sources))
            };
            let value = match sites.into_iter().next() {
                None => Value::Uniform(node),
                Some(site) => {
                    if !costed {
                        self.sites[site].cost += props::cost(inst.opcode);
                        costed = true;
                    }
                    let def = self.define(site, node, dst.reg.index, c);
                    self.defs[def].operands = values
                        .iter()
                        .filter_map(|v| match v {
                            Some(Value::Site(d)) => Some(*d),
                            _ => None,
                        })
                        .collect();
                    self.defs[def].recomputable = !props::is_heavy(inst.opcode);
                    made.push((c, def));
                    Value::Site(def)
                }
            };
            results.push((c, Some(value)));
        }
        for (c, value) in results {
            self.set((dst.reg.index, c), value.unwrap_or(Value::Other));
        }
        if !made.is_empty() {
            self.inst_defs.insert(index, made);
        }
    }

    /// The state after a branch on `cond` whose sides ended in `taken` and `skipped`, with the
    /// merged site values defined at the `ENDIF` at `index`. After a branch on a condition
    /// that differs between lanes, a register its sides leave differently holds either value
    /// lane by lane.
    fn merge(
        &mut self,
        index: usize,
        cond: Option<u32>,
        taken: HashMap<(i32, u8), Value>,
        skipped: HashMap<(i32, u8), Value>,
        keys: Vec<(i32, u8)>,
        depth: usize,
    ) {
        let mut merged = HashMap::new();
        let mut made = Vec::new();
        for key in keys {
            let (a, b) = (self.held(&taken, key), self.held(&skipped, key));
            if a == b {
                merged.insert(key, a);
                continue;
            }
            let (a, b) = (
                Some(a).filter(|v| *v != Value::Other),
                Some(b).filter(|v| *v != Value::Other),
            );
            let site_of = |v: Option<Value>, defs: &[Def]| match v {
                Some(Value::Site(d)) => Some(defs[d].site),
                _ => None,
            };
            let sites: HashSet<usize> = [site_of(a, &self.defs), site_of(b, &self.defs)]
                .into_iter()
                .flatten()
                .collect();
            // A site inside the branch may not have run: its derived lookup neither.
            let inside = sites.iter().any(|&s| self.sites[s].depth > depth);
            let nodes = (
                a.and_then(|v| self.node_of(v)),
                b.and_then(|v| self.node_of(v)),
            );
            let (Some(a_node), Some(b_node), Some(cond), false) = (nodes.0, nodes.1, cond, inside)
            else {
                // What the register holds after the branch is unknown on one side: the site
                // values it may hold are read by something outside their slices.
                self.escape_values([a, b]);
                merged.insert(key, Value::Other);
                continue;
            };
            if sites.len() > 1 {
                self.escape_values([a, b]);
                merged.insert(key, Value::Other);
                continue;
            }
            let (a, b) = (a_node, b_node);
            let sources = vec![(false, false, cond), (false, false, a), (false, false, b)];
            let node = self.intern(Node::Op(Opcode::UCMP, false, sources));
            let value = match sites.into_iter().next() {
                None => Value::Uniform(node),
                Some(site) => {
                    self.sites[site].cost += 1;
                    let def = self.define(site, node, key.0, key.1);
                    made.push(def);
                    Value::Site(def)
                }
            };
            merged.insert(key, value);
        }
        for (key, value) in merged {
            self.set(key, value);
        }
        if !made.is_empty() {
            self.merge_defs.insert(index, made);
        }
    }

    /// Marks the site values `state` holds in `registers` as escaping.
    fn escape_held(&mut self, registers: &HashSet<(i32, u8)>) {
        for key in registers {
            if let Some(&Value::Site(d)) = self.state.get(key) {
                self.escaping.insert(d);
            }
        }
    }

    /// The temporary components that instructions reading other lanes of the quad
    /// (derivatives, texture instructions) read in `insts[first..end]`, nested branches
    /// included; `crossing` lists those instructions' indices in order.
    fn lane_crossing_reads(
        &self,
        insts: &[Instruction],
        crossing: &[usize],
        (first, end): (usize, usize),
    ) -> HashSet<(i32, u8)> {
        let mut read = HashSet::new();
        let from = crossing.partition_point(|&pc| pc < first);
        let to = crossing.partition_point(|&pc| pc < end);
        for &pc in &crossing[from..to] {
            for src in insts[pc]
                .src
                .iter()
                .filter(|s| s.reg.file == RegisterFile::Temporary)
            {
                for index in self.temps_reached(&src.reg) {
                    read.extend((0..4).map(|c| (index, c)));
                }
            }
        }
        read
    }

    fn escape_values(&mut self, values: [Option<Value>; 2]) {
        for v in values.into_iter().flatten() {
            if let Value::Site(d) = v {
                self.escaping.insert(d);
            }
        }
    }

    /// The branch condition node of an `IF`/`UIF` when it is uniform: the bits `UCMP` tests.
    fn uniform_condition(&mut self, inst: &Instruction) -> Option<u32> {
        let src = inst.src.first()?;
        if src.negate || src.absolute {
            return None;
        }
        let Some(Value::Uniform(n)) = self.read(src, 0) else {
            return None;
        };
        Some(match inst.opcode {
            Opcode::UIF => n,
            // IF takes the branch when the float is not equal to zero (NaN included): FSNE.
            _ => {
                let zero = self.intern(Node::Imm(0));
                self.intern(Node::Op(
                    Opcode::FSNE,
                    false,
                    vec![(false, false, n), (false, false, zero)],
                ))
            }
        })
    }
}

/// Hoists functions of nearest-filtered texels out of `program` (see the module
/// documentation). `nearest_units` has bit `n` set when unit `n` is sampled with nearest
/// filtering at one level (a texel that depends on the lane's coordinates only). Returns the
/// pre-passes whose derived textures the rewritten program now samples, none when nothing pays.
pub fn hoist_texel_functions(program: &mut Program, nearest_units: u64) -> Vec<TexelFunction> {
    if program.processor != Processor::Fragment || nearest_units == 0 {
        return Vec::new();
    }
    let arrays: HashMap<u32, (u32, u32)> = program
        .declarations()
        .filter(|d| d.file == RegisterFile::Temporary)
        .filter_map(|d| Some((d.array_id?, (d.first, d.last))))
        .collect();
    // Indirect access to temporaries outside a declared array, or indexed by a temporary.
    let unbounded = program.instructions.iter().any(|i| {
        let regs = i
            .src
            .iter()
            .map(|s| s.reg)
            .chain(i.dst.iter().map(|d| d.reg));
        regs.into_iter().any(|r| {
            let outside_arrays = r.file == RegisterFile::Temporary
                && r.indirect
                    .is_some_and(|ind| ind.array_id.is_none_or(|id| !arrays.contains_key(&id)));
            outside_arrays
                || r.indirect
                    .is_some_and(|ind| ind.file == RegisterFile::Temporary)
        })
    });
    if unbounded {
        return Vec::new();
    }
    let Ok(structure) = Structure::of(&program.instructions) else {
        return Vec::new();
    };
    // The instructions that read other lanes of the quad, in order.
    let crossing: Vec<usize> = (0..program.instructions.len())
        .filter(|&pc| props::reads_other_lanes(program.instructions[pc].opcode))
        .collect();
    let mut analysis = Analysis {
        immediates: program.immediates().map(Immediate::components).collect(),
        arrays,
        ..Analysis::default()
    };
    analysis.zero = analysis.intern(Node::Imm(0));
    for (index, inst) in program.instructions.iter().enumerate() {
        match inst.opcode {
            Opcode::IF | Opcode::UIF => {
                let cond = analysis.uniform_condition(inst);
                if cond.is_none() {
                    analysis.escape_reads(inst);
                    // Inside, lanes that do not take the branch keep what they hold now, and
                    // derivatives and implicit levels of detail read them.
                    let branch = structure
                        .construct(structure.delimited_by(index).expect("IF opens a branch"));
                    let first_side = (index + 1, branch.else_at.unwrap_or(branch.end));
                    let read =
                        analysis.lane_crossing_reads(&program.instructions, &crossing, first_side);
                    analysis.escape_held(&read);
                }
                analysis.open.push(OpenBranch {
                    cond,
                    ..OpenBranch::default()
                });
            }
            Opcode::ELSE => {
                let Some(open) = analysis.open.last_mut() else {
                    return Vec::new();
                };
                // The lanes that took the first side keep its values through the second; a
                // value they hold there that the second side reads in other lanes escapes at the
                // ENDIF (the second side's value differs from it).
                let before = std::mem::take(&mut open.undo);
                let after = analysis.current(before.keys().copied());
                analysis.restore(&before);
                if let Some(open) = analysis.open.last_mut() {
                    open.first_side = Some((after, before));
                }
            }
            Opcode::ENDIF => {
                let Some(open) = analysis.open.pop() else {
                    return Vec::new();
                };
                // Both sides' values of every component either side wrote; the others hold
                // what they held before the branch on both.
                let (first, second, before) = match open.first_side {
                    Some((first_after, first_before)) => {
                        let mut before = open.undo;
                        for (k, v) in first_before {
                            before.entry(k).or_insert(v);
                        }
                        // A component only one side wrote holds its old value on the other.
                        let mut first = before.clone();
                        first.extend(first_after);
                        let second = analysis.current(before.keys().copied());
                        (first, second, before)
                    }
                    None => {
                        let taken = analysis.current(open.undo.keys().copied());
                        (taken, open.undo.clone(), open.undo)
                    }
                };
                let present = |held: Held| -> HashMap<(i32, u8), Value> {
                    held.into_iter()
                        .filter_map(|(k, v)| v.map(|v| (k, v)))
                        .collect()
                };
                // The enclosing branch's side wrote these components too (the merge's values
                // replace them), so it remembers what they held before this branch.
                if let Some(outer) = analysis.open.last_mut() {
                    for (&k, &v) in &before {
                        outer.undo.entry(k).or_insert(v);
                    }
                }
                let mut keys: Vec<(i32, u8)> = before.keys().copied().collect();
                keys.sort_unstable();
                analysis.merge(
                    index,
                    open.cond,
                    present(first),
                    present(second),
                    keys,
                    analysis.open.len(),
                );
            }
            Opcode::END | Opcode::NOP => {}
            _ if inst.opcode.class() == OpcodeClass::Flow => return Vec::new(),
            _ => {
                let depth = analysis.open.len();
                analysis.visit(index, inst, nearest_units, depth)
            }
        }
    }
    if !analysis.open.is_empty() {
        return Vec::new();
    }
    rewrite(program, &analysis)
}

/// A group of sites of one unit sharing a derived texture.
struct Group {
    unit: u32,
    /// How many sites read it.
    lookups: usize,
    /// The escaping nodes, one channel each.
    channels: Vec<u32>,
    derived_unit: u32,
}

/// The values each site's derived texture must hold, in order of definition; the definitions
/// the program copies from derived lookups; and those of escaping values the program keeps
/// computing itself.
///
/// The cut between pre-pass and program moves back over cheap instructions (not texture
/// lookups, branch merges or transcendental functions) where that does not add values to the
/// site's set: always with `sink_all` — a tap weighted and summed after its curve then escapes
/// as the curve, which every tap through the same curve shares, so one derived texture serves
/// them all — else only for sites with more escaping values than a texture holds, which may
/// fit once the values computed from their other escaping values are recomputed.
fn escapes(
    analysis: &Analysis,
    sink_all: bool,
) -> (Vec<Vec<u32>>, BTreeSet<usize>, HashSet<usize>) {
    let mut cut: BTreeSet<usize> = analysis.escaping.iter().copied().collect();
    let mut kept: HashSet<usize> = HashSet::new();
    let nodes_of = |cut: &BTreeSet<usize>, site: usize| -> HashSet<u32> {
        cut.iter()
            .map(|&d| &analysis.defs[d])
            .filter(|def| def.site == site)
            .map(|def| def.node)
            .collect()
    };
    let mut changed = true;
    while changed {
        changed = false;
        let candidates: Vec<usize> = cut.iter().rev().copied().collect();
        for d in candidates {
            let def = &analysis.defs[d];
            if !def.recomputable || !cut.contains(&d) {
                continue;
            }
            let before = nodes_of(&cut, def.site).len();
            let mut trial = cut.clone();
            trial.remove(&d);
            trial.extend(def.operands.iter().filter(|o| !kept.contains(o)));
            if nodes_of(&trial, def.site).len() <= before && (sink_all || before > 4) {
                cut = trial;
                kept.insert(d);
                changed = true;
            }
        }
    }
    let mut per_site: Vec<Vec<u32>> = vec![Vec::new(); analysis.sites.len()];
    for &d in &cut {
        let def = &analysis.defs[d];
        if !per_site[def.site].contains(&def.node) {
            per_site[def.site].push(def.node);
        }
    }
    (per_site, cut, kept)
}

/// How the hoisted sites share derived textures.
struct Plan {
    groups: Vec<Group>,
    /// Per site, its group when it is hoisted.
    site_group: Vec<Option<usize>>,
    /// Definitions the program copies from derived lookups ([`escapes`]).
    copied: BTreeSet<usize>,
    /// Escaping definitions the program keeps computing ([`escapes`]).
    kept: HashSet<usize>,
}

impl Plan {
    /// Groups the sites whose slices pay and whose values fit, in program order.
    fn new(analysis: &Analysis, first_unit: u32, sink_all: bool) -> Plan {
        let (escapes, copied, kept) = escapes(analysis, sink_all);
        let mut groups: Vec<Group> = Vec::new();
        let mut site_group: Vec<Option<usize>> = vec![None; analysis.sites.len()];
        for (s, site) in analysis.sites.iter().enumerate() {
            let nodes = &escapes[s];
            if nodes.is_empty() || nodes.len() > 4 || site.cost < MIN_SLICE_COST {
                continue;
            }
            let fits = |g: &Group| {
                let new = nodes.iter().filter(|n| !g.channels.contains(n)).count();
                g.unit == site.unit && g.channels.len() + new <= 4
            };
            let g = match groups.iter().position(fits) {
                Some(g) => g,
                None if groups.len() < MAX_DERIVED_TEXTURES
                    && first_unit + (groups.len() as u32) < 64 =>
                {
                    groups.push(Group {
                        unit: site.unit,
                        lookups: 0,
                        channels: Vec::new(),
                        derived_unit: first_unit + groups.len() as u32,
                    });
                    groups.len() - 1
                }
                None => continue,
            };
            for &n in nodes {
                if !groups[g].channels.contains(&n) {
                    groups[g].channels.push(n);
                }
            }
            groups[g].lookups += 1;
            site_group[s] = Some(g);
        }
        Plan {
            groups,
            site_group,
            copied,
            kept,
        }
    }

    /// Hoisted sites first, then fewer pre-passes, then less recomputation.
    fn rank(&self) -> (usize, std::cmp::Reverse<usize>, std::cmp::Reverse<usize>) {
        let hoisted = self.site_group.iter().flatten().count();
        (
            hoisted,
            std::cmp::Reverse(self.groups.len()),
            std::cmp::Reverse(self.kept.len()),
        )
    }
}

fn rewrite(program: &mut Program, analysis: &Analysis) -> Vec<TexelFunction> {
    let first_unit = program
        .declarations()
        .filter(|d| matches!(d.file, RegisterFile::Sampler | RegisterFile::SamplerView))
        .map(|d| d.last + 1)
        .max()
        .unwrap_or(0);
    let narrow = Plan::new(analysis, first_unit, false);
    let sunk = Plan::new(analysis, first_unit, true);
    let Plan {
        groups,
        site_group,
        copied,
        kept,
    } = if sunk.rank() > narrow.rank() {
        sunk
    } else {
        narrow
    };
    let functions: Option<Vec<TexelFunction>> = groups
        .iter()
        .map(|g| prepass(program, analysis, g))
        .collect();
    let Some(functions) = functions.filter(|f| !f.is_empty()) else {
        return Vec::new();
    };

    // One new temporary per hoisted site receives its derived lookup.
    let mut next_temp = program.file_size(RegisterFile::Temporary);
    let first_new_temp = next_temp;
    let mut site_temp: HashMap<usize, i32> = HashMap::new();
    for (s, g) in site_group.iter().enumerate() {
        if g.is_some() {
            site_temp.insert(s, next_temp as i32);
            next_temp += 1;
        }
    }
    // Definitions of hoisted sites the program no longer computes: dropped, or copied from the
    // derived lookup when they escape.
    let hoisted =
        |def: usize| site_group[analysis.defs[def].site].is_some() && !kept.contains(&def);
    let copy_of = |def: usize| -> Instruction {
        let d = &analysis.defs[def];
        let group = &groups[site_group[d.site].expect("hoisted")];
        let channel = group
            .channels
            .iter()
            .position(|&n| n == d.node)
            .expect("escaping node has a channel") as u8;
        let mut src = SrcOperand::new(Register::new(RegisterFile::Temporary, site_temp[&d.site]));
        src.swizzle = [channel; 4];
        Instruction::new(
            Opcode::MOV,
            vec![DstOperand {
                reg: Register::new(RegisterFile::Temporary, d.reg),
                write_mask: 1 << d.comp,
            }],
            vec![src],
        )
    };
    let site_at: HashMap<usize, usize> = analysis
        .sites
        .iter()
        .enumerate()
        .map(|(s, site)| (site.inst, s))
        .collect();
    let mut out = Vec::with_capacity(program.instructions.len());
    for (index, inst) in std::mem::take(&mut program.instructions)
        .into_iter()
        .enumerate()
    {
        let defs = analysis.inst_defs.get(&index);
        let hoisted_site = site_at.get(&index).filter(|s| site_group[**s].is_some());
        if let Some(&s) = hoisted_site {
            let mut lookup = inst;
            let group = &groups[site_group[s].expect("hoisted")];
            for src in lookup
                .src
                .iter_mut()
                .filter(|s| s.reg.file == RegisterFile::Sampler)
            {
                src.reg.index = group.derived_unit as i32;
            }
            lookup.dst[0] = DstOperand {
                reg: Register::new(RegisterFile::Temporary, site_temp[&s]),
                write_mask: 0xF,
            };
            out.push(lookup);
        } else if let Some(defs) = defs {
            let mut kept = inst;
            let removed = defs
                .iter()
                .filter(|(_, d)| hoisted(*d))
                .fold(0u8, |m, (c, _)| m | 1 << c);
            kept.dst[0].write_mask &= !removed;
            if kept.dst[0].write_mask != 0 {
                out.push(kept);
            }
        } else {
            out.push(inst);
        }
        for &(_, d) in defs.into_iter().flatten() {
            if hoisted(d) && copied.contains(&d) {
                out.push(copy_of(d));
            }
        }
        for &d in analysis.merge_defs.get(&index).into_iter().flatten() {
            if hoisted(d) && copied.contains(&d) {
                out.push(copy_of(d));
            }
        }
    }
    program.instructions = out;
    program
        .header
        .push(HeaderItem::Declaration(Declaration::new(
            RegisterFile::Temporary,
            first_new_temp,
            next_temp - 1,
        )));
    for f in &functions {
        declare_unit(&mut program.header, f.derived_unit, float_view());
    }
    functions
}

/// The source unit's `SVIEW` declaration, if the program has one.
fn source_view(program: &Program, unit: u32) -> Option<SamplerViewDecl> {
    program
        .declarations()
        .find(|d| d.file == RegisterFile::SamplerView && (d.first..=d.last).contains(&unit))
        .and_then(|d| d.sampler_view)
}

/// A 2D view returning floats (the derived textures, and a source unit declared without one).
fn float_view() -> SamplerViewDecl {
    SamplerViewDecl {
        target: TextureTarget::Tex2D,
        return_type: [crate::ir::ReturnType::Float; 4],
    }
}

fn declare_unit(header: &mut Vec<HeaderItem>, unit: u32, view: SamplerViewDecl) {
    header.push(HeaderItem::Declaration(Declaration::new(
        RegisterFile::Sampler,
        unit,
        unit,
    )));
    header.push(HeaderItem::Declaration(Declaration {
        sampler_view: Some(view),
        ..Declaration::new(RegisterFile::SamplerView, unit, unit)
    }));
}

/// The pre-pass program of a group, or None when it would be too long.
fn prepass(program: &Program, analysis: &Analysis, group: &Group) -> Option<TexelFunction> {
    // Every node the channels need, in creation order (operands before users).
    let mut needed: Vec<u32> = Vec::new();
    let mut seen: HashSet<u32> = HashSet::new();
    let mut stack: Vec<u32> = group.channels.clone();
    while let Some(n) = stack.pop() {
        if !seen.insert(n) {
            continue;
        }
        needed.push(n);
        if let Node::Op(_, _, sources) = &analysis.nodes[n as usize] {
            stack.extend(sources.iter().map(|s| s.2));
        }
    }
    if needed.len() > MAX_PREPASS_NODES {
        return None;
    }
    needed.sort_unstable();

    let mut header = vec![
        HeaderItem::Property(crate::ir::Property {
            name: "FS_COORD_ORIGIN".into(),
            values: vec!["UPPER_LEFT".into()],
        }),
        HeaderItem::Property(crate::ir::Property {
            name: "FS_COORD_PIXEL_CENTER".into(),
            values: vec!["HALF_INTEGER".into()],
        }),
        HeaderItem::Declaration(Declaration {
            semantic: Some(crate::ir::Semantic {
                name: crate::ir::SemanticName::Position,
                index: 0,
            }),
            interpolation: Some(crate::ir::Interpolation {
                mode: crate::ir::InterpolateMode::Linear,
                location: crate::ir::InterpolateLocation::Center,
            }),
            ..Declaration::new(RegisterFile::Input, 0, 0)
        }),
        HeaderItem::Declaration(Declaration {
            semantic: Some(crate::ir::Semantic {
                name: crate::ir::SemanticName::Color,
                index: 0,
            }),
            ..Declaration::new(RegisterFile::Output, 0, 0)
        }),
    ];
    let view = source_view(program, group.unit).unwrap_or_else(float_view);
    declare_unit(&mut header, group.unit, view);
    header.extend(
        program
            .declarations()
            .filter(|d| d.file == RegisterFile::Constant)
            .cloned()
            .map(HeaderItem::Declaration),
    );

    // Immediates: zero first (the fetch's level and the unused channels), then every constant
    // the nodes use, four per IMM.
    let mut imm_bits: Vec<u32> = vec![0];
    for &n in &needed {
        if let Node::Imm(bits) = analysis.nodes[n as usize] {
            if !imm_bits.contains(&bits) {
                imm_bits.push(bits);
            }
        }
    }
    let imm_operand = |bits: u32| {
        let i = imm_bits.iter().position(|&b| b == bits).expect("collected");
        let mut src = SrcOperand::new(Register::new(RegisterFile::Immediate, (i / 4) as i32));
        src.swizzle = [(i % 4) as u8; 4];
        src
    };
    let temp = |index: u32, comp: u8| {
        let mut src = SrcOperand::new(Register::new(RegisterFile::Temporary, index as i32));
        src.swizzle = [comp; 4];
        src
    };
    let dst = |file: RegisterFile, index: u32, mask: u8| DstOperand {
        reg: Register::new(file, index as i32),
        write_mask: mask,
    };
    // TEMP[0]: the fetch coordinates, TEMP[1]: the texel, TEMP[2 + k]: the k-th operation.
    let node_temp: HashMap<u32, u32> = needed
        .iter()
        .filter(|&&n| matches!(analysis.nodes[n as usize], Node::Op(..)))
        .enumerate()
        .map(|(k, &n)| (n, 2 + k as u32))
        .collect();
    let operand = |n: u32| -> SrcOperand {
        match &analysis.nodes[n as usize] {
            Node::Texel(c) => temp(1, *c),
            Node::Imm(bits) => imm_operand(*bits),
            Node::Const(dim, index, c) => {
                let mut reg = Register::new(RegisterFile::Constant, *index);
                if *dim >= 0 {
                    reg.dimension = Some(crate::ir::Dimension {
                        index: *dim,
                        indirect: None,
                    });
                }
                let mut src = SrcOperand::new(reg);
                src.swizzle = [*c; 4];
                src
            }
            Node::Op(..) => temp(node_temp[&n], 0),
        }
    };
    let mut instructions = vec![
        Instruction::new(
            Opcode::F2I,
            vec![dst(RegisterFile::Temporary, 0, 0b0011)],
            vec![SrcOperand::new(Register::new(RegisterFile::Input, 0))],
        ),
        Instruction::new(
            Opcode::MOV,
            vec![dst(RegisterFile::Temporary, 0, 0b1100)],
            vec![imm_operand(0)],
        ),
        Instruction {
            texture: Some(crate::ir::TextureInfo {
                target: TextureTarget::Tex2D,
                offsets: Vec::new(),
            }),
            ..Instruction::new(
                Opcode::TXF,
                vec![dst(RegisterFile::Temporary, 1, 0xF)],
                vec![
                    SrcOperand::new(Register::new(RegisterFile::Temporary, 0)),
                    SrcOperand::new(Register::new(RegisterFile::Sampler, group.unit as i32)),
                ],
            )
        },
    ];
    for &n in &needed {
        let Node::Op(opcode, saturate, sources) = &analysis.nodes[n as usize] else {
            continue;
        };
        let src = sources
            .iter()
            .map(|&(negate, absolute, s)| SrcOperand {
                negate,
                absolute,
                ..operand(s)
            })
            .collect();
        instructions.push(Instruction {
            saturate: *saturate,
            ..Instruction::new(
                *opcode,
                vec![dst(RegisterFile::Temporary, node_temp[&n], 0b0001)],
                src,
            )
        });
    }
    for k in 0..4u8 {
        let src = match group.channels.get(k as usize) {
            Some(&n) => operand(n),
            None => imm_operand(0),
        };
        instructions.push(Instruction::new(
            Opcode::MOV,
            vec![dst(RegisterFile::Output, 0, 1 << k)],
            vec![src],
        ));
    }
    instructions.push(Instruction::new(Opcode::END, Vec::new(), Vec::new()));
    header.push(HeaderItem::Declaration(Declaration::new(
        RegisterFile::Temporary,
        0,
        1 + node_temp.len() as u32,
    )));
    for chunk in imm_bits.chunks(4) {
        header.push(HeaderItem::Immediate(Immediate {
            ty: ImmediateType::Uint32,
            values: chunk.to_vec(),
        }));
    }
    Some(TexelFunction {
        source_unit: group.unit,
        derived_unit: group.derived_unit,
        channels: group.channels.len(),
        lookups: group.lookups,
        program: Program {
            processor: Processor::Fragment,
            header,
            instructions,
            sampler_hints: Vec::new(),
        },
    })
}
