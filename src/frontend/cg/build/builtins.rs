//! The Cg standard library: math functions as naga `Math`/`Relational`/`Derivative`
//! expressions with Cg's promotion rules (all arguments to one common shape; scalars
//! splat), `mul` in all its matrix/vector forms, and the texture functions.

use super::*;

impl Cx<'_> {
    /// Compiles a call to a standard-library function; `None` if `name` is not one.
    pub(super) fn builtin(
        &mut self,
        name: &str,
        vals: Vec<V>,
        args: &[Expr],
        pos: Pos,
    ) -> R<Option<V>> {
        if let Some(v) = self.texture_fn(name, &vals, pos)? {
            return Ok(Some(v));
        }
        match name {
            "sincos" => {
                self.arity(name, &vals, 3, pos)?;
                let (x, xt) = self.load(vals[0].clone(), pos)?;
                let (x, t) = self.as_float(x, &xt, pos)?;
                let s = self.math(Mf::Sin, &[x], pos);
                let c = self.math(Mf::Cos, &[x], pos);
                self.store_out(&vals[1], s, &t, &args[1])?;
                self.store_out(&vals[2], c, &t, &args[2])?;
                return Ok(Some(V::Val(self.lit_i(0, pos), Ty::Void)));
            }
            "modf" => {
                self.arity(name, &vals, 2, pos)?;
                let (x, xt) = self.load(vals[0].clone(), pos)?;
                let (x, t) = self.as_float(x, &xt, pos)?;
                let ip = self.math(Mf::Trunc, &[x], pos);
                self.store_out(&vals[1], ip, &t, &args[1])?;
                let fr = self.add(
                    E::Binary {
                        op: Bo::Subtract,
                        left: x,
                        right: ip,
                    },
                    pos,
                );
                return Ok(Some(V::Val(fr, t)));
            }
            _ => {}
        }
        let known = matches!(
            name,
            "abs"
                | "sign"
                | "min"
                | "max"
                | "clamp"
                | "saturate"
                | "lerp"
                | "mix"
                | "frac"
                | "fract"
                | "floor"
                | "ceil"
                | "round"
                | "trunc"
                | "sqrt"
                | "rsqrt"
                | "exp"
                | "exp2"
                | "log"
                | "log2"
                | "log10"
                | "pow"
                | "sin"
                | "cos"
                | "tan"
                | "asin"
                | "acos"
                | "atan"
                | "atan2"
                | "sinh"
                | "cosh"
                | "tanh"
                | "step"
                | "smoothstep"
                | "fmod"
                | "dot"
                | "cross"
                | "normalize"
                | "length"
                | "distance"
                | "reflect"
                | "refract"
                | "faceforward"
                | "ddx"
                | "ddy"
                | "fwidth"
                | "any"
                | "all"
                | "mul"
                | "transpose"
                | "determinant"
                | "degrees"
                | "radians"
                | "isnan"
                | "isinf"
                | "isfinite"
                | "ldexp"
                | "lit"
                | "exp10"
                | "mod"
        );
        if !known {
            return Ok(None);
        }
        let mut a = Vec::new();
        for v in vals {
            a.push(self.load(v, pos)?);
        }
        // Float functions applied component-wise to converted arguments: (function, arity).
        let float_fn = match name {
            "frac" | "fract" => Some((Mf::Fract, 1)),
            "floor" => Some((Mf::Floor, 1)),
            "ceil" => Some((Mf::Ceil, 1)),
            "round" => Some((Mf::Round, 1)),
            "trunc" => Some((Mf::Trunc, 1)),
            "sqrt" => Some((Mf::Sqrt, 1)),
            "rsqrt" => Some((Mf::InverseSqrt, 1)),
            "exp" => Some((Mf::Exp, 1)),
            "exp2" => Some((Mf::Exp2, 1)),
            "log" => Some((Mf::Log, 1)),
            "log2" => Some((Mf::Log2, 1)),
            "sin" => Some((Mf::Sin, 1)),
            "cos" => Some((Mf::Cos, 1)),
            "tan" => Some((Mf::Tan, 1)),
            "asin" => Some((Mf::Asin, 1)),
            "acos" => Some((Mf::Acos, 1)),
            "atan" => Some((Mf::Atan, 1)),
            "sinh" => Some((Mf::Sinh, 1)),
            "cosh" => Some((Mf::Cosh, 1)),
            "tanh" => Some((Mf::Tanh, 1)),
            "saturate" => Some((Mf::Saturate, 1)),
            "degrees" => Some((Mf::Degrees, 1)),
            "radians" => Some((Mf::Radians, 1)),
            "lerp" | "mix" => Some((Mf::Mix, 3)),
            "smoothstep" => Some((Mf::SmoothStep, 3)),
            "step" => Some((Mf::Step, 2)),
            "pow" => Some((Mf::Pow, 2)),
            "atan2" => Some((Mf::Atan2, 2)),
            "reflect" => Some((Mf::Reflect, 2)),
            "faceforward" => Some((Mf::FaceForward, 3)),
            _ => None,
        };
        if let Some((fun, arity)) = float_fn {
            self.arity(name, &a, arity, pos)?;
            let (x, t) = self.float_args(&a, pos)?;
            return Ok(Some(V::Val(self.math(fun, &x, pos), t)));
        }
        let v = match name {
            "abs" | "sign" => {
                self.arity(name, &a, 1, pos)?;
                let (x, t) = self.numeric_args(&a, pos)?;
                let fun = if name == "abs" { Mf::Abs } else { Mf::Sign };
                V::Val(self.math(fun, &x, pos), t)
            }
            "min" | "max" => {
                self.arity(name, &a, 2, pos)?;
                let (x, t) = self.numeric_args(&a, pos)?;
                V::Val(
                    self.math(if name == "min" { Mf::Min } else { Mf::Max }, &x, pos),
                    t,
                )
            }
            "clamp" => {
                self.arity(name, &a, 3, pos)?;
                let (x, t) = self.numeric_args(&a, pos)?;
                V::Val(self.math(Mf::Clamp, &x, pos), t)
            }
            "ldexp" => {
                self.arity(name, &a, 2, pos)?;
                let (x, t) = self.float_args(&a, pos)?;
                let e = self.math(Mf::Exp2, &[x[1]], pos);
                V::Val(
                    self.add(
                        E::Binary {
                            op: Bo::Multiply,
                            left: x[0],
                            right: e,
                        },
                        pos,
                    ),
                    t,
                )
            }
            "mod" => {
                // Not Cg, but shaders ported from GLSL use it: GLSL's x - y * floor(x / y).
                self.arity(name, &a, 2, pos)?;
                let (x, t) = self.float_args(&a, pos)?;
                let q = self.add(
                    E::Binary {
                        op: Bo::Divide,
                        left: x[0],
                        right: x[1],
                    },
                    pos,
                );
                let f = self.math(Mf::Floor, &[q], pos);
                let m = self.add(
                    E::Binary {
                        op: Bo::Multiply,
                        left: x[1],
                        right: f,
                    },
                    pos,
                );
                V::Val(
                    self.add(
                        E::Binary {
                            op: Bo::Subtract,
                            left: x[0],
                            right: m,
                        },
                        pos,
                    ),
                    t,
                )
            }
            "fmod" => {
                self.arity(name, &a, 2, pos)?;
                let (x, t) = self.float_args(&a, pos)?;
                // C's fmod: x - y * trunc(x / y), which is naga's float `%`.
                V::Val(
                    self.add(
                        E::Binary {
                            op: Bo::Modulo,
                            left: x[0],
                            right: x[1],
                        },
                        pos,
                    ),
                    t,
                )
            }
            "log10" | "exp10" => {
                self.arity(name, &a, 1, pos)?;
                let (x, t) = self.float_args(&a, pos)?;
                let k = self.splat_like(std::f32::consts::LOG10_2, &t, pos);
                if name == "log10" {
                    let l = self.math(Mf::Log2, &x, pos);
                    V::Val(
                        self.add(
                            E::Binary {
                                op: Bo::Multiply,
                                left: l,
                                right: k,
                            },
                            pos,
                        ),
                        t,
                    )
                } else {
                    let k = self.splat_like(std::f32::consts::LOG2_10, &t, pos);
                    let m = self.add(
                        E::Binary {
                            op: Bo::Multiply,
                            left: x[0],
                            right: k,
                        },
                        pos,
                    );
                    V::Val(self.math(Mf::Exp2, &[m], pos), t)
                }
            }
            "dot" => {
                self.arity(name, &a, 2, pos)?;
                let (x, t) = self.float_args(&a, pos)?;
                match t {
                    Ty::Scalar(_) => V::Val(
                        self.add(
                            E::Binary {
                                op: Bo::Multiply,
                                left: x[0],
                                right: x[1],
                            },
                            pos,
                        ),
                        t,
                    ),
                    Ty::Vec(..) => V::Val(self.math(Mf::Dot, &x, pos), Ty::Scalar(Sk::F)),
                    _ => return err(pos, "dot needs vectors"),
                }
            }
            "cross" => {
                self.arity(name, &a, 2, pos)?;
                let (x, t) = self.float_args(&a, pos)?;
                if t != Ty::Vec(Sk::F, 3) {
                    return err(
                        pos,
                        format!("cross needs float3 arguments, found {}", self.type_name(&t)),
                    );
                }
                V::Val(self.math(Mf::Cross, &x, pos), t)
            }
            "normalize" | "length" => {
                self.arity(name, &a, 1, pos)?;
                let (x, t) = self.float_args(&a, pos)?;
                match (&t, name) {
                    (Ty::Scalar(_), "length") => V::Val(self.math(Mf::Abs, &x, pos), t),
                    (Ty::Scalar(_), _) => V::Val(self.math(Mf::Sign, &x, pos), t),
                    (_, "length") => V::Val(self.math(Mf::Length, &x, pos), Ty::Scalar(Sk::F)),
                    _ => V::Val(self.math(Mf::Normalize, &x, pos), t),
                }
            }
            "distance" => {
                self.arity(name, &a, 2, pos)?;
                let (x, t) = self.float_args(&a, pos)?;
                match t {
                    Ty::Scalar(_) => {
                        let d = self.add(
                            E::Binary {
                                op: Bo::Subtract,
                                left: x[0],
                                right: x[1],
                            },
                            pos,
                        );
                        V::Val(self.math(Mf::Abs, &[d], pos), t)
                    }
                    _ => V::Val(self.math(Mf::Distance, &x, pos), Ty::Scalar(Sk::F)),
                }
            }
            "refract" => {
                self.arity(name, &a, 3, pos)?;
                let (x, t) = self.float_args(&a[..2], pos)?;
                let (e, et) = a[2].clone();
                let e = self.convert(e, &et, &Ty::Scalar(Sk::F), pos, false)?;
                V::Val(self.math(Mf::Refract, &[x[0], x[1], e], pos), t)
            }
            "ddx" | "ddy" | "fwidth" => {
                self.arity(name, &a, 1, pos)?;
                if self.stage == StageKind::Vertex {
                    return err(
                        pos,
                        format!("`{name}` is only available in fragment programs"),
                    );
                }
                let (x, t) = self.float_args(&a, pos)?;
                let axis = match name {
                    "ddx" => naga::DerivativeAxis::X,
                    "ddy" => naga::DerivativeAxis::Y,
                    _ => naga::DerivativeAxis::Width,
                };
                V::Val(
                    self.add(
                        E::Derivative {
                            axis,
                            ctrl: naga::DerivativeControl::None,
                            expr: x[0],
                        },
                        pos,
                    ),
                    t,
                )
            }
            "any" | "all" => {
                self.arity(name, &a, 1, pos)?;
                let (h, t) = a[0].clone();
                let bt = t.with_kind(Sk::B);
                if !bt.is_numeric_vector() {
                    return err(pos, format!("{name} needs a scalar or vector"));
                }
                let b = self.convert(h, &t, &bt, pos, true)?;
                if matches!(bt, Ty::Scalar(_)) {
                    V::Val(b, bt)
                } else {
                    let fun = if name == "any" {
                        naga::RelationalFunction::Any
                    } else {
                        naga::RelationalFunction::All
                    };
                    V::Val(
                        self.add(E::Relational { fun, argument: b }, pos),
                        Ty::Scalar(Sk::B),
                    )
                }
            }
            "isnan" | "isinf" | "isfinite" => {
                self.arity(name, &a, 1, pos)?;
                let (x, t) = self.float_args(&a, pos)?;
                let bt = t.with_kind(Sk::B);
                let rel = |cx: &mut Self, fun| {
                    cx.add(
                        E::Relational {
                            fun,
                            argument: x[0],
                        },
                        pos,
                    )
                };
                let r = match name {
                    "isnan" => rel(self, naga::RelationalFunction::IsNan),
                    "isinf" => rel(self, naga::RelationalFunction::IsInf),
                    _ => {
                        let n = rel(self, naga::RelationalFunction::IsNan);
                        let i = rel(self, naga::RelationalFunction::IsInf);
                        let o = self.add(
                            E::Binary {
                                op: Bo::InclusiveOr,
                                left: n,
                                right: i,
                            },
                            pos,
                        );
                        self.add(
                            E::Unary {
                                op: naga::UnaryOperator::LogicalNot,
                                expr: o,
                            },
                            pos,
                        )
                    }
                };
                V::Val(r, bt)
            }
            "transpose" => {
                self.arity(name, &a, 1, pos)?;
                let (h, t) = a[0].clone();
                let Ty::Mat(k, r, c) = t else {
                    return err(pos, "transpose needs a matrix");
                };
                V::Val(self.math(Mf::Transpose, &[h], pos), Ty::Mat(k, c, r))
            }
            "determinant" => {
                self.arity(name, &a, 1, pos)?;
                let (h, t) = a[0].clone();
                if !matches!(t, Ty::Mat(_, r, c) if r == c) {
                    return err(pos, "determinant needs a square matrix");
                }
                V::Val(self.math(Mf::Determinant, &[h], pos), Ty::Scalar(Sk::F))
            }
            "mul" => {
                self.arity(name, &a, 2, pos)?;
                self.mul(a[0].clone(), a[1].clone(), pos)?
            }
            _ => return err(pos, format!("`{name}` is not supported")),
        };
        Ok(Some(v))
    }

    fn arity<T>(&self, name: &str, a: &[T], n: usize, pos: Pos) -> R<()> {
        if a.len() != n {
            return err(
                pos,
                format!(
                    "`{name}` takes {n} argument{}, {} given",
                    if n == 1 { "" } else { "s" },
                    a.len()
                ),
            );
        }
        Ok(())
    }

    fn math(&mut self, fun: Mf, x: &[Handle<E>], pos: Pos) -> Handle<E> {
        self.add(
            E::Math {
                fun,
                arg: x[0],
                arg1: x.get(1).copied(),
                arg2: x.get(2).copied(),
                arg3: x.get(3).copied(),
            },
            pos,
        )
    }

    fn splat_like(&mut self, v: f32, t: &Ty, pos: Pos) -> Handle<E> {
        let l = self.lit_f(v, pos);
        match t {
            Ty::Vec(_, n) => self.add(
                E::Splat {
                    size: Self::vsize(*n),
                    value: l,
                },
                pos,
            ),
            _ => l,
        }
    }

    fn as_float(&mut self, h: Handle<E>, t: &Ty, pos: Pos) -> R<(Handle<E>, Ty)> {
        let ft = t.with_kind(Sk::F);
        if !ft.is_numeric_vector() {
            return err(
                pos,
                format!("expected a number or vector, found {}", self.type_name(t)),
            );
        }
        Ok((self.convert(h, t, &ft, pos, false)?, ft))
    }

    fn common_of(&self, a: &[(Handle<E>, Ty)], pos: Pos) -> R<Ty> {
        let mut t = a[0].1.clone();
        for (_, u) in &a[1..] {
            t = common_type(&t, u).ok_or_else(|| BuildError {
                pos,
                message: format!(
                    "incompatible argument types {} and {}",
                    self.type_name(&t),
                    self.type_name(u)
                ),
            })?;
        }
        if matches!(t, Ty::Mat(..)) {
            return err(pos, "matrix arguments are not supported by this function");
        }
        Ok(t)
    }

    /// All arguments converted to their common float type.
    fn float_args(&mut self, a: &[(Handle<E>, Ty)], pos: Pos) -> R<(Vec<Handle<E>>, Ty)> {
        let t = self.common_of(a, pos)?.with_kind(Sk::F);
        let mut out = Vec::new();
        for (h, at) in a {
            out.push(self.convert(*h, at, &t, pos, false)?);
        }
        Ok((out, t))
    }

    /// All arguments converted to their common type (integers stay integers).
    fn numeric_args(&mut self, a: &[(Handle<E>, Ty)], pos: Pos) -> R<(Vec<Handle<E>>, Ty)> {
        let mut t = self.common_of(a, pos)?;
        if t.kind() == Some(Sk::B) {
            t = t.with_kind(Sk::I);
        }
        let mut out = Vec::new();
        for (h, at) in a {
            out.push(self.convert(*h, at, &t, pos, false)?);
        }
        Ok((out, t))
    }

    fn store_out(&mut self, target: &V, value: Handle<E>, t: &Ty, arg: &Expr) -> R<()> {
        if !matches!(target, V::Ptr(..) | V::Swz(..)) {
            return err(arg.pos, "an `out` argument must be a variable");
        }
        self.store(target.clone(), value, t, arg.pos)
    }

    /// `mul`: matrix × vector, vector × matrix, matrix × matrix, and the scalar/vector forms.
    fn mul(&mut self, (a, at): (Handle<E>, Ty), (b, bt): (Handle<E>, Ty), pos: Pos) -> R<V> {
        let fl = |cx: &mut Self, h, t: &Ty| cx.as_float_any(h, t, pos);
        let (a, at) = fl(self, a, &at)?;
        let (b, bt) = fl(self, b, &bt)?;
        let mismatch = |cx: &Self| {
            err(
                pos,
                format!(
                    "mul: {} and {} do not fit",
                    cx.type_name(&at),
                    cx.type_name(&bt)
                ),
            )
        };
        match (&at, &bt) {
            (Ty::Mat(_, r, c), Ty::Vec(_, n)) => {
                if n != c {
                    return mismatch(self);
                }
                let h = self.add(
                    E::Binary {
                        op: Bo::Multiply,
                        left: b,
                        right: a,
                    },
                    pos,
                );
                Ok(V::Val(h, Ty::Vec(Sk::F, *r)))
            }
            (Ty::Vec(_, n), Ty::Mat(_, r, c)) => {
                if n != r {
                    return mismatch(self);
                }
                let h = self.add(
                    E::Binary {
                        op: Bo::Multiply,
                        left: b,
                        right: a,
                    },
                    pos,
                );
                Ok(V::Val(h, Ty::Vec(Sk::F, *c)))
            }
            (Ty::Mat(_, r, k), Ty::Mat(_, k2, c)) => {
                if k != k2 {
                    return mismatch(self);
                }
                let h = self.add(
                    E::Binary {
                        op: Bo::Multiply,
                        left: b,
                        right: a,
                    },
                    pos,
                );
                Ok(V::Val(h, Ty::Mat(Sk::F, *r, *c)))
            }
            (Ty::Vec(_, n), Ty::Vec(_, m)) => {
                if n != m {
                    return mismatch(self);
                }
                Ok(V::Val(self.math(Mf::Dot, &[a, b], pos), Ty::Scalar(Sk::F)))
            }
            (Ty::Scalar(_), _) | (_, Ty::Scalar(_)) => {
                let (h, t) = self.binop(BinOp::Mul, a, at.clone(), b, bt.clone(), pos)?;
                Ok(V::Val(h, t))
            }
            _ => mismatch(self),
        }
    }

    fn as_float_any(&mut self, h: Handle<E>, t: &Ty, pos: Pos) -> R<(Handle<E>, Ty)> {
        match t {
            Ty::Mat(..) => Ok((h, t.clone())),
            _ => self.as_float(h, t, pos),
        }
    }

    /// `tex2D` and friends.
    fn texture_fn(&mut self, name: &str, vals: &[V], pos: Pos) -> R<Option<V>> {
        let Some(rest) = name.strip_prefix("tex") else {
            return Ok(None);
        };
        let (dim, suffix) = if let Some(s) = rest.strip_prefix("1D") {
            (Dim::D1, s)
        } else if let Some(s) = rest.strip_prefix("2D") {
            (Dim::D2, s)
        } else if let Some(s) = rest.strip_prefix("3D") {
            (Dim::D3, s)
        } else if let Some(s) = rest.strip_prefix("CUBE") {
            (Dim::Cube, s)
        } else if let Some(s) = rest.strip_prefix("RECT") {
            (Dim::Rect, s)
        } else {
            return Ok(None);
        };
        if !matches!(
            suffix,
            "" | "lod" | "bias" | "proj" | "grad" | "fetch" | "size"
        ) {
            return Ok(None);
        }
        let Some((image, sampler, sdim)) = vals.first().and_then(|v| match v {
            V::Samp(s) => Some((s.image, s.sampler, s.dim)),
            _ => None,
        }) else {
            return err(
                pos,
                format!("the first argument of `{name}` must be a sampler"),
            );
        };
        let ok_dim = sdim == dim
            || (matches!(sdim, Dim::D2 | Dim::Rect) && matches!(dim, Dim::D2 | Dim::Rect));
        if !ok_dim {
            return err(
                pos,
                format!("`{name}` used with a sampler of another dimension"),
            );
        }
        let n: u8 = match dim {
            Dim::D1 => 1,
            Dim::D2 | Dim::Rect => 2,
            Dim::D3 | Dim::Cube => 3,
        };
        let mut a = Vec::new();
        for v in &vals[1..] {
            a.push(self.load(v.clone(), pos)?);
        }
        let take = |cx: &mut Self, (h, t): (Handle<E>, Ty), want: u8, what: &str| -> R<Handle<E>> {
            let (h, t) = cx.as_float(h, &t, pos)?;
            let have = t.comps().unwrap_or(0) as u8;
            if have < want {
                return err(
                    pos,
                    format!(
                        "`{name}`: the {what} needs {want} components, found {}",
                        cx.type_name(&t)
                    ),
                );
            }
            if have == want {
                return Ok(h);
            }
            if want == 1 {
                return Ok(cx.swizzle(h, &[0], pos));
            }
            Ok(cx.swizzle(h, &[0, 1, 2, 3][..want as usize], pos))
        };
        let comp = |cx: &mut Self, (h, t): (Handle<E>, Ty), i: u8| -> R<Handle<E>> {
            let (h, t) = cx.as_float(h, &t, pos)?;
            let have = t.comps().unwrap_or(0) as u8;
            if have <= i {
                return err(
                    pos,
                    format!("`{name}` needs a coordinate of {} components", i + 1),
                );
            }
            Ok(cx.swizzle(h, &[i], pos))
        };
        let vertex = self.stage == StageKind::Vertex;
        let (coordinate, level) = match suffix {
            "" => match a.len() {
                1 => (
                    take(self, a[0].clone(), n, "coordinate")?,
                    if vertex {
                        naga::SampleLevel::Zero
                    } else {
                        naga::SampleLevel::Auto
                    },
                ),
                3 => {
                    let c = take(self, a[0].clone(), n, "coordinate")?;
                    let x = take(self, a[1].clone(), n, "x derivative")?;
                    let y = take(self, a[2].clone(), n, "y derivative")?;
                    (c, naga::SampleLevel::Gradient { x, y })
                }
                k => {
                    return err(
                        pos,
                        format!("`{name}` takes a sampler and 1 or 3 more arguments, {k} given"),
                    )
                }
            },
            "lod" | "bias" => {
                self.arity(name, &a, 1, pos)?;
                let c = take(self, a[0].clone(), n, "coordinate")?;
                let l = comp(self, a[0].clone(), 3)?;
                (
                    c,
                    if suffix == "lod" || vertex {
                        naga::SampleLevel::Exact(l)
                    } else {
                        naga::SampleLevel::Bias(l)
                    },
                )
            }
            "proj" => {
                self.arity(name, &a, 1, pos)?;
                let (h, t) = self.as_float(a[0].0, &a[0].1, pos)?;
                let have = t.comps().unwrap_or(0) as u8;
                if have < n + 1 {
                    return err(
                        pos,
                        format!(
                            "`{name}` needs a coordinate of at least {} components",
                            n + 1
                        ),
                    );
                }
                let q = self.swizzle(h, &[have - 1], pos);
                let c = take(self, (h, t), n, "coordinate")?;
                let q = if n > 1 {
                    self.add(
                        E::Splat {
                            size: Self::vsize(n),
                            value: q,
                        },
                        pos,
                    )
                } else {
                    q
                };
                let c = self.add(
                    E::Binary {
                        op: Bo::Divide,
                        left: c,
                        right: q,
                    },
                    pos,
                );
                (
                    c,
                    if vertex {
                        naga::SampleLevel::Zero
                    } else {
                        naga::SampleLevel::Auto
                    },
                )
            }
            "grad" => {
                self.arity(name, &a, 3, pos)?;
                let c = take(self, a[0].clone(), n, "coordinate")?;
                let x = take(self, a[1].clone(), n, "x derivative")?;
                let y = take(self, a[2].clone(), n, "y derivative")?;
                (c, naga::SampleLevel::Gradient { x, y })
            }
            "fetch" => {
                self.arity(name, &a, 1, pos)?;
                let (h, t) = a[0].clone();
                let it = t.with_kind(Sk::I);
                let h = self.convert(h, &t, &it, pos, true)?;
                let have = it.comps().unwrap_or(0) as u8;
                if have < n + 1 {
                    return err(
                        pos,
                        format!(
                            "`{name}` needs an int{} coordinate (with the level last)",
                            n + 1
                        ),
                    );
                }
                let c = if n == 1 {
                    self.swizzle(h, &[0], pos)
                } else {
                    self.swizzle(h, &[0, 1, 2][..n as usize], pos)
                };
                let l = self.swizzle(h, &[have - 1], pos);
                let r = self.add(
                    E::ImageLoad {
                        image,
                        coordinate: c,
                        array_index: None,
                        sample: None,
                        level: Some(l),
                    },
                    pos,
                );
                return Ok(Some(V::Val(r, Ty::Vec(Sk::F, 4))));
            }
            "size" => {
                self.arity(name, &a, 1, pos)?;
                let (h, t) = a[0].clone();
                let l = self.convert(h, &t, &Ty::Scalar(Sk::I), pos, true)?;
                let q = self.add(
                    E::ImageQuery {
                        image,
                        query: naga::ImageQuery::Size { level: Some(l) },
                    },
                    pos,
                );
                let rt = Ty::vector(Sk::U, n);
                let it = rt.with_kind(Sk::I);
                let q = self.add(
                    E::As {
                        expr: q,
                        kind: naga::ScalarKind::Sint,
                        convert: Some(4),
                    },
                    pos,
                );
                return Ok(Some(V::Val(q, it)));
            }
            _ => return Ok(None),
        };
        let coordinate = if dim == Dim::Rect {
            // Unnormalized coordinates: divide by the texture size.
            let zero = self.lit_i(0, pos);
            let q = self.add(
                E::ImageQuery {
                    image,
                    query: naga::ImageQuery::Size { level: Some(zero) },
                },
                pos,
            );
            let q = self.add(
                E::As {
                    expr: q,
                    kind: naga::ScalarKind::Float,
                    convert: Some(4),
                },
                pos,
            );
            self.add(
                E::Binary {
                    op: Bo::Divide,
                    left: coordinate,
                    right: q,
                },
                pos,
            )
        } else {
            coordinate
        };
        let r = self.add(
            E::ImageSample {
                image,
                sampler,
                gather: None,
                coordinate,
                array_index: None,
                offset: None,
                level,
                depth_ref: None,
                clamp_to_edge: false,
            },
            pos,
        );
        Ok(Some(V::Val(r, Ty::Vec(Sk::F, 4))))
    }
}
