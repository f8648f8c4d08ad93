//! Types: a written type ([`TypeRef`]) resolved to a Cg [`Ty`] — array sizes are constant
//! integer expressions over literals, `const` locals and initialised globals — and a Cg type
//! made a naga type. A Cg `RxC` matrix is a naga matrix of R columns of C components (naga's
//! columns are Cg's rows); naga has float matrices only, so other kinds are arrays of row
//! vectors, which index, construct and swizzle the same way. Struct and array layouts follow
//! naga's std140-like rules (`layout`), the offsets the lowering reads uniforms at.
//! Structs holding samplers (as RetroArch's pass structs are declared) have no naga type: they
//! are bound as symbols, never made values.

use super::*;

impl Cx<'_> {
    pub(super) fn contains_sampler(&self, t: &Ty) -> bool {
        match t {
            Ty::Sampler(_) => true,
            Ty::Struct(i) => self.structs[*i].has_sampler,
            Ty::Array(b, _) => self.contains_sampler(b),
            _ => false,
        }
    }

    pub fn resolve_type(&self, t: &TypeRef) -> R<Ty> {
        let mut ty = if let Some(b) = builtin_type(&t.name) {
            b
        } else if let Some(&i) = self.struct_names.get(&t.name) {
            Ty::Struct(i)
        } else {
            return err(t.pos, format!("unknown type `{}`", t.name));
        };
        for d in t.dims.iter().rev() {
            let n = match d {
                Some(e) => self.const_int(e)?,
                None => return err(t.pos, "array size needed here"),
            };
            if n <= 0 || n > 65536 {
                return err(t.pos, format!("array size {n} out of range"));
            }
            ty = Ty::Array(Box::new(ty), n as u32);
        }
        Ok(ty)
    }

    /// Evaluates a constant integer expression (array sizes).
    fn const_int(&self, e: &Expr) -> R<i64> {
        Ok(match &e.kind {
            ExprKind::Int(v) => *v,
            ExprKind::Float(v) if v.fract() == 0.0 => *v as i64,
            ExprKind::Unary(UnOp::Neg, a) => -self.const_int(a)?,
            ExprKind::Binary(op, a, b) => {
                let (a, b) = (self.const_int(a)?, self.const_int(b)?);
                match op {
                    BinOp::Add => a + b,
                    BinOp::Sub => a - b,
                    BinOp::Mul => a * b,
                    BinOp::Div if b != 0 => a / b,
                    BinOp::Mod if b != 0 => a % b,
                    BinOp::Shl => a << (b & 63),
                    BinOp::Shr => a >> (b & 63),
                    _ => return err(e.pos, "not a constant integer expression"),
                }
            }
            ExprKind::Ident(n) if self.local_consts.iter().any(|c| c.0 == *n) => {
                let c = self
                    .local_consts
                    .iter()
                    .rev()
                    .find(|c| c.0 == *n)
                    .expect("checked");
                self.const_int(&c.1)?
            }
            ExprKind::Ident(n) => match self.globals.get(n).map(|&i| &self.items[i]) {
                Some(Item::Var(v)) if v.init.is_some() => {
                    self.const_int(v.init.as_ref().expect("checked"))?
                }
                _ => return err(e.pos, format!("`{n}` is not a constant")),
            },
            ExprKind::Cast(_, a) => self.const_int(a)?,
            _ => return err(e.pos, "expected a constant integer expression"),
        })
    }

    pub(super) fn scalar(k: Sk) -> naga::Scalar {
        match k {
            Sk::F => naga::Scalar::F32,
            Sk::I => naga::Scalar::I32,
            Sk::U => naga::Scalar::U32,
            Sk::B => naga::Scalar::BOOL,
        }
    }

    pub(super) fn vsize(n: u8) -> naga::VectorSize {
        match n {
            2 => naga::VectorSize::Bi,
            3 => naga::VectorSize::Tri,
            _ => naga::VectorSize::Quad,
        }
    }

    pub(super) fn add_type(&mut self, name: Option<String>, inner: TypeInner) -> Handle<Type> {
        self.module
            .types
            .insert(Type { name, inner }, Span::UNDEFINED)
    }

    pub(super) fn nty(&mut self, t: &Ty, pos: Pos) -> R<Handle<Type>> {
        let inner = match t {
            Ty::Void => return err(pos, "`void` has no value"),
            Ty::Scalar(k) => TypeInner::Scalar(Self::scalar(*k)),
            Ty::Vec(k, n) => TypeInner::Vector {
                size: Self::vsize(*n),
                scalar: Self::scalar(*k),
            },
            Ty::Mat(k, r, c) if *k != Sk::F => {
                // naga has float matrices only: other kinds are arrays of row vectors, which
                // index, construct and swizzle the same way.
                return self.nty(&Ty::Array(Box::new(Ty::Vec(*k, *c)), *r as u32), pos);
            }
            Ty::Mat(_, r, c) => TypeInner::Matrix {
                columns: Self::vsize(*r),
                rows: Self::vsize(*c),
                scalar: naga::Scalar::F32,
            },
            Ty::Array(b, n) => {
                let base = self.nty(b, pos)?;
                let (size, align) = self.layout(b);
                let stride = size.div_ceil(align) * align;
                TypeInner::Array {
                    base,
                    size: naga::ArraySize::Constant(std::num::NonZeroU32::new(*n).expect("n > 0")),
                    stride,
                }
            }
            Ty::Struct(i) => {
                if let Some(h) = self.struct_types.get(i) {
                    return Ok(*h);
                }
                let info = self.structs[*i].clone();
                if info.has_sampler {
                    return err(
                        pos,
                        format!(
                            "struct `{}` contains samplers and cannot be used as a value here",
                            info.name
                        ),
                    );
                }
                let tys: Vec<Ty> = info.members.iter().map(|m| m.1.clone()).collect();
                let h = self.struct_of(
                    Some(info.name.clone()),
                    &info.members.iter().map(|m| m.0.clone()).collect::<Vec<_>>(),
                    &tys,
                    None,
                    pos,
                )?;
                self.struct_types.insert(*i, h);
                return Ok(h);
            }
            Ty::Sampler(_) => return err(pos, "a sampler is not a value"),
        };
        Ok(self.add_type(None, inner))
    }

    /// Size and alignment with naga's (std140-like) rules.
    fn layout(&self, t: &Ty) -> (u32, u32) {
        match t {
            Ty::Scalar(_) => (4, 4),
            Ty::Vec(_, 2) => (8, 8),
            Ty::Vec(_, 3) => (12, 16),
            Ty::Vec(..) => (16, 16),
            Ty::Mat(_, r, c) => {
                let (cs, ca) = self.layout(&Ty::Vec(Sk::F, *c));
                let stride = cs.div_ceil(ca) * ca;
                (stride * *r as u32, ca)
            }
            Ty::Array(b, n) => {
                let (s, a) = self.layout(b);
                let stride = s.div_ceil(a) * a;
                (stride * n, a)
            }
            Ty::Struct(i) => {
                let mut off = 0u32;
                let mut al = 1u32;
                for m in &self.structs[*i].members {
                    let (s, a) = self.layout(&m.1);
                    off = off.div_ceil(a) * a + s;
                    al = al.max(a);
                }
                (off.div_ceil(al) * al, al)
            }
            _ => (4, 4),
        }
    }

    pub(super) fn struct_of(
        &mut self,
        name: Option<String>,
        names: &[String],
        tys: &[Ty],
        bindings: Option<Vec<naga::Binding>>,
        pos: Pos,
    ) -> R<Handle<Type>> {
        let mut members = Vec::new();
        let mut off = 0u32;
        let mut al = 1u32;
        for (i, t) in tys.iter().enumerate() {
            let (s, a) = self.layout(t);
            off = off.div_ceil(a) * a;
            let ty = self.nty(t, pos)?;
            members.push(naga::StructMember {
                name: Some(names[i].clone()),
                ty,
                binding: bindings.as_ref().map(|b| b[i].clone()),
                offset: off,
            });
            off += s;
            al = al.max(a);
        }
        let span = off.div_ceil(al) * al;
        Ok(self.add_type(
            name,
            TypeInner::Struct {
                members,
                span: span.max(al),
            },
        ))
    }

    /// The naga float image type of a Cg sampler dimension and the sampler type that goes with
    /// it (a `sampler2D` becomes a texture and a sampler).
    pub(super) fn sampled_image_types(
        &mut self,
        dim: Dim,
    ) -> (Handle<naga::Type>, Handle<naga::Type>) {
        let ndim = match dim {
            Dim::D1 => naga::ImageDimension::D1,
            Dim::D2 | Dim::Rect => naga::ImageDimension::D2,
            Dim::D3 => naga::ImageDimension::D3,
            Dim::Cube => naga::ImageDimension::Cube,
        };
        let image = self.add_type(
            None,
            TypeInner::Image {
                dim: ndim,
                arrayed: false,
                class: naga::ImageClass::Sampled {
                    kind: naga::ScalarKind::Float,
                    multi: false,
                },
            },
        );
        let sampler = self.add_type(None, TypeInner::Sampler { comparison: false });
        (image, sampler)
    }

    pub(super) fn resolve_type_for(&self, v: &VarDecl) -> R<Ty> {
        // `float a[] = { … }` and `float a[] = float[](…)`: the size comes from the initializer.
        if let Some(Expr {
            kind: ExprKind::List(items) | ExprKind::Construct(_, items),
            ..
        }) = &v.init
        {
            return self.resolve_type(&sized_by_count(&v.ty, items.len(), v.pos));
        }
        self.resolve_type(&v.ty)
    }

    pub(super) fn type_name(&self, t: &Ty) -> String {
        t.name(&self.structs)
    }
}

/// `t` with an unsized outermost array dimension sized to `count` elements (`float a[]` with an
/// initializer of `count` values, the array constructor `float[](…)`); other types unchanged.
pub(super) fn sized_by_count(t: &TypeRef, count: usize, pos: Pos) -> TypeRef {
    let mut t = t.clone();
    if let Some(dim @ None) = t.dims.first_mut() {
        *dim = Some(Expr {
            kind: ExprKind::Int(count as i64),
            pos,
        });
    }
    t
}
