//! SPIR-V rewrites for constructs glslang emits that naga's SPIR-V reader or validator rejects:
//!
//! - Aggregate varyings (`out vec4 offset[3]`, `out mat4 profile`, `out FrameGeometry geom`):
//!   naga only accepts scalars and vectors at a location. Each such `Input`/`Output` variable
//!   becomes a `Private` variable of the same type (so every access, dynamic indices included,
//!   works unchanged) plus one interface variable per scalar/vector leaf at consecutive
//!   locations, copied in at the start of the entry point (inputs) or out before each return
//!   (outputs). Both stages flatten the same way, so their locations still match.
//! - Integer varyings without `flat`: GLSL only requires `flat` on fragment inputs, naga on
//!   vertex outputs too; it is added (integers are never interpolated anyway).
//! - `modf(x, out i)` (GLSL.std.450 `Modf` / `ModfStruct`): naga's reader produces a struct
//!   result type it never registers; it is rewritten as `i = trunc(x); x - i`.
//! - `findLSB`/`findMSB`/`bitCount` whose result signedness differs from the operand's (`int i
//!   = findLSB(uint)`; GLSL.std.450 `FindILsb`/`FindSMsb`/`FindUMsb` and `OpBitCount` allow it): naga gives the
//!   result the operand's type, so the store no longer type-checks. The instruction now returns
//!   the operand's type, followed by an `OpBitcast` to the declared one.
//! - `OpUndef` inside a function (glslang's value for falling off the end of a non-void
//!   function): naga's reader turns it into a `ZeroValue` expression that it also emits, which
//!   its validator rejects ("expression already in scope"). Every such value becomes one
//!   module-level `OpConstantNull` of its type (an undefined value may be anything).
//! - `OpSMod` on vectors (GLSL `%` on `ivecN`): naga's reader converts through floats of the
//!   vector's byte size as if it were the component width (i64/f64 for an `ivec2`), which its
//!   validator rejects; the operation is done per component instead.
//! - `OpSNegate` of an unsigned value (GLSL `-u`): naga, following WGSL, has no negation of
//!   `u32`; it becomes `0 - u` (the same two's-complement bits).
//! - `OpSwitch` cases whose target is the default block (`case 0: default: return x;`, as in
//!   the corpus's `rotation.inc`): naga's reader gives such a case an empty body that falls
//!   through into the *next* case's body, so `0` ran `case 1`. The pair is dropped: a value
//!   no case names goes to the default block anyway.

use std::collections::HashMap;

use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{Decoration, Op, StorageClass, Word};

use super::spirv_ids::{glsl_std_450, id, lit, result_types, Ids};

/// Runs every rewrite on `module`.
pub fn legalize(module: &mut Module) -> Result<(), String> {
    let mut ids = Ids::after(module);
    rewrite_modf(module, &mut ids);
    find_bit_signedness(module, &mut ids);
    hoist_undef(module, &mut ids);
    split_vector_smod(module, &mut ids);
    unsigned_negation(module, &mut ids);
    drop_default_cases(module);
    flatten_varyings(module, &mut ids)?;
    flat_integer_varyings(module);
    ids.finish(module);
    Ok(())
}

const GLSL_TRUNC: u32 = 3;
const GLSL_MODF: u32 = 35;
const GLSL_MODF_STRUCT: u32 = 36;

