//! Lexer and parser for Cg 3.1 source (after preprocessing) into an untyped syntax tree.
//!
//! Identifiers are classified as type names while parsing (built-in types, structs — which
//! are types without `typedef`, as in C++ — and typedefs) so declarations, constructors and
//! casts can be told apart from expressions, as a C parser must.

use std::collections::HashSet;

mod lex;

use crate::frontend::limits::{nesting_message, MAX_NESTING_DEPTH};
use lex::{lex, Tok};

/// A position in the preprocessed text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pos {
    /// 1-based line of the preprocessed text.
    pub line: u32,
    /// 1-based column.
    pub col: u32,
    /// Byte offset (for naga spans).
    pub offset: u32,
}

/// A parse error at a position.
#[derive(Clone, Debug)]
pub struct ParseError {
    /// Where.
    pub pos: Pos,
    /// What was expected.
    pub message: String,
}

/// A type as written: a name (`float4x4`, a struct) and array sizes.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeRef {
    /// The type name.
    pub name: String,
    /// Array dimensions, outermost first (`None`: unsized, from the initializer).
    pub dims: Vec<Option<Expr>>,
    /// Where it was written.
    pub pos: Pos,
}

/// Declaration qualifiers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Quals {
    /// `uniform`
    pub uniform: bool,
    /// `static`
    pub is_static: bool,
    /// `const`
    pub is_const: bool,
    /// `in` (explicit)
    pub is_in: bool,
    /// `out` or `inout`
    pub is_out: bool,
}

/// A struct member.
#[derive(Clone, Debug, PartialEq)]
pub struct MemberDecl {
    /// Type (with array dimensions).
    pub ty: TypeRef,
    /// Name.
    pub name: String,
    /// `: SEMANTIC`.
    pub semantic: Option<String>,
    /// Position.
    pub pos: Pos,
}

/// `struct Name { … }`.
#[derive(Clone, Debug, PartialEq)]
pub struct StructDecl {
    /// The struct's name.
    pub name: String,
    /// Its members.
    pub members: Vec<MemberDecl>,
    /// Position.
    pub pos: Pos,
}

/// A variable declaration (global, local or parameter).
#[derive(Clone, Debug, PartialEq)]
pub struct VarDecl {
    /// Qualifiers.
    pub quals: Quals,
    /// Type (with array dimensions).
    pub ty: TypeRef,
    /// Name.
    pub name: String,
    /// `: SEMANTIC`.
    pub semantic: Option<String>,
    /// `= value` or `= { … }`.
    pub init: Option<Expr>,
    /// Position.
    pub pos: Pos,
}

/// A function definition or prototype.
#[derive(Clone, Debug, PartialEq)]
pub struct FuncDecl {
    /// Return type.
    pub ret: TypeRef,
    /// Name.
    pub name: String,
    /// Parameters.
    pub params: Vec<VarDecl>,
    /// `: SEMANTIC` on the result.
    pub semantic: Option<String>,
    /// The body (`None` for a prototype).
    pub body: Option<Vec<Stmt>>,
    /// Position.
    pub pos: Pos,
}

