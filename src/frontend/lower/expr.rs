//! Expressions: constants, composites, arithmetic, conversions, math builtins, derivatives and
//! texture instructions.

use naga::{
    BinaryOperator as B, Expression as E, Handle, MathFunction as M, ScalarKind, TypeInner,
};

use super::builder::{abs, neg, s, slots_of, Slot};
use super::stmt::FnCtx;
use super::{Ev, Lowerer, TexRef, Value, R};
use crate::ir::{Opcode, Register, RegisterFile, TexOffset, TextureInfo, TextureTarget};

/// A per-part transformation used by [`Lowerer::map_value`].
type PartFn<'f, 'a> = dyn FnMut(&mut Lowerer<'a>, &[Slot]) -> R<Vec<Slot>> + 'f;

fn vsize(n: usize) -> naga::VectorSize {
    match n {
        2 => naga::VectorSize::Bi,
        3 => naga::VectorSize::Tri,
        _ => naga::VectorSize::Quad,
    }
}

fn scalar_kind(ty: &TypeInner) -> Option<ScalarKind> {
    match ty {
        TypeInner::Scalar(s)
        | TypeInner::Vector { scalar: s, .. }
        | TypeInner::Matrix { scalar: s, .. } => Some(s.kind),
        _ => None,
    }
}

impl<'a> Lowerer<'a> {
    /// The type of expression `h` of the current function.
    fn ty_of(&self, ctx: &FnCtx<'a>, h: Handle<naga::Expression>) -> TypeInner {
        ctx.finfo[h].ty.inner_with(&self.module.types).clone()
    }

    fn literal(&mut self, lit: &naga::Literal) -> R<Value> {
        use naga::Literal as L;
        let bits = match *lit {
            L::F32(v) => v.to_bits(),
            L::U32(v) => v,
            L::I32(v) => v as u32,
            L::Bool(v) => {
                if v {
                    !0
                } else {
                    0
                }
            }
            L::AbstractInt(v) => v as i32 as u32,
            L::AbstractFloat(v) => (v as f32).to_bits(),
            other => return self.unsupported(format!("literal {other:?}")),
        };
        Ok(Value::V(vec![self.b.imm(bits)]))
    }

    /// Evaluates a module-scope constant expression.
    pub fn const_value(&mut self, h: Handle<naga::Expression>) -> R<Value> {
        let module = self.module;
        match &module.global_expressions[h] {
            E::Literal(l) => self.literal(l),
            E::Constant(c) => self.const_value(module.constants[*c].init),
            E::ZeroValue(ty) => self.zero_value(&module.types[*ty].inner),
            E::Compose { ty, components } => {
                let mut parts = Vec::new();
                for c in components {
                    parts.push(self.const_value(*c)?);
                }
                self.compose(&module.types[*ty].inner, parts)
            }
            E::Splat { size, value } => {
                let v = self.const_value(*value)?;
                Ok(Value::V(vec![v.slots()[0]; *size as usize]))
            }
            other => self.unsupported(format!("constant expression {other:?}")),
        }
    }

    fn compose(&mut self, ty: &TypeInner, parts: Vec<Value>) -> R<Value> {
        match ty {
            TypeInner::Vector { .. } => {
                let mut slots = Vec::new();
                for p in parts {
                    slots.extend_from_slice(p.slots());
                }
                Ok(Value::V(slots))
            }
            _ => Ok(Value::C(parts)),
        }
    }

    fn val(&mut self, ctx: &mut FnCtx<'a>, h: Handle<naga::Expression>) -> R<Value> {
        match self.eval(ctx, h)? {
            Ev::Val(v) => Ok(v),
            _ => Err(self.err("expected a value")),
        }
    }

    pub(super) fn vec(&mut self, ctx: &mut FnCtx<'a>, h: Handle<naga::Expression>) -> R<Vec<Slot>> {
        match self.val(ctx, h)? {
            Value::V(v) => Ok(v),
            Value::C(_) => Err(self.err("expected a scalar or vector")),
        }
    }

    /// Evaluates expression `h` of the current function (once; later uses reuse the result).
    pub fn eval(&mut self, ctx: &mut FnCtx<'a>, h: Handle<naga::Expression>) -> R<Ev> {
        if let Some(v) = &ctx.values[h.index()] {
            return Ok(v.clone());
        }
        let span = ctx.func.expressions.get_span(h);
        let saved = self.span;
        if span.is_defined() {
            self.span = span;
        }
        let r = self.eval_uncached(ctx, h);
        self.span = saved;
        let r = r?;
        ctx.values[h.index()] = Some(r.clone());
        Ok(r)
    }

    fn eval_uncached(&mut self, ctx: &mut FnCtx<'a>, h: Handle<naga::Expression>) -> R<Ev> {
        let module = self.module;
        let expr = &ctx.func.expressions[h];
        let v = match expr {
            E::Literal(l) => self.literal(l)?,
            E::Constant(c) => self.const_value(module.constants[*c].init)?,
            E::Override(_) => return self.unsupported("pipeline-overridable constant"),
            E::ZeroValue(ty) => self.zero_value(&module.types[*ty].inner)?,
            E::Compose { ty, components } => {
                let mut parts = Vec::new();
                for c in components {
                    parts.push(self.val(ctx, *c)?);
                }
                self.compose(&module.types[*ty].inner, parts)?
            }
            E::Access { base, index } => {
                let idx = self.vec(ctx, *index)?[0];
                let base_ev = self.eval(ctx, *base)?;
                if let Some(k) = self.b.imm_value(idx) {
                    return self.access_index(ctx, base_ev, *base, k);
                }
                match base_ev {
                    Ev::Ptr(p) => return Ok(Ev::Ptr(self.place_access(&p, idx)?)),
                    Ev::Val(Value::V(slots)) => Value::V(vec![self.select_component(&slots, idx)]),
                    Ev::Val(v) => {
                        let ty = self.ty_of(ctx, *base);
                        let place = self.materialize(&v, &ty)?;
                        let p = self.place_access(&place, idx)?;
                        self.load(&p)?
                    }
                    _ => return self.unsupported("indexing a texture or sampler"),
                }
            }
            E::AccessIndex { base, index } => {
                let base_ev = self.eval(ctx, *base)?;
                return self.access_index(ctx, base_ev, *base, *index);
            }
            E::Splat { size, value } => {
                let v = self.vec(ctx, *value)?;
                Value::V(vec![v[0]; *size as usize])
            }
            E::Swizzle {
                size,
                vector,
                pattern,
            } => {
                let v = self.vec(ctx, *vector)?;
                let mut out = Vec::new();
                for c in &pattern[..*size as usize] {
                    out.push(*v.get(*c as usize).ok_or_else(|| self.err("bad swizzle"))?);
                }
                Value::V(out)
            }
            E::FunctionArgument(i) => {
                return ctx
                    .args
                    .get(*i as usize)
                    .cloned()
                    .ok_or_else(|| self.err("missing function argument"))
            }
            E::GlobalVariable(g) => {
                return match self.globals.get(g) {
                    Some(ev) => Ok(ev.clone()),
                    None => {
                        let gv = &module.global_variables[*g];
                        let name = gv.name.as_deref().unwrap_or("?");
                        if let Some((kind, why)) =
                            resource_missing_from_ir(gv, &module.types[gv.ty].inner)
                        {
                            return self.unsupported(format!("{kind} `{name}` ({why})"));
                        }
                        self.unsupported(format!(
                            "global `{}` in address space {:?} of type {:?}",
                            gv.name.as_deref().unwrap_or("?"),
                            gv.space,
                            module.types[gv.ty].inner
                        ))
                    }
                }
            }
            E::LocalVariable(l) => return Ok(Ev::Ptr(ctx.locals[l.index()].clone())),
            E::Load { pointer } => match self.eval(ctx, *pointer)? {
                Ev::Ptr(p) => self.load(&p)?,
                other => return Ok(other),
            },
            E::ImageSample {
                image,
                sampler,
                gather,
                coordinate,
                array_index,
                offset,
                level,
                depth_ref,
                clamp_to_edge,
            } => {
                if *clamp_to_edge {
                    return self.unsupported("textureSampleBaseClampToEdge");
                }
                let tex = self.texture(ctx, *image)?;
                let samp = match self.eval(ctx, *sampler)? {
                    Ev::Sampler(g) => g,
                    _ => return Err(self.err("expected a sampler")),
                };
                match self.unit_sampler.get(&tex.unit) {
                    Some(prev) if *prev != samp => {
                        return self.unsupported(format!(
                            "texture at binding {} used with two different samplers",
                            tex.unit
                        ))
                    }
                    _ => {
                        self.unit_sampler.insert(tex.unit, samp);
                    }
                }
                if let Some(reference) = *depth_ref {
                    if gather.is_some() {
                        let (c, a, o) = (*coordinate, *array_index, *offset);
                        self.image_gather_compare(ctx, &tex, c, a, o, reference)?
                    } else {
                        let (c, a, o) = (*coordinate, *array_index, *offset);
                        self.image_sample_compare(ctx, &tex, c, a, o, level, reference)?
                    }
                } else if let Some(component) = gather {
                    self.image_gather(ctx, &tex, *coordinate, *array_index, *offset, *component)?
                } else {
                    self.image_sample(ctx, &tex, *coordinate, *array_index, *offset, level)?
                }
            }
            E::ImageLoad {
                image,
                coordinate,
                array_index,
                sample,
                level,
            } => {
                if let Some(storage) = self.storage_image(ctx, *image)? {
                    return Ok(Ev::Val(self.image_load(
                        ctx,
                        &storage,
                        *coordinate,
                        *array_index,
                    )?));
                }
                let tex = self.texture(ctx, *image)?;
                let mut coords = self.vec(ctx, *coordinate)?;
                if let Some(a) = array_index {
                    coords.push(self.vec(ctx, *a)?[0]);
                }
                let lod = match level {
                    Some(l) => self.vec(ctx, *l)?[0],
                    None => self.b.imm(0),
                };
                let zero = self.b.imm(0);
                coords.resize(3, zero);
                coords.push(lod);
                let src = self.b.operand(&coords);
                let texel = self.tex_inst(Opcode::TXF, &tex, vec![src], None)?;
                match sample {
                    // The texture has one sample: another sample index is out of range and
                    // reads zero, as robust access gives.
                    Some(sample) => {
                        let index = self.vec(ctx, *sample)?[0];
                        let zero = self.b.imm(0);
                        let first = self.b.op(Opcode::USEQ, 1, &[s(&[index]), s(&[zero])]);
                        let zeros = [zero; 4];
                        Value::V(self.b.op(
                            Opcode::UCMP,
                            4,
                            &[s(&[first[0]; 4]), s(&texel), s(&zeros)],
                        ))
                    }
                    None => Value::V(texel),
                }
            }
            E::ImageQuery { image, query } => {
                let tex = self.texture(ctx, *image)?;
                let (lod, pick): (Slot, Vec<u8>) = match query {
                    naga::ImageQuery::Size { level } => {
                        let lod = match level {
                            Some(l) => self.vec(ctx, *l)?[0],
                            None => self.b.imm(0),
                        };
                        let n = match tex.dim {
                            naga::ImageDimension::D1 => 1,
                            naga::ImageDimension::D3 => 3,
                            _ => 2,
                        };
                        (lod, (0..n).collect())
                    }
                    naga::ImageQuery::NumLevels => (self.b.imm(0), vec![3]),
                    naga::ImageQuery::NumLayers => {
                        let c = if tex.dim == naga::ImageDimension::D1 {
                            1
                        } else {
                            2
                        };
                        (self.b.imm(0), vec![c])
                    }
                    naga::ImageQuery::NumSamples => return self.unsupported("textureNumSamples"),
                };
                let src = self.b.operand(&[lod]);
                let r = self.tex_inst(Opcode::TXQ, &tex, vec![src], None)?;
                Value::V(pick.iter().map(|&c| r[c as usize]).collect())
            }
            E::Unary { op, expr } => {
                let kind = scalar_kind(&self.ty_of(ctx, *expr));
                let v = self.val(ctx, *expr)?;
                self.map_value(&v, &mut |l, x| {
                    let n = x.len();
                    Ok(match (op, kind) {
                        (naga::UnaryOperator::Negate, Some(ScalarKind::Float)) => {
                            l.b.op(Opcode::MOV, n, &[neg(x)])
                        }
                        (naga::UnaryOperator::Negate, _) => l.b.op(Opcode::INEG, n, &[s(x)]),
                        _ => l.b.op(Opcode::NOT, n, &[s(x)]),
                    })
                })?
            }
            E::Binary { op, left, right } => self.binary(ctx, *op, *left, *right)?,
            E::Select {
                condition,
                accept,
                reject,
            } => {
                let c = self.vec(ctx, *condition)?;
                let a = self.val(ctx, *accept)?;
                let r = self.val(ctx, *reject)?;
                self.select(&c, &a, &r)?
            }
            E::Derivative { axis, ctrl, expr } => {
                if self.stage == naga::ShaderStage::Vertex {
                    return Err(self.stage_error("a derivative"));
                }
                let x = self.vec(ctx, *expr)?;
                let n = x.len();
                let fine = *ctrl == naga::DerivativeControl::Fine;
                let (dx, dy) = if fine {
                    (Opcode::DDX_FINE, Opcode::DDY_FINE)
                } else {
                    (Opcode::DDX, Opcode::DDY)
                };
                match axis {
                    naga::DerivativeAxis::X => Value::V(self.b.op(dx, n, &[s(&x)])),
                    naga::DerivativeAxis::Y => Value::V(self.b.op(dy, n, &[s(&x)])),
                    naga::DerivativeAxis::Width => {
                        let a = self.b.op(dx, n, &[s(&x)]);
                        let b = self.b.op(dy, n, &[s(&x)]);
                        Value::V(self.b.op(Opcode::ADD, n, &[abs(&a), abs(&b)]))
                    }
                }
            }
            E::Relational { fun, argument } => {
                let x = self.vec(ctx, *argument)?;
                let n = x.len();
                let kind = scalar_kind(&self.ty_of(ctx, *argument));
                match fun {
                    naga::RelationalFunction::All | naga::RelationalFunction::Any => {
                        let op = if *fun == naga::RelationalFunction::All {
                            Opcode::AND
                        } else {
                            Opcode::OR
                        };
                        let mut r = x[0];
                        for &c in &x[1..] {
                            r = self.b.op(op, 1, &[s(&[r]), s(&[c])])[0];
                        }
                        Value::V(vec![r])
                    }
                    _ if kind != Some(ScalarKind::Float) => {
                        return self.unsupported("isNan/isInf of a non-float")
                    }
                    naga::RelationalFunction::IsNan => {
                        Value::V(self.b.op(Opcode::FSNE, n, &[s(&x), s(&x)]))
                    }
                    naga::RelationalFunction::IsInf => {
                        let inf = self.b.immf(f32::INFINITY);
                        Value::V(self.b.op(Opcode::FSEQ, n, &[abs(&x), s(&[inf])]))
                    }
                }
            }
            E::Math {
                fun,
                arg,
                arg1,
                arg2,
                arg3,
            } => self.math(ctx, *fun, *arg, *arg1, *arg2, *arg3)?,
            E::As {
                expr,
                kind,
                convert,
            } => {
                let from = scalar_kind(&self.ty_of(ctx, *expr));
                let v = self.val(ctx, *expr)?;
                match convert {
                    None => v,
                    Some(4) | Some(1) => {
                        let (from, to) = (from.unwrap_or(*kind), *kind);
                        self.map_value(&v, &mut |l, x| l.convert(x, from, to))?
                    }
                    Some(w) => return self.unsupported(format!("conversion to a {w}-byte type")),
                }
            }
            E::CallResult(_) => return Err(self.err("call result used before the call")),
            E::AtomicResult { .. } => return self.unsupported("atomic operation"),
            E::WorkGroupUniformLoadResult { .. } => {
                return self.unsupported("workgroupUniformLoad")
            }
            E::ArrayLength(_) => return self.unsupported("arrayLength"),
            E::RayQueryVertexPositions { .. }
            | E::RayQueryProceedResult
            | E::RayQueryGetIntersection { .. } => return self.unsupported("ray query"),
            E::SubgroupBallotResult | E::SubgroupOperationResult { .. } => {
                return self.unsupported("subgroup operation")
            }
            E::CooperativeLoad { .. } | E::CooperativeMultiplyAdd { .. } => {
                return self.unsupported("cooperative matrix")
            }
        };
        Ok(Ev::Val(v))
    }

    fn access_index(
        &mut self,
        ctx: &mut FnCtx<'a>,
        base: Ev,
        base_h: Handle<naga::Expression>,
        index: u32,
    ) -> R<Ev> {
        let _ = (ctx, base_h);
        match base {
            Ev::Ptr(p) => Ok(Ev::Ptr(self.place_index(&p, index)?)),
            Ev::Val(Value::V(slots)) => slots
                .get(index as usize)
                .map(|s| Ev::Val(Value::V(vec![*s])))
                .ok_or_else(|| self.err("vector index out of range")),
            Ev::Val(Value::C(parts)) => parts
                .get(index as usize)
                .cloned()
                .map(Ev::Val)
                .ok_or_else(|| self.err("index out of range")),
            _ => self.unsupported("indexing a texture or sampler"),
        }
    }

    /// Applies `f` to every scalar/vector part of a value.
    fn map_value(&mut self, v: &Value, f: &mut PartFn<'_, 'a>) -> R<Value> {
        match v {
            Value::V(x) => Ok(Value::V(f(self, x)?)),
            Value::C(parts) => {
                let mut out = Vec::new();
                for p in parts {
                    out.push(self.map_value(p, f)?);
                }
                Ok(Value::C(out))
            }
        }
    }

    fn select(&mut self, c: &[Slot], a: &Value, r: &Value) -> R<Value> {
        match (a, r) {
            (Value::V(a), Value::V(r)) => {
                let n = a.len();
                Ok(Value::V(self.b.op(Opcode::UCMP, n, &[s(c), s(a), s(r)])))
            }
            (Value::C(a), Value::C(r)) if c.len() == 1 => {
                let mut out = Vec::new();
                for (x, y) in a.iter().zip(r) {
                    out.push(self.select(c, x, y)?);
                }
                Ok(Value::C(out))
            }
            _ => Err(self.err("select operands do not match")),
        }
    }

    fn convert(&mut self, x: &[Slot], from: ScalarKind, to: ScalarKind) -> R<Vec<Slot>> {
        use ScalarKind::*;
        let n = x.len();
        Ok(match (from, to) {
            (a, b) if a == b => x.to_vec(),
            (Sint, Uint) | (Uint, Sint) => x.to_vec(),
            (Float, Sint) => {
                // WGSL clamps to the representable range before truncating.
                let lo = self.b.immf(-2147483648.0);
                let hi = self.b.immf(2147483520.0);
                let c = self.b.op(Opcode::MAX, n, &[s(x), s(&[lo])]);
                let c = self.b.op(Opcode::MIN, n, &[s(&c), s(&[hi])]);
                self.b.op(Opcode::F2I, n, &[s(&c)])
            }
            (Float, Uint) => {
                let lo = self.b.immf(0.0);
                let hi = self.b.immf(4294967040.0);
                let c = self.b.op(Opcode::MAX, n, &[s(x), s(&[lo])]);
                let c = self.b.op(Opcode::MIN, n, &[s(&c), s(&[hi])]);
                self.b.op(Opcode::F2U, n, &[s(&c)])
            }
            (Sint, Float) => self.b.op(Opcode::I2F, n, &[s(x)]),
            (Uint, Float) => self.b.op(Opcode::U2F, n, &[s(x)]),
            (Bool, Float) => {
                let one = self.b.immf(1.0);
                self.b.op(Opcode::AND, n, &[s(x), s(&[one])])
            }
            (Bool, Sint | Uint) => {
                let one = self.b.imm(1);
                self.b.op(Opcode::AND, n, &[s(x), s(&[one])])
            }
            (Float, Bool) => {
                let zero = self.b.immf(0.0);
                self.b.op(Opcode::FSNE, n, &[s(x), s(&[zero])])
            }
            (Sint | Uint, Bool) => {
                let zero = self.b.imm(0);
                self.b.op(Opcode::USNE, n, &[s(x), s(&[zero])])
            }
            (a, b) => return self.unsupported(format!("conversion from {a:?} to {b:?}")),
        })
    }

    fn binary(
        &mut self,
        ctx: &mut FnCtx<'a>,
        op: B,
        left: Handle<naga::Expression>,
        right: Handle<naga::Expression>,
    ) -> R<Value> {
        let lt = self.ty_of(ctx, left);
        let rt = self.ty_of(ctx, right);
        let a = self.val(ctx, left)?;
        let b = self.val(ctx, right)?;
        let kind = scalar_kind(&lt).unwrap_or(ScalarKind::Float);
        if matches!(lt, TypeInner::Matrix { .. }) || matches!(rt, TypeInner::Matrix { .. }) {
            return self.matrix_binary(op, &lt, &rt, &a, &b);
        }
        let (Value::V(x), Value::V(y)) = (&a, &b) else {
            return self.unsupported(format!("{op:?} on composite values"));
        };
        self.vector_binary(op, kind, x, y).map(Value::V)
    }

    fn vector_binary(&mut self, op: B, kind: ScalarKind, x: &[Slot], y: &[Slot]) -> R<Vec<Slot>> {
        use ScalarKind::*;
        let n = x.len().max(y.len());
        let x = if x.len() < n {
            vec![x[0]; n]
        } else {
            x.to_vec()
        };
        let y = if y.len() < n {
            vec![y[0]; n]
        } else {
            y.to_vec()
        };
        let (x, y) = (&x[..], &y[..]);
        let float = kind == Float;
        let signed = kind == Sint;
        let simple = |o: Opcode| Some(o);
        let code = match op {
            B::Add if float => simple(Opcode::ADD),
            B::Add => simple(Opcode::UADD),
            B::Subtract if float => return Ok(self.b.op(Opcode::ADD, n, &[s(x), neg(y)])),
            B::Subtract => return Ok(self.b.op(Opcode::UADD, n, &[s(x), neg(y)])),
            B::Multiply if float => simple(Opcode::MUL),
            B::Multiply => simple(Opcode::UMUL),
            // Mesa 22.3 keeps fdiv for softpipe: nir_to_tgsi prints DIV.
            B::Divide if float => simple(Opcode::DIV),
            B::Modulo if float => {
                // WGSL: x - y * trunc(x / y).
                let r = self.b.op(Opcode::RCP, n, &[s(y)]);
                let q = self.b.op(Opcode::MUL, n, &[s(x), s(&r)]);
                let t = self.b.op(Opcode::TRUNC, n, &[s(&q)]);
                return Ok(self.b.op(Opcode::MAD, n, &[neg(y), s(&t), s(x)]));
            }
            B::Divide | B::Modulo => {
                // WGSL: a zero divisor (and i32::MIN / -1) divide by 1 instead.
                let zero = self.b.imm(0);
                let one = self.b.imm(1);
                let mut bad = self.b.op(Opcode::USEQ, n, &[s(y), s(&[zero])]);
                if signed {
                    let min = self.b.imm(0x8000_0000);
                    let m1 = self.b.imm(!0);
                    let a = self.b.op(Opcode::USEQ, n, &[s(x), s(&[min])]);
                    let b = self.b.op(Opcode::USEQ, n, &[s(y), s(&[m1])]);
                    let both = self.b.op(Opcode::AND, n, &[s(&a), s(&b)]);
                    bad = self.b.op(Opcode::OR, n, &[s(&bad), s(&both)]);
                }
                let d = self.b.op(Opcode::UCMP, n, &[s(&bad), s(&[one]), s(y)]);
                let o = match (op, signed) {
                    (B::Divide, true) => Opcode::IDIV,
                    (B::Divide, false) => Opcode::UDIV,
                    (_, true) => Opcode::MOD,
                    (_, false) => Opcode::UMOD,
                };
                return Ok(self.b.op(o, n, &[s(x), s(&d)]));
            }
            B::Equal if float => simple(Opcode::FSEQ),
            B::Equal => simple(Opcode::USEQ),
            B::NotEqual if float => simple(Opcode::FSNE),
            B::NotEqual => simple(Opcode::USNE),
            B::Less | B::Greater | B::LessEqual | B::GreaterEqual => {
                let (lt, ge) = match kind {
                    Float => (Opcode::FSLT, Opcode::FSGE),
                    Sint => (Opcode::ISLT, Opcode::ISGE),
                    _ => (Opcode::USLT, Opcode::USGE),
                };
                let (o, a, b) = match op {
                    B::Less => (lt, x, y),
                    B::Greater => (lt, y, x),
                    B::LessEqual => (ge, y, x),
                    _ => (ge, x, y),
                };
                return Ok(self.b.op(o, n, &[s(a), s(b)]));
            }
            B::And | B::LogicalAnd => simple(Opcode::AND),
            B::InclusiveOr | B::LogicalOr => simple(Opcode::OR),
            B::ExclusiveOr => simple(Opcode::XOR),
            B::ShiftLeft => simple(Opcode::SHL),
            B::ShiftRight if signed => simple(Opcode::ISHR),
            B::ShiftRight => simple(Opcode::USHR),
        };
        match code {
            Some(o) => Ok(self.b.op(o, n, &[s(x), s(y)])),
            None => self.unsupported(format!("{op:?}")),
        }
    }

    fn matrix_binary(
        &mut self,
        op: B,
        lt: &TypeInner,
        rt: &TypeInner,
        a: &Value,
        b: &Value,
    ) -> R<Value> {
        if scalar_kind(lt) != Some(ScalarKind::Float) {
            return self.unsupported("integer matrix");
        }
        let cols = |v: &Value| -> Vec<Vec<Slot>> {
            match v {
                Value::C(c) => c.iter().map(|p| p.slots().to_vec()).collect(),
                Value::V(x) => vec![x.clone()],
            }
        };
        let (ca, cb) = (cols(a), cols(b));
        let is_mat = |t: &TypeInner| matches!(t, TypeInner::Matrix { .. });
        Ok(match (op, is_mat(lt), is_mat(rt)) {
            (B::Add | B::Subtract, true, true) => {
                let mut out = Vec::new();
                for (x, y) in ca.iter().zip(&cb) {
                    out.push(Value::V(self.vector_binary(op, ScalarKind::Float, x, y)?));
                }
                Value::C(out)
            }
            (B::Multiply, true, false) if matches!(rt, TypeInner::Scalar(_)) => {
                let k = cb[0][0];
                let mut out = Vec::new();
                for x in &ca {
                    out.push(Value::V(self.b.op(Opcode::MUL, x.len(), &[s(x), s(&[k])])));
                }
                Value::C(out)
            }
            (B::Multiply, false, true) if matches!(lt, TypeInner::Scalar(_)) => {
                let k = ca[0][0];
                let mut out = Vec::new();
                for y in &cb {
                    out.push(Value::V(self.b.op(Opcode::MUL, y.len(), &[s(y), s(&[k])])));
                }
                Value::C(out)
            }
            (B::Multiply, true, false) => Value::V(self.mat_vec(&ca, &cb[0])),
            (B::Multiply, false, true) => {
                // v * M: one dot product per column.
                let v = &ca[0];
                let dp = match v.len() {
                    2 => Opcode::DP2,
                    3 => Opcode::DP3,
                    _ => Opcode::DP4,
                };
                let mut out = Vec::new();
                for c in &cb {
                    out.push(self.b.reduce(dp, &[s(v), s(c)]));
                }
                Value::V(out)
            }
            (B::Multiply, true, true) => {
                let mut out = Vec::new();
                for c in &cb {
                    out.push(Value::V(self.mat_vec(&ca, c)));
                }
                Value::C(out)
            }
            _ => return self.unsupported(format!("{op:?} on matrices")),
        })
    }

    /// M * v as MUL + MAD over the columns (how nir_to_tgsi's vectorized code reads).
    fn mat_vec(&mut self, cols: &[Vec<Slot>], v: &[Slot]) -> Vec<Slot> {
        let rows = cols[0].len();
        let mut acc = self.b.op(Opcode::MUL, rows, &[s(&cols[0]), s(&[v[0]])]);
        for (c, col) in cols.iter().enumerate().skip(1) {
            acc = self.b.op(Opcode::MAD, rows, &[s(col), s(&[v[c]]), s(&acc)]);
        }
        acc
    }

    fn texture(&mut self, ctx: &mut FnCtx<'a>, h: Handle<naga::Expression>) -> R<TexRef> {
        match self.eval(ctx, h)? {
            Ev::Tex(t) => Ok(t),
            _ => self.unsupported("this kind of texture"),
        }
    }

    /// Emits a TEX-family instruction on `tex`'s unit and returns the four result slots.
    pub(super) fn tex_inst(
        &mut self,
        op: Opcode,
        tex: &TexRef,
        mut srcs: Vec<crate::ir::SrcOperand>,
        offset: Option<Register>,
    ) -> R<Vec<Slot>> {
        let t = self.b.temp();
        srcs.push(crate::ir::SrcOperand::new(Register::new(
            RegisterFile::Sampler,
            tex.unit as i32,
        )));
        let inst = self.b.emit(op, Some((t, 0xF)), srcs);
        inst.texture = Some(TextureInfo {
            target: tex.target,
            offsets: offset
                .map(|reg| {
                    vec![TexOffset {
                        reg,
                        swizzle: [0, 1, 2],
                    }]
                })
                .unwrap_or_default(),
        });
        let _ = tex.global;
        Ok(slots_of(t, 4))
    }

    /// The coordinates (array layer converted to float appended) and the texel-offset register.
    pub(super) fn sample_coords(
        &mut self,
        ctx: &mut FnCtx<'a>,
        coordinate: Handle<naga::Expression>,
        array_index: Option<Handle<naga::Expression>>,
        offset: Option<Handle<naga::Expression>>,
    ) -> R<(Vec<Slot>, Option<Register>)> {
        let mut coords = self.vec(ctx, coordinate)?;
        if let Some(a) = array_index {
            let layer = self.vec(ctx, a)?;
            let kind = scalar_kind(&self.ty_of(ctx, a)).unwrap_or(ScalarKind::Sint);
            let f = self.convert(&layer, kind, ScalarKind::Float)?;
            coords.push(f[0]);
        }
        let offset = match offset {
            Some(o) => {
                let v = self.vec(ctx, o)?;
                let mut vals = Vec::new();
                for sl in v {
                    vals.push(
                        self.b
                            .imm_value(sl)
                            .ok_or_else(|| self.err("texel offset is not a constant"))?,
                    );
                }
                Some(self.b.imm_register(&vals))
            }
            None => None,
        };
        Ok((coords, offset))
    }

    /// `textureGather`: TG4 with the component as src1.x (as nir_to_tgsi emits it).
    fn image_gather(
        &mut self,
        ctx: &mut FnCtx<'a>,
        tex: &TexRef,
        coordinate: Handle<naga::Expression>,
        array_index: Option<Handle<naga::Expression>>,
        offset: Option<Handle<naga::Expression>>,
        component: naga::SwizzleComponent,
    ) -> R<Value> {
        if tex.target == TextureTarget::CubeArray {
            return self.unsupported("textureGather on a cube array");
        }
        let (mut coords, offset) = self.sample_coords(ctx, coordinate, array_index, offset)?;
        if coords.len() < 2 {
            let zero = self.b.imm(0);
            coords.resize(2, zero);
        }
        let src = self.b.operand(&coords);
        let comp = self.b.imm(component as u32);
        let comp = self.b.operand(&[comp]);
        Ok(Value::V(self.tex_inst(
            Opcode::TG4,
            tex,
            vec![src, comp],
            offset,
        )?))
    }

    fn image_sample(
        &mut self,
        ctx: &mut FnCtx<'a>,
        tex: &TexRef,
        coordinate: Handle<naga::Expression>,
        array_index: Option<Handle<naga::Expression>>,
        offset: Option<Handle<naga::Expression>>,
        level: &naga::SampleLevel,
    ) -> R<Value> {
        let (mut coords, offset) = self.sample_coords(ctx, coordinate, array_index, offset)?;
        if tex.target == TextureTarget::CubeArray
            && !matches!(
                level,
                naga::SampleLevel::Auto | naga::SampleLevel::Gradient { .. }
            )
        {
            return self.unsupported("cube-array sampling with an explicit level or bias");
        }
        let pad = |l: &mut Self, c: &mut Vec<Slot>, w: Option<Slot>| {
            let zero = l.b.imm(0);
            match w {
                Some(w) => {
                    c.resize(3, zero);
                    c.push(w);
                }
                None => {
                    if c.len() < 2 {
                        c.resize(2, zero);
                    }
                }
            }
        };
        let r = match level {
            naga::SampleLevel::Auto => {
                if self.stage == naga::ShaderStage::Vertex {
                    return Err(self.stage_error("textureSample (implicit derivatives)"));
                }
                pad(self, &mut coords, None);
                let src = self.b.operand(&coords);
                self.tex_inst(Opcode::TEX, tex, vec![src], offset)?
            }
            naga::SampleLevel::Zero | naga::SampleLevel::Exact(_) => {
                let lod = match level {
                    naga::SampleLevel::Exact(h) => self.vec(ctx, *h)?[0],
                    _ => self.b.immf(0.0),
                };
                pad(self, &mut coords, Some(lod));
                let src = self.b.operand(&coords);
                self.tex_inst(Opcode::TXL, tex, vec![src], offset)?
            }
            naga::SampleLevel::Bias(h) => {
                if self.stage == naga::ShaderStage::Vertex {
                    return Err(self.stage_error("textureSampleBias (implicit derivatives)"));
                }
                let bias = self.vec(ctx, *h)?[0];
                pad(self, &mut coords, Some(bias));
                let src = self.b.operand(&coords);
                self.tex_inst(Opcode::TXB, tex, vec![src], offset)?
            }
            naga::SampleLevel::Gradient { x, y } => {
                let dx = self.vec(ctx, *x)?;
                let dy = self.vec(ctx, *y)?;
                pad(self, &mut coords, None);
                let src = self.b.operand(&coords);
                let sx = self.b.operand(&dx);
                let sy = self.b.operand(&dy);
                self.tex_inst(Opcode::TXD, tex, vec![src, sx, sy], offset)?
            }
        };
        Ok(Value::V(r))
    }

    #[allow(clippy::too_many_arguments)]
    fn math(
        &mut self,
        ctx: &mut FnCtx<'a>,
        fun: M,
        arg: Handle<naga::Expression>,
        arg1: Option<Handle<naga::Expression>>,
        arg2: Option<Handle<naga::Expression>>,
        arg3: Option<Handle<naga::Expression>>,
    ) -> R<Value> {
        let ty = self.ty_of(ctx, arg);
        let kind = scalar_kind(&ty).unwrap_or(ScalarKind::Float);
        if matches!(ty, TypeInner::Matrix { .. }) {
            if fun == M::Transpose {
                let Value::C(cols) = self.val(ctx, arg)? else {
                    return Err(self.err("expected a matrix"));
                };
                let rows = cols[0].slots().len();
                let t = (0..rows)
                    .map(|r| Value::V(cols.iter().map(|c| c.slots()[r]).collect()))
                    .collect();
                return Ok(Value::C(t));
            }
            if matches!(fun, M::Determinant | M::Inverse) {
                let Value::C(cols) = self.val(ctx, arg)? else {
                    return Err(self.err("expected a matrix"));
                };
                let cols: Vec<Vec<Slot>> = cols.iter().map(|c| c.slots().to_vec()).collect();
                return if fun == M::Determinant {
                    Ok(Value::V(vec![self.determinant(&cols)?]))
                } else {
                    self.inverse(&cols)
                };
            }
            return self.unsupported(format!("{fun:?} of a matrix"));
        }
        let x = self.vec(ctx, arg)?;
        let mut opt = |l: &mut Self, h: Option<Handle<naga::Expression>>| -> R<Vec<Slot>> {
            match h {
                Some(h) => l.vec(ctx, h),
                None => Err(l.err("missing builtin argument")),
            }
        };
        let y = if arg1.is_some() {
            opt(self, arg1)?
        } else {
            vec![]
        };
        let z = if arg2.is_some() {
            opt(self, arg2)?
        } else {
            vec![]
        };
        let _w = if arg3.is_some() {
            opt(self, arg3)?
        } else {
            vec![]
        };
        if let Some(v) = self.extra_math(fun, &x, &y, &z)? {
            return Ok(v);
        }
        let n = x.len();
        let float = kind == ScalarKind::Float;
        let signed = kind == ScalarKind::Sint;
        let b = &mut self.b;
        let one_op = |b: &mut super::builder::Builder, o: Opcode| b.op(o, n, &[s(&x)]);
        let r: Vec<Slot> = match fun {
            M::Abs if float => b.op(Opcode::MOV, n, &[abs(&x)]),
            M::Abs if signed => one_op(b, Opcode::IABS),
            M::Abs => x.clone(),
            M::Min | M::Max => {
                let o = match (fun, kind) {
                    (M::Min, ScalarKind::Float) => Opcode::MIN,
                    (M::Min, ScalarKind::Sint) => Opcode::IMIN,
                    (M::Min, _) => Opcode::UMIN,
                    (_, ScalarKind::Float) => Opcode::MAX,
                    (_, ScalarKind::Sint) => Opcode::IMAX,
                    _ => Opcode::UMAX,
                };
                b.op(o, n, &[s(&x), s(&y)])
            }
            M::Clamp => {
                let (mx, mn) = match kind {
                    ScalarKind::Float => (Opcode::MAX, Opcode::MIN),
                    ScalarKind::Sint => (Opcode::IMAX, Opcode::IMIN),
                    _ => (Opcode::UMAX, Opcode::UMIN),
                };
                let t = b.op(mx, n, &[s(&x), s(&y)]);
                b.op(mn, n, &[s(&t), s(&z)])
            }
            M::Saturate => b.op_sat(Opcode::MOV, n, &[s(&x)]),
            M::Cos => one_op(b, Opcode::COS),
            M::Sin => one_op(b, Opcode::SIN),
            M::Tan => {
                let sn = one_op(b, Opcode::SIN);
                let cs = one_op(b, Opcode::COS);
                let r = b.op(Opcode::RCP, n, &[s(&cs)]);
                b.op(Opcode::MUL, n, &[s(&sn), s(&r)])
            }
            M::Atan => self.atan(&x),
            M::Atan2 => self.atan2(&x, &y),
            M::Radians => {
                let k = b.immf(std::f32::consts::PI / 180.0);
                b.op(Opcode::MUL, n, &[s(&x), s(&[k])])
            }
            M::Degrees => {
                let k = b.immf(180.0 / std::f32::consts::PI);
                b.op(Opcode::MUL, n, &[s(&x), s(&[k])])
            }
            M::Ceil => one_op(b, Opcode::CEIL),
            M::Floor => one_op(b, Opcode::FLR),
            M::Round => one_op(b, Opcode::ROUND),
            M::Fract => one_op(b, Opcode::FRC),
            M::Trunc => one_op(b, Opcode::TRUNC),
            M::Exp => {
                let k = b.immf(std::f32::consts::LOG2_E);
                let t = b.op(Opcode::MUL, n, &[s(&x), s(&[k])]);
                b.op(Opcode::EX2, n, &[s(&t)])
            }
            M::Exp2 => one_op(b, Opcode::EX2),
            M::Log => {
                let k = b.immf(std::f32::consts::LN_2);
                let t = one_op(b, Opcode::LG2);
                b.op(Opcode::MUL, n, &[s(&t), s(&[k])])
            }
            M::Log2 => one_op(b, Opcode::LG2),
            M::Pow => {
                // Constant exponents 1, 2 and 4 become multiplications, as Mesa's NIR
                // (nir_opt_algebraic) and GPU compilers rewrite them, so negative bases work.
                let exponent: Option<Vec<u32>> = y.iter().map(|&c| b.imm_value(c)).collect();
                let all = |v: f32| {
                    exponent
                        .as_ref()
                        .is_some_and(|e| !e.is_empty() && e.iter().all(|&c| c == v.to_bits()))
                };
                if all(1.0) {
                    return Ok(Value::V(x.to_vec()));
                }
                if all(2.0) || all(4.0) {
                    let square = b.op(Opcode::MUL, n, &[s(&x), s(&x)]);
                    return Ok(Value::V(if all(4.0) {
                        b.op(Opcode::MUL, n, &[s(&square), s(&square)])
                    } else {
                        square
                    }));
                }
                // Otherwise GPUs compute exp2(y * log2(x)): a negative base gives NaN, and
                // Mesa's llvmpipe/lavapipe also return 0 for a zero base whatever the exponent.
                // RetroArch shaders rely on it (pow(k - 1.14, 3.0) clamped to 0), so POW (C's
                // powf) gets those two cases selected around it.
                let p = b.op(Opcode::POW, n, &[s(&x), s(&y)]);
                let zero = b.immf(0.0);
                let nan = b.imm(0x7fc0_0000);
                let negative = b.op(Opcode::FSLT, n, &[s(&x), s(&[zero])]);
                let is_zero = b.op(Opcode::FSEQ, n, &[s(&x), s(&[zero])]);
                let p = b.op(Opcode::UCMP, n, &[s(&is_zero), s(&[zero]), s(&p)]);
                b.op(Opcode::UCMP, n, &[s(&negative), s(&[nan]), s(&p)])
            }
            M::Dot if float => {
                let dp = match n {
                    2 => Opcode::DP2,
                    3 => Opcode::DP3,
                    _ => Opcode::DP4,
                };
                vec![b.reduce(dp, &[s(&x), s(&y)])]
            }
            M::Dot => {
                let p = b.op(Opcode::UMUL, n, &[s(&x), s(&y)]);
                let mut acc = p[0];
                for &c in &p[1..] {
                    acc = b.op(Opcode::UADD, 1, &[s(&[acc]), s(&[c])])[0];
                }
                vec![acc]
            }
            M::Cross => {
                let sw =
                    |v: &[Slot], p: [usize; 3]| -> Vec<Slot> { p.iter().map(|&i| v[i]).collect() };
                let t = b.op(
                    Opcode::MUL,
                    3,
                    &[s(&sw(&x, [2, 0, 1])), s(&sw(&y, [1, 2, 0]))],
                );
                b.op(
                    Opcode::MAD,
                    3,
                    &[s(&sw(&x, [1, 2, 0])), s(&sw(&y, [2, 0, 1])), neg(&t)],
                )
            }
            M::Length => vec![self.length(&x)],
            M::Distance => {
                let d = self.b.op(Opcode::ADD, n, &[s(&x), neg(&y)]);
                vec![self.length(&d)]
            }
            M::Normalize => {
                let dp = match n {
                    2 => Opcode::DP2,
                    3 => Opcode::DP3,
                    _ => Opcode::DP4,
                };
                let d = b.reduce(dp, &[s(&x), s(&x)]);
                let r = b.op(Opcode::RSQ, 1, &[s(&[d])]);
                b.op(Opcode::MUL, n, &[s(&x), s(&r)])
            }
            M::Sign if float => one_op(b, Opcode::SSG),
            M::Sign if signed => one_op(b, Opcode::ISSG),
            M::Fma => b.op(Opcode::MAD, n, &[s(&x), s(&y), s(&z)]),
            M::Mix => b.op(Opcode::LRP, n, &[s(&z), s(&y), s(&x)]),
            M::Step => b.op(Opcode::SGE, n.max(y.len()), &[s(&y), s(&x)]),
            M::SmoothStep => {
                let m = n.max(y.len()).max(z.len());
                let num = b.op(Opcode::ADD, m, &[s(&z), neg(&x)]);
                let den = b.op(Opcode::ADD, m, &[s(&y), neg(&x)]);
                let r = b.op(Opcode::RCP, m, &[s(&den)]);
                let t = b.op_sat(Opcode::MUL, m, &[s(&num), s(&r)]);
                let m2 = b.immf(-2.0);
                let three = b.immf(3.0);
                let poly = b.op(Opcode::MAD, m, &[s(&[m2]), s(&t), s(&[three])]);
                let t2 = b.op(Opcode::MUL, m, &[s(&t), s(&t)]);
                b.op(Opcode::MUL, m, &[s(&t2), s(&poly)])
            }
            M::Sqrt => one_op(b, Opcode::SQRT),
            M::InverseSqrt => one_op(b, Opcode::RSQ),
            M::CountOneBits => one_op(b, Opcode::POPC),
            M::ReverseBits => one_op(b, Opcode::BREV),
            M::ExtractBits => {
                let o = if signed { Opcode::IBFE } else { Opcode::UBFE };
                b.op(o, n, &[s(&x), s(&y), s(&z)])
            }
            M::InsertBits => {
                let w = _w;
                b.op(Opcode::BFI, n, &[s(&x), s(&y), s(&z), s(&w)])
            }
            M::FirstTrailingBit => one_op(b, Opcode::LSB),
            M::FirstLeadingBit if signed => one_op(b, Opcode::IMSB),
            M::FirstLeadingBit => one_op(b, Opcode::UMSB),
            other => return self.unsupported(format!("builtin function {other:?}")),
        };
        Ok(Value::V(r))
    }

    fn length(&mut self, x: &[Slot]) -> Slot {
        if x.len() == 1 {
            return self.b.op(Opcode::MOV, 1, &[abs(x)])[0];
        }
        let dp = match x.len() {
            2 => Opcode::DP2,
            3 => Opcode::DP3,
            _ => Opcode::DP4,
        };
        let d = self.b.reduce(dp, &[s(x), s(x)]);
        self.b.op(Opcode::SQRT, 1, &[s(&[d])])[0]
    }

    /// atan(t) for t in [0, 1]: NIR's minimax polynomial (`nir_atan`).
    fn atan_poly(&mut self, t: &[Slot]) -> Vec<Slot> {
        let n = t.len();
        let coeffs = [
            0.999_979_3_f32,
            -0.332_675_64,
            0.193_892_5,
            -0.117_350_32,
            0.053_681_38,
            -0.012_132_321,
        ];
        let t2 = self.b.op(Opcode::MUL, n, &[s(t), s(t)]);
        // Horner in t^2, then times t.
        let c5 = self.b.immf(coeffs[5]);
        let mut acc = vec![c5; n];
        for &c in coeffs[..5].iter().rev() {
            let k = self.b.immf(c);
            acc = self.b.op(Opcode::MAD, n, &[s(&acc), s(&t2), s(&[k])]);
        }
        self.b.op(Opcode::MUL, n, &[s(&acc), s(t)])
    }

    fn atan(&mut self, x: &[Slot]) -> Vec<Slot> {
        let n = x.len();
        let one = self.b.immf(1.0);
        // t = min(|x|, 1) / max(|x|, 1) keeps the polynomial's argument in [0, 1].
        let lo = self.b.op(Opcode::MIN, n, &[abs(x), s(&[one])]);
        let hi = self.b.op(Opcode::MAX, n, &[abs(x), s(&[one])]);
        let r = self.b.op(Opcode::RCP, n, &[s(&hi)]);
        let t = self.b.op(Opcode::MUL, n, &[s(&lo), s(&r)]);
        let p = self.atan_poly(&t);
        // |x| > 1: atan = pi/2 - p.
        let half_pi = self.b.immf(std::f32::consts::FRAC_PI_2);
        let big = self.b.op(Opcode::FSLT, n, &[s(&[one]), abs(x)]);
        let alt = self.b.op(Opcode::ADD, n, &[s(&[half_pi]), neg(&p)]);
        let m = self.b.op(Opcode::UCMP, n, &[s(&big), s(&alt), s(&p)]);
        let sg = self.b.op(Opcode::SSG, n, &[s(x)]);
        self.b.op(Opcode::MUL, n, &[s(&m), s(&sg)])
    }

    fn atan2(&mut self, y: &[Slot], x: &[Slot]) -> Vec<Slot> {
        let n = y.len();
        let lo = self.b.op(Opcode::MIN, n, &[abs(x), abs(y)]);
        let hi = self.b.op(Opcode::MAX, n, &[abs(x), abs(y)]);
        let r = self.b.op(Opcode::RCP, n, &[s(&hi)]);
        let t = self.b.op(Opcode::MUL, n, &[s(&lo), s(&r)]);
        let zero = self.b.immf(0.0);
        // 0/0 (both zero) gives NaN: use 0 so atan2(0, x) is 0 or pi.
        let nan = self.b.op(Opcode::FSNE, n, &[s(&t), s(&t)]);
        let t = self.b.op(Opcode::UCMP, n, &[s(&nan), s(&[zero]), s(&t)]);
        let p = self.atan_poly(&t);
        let half_pi = self.b.immf(std::f32::consts::FRAC_PI_2);
        let pi = self.b.immf(std::f32::consts::PI);
        let steep = self.b.op(Opcode::FSLT, n, &[abs(x), abs(y)]);
        let alt = self.b.op(Opcode::ADD, n, &[s(&[half_pi]), neg(&p)]);
        let p = self.b.op(Opcode::UCMP, n, &[s(&steep), s(&alt), s(&p)]);
        let left = self.b.op(Opcode::FSLT, n, &[s(x), s(&[zero])]);
        let alt = self.b.op(Opcode::ADD, n, &[s(&[pi]), neg(&p)]);
        let p = self.b.op(Opcode::UCMP, n, &[s(&left), s(&alt), s(&p)]);
        let below = self.b.op(Opcode::FSLT, n, &[s(y), s(&[zero])]);
        let negp = self.b.op(Opcode::MOV, n, &[neg(&p)]);
        let _ = vsize;
        self.b.op(Opcode::UCMP, n, &[s(&below), s(&negp), s(&p)])
    }
}

/// What a global the lowering has no place for is and what the IR lacks for it, where it is a
/// storage image the IR has no `IMAGE` for.
fn resource_missing_from_ir(
    gv: &naga::GlobalVariable,
    ty: &TypeInner,
) -> Option<(&'static str, &'static str)> {
    match (gv.space, ty) {
        (
            naga::AddressSpace::Handle,
            TypeInner::Image {
                class: naga::ImageClass::Storage { .. },
                ..
            },
        ) => Some((
            "storage image",
            "the IR's images have 32-bit RGBA/RG/R float, uint and sint formats, RGBA8 and R8 \
             unorm, and 1D, 2D, 3D and array targets",
        )),
        _ => None,
    }
}
