//! A SPIR-V pass for matrices whose columns are further apart than naga's layout allows: std140
//! pads every matrix column to 16 bytes, so a `mat2`, `mat3x2` or `mat4x2` in a uniform block
//! has `MatrixStride 16` where naga (like WGSL) only reads 8, and its SPIR-V reader rejects the
//! module ("unsupported matrix stride").
//!
//! Each such column-major block member (also inside nested structs, and arrays of such
//! matrices; `row_major` ones are left to naga, which rejects them) gets an
//! array type instead: `matCx2` → `vec2[C]` with `ArrayStride 16`, the same bytes. Pointers to
//! the member (access chains into `Uniform`/`PushConstant` data ending at it) point to the
//! array; chains that go on to a column or a component are unchanged, since indexing the array
//! yields the same `vec2` as indexing the matrix. Every `OpLoad` of a whole rewritten matrix
//! loads the array and rebuilds the matrix from its columns with the old result id, so the
//! code using the value is untouched.

use std::collections::{HashMap, HashSet};

use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{Decoration, Op, StorageClass, Word};

use super::spirv_ids::{id, lit};

/// One block member that was rewritten, for reflection (which reports the original type).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaddedMatrix {
    /// The struct type's `OpName`, if any.
    pub struct_name: Option<String>,
    /// The member index.
    pub member: u32,
    /// The columns and rows of the matrix.
    pub columns: u32,
    /// Rows (components per column).
    pub rows: u32,
}

/// naga's column stride for a float matrix with `rows` rows.
fn natural_stride(rows: u32) -> u32 {
    if rows == 2 {
        8
    } else {
        16
    }
}

struct Pass<'m> {
    module: &'m mut Module,
    next: Word,
    defs: HashMap<Word, Instruction>,
    /// Old type → its replacement (matrix → array of columns, array of matrices → array of
    /// arrays), with the instructions that define the replacements.
    replaced: HashMap<Word, Word>,
    new_types: Vec<Instruction>,
    new_decorations: Vec<Instruction>,
    /// (storage class, pointee) → pointer type, existing and new.
    pointers: HashMap<(StorageClass, Word), Word>,
}

/// Rewrites every over-strided matrix member of `module`; see the module documentation.
pub fn rewrite(module: &mut Module) -> Result<Vec<PaddedMatrix>, String> {
    let next = module.header.as_ref().map_or(1, |h| h.bound);
    let defs = module
        .types_global_values
        .iter()
        .filter_map(|i| Some((i.result_id?, i.clone())))
        .collect();
    let mut pass = Pass {
        module,
        next,
        defs,
        replaced: HashMap::new(),
        new_types: Vec::new(),
        new_decorations: Vec::new(),
        pointers: HashMap::new(),
    };
    let found = pass.run()?;
    if let Some(h) = pass.module.header.as_mut() {
        h.bound = pass.next;
    }
    Ok(found)
}

