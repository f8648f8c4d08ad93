//! Type checking and naga construction in one pass over the syntax tree: every expression is
//! checked and emitted as naga IR with its Cg type, implicit conversions are inserted where Cg
//! performs them, and user functions are compiled on first call (after overload resolution).
//!
//! The entry point (`main_vertex` / `main_fragment`) is compiled directly as the naga entry
//! point: its varying parameters read the stage inputs, its `uniform` parameters and the
//! uniform globals read one uniform block (group 0, binding 0) whose members carry RetroArch's
//! slang semantic names, and samplers become a texture and a sampler global each.
//! Functions with `out`/`inout` parameters return a struct (result, then the outputs) and the
//! caller stores the outputs back, so no pointers cross calls.

use std::collections::HashMap;

use naga::{
    AddressSpace, BinaryOperator as Bo, Block, Expression as E, Handle, Literal,
    MathFunction as Mf, Span, Statement, Type, TypeInner,
};

use super::parse::{BinOp, Expr, ExprKind, FuncDecl, Item, Pos, Stmt, UnOp, VarDecl};
use super::types::{builtin_type, common_type, conversion_cost, Dim, Sk, StructInfo, Ty};
use crate::frontend::retroarch::SAMPLER_BINDING_OFFSET;

mod builtins;

/// A checker error at a position of the preprocessed text.
#[derive(Clone, Debug)]
pub struct BuildError {
    /// Where.
    pub pos: Pos,
    /// What is wrong.
    pub message: String,
}

type R<T> = Result<T, BuildError>;

fn err<T>(pos: Pos, m: impl Into<String>) -> R<T> {
    Err(BuildError {
        pos,
        message: m.into(),
    })
}

/// Which stage is being built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StageKind {
    /// `main_vertex`
    Vertex,
    /// `main_fragment`
    Fragment,
}

/// RetroArch's uniform structs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UKind {
    /// `IN`
    In,
    /// `ORIG`
    Orig,
    /// `PREV` (0), `PREV1`..: frames back minus one.
    Prev(u32),
    /// `PASS1`..
    Pass(u32),
    /// `PASSPREV1`..
    PassPrev(u32),
    /// A pass alias (`alias` in the `.cgp`), by index into the alias table: the texture is the
    /// alias, its size `<alias>Size`, as in slang.
    Alias(u32),
}

/// A sampler: the texture and sampler expressions.
#[derive(Clone, Copy, Debug)]
struct Samp {
    image: Handle<E>,
    sampler: Handle<E>,
    dim: Dim,
    /// The global texture (index into `texture_list`), for sampler globals assigned from it.
    tex: Option<u32>,
}

/// A checked expression.
#[derive(Clone, Debug)]
enum V {
    Val(Handle<E>, Ty),
    Ptr(Handle<E>, Ty),
    /// Components of the vector a pointer points to (an assignable swizzle).
    Swz(Handle<E>, Ty, Vec<u8>),
    Samp(Samp),
    UStruct(UKind),
}

#[derive(Clone, Debug)]
enum Sym {
    Var(Handle<E>, Ty),
    Samp(Samp),
    UStruct(UKind),
    Uniform(String, Ty),
    /// A sampler global, created on first use.
    Tex(String, Dim),
}

/// Where a sampler global comes from.
#[derive(Clone, Debug)]
struct TexGlobal {
    image: Handle<naga::GlobalVariable>,
    sampler: Handle<naga::GlobalVariable>,
    dim: Dim,
}

/// How a (non-entry) function was compiled.
#[derive(Clone, Debug)]
struct Compiled {
    handle: Handle<naga::Function>,
    /// Result struct when there are out parameters.
    has_outs: bool,
}

struct Fx {
    func: naga::Function,
    emit_start: usize,
    blocks: Vec<Block>,
    scopes: Vec<HashMap<String, Sym>>,
    ret: Ty,
    /// Out parameters (local pointer, type) in order.
    outs: Vec<(Handle<E>, Ty)>,
    entry: Option<EntryOut>,
    loop_depth: u32,
}

/// How an entry point's outputs are assembled at `return`.
struct EntryOut {
    /// Output struct type.
    ty: Handle<Type>,
    /// For each output member: where its value comes from.
    sources: Vec<OutSource>,
    out_tys: Vec<Ty>,
}

#[derive(Clone, Debug)]
enum OutSource {
    /// The returned value itself (path of member indices into it).
    Ret(Vec<u32>),
    /// An out parameter's local (path into it).
    Param(Handle<E>, Vec<u32>),
}

/// The module builder for one stage.
pub struct Cx<'a> {
    pub module: naga::Module,
    items: &'a [Item],
    pub structs: Vec<StructInfo>,
    struct_names: HashMap<String, usize>,
    struct_types: HashMap<usize, Handle<Type>>,
    funcs: HashMap<String, Vec<usize>>,
    /// Compiled functions by item and the uniform structs bound to struct parameters that
    /// hold samplers (such functions are compiled once per binding).
    compiled: HashMap<(usize, Vec<(usize, UKind)>), Compiled>,
    compiling: Vec<usize>,
    stage: StageKind,
    params: Vec<String>,
    globals: HashMap<String, usize>,
    /// Names assigned to somewhere (uniform globals among them need a private copy).
    assigned: std::collections::HashSet<String>,
    /// Pass aliases used as uniform structs.
    aliases: Vec<String>,
    /// Global samplers assigned a uniform sampler: global name → texture name.
    sampler_rebind: HashMap<String, String>,
    /// Plain sampler uniforms other than the pass input (look-up textures, by name).
    pub luts: Vec<String>,
    /// Float varyings without a semantic (vertex outputs, fragment inputs), sorted: linked by
    /// name, as cgc's GLSL profiles do.
    auto_varyings: Vec<String>,
    /// `const` locals with initializers seen so far (for array sizes).
    local_consts: Vec<(String, Expr)>,
    private: HashMap<String, (Handle<naga::GlobalVariable>, Ty)>,
    ubo: Option<Handle<naga::GlobalVariable>>,
    /// Uniform block members: name, type.
    pub ubo_members: Vec<(String, Ty)>,
    textures: HashMap<String, TexGlobal>,
    /// Texture globals in creation order: name, binding.
    pub texture_list: Vec<(String, u32, u32)>,
    source_sampler: Option<String>,
    fs: Vec<Fx>,
    /// The vertex texcoord input (vertex entry only).
    texcoord: Option<Handle<E>>,
}

const TEXCOORD_LOCATION_BASE: u32 = 0;
const COLOR_LOCATION: u32 = 16;
/// First location of varyings without a semantic (numbered by name, sorted).
const AUTO_LOCATION_BASE: u32 = 32;

fn span(p: Pos) -> Span {
    Span::new(p.offset, p.offset + 1)
}

