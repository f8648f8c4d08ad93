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
//!
//! **Use.** One [`Cx`] builds one stage: [`Cx::new`] over the parsed items and the
//! `#pragma parameter` names, then [`Cx::entry_point`]; the module is `Cx::module`, and
//! `ubo_members`, `texture_list` and `luts` say what reflection and the chain need to know.
//!
//! **Values.** A checked expression is a `V`: a value, a pointer, a swizzle of the vector behind
//! a pointer (pointers and swizzles are assignable), a sampler (its image and sampler
//! expressions), or one of RetroArch's pass structs, which is never a value (its members are
//! uniforms and textures). Names resolve to a `Sym` through the scopes of the function under
//! construction.
//!
//! **Files.** `naga_types`: written types to Cg types to naga types, with naga's layout.
//! `emit`: the function under construction (expressions and their `Emit` ranges, blocks,
//! scopes, locals). `expr`: expressions and operators; `access`: members, swizzles and
//! indexing; `convert`: conversions and constructors. `call`: overload resolution, compiling
//! user functions, `out` parameters. `stmt`: statements and control flow. `builtins`: the
//! standard library. `uniforms`: the uniform block, textures and samplers, RetroArch's pass
//! structs, globals. `entry`: the entry point's inputs and outputs.

use std::collections::HashMap;

use naga::{
    AddressSpace, BinaryOperator as Bo, Block, Expression as E, Handle, Literal,
    MathFunction as Mf, Span, Statement, Type, TypeInner,
};

use super::parse::{BinOp, Expr, ExprKind, FuncDecl, Item, Pos, Stmt, TypeRef, UnOp, VarDecl};
use super::types::{builtin_type, common_type, conversion_cost, Dim, Sk, StructInfo, Ty};
use crate::frontend::retroarch::SAMPLER_BINDING_OFFSET;

mod access;
mod builtins;
mod call;
mod convert;
mod emit;
mod entry;
mod expr;
mod naga_types;
mod stmt;
mod uniforms;

use stmt::ends_with_return;
use uniforms::{assigned_names, reads_member};

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
    /// `FEEDBACK`: RetroArch's feedback texture. Its GL drivers bind the frame input there
    /// unless the preset names a `feedback_pass`, which softgpu does not read.
    Feedback,
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
    /// A value of the type.
    Val(Handle<E>, Ty),
    /// A pointer to a variable of the type (assignable).
    Ptr(Handle<E>, Ty),
    /// Components of the vector a pointer points to (an assignable swizzle).
    Swz(Handle<E>, Ty, Vec<u8>),
    /// A sampler.
    Samp(Samp),
    /// One of RetroArch's pass structs.
    UStruct(UKind),
}

/// What a name means in a function's scope.
#[derive(Clone, Debug)]
enum Sym {
    /// A local variable (pointer, type).
    Var(Handle<E>, Ty),
    /// A sampler parameter or local sampler.
    Samp(Samp),
    /// One of RetroArch's pass structs.
    UStruct(UKind),
    /// A uniform: the uniform block member's name and the type it is read as.
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

/// A function under construction.
struct Fx {
    func: naga::Function,
    /// First expression not yet covered by an `Emit` statement.
    emit_start: usize,
    /// Blocks being filled, innermost last; the first is the body.
    blocks: Vec<Block>,
    /// Name tables, innermost last.
    scopes: Vec<HashMap<String, Sym>>,
    /// The Cg return type.
    ret: Ty,
    /// Out parameters (local pointer, type) in order.
    outs: Vec<(Handle<E>, Ty)>,
    /// How outputs are assembled, when this is the entry point.
    entry: Option<EntryOut>,
    /// Loops around the current statement (`break` and `continue` need one).
    loop_depth: u32,
}

/// How an entry point's outputs are assembled at `return`.
struct EntryOut {
    /// Output struct type.
    ty: Handle<Type>,
    /// For each output member: where its value comes from.
    sources: Vec<OutSource>,
    /// For each output member: its type.
    out_tys: Vec<Ty>,
}

/// Where an entry point output's value comes from.
#[derive(Clone, Debug)]
enum OutSource {
    /// The returned value itself (path of member indices into it).
    Ret(Vec<u32>),
    /// An out parameter's local (path into it).
    Param(Handle<E>, Vec<u32>),
}

/// The module builder for one stage.
pub struct Cx<'a> {
    /// The module being built.
    pub module: naga::Module,
    items: &'a [Item],
    /// The program's structs, indexed by `Ty::Struct`.
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
    /// Texture globals in creation order: name, image binding, sampler binding.
    pub texture_list: Vec<(String, u32, u32)>,
    source_sampler: Option<String>,
    fs: Vec<Fx>,
    /// The vertex texcoord input (vertex entry only).
    texcoord: Option<Handle<E>>,
    /// The vertex position input, when the entry point or `IN.vertex_coord` reads it.
    position: Option<Handle<E>>,
}

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
            position: None,
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
        let block = fx.blocks.into_iter().next().expect("root");
        if !ends_with_return(&block) {
            return err(
                f.pos,
                format!("`{name}` can reach its end without returning its outputs"),
            );
        }
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
}
