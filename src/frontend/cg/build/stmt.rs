//! Statements and control flow. Nested statements open scopes; an `if` whose condition is a
//! constant (a literal or a `const` local) keeps only the live branch and never checks the other,
//! as cgc does; `for` and `while` are a naga `Loop` that breaks when the condition fails, with
//! the step in `continuing`; `do … while` uses `break_if`. `return` returns the outputs struct
//! in an entry point or a function with `out` parameters. `const` locals with initializers are
//! remembered for array sizes and constant conditions.

use super::*;

impl Cx<'_> {
    pub(super) fn stmt(&mut self, s: &Stmt) -> R<()> {
        match s {
            Stmt::Empty | Stmt::Struct(_) => Ok(()),
            Stmt::Block(v) => self.in_scope(|cx| v.iter().try_for_each(|s| cx.stmt(s))),
            Stmt::Var(decls) => {
                for d in decls {
                    self.local_decl(d)?;
                }
                Ok(())
            }
            Stmt::Expr(e) => {
                self.expr(e)?;
                Ok(())
            }
            Stmt::If(c, a, b) if self.static_condition(c).is_some() => {
                // cgc drops a branch a constant condition rules out before checking it (shaders
                // rely on this to reference names that only exist in other configurations).
                let live = if self.static_condition(c) == Some(true) {
                    Some(a)
                } else {
                    b.as_ref()
                };
                if let Some(s) = live {
                    self.in_scope(|cx| cx.stmt(s))?;
                }
                Ok(())
            }
            Stmt::If(c, a, b) => {
                let cond = self.condition(c)?;
                self.open_block();
                self.in_scope(|cx| cx.stmt(a))?;
                let accept = self.close_block();
                self.open_block();
                if let Some(b) = b {
                    self.in_scope(|cx| cx.stmt(b))?;
                }
                let reject = self.close_block();
                self.push_stmt(
                    Statement::If {
                        condition: cond,
                        accept,
                        reject,
                    },
                    c.pos,
                );
                Ok(())
            }
            Stmt::For(init, cond, step, body) => {
                self.in_scope(|cx| cx.for_loop(init.as_deref(), cond.as_ref(), step.as_ref(), body))
            }
            Stmt::While(c, body) => self.for_loop(None, Some(c), None, body),
            Stmt::DoWhile(body, c) => {
                self.open_block();
                self.loop_body(body)?;
                let b = self.close_block();
                self.open_block();
                let cond = self.condition(c)?;
                let nc = self.add(
                    E::Unary {
                        op: naga::UnaryOperator::LogicalNot,
                        expr: cond,
                    },
                    c.pos,
                );
                let cont = self.close_block();
                self.push_stmt(
                    Statement::Loop {
                        body: b,
                        continuing: cont,
                        break_if: Some(nc),
                    },
                    c.pos,
                );
                Ok(())
            }
            Stmt::Return(e, pos) => self.return_stmt(e.as_ref(), *pos),
            Stmt::Break(pos) => {
                if self.fx().loop_depth == 0 {
                    return err(*pos, "`break` outside a loop");
                }
                self.push_stmt(Statement::Break, *pos);
                Ok(())
            }
            Stmt::Continue(pos) => {
                if self.fx().loop_depth == 0 {
                    return err(*pos, "`continue` outside a loop");
                }
                self.push_stmt(Statement::Continue, *pos);
                Ok(())
            }
            Stmt::Discard(pos) => {
                if self.stage == StageKind::Vertex {
                    return err(*pos, "`discard` is only allowed in fragment programs");
                }
                self.push_stmt(Statement::Kill, *pos);
                Ok(())
            }
        }
    }

    /// A loop's body, in a scope of its own, where `break` and `continue` are allowed.
    fn loop_body(&mut self, body: &Stmt) -> R<()> {
        self.fx().loop_depth += 1;
        let r = self.in_scope(|cx| cx.stmt(body));
        self.fx().loop_depth -= 1;
        r
    }

    /// The value of a condition that is a literal or a `const` local initialised by one.
    fn static_condition(&self, c: &Expr) -> Option<bool> {
        match &c.kind {
            ExprKind::Bool(b) => Some(*b),
            ExprKind::Int(v) => Some(*v != 0),
            ExprKind::Float(v) => Some(*v != 0.0),
            ExprKind::Unary(UnOp::Not, a) => self.static_condition(a).map(|v| !v),
            ExprKind::Ident(n) if self.lookup_is_const_local(n) => {
                let c = self.local_consts.iter().rev().find(|c| c.0 == *n)?;
                self.static_condition(&c.1)
            }
            _ => None,
        }
    }

    /// Whether `n` names a `const` local (not shadowed by a later non-const declaration).
    fn lookup_is_const_local(&self, n: &str) -> bool {
        self.local_consts.iter().any(|c| c.0 == n) && matches!(self.lookup(n), Some(Sym::Var(..)))
    }

    fn condition(&mut self, c: &Expr) -> R<Handle<E>> {
        let (h, t) = self.rvalue(c)?;
        match t {
            Ty::Scalar(_) => self.convert(h, &t, &Ty::Scalar(Sk::B), c.pos, true),
            other => err(
                c.pos,
                format!(
                    "a condition must be a scalar, found {}",
                    other.name(&self.structs)
                ),
            ),
        }
    }

    fn for_loop(
        &mut self,
        init: Option<&Stmt>,
        cond: Option<&Expr>,
        step: Option<&Expr>,
        body: &Stmt,
    ) -> R<()> {
        if let Some(i) = init {
            self.stmt(i)?;
        }
        self.open_block();
        if let Some(c) = cond {
            let h = self.condition(c)?;
            self.open_block();
            let accept = self.close_block();
            self.open_block();
            self.push_stmt(Statement::Break, c.pos);
            let reject = self.close_block();
            self.push_stmt(
                Statement::If {
                    condition: h,
                    accept,
                    reject,
                },
                c.pos,
            );
        }
        self.loop_body(body)?;
        let b = self.close_block();
        self.open_block();
        if let Some(s) = step {
            self.expr(s)?;
        }
        let cont = self.close_block();
        self.push_stmt(
            Statement::Loop {
                body: b,
                continuing: cont,
                break_if: None,
            },
            Pos::default(),
        );
        Ok(())
    }

    fn local_decl(&mut self, d: &VarDecl) -> R<()> {
        if let (true, Some(init)) = (d.quals.is_const, &d.init) {
            // Constant locals may size arrays declared after them.
            self.local_consts.push((d.name.clone(), init.clone()));
        } else {
            // A variable shadowing a constant is not constant.
            self.local_consts.retain(|c| c.0 != d.name);
        }
        let ty = self.resolve_type_for(d)?;
        if let Ty::Sampler(_) = ty {
            let Some(init) = &d.init else {
                return err(d.pos, "a local sampler needs an initializer");
            };
            match self.expr(init)? {
                V::Samp(s) => {
                    self.declare(&d.name, Sym::Samp(s));
                    return Ok(());
                }
                _ => return err(init.pos, "expected a sampler"),
            }
        }
        if ty == Ty::Void {
            return err(d.pos, "a variable cannot be void");
        }
        let l = self.local(&d.name, &ty, d.pos)?;
        if let Some(init) = &d.init {
            let v = self.rvalue_as(init, &ty)?;
            self.push_stmt(
                Statement::Store {
                    pointer: l,
                    value: v,
                },
                d.pos,
            );
        }
        // Declared after the initializer: `float x = x;` reads an outer `x`.
        self.declare(&d.name, Sym::Var(l, ty));
        Ok(())
    }

    fn return_stmt(&mut self, e: Option<&Expr>, pos: Pos) -> R<()> {
        let ret = self.fx().ret.clone();
        let value = match (e, &ret) {
            (None, Ty::Void) => None,
            (Some(_), Ty::Void) => return err(pos, "a void function cannot return a value"),
            (None, _) => {
                return err(
                    pos,
                    format!("this function must return {}", ret.name(&self.structs)),
                )
            }
            (Some(e), _) => Some(self.rvalue_as(e, &ret)?),
        };
        self.return_value(value, pos)
    }

    pub(super) fn return_value(&mut self, value: Option<Handle<E>>, pos: Pos) -> R<()> {
        if self.fx().entry.is_some() {
            let v = self.entry_outputs(value, pos)?;
            self.push_stmt(Statement::Return { value: Some(v) }, pos);
            return Ok(());
        }
        let outs = self.fx().outs.clone();
        if outs.is_empty() {
            self.push_stmt(Statement::Return { value }, pos);
            return Ok(());
        }
        let mut comps = Vec::new();
        comps.extend(value);
        for (p, _) in outs {
            comps.push(self.add(E::Load { pointer: p }, pos));
        }
        let ty = self.fx().func.result.as_ref().expect("outputs struct").ty;
        let v = self.compose(ty, comps, pos);
        self.push_stmt(Statement::Return { value: Some(v) }, pos);
        Ok(())
    }
}

/// Whether the block's last statement leaves the function.
pub(super) fn ends_with_return(b: &Block) -> bool {
    match b.last() {
        Some(Statement::Return { .. }) | Some(Statement::Kill) => true,
        Some(Statement::If { accept, reject, .. }) => {
            ends_with_return(accept) && ends_with_return(reject)
        }
        Some(Statement::Block(inner)) => ends_with_return(inner),
        _ => false,
    }
}
