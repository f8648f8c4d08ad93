//! Statements, functions (inlined), variable storage: loads, stores and pointer arithmetic.

use naga::{Block, Handle, Statement, TypeInner};
use std::rc::Rc;

use super::builder::{s, Slot};
use super::{column_stride, reg_size, Ev, Lowerer, Place, Value, R};
use crate::frontend::limits::MAX_CALL_DEPTH;
use crate::ir::{Dimension, Opcode, Register, RegisterFile};

/// A construct `break` (BRK) leaves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Breakable {
    /// A TGSI loop that is a naga loop: `continue` is CONT.
    Loop,
    /// The one-pass inner loop holding a loop body whose `continue` must still reach the
    /// `continuing` block: `continue` is BRK, `break` sets the flag then BRK.
    Body { break_flag: Slot },
    /// A SWITCH.
    Switch,
}

/// Per-call lowering state: one per inlined function body.
pub(crate) struct FnCtx<'f> {
    pub func: &'f naga::Function,
    pub finfo: &'f naga::valid::FunctionInfo,
    pub values: Vec<Option<Ev>>,
    pub args: Vec<Ev>,
    pub locals: Vec<Place>,
    pub result: Option<Place>,
    pub is_entry: bool,
    pub ret_flag: Option<Slot>,
    pub breakables: Vec<Breakable>,
}

fn block_returns(block: &Block) -> bool {
    block.iter().any(stmt_returns)
}

fn stmt_returns(st: &Statement) -> bool {
    match st {
        Statement::Return { .. } => true,
        Statement::Block(b) => block_returns(b),
        Statement::If { accept, reject, .. } => block_returns(accept) || block_returns(reject),
        Statement::Switch { cases, .. } => cases.iter().any(|c| block_returns(&c.body)),
        Statement::Loop {
            body, continuing, ..
        } => block_returns(body) || block_returns(continuing),
        _ => false,
    }
}

/// True when `block` has a `continue` for the loop that owns it (not one of a nested loop).
fn block_continues(block: &Block) -> bool {
    block.iter().any(|st| match st {
        Statement::Continue => true,
        Statement::Block(b) => block_continues(b),
        Statement::If { accept, reject, .. } => block_continues(accept) || block_continues(reject),
        Statement::Switch { cases, .. } => cases.iter().any(|c| block_continues(&c.body)),
        _ => false,
    })
}

impl<'a> Lowerer<'a> {
    /// Lowers a function body with the given argument values (inlining it at the current point).
    /// Returns the place holding its result, if it has one.
    pub fn lower_function(
        &mut self,
        func: &'a naga::Function,
        finfo: &'a naga::valid::FunctionInfo,
        args: Vec<Ev>,
        is_entry: bool,
    ) -> R<Option<Place>> {
        let mut ctx = FnCtx {
            func,
            finfo,
            values: vec![None; func.expressions.len()],
            args,
            locals: Vec::new(),
            result: None,
            is_entry,
            ret_flag: None,
            breakables: Vec::new(),
        };
        if is_entry {
            // Private globals start as their initializer, or zero.
            let globals: Vec<_> = self
                .module
                .global_variables
                .iter()
                .filter(|(_, g)| g.space == naga::AddressSpace::Private)
                .map(|(h, g)| (h, g.init))
                .collect();
            for (h, init) in globals {
                self.span = self.module.global_variables.get_span(h);
                let Some(Ev::Ptr(place)) = self.globals.get(&h).cloned() else {
                    continue;
                };
                let value = match init {
                    Some(e) => self.const_value(e)?,
                    None => self.zero_value(&place.ty)?,
                };
                self.store(&place, &value)?;
            }
        }
        for (h, local) in func.local_variables.iter() {
            self.span = func.local_variables.get_span(h);
            let ty = self.shared_type(local.ty);
            let place = self.alloc_storage(ty)?;
            let value = match local.init {
                Some(e) => match self.eval(&mut ctx, e)? {
                    Ev::Val(v) => v,
                    _ => return Err(self.err("variable initializer is not a value")),
                },
                None => self.zero_value(&place.ty)?,
            };
            self.store(&place, &value)?;
            ctx.locals.push(place);
        }
        if !is_entry {
            if let Some(res) = &func.result {
                let ty = self.shared_type(res.ty);
                ctx.result = Some(self.alloc_storage(ty)?);
            }
        }
        // A flag is needed unless the only return is the body's last statement.
        let n = func.body.len();
        let early = func.body.iter().enumerate().any(|(i, st)| {
            stmt_returns(st) && !(i + 1 == n && matches!(st, Statement::Return { .. }))
        });
        if early {
            let t = self.b.temp();
            let zero = self.b.imm(0);
            self.b.store(t, 0, &[zero]);
            ctx.ret_flag = Some(Slot { reg: t, comp: 0 });
        }
        self.lower_block(&mut ctx, &func.body)?;
        Ok(ctx.result)
    }

