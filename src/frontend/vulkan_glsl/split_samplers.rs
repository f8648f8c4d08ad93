//! A SPIR-V pass that splits combined image-samplers (`sampler2D` → `OpTypeSampledImage`) into
//! a separate image and sampler, because naga's SPIR-V frontend only accepts separate ones.
//!
//! Every `UniformConstant` variable of a sampled-image type (or an array of them) keeps its id,
//! name, set and binding but becomes the image; a new sampler variable is added in the same set
//! at binding `image binding + SAMPLER_BINDING_OFFSET`. Function parameters of such pointer types
//! (glslang passes `sampler2D` arguments by pointer) become an image and a sampler parameter, and
//! calls pass both. Each `OpLoad` of a combined pointer becomes two loads and an `OpSampledImage`
//! with the old result id, so the sampling instructions themselves are untouched.

use std::collections::HashMap;

use rspirv::binary::Assemble;
use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{Decoration, Op, StorageClass, Word};
use serde::Serialize;

use crate::frontend::retroarch::SAMPLER_BINDING_OFFSET;

/// One combined image-sampler variable that was split.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SplitSampler {
    /// The GLSL name (`OpName`), if any; the image variable keeps it.
    pub name: Option<String>,
    /// The descriptor set of both halves.
    pub set: u32,
    /// The binding of the image half (the original binding).
    pub image_binding: u32,
    /// The binding given to the new sampler variable.
    pub sampler_binding: u32,
}

/// The rewritten module and what was split.
#[derive(Clone, Debug)]
pub struct Split {
    /// The SPIR-V words.
    pub words: Vec<u32>,
    /// The split variables in declaration order.
    pub samplers: Vec<SplitSampler>,
    /// The over-strided matrix members re-typed by [`super::padded_matrices`] (filled in by
    /// [`super::spirv_to_naga`]; empty here).
    pub padded_matrices: Vec<super::padded_matrices::PaddedMatrix>,
}

/// Splits every combined image-sampler of `words`; see the module documentation.
pub fn split_combined_samplers(words: &[u32]) -> Result<Split, String> {
    let mut module =
        rspirv::dr::load_words(words).map_err(|e| format!("invalid SPIR-V from glslang: {e}"))?;
    let samplers = split_module(&mut module)?;
    Ok(Split {
        words: module.assemble(),
        samplers,
        padded_matrices: Vec::new(),
    })
}

/// [`split_combined_samplers`] on a loaded module.
pub fn split_module(module: &mut Module) -> Result<Vec<SplitSampler>, String> {
    Splitter::new(module).run()
}

fn id(op: &Operand) -> Option<Word> {
    match op {
        Operand::IdRef(v) => Some(*v),
        _ => None,
    }
}

struct Splitter<'m> {
    module: &'m mut Module,
    next_id: Word,
    /// Combined (sampled-image, array-of, or pointer-to) type → (image type, sampler type).
    types: HashMap<Word, (Word, Word)>,
    /// Combined pointer value → (image pointer, sampler pointer).
    values: HashMap<Word, (Word, Word)>,
}

impl<'m> Splitter<'m> {
    fn new(module: &'m mut Module) -> Self {
        let next_id = module.header.as_ref().map_or(1, |h| h.bound);
        Splitter {
            module,
            next_id,
            types: HashMap::new(),
            values: HashMap::new(),
        }
    }