fn rewrite_modf(module: &mut Module, ids: &mut Ids) {
    let Some(glsl) = glsl_std_450(module) else {
        return;
    };
    // ModfStruct's result struct → its member type (fract and whole have the operand's type).
    let struct_members: HashMap<Word, Word> = module
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::TypeStruct)
        .filter_map(|i| Some((i.result_id?, id(i.operands.first())?)))
        .collect();
    for f in &mut module.functions {
        for block in &mut f.blocks {
            let old = std::mem::take(&mut block.instructions);
            for inst in old {
                let is_modf_struct = inst.class.opcode == Op::ExtInst
                    && id(inst.operands.first()) == Some(glsl)
                    && matches!(
                        inst.operands.get(1),
                        Some(Operand::LiteralExtInstInteger(GLSL_MODF_STRUCT))
                    );
                if let (true, Some(x), Some(sty)) =
                    (is_modf_struct, id(inst.operands.get(2)), inst.result_type)
                {
                    if let Some(&ty) = struct_members.get(&sty) {
                        let (t, fr) = (ids.fresh(), ids.fresh());
                        block.instructions.push(Instruction::new(
                            Op::ExtInst,
                            Some(ty),
                            Some(t),
                            vec![
                                Operand::IdRef(glsl),
                                Operand::LiteralExtInstInteger(GLSL_TRUNC),
                                Operand::IdRef(x),
                            ],
                        ));
                        block.instructions.push(Instruction::new(
                            Op::FSub,
                            Some(ty),
                            Some(fr),
                            vec![Operand::IdRef(x), Operand::IdRef(t)],
                        ));
                        block.instructions.push(Instruction::new(
                            Op::CompositeConstruct,
                            Some(sty),
                            inst.result_id,
                            vec![Operand::IdRef(fr), Operand::IdRef(t)],
                        ));
                        continue;
                    }
                }
                let is_modf = inst.class.opcode == Op::ExtInst
                    && id(inst.operands.first()) == Some(glsl)
                    && matches!(
                        inst.operands.get(1),
                        Some(Operand::LiteralExtInstInteger(GLSL_MODF))
                    );
                let (Some(x), Some(ptr), Some(ty), true) = (
                    id(inst.operands.get(2)),
                    id(inst.operands.get(3)),
                    inst.result_type,
                    is_modf,
                ) else {
                    block.instructions.push(inst);
                    continue;
                };
                let t = ids.fresh();
                block.instructions.push(Instruction::new(
                    Op::ExtInst,
                    Some(ty),
                    Some(t),
                    vec![
                        Operand::IdRef(glsl),
                        Operand::LiteralExtInstInteger(GLSL_TRUNC),
                        Operand::IdRef(x),
                    ],
                ));
                block.instructions.push(Instruction::new(
                    Op::Store,
                    None,
                    None,
                    vec![Operand::IdRef(ptr), Operand::IdRef(t)],
                ));
                block.instructions.push(Instruction::new(
                    Op::FSub,
                    Some(ty),
                    inst.result_id,
                    vec![Operand::IdRef(x), Operand::IdRef(t)],
                ));
            }
        }
    }
}

const GLSL_FIND_ILSB: u32 = 73;
const GLSL_FIND_UMSB: u32 = 75;

fn find_bit_signedness(module: &mut Module, ids: &mut Ids) {
    let Some(glsl) = glsl_std_450(module) else {
        return;
    };
    // Every id's type, to find the operand's.
    let type_of = result_types(module);
    for f in &mut module.functions {
        for block in &mut f.blocks {
            let old = std::mem::take(&mut block.instructions);
            for mut inst in old {
                let is_find = inst.class.opcode == Op::ExtInst
                    && id(inst.operands.first()) == Some(glsl)
                    && matches!(
                        inst.operands.get(1),
                        Some(Operand::LiteralExtInstInteger(n))
                            if (GLSL_FIND_ILSB..=GLSL_FIND_UMSB).contains(n)
                    );
                // OpBitCount (`int bitCount(uint)`) has the same freedom and naga the same rule.
                let is_count = inst.class.opcode == Op::BitCount;
                let operand = if is_count { 0 } else { 2 };
                let operand_ty =
                    id(inst.operands.get(operand)).and_then(|x| type_of.get(&x).copied());
                match (
                    is_find || is_count,
                    operand_ty,
                    inst.result_type,
                    inst.result_id,
                ) {
                    (true, Some(oty), Some(rty), Some(rid)) if oty != rty => {
                        let tmp = ids.fresh();
                        inst.result_type = Some(oty);
                        inst.result_id = Some(tmp);
                        block.instructions.push(inst);
                        block.instructions.push(Instruction::new(
                            Op::Bitcast,
                            Some(rty),
                            Some(rid),
                            vec![Operand::IdRef(tmp)],
                        ));
                    }
                    _ => block.instructions.push(inst),
                }
            }
        }
    }
}