impl Pass<'_> {
    fn fresh(&mut self) -> Word {
        self.next += 1;
        self.next - 1
    }

    /// `(columns, rows, column type)` of a float matrix type.
    fn matrix(&self, ty: Word) -> Option<(u32, u32, Word)> {
        let def = self.defs.get(&ty)?;
        if def.class.opcode != Op::TypeMatrix {
            return None;
        }
        let column = id(def.operands.first())?;
        let columns = lit(def.operands.get(1))?;
        let cdef = self.defs.get(&column)?;
        let rows = lit(cdef.operands.get(1))?;
        Some((columns, rows, column))
    }

    /// A 32-bit unsigned constant with value `n` (found or added; the uint type too).
    fn uint_constant(&mut self, n: u32) -> Word {
        let uint = self
            .defs
            .values()
            .chain(&self.new_types)
            .find(|i| {
                i.class.opcode == Op::TypeInt
                    && lit(i.operands.first()) == Some(32)
                    && lit(i.operands.get(1)) == Some(0)
            })
            .and_then(|i| i.result_id);
        let uint = match uint {
            Some(u) => u,
            None => {
                let u = self.fresh();
                self.new_types.push(Instruction::new(
                    Op::TypeInt,
                    None,
                    Some(u),
                    vec![Operand::LiteralBit32(32), Operand::LiteralBit32(0)],
                ));
                u
            }
        };
        let existing = self
            .defs
            .values()
            .chain(&self.new_types)
            .find(|i| {
                i.class.opcode == Op::Constant
                    && i.result_type == Some(uint)
                    && lit(i.operands.first()) == Some(n)
            })
            .and_then(|i| i.result_id);
        existing.unwrap_or_else(|| {
            let c = self.fresh();
            self.new_types.push(Instruction::new(
                Op::Constant,
                Some(uint),
                Some(c),
                vec![Operand::LiteralBit32(n)],
            ));
            c
        })
    }

    /// The replacement of `ty` (a matrix, or arrays of one) with columns `stride` bytes apart.
    fn replacement(&mut self, ty: Word, stride: u32) -> Option<Word> {
        if let Some(&r) = self.replaced.get(&ty) {
            return Some(r);
        }
        let def = self.defs.get(&ty)?.clone();
        let new = match def.class.opcode {
            Op::TypeMatrix => {
                let (columns, _, column) = self.matrix(ty)?;
                let len = self.uint_constant(columns);
                self.strided_array(column, len, stride)
            }
            Op::TypeArray => {
                let element = self.replacement(id(def.operands.first())?, stride)?;
                let len = id(def.operands.get(1))?;
                let array_stride = self.module.annotations.iter().find_map(|d| {
                    (d.class.opcode == Op::Decorate
                        && id(d.operands.first()) == Some(ty)
                        && d.operands.get(1) == Some(&Operand::Decoration(Decoration::ArrayStride)))
                    .then(|| lit(d.operands.get(2)))
                    .flatten()
                })?;
                self.strided_array(element, len, array_stride)
            }
            _ => return None,
        };
        self.replaced.insert(ty, new);
        Some(new)
    }

    /// A new array type of `len` (a constant id) `element`s, `stride` bytes apart.
    fn strided_array(&mut self, element: Word, len: Word, stride: u32) -> Word {
        let a = self.fresh();
        self.new_types.push(Instruction::new(
            Op::TypeArray,
            None,
            Some(a),
            vec![Operand::IdRef(element), Operand::IdRef(len)],
        ));
        self.new_decorations.push(Instruction::new(
            Op::Decorate,
            None,
            None,
            vec![
                Operand::IdRef(a),
                Operand::Decoration(Decoration::ArrayStride),
                Operand::LiteralBit32(stride),
            ],
        ));
        a
    }

    /// The matrix at the bottom of `ty` (through arrays).
    fn inner_matrix(&self, mut ty: Word) -> Option<(u32, u32, Word)> {
        loop {
            let def = self.defs.get(&ty)?;
            match def.class.opcode {
                Op::TypeMatrix => return self.matrix(ty),
                Op::TypeArray => ty = id(def.operands.first())?,
                _ => return None,
            }
        }
    }

    fn pointer(&mut self, class: StorageClass, pointee: Word) -> Word {
        if let Some(&p) = self.pointers.get(&(class, pointee)) {
            return p;
        }
        let p = self.fresh();
        self.new_types.push(Instruction::new(
            Op::TypePointer,
            None,
            Some(p),
            vec![Operand::StorageClass(class), Operand::IdRef(pointee)],
        ));
        self.pointers.insert((class, pointee), p);
        p
    }

    fn run(&mut self) -> Result<Vec<PaddedMatrix>, String> {
        // Struct members with a matrix stride naga cannot read.
        let mut members: Vec<(Word, u32, u32)> = Vec::new();
        for d in &self.module.annotations {
            if d.class.opcode == Op::MemberDecorate
                && d.operands.get(2) == Some(&Operand::Decoration(Decoration::MatrixStride))
            {
                if let (Some(s), Some(m), Some(stride)) = (
                    id(d.operands.first()),
                    lit(d.operands.get(1)),
                    lit(d.operands.get(3)),
                ) {
                    members.push((s, m, stride));
                }
            }
        }
        let names: HashMap<Word, String> = self
            .module
            .debug_names
            .iter()
            .filter(|i| i.class.opcode == Op::Name)
            .filter_map(|i| match (id(i.operands.first()), i.operands.get(1)) {
                (Some(t), Some(Operand::LiteralString(s))) => Some((t, s.clone())),
                _ => None,
            })
            .collect();
        let mut found = Vec::new();
        for (s, m, stride) in members {
            let Some(member_ty) = self
                .defs
                .get(&s)
                .and_then(|d| id(d.operands.get(m as usize)))
            else {
                continue;
            };
            let Some((columns, rows, _)) = self.inner_matrix(member_ty) else {
                continue;
            };
            // Row-major storage keeps rows at the stride: the columns GLSL indexes are not
            // contiguous, so such members are left to naga (which reports the stride).
            let row_major = self.module.annotations.iter().any(|d| {
                d.class.opcode == Op::MemberDecorate
                    && id(d.operands.first()) == Some(s)
                    && lit(d.operands.get(1)) == Some(m)
                    && d.operands.get(2) == Some(&Operand::Decoration(Decoration::RowMajor))
            });
            if stride == natural_stride(rows) || row_major {
                continue;
            }
            if stride < 4 * rows {
                return Err(format!("matrix stride {stride} is smaller than a column"));
            }
            let new = self
                .replacement(member_ty, stride)
                .ok_or_else(|| format!("cannot re-type the matrix member {m} of %{s}"))?;
            for inst in &mut self.module.types_global_values {
                if inst.result_id == Some(s) {
                    inst.operands[m as usize] = Operand::IdRef(new);
                }
            }
            self.module.annotations.retain(|d| {
                !(d.class.opcode == Op::MemberDecorate
                    && id(d.operands.first()) == Some(s)
                    && lit(d.operands.get(1)) == Some(m)
                    && matches!(
                        d.operands.get(2),
                        Some(Operand::Decoration(
                            Decoration::MatrixStride | Decoration::ColMajor | Decoration::RowMajor
                        ))
                    ))
            });
            found.push(PaddedMatrix {
                struct_name: names.get(&s).cloned(),
                member: m,
                columns,
                rows,
            });
        }
        if found.is_empty() {
            return Ok(found);
        }
        for i in &self.module.types_global_values {
            if i.class.opcode == Op::TypePointer {
                if let (Some(Operand::StorageClass(c)), Some(p), Some(r)) =
                    (i.operands.first(), id(i.operands.get(1)), i.result_id)
                {
                    self.pointers.insert((*c, p), r);
                }
            }
        }
        // Pointers to a replaced type in block storage point to the replacement.
        let mut retarget: HashMap<Word, Word> = HashMap::new();
        let old_pointers: Vec<((StorageClass, Word), Word)> =
            self.pointers.iter().map(|(k, v)| (*k, *v)).collect();
        for ((class, pointee), ptr) in old_pointers {
            if !matches!(class, StorageClass::Uniform | StorageClass::PushConstant) {
                continue;
            }
            if let Some(&new) = self.replaced.get(&pointee) {
                let p = self.pointer(class, new);
                retarget.insert(ptr, p);
            }
        }
        // The new types refer to existing ones and rewritten structs refer to them: append them
        // and restore definition-before-use order.
        let new_types = std::mem::take(&mut self.new_types);
        self.module.types_global_values.extend(new_types);
        let section = std::mem::take(&mut self.module.types_global_values);
        self.module.types_global_values = definition_order(section);
        self.module
            .annotations
            .append(&mut std::mem::take(&mut self.new_decorations));
        let pointer_of: HashMap<Word, Word> = self
            .module
            .types_global_values
            .iter()
            .filter(|i| i.class.opcode == Op::TypePointer)
            .filter_map(|i| Some((i.result_id?, id(i.operands.get(1))?)))
            .collect();
        let mut next = self.next;
        let mut fresh = || {
            next += 1;
            next - 1
        };
        // Value ids that are pointers to a replacement, by their pointer type.
        let mut retyped: HashMap<Word, Word> = HashMap::new();
        let (defs, replaced) = (&self.defs, &self.replaced);
        for f in &mut self.module.functions {
            for block in &mut f.blocks {
                let old = std::mem::take(&mut block.instructions);
                for mut inst in old {
                    match inst.class.opcode {
                        Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain => {
                            if let Some(&p) = inst.result_type.and_then(|t| retarget.get(&t)) {
                                inst.result_type = Some(p);
                                if let Some(r) = inst.result_id {
                                    retyped.insert(r, p);
                                }
                            }
                            block.instructions.push(inst);
                        }
                        Op::Load => {
                            let ptr_ty = id(inst.operands.first()).and_then(|p| retyped.get(&p));
                            let (Some(&ptr_ty), Some(old_ty), Some(result)) =
                                (ptr_ty, inst.result_type, inst.result_id)
                            else {
                                block.instructions.push(inst);
                                continue;
                            };
                            let Some(&new_ty) = pointer_of.get(&ptr_ty) else {
                                block.instructions.push(inst);
                                continue;
                            };
                            let loaded = fresh();
                            inst.result_type = Some(new_ty);
                            inst.result_id = Some(loaded);
                            block.instructions.push(inst);
                            rebuild(
                                defs,
                                replaced,
                                old_ty,
                                loaded,
                                result,
                                &mut fresh,
                                &mut block.instructions,
                            )?;
                        }
                        _ => block.instructions.push(inst),
                    }
                }
            }
        }
        self.next = next;
        Ok(found)
    }
}

