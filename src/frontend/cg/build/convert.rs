//! Cg's conversions and constructors. `convert` does what Cg does implicitly (scalar to vector
//! splats, dropping trailing vector components and matrix rows/columns, scalar kind changes)
//! and, when `explicit`, what only casts and constructors may. Kind changes of literals fold at
//! compile time, as Cg's untyped constants do; to bool is `!= 0`, from bool a select of 1 and 0.
//! A constructor takes the components of its arguments in order (matrices row by row); an
//! initializer list fills an array, a struct or, flattened, a vector or matrix.

use super::*;

impl Cx<'_> {
    /// Converts `h` of type `from` to `to`; `explicit` allows what only casts may do.
    pub(super) fn convert(
        &mut self,
        h: Handle<E>,
        from: &Ty,
        to: &Ty,
        pos: Pos,
        explicit: bool,
    ) -> R<Handle<E>> {
        if from == to {
            return Ok(h);
        }
        let fail = |s: &Self| {
            err(
                pos,
                format!(
                    "cannot convert {} to {}",
                    from.name(&s.structs),
                    to.name(&s.structs)
                ),
            )
        };
        match (from, to) {
            (Ty::Scalar(a), Ty::Scalar(b)) => Ok(self.kind_cast(h, *a, *b, None, pos)),
            (Ty::Scalar(a), Ty::Vec(b, n)) => {
                let s = self.kind_cast(h, *a, *b, None, pos);
                Ok(self.add(
                    E::Splat {
                        size: Self::vsize(*n),
                        value: s,
                    },
                    pos,
                ))
            }
            (Ty::Scalar(_), Ty::Mat(_, r, c)) => {
                let s = self.convert(h, from, &Ty::Scalar(Sk::F), pos, explicit)?;
                let col = self.add(
                    E::Splat {
                        size: Self::vsize(*c),
                        value: s,
                    },
                    pos,
                );
                let ty = self.nty(to, pos)?;
                Ok(self.compose(ty, vec![col; *r as usize], pos))
            }
            (Ty::Vec(a, n), Ty::Vec(b, m)) if m <= n => {
                let t = if m < n {
                    self.swizzle(h, &[0, 1, 2, 3][..*m as usize], pos)
                } else {
                    h
                };
                Ok(self.kind_cast(t, *a, *b, Some(*m), pos))
            }
            (Ty::Vec(a, _), Ty::Scalar(b)) => {
                let c = self.access_index(h, 0, pos);
                Ok(self.kind_cast(c, *a, *b, None, pos))
            }
            (Ty::Vec(a, 4), Ty::Mat(_, 2, 2)) if explicit => {
                let v = self.kind_cast(h, *a, Sk::F, Some(4), pos);
                let c0 = self.swizzle(v, &[0, 1], pos);
                let c1 = self.swizzle(v, &[2, 3], pos);
                let ty = self.nty(to, pos)?;
                Ok(self.compose(ty, vec![c0, c1], pos))
            }
            (Ty::Mat(ka, r, c), Ty::Mat(kb, r2, c2)) if r2 <= r && c2 <= c => {
                let mut cols = Vec::new();
                for i in 0..*r2 {
                    let col = self.access_index(h, i as u32, pos);
                    let col = if c2 < c {
                        self.swizzle(col, &[0, 1, 2, 3][..*c2 as usize], pos)
                    } else {
                        col
                    };
                    cols.push(self.kind_cast(col, *ka, *kb, Some(*c2), pos));
                }
                let ty = self.nty(to, pos)?;
                Ok(self.compose(ty, cols, pos))
            }
            (Ty::Array(a, n), Ty::Array(b, m)) if n == m && conversion_cost(a, b).is_some() => {
                let mut comps = Vec::new();
                for i in 0..*n {
                    let e = self.access_index(h, i, pos);
                    comps.push(self.convert(e, a, b, pos, explicit)?);
                }
                let ty = self.nty(to, pos)?;
                Ok(self.compose(ty, comps, pos))
            }
            (Ty::Scalar(_), Ty::Struct(i)) if explicit => {
                let members = self.structs[*i].members.clone();
                let mut comps = Vec::new();
                for (_, mt, _) in &members {
                    comps.push(self.convert(h, from, mt, pos, true)?);
                }
                let ty = self.nty(to, pos)?;
                Ok(self.compose(ty, comps, pos))
            }
            (Ty::Scalar(_), Ty::Array(b, n)) if explicit => {
                let e = self.convert(h, from, b, pos, true)?;
                let ty = self.nty(to, pos)?;
                Ok(self.compose(ty, vec![e; *n as usize], pos))
            }
            _ => fail(self),
        }
    }

    /// Swizzle (1 component: a plain index).
    pub(super) fn swizzle(&mut self, h: Handle<E>, comps: &[u8], pos: Pos) -> Handle<E> {
        if comps.len() == 1 {
            return self.access_index(h, comps[0] as u32, pos);
        }
        let mut pattern = [naga::SwizzleComponent::X; 4];
        for (i, c) in comps.iter().enumerate() {
            pattern[i] = match c {
                0 => naga::SwizzleComponent::X,
                1 => naga::SwizzleComponent::Y,
                2 => naga::SwizzleComponent::Z,
                _ => naga::SwizzleComponent::W,
            };
        }
        self.add(
            E::Swizzle {
                size: Self::vsize(comps.len() as u8),
                vector: h,
                pattern,
            },
            pos,
        )
    }

    /// Changes the scalar kind of a scalar or vector (`n`: vector size).
    pub(super) fn kind_cast(
        &mut self,
        h: Handle<E>,
        from: Sk,
        to: Sk,
        n: Option<u8>,
        pos: Pos,
    ) -> Handle<E> {
        if from == to {
            return h;
        }
        // Literals convert at compile time, as Cg's untyped constants do.
        if n.is_none() {
            let lit = match self.fx().func.expressions[h] {
                E::Literal(l) => Some(l),
                _ => None,
            };
            if let Some(l) = lit {
                let v = match l {
                    Literal::I32(v) => Some(v as f64),
                    Literal::F32(v) => Some(v as f64),
                    Literal::U32(v) => Some(v as f64),
                    Literal::Bool(b) => Some(b as i32 as f64),
                    _ => None,
                };
                if let Some(v) = v {
                    let nl = match to {
                        Sk::F => Literal::F32(v as f32),
                        Sk::I => Literal::I32(v as i32),
                        Sk::U => Literal::U32(v as u32),
                        Sk::B => Literal::Bool(v != 0.0),
                    };
                    return self.add(E::Literal(nl), pos);
                }
            }
        }
        let splat = |cx: &mut Self, e: Handle<E>| match n {
            Some(n) => cx.add(
                E::Splat {
                    size: Self::vsize(n),
                    value: e,
                },
                pos,
            ),
            None => e,
        };
        if to == Sk::B {
            let z = match from {
                Sk::F => Literal::F32(0.0),
                Sk::I => Literal::I32(0),
                _ => Literal::U32(0),
            };
            let z = self.add(E::Literal(z), pos);
            let z = splat(self, z);
            return self.add(
                E::Binary {
                    op: Bo::NotEqual,
                    left: h,
                    right: z,
                },
                pos,
            );
        }
        if from == Sk::B {
            let (one, zero) = match to {
                Sk::F => (Literal::F32(1.0), Literal::F32(0.0)),
                Sk::I => (Literal::I32(1), Literal::I32(0)),
                _ => (Literal::U32(1), Literal::U32(0)),
            };
            let one = self.add(E::Literal(one), pos);
            let zero = self.add(E::Literal(zero), pos);
            let one = splat(self, one);
            let zero = splat(self, zero);
            return self.add(
                E::Select {
                    condition: h,
                    accept: one,
                    reject: zero,
                },
                pos,
            );
        }
        self.add(
            E::As {
                expr: h,
                kind: Self::scalar(to).kind,
                convert: Some(4),
            },
            pos,
        )
    }

    pub(super) fn init_list(&mut self, items: &[Expr], ty: &Ty, pos: Pos) -> R<Handle<E>> {
        match ty {
            Ty::Array(b, n)
                if items.len() != *n as usize
                    && b.comps()
                        .is_some_and(|c| c > 1 && items.len() as u32 == c * n)
                    && items.iter().all(|i| !matches!(i.kind, ExprKind::List(_))) =>
            {
                // `float2 a[2] = {1, 2, 3, 4}`: Cg fills elements from the flat list.
                let c = b.comps().expect("checked") as usize;
                let mut comps = Vec::new();
                for chunk in items.chunks(c) {
                    comps.push(self.init_list(chunk, b, pos)?);
                }
                let t = self.nty(ty, pos)?;
                Ok(self.compose(t, comps, pos))
            }
            Ty::Array(b, n) => {
                if items.len() != *n as usize {
                    return err(
                        pos,
                        format!("{} initializers for an array of {n}", items.len()),
                    );
                }
                let mut comps = Vec::new();
                for it in items {
                    comps.push(self.rvalue_as(it, b)?);
                }
                let t = self.nty(ty, pos)?;
                Ok(self.compose(t, comps, pos))
            }
            Ty::Struct(i) => {
                let members = self.structs[*i].members.clone();
                if items.len() != members.len() {
                    return err(
                        pos,
                        format!(
                            "{} initializers for a struct of {} members",
                            items.len(),
                            members.len()
                        ),
                    );
                }
                let mut comps = Vec::new();
                for (it, m) in items.iter().zip(&members) {
                    comps.push(self.rvalue_as(it, &m.1)?);
                }
                let t = self.nty(ty, pos)?;
                Ok(self.compose(t, comps, pos))
            }
            Ty::Scalar(_) | Ty::Vec(..) | Ty::Mat(..) => {
                // `{a, b, c}` and nested lists flatten to components, like a constructor.
                let mut flat = Vec::new();
                fn flatten<'e>(v: &'e [Expr], out: &mut Vec<&'e Expr>) {
                    for e in v {
                        match &e.kind {
                            ExprKind::List(inner) => flatten(inner, out),
                            _ => out.push(e),
                        }
                    }
                }
                flatten(items, &mut flat);
                let mut args = Vec::new();
                for e in flat {
                    let v = self.expr(e)?;
                    args.push((self.load(v, e.pos)?, e.pos));
                }
                self.construct(ty, args, pos)
            }
            _ => err(pos, "an initializer list cannot initialize this type"),
        }
    }

    /// `type(args)`: components of all arguments in order (matrices fill row by row).
    pub(super) fn construct(
        &mut self,
        ty: &Ty,
        args: Vec<((Handle<E>, Ty), Pos)>,
        pos: Pos,
    ) -> R<Handle<E>> {
        let k = ty.kind().ok_or_else(|| BuildError {
            pos,
            message: format!("cannot construct {}", ty.name(&self.structs)),
        })?;
        if args.len() == 1 {
            let ((h, t), p) = &args[0];
            if t.comps() == Some(1)
                || matches!((t, ty), (Ty::Mat(..), Ty::Mat(..)))
                || t.comps() == ty.comps()
                    && !matches!(t, Ty::Mat(..))
                    && !matches!(ty, Ty::Mat(..))
            {
                return self.convert(*h, t, ty, *p, true);
            }
        }
        let mut comps: Vec<Handle<E>> = Vec::new();
        for ((h, t), p) in &args {
            match t {
                Ty::Scalar(a) => comps.push(self.kind_cast(*h, *a, k, None, *p)),
                Ty::Vec(a, n) => {
                    for i in 0..*n {
                        let c = self.access_index(*h, i as u32, *p);
                        comps.push(self.kind_cast(c, *a, k, None, *p));
                    }
                }
                Ty::Mat(a, r, c) => {
                    for i in 0..*r {
                        let col = self.access_index(*h, i as u32, *p);
                        for j in 0..*c {
                            let e = self.access_index(col, j as u32, *p);
                            comps.push(self.kind_cast(e, *a, k, None, *p));
                        }
                    }
                }
                other => {
                    return err(
                        *p,
                        format!("cannot use {} in a constructor", other.name(&self.structs)),
                    )
                }
            }
        }
        let want = ty.comps().unwrap_or(0) as usize;
        if comps.len() != want {
            return err(
                pos,
                format!(
                    "{} needs {want} components, {} given",
                    ty.name(&self.structs),
                    comps.len()
                ),
            );
        }
        match ty {
            Ty::Scalar(_) => Ok(comps[0]),
            Ty::Vec(..) => {
                let t = self.nty(ty, pos)?;
                Ok(self.compose(t, comps, pos))
            }
            Ty::Mat(_, r, c) => {
                let ct = self.nty(&Ty::Vec(k, *c), pos)?;
                let mut cols = Vec::new();
                for i in 0..*r as usize {
                    let part = comps[i * *c as usize..(i + 1) * *c as usize].to_vec();
                    cols.push(self.compose(ct, part, pos));
                }
                let t = self.nty(ty, pos)?;
                Ok(self.compose(t, cols, pos))
            }
            _ => err(pos, "cannot construct this type"),
        }
    }
}