fn hoist_undef(module: &mut Module, ids: &mut Ids) {
    let mut null_of: HashMap<Word, Word> = HashMap::new();
    let mut replace: HashMap<Word, Word> = HashMap::new();
    let mut new_constants = Vec::new();
    for f in &mut module.functions {
        for block in &mut f.blocks {
            block.instructions.retain(|inst| {
                let (Op::Undef, Some(ty), Some(r)) =
                    (inst.class.opcode, inst.result_type, inst.result_id)
                else {
                    return true;
                };
                let c = *null_of.entry(ty).or_insert_with(|| {
                    let c = ids.fresh();
                    new_constants.push(Instruction::new(
                        Op::ConstantNull,
                        Some(ty),
                        Some(c),
                        vec![],
                    ));
                    c
                });
                replace.insert(r, c);
                false
            });
        }
    }
    if replace.is_empty() {
        return;
    }
    module.types_global_values.extend(new_constants);
    for f in &mut module.functions {
        for block in &mut f.blocks {
            for inst in &mut block.instructions {
                for op in &mut inst.operands {
                    if let Operand::IdRef(v) = op {
                        if let Some(&c) = replace.get(v) {
                            *v = c;
                        }
                    }
                }
            }
        }
    }
}

fn split_vector_smod(module: &mut Module, ids: &mut Ids) {
    // Vector type → (component type, count).
    let vectors: HashMap<Word, (Word, u32)> = module
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::TypeVector)
        .filter_map(|i| {
            Some((
                i.result_id?,
                (id(i.operands.first())?, lit(i.operands.get(1))?),
            ))
        })
        .collect();
    for f in &mut module.functions {
        for block in &mut f.blocks {
            let old = std::mem::take(&mut block.instructions);
            for inst in old {
                let vector = inst.result_type.and_then(|t| vectors.get(&t).copied());
                let (Op::SMod, Some((component, n)), Some(result), Some(a), Some(b)) = (
                    inst.class.opcode,
                    vector,
                    inst.result_id,
                    id(inst.operands.first()),
                    id(inst.operands.get(1)),
                ) else {
                    block.instructions.push(inst);
                    continue;
                };
                let mut parts = Vec::new();
                for c in 0..n {
                    let mut extract = |v: Word| {
                        let x = ids.fresh();
                        block.instructions.push(Instruction::new(
                            Op::CompositeExtract,
                            Some(component),
                            Some(x),
                            vec![Operand::IdRef(v), Operand::LiteralBit32(c)],
                        ));
                        x
                    };
                    let (ac, bc) = (extract(a), extract(b));
                    let r = ids.fresh();
                    block.instructions.push(Instruction::new(
                        Op::SMod,
                        Some(component),
                        Some(r),
                        vec![Operand::IdRef(ac), Operand::IdRef(bc)],
                    ));
                    parts.push(Operand::IdRef(r));
                }
                block.instructions.push(Instruction::new(
                    Op::CompositeConstruct,
                    inst.result_type,
                    Some(result),
                    parts,
                ));
            }
        }
    }
}

fn drop_default_cases(module: &mut Module) {
    for f in &mut module.functions {
        for block in &mut f.blocks {
            for inst in &mut block.instructions {
                if inst.class.opcode != Op::Switch {
                    continue;
                }
                // Operands: selector, default label, then (literal, label) pairs.
                let Some(default) = id(inst.operands.get(1)) else {
                    continue;
                };
                if inst.operands.len() < 4 {
                    continue;
                }
                let pairs = inst.operands.split_off(2);
                for pair in pairs.chunks(2) {
                    if pair.len() == 2 && id(pair.get(1)) == Some(default) {
                        continue;
                    }
                    inst.operands.extend_from_slice(pair);
                }
            }
        }
    }
}