    fn fresh(&mut self) -> Word {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    fn run(mut self) -> Result<Vec<SplitSampler>, String> {
        if !self
            .module
            .types_global_values
            .iter()
            .any(|i| i.class.opcode == Op::TypeSampledImage)
        {
            return Ok(Vec::new());
        }
        self.split_types()?;
        let samplers = self.split_globals()?;
        self.split_function_types();
        self.split_functions()?;
        if let Some(h) = self.module.header.as_mut() {
            h.bound = self.next_id;
        }
        Ok(samplers)
    }

    /// Adds the image/sampler halves of every combined type, each right after its original so
    /// declarations still precede uses.
    fn split_types(&mut self) -> Result<(), String> {
        let sampler_ty = match self
            .module
            .types_global_values
            .iter()
            .find(|i| i.class.opcode == Op::TypeSampler)
            .and_then(|i| i.result_id)
        {
            Some(t) => t,
            None => {
                let t = self.fresh();
                self.module
                    .types_global_values
                    .insert(0, Instruction::new(Op::TypeSampler, None, Some(t), vec![]));
                t
            }
        };
        let old = std::mem::take(&mut self.module.types_global_values);
        let mut out = Vec::with_capacity(old.len() + 8);
        for inst in old {
            let result = inst.result_id;
            let added: Vec<Instruction> = match inst.class.opcode {
                Op::TypeSampledImage => {
                    let image = inst
                        .operands
                        .first()
                        .and_then(id)
                        .ok_or("OpTypeSampledImage without an image type")?;
                    self.types.insert(result.unwrap_or(0), (image, sampler_ty));
                    Vec::new()
                }
                Op::TypeArray | Op::TypeRuntimeArray => {
                    let elem = inst.operands.first().and_then(id);
                    match elem.and_then(|e| self.types.get(&e).copied()) {
                        Some((ei, es)) => {
                            let (ai, as_) = (self.fresh(), self.fresh());
                            let mut img = inst.clone();
                            img.result_id = Some(ai);
                            img.operands[0] = Operand::IdRef(ei);
                            let mut smp = inst.clone();
                            smp.result_id = Some(as_);
                            smp.operands[0] = Operand::IdRef(es);
                            self.types.insert(result.unwrap_or(0), (ai, as_));
                            vec![img, smp]
                        }
                        None => Vec::new(),
                    }
                }
                Op::TypePointer => {
                    let pointee = inst.operands.get(1).and_then(id);
                    match pointee.and_then(|p| self.types.get(&p).copied()) {
                        Some((pi, ps)) => {
                            let (qi, qs) = (self.fresh(), self.fresh());
                            let class = inst.operands[0].clone();
                            let ptr = |r, t| {
                                Instruction::new(
                                    Op::TypePointer,
                                    None,
                                    Some(r),
                                    vec![class.clone(), Operand::IdRef(t)],
                                )
                            };
                            self.types.insert(result.unwrap_or(0), (qi, qs));
                            vec![ptr(qi, pi), ptr(qs, ps)]
                        }
                        None => Vec::new(),
                    }
                }
                _ => Vec::new(),
            };
            out.push(inst);
            out.extend(added);
        }
        self.module.types_global_values = out;
        Ok(())
    }

    fn decoration(&self, target: Word, which: Decoration) -> Option<u32> {
        self.module.annotations.iter().find_map(|a| {
            (a.class.opcode == Op::Decorate
                && a.operands.first().and_then(id) == Some(target)
                && a.operands.get(1) == Some(&Operand::Decoration(which)))
            .then(|| match a.operands.get(2) {
                Some(Operand::LiteralBit32(v)) => Some(*v),
                _ => None,
            })
            .flatten()
        })
    }

    fn name_of(&self, target: Word) -> Option<String> {
        self.module.debug_names.iter().find_map(|n| {
            (n.class.opcode == Op::Name && n.operands.first().and_then(id) == Some(target))
                .then(|| match n.operands.get(1) {
                    Some(Operand::LiteralString(s)) => Some(s.clone()),
                    _ => None,
                })
                .flatten()
        })
    }

    fn split_globals(&mut self) -> Result<Vec<SplitSampler>, String> {
        let old = std::mem::take(&mut self.module.types_global_values);
        let mut out = Vec::with_capacity(old.len() + 4);
        let mut split = Vec::new();
        for mut inst in old {
            let mut extra = None;
            if inst.class.opcode == Op::Variable {
                if let Some(&(pi, ps)) = inst.result_type.and_then(|t| self.types.get(&t)) {
                    let var = inst.result_id.ok_or("OpVariable without a result id")?;
                    if inst.operands.first()
                        != Some(&Operand::StorageClass(StorageClass::UniformConstant))
                    {
                        return Err(format!(
                            "combined image-sampler variable %{var} outside UniformConstant"
                        ));
                    }
                    let set = self.decoration(var, Decoration::DescriptorSet).unwrap_or(0);
                    let binding = self.decoration(var, Decoration::Binding).unwrap_or(0);
                    let name = self.name_of(var);
                    let sampler_binding = binding.checked_add(SAMPLER_BINDING_OFFSET).filter(|_| binding < SAMPLER_BINDING_OFFSET).ok_or_else(|| {
                        format!(
                            "binding {binding} of `{}` is too large to split (must be below {SAMPLER_BINDING_OFFSET})",
                            name.as_deref().unwrap_or("?")
                        )
                    })?;
                    let svar = self.fresh();
                    inst.result_type = Some(pi);
                    extra = Some(Instruction::new(
                        Op::Variable,
                        Some(ps),
                        Some(svar),
                        vec![Operand::StorageClass(StorageClass::UniformConstant)],
                    ));
                    let decorate = |d, v| {
                        Instruction::new(
                            Op::Decorate,
                            None,
                            None,
                            vec![
                                Operand::IdRef(svar),
                                Operand::Decoration(d),
                                Operand::LiteralBit32(v),
                            ],
                        )
                    };
                    self.module
                        .annotations
                        .push(decorate(Decoration::DescriptorSet, set));
                    self.module
                        .annotations
                        .push(decorate(Decoration::Binding, sampler_binding));
                    if let Some(n) = &name {
                        self.module.debug_names.push(Instruction::new(
                            Op::Name,
                            None,
                            None,
                            vec![
                                Operand::IdRef(svar),
                                Operand::LiteralString(format!("{n}_sampler")),
                            ],
                        ));
                    }
                    self.values.insert(var, (var, svar));
                    split.push(SplitSampler {
                        name,
                        set,
                        image_binding: binding,
                        sampler_binding,
                    });
                }
            }
            out.push(inst);
            out.extend(extra);
        }
        self.module.types_global_values = out;
        Ok(split)
    }

    /// Function types taking combined pointers take the image and the sampler pointer instead.
    /// Rewritten in place: every function of such a type gets its parameters split the same way.
    fn split_function_types(&mut self) {
        for inst in &mut self.module.types_global_values {
            if inst.class.opcode != Op::TypeFunction {
                continue;
            }
            let mut ops = Vec::with_capacity(inst.operands.len() + 2);
            for (k, op) in inst.operands.iter().enumerate() {
                match id(op).and_then(|t| self.types.get(&t)) {
                    Some(&(pi, ps)) if k > 0 => {
                        ops.push(Operand::IdRef(pi));
                        ops.push(Operand::IdRef(ps));
                    }
                    _ => ops.push(op.clone()),
                }
            }
            inst.operands = ops;
        }
    }

    fn split_functions(&mut self) -> Result<(), String> {
        let mut functions = std::mem::take(&mut self.module.functions);
        // Parameters first: a call may precede the callee's definition in the module.
        for f in &mut functions {
            let old = std::mem::take(&mut f.parameters);
            for mut p in old {
                let split = p.result_type.and_then(|t| self.types.get(&t).copied());
                match (split, p.result_id) {
                    (Some((pi, ps)), Some(pid)) => {
                        p.result_type = Some(pi);
                        let sid = self.fresh();
                        f.parameters.push(p);
                        f.parameters.push(Instruction::new(
                            Op::FunctionParameter,
                            Some(ps),
                            Some(sid),
                            vec![],
                        ));
                        self.values.insert(pid, (pid, sid));
                    }
                    _ => f.parameters.push(p),
                }
            }
        }
        for f in &mut functions {
            for block in &mut f.blocks {
                let old = std::mem::take(&mut block.instructions);
                for inst in old {
                    self.rewrite(inst, &mut block.instructions)?;
                }
            }
        }
        self.module.functions = functions;
        Ok(())
    }

    fn rewrite(&mut self, mut inst: Instruction, out: &mut Vec<Instruction>) -> Result<(), String> {
        let uses_split = inst
            .operands
            .iter()
            .any(|o| id(o).is_some_and(|v| self.values.contains_key(&v)));
        if !uses_split {
            out.push(inst);
            return Ok(());
        }
        match inst.class.opcode {
            Op::Load => {
                let ptr = inst.operands.first().and_then(id).unwrap_or(0);
                let (pi, ps) = self.values[&ptr];
                let ty = inst.result_type.unwrap_or(0);
                let &(ti, ts) = self
                    .types
                    .get(&ty)
                    .ok_or_else(|| format!("load of a combined image-sampler as type %{ty}"))?;
                if !self.is_sampled_image(ty) {
                    return Err(
                        "loading a whole array of combined image-samplers is not supported".into(),
                    );
                }
                let (li, ls) = (self.fresh(), self.fresh());
                out.push(Instruction::new(
                    Op::Load,
                    Some(ti),
                    Some(li),
                    vec![Operand::IdRef(pi)],
                ));
                out.push(Instruction::new(
                    Op::Load,
                    Some(ts),
                    Some(ls),
                    vec![Operand::IdRef(ps)],
                ));
                out.push(Instruction::new(
                    Op::SampledImage,
                    inst.result_type,
                    inst.result_id,
                    vec![Operand::IdRef(li), Operand::IdRef(ls)],
                ));
            }
            Op::AccessChain | Op::InBoundsAccessChain => {
                let base = inst.operands.first().and_then(id).unwrap_or(0);
                let Some(&(bi, bs)) = self.values.get(&base) else {
                    return Err("a combined image-sampler used as an array index".into());
                };
                let ty = inst.result_type.unwrap_or(0);
                let &(ti, ts) = self.types.get(&ty).ok_or_else(|| {
                    format!("access chain into a combined image-sampler yields type %{ty}")
                })?;
                let result = inst.result_id.unwrap_or(0);
                let sid = self.fresh();
                let mut smp = inst.clone();
                inst.result_type = Some(ti);
                inst.operands[0] = Operand::IdRef(bi);
                smp.result_type = Some(ts);
                smp.result_id = Some(sid);
                smp.operands[0] = Operand::IdRef(bs);
                self.values.insert(result, (result, sid));
                out.push(inst);
                out.push(smp);
            }
            Op::FunctionCall => {
                let mut ops = Vec::with_capacity(inst.operands.len() + 2);
                for (k, op) in inst.operands.iter().enumerate() {
                    match id(op).and_then(|v| self.values.get(&v)) {
                        Some(&(vi, vs)) if k > 0 => {
                            ops.push(Operand::IdRef(vi));
                            ops.push(Operand::IdRef(vs));
                        }
                        _ => ops.push(op.clone()),
                    }
                }
                inst.operands = ops;
                out.push(inst);
            }
            other => {
                return Err(format!(
                    "unsupported use of a combined image-sampler pointer by Op{other:?}"
                ))
            }
        }
        Ok(())
    }

    fn is_sampled_image(&self, ty: Word) -> bool {
        self.module
            .types_global_values
            .iter()
            .any(|i| i.result_id == Some(ty) && i.class.opcode == Op::TypeSampledImage)
    }
}
