//! Program-scope names and RetroArch's resources. Every uniform is a member of one uniform
//! block (`UBO`, group 0, binding 0), added on first use under its slang semantic name
//! (`modelViewProj` → `MVP`, transposed on load because RetroArch uploads it column-major;
//! `IN.video_size` → `SourceSize`, …); the block's struct type is made once the entry point is
//! built (`finish_ubo`). A sampler is a texture at binding 1, 2, … (order of first use) plus a
//! sampler at `binding + SAMPLER_BINDING_OFFSET`, named after the texture RetroArch binds there:
//! `Source` for the pass input, `Original`, `PassOutputN`, …, or the sampler's own name for a
//! look-up texture. RetroArch's pass structs (`IN`, `ORIG`, `PREVn`, `PASSn`, `PASSPREVn`,
//! `FEEDBACK`, pass aliases) are [`UKind`] symbols whose members map to those names.
//! Non-uniform globals, and uniform globals the program assigns to, are private globals
//! initialised at the start of the entry point.

use super::*;

impl Cx<'_> {
    /// The Cg sampler RetroArch binds the pass input to: one with `TEXUNIT0`, else the first
    /// sampler parameter of `main_fragment`, else the first uniform sampler global.
    pub(super) fn find_source_sampler(&self) -> Option<String> {
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

    /// The uniform block member `name` of type `ty` (added on first use).
    pub(super) fn ubo_member(&mut self, name: &str, ty: &Ty, pos: Pos) -> R<V> {
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
        let p = self.access_index(g, index as u32, pos);
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

    pub(super) fn texture(&mut self, name: &str, dim: Dim, pos: Pos) -> R<V> {
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
            UKind::Feedback => ("Original".into(), "OriginalSize".into()),
            UKind::Alias(i) => {
                let a = &self.aliases[i as usize];
                (a.clone(), format!("{a}Size"))
            }
        }
    }

    pub(super) fn ustruct_member(&mut self, k: UKind, field: &str, pos: Pos) -> R<V> {
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
            // RetroArch binds `IN.mvp_matrix` in the vertex program only (where `modelViewProj`
            // is missing); in the fragment program it is bound by nothing and reads zero.
            (UKind::In, "mvp_matrix") => {
                let m4 = Ty::Mat(Sk::F, 4, 4);
                if self.stage == StageKind::Vertex {
                    self.ubo_member("MVP", &m4, pos)
                } else {
                    Ok(V::Val(self.zero(&m4, pos)?, m4))
                }
            }
            (UKind::In, "vertex_coord") => {
                let f4 = Ty::Vec(Sk::F, 4);
                let h = self.entry_attribute(self.position, field, pos)?;
                Ok(V::Val(h, f4))
            }
            // RetroArch's vertex colour is opaque white.
            (UKind::In, "color") => {
                let one = self.lit_f(1.0, pos);
                let white = self.add(
                    E::Splat {
                        size: naga::VectorSize::Quad,
                        value: one,
                    },
                    pos,
                );
                Ok(V::Val(white, Ty::Vec(Sk::F, 4)))
            }
            (UKind::In, f) if !matches!(f, "tex_coord" | "lut_tex_coord") => err(pos, format!("`IN.{f}` is not one of RetroArch's inputs (video_size, texture_size, output_size, frame_count, frame_direction, mvp_matrix, vertex_coord, tex_coord, lut_tex_coord, color)")),
            (_, "video_size" | "texture_size" | "output_size") => self.ubo_member(&size, &f2, pos),
            (_, "texture") => self.texture(&tex, Dim::D2, pos),
            (_, "tex_coord" | "lut_tex_coord") => {
                let h = self.entry_attribute(self.texcoord, field, pos)?;
                let v = self.convert(h, &Ty::Vec(Sk::F, 4), &f2, pos, true)?;
                Ok(V::Val(v, f2))
            }
            (_, f) => err(pos, format!("`{f}` is not a member of RetroArch's pass structs (texture, video_size, texture_size, tex_coord)")),
        }
    }

    /// A vertex attribute read through a RetroArch struct (`IN.tex_coord`, `IN.vertex_coord`):
    /// the entry point's input `input`, which only `main_vertex` itself can read.
    fn entry_attribute(&self, input: Option<Handle<E>>, field: &str, pos: Pos) -> R<Handle<E>> {
        match input {
            Some(h) if self.fs.len() == 1 => Ok(h),
            _ => err(
                pos,
                format!("`{field}` is a vertex attribute: only `main_vertex` itself can read it"),
            ),
        }
    }

    pub(super) fn ukind(name: &str) -> Option<UKind> {
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
            "FEEDBACK" => UKind::Feedback,
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
    pub(super) fn uniform_sym(&mut self, name: &str, ty: &Ty, semantic: Option<&str>) -> R<Sym> {
        match ty {
            Ty::Struct(_) => {
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

    /// Cg: non-static globals are uniforms; ones with an initializer that RetroArch never
    /// sets (not a parameter, not a sampler) keep their initial value.
    pub(super) fn is_uniform_global(&self, v: &VarDecl, ty: &Ty) -> bool {
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

    pub(super) fn finish_ubo(&mut self) {
        let Some(ubo) = self.ubo else { return };
        let names: Vec<String> = self.ubo_members.iter().map(|m| m.0.clone()).collect();
        let tys: Vec<Ty> = self.ubo_members.iter().map(|m| m.1.clone()).collect();
        if let Ok(t) = self.struct_of(Some("UBO".into()), &names, &tys, None, Pos::default()) {
            self.module.global_variables[ubo].ty = t;
        }
    }

    /// Stores the initial values of non-uniform globals at the start of the entry point.
    pub(super) fn init_globals(&mut self) -> R<()> {
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
                let s = self.uniform_sym(&v.name, &ty, v.semantic.as_deref())?;
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

/// Calls `f` on every expression of every function body, outer expressions first.
fn visit_exprs(items: &[Item], f: &mut impl FnMut(&Expr)) {
    fn expr(e: &Expr, f: &mut impl FnMut(&Expr)) {
        f(e);
        match &e.kind {
            ExprKind::Assign(_, a, b) | ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => {
                expr(a, f);
                expr(b, f);
            }
            ExprKind::Ternary(a, b, c) => {
                expr(a, f);
                expr(b, f);
                expr(c, f);
            }
            ExprKind::Call(_, v)
            | ExprKind::Construct(_, v)
            | ExprKind::Comma(v)
            | ExprKind::List(v) => v.iter().for_each(|x| expr(x, f)),
            ExprKind::Unary(_, a) | ExprKind::Cast(_, a) | ExprKind::Member(a, _) => expr(a, f),
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Ident(_) => {}
        }
    }
    fn stmt(s: &Stmt, f: &mut impl FnMut(&Expr)) {
        match s {
            Stmt::Block(v) => v.iter().for_each(|s| stmt(s, f)),
            Stmt::Var(v) => v
                .iter()
                .filter_map(|d| d.init.as_ref())
                .for_each(|e| expr(e, f)),
            Stmt::Expr(e) => expr(e, f),
            Stmt::If(c, a, b) => {
                expr(c, f);
                stmt(a, f);
                if let Some(b) = b {
                    stmt(b, f);
                }
            }
            Stmt::For(i, c, st, b) => {
                if let Some(i) = i {
                    stmt(i, f);
                }
                c.iter().chain(st.iter()).for_each(|e| expr(e, f));
                stmt(b, f);
            }
            Stmt::While(c, b) | Stmt::DoWhile(b, c) => {
                expr(c, f);
                stmt(b, f);
            }
            Stmt::Return(Some(e), _) => expr(e, f),
            _ => {}
        }
    }
    for i in items {
        if let Item::Func(func) = i {
            for s in func.body.iter().flatten() {
                stmt(s, f);
            }
        }
    }
}

/// Every name that is the root of an assignment or `++`/`--` target anywhere.
pub(super) fn assigned_names(items: &[Item]) -> std::collections::HashSet<String> {
    fn root(e: &Expr) -> Option<&str> {
        match &e.kind {
            ExprKind::Ident(n) => Some(n),
            ExprKind::Member(b, _) | ExprKind::Index(b, _) => root(b),
            _ => None,
        }
    }
    let mut out = std::collections::HashSet::new();
    visit_exprs(items, &mut |e| {
        let target = match &e.kind {
            ExprKind::Assign(_, l, _) => Some(l),
            ExprKind::Unary(UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec, a) => {
                Some(a)
            }
            _ => None,
        };
        if let Some(n) = target.and_then(|t| root(t)) {
            out.insert(n.to_string());
        }
    });
    out
}

/// Whether any function reads a member called `field` of anything.
pub(super) fn reads_member(items: &[Item], field: &str) -> bool {
    let mut found = false;
    visit_exprs(items, &mut |e| {
        found |= matches!(&e.kind, ExprKind::Member(_, m) if m == field);
    });
    found
}