fn unsigned_negation(module: &mut Module, ids: &mut Ids) {
    let unsigned: std::collections::HashSet<Word> = {
        let uints: Vec<Word> = module
            .types_global_values
            .iter()
            .filter(|i| i.class.opcode == Op::TypeInt && lit(i.operands.get(1)) == Some(0))
            .filter_map(|i| i.result_id)
            .collect();
        module
            .types_global_values
            .iter()
            .filter_map(|i| match i.class.opcode {
                Op::TypeInt if uints.contains(&i.result_id?) => i.result_id,
                Op::TypeVector if uints.contains(&id(i.operands.first())?) => i.result_id,
                _ => None,
            })
            .collect()
    };
    let mut zero_of: HashMap<Word, Word> = HashMap::new();
    let mut new_constants = Vec::new();
    for f in &mut module.functions {
        for block in &mut f.blocks {
            for inst in &mut block.instructions {
                let Some(ty) = inst.result_type.filter(|t| unsigned.contains(t)) else {
                    continue;
                };
                if inst.class.opcode != Op::SNegate {
                    continue;
                }
                let zero = *zero_of.entry(ty).or_insert_with(|| {
                    let c = ids.fresh();
                    new_constants.push(Instruction::new(
                        Op::ConstantNull,
                        Some(ty),
                        Some(c),
                        vec![],
                    ));
                    c
                });
                let x = inst.operands.first().cloned();
                if let Some(x) = x {
                    *inst = Instruction::new(
                        Op::ISub,
                        Some(ty),
                        inst.result_id,
                        vec![Operand::IdRef(zero), x],
                    );
                }
            }
        }
    }
    module.types_global_values.extend(new_constants);
}

/// One scalar/vector piece of an aggregate varying.
struct Leaf {
    path: Vec<u32>,
    ty: Word,
    /// Interpolation decorations of the struct members on the way.
    decorations: Vec<Decoration>,
    name: String,
}

const INTERPOLATION: [Decoration; 4] = [
    Decoration::Flat,
    Decoration::NoPerspective,
    Decoration::Centroid,
    Decoration::Sample,
];

struct Types<'a> {
    defs: HashMap<Word, &'a Instruction>,
    constants: HashMap<Word, u32>,
    member_decorations: HashMap<(Word, u32), Vec<Decoration>>,
    member_names: HashMap<(Word, u32), String>,
}

impl Types<'_> {
    fn leaves(
        &self,
        ty: Word,
        path: &mut Vec<u32>,
        name: String,
        decos: &[Decoration],
        out: &mut Vec<Leaf>,
    ) -> Result<(), String> {
        let def = self
            .defs
            .get(&ty)
            .ok_or_else(|| format!("unknown type %{ty}"))?;
        match def.class.opcode {
            Op::TypeFloat | Op::TypeInt | Op::TypeBool | Op::TypeVector => out.push(Leaf {
                path: path.clone(),
                ty,
                decorations: decos.to_vec(),
                name,
            }),
            Op::TypeMatrix | Op::TypeArray => {
                let elem = id(def.operands.first()).ok_or("malformed aggregate type")?;
                let count = if def.class.opcode == Op::TypeMatrix {
                    lit(def.operands.get(1))
                } else {
                    id(def.operands.get(1)).and_then(|c| self.constants.get(&c).copied())
                }
                .ok_or("varying array without a constant length")?;
                for k in 0..count {
                    path.push(k);
                    self.leaves(elem, path, format!("{name}[{k}]"), decos, out)?;
                    path.pop();
                }
            }
            Op::TypeStruct => {
                for (k, m) in def.operands.iter().enumerate() {
                    let k = k as u32;
                    let mty = id(Some(m)).ok_or("malformed struct type")?;
                    let mut d = decos.to_vec();
                    d.extend(self.member_decorations.get(&(ty, k)).into_iter().flatten());
                    let mname = self
                        .member_names
                        .get(&(ty, k))
                        .cloned()
                        .unwrap_or_else(|| k.to_string());
                    path.push(k);
                    self.leaves(mty, path, format!("{name}.{mname}"), &d, out)?;
                    path.pop();
                }
            }
            other => return Err(format!("varying of unsupported type Op{other:?}")),
        }
        Ok(())
    }
}