/// Emits the instructions that turn `value` (of the replacement of `ty`) into a `ty` value
/// with id `result`: matrices from their columns, arrays element by element.
fn rebuild(
    defs: &HashMap<Word, Instruction>,
    replaced: &HashMap<Word, Word>,
    ty: Word,
    value: Word,
    result: Word,
    fresh: &mut impl FnMut() -> Word,
    out: &mut Vec<Instruction>,
) -> Result<(), String> {
    let def = defs.get(&ty).ok_or_else(|| format!("unknown type %{ty}"))?;
    let mut parts = Vec::new();
    match def.class.opcode {
        Op::TypeMatrix => {
            let column = id(def.operands.first()).ok_or("matrix without a column type")?;
            let columns = lit(def.operands.get(1)).ok_or("matrix without a column count")?;
            for c in 0..columns {
                let part = fresh();
                out.push(Instruction::new(
                    Op::CompositeExtract,
                    Some(column),
                    Some(part),
                    vec![Operand::IdRef(value), Operand::LiteralBit32(c)],
                ));
                parts.push(part);
            }
        }
        Op::TypeArray => {
            let element = id(def.operands.first()).ok_or("array without an element type")?;
            let len = id(def.operands.get(1))
                .and_then(|l| defs.get(&l))
                .filter(|c| c.class.opcode == Op::Constant)
                .and_then(|c| lit(c.operands.first()))
                .ok_or("array of matrices without a constant length")?;
            let new_element = *replaced
                .get(&element)
                .ok_or("array element type was not rewritten")?;
            for e in 0..len {
                let loaded = fresh();
                out.push(Instruction::new(
                    Op::CompositeExtract,
                    Some(new_element),
                    Some(loaded),
                    vec![Operand::IdRef(value), Operand::LiteralBit32(e)],
                ));
                let part = fresh();
                rebuild(defs, replaced, element, loaded, part, fresh, out)?;
                parts.push(part);
            }
        }
        other => return Err(format!("cannot rebuild a {other:?} from padded columns")),
    }
    out.push(Instruction::new(
        Op::CompositeConstruct,
        Some(ty),
        Some(result),
        parts.into_iter().map(Operand::IdRef).collect(),
    ));
    Ok(())
}

/// `section` (types, constants, global variables) reordered so every id is defined before it is
/// used, otherwise keeping the order.
fn definition_order(section: Vec<Instruction>) -> Vec<Instruction> {
    let defined: HashSet<Word> = section.iter().filter_map(|i| i.result_id).collect();
    let mut done: HashSet<Word> = HashSet::new();
    let mut out = Vec::with_capacity(section.len());
    let mut pending = section;
    while !pending.is_empty() {
        let before = out.len();
        let mut rest = Vec::new();
        for inst in pending {
            let ready = inst
                .result_type
                .into_iter()
                .chain(inst.operands.iter().filter_map(|o| id(Some(o))))
                .all(|d| !defined.contains(&d) || done.contains(&d) || Some(d) == inst.result_id);
            if ready {
                done.extend(inst.result_id);
                out.push(inst);
            } else {
                rest.push(inst);
            }
        }
        if out.len() == before {
            // A cycle (only forward pointers make one): keep the rest as it was.
            out.extend(rest);
            break;
        }
        pending = rest;
    }
    out
}