/// A top-level item.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// A struct type.
    Struct(StructDecl),
    /// A function.
    Func(FuncDecl),
    /// A global variable.
    Var(VarDecl),
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `{ … }`
    Block(Vec<Stmt>),
    /// Declarations.
    Var(Vec<VarDecl>),
    /// An expression statement.
    Expr(Expr),
    /// `if`
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    /// `for (init; cond; step) body`
    For(Option<Box<Stmt>>, Option<Expr>, Option<Expr>, Box<Stmt>),
    /// `while (cond) body`
    While(Expr, Box<Stmt>),
    /// `do body while (cond);`
    DoWhile(Box<Stmt>, Expr),
    /// `return`
    Return(Option<Expr>, Pos),
    /// `break`
    Break(Pos),
    /// `continue`
    Continue(Pos),
    /// `discard`
    Discard(Pos),
    /// A local struct declaration.
    Struct(StructDecl),
    /// `;`
    Empty,
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Mod,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `<=`
    Le,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `&&`
    LAnd,
    /// `||`
    LOr,
    /// `&`
    And,
    /// `|`
    Or,
    /// `^`
    Xor,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-`
    Neg,
    /// `+`
    Plus,
    /// `!`
    Not,
    /// `~`
    BitNot,
    /// `++x`
    PreInc,
    /// `--x`
    PreDec,
    /// `x++`
    PostInc,
    /// `x--`
    PostDec,
}

/// An expression with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where it starts (operators: the operator).
    pub pos: Pos,
}

/// Expression kinds.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer literal.
    Int(i64),
    /// A floating-point literal.
    Float(f64),
    /// `true` / `false`.
    Bool(bool),
    /// A name.
    Ident(String),
    /// `a op b`
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `op a`
    Unary(UnOp, Box<Expr>),
    /// `a = b`, `a op= b`
    Assign(Option<BinOp>, Box<Expr>, Box<Expr>),
    /// `c ? a : b`
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `f(args)`
    Call(String, Vec<Expr>),
    /// `type(args)`
    Construct(TypeRef, Vec<Expr>),
    /// `(type) e`
    Cast(TypeRef, Box<Expr>),
    /// `e.name`
    Member(Box<Expr>, String),
    /// `e[i]`
    Index(Box<Expr>, Box<Expr>),
    /// `a, b`
    Comma(Vec<Expr>),
    /// `{ a, b, … }` (initializers only)
    List(Vec<Expr>),
}

/// True for the built-in type names of Cg (`float`, `half3`, `int2x2`, `sampler2D`, …).
pub fn is_builtin_type(name: &str) -> bool {
    if matches!(
        name,
        "void"
            | "sampler"
            | "sampler1D"
            | "sampler2D"
            | "sampler3D"
            | "samplerRECT"
            | "samplerCUBE"
            | "sampler1DARRAY"
            | "sampler2DARRAY"
            | "string"
    ) {
        return true;
    }
    // GLSL spellings cgc also accepts.
    if matches!(
        name,
        "vec2"
            | "vec3"
            | "vec4"
            | "ivec2"
            | "ivec3"
            | "ivec4"
            | "uvec2"
            | "uvec3"
            | "uvec4"
            | "bvec2"
            | "bvec3"
            | "bvec4"
            | "mat2"
            | "mat3"
            | "mat4"
            | "mat2x2"
            | "mat3x3"
            | "mat4x4"
    ) {
        return true;
    }
    for base in [
        "float", "half", "fixed", "int", "uint", "bool", "double", "cint", "cfloat",
    ] {
        if let Some(rest) = name.strip_prefix(base) {
            let r = rest.as_bytes();
            return match r.len() {
                0 => true,
                1 => (b'1'..=b'4').contains(&r[0]),
                3 => (b'1'..=b'4').contains(&r[0]) && r[1] == b'x' && (b'1'..=b'4').contains(&r[2]),
                _ => false,
            };
        }
    }
    false
}

/// Parses a preprocessed translation unit.
pub fn parse(src: &str) -> Result<Vec<Item>, ParseError> {
    let toks = lex(src)?;
    let mut p = Parser {
        toks,
        i: 0,
        types: HashSet::new(),
        typedefs: Vec::new(),
        depth: 0,
    };
    let mut items = Vec::new();
    while !p.at_eof() {
        p.item(&mut items)?;
    }
    Ok(items)
}

struct Parser {
    toks: Vec<(Tok, Pos)>,
    i: usize,
    types: HashSet<String>,
    typedefs: Vec<(String, TypeRef)>,
    /// Nesting of the construct being parsed: statements, assignments, unary operators,
    /// initializer lists and the operands of left-associative operator chains (each link of
    /// `a + b + c` nests the tree one level deeper for the checker and builder that recurse
    /// over it). Bounded by [`MAX_NESTING_DEPTH`].
    depth: usize,
}

type PResult<T> = Result<T, ParseError>;

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.i].0
    }
    fn peek_at(&self, n: usize) -> &Tok {
        &self.toks[(self.i + n).min(self.toks.len() - 1)].0
    }
    fn pos(&self) -> Pos {
        self.toks[self.i].1
    }
    fn at_eof(&self) -> bool {
        matches!(self.peek(), Tok::Eof)
    }
    fn bump(&mut self) -> Tok {
        let t = self.toks[self.i].0.clone();
        if self.i + 1 < self.toks.len() {
            self.i += 1;
        }
        t
    }
    fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }
    fn is_kw(&self, k: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == k)
    }
    fn eat(&mut self, p: &str) -> bool {
        if self.is(p) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn describe(t: &Tok) -> String {
        match t {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Int(v) => format!("`{v}`"),
            Tok::Float(v) => format!("`{v}`"),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Punct(p) => format!("`{p}`"),
            Tok::Eof => "the end of the file".into(),
        }
    }
    fn err<T>(&self, what: &str) -> PResult<T> {
        Err(ParseError {
            pos: self.pos(),
            message: format!("expected {what}, found {}", Self::describe(self.peek())),
        })
    }
    /// Enters `levels` more levels of nesting, or fails past [`MAX_NESTING_DEPTH`]; the caller
    /// leaves them with [`Parser::leave`] whatever its result.
    fn enter(&mut self, levels: usize) -> PResult<()> {
        if self.depth + levels > MAX_NESTING_DEPTH {
            return Err(ParseError {
                pos: self.pos(),
                message: nesting_message(),
            });
        }
        self.depth += levels;
        Ok(())
    }
    fn leave<T>(&mut self, levels: usize, result: PResult<T>) -> PResult<T> {
        self.depth -= levels;
        result
    }
    fn expect(&mut self, p: &str) -> PResult<()> {
        if self.eat(p) {
            Ok(())
        } else {
            self.err(&format!("`{p}`"))
        }
    }
    fn ident(&mut self) -> PResult<String> {
        match self.peek().clone() {
            Tok::Ident(s) => {
                self.bump();
                Ok(s)
            }
            _ => self.err("a name"),
        }
    }

    fn is_type_name(&self, s: &str) -> bool {
        is_builtin_type(s) || self.types.contains(s)
    }

    fn at_qualifier(&self) -> bool {
        matches!(self.peek(), Tok::Ident(s) if matches!(s.as_str(),
            "uniform" | "static" | "const" | "in" | "out" | "inout" | "extern" | "volatile" | "inline" | "varying" | "register"))
    }

    fn quals(&mut self) -> Quals {
        let mut q = Quals::default();
        while let Tok::Ident(s) = self.peek() {
            match s.as_str() {
                "uniform" => q.uniform = true,
                "static" => q.is_static = true,
                "const" => q.is_const = true,
                "in" => q.is_in = true,
                "out" | "inout" => {
                    if s == "inout" {
                        q.is_in = true;
                    }
                    q.is_out = true
                }
                "extern" | "volatile" | "inline" | "varying" => {}
                _ => break,
            }
            self.bump();
        }
        q
    }

    /// A type name (a typedef is resolved to its definition).
    fn type_ref(&mut self) -> PResult<TypeRef> {
        let pos = self.pos();
        if self.is_kw("struct") {
            self.bump();
        }
        let name = match self.peek().clone() {
            Tok::Ident(s) if self.is_type_name(&s) => {
                self.bump();
                s
            }
            _ => return self.err("a type"),
        };
        // `sampler2D<float4>`-style template arguments are not Cg; `packed` etc. are absent.
        if let Some((_, t)) = self.typedefs.iter().rev().find(|(n, _)| *n == name) {
            let mut t = t.clone();
            t.pos = pos;
            return Ok(t);
        }
        Ok(TypeRef {
            name,
            dims: Vec::new(),
            pos,
        })
    }

    fn array_dims(&mut self, ty: &mut TypeRef) -> PResult<()> {
        let mut dims = Vec::new();
        while self.eat("[") {
            if self.eat("]") {
                dims.push(None);
            } else {
                dims.push(Some(self.expr()?));
                self.expect("]")?;
            }
        }
        // `float a[2][3]` is an array of 2 of (float[3]); declared dims go outermost first.
        dims.extend(std::mem::take(&mut ty.dims));
        if dims.len() > MAX_NESTING_DEPTH {
            return Err(ParseError {
                pos: ty.pos,
                message: format!("{} dimensions: {}", dims.len(), nesting_message()),
            });
        }
        ty.dims = dims;
        Ok(())
    }

    fn semantic(&mut self) -> PResult<Option<String>> {
        if !self.is(":") {
            return Ok(None);
        }
        self.bump();
        let s = self.ident()?;
        // `: register(c0)`-style bindings are accepted and ignored.
        if self.eat("(") {
            while !self.is(")") && !self.at_eof() {
                self.bump();
            }
            self.expect(")")?;
        }
        Ok(Some(s))
    }

    fn struct_body(&mut self, pos: Pos) -> PResult<StructDecl> {
        // at `struct`
        self.bump();
        let name = match self.peek().clone() {
            Tok::Ident(s) => {
                self.bump();
                s
            }
            _ => format!("__anon_struct_{}", pos.offset),
        };
        self.types.insert(name.clone());
        let mut members = Vec::new();
        self.expect("{")?;
        while !self.eat("}") {
            if self.at_eof() {
                return self.err("`}` closing the struct");
            }
            let _ = self.quals();
            let base = self.type_ref()?;
            loop {
                let mpos = self.pos();
                let mname = self.ident()?;
                let mut ty = base.clone();
                self.array_dims(&mut ty)?;
                let semantic = self.semantic()?;
                members.push(MemberDecl {
                    ty,
                    name: mname,
                    semantic,
                    pos: mpos,
                });
                if !self.eat(",") {
                    break;
                }
            }
            self.expect(";")?;
        }
        Ok(StructDecl { name, members, pos })
    }

    fn item(&mut self, items: &mut Vec<Item>) -> PResult<()> {
        if self.eat(";") {
            return Ok(());
        }
        let pos = self.pos();
        if self.is_kw("typedef") {
            self.bump();
            let mut ty = if self.is_kw("struct") && matches!(self.peek_at(2), Tok::Punct("{"))
                || self.is_kw("struct") && matches!(self.peek_at(1), Tok::Punct("{"))
            {
                let s = self.struct_body(pos)?;
                let t = TypeRef {
                    name: s.name.clone(),
                    dims: Vec::new(),
                    pos,
                };
                items.push(Item::Struct(s));
                t
            } else {
                self.type_ref()?
            };
            let name = self.ident()?;
            self.array_dims(&mut ty)?;
            self.expect(";")?;
            self.types.insert(name.clone());
            self.typedefs.push((name, ty));
            return Ok(());
        }
        let quals = self.quals();
        if self.is_kw("struct") && matches!(self.peek_at(2), Tok::Punct("{")) {
            let s = self.struct_body(pos)?;
            let ty = TypeRef {
                name: s.name.clone(),
                dims: Vec::new(),
                pos,
            };
            items.push(Item::Struct(s));
            if self.eat(";") {
                return Ok(());
            }
            return self.declarators(quals, ty, items);
        }
        if self.is_kw("struct") && matches!(self.peek_at(2), Tok::Punct(";")) {
            // Forward declaration.
            self.bump();
            let n = self.ident()?;
            self.types.insert(n);
            self.bump();
            return Ok(());
        }
        let ty = self.type_ref()?;
        let name_pos = self.pos();
        let name = self.ident()?;
        if self.is("(") {
            let f = self.function(ty, name, name_pos)?;
            items.push(Item::Func(f));
            return Ok(());
        }
        self.rest_of_declarators(quals, ty, name, name_pos, &mut |v| items.push(Item::Var(v)))
    }

    fn declarators(&mut self, quals: Quals, ty: TypeRef, items: &mut Vec<Item>) -> PResult<()> {
        let name_pos = self.pos();
        let name = self.ident()?;
        self.rest_of_declarators(quals, ty, name, name_pos, &mut |v| items.push(Item::Var(v)))
    }

    fn rest_of_declarators(
        &mut self,
        quals: Quals,
        base: TypeRef,
        mut name: String,
        mut name_pos: Pos,
        sink: &mut dyn FnMut(VarDecl),
    ) -> PResult<()> {
        loop {
            let mut ty = base.clone();
            self.array_dims(&mut ty)?;
            let semantic = self.semantic()?;
            let init = if self.eat("=") {
                Some(self.initializer()?)
            } else {
                None
            };
            sink(VarDecl {
                quals,
                ty,
                name,
                semantic,
                init,
                pos: name_pos,
            });
            if !self.eat(",") {
                break;
            }
            name_pos = self.pos();
            name = self.ident()?;
        }
        self.expect(";")
    }

    fn initializer(&mut self) -> PResult<Expr> {
        self.enter(1)?;
        let result = self.initializer_nested();
        self.leave(1, result)
    }

    fn initializer_nested(&mut self) -> PResult<Expr> {
        let pos = self.pos();
        if self.eat("{") {
            let mut v = Vec::new();
            while !self.eat("}") {
                v.push(self.initializer()?);
                if !self.eat(",") {
                    self.expect("}")?;
                    break;
                }
            }
            return Ok(Expr {
                kind: ExprKind::List(v),
                pos,
            });
        }
        self.assign()
    }

    fn function(&mut self, ret: TypeRef, name: String, pos: Pos) -> PResult<FuncDecl> {
        self.expect("(")?;
        let mut params = Vec::new();
        if self.is_kw("void") && matches!(self.peek_at(1), Tok::Punct(")")) {
            self.bump();
        }
        while !self.eat(")") {
            let quals = self.quals();
            let mut ty = self.type_ref()?;
            let ppos = self.pos();
            let pname = self.ident()?;
            self.array_dims(&mut ty)?;
            let semantic = self.semantic()?;
            let init = if self.eat("=") {
                Some(self.initializer()?)
            } else {
                None
            };
            params.push(VarDecl {
                quals,
                ty,
                name: pname,
                semantic,
                init,
                pos: ppos,
            });
            if !self.eat(",") {
                self.expect(")")?;
                break;
            }
        }
        let semantic = self.semantic()?;
        let body = if self.eat(";") {
            None
        } else {
            Some(self.block()?)
        };
        Ok(FuncDecl {
            ret,
            name,
            params,
            semantic,
            body,
            pos,
        })
    }

    fn block(&mut self) -> PResult<Vec<Stmt>> {
        self.expect("{")?;
        let mut v = Vec::new();
        while !self.eat("}") {
            if self.at_eof() {
                return self.err("`}`");
            }
            v.push(self.stmt()?);
        }
        Ok(v)
    }

    /// Skips HLSL-style attributes (`[unroll]`, `[loop]`, `[branch]`, `[flatten]`, `[unroll(4)]`).
    fn attributes(&mut self) {
        while self.is("[") && matches!(self.peek_at(1), Tok::Ident(_)) {
            let save = self.i;
            self.bump();
            self.bump();
            if self.eat("(") {
                while !self.is(")") && !self.at_eof() {
                    self.bump();
                }
                self.eat(")");
            }
            if !self.eat("]") {
                self.i = save;
                return;
            }
        }
    }

    fn at_declaration(&self) -> bool {
        if self.at_qualifier() {
            return true;
        }
        match self.peek() {
            Tok::Ident(s) if s == "struct" => true,
            Tok::Ident(s) if self.is_type_name(s) => matches!(self.peek_at(1), Tok::Ident(_)),
            _ => false,
        }
    }

    fn stmt(&mut self) -> PResult<Stmt> {
        self.enter(1)?;
        let result = self.stmt_nested();
        self.leave(1, result)
    }

    fn stmt_nested(&mut self) -> PResult<Stmt> {
        self.attributes();
        let pos = self.pos();
        if self.eat(";") {
            return Ok(Stmt::Empty);
        }
        if self.is("{") {
            return Ok(Stmt::Block(self.block()?));
        }
        if let Tok::Ident(k) = self.peek().clone() {
            match k.as_str() {
                "if" => {
                    self.bump();
                    self.expect("(")?;
                    let c = self.expr()?;
                    self.expect(")")?;
                    let a = self.stmt()?;
                    let b = if self.is_kw("else") {
                        self.bump();
                        Some(Box::new(self.stmt()?))
                    } else {
                        None
                    };
                    return Ok(Stmt::If(c, Box::new(a), b));
                }
                "for" => {
                    self.bump();
                    self.expect("(")?;
                    let init = if self.eat(";") {
                        None
                    } else if self.at_declaration() {
                        Some(Box::new(self.local_decl()?))
                    } else {
                        let e = self.expr()?;
                        self.expect(";")?;
                        Some(Box::new(Stmt::Expr(e)))
                    };
                    let cond = if self.is(";") {
                        None
                    } else {
                        Some(self.expr()?)
                    };
                    self.expect(";")?;
                    let step = if self.is(")") {
                        None
                    } else {
                        Some(self.expr()?)
                    };
                    self.expect(")")?;
                    let body = self.stmt()?;
                    return Ok(Stmt::For(init, cond, step, Box::new(body)));
                }
                "while" => {
                    self.bump();
                    self.expect("(")?;
                    let c = self.expr()?;
                    self.expect(")")?;
                    let body = self.stmt()?;
                    return Ok(Stmt::While(c, Box::new(body)));
                }
                "do" => {
                    self.bump();
                    let body = self.stmt()?;
                    if !self.is_kw("while") {
                        return self.err("`while` after the `do` body");
                    }
                    self.bump();
                    self.expect("(")?;
                    let c = self.expr()?;
                    self.expect(")")?;
                    self.expect(";")?;
                    return Ok(Stmt::DoWhile(Box::new(body), c));
                }
                "return" => {
                    self.bump();
                    let e = if self.is(";") {
                        None
                    } else {
                        Some(self.expr()?)
                    };
                    self.expect(";")?;
                    return Ok(Stmt::Return(e, pos));
                }
                "break" => {
                    self.bump();
                    self.expect(";")?;
                    return Ok(Stmt::Break(pos));
                }
                "continue" => {
                    self.bump();
                    self.expect(";")?;
                    return Ok(Stmt::Continue(pos));
                }
                "discard" => {
                    self.bump();
                    self.expect(";")?;
                    return Ok(Stmt::Discard(pos));
                }
                "struct" if matches!(self.peek_at(2), Tok::Punct("{")) => {
                    let s = self.struct_body(pos)?;
                    self.expect(";")?;
                    return Ok(Stmt::Struct(s));
                }
                _ => {}
            }
        }
        if self.at_declaration() {
            return self.local_decl();
        }
        let e = self.expr()?;
        self.expect(";")?;
        Ok(Stmt::Expr(e))
    }

    fn local_decl(&mut self) -> PResult<Stmt> {
        let quals = self.quals();
        let ty = self.type_ref()?;
        let name_pos = self.pos();
        let name = self.ident()?;
        let mut v = Vec::new();
        self.rest_of_declarators(quals, ty, name, name_pos, &mut |d| v.push(d))?;
        Ok(Stmt::Var(v))
    }

    fn expr(&mut self) -> PResult<Expr> {
        let first = self.assign()?;
        if !self.is(",") {
            return Ok(first);
        }
        let pos = first.pos;
        let mut v = vec![first];
        while self.eat(",") {
            v.push(self.assign()?);
        }
        Ok(Expr {
            kind: ExprKind::Comma(v),
            pos,
        })
    }

    fn assign(&mut self) -> PResult<Expr> {
        self.enter(1)?;
        let result = self.assign_nested();
        self.leave(1, result)
    }

    fn assign_nested(&mut self) -> PResult<Expr> {
        let lhs = self.ternary()?;
        let op = match self.peek() {
            Tok::Punct("=") => None,
            Tok::Punct("+=") => Some(BinOp::Add),
            Tok::Punct("-=") => Some(BinOp::Sub),
            Tok::Punct("*=") => Some(BinOp::Mul),
            Tok::Punct("/=") => Some(BinOp::Div),
            Tok::Punct("%=") => Some(BinOp::Mod),
            Tok::Punct("&=") => Some(BinOp::And),
            Tok::Punct("|=") => Some(BinOp::Or),
            Tok::Punct("^=") => Some(BinOp::Xor),
            Tok::Punct("<<=") => Some(BinOp::Shl),
            Tok::Punct(">>=") => Some(BinOp::Shr),
            _ => return Ok(lhs),
        };
        let pos = self.pos();
        self.bump();
        let rhs = self.assign()?;
        Ok(Expr {
            kind: ExprKind::Assign(op, Box::new(lhs), Box::new(rhs)),
            pos,
        })
    }

    fn ternary(&mut self) -> PResult<Expr> {
        let c = self.binary(0)?;
        if !self.is("?") {
            return Ok(c);
        }
        let pos = self.pos();
        self.bump();
        let a = self.assign()?;
        self.expect(":")?;
        let b = self.assign()?;
        Ok(Expr {
            kind: ExprKind::Ternary(Box::new(c), Box::new(a), Box::new(b)),
            pos,
        })
    }

    fn binop(&self) -> Option<(BinOp, u8)> {
        let Tok::Punct(p) = self.peek() else {
            return None;
        };
        Some(match *p {
            "||" => (BinOp::LOr, 1),
            "&&" => (BinOp::LAnd, 2),
            "|" => (BinOp::Or, 3),
            "^" => (BinOp::Xor, 4),
            "&" => (BinOp::And, 5),
            "==" => (BinOp::Eq, 6),
            "!=" => (BinOp::Ne, 6),
            "<" => (BinOp::Lt, 7),
            ">" => (BinOp::Gt, 7),
            "<=" => (BinOp::Le, 7),
            ">=" => (BinOp::Ge, 7),
            "<<" => (BinOp::Shl, 8),
            ">>" => (BinOp::Shr, 8),
            "+" => (BinOp::Add, 9),
            "-" => (BinOp::Sub, 9),
            "*" => (BinOp::Mul, 10),
            "/" => (BinOp::Div, 10),
            "%" => (BinOp::Mod, 10),
            _ => return None,
        })
    }

    fn binary(&mut self, min: u8) -> PResult<Expr> {
        let mut links = 0;
        let result = self.binary_links(min, &mut links);
        self.leave(links, result)
    }

    /// [`Parser::binary`], counting the links of the chain in `links` (levels entered).
    fn binary_links(&mut self, min: u8, links: &mut usize) -> PResult<Expr> {
        let mut l = self.unary()?;
        while let Some((op, prec)) = self.binop() {
            if prec < min {
                break;
            }
            self.enter(1)?;
            *links += 1;
            let pos = self.pos();
            self.bump();
            let r = self.binary(prec + 1)?;
            l = Expr {
                kind: ExprKind::Binary(op, Box::new(l), Box::new(r)),
                pos,
            };
        }
        Ok(l)
    }

    fn unary(&mut self) -> PResult<Expr> {
        self.enter(1)?;
        let result = self.unary_nested();
        self.leave(1, result)
    }

    fn unary_nested(&mut self) -> PResult<Expr> {
        let pos = self.pos();
        let op = match self.peek() {
            Tok::Punct("-") => Some(UnOp::Neg),
            Tok::Punct("+") => Some(UnOp::Plus),
            Tok::Punct("!") => Some(UnOp::Not),
            Tok::Punct("~") => Some(UnOp::BitNot),
            Tok::Punct("++") => Some(UnOp::PreInc),
            Tok::Punct("--") => Some(UnOp::PreDec),
            _ => None,
        };
        if let Some(op) = op {
            self.bump();
            let e = self.unary()?;
            return Ok(Expr {
                kind: ExprKind::Unary(op, Box::new(e)),
                pos,
            });
        }
        // Cast: `(type) expr` (not `(type(…))`, a parenthesised constructor).
        if self.is("(") {
            if let Tok::Ident(s) = self.peek_at(1) {
                if self.is_type_name(s) {
                    let save = self.i;
                    self.bump();
                    let mut ty = self.type_ref()?;
                    self.array_dims(&mut ty)?;
                    if self.eat(")") {
                        let e = self.unary()?;
                        return Ok(Expr {
                            kind: ExprKind::Cast(ty, Box::new(e)),
                            pos,
                        });
                    }
                    self.i = save;
                }
            }
        }
        self.postfix()
    }

    fn postfix(&mut self) -> PResult<Expr> {
        let mut links = 0;
        let result = self.postfix_links(&mut links);
        self.leave(links, result)
    }

    /// [`Parser::postfix`], counting the operators applied in `links` (levels entered).
    fn postfix_links(&mut self, links: &mut usize) -> PResult<Expr> {
        let mut e = self.primary()?;
        loop {
            if self.is(".") || self.is("[") || self.is("++") || self.is("--") {
                self.enter(1)?;
                *links += 1;
            }
            let pos = self.pos();
            if self.eat(".") {
                let name = self.ident()?;
                e = Expr {
                    kind: ExprKind::Member(Box::new(e), name),
                    pos,
                };
            } else if self.eat("[") {
                let i = self.expr()?;
                self.expect("]")?;
                e = Expr {
                    kind: ExprKind::Index(Box::new(e), Box::new(i)),
                    pos,
                };
            } else if self.eat("++") {
                e = Expr {
                    kind: ExprKind::Unary(UnOp::PostInc, Box::new(e)),
                    pos,
                };
            } else if self.eat("--") {
                e = Expr {
                    kind: ExprKind::Unary(UnOp::PostDec, Box::new(e)),
                    pos,
                };
            } else {
                return Ok(e);
            }
        }
    }

    fn args(&mut self) -> PResult<Vec<Expr>> {
        self.expect("(")?;
        let mut v = Vec::new();
        if self.eat(")") {
            return Ok(v);
        }
        loop {
            v.push(self.assign()?);
            if self.eat(")") {
                return Ok(v);
            }
            if !self.eat(",") {
                return self.err("`,` or `)` in the argument list");
            }
        }
    }

    fn primary(&mut self) -> PResult<Expr> {
        let pos = self.pos();
        let kind = match self.peek().clone() {
            Tok::Int(v) => {
                self.bump();
                ExprKind::Int(v)
            }
            Tok::Float(v) => {
                self.bump();
                ExprKind::Float(v)
            }
            Tok::Punct("(") => {
                self.bump();
                let e = self.expr()?;
                self.expect(")")?;
                return Ok(e);
            }
            Tok::Punct("{") => return self.initializer(),
            Tok::Ident(s) if s == "true" || s == "false" => {
                self.bump();
                ExprKind::Bool(s == "true")
            }
            // `float[](a, b)` / `float[2](a, b)`: an array constructor.
            Tok::Ident(s)
                if self.is_type_name(&s) && matches!(self.peek_at(1), Tok::Punct("[")) =>
            {
                let mut ty = self.type_ref()?;
                self.array_dims(&mut ty)?;
                if !self.is("(") {
                    return self.err(&format!("`(` after the array type `{}[]`", ty.name));
                }
                let args = self.args()?;
                if let Some(d @ None) = ty.dims.first_mut() {
                    *d = Some(Expr {
                        kind: ExprKind::Int(args.len() as i64),
                        pos,
                    });
                }
                ExprKind::Construct(ty, args)
            }
            // A type name not followed by `(` is a variable that shadows it (`float3 input`).
            Tok::Ident(s)
                if self.is_type_name(&s) && matches!(self.peek_at(1), Tok::Punct("(")) =>
            {
                let ty = self.type_ref()?;
                if !self.is("(") {
                    return self.err(&format!("`(` after the type `{}`", ty.name));
                }
                let args = self.args()?;
                ExprKind::Construct(ty, args)
            }
            Tok::Ident(s) => {
                self.bump();
                if self.is("(") {
                    let args = self.args()?;
                    ExprKind::Call(s, args)
                } else {
                    ExprKind::Ident(s)
                }
            }
            _ => return self.err("an expression"),
        };
        Ok(Expr { kind, pos })
    }
}