struct Flatten {
    var: Word,
    class: StorageClass,
    ty: Word,
    leaves: Vec<(Leaf, Word)>,
}

fn flatten_varyings(module: &mut Module, ids: &mut Ids) -> Result<(), String> {
    let mut locations = HashMap::new();
    let mut builtin_targets = Vec::new();
    let mut var_decorations: HashMap<Word, Vec<Decoration>> = HashMap::new();
    let mut member_decorations: HashMap<(Word, u32), Vec<Decoration>> = HashMap::new();
    for a in &module.annotations {
        let target = id(a.operands.first());
        match (a.class.opcode, target) {
            (Op::Decorate, Some(t)) => match a.operands.get(1) {
                Some(Operand::Decoration(Decoration::Location)) => {
                    if let Some(l) = lit(a.operands.get(2)) {
                        locations.insert(t, l);
                    }
                }
                Some(Operand::Decoration(Decoration::BuiltIn)) => builtin_targets.push(t),
                Some(Operand::Decoration(d)) if INTERPOLATION.contains(d) => {
                    var_decorations.entry(t).or_default().push(*d)
                }
                _ => {}
            },
            (Op::MemberDecorate, Some(t)) => match (lit(a.operands.get(1)), a.operands.get(2)) {
                (Some(_), Some(Operand::Decoration(Decoration::BuiltIn))) => {
                    builtin_targets.push(t)
                }
                (Some(m), Some(Operand::Decoration(d))) if INTERPOLATION.contains(d) => {
                    member_decorations.entry((t, m)).or_default().push(*d)
                }
                _ => {}
            },
            _ => {}
        }
    }
    let mut names = HashMap::new();
    let mut member_names = HashMap::new();
    for n in &module.debug_names {
        match (n.class.opcode, id(n.operands.first())) {
            (Op::Name, Some(t)) => {
                if let Some(Operand::LiteralString(s)) = n.operands.get(1) {
                    names.insert(t, s.clone());
                }
            }
            (Op::MemberName, Some(t)) => {
                if let (Some(m), Some(Operand::LiteralString(s))) =
                    (lit(n.operands.get(1)), n.operands.get(2))
                {
                    member_names.insert((t, m), s.clone());
                }
            }
            _ => {}
        }
    }

    let mut plans = Vec::new();
    {
        let mut types = Types {
            defs: HashMap::new(),
            constants: HashMap::new(),
            member_decorations,
            member_names,
        };
        for inst in &module.types_global_values {
            if let Some(r) = inst.result_id {
                types.defs.insert(r, inst);
                if inst.class.opcode == Op::Constant {
                    if let Some(v) = lit(inst.operands.first()) {
                        types.constants.insert(r, v);
                    }
                }
            }
        }
        for inst in &module.types_global_values {
            let (Op::Variable, Some(var), Some(ptr)) =
                (inst.class.opcode, inst.result_id, inst.result_type)
            else {
                continue;
            };
            let class = match inst.operands.first() {
                Some(Operand::StorageClass(c @ (StorageClass::Input | StorageClass::Output))) => *c,
                _ => continue,
            };
            let Some(&location) = locations.get(&var) else {
                continue;
            };
            let Some(ty) = types.defs.get(&ptr).and_then(|p| id(p.operands.get(1))) else {
                continue;
            };
            if builtin_targets.contains(&var) || builtin_targets.contains(&ty) {
                continue;
            }
            let kind = types.defs.get(&ty).map(|d| d.class.opcode);
            if !matches!(kind, Some(Op::TypeArray | Op::TypeMatrix | Op::TypeStruct)) {
                continue;
            }
            let mut leaves = Vec::new();
            let decos = var_decorations.get(&var).cloned().unwrap_or_default();
            let name = names
                .get(&var)
                .cloned()
                .unwrap_or_else(|| format!("_{var}"));
            types.leaves(ty, &mut Vec::new(), name, &decos, &mut leaves)?;
            let leaves = leaves
                .into_iter()
                .enumerate()
                .map(|(k, l)| (l, location + k as u32))
                .collect();
            plans.push(Flatten {
                var,
                class,
                ty,
                leaves,
            });
        }
    }
    if plans.is_empty() {
        return Ok(());
    }

    // Types and constants the copies need, appended after everything they refer to.
    let mut appended: Vec<Instruction> = Vec::new();
    let mut pointer_cache: HashMap<(StorageClass, Word), Word> = HashMap::new();
    for inst in &module.types_global_values {
        if let (Op::TypePointer, Some(r), Some(Operand::StorageClass(c)), Some(t)) = (
            inst.class.opcode,
            inst.result_id,
            inst.operands.first(),
            id(inst.operands.get(1)),
        ) {
            pointer_cache.entry((*c, t)).or_insert(r);
        }
    }
    let mut pointer =
        |class: StorageClass, ty: Word, ids: &mut Ids, appended: &mut Vec<Instruction>| {
            *pointer_cache.entry((class, ty)).or_insert_with(|| {
                let r = ids.fresh();
                appended.push(Instruction::new(
                    Op::TypePointer,
                    None,
                    Some(r),
                    vec![Operand::StorageClass(class), Operand::IdRef(ty)],
                ));
                r
            })
        };
    let uint = match module.types_global_values.iter().find(|i| {
        i.class.opcode == Op::TypeInt
            && i.operands == [Operand::LiteralBit32(32), Operand::LiteralBit32(0)]
    }) {
        Some(i) => i.result_id.unwrap_or(0),
        None => {
            let r = ids.fresh();
            appended.push(Instruction::new(
                Op::TypeInt,
                None,
                Some(r),
                vec![Operand::LiteralBit32(32), Operand::LiteralBit32(0)],
            ));
            r
        }
    };
    let mut constants: HashMap<u32, Word> = HashMap::new();
    let mut constant = |v: u32, ids: &mut Ids, appended: &mut Vec<Instruction>| {
        *constants.entry(v).or_insert_with(|| {
            let r = ids.fresh();
            appended.push(Instruction::new(
                Op::Constant,
                Some(uint),
                Some(r),
                vec![Operand::LiteralBit32(v)],
            ));
            r
        })
    };

    let mut converted: HashMap<Word, Word> = HashMap::new(); // var → private pointer type
    let mut new_vars = Vec::new();
    // (leaf var, leaf type, class, private var, index constants, private leaf pointer type)
    let mut copies = Vec::new();
    for plan in &plans {
        let private_ptr = pointer(StorageClass::Private, plan.ty, ids, &mut appended);
        converted.insert(plan.var, private_ptr);
        for (leaf, location) in &plan.leaves {
            let io_ptr = pointer(plan.class, leaf.ty, ids, &mut appended);
            let priv_leaf_ptr = pointer(StorageClass::Private, leaf.ty, ids, &mut appended);
            let v = ids.fresh();
            new_vars.push(Instruction::new(
                Op::Variable,
                Some(io_ptr),
                Some(v),
                vec![Operand::StorageClass(plan.class)],
            ));
            let decorate = |d: Decoration, extra: Vec<Operand>| {
                let mut ops = vec![Operand::IdRef(v), Operand::Decoration(d)];
                ops.extend(extra);
                Instruction::new(Op::Decorate, None, None, ops)
            };
            module.annotations.push(decorate(
                Decoration::Location,
                vec![Operand::LiteralBit32(*location)],
            ));
            for d in &leaf.decorations {
                module.annotations.push(decorate(*d, vec![]));
            }
            module.debug_names.push(Instruction::new(
                Op::Name,
                None,
                None,
                vec![Operand::IdRef(v), Operand::LiteralString(leaf.name.clone())],
            ));
            let path: Vec<Word> = leaf
                .path
                .iter()
                .map(|&k| constant(k, ids, &mut appended))
                .collect();
            copies.push((v, leaf.ty, plan.class, plan.var, path, priv_leaf_ptr));
        }
    }
    // The converted variables lose their interface decorations and move after the new types.
    module.annotations.retain(|a| {
        !(a.class.opcode == Op::Decorate
            && id(a.operands.first()).is_some_and(|t| converted.contains_key(&t))
            && matches!(a.operands.get(1), Some(Operand::Decoration(d)) if *d == Decoration::Location || INTERPOLATION.contains(d)))
    });
    let mut moved = Vec::new();
    module.types_global_values.retain(|i| {
        match i
            .result_id
            .filter(|r| i.class.opcode == Op::Variable && converted.contains_key(r))
        {
            Some(r) => {
                let mut v = i.clone();
                v.result_type = Some(converted[&r]);
                v.operands = vec![Operand::StorageClass(StorageClass::Private)];
                moved.push(v);
                false
            }
            None => true,
        }
    });
    module.types_global_values.extend(appended);
    module.types_global_values.extend(moved);
    module.types_global_values.extend(new_vars);

    // Access chains into converted variables now point into Private memory.
    let mut private_ptrs: HashMap<Word, Word> = HashMap::new();
    let mut derived: Vec<Word> = converted.keys().copied().collect();
    let defs: HashMap<Word, (StorageClass, Word)> = module
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::TypePointer)
        .filter_map(
            |i| match (i.result_id, i.operands.first(), id(i.operands.get(1))) {
                (Some(r), Some(Operand::StorageClass(c)), Some(t)) => Some((r, (*c, t))),
                _ => None,
            },
        )
        .collect();
    let mut extra_types = Vec::new();
    for f in &mut module.functions {
        for block in &mut f.blocks {
            for inst in &mut block.instructions {
                if matches!(inst.class.opcode, Op::AccessChain | Op::InBoundsAccessChain)
                    && id(inst.operands.first()).is_some_and(|b| derived.contains(&b))
                {
                    if let Some(&(_, pointee)) = inst.result_type.and_then(|t| defs.get(&t)) {
                        let p = *private_ptrs.entry(pointee).or_insert_with(|| {
                            pointer(StorageClass::Private, pointee, ids, &mut extra_types)
                        });
                        inst.result_type = Some(p);
                        derived.extend(inst.result_id);
                    }
                }
            }
        }
    }
    module.types_global_values.extend(extra_types);

    // The entry point's interface lists the leaves instead of the converted variables.
    let mut entry_functions = Vec::new();
    for ep in &mut module.entry_points {
        entry_functions.extend(id(ep.operands.get(1)));
        let mut ops: Vec<Operand> = Vec::with_capacity(ep.operands.len());
        for (k, op) in ep.operands.iter().enumerate() {
            match id(Some(op)) {
                Some(v) if k >= 3 && converted.contains_key(&v) => {
                    for c in copies.iter().filter(|c| c.3 == v) {
                        ops.push(Operand::IdRef(c.0));
                    }
                }
                _ => ops.push(op.clone()),
            }
        }
        ep.operands = ops;
    }

    for f in &mut module.functions {
        let Some(fid) = f.def.as_ref().and_then(|d| d.result_id) else {
            continue;
        };
        if !entry_functions.contains(&fid) {
            continue;
        }
        let copy = |input: bool, ids: &mut Ids| {
            let mut out = Vec::new();
            for (leaf_var, leaf_ty, class, private, path, priv_ptr) in &copies {
                if (*class == StorageClass::Input) != input {
                    continue;
                }
                let (p, v) = (ids.fresh(), ids.fresh());
                let mut chain = vec![Operand::IdRef(*private)];
                chain.extend(path.iter().map(|c| Operand::IdRef(*c)));
                out.push(Instruction::new(
                    Op::AccessChain,
                    Some(*priv_ptr),
                    Some(p),
                    chain,
                ));
                if input {
                    out.push(Instruction::new(
                        Op::Load,
                        Some(*leaf_ty),
                        Some(v),
                        vec![Operand::IdRef(*leaf_var)],
                    ));
                    out.push(Instruction::new(
                        Op::Store,
                        None,
                        None,
                        vec![Operand::IdRef(p), Operand::IdRef(v)],
                    ));
                } else {
                    out.push(Instruction::new(
                        Op::Load,
                        Some(*leaf_ty),
                        Some(v),
                        vec![Operand::IdRef(p)],
                    ));
                    out.push(Instruction::new(
                        Op::Store,
                        None,
                        None,
                        vec![Operand::IdRef(*leaf_var), Operand::IdRef(v)],
                    ));
                }
            }
            out
        };
        let inputs = copy(true, ids);
        if let Some(first) = f.blocks.first_mut() {
            let at = first
                .instructions
                .iter()
                .position(|i| i.class.opcode != Op::Variable)
                .unwrap_or(first.instructions.len());
            first.instructions.splice(at..at, inputs);
        }
        for block in &mut f.blocks {
            if block
                .instructions
                .last()
                .is_some_and(|i| i.class.opcode == Op::Return)
            {
                let outputs = copy(false, ids);
                let at = block.instructions.len() - 1;
                block.instructions.splice(at..at, outputs);
            }
        }
    }
    Ok(())
}

