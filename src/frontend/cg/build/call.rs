//! User function calls: overload resolution (the lowest total conversion cost; a prototype
//! resolves to its definition) and compilation of the callee on first call, once per binding of
//! RetroArch structs to its sampler-holding struct parameters. A sampler parameter is an image
//! and a sampler argument. A function with `out`/`inout` parameters returns a struct (`result`,
//! then `out0`, `out1`, …) and the caller stores the outputs back, so no pointers cross calls.
//! Recursion is an error, as in Cg.

use super::*;

impl Cx<'_> {
    pub(super) fn call(&mut self, name: &str, args: &[Expr], pos: Pos) -> R<V> {
        if let Some(cands) = self.funcs.get(name).cloned() {
            let mut vals = Vec::new();
            for a in args {
                vals.push(self.expr(a)?);
            }
            return self.user_call(name, &cands, args, vals, pos);
        }
        let mut vals = Vec::new();
        for a in args {
            vals.push(self.expr(a)?);
        }
        let glsl_fetch = matches!(name, "texelFetch" | "texelFetchOffset").then(|| {
            let tys: Vec<String> = vals
                .iter()
                .map(|v| self.value_type(v).name(&self.structs))
                .collect();
            tys.join(", ")
        });
        match self.builtin(name, vals, args, pos)? {
            Some(v) => Ok(v),
            // What cgc says in the GLSL profiles RetroArch's Cg runtime gets off NVIDIA GPUs
            // (its gp4/gp5 profiles have these GLSL functions; no other profile does).
            None => match glsl_fetch {
                Some(tys) => err(
                    pos,
                    format!(
                        "unable to find compatible overloaded function `{name}({tys})`: cgc's \
                         GLSL profiles have no `{name}` (only NVIDIA's gp4/gp5 profiles do)"
                    ),
                ),
                None => err(pos, format!("unknown function `{name}`")),
            },
        }
    }

    fn value_type(&self, v: &V) -> Ty {
        match v {
            V::Val(_, t) | V::Ptr(_, t) => t.clone(),
            V::Swz(_, t, c) => Ty::vector(t.kind().unwrap_or(Sk::F), c.len() as u8),
            V::Samp(s) => Ty::Sampler(s.dim),
            V::UStruct(k) => {
                let sname = if *k == UKind::In { "input" } else { "orig" };
                self.struct_names
                    .get(sname)
                    .map_or(Ty::Void, |i| Ty::Struct(*i))
            }
        }
    }

    fn user_call(
        &mut self,
        name: &str,
        cands: &[usize],
        args: &[Expr],
        vals: Vec<V>,
        pos: Pos,
    ) -> R<V> {
        let arg_tys: Vec<Ty> = vals.iter().map(|v| self.value_type(v)).collect();
        let mut best: Option<(u32, usize)> = None;
        for &c in cands {
            let Item::Func(f) = &self.items[c] else {
                continue;
            };
            if f.params.len() != vals.len() || f.body.is_none() && cands.len() > 1 && cands.iter().any(|&o| matches!(&self.items[o], Item::Func(g) if g.body.is_some() && g.params.len() == f.params.len())) {
                continue;
            }
            let mut cost = 0;
            let mut ok = true;
            for ((p, at), v) in f.params.iter().zip(&arg_tys).zip(&vals) {
                let pt = match self.resolve_type(&p.ty) {
                    Ok(t) => t,
                    Err(_) => {
                        ok = false;
                        break;
                    }
                };
                let c = if let (V::UStruct(_), Ty::Struct(_)) = (v, &pt) {
                    Some(if at == &pt { 0 } else { 1 })
                } else if p.quals.is_out && !p.quals.is_in {
                    (at == &pt)
                        .then_some(0)
                        .or_else(|| conversion_cost(&pt, at).map(|c| c + 1))
                } else {
                    conversion_cost(at, &pt)
                };
                match c {
                    Some(c) => cost += c,
                    None => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok && best.is_none_or(|(b, _)| cost < b) {
                best = Some((cost, c));
            }
        }
        let Some((_, idx)) = best else {
            let tys: Vec<String> = arg_tys.iter().map(|t| t.name(&self.structs)).collect();
            return err(
                pos,
                format!("no overload of `{name}` takes ({})", tys.join(", ")),
            );
        };
        let idx = self.definition_of(idx);
        let Item::Func(f) = &self.items[idx] else {
            unreachable!("a function")
        };
        let f = f.clone();
        let mut binds = Vec::new();
        for (i, (p, v)) in f.params.iter().zip(&vals).enumerate() {
            let pt = self.resolve_type(&p.ty)?;
            if matches!(pt, Ty::Struct(_)) && self.contains_sampler(&pt) {
                match v {
                    V::UStruct(k) => binds.push((i, *k)),
                    _ => {
                        return err(
                            args[i].pos,
                            format!("parameter `{}` holds samplers: pass one of RetroArch's uniform structs", p.name),
                        )
                    }
                }
            }
        }
        let compiled = self.compile_function(idx, &binds)?;
        let mut nargs = Vec::new();
        let mut outs = Vec::new();
        for (i, ((p, v), a)) in f.params.iter().zip(vals).zip(args).enumerate() {
            if binds.iter().any(|b| b.0 == i) {
                continue;
            }
            let pt = self.resolve_type(&p.ty)?;
            if p.quals.is_out {
                if !matches!(v, V::Ptr(..) | V::Swz(..)) {
                    return err(
                        a.pos,
                        format!(
                            "argument for `out` parameter `{}` must be a variable",
                            p.name
                        ),
                    );
                }
                outs.push((v.clone(), pt.clone()));
                if !p.quals.is_in {
                    continue;
                }
            }
            match v {
                V::Samp(s) => {
                    nargs.push(s.image);
                    nargs.push(s.sampler);
                }
                other => {
                    let (h, t) = self.load(other, a.pos)?;
                    nargs.push(self.convert(h, &t, &pt, a.pos, false)?);
                }
            }
        }
        let ret = self.resolve_type(&f.ret)?;
        let has_result = compiled.has_outs || ret != Ty::Void;
        self.flush();
        let result = has_result.then(|| self.add(E::CallResult(compiled.handle), pos));
        self.push_stmt(
            Statement::Call {
                function: compiled.handle,
                arguments: nargs,
                result,
            },
            pos,
        );
        if compiled.has_outs {
            let r = result.expect("has result");
            let first = if ret == Ty::Void { 0 } else { 1 };
            for (i, (lv, t)) in outs.into_iter().enumerate() {
                let v = self.access_index(r, (first + i) as u32, pos);
                self.store(lv, v, &t, pos)?;
            }
            if ret == Ty::Void {
                return Ok(V::Val(r, Ty::Void));
            }
            let v = self.access_index(r, 0, pos);
            return Ok(V::Val(v, ret));
        }
        match result {
            Some(r) => Ok(V::Val(r, ret)),
            None => Ok(V::Val(self.lit_i(0, pos), Ty::Void)),
        }
    }

    /// A prototype resolves to the definition with the same parameter types.
    fn definition_of(&self, idx: usize) -> usize {
        let Item::Func(f) = &self.items[idx] else {
            return idx;
        };
        if f.body.is_some() {
            return idx;
        }
        let sig = |g: &FuncDecl| {
            g.params
                .iter()
                .map(|p| (p.ty.name.clone(), p.ty.dims.len()))
                .collect::<Vec<_>>()
        };
        self.funcs
            .get(&f.name)
            .and_then(|c| {
                c.iter().copied().find(|&o| matches!(&self.items[o], Item::Func(g) if g.body.is_some() && sig(g) == sig(f)))
            })
            .unwrap_or(idx)
    }

    fn compile_function(&mut self, idx: usize, binds: &[(usize, UKind)]) -> R<Compiled> {
        if let Some(c) = self.compiled.get(&(idx, binds.to_vec())) {
            return Ok(c.clone());
        }
        let Item::Func(f) = &self.items[idx] else {
            unreachable!("a function")
        };
        let f = f.clone();
        let Some(body) = &f.body else {
            return err(
                f.pos,
                format!("function `{}` is declared but never defined", f.name),
            );
        };
        if self.compiling.contains(&idx) {
            return err(
                f.pos,
                format!(
                    "function `{}` calls itself (recursion is not allowed in Cg)",
                    f.name
                ),
            );
        }
        if self.compiling.len() >= crate::frontend::limits::MAX_CALL_DEPTH {
            return err(
                f.pos,
                format!(
                    "calls nested more than {} deep at function `{}` (see docs/limits.md)",
                    crate::frontend::limits::MAX_CALL_DEPTH,
                    f.name
                ),
            );
        }
        self.compiling.push(idx);
        let ret = self.resolve_type(&f.ret)?;
        if matches!(ret, Ty::Sampler(_)) {
            return err(f.pos, "functions cannot return samplers");
        }
        let fx = self.new_fx(ret.clone());
        self.fs.push(fx);
        // Constant locals belong to one function.
        let saved_consts = std::mem::take(&mut self.local_consts);
        let r = self.function_body(&f, body, &ret, binds);
        self.local_consts = saved_consts;
        let fx = self.fs.pop().expect("pushed");
        self.compiling.pop();
        let has_outs = r?;
        let mut func = fx.func;
        func.name = Some(f.name.clone());
        func.body = fx.blocks.into_iter().next().expect("root block");
        let handle = self.module.functions.append(func, span(f.pos));
        let c = Compiled { handle, has_outs };
        self.compiled.insert((idx, binds.to_vec()), c.clone());
        Ok(c)
    }

    /// Builds parameters and body of a regular function; returns whether it has outputs.
    fn function_body(
        &mut self,
        f: &FuncDecl,
        body: &[Stmt],
        ret: &Ty,
        binds: &[(usize, UKind)],
    ) -> R<bool> {
        let mut arg_index = 0u32;
        let mut out_tys = Vec::new();
        let mut prologue: Vec<(usize, Ty, Option<Handle<E>>)> = Vec::new();
        for (i, p) in f.params.iter().enumerate() {
            if let Some((_, k)) = binds.iter().find(|b| b.0 == i) {
                self.declare(&p.name, Sym::UStruct(*k));
                continue;
            }
            let pt = self.resolve_type(&p.ty)?;
            if let Ty::Sampler(d) = pt {
                let (it, st) = self.sampled_image_types(d);
                let fx = self.fx();
                fx.func.arguments.push(naga::FunctionArgument {
                    name: Some(p.name.clone()),
                    ty: it,
                    binding: None,
                });
                fx.func.arguments.push(naga::FunctionArgument {
                    name: Some(format!("{}_sampler", p.name)),
                    ty: st,
                    binding: None,
                });
                let image = self.add(E::FunctionArgument(arg_index), p.pos);
                let sampler = self.add(E::FunctionArgument(arg_index + 1), p.pos);
                arg_index += 2;
                self.declare(
                    &p.name,
                    Sym::Samp(Samp {
                        tex: None,
                        image,
                        sampler,
                        dim: d,
                    }),
                );
                continue;
            }
            if self.contains_sampler(&pt) {
                return err(
                    p.pos,
                    format!(
                        "parameter `{}`: structs holding samplers cannot be passed to functions",
                        p.name
                    ),
                );
            }
            if p.quals.is_out {
                out_tys.push(pt.clone());
            }
            if p.quals.is_in || !p.quals.is_out {
                let nt = self.nty(&pt, p.pos)?;
                self.fx().func.arguments.push(naga::FunctionArgument {
                    name: Some(p.name.clone()),
                    ty: nt,
                    binding: None,
                });
                let a = self.add(E::FunctionArgument(arg_index), p.pos);
                arg_index += 1;
                prologue.push((i, pt, Some(a)));
            } else {
                prologue.push((i, pt, None));
            }
        }
        for (i, t, arg) in prologue {
            let p = &f.params[i];
            let name = p.name.clone();
            let l = self.local(&name, &t, p.pos)?;
            if let Some(a) = arg {
                self.push_stmt(
                    Statement::Store {
                        pointer: l,
                        value: a,
                    },
                    p.pos,
                );
            }
            if p.quals.is_out {
                self.fx().outs.push((l, t.clone()));
            }
            self.declare(&name, Sym::Var(l, t));
        }
        let has_outs = !out_tys.is_empty();
        if has_outs || *ret != Ty::Void {
            let (names, tys): (Vec<String>, Vec<Ty>) = if has_outs {
                let mut names = Vec::new();
                let mut tys = Vec::new();
                if *ret != Ty::Void {
                    names.push("result".to_string());
                    tys.push(ret.clone());
                }
                for (i, t) in out_tys.iter().enumerate() {
                    names.push(format!("out{i}"));
                    tys.push(t.clone());
                }
                (names, tys)
            } else {
                (Vec::new(), Vec::new())
            };
            let rt = if has_outs {
                self.struct_of(
                    Some(format!("{}_outputs", f.name)),
                    &names,
                    &tys,
                    None,
                    f.pos,
                )?
            } else {
                self.nty(ret, f.pos)?
            };
            self.fx().func.result = Some(naga::FunctionResult {
                ty: rt,
                binding: None,
            });
        }
        for s in body {
            self.stmt(s)?;
        }
        if !ends_with_return(self.fx().blocks.last().expect("root")) {
            // Cg leaves the result of a function that falls off its end undefined; zero it.
            let value = if *ret == Ty::Void {
                None
            } else {
                Some(self.zero(ret, f.pos)?)
            };
            self.return_value(value, f.pos)?;
        }
        self.flush();
        Ok(has_outs)
    }
}
