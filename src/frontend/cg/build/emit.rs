//! The function under construction ([`Fx`], the top of `Cx::fs`) and how code is appended to
//! it. Expressions go into its arena and are covered by `Emit` statements before the next
//! statement (`flush`); expressions naga forbids inside an `Emit` range (literals, variables,
//! arguments, call results) flush what is pending and start the next range after them. Blocks
//! nest as a stack (`open_block` … `close_block`), scopes as a stack of name tables.

use super::*;

impl Cx<'_> {
    pub(super) fn fx(&mut self) -> &mut Fx {
        self.fs.last_mut().expect("inside a function")
    }

    pub(super) fn add(&mut self, e: E, pos: Pos) -> Handle<E> {
        let pre = e.needs_pre_emit() || matches!(e, E::CallResult(_));
        if pre {
            self.flush();
        }
        let f = self.fx();
        let h = f.func.expressions.append(e, span(pos));
        if pre {
            f.emit_start = f.func.expressions.len();
        }
        h
    }

    pub(super) fn flush(&mut self) {
        let f = self.fx();
        let len = f.func.expressions.len();
        if f.emit_start < len {
            let range = f.func.expressions.range_from(f.emit_start);
            f.blocks
                .last_mut()
                .expect("a block")
                .push(Statement::Emit(range), Span::UNDEFINED);
            f.emit_start = len;
        }
    }

    pub(super) fn push_stmt(&mut self, s: Statement, pos: Pos) {
        self.flush();
        self.fx()
            .blocks
            .last_mut()
            .expect("a block")
            .push(s, span(pos));
    }

    pub(super) fn open_block(&mut self) {
        self.flush();
        self.fx().blocks.push(Block::new());
    }

    pub(super) fn close_block(&mut self) -> Block {
        self.flush();
        self.fx().blocks.pop().expect("opened")
    }

    pub(super) fn lookup(&self, name: &str) -> Option<Sym> {
        let f = self.fs.last()?;
        f.scopes.iter().rev().find_map(|s| s.get(name).cloned())
    }

    pub(super) fn declare(&mut self, name: &str, s: Sym) {
        self.fx()
            .scopes
            .last_mut()
            .expect("a scope")
            .insert(name.to_string(), s);
    }

    /// Runs `build` in a new innermost scope: what it declares is gone afterwards.
    pub(super) fn in_scope<T>(&mut self, build: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        self.fx().scopes.push(HashMap::new());
        let r = build(self);
        self.fx().scopes.pop();
        r
    }

    pub(super) fn local(&mut self, name: &str, ty: &Ty, pos: Pos) -> R<Handle<E>> {
        let nt = self.nty(ty, pos)?;
        let lv = self.fx().func.local_variables.append(
            naga::LocalVariable {
                name: Some(name.to_string()),
                ty: nt,
                init: None,
            },
            span(pos),
        );
        Ok(self.add(E::LocalVariable(lv), pos))
    }

    pub(super) fn lit_f(&mut self, v: f32, pos: Pos) -> Handle<E> {
        self.add(E::Literal(Literal::F32(v)), pos)
    }

    pub(super) fn lit_i(&mut self, v: i32, pos: Pos) -> Handle<E> {
        self.add(E::Literal(Literal::I32(v)), pos)
    }

    pub(super) fn zero(&mut self, ty: &Ty, pos: Pos) -> R<Handle<E>> {
        let t = self.nty(ty, pos)?;
        Ok(self.add(E::ZeroValue(t), pos))
    }

    /// A value of the naga type `ty` made of `components`.
    pub(super) fn compose(
        &mut self,
        ty: Handle<Type>,
        components: Vec<Handle<E>>,
        pos: Pos,
    ) -> Handle<E> {
        self.add(E::Compose { ty, components }, pos)
    }

    /// Member, component, row or element `index` of `base` (a value or a pointer).
    pub(super) fn access_index(&mut self, base: Handle<E>, index: u32, pos: Pos) -> Handle<E> {
        self.add(E::AccessIndex { base, index }, pos)
    }

    pub(super) fn new_fx(&self, ret: Ty) -> Fx {
        Fx {
            func: naga::Function::default(),
            emit_start: 0,
            blocks: vec![Block::new()],
            scopes: vec![HashMap::new()],
            ret,
            outs: Vec::new(),
            entry: None,
            loop_depth: 0,
        }
    }

    pub(super) fn local_type(&self, l: Handle<E>) -> Ty {
        let f = self.fs.last().expect("function");
        for s in f.scopes.iter().rev() {
            for sym in s.values() {
                if let Sym::Var(h, t) = sym {
                    if *h == l {
                        return t.clone();
                    }
                }
            }
        }
        Ty::Void
    }
}