/// Adds `Flat` to every integer `Input`/`Output` variable at a location that lacks it.
fn flat_integer_varyings(module: &mut Module) {
    let mut located = Vec::new();
    let mut flat = Vec::new();
    for a in &module.annotations {
        if a.class.opcode != Op::Decorate {
            continue;
        }
        match (id(a.operands.first()), a.operands.get(1)) {
            (Some(t), Some(Operand::Decoration(Decoration::Location))) => located.push(t),
            (Some(t), Some(Operand::Decoration(Decoration::Flat))) => flat.push(t),
            _ => {}
        }
    }
    let defs: HashMap<Word, &Instruction> = module
        .types_global_values
        .iter()
        .filter_map(|i| Some((i.result_id?, i)))
        .collect();
    let is_int = |ty: Word| {
        let scalar = match defs.get(&ty) {
            Some(d) if d.class.opcode == Op::TypeVector => id(d.operands.first()),
            _ => Some(ty),
        };
        scalar
            .and_then(|t| defs.get(&t))
            .is_some_and(|d| d.class.opcode == Op::TypeInt)
    };
    let mut add = Vec::new();
    for inst in &module.types_global_values {
        let (Op::Variable, Some(var), Some(ptr)) =
            (inst.class.opcode, inst.result_id, inst.result_type)
        else {
            continue;
        };
        if !matches!(
            inst.operands.first(),
            Some(Operand::StorageClass(
                StorageClass::Input | StorageClass::Output
            ))
        ) || !located.contains(&var)
            || flat.contains(&var)
        {
            continue;
        }
        let pointee = defs.get(&ptr).and_then(|p| id(p.operands.get(1)));
        if pointee.is_some_and(is_int) {
            add.push(Instruction::new(
                Op::Decorate,
                None,
                None,
                vec![Operand::IdRef(var), Operand::Decoration(Decoration::Flat)],
            ));
        }
    }
    module.annotations.extend(add);
}