impl<'a> Cx<'a> {
    /// A builder over the parsed items, with the `#pragma parameter` names.
    pub fn new(items: &'a [Item], stage: StageKind, params: Vec<String>) -> R<Cx<'a>> {
        let mut cx = Cx {
            module: naga::Module::default(),
            items,
            structs: Vec::new(),
            struct_names: HashMap::new(),
            struct_types: HashMap::new(),
            funcs: HashMap::new(),
            compiled: HashMap::new(),
            compiling: Vec::new(),
            stage,
            params,
            globals: HashMap::new(),
            assigned: assigned_names(items),
            aliases: Vec::new(),
            sampler_rebind: HashMap::new(),
            luts: Vec::new(),
            auto_varyings: Vec::new(),
            local_consts: Vec::new(),
            private: HashMap::new(),
            ubo: None,
            ubo_members: Vec::new(),
            textures: HashMap::new(),
            texture_list: Vec::new(),
            source_sampler: None,
            fs: Vec::new(),
            texcoord: None,
        };
        for (i, item) in items.iter().enumerate() {
            match item {
                Item::Struct(s) => {
                    let mut members = Vec::new();
                    let mut has_sampler = false;
                    for m in &s.members {
                        let ty = cx.resolve_type(&m.ty)?;
                        has_sampler |= cx.contains_sampler(&ty);
                        members.push((m.name.clone(), ty, m.semantic.clone()));
                    }
                    cx.struct_names.insert(s.name.clone(), cx.structs.len());
                    cx.structs.push(StructInfo {
                        name: s.name.clone(),
                        members,
                        has_sampler,
                    });
                }
                Item::Func(f) => cx.funcs.entry(f.name.clone()).or_default().push(i),
                Item::Var(v) => {
                    cx.globals.insert(v.name.clone(), i);
                }
            }
        }
        cx.source_sampler = cx.find_source_sampler();
        cx.auto_varyings = cx.find_auto_varyings();
        Ok(cx)
    }

    fn contains_sampler(&self, t: &Ty) -> bool {
        match t {
            Ty::Sampler(_) => true,
            Ty::Struct(i) => self.structs[*i].has_sampler,
            Ty::Array(b, _) => self.contains_sampler(b),
            _ => false,
        }
    }

    /// Names of float varyings without semantics that both entry points declare (vertex
    /// outputs and fragment inputs), sorted.
    fn find_auto_varyings(&self) -> Vec<String> {
        let mut sides: [Vec<String>; 2] = [Vec::new(), Vec::new()];
        for item in self.items {
            let Item::Func(f) = item else { continue };
            let side = match f.name.as_str() {
                "main_vertex" => 0,
                "main_fragment" => 1,
                _ => continue,
            };
            if f.body.is_none() {
                continue;
            }
            let add = |name: &str,
                       ty: &Ty,
                       sem: &Option<String>,
                       this: &Self,
                       out: &mut Vec<String>| {
                match ty {
                    Ty::Struct(i) if sem.is_none() => {
                        for (mn, mt, ms) in &this.structs[*i].members {
                            if ms.is_none() && mt.kind() == Some(Sk::F) && mt.is_numeric_vector() {
                                out.push(mn.clone());
                            }
                        }
                    }
                    t if sem.is_none() && t.kind() == Some(Sk::F) && t.is_numeric_vector() => {
                        out.push(name.to_string())
                    }
                    _ => {}
                }
            };
            let mut names = Vec::new();
            for p in &f.params {
                let Ok(t) = self.resolve_type(&p.ty) else {
                    continue;
                };
                let is_varying_in = side == 1 && !p.quals.uniform && !p.quals.is_out;
                let is_out = side == 0 && p.quals.is_out;
                if (is_varying_in || is_out) && Self::ukind(&p.name).is_none() {
                    add(&p.name, &t, &p.semantic, self, &mut names);
                }
            }
            if side == 0 {
                if let Ok(t @ Ty::Struct(_)) = self.resolve_type(&f.ret) {
                    add("", &t, &None, self, &mut names);
                }
            }
            sides[side] = names;
        }
        let mut out: Vec<String> = sides[0]
            .iter()
            .filter(|n| sides[1].contains(n))
            .cloned()
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The Cg sampler RetroArch binds the pass input to: one with `TEXUNIT0`, else the first
    /// sampler parameter of `main_fragment`, else the first uniform sampler global.
    fn find_source_sampler(&self) -> Option<String> {
        let is_sampler = |v: &VarDecl| {
            builtin_type(&v.ty.name).is_some_and(|t| matches!(t, Ty::Sampler(_)))
                && v.ty.dims.is_empty()
        };
        let mut first_global = None;
        for item in self.items {
            if let Item::Var(v) = item {
                if is_sampler(v) {
                    if v.semantic.as_deref() == Some("TEXUNIT0") {
                        return Some(v.name.clone());
                    }
                    first_global.get_or_insert(v.name.clone());
                }
            }
        }
        let frag = self.items.iter().find_map(|i| match i {
            Item::Func(f) if f.name == "main_fragment" && f.body.is_some() => Some(f),
            _ => None,
        });
        if let Some(f) = frag {
            if let Some(p) = f
                .params
                .iter()
                .find(|p| is_sampler(p) && p.semantic.as_deref() == Some("TEXUNIT0"))
            {
                return Some(p.name.clone());
            }
            if let Some(p) = f.params.iter().find(|p| is_sampler(p)) {
                return Some(p.name.clone());
            }
        }
        first_global
    }

    pub fn resolve_type(&self, t: &super::parse::TypeRef) -> R<Ty> {
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

    // ---------------------------------------------------------------- naga types

    fn scalar(k: Sk) -> naga::Scalar {
        match k {
            Sk::F => naga::Scalar::F32,
            Sk::I => naga::Scalar::I32,
            Sk::U => naga::Scalar::U32,
            Sk::B => naga::Scalar::BOOL,
        }
    }

    fn vsize(n: u8) -> naga::VectorSize {
        match n {
            2 => naga::VectorSize::Bi,
            3 => naga::VectorSize::Tri,
            _ => naga::VectorSize::Quad,
        }
    }

    fn add_type(&mut self, name: Option<String>, inner: TypeInner) -> Handle<Type> {
        self.module
            .types
            .insert(Type { name, inner }, Span::UNDEFINED)
    }

    fn nty(&mut self, t: &Ty, pos: Pos) -> R<Handle<Type>> {
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

    fn struct_of(
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

    // ---------------------------------------------------------------- function building

    fn fx(&mut self) -> &mut Fx {
        self.fs.last_mut().expect("inside a function")
    }

    fn add(&mut self, e: E, pos: Pos) -> Handle<E> {
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

    fn flush(&mut self) {
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

    fn push_stmt(&mut self, s: Statement, pos: Pos) {
        self.flush();
        self.fx()
            .blocks
            .last_mut()
            .expect("a block")
            .push(s, span(pos));
    }

    fn open_block(&mut self) {
        self.flush();
        self.fx().blocks.push(Block::new());
    }

    fn close_block(&mut self) -> Block {
        self.flush();
        self.fx().blocks.pop().expect("opened")
    }

    fn lookup(&self, name: &str) -> Option<Sym> {
        let f = self.fs.last()?;
        f.scopes.iter().rev().find_map(|s| s.get(name).cloned())
    }

    fn declare(&mut self, name: &str, s: Sym) {
        self.fx()
            .scopes
            .last_mut()
            .expect("a scope")
            .insert(name.to_string(), s);
    }

    fn local(&mut self, name: &str, ty: &Ty, pos: Pos) -> R<Handle<E>> {
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

    fn lit_f(&mut self, v: f32, pos: Pos) -> Handle<E> {
        self.add(E::Literal(Literal::F32(v)), pos)
    }

    fn lit_i(&mut self, v: i32, pos: Pos) -> Handle<E> {
        self.add(E::Literal(Literal::I32(v)), pos)
    }

    fn zero(&mut self, ty: &Ty, pos: Pos) -> R<Handle<E>> {
        let t = self.nty(ty, pos)?;
        Ok(self.add(E::ZeroValue(t), pos))
    }

    // ---------------------------------------------------------------- uniforms & textures

    /// The uniform block member `name` of type `ty` (added on first use).
    fn ubo_member(&mut self, name: &str, ty: &Ty, pos: Pos) -> R<V> {
        let ubo = match self.ubo {
            Some(u) => u,
            None => {
                let placeholder = self.add_type(None, TypeInner::Scalar(naga::Scalar::F32));
                let g = self.module.global_variables.append(
                    naga::GlobalVariable {
                        name: Some("UBO".into()),
                        space: AddressSpace::Uniform,
                        binding: Some(naga::ResourceBinding {
                            group: 0,
                            binding: 0,
                        }),
                        ty: placeholder,
                        init: None,
                        memory_decorations: Default::default(),
                    },
                    Span::UNDEFINED,
                );
                self.ubo = Some(g);
                g
            }
        };
        let index = match self.ubo_members.iter().position(|m| m.0 == name) {
            Some(i) => i,
            None => {
                if matches!(ty, Ty::Struct(_) | Ty::Array(..)) || ty.kind() == Some(Sk::B) {
                    return err(pos, format!("uniform `{name}` of type {} is not supported (numbers, vectors and matrices only)", ty.name(&self.structs)));
                }
                self.ubo_members.push((name.to_string(), ty.clone()));
                self.ubo_members.len() - 1
            }
        };
        let mty = self.ubo_members[index].1.clone();
        let g = self.add(E::GlobalVariable(ubo), pos);
        let p = self.add(
            E::AccessIndex {
                base: g,
                index: index as u32,
            },
            pos,
        );
        let mut v = self.add(E::Load { pointer: p }, pos);
        if name == "MVP" {
            // RetroArch uploads MVP column-major (GL's convention); Cg's `mul(M, v)` reads rows.
            v = self.add(
                E::Math {
                    fun: Mf::Transpose,
                    arg: v,
                    arg1: None,
                    arg2: None,
                    arg3: None,
                },
                pos,
            );
        }
        let v = self.convert(v, &mty, ty, pos, true)?;
        Ok(V::Val(v, ty.clone()))
    }

    /// The naga float image type of a Cg sampler dimension and the sampler type that goes with
    /// it (a `sampler2D` becomes a texture and a sampler).
    fn sampled_image_types(&mut self, dim: Dim) -> (Handle<naga::Type>, Handle<naga::Type>) {
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

    fn texture(&mut self, name: &str, dim: Dim, pos: Pos) -> R<V> {
        let tg = match self.textures.get(name) {
            Some(t) => t.clone(),
            None => {
                let binding = self.texture_list.len() as u32 + 1;
                let (it, st) = self.sampled_image_types(dim);
                let image = self.module.global_variables.append(
                    naga::GlobalVariable {
                        name: Some(name.to_string()),
                        space: AddressSpace::Handle,
                        binding: Some(naga::ResourceBinding { group: 0, binding }),
                        ty: it,
                        init: None,
                        memory_decorations: Default::default(),
                    },
                    Span::UNDEFINED,
                );
                let sampler = self.module.global_variables.append(
                    naga::GlobalVariable {
                        name: Some(format!("{name}_sampler")),
                        space: AddressSpace::Handle,
                        binding: Some(naga::ResourceBinding {
                            group: 0,
                            binding: binding + SAMPLER_BINDING_OFFSET,
                        }),
                        ty: st,
                        init: None,
                        memory_decorations: Default::default(),
                    },
                    Span::UNDEFINED,
                );
                let t = TexGlobal {
                    image,
                    sampler,
                    dim,
                };
                self.textures.insert(name.to_string(), t.clone());
                self.texture_list.push((
                    name.to_string(),
                    binding,
                    binding + SAMPLER_BINDING_OFFSET,
                ));
                t
            }
        };
        let image = self.add(E::GlobalVariable(tg.image), pos);
        let sampler = self.add(E::GlobalVariable(tg.sampler), pos);
        let tex = self
            .texture_list
            .iter()
            .position(|t| t.0 == name)
            .map(|i| i as u32);
        Ok(V::Samp(Samp {
            image,
            sampler,
            tex,
            dim: tg.dim,
        }))
    }

    /// The slang semantic names of a RetroArch struct: texture and size.
    fn ustruct_names(&self, k: UKind) -> (String, String) {
        match k {
            UKind::In => ("Source".into(), "SourceSize".into()),
            UKind::Orig => ("Original".into(), "OriginalSize".into()),
            UKind::Prev(n) => (
                format!("OriginalHistory{}", n + 1),
                format!("OriginalHistorySize{}", n + 1),
            ),
            UKind::Pass(n) => (
                format!("PassOutput{}", n - 1),
                format!("PassOutputSize{}", n - 1),
            ),
            UKind::PassPrev(n) => (format!("PassPrev{n}"), format!("PassPrevSize{n}")),
            UKind::Alias(i) => {
                let a = &self.aliases[i as usize];
                (a.clone(), format!("{a}Size"))
            }
        }
    }

    fn ustruct_member(&mut self, k: UKind, field: &str, pos: Pos) -> R<V> {
        let (tex, size) = self.ustruct_names(k);
        let f2 = Ty::Vec(Sk::F, 2);
        match (k, field) {
            (UKind::In, "video_size" | "texture_size") => self.ubo_member("SourceSize", &f2, pos),
            (UKind::In, "output_size") => self.ubo_member("OutputSize", &f2, pos),
            (UKind::In, "frame_count") => self.ubo_member("FrameCount", &Ty::Scalar(Sk::F), pos),
            (UKind::In, "texture") => self.texture("Source", Dim::D2, pos),
            (UKind::In, "frame_rotation") => self.ubo_member("Rotation", &Ty::Scalar(Sk::F), pos),
            (UKind::In, "frame_direction") => {
                self.ubo_member("FrameDirection", &Ty::Scalar(Sk::F), pos)
            }
            (UKind::In, f) => err(pos, format!("`IN.{f}` is not one of RetroArch's inputs (video_size, texture_size, output_size, frame_count, frame_direction)")),
            (_, "video_size" | "texture_size" | "output_size") => self.ubo_member(&size, &f2, pos),
            (_, "texture") => self.texture(&tex, Dim::D2, pos),
            (_, "tex_coord" | "lut_tex_coord") => match self.texcoord {
                Some(h) => {
                    let v = self.convert(h, &Ty::Vec(Sk::F, 4), &f2, pos, true)?;
                    Ok(V::Val(v, f2))
                }
                None => err(pos, format!("`{field}` is a vertex attribute: only `main_vertex` can read it")),
            },
            (_, f) => err(pos, format!("`{f}` is not a member of RetroArch's pass structs (texture, video_size, texture_size, tex_coord)")),
        }
    }

    fn ukind(name: &str) -> Option<UKind> {
        let num = |s: &str| -> Option<u32> {
            if s.is_empty() {
                None
            } else {
                s.parse().ok()
            }
        };
        Some(match name {
            "IN" => UKind::In,
            "ORIG" => UKind::Orig,
            "PREV" => UKind::Prev(0),
            // Bound by no RetroArch version; accepted so declaring it is harmless.
            "PASSPREV" => UKind::PassPrev(0),
            _ => {
                if let Some(n) = name.strip_prefix("PASSPREV").and_then(num) {
                    UKind::PassPrev(n)
                } else if let Some(n) = name.strip_prefix("PASS").and_then(num) {
                    if n == 0 {
                        return None;
                    }
                    UKind::Pass(n)
                } else if let Some(n) = name.strip_prefix("PREV").and_then(num) {
                    UKind::Prev(n)
                } else {
                    return None;
                }
            }
        })
    }

    /// The symbol for a uniform entry parameter or uniform global.
    fn uniform_sym(&mut self, name: &str, ty: &Ty, semantic: Option<&str>, _pos: Pos) -> R<Sym> {
        match ty {
            Ty::Struct(i) => {
                let _ = i;
                let k = match Self::ukind(name) {
                    Some(k) => k,
                    None => {
                        let at = match self.aliases.iter().position(|a| a == name) {
                            Some(at) => at,
                            None => {
                                self.aliases.push(name.to_string());
                                self.aliases.len() - 1
                            }
                        };
                        UKind::Alias(at as u32)
                    }
                };
                Ok(Sym::UStruct(k))
            }
            Ty::Sampler(d) => {
                if let Some(t) = self.sampler_rebind.get(name) {
                    return Ok(Sym::Tex(t.clone(), *d));
                }
                let tex = if self.source_sampler.as_deref() == Some(name)
                    || semantic == Some("TEXUNIT0")
                {
                    "Source".to_string()
                } else {
                    name.to_string()
                };
                if tex != "Source" && !self.luts.contains(&tex) {
                    self.luts.push(tex.clone());
                }
                Ok(Sym::Tex(tex, *d))
            }
            _ => {
                let member = if name == "modelViewProj" || name == "MVP" {
                    "MVP".to_string()
                } else {
                    name.to_string()
                };
                Ok(Sym::Uniform(member, ty.clone()))
            }
        }
    }

    // ---------------------------------------------------------------- conversions

    /// Converts `h` of type `from` to `to`; `explicit` allows what only casts may do.
    fn convert(
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
                Ok(self.add(
                    E::Compose {
                        ty,
                        components: vec![col; *r as usize],
                    },
                    pos,
                ))
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
                let c = self.add(E::AccessIndex { base: h, index: 0 }, pos);
                Ok(self.kind_cast(c, *a, *b, None, pos))
            }
            (Ty::Vec(a, 4), Ty::Mat(_, 2, 2)) if explicit => {
                let v = self.kind_cast(h, *a, Sk::F, Some(4), pos);
                let c0 = self.swizzle(v, &[0, 1], pos);
                let c1 = self.swizzle(v, &[2, 3], pos);
                let ty = self.nty(to, pos)?;
                Ok(self.add(
                    E::Compose {
                        ty,
                        components: vec![c0, c1],
                    },
                    pos,
                ))
            }
            (Ty::Mat(ka, r, c), Ty::Mat(kb, r2, c2)) if r2 <= r && c2 <= c => {
                let mut cols = Vec::new();
                for i in 0..*r2 {
                    let col = self.add(
                        E::AccessIndex {
                            base: h,
                            index: i as u32,
                        },
                        pos,
                    );
                    let col = if c2 < c {
                        self.swizzle(col, &[0, 1, 2, 3][..*c2 as usize], pos)
                    } else {
                        col
                    };
                    cols.push(self.kind_cast(col, *ka, *kb, Some(*c2), pos));
                }
                let ty = self.nty(to, pos)?;
                Ok(self.add(
                    E::Compose {
                        ty,
                        components: cols,
                    },
                    pos,
                ))
            }
            (Ty::Array(a, n), Ty::Array(b, m)) if n == m && conversion_cost(a, b).is_some() => {
                let mut comps = Vec::new();
                for i in 0..*n {
                    let e = self.add(E::AccessIndex { base: h, index: i }, pos);
                    comps.push(self.convert(e, a, b, pos, explicit)?);
                }
                let ty = self.nty(to, pos)?;
                Ok(self.add(
                    E::Compose {
                        ty,
                        components: comps,
                    },
                    pos,
                ))
            }
            (Ty::Scalar(_), Ty::Struct(i)) if explicit => {
                let members = self.structs[*i].members.clone();
                let mut comps = Vec::new();
                for (_, mt, _) in &members {
                    comps.push(self.convert(h, from, mt, pos, true)?);
                }
                let ty = self.nty(to, pos)?;
                Ok(self.add(
                    E::Compose {
                        ty,
                        components: comps,
                    },
                    pos,
                ))
            }
            (Ty::Scalar(_), Ty::Array(b, n)) if explicit => {
                let e = self.convert(h, from, b, pos, true)?;
                let ty = self.nty(to, pos)?;
                Ok(self.add(
                    E::Compose {
                        ty,
                        components: vec![e; *n as usize],
                    },
                    pos,
                ))
            }
            _ => fail(self),
        }
    }

    /// Swizzle (1 component: a plain index).
    fn swizzle(&mut self, h: Handle<E>, comps: &[u8], pos: Pos) -> Handle<E> {
        if comps.len() == 1 {
            return self.add(
                E::AccessIndex {
                    base: h,
                    index: comps[0] as u32,
                },
                pos,
            );
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
    fn kind_cast(&mut self, h: Handle<E>, from: Sk, to: Sk, n: Option<u8>, pos: Pos) -> Handle<E> {
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

    fn load(&mut self, v: V, pos: Pos) -> R<(Handle<E>, Ty)> {
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
                Ok((
                    self.add(
                        E::Compose {
                            ty,
                            components: comps,
                        },
                        pos,
                    ),
                    Ty::Struct(idx),
                ))
            }
        }
    }

    fn rvalue(&mut self, e: &Expr) -> R<(Handle<E>, Ty)> {
        let v = self.expr(e)?;
        self.load(v, e.pos)
    }

    fn rvalue_as(&mut self, e: &Expr, ty: &Ty) -> R<Handle<E>> {
        if let ExprKind::List(items) = &e.kind {
            return self.init_list(items, ty, e.pos);
        }
        let (h, t) = self.rvalue(e)?;
        self.convert(h, &t, ty, e.pos, false)
    }

    fn init_list(&mut self, items: &[Expr], ty: &Ty, pos: Pos) -> R<Handle<E>> {
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
                Ok(self.add(
                    E::Compose {
                        ty: t,
                        components: comps,
                    },
                    pos,
                ))
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
                Ok(self.add(
                    E::Compose {
                        ty: t,
                        components: comps,
                    },
                    pos,
                ))
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
                Ok(self.add(
                    E::Compose {
                        ty: t,
                        components: comps,
                    },
                    pos,
                ))
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
    fn construct(&mut self, ty: &Ty, args: Vec<((Handle<E>, Ty), Pos)>, pos: Pos) -> R<Handle<E>> {
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
                        let c = self.add(
                            E::AccessIndex {
                                base: *h,
                                index: i as u32,
                            },
                            *p,
                        );
                        comps.push(self.kind_cast(c, *a, k, None, *p));
                    }
                }
                Ty::Mat(a, r, c) => {
                    for i in 0..*r {
                        let col = self.add(
                            E::AccessIndex {
                                base: *h,
                                index: i as u32,
                            },
                            *p,
                        );
                        for j in 0..*c {
                            let e = self.add(
                                E::AccessIndex {
                                    base: col,
                                    index: j as u32,
                                },
                                *p,
                            );
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
                Ok(self.add(
                    E::Compose {
                        ty: t,
                        components: comps,
                    },
                    pos,
                ))
            }
            Ty::Mat(_, r, c) => {
                let ct = self.nty(&Ty::Vec(k, *c), pos)?;
                let mut cols = Vec::new();
                for i in 0..*r as usize {
                    let part = comps[i * *c as usize..(i + 1) * *c as usize].to_vec();
                    cols.push(self.add(
                        E::Compose {
                            ty: ct,
                            components: part,
                        },
                        pos,
                    ));
                }
                let t = self.nty(ty, pos)?;
                Ok(self.add(
                    E::Compose {
                        ty: t,
                        components: cols,
                    },
                    pos,
                ))
            }
            _ => err(pos, "cannot construct this type"),
        }
    }

    // ---------------------------------------------------------------- expressions

    fn expr(&mut self, e: &Expr) -> R<V> {
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
                let ty = self.resolve_type(t)?;
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
                    return Ok(V::Val(
                        self.add(
                            E::Compose {
                                ty: t,
                                components: comps,
                            },
                            pos,
                        ),
                        ty,
                    ));
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
            return match s {
                Sym::Var(p, t) => Ok(V::Ptr(p, t)),
                Sym::Samp(s) => Ok(V::Samp(s)),
                Sym::Tex(n, d) => self.texture(&n, d, pos),
                Sym::UStruct(k) => Ok(V::UStruct(k)),
                Sym::Uniform(name, t) => self.ubo_member(&name, &t, pos),
            };
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
                let s = self.uniform_sym(&v.name, &ty, v.semantic.as_deref(), v.pos)?;
                return match s {
                    Sym::Samp(s) => Ok(V::Samp(s)),
                    Sym::Tex(n, d) => self.texture(&n, d, pos),
                    Sym::UStruct(k) => Ok(V::UStruct(k)),
                    Sym::Uniform(name, t) => self.ubo_member(&name, &t, pos),
                    Sym::Var(p, t) => Ok(V::Ptr(p, t)),
                };
            }
            return err(pos, format!("global `{n}` is not initialised before use"));
        }
        err(pos, format!("unknown name `{n}`"))
    }

    fn resolve_type_for(&self, v: &VarDecl) -> R<Ty> {
        if v.ty.dims.iter().any(|d| d.is_none()) {
            // `float a[] = { … }`: the size comes from the initializer.
            if let Some(Expr {
                kind: ExprKind::List(items),
                ..
            }) = &v.init
            {
                let mut t = v.ty.clone();
                t.dims[0] = Some(Expr {
                    kind: ExprKind::Int(items.len() as i64),
                    pos: v.pos,
                });
                return self.resolve_type(&t);
            }
        }
        self.resolve_type(&v.ty)
    }

    /// Cg: non-static globals are uniforms; ones with an initializer that RetroArch never
    /// sets (not a parameter, not a sampler) keep their initial value.
    fn is_uniform_global(&self, v: &VarDecl, ty: &Ty) -> bool {
        if v.quals.is_static {
            return false;
        }
        if matches!(ty, Ty::Sampler(_)) {
            return true;
        }
        if v.init.is_some() {
            return self.params.contains(&v.name) && !v.quals.is_const;
        }
        !v.quals.is_const || v.quals.uniform
    }

    fn member(&mut self, base: &Expr, field: &str, pos: Pos) -> R<V> {
        let b = self.expr(base)?;
        if let V::UStruct(k) = b {
            return self.ustruct_member(k, field, pos);
        }
        let bt = match &b {
            V::Val(_, t) | V::Ptr(_, t) => t.clone(),
            V::Swz(_, t, c) => Ty::vector(t.kind().unwrap_or(Sk::F), c.len() as u8),
            V::Samp(_) => return err(pos, format!("a sampler has no member `{field}`")),
            V::UStruct(_) => unreachable!("handled above"),
        };
        match &bt {
            Ty::Struct(i) => {
                let info = &self.structs[*i];
                let Some(idx) = info.members.iter().position(|m| m.0 == field) else {
                    return err(
                        pos,
                        format!("struct `{}` has no member `{field}`", info.name),
                    );
                };
                let mt = info.members[idx].1.clone();
                match b {
                    V::Ptr(p, _) => Ok(V::Ptr(
                        self.add(
                            E::AccessIndex {
                                base: p,
                                index: idx as u32,
                            },
                            pos,
                        ),
                        mt,
                    )),
                    V::Val(h, _) => Ok(V::Val(
                        self.add(
                            E::AccessIndex {
                                base: h,
                                index: idx as u32,
                            },
                            pos,
                        ),
                        mt,
                    )),
                    _ => err(pos, "bad member access"),
                }
            }
            Ty::Scalar(k) | Ty::Vec(k, _) => {
                let n = match &bt {
                    Ty::Vec(_, n) => *n,
                    _ => 1,
                };
                let comps = parse_swizzle(field, n).ok_or_else(|| BuildError {
                    pos,
                    message: format!("`{field}` is not a swizzle of {}", bt.name(&self.structs)),
                })?;
                let k = *k;
                let rt = Ty::vector(k, comps.len() as u8);
                if matches!(bt, Ty::Scalar(_)) {
                    let (h, _) = self.load(b, pos)?;
                    if comps.len() == 1 {
                        return Ok(V::Val(h, rt));
                    }
                    return Ok(V::Val(
                        self.add(
                            E::Splat {
                                size: Self::vsize(comps.len() as u8),
                                value: h,
                            },
                            pos,
                        ),
                        rt,
                    ));
                }
                match b {
                    V::Ptr(p, t) => {
                        if comps.len() == 1 {
                            Ok(V::Ptr(
                                self.add(
                                    E::AccessIndex {
                                        base: p,
                                        index: comps[0] as u32,
                                    },
                                    pos,
                                ),
                                rt,
                            ))
                        } else {
                            Ok(V::Swz(p, t, comps))
                        }
                    }
                    V::Swz(p, t, inner) => {
                        let c: Vec<u8> = comps.iter().map(|&i| inner[i as usize]).collect();
                        if c.len() == 1 {
                            Ok(V::Ptr(
                                self.add(
                                    E::AccessIndex {
                                        base: p,
                                        index: c[0] as u32,
                                    },
                                    pos,
                                ),
                                rt,
                            ))
                        } else {
                            Ok(V::Swz(p, t, c))
                        }
                    }
                    other => {
                        let (h, _) = self.load(other, pos)?;
                        Ok(V::Val(self.swizzle(h, &comps, pos), rt))
                    }
                }
            }
            Ty::Mat(k, r, c) => {
                let els = parse_matrix_swizzle(field, *r, *c).ok_or_else(|| BuildError {
                    pos,
                    message: format!(
                        "`{field}` is not a member or swizzle of {}",
                        bt.name(&self.structs)
                    ),
                })?;
                let k = *k;
                if els.len() == 1 {
                    let (row, col) = els[0];
                    return match b {
                        V::Ptr(p, _) => {
                            let a = self.add(
                                E::AccessIndex {
                                    base: p,
                                    index: row as u32,
                                },
                                pos,
                            );
                            Ok(V::Ptr(
                                self.add(
                                    E::AccessIndex {
                                        base: a,
                                        index: col as u32,
                                    },
                                    pos,
                                ),
                                Ty::Scalar(k),
                            ))
                        }
                        other => {
                            let (h, _) = self.load(other, pos)?;
                            let a = self.add(
                                E::AccessIndex {
                                    base: h,
                                    index: row as u32,
                                },
                                pos,
                            );
                            Ok(V::Val(
                                self.add(
                                    E::AccessIndex {
                                        base: a,
                                        index: col as u32,
                                    },
                                    pos,
                                ),
                                Ty::Scalar(k),
                            ))
                        }
                    };
                }
                let (h, _) = self.load(b, pos)?;
                let mut comps = Vec::new();
                for (row, col) in &els {
                    let a = self.add(
                        E::AccessIndex {
                            base: h,
                            index: *row as u32,
                        },
                        pos,
                    );
                    comps.push(self.add(
                        E::AccessIndex {
                            base: a,
                            index: *col as u32,
                        },
                        pos,
                    ));
                }
                let rt = Ty::Vec(k, els.len() as u8);
                let t = self.nty(&rt, pos)?;
                Ok(V::Val(
                    self.add(
                        E::Compose {
                            ty: t,
                            components: comps,
                        },
                        pos,
                    ),
                    rt,
                ))
            }
            other => err(
                pos,
                format!("{} has no member `{field}`", other.name(&self.structs)),
            ),
        }
    }

    fn index(&mut self, base: &Expr, index: &Expr, pos: Pos) -> R<V> {
        let b = self.expr(base)?;
        let (ih, it) = self.rvalue(index)?;
        let ih = match it {
            Ty::Scalar(Sk::I) | Ty::Scalar(Sk::U) => ih,
            Ty::Scalar(k) => self.kind_cast(ih, k, Sk::I, None, index.pos),
            _ => return err(index.pos, "an index must be a scalar"),
        };
        let const_index = match self.fx().func.expressions[ih] {
            E::Literal(Literal::I32(v)) if v >= 0 => Some(v as u32),
            E::Literal(Literal::U32(v)) => Some(v),
            _ => None,
        };
        let b = match b {
            V::Swz(..) | V::UStruct(_) => {
                let (h, t) = self.load(b, pos)?;
                V::Val(h, t)
            }
            other => other,
        };
        let (bt, is_ptr, bh) = match &b {
            V::Val(h, t) => (t.clone(), false, *h),
            V::Ptr(h, t) => (t.clone(), true, *h),
            _ => return err(pos, "this cannot be indexed"),
        };
        let (et, len) = match &bt {
            Ty::Array(e, n) => ((**e).clone(), *n),
            Ty::Vec(k, n) => (Ty::Scalar(*k), *n as u32),
            Ty::Mat(k, r, c) => (Ty::Vec(*k, *c), *r as u32),
            other => {
                return err(
                    pos,
                    format!("{} cannot be indexed", other.name(&self.structs)),
                )
            }
        };
        let h = match const_index {
            Some(i) if i >= len => {
                return err(index.pos, format!("index {i} out of range (size {len})"))
            }
            Some(i) => self.add(E::AccessIndex { base: bh, index: i }, pos),
            None => {
                if !is_ptr && !matches!(bt, Ty::Array(..)) {
                    // Dynamic indexing of a vector/matrix value: go through a temporary.
                    let tmp = self.local("_idx", &bt, pos)?;
                    self.push_stmt(
                        Statement::Store {
                            pointer: tmp,
                            value: bh,
                        },
                        pos,
                    );
                    let h = self.add(
                        E::Access {
                            base: tmp,
                            index: ih,
                        },
                        pos,
                    );
                    return Ok(V::Ptr(h, et));
                }
                self.add(
                    E::Access {
                        base: bh,
                        index: ih,
                    },
                    pos,
                )
            }
        };
        Ok(if is_ptr { V::Ptr(h, et) } else { V::Val(h, et) })
    }

    fn binary(&mut self, op: BinOp, a: &Expr, b: &Expr, pos: Pos) -> R<V> {
        let (ah, at) = self.rvalue(a)?;
        let (bh, bt) = self.rvalue(b)?;
        let (h, t) = self.binop(op, ah, at, bh, bt, pos)?;
        Ok(V::Val(h, t))
    }

    fn binop(
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
        let ct = if bitwise && ct.kind() == Some(Sk::F) {
            return err(
                pos,
                format!("operator {op:?} needs integers, found {}", name(self, &ct)),
            );
        } else {
            ct
        };
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
        if ct.kind() == Some(Sk::B)
            && matches!(
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
            )
        {
            return err(
                pos,
                format!("operator {op:?} is not defined on {}", name(self, &ct)),
            );
        }
        if let Ty::Mat(_, rows, cols) = ct {
            // Cg's matrix operators are component-wise.
            let _ = cols;
            let mut out = Vec::new();
            for i in 0..rows as u32 {
                let x = self.add(E::AccessIndex { base: l, index: i }, pos);
                let y = self.add(E::AccessIndex { base: r, index: i }, pos);
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
            return Ok((
                self.add(
                    E::Compose {
                        ty: t,
                        components: out,
                    },
                    pos,
                ),
                result,
            ));
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
                        let c = self.add(E::AccessIndex { base: h, index: i }, pos);
                        cols.push(self.add(
                            E::Unary {
                                op: naga::UnaryOperator::Negate,
                                expr: c,
                            },
                            pos,
                        ));
                    }
                    let nt = self.nty(&t, pos)?;
                    return Ok(V::Val(
                        self.add(
                            E::Compose {
                                ty: nt,
                                components: cols,
                            },
                            pos,
                        ),
                        t,
                    ));
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

    fn store(&mut self, lv: V, value: Handle<E>, vt: &Ty, pos: Pos) -> R<()> {
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
                        Some(j) if comps.len() == 1 => {
                            let _ = j;
                            v
                        }
                        Some(j) => self.add(
                            E::AccessIndex {
                                base: v,
                                index: j as u32,
                            },
                            pos,
                        ),
                        None => self.add(
                            E::AccessIndex {
                                base: old,
                                index: i as u32,
                            },
                            pos,
                        ),
                    });
                }
                let nt = self.nty(&t, pos)?;
                let new = self.add(
                    E::Compose {
                        ty: nt,
                        components: parts,
                    },
                    pos,
                );
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

    // ---------------------------------------------------------------- calls

    fn call(&mut self, name: &str, args: &[Expr], pos: Pos) -> R<V> {
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
        match self.builtin(name, vals, args, pos)? {
            Some(v) => Ok(v),
            None => err(pos, format!("unknown function `{name}`")),
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
                let v = self.add(
                    E::AccessIndex {
                        base: r,
                        index: (first + i) as u32,
                    },
                    pos,
                );
                self.store(lv, v, &t, pos)?;
            }
            if ret == Ty::Void {
                return Ok(V::Val(r, Ty::Void));
            }
            let v = self.add(E::AccessIndex { base: r, index: 0 }, pos);
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

    fn new_fx(&self, ret: Ty) -> Fx {
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

    // ---------------------------------------------------------------- statements

    fn stmt(&mut self, s: &Stmt) -> R<()> {
        match s {
            Stmt::Empty | Stmt::Struct(_) => Ok(()),
            Stmt::Block(v) => {
                self.fx().scopes.push(HashMap::new());
                let r = v.iter().try_for_each(|s| self.stmt(s));
                self.fx().scopes.pop();
                r
            }
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
                    self.fx().scopes.push(HashMap::new());
                    let r = self.stmt(s);
                    self.fx().scopes.pop();
                    r?;
                }
                Ok(())
            }
            Stmt::If(c, a, b) => {
                let cond = self.condition(c)?;
                self.open_block();
                self.fx().scopes.push(HashMap::new());
                let r = self.stmt(a);
                self.fx().scopes.pop();
                r?;
                let accept = self.close_block();
                self.open_block();
                if let Some(b) = b {
                    self.fx().scopes.push(HashMap::new());
                    let r = self.stmt(b);
                    self.fx().scopes.pop();
                    r?;
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
                self.fx().scopes.push(HashMap::new());
                let r = self.for_loop(init.as_deref(), cond.as_ref(), step.as_ref(), body);
                self.fx().scopes.pop();
                r
            }
            Stmt::While(c, body) => self.for_loop(None, Some(c), None, body),
            Stmt::DoWhile(body, c) => {
                self.open_block();
                self.fx().loop_depth += 1;
                self.fx().scopes.push(HashMap::new());
                let r = self.stmt(body);
                self.fx().scopes.pop();
                self.fx().loop_depth -= 1;
                r?;
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
            Ty::Vec(..) => {
                // Cg reduces a vector condition like `all` would not; bool1 only. Use .x.
                err(
                    c.pos,
                    format!(
                        "a condition must be a scalar, found {}",
                        t.name(&self.structs)
                    ),
                )
            }
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
        self.fx().loop_depth += 1;
        self.fx().scopes.push(HashMap::new());
        let r = self.stmt(body);
        self.fx().scopes.pop();
        self.fx().loop_depth -= 1;
        r?;
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

    fn return_value(&mut self, value: Option<Handle<E>>, pos: Pos) -> R<()> {
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
        let v = self.add(
            E::Compose {
                ty,
                components: comps,
            },
            pos,
        );
        self.push_stmt(Statement::Return { value: Some(v) }, pos);
        Ok(())
    }

    // ---------------------------------------------------------------- entry point

    /// Compiles `name` as the stage's entry point.
    pub fn entry_point(&mut self, name: &str) -> R<()> {
        let Some(cands) = self.funcs.get(name).cloned() else {
            return err(Pos::default(), format!("no `{name}` function"));
        };
        let Some(idx) = cands
            .iter()
            .copied()
            .find(|&i| matches!(&self.items[i], Item::Func(f) if f.body.is_some()))
        else {
            return err(
                Pos::default(),
                format!("`{name}` is declared but never defined"),
            );
        };
        let Item::Func(f) = &self.items[idx] else {
            unreachable!("a function")
        };
        let f = f.clone();
        let ret = self.resolve_type(&f.ret)?;
        let fx = self.new_fx(ret.clone());
        self.fs.push(fx);
        self.local_consts.clear();
        let r = self.entry_body(&f, &ret);
        let fx = self.fs.pop().expect("pushed");
        r?;
        let mut func = fx.func;
        func.name = Some(name.to_string());
        let mut block = fx.blocks.into_iter().next().expect("root");
        if !ends_with_return(&block) {
            return err(
                f.pos,
                format!("`{name}` can reach its end without returning its outputs"),
            );
        }
        block = std::mem::take(&mut block);
        func.body = block;
        self.module.entry_points.push(naga::EntryPoint {
            name: name.to_string(),
            stage: match self.stage {
                StageKind::Vertex => naga::ShaderStage::Vertex,
                StageKind::Fragment => naga::ShaderStage::Fragment,
            },
            early_depth_test: None,
            workgroup_size: [0; 3],
            workgroup_size_overrides: None,
            function: func,
            mesh_info: None,
            task_payload: None,
            incoming_ray_payload: None,
        });
        self.finish_ubo();
        Ok(())
    }

    fn finish_ubo(&mut self) {
        let Some(ubo) = self.ubo else { return };
        let names: Vec<String> = self.ubo_members.iter().map(|m| m.0.clone()).collect();
        let tys: Vec<Ty> = self.ubo_members.iter().map(|m| m.1.clone()).collect();
        if let Ok(t) = self.struct_of(Some("UBO".into()), &names, &tys, None, Pos::default()) {
            self.module.global_variables[ubo].ty = t;
        }
    }

    /// Where a varying with `semantic` lives: a location or the position built-in.
    fn varying_binding(&self, semantic: &str, output: bool, pos: Pos) -> R<Option<naga::Binding>> {
        let s = semantic.to_ascii_uppercase();
        let loc = |l: u32| {
            Some(naga::Binding::Location {
                location: l,
                interpolation: Some(naga::Interpolation::Perspective),
                sampling: Some(naga::Sampling::Center),
                blend_src: None,
                per_primitive: false,
            })
        };
        let num = |p: &str| -> Option<u32> {
            let r = s.strip_prefix(p)?;
            if r.is_empty() {
                Some(0)
            } else {
                r.parse().ok()
            }
        };
        if self.stage == StageKind::Fragment && output {
            return Ok(match s.as_str() {
                "COLOR" | "COLOR0" | "COL" | "COL0" => Some(naga::Binding::Location {
                    location: 0,
                    interpolation: None,
                    sampling: None,
                    blend_src: None,
                    per_primitive: false,
                }),
                "DEPTH" | "DEPR" => Some(naga::Binding::BuiltIn(naga::BuiltIn::FragDepth)),
                _ => {
                    return err(
                        pos,
                        format!(
                            "fragment output semantic `{semantic}` is not supported (COLOR, DEPTH)"
                        ),
                    )
                }
            });
        }
        if let Some(name) = semantic.strip_prefix('@') {
            // A varying without a semantic: cgc's GLSL profiles link these by name.
            return Ok(self
                .auto_varyings
                .iter()
                .position(|n| n.eq_ignore_ascii_case(name))
                .and_then(|i| loc(AUTO_LOCATION_BASE + i as u32)));
        }
        if s == "POSITION" || s == "HPOS" || s == "POS" || s == "WPOS" || s == "SV_POSITION" {
            return Ok(Some(naga::Binding::BuiltIn(naga::BuiltIn::Position {
                invariant: false,
            })));
        }
        if let Some(n) = num("TEXCOORD").or_else(|| num("TEX")) {
            if n > 15 {
                return err(pos, format!("`{semantic}`: TEXCOORD0..15 only"));
            }
            return Ok(loc(TEXCOORD_LOCATION_BASE + n));
        }
        if let Some(n) = num("COLOR").or_else(|| num("COL")) {
            if n > 1 {
                return err(pos, format!("`{semantic}`: COLOR0/COLOR1 only"));
            }
            return Ok(loc(COLOR_LOCATION + n));
        }
        if matches!(s.as_str(), "PSIZE" | "FOG" | "FOGC" | "PSIZ") {
            return Ok(None);
        }
        err(
            pos,
            format!("varying semantic `{semantic}` is not supported"),
        )
    }

    /// The semantic of a varying: its own, or `@name` for a float varying without one.
    fn auto_semantic(&self, semantic: Option<&str>, name: &str, ty: &Ty) -> Option<String> {
        match semantic {
            Some(s) => Some(s.to_string()),
            None if ty.kind() == Some(Sk::F) && ty.is_numeric_vector() => self
                .auto_varyings
                .iter()
                .any(|n| n == name)
                .then(|| format!("@{name}")),
            None => None,
        }
    }

    fn entry_body(&mut self, f: &FuncDecl, ret: &Ty) -> R<()> {
        let body = f.body.as_ref().expect("checked");
        // 1. Inputs.
        let mut args: Vec<naga::FunctionArgument> = Vec::new();
        let mut arg_of: HashMap<String, u32> = HashMap::new();
        let vec4 = self.nty(&Ty::Vec(Sk::F, 4), f.pos)?;
        let mut input =
            |cx: &mut Self, semantic: Option<&str>, ty: &Ty, pos: Pos| -> R<Handle<E>> {
                let sem = semantic.map(|s| s.to_ascii_uppercase());
                match (cx.stage, sem.as_deref()) {
                    (_, None) => cx.zero(ty, pos),
                    (StageKind::Vertex, Some(s)) => {
                        let is_pos = matches!(s, "POSITION" | "POS" | "ATTR0" | "VERTEX");
                        let is_tc =
                            s.starts_with("TEXCOORD") || s.starts_with("TEX") || s == "ATTR8";
                        if s.starts_with("COLOR") || s.starts_with("COL") || s == "DIFFUSE" {
                            // RetroArch's vertex colour is opaque white.
                            let one = cx.lit_f(1.0, pos);
                            let v = cx.add(
                                E::Splat {
                                    size: naga::VectorSize::Quad,
                                    value: one,
                                },
                                pos,
                            );
                            return cx.convert(v, &Ty::Vec(Sk::F, 4), ty, pos, true);
                        }
                        if !is_pos && !is_tc {
                            return cx.zero(ty, pos);
                        }
                        let key = if is_pos { "pos" } else { "tc" };
                        let location = if is_pos { 0 } else { 1 };
                        let index = match arg_of.get(key) {
                            Some(i) => *i,
                            None => {
                                args.push(naga::FunctionArgument {
                                    name: Some(if is_pos {
                                        "position".into()
                                    } else {
                                        "texcoord".into()
                                    }),
                                    ty: vec4,
                                    binding: Some(naga::Binding::Location {
                                        location,
                                        interpolation: None,
                                        sampling: None,
                                        blend_src: None,
                                        per_primitive: false,
                                    }),
                                });
                                arg_of.insert(key.into(), args.len() as u32 - 1);
                                args.len() as u32 - 1
                            }
                        };
                        let h = cx.add(E::FunctionArgument(index), pos);
                        if !is_pos {
                            cx.texcoord = Some(h);
                        }
                        cx.convert(h, &Ty::Vec(Sk::F, 4), ty, pos, true)
                    }
                    (StageKind::Fragment, Some(s)) => {
                        let Some(binding) = cx.varying_binding(s, false, pos)? else {
                            return cx.zero(ty, pos);
                        };
                        let is_pos = matches!(binding, naga::Binding::BuiltIn(_));
                        let key = s.to_string();
                        let ity = if is_pos {
                            Ty::Vec(Sk::F, 4)
                        } else {
                            ty.clone()
                        };
                        if !ity.is_numeric_vector() || ity.kind() != Some(Sk::F) {
                            return err(
                                pos,
                                format!("varying `{s}` must be a float scalar or vector"),
                            );
                        }
                        let index = match arg_of.get(&key) {
                            Some(i) => *i,
                            None => {
                                let t = cx.nty(&ity, pos)?;
                                args.push(naga::FunctionArgument {
                                    name: Some(s.to_ascii_lowercase()),
                                    ty: t,
                                    binding: Some(binding),
                                });
                                arg_of.insert(key, args.len() as u32 - 1);
                                args.len() as u32 - 1
                            }
                        };
                        let h = cx.add(E::FunctionArgument(index), pos);
                        cx.convert(h, &ity, ty, pos, true)
                    }
                }
            };
        // Vertex: find the texcoord first so ORIG.tex_coord works whatever the order.
        let mut out_params = Vec::new();
        let mut pending: Vec<(String, Ty, Handle<E>, Pos)> = Vec::new();
        for p in &f.params {
            let pt = self.resolve_type(&p.ty)?;
            if p.quals.uniform
                || (matches!(pt, Ty::Sampler(_)))
                || (Self::ukind(&p.name).is_some() && matches!(pt, Ty::Struct(_)))
            {
                let s = self.uniform_sym(&p.name, &pt, p.semantic.as_deref(), p.pos)?;
                self.declare(&p.name, s);
                continue;
            }
            if p.quals.is_out {
                out_params.push((p.clone(), pt));
                continue;
            }
            let value = match &pt {
                Ty::Struct(i) if p.semantic.is_none() => {
                    let members = self.structs[*i].members.clone();
                    let mut comps = Vec::new();
                    for (mn, mt, ms) in &members {
                        let sem = self.auto_semantic(ms.as_deref(), mn, mt);
                        comps.push(input(self, sem.as_deref(), mt, p.pos)?);
                    }
                    let t = self.nty(&pt, p.pos)?;
                    self.add(
                        E::Compose {
                            ty: t,
                            components: comps,
                        },
                        p.pos,
                    )
                }
                _ => {
                    let sem = self.auto_semantic(p.semantic.as_deref(), &p.name, &pt);
                    input(self, sem.as_deref(), &pt, p.pos)?
                }
            };
            pending.push((p.name.clone(), pt, value, p.pos));
        }
        if self.stage == StageKind::Vertex && self.texcoord.is_none() {
            // ORIG.tex_coord and friends read the texcoord attribute even when the entry
            // point does not take it.
            let zero = Ty::Vec(Sk::F, 4);
            let p = f.pos;
            let _ = input(self, Some("TEXCOORD0"), &zero, p)?;
        }
        self.fx().func.arguments = args;
        for (name, t, v, pos) in pending {
            let l = self.local(&name, &t, pos)?;
            self.push_stmt(
                Statement::Store {
                    pointer: l,
                    value: v,
                },
                pos,
            );
            self.declare(&name, Sym::Var(l, t));
        }
        // 2. Outputs.
        let mut names = Vec::new();
        let mut tys = Vec::new();
        let mut bindings: Vec<naga::Binding> = Vec::new();
        let mut sources = Vec::new();
        let mut add_out =
            |cx: &Self, sem: Option<&str>, name: &str, t: &Ty, src: OutSource, pos: Pos| -> R<()> {
                let auto = cx.auto_semantic(sem, name, t);
                let Some(sem) = auto.as_deref() else {
                    return Ok(());
                };
                let Some(b) = cx.varying_binding(sem, true, pos)? else {
                    return Ok(());
                };
                if bindings.contains(&b) {
                    return Ok(());
                }
                let t = match (&b, t) {
                    (naga::Binding::BuiltIn(naga::BuiltIn::Position { .. }), _) => {
                        Ty::Vec(Sk::F, 4)
                    }
                    (_, t) if t.is_numeric_vector() => t.with_kind(Sk::F),
                    _ => return err(pos, format!("output `{name}` must be a scalar or vector")),
                };
                names.push(name.to_string());
                tys.push(t);
                bindings.push(b);
                sources.push(src);
                Ok(())
            };
        match ret {
            Ty::Void => {}
            Ty::Struct(i) => {
                let members = self.structs[*i].members.clone();
                for (mi, (mn, mt, ms)) in members.iter().enumerate() {
                    add_out(
                        self,
                        ms.as_deref(),
                        mn,
                        mt,
                        OutSource::Ret(vec![mi as u32]),
                        f.pos,
                    )?;
                }
            }
            t => {
                let sem = f
                    .semantic
                    .as_deref()
                    .or(if self.stage == StageKind::Fragment {
                        Some("COLOR")
                    } else {
                        None
                    });
                add_out(self, sem, "result", t, OutSource::Ret(Vec::new()), f.pos)?;
            }
        }
        for (p, pt) in &out_params {
            let l = self.local(&p.name, pt, p.pos)?;
            self.declare(&p.name, Sym::Var(l, pt.clone()));
            match pt {
                Ty::Struct(i) if p.semantic.is_none() => {
                    let members = self.structs[*i].members.clone();
                    for (mi, (mn, mt, ms)) in members.iter().enumerate() {
                        add_out(
                            self,
                            ms.as_deref(),
                            mn,
                            mt,
                            OutSource::Param(l, vec![mi as u32]),
                            p.pos,
                        )?;
                    }
                }
                _ => add_out(
                    self,
                    p.semantic.as_deref(),
                    &p.name,
                    pt,
                    OutSource::Param(l, Vec::new()),
                    p.pos,
                )?,
            }
        }
        if names.is_empty() {
            return err(f.pos, format!("`{}` has no outputs with semantics", f.name));
        }
        let out_ty = self.struct_of(
            Some(format!("{}_out", f.name)),
            &names,
            &tys,
            Some(bindings),
            f.pos,
        )?;
        self.fx().func.result = Some(naga::FunctionResult {
            ty: out_ty,
            binding: None,
        });
        self.fx().entry = Some(EntryOut {
            ty: out_ty,
            sources,
            out_tys: tys,
        });
        // 3. Globals with initializers.
        self.init_globals()?;
        for s in body {
            self.stmt(s)?;
        }
        if ret == &Ty::Void && !ends_with_return(self.fx().blocks.last().expect("root")) {
            let v = self.entry_outputs(None, f.pos)?;
            self.push_stmt(Statement::Return { value: Some(v) }, f.pos);
        }
        self.flush();
        Ok(())
    }

    fn entry_outputs(&mut self, value: Option<Handle<E>>, pos: Pos) -> R<Handle<E>> {
        let (ty, sources, tys) = {
            let e = self.fx().entry.as_ref().expect("entry");
            (e.ty, e.sources.clone(), e.out_tys.clone())
        };
        let ret = self.fx().ret.clone();
        let mut comps = Vec::new();
        for (src, t) in sources.iter().zip(&tys) {
            let (mut h, mut ht) = match src {
                OutSource::Ret(_) => (
                    value.ok_or_else(|| BuildError {
                        pos,
                        message: "missing return value".into(),
                    })?,
                    ret.clone(),
                ),
                OutSource::Param(l, path) => {
                    let _ = path;
                    let lt = self.local_type(*l);
                    (self.add(E::Load { pointer: *l }, pos), lt)
                }
            };
            let path = match src {
                OutSource::Ret(p) | OutSource::Param(_, p) => p,
            };
            for &i in path {
                h = self.add(E::AccessIndex { base: h, index: i }, pos);
                ht = match ht {
                    Ty::Struct(si) => self.structs[si].members[i as usize].1.clone(),
                    other => other,
                };
            }
            comps.push(self.convert(h, &ht, t, pos, true)?);
        }
        Ok(self.add(
            E::Compose {
                ty,
                components: comps,
            },
            pos,
        ))
    }

    fn type_name(&self, t: &Ty) -> String {
        t.name(&self.structs)
    }

    fn local_type(&self, l: Handle<E>) -> Ty {
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

    /// Stores the initial values of non-uniform globals at the start of the entry point.
    fn init_globals(&mut self) -> R<()> {
        let items = self.items;
        for item in items {
            let Item::Var(v) = item else { continue };
            let ty = self.resolve_type_for(v)?;
            if matches!(ty, Ty::Sampler(_)) || ty == Ty::Void {
                continue;
            }
            // Cg lets a program assign to a uniform (a private copy); only those get a copy so
            // unused uniforms stay out of the uniform block.
            let uniform = self.is_uniform_global(v, &ty);
            if uniform && !self.assigned.contains(&v.name) {
                continue;
            }
            let copy = if uniform && (ty.is_numeric_vector() || matches!(ty, Ty::Mat(..))) {
                let s = self.uniform_sym(&v.name, &ty, v.semantic.as_deref(), v.pos)?;
                let Sym::Uniform(member, mt) = s else {
                    continue;
                };
                let V::Val(h, _) = self.ubo_member(&member, &mt, v.pos)? else {
                    continue;
                };
                Some(h)
            } else {
                None
            };
            let nt = self.nty(&ty, v.pos)?;
            let g = self.module.global_variables.append(
                naga::GlobalVariable {
                    name: Some(v.name.clone()),
                    space: AddressSpace::Private,
                    binding: None,
                    ty: nt,
                    init: None,
                    memory_decorations: Default::default(),
                },
                span(v.pos),
            );
            let init = match (copy, &v.init) {
                (Some(h), _) => Some(h),
                (None, Some(init)) => Some(self.rvalue_as(init, &ty)?),
                (None, None) => None,
            };
            if let Some(h) = init {
                let gp = self.add(E::GlobalVariable(g), v.pos);
                self.push_stmt(
                    Statement::Store {
                        pointer: gp,
                        value: h,
                    },
                    v.pos,
                );
            }
            self.private.insert(v.name.clone(), (g, ty));
        }
        Ok(())
    }
}

/// Whether the block's last statement leaves the function.
fn ends_with_return(b: &Block) -> bool {
    match b.last() {
        Some(Statement::Return { .. }) | Some(Statement::Kill) => true,
        Some(Statement::If { accept, reject, .. }) => {
            ends_with_return(accept) && ends_with_return(reject)
        }
        Some(Statement::Block(inner)) => ends_with_return(inner),
        _ => false,
    }
}

/// `xyzw`/`rgba` swizzle of a vector of `n` components.
fn parse_swizzle(s: &str, n: u8) -> Option<Vec<u8>> {
    if s.is_empty() || s.len() > 4 {
        return None;
    }
    let set = |c: char| match c {
        'x' | 'y' | 'z' | 'w' => Some(0),
        'r' | 'g' | 'b' | 'a' => Some(1),
        // cgc accepts GLSL's texture-coordinate names too.
        's' | 't' | 'p' | 'q' => Some(2),
        _ => None,
    };
    let first = set(s.chars().next()?)?;
    let mut out = Vec::new();
    for c in s.chars() {
        if set(c)? != first {
            return None;
        }
        let i = match c {
            'x' | 'r' | 's' => 0,
            'y' | 'g' | 't' => 1,
            'z' | 'b' | 'p' => 2,
            _ => 3,
        };
        if i >= n.max(1) {
            return None;
        }
        out.push(i);
    }
    Some(out)
}

/// `_m00_m11` (zero-based) or `_11_22` (one-based) matrix element lists.
fn parse_matrix_swizzle(s: &str, rows: u8, cols: u8) -> Option<Vec<(u8, u8)>> {
    let mut out = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        rest = rest.strip_prefix('_')?;
        let (zero_based, r) = match rest.strip_prefix('m') {
            Some(r) => (true, r),
            None => (false, rest),
        };
        let b = r.as_bytes();
        if b.len() < 2 || !b[0].is_ascii_digit() || !b[1].is_ascii_digit() {
            return None;
        }
        let (mut i, mut j) = (b[0] - b'0', b[1] - b'0');
        if !zero_based {
            if i == 0 || j == 0 {
                return None;
            }
            i -= 1;
            j -= 1;
        }
        if i >= rows || j >= cols {
            return None;
        }
        out.push((i, j));
        rest = &r[2..];
        if out.len() > 4 {
            return None;
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Every name that is the root of an assignment or `++`/`--` target anywhere.
fn assigned_names(items: &[Item]) -> std::collections::HashSet<String> {
    fn root(e: &Expr) -> Option<&str> {
        match &e.kind {
            ExprKind::Ident(n) => Some(n),
            ExprKind::Member(b, _) | ExprKind::Index(b, _) => root(b),
            _ => None,
        }
    }
    fn expr(e: &Expr, out: &mut std::collections::HashSet<String>) {
        match &e.kind {
            ExprKind::Assign(_, l, r) => {
                if let Some(n) = root(l) {
                    out.insert(n.to_string());
                }
                expr(l, out);
                expr(r, out);
            }
            ExprKind::Unary(op, a) => {
                if matches!(
                    op,
                    UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec
                ) {
                    if let Some(n) = root(a) {
                        out.insert(n.to_string());
                    }
                }
                expr(a, out);
            }
            ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => {
                expr(a, out);
                expr(b, out);
            }
            ExprKind::Ternary(a, b, c) => {
                expr(a, out);
                expr(b, out);
                expr(c, out);
            }
            ExprKind::Call(_, v)
            | ExprKind::Construct(_, v)
            | ExprKind::Comma(v)
            | ExprKind::List(v) => v.iter().for_each(|x| expr(x, out)),
            ExprKind::Cast(_, a) | ExprKind::Member(a, _) => expr(a, out),
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Ident(_) => {}
        }
    }
    fn stmt(s: &Stmt, out: &mut std::collections::HashSet<String>) {
        match s {
            Stmt::Block(v) => v.iter().for_each(|s| stmt(s, out)),
            Stmt::Var(v) => v
                .iter()
                .filter_map(|d| d.init.as_ref())
                .for_each(|e| expr(e, out)),
            Stmt::Expr(e) => expr(e, out),
            Stmt::If(c, a, b) => {
                expr(c, out);
                stmt(a, out);
                if let Some(b) = b {
                    stmt(b, out);
                }
            }
            Stmt::For(i, c, st, b) => {
                if let Some(i) = i {
                    stmt(i, out);
                }
                c.iter().chain(st.iter()).for_each(|e| expr(e, out));
                stmt(b, out);
            }
            Stmt::While(c, b) | Stmt::DoWhile(b, c) => {
                expr(c, out);
                stmt(b, out);
            }
            Stmt::Return(Some(e), _) => expr(e, out),
            _ => {}
        }
    }
    let mut out = std::collections::HashSet::new();
    for i in items {
        if let Item::Func(f) = i {
            for s in f.body.iter().flatten() {
                stmt(s, &mut out);
            }
        }
    }
    out
}