    fn lower_block(&mut self, ctx: &mut FnCtx<'a>, block: &'a Block) -> R<()> {
        let stmts: Vec<(&Statement, naga::Span)> =
            block.span_iter().map(|(s, sp)| (s, *sp)).collect();
        self.lower_stmts(ctx, &stmts)
    }

    fn lower_stmts(&mut self, ctx: &mut FnCtx<'a>, stmts: &[(&'a Statement, naga::Span)]) -> R<()> {
        if let Some(&(_, span)) = stmts.first() {
            if span.is_defined() {
                self.span = span;
            }
        }
        if self.depth >= super::MAX_LOWERING_DEPTH {
            return Err(self.err(format!(
                "statements nested more than {} levels deep, counting inlined calls and the \
                 code after each early `return` (see docs/limits.md)",
                super::MAX_LOWERING_DEPTH
            )));
        }
        self.depth += 1;
        let result = self.lower_stmts_nested(ctx, stmts);
        self.depth -= 1;
        result
    }

    /// [`Self::lower_stmts`] one level deeper.
    fn lower_stmts_nested(
        &mut self,
        ctx: &mut FnCtx<'a>,
        stmts: &[(&'a Statement, naga::Span)],
    ) -> R<()> {
        for (i, &(st, span)) in stmts.iter().enumerate() {
            if span.is_defined() {
                self.span = span;
            }
            if self.b.insts.len() > super::MAX_LOWERED_INSTRUCTIONS {
                return Err(self.err(format!(
                    "the shader lowers to more than {} instructions (calls are inlined; see \
                     docs/limits.md)",
                    super::MAX_LOWERED_INSTRUCTIONS
                )));
            }
            self.lower_stmt(ctx, st)?;
            let rest = &stmts[i + 1..];
            if let (true, Some(flag)) = (stmt_returns(st), ctx.ret_flag) {
                if !matches!(st, Statement::Return { .. }) && !ctx.breakables.is_empty() {
                    self.b.uif(flag);
                    self.b.flow(Opcode::BRK);
                    self.b.flow(Opcode::ENDIF);
                }
                if !rest.is_empty() {
                    // Lanes that returned skip the rest of the block.
                    self.b.uif(flag);
                    self.b.flow(Opcode::ELSE);
                    self.lower_stmts(ctx, rest)?;
                    self.b.flow(Opcode::ENDIF);
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    fn scalar_of(&mut self, ctx: &mut FnCtx<'a>, h: Handle<naga::Expression>) -> R<Slot> {
        match self.eval(ctx, h)? {
            Ev::Val(Value::V(v)) if !v.is_empty() => Ok(v[0]),
            _ => Err(self.err("expected a scalar")),
        }
    }

    fn lower_stmt(&mut self, ctx: &mut FnCtx<'a>, st: &'a Statement) -> R<()> {
        match st {
            Statement::Emit(range) => {
                for h in range.clone() {
                    let span = ctx.func.expressions.get_span(h);
                    if span.is_defined() {
                        self.span = span;
                    }
                    self.eval(ctx, h)?;
                }
            }
            Statement::Block(b) => self.lower_block(ctx, b)?,
            Statement::If {
                condition,
                accept,
                reject,
            } => {
                let c = self.scalar_of(ctx, *condition)?;
                self.b.uif(c);
                self.lower_block(ctx, accept)?;
                if !reject.is_empty() {
                    self.b.flow(Opcode::ELSE);
                    self.lower_block(ctx, reject)?;
                }
                self.b.flow(Opcode::ENDIF);
            }
            Statement::Switch { selector, cases } => {
                let sel = self.scalar_of(ctx, *selector)?;
                let src = self.b.operand(&[sel]);
                self.b.emit(Opcode::SWITCH, None, vec![src]);
                ctx.breakables.push(Breakable::Switch);
                for case in cases {
                    match case.value {
                        naga::SwitchValue::I32(v) => {
                            let imm = self.b.imm(v as u32);
                            let src = self.b.operand(&[imm]);
                            self.b.emit(Opcode::CASE, None, vec![src]);
                        }
                        naga::SwitchValue::U32(v) => {
                            let imm = self.b.imm(v);
                            let src = self.b.operand(&[imm]);
                            self.b.emit(Opcode::CASE, None, vec![src]);
                        }
                        naga::SwitchValue::Default => self.b.flow(Opcode::DEFAULT),
                    }
                    self.lower_block(ctx, &case.body)?;
                    if !case.fall_through {
                        self.b.flow(Opcode::BRK);
                    }
                }
                ctx.breakables.pop();
                self.b.flow(Opcode::ENDSWITCH);
            }
            Statement::Loop {
                body,
                continuing,
                break_if,
            } => {
                self.b.flow(Opcode::BGNLOOP);
                let wrap = !continuing.is_empty() && block_continues(body);
                if wrap {
                    let t = self.b.temp();
                    let zero = self.b.imm(0);
                    self.b.store(t, 0, &[zero]);
                    let flag = Slot { reg: t, comp: 0 };
                    self.b.flow(Opcode::BGNLOOP);
                    ctx.breakables.push(Breakable::Body { break_flag: flag });
                    self.lower_block(ctx, body)?;
                    ctx.breakables.pop();
                    self.b.flow(Opcode::BRK);
                    self.b.flow(Opcode::ENDLOOP);
                    self.b.uif(flag);
                    self.b.flow(Opcode::BRK);
                    self.b.flow(Opcode::ENDIF);
                    if let (true, Some(ret)) = (block_returns(body), ctx.ret_flag) {
                        self.b.uif(ret);
                        self.b.flow(Opcode::BRK);
                        self.b.flow(Opcode::ENDIF);
                    }
                    ctx.breakables.push(Breakable::Loop);
                } else {
                    ctx.breakables.push(Breakable::Loop);
                    self.lower_block(ctx, body)?;
                }
                self.lower_block(ctx, continuing)?;
                if let Some(cond) = break_if {
                    let c = self.scalar_of(ctx, *cond)?;
                    self.b.uif(c);
                    self.b.flow(Opcode::BRK);
                    self.b.flow(Opcode::ENDIF);
                }
                ctx.breakables.pop();
                self.b.flow(Opcode::ENDLOOP);
            }
            Statement::Break => match ctx.breakables.last() {
                Some(Breakable::Body { break_flag }) => {
                    let flag = *break_flag;
                    let ones = self.b.imm(!0);
                    self.b.store(flag.reg, 0, &[ones]);
                    self.b.flow(Opcode::BRK);
                }
                Some(_) => self.b.flow(Opcode::BRK),
                None => return Err(self.err("`break` outside a loop or switch")),
            },
            Statement::Continue => {
                let target = ctx
                    .breakables
                    .iter()
                    .rev()
                    .find(|b| !matches!(b, Breakable::Switch))
                    .copied();
                match target {
                    Some(Breakable::Loop) => self.b.flow(Opcode::CONT),
                    Some(Breakable::Body { .. }) => {
                        if matches!(ctx.breakables.last(), Some(Breakable::Switch)) {
                            return self.unsupported(
                                "`continue` inside a `switch` of a loop with a `continuing` block",
                            );
                        }
                        self.b.flow(Opcode::BRK);
                    }
                    _ => return Err(self.err("`continue` outside a loop")),
                }
            }
            Statement::Return { value } => {
                if let Some(v) = value {
                    let v = match self.eval(ctx, *v)? {
                        Ev::Val(v) => v,
                        _ => return Err(self.err("returned value is not a value")),
                    };
                    if ctx.is_entry {
                        self.write_outputs(&v)?;
                    } else if let Some(res) = ctx.result.clone() {
                        self.store(&res, &v)?;
                    }
                }
                if let Some(flag) = ctx.ret_flag {
                    let ones = self.b.imm(!0);
                    self.b.store(flag.reg, 0, &[ones]);
                    if !ctx.breakables.is_empty() {
                        self.b.flow(Opcode::BRK);
                    }
                }
            }
            Statement::Kill => {
                if self.stage == naga::ShaderStage::Vertex {
                    return Err(self.stage_error("discard"));
                }
                self.b.flow(Opcode::KILL);
            }
            Statement::Store { pointer, value } => {
                let place = match self.eval(ctx, *pointer)? {
                    Ev::Ptr(p) => p,
                    _ => return Err(self.err("store through a non-pointer")),
                };
                let value = match self.eval(ctx, *value)? {
                    Ev::Val(v) => v,
                    _ => return Err(self.err("stored value is not a value")),
                };
                self.store(&place, &value)?;
            }
            Statement::Call {
                function,
                arguments,
                result,
            } => {
                if self.call_stack.len() >= MAX_CALL_DEPTH {
                    return Err(self.err(format!(
                        "calls nested more than {MAX_CALL_DEPTH} deep (see docs/limits.md)"
                    )));
                }
                if self.call_stack.contains(function) {
                    let name = self.module.functions[*function]
                        .name
                        .clone()
                        .unwrap_or_default();
                    return Err(self.err(format!("recursive call of function `{name}`")));
                }
                let mut args = Vec::new();
                for a in arguments {
                    args.push(self.eval(ctx, *a)?);
                }
                let callee = &self.module.functions[*function];
                let cinfo = &self.info[*function];
                self.call_stack.push(*function);
                let span = self.span;
                let res = self.lower_function(callee, cinfo, args, false);
                self.span = span;
                self.call_stack.pop();
                let res = res?;
                if let (Some(h), Some(place)) = (result, res) {
                    let v = self.load(&place)?;
                    ctx.values[h.index()] = Some(Ev::Val(v));
                }
            }
            Statement::ControlBarrier(_) | Statement::MemoryBarrier(_) => {
                return self.unsupported("barrier")
            }
            Statement::ImageStore {
                image,
                coordinate,
                array_index,
                value,
            } => self.image_store(ctx, *image, *coordinate, *array_index, *value)?,
            Statement::Atomic {
                pointer,
                fun,
                value,
                result,
            } => self.atomic(ctx, *pointer, fun, *value, *result)?,
            Statement::ImageAtomic { .. } => {
                return self.unsupported("atomic operation on an image")
            }
            Statement::WorkGroupUniformLoad { .. } => {
                return self.unsupported("workgroupUniformLoad")
            }
            Statement::SubgroupBallot { .. }
            | Statement::SubgroupGather { .. }
            | Statement::SubgroupCollectiveOperation { .. } => {
                return self.unsupported("subgroup operation")
            }
            Statement::RayQuery { .. } | Statement::RayPipelineFunction(_) => {
                return self.unsupported("ray tracing")
            }
            Statement::CooperativeStore { .. } => return self.unsupported("cooperative matrix"),
        }
        Ok(())
    }

    /// The stage-rule error: `what` cannot be used in a vertex shader.
    pub fn stage_error(&self, what: &str) -> super::FrontendError {
        let line = match self.source {
            Some(src) if self.span.is_defined() => {
                format!(" (line {})", self.span.location(src).line_number)
            }
            _ => String::new(),
        };
        self.err(format!(
            "{what} is only allowed in a fragment shader, not in a vertex shader{line}"
        ))
    }

    /// The zero value of a type.
    pub fn zero_value(&mut self, ty: &TypeInner) -> R<Value> {
        let module = self.module;
        Ok(match ty {
            TypeInner::Scalar(_) => Value::V(vec![self.b.imm(0)]),
            TypeInner::Vector { size, .. } => Value::V(vec![self.b.imm(0); *size as usize]),
            TypeInner::Matrix { columns, rows, .. } => Value::C(
                (0..*columns as usize)
                    .map(|_| Value::V(vec![self.b.imm(0); *rows as usize]))
                    .collect(),
            ),
            TypeInner::Array {
                base,
                size: naga::ArraySize::Constant(n),
                ..
            } => {
                let e = self.zero_value(&module.types[*base].inner)?;
                Value::C(vec![e; n.get() as usize])
            }
            TypeInner::Struct { members, .. } => {
                let mut parts = Vec::new();
                for m in members {
                    parts.push(self.zero_value(&module.types[m.ty].inner)?);
                }
                Value::C(parts)
            }
            other => return self.unsupported(format!("value of type {other:?}")),
        })
    }

    /// The register of a place whose `ty` is a scalar or vector, and its first component.
    fn place_register(&mut self, p: &Place) -> (Register, u8) {
        let (index, comp) = if p.bytes() {
            (p.base / 16, ((p.base % 16) / 4) as u8)
        } else {
            (p.base, p.comp.unwrap_or(0))
        };
        let mut reg = Register::new(p.file, index as i32);
        reg.dimension = p.dim.map(|d| Dimension {
            index: d as i32,
            indirect: None,
        });
        if let Some(d) = p.dynamic {
            reg.indirect = Some(self.b.address(d, p.array_id));
        }
        (reg, comp)
    }

    /// Reads a place into fresh registers (or, for read-only CONST data, references it).
    pub fn load(&mut self, p: &Place) -> R<Value> {
        if let Some((index, n)) = p.dyn_comp {
            let mut vp = p.clone();
            vp.dyn_comp = None;
            vp.ty = match *p.ty {
                TypeInner::Scalar(scalar) => Rc::new(TypeInner::Vector {
                    size: match n {
                        2 => naga::VectorSize::Bi,
                        3 => naga::VectorSize::Tri,
                        _ => naga::VectorSize::Quad,
                    },
                    scalar,
                }),
                _ => return Err(self.err("dynamic component of a non-scalar")),
            };
            let v = self.load(&vp)?;
            let r = self.select_component(v.slots(), index);
            return Ok(Value::V(vec![r]));
        }
        match &*p.ty {
            TypeInner::Scalar(_) | TypeInner::Vector { .. } | TypeInner::Atomic(_)
                if p.file == RegisterFile::Buffer =>
            {
                self.buffer_load(p)
            }
            TypeInner::Scalar(_) | TypeInner::Vector { .. } => {
                let n = match &*p.ty {
                    TypeInner::Vector { size, .. } => *size as usize,
                    _ => 1,
                };
                let (reg, comp) = self.place_register(p);
                let slots: Vec<Slot> = (comp..comp + n as u8)
                    .map(|c| Slot { reg, comp: c })
                    .collect();
                if p.file == RegisterFile::Constant && reg.indirect.is_none() {
                    Ok(Value::V(slots))
                } else {
                    Ok(Value::V(self.b.gather(&slots)))
                }
            }
            TypeInner::Matrix { columns, .. } => {
                let mut cols = Vec::new();
                for c in 0..*columns as u32 {
                    let sub = self.place_index(p, c)?;
                    cols.push(self.load(&sub)?);
                }
                Ok(Value::C(cols))
            }
            TypeInner::Array {
                size: naga::ArraySize::Constant(n),
                ..
            } => {
                let mut parts = Vec::new();
                for i in 0..n.get() {
                    let sub = self.place_index(p, i)?;
                    parts.push(self.load(&sub)?);
                }
                Ok(Value::C(parts))
            }
            TypeInner::Struct { members, .. } => {
                let mut parts = Vec::new();
                for i in 0..members.len() as u32 {
                    let sub = self.place_index(p, i)?;
                    parts.push(self.load(&sub)?);
                }
                Ok(Value::C(parts))
            }
            other => self.unsupported(format!("load of type {other:?}")),
        }
    }

    /// Writes `value` to a TEMP place.
    pub fn store(&mut self, p: &Place, value: &Value) -> R<()> {
        if p.file == RegisterFile::Buffer {
            return match (&*p.ty, value) {
                (_, Value::V(slots)) => self.buffer_store(p, slots),
                (_, Value::C(parts)) => {
                    for (i, part) in parts.iter().enumerate() {
                        let sub = self.place_index(p, i as u32)?;
                        self.store(&sub, part)?;
                    }
                    Ok(())
                }
            };
        }
        if p.file != RegisterFile::Temporary {
            return Err(self.err("store to read-only storage"));
        }
        if let Some((index, n)) = p.dyn_comp {
            // v[i] = x: every component takes x where i selects it.
            let mut vp = p.clone();
            vp.dyn_comp = None;
            vp.ty = match *p.ty {
                TypeInner::Scalar(scalar) => Rc::new(TypeInner::Vector {
                    size: match n {
                        2 => naga::VectorSize::Bi,
                        3 => naga::VectorSize::Tri,
                        _ => naga::VectorSize::Quad,
                    },
                    scalar,
                }),
                _ => return Err(self.err("dynamic component of a non-scalar")),
            };
            let old = self.load(&vp)?;
            let x = value
                .slots()
                .first()
                .copied()
                .ok_or_else(|| self.err("bad store"))?;
            let mut new = Vec::new();
            for c in 0..n as usize {
                let k = self.b.imm(c as u32);
                let eq = self.b.op(Opcode::USEQ, 1, &[s(&[index]), s(&[k])]);
                let r = self
                    .b
                    .op(Opcode::UCMP, 1, &[s(&eq), s(&[x]), s(&[old.slots()[c]])]);
                new.push(r[0]);
            }
            return self.store(&vp, &Value::V(new));
        }
        match (&*p.ty, value) {
            (TypeInner::Scalar(_) | TypeInner::Vector { .. }, Value::V(slots)) => {
                let (reg, comp) = self.place_register(p);
                self.b.store(reg, comp, slots);
                Ok(())
            }
            (_, Value::C(parts)) => {
                for (i, part) in parts.iter().enumerate() {
                    let sub = self.place_index(p, i as u32)?;
                    self.store(&sub, part)?;
                }
                Ok(())
            }
            _ => Err(self.err("stored value does not match the variable's type")),
        }
    }

    /// `p[i]` / `p.member` with a constant index.
    pub fn place_index(&mut self, p: &Place, i: u32) -> R<Place> {
        let module = self.module;
        let mut q = p.clone();
        match &*p.ty {
            TypeInner::Vector { scalar, size } => {
                if i >= *size as u32 {
                    return Err(self.err("vector index out of range"));
                }
                q.ty = Rc::new(TypeInner::Scalar(*scalar));
                if p.bytes() {
                    q.base += 4 * i;
                } else {
                    q.comp = Some(p.comp.unwrap_or(0) + i as u8);
                }
            }
            TypeInner::Matrix { rows, scalar, .. } => {
                q.ty = Rc::new(TypeInner::Vector {
                    size: *rows,
                    scalar: *scalar,
                });
                q.base += if p.bytes() {
                    i * column_stride(*rows)
                } else {
                    i
                };
            }
            TypeInner::Array { base, stride, .. } => {
                let e = &module.types[*base].inner;
                q.ty = self.shared_type(*base);
                q.base += if p.bytes() {
                    i * stride
                } else {
                    i * reg_size(module, e)
                };
            }
            TypeInner::Struct { members, .. } => {
                let m = members
                    .get(i as usize)
                    .ok_or_else(|| self.err("struct member out of range"))?;
                q.ty = self.shared_type(m.ty);
                q.base += if p.bytes() {
                    m.offset
                } else {
                    members[..i as usize]
                        .iter()
                        .map(|m| reg_size(module, &module.types[m.ty].inner))
                        .sum()
                };
            }
            other => return Err(self.err(format!("cannot index into {other:?}"))),
        }
        Ok(q)
    }

    /// `p[index]` with a dynamic index.
    pub fn place_access(&mut self, p: &Place, index: Slot) -> R<Place> {
        if p.file == RegisterFile::Buffer {
            return self.buffer_access(p, index);
        }
        let module = self.module;
        let mut q = p.clone();
        let scale = match &*p.ty {
            TypeInner::Vector { scalar, size } => {
                if p.dyn_comp.is_some() || p.comp.is_some() {
                    return self.unsupported("nested dynamic vector indexing");
                }
                q.ty = Rc::new(TypeInner::Scalar(*scalar));
                q.dyn_comp = Some((index, *size as u8));
                return Ok(q);
            }
            TypeInner::Matrix { rows, scalar, .. } => {
                q.ty = Rc::new(TypeInner::Vector {
                    size: *rows,
                    scalar: *scalar,
                });
                if p.bytes() {
                    column_stride(*rows)
                } else {
                    1
                }
            }
            TypeInner::Array { base, stride, .. } => {
                let e = &module.types[*base].inner;
                q.ty = self.shared_type(*base);
                if p.bytes() {
                    *stride
                } else {
                    reg_size(module, e)
                }
            }
            other => return Err(self.err(format!("cannot index into {other:?}"))),
        };
        let runtime_sized = matches!(
            &*p.ty,
            TypeInner::Array {
                size: naga::ArraySize::Dynamic,
                ..
            }
        );
        if runtime_sized
            && p.bytes()
            && scale == 4
            && p.base.is_multiple_of(16)
            && matches!(*q.ty, TypeInner::Scalar(_))
        {
            // A runtime-sized array of 32-bit scalars (a storage buffer's `uint data[]`, what
            // `ByteAddressBuffer` reads): register `index / 4`, component `index % 4`.
            let two = self.b.imm(2);
            let three = self.b.imm(3);
            let reg = self.b.op(Opcode::USHR, 1, &[s(&[index]), s(&[two])])[0];
            let comp = self.b.op(Opcode::AND, 1, &[s(&[index]), s(&[three])])[0];
            q.dynamic = Some(match p.dynamic {
                Some(d) => self.b.op(Opcode::UADD, 1, &[s(&[d]), s(&[reg])])[0],
                None => reg,
            });
            q.dyn_comp = Some((comp, 4));
            return Ok(q);
        }
        if runtime_sized && p.bytes() && (!scale.is_multiple_of(16) || !p.base.is_multiple_of(16)) {
            return self.unsupported(format!(
                "indexing a storage buffer's runtime-sized array of {scale}-byte elements (constant \
                 data is indexed by 16-byte registers or 4-byte scalars)"
            ));
        }
        if p.bytes() && (!scale.is_multiple_of(16) || !p.base.is_multiple_of(16)) {
            // Elements that do not start registers (the 8-byte columns of a `matNx2`) cannot be
            // addressed through ADDR; uniform data is read-only, so a register copy of the
            // whole value indexes the same.
            let value = self.load(p)?;
            let copy = self.materialize(&value, &p.ty)?;
            return self.place_access(&copy, index);
        }
        let regs = if p.bytes() { scale / 16 } else { scale };
        let scaled = if regs == 1 {
            index
        } else {
            let k = self.b.imm(regs);
            self.b.op(Opcode::UMUL, 1, &[s(&[index]), s(&[k])])[0]
        };
        q.dynamic = Some(match p.dynamic {
            Some(d) => self.b.op(Opcode::UADD, 1, &[s(&[d]), s(&[scaled])])[0],
            None => scaled,
        });
        if p.file == RegisterFile::Temporary && p.array_id.is_none() {
            return Err(self.err("dynamic index into a non-array variable"));
        }
        Ok(q)
    }

    /// Selects `slots[index]` per lane with a UCMP chain.
    pub fn select_component(&mut self, slots: &[Slot], index: Slot) -> Slot {
        let mut r = slots[0];
        for (c, &sl) in slots.iter().enumerate().skip(1) {
            let k = self.b.imm(c as u32);
            let eq = self.b.op(Opcode::USEQ, 1, &[s(&[index]), s(&[k])]);
            r = self.b.op(Opcode::UCMP, 1, &[s(&eq), s(&[sl]), s(&[r])])[0];
        }
        r
    }

    /// Copies a composite value into a fresh TEMP ARRAY so it can be indexed dynamically.
    pub fn materialize(&mut self, value: &Value, ty: &TypeInner) -> R<Place> {
        let mut place = self.alloc_storage(Rc::new(ty.clone()))?;
        if place.array_id.is_none() {
            self.check_registers(1)?;
            // A one-register composite still needs an array id for ADDR indexing.
            let (first, id) = self.b.temp_array(1);
            place.base = first;
            place.array_id = Some(id);
        }
        self.store(&place, value)?;
        Ok(place)
    }
}
