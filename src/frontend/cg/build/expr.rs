//! Expressions: each syntax expression is checked and emitted, giving a [`V`] — a value, an
//! assignable pointer or swizzle, a sampler or a RetroArch struct — that `load` turns into a
//! value. Names resolve through the scopes, then private globals, then uniform globals.
//! Operators follow Cg: operands are converted to their common type, bools count as ints in
//! arithmetic, matrix operators are component-wise (`mul` is the matrix product); `?:` selects
//! per component on numbers and branches otherwise. Assignments and `++`/`--` store through
//! the left side's pointer; a swizzle target rewrites the whole vector.

use super::*;

impl Cx<'_> {
    pub(super) fn load(&mut self, v: V, pos: Pos) -> R<(Handle<E>, Ty)> {
        match v {
            V::Val(h, t) => Ok((h, t)),
            V::Ptr(p, t) => Ok((self.add(E::Load { pointer: p }, pos), t)),
            V::Swz(p, t, comps) => {
                let l = self.add(E::Load { pointer: p }, pos);
                let k = t.kind().unwrap_or(Sk::F);
                Ok((
                    self.swizzle(l, &comps, pos),
                    Ty::vector(k, comps.len() as u8),
                ))
            }
            V::Samp(_) => err(pos, "a sampler is not a value (use tex2D)"),
            V::UStruct(k) => {
                let sname = match k {
                    UKind::In => "input",
                    _ => "orig",
                };
                let idx = self
                    .struct_names
                    .get(sname)
                    .copied()
                    .filter(|i| !self.structs[*i].has_sampler);
                let Some(idx) = idx else {
                    return err(pos, "RetroArch's pass structs hold samplers and cannot be copied; use their members");
                };
                let members = self.structs[idx].members.clone();
                let mut comps = Vec::new();
                for (n, t, _) in &members {
                    let mv = self.ustruct_member(k, n, pos)?;
                    let (h, mt) = self.load(mv, pos)?;
                    comps.push(self.convert(h, &mt, t, pos, false)?);
                }
                let ty = self.nty(&Ty::Struct(idx), pos)?;
                Ok((self.compose(ty, comps, pos), Ty::Struct(idx)))
            }
        }
    }

    pub(super) fn rvalue(&mut self, e: &Expr) -> R<(Handle<E>, Ty)> {
        let v = self.expr(e)?;
        self.load(v, e.pos)
    }

    pub(super) fn rvalue_as(&mut self, e: &Expr, ty: &Ty) -> R<Handle<E>> {
        if let ExprKind::List(items) = &e.kind {
            return self.init_list(items, ty, e.pos);
        }
        let (h, t) = self.rvalue(e)?;
        self.convert(h, &t, ty, e.pos, false)
    }

    pub(super) fn expr(&mut self, e: &Expr) -> R<V> {
        let pos = e.pos;
        match &e.kind {
            ExprKind::Int(v) => {
                let v = i32::try_from(*v)
                    .or_else(|_| u32::try_from(*v).map(|u| u as i32))
                    .map_err(|_| BuildError {
                        pos,
                        message: format!("integer {v} does not fit in 32 bits"),
                    })?;
                Ok(V::Val(self.lit_i(v, pos), Ty::Scalar(Sk::I)))
            }
            ExprKind::Float(v) => Ok(V::Val(self.lit_f(*v as f32, pos), Ty::Scalar(Sk::F))),
            ExprKind::Bool(b) => Ok(V::Val(
                self.add(E::Literal(Literal::Bool(*b)), pos),
                Ty::Scalar(Sk::B),
            )),
            ExprKind::Ident(n) => self.ident(n, pos),
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b, pos),
            ExprKind::Unary(op, a) => self.unary(*op, a, pos),
            ExprKind::Assign(op, l, r) => self.assign(*op, l, r, pos),
            ExprKind::Ternary(c, a, b) => {
                let (ch, ct) = self.rvalue(c)?;
                let (ah, at) = self.rvalue(a)?;
                let (bh, bt) = self.rvalue(b)?;
                let rt = if let (Ty::Vec(_, n), Ty::Scalar(_), Ty::Scalar(_)) = (&ct, &at, &bt) {
                    // `bool4 ? 1 : 0`: the branches take the condition's shape.
                    common_type(&at, &bt)
                        .map_or(Ty::Void, |t| Ty::vector(t.kind().unwrap_or(Sk::F), *n))
                } else if at == bt {
                    at.clone()
                } else {
                    common_type(&at, &bt).ok_or_else(|| BuildError {
                        pos,
                        message: format!(
                            "`?:` branches have incompatible types {} and {}",
                            at.name(&self.structs),
                            bt.name(&self.structs)
                        ),
                    })?
                };
                let ah = self.convert(ah, &at, &rt, pos, false)?;
                let bh = self.convert(bh, &bt, &rt, pos, false)?;
                if rt.is_numeric_vector() {
                    let cond_ty = match (&ct, &rt) {
                        (Ty::Vec(_, n), Ty::Vec(_, m)) if n >= m => Ty::Vec(Sk::B, *m),
                        _ => Ty::Scalar(Sk::B),
                    };
                    let mut c = self.convert(ch, &ct, &cond_ty, pos, true)?;
                    if let (Ty::Scalar(_), Ty::Vec(_, n)) = (&cond_ty, &rt) {
                        c = self.add(
                            E::Splat {
                                size: Self::vsize(*n),
                                value: c,
                            },
                            pos,
                        );
                    }
                    Ok(V::Val(
                        self.add(
                            E::Select {
                                condition: c,
                                accept: ah,
                                reject: bh,
                            },
                            pos,
                        ),
                        rt,
                    ))
                } else {
                    let c = self.convert(ch, &ct, &Ty::Scalar(Sk::B), pos, true)?;
                    let tmp = self.local("_sel", &rt, pos)?;
                    self.open_block();
                    self.push_stmt(
                        Statement::Store {
                            pointer: tmp,
                            value: ah,
                        },
                        pos,
                    );
                    let accept = self.close_block();
                    self.open_block();
                    self.push_stmt(
                        Statement::Store {
                            pointer: tmp,
                            value: bh,
                        },
                        pos,
                    );
                    let reject = self.close_block();
                    self.push_stmt(
                        Statement::If {
                            condition: c,
                            accept,
                            reject,
                        },
                        pos,
                    );
                    Ok(V::Ptr(tmp, rt))
                }
            }
            ExprKind::Call(name, args) => self.call(name, args, pos),
            ExprKind::Construct(t, args) => {
                let ty = self.resolve_type(&naga_types::sized_by_count(t, args.len(), pos))?;
                // Struct and array constructors: one value per member or element, each
                // converted to its type.
                let element_types: Option<Vec<Ty>> = match &ty {
                    Ty::Struct(i) => {
                        let members = &self.structs[*i].members;
                        if members.len() != args.len() {
                            return err(
                                pos,
                                format!(
                                    "struct `{}` has {} members, {} given",
                                    self.structs[*i].name,
                                    members.len(),
                                    args.len()
                                ),
                            );
                        }
                        Some(members.iter().map(|m| m.1.clone()).collect())
                    }
                    Ty::Array(base, n) => {
                        if args.len() != *n as usize {
                            return err(pos, format!("{} values for an array of {n}", args.len()));
                        }
                        Some(vec![(**base).clone(); args.len()])
                    }
                    _ => None,
                };
                if let Some(element_types) = element_types {
                    let mut comps = Vec::new();
                    for (a, t) in args.iter().zip(&element_types) {
                        comps.push(self.rvalue_as(a, t)?);
                    }
                    let t = self.nty(&ty, pos)?;
                    return Ok(V::Val(self.compose(t, comps, pos), ty));
                }
                let mut vals = Vec::new();
                for a in args {
                    vals.push((self.rvalue(a)?, a.pos));
                }
                let h = self.construct(&ty, vals, pos)?;
                Ok(V::Val(h, ty))
            }
            ExprKind::Cast(t, a) => {
                let ty = self.resolve_type(t)?;
                let (h, at) = self.rvalue(a)?;
                let h = match (&at, &ty) {
                    (Ty::Vec(_, n), Ty::Vec(_, m)) if m > n => {
                        return err(
                            pos,
                            format!(
                                "cannot cast {} to {}",
                                at.name(&self.structs),
                                ty.name(&self.structs)
                            ),
                        )
                    }
                    _ => self.convert(h, &at, &ty, pos, true)?,
                };
                Ok(V::Val(h, ty))
            }
            ExprKind::Member(base, field) => self.member(base, field, pos),
            ExprKind::Index(base, index) => self.index(base, index, pos),
            ExprKind::Comma(list) => {
                let mut last = None;
                for x in list {
                    last = Some(self.expr(x)?);
                }
                last.ok_or_else(|| BuildError {
                    pos,
                    message: "empty expression".into(),
                })
            }
            ExprKind::List(_) => err(pos, "an initializer list is only allowed in a declaration"),
        }
    }

    fn ident(&mut self, n: &str, pos: Pos) -> R<V> {
        if let Some(s) = self.lookup(n) {
            return self.sym_value(s, pos);
        }
        if let Some((g, t)) = self.private.get(n).cloned() {
            let h = self.add(E::GlobalVariable(g), pos);
            return Ok(V::Ptr(h, t));
        }
        if let Some(&i) = self.globals.get(n) {
            let Item::Var(v) = &self.items[i] else {
                unreachable!("globals holds variables")
            };
            let v = v.clone();
            let ty = self.resolve_type_for(&v)?;
            if self.is_uniform_global(&v, &ty) {
                let s = self.uniform_sym(&v.name, &ty, v.semantic.as_deref())?;
                return self.sym_value(s, pos);
            }
            return err(pos, format!("global `{n}` is not initialised before use"));
        }
        err(pos, format!("unknown name `{n}`"))
    }

    /// What a name's symbol reads as: textures and uniform block members are created on first
    /// use.
    fn sym_value(&mut self, s: Sym, pos: Pos) -> R<V> {
        match s {
            Sym::Var(p, t) => Ok(V::Ptr(p, t)),
            Sym::Samp(s) => Ok(V::Samp(s)),
            Sym::Tex(n, d) => self.texture(&n, d, pos),
            Sym::UStruct(k) => Ok(V::UStruct(k)),
            Sym::Uniform(name, t) => self.ubo_member(&name, &t, pos),
        }
    }

    fn binary(&mut self, op: BinOp, a: &Expr, b: &Expr, pos: Pos) -> R<V> {
        let (ah, at) = self.rvalue(a)?;
        let (bh, bt) = self.rvalue(b)?;
        let (h, t) = self.binop(op, ah, at, bh, bt, pos)?;
        Ok(V::Val(h, t))
    }

    pub(super) fn binop(
        &mut self,
        op: BinOp,
        ah: Handle<E>,
        at: Ty,
        bh: Handle<E>,
        bt: Ty,
        pos: Pos,
    ) -> R<(Handle<E>, Ty)> {
        let name = |s: &Self, t: &Ty| t.name(&s.structs);
        // Matrix scaling keeps naga's native form.
        if op == BinOp::Mul || op == BinOp::Div {
            if let (Ty::Mat(Sk::F, ..), Ty::Scalar(k)) = (&at, &bt) {
                let s = self.kind_cast(bh, *k, Sk::F, None, pos);
                if op == BinOp::Mul {
                    return Ok((
                        self.add(
                            E::Binary {
                                op: Bo::Multiply,
                                left: ah,
                                right: s,
                            },
                            pos,
                        ),
                        at,
                    ));
                }
            }
        }
        let ct = common_type(&at, &bt).ok_or_else(|| BuildError {
            pos,
            message: format!(
                "operator {op:?} cannot combine {} and {}",
                name(self, &at),
                name(self, &bt)
            ),
        })?;
        let logical = matches!(op, BinOp::LAnd | BinOp::LOr);
        let arith = matches!(
            op,
            BinOp::Add
                | BinOp::Sub
                | BinOp::Mul
                | BinOp::Div
                | BinOp::Mod
                | BinOp::Lt
                | BinOp::Gt
                | BinOp::Le
                | BinOp::Ge
        );
        let ct = if logical {
            ct.with_kind(Sk::B)
        } else if ct.kind() == Some(Sk::B) && arith {
            ct.with_kind(Sk::I)
        } else {
            ct
        };
        let bitwise = matches!(
            op,
            BinOp::And | BinOp::Or | BinOp::Xor | BinOp::Shl | BinOp::Shr
        );
        if bitwise && ct.kind() == Some(Sk::F) {
            return err(
                pos,
                format!("operator {op:?} needs integers, found {}", name(self, &ct)),
            );
        }
        let l = self.convert(ah, &at, &ct, pos, false)?;
        let r = self.convert(bh, &bt, &ct, pos, false)?;
        let (nop, result) = match op {
            BinOp::Add => (Bo::Add, ct.clone()),
            BinOp::Sub => (Bo::Subtract, ct.clone()),
            BinOp::Mul => (Bo::Multiply, ct.clone()),
            BinOp::Div => (Bo::Divide, ct.clone()),
            BinOp::Mod => (Bo::Modulo, ct.clone()),
            BinOp::Lt => (Bo::Less, ct.with_kind(Sk::B)),
            BinOp::Gt => (Bo::Greater, ct.with_kind(Sk::B)),
            BinOp::Le => (Bo::LessEqual, ct.with_kind(Sk::B)),
            BinOp::Ge => (Bo::GreaterEqual, ct.with_kind(Sk::B)),
            BinOp::Eq => (Bo::Equal, ct.with_kind(Sk::B)),
            BinOp::Ne => (Bo::NotEqual, ct.with_kind(Sk::B)),
            BinOp::LAnd => (
                if matches!(ct, Ty::Scalar(_)) {
                    Bo::LogicalAnd
                } else {
                    Bo::And
                },
                ct.clone(),
            ),
            BinOp::LOr => (
                if matches!(ct, Ty::Scalar(_)) {
                    Bo::LogicalOr
                } else {
                    Bo::InclusiveOr
                },
                ct.clone(),
            ),
            BinOp::And => (Bo::And, ct.clone()),
            BinOp::Or => (Bo::InclusiveOr, ct.clone()),
            BinOp::Xor => (Bo::ExclusiveOr, ct.clone()),
            BinOp::Shl => (Bo::ShiftLeft, ct.clone()),
            BinOp::Shr => (Bo::ShiftRight, ct.clone()),
        };
        if let Ty::Mat(_, rows, _) = ct {
            // Cg's matrix operators are component-wise.
            let mut out = Vec::new();
            for i in 0..rows as u32 {
                let x = self.access_index(l, i, pos);
                let y = self.access_index(r, i, pos);
                out.push(self.add(
                    E::Binary {
                        op: nop,
                        left: x,
                        right: y,
                    },
                    pos,
                ));
            }
            let t = self.nty(&result, pos)?;
            return Ok((self.compose(t, out, pos), result));
        }
        Ok((
            self.add(
                E::Binary {
                    op: nop,
                    left: l,
                    right: r,
                },
                pos,
            ),
            result,
        ))
    }

    fn unary(&mut self, op: UnOp, a: &Expr, pos: Pos) -> R<V> {
        match op {
            UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec => {
                let lv = self.expr(a)?;
                let (old, t) = self.load(lv.clone(), pos)?;
                let k = t.kind().ok_or_else(|| BuildError {
                    pos,
                    message: "`++`/`--` need a number".into(),
                })?;
                let one = match k {
                    Sk::F => self.lit_f(1.0, pos),
                    _ => self.lit_i(1, pos),
                };
                let one = self.convert(
                    one,
                    &Ty::Scalar(if k == Sk::F { Sk::F } else { Sk::I }),
                    &t,
                    pos,
                    true,
                )?;
                let bop = if matches!(op, UnOp::PreInc | UnOp::PostInc) {
                    Bo::Add
                } else {
                    Bo::Subtract
                };
                let new = self.add(
                    E::Binary {
                        op: bop,
                        left: old,
                        right: one,
                    },
                    pos,
                );
                self.store(lv, new, &t, pos)?;
                let r = if matches!(op, UnOp::PreInc | UnOp::PreDec) {
                    new
                } else {
                    old
                };
                Ok(V::Val(r, t))
            }
            UnOp::Plus => {
                let (h, t) = self.rvalue(a)?;
                Ok(V::Val(h, t))
            }
            UnOp::Neg => {
                let (h, t) = self.rvalue(a)?;
                if let Ty::Mat(_, r, _) = t {
                    let mut cols = Vec::new();
                    for i in 0..r as u32 {
                        let c = self.access_index(h, i, pos);
                        cols.push(self.add(
                            E::Unary {
                                op: naga::UnaryOperator::Negate,
                                expr: c,
                            },
                            pos,
                        ));
                    }
                    let nt = self.nty(&t, pos)?;
                    return Ok(V::Val(self.compose(nt, cols, pos), t));
                }
                let (h, t) = if t.kind() == Some(Sk::B) {
                    let nt = t.with_kind(Sk::I);
                    (self.convert(h, &t, &nt, pos, true)?, nt)
                } else {
                    (h, t)
                };
                // `-literal` folds, so `-1` stays an untyped-looking constant.
                if let E::Literal(l) = self.fx().func.expressions[h] {
                    let nl = match l {
                        Literal::F32(v) => Some(Literal::F32(-v)),
                        Literal::I32(v) => Some(Literal::I32(v.wrapping_neg())),
                        _ => None,
                    };
                    if let Some(nl) = nl {
                        return Ok(V::Val(self.add(E::Literal(nl), pos), t));
                    }
                }
                Ok(V::Val(
                    self.add(
                        E::Unary {
                            op: naga::UnaryOperator::Negate,
                            expr: h,
                        },
                        pos,
                    ),
                    t,
                ))
            }
            UnOp::Not => {
                let (h, t) = self.rvalue(a)?;
                let bt = t.with_kind(Sk::B);
                if !bt.is_numeric_vector() {
                    return err(pos, "`!` needs a scalar or vector");
                }
                let b = self.convert(h, &t, &bt, pos, true)?;
                Ok(V::Val(
                    self.add(
                        E::Unary {
                            op: naga::UnaryOperator::LogicalNot,
                            expr: b,
                        },
                        pos,
                    ),
                    bt,
                ))
            }
            UnOp::BitNot => {
                let (h, t) = self.rvalue(a)?;
                if !matches!(t.kind(), Some(Sk::I) | Some(Sk::U)) {
                    return err(pos, "`~` needs an integer");
                }
                Ok(V::Val(
                    self.add(
                        E::Unary {
                            op: naga::UnaryOperator::BitwiseNot,
                            expr: h,
                        },
                        pos,
                    ),
                    t,
                ))
            }
        }
    }

    pub(super) fn store(&mut self, lv: V, value: Handle<E>, vt: &Ty, pos: Pos) -> R<()> {
        match lv {
            V::Ptr(p, t) => {
                let v = self.convert(value, vt, &t, pos, false)?;
                self.push_stmt(
                    Statement::Store {
                        pointer: p,
                        value: v,
                    },
                    pos,
                );
                Ok(())
            }
            V::Swz(p, t, comps) => {
                let k = t.kind().unwrap_or(Sk::F);
                let st = Ty::vector(k, comps.len() as u8);
                let v = self.convert(value, vt, &st, pos, false)?;
                let Ty::Vec(_, n) = t else {
                    return err(pos, "bad swizzle target");
                };
                let mut seen = [false; 4];
                for &c in &comps {
                    if std::mem::replace(&mut seen[c as usize], true) {
                        return err(
                            pos,
                            "a swizzle that repeats a component cannot be assigned to",
                        );
                    }
                }
                let old = self.add(E::Load { pointer: p }, pos);
                let mut parts = Vec::new();
                for i in 0..n {
                    parts.push(match comps.iter().position(|&c| c == i) {
                        Some(_) if comps.len() == 1 => v,
                        Some(j) => self.access_index(v, j as u32, pos),
                        None => self.access_index(old, i as u32, pos),
                    });
                }
                let nt = self.nty(&t, pos)?;
                let new = self.compose(nt, parts, pos);
                self.push_stmt(
                    Statement::Store {
                        pointer: p,
                        value: new,
                    },
                    pos,
                );
                Ok(())
            }
            _ => err(pos, "this cannot be assigned to"),
        }
    }

    fn assign(&mut self, op: Option<BinOp>, l: &Expr, r: &Expr, pos: Pos) -> R<V> {
        // `global_sampler = PASS1.texture;`: the global names that texture from now on.
        if let (None, ExprKind::Ident(name)) = (op, &l.kind) {
            let global_sampler = self.lookup(name).is_none()
                && self.globals.get(name).is_some_and(|&i| {
                    matches!(&self.items[i], Item::Var(v) if matches!(builtin_type(&v.ty.name), Some(Ty::Sampler(_))) && v.ty.dims.is_empty())
                });
            if global_sampler {
                return match self.expr(r)? {
                    V::Samp(s) => match s.tex {
                        Some(t) => {
                            let tex = self.texture_list[t as usize].0.clone();
                            self.sampler_rebind.insert(name.clone(), tex);
                            Ok(V::Samp(s))
                        }
                        None => err(
                            r.pos,
                            "a global sampler can only be assigned a uniform sampler",
                        ),
                    },
                    _ => err(r.pos, "expected a sampler"),
                };
            }
        }
        let lv = self.expr(l)?;
        if !matches!(lv, V::Ptr(..) | V::Swz(..)) {
            return err(l.pos, "the left side of an assignment must be a variable");
        }
        let (rh, rt) = match op {
            None => {
                let lt = match &lv {
                    V::Ptr(_, t) => t.clone(),
                    V::Swz(_, t, c) => Ty::vector(t.kind().unwrap_or(Sk::F), c.len() as u8),
                    _ => unreachable!("checked"),
                };
                if let ExprKind::List(items) = &r.kind {
                    (self.init_list(items, &lt, r.pos)?, lt)
                } else {
                    self.rvalue(r)?
                }
            }
            Some(op) => {
                let (lh, lt) = self.load(lv.clone(), pos)?;
                let (rh, rt) = self.rvalue(r)?;
                let (h, t) = self.binop(op, lh, lt.clone(), rh, rt, pos)?;
                // `v *= s` keeps v's type (truncating a wider right side).
                (self.convert(h, &t, &lt, pos, false)?, lt)
            }
        };
        self.store(lv, rh, &rt, pos)?;
        Ok(V::Val(rh, rt))
    }
}
